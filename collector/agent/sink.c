/* sink.c - see sink.h. */
#include "agent/sink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format/format.h"
#include "hashtab.h"
#include "symbols/resolve.h"
#include "util.h"

struct sink_pid {
	uint32_t pid, uid;
	size_t cost;            /* its part of agg_cost, charged to uid */
	UT_hash_handle hh;
};

struct sink *sink_new(struct aprocs *procs, const char *event, int alloc_default)
{
	struct sink *s = xcalloc(1, sizeof(*s));
	struct timespec rt;
	s->agg = agg_new();
	if (event)
		agg_select_event(s->agg, event);
	s->alloc_default = alloc_default;
	s->procs = procs;
	s->start_mono = now_ns();
	clock_gettime(CLOCK_REALTIME, &rt);
	s->start_real = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	return s;
}

static size_t left(size_t bound, size_t used)
{
	return used < bound ? bound - used : 0;
}

/* x, which held before of something that now holds after. */
static void follow(size_t *x, size_t before, size_t after)
{
	*x = after >= before ? *x + (after - before) : *x - (before - after);
}

struct adding {                 /* one process's frame on its way in */
	struct sink *s;
	struct sink_pid *e;
};

/*
 * m into the aggregate, within what e's user may still take (sink.h):
 * what it takes charged to that user, what it drops counted.
 */
static void add_charged(void *ctx, struct probe_msg *m)
{
	struct adding *ad = ctx;
	struct aprocs *t = ad->s->procs;
	struct agg *a = ad->s->agg;
	struct auser *u = aprocs_user(t, ad->e->uid);
	const struct agg_totals *tot = agg_totals(a);
	uint64_t dropped = tot->dropped, frames = tot->frames_dropped;
	size_t before = agg_cost(a), room = left(SINK_BYTES, before);
	if (room > left(SINK_UID_BYTES, u->profiles))
		room = left(SINK_UID_BYTES, u->profiles);
	if (room > left(SINK_ALL_BYTES, t->profiles))
		room = left(SINK_ALL_BYTES, t->profiles);
	agg_set_limit(a, before + room ? before + room : 1);   /* 0 would be none */
	struct probe_msg copy = *m;
	agg_add(a, &copy);
	size_t after = agg_cost(a);
	follow(&ad->e->cost, before, after);
	follow(&u->profiles, before, after);
	follow(&t->profiles, before, after);
	u->dropped += tot->dropped - dropped;
	t->dropped += tot->dropped - dropped;
	u->frames_dropped += tot->frames_dropped - frames;
	t->frames_dropped += tot->frames_dropped - frames;
}

void sink_add(struct sink *s, struct aproc *p, const struct probe_msg *m)
{
	struct adding ad = { s, NULL };
	if (s->finished)
		return;
	HASH_FIND(hh, s->pids, &p->pid, sizeof(p->pid), ad.e);
	if (!ad.e) {
		if (m->type != PROBE_F_SAMPLES && m->type != PROBE_F_LOST &&
		    m->type != PROBE_F_EXIT)
			return;         /* the replay will carry it */
		ad.e = xcalloc(1, sizeof(*ad.e));
		ad.e->pid = p->pid;
		ad.e->uid = p->uid;
		HASH_ADD(hh, s->pids, pid, sizeof(ad.e->pid), ad.e);
		aproc_replay(s->procs, p, add_charged, &ad);
	} else if (m->type == PROBE_F_HELLO) {
		/* As processes.h keeps it, just now: the kernel's names, and nothing else yet. */
		aproc_replay(s->procs, p, add_charged, &ad);
		return;
	}
	struct probe_msg copy = *m;
	char name[APROC_NAME_MAX + 1];
	if (m->type == PROBE_F_THREAD && m->u.thread.name &&
	    strlen(m->u.thread.name) > APROC_NAME_MAX) {
		memcpy(name, m->u.thread.name, APROC_NAME_MAX);
		name[APROC_NAME_MAX] = 0;
		copy.u.thread.name = name;
	}
	add_charged(&ad, &copy);
}

/* mem_write's writer: a report_ctx's pprof. */
static int write_ctx(void *ctx, FILE *f)
{
	return report_pprof(ctx, f);
}

static int write_pprof(struct sink *s, struct symcache *sc, uint64_t end_mono,
		       int alloc_default, uint8_t **body, size_t *len)
{
	struct report_opts o = { .file = "(probe agent)", .format = format_find("pprof"), .quiet = 1,
				 .resolve = { .demangle = 1, .inline_frames = 1 },
				 .start_real_ns = s->start_real, .alloc_default = alloc_default };
	o.window_ns = end_mono > s->start_mono ? end_mono - s->start_mono : 1;
	struct resolver *r = resolver_new(s->agg, sc, &o.resolve);
	struct report_ctx ctx;
	report_ctx_init(&ctx, &o, s->agg, r);
	int rc = mem_write(write_ctx, &ctx, body, len);
	resolver_free(r);
	return rc;
}

int sink_pprof(struct sink *s, struct symcache *sc, uint64_t end_mono,
	       uint8_t **body, size_t *len)
{
	if (!s->finished) {
		agg_finish(s->agg);
		s->finished = 1;
	}
	return write_pprof(s, sc, end_mono, s->alloc_default, body, len);
}

int sink_pprof_now(struct sink *s, struct symcache *sc, uint64_t end_mono,
		   int alloc_default, uint8_t **body, size_t *len)
{
	agg_finish(s->agg);     /* again at each: it takes frames after (top does) */
	return write_pprof(s, sc, end_mono, alloc_default, body, len);
}

void sink_free(struct sink *s)
{
	if (!s)
		return;
	struct aprocs *t = s->procs;
	struct sink_pid *e, *tmp;
	HASH_ITER(hh, s->pids, e, tmp) {
		HASH_DEL(s->pids, e);
		aprocs_user(t, e->uid)->profiles -= e->cost;
		t->profiles -= e->cost;
		free(e);
	}
	size_t cost = agg_cost(s->agg);
	agg_free(s->agg);
	free(s);
	aprocs_freed(t, cost);
}
