/*
 * report_folded.c - folded stacks for flamegraph.pl, speedscope and
 * inferno: one line per distinct stack, "exe;outermost;...;leaf COUNT",
 * COUNT in samples, lines in byte order.
 *
 * Frames are named as in the text report; a ';' inside a name would split
 * it, so it becomes ':'.  Different address stacks that name the same
 * functions are one line.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "format.h"
#include "util.h"

struct line {
	UT_hash_handle hh;
	uint64_t samples;
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
	const struct line *a = *(const struct line *const *)x;
	const struct line *b = *(const struct line *const *)y;
	return strcmp(a->text, b->text);
}

int report_folded(const struct report_ctx *c, FILE *out)
{
	struct line *lines = NULL;
	struct sbuf b = { 0 };
	struct rframe *fr = xmalloc(RESOLVE_MAX_FRAMES * sizeof(*fr));
	const struct agg_count *counts = agg_counts(c->agg);
	for (size_t i = 0; i < agg_ncounts(c->agg); i++) {
		const struct agg_count *k = &counts[i];
		uint32_t n = resolve_stack(c->res, k, fr);
		b.len = 0;
		sb_add(&b, agg_image(c->agg, k->image)->name);
		for (uint32_t f = n; f-- > 0;) {
			sb_add(&b, ";");
			b.p[b.len - 1] = ';';   /* sb_add maps ';' to ':' */
			sb_add(&b, resolver_loc(c->res, fr[f].loc)->sym);
		}
		struct line *l;
		HASH_FIND(hh, lines, b.p, b.len, l);
		if (!l) {
			l = xmalloc(sizeof(*l) + b.len + 1);
			memset(&l->hh, 0, sizeof(l->hh));
			l->samples = 0;
			memcpy(l->text, b.p, b.len + 1);
			HASH_ADD_KEYPTR(hh, lines, l->text, b.len, l);
		}
		l->samples += k->samples;
	}
	free(fr);
	free(b.p);

	size_t n = HASH_COUNT(lines), i = 0;
	struct line **vec = xmalloc((n ? n : 1) * sizeof(*vec));
	for (struct line *l = lines; l; l = l->hh.next)
		vec[i++] = l;
	qsort(vec, n, sizeof(*vec), cmp_line);
	for (i = 0; i < n; i++)
		fprintf(out, "%s %" PRIu64 "\n", vec[i]->text, vec[i]->samples);
	free(vec);
	struct line *l, *tmp;
	HASH_ITER(hh, lines, l, tmp) {
		HASH_DEL(lines, l);
		free(l);
	}
	return 0;
}
