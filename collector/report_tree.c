/*
 * report_tree.c - the call tree: from the outermost frames (e.g. _start)
 * down to the leaves, callers above callees, indented two spaces a level.
 *
 * Siblings with the same function are one node; each node shows its Total%
 * (samples at or below it) and Self% (samples where it is the leaf).
 * Children are ordered by Total; nodes under the percent limit (default
 * 0.5) are left out with everything below them.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "report_fmt.h"
#include "util.h"

#define TREE_DEFAULT_LIMIT 0.5

struct tnode {
	uint32_t loc, parent;
	uint32_t first_child, next_sibling;     /* 0: none (0 is the root) */
	uint32_t nchildren;
	uint64_t total, self;
};

struct tkey {
	uint32_t parent, loc;
};
struct tindex {
	struct tkey key;
	uint32_t node;
	UT_hash_handle hh;
};

struct tree {
	struct tnode *nodes;
	size_t n, cap;
	struct tindex *index;
};

static uint32_t child(struct tree *t, uint32_t parent, uint32_t loc)
{
	struct tkey key = { parent, loc };
	struct tindex *e;
	HASH_FIND(hh, t->index, &key, sizeof(key), e);
	if (e)
		return e->node;
	t->nodes = xgrow(t->nodes, &t->cap, t->n + 1, sizeof(*t->nodes));
	uint32_t id = (uint32_t)t->n++;
	struct tnode *nd = &t->nodes[id];
	memset(nd, 0, sizeof(*nd));
	nd->loc = loc;
	nd->parent = parent;
	nd->next_sibling = t->nodes[parent].first_child;
	t->nodes[parent].first_child = id;
	t->nodes[parent].nchildren++;
	e = xcalloc(1, sizeof(*e));
	e->key = key;
	e->node = id;
	HASH_ADD(hh, t->index, key, sizeof(e->key), e);
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

static void print_node(struct printer *p, uint32_t id, int depth)
{
	const struct tnode *nd = &p->t->nodes[id];
	if (id != 0) {
		const struct loc *l = resolver_loc(p->c->res, nd->loc);
		fprintf(p->out, "%8.2f%% %8.2f%%  %*s%s  [%s]\n", report_pct(p->c, nd->total),
			report_pct(p->c, nd->self), 2 * depth, "", l->sym, l->dso);
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

	uint32_t *locs = xmalloc(PROBE_MAX_FRAMES * sizeof(*locs));
	const struct agg_count *counts = agg_counts(c->agg);
	for (size_t i = 0; i < agg_ncounts(c->agg); i++) {
		const struct agg_count *k = &counts[i];
		uint64_t amount = report_amount(c, k);
		uint32_t n = resolve_stack(c->res, k->image, k->stack, locs);
		uint32_t node = 0;
		t.nodes[0].total = sat_add(t.nodes[0].total, amount);
		for (uint32_t f = n; f-- > 0;) {
			node = child(&t, node, locs[f]);
			t.nodes[node].total = sat_add(t.nodes[node].total, amount);
		}
		if (node)
			t.nodes[node].self = sat_add(t.nodes[node].self, amount);
	}
	free(locs);

	report_header(c, out);
	fprintf(out, "#%8s %9s  %s\n", "Total", "Self", "Call tree (callers -> callees)");
	if (agg_totals(c->agg)->samples == 0)
		fprintf(out, "# no samples\n");
	struct printer p = { c, &t,
		c->opts->percent_limit_set ? c->opts->percent_limit : TREE_DEFAULT_LIMIT, out };
	print_node(&p, 0, 0);

	struct tindex *e, *tmp;
	HASH_ITER(hh, t.index, e, tmp) {
		HASH_DEL(t.index, e);
		free(e);
	}
	free(t.nodes);
	return 0;
}
