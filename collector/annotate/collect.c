/*
 * collect.c - the sampled functions of a recording and the addresses in
 * each their samples fell on (annotate.h: ann_collect).
 */
#include "annotate/annotate.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "symbols/kallsyms.h"
#include "util.h"

struct fn_key {
	const void *obj;        /* symobj (ELF), interned name (JIT), NULL (kernel) */
	uint64_t start;         /* bounds' start, or the address (no bounds) */
	uint32_t kind, loc;
};
struct fn_ent {
	struct fn_key key;
	size_t idx;
	UT_hash_handle hh;
};
struct hit_key {
	size_t fn;
	uint64_t addr;
};
struct hit_ent {
	struct hit_key key;
	uint64_t samples, amount;
	UT_hash_handle hh;
};

struct collect {
	const struct report_ctx *c;
	struct symcache *sc;
	struct ann_set *set;
	size_t cap;
	struct fn_ent *fns;
	struct hit_ent *hits;
};

/* The leaf of a stack: its first address not in libprobe; 0 when none or off-CPU. */
static int leaf_of(const struct report_ctx *c, const struct agg_count *k, uint64_t *addr,
		   int *is_return)
{
	uint32_t n;
	const uint64_t *frames = agg_stack(c->agg, k->stack, &n);
	if (n == 0 || frames[0] == AGG_FRAME_OFFCPU || frames[0] == PROBE_FRAME_UNSEEN)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		if (frames[i] == PROBE_FRAME_TRUNCATED)
			return 0;
		int ret = resolve_is_return(frames, i);
		if (resolve_hidden(c->res, k->image, k->gen, frames[i], ret))
			continue;
		*addr = frames[i];
		*is_return = ret;
		return 1;
	}
	return 0;
}

/*
 * What function at (the address looked up) lies in: its kind, the
 * identity of its bounds (key) and the bounds in f.
 */
static void place(struct collect *cl, const struct agg_count *k, uint64_t at,
		  struct fn_key *key, struct ann_func *f)
{
	const struct agg_map *m = agg_find_map(cl->c->agg, k->image, k->gen, at);
	f->start = f->end = at;
	if (!m && at >= RESOLVE_KERNEL_START) {
		const char *mod;
		f->kind = ANN_KERNEL;
		const struct kallsyms *ks = symcache_kallsyms(cl->sc);
		if (ks && kallsyms_lookup_range(ks, at, &mod, &f->start, &f->end))
			f->bounds = "kallsyms";
	} else if (!m) {
		f->kind = ANN_OTHER;
	} else if (m->jit) {
		f->kind = ANN_JIT;
		f->map = m;
		f->start = m->start;
		f->end = m->end;
		f->bounds = "JIT";
		key->obj = resolver_intern(cl->c->res, m->path);
	} else {
		f->kind = ANN_ELF;
		f->map = m;
		f->obj = symcache_get(cl->sc, m->path, m->build_id, m->build_id_len);
		uint64_t v = at - m->bias;
		key->obj = f->obj;
		f->start = f->end = v;
		if (symobj_lookup_range(f->obj, v, &f->start, &f->end))
			f->bounds = "symbol";
		else if (symobj_func_range(f->obj, v, &f->start, &f->end))
			f->bounds = ".eh_frame";
	}
	key->kind = f->kind;
	/* Kernel code kallsyms does not name is one function, "[kernel]". */
	key->start = f->kind == ANN_KERNEL && !f->bounds ? 0 : f->start;
}

static size_t func_index(struct collect *cl, const struct fn_key *key,
			 const struct ann_func *f)
{
	struct fn_ent *e;
	HASH_FIND(hh, cl->fns, key, sizeof(*key), e);
	if (e)
		return e->idx;
	struct ann_set *s = cl->set;
	s->fns = xgrow(s->fns, &cl->cap, s->n + 1, sizeof(*s->fns));
	s->fns[s->n] = *f;
	e = xcalloc(1, sizeof(*e));
	e->key = *key;
	e->idx = s->n++;
	HASH_ADD(hh, cl->fns, key, sizeof(e->key), e);
	return e->idx;
}

static void add_hit(struct collect *cl, size_t fn, uint64_t addr, uint64_t samples,
		    uint64_t amount)
{
	struct hit_key key;
	memset(&key, 0, sizeof(key));
	key.fn = fn;
	key.addr = addr;
	struct hit_ent *h;
	HASH_FIND(hh, cl->hits, &key, sizeof(key), h);
	if (!h) {
		h = xcalloc(1, sizeof(*h));
		h->key = key;
		HASH_ADD(hh, cl->hits, key, sizeof(h->key), h);
	}
	h->samples += samples;
	h->amount += amount;
}

static void collect_count(struct collect *cl, const struct agg_count *k)
{
	uint64_t addr;
	int ret;
	uint64_t amount = report_amount(cl->c, k);
	if ((!k->samples && !amount) || !leaf_of(cl->c, k, &addr, &ret))
		return;
	const struct rframe *fr;
	uint32_t n = resolve_addr(cl->c->res, k->image, k->gen, addr, ret, &fr);
	uint64_t at = ret && addr ? addr - 1 : addr;
	struct fn_key key;
	memset(&key, 0, sizeof(key));
	struct ann_func f = { .loc = fr[n - 1].loc, .image = k->image };
	place(cl, k, at, &key, &f);
	key.loc = f.loc;
	size_t i = func_index(cl, &key, &f);
	struct ann_func *fn = &cl->set->fns[i];
	fn->samples += k->samples;
	fn->amount += amount;
	cl->set->samples += k->samples;
	cl->set->amount += amount;
	for (uint32_t j = 0; j + 1 < n && fn->ninl < ANN_MAX_INLINED; j++) {
		size_t m = 0;
		while (m < fn->ninl && fn->inl[m] != fr[j].loc)
			m++;
		if (m == fn->ninl)
			fn->inl[fn->ninl++] = fr[j].loc;
	}
	uint64_t where = at;
	if (fn->kind == ANN_ELF)
		where = at - fn->map->bias;
	add_hit(cl, i, where, k->samples, amount);
}

static int by_addr(const void *a, const void *b)
{
	const struct ann_hit *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int by_heat(const void *a, const void *b, void *arg)
{
	const struct report_ctx *c = arg;
	const struct ann_func *x = a, *y = b;
	if (x->amount != y->amount)
		return x->amount > y->amount ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return strcmp(resolver_loc(c->res, x->loc)->sym, resolver_loc(c->res, y->loc)->sym);
}

/* Each hit into its function's sorted list; the hash emptied. */
static void settle(struct collect *cl)
{
	struct hit_ent *h, *ht;
	HASH_ITER(hh, cl->hits, h, ht) {
		struct ann_func *f = &cl->set->fns[h->key.fn];
		f->hits = xgrow(f->hits, &f->hits_cap, f->nhits + 1, sizeof(*f->hits));
		f->hits[f->nhits++] = (struct ann_hit){ h->key.addr, h->samples, h->amount };
		HASH_DEL(cl->hits, h);
		free(h);
	}
	struct fn_ent *e, *et;
	HASH_ITER(hh, cl->fns, e, et) {
		HASH_DEL(cl->fns, e);
		free(e);
	}
	for (size_t i = 0; i < cl->set->n; i++) {
		struct ann_func *f = &cl->set->fns[i];
		qsort(f->hits, f->nhits, sizeof(*f->hits), by_addr);
	}
	qsort_r(cl->set->fns, cl->set->n, sizeof(*cl->set->fns), by_heat, (void *)cl->c);
}

struct ann_set *ann_collect(const struct report_ctx *c, struct symcache *sc)
{
	struct collect cl = { .c = c, .sc = sc, .set = xcalloc(1, sizeof(struct ann_set)) };
	const struct agg_count *k = agg_counts(c->agg);
	for (size_t i = 0; i < agg_ncounts(c->agg); i++)
		collect_count(&cl, &k[i]);
	settle(&cl);
	return cl.set;
}

void ann_set_free(struct ann_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->fns[i].hits);
	free(s->fns);
	free(s);
}

int ann_func_matches(const struct report_ctx *c, const struct ann_func *fn,
		     const char *name)
{
	const struct loc *l = resolver_loc(c->res, fn->loc);
	const char *cands[] = { l->sym, l->fn, l->raw };
	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++)
		if (cands[i] && (strcmp(cands[i], name) == 0 ||
				 fnmatch(name, cands[i], 0) == 0))
			return 1;
	return 0;
}

int ann_func_inlines(const struct report_ctx *c, const struct ann_func *fn,
		     const char *name, uint32_t loc)
{
	for (size_t i = 0; i < fn->ninl; i++) {
		const struct loc *l = resolver_loc(c->res, fn->inl[i]);
		if (name ? (strcmp(l->fn, name) == 0 || strcmp(l->raw, name) == 0 ||
			    fnmatch(name, l->fn, 0) == 0) : fn->inl[i] == loc)
			return 1;
	}
	return 0;
}
