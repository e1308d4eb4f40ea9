/*
 * report_text.c - the flat profile (perf report --stdio style): one row per
 * distinct value of the --sort keys, with Self%, Total%, self samples.
 *
 * Self is credited to the key of the leaf frame; Total to every distinct key
 * on the stack, once per stack (recursion does not count twice).  Keys that
 * do not depend on the frame (pid, tid, comm, exe) give Self = Total.
 * Rows sort by Self, then Total, then their text (--children: by Total
 * first); --percent-limit hides the rows under it in the column they sort
 * by, so a terminal's first screen is the top of that column.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "format/format.h"
#include "util.h"

struct row_key {
	uint64_t v[REPORT_MAX_KEYS];
};

struct row {
	struct row_key key;
	uint64_t self, total, self_samples;
	uint64_t mark;          /* last stack that added to total */
	uint32_t image, tid, loc;       /* a representative, for display */
	const char *line;
	char *cols[REPORT_MAX_KEYS];
	UT_hash_handle hh;
};

struct text {
	const struct report_ctx *c;
	struct row *rows;
	int frame_keys;         /* any key depends on the frame (sym, dso, srcline) */
	int loc_keys;           /* every key depends on the location alone (sym, dso) */
	struct row **by_loc;    /* loc_keys: the row of each location, or NULL */
	size_t by_loc_cap;
};


/* A frame's source line, or "[module]" where nothing knows it. */
static const char *srcline_of(const struct report_ctx *c, const struct rframe *f)
{
	if (f->line)
		return f->line;
	const struct loc *l = resolver_loc(c->res, f->loc);
	if (l->dso[0] == '[')
		return l->dso;
	char *s = xasprintf("[%s]", l->dso);
	const char *i = resolver_intern(c->res, s);
	free(s);
	return i;
}

static void make_key(struct text *t, const struct agg_count *k, const struct rframe *f,
		     struct row_key *key)
{
	const struct report_ctx *c = t->c;
	memset(key, 0, sizeof(*key));
	for (int i = 0; i < c->opts->nkeys; i++) {
		uint64_t v = 0;
		switch (c->opts->keys[i]) {
		case KEY_PID:
			v = agg_image(c->agg, k->image)->pid;
			break;
		case KEY_TID:
			/* Per image: an exec'd thread is shown under each name. */
			v = (uint64_t)k->image << 32 | k->tid;
			break;
		case KEY_COMM:
			v = (uintptr_t)resolver_intern(c->res, report_thread_name(c->agg, k->image, k->tid));
			break;
		case KEY_EXE:
			v = (uintptr_t)resolver_intern(c->res, agg_image(c->agg, k->image)->name);
			break;
		case KEY_SYM:
			v = (uintptr_t)resolver_loc(c->res, f->loc)->sym;
			break;
		case KEY_DSO:
			v = (uintptr_t)resolver_loc(c->res, f->loc)->dso_path;
			break;
		case KEY_SRCLINE:
			v = (uintptr_t)srcline_of(c, f);
			break;
		case KEY_COUNT:
			break;
		}
		key->v[i] = v;
	}
}

static struct row *get_row(struct text *t, const struct agg_count *k, const struct rframe *f)
{
	struct row_key key;
	struct row *r;
	/* The default keys (sym, dso): a row per location, found by index. */
	if (t->loc_keys && f->loc < t->by_loc_cap && t->by_loc[f->loc])
		return t->by_loc[f->loc];
	make_key(t, k, f, &key);
	HASH_FIND(hh, t->rows, &key, sizeof(key), r);
	if (!r) {
		r = xcalloc(1, sizeof(*r));
		r->key = key;
		r->image = k->image;
		r->tid = k->tid;
		r->loc = f->loc;
		r->line = f->line;
		HASH_ADD(hh, t->rows, key, sizeof(r->key), r);
	}
	if (t->loc_keys) {
		if (f->loc >= t->by_loc_cap) {
			size_t old = t->by_loc_cap;
			t->by_loc = xgrow(t->by_loc, &t->by_loc_cap, (size_t)f->loc + 1,
					  sizeof(*t->by_loc));
			memset(t->by_loc + old, 0, (t->by_loc_cap - old) * sizeof(*t->by_loc));
		}
		t->by_loc[f->loc] = r;
	}
	return r;
}

/* Digits of an id (pid_max is at most 4194304), as perf prints them. */
#define ID_WIDTH 7

static char *column_text(const struct report_ctx *c, const struct row *r, enum sort_key k)
{
	const struct agg_image *im = agg_image(c->agg, r->image);
	switch (k) {
	/* perf's Pid:Command: the ids right-aligned, so the colons line up. */
	case KEY_PID:
		return xasprintf("%*u:%s", ID_WIDTH, im->pid, im->name);
	case KEY_TID:
		return xasprintf("%*u:%s", ID_WIDTH, r->tid,
				 report_thread_name(c->agg, r->image, r->tid));
	case KEY_COMM:
		return xstrdup(report_thread_name(c->agg, r->image, r->tid));
	case KEY_EXE:
		return xstrdup(im->name);
	case KEY_SYM:
		return xstrdup(resolver_loc(c->res, r->loc)->sym);
	case KEY_DSO:
		return xstrdup(resolver_loc(c->res, r->loc)->dso);
	case KEY_SRCLINE: {
		struct rframe f = { r->loc, r->line };
		return xstrdup(srcline_of(c, &f));
	}
	case KEY_COUNT:
		break;
	}
	return xstrdup("?");
}

static const char *column_header(enum sort_key k)
{
	static const char *const h[KEY_COUNT] = {
		/* The colon above the ids' colons (ID_WIDTH). */
		[KEY_PID] = "    Pid:Command", [KEY_TID] = "    Tid:Command", [KEY_COMM] = "Comm",
		[KEY_EXE] = "Exe", [KEY_SYM] = "Function", [KEY_DSO] = "Module",
		[KEY_SRCLINE] = "Source line",
	};
	return k < KEY_COUNT ? h[k] : "?";
}

static int nkeys_for_sort;
static int sort_by_total;       /* --children: perf's order */

static int cmp_row(const void *x, const void *y)
{
	const struct row *a = *(const struct row *const *)x;
	const struct row *b = *(const struct row *const *)y;
	if (sort_by_total && a->total != b->total)
		return a->total > b->total ? -1 : 1;
	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	if (a->self_samples != b->self_samples)
		return a->self_samples > b->self_samples ? -1 : 1;
	for (int i = 0; i < nkeys_for_sort; i++) {
		int d = strcmp(a->cols[i], b->cols[i]);
		if (d)
			return d;
	}
	return 0;
}

/* Widest text of a column, capped so one long C++ name cannot push it all. */
#define COL_MAX 60

/* Every stack's weight into its rows: self to the leaf's, total to each once. */
static void text_tally(struct text *t)
{
	const struct report_ctx *c = t->c;
	struct rframe *fr = xmalloc(RESOLVE_MAX_FRAMES * sizeof(*fr));
	const struct agg_count *counts = agg_counts(c->agg);
	size_t ncounts = agg_ncounts(c->agg);
	uint64_t pass = 0;
	for (size_t i = 0; i < ncounts; i++) {
		const struct agg_count *k = &counts[i];
		uint64_t amount = report_amount(c, k);
		uint32_t n = 1;
		fr[0] = (struct rframe){ 0, NULL };
		if (t->frame_keys)
			n = resolve_stack(c->res, k, fr);
		if (n == 0)
			continue;
		pass++;
		struct row *leaf = get_row(t, k, &fr[0]);
		leaf->self = sat_add(leaf->self, amount);
		leaf->self_samples += k->samples;
		leaf->total = sat_add(leaf->total, amount);
		leaf->mark = pass;
		struct row *prev = leaf;
		for (uint32_t f = 1; t->frame_keys && f < n; f++) {
			struct row *r = get_row(t, k, &fr[f]);
			if (r == prev)
				continue;       /* direct recursion: same row */
			prev = r;
			if (r->mark == pass)
				continue;
			r->mark = pass;
			r->total = sat_add(r->total, amount);
		}
	}
	free(fr);
}

/* The rows shown, sorted, their columns' text made; *hidden: those under the limit. */
static struct row **text_rows(struct text *t, size_t *shown, size_t *hidden)
{
	const struct report_ctx *c = t->c;
	const struct report_opts *o = c->opts;
	size_t nrows = HASH_COUNT(t->rows);
	struct row **vec = xmalloc((nrows ? nrows : 1) * sizeof(*vec));
	*shown = *hidden = 0;
	for (struct row *r = t->rows; r; r = r->hh.next) {
		/* --no-children: perf lists what has samples of its own. */
		if (o->children < 0 && r->self_samples == 0)
			continue;
		/* The limit is on the column the rows sort by, as perf's is. */
		if (report_pct(c, o->children == 1 ? r->total : r->self) < o->percent_limit) {
			(*hidden)++;
			continue;
		}
		for (int i = 0; i < o->nkeys; i++)
			r->cols[i] = column_text(c, r, o->keys[i]);
		vec[(*shown)++] = r;
	}
	nkeys_for_sort = o->nkeys;
	sort_by_total = o->children == 1;
	qsort(vec, *shown, sizeof(*vec), cmp_row);
	return vec;
}

/* The column titles, as wide as the columns below them. */
static void text_titles(const struct report_ctx *c, const int *width, FILE *out)
{
	const struct report_opts *o = c->opts;
	if (o->children == 1)
		fprintf(out, "#%8s%9s%11s", "Total", "Self", "Samples");
	else if (o->children < 0)
		fprintf(out, "#%8s%11s", "Self", "Samples");
	else
		fprintf(out, "#%8s%9s%11s", "Self", "Total", "Samples");
	for (int i = 0; i < o->nkeys; i++) {
		if (i + 1 < o->nkeys)
			fprintf(out, "  %-*s", width[i], column_header(o->keys[i]));
		else
			fprintf(out, "  %s", column_header(o->keys[i]));
	}
	fputc('\n', out);
	if (agg_totals(c->agg)->samples == 0)
		fprintf(out, "# no samples\n");
}

static void text_row(const struct report_ctx *c, const struct row *r, const int *width,
		     FILE *out)
{
	const struct report_opts *o = c->opts;
	if (o->children == 1)
		fprintf(out, "%8.2f%%%8.2f%%%11" PRIu64, report_pct(c, r->total),
			report_pct(c, r->self), r->self_samples);
	else if (o->children < 0)
		fprintf(out, "%8.2f%%%11" PRIu64, report_pct(c, r->self), r->self_samples);
	else
		fprintf(out, "%8.2f%%%8.2f%%%11" PRIu64, report_pct(c, r->self),
			report_pct(c, r->total), r->self_samples);
	for (int i = 0; i < o->nkeys; i++) {
		if (i + 1 < o->nkeys)
			fprintf(out, "  %-*s", width[i], r->cols[i]);
		else
			fprintf(out, "  %s", r->cols[i]);
	}
	fputc('\n', out);
}

int report_text(const struct report_ctx *c, FILE *out)
{
	const struct report_opts *o = c->opts;
	struct text t = { .c = c };
	for (int i = 0; i < o->nkeys; i++)
		if (o->keys[i] == KEY_SYM || o->keys[i] == KEY_DSO || o->keys[i] == KEY_SRCLINE)
			t.frame_keys = 1;
	t.loc_keys = 1;
	for (int i = 0; i < o->nkeys; i++)
		if (o->keys[i] != KEY_SYM && o->keys[i] != KEY_DSO)
			t.loc_keys = 0;
	text_tally(&t);
	size_t shown, hidden;
	struct row **vec = text_rows(&t, &shown, &hidden);

	int width[REPORT_MAX_KEYS];
	for (int i = 0; i < o->nkeys; i++) {
		width[i] = (int)strlen(column_header(o->keys[i]));
		for (size_t j = 0; j < shown; j++) {
			size_t l = strlen(vec[j]->cols[i]);
			if (l > COL_MAX)
				l = COL_MAX;
			if ((int)l > width[i])
				width[i] = (int)l;
		}
	}
	report_header(c, out);
	if (!o->quiet)
		text_titles(c, width, out);
	for (size_t j = 0; j < shown; j++)
		text_row(c, vec[j], width, out);
	if (o->tty_limit && hidden && !o->quiet)
		fprintf(out, "# %zu row%s under %g %% hidden (%s, on a terminal; --percent-limit 0 "
			"shows every row)\n", hidden, hidden == 1 ? "" : "s", o->percent_limit,
			o->children == 1 ? "Total" : "Self");
	free(vec);

	free(t.by_loc);
	struct row *r, *tmp;
	HASH_ITER(hh, t.rows, r, tmp) {
		HASH_DEL(t.rows, r);
		for (int i = 0; i < o->nkeys; i++)
			free(r->cols[i]);
		free(r);
	}
	return 0;
}
