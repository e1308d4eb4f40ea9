/* resolve.c - see resolve.h. */
#include "symbols/resolve.h"
#include "symbols/symrec.h"
#include "symbols/kallsyms.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "symbols/demangle.h"
#include "hashtab.h"
#include "strpool.h"
#include "util.h"

struct addr_key {
	uint64_t addr;
	uint32_t image, gen, is_return;
};
struct addr_ent {
	struct addr_key key;
	uint32_t first, n;      /* frames in r->frames */
	struct rwhere where;    /* once where_done (resolve_addr_where) */
	int where_done;
	int hidden;             /* in libprobe.so: left out of stacks */
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

/*
 * One file under several names (hard links: /usr/bin/git and
 * /usr/lib/git-core/git) is one module, named by the first name seen:
 * path_ent maps each recorded path to the name it goes by, file_ent each
 * file to that name, by two keys: "I" device and inode (with the build-id
 * recorded: the same file then), and "B" basename and build-id (copies of
 * one file, which a row, named by basename, could not tell apart).
 */
struct path_ent {
	const char *path;       /* interned, as recorded */
	const char *name;       /* interned: the name of its file */
	UT_hash_handle hh;
};
struct file_ent {
	unsigned char *key;
	size_t len;
	const char *name;
	UT_hash_handle hh;
};

struct resolver {
	const struct agg *agg;
	struct symcache *syms;
	struct resolve_opts opts;
	struct strpool *pool;
	struct addr_ent *addrs;
	struct loc_ent *loc_index;
	struct loc *locs;
	size_t nlocs, locs_cap;
	struct rframe *frames;
	struct rsrc *srcs;      /* srcs[i]: the source position of frames[i] */
	size_t nframes, frames_cap, srcs_cap;
	int last_hidden;        /* lookup()'s address was in libprobe.so */
	uint32_t probe_loc;     /* "[probe]", + 1; 0: not made yet */
	struct path_ent *paths;
	struct file_ent *files;
};

struct resolver *resolver_new(const struct agg *a, struct symcache *c,
			      const struct resolve_opts *o)
{
	struct resolver *r = xcalloc(1, sizeof(*r));
	r->agg = a;
	r->syms = c;
	if (o)
		r->opts = *o;
	else
		r->opts = (struct resolve_opts){ .demangle = 1, .inline_frames = 1 };
	r->pool = strpool_new();
	symcache_add_recorded(c, a);    /* the names the recording carries */
	return r;
}

void resolver_free(struct resolver *r)
{
	if (!r)
		return;
	symcache_drop_recorded(r->syms, r->agg);
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
	struct path_ent *p, *pt;
	HASH_ITER(hh, r->paths, p, pt) {
		HASH_DEL(r->paths, p);
		free(p);
	}
	struct file_ent *f, *ft;
	HASH_ITER(hh, r->files, f, ft) {
		HASH_DEL(r->files, f);
		free(f->key);
		free(f);
	}
	free(r->locs);
	free(r->frames);
	free(r->srcs);
	strpool_free(r->pool);
	free(r);
}

const char *resolver_intern(struct resolver *r, const char *s)
{
	return strpool_intern(r->pool, s);
}

struct symcache *resolver_symcache(const struct resolver *r)
{
	return r->syms;
}

const char *resolver_intern_printable(struct resolver *r, const char *s)
{
	char *p = printable_dup(s);
	const char *i = strpool_intern(r->pool, p);
	free(p);
	return i;
}

static uint32_t intern_loc(struct resolver *r, const struct loc *l)
{
	struct loc_key key = { l->sym, l->dso_path };
	struct loc_ent *e;
	HASH_FIND(hh, r->loc_index, &key, sizeof(key), e);
	if (e)
		return e->id;
	r->locs = xgrow(r->locs, &r->locs_cap, r->nlocs + 1, sizeof(*r->locs));
	r->locs[r->nlocs] = *l;
	e = xcalloc(1, sizeof(*e));
	e->key = key;
	e->id = (uint32_t)r->nlocs++;
	HASH_ADD(hh, r->loc_index, key, sizeof(e->key), e);
	return e->id;
}

const char *resolver_func_name(struct resolver *r, const char *name)
{
	char *dem = !r->opts.demangle ? NULL :
		    r->opts.short_names ? probe_demangle_short(name) : probe_demangle(name);
	const char *s = resolver_intern_printable(r, dem ? dem : name);
	free(dem);
	return s;
}

/* fn, or "fn [inlined]" for an inlined instance, interned. */
static const char *display_name(struct resolver *r, const char *fn, int inlined)
{
	if (!inlined)
		return fn;
	char *t = xasprintf("%s [inlined]", fn);
	const char *s = strpool_intern(r->pool, t);
	free(t);
	return s;
}

/* The location of a function that a symbol or DWARF names. */
static uint32_t named_loc(struct resolver *r, const char *name, const char *mod,
			  const char *path, int inlined)
{
	const char *fn = resolver_func_name(r, name);
	struct loc l = { .sym = display_name(r, fn, inlined), .dso = mod,
			 .dso_path = path, .named = 1, .inlined = inlined, .fn = fn,
			 .raw = resolver_intern_printable(r, name) };
	return intern_loc(r, &l);
}

/* A location nothing names: text ("module+0xOFFSET", "[kernel]") is all. */
static uint32_t anon_loc(struct resolver *r, const char *text, const char *mod,
			 const char *path, int named, int inlined)
{
	const char *fn = resolver_intern_printable(r, text);
	struct loc l = { .sym = display_name(r, fn, inlined), .dso = mod,
			 .dso_path = path, .named = named, .inlined = inlined, .fn = fn,
			 .raw = fn };
	return intern_loc(r, &l);
}

static const char *line_text(struct resolver *r, const struct src_frame *f)
{
	if (!f->file || !f->line)
		return NULL;
	char *t = xasprintf("%s:%u", path_basename(f->file), f->line);
	const char *s = resolver_intern_printable(r, t);
	free(t);
	return s;
}


/*
 * A kernel address (x86-64's upper half): named from /proc/kallsyms
 * (PROBE_KALLSYMS: another copy), where it shows addresses, in the module
 * perf names ("[kernel.kallsyms]", or a kernel module's "[name]"); else
 * "[kernel]", one location.
 */
static uint32_t kernel_loc(struct resolver *r, uint64_t at)
{
	const char *name = NULL, *kmod = NULL;
	const struct kallsyms *ks = symcache_kallsyms(r->syms);
	if (ks)
		name = kallsyms_lookup(ks, at, &kmod);
	if (!name) {
		const char *k = strpool_intern(r->pool, "[kernel]");
		uint32_t l = anon_loc(r, k, k, k, 0, 0);
		r->locs[l].kernel = 1;
		return l;
	}
	char *ms = kmod ? xasprintf("[%s]", kmod) : NULL;
	const char *mod = resolver_intern_printable(r, ms ? ms : "[kernel.kallsyms]");
	free(ms);
	uint32_t l = named_loc(r, name, mod, mod, 0);
	r->locs[l].kernel = 1;
	return l;
}

/* A frame and its source position (sf: NULL where DWARF has none). */
static void push_frame(struct resolver *r, uint32_t loc, const struct src_frame *sf)
{
	r->frames = xgrow(r->frames, &r->frames_cap, r->nframes + 1, sizeof(*r->frames));
	r->srcs = xgrow(r->srcs, &r->srcs_cap, r->nframes + 1, sizeof(*r->srcs));
	r->frames[r->nframes] = (struct rframe){ loc, sf ? line_text(r, sf) : NULL };
	r->srcs[r->nframes] = (struct rsrc){
		sf && sf->file ? resolver_intern_printable(r, sf->file) : NULL, sf ? sf->line : 0 };
	r->nframes++;
}

/*
 * --off-cpu's frames (aggregate.h): "[off-cpu]" above every wait, and
 * "[stack unknown]" for off-CPU time no wrapper saw; module "[off-cpu]".
 */
static int offcpu_frame(struct resolver *r, uint64_t addr)
{
	const char *name = addr == AGG_FRAME_OFFCPU ? "[off-cpu]" :
			   addr == PROBE_FRAME_UNSEEN ? "[stack unknown]" : NULL;
	if (!name)
		return 0;
	const char *mod = strpool_intern(r->pool, "[off-cpu]");
	uint32_t l = anon_loc(r, name, mod, mod, 0, 0);
	r->locs[l].offcpu = 1;
	push_frame(r, l, NULL);
	return 1;
}

/*
 * The mark of a stack cut at the wire's depth (wire.h): "[truncated]", its
 * own module, where its outermost frames would be.
 */
static int truncated_frame(struct resolver *r, uint64_t addr)
{
	if (addr != PROBE_FRAME_TRUNCATED)
		return 0;
	const char *t = strpool_intern(r->pool, "[truncated]");
	uint32_t l = anon_loc(r, t, t, t, 0, 0);
	r->locs[l].truncated = 1;
	push_frame(r, l, NULL);
	return 1;
}

/* "I" dev ino build-id, or "B" basename NUL build-id: a file_ent key. */
static unsigned char *file_key(char kind, const void *id, size_t idlen,
			       const struct agg_map *m, size_t *len)
{
	*len = 1 + idlen + m->build_id_len;
	unsigned char *k = xmalloc(*len);
	k[0] = (unsigned char)kind;
	memcpy(k + 1, id, idlen);
	memcpy(k + 1 + idlen, m->build_id, m->build_id_len);
	return k;
}

/*
 * The name a mapped file goes by (printable, interned): the first recorded
 * name of the same file, where this machine shows one file (device and
 * inode) under both names and the recording gave them the same build-id,
 * or where both have the same basename and build-id; else its own.
 */
static const char *file_name(struct resolver *r, const struct agg_map *m)
{
	const char *path = resolver_intern_printable(r, m->path);
	struct path_ent *p;
	HASH_FIND_PTR(r->paths, &path, p);
	if (p)
		return p->name;
	p = xcalloc(1, sizeof(*p));
	p->path = p->name = path;
	HASH_ADD_PTR(r->paths, path, p);

	struct file_ent *found[2] = { NULL, NULL };
	unsigned char *keys[2] = { NULL, NULL };
	size_t lens[2] = { 0, 0 };
	struct stat st;
	if (stat(m->path, &st) == 0 && S_ISREG(st.st_mode)) {
		uint64_t id[2] = { (uint64_t)st.st_dev, (uint64_t)st.st_ino };
		keys[0] = file_key('I', id, sizeof(id), m, &lens[0]);
	}
	if (m->build_id_len) {
		const char *base = path_basename(path);
		keys[1] = file_key('B', base, strlen(base) + 1, m, &lens[1]);
	}
	for (int i = 0; i < 2; i++)
		if (keys[i])
			HASH_FIND(hh, r->files, keys[i], lens[i], found[i]);
	p->name = found[0] ? found[0]->name : found[1] ? found[1]->name : path;
	for (int i = 0; i < 2; i++) {
		if (!keys[i] || found[i]) {
			free(keys[i]);
			continue;
		}
		struct file_ent *f = xcalloc(1, sizeof(*f));
		f->key = keys[i];
		f->len = lens[i];
		f->name = p->name;
		HASH_ADD_KEYPTR(hh, r->files, f->key, f->len, f);
	}
	return p->name;
}


/* libprobe.so or one of its variants (libprobe-offcpu.so, libprobe-alloc.so...). */
static int is_libprobe(const char *base)
{
	size_t n = strlen(base);

	return strcmp(base, PROBE_LIB_BASENAME) == 0 ||
	       (strncmp(base, "libprobe-", 9) == 0 && n > 12 &&
		strcmp(base + n - 3, ".so") == 0);
}

/* Append the frames of one address to r->frames. */
static void lookup(struct resolver *r, uint32_t image, uint32_t gen, uint64_t addr,
		   int is_return)
{
	if (offcpu_frame(r, addr) || truncated_frame(r, addr))
		return;
	/* Inside the call instruction, not at the one after it. */
	uint64_t at = is_return && addr > 0 ? addr - 1 : addr;
	const struct agg_map *m = agg_find_map(r->agg, image, gen, at);
	if (!m && addr >= RESOLVE_KERNEL_START) {
		push_frame(r, kernel_loc(r, at), NULL);
		return;
	}
	if (!m) {
		char buf[64];
		snprintf(buf, sizeof(buf), "[unknown]+0x%" PRIx64, addr);
		const char *unk = strpool_intern(r->pool, "[unknown]");
		push_frame(r, anon_loc(r, buf, unk, unk, 0, 0), NULL);
		return;
	}
	if (m->jit) {
		/* Named by its runtime, as perf names it: module [JIT]. */
		const char *jit = strpool_intern(r->pool, "[JIT]");
		push_frame(r, named_loc(r, m->path, jit, jit, 0), NULL);
		return;
	}
	r->last_hidden = is_libprobe(path_basename(m->path));
	const char *path = file_name(r, m);
	const char *mod = strpool_intern(r->pool, path_basename(path));
	struct symobj *o = symcache_get(r->syms, m->path, m->build_id, m->build_id_len);
	uint64_t vaddr = at - m->bias;
	const char *name = symobj_lookup(o, vaddr);
	struct src_frame sf[RESOLVE_MAX_INLINE + 1];
	size_t nsf = symobj_srcframes(o, vaddr, sf, RESOLVE_MAX_INLINE + 1);
	for (size_t i = 0; r->opts.inline_frames && i + 1 < nsf; i++) {
		uint32_t l;
		if (sf[i].name) {
			l = named_loc(r, sf[i].name, mod, path, 1);
		} else {
			char *s = xasprintf("%s+0x%" PRIx64, mod, addr - m->bias);
			l = anon_loc(r, s, mod, path, 1, 1);
			free(s);
		}
		push_frame(r, l, &sf[i]);
	}
	/* The containing function: without inline frames, the sampled line. */
	const struct src_frame *pos = NULL;
	if (nsf)
		pos = r->opts.inline_frames ? &sf[nsf - 1] : &sf[0];
	if (!name && nsf && sf[nsf - 1].name)
		name = sf[nsf - 1].name;        /* DWARF knows what the symbols do not */
	if (name) {
		push_frame(r, named_loc(r, name, mod, path, 0), pos);
		return;
	}
	/* Stripped code: the function .eh_frame says contains it, by its start. */
	uint64_t start;
	char *s = symobj_func_start(o, vaddr, &start) ?
		  xasprintf("%s+0x%" PRIx64, mod, start) :
		  xasprintf("%s+0x%" PRIx64, mod, addr - m->bias);
	push_frame(r, anon_loc(r, s, mod, path, 0, 0), pos);
	free(s);
}

/* The cache entry of one address, resolved on first use. */
static struct addr_ent *addr_entry(struct resolver *r, uint32_t image, uint32_t gen,
				   uint64_t addr, int is_return)
{
	struct addr_key key;
	memset(&key, 0, sizeof(key));
	key.addr = addr;
	key.image = image;
	key.gen = gen;
	key.is_return = is_return ? 1u : 0u;
	struct addr_ent *e;
	HASH_FIND(hh, r->addrs, &key, sizeof(key), e);
	if (!e) {
		size_t first = r->nframes;
		r->last_hidden = 0;
		lookup(r, image, gen, addr, is_return);
		e = xcalloc(1, sizeof(*e));
		e->key = key;
		e->hidden = r->last_hidden;
		e->first = (uint32_t)first;
		e->n = (uint32_t)(r->nframes - first);
		HASH_ADD(hh, r->addrs, key, sizeof(e->key), e);
	}
	return e;
}

uint32_t resolve_addr(struct resolver *r, uint32_t image, uint32_t gen, uint64_t addr,
		      int is_return, const struct rframe **out)
{
	struct addr_ent *e = addr_entry(r, image, gen, addr, is_return);
	*out = &r->frames[e->first];
	return e->n;
}

uint32_t resolve_addr_src(struct resolver *r, uint32_t image, uint32_t gen, uint64_t addr,
			  int is_return, const struct rframe **out, const struct rsrc **src)
{
	return resolve_addr_where(r, image, gen, addr, is_return, out, src, NULL);
}

/*
 * The start of the symbol symobj_lookup() names at v, found with that
 * lookup alone (symbols.h gives names, not starts): the lowest x in
 * [lo, v] it still names the same, by bisection.  Between a function's
 * start and any address in it the answer is that function, below the
 * start another function or a gap (NULL), so it changes once.  (Not so
 * when a symbol nested inside this one lies between its start and v, as
 * some assembly does: the offset is then counted from where the nested
 * one ends.)  Offsets from lo keep untrusted maps from wrapping around.
 */
static uint64_t symbol_start(const struct symobj *o, uint64_t lo, uint64_t v, const char *name)
{
	uint64_t below = 0, above = v - lo;     /* the answer is lo + [below, above] */
	while (below < above) {
		uint64_t mid = below + (above - below) / 2;
		if (symobj_lookup(o, lo + mid) == name)
			above = mid;
		else
			below = mid + 1;
	}
	return lo + below;
}

static void find_where(struct resolver *r, struct addr_ent *e)
{
	uint64_t addr = e->key.addr;
	uint64_t at = e->key.is_return && addr > 0 ? addr - 1 : addr;
	const struct agg_map *m = agg_find_map(r->agg, e->key.image, e->key.gen, at);
	e->where = (struct rwhere){ at, 0, 0 };
	e->where_done = 1;
	if (!m)
		return;
	e->where.vaddr = at - m->bias;
	if (m->jit) {
		e->where.symoff = at - m->start;
		e->where.has_symoff = 1;
		return;
	}
	struct symobj *o = symcache_get(r->syms, m->path, m->build_id, m->build_id_len);
	const char *name = symobj_lookup(o, at - m->bias);
	if (!name)
		return;
	uint64_t start = symbol_start(o, m->start - m->bias, at - m->bias, name);
	e->where.symoff = e->where.vaddr - start;
	e->where.has_symoff = 1;
}

uint32_t resolve_addr_where(struct resolver *r, uint32_t image, uint32_t gen, uint64_t addr,
			    int is_return, const struct rframe **out,
			    const struct rsrc **src, struct rwhere *where)
{
	struct addr_ent *e = addr_entry(r, image, gen, addr, is_return);
	if (where && !e->where_done)
		find_where(r, e);
	*out = &r->frames[e->first];
	*src = &r->srcs[e->first];
	if (where)
		*where = e->where;
	return e->n;
}

int resolve_hidden(struct resolver *r, uint32_t image, uint32_t gen, uint64_t addr,
		   int is_return)
{
	return addr_entry(r, image, gen, addr, is_return)->hidden;
}

uint32_t resolve_probe_loc(struct resolver *r)
{
	if (!r->probe_loc) {
		const char *p = strpool_intern(r->pool, "[probe]");
		r->probe_loc = anon_loc(r, p, p, p, 0, 0) + 1;
	}
	return r->probe_loc - 1;
}

uint32_t resolve_stack_src(struct resolver *r, const struct agg_count *k, struct rframe *out,
			   struct rsrc *src)
{
	uint32_t n;
	const uint64_t *frames = agg_stack(r->agg, k->stack, &n);
	if (n > PROBE_MAX_FRAMES)
		n = PROBE_MAX_FRAMES;
	uint32_t used = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct addr_ent *e = addr_entry(r, k->image, k->gen, frames[i],
					       resolve_is_return(frames, i));
		if (e->hidden)
			continue;       /* libprobe's own code: its caller stands for it */
		uint32_t first = e->first, m = e->n;
		/* Room for this address's frames and one for each address left. */
		uint32_t room = RESOLVE_MAX_FRAMES - used - (n - i - 1);
		if (m > room) {
			first += m - 1;     /* only the containing function */
			m = 1;
		}
		memcpy(out + used, &r->frames[first], m * sizeof(*out));
		if (src)
			memcpy(src + used, &r->srcs[first], m * sizeof(*src));
		used += m;
	}
	if (used == 0 && n > 0) {       /* all in libprobe: counted apart */
		if (src)
			src[used] = (struct rsrc){ NULL, 0 };
		out[used++] = (struct rframe){ resolve_probe_loc(r), NULL };
	}
	return used;
}

uint32_t resolve_stack(struct resolver *r, const struct agg_count *k, struct rframe *out)
{
	return resolve_stack_src(r, k, out, NULL);
}

const struct loc *resolver_loc(const struct resolver *r, uint32_t id)
{
	return id < r->nlocs ? &r->locs[id] : NULL;
}

size_t resolver_nlocs(const struct resolver *r)
{
	return r->nlocs;
}
