/*
 * folded.c - folded stacks for flamegraph.pl, speedscope and inferno: one
 * line per distinct stack, "exe;outermost;...;leaf COUNT", COUNT in
 * samples, lines in byte order.  A recording with --off-cpu counts
 * microseconds of wall time instead (running, or waiting: the stacks that
 * end in "[off-cpu]"), so that its flame graph is one of wall time; with
 * --alloc shown, bytes allocated (unbiased).  probe diff writes two counts per line,
 * base and new, as FlameGraph's difffolded.pl does.
 *
 * Frames are named as in the text report; a ';' inside a name would split
 * it, so it becomes ':'.  Different address stacks that name the same
 * functions are one line.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "format/format.h"
#include "util.h"

struct folded_line {
	UT_hash_handle hh;
	uint64_t samples[2];
	char text[];
};

struct sbuf {
	char *p;
	size_t len, cap;
};

static void sb_add(struct sbuf *b, const char *s)
{
	size_t n = strlen(s);
	b->p = xgrow(b->p, &b->cap, b->len + n + 1, 1);
	for (size_t i = 0; i < n; i++)
		b->p[b->len + i] = s[i] == ';' ? ':' : s[i];
	b->len += n;
	b->p[b->len] = '\0';
}

static int cmp_line(const void *x, const void *y)
{
	const struct folded_line *a = *(const struct folded_line *const *)x;
	const struct folded_line *b = *(const struct folded_line *const *)y;
	return strcmp(a->text, b->text);
}

/* "exe;outermost;...;leaf" of one count row into b. */
static void stack_text(const struct report_ctx *c, const struct agg_count *k,
		       struct rframe *fr, struct sbuf *b)
{
	uint32_t n = resolve_stack(c->res, k, fr);
	b->len = 0;
	sb_add(b, report_image_name(c, k->image));      /* probe diff: paired */
	for (uint32_t f = n; f-- > 0;) {
		sb_add(b, ";");
		b->p[b->len - 1] = ';';   /* sb_add maps ';' to ':' */
		sb_add(b, resolver_loc(c->res, fr[f].loc)->sym);
	}
}

void folded_add(struct folded *set, const struct report_ctx *c, int which)
{
	struct folded_line **lines = &set->lines;
	struct sbuf b = { 0 };
	struct rframe *fr = xmalloc(RESOLVE_MAX_FRAMES * sizeof(*fr));
	const struct agg_count *counts = agg_counts(c->agg);
	for (size_t i = 0; i < agg_ncounts(c->agg); i++) {
		stack_text(c, &counts[i], fr, &b);
		struct folded_line *l;
		HASH_FIND(hh, *lines, b.p, b.len, l);
		if (!l) {
			l = xcalloc(1, sizeof(*l) + b.len + 1);
			memcpy(l->text, b.p, b.len + 1);
			HASH_ADD_KEYPTR(hh, *lines, l->text, b.len, l);
		}
		l->samples[which] += set->wall || set->bytes ? counts[i].weight :
				     counts[i].samples;
	}
	free(fr);
	free(b.p);
}

void folded_write(struct folded *set, FILE *out, int both)
{
	struct folded_line *lines = set->lines;
	size_t n = HASH_COUNT(lines), i = 0;
	struct folded_line **vec = xmalloc((n ? n : 1) * sizeof(*vec));
	for (struct folded_line *l = lines; l; l = l->hh.next)
		vec[i++] = l;
	qsort(vec, n, sizeof(*vec), cmp_line);
	for (i = 0; i < n; i++) {
		uint64_t a = vec[i]->samples[0], b = vec[i]->samples[1];
		if (set->wall) {        /* ns to us, rounded */
			a = (a + 500) / 1000;
			b = (b + 500) / 1000;
			if (!a && !b)
				continue;       /* under half a microsecond */
		}
		fprintf(out, "%s %" PRIu64, vec[i]->text, a);
		if (both)
			fprintf(out, " %" PRIu64, b);
		fputc('\n', out);
	}
	free(vec);
}

void folded_free(struct folded *set)
{
	struct folded_line *lines = set->lines, *l, *tmp;
	HASH_ITER(hh, lines, l, tmp) {
		HASH_DEL(lines, l);
		free(l);
	}
	set->lines = NULL;
}

int report_folded(const struct report_ctx *c, FILE *out)
{
	struct folded set = { 0 };
	set.wall = agg_wall(c->agg);
	set.bytes = agg_bytes(c->agg);
	folded_add(&set, c, 0);
	folded_write(&set, out, 0);
	folded_free(&set);
	return 0;
}
