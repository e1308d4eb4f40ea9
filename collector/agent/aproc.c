/* aproc.c - see aproc.h. */
#include "aproc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void aprocs_init(struct aprocs *t)
{
	memset(t, 0, sizeof(*t));
	if (probe_scratch_init(&t->sc) < 0)
		probe_oom();
}

static void kept_free(struct kept *k)
{
	free(k->f);
	k->f = NULL;
	k->len = 0;
}

/* Forget what describes p (a new HELLO, or its end). */
static void forget(struct aproc *p)
{
	kept_free(&p->hello);
	for (size_t i = 0; i < p->nmaps; i++)
		kept_free(&p->maps[i]);
	for (size_t i = 0; i < p->nthr; i++)
		kept_free(&p->thr[i]);
	p->nmaps = p->nthr = 0;
	struct kjit *j, *tmp;
	HASH_ITER(hh, p->jits, j, tmp) {
		HASH_DEL(p->jits, j);
		kept_free(&j->k);
		free(j);
	}
	p->njits = 0;
}

static void proc_free(struct aproc *p)
{
	forget(p);
	free(p->maps);
	free(p->thr);
	free(p->name);
	free(p->comm);
	free(p->exe);
	free(p);
}

void aprocs_free(struct aprocs *t)
{
	struct aproc *p, *tmp;
	HASH_ITER(hh, t->byid, p, tmp) {
		HASH_DEL(t->byid, p);
		proc_free(p);
	}
	probe_scratch_free(&t->sc);
}

struct aproc *aproc_find(struct aprocs *t, uint32_t pid)
{
	struct aproc *p;
	HASH_FIND(hh, t->byid, &pid, sizeof(pid), p);
	return p;
}

struct aproc *aproc_get(struct aprocs *t, uint32_t pid)
{
	struct aproc *p = aproc_find(t, pid);
	if (p)
		return p;
	p = xcalloc(1, sizeof(*p));
	p->pid = pid;
	p->name = xasprintf("[pid %u]", pid);
	p->comm = xstrdup("");
	p->exe = xstrdup("");
	HASH_ADD(hh, t->byid, pid, sizeof(p->pid), p);
	t->nlive++;
	t->seen++;
	return p;
}

static void keep(struct kept *k, const uint8_t *f, size_t len)
{
	kept_free(k);
	k->f = xmalloc(len);
	memcpy(k->f, f, len);
	k->len = len;
}

static void set_str(char **dst, const char *s)
{
	free(*dst);
	*dst = printable_dup(s ? s : "");
}

static void note_hello(struct aproc *p, const struct probe_msg *m, const uint8_t *f,
		       size_t len)
{
	forget(p);
	keep(&p->hello, f, len);
	set_str(&p->comm, m->u.hello.comm);
	set_str(&p->exe, m->u.hello.exe);
	const char *n = p->exe[0] ? path_basename(p->exe) : p->comm;
	free(p->name);
	p->name = n[0] ? xstrdup(n) : xasprintf("[pid %u]", p->pid);
}

/* A new entry at the end of a kept vector, or NULL when it holds max. */
static struct kept *append(struct kept **v, size_t *n, size_t *cap, size_t max,
			   const uint8_t *f, size_t len)
{
	if (*n == max)
		return NULL;
	*v = xgrow(*v, cap, *n + 1, sizeof(**v));
	struct kept *k = &(*v)[(*n)++];
	memset(k, 0, sizeof(*k));
	keep(k, f, len);
	return k;
}

/* The address space now: the mappings this one overlaps are gone. */
static void note_map(struct aproc *p, const struct probe_msg *m, const uint8_t *f,
		     size_t len)
{
	uint64_t s = m->u.map.start, e = m->u.map.end;
	size_t j = 0;
	for (size_t i = 0; i < p->nmaps; i++) {
		if (p->maps[i].start < e && s < p->maps[i].end)
			kept_free(&p->maps[i]);
		else
			p->maps[j++] = p->maps[i];
	}
	p->nmaps = j;
	struct kept *k = append(&p->maps, &p->nmaps, &p->mcap, APROC_MAPS, f, len);
	if (k) {
		k->start = s;
		k->end = e;
	}
}

static void note_thread(struct aproc *p, const struct probe_msg *m, const uint8_t *f,
			size_t len)
{
	for (size_t i = 0; i < p->nthr; i++)
		if (p->thr[i].tid == m->u.thread.tid) {
			keep(&p->thr[i], f, len);
			return;
		}
	struct kept *k = append(&p->thr, &p->nthr, &p->tcap, APROC_THREADS, f, len);
	if (k)
		k->tid = m->u.thread.tid;
}

/* Code named again at the same start was replaced: the newer name, last. */
static void note_jit(struct aproc *p, const struct probe_msg *m, const uint8_t *f,
		     size_t len)
{
	uint64_t start = m->u.jit.start;
	struct kjit *j;
	HASH_FIND(hh, p->jits, &start, sizeof(start), j);
	if (j) {
		HASH_DEL(p->jits, j);
		p->njits--;
	} else if (p->njits >= APROC_JITS) {
		return;
	} else {
		j = xcalloc(1, sizeof(*j));
		j->start = start;
	}
	keep(&j->k, f, len);
	HASH_ADD(hh, p->jits, start, sizeof(j->start), j);
	p->njits++;
}

struct aproc *aproc_note(struct aprocs *t, const struct probe_msg *m,
			 const uint8_t *f, size_t len)
{
	struct aproc *p = aproc_get(t, m->pid);
	switch (m->type) {
	case PROBE_F_HELLO:
		note_hello(p, m, f, len);
		break;
	case PROBE_F_MAP:
		note_map(p, m, f, len);
		break;
	case PROBE_F_THREAD:
		note_thread(p, m, f, len);
		break;
	case PROBE_F_JIT:
		note_jit(p, m, f, len);
		break;
	case PROBE_F_SAMPLES:
		p->samples += m->u.samples.count;
		break;
	case PROBE_F_EXIT:
		p->have_exit = 1;
		p->status = m->u.exit.status;
		break;
	default:
		break;
	}
	return p;
}

void aproc_connected(struct aprocs *t, struct aproc *p)
{
	if (p->gone) {          /* a pid used again before it was forgotten */
		p->gone = 0;
		t->nlive++;
	}
	p->connected++;
}

void aproc_gone(struct aprocs *t, struct aproc *p)
{
	if (p->gone)
		return;
	p->gone = 1;
	t->nlive--;
	struct arecent *r = &t->recent[t->nrecent++ % APROC_RECENT];
	r->pid = p->pid;
	snprintf(r->name, sizeof(r->name), "%s", p->name);
	r->samples = p->samples;
	r->have_exit = p->have_exit;
	r->status = p->status;
	forget(p);
}

void aproc_reap(struct aprocs *t)
{
	struct aproc *p, *tmp;
	HASH_ITER(hh, t->byid, p, tmp) {
		if (!p->gone || p->win)
			continue;
		HASH_DEL(t->byid, p);
		proc_free(p);
	}
}

/* Decode k again; pid and tid as they were rewritten when it came. */
static void replay_one(struct aprocs *t, const struct aproc *p, const struct kept *k,
		       aproc_fn fn, void *ctx)
{
	struct probe_msg m;
	char err[PROBE_ERR_MAX];
	if (!k->f || probe_decode_frame(k->f, k->len, &m, &t->sc, err) < 0)
		return;
	m.pid = p->pid;
	if (m.type == PROBE_F_THREAD)
		m.u.thread.tid = k->tid;
	fn(ctx, &m);
}

void aproc_replay(struct aprocs *t, const struct aproc *p, aproc_fn fn, void *ctx)
{
	replay_one(t, p, &p->hello, fn, ctx);
	for (size_t i = 0; i < p->nmaps; i++)
		replay_one(t, p, &p->maps[i], fn, ctx);
	for (size_t i = 0; i < p->nthr; i++)
		replay_one(t, p, &p->thr[i], fn, ctx);
	for (const struct kjit *j = p->jits; j; j = j->hh.next)
		replay_one(t, p, &j->k, fn, ctx);
}
