/*
 * agg_inuse.c - --alloc's allocations and frees into the tables, and what
 * stays in use (inuse.h) as the "inuse" event.
 */
#include "data/agg_int.h"
#include "data/aggregate.h"
#include "interval.h"

#include <inttypes.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "hashtab.h"
#include "data/inuse.h"
#include "util.h"

/* What an allocation followed (or an early free) costs: inuse.c's entry,
 * uthash's handle and malloc's header. */
#define INUSE_COST 144u


/* The inuse event's totals: the allocations in use now. */
static void inuse_event(struct agg *a)
{
	const struct inuse_totals *t = inuse_totals(a->inuse);
	uint8_t id = a->inuse_ev;      /* set with the HELLO that brought alloc */

	if (id < a->nevents) {
		a->events[id].samples = t->objects;
		a->events[id].weight = t->bytes;
	}
}

/*
 * The kept sample tag - 1 (agg_keep_samples: tag is its index + 1, 0 for
 * none) is an allocation freed at time ns.  Before agg_finish, indices
 * are those of arrival.
 */
static void freed_at(struct agg *a, uint64_t tag, uint64_t ns)
{
	if (tag && tag <= a->nsamples && !a->finished_samples)
		a->samples[tag - 1].freed = ns ? ns : 1;
}

/* A row's allocation freed (or found freed): out of what it holds in use. */
static void take_out(struct agg *a, void *row, uint64_t w, double objects)
{
	struct count_ent *c = row;

	if (row == &a->inuse_row)
		return;
	c->inuse_weight -= w <= c->inuse_weight ? w : c->inuse_weight;
	c->inuse_objects = c->inuse_objects > objects ? c->inuse_objects - objects : 0;
	if (!a->inuse_shown)
		return;
	c->samples -= c->samples ? 1 : 0;
	c->weight -= w <= c->weight ? w : c->weight;
	a->t.samples -= a->t.samples ? 1 : 0;
	a->t.weight -= w <= a->t.weight ? w : a->t.weight;
}

/*
 * An allocation sample (its stack, then its id) or the free of one
 * (wire.h): allocations are counted as the other samples are, unbiased;
 * each is followed until its free (inuse.h).
 */
void aggi_add_alloc(struct agg *a, uint32_t img, uint32_t pid,
		      struct probe_sample_raw *s)
{
	uint64_t id = 0, w;
	int kind = inuse_split(s, &id);
	void *row;
	double objs;

	if (!a->inuse)
		a->inuse = inuse_new();
	if (kind == INUSE_FREED) {
		uint64_t tag = 0;

		if (inuse_freed(a->inuse, img, id, &row, &w, &objs, 0, 0, &tag) == 1) {
			take_out(a, row, w, objs);
			a->cost -= a->cost >= INUSE_COST ? INUSE_COST : a->cost;
			freed_at(a, tag, s->time_ns);
		} else if (aggi_room(a, INUSE_COST)) {
			/* A free before its allocation, kept while there is room. */
			inuse_freed(a->inuse, img, id, &row, &w, &objs, 1, s->time_ns, NULL);
		}
		inuse_event(a);
		return;
	}
	uint64_t n = s->weight;
	aggi_unbiased(&a->images[img], s);
	struct count_ent *c = aggi_add_sample(a, img, pid, s);
	double objects = n ? (double)s->weight / (double)n : 1;
	if (c)
		c->objects += objects;
	if (kind != INUSE_ALLOC)
		return;
	row = c ? (void *)c : (void *)&a->inuse_row;    /* not shown: totals alone */
	if (!aggi_room(a, INUSE_COST))
		id = 0;                 /* not followed */
	/* Kept (agg_keep_samples): its index, for its free's time. */
	uint64_t tag = c && a->keep ? a->nsamples : 0, early = 0;
	int r = inuse_alloc(a->inuse, img, id, row, s->weight, objects, s->time_ns, tag,
			    &early);
	if (r == 0)
		freed_at(a, tag, early);
	/* Not kept: what was charged for it back, and for its early free. */
	for (int back = r == 0 ? 2 : r < 0 && id ? 1 : 0; back > 0; back--)
		a->cost -= a->cost >= INUSE_COST ? INUSE_COST : a->cost;
	if (r >= 0 && c) {
		c->inuse_weight = sat_add(c->inuse_weight, s->weight);
		c->inuse_objects += objects;
	}
	if (r == 0)
		take_out(a, row, s->weight, objects);   /* its free came first */
	inuse_event(a);
}

const struct inuse_totals *agg_inuse(const struct agg *a)
{
	return a->inuse ? inuse_totals(a->inuse) : NULL;
}

int agg_inuse_shown(const struct agg *a)
{
	return a->inuse_shown;
}
