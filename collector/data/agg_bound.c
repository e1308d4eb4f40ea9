/*
 * agg_bound.c - the bound on what a recording's tables take (agg_set_limit):
 * the distinct addresses counted in it, and whether a new count has room.
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


/* ---- the bound's distinct addresses ------------------------------------ */

static size_t addr_slot(const struct agg *a, uint32_t image, uint32_t gen, uint64_t addr)
{
	uint64_t h = probe_hash_mix(addr ^ a->seed) ^
		     probe_hash_mix(((uint64_t)image << 32 | gen) + a->seed);
	return (size_t)probe_hash_mix(h) & a->addrs_mask;
}

/* Where (image, gen, addr) is, or the empty slot it would take. */
static struct addr_key *addr_find(struct agg *a, uint32_t image, uint32_t gen,
				  uint64_t addr)
{
	size_t j = addr_slot(a, image, gen, addr);
	for (;; j = (j + 1) & a->addrs_mask) {
		struct addr_key *k = &a->addrs[j];
		if (!k->image || (k->image == image + 1 && k->gen == gen && k->addr == addr))
			return k;
	}
}

static void addrs_grow(struct agg *a)
{
	struct addr_key *old = a->addrs;
	size_t n = old ? a->addrs_mask + 1 : 0;
	a->addrs_mask = n ? 2 * n - 1 : 1023;
	a->addrs = xcalloc(a->addrs_mask + 1, sizeof(*a->addrs));
	for (size_t i = 0; i < n; i++)
		if (old[i].image)
			*addr_find(a, old[i].image - 1, old[i].gen, old[i].addr) = old[i];
	free(old);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t p = *(const uint64_t *)x, q = *(const uint64_t *)y;
	return p < q ? -1 : p > q;
}

/*
 * Room for a new count entry of a stack in an image: itself, its sample
 * in a report, and the addresses the image's generation had not had (each
 * a location to resolve).  0 (nothing taken) when it does not fit.
 */
static int count_room(struct agg *a, uint32_t img, uint32_t gen, uint32_t stack)
{
	const struct stack_ent *se = a->stack_vec[stack];
	uint64_t fresh[PROBE_MAX_FRAMES + 1];
	size_t k = 0, nf = 0;
	for (uint32_t i = 0; i < se->nframes && a->addrs; i++) {
		const struct addr_key *e = addr_find(a, img, gen, se->frames[i]);
		if (!e->image)
			fresh[k++] = se->frames[i];
	}
	if (!a->addrs)
		for (uint32_t i = 0; i < se->nframes; i++)
			fresh[k++] = se->frames[i];
	qsort(fresh, k, sizeof(*fresh), cmp_u64);
	for (size_t i = 0; i < k; i++)
		if (!i || fresh[i] != fresh[i - 1])
			fresh[nf++] = fresh[i];
	size_t cost = sizeof(struct count_ent) + CHUNK + sizeof(struct agg_count) +
		      SAMPLE_COST + 8 * (size_t)se->nframes + nf * ADDR_COST;
	if (!aggi_room(a, cost))
		return 0;
	for (size_t i = 0; i < nf; i++) {
		if (!a->addrs || 2 * (a->naddrs + 1) > a->addrs_mask + 1)
			addrs_grow(a);
		struct addr_key *e = addr_find(a, img, gen, fresh[i]);
		*e = (struct addr_key){ fresh[i], img + 1, gen };
		a->naddrs++;
	}
	return 1;
}

/* Every sample counts in the totals, kept or not. */
void aggi_count_total(struct agg *a, const struct probe_sample_raw *s)
{
	a->t.samples++;
	a->t.weight = sat_add(a->t.weight, s->weight);
	if (s->time_ns < a->t.t_min)
		a->t.t_min = s->time_ns;
	if (s->time_ns > a->t.t_max)
		a->t.t_max = s->time_ns;
}

/* A sample not kept for the bound: counted, in the totals too. */
void aggi_drop_sample(struct agg *a, const struct probe_sample_raw *s)
{
	a->t.dropped++;
	a->t.dropped_weight = sat_add(a->t.dropped_weight, s->weight);
	aggi_count_total(a, s);
}

/*
 * An allocation sample of n bytes stands for n / (1 - exp(-n / R)) bytes
 * (R the mean interval): what a Poisson process over bytes samples with
 * chance 1 - exp(-n / R).  Each sample on its own, with its own size
 * (pprof's scaleHeapSample does it per site, with the site's mean size).
 */
struct probe_sample_raw *aggi_unbiased(const struct agg_image *im,
					 struct probe_sample_raw *s)
{
	if ((int64_t)s->event != im->alloc || im->alloc_every <= 1 || !s->weight)
		return s;
	double n = (double)s->weight, p = -expm1(-n / (double)im->alloc_every);
	double w = p > 0 ? n / p : n;
	s->weight = w >= 1.8e19 ? UINT64_MAX : (uint64_t)(w + 0.5);
	return s;
}

/*
 * The stack of a sample (not off-CPU's), and in *last where the count its
 * stack's last sample went to is kept: by its STACK id when it has one
 * (*ref: that id's entry), else by its encoded bytes.  NO_STACK when it
 * does not fit.
 */
static uint32_t sample_stack(struct agg *a, const struct probe_sample_raw *s,
			     struct count_ent ***last, struct stackref **ref)
{
	struct stackref *r = aggi_stackref(a, s);
	if (r && r->serial == s->stack_serial) {
		*ref = r;
		*last = &r->c;
		return r->stack;
	}
	struct enc_slot *slot = aggi_sample_slot(a, s);
	if (!slot)
		return NO_STACK;
	*last = &slot->last;
	if (r) {
		*r = (struct stackref){ .serial = s->stack_serial, .stack = slot->stack };
		*ref = r;
		*last = &r->c;
	}
	return slot->stack;
}

/* s into its row (returned; NULL: not shown, or dropped). */
struct count_ent *aggi_add_sample(struct agg *a, uint32_t img, uint32_t pid,
				    const struct probe_sample_raw *s)
{
	if (!aggi_event_shown(a, img, s->event, s->weight))
		return NULL;
	struct count_ent **last = NULL;    /* where this stack's last count is kept */
	struct stackref *ref = NULL;
	uint32_t stack;
	if ((int64_t)s->event == a->images[img].offcpu)
		stack = aggi_offcpu_stack(a, s);
	else
		stack = sample_stack(a, s, &last, &ref);
	if (stack == NO_STACK) {
		aggi_drop_sample(a, s);
		return NULL;
	}
	struct count_key key = { img, a->images[img].gen, s->tid, stack };
	struct count_ent *c = last ? *last : NULL;
	if (!c || memcmp(&c->key, &key, sizeof(key)) != 0) {
		HASH_FIND(hh, a->counts, &key, sizeof(key), c);
		if (!c && !count_room(a, img, key.gen, stack)) {
			aggi_drop_sample(a, s);
			return NULL;
		}
		if (!c) {
			c = xcalloc(1, sizeof(*c));
			c->key = key;
			c->id = a->ncreated++;
			HASH_ADD(hh, a->counts, key, sizeof(c->key), c);
			aggi_note_thread(a, pid, s->tid);
		}
		if (last)
			*last = c;
	}
	c->samples++;
	c->weight = sat_add(c->weight, s->weight);
	if (ref)
		ref->key = c->key;      /* for aggi_stackref_count's next sample */
	if (a->keep) {
		a->samples = xgrow(a->samples, &a->samples_cap, a->nsamples + 1,
				   sizeof(*a->samples));
		a->samples[a->nsamples++] =
			(struct agg_sample){ s->time_ns, s->weight, c->id, 0 };
	}
	aggi_count_total(a, s);
	return c;
}
