/* sink.c - see sink.h. */
#include "sink.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format.h"
#include "hashtab.h"
#include "resolve.h"
#include "util.h"

struct sink_pid {
	uint32_t pid;
	UT_hash_handle hh;
};

struct sink *sink_new(struct aprocs *procs)
{
	struct sink *s = xcalloc(1, sizeof(*s));
	struct timespec rt;
	s->agg = agg_new();
	s->procs = procs;
	s->start_mono = now_ns();
	clock_gettime(CLOCK_REALTIME, &rt);
	s->start_real = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	return s;
}

static void add_copy(void *ctx, struct probe_msg *m)
{
	struct sink *s = ctx;
	struct probe_msg copy = *m;
	agg_add(s->agg, &copy);
}

void sink_add(struct sink *s, struct aproc *p, const struct probe_msg *m)
{
	struct sink_pid *e;
	if (s->finished)
		return;
	HASH_FIND(hh, s->pids, &p->pid, sizeof(p->pid), e);
	if (!e) {
		if (m->type != PROBE_F_SAMPLES && m->type != PROBE_F_LOST &&
		    m->type != PROBE_F_EXIT)
			return;         /* the replay will carry it */
		e = xcalloc(1, sizeof(*e));
		e->pid = p->pid;
		HASH_ADD(hh, s->pids, pid, sizeof(e->pid), e);
		aproc_replay(s->procs, p, add_copy, s);
	}
	add_copy(s, (struct probe_msg *)m);
}

int sink_pprof(struct sink *s, struct symcache *sc, uint64_t end_mono,
	       uint8_t **body, size_t *len)
{
	struct report_opts o = { .file = "(probe agent)", .format = format_find("pprof"), .quiet = 1,
				 .resolve = { .demangle = 1, .inline_frames = 1 },
				 .start_real_ns = s->start_real };
	o.window_ns = end_mono > s->start_mono ? end_mono - s->start_mono : 1;
	char *buf = NULL;
	size_t n = 0;
	if (!s->finished) {
		agg_finish(s->agg);
		s->finished = 1;
	}
	FILE *f = open_memstream(&buf, &n);
	if (!f) {
		probe_err("cannot build a profile in memory: %s", strerror(errno));
		return -1;
	}
	struct resolver *r = resolver_new(s->agg, sc, &o.resolve);
	struct report_ctx ctx;
	report_ctx_init(&ctx, &o, s->agg, r);
	int rc = report_pprof(&ctx, f);
	resolver_free(r);
	if (fclose(f) != 0 && rc == 0) {
		probe_err("cannot build a profile in memory: %s", strerror(errno));
		rc = -1;
	}
	if (rc < 0) {
		free(buf);
		return -1;
	}
	*body = (uint8_t *)buf;
	*len = n;
	return 0;
}

void sink_free(struct sink *s)
{
	if (!s)
		return;
	struct sink_pid *e, *tmp;
	HASH_ITER(hh, s->pids, e, tmp) {
		HASH_DEL(s->pids, e);
		free(e);
	}
	agg_free(s->agg);
	free(s);
}
