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

/* The annotation of t->annot_loc as text, made into lines. */
void annot_refresh(struct top *t)
{
	struct report_opts o = { .file = "probe top", .command = "top", .quiet = 1 };
	o.resolve = (struct resolve_opts){ .demangle = 1, .inline_frames = 1, .short_names = 1 };
	struct report_ctx ctx;
	report_ctx_init(&ctx, &o, t->agg, t->res);
	struct ann_set *s = ann_collect(&ctx, t->syms);
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	int found = 0;
	struct ann_print_opts po = { .source = 1 };
	/* The function itself; for an inlined one, the hottest it is inlined into. */
	size_t pick = s->n;
	for (size_t i = 0; i < s->n && pick == s->n; i++)
		if (s->fns[i].loc == t->annot_loc)
			pick = i;
	for (size_t i = 0; i < s->n && pick == s->n; i++)
		if (ann_func_inlines(&ctx, &s->fns[i], NULL, t->annot_loc))
			pick = i;
	for (size_t i = pick; m && i < s->n && !found; i++) {
		struct ann_view v;
		ann_build(&ctx, t->syms, &s->fns[i], 0, &v);
		ann_print(&ctx, s, &v, &po, m);
		ann_view_free(&v);
		found = 1;
	}
	if (m && !found)
		fprintf(m, "no samples of %s's own: it has no instructions to show (a caller's "
			"samples are its callees')\n", resolver_loc(t->res, t->annot_loc)->sym);
	if (m)
		fclose(m);
	ann_set_free(s);
	free(t->annot_text);
	free(t->annot_lines);
	t->annot_text = text;
	t->annot_lines = NULL;
	t->annot_n = 0;
	size_t cap = 0;
	for (char *p = text; p && *p;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		t->annot_lines = xgrow(t->annot_lines, &cap, t->annot_n + 1, sizeof(char *));
		t->annot_lines[t->annot_n++] = p;
		p = nl ? nl + 1 : p + strlen(p);
	}
}

void annot_open(struct top *t, uint32_t loc)
{
	t->annot = 1;
	t->annot_loc = loc;
	t->ascroll = 0;
	/* Scrolled to the hottest instruction: the function may be long. */
	annot_refresh(t);
	double best = 0;
	for (size_t i = 0; i < t->annot_n && !strstr(t->annot_lines[i], "hottest source lines"); i++) {
		char *end;
		double v = strtod(t->annot_lines[i], &end);
		if (end != t->annot_lines[i] && strstr(end, ":  ") && v > best && i > 4) {
			best = v;
			t->ascroll = (int)i;
		}
	}
	t->ascroll = t->ascroll > 8 ? t->ascroll - 8 : 0;
}

int annot_key(struct top *t, int ch, int page)
{
	switch (ch) {
	case KEY_UP:
	case 'k':
		t->ascroll--;
		break;
	case KEY_DOWN:
	case 'j':
		t->ascroll++;
		break;
	case KEY_PPAGE:
		t->ascroll -= page;
		break;
	case KEY_NPAGE:
		t->ascroll += page;
		break;
	case KEY_HOME:
		t->ascroll = 0;
		break;
	case KEY_END:
		t->ascroll = (int)t->annot_n;
		break;
	case 27:
	case 'a':
		annot_close(t);
		return 1;
	default:
		return 0;
	}
	if (t->ascroll >= (int)t->annot_n)
		t->ascroll = (int)t->annot_n - 1;
	if (t->ascroll < 0)
		t->ascroll = 0;
	return 1;
}
