/* flame.c - see flame.h: the flame graph's tree, its layout, and escaping. */
#include "flame/flame.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "strpool.h"
#include "util.h"

struct frame_key {
	const char *name, *module;      /* interned: compared as pointers */
};

struct frame_ent {
	struct frame_key key;
	uint32_t id;
	UT_hash_handle hh;
};

/* (parent, frame) -> node, open addressing; node 0 (the root) marks a free slot. */
struct nslot {
	uint64_t key;
	uint32_t node;
};

struct flame {
	struct strpool *pool;
	struct flame_frame *frames;
	size_t nframes, frames_cap;
	struct frame_ent *frame_index;
	struct flame_node *nodes;
	size_t nnodes, nodes_cap;
	struct nslot *index;
	size_t index_mask;
};

struct flame *flame_new(void)
{
	struct flame *f = xcalloc(1, sizeof(*f));
	f->pool = strpool_new();
	f->nodes = xgrow(NULL, &f->nodes_cap, 1, sizeof(*f->nodes));
	memset(&f->nodes[0], 0, sizeof(f->nodes[0]));
	f->nodes[0].frame = flame_frame_id(f, "all", "", FK_ROOT);
	f->nnodes = 1;
	return f;
}

void flame_free(struct flame *f)
{
	if (!f)
		return;
	struct frame_ent *e, *t;
	HASH_ITER(hh, f->frame_index, e, t) {
		HASH_DEL(f->frame_index, e);
		free(e);
	}
	free(f->frames);
	free(f->nodes);
	free(f->index);
	strpool_free(f->pool);
	free(f);
}

uint32_t flame_frame_id(struct flame *f, const char *name, const char *module,
			enum flame_kind kind)
{
	struct frame_key key = { strpool_intern(f->pool, name), strpool_intern(f->pool, module) };
	struct frame_ent *e;
	HASH_FIND(hh, f->frame_index, &key, sizeof(key), e);
	if (e)
		return e->id;
	f->frames = xgrow(f->frames, &f->frames_cap, f->nframes + 1, sizeof(*f->frames));
	f->frames[f->nframes] = (struct flame_frame){ key.name, key.module, kind };
	e = xcalloc(1, sizeof(*e));
	e->key = key;
	e->id = (uint32_t)f->nframes++;
	HASH_ADD(hh, f->frame_index, key, sizeof(e->key), e);
	return e->id;
}

const struct flame_frame *flame_frame_at(const struct flame *f, uint32_t id)
{
	return &f->frames[id];
}

const struct flame_node *flame_node_at(const struct flame *f, uint32_t id)
{
	return &f->nodes[id];
}

static void index_grow(struct flame *f)
{
	size_t ncap = f->index ? 2 * (f->index_mask + 1) : 4096;
	struct nslot *n = xcalloc(ncap, sizeof(*n));
	for (size_t i = 0; f->index && i <= f->index_mask; i++) {
		if (!f->index[i].node)
			continue;
		size_t j = probe_hash_mix(f->index[i].key) & (ncap - 1);
		while (n[j].node)
			j = (j + 1) & (ncap - 1);
		n[j] = f->index[i];
	}
	free(f->index);
	f->index = n;
	f->index_mask = ncap - 1;
}

/* The child of parent showing frame, made if new. */
static uint32_t child(struct flame *f, uint32_t parent, uint32_t frame)
{
	if (!f->index || 2 * f->nnodes > f->index_mask + 1)
		index_grow(f);
	uint64_t key = (uint64_t)parent << 32 | frame;
	size_t j = probe_hash_mix(key) & f->index_mask;
	for (; f->index[j].node; j = (j + 1) & f->index_mask)
		if (f->index[j].key == key)
			return f->index[j].node;
	f->nodes = xgrow(f->nodes, &f->nodes_cap, f->nnodes + 1, sizeof(*f->nodes));
	uint32_t id = (uint32_t)f->nnodes++;
	struct flame_node *nd = &f->nodes[id];
	memset(nd, 0, sizeof(*nd));
	nd->frame = frame;
	nd->parent = parent;
	nd->depth = f->nodes[parent].depth + 1;
	nd->next_sibling = f->nodes[parent].first_child;
	f->nodes[parent].first_child = id;
	f->nodes[parent].nchildren++;
	f->index[j].key = key;
	f->index[j].node = id;
	return id;
}

void flame_add(struct flame *f, const uint32_t *path, uint32_t n, int set,
	       uint64_t amount, uint64_t samples)
{
	uint32_t node = 0;
	for (uint32_t i = 0;; i++) {
		struct flame_node *nd = &f->nodes[node];
		nd->amount[set] = sat_add(nd->amount[set], amount);
		nd->samples[set] = sat_add(nd->samples[set], samples);
		if (i == n)
			break;
		node = child(f, node, path[i]);
	}
}

/* ---- from a report: frames and groups ------------------------------ */

struct filler {
	struct flame *f;
	const struct report_ctx *c;
	uint32_t *loc_frame;    /* resolver loc -> frame id + 1, 0: not yet */
	size_t loc_cap;
	const char **exes;      /* the images' executables, interned by the resolver */
	size_t nexes;
	struct group_ent *groups;
};

/* The grouping frames of one (image, tid), cached: many counts share them. */
struct group_ent {
	uint64_t key;
	uint32_t n, ids[REPORT_MAX_KEYS];
	UT_hash_handle hh;
};

static enum flame_kind loc_kind(const struct filler *fl, const struct loc *l)
{
	if (l->offcpu)
		return FK_OFFCPU;
	if (l->kernel)
		return FK_KERNEL;
	if (l->inlined)
		return FK_INLINED;
	if (!l->named)
		return FK_UNKNOWN;
	for (size_t i = 0; i < fl->nexes; i++)
		if (l->dso_path == fl->exes[i])
			return FK_PROGRAM;
	return FK_LIBRARY;
}

static uint32_t loc_frame(struct filler *fl, uint32_t loc)
{
	if (loc < fl->loc_cap && fl->loc_frame[loc])
		return fl->loc_frame[loc] - 1;
	if (loc >= fl->loc_cap) {
		size_t old = fl->loc_cap;
		fl->loc_frame = xgrow(fl->loc_frame, &fl->loc_cap, (size_t)loc + 1,
				      sizeof(*fl->loc_frame));
		memset(fl->loc_frame + old, 0, (fl->loc_cap - old) * sizeof(*fl->loc_frame));
	}
	const struct loc *l = resolver_loc(fl->c->res, loc);
	/* The module as probe diff pairs it (report_loc_module): one node for both. */
	uint32_t id = flame_frame_id(fl->f, l->sym, report_loc_module(fl->c, l),
				     loc_kind(fl, l));
	fl->loc_frame[loc] = id + 1;
	return id;
}


/* The frame of one grouping key: "pid:name" as the text report's columns. */
static uint32_t group_frame(struct filler *fl, enum sort_key k, uint32_t image, uint32_t tid)
{
	const struct agg *a = fl->c->agg;
	const struct agg_image *im = agg_image(a, image);
	char *name;
	const char *module = "";
	switch (k) {
	case KEY_PID:
		name = xasprintf("%u:%s", im->pid, im->name);
		module = "process";
		break;
	case KEY_TID:
		name = xasprintf("%u:%s", tid, report_thread_name(a, image, tid));
		module = "thread";
		break;
	case KEY_COMM:
		name = xstrdup(report_thread_name(a, image, tid));
		module = "thread name";
		break;
	default:        /* KEY_EXE */
		name = xstrdup(im->name);
		module = "program";
		break;
	}
	uint32_t id = flame_frame_id(fl->f, name, module, FK_GROUP);
	free(name);
	return id;
}

static const struct group_ent *groups_of(struct filler *fl, uint32_t image, uint32_t tid)
{
	uint64_t key = (uint64_t)image << 32 | tid;
	struct group_ent *g;
	HASH_FIND(hh, fl->groups, &key, sizeof(key), g);
	if (g)
		return g;
	g = xcalloc(1, sizeof(*g));
	g->key = key;
	const struct report_opts *o = fl->c->opts;
	for (int i = 0; i < o->nkeys; i++) {
		enum sort_key k = o->keys[i];
		/* The frame keys (sym, dso, srcline) are the stack itself. */
		if (k == KEY_PID || k == KEY_TID || k == KEY_COMM || k == KEY_EXE)
			g->ids[g->n++] = group_frame(fl, k, image, tid);
	}
	HASH_ADD(hh, fl->groups, key, sizeof(g->key), g);
	return g;
}

static void filler_init(struct filler *fl, struct flame *f, const struct report_ctx *c)
{
	memset(fl, 0, sizeof(*fl));
	fl->f = f;
	fl->c = c;
	size_t n = agg_nimages(c->agg);
	fl->exes = xmalloc((n ? n : 1) * sizeof(*fl->exes));
	for (size_t i = 0; i < n; i++) {
		const struct agg_image *im = agg_image(c->agg, (uint32_t)i);
		if (im->exe[0])
			fl->exes[fl->nexes++] = resolver_intern(c->res, im->exe);
	}
}

static void filler_free(struct filler *fl)
{
	struct group_ent *g, *t;
	HASH_ITER(hh, fl->groups, g, t) {
		HASH_DEL(fl->groups, g);
		free(g);
	}
	free(fl->loc_frame);
	free(fl->exes);
}

/* ---- source lines ------------------------------------------------------ */

struct line_key {
	const char *file;       /* interned by the resolver: compared as a pointer */
	uint32_t frame, line;
};

struct line_ent {
	struct line_key key;
	struct flame_line v;
	size_t stamp;           /* the last count counted (+ 1): once per count */
	UT_hash_handle hh;
};

struct fn_ent {
	struct flame_fn_lines v;
	size_t stamp;
	int has_lines;
};

struct flame_lines {
	struct fn_ent *fns;     /* by frame id */
	size_t nfns, fns_cap;
	struct line_ent *lines;
	struct flame_line *all; /* every function's listed lines */
};

static struct fn_ent *fn_at(struct flame_lines *l, uint32_t frame)
{
	if (frame >= l->nfns) {
		l->fns = xgrow(l->fns, &l->fns_cap, (size_t)frame + 1, sizeof(*l->fns));
		memset(l->fns + l->nfns, 0, (l->fns_cap - l->nfns) * sizeof(*l->fns));
		l->nfns = l->fns_cap;
	}
	return &l->fns[frame];
}

/* One frame of count number i (leaf: the stack's first frame). */
static void count_line(struct flame_lines *l, uint32_t frame,
		       const struct rsrc *src, size_t i, int leaf, uint64_t amount,
		       uint64_t samples)
{
	struct fn_ent *fn = fn_at(l, frame);
	if (fn->stamp != i + 1) {
		fn->stamp = i + 1;
		fn->v.total = sat_add(fn->v.total, amount);
		fn->v.samples = sat_add(fn->v.samples, samples);
	}
	if (leaf)
		fn->v.self = sat_add(fn->v.self, amount);
	if (!src->file || !src->line)
		return;
	struct line_key key;
	memset(&key, 0, sizeof(key));
	key.file = src->file;
	key.frame = frame;
	key.line = src->line;
	struct line_ent *e;
	HASH_FIND(hh, l->lines, &key, sizeof(key), e);
	if (!e) {
		e = xcalloc(1, sizeof(*e));
		e->key = key;
		e->v.file = key.file;
		e->v.line = key.line;
		HASH_ADD(hh, l->lines, key, sizeof(e->key), e);
		fn->has_lines = 1;
	}
	if (e->stamp != i + 1) {
		e->stamp = i + 1;
		e->v.total = sat_add(e->v.total, amount);
		e->v.samples = sat_add(e->v.samples, samples);
	}
	if (leaf)
		e->v.self = sat_add(e->v.self, amount);
}

struct line_ref {
	uint32_t frame;
	const struct flame_line *v;
};

static int cmp_line_ref(const void *x, const void *y)
{
	const struct line_ref *a = x, *b = y;
	if (a->frame != b->frame)
		return a->frame < b->frame ? -1 : 1;
	if (a->v->total != b->v->total)
		return a->v->total > b->v->total ? -1 : 1;
	if (a->v->self != b->v->self)
		return a->v->self > b->v->self ? -1 : 1;
	int d = strcmp(a->v->file, b->v->file);
	if (d)
		return d;
	return a->v->line < b->v->line ? -1 : a->v->line > b->v->line;
}

/* Each function's lines, hottest first; the first top kept. */
static void lines_finish(struct flame_lines *l, size_t top)
{
	size_t n = HASH_COUNT(l->lines), at = 0;
	struct line_ref *refs = xmalloc((n ? n : 1) * sizeof(*refs));
	struct line_ent *e, *t;
	HASH_ITER(hh, l->lines, e, t)
		refs[at++] = (struct line_ref){ e->key.frame, &e->v };
	qsort(refs, n, sizeof(*refs), cmp_line_ref);
	l->all = xmalloc((n ? n : 1) * sizeof(*l->all));
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		struct fn_ent *fn = &l->fns[refs[i].frame];
		if (!fn->v.lines)
			fn->v.lines = l->all + kept;
		if (fn->v.nlines < top) {
			l->all[kept++] = *refs[i].v;
			fn->v.nlines++;
		} else {
			fn->v.more++;
		}
	}
	free(refs);
	HASH_ITER(hh, l->lines, e, t) {
		HASH_DEL(l->lines, e);
		free(e);
	}
}

/* flame_fill(), with the lines too (lines: 1) or not. */
static struct flame_lines *fill(struct flame *f, const struct report_ctx *c, int set,
				int lines, size_t top)
{
	struct filler fl;
	filler_init(&fl, f, c);
	struct flame_lines *l = lines ? xcalloc(1, sizeof(*l)) : NULL;
	struct rframe *fr = xmalloc(RESOLVE_MAX_FRAMES * sizeof(*fr));
	struct rsrc *src = l ? xmalloc(RESOLVE_MAX_FRAMES * sizeof(*src)) : NULL;
	uint32_t *path = xmalloc((RESOLVE_MAX_FRAMES + REPORT_MAX_KEYS) * sizeof(*path));
	const struct agg_count *counts = agg_counts(c->agg);
	for (size_t i = 0; i < agg_ncounts(c->agg); i++) {
		const struct agg_count *k = &counts[i];
		const struct group_ent *g = groups_of(&fl, k->image, k->tid);
		uint64_t amount = report_amount(c, k);
		uint32_t n = resolve_stack_src(c->res, k, fr, src), len = 0;
		for (uint32_t j = 0; j < g->n; j++)
			path[len++] = g->ids[j];
		for (uint32_t j = n; j-- > 0;) {        /* leaf first: reversed */
			path[len++] = loc_frame(&fl, fr[j].loc);
			if (l)
				count_line(l, path[len - 1], &src[j], i, j == 0, amount, k->samples);
		}
		flame_add(f, path, len, set, amount, k->samples);
	}
	if (l)
		lines_finish(l, top);
	free(path);
	free(src);
	free(fr);
	filler_free(&fl);
	return l;
}

void flame_fill(struct flame *f, const struct report_ctx *c, int set)
{
	fill(f, c, set, 0, 0);
}

struct flame_lines *flame_fill_lines(struct flame *f, const struct report_ctx *c, int set,
				     size_t top)
{
	return fill(f, c, set, 1, top);
}

const struct flame_fn_lines *flame_lines_of(const struct flame_lines *l, uint32_t frame)
{
	if (!l || frame >= l->nfns || !l->fns[frame].has_lines)
		return NULL;
	return &l->fns[frame].v;
}

void flame_lines_free(struct flame_lines *l)
{
	if (!l)
		return;
	free(l->fns);
	free(l->all);
	free(l);
}

/* ---- layout ---------------------------------------------------------- */

struct kid {
	const char *name, *module;
	uint32_t node;
};

static int cmp_kid(const void *x, const void *y)
{
	const struct kid *a = x, *b = y;
	int d = strcmp(a->name, b->name);
	return d ? d : strcmp(a->module, b->module);
}

struct placer {
	const struct flame *f;
	int set;
	uint64_t min_amount;
	size_t cap;
	struct flame_layout *l;
};

static void place(struct placer *p, uint32_t id, uint64_t x)
{
	const struct flame_node *nd = &p->f->nodes[id];
	struct flame_layout *l = p->l;
	l->rects = xgrow(l->rects, &p->cap, l->n + 1, sizeof(*l->rects));
	l->rects[l->n++] = (struct flame_rect){ id, nd->depth, x, nd->amount[p->set] };
	if (nd->depth > l->max_depth)
		l->max_depth = nd->depth;
	if (!nd->nchildren)
		return;
	struct kid *kids = xmalloc(nd->nchildren * sizeof(*kids));
	uint32_t k = 0;
	for (uint32_t ch = nd->first_child; ch && k < nd->nchildren;
	     ch = p->f->nodes[ch].next_sibling) {
		const struct flame_frame *fr = &p->f->frames[p->f->nodes[ch].frame];
		kids[k++] = (struct kid){ fr->name, fr->module, ch };
	}
	qsort(kids, k, sizeof(*kids), cmp_kid);
	for (uint32_t i = 0; i < k; i++) {
		uint64_t w = p->f->nodes[kids[i].node].amount[p->set];
		/* The narrow ones still take their place: siblings do not move. */
		if (w && w >= p->min_amount)
			place(p, kids[i].node, x);
		else
			l->merged = sat_add(l->merged, w);
		x += w;
	}
	free(kids);
}

void flame_layout(const struct flame *f, int set, uint64_t min_amount,
		  struct flame_layout *out)
{
	memset(out, 0, sizeof(*out));
	struct placer p = { f, set, min_amount, 0, out };
	if (f->nodes[0].amount[set])
		place(&p, 0, 0);
}

void flame_layout_free(struct flame_layout *l)
{
	free(l->rects);
	memset(l, 0, sizeof(*l));
}

#define MIN_PX 0.1

uint64_t flame_min_amount(const struct report_ctx *c, uint64_t total, double plotw)
{
	double m = ceil((double)total * MIN_PX / plotw);
	if (c->opts->percent_limit_set)
		m = fmax(m, ceil((double)total * c->opts->percent_limit / 100.0));
	return m < 1 ? 1 : (uint64_t)m;
}

unsigned flame_kinds(const struct flame *f, const struct flame_layout *l)
{
	unsigned mask = 0;
	for (size_t i = 0; i < l->n; i++)
		mask |= 1u << f->frames[f->nodes[l->rects[i].node].frame].kind;
	return mask & ~(1u << FK_ROOT);
}

/* ---- colours, text ---------------------------------------------------- */

static const char *const kind_names[FK_COUNT] = {
	[FK_ROOT] = "all", [FK_GROUP] = "process/thread", [FK_PROGRAM] = "program",
	[FK_LIBRARY] = "library", [FK_KERNEL] = "kernel", [FK_INLINED] = "inlined",
	[FK_UNKNOWN] = "unknown", [FK_OFFCPU] = "off-cpu",
};

const char *flame_kind_name(enum flame_kind k)
{
	return k < FK_COUNT ? kind_names[k] : "?";
}

char flame_kind_letter(enum flame_kind k)
{
	static const char letters[FK_COUNT] = {
		[FK_ROOT] = 'r', [FK_GROUP] = 'g', [FK_PROGRAM] = 'p', [FK_LIBRARY] = 'l',
		[FK_KERNEL] = 'k', [FK_INLINED] = 'i', [FK_UNKNOWN] = 'u',
		[FK_OFFCPU] = 'o',
	};
	return k < FK_COUNT ? letters[k] : 'u';
}

/* Each kind: a base colour and how far the name may move each channel. */
static const uint8_t kind_rgb[FK_COUNT][6] = {
	[FK_ROOT] = { 200, 200, 190, 20, 20, 20 },
	[FK_GROUP] = { 185, 165, 230, 30, 30, 20 },      /* violet */
	[FK_PROGRAM] = { 215, 60, 40, 40, 70, 30 },      /* red to orange */
	[FK_LIBRARY] = { 210, 190, 60, 40, 50, 40 },     /* yellow to sand */
	[FK_KERNEL] = { 100, 150, 225, 40, 40, 30 },     /* blue */
	[FK_INLINED] = { 70, 200, 190, 40, 40, 40 },     /* aqua */
	[FK_UNKNOWN] = { 175, 175, 175, 30, 30, 30 },    /* grey */
	[FK_OFFCPU] = { 40, 60, 140, 10, 10, 20 },       /* dark blue: waiting */
};

void flame_colour(enum flame_kind k, const char *name, char out[8])
{
	/* FNV-1a of the name: the same function, the same colour, every time. */
	uint32_t h = 2166136261u;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	const uint8_t *b = kind_rgb[k < FK_COUNT ? k : FK_UNKNOWN];
	unsigned v[3];
	for (int i = 0; i < 3; i++) {
		v[i] = b[i] + (unsigned)(((h >> (8 * i)) & 0xff) * b[3 + i] / 255);
		if (v[i] > 255)
			v[i] = 255;
	}
	snprintf(out, 8, "#%02x%02x%02x", v[0], v[1], v[2]);
}

/* WCAG 2's relative luminance of one sRGB channel (0..255), linearised. */
static double channel_lum(unsigned v)
{
	double c = v / 255.0;
	return c <= 0.03928 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

const char *flame_ink(const char *fill)
{
	unsigned long rgb = strtoul(fill + (fill[0] == '#'), NULL, 16);
	double l = 0.2126 * channel_lum((rgb >> 16) & 0xff) +
		   0.7152 * channel_lum((rgb >> 8) & 0xff) +
		   0.0722 * channel_lum(rgb & 0xff);
	/* Contrast with black (l + 0.05) / 0.05, with white 1.05 / (l + 0.05). */
	return (l + 0.05) * (l + 0.05) >= 0.0525 ? "#000000" : "#ffffff";
}

void flame_put_kinds_js(FILE *out, unsigned kinds)
{
	fprintf(out, "var KINDS = [");
	for (int k = 0, first = 1; k < FK_COUNT; k++) {
		if (!(kinds & 1u << k))
			continue;
		char fill[8];
		flame_colour((enum flame_kind)k, "", fill);
		fprintf(out, "%s[\"%s\", \"%s\"]", first ? "" : ", ", fill,
			flame_kind_name((enum flame_kind)k));
		first = 0;
	}
	fprintf(out, "];\n");
}

/* cp as UTF-8 (printable_next made it printable). */
static void put_utf8(FILE *out, uint32_t cp)
{
	char enc[4];
	fwrite(enc, 1, utf8_encode(cp, enc), out);
}

size_t flame_chars(const char *s)
{
	size_t n = 0;
	uint32_t cp;
	for (const char *p = s; *p; p += printable_next(p, &cp))
		n++;
	return n;
}

void flame_put_xml(FILE *out, const char *s, size_t max_chars)
{
	size_t n = 0, keep = max_chars;
	if (max_chars && flame_chars(s) > max_chars)
		keep = max_chars > 2 ? max_chars - 2 : 0;       /* room for ".." */
	uint32_t cp;
	for (const char *p = s; *p; n++) {
		if (max_chars && n == keep) {
			fputs("..", out);
			return;
		}
		p += printable_next(p, &cp);
		switch (cp) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default: put_utf8(out, cp);
		}
	}
}

void flame_put_json(FILE *out, const char *s)
{
	uint32_t cp;
	for (const char *p = s; *p;) {
		p += printable_next(p, &cp);
		/* '<' too: "</script>" in a name must not end the page's script. */
		if (cp == '"' || cp == '\\' || cp == '<' || cp == '>' || cp == '&' ||
		    cp == 0x2028 || cp == 0x2029)
			fprintf(out, "\\u%04x", (unsigned)cp);
		else
			put_utf8(out, cp);
	}
}

/* ---- titles ----------------------------------------------------------- */

const char *flame_title(const struct report_ctx *c)
{
	if (c->opts->title)
		return c->opts->title;
	return c->opts->inverted ? "Icicle Graph" : "Flame Graph";
}

/* 1234567 as "1,234,567" into buf. */
static void thousands(uint64_t v, char *buf, size_t len)
{
	char d[32];
	int n = snprintf(d, sizeof(d), "%" PRIu64, v), o = 0;
	for (int i = 0; i < n && (size_t)o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = d[i];
	}
	buf[o] = '\0';
}

void flame_subtitle(const struct report_ctx *c, double merged, char *buf, size_t len)
{
	const struct agg_totals *t = agg_totals(c->agg);
	const struct agg_image *ev = NULL;
	for (size_t i = 0; i < agg_nimages(c->agg) && !ev; i++)
		if (agg_image(c->agg, (uint32_t)i)->have_hello)
			ev = agg_image(c->agg, (uint32_t)i);
	/* The rate achieved, not the one asked (report_event_text). */
	char *rate = ev ? report_event_text(c->agg, ev) : xstrdup("unknown event");
	char n[32];
	thousands(t->samples, n, sizeof(n));
	snprintf(buf, len, "%s; %s samples, %u process%s, %u thread%s%s", rate, n,
		 t->processes, t->processes == 1 ? "" : "es", t->threads,
		 t->threads == 1 ? "" : "s",
		 c->by_samples ? "; widths by samples" : "; widths by event weight");
	free(rate);
	size_t used = strlen(buf);
	if (merged >= 0.0005 && used < len)
		snprintf(buf + used, len - used, "; %.1f%% below frames too narrow to draw",
			 100 * merged);
}
