/*
 * httpd.c - see httpd.h.
 *
 * A request for a profile is parked (MHD_suspend_connection) with a sink
 * of its own that every frame reaches until its time is up; then the
 * profile is written and the connection resumed to send it.  So N seconds
 * of profile cost the agent nothing while nobody asks, and two scrapers
 * asking at once each get exactly their own window.
 */
#include "httpd.h"

#include <errno.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "flame.h"
#include "sink.h"
#include "util.h"

enum req_state { R_NEW, R_WAITING, R_READY };

struct req {
	enum req_state state;
	struct MHD_Connection *conn;
	struct sink *sink;
	uint64_t due;           /* CLOCK_MONOTONIC ns */
	uint32_t pid;           /* 0: any */
	char *comm;             /* NULL: any */
	uint8_t *body;
	size_t len;
	int failed;
	struct req *prev, *next;
};

struct httpd {
	struct MHD_Daemon *d;
	int lfd, efd;
	char where[128];
	struct aprocs *procs;
	struct symcache **syms;
	struct req *waiting;    /* list of R_WAITING */
	uint64_t served;
};

/* ---- binding ---------------------------------------------------------- */

/* "PORT", ":PORT", "HOST:PORT", "[V6]:PORT" into host (loopback when
 * none) and port. */
static int split_spec(const char *spec, char *host, size_t hcap, char *port, size_t pcap)
{
	const char *colon = strrchr(spec, ':');
	const char *p = colon ? colon + 1 : spec;
	size_t hl = colon ? (size_t)(colon - spec) : 0;
	const char *h = spec;
	if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
		h++;
		hl -= 2;
	}
	if (!*p || strlen(p) >= pcap || hl >= hcap || strspn(p, "0123456789") != strlen(p))
		return -1;
	if (hl == 0)
		snprintf(host, hcap, "127.0.0.1");
	else
		snprintf(host, hcap, "%.*s", (int)hl, h);
	snprintf(port, pcap, "%s", p);
	return atol(port) <= 65535 ? 0 : -1;
}

static int bind_spec(const char *spec, char *where, size_t wcap)
{
	char host[256], port[16];
	if (split_spec(spec, host, sizeof(host), port, sizeof(port)) < 0) {
		probe_err("--http %s: give ADDR:PORT (127.0.0.1:4040), :PORT or PORT", spec);
		return -1;
	}
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV | AI_PASSIVE }, *ai = NULL;
	int r = getaddrinfo(host, port, &hints, &ai);
	if (r != 0) {
		probe_err("--http %s: cannot resolve %s: %s", spec, host, gai_strerror(r));
		return -1;
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 64) < 0) {
		probe_err("--http %s: cannot listen there: %s", spec, strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char h[128] = "?", s[16] = "?";
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		getnameinfo((struct sockaddr *)&ss, sl, h, sizeof(h), s, sizeof(s),
			    NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(where, wcap, strchr(h, ':') ? "[%s]:%s" : "%s:%s", h, s);
	return fd;
}

/* ---- answers ---------------------------------------------------------- */

static enum MHD_Result answer(struct MHD_Connection *c, unsigned code, const char *type,
			      void *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (strcmp(type, "application/octet-stream") == 0)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION,
					"attachment; filename=\"profile\"");
	enum MHD_Result ok = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ok;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static enum MHD_Result text(struct MHD_Connection *c, unsigned code, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return MHD_NO;
	return answer(c, code, "text/plain; charset=utf-8", s, (size_t)n, MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result index_page(struct httpd *h, struct MHD_Connection *c)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	if (!f)
		return text(c, 500, "out of memory\n");
	fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>probe agent"
		"</title></head><body>\n<h1>probe agent</h1>\n<p>CPU profiles in pprof "
		"format: <a href=\"/debug/pprof/profile?seconds=30\">/debug/pprof/profile?"
		"seconds=30</a> (all processes; <code>&amp;pid=P</code> or <code>&amp;comm="
		"NAME</code> for some).</p>\n<h2>Processes (%zu live, %" PRIu64 " seen)</h2>\n"
		"<table>\n<tr><th>pid</th><th>name</th><th>samples</th><th>executable</th>"
		"<th>profile</th></tr>\n", h->procs->nlive, h->procs->seen);
	struct aproc *p, *tmp;
	HASH_ITER(hh, h->procs->byid, p, tmp) {
		if (p->gone)
			continue;
		fprintf(f, "<tr><td>%u</td><td>", p->pid);
		flame_put_xml(f, p->name, 0);
		fprintf(f, "</td><td>%" PRIu64 "</td><td>", p->samples);
		flame_put_xml(f, p->exe, 0);
		fprintf(f, "</td><td><a href=\"/debug/pprof/profile?seconds=30&amp;pid=%u\">"
			"30 s</a></td></tr>\n", p->pid);
	}
	fputs("</table>\n<h2>Ended lately</h2>\n<table>\n<tr><th>pid</th><th>name</th>"
	      "<th>samples</th><th>exit</th></tr>\n", f);
	size_t k = h->procs->nrecent < APROC_RECENT ? h->procs->nrecent : APROC_RECENT;
	for (size_t i = 0; i < k; i++) {
		const struct arecent *r = &h->procs->recent[(h->procs->nrecent - 1 - i) %
							    APROC_RECENT];
		fprintf(f, "<tr><td>%u</td><td>", r->pid);
		flame_put_xml(f, r->name, 0);
		fprintf(f, "</td><td>%" PRIu64 "</td><td>", r->samples);
		if (r->have_exit)
			fprintf(f, "%d", r->status);
		else
			fputs("?", f);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n</body></html>\n", f);
	if (fclose(f) != 0) {
		free(buf);
		return text(c, 500, "out of memory\n");
	}
	return answer(c, 200, "text/html; charset=utf-8", buf, n, MHD_RESPMEM_MUST_FREE);
}

/* A whole decimal number in [lo, hi], or -1. */
static long number(const char *s, long lo, long hi)
{
	char *end;
	if (!s || !*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 9)
		return -1;
	long v = strtol(s, &end, 10);
	return v >= lo && v <= hi ? v : -1;
}

/* Start taking a profile for r, or answer why not. */
static enum MHD_Result start_profile(struct httpd *h, struct MHD_Connection *c, struct req *r)
{
	const char *sec = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "seconds");
	const char *pid = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "pid");
	const char *comm = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "comm");
	long secs = sec ? number(sec, 1, HTTPD_MAX_SECONDS) : 30;
	if (secs < 0)
		return text(c, 400, "seconds: give a whole number from 1 to %d\n",
			    HTTPD_MAX_SECONDS);
	if (pid) {
		long v = number(pid, 1, 0x7fffffff);
		if (v < 0)
			return text(c, 400, "pid: give a process id\n");
		struct aproc *p = aproc_find(h->procs, (uint32_t)v);
		if (!p || p->gone)
			return text(c, 404, "no process %ld streams to this agent; see /\n", v);
		r->pid = (uint32_t)v;
	}
	if (comm) {
		if (!*comm)
			return text(c, 400, "comm: give a process name\n");
		r->comm = xstrdup(comm);
	}
	if (httpd_pending(h) >= HTTPD_CAPTURES)
		return text(c, 503, "%u profiles are being taken already; try again later\n",
			    httpd_pending(h));
	r->sink = sink_new(h->procs);
	r->due = r->sink->start_mono + (uint64_t)secs * 1000000000ull;
	r->conn = c;
	r->state = R_WAITING;
	r->next = h->waiting;
	if (h->waiting)
		h->waiting->prev = r;
	h->waiting = r;
	MHD_suspend_connection(c);
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload, size_t *upload_len, void **con_cls)
{
	struct httpd *h = cls;
	struct req *r = *con_cls;
	if (!r) {
		*con_cls = xcalloc(1, sizeof(struct req));
		return MHD_YES;
	}
	if (*upload_len) {
		*upload_len = 0;        /* a body we do not read */
		return MHD_YES;
	}
	if (r->state == R_READY) {
		h->served++;
		if (r->failed)
			return text(c, 500, "the profile could not be written; see the agent's "
				    "log\n");
		uint8_t *b = r->body;
		r->body = NULL;
		return answer(c, 200, "application/octet-stream", b, r->len,
			      MHD_RESPMEM_MUST_FREE);
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return text(c, 405, "only GET is served here\n");
	if (strcmp(url, "/debug/pprof/profile") == 0)
		return start_profile(h, c, r);
	if (strcmp(url, "/") == 0 || strcmp(url, "/debug/pprof/") == 0 ||
	    strcmp(url, "/debug/pprof") == 0)
		return index_page(h, c);
	return text(c, 404, "%s: not here; profiles are at /debug/pprof/profile?seconds=N, "
		    "the processes at /\n", url);
}

static void unlink_req(struct httpd *h, struct req *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else if (h->waiting == r)
		h->waiting = r->next;
	if (r->next)
		r->next->prev = r->prev;
	r->prev = r->next = NULL;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode why)
{
	struct httpd *h = cls;
	struct req *r = *con_cls;
	if (!r)
		return;
	if (r->state == R_WAITING)
		unlink_req(h, r);
	sink_free(r->sink);
	free(r->comm);
	free(r->body);
	free(r);
	*con_cls = NULL;
}

static void on_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = 0;
	probe_warn("http: %s", msg);
}

/* ---- the agent's side -------------------------------------------------- */

struct httpd *httpd_start(const char *spec, struct aprocs *procs, struct symcache **syms)
{
	struct httpd *h = xcalloc(1, sizeof(*h));
	h->procs = procs;
	h->syms = syms;
	h->lfd = bind_spec(spec, h->where, sizeof(h->where));
	if (h->lfd < 0) {
		free(h);
		return NULL;
	}
	h->d = MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG,
				0, NULL, NULL, on_request, h,
				MHD_OPTION_EXTERNAL_LOGGER, on_log, h,
				MHD_OPTION_LISTEN_SOCKET, h->lfd,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60,
				MHD_OPTION_END);
	const union MHD_DaemonInfo *i = h->d ? MHD_get_daemon_info(h->d,
						MHD_DAEMON_INFO_EPOLL_FD) : NULL;
	if (!i) {
		probe_err("--http %s: the HTTP server (libmicrohttpd) could not start", spec);
		if (h->d)
			MHD_stop_daemon(h->d);  /* closes lfd */
		else
			close(h->lfd);
		free(h);
		return NULL;
	}
	h->efd = i->epoll_fd;
	return h;
}

const char *httpd_where(const struct httpd *h)
{
	return h->where;
}

int httpd_fd(const struct httpd *h)
{
	return h->efd;
}

void httpd_run(struct httpd *h)
{
	MHD_run(h->d);
}

int httpd_timeout(struct httpd *h)
{
	MHD_UNSIGNED_LONG_LONG t;
	uint64_t now = now_ns();
	long ms = -1;
	if (MHD_get_timeout(h->d, &t) == MHD_YES)
		ms = t > 60000 ? 60000 : (long)t;
	for (struct req *r = h->waiting; r; r = r->next) {
		long d = r->due > now ? (long)((r->due - now) / 1000000 + 1) : 0;
		if (ms < 0 || d < ms)
			ms = d;
	}
	return (int)ms;
}

static int wants(const struct req *r, const struct aproc *p)
{
	if (r->pid && r->pid != p->pid)
		return 0;
	if (r->comm && strcmp(r->comm, p->comm) != 0 && strcmp(r->comm, p->name) != 0)
		return 0;
	return 1;
}

void httpd_frame(struct httpd *h, struct aproc *p, const struct probe_msg *m)
{
	for (struct req *r = h->waiting; r; r = r->next)
		if (wants(r, p))
			sink_add(r->sink, p, m);
}

void httpd_tick(struct httpd *h, int final)
{
	uint64_t now = now_ns();
	struct req *r = h->waiting, *next;
	for (; r; r = next) {
		next = r->next;
		if (!final && r->due > now)
			continue;
		unlink_req(h, r);
		r->failed = sink_pprof(r->sink, *h->syms, now, &r->body, &r->len) < 0;
		sink_free(r->sink);
		r->sink = NULL;
		r->state = R_READY;
		MHD_resume_connection(r->conn);
	}
}

unsigned httpd_connections(const struct httpd *h)
{
	const union MHD_DaemonInfo *i = MHD_get_daemon_info(h->d,
						MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
	return i ? i->num_connections : 0;
}

unsigned httpd_pending(const struct httpd *h)
{
	unsigned n = 0;
	for (const struct req *r = h->waiting; r; r = r->next)
		n++;
	return n;
}

uint64_t httpd_served(const struct httpd *h)
{
	return h->served;
}

void httpd_stop(struct httpd *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);          /* closes lfd too */
	free(h);
}
