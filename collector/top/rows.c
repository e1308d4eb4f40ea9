/*
 * rows.c - probe top's figures: the snapshot taken at each tick, the rows
 * of the chosen grouping, and the call tree of the selected function (see
 * cmd/top.c for how the interval and cumulative figures are kept).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "top/top_state.h"
#include "util.h"

/* ---- the snapshot and the rows -------------------------------------- */

void rows_clear(struct rowset *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		free(rs->v[i].owned);
	rs->n = 0;
	struct rent *e, *tmp;
	HASH_ITER(hh, rs->index, e, tmp) {
		HASH_DEL(rs->index, e);
		free(e);
	}
}

static struct row *rows_get(struct rowset *rs, uint64_t key, int *fresh)
{
	struct rent *e;
	HASH_FIND(hh, rs->index, &key, sizeof(key), e);
	if (e) {
		*fresh = 0;
		return &rs->v[e->idx];
	}
	rs->v = xgrow(rs->v, &rs->cap, rs->n + 1, sizeof(*rs->v));
	struct row *r = &rs->v[rs->n];
	memset(r, 0, sizeof(*r));
	r->key = key;
	e = xcalloc(1, sizeof(*e));
	e->key = key;
	e->idx = rs->n++;
	HASH_ADD(hh, rs->index, key, sizeof(e->key), e);
	*fresh = 1;
	return r;
}

/* Take a snapshot: agg_finish, and each count's cumulative and interval amounts. */
void take_snapshot(struct top *t)
{
	agg_finish(t->agg);
	const struct agg_totals *tot = agg_totals(t->agg);
	/* A saturated total is no total (weights are untrusted): count samples. */
	int by_samples = tot->weight == 0 || tot->weight == UINT64_MAX;
	size_t n = agg_ncounts(t->agg);
	const struct agg_count *k = agg_counts(t->agg);
	free(t->cvec);
	t->cvec = xcalloc(n ? n : 1, sizeof(*t->cvec));
	t->ncvec = n;
	/* Entries not in this snapshot had nothing new: their interval is 0. */
	for (struct cent *c = t->cents; c; c = c->hh.next)
		c->int_a = c->int_s = 0;
	for (size_t i = 0; i < n; i++) {
		struct ckey key = { k[i].image, k[i].gen, k[i].tid, k[i].stack };
		struct cent *c;
		HASH_FIND(hh, t->cents, &key, sizeof(key), c);
		if (!c) {
			c = xcalloc(1, sizeof(*c));
			c->key = key;
			HASH_ADD(hh, t->cents, key, sizeof(c->key), c);
		}
		uint64_t a = by_samples ? k[i].samples : k[i].weight;
		c->int_a = a - c->prev_a;
		c->int_s = k[i].samples - c->prev_s;
		c->prev_a = a;
		c->prev_s = k[i].samples;
		c->cum_a = a - c->base_a;
		c->cum_s = k[i].samples - c->base_s;
		c->live = k[i].inuse_weight;
		t->cvec[i] = c;
	}
	uint64_t now = now_ns();
	double dt = (double)(now - t->last_tick) / 1e9;
	t->rate = dt > 0 ? (double)(t->samples - t->tick_samples) / dt : 0;
	t->tick_samples = t->samples;
	for (unsigned r = 0; r < PROBE_LOST_REASON_MAX; r++) {
		t->int_lost[r] = t->lost[r] - t->tick_lost[r];
		t->tick_lost[r] = t->lost[r];
	}
	t->last_tick = now;
}

void zero_counts(struct top *t)
{
	for (struct cent *c = t->cents; c; c = c->hh.next) {
		c->base_a = c->prev_a;
		c->base_s = c->prev_s;
		c->cum_a = c->cum_s = c->int_a = c->int_s = 0;
	}
}

static int count_wanted(const struct top *t, const struct agg_count *k)
{
	if (!t->focus)
		return 1;
	const struct agg_image *im = agg_image(t->agg, k->image);
	if (!im || im->pid != t->focus_pid)
		return 0;
	return t->focus != G_THREAD || k->tid == t->focus_tid;
}

static int fresh_stamp(struct top *t)
{
	size_t need = resolver_nlocs(t->res) + 1;
	if (need > t->stamp_cap) {
		size_t old = t->stamp_cap;
		t->stamp = xgrow(t->stamp, &t->stamp_cap, need, sizeof(*t->stamp));
		memset(t->stamp + old, 0, (t->stamp_cap - old) * sizeof(*t->stamp));
	}
	if (++t->stamp_gen == 0) {
		memset(t->stamp, 0, t->stamp_cap * sizeof(*t->stamp));
		t->stamp_gen = 1;
	}
	return 0;
}

/* Mark loc seen in this round; 1 if it was not yet. */
static int stamp_once(struct top *t, uint32_t loc)
{
	if (loc >= t->stamp_cap) {
		size_t old = t->stamp_cap;
		t->stamp = xgrow(t->stamp, &t->stamp_cap, (size_t)loc + 1, sizeof(*t->stamp));
		memset(t->stamp + old, 0, (t->stamp_cap - old) * sizeof(*t->stamp));
	}
	if (t->stamp[loc] == t->stamp_gen)
		return 0;
	t->stamp[loc] = t->stamp_gen;
	return 1;
}

static int cmp_rows_self(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int cmp_rows_total(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int cmp_rows_name(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	int c = strcmp(a->name, b->name);
	if (c)
		return c;
	return cmp_rows_self(x, y);
}

static void sort_rows(struct rowset *rs, enum sortk s)
{
	if (!rs->n)
		return;
	qsort(rs->v, rs->n, sizeof(*rs->v),
	      s == S_TOTAL ? cmp_rows_total : s == S_NAME ? cmp_rows_name : cmp_rows_self);
	/* The index is stale after sorting; it is only used while building. */
	struct rent *e, *tmp;
	HASH_ITER(hh, rs->index, e, tmp) {
		HASH_DEL(rs->index, e);
		free(e);
	}
}

static int name_matches(const struct top *t, const char *name)
{
	return !t->filter[0] || strcasestr(name, t->filter) != NULL;
}

/*
 * The name of a process: its latest image's, as the header says (an exec
 * renames it); the image's own for one top has not seen say HELLO.
 */
const char *proc_name(const struct top *t, uint32_t pid, uint32_t image)
{
	struct pent *p;
	HASH_FIND(hh, t->procs, &pid, sizeof(pid), p);
	if (p && p->have_image)
		return p->name;
	const struct agg_image *im = agg_image(t->agg, image);
	return im ? im->name : p ? p->name : "?";
}

/*
 * A thread's name: what its process's latest image calls it (after an
 * exec, the main thread is the new program's), else what the latest image
 * it was sampled in did (a thread that ended before the exec).
 */
static char *thread_name(const struct top *t, uint32_t pid, uint32_t tid, uint32_t image)
{
	struct pent *p;
	HASH_FIND(hh, t->procs, &pid, sizeof(pid), p);
	const char *tn = p && p->have_image ? agg_thread_name(t->agg, p->image, tid) : NULL;
	if (!tn || !*tn)
		tn = agg_thread_name(t->agg, image, tid);
	return tn && *tn ? xstrdup(tn) : xasprintf("[tid %u]", tid);
}

/* "NAME (PID/TID)" or "NAME[PID]" of the focus, named as its rows are now. */
char *focus_label(const struct top *t)
{
	const char *pn = proc_name(t, t->focus_pid, t->focus_image);
	if (t->focus != G_THREAD)
		return xasprintf("%s[%u]", pn, t->focus_pid);
	char *tn = thread_name(t, t->focus_pid, t->focus_tid, t->focus_image);
	char *s = xasprintf("%s (%u/%u)", tn, t->focus_pid, t->focus_tid);
	free(tn);
	return s;
}

/* Thread and process rows are named once their counts are in (names follow exec). */
static void name_rows(struct top *t)
{
	if (t->group != G_THREAD && t->group != G_PROC)
		return;
	for (size_t i = 0; i < t->rows.n; i++) {
		struct row *r = &t->rows.v[i];
		const char *pn = proc_name(t, r->pid, r->image);
		if (t->group == G_THREAD) {
			r->owned = thread_name(t, r->pid, r->tid, r->image);
			r->module = resolver_intern(t->res, pn);
		} else {
			r->owned = xstrdup(pn);
			r->module = "";
		}
		r->name = r->owned;
	}
}

/* Rows of the current grouping, from the snapshot. */
void compute_rows(struct top *t)
{
	const struct agg_count *k = agg_counts(t->agg);
	struct rowset *rs = &t->rows;
	/* The selection follows its row, not its position. */
	int had_sel = t->sel >= 0 && t->sel < (int)rs->n;
	uint64_t sel_key = had_sel ? rs->v[t->sel].key : 0;
	rows_clear(rs);
	t->total = 0;
	for (size_t i = 0; i < t->ncvec; i++) {
		if (!count_wanted(t, &k[i]))
			continue;
		const struct cent *c = t->cvec[i];
		uint64_t amount = t->interval ? c->int_a : c->cum_a;
		uint64_t samples = t->interval ? c->int_s : c->cum_s;
		if (!amount && !samples)
			continue;
		t->total = sat_add(t->total, amount);
		const struct agg_image *im = agg_image(t->agg, k[i].image);
		int fresh;
		struct row *r;
		if (t->group == G_THREAD || t->group == G_PROC) {
			uint64_t key = t->group == G_THREAD ? (uint64_t)im->pid << 32 | k[i].tid
							    : im->pid;
			r = rows_get(rs, key, &fresh);
			if (fresh) {
				r->pid = im->pid;
				r->tid = k[i].tid;
				r->image = k[i].image;
			}
			/* Images of a pid are numbered in the order they began. */
			if (k[i].image > r->image)
				r->image = k[i].image;
			r->self = sat_add(r->self, amount);
			r->total = sat_add(r->total, amount);
			r->samples += samples;
			r->live = sat_add(r->live, c->live);
			continue;
		}
		uint32_t nf = resolve_stack(t->res, &k[i], t->frames);
		if (!nf)
			continue;
		fresh_stamp(t);
		for (uint32_t f = 0; f < nf; f++) {
			const struct loc *l = resolver_loc(t->res, t->frames[f].loc);
			uint64_t key;
			uint32_t mark;
			if (t->group == G_FUNC) {
				key = t->frames[f].loc;
				mark = t->frames[f].loc;
			} else {
				key = (uint64_t)(uintptr_t)l->dso;
				/* Modules: mark by the first loc of that module seen;
				 * find it through the row itself. */
				mark = UINT32_MAX;
			}
			r = rows_get(rs, key, &fresh);
			if (fresh) {
				r->name = t->group == G_FUNC ? l->sym : l->dso;
				r->module = t->group == G_FUNC ? l->dso : "";
				r->loc = t->frames[f].loc;
			}
			if (f == 0) {
				r->self = sat_add(r->self, amount);
				r->samples += samples;
				r->live = sat_add(r->live, c->live);
			}
			if (mark == UINT32_MAX) {
				/* A module row is counted once per stack: its first loc's stamp. */
				if (stamp_once(t, r->loc))
					r->total = sat_add(r->total, amount);
			} else if (stamp_once(t, mark)) {
				r->total = sat_add(r->total, amount);
			}
		}
	}
	name_rows(t);
	/* Filter by name, then sort. */
	size_t w = 0;
	for (size_t i = 0; i < rs->n; i++) {
		if (name_matches(t, rs->v[i].name))
			rs->v[w++] = rs->v[i];
		else
			free(rs->v[i].owned);
	}
	rs->n = w;
	sort_rows(rs, t->sort);
	if (had_sel && !t->keep_pos)
		for (size_t i = 0; i < rs->n; i++)
			if (rs->v[i].key == sel_key) {
				t->sel = (int)i;
				break;
			}
	t->keep_pos = 0;
	if (t->sel >= (int)rs->n)
		t->sel = rs->n ? (int)rs->n - 1 : 0;
}


/* The child of parent for loc, made if new. */
static uint32_t ct_child(struct ctree *ct, uint32_t parent, uint32_t loc)
{
	for (uint32_t c = ct->v[parent].first_child; c; c = ct->v[c].next_sibling)
		if (ct->v[c].loc == loc)
			return c;
	ct->v = xgrow(ct->v, &ct->cap, ct->n + 1, sizeof(*ct->v));
	uint32_t c = (uint32_t)ct->n++;
	memset(&ct->v[c], 0, sizeof(ct->v[c]));
	ct->v[c].loc = loc;
	ct->v[c].next_sibling = ct->v[parent].first_child;
	ct->v[parent].first_child = c;
	return c;
}

/* Add one stack's amount to node, once per stack (t->cstamp). */
static void ct_visit(struct ctree *ct, uint32_t node, uint32_t stamp, uint64_t amount,
		     int self)
{
	struct cnode *n = &ct->v[node];
	if (n->stamp == stamp)
		return;
	n->stamp = stamp;
	n->total = sat_add(n->total, amount);
	if (self)
		n->self = sat_add(n->self, amount);
}

static void ct_reset(struct ctree *ct, uint32_t loc)
{
	ct->v = xgrow(ct->v, &ct->cap, 1, sizeof(*ct->v));
	memset(&ct->v[0], 0, sizeof(ct->v[0]));
	ct->v[0].loc = loc;
	ct->n = 1;
}

struct csort {
	uint64_t total;
	const char *name;
	uint32_t node;
};

static int cmp_csort(const void *x, const void *y)
{
	const struct csort *a = x, *b = y;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return strcmp(a->name, b->name);
}

static void tl_add(struct top *t, const struct ctree *ct, uint32_t node, int depth)
{
	t->tl = xgrow(t->tl, &t->tlcap, t->ntl + 1, sizeof(*t->tl));
	t->tl[t->ntl++] = (struct tline){ ct, node, depth };
}

/* Lines for node's children, by total, pruned under 0.5 % of all. */
static void tl_children(struct top *t, const struct ctree *ct, uint32_t node, int depth)
{
	size_t n = 0;
	for (uint32_t c = ct->v[node].first_child; c; c = ct->v[c].next_sibling)
		n++;
	if (!n)
		return;
	struct csort *v = xcalloc(n, sizeof(*v));
	n = 0;
	for (uint32_t c = ct->v[node].first_child; c; c = ct->v[c].next_sibling) {
		if (pct(t, ct->v[c].total) < 0.5)
			continue;
		v[n++] = (struct csort){ ct->v[c].total, resolver_loc(t->res, ct->v[c].loc)->sym, c };
	}
	qsort(v, n, sizeof(*v), cmp_csort);
	for (size_t i = 0; i < n; i++) {
		tl_add(t, ct, v[i].node, depth);
		tl_children(t, ct, v[i].node, depth + 1);
	}
	free(v);
}

/* The call tree of t->tree_loc: its callees below it, then its callers. */
static void compute_tree(struct top *t)
{
	const struct agg_count *k = agg_counts(t->agg);
	ct_reset(&t->down, t->tree_loc);
	ct_reset(&t->up, t->tree_loc);
	t->cstamp = 0;
	uint64_t self = 0, total = 0;
	for (size_t i = 0; i < t->ncvec; i++) {
		if (!count_wanted(t, &k[i]))
			continue;
		const struct cent *c = t->cvec[i];
		uint64_t amount = t->interval ? c->int_a : c->cum_a;
		if (!amount)
			continue;
		uint32_t nf = resolve_stack(t->res, &k[i], t->frames);
		int in = 0;
		for (uint32_t f = 0; f < nf && !in; f++)
			in = t->frames[f].loc == t->tree_loc;
		if (!in)
			continue;
		total = sat_add(total, amount);
		int leaf = t->frames[0].loc == t->tree_loc;
		if (leaf)
			self = sat_add(self, amount);
		uint32_t stamp = ++t->cstamp;
		/* Under recursion, callees from its outermost frame and callers
		 * from its innermost: one path per stack in each tree, which
		 * keeps the recursion (f under f under f) and never counts a
		 * stack twice. */
		uint32_t inner = nf, outer = 0;
		for (uint32_t f = 0; f < nf; f++)
			if (t->frames[f].loc == t->tree_loc) {
				if (inner == nf)
					inner = f;
				outer = f;
			}
		uint32_t node = 0;
		for (uint32_t g = outer; g-- > 0;) {
			node = ct_child(&t->down, node, t->frames[g].loc);
			ct_visit(&t->down, node, stamp, amount, g == 0);
		}
		node = 0;
		for (uint32_t g = inner + 1; g < nf; g++) {
			node = ct_child(&t->up, node, t->frames[g].loc);
			ct_visit(&t->up, node, stamp, amount, leaf);
		}
	}
	t->tree_self = self;
	t->tree_total = total;
	t->down.v[0].total = t->up.v[0].total = total;
	t->down.v[0].self = t->up.v[0].self = self;
	t->ntl = 0;
	tl_add(t, &t->down, 0, 0);
	tl_children(t, &t->down, 0, 1);
	tl_add(t, NULL, 0, 0);
	tl_children(t, &t->up, 0, 1);
}

void recompute(struct top *t)
{
	compute_rows(t);
	if (t->tree)
		compute_tree(t);
}

