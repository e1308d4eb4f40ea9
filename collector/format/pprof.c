/*
 * pprof.c - the pprof format: a gzipped profile.proto (perftools.profiles),
 * as go tool pprof, Pyroscope, Parca and Grafana read it.  The message is
 * built with the code protoc-c generates from pprof's own schema and
 * packed straight into zlib's gzip stream.
 *
 * Contract:
 *   - Two sample types: samples/count, then the weight: cpu/nanoseconds
 *     for cpu-clock and task-clock (the CPU-time timer fallback is
 *     cpu-clock), else the event's name and count ("page-faults"/count).
 *     period_type is the weight's type; period the sampling period (with
 *     -F, 1e9/Hz ns for clock events, else the mean weight of a sample).
 *     The weight is the default sample type, or samples when no sample
 *     carries one (as the text report falls back).  A recording made with
 *     --off-cpu has four: samples/count, wall/nanoseconds (the default:
 *     running and waiting), cpu/nanoseconds and off-cpu/nanoseconds (a
 *     sample is one or the other: its stack ends in "[off-cpu]" or not).
 *     A recording of allocations (--alloc) has Go's heap profile's four:
 *     alloc_objects/count, alloc_space/bytes, inuse_objects/count and
 *     inuse_space/bytes (the default), period_type space/bytes, period the
 *     mean sampling interval; objects and bytes unbiased sample by sample
 *     (aggregate.c), as go tool pprof shows them without scaling again.
 *   - One Sample per count row (image, generation, tid, stack), values
 *     [samples, weight] (a saturated weight stays INT64_MAX), labels pid and
 *     tid (numbers), thread, comm and exe (strings; empty ones left out).
 *   - One Location per sampled address, as the image's generation maps it
 *     and as leaf or return address (return addresses are looked up at
 *     addr - 1: the line is the call's).  Its address is the ELF address
 *     (the raw address less its mapping's bias: for a PIE or a shared
 *     library not where it ran, but what the object's symbol table and
 *     code say, which go tool pprof -disasm compares it with untranslated:
 *     its objTool's ObjAddr is the identity); its Lines are resolve.h's
 *     frames for it, innermost first, so that functions inlined there are
 *     Lines of the one Location (pprof's line[0] is the innermost).  An
 *     address in no mapping (kernel, unknown, JIT) is the raw address, with
 *     no mapping_id.
 *   - One Mapping per object (path and build-id), in ELF addresses as its
 *     Locations, so one for every process that loaded it: start and limit
 *     of its sampled executable segments less the bias, the file offset of
 *     the lowest, its path and build-id (hex).  Only objects with a sampled
 *     address.  Ordered by the image they were first seen in, its
 *     executable first (pprof: mapping[0] is the main binary).
 *     has_functions, has_filenames, has_line_numbers and has_inline_frames
 *     say what its locations got, as pprof's own symbolizer sets them:
 *     pprof symbolizes again only objects that probe could not name at all.
 *   - A Function per (name, system name, file): the name as the report
 *     shows it (demangled unless -M) without " [inlined]", system_name as
 *     the binary spells it, filename as symbols.h's src_frame (a full path
 *     where DWARF gives its compile unit's directory: pprof -list opens
 *     it); start_line 0, as nothing here reads where a function is
 *     declared.
 *   - duration_nanos: from the first sample to the last; time_nanos: the
 *     first sample's wall-clock time, as well as it can be told (see
 *     profile_start()).  With opts.window_ns (probe agent), the window's
 *     start (opts.start_real_ns) and length instead.  One comment says
 *     what was lost, if anything was.
 *   - 0, or -1 after one "probe:" message (zlib).  A failed write is left
 *     to outfile_close(), which says it.
 */
#define ZLIB_CONST
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "format/format.h"
#include "hashtab.h"
#include "data/lost.h"
#include "format/pprof_merge.h"
#include "profile.pb-c.h"
#include "util.h"

typedef Perftools__Profiles__Profile PProfile;
typedef Perftools__Profiles__ValueType PValueType;
typedef Perftools__Profiles__Sample PSample;
typedef Perftools__Profiles__Label PLabel;
typedef Perftools__Profiles__Mapping PMapping;
typedef Perftools__Profiles__Location PLocation;
typedef Perftools__Profiles__Line PLine;
typedef Perftools__Profiles__Function PFunction;

#define NS_PER_S 1000000000ull

/* Grow a message's repeated field (n items, capacity cap) by one: x. */
#define PUSH(vec, n, cap, x) do {					\
	(vec) = xgrow((vec), &(cap), (n) + 1, sizeof(*(vec)));		\
	(vec)[(n)++] = (x);						\
} while (0)

struct str_ent {
	UT_hash_handle hh;
	int64_t idx;
};

struct map_ent {
	UT_hash_handle hh;
	char *key;              /* "build-id path" */
	PMapping *m;
	uint32_t image;         /* the first image it was seen in */
	int is_exe;             /* ... and whether it was that one's executable */
};

struct loc_key {
	uint64_t addr;
	uint32_t image, gen, is_return;
};
struct loc_ent {
	UT_hash_handle hh;
	struct loc_key key;
	uint64_t id;
};

struct fn_key {
	int64_t name, system_name, filename;
};
struct fn_ent {
	UT_hash_handle hh;
	struct fn_key key;
	uint64_t id;
};

/* The labels of one thread of one image, shared by its samples. */
struct thr_key {
	uint32_t image, tid;
};
struct thr_ent {
	UT_hash_handle hh;
	struct thr_key key;
	PLabel *v[5];
	size_t n;
};

struct pp {
	const struct report_ctx *c;
	PProfile prof;
	size_t cap_str, cap_map, cap_loc, cap_fn, cap_sample;
	struct str_ent *strs;
	struct map_ent *maps;
	struct loc_ent *locs;
	struct fn_ent *fns;
	struct thr_ent *threads;
	PValueType types[4], period_type;
	int wall;               /* --off-cpu: the four types */
	int heap;               /* --alloc shown: Go's four heap types */
	int64_t comment[2];
};

/* ---- the string table ---------------------------------------------- */

/* Index of s in the string table (NULL: ""), added when new. */
static int64_t str_id(struct pp *p, const char *s)
{
	struct str_ent *e;
	if (!s)
		s = "";
	HASH_FIND(hh, p->strs, s, strlen(s), e);
	if (e)
		return e->idx;
	char *copy = xstrdup(s);
	e = xcalloc(1, sizeof(*e));
	e->idx = (int64_t)p->prof.n_string_table;
	PUSH(p->prof.string_table, p->prof.n_string_table, p->cap_str, copy);
	HASH_ADD_KEYPTR(hh, p->strs, copy, strlen(copy), e);
	return e->idx;
}

/* ---- mappings ------------------------------------------------------- */

static char *hex(const uint8_t *b, size_t n)
{
	char *s = xmalloc(2 * n + 1);
	for (size_t i = 0; i < n; i++)
		snprintf(s + 2 * i, 3, "%02x", b[i]);
	s[2 * n] = '\0';
	return s;
}

static PMapping *new_mapping(struct pp *p, const struct agg_map *am)
{
	PMapping *m = xmalloc(sizeof(*m));
	perftools__profiles__mapping__init(m);
	m->memory_start = am->start - am->bias;
	m->memory_limit = am->end - am->bias;
	m->file_offset = am->pgoff;
	char *path = printable_dup(am->path);
	m->filename = str_id(p, path);
	free(path);
	char *id = hex(am->build_id, am->build_id_len);
	m->build_id = str_id(p, id);
	free(id);
	PUSH(p->prof.mapping, p->prof.n_mapping, p->cap_map, m);
	m->id = p->prof.n_mapping;
	return m;
}

/*
 * The Mapping of an object: in ELF addresses (the bias taken off), where
 * every process loads it alike, so one Mapping holds its segments (one MAP
 * each) in all of them, grown to cover them.
 */
static PMapping *mapping_of(struct pp *p, uint32_t image, const struct agg_map *am)
{
	char *id = hex(am->build_id, am->build_id_len);
	char *key = xasprintf("%s %s", id, am->path);
	free(id);
	struct map_ent *e;
	HASH_FIND(hh, p->maps, key, strlen(key), e);
	if (e) {
		free(key);
		if (am->start - am->bias < e->m->memory_start) {
			e->m->memory_start = am->start - am->bias;
			e->m->file_offset = am->pgoff;
		}
		if (am->end - am->bias > e->m->memory_limit)
			e->m->memory_limit = am->end - am->bias;
		return e->m;
	}
	e = xcalloc(1, sizeof(*e));
	e->key = key;
	e->image = image;
	e->is_exe = strcmp(am->path, agg_image(p->c->agg, image)->exe) == 0;
	e->m = new_mapping(p, am);
	HASH_ADD_KEYPTR(hh, p->maps, e->key, strlen(e->key), e);
	return e->m;
}

static int cmp_map(const void *x, const void *y)
{
	const struct map_ent *a = *(const struct map_ent *const *)x;
	const struct map_ent *b = *(const struct map_ent *const *)y;
	if (a->image != b->image)
		return a->image < b->image ? -1 : 1;
	if (a->is_exe != b->is_exe)
		return a->is_exe ? -1 : 1;
	if (a->m->memory_start != b->m->memory_start)
		return a->m->memory_start < b->m->memory_start ? -1 : 1;
	return 0;
}

/* Mappings by image, its executable first; ids and locations follow. */
static void order_mappings(struct pp *p)
{
	size_t n = p->prof.n_mapping, i = 0;
	struct map_ent **v = xmalloc((n ? n : 1) * sizeof(*v));
	uint64_t *new_id = xcalloc(n + 1, sizeof(*new_id));
	for (struct map_ent *e = p->maps; e; e = e->hh.next)
		v[i++] = e;
	qsort(v, n, sizeof(*v), cmp_map);
	for (i = 0; i < n; i++) {
		new_id[v[i]->m->id] = i + 1;
		p->prof.mapping[i] = v[i]->m;
		v[i]->m->id = i + 1;
	}
	for (i = 0; i < p->prof.n_location; i++) {
		PLocation *l = p->prof.location[i];
		if (l->mapping_id)
			l->mapping_id = new_id[l->mapping_id];
	}
	free(new_id);
	free(v);
}

/* ---- functions and locations --------------------------------------- */

static uint64_t function_id(struct pp *p, const struct loc *l, const struct rsrc *src)
{
	struct fn_key key = { str_id(p, l->fn), str_id(p, l->raw), str_id(p, src->file) };
	struct fn_ent *e;
	HASH_FIND(hh, p->fns, &key, sizeof(key), e);
	if (e)
		return e->id;
	PFunction *f = xmalloc(sizeof(*f));
	perftools__profiles__function__init(f);
	f->name = key.name;
	f->system_name = key.system_name;
	f->filename = key.filename;
	PUSH(p->prof.function, p->prof.n_function, p->cap_fn, f);
	f->id = p->prof.n_function;
	e = xcalloc(1, sizeof(*e));
	e->key = key;
	e->id = f->id;
	HASH_ADD(hh, p->fns, key, sizeof(e->key), e);
	return e->id;
}

/* What a location's frames tell about its object (pprof's has_* flags). */
static void note_frame(struct pp *p, PMapping *m, const struct loc *l,
		       const struct rsrc *src)
{
	if (!m)
		return;
	if (l->named)
		m->has_functions = 1;
	if (src->file)
		m->has_filenames = 1;
	if (src->line)
		m->has_line_numbers = 1;
	if ((src->file || src->line) && p->c->opts->resolve.inline_frames)
		m->has_inline_frames = 1;
}

static PLocation *new_location(struct pp *p, const struct loc_key *k)
{
	const struct rframe *fr;
	const struct rsrc *src;
	uint32_t n = resolve_addr_src(p->c->res, k->image, k->gen, k->addr, k->is_return,
				      &fr, &src);
	/* The mapping resolve.h used: return addresses inside the call. */
	uint64_t at = k->is_return && k->addr > 0 ? k->addr - 1 : k->addr;
	const struct agg_map *am = agg_find_map(p->c->agg, k->image, k->gen, at);
	PMapping *m = am && !am->jit ? mapping_of(p, k->image, am) : NULL;

	PLocation *l = xmalloc(sizeof(*l));
	perftools__profiles__location__init(l);
	l->address = m ? k->addr - am->bias : k->addr;
	l->mapping_id = m ? m->id : 0;
	l->n_line = n;
	l->line = xcalloc(n ? n : 1, sizeof(*l->line));
	for (uint32_t i = 0; i < n; i++) {
		const struct loc *rl = resolver_loc(p->c->res, fr[i].loc);
		PLine *ln = xmalloc(sizeof(*ln));
		perftools__profiles__line__init(ln);
		ln->function_id = function_id(p, rl, &src[i]);
		ln->line = src[i].line;
		l->line[i] = ln;
		note_frame(p, m, rl, &src[i]);
	}
	PUSH(p->prof.location, p->prof.n_location, p->cap_loc, l);
	l->id = p->prof.n_location;
	return l;
}

static uint64_t location_id(struct pp *p, uint32_t image, uint32_t gen, uint64_t addr,
			    int is_return)
{
	struct loc_key key;
	memset(&key, 0, sizeof(key));   /* padding: the key is hashed whole */
	key.addr = addr;
	key.image = image;
	key.gen = gen;
	key.is_return = is_return ? 1u : 0u;
	struct loc_ent *e;
	HASH_FIND(hh, p->locs, &key, sizeof(key), e);
	if (e)
		return e->id;
	e = xcalloc(1, sizeof(*e));
	e->key = key;
	e->id = new_location(p, &key)->id;
	HASH_ADD(hh, p->locs, key, sizeof(e->key), e);
	return e->id;
}

/* ---- samples -------------------------------------------------------- */


static void add_label(struct pp *p, struct thr_ent *t, const char *key, const char *str,
		      int64_t num)
{
	if (str && !*str)
		return;
	PLabel *l = xmalloc(sizeof(*l));
	perftools__profiles__label__init(l);
	l->key = str_id(p, key);
	if (str)
		l->str = str_id(p, str);
	else
		l->num = num;
	t->v[t->n++] = l;
}

static struct thr_ent *thread_labels(struct pp *p, uint32_t image, uint32_t tid)
{
	struct thr_key key = { image, tid };
	struct thr_ent *t;
	HASH_FIND(hh, p->threads, &key, sizeof(key), t);
	if (t)
		return t;
	const struct agg_image *im = agg_image(p->c->agg, image);
	t = xcalloc(1, sizeof(*t));
	t->key = key;
	add_label(p, t, "pid", NULL, im->pid);
	add_label(p, t, "tid", NULL, tid);
	add_label(p, t, "thread", report_thread_name(p->c->agg, image, tid), 0);
	add_label(p, t, "comm", im->comm, 0);
	add_label(p, t, "exe", im->exe, 0);
	HASH_ADD(hh, p->threads, key, sizeof(t->key), t);
	return t;
}

static int64_t clamp64(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

static void add_sample(struct pp *p, const struct agg_count *k)
{
	uint32_t n;
	const uint64_t *frames = agg_stack(p->c->agg, k->stack, &n);
	if (n > PROBE_MAX_FRAMES)
		n = PROBE_MAX_FRAMES;
	PSample *s = xmalloc(sizeof(*s));
	perftools__profiles__sample__init(s);
	uint32_t hidden = 0;
	for (uint32_t i = 0; i < n; i++)
		hidden += (uint32_t)resolve_hidden(p->c->res, k->image, k->gen, frames[i],
					   resolve_is_return(frames, i));
	s->location_id = xcalloc(n ? n : 1, sizeof(*s->location_id));
	for (uint32_t i = 0; i < n; i++) {
		/* libprobe's frames (resolve.h), unless there is nothing else. */
		if (hidden < n && resolve_hidden(p->c->res, k->image, k->gen, frames[i],
						  resolve_is_return(frames, i)))
			continue;
		s->location_id[s->n_location_id++] =
			location_id(p, k->image, k->gen, frames[i],
					   resolve_is_return(frames, i));
	}
	s->n_value = p->wall || p->heap ? 4 : 2;
	s->value = xcalloc(s->n_value, sizeof(*s->value));
	s->value[0] = clamp64(k->samples);
	s->value[1] = clamp64(k->weight);
	if (p->heap) {          /* Go's: objects and bytes, allocated and in use */
		s->value[0] = clamp64((uint64_t)(k->objects + 0.5));
		s->value[2] = clamp64((uint64_t)(k->inuse_objects + 0.5));
		s->value[3] = clamp64(k->inuse_weight);
	}
	if (p->wall)            /* cpu, off-cpu: one of them */
		s->value[n > 0 && frames[0] == AGG_FRAME_OFFCPU ? 3 : 2] =
			clamp64(k->weight);
	struct thr_ent *t = thread_labels(p, k->image, k->tid);
	s->n_label = t->n;
	s->label = t->v;
	PUSH(p->prof.sample, p->prof.n_sample, p->cap_sample, s);
}

/* ---- the profile's header ------------------------------------------ */

static int is_clock(const struct agg_image *im)
{
	return im->event_type == PROBE_EVENT_TIMER || strcmp(im->event_name, "cpu-clock") == 0 ||
	       strcmp(im->event_name, "task-clock") == 0;
}

/* The first image that said what it sampled, or NULL. */
static const struct agg_image *first_hello(const struct agg *a)
{
	for (size_t i = 0; i < agg_nimages(a); i++)
		if (agg_image(a, (uint32_t)i)->have_hello)
			return agg_image(a, (uint32_t)i);
	return NULL;
}

/* Whether two images' weights are of one kind (CPU time, or one event). */
static int same_weight(const struct agg_image *a, const struct agg_image *b)
{
	if (is_clock(a) || is_clock(b))
		return is_clock(a) && is_clock(b);
	return strcmp(a->event_name, b->event_name) == 0;
}

/* One column holds every weight: say so when processes sampled apart. */
static void check_events(const struct report_ctx *c, const struct agg_image *ev)
{
	for (size_t i = 0; i < agg_nimages(c->agg); i++) {
		const struct agg_image *im = agg_image(c->agg, (uint32_t)i);
		if (!im->have_hello || same_weight(im, ev))
			continue;
		char *f = printable_dup(c->opts->file);
		probe_warn("%s: processes sampled different events (%s, %s); the pprof profile "
			   "adds their weights up in one column, named after %s: compare "
			   "its samples, not its weights", f, ev->event_name, im->event_name,
			   ev->event_name);
		free(f);
		return;
	}
}

/* The sampling period, in the weight's unit (0: not known). */
static int64_t period_of(const struct report_ctx *c, const struct agg_image *ev)
{
	const struct agg_totals *t = agg_totals(c->agg);
	if (!ev->freq)
		return clamp64(ev->value);
	/* A clock: the period achieved (the CPU-time timers fire on the
	 * tick, far below the rate asked), else the one asked. */
	double hz = report_achieved_hz(c->agg, ev);
	if (hz > 0)
		return (int64_t)(NS_PER_S / hz + 0.5);
	if (is_clock(ev) && ev->value)
		return (int64_t)((NS_PER_S + ev->value / 2) / ev->value);
	/* -F on a counting event: the kernel varies the period; its mean. */
	return t->samples && !c->weight_saturated ? clamp64(t->weight / t->samples) : 0;
}

/*
 * --alloc: as Go's heap profile (runtime/pprof), so that pprof, Pyroscope
 * and Parca read it as one: alloc_objects/count, alloc_space/bytes,
 * inuse_objects/count, inuse_space/bytes (the default, as Go's), period
 * space/bytes of the mean sampling interval.
 */
static void set_heap_types(struct pp *p, const struct agg_image *ev)
{
	const char *t[4][2] = { { "alloc_objects", "count" }, { "alloc_space", "bytes" },
				{ "inuse_objects", "count" }, { "inuse_space", "bytes" } };

	for (int i = 0; i < 4; i++) {
		perftools__profiles__value_type__init(&p->types[i]);
		p->types[i].type = str_id(p, t[i][0]);
		p->types[i].unit = str_id(p, t[i][1]);
	}
	perftools__profiles__value_type__init(&p->period_type);
	p->period_type.type = str_id(p, "space");
	p->period_type.unit = str_id(p, "bytes");
	p->prof.period_type = &p->period_type;
	p->prof.period = ev ? clamp64(ev->alloc_every) : 0;
	p->prof.default_sample_type = p->types[p->c->opts->alloc_default ? 1 : 3].type;
}

static void set_types(struct pp *p)
{
	const struct agg_image *ev = first_hello(p->c->agg);
	if (p->heap) {
		set_heap_types(p, ev);
		return;
	}
	const char *type = "events", *unit = "count";
	if (ev && is_clock(ev)) {
		type = "cpu";
		unit = "nanoseconds";
	} else if (ev && ev->event_name[0]) {
		type = ev->event_name;
	}
	if (ev)
		check_events(p->c, ev);
	perftools__profiles__value_type__init(&p->types[0]);
	perftools__profiles__value_type__init(&p->types[1]);
	p->types[0].type = str_id(p, "samples");
	p->types[0].unit = str_id(p, "count");
	p->types[1].type = str_id(p, type);
	p->types[1].unit = str_id(p, unit);
	p->period_type = p->types[1];
	p->prof.period_type = &p->period_type;
	p->prof.period = ev ? period_of(p->c, ev) : 0;
	if (p->c->by_samples)
		p->prof.default_sample_type = p->types[0].type;
	if (!p->wall)
		return;
	const char *more[3][2] = { { "wall", "nanoseconds" }, { "cpu", "nanoseconds" },
				   { "off-cpu", "nanoseconds" } };
	for (int i = 0; i < 3; i++) {
		perftools__profiles__value_type__init(&p->types[1 + i]);
		p->types[1 + i].type = str_id(p, more[i][0]);
		p->types[1 + i].unit = str_id(p, more[i][1]);
	}
	p->period_type = p->types[1];
	if (!p->c->by_samples)
		p->prof.default_sample_type = p->types[1].type;
}

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * NS_PER_S + (uint64_t)ts->tv_nsec;
}

/* When the recording was last written (ns since the epoch): -1 if not a file. */
static int recording_mtime(const char *file, uint64_t *ns)
{
	struct stat st;
	int r = strcmp(file, "-") == 0 ? fstat(STDIN_FILENO, &st) : stat(file, &st);
	if (r < 0 || !S_ISREG(st.st_mode) || st.st_mtim.tv_sec < 0)
		return -1;
	*ns = ts_ns(&st.st_mtim);
	return 0;
}

/*
 * time_nanos is wall-clock time, but a recording has only the CLOCK_MONOTONIC
 * times of the machine it was made on.  On that machine, in the same boot,
 * CLOCK_REALTIME - CLOCK_MONOTONIC now converts them (exactly, unless the
 * clock was set since).  It is taken when it puts the last sample no later
 * than 1 s after the recording's mtime (its last write: the end of the
 * recording) and no earlier than 60 s before it; a later boot puts it after,
 * another machine anywhere.  Otherwise the first sample is at mtime minus
 * the samples' duration.  Read from a pipe (no mtime), the conversion is
 * taken if this boot has lasted long enough, else now minus the duration.
 */
static uint64_t profile_start(const struct report_ctx *c, uint64_t first, uint64_t last)
{
	struct timespec rt, mono;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	uint64_t now = ts_ns(&rt), up = ts_ns(&mono), written;
	uint64_t boot = now > up ? now - up : 0;
	/* Times past 2^62 ns (146 years) are forged: no sum below overflows. */
	if (last >= 1ull << 62)
		return now;
	uint64_t end = boot + last;
	if (recording_mtime(c->opts->file, &written) == 0) {
		if (end <= written + NS_PER_S && end + 60 * NS_PER_S >= written)
			return boot + first;
		return written > last - first ? written - (last - first) : 0;
	}
	if (last <= up)
		return boot + first;
	return now > last - first ? now - (last - first) : 0;
}

static void set_times(struct pp *p)
{
	const struct agg_totals *t = agg_totals(p->c->agg);
	uint64_t first = 0, last = 0;
	if (t->samples && t->t_max >= t->t_min) {
		first = t->t_min;
		last = t->t_max;
	}
	const struct report_opts *o = p->c->opts;
	if (o->window_ns) {
		/* probe agent: the window asked for, not its first and last sample. */
		p->prof.time_nanos = clamp64(o->start_real_ns);
		p->prof.duration_nanos = clamp64(o->window_ns);
		return;
	}
	p->prof.time_nanos = clamp64(profile_start(p->c, first, last));
	p->prof.duration_nanos = clamp64(last - first);
}

/*
 * "lost: ..." and "dropped: ..." (the memory bound, aggregate.h) as
 * comments (pprof -comments), when anything was.
 */
static void set_comment(struct pp *p)
{
	const struct agg_totals *t = agg_totals(p->c->agg);
	char text[512];
	int any = 0;
	for (int i = 0; i < PROBE_LOST_REASON_MAX; i++)
		any |= t->lost[i] != 0;
	p->prof.comment = p->comment;
	if (any) {
		lost_text(t->lost, text, sizeof(text));
		p->comment[p->prof.n_comment++] = str_id(p, text);
	}
	if (agg_dropped_text(p->c->agg, text, sizeof(text)))
		p->comment[p->prof.n_comment++] = str_id(p, text);
}

/* ---- gzip ----------------------------------------------------------- */

struct gz {
	ProtobufCBuffer base;   /* first: protobuf-c hands us &base */
	z_stream z;
	FILE *out;
	int failed;             /* zlib or the write failed: stop */
	int zerr;               /* zlib's error, or Z_OK */
	uint8_t buf[64 * 1024];
};

/* Compress what is in g->z (and finish the stream with Z_FINISH). */
static void gz_deflate(struct gz *g, int flush)
{
	int r;
	do {
		g->z.next_out = g->buf;
		g->z.avail_out = sizeof(g->buf);
		r = deflate(&g->z, flush);
		if (r == Z_STREAM_ERROR) {
			g->zerr = r;
			g->failed = 1;
			return;
		}
		size_t have = sizeof(g->buf) - g->z.avail_out;
		if (fwrite(g->buf, 1, have, g->out) != have) {
			g->failed = 1;  /* outfile_close() says why */
			return;
		}
	} while (g->z.avail_out == 0 || (flush == Z_FINISH && r != Z_STREAM_END));
}

static void gz_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	struct gz *g = (struct gz *)b;
	while (len > 0 && !g->failed) {
		uInt n = len > (1u << 30) ? 1u << 30 : (uInt)len;
		g->z.next_in = data;
		g->z.avail_in = n;
		gz_deflate(g, Z_NO_FLUSH);
		data += n;
		len -= n;
	}
}

int pprof_gzip(const PProfile *prof, FILE *out)
{
	struct gz *g = xcalloc(1, sizeof(*g));
	g->base.append = gz_append;
	g->out = out;
	/* 15 + 16: a gzip header and trailer around the deflate stream. */
	int r = deflateInit2(&g->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			     Z_DEFAULT_STRATEGY);
	if (r == Z_OK) {
		perftools__profiles__profile__pack_to_buffer(prof, &g->base);
		if (!g->failed)
			gz_deflate(g, Z_FINISH);
		deflateEnd(&g->z);
		r = g->zerr;
	}
	free(g);
	if (r != Z_OK) {
		probe_err("cannot compress the pprof profile: zlib: %s (zlib %s)",
			  r == Z_MEM_ERROR ? "out of memory" : "internal error", zlibVersion());
		return -1;
	}
	return 0;
}

/* ---- the whole ------------------------------------------------------ */

static void free_messages(struct pp *p)
{
	PProfile *f = &p->prof;
	for (size_t i = 0; i < f->n_sample; i++) {
		free(f->sample[i]->location_id);
		free(f->sample[i]->value);
		free(f->sample[i]);
	}
	for (size_t i = 0; i < f->n_location; i++) {
		for (size_t j = 0; j < f->location[i]->n_line; j++)
			free(f->location[i]->line[j]);
		free(f->location[i]->line);
		free(f->location[i]);
	}
	for (size_t i = 0; i < f->n_function; i++)
		free(f->function[i]);
	for (size_t i = 0; i < f->n_mapping; i++)
		free(f->mapping[i]);
	for (size_t i = 0; i < f->n_string_table; i++)
		free(f->string_table[i]);
	free(f->sample);
	free(f->location);
	free(f->function);
	free(f->mapping);
	free(f->string_table);
}

static void free_tables(struct pp *p)
{
#define FREE_TABLE(head, type) do {					\
	struct type *e_, *t_;						\
	HASH_ITER(hh, (head), e_, t_) {					\
		HASH_DEL((head), e_);					\
		free(e_);						\
	}								\
} while (0)
	for (struct map_ent *e = p->maps; e; e = e->hh.next)
		free(e->key);
	for (struct thr_ent *e = p->threads; e; e = e->hh.next)
		for (size_t i = 0; i < e->n; i++)
			free(e->v[i]);
	FREE_TABLE(p->strs, str_ent);
	FREE_TABLE(p->maps, map_ent);
	FREE_TABLE(p->locs, loc_ent);
	FREE_TABLE(p->fns, fn_ent);
	FREE_TABLE(p->threads, thr_ent);
#undef FREE_TABLE
}

int report_pprof(const struct report_ctx *c, FILE *out)
{
	struct pp p;
	memset(&p, 0, sizeof(p));
	p.c = c;
	perftools__profiles__profile__init(&p.prof);
	str_id(&p, "");         /* string_table[0] must be "" */
	p.wall = agg_wall(c->agg);
	p.heap = agg_bytes(c->agg) && !agg_inuse_shown(c->agg);
	set_types(&p);
	PValueType *types[4] = { &p.types[0], &p.types[1], &p.types[2], &p.types[3] };
	p.prof.sample_type = types;
	p.prof.n_sample_type = p.wall || p.heap ? 4 : 2;
	set_times(&p);
	set_comment(&p);
	const struct agg_count *counts = agg_counts(c->agg);
	for (size_t i = 0; i < agg_ncounts(c->agg); i++)
		add_sample(&p, &counts[i]);
	order_mappings(&p);
	int rc = pprof_gzip(&p.prof, out);
	p.prof.sample_type = NULL;      /* on the stack */
	free_messages(&p);
	free_tables(&p);
	return rc;
}
