/*
 * scrub.c - an untrusted process's frames made safe to hand on (see
 * scrub.h).
 *
 * Why rewrite frames rather than mark them: a MAP and a sample travel on
 * as they are, into recordings, the agent's kept state and every profile
 * replayed from it, and each of those opens files and names addresses on
 * its own.  A frame that no longer names a file or a kernel address cannot
 * be misused anywhere downstream.
 */
#include "ingest/scrub.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/ingest.h"
#include "ingest/peer.h"
#include "util.h"

/* Where the kernel's half of the address space starts (resolve.c's). */
#define KERNEL_START 0xff00000000000000ull

/*
 * Decode the rewritten frame into m: 1 with *f its buffer (the caller's to
 * free), or -1.  A buffer per frame, not one per ingest: frame() may read
 * other connections, whose frames may be rewritten too, before it is done.
 */
static int redecode(struct ingest *in, struct probe_wbuf *w, struct probe_msg *m,
		    const uint8_t **f, size_t *len)
{
	char err[PROBE_ERR_MAX];
	if (!w->ok || probe_decode_frame(w->p, w->len, m, &in->sc, err) < 0) {
		free(w->p);
		return -1;
	}
	*f = w->p;
	*len = w->len;
	return 1;
}

/* The MAP again, with path and build-id replaced. */
static int rebuild_map(struct ingest *in, struct probe_msg *m, const char *path,
		       const uint8_t *bid, size_t bid_len, const uint8_t **f, size_t *len)
{
	struct probe_wbuf w;
	size_t cap = 64 + PROBE_BUILD_ID_MAX + PROBE_STR_MAX;
	char p[PROBE_STR_MAX + 1];

	snprintf(p, sizeof p, "%s", path);
	probe_wbuf_init(&w, xmalloc(cap), cap);
	size_t at = probe_frame_begin(&w, PROBE_F_MAP, m->pid);
	probe_put_u64(&w, m->u.map.start);
	probe_put_u64(&w, m->u.map.end);
	probe_put_u64(&w, m->u.map.bias);
	probe_put_u64(&w, m->u.map.pgoff);
	probe_put_u8(&w, bid_len);
	if (bid_len)            /* no memcpy from NULL, even of nothing */
		probe_put_bytes(&w, bid, bid_len);
	probe_put_str(&w, p);
	probe_frame_end(&w, at);
	return redecode(in, &w, m, f, len);
}

/* An untrusted peer's MAP checked: 1 verified (bid: the file's), 0 rewritten, -1. */
static int check_map(struct ingest *in, struct ingest_conn *c, struct probe_msg *m,
		     const uint8_t **f, size_t *len, uint8_t *bid, size_t *bid_len)
{
	const char *why = NULL, *path = m->u.map.path;
	int same_ns = c->wire_pid == (uint32_t)c->pid;

	if (!peer_map_check(&c->peer, &in->budgets, same_ns, m->u.map.start, path, bid,
			    bid_len, &why)) {
		in->unverified++;
		if (ingest_say_due(&in->unverified_said_at)) {
			char *p = printable_dup(path);
			ingest_note(in, INGEST_UNVERIFIED, "process %ld (uid %ld) sent a MAP of %s: "
				    "%s; its addresses there are not named (%" PRIu64 " such "
				    "MAPs so far; said once a minute at most)", (long)c->pid,
				    (long)c->uid, p, why, in->unverified);
			free(p);
		}
		return rebuild_map(in, m, "[unverified]", NULL, 0, f, len) < 0 ? -1 : 0;
	}
	if (!*bid_len) {
		/*
		 * Nothing ties the path, opened again later by root, to the file
		 * checked now: without a build-id it is not opened again.
		 */
		char *t = xasprintf("[no build-id] %s", path);
		int r = rebuild_map(in, m, t, NULL, 0, f, len);
		free(t);
		return r < 0 ? -1 : 0;
	}
	return 1;
}

int scrub_map(struct ingest *in, struct ingest_conn *c, struct probe_msg *m,
	      const uint8_t **f, size_t *len)
{
	uint8_t bid[PROBE_BUILD_ID_MAX];
	size_t bid_len = m->u.map.build_id_len;
	const char *path = m->u.map.path;

	if (path[0] != '/')
		return 0;               /* [vdso]: the collector's own is read */
	memcpy(bid, m->u.map.build_id, bid_len);
	if (c->peer.untrusted) {
		int r = check_map(in, c, m, f, len, bid, &bid_len);
		if (r <= 0)
			return r < 0 ? -1 : 1;
	}
	char *p = NULL;
	if (in->live_roots && c->peer.foreign_mnt)
		p = xasprintf("/proc/%ld/root%s", (long)c->pid, path);
	else if (bid_len != m->u.map.build_id_len || memcmp(bid, m->u.map.build_id, bid_len))
		p = xstrdup(path);      /* m's path is rewritten under it */
	if (!p)
		return 0;
	int r = rebuild_map(in, m, p, bid, bid_len, f, len);
	free(p);
	return r;
}

/* Does any frame of any sample lie in the kernel's half? */
static int has_kernel(struct probe_msg m)
{
	struct probe_sample_raw s;
	uint64_t pcs[PROBE_MAX_FRAMES];

	while (probe_samples_next_raw(&m, &s)) {
		uint32_t n = probe_sample_frames(&s, pcs);
		for (uint32_t i = 0; i < n; i++)
			if (pcs[i] >= KERNEL_START)
				return 1;
	}
	return 0;
}

/* One sample, its kernel frames (each run of them) one unnamed frame. */
static void put_sample(struct probe_wbuf *w, uint64_t base, const struct probe_sample_raw *s)
{
	uint64_t pcs[PROBE_MAX_FRAMES], out[PROBE_MAX_FRAMES];
	uint32_t n = probe_sample_frames(s, pcs), k = 0;

	for (uint32_t i = 0; i < n; i++) {
		int kern = pcs[i] >= KERNEL_START;
		if (kern && k && out[k - 1] == KERNEL_START)
			continue;
		out[k++] = kern ? KERNEL_START : pcs[i];
	}
	probe_put_uv(w, s->tid);
	probe_put_uv(w, s->time_ns - base);
	probe_put_uv(w, s->weight);
	probe_put_uv(w, s->event);
	probe_put_uv(w, k);
	uint64_t prev = 0;
	for (uint32_t i = 0; i < k; i++) {
		probe_put_sv(w, (int64_t)(out[i] - prev));
		prev = out[i];
	}
}

int scrub_samples(struct ingest *in, struct ingest_conn *c, struct probe_msg *m,
		  const uint8_t **f, size_t *len)
{
	struct probe_sample_raw s;
	struct probe_wbuf w;

	if (!c->hide_kernel || !has_kernel(*m))
		return 0;
	struct probe_msg copy = *m;
	uint64_t base = m->u.samples.base_ns;
	/* Each frame's delta was a byte at least and is 10 at most. */
	size_t cap = 10 * *len + 64;
	probe_wbuf_init(&w, xmalloc(cap), cap);
	size_t at = probe_frame_begin(&w, PROBE_F_SAMPLES, m->pid);
	probe_put_u64(&w, base);
	probe_put_uv(&w, m->u.samples.count);
	while (probe_samples_next_raw(&copy, &s))
		put_sample(&w, base, &s);
	probe_frame_end(&w, at);
	in->kernel_hidden++;
	return redecode(in, &w, m, f, len);
}
