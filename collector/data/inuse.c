/*
 * inuse.c - what stays in use of the sampled allocations: inuse.h says
 * what; an allocation waits here, keyed by (image, id), until its free.
 */
#include "data/inuse.h"

#include <stdlib.h>
#include "hashtab.h"

#include "util.h"

struct key {
	uint64_t id;
	uint32_t image;
	uint32_t pad;                   /* 0: part of the key's bytes */
};

struct ent {
	struct key k;
	void *row;                      /* NULL: a free that came first */
	uint64_t weight;
	double objects;
	uint64_t tag;                   /* the caller's, for its free */
	uint64_t freed_ns;              /* a free that came first: its time */
	UT_hash_handle hh;
};

struct inuse {
	struct ent *map;
	struct inuse_totals t;
};

struct inuse *inuse_new(void)
{
	return xcalloc(1, sizeof(struct inuse));
}

void inuse_free(struct inuse *u)
{
	struct ent *e, *tmp;

	if (!u)
		return;
	HASH_ITER(hh, u->map, e, tmp) {
		HASH_DEL(u->map, e);
		free(e);
	}
	free(u);
}

/* The byte length of the first n varints at p (each ends without 0x80). */
static size_t varints_len(const uint8_t *p, size_t len, uint32_t n)
{
	size_t i = 0;

	for (; n && i < len; i++)
		n -= !(p[i] & 0x80);
	return i;
}

int inuse_split(struct probe_sample_raw *s, uint64_t *id)
{
	uint64_t f[PROBE_MAX_FRAMES];
	uint32_t n = probe_sample_frames(s, f);

	if (n < 2 || (f[n - 2] != PROBE_FRAME_ALLOC_ID && f[n - 2] != PROBE_FRAME_FREED))
		return INUSE_NONE;
	*id = f[n - 1];
	if (f[n - 2] == PROBE_FRAME_FREED)
		return n == 2 ? INUSE_FREED : INUSE_NONE;
	if (n == 2)
		return INUSE_NONE;      /* an allocation without a stack: forged */
	s->frames_len = varints_len(s->frames, s->frames_len, n - 2);
	s->nframes = n - 2;
	return INUSE_ALLOC;
}

static struct ent *find(const struct inuse *u, uint32_t image, uint64_t id)
{
	struct key k = { id, image, 0 };
	struct ent *e;

	HASH_FIND(hh, u->map, &k, sizeof k, e);
	return e;
}

static void drop(struct inuse *u, struct ent *e)
{
	HASH_DEL(u->map, e);
	free(e);
}

int inuse_alloc(struct inuse *u, uint32_t image, uint64_t id, void *row,
		uint64_t weight, double objects, uint64_t time_ns, uint64_t tag,
		uint64_t *freed_ns)
{
	struct ent *e = id ? find(u, image, id) : NULL;

	if (!id || !row) {
		u->t.untracked++;
		return -1;
	}
	if (e && !e->row) {             /* its free came first */
		if (freed_ns)
			*freed_ns = e->freed_ns;
		drop(u, e);
		u->t.freed_first--;
		return 0;
	}
	if (e) {                        /* the same id twice: forged, keep the first */
		u->t.untracked++;
		return -1;
	}
	e = xcalloc(1, sizeof(*e));
	e->k = (struct key){ id, image, 0 };
	e->row = row;
	e->weight = weight;
	e->objects = objects;
	e->tag = tag;
	HASH_ADD(hh, u->map, k, sizeof e->k, e);
	u->t.bytes = sat_add(u->t.bytes, weight);
	u->t.objects++;
	if (u->t.bytes > u->t.peak) {
		u->t.peak = u->t.bytes;
		u->t.peak_ns = time_ns;
	}
	return 1;
}

int inuse_freed(struct inuse *u, uint32_t image, uint64_t id, void **row,
		uint64_t *weight, double *objects, int keep, uint64_t time_ns,
		uint64_t *tag)
{
	struct ent *e = find(u, image, id);

	if (e && e->row) {
		if (tag)
			*tag = e->tag;
		*row = e->row;
		*weight = e->weight;
		*objects = e->objects;
		u->t.bytes -= e->weight <= u->t.bytes ? e->weight : u->t.bytes;
		u->t.objects--;
		drop(u, e);
		return 1;
	}
	if (!e && id && keep) {         /* its allocation is to come */
		e = xcalloc(1, sizeof(*e));
		e->k = (struct key){ id, image, 0 };
		e->freed_ns = time_ns;
		HASH_ADD(hh, u->map, k, sizeof e->k, e);
		u->t.freed_first++;
	}
	return 0;
}

void inuse_each(const struct inuse *u, void (*fn)(void *row, uint64_t weight, void *arg),
		void *arg)
{
	for (const struct ent *e = u->map; e; e = e->hh.next)
		if (e->row)
			fn(e->row, e->weight, arg);
}

const struct inuse_totals *inuse_totals(const struct inuse *u)
{
	return &u->t;
}
