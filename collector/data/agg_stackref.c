/*
 * agg_stackref.c - a recording's STACK ids (file version 3) remembered by
 * the aggregate (agg_int.h): which of its stacks each id stands for, and
 * where that stack's last sample was counted.  A sample of a stack met
 * before is then counted without hashing anything, and without touching
 * its count entry until the count changes: in a 20-million-sample
 * report that cache miss was most of the time.  The table grows with the
 * highest id met (ids are below PROBE_STACK_IDS) and is counted in the
 * aggregate's bound; where it does not fit, samples are found by their
 * bytes as before.
 */
#include "data/agg_int.h"

#include <string.h>

#include "util.h"

/* The pending counts into their count entry. */
static void settle(struct stackref *r)
{
	if (!r->samples)
		return;
	r->c->samples += r->samples;
	r->c->weight = sat_add(r->c->weight, r->weight);
	r->samples = 0;
	r->weight = 0;
}

struct stackref *aggi_stackref(struct agg *a, const struct probe_sample_raw *s)
{
	if (!s->stack_serial || s->stack_id >= PROBE_STACK_IDS)
		return NULL;
	if (s->stack_id >= a->refs_cap) {
		size_t ncap = a->refs_cap ? a->refs_cap : 1024;
		while (ncap <= s->stack_id)
			ncap *= 2;
		if (!aggi_room(a, (ncap - a->refs_cap) * sizeof(*a->refs)))
			return NULL;
		a->refs = xrealloc(a->refs, ncap * sizeof(*a->refs));
		memset(a->refs + a->refs_cap, 0, (ncap - a->refs_cap) * sizeof(*a->refs));
		a->refs_cap = ncap;
	}
	struct stackref *r = &a->refs[s->stack_id];
	settle(r);
	return r;
}

int aggi_stackref_count(struct agg *a, uint32_t img, const struct probe_sample_raw *s)
{
	if (a->keep || !s->stack_serial || s->stack_id >= a->refs_cap)
		return 0;
	struct stackref *r = &a->refs[s->stack_id];
	const struct agg_image *im = &a->images[img];
	if (r->serial != s->stack_serial || !r->c || r->key.image != img ||
	    r->key.gen != im->gen || r->key.tid != s->tid || (int64_t)s->event == im->offcpu)
		return 0;
	/* It counts the sample in its event's totals: once, here. */
	if (!aggi_event_shown(a, img, s->event, s->weight))
		return 1;       /* as aggi_add_sample would: not shown */
	r->samples++;
	r->weight = sat_add(r->weight, s->weight);
	aggi_count_total(a, s);
	return 1;
}

void aggi_stackref_settle_all(struct agg *a)
{
	for (size_t i = 0; i < a->refs_cap; i++)
		if (a->refs[i].c)
			settle(&a->refs[i]);
}
