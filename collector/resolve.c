/* resolve.c - see resolve.h. */
#include "resolve.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "strpool.h"
#include "util.h"

struct addr_key {
	uint64_t addr;
	uint32_t image, is_return;
};
struct addr_ent {
	struct addr_key key;
	uint32_t loc;
	UT_hash_handle hh;
};

struct loc_key {
	const char *sym, *dso_path;
};
struct loc_ent {
	struct loc_key key;
	uint32_t id;
	UT_hash_handle hh;
};

struct resolver {
	const struct agg *agg;
	struct symcache *syms;
	struct strpool *pool;
	struct addr_ent *addrs;
	struct loc_ent *loc_index;
	struct loc *locs;
	size_t nlocs, locs_cap;
};

struct resolver *resolver_new(const struct agg *a, struct symcache *c)
{
	struct resolver *r = xcalloc(1, sizeof(*r));
	r->agg = a;
	r->syms = c;
	r->pool = strpool_new();
	return r;
}

void resolver_free(struct resolver *r)
{
	if (!r)
		return;
	struct addr_ent *a, *at;
	HASH_ITER(hh, r->addrs, a, at) {
		HASH_DEL(r->addrs, a);
		free(a);
	}
	struct loc_ent *l, *lt;
	HASH_ITER(hh, r->loc_index, l, lt) {
		HASH_DEL(r->loc_index, l);
		free(l);
	}
	free(r->locs);
	strpool_free(r->pool);
	free(r);
}

const char *resolver_intern(struct resolver *r, const char *s)
{
	return strpool_intern(r->pool, s);
}

static const char *intern_printable(struct resolver *r, const char *s)
{
	char *p = printable_dup(s);
	const char *i = strpool_intern(r->pool, p);
	free(p);
	return i;
}

static uint32_t intern_loc(struct resolver *r, const char *sym, const char *dso,
			   const char *dso_path, int named)
{
	struct loc_key key = { sym, dso_path };
	struct loc_ent *e;
	HASH_FIND(hh, r->loc_index, &key, sizeof(key), e);
	if (e)
		return e->id;
	r->locs = xgrow(r->locs, &r->locs_cap, r->nlocs + 1, sizeof(*r->locs));
	r->locs[r->nlocs] = (struct loc){ sym, dso, dso_path, named };
	e = xcalloc(1, sizeof(*e));
	e->key = key;
	e->id = (uint32_t)r->nlocs++;
	HASH_ADD(hh, r->loc_index, key, sizeof(e->key), e);
	return e->id;
}

static uint32_t lookup(struct resolver *r, uint32_t image, uint64_t addr, int is_return)
{
	/* Inside the call instruction, not at the one after it. */
	uint64_t at = is_return && addr > 0 ? addr - 1 : addr;
	const struct agg_map *m = agg_find_map(r->agg, image, at);
	if (!m) {
		char buf[64];
		snprintf(buf, sizeof(buf), "[unknown]+0x%" PRIx64, addr);
		const char *unk = strpool_intern(r->pool, "[unknown]");
		return intern_loc(r, strpool_intern(r->pool, buf), unk, unk, 0);
	}
	const char *path = intern_printable(r, m->path);
	const char *mod = strpool_intern(r->pool, path_basename(path));
	struct symobj *o = symcache_get(r->syms, m->path, m->build_id, m->build_id_len);
	const char *name = symobj_lookup(o, at - m->bias);
	if (name) {
		char *dem = probe_demangle(name);
		const char *sym = intern_printable(r, dem ? dem : name);
		free(dem);
		return intern_loc(r, sym, mod, path, 1);
	}
	char *s = xasprintf("%s+0x%" PRIx64, mod, addr - m->bias);
	const char *sym = strpool_intern(r->pool, s);
	free(s);
	return intern_loc(r, sym, mod, path, 0);
}

uint32_t resolve_frame(struct resolver *r, uint32_t image, uint64_t addr, int is_return)
{
	struct addr_key key = { addr, image, is_return ? 1u : 0u };
	struct addr_ent *e;
	HASH_FIND(hh, r->addrs, &key, sizeof(key), e);
	if (e)
		return e->loc;
	uint32_t loc = lookup(r, image, addr, is_return);
	e = xcalloc(1, sizeof(*e));
	e->key = key;
	e->loc = loc;
	HASH_ADD(hh, r->addrs, key, sizeof(e->key), e);
	return loc;
}

uint32_t resolve_stack(struct resolver *r, uint32_t image, uint32_t stack, uint32_t *out)
{
	uint32_t n;
	const uint64_t *frames = agg_stack(r->agg, stack, &n);
	if (n > PROBE_MAX_FRAMES)
		n = PROBE_MAX_FRAMES;
	for (uint32_t i = 0; i < n; i++)
		out[i] = resolve_frame(r, image, frames[i], i > 0);
	return n;
}

const struct loc *resolver_loc(const struct resolver *r, uint32_t id)
{
	return id < r->nlocs ? &r->locs[id] : NULL;
}

size_t resolver_nlocs(const struct resolver *r)
{
	return r->nlocs;
}
