/*
 * agg_samples.c - the samples one by one (agg_keep_samples), and the
 * filters probe report applies to a finished aggregation.
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


/* ---- samples one by one ---------------------------------------------- */

void agg_keep_samples(struct agg *a)
{
	a->keep = 1;
}

/* By time, then by arrival (the index): a stable order. */
static int cmp_sample_idx(const void *x, const void *y, void *arg)
{
	const struct agg_sample *s = arg;
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	if (s[i].time != s[j].time)
		return s[i].time < s[j].time ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* Count ids to rows of the sorted count_vec; then time order. */
void aggi_finish_samples(struct agg *a, const uint32_t *row_of_id)
{
	size_t n = a->nsamples, *idx = xmalloc((n ? n : 1) * sizeof(*idx));
	struct agg_sample *out = xmalloc((n ? n : 1) * sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		a->samples[i].count = row_of_id[a->samples[i].count];
		idx[i] = i;
	}
	qsort_r(idx, n, sizeof(*idx), cmp_sample_idx, a->samples);
	for (size_t i = 0; i < n; i++)
		out[i] = a->samples[idx[i]];
	free(idx);
	free(a->samples);
	a->samples = out;
	a->samples_cap = n;
}

size_t agg_nsamples(const struct agg *a)
{
	return a->nsamples;
}

const struct agg_sample *agg_samples(const struct agg *a)
{
	return a->samples;
}

/* ---- restricting (probe report's filters) ------------------------------ */

void agg_window(struct agg *a, uint64_t lo, uint64_t hi)
{
	for (size_t r = 0; r < a->ncounts; r++)
		a->count_vec[r].samples = a->count_vec[r].weight = 0;
	size_t k = 0;
	a->t.samples = a->t.weight = 0;
	a->t.t_min = UINT64_MAX;
	a->t.t_max = 0;
	for (size_t i = 0; i < a->nsamples; i++) {
		const struct agg_sample *s = &a->samples[i];
		if (s->time < lo || s->time > hi || s->count >= a->ncounts)
			continue;
		struct agg_count *c = &a->count_vec[s->count];
		c->samples++;
		c->weight = sat_add(c->weight, s->weight);
		a->t.samples++;
		a->t.weight = sat_add(a->t.weight, s->weight);
		if (s->time < a->t.t_min)
			a->t.t_min = s->time;
		if (s->time > a->t.t_max)
			a->t.t_max = s->time;
		a->samples[k++] = *s;
	}
	a->nsamples = k;
	uint8_t *keep = xmalloc(a->ncounts ? a->ncounts : 1);
	for (size_t r = 0; r < a->ncounts; r++)
		keep[r] = a->count_vec[r].samples != 0;
	agg_keep_counts(a, keep);
	free(keep);
}

void agg_keep_counts(struct agg *a, const uint8_t *keep)
{
	size_t old = a->ncounts, n = 0;
	uint32_t *to = xmalloc((old ? old : 1) * sizeof(*to));
	for (size_t r = 0; r < old; r++) {
		to[r] = UINT32_MAX;
		if (keep[r]) {
			to[r] = (uint32_t)n;
			a->count_vec[n++] = a->count_vec[r];
		}
	}
	a->ncounts = n;
	size_t k = 0;
	for (size_t i = 0; i < a->nsamples; i++) {
		uint32_t c = a->samples[i].count;
		if (c >= old || to[c] == UINT32_MAX)
			continue;
		a->samples[k] = a->samples[i];
		a->samples[k++].count = to[c];
	}
	a->nsamples = k;
	free(to);
}
