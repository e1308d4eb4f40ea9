/*
 * annot.c - probe top's annotation of the selected function ('a'): the
 * instructions and source lines its samples fell on, as probe annotate
 * prints them (annotate.h), remade at every draw while it shows, from every
 * sample since top started (not the last interval, not 'z': an
 * instruction's share needs all the samples there are), of every process
 * whose code is that function.
 */
#include "top/annot.h"

#include <curses.h>
#include <stdlib.h>
#include <string.h>

#include "annotate/annotate.h"
#include "format/format.h"
#include "util.h"

void annot_close(struct top *t)
{
	free(t->annot_text);
	free(t->annot_lines);
	t->annot_text = NULL;
	t->annot_lines = NULL;
	t->annot_n = 0;
	t->annot = 0;
}

/* The function to show: loc itself, else the hottest loc is inlined into; NULL. */
static const struct ann_func *pick(const struct report_ctx *c, const struct ann_set *s,
				   uint32_t loc)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->fns[i].loc == loc)
			return &s->fns[i];
	for (size_t i = 0; i < s->n; i++)
		if (ann_func_inlines(c, &s->fns[i], NULL, loc))
			return &s->fns[i];
	return NULL;
}

/*
 * The annotation of t->annot_loc as text, made into lines, and the line of
 * its hottest instruction (annot_hot); made again only once more samples came.
 */
void annot_refresh(struct top *t)
{
	uint64_t now = agg_totals(t->agg)->samples;
	if (t->annot_text && t->annot_samples == now)
		return;
	t->annot_samples = now;
	struct report_opts o = { .file = "probe top", .command = "top", .quiet = 1 };
	o.resolve = (struct resolve_opts){ .demangle = 1, .inline_frames = 1, .short_names = 1 };
	struct report_ctx ctx;
	report_ctx_init(&ctx, &o, t->agg, t->res);
	struct ann_set *s = ann_collect(&ctx, t->syms);
	const struct ann_func *fn = pick(&ctx, s, t->annot_loc);
	char *text = NULL;
	size_t len = 0;
	long hot = -1;
	FILE *m = open_memstream(&text, &len);
	if (m && fn) {
		struct ann_print_opts po = { .source = 1 };
		struct ann_view v;
		ann_build(&ctx, t->syms, fn, 0, &v);
		hot = ann_print(&ctx, &v, &po, m);
		ann_view_free(&v);
	} else if (m) {
		fprintf(m, "no samples of %s's own: it has no instructions to show (a caller's "
			"samples are its callees')\n", resolver_loc(t->res, t->annot_loc)->sym);
	}
	if (m)
		fclose(m);
	ann_set_free(s);
	free(t->annot_text);
	free(t->annot_lines);
	t->annot_text = text;
	t->annot_lines = NULL;
	t->annot_n = 0;
	t->annot_hot = 0;
	size_t cap = 0;
	for (char *p = text; p && *p;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		if (hot >= 0 && p - text <= hot)
			t->annot_hot = (int)t->annot_n;
		t->annot_lines = xgrow(t->annot_lines, &cap, t->annot_n + 1, sizeof(char *));
		t->annot_lines[t->annot_n++] = p;
		p = nl ? nl + 1 : p + strlen(p);
	}
}

void annot_open(struct top *t, uint32_t loc)
{
	annot_close(t);
	t->annot = 1;
	t->annot_loc = loc;
	annot_refresh(t);
	/* Scrolled to the hottest instruction: the function may be long. */
	t->ascroll = t->annot_hot > 8 ? t->annot_hot - 8 : 0;
}

int annot_key(struct top *t, int ch, int page)
{
	if (ch == 27 || ch == 'a') {
		annot_close(t);
		return 1;
	}
	return scroll_key(ch, page, &t->ascroll, (int)t->annot_n);
}
