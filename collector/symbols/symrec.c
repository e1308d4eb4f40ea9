/* symrec.c - see symrec.h: the names a recording carries, written and read. */
#include "symbols/symrec.h"

#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "probe/wire.h"
#include "symbols/ehframe.h"
#include "symbols/resolve.h"
#include "symbols/symobj.h"
#include "util.h"

/* ---- writing -------------------------------------------------------- */

/* The sampled addresses (ELF addresses) of one object, by build-id. */
struct obj_addrs {
	uint8_t key[1 + PROBE_BUILD_ID_MAX];    /* length, then the build-id */
	const char *path;
	uint64_t *v;
	size_t n, cap;
	UT_hash_handle hh;
};

static void note_addr(struct obj_addrs **objs, const struct agg_map *m, uint64_t vaddr)
{
	uint8_t key[1 + PROBE_BUILD_ID_MAX] = { m->build_id_len };
	memcpy(key + 1, m->build_id, m->build_id_len);
	struct obj_addrs *o;
	HASH_FIND(hh, *objs, key, sizeof(key), o);
	if (!o) {
		o = xcalloc(1, sizeof(*o));
		memcpy(o->key, key, sizeof(key));
		o->path = m->path;
		HASH_ADD(hh, *objs, key, sizeof(o->key), o);
	}
	o->v = xgrow(o->v, &o->cap, o->n + 1, sizeof(*o->v));
	o->v[o->n++] = vaddr;
}

/* Every address of every stack counted, in the object its image mapped there. */
static void collect(const struct agg *a, struct obj_addrs **objs)
{
	const struct agg_count *k = agg_counts(a);
	for (size_t i = 0; i < agg_ncounts(a); i++) {
		uint32_t n;
		const uint64_t *f = agg_stack(a, k[i].stack, &n);
		for (uint32_t j = 0; j < n; j++) {
			uint64_t addr = f[j];
			if (addr == AGG_FRAME_OFFCPU || addr == PROBE_FRAME_UNSEEN ||
			    addr == PROBE_FRAME_TRUNCATED)
				continue;
			uint64_t at = resolve_is_return(f, j) && addr ? addr - 1 : addr;
			const struct agg_map *m = agg_find_map(a, k[i].image, k[i].gen, at);
			if (m && !m->jit && m->build_id_len)
				note_addr(objs, m, at - m->bias);
		}
	}
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

struct func {
	uint64_t start, size;
	uint8_t kind;
	const char *name;
};

static int cmp_func(const void *x, const void *y)
{
	const struct func *a = x, *b = y;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (int)a->kind - (int)b->kind;
}

/* A SYMTAB frame being filled: its entries in body, counted. */
struct out {
	const uint8_t *key;
	const char *path;
	uint32_t pid;
	symrec_emit emit;
	void *arg;
	uint8_t *frame, *body;
	struct probe_wbuf b;
	uint64_t count, prev;
	int addrs;              /* 1: the entries are addresses */
};

#define BODY_MAX (PROBE_FRAME_MAX - PROBE_STR_MAX - PROBE_BUILD_ID_MAX - 64)

static void flush_out(struct out *o)
{
	if (!o->count)
		return;
	struct probe_wbuf w;
	probe_wbuf_init(&w, o->frame, PROBE_FRAME_MAX);
	size_t at = probe_frame_begin(&w, PROBE_F_SYMTAB, o->pid);
	probe_put_u8(&w, o->key[0]);
	probe_put_bytes(&w, o->key + 1, o->key[0]);
	probe_put_str(&w, o->path);
	probe_put_uv(&w, o->addrs ? 0 : o->count);
	if (!o->addrs)
		probe_put_bytes(&w, o->body, o->b.len);
	probe_put_uv(&w, o->addrs ? o->count : 0);
	if (o->addrs)
		probe_put_bytes(&w, o->body, o->b.len);
	probe_frame_end(&w, at);
	if (w.ok)
		o->emit(o->arg, w.p, w.len);
	o->count = 0;
	o->prev = 0;
	probe_wbuf_init(&o->b, o->body, BODY_MAX);
}

/* One entry written by put(o, x) into the body, a new frame when it is full. */
static void entry(struct out *o, void (*put)(struct out *, const void *), const void *x)
{
	size_t len = o->b.len;
	uint64_t prev = o->prev;
	put(o, x);
	if (o->b.ok) {
		o->count++;
		return;
	}
	o->b.len = len;
	o->b.ok = 1;
	o->prev = prev;
	flush_out(o);
	put(o, x);
	o->count += o->b.ok;    /* one entry larger than a frame is left out */
}

static void put_func(struct out *o, const void *x)
{
	const struct func *f = x;
	probe_put_uv(&o->b, f->start - o->prev);
	probe_put_uv(&o->b, f->size);
	probe_put_u8(&o->b, f->kind);
	probe_put_str(&o->b, f->name);
	o->prev = f->start;
}

struct addr_src {
	uint64_t vaddr;
	size_t n;
	const struct src_frame *sf;
};

static void put_addr(struct out *o, const void *x)
{
	const struct addr_src *a = x;
	probe_put_uv(&o->b, a->vaddr - o->prev);
	probe_put_u8(&o->b, a->n);
	for (size_t i = 0; i < a->n; i++) {
		probe_put_str(&o->b, a->sf[i].name ? a->sf[i].name : "");
		probe_put_str(&o->b, a->sf[i].file ? a->sf[i].file : "");
		probe_put_uv(&o->b, a->sf[i].line);
		probe_put_u8(&o->b, a->sf[i].inlined ? 1 : 0);
	}
	o->prev = a->vaddr;
}

/* The functions holding the addresses, sorted, each once. */
static size_t find_funcs(struct symobj *so, const uint64_t *v, size_t n, struct func *fs)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t s, e;
		const char *name = symobj_lookup_range(so, v[i], &s, &e);
		if (name && e > s)
			fs[k++] = (struct func){ s, e - s, PROBE_SYM_FUNC, name };
		else if (symobj_func_range(so, v[i], &s, &e) && e > s)
			fs[k++] = (struct func){ s, e - s, PROBE_SYM_FDE, "" };
	}
	qsort(fs, k, sizeof(*fs), cmp_func);
	size_t w = 0;
	for (size_t i = 0; i < k; i++)
		if (!w || fs[w - 1].start != fs[i].start || fs[w - 1].kind != fs[i].kind)
			fs[w++] = fs[i];
	return w;
}

/* One object's SYMTAB frames; 1 when it had names to write. */
static int write_obj(struct obj_addrs *ob, struct symcache *c, struct out *o)
{
	struct symobj *so = symcache_get(c, ob->path, ob->key + 1, ob->key[0]);
	if (symobj_sources(so) & (SYMSRC_MISMATCH | SYMSRC_RECORDED))
		return 0;
	qsort(ob->v, ob->n, sizeof(*ob->v), cmp_u64);
	size_t n = 0;
	for (size_t i = 0; i < ob->n; i++)
		if (!n || ob->v[n - 1] != ob->v[i])
			ob->v[n++] = ob->v[i];
	struct func *fs = xmalloc(n * sizeof(*fs));
	size_t nf = find_funcs(so, ob->v, n, fs);
	o->key = ob->key;
	o->path = ob->path;
	o->addrs = 0;
	for (size_t i = 0; i < nf; i++)
		entry(o, put_func, &fs[i]);
	flush_out(o);
	free(fs);
	o->addrs = 1;
	size_t named = nf;
	/*
	 * Inline frames and lines only from DWARF the object carries itself
	 * (a program built with -g): a separate debug file (libc's, from its
	 * -dbg package) is found by build-id wherever that package is, and
	 * reading its compressed DWARF cost 50 to 100 ms at the end of every
	 * recording that sampled libc.
	 */
	if (symobj_sources(so) & SYMSRC_DEBUGFILE)
		n = 0;
	for (size_t i = 0; i < n; i++) {
		struct src_frame sf[PROBE_SYM_SRC_MAX];
		struct addr_src as = { ob->v[i], 0, sf };
		as.n = symobj_srcframes(so, ob->v[i], sf, PROBE_SYM_SRC_MAX);
		if (as.n) {
			entry(o, put_addr, &as);
			named++;
		}
	}
	flush_out(o);
	return named != 0;
}

size_t symrec_write(const struct agg *a, struct symcache *c, uint32_t pid,
		    symrec_emit emit, void *arg)
{
	struct obj_addrs *objs = NULL, *ob, *t;
	collect(a, &objs);
	struct out o = { .pid = pid, .emit = emit, .arg = arg };
	o.frame = xmalloc(PROBE_FRAME_MAX);
	o.body = xmalloc(BODY_MAX);
	probe_wbuf_init(&o.b, o.body, BODY_MAX);
	size_t named = 0;
	HASH_ITER(hh, objs, ob, t) {
		named += (size_t)write_obj(ob, c, &o);
		HASH_DEL(objs, ob);
		free(ob->v);
		free(ob);
	}
	free(o.frame);
	free(o.body);
	return named;
}

/* ---- reading -------------------------------------------------------- */

void symcache_add_recorded(struct symcache *c, const struct agg *a)
{
	if (!agg_nsymtabs(a))
		return;
	for (size_t i = 0; i < c->nrecs; i++)
		if (c->recs[i] == a)
			return;
	c->recs = xgrow(c->recs, &c->recs_cap, c->nrecs + 1, sizeof(*c->recs));
	c->recs[c->nrecs++] = a;
}

void symcache_drop_recorded(struct symcache *c, const struct agg *a)
{
	for (size_t i = 0; i < c->nrecs; i++)
		if (c->recs[i] == a) {
			c->recs[i] = c->recs[--c->nrecs];
			return;
		}
}

/* A string of a SYMTAB in o's arena, or NULL for none. */
static const char *dup_span(struct symobj *o, const char *s, size_t n)
{
	return s ? sym_arena_dup(o, s, n) : NULL;
}

static void fill_funcs(struct symobj *o, const struct probe_msg *m, size_t *fcap)
{
	struct probe_symtab_walk w;
	struct probe_symfunc f;
	probe_symtab_funcs(m, &w);
	while (probe_symtab_next_func(&w, &f)) {
		if (f.kind == PROBE_SYM_FUNC && f.name) {
			sym_add(o, f.start, f.size, dup_span(o, f.name, f.name_len));
		} else if (f.kind == PROBE_SYM_FDE) {
			o->fdes = xgrow(o->fdes, fcap, o->nfdes + 1, sizeof(*o->fdes));
			o->fdes[o->nfdes++] = (struct ehf_range){ f.start, f.start + f.size };
		}
	}
}

static void fill_addrs(struct symobj *o, const struct probe_msg *m, size_t *acap)
{
	struct probe_symtab_walk w;
	struct probe_symaddr *ad = xmalloc(sizeof(*ad));
	probe_symtab_addrs(m, &w);
	while (probe_symtab_next_addr(&w, ad)) {
		o->raddrs = xgrow(o->raddrs, acap, o->nraddrs + 1, sizeof(*o->raddrs));
		o->raddrs[o->nraddrs++] = (struct rec_addr){ ad->vaddr, (uint32_t)o->nrsrcs,
							     ad->nsrc };
		o->rsrcs = xgrow(o->rsrcs, &o->rsrcs_cap, o->nrsrcs + ad->nsrc,
				 sizeof(*o->rsrcs));
		for (unsigned i = 0; i < ad->nsrc; i++) {
			const struct probe_symsrc *s = &ad->src[i];
			o->rsrcs[o->nrsrcs++] = (struct src_frame){
				dup_span(o, s->name, s->name_len),
				dup_span(o, s->file, s->file_len),
				(unsigned)s->line, s->inlined };
		}
	}
	free(ad);
}

static int cmp_fde(const void *x, const void *y)
{
	const struct ehf_range *a = x, *b = y;
	return a->start < b->start ? -1 : a->start > b->start;
}

static int cmp_raddr(const void *x, const void *y)
{
	const struct rec_addr *a = x, *b = y;
	return a->vaddr < b->vaddr ? -1 : a->vaddr > b->vaddr;
}

int symrec_fill(const struct symcache *c, struct symobj *o, const uint8_t *bid,
		size_t bidlen)
{
	int found = 0;
	size_t fcap = 0, acap = 0;
	for (size_t r = 0; r < c->nrecs && bidlen; r++) {
		for (size_t i = 0; i < agg_nsymtabs(c->recs[r]); i++) {
			const struct probe_msg *m = agg_symtab(c->recs[r], i);
			if (m->u.symtab.build_id_len != bidlen ||
			    memcmp(m->u.symtab.build_id, bid, bidlen) != 0)
				continue;
			fill_funcs(o, m, &fcap);
			fill_addrs(o, m, &acap);
			found = 1;
		}
		if (found)
			break;          /* one recording's names are all of them */
	}
	if (o->nfdes)
		qsort(o->fdes, o->nfdes, sizeof(*o->fdes), cmp_fde);
	if (o->nraddrs)
		qsort(o->raddrs, o->nraddrs, sizeof(*o->raddrs), cmp_raddr);
	return found;
}

size_t symrec_srcframes(const struct symobj *o, uint64_t vaddr, struct src_frame *out,
			size_t max)
{
	size_t lo = 0, hi = o->nraddrs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->raddrs[mid].vaddr < vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == o->nraddrs || o->raddrs[lo].vaddr != vaddr || !max)
		return 0;
	const struct rec_addr *a = &o->raddrs[lo];
	size_t n = a->n < max ? a->n : max;
	for (size_t i = 0; i + 1 < n; i++)
		out[i] = o->rsrcs[a->first + i];
	/* Cut short, the containing function still comes last. */
	out[n - 1] = o->rsrcs[a->first + a->n - 1];
	return n;
}
