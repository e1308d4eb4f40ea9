/*
 * http_index.c - the agent's index page (GET / and /debug/pprof/): the
 * processes a client may see, its own figures of the bounds (every
 * client's for those who see all), and what ended lately (httpd_int.h).
 */
#include "agent/httpd_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/sink.h"
#include "flame/flame.h"
#include "hashtab.h"
#include "util.h"

static uint64_t hits(const struct httpd *h, enum limit k)
{
	return h->limit[k].n;
}

unsigned httpi_count(const struct req *r)
{
	unsigned n = 0;
	for (; r; r = r->next)
		n++;
	return n;
}

/* What the bounds allow and what they refused, for whoever looks. */
static void put_bounds(const struct httpd *h, FILE *f)
{
	fprintf(f, "<h2>Server</h2>\n<p>Pulls: %u being taken, %u being sent (at most %d at "
		"once, %d for one client; an answer read whole within %d s), %" PRIu64
		" answered, %" PRIu64 " dropped as their client went away, %" PRIu64 " not read "
		"whole in time; refused (503): %" PRIu64 " with every slot taken, %" PRIu64
		" beyond a client's %d.</p>\n", httpd_pending(h), httpi_count(h->sending),
		HTTPD_CAPTURES, HTTPD_CAPTURES_EACH, HTTPD_SEND_S, h->served, h->cancelled,
		hits(h, L_SEND), hits(h, L_BUSY), hits(h, L_EACH), HTTPD_CAPTURES_EACH);
	fprintf(f, "<p>Connections: %u open (at most %d, %d for one client; a whole request "
		"within %d s); closed: %" PRIu64 " beyond a client's %d, %" PRIu64 " beyond %d "
		"in all, %" PRIu64 " with part of a request and no whole one in %d s, %" PRIu64
		" idle for %d s.</p>\n", h->nopen, HTTPD_CONNECTIONS, HTTPD_CONNECTIONS_EACH,
		HTTPD_REQUEST_S, hits(h, L_CONNS), HTTPD_CONNECTIONS_EACH, hits(h, L_TOTAL),
		HTTPD_CONNECTIONS, hits(h, L_SLOW), HTTPD_REQUEST_S, h->idle, HTTPD_REQUEST_S);
}

/* The client of cn (NULL: not known, SEE_NONE) may see p. */
int httpi_may_see(const struct conn *cn, const struct aproc *p)
{
	enum sight v = cn ? cn->sees : SEE_NONE;
	return v == SEE_ALL || (v == SEE_UID && p->uid == cn->uid);
}

/* A client who sees only its own: its share of the bounds (processes.h,
 * sink.h), not the other users'. */
static void put_own_bounds(const struct httpd *h, const struct conn *cn, FILE *f)
{
	struct auser *u = NULL;
	if (cn && cn->sees == SEE_UID)
		HASH_FIND(hh, h->procs->users, &cn->uid, sizeof(cn->uid), u);
	fprintf(f, "<h2>Bounds</h2>\n<p>Kept of your processes: %.1f of %u MiB (%u MiB a "
		"process). Your part of the profiles being taken: %.1f of %u MiB (%u MiB a "
		"profile). Dropped at these bounds: %" PRIu64 " samples, %" PRIu64 " frames."
		"</p>\n", u ? u->kept / 1048576.0 : 0.0, APROC_UID_BYTES >> 20,
		APROC_PROC_BYTES >> 20, u ? u->profiles / 1048576.0 : 0.0, SINK_UID_BYTES >> 20,
		SINK_BYTES >> 20, u ? u->dropped : 0, u ? u->frames_dropped : 0);
}

/* Whom the page shows: all, or why only some (none). */
static void put_sight(const struct httpd *h, const struct conn *cn, FILE *f)
{
	if (cn && cn->sees == SEE_UID && h->self == 0)
		fprintf(f, "<p>You (uid %" PRIu32 ") are shown your own processes; root is "
			"shown every user's.</p>\n", cn->uid);
	else if (cn && cn->sees == SEE_UID)
		fprintf(f, "<p>You (uid %" PRIu32 ") are shown your own processes; root and "
			"uid %" PRIu32 " (the agent's) are shown every user's.</p>\n", cn->uid,
			h->self);
	else if (!cn || cn->sees == SEE_NONE)
		fputs("<p>The kernel did not say which user you are (sock_diag: no inet_diag "
		      "module): you are shown no process.</p>\n", f);
}

/* The table of processes cn's client may see. */
static void put_procs(struct httpd *h, const struct conn *cn, FILE *f)
{
	struct aproc *p, *tmp;
	HASH_ITER(hh, h->procs->byid, p, tmp) {
		if (p->gone || !httpi_may_see(cn, p))
			continue;
		fprintf(f, "<tr><td>%u</td><td>", p->pid);
		flame_put_xml(f, p->name, 0);
		fprintf(f, "</td><td>%" PRIu64 "</td><td>", p->samples);
		flame_put_xml(f, p->exe, 0);
		fprintf(f, "</td><td><a href=\"/debug/pprof/profile?seconds=30&amp;pid=%u\">"
			"30 s</a></td></tr>\n", p->pid);
	}
	fputs("</table>\n", f);
}

/* The processes ended lately: every user's, for those who see all (the
 * ring keeps no uid). */
static void put_recent(const struct httpd *h, FILE *f)
{
	fputs("<h2>Ended lately</h2>\n<table>\n<tr><th>pid</th><th>name</th>"
	      "<th>samples</th><th>exit</th></tr>\n", f);
	size_t k = h->procs->nrecent < APROC_RECENT ? h->procs->nrecent : APROC_RECENT;
	for (size_t i = 0; i < k; i++) {
		const struct arecent *r = &h->procs->recent[(h->procs->nrecent - 1 - i) %
							    APROC_RECENT];
		fprintf(f, "<tr><td>%u</td><td>", r->pid);
		flame_put_xml(f, r->name, 0);
		fprintf(f, "</td><td>%" PRIu64 "</td><td>", r->samples);
		if (r->have_exit && r->status >= 0)     /* -1: sampled from outside */
			fprintf(f, "%d", r->status);
		else
			fputs("?", f);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* The index page, of what cn's client may see (httpd.h). */
enum MHD_Result httpi_index_page(struct httpd *h, struct MHD_Connection *c,
				 const struct conn *cn)
{
	char *buf = NULL;
	size_t n = 0;
	int all = cn && cn->sees == SEE_ALL;
	FILE *f = open_memstream(&buf, &n);
	if (!f)
		return httpi_text(c, 500, "out of memory\n");
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>probe agent"
	      "</title></head><body>\n<h1>probe agent</h1>\n<p>CPU profiles in pprof "
	      "format: <a href=\"/debug/pprof/profile?seconds=30\">/debug/pprof/profile?"
	      "seconds=30</a> (the processes listed here; <code>&amp;pid=P</code> or "
	      "<code>&amp;comm=NAME</code> for some).</p>\n", f);
	put_sight(h, cn, f);
	if (all)
		fprintf(f, "<h2>Processes (%zu live, %" PRIu64 " seen)</h2>\n", h->procs->nlive,
			h->procs->seen);
	else
		fputs("<h2>Your processes</h2>\n", f);
	fputs("<table>\n<tr><th>pid</th><th>name</th><th>samples</th><th>executable</th>"
	      "<th>profile</th></tr>\n", f);
	put_procs(h, cn, f);
	if (all)
		put_recent(h, f);
	put_bounds(h, f);
	if (all)
		aprocs_bounds_html(h->procs, f);        /* what is kept, profiles: processes.h */
	else
		put_own_bounds(h, cn, f);
	fputs("</body></html>\n", f);
	if (fclose(f) != 0) {
		free(buf);
		return httpi_text(c, 500, "out of memory\n");
	}
	return httpi_answer(c, 200, "text/html; charset=utf-8", buf, n, MHD_RESPMEM_MUST_FREE);
}
