/*
 * report_tree.c - the call tree: from the outermost frames (e.g. _start)
 * down to the leaves, callers above callees, indented two spaces a level.
 *
 * Siblings with the same function are one node; each node shows its Total%
 * (samples at or below it) and Self% (samples where it is the leaf), and
 * where DWARF has lines, the source line that carries most of its weight
 * (for a caller, the line of its hottest call here; for a leaf, its
 * hottest line).
 * Children are ordered by Total; nodes under the percent limit (default
 * 0.5) are left out with everything below them.
 * The module follows in brackets, as perf writes it: one already
 * bracketed ([kernel.kallsyms], [vdso]) is not wrapped again.  With
 * opts.columns (a terminal's width) each line is cut to it, ".." at the
 * cut: a deep tree stays one line per node.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "format/format.h"
#include "util.h"

#define TREE_DEFAULT_LIMIT 0.5

#define NODE_LINES 2

struct tnode {
	uint32_t loc, parent;
	uint32_t first_child, next_sibling;     /* 0: none (0 is the root) */
	uint32_t nchildren;
	uint64_t total, self;
	const char *line;       /* the heaviest line, or NULL */
	uint64_t line_amount;
	const char *lines[NODE_LINES];  /* the first lines seen, and their weight */
	uint64_t lamount[NODE_LINES];
};

struct lkey {
	const char *line;
	uint32_t node;
};
struct lent {                   /* (node, line) -> weight, past NODE_LINES */
	struct lkey key;
	uint64_t amount;
	UT_hash_handle hh;
};

/* (parent, loc) -> child, open addressing; node 0 (the root) marks a free slot. */
struct tslot {
	uint64_t key;
	uint32_t node;
};

struct tree {
	struct tnode *nodes;
	size_t n, cap;
	struct tslot *index;
	size_t index_mask;
	struct lent *lines;
};

static void add_line(struct tree *t, uint32_t node, const char *line, uint64_t amount)
{
	if (!line)
		return;
	struct tnode *nd = &t->nodes[node];
	uint64_t *amt = NULL;
	for (int i = 0; i < NODE_LINES && !amt; i++) {
		if (nd->lines[i] == line) {
			amt = &nd->lamount[i];
		} else if (!nd->lines[i]) {
			nd->lines[i] = line;
			amt = &nd->lamount[i];
		}
	}
	if (!amt) {
		struct lkey key;
		memset(&key, 0, sizeof(key));
		key.line = line;
		key.node = node;
		struct lent *e;
		HASH_FIND(hh, t->lines, &key, sizeof(key), e);
		if (!e) {
			e = xcalloc(1, sizeof(*e));
			e->key = key;
			HASH_ADD(hh, t->lines, key, sizeof(e->key), e);
		}
		amt = &e->amount;
	}
	*amt = sat_add(*amt, amount);
	/* Ties go to the earlier line in byte order: deterministic output. */
	if (*amt > nd->line_amount ||
	    (*amt == nd->line_amount && nd->line && strcmp(line, nd->line) < 0)) {
		nd->line = line;
		nd->line_amount = *amt;
	}
}

static void index_grow(struct tree *t)
{
	size_t ncap = t->index ? 2 * (t->index_mask + 1) : 4096;
	struct tslot *n = xcalloc(ncap, sizeof(*n));
	for (size_t i = 0; t->index && i <= t->index_mask; i++) {
		if (!t->index[i].node)
			continue;
		size_t j = probe_hash_mix(t->index[i].key) & (ncap - 1);
		while (n[j].node)
			j = (j + 1) & (ncap - 1);
		n[j] = t->index[i];
	}
	free(t->index);
	t->index = n;
	t->index_mask = ncap - 1;
}

static uint32_t child(struct tree *t, uint32_t parent, uint32_t loc)
{
	if (!t->index || 2 * t->n > t->index_mask + 1)
		index_grow(t);
	uint64_t key = (uint64_t)parent << 32 | loc;
	size_t j = probe_hash_mix(key) & t->index_mask;
	for (; t->index[j].node; j = (j + 1) & t->index_mask)
		if (t->index[j].key == key)
			return t->index[j].node;
	t->nodes = xgrow(t->nodes, &t->cap, t->n + 1, sizeof(*t->nodes));
	uint32_t id = (uint32_t)t->n++;
	struct tnode *nd = &t->nodes[id];
	memset(nd, 0, sizeof(*nd));
	nd->loc = loc;
	nd->parent = parent;
	nd->next_sibling = t->nodes[parent].first_child;
	t->nodes[parent].first_child = id;
	t->nodes[parent].nchildren++;
	t->index[j].key = key;
	t->index[j].node = id;
	return id;
}

struct printer {
	const struct report_ctx *c;
	struct tree *t;
	double limit;
	FILE *out;
};

static const struct tnode *sort_nodes;
static const struct resolver *sort_res;

static int cmp_child(const void *x, const void *y)
{
	const struct tnode *a = &sort_nodes[*(const uint32_t *)x];
	const struct tnode *b = &sort_nodes[*(const uint32_t *)y];
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return strcmp(resolver_loc(sort_res, a->loc)->sym, resolver_loc(sort_res, b->loc)->sym);
}

/* The marker at the end of a line cut to the terminal's width. */
#define CUT_MARK ".."

/*
 * s and a newline, cut to cols columns (0: whole) with CUT_MARK in its
 * last ones.  A column is a character: UTF-8 continuation bytes take
 * none, and a character is never cut in two.
 */
static void put_line(FILE *out, const char *s, unsigned cols)
{
	size_t n = 0, cut = 0;
	unsigned used = 0, keep = cols > strlen(CUT_MARK) ? cols - (unsigned)strlen(CUT_MARK) : 0;
	for (; s[n]; n++) {
		if (((unsigned char)s[n] & 0xc0) == 0x80)
			continue;
		if (used == keep)
			cut = n;
		used++;
	}
	if (!cols || used <= cols) {
		fprintf(out, "%s\n", s);
		return;
	}
	fprintf(out, "%.*s%s\n", (int)cut, s, CUT_MARK);
}

static void print_node(struct printer *p, uint32_t id, int depth)
{
	const struct tnode *nd = &p->t->nodes[id];
	if (id != 0) {
		const struct loc *l = resolver_loc(p->c->res, nd->loc);
		int bracketed = l->dso[0] == '[';
		char *s = xasprintf("%8.2f%% %8.2f%%  %*s%s%s%s  %s%s%s",
				    report_pct(p->c, nd->total), report_pct(p->c, nd->self),
				    2 * depth, "", l->sym, nd->line ? "  " : "",
				    nd->line ? nd->line : "", bracketed ? "" : "[", l->dso,
				    bracketed ? "" : "]");
		put_line(p->out, s, p->c->opts->columns);
		free(s);
	}
	if (!nd->nchildren)
		return;
	uint32_t *kids = xmalloc(nd->nchildren * sizeof(*kids));
	uint32_t k = 0;
	for (uint32_t ch = nd->first_child; ch && k < nd->nchildren; ch = p->t->nodes[ch].next_sibling)
		kids[k++] = ch;
	sort_nodes = p->t->nodes;
	sort_res = p->c->res;
	qsort(kids, k, sizeof(*kids), cmp_child);
	for (uint32_t i = 0; i < k; i++) {
		if (report_pct(p->c, p->t->nodes[kids[i]].total) < p->limit)
			break;  /* sorted by total: the rest are smaller */
		print_node(p, kids[i], id == 0 ? 0 : depth + 1);
	}
	free(kids);
}

int report_tree(const struct report_ctx *c, FILE *out)
{
	struct tree t = { 0 };
	t.nodes = xgrow(NULL, &t.cap, 1, sizeof(*t.nodes));
	memset(&t.nodes[0], 0, sizeof(t.nodes[0]));
	t.n = 1;

	struct rframe *fr = xmalloc(RESOLVE_MAX_FRAMES * sizeof(*fr));
	const struct agg_count *counts = agg_counts(c->agg);
	for (size_t i = 0; i < agg_ncounts(c->agg); i++) {
		const struct agg_count *k = &counts[i];
		uint64_t amount = report_amount(c, k);
		uint32_t n = resolve_stack(c->res, k, fr);
		uint32_t node = 0, first = 0;
		t.nodes[0].total = sat_add(t.nodes[0].total, amount);
		/* Callers first (from the outermost frame), or -g callee: leaf first. */
		for (uint32_t j = 0; j < n; j++) {
			uint32_t f = c->opts->callee ? j : n - 1 - j;
			node = child(&t, node, fr[f].loc);
			t.nodes[node].total = sat_add(t.nodes[node].total, amount);
			add_line(&t, node, fr[f].line, amount);
			if (!first)
				first = node;
		}
		/* Self is the leaf's: the deepest node, or with -g callee the first. */
		if (c->opts->callee)
			node = first;
		if (node)
			t.nodes[node].self = sat_add(t.nodes[node].self, amount);
	}
	free(fr);

	report_header(c, out);
	if (!c->opts->quiet) {
		fprintf(out, "#%8s %9s  %s\n", "Total", "Self", c->opts->callee ?
			"Call tree (callees -> callers: -g callee)" :
			"Call tree (callers -> callees)");
		if (agg_totals(c->agg)->samples == 0)
			fprintf(out, "# no samples\n");
	}
	struct printer p = { c, &t,
		c->opts->percent_limit_set ? c->opts->percent_limit : TREE_DEFAULT_LIMIT, out };
	print_node(&p, 0, 0);

	free(t.index);
	struct lent *le, *ltmp;
	HASH_ITER(hh, t.lines, le, ltmp) {
		HASH_DEL(t.lines, le);
		free(le);
	}
	free(t.nodes);
	return 0;
}
