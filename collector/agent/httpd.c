/*
 * httpd.c - see httpd.h: binding, connections and their bounds, requests
 * and pulls, and the agent's side.  Who a client is: http_clients.c; the
 * index page: http_index.c (httpd_int.h, what the three share).
 *
 * A request for a profile is parked (MHD_suspend_connection) with a sink
 * of its own that every frame reaches until its time is up; then the
 * profile is written and the connection resumed to send it.  So N seconds
 * of profile cost the agent nothing while nobody asks, and two scrapers
 * asking at once each get exactly their own window.
 *
 * Clients share the server without trusting each other (httpd.h): a
 * local user is shown its own processes only (struct conn's sight, from
 * the uid sock_diag gives), and bounds keep one client from taking the
 * server.  libmicrohttpd does not look at a parked connection's socket,
 * so a scraper killed mid-pull would hold its slot for up to an hour: the
 * parked sockets sit in an epoll set of ours (with libmicrohttpd's epoll
 * fd, so the agent waits on one fd) for EPOLLRDHUP, and a close drops the
 * pull at once.  libmicrohttpd's timeout counts idleness, which a client
 * sending (or reading) a byte now and then never reaches, and its per-IP
 * limit lumps every local user together as 127.0.0.1: so each connection
 * is tracked here (struct conn) with its client, since when it waits for
 * a whole request, and by when its pull's answer must be sent, and closed
 * with shutdown(2) when a bound says so; libmicrohttpd then reads the end
 * of it and cleans up as for any client that hangs up.
 */
#include "agent/httpd_int.h"
#include "agent/netlib.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netdb.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "flame/flame.h"
#include "format/pprof_merge.h"
#include "agent/sink.h"
#include "util.h"

/* ---- said once a minute ------------------------------------------------- */

/* Count one more; true when it may be said now (not said for a minute). */
static int say_now(struct said *s, uint64_t now)
{
	s->n++;
	if (s->at && now - s->at < MINUTE_NS)
		return 0;
	s->at = now;
	return 1;
}

/* A bound reached by client who: counted, and said once a minute. */
static void hit(struct httpd *h, enum limit k, const char *who)
{
	struct said *s = &h->limit[k];
	if (!say_now(s, now_ns()))
		return;
	char what[256];
	switch (k) {
	case L_BUSY:
		snprintf(what, sizeof(what), "a pull from %s refused (503): %d profiles were "
			 "being taken, the most at once", who, HTTPD_CAPTURES);
		break;
	case L_EACH:
		snprintf(what, sizeof(what), "a pull from %s refused (503): it was taking %d "
			 "profiles, the most one client may", who, HTTPD_CAPTURES_EACH);
		break;
	case L_CONNS:
		snprintf(what, sizeof(what), "a connection of %s closed: it had %d open, the "
			 "most one client may", who, HTTPD_CONNECTIONS_EACH);
		break;
	case L_TOTAL:
		snprintf(what, sizeof(what), "a connection of %s closed: %d were open, the most "
			 "in all", who, HTTPD_CONNECTIONS);
		break;
	case L_SEND:
		snprintf(what, sizeof(what), "a profile for %s dropped: not read whole within "
			 "%d s of its answer", who, HTTPD_SEND_S);
		break;
	default:
		snprintf(what, sizeof(what), "a connection of %s closed: part of a request and "
			 "no whole one within %d s", who, HTTPD_REQUEST_S);
		break;
	}
	probe_warn("http: %s; %" PRIu64 " so far (counted on the index page; said once a "
		   "minute at most)", what, s->n);
}

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

/* ---- connections -------------------------------------------------------- */

/* Close cn: libmicrohttpd reads the end of it and cleans up as for a
 * client that hung up (it has no call to close a connection itself). */
static void shut(struct httpd *h, struct conn *cn)
{
	if (cn->shut)
		return;
	if (cn->fd >= 0)
		shutdown(cn->fd, SHUT_RDWR);
	cn->shut = 1;
	h->nopen--;
}

/* Connections open of client who (any when NULL). */
static unsigned open_of(const struct httpd *h, const char *who)
{
	unsigned n = 0;
	for (const struct conn *cn = h->conns; cn; cn = cn->next)
		n += !cn->shut && (!who || strcmp(cn->who, who) == 0);
	return n;
}

/* The oldest open connection of who (anyone's when NULL) still short of a
 * whole request; the list is newest first. */
static struct conn *oldest_waiting(struct httpd *h, const char *who)
{
	struct conn *o = NULL;
	for (struct conn *cn = h->conns; cn; cn = cn->next)
		if (!cn->shut && !cn->busy && (!who || strcmp(cn->who, who) == 0) &&
		    (!o || cn->since <= o->since))
			o = cn;
	return o;
}

/* Room for cn, a connection just opened: past its client's share, or past
 * the total, the oldest connection still short of a whole request (its
 * client's; anyone's for the total) is closed, cn itself when that is the
 * one.  So a slow client only ever pushes out its own connections, or,
 * when the server is full, the slowest. */
static void admit(struct httpd *h, struct conn *cn)
{
	if (open_of(h, cn->who) > HTTPD_CONNECTIONS_EACH) {
		hit(h, L_CONNS, cn->who);
		shut(h, oldest_waiting(h, cn->who));    /* cn at least */
	}
	if (!cn->shut && h->nopen > HTTPD_CONNECTIONS) {
		struct conn *o = oldest_waiting(h, NULL);
		hit(h, L_TOTAL, o->who);
		shut(h, o);
	}
}

/* Bytes the kernel received on fd so far; UINT64_MAX when it does not say
 * (before Linux 4.1).  libmicrohttpd reads eagerly: this, not what waits
 * in the socket, tells whether a client sent anything. */
static uint64_t bytes_in(int fd)
{
	struct tcp_info ti;
	socklen_t l = sizeof(ti);
	memset(&ti, 0, sizeof(ti));
	if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &l) < 0 ||
	    l < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(ti.tcpi_bytes_received))
		return UINT64_MAX;
	return ti.tcpi_bytes_received;
}

/* A new request is awaited on cn from now: whole within HTTPD_REQUEST_S.
 * rx: the bytes received before it (0 on a new connection, whatever came
 * with it being part of the request). */
static void awaiting(struct httpd *h, struct conn *cn, uint64_t now, uint64_t rx)
{
	cn->busy = 0;
	cn->since = now;
	cn->rx = rx;
	if (now + HTTPD_REQUEST_S * NS < h->next_sweep)
		h->next_sweep = now + HTTPD_REQUEST_S * NS;
}

/* A connection opened: whose, and room for it. */
static void conn_open(struct httpd *h, struct MHD_Connection *c, void **ctx)
{
	const union MHD_ConnectionInfo *i = NET(MHD_get_connection_info)(c,
					MHD_CONNECTION_INFO_CONNECTION_FD);
	struct conn *cn = xcalloc(1, sizeof(*cn));
	cn->fd = i ? i->connect_fd : -1;
	httpi_client_of(h, cn);
	awaiting(h, cn, now_ns(), bytes_in(cn->fd) == UINT64_MAX ? UINT64_MAX : 0);
	cn->next = h->conns;
	if (h->conns)
		h->conns->prev = cn;
	h->conns = cn;
	h->nopen++;
	*ctx = cn;
	admit(h, cn);
}

static void conn_closed(struct httpd *h, struct conn *cn)
{
	if (cn->prev)
		cn->prev->next = cn->next;
	else
		h->conns = cn->next;
	if (cn->next)
		cn->next->prev = cn->prev;
	if (!cn->shut)
		h->nopen--;
	free(cn);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **ctx,
			  enum MHD_ConnectionNotificationCode code)
{
	struct httpd *h = cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		conn_open(h, c, ctx);
	} else if (*ctx) {
		conn_closed(h, *ctx);
		*ctx = NULL;
	}
}

/* cn had HTTPD_REQUEST_S s for a whole request: closed, and said when it
 * sent part of one (a slow client), quietly when it sent nothing (a
 * keep-alive connection left idle, a browser's preconnection). */
static void expire(struct httpd *h, struct conn *cn)
{
	if (cn->rx != UINT64_MAX && bytes_in(cn->fd) == cn->rx)
		h->idle++;
	else
		hit(h, L_SLOW, cn->who);
	shut(h, cn);
}

/* cn did not take its pull's answer whole in HTTPD_SEND_S s: closed, and
 * libmicrohttpd frees the answer.  Reset, not a FIN behind what the
 * kernel still holds for it (up to its send buffer, 4 MiB by default):
 * that is given back at once too. */
static void late(struct httpd *h, struct conn *cn)
{
	struct linger now = { .l_onoff = 1, .l_linger = 0 };
	hit(h, L_SEND, cn->who);
	if (cn->fd >= 0)
		setsockopt(cn->fd, SOL_SOCKET, SO_LINGER, &now, sizeof(now));
	shut(h, cn);
}

/* cn's pull answer must be sent whole by due (HTTPD_SEND_S): a client
 * reading a byte now and then would hold the profile, and its slot, for
 * as long as it liked. */
static void sending(struct httpd *h, struct conn *cn, uint64_t due)
{
	cn->send_due = due;
	if (due < h->next_sweep)
		h->next_sweep = due;
}

/* Close the connections that had HTTPD_REQUEST_S s for a whole request,
 * or HTTPD_SEND_S s to take a pull's answer. */
static void sweep(struct httpd *h, uint64_t now)
{
	if (now < h->next_sweep)
		return;
	uint64_t next = UINT64_MAX;
	for (struct conn *cn = h->conns; cn; cn = cn->next) {
		uint64_t due = cn->send_due ? cn->send_due : cn->since + HTTPD_REQUEST_S * NS;
		if (cn->shut || (cn->busy && !cn->send_due))
			continue;
		if (due > now) {
			next = due < next ? due : next;
		} else if (cn->send_due) {
			late(h, cn);
		} else {
			expire(h, cn);
		}
	}
	h->next_sweep = next;
}

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i = NET(MHD_get_connection_info)(c,
						MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return i ? i->socket_context : NULL;
}

/* ---- answers ---------------------------------------------------------- */

enum MHD_Result httpi_answer(struct MHD_Connection *c, unsigned code, const char *type,
			     void *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = NET(MHD_create_response_from_buffer)(len, body, mode);
	if (!r)
		return MHD_NO;
	NET(MHD_add_response_header)(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	NET(MHD_add_response_header)(r, "X-Content-Type-Options", "nosniff");
	if (strcmp(type, "application/octet-stream") == 0)
		NET(MHD_add_response_header)(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION,
					"attachment; filename=\"profile\"");
	enum MHD_Result ok = NET(MHD_queue_response)(c, code, r);
	NET(MHD_destroy_response)(r);
	return ok;
}

enum MHD_Result httpi_text(struct MHD_Connection *c, unsigned code, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return MHD_NO;
	return httpi_answer(c, code, "text/plain; charset=utf-8", s, (size_t)n, MHD_RESPMEM_MUST_FREE);
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

/* Pulls of client who: being taken, or answered and not yet sent whole
 * (the pprof is held in memory until it is). */
static unsigned pulls_of(const struct httpd *h, const char *who)
{
	unsigned n = 0;
	for (const struct req *r = h->waiting; r; r = r->next)
		n += strcmp(r->cn ? r->cn->who : "?", who) == 0;
	for (const struct req *r = h->sending; r; r = r->next)
		n += strcmp(r->cn ? r->cn->who : "?", who) == 0;
	return n;
}

static void link_req(struct req **head, struct req *r)
{
	r->prev = NULL;
	r->next = *head;
	if (*head)
		(*head)->prev = r;
	*head = r;
}

static void unlink_req(struct req **head, struct req *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else if (*head == r)
		*head = r->next;
	if (r->next)
		r->next->prev = r->prev;
	r->prev = r->next = NULL;
}

/* r waits for its profile: libmicrohttpd leaves its connection alone, and
 * its socket is watched here for the client hanging up. */
static void park(struct httpd *h, struct req *r)
{
	r->state = R_WAITING;
	link_req(&h->waiting, r);
	NET(MHD_suspend_connection)(r->conn);
	struct epoll_event ev = { .events = EPOLLRDHUP, .data.ptr = r };
	r->fd = r->cn ? r->cn->fd : -1;
	if (r->fd >= 0 && epoll_ctl(h->pfd, EPOLL_CTL_ADD, r->fd, &ev) < 0)
		r->fd = -1;     /* not watched: it waits its N seconds */
}

/* r waits no more: out of the list and of the watch (before libmicrohttpd
 * takes its socket back, or closes it). */
static void unpark(struct httpd *h, struct req *r)
{
	if (r->fd >= 0)
		epoll_ctl(h->pfd, EPOLL_CTL_DEL, r->fd, NULL);
	r->fd = -1;
	unlink_req(&h->waiting, r);
}

/* ?pid=V for r's client: r->pid set and *answered 0, or an answer.  A
 * process the client may not see is answered as one that does not exist:
 * the 404 says nothing of another user's processes. */
static enum MHD_Result pick_pid(struct httpd *h, struct MHD_Connection *c, struct req *r,
				const char *pid, int *answered)
{
	long v = number(pid, 1, 0x7fffffff);
	*answered = 1;
	if (v < 0)
		return httpi_text(c, 400, "pid: give a process id\n");
	struct aproc *p = aproc_find(h->procs, (uint32_t)v);
	if (!p || p->gone || !httpi_may_see(r->cn, p))
		return httpi_text(c, 404, "no process %ld streams to this agent; see /\n", v);
	r->pid = (uint32_t)v;
	*answered = 0;
	return MHD_YES;
}

/* Room for one more pull of who, or an answer (503) saying why not. */
static enum MHD_Result room(struct httpd *h, struct MHD_Connection *c, const char *who,
			    int *answered)
{
	unsigned all = httpd_pending(h) + httpi_count(h->sending);
	*answered = 1;
	if (pulls_of(h, who) >= HTTPD_CAPTURES_EACH) {
		hit(h, L_EACH, who);
		return httpi_text(c, 503, "you (%s) have %d profiles being taken or not yet read "
			    "whole, the most one client may; try again when one is answered\n",
			    who, HTTPD_CAPTURES_EACH);
	}
	if (all >= HTTPD_CAPTURES) {
		hit(h, L_BUSY, who);
		return httpi_text(c, 503, "%u profiles are being taken or sent already; try again "
			    "later\n", all);
	}
	*answered = 0;
	return MHD_YES;
}

/* r takes p's frames: one it asked for, of a user its client may see. */
static int wants(const struct req *r, const struct aproc *p)
{
	if (r->sees == SEE_NONE || (r->sees == SEE_UID && p->uid != r->uid))
		return 0;
	if (r->pid && r->pid != p->pid)
		return 0;
	if (r->comm && strcmp(r->comm, p->comm) != 0 && strcmp(r->comm, p->name) != 0)
		return 0;
	return 1;
}

/*
 * /heap or /allocs without seconds, as Go answers them: at once, the
 * allocations of a process since it connected (agent.c keeps them,
 * processes.h's heap), in use at this moment and allocated in all.  The
 * processes: the one pid= or comm= names, else all the client may see
 * that sample allocations, their profiles merged into one (pprof_merge.h:
 * each sample's pid label says whose).
 */
static enum MHD_Result heap_now(struct httpd *h, struct MHD_Connection *c, struct req *r,
				int allocs)
{
	struct aproc *p, *tmp;
	unsigned n = 0;
	HASH_ITER(hh, h->procs->byid, p, tmp)
		n += p->heap && !p->gone && wants(r, p);
	if (n == 0)
		return httpi_text(c, 404, "no process of yours streams allocations to this agent "
			    "(a program started with LD_PRELOAD=libprobe-alloc.so and "
			    "PROBE_ALLOC=BYTES does); see /\n");
	uint64_t now = now_ns();
	uint8_t **bodies = xcalloc(n, sizeof(*bodies));
	size_t *lens = xcalloc(n, sizeof(*lens)), k = 0;
	int rc = 0;
	HASH_ITER(hh, h->procs->byid, p, tmp) {
		if (rc < 0 || k == n || !p->heap || p->gone || !wants(r, p))
			continue;
		rc = sink_pprof_now(p->heap, *h->syms, now, allocs, &bodies[k], &lens[k]);
		k++;
	}
	/* Several: one profile of them all, each sample labelled with its pid. */
	if (rc == 0 && n > 1 && pprof_merge(bodies, lens, n, &r->body, &r->len) < 0)
		rc = -1;
	else if (rc == 0 && n == 1) {
		r->body = bodies[0];
		r->len = lens[0];
		bodies[0] = NULL;
	}
	for (size_t i = 0; i < n; i++)
		free(bodies[i]);
	free(bodies);
	free(lens);
	if (rc < 0)
		return httpi_text(c, 500, "the profile could not be written; see the agent's log\n");
	r->state = R_READY;
	link_req(&h->sending, r);
	if (r->cn)
		sending(h, r->cn, now + HTTPD_SEND_S * NS);
	h->served++;
	uint8_t *b = r->body;
	r->body = NULL;
	return httpi_answer(c, 200, "application/octet-stream", b, r->len, MHD_RESPMEM_MUST_FREE);
}

/*
 * Start taking a profile for r, or answer why not.  kind: PROF_CPU
 * (/profile), PROF_HEAP or PROF_ALLOCS (the allocations of --alloc, as
 * Go's heap profile: in use by default, or allocated; without seconds,
 * since they connected, at once: heap_now).
 */
enum { PROF_CPU, PROF_HEAP, PROF_ALLOCS };
static enum MHD_Result start_profile(struct httpd *h, struct MHD_Connection *c, struct req *r,
				     int kind)
{
	const char *sec = NET(MHD_lookup_connection_value)(c, MHD_GET_ARGUMENT_KIND, "seconds");
	const char *pid = NET(MHD_lookup_connection_value)(c, MHD_GET_ARGUMENT_KIND, "pid");
	const char *comm = NET(MHD_lookup_connection_value)(c, MHD_GET_ARGUMENT_KIND, "comm");
	long secs = sec ? number(sec, 1, HTTPD_MAX_SECONDS) : 30;
	int answered;
	enum MHD_Result a;
	if (secs < 0)
		return httpi_text(c, 400, "seconds: give a whole number from 1 to %d\n",
			    HTTPD_MAX_SECONDS);
	if (!r->cn || r->cn->sees == SEE_NONE)
		return httpi_text(c, 403, "the kernel did not say which user you are (sock_diag: no "
			    "inet_diag module), so no process is shown to you; root can load "
			    "it (modprobe inet_diag)\n");
	if (pid && (a = pick_pid(h, c, r, pid, &answered), answered))
		return a;
	if (comm) {
		if (!*comm)
			return httpi_text(c, 400, "comm: give a process name\n");
		r->comm = xstrdup(comm);
	}
	const char *who = r->cn->who;
	if ((a = room(h, c, who, &answered), answered))
		return a;
	r->sees = r->cn->sees;
	r->uid = r->cn->uid;
	if (kind != PROF_CPU && !sec)
		return heap_now(h, c, r, kind == PROF_ALLOCS);
	r->sink = sink_new(h->procs, kind == PROF_CPU ? NULL : "alloc", kind == PROF_ALLOCS);
	r->due = r->sink->start_mono + (uint64_t)secs * NS;
	r->conn = c;
	park(h, r);
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload, size_t *upload_len, void **con_cls)
{
	struct httpd *h = cls;
	struct req *r = *con_cls;
	if (!r) {
		r = xcalloc(1, sizeof(struct req));
		r->cn = conn_of(c);
		r->fd = -1;
		*con_cls = r;
		return MHD_YES;
	}
	if (*upload_len) {
		*upload_len = 0;        /* a body we do not read */
		return MHD_YES;
	}
	if (r->cn)
		r->cn->busy = 1;        /* whole: HTTPD_REQUEST_S is met */
	if (r->state == R_GONE) {
		h->hush = 1;            /* not the "internal error" it says next */
		return MHD_NO;          /* its client hung up: close */
	}
	if (r->state == R_READY) {
		h->served++;
		if (r->failed)
			return httpi_text(c, 500, "the profile could not be written; see the agent's "
				    "log\n");
		uint8_t *b = r->body;
		r->body = NULL;
		return httpi_answer(c, 200, "application/octet-stream", b, r->len,
			      MHD_RESPMEM_MUST_FREE);
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return httpi_text(c, 405, "only GET is served here\n");
	if (strcmp(url, "/debug/pprof/profile") == 0)
		return start_profile(h, c, r, PROF_CPU);
	if (strcmp(url, "/debug/pprof/heap") == 0)
		return start_profile(h, c, r, PROF_HEAP);
	if (strcmp(url, "/debug/pprof/allocs") == 0)
		return start_profile(h, c, r, PROF_ALLOCS);
	if (strcmp(url, "/") == 0 || strcmp(url, "/debug/pprof/") == 0 ||
	    strcmp(url, "/debug/pprof") == 0)
		return httpi_index_page(h, c, r->cn);
	return httpi_text(c, 404, "%s: not here; profiles are at /debug/pprof/profile?seconds=N "
		    "(allocations: /debug/pprof/heap and /debug/pprof/allocs), the processes "
		    "at /\n", url);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode why)
{
	struct httpd *h = cls;
	struct req *r = *con_cls;
	struct conn *cn = conn_of(c);
	if (cn) {       /* keep-alive: the next request */
		cn->send_due = 0;
		awaiting(h, cn, now_ns(), bytes_in(cn->fd));
	}
	if (!r)
		return;
	if (r->state == R_WAITING)
		unpark(h, r);
	else if (r->state == R_READY)
		unlink_req(&h->sending, r);     /* sent, or dropped: its slot is free */
	sink_free(r->sink);
	free(r->comm);
	free(r->body);
	free(r);
	*con_cls = NULL;
}

/* A client can make libmicrohttpd complain at will (a request cut short
 * by hanging up): each of its messages at most once a minute. */
static void on_log(void *cls, const char *fmt, va_list ap)
{
	struct httpd *h = cls;
	if (h->hush) {
		h->hush = 0;
		return;
	}
	struct said *s = &h->mhd[MHD_SAID - 1];
	for (int i = 0; i < MHD_SAID - 1; i++)
		if (!h->mhd[i].key || h->mhd[i].key == fmt) {
			s = &h->mhd[i];
			s->key = fmt;
			break;
		}
	if (!say_now(s, now_ns()))
		return;
	char msg[512];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = 0;
	if (s->n > 1)
		probe_warn("http: %s (seen %" PRIu64 " times; said once a minute at most)",
			   msg, s->n);
	else
		probe_warn("http: %s", msg);
}

/* ---- the agent's side -------------------------------------------------- */

/* The fd the agent waits on: libmicrohttpd's epoll fd, and the parked
 * pulls' sockets beside it. */
static int watch_start(struct httpd *h, int efd)
{
	h->efd = efd;
	h->pfd = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = h };
	return h->pfd < 0 || epoll_ctl(h->pfd, EPOLL_CTL_ADD, efd, &ev) < 0 ? -1 : 0;
}

struct httpd *httpd_start(const char *spec, struct aprocs *procs, struct symcache **syms)
{
	if (netlib_mhd("--http") < 0)
		return NULL;
	struct httpd *h = xcalloc(1, sizeof(*h));
	h->procs = procs;
	h->syms = syms;
	h->pfd = h->nl = -1;
	h->self = (uint32_t)geteuid();
	h->next_sweep = UINT64_MAX;
	h->lfd = bind_spec(spec, h->where, sizeof(h->where));
	if (h->lfd < 0) {
		free(h);
		return NULL;
	}
	h->d = NET(MHD_start_daemon)(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG,
				0, NULL, NULL, on_request, h,
				MHD_OPTION_EXTERNAL_LOGGER, on_log, h,
				MHD_OPTION_LISTEN_SOCKET, h->lfd,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
				/* Ours is HTTPD_CONNECTIONS (admit); room above it
				 * for those shut and not yet cleaned up. */
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)(HTTPD_CONNECTIONS + 64),
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTPD_IDLE_S,
				MHD_OPTION_END);
	const union MHD_DaemonInfo *i = h->d ? NET(MHD_get_daemon_info)(h->d,
						MHD_DAEMON_INFO_EPOLL_FD) : NULL;
	if (!i || watch_start(h, i->epoll_fd) < 0) {
		probe_err("--http %s: the HTTP server (libmicrohttpd) could not start", spec);
		if (h->d)
			NET(MHD_stop_daemon)(h->d);  /* closes lfd */
		else
			close(h->lfd);
		if (h->pfd >= 0)
			close(h->pfd);
		free(h);
		return NULL;
	}
	httpi_diag_start(h);
	return h;
}

const char *httpd_where(const struct httpd *h)
{
	return h->where;
}

int httpd_fd(const struct httpd *h)
{
	return h->pfd;
}

/* A pull whose client hung up: its slot is free now; libmicrohttpd,
 * given the connection back, closes it (on_request says no). */
static void cancel(struct httpd *h, struct req *r)
{
	unpark(h, r);
	sink_free(r->sink);
	r->sink = NULL;
	r->state = R_GONE;
	h->cancelled++;
	NET(MHD_resume_connection)(r->conn);
}

void httpd_run(struct httpd *h)
{
	struct epoll_event evs[HTTPD_CAPTURES];
	int n = epoll_wait(h->pfd, evs, HTTPD_CAPTURES, 0);
	for (int i = 0; i < n; i++)
		if (evs[i].data.ptr != h)
			cancel(h, evs[i].data.ptr);
	sweep(h, now_ns());
	NET(MHD_run)(h->d);
	h->hush = 0;
}

int httpd_timeout(struct httpd *h)
{
	MHD_UNSIGNED_LONG_LONG t;
	uint64_t now = now_ns();
	long ms = -1;
	if (NET(MHD_get_timeout)(h->d, &t) == MHD_YES)
		ms = t > 60000 ? 60000 : (long)t;
	for (struct req *r = h->waiting; r; r = r->next) {
		long d = r->due > now ? (long)((r->due - now) / 1000000 + 1) : 0;
		if (ms < 0 || d < ms)
			ms = d;
	}
	if (h->next_sweep != UINT64_MAX) {
		long d = h->next_sweep > now ? (long)((h->next_sweep - now) / 1000000 + 1) : 0;
		if (ms < 0 || d < ms)
			ms = d;
	}
	return (int)ms;
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
		unpark(h, r);
		r->failed = sink_pprof(r->sink, *h->syms, now, &r->body, &r->len) < 0;
		sink_free(r->sink);
		r->sink = NULL;
		r->state = R_READY;
		link_req(&h->sending, r);
		if (r->cn)      /* from now: writing the others took time */
			sending(h, r->cn, now_ns() + HTTPD_SEND_S * NS);
		NET(MHD_resume_connection)(r->conn);
	}
}

unsigned httpd_connections(const struct httpd *h)
{
	const union MHD_DaemonInfo *i = NET(MHD_get_daemon_info)(h->d,
						MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
	return i ? i->num_connections : 0;
}

unsigned httpd_pending(const struct httpd *h)
{
	return httpi_count(h->waiting);
}

uint64_t httpd_served(const struct httpd *h)
{
	return h->served;
}

void httpd_stop(struct httpd *h)
{
	if (!h)
		return;
	NET(MHD_stop_daemon)(h->d);          /* closes lfd too */
	close(h->pfd);
	if (h->nl >= 0)
		close(h->nl);
	free(h);
}
