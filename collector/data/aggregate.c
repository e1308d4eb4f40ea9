/* aggregate.c - see aggregate.h: the tables, filled frame by frame, and finished.
 * Beside it: agg_bound.c (the memory bound), agg_inuse.c (what stays in use),
 * agg_samples.c (samples one by one, and the filters); agg_int.h what they share. */
#include "data/agg_int.h"
#include "data/aggregate.h"
#include "interval.h"

#include <inttypes.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "hashtab.h"
#include "data/inuse.h"
#include "util.h"


struct agg *agg_new(void)
{
	struct agg *a = xcalloc(1, sizeof(*a));
	a->t.t_min = UINT64_MAX;
	/* Addresses are the input's: where they land in the table must not be. */
	if (getrandom(&a->seed, sizeof(a->seed), GRND_NONBLOCK) != sizeof(a->seed))
		a->seed = now_ns() ^ (uint64_t)(uintptr_t)a;
	return a;
}

static void image_free(struct agg_image *im)
{
	for (size_t i = 0; i < im->nmaps; i++)
		free(im->maps[i].path);
	free(im->maps);
	free(im->spare);
	free(im->maxend);
	free(im->exe);
	free(im->comm);
	free(im->args);
	free(im->name);
	free(im->event_name);
}

void agg_free(struct agg *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nimages; i++)
		image_free(&a->images[i]);
	free(a->images);
	for (size_t i = 0; i < a->nevents; i++)
		free(a->events[i].name);
	free(a->event_sel);
	struct pid_ent *p, *pt;
	HASH_ITER(hh, a->pids, p, pt) {
		HASH_DEL(a->pids, p);
		free(p);
	}
	struct thread_ent *th, *tt;
	HASH_ITER(hh, a->threads, th, tt) {
		HASH_DEL(a->threads, th);
		free(th->name);
		free(th);
	}
	struct tidset_ent *ts, *tst;
	HASH_ITER(hh, a->tidset, ts, tst) {
		HASH_DEL(a->tidset, ts);
		free(ts);
	}
	HASH_CLEAR(hh, a->stacks);
	free(a->enc);
	free(a->enc_bytes);
	free(a->refs);
	aggi_free_symtabs(a);
	for (size_t i = 0; i < a->nstacks; i++)
		free(a->stack_vec[i]);
	free(a->stack_vec);
	struct count_ent *c, *ct;
	HASH_ITER(hh, a->counts, c, ct) {
		HASH_DEL(a->counts, c);
		free(c);
	}
	free(a->count_vec);
	inuse_free(a->inuse);
	free(a->samples);
	free(a->addrs);
	free(a->info.host);
	free(a->info.sysname);
	free(a->info.release);
	free(a->info.version);
	free(a->info.machine);
	free(a->info.cmdline);
	free(a);
}

/* Take n bytes of the bound; 0 (nothing taken) when they do not fit. */
int aggi_room(struct agg *a, size_t n)
{
	if (a->limit && (a->cost > a->limit || n > a->limit - a->cost))
		return 0;
	a->cost += n;
	return 1;
}

static size_t str_cost(const char *s)
{
	return (s ? strlen(s) : 0) + 1 + CHUNK;
}

/* A new image of pid, or NO_IMAGE when it does not fit (extra: its strings). */
static uint32_t new_image(struct agg *a, uint32_t pid, size_t extra)
{
	struct pid_ent *p;
	HASH_FIND(hh, a->pids, &pid, sizeof(pid), p);
	size_t cost = 2 * sizeof(struct agg_image) + 5 * (CHUNK + 16) + extra +
		      (p ? 0 : sizeof(*p) + CHUNK);
	if (!aggi_room(a, cost))
		return NO_IMAGE;
	a->images = xgrow(a->images, &a->images_cap, a->nimages + 1, sizeof(*a->images));
	struct agg_image *im = &a->images[a->nimages];
	memset(im, 0, sizeof(*im));
	im->pid = pid;
	im->exe = xstrdup("");
	im->comm = xstrdup("");
	im->args = xstrdup("");
	im->name = xasprintf("[pid %u]", pid);
	im->event_name = xstrdup("");
	im->exit_status = -1;
	im->shown = a->event_sel ? -1 : 0;
	im->offcpu = -1;
	im->alloc = -1;
	if (!p) {
		p = xcalloc(1, sizeof(*p));
		p->pid = pid;
		HASH_ADD(hh, a->pids, pid, sizeof(p->pid), p);
		a->t.processes++;
	}
	p->image = (uint32_t)a->nimages;
	return (uint32_t)a->nimages++;
}

/*
 * The image frames of this pid belong to; a placeholder if no HELLO yet.
 * NO_IMAGE: none fits, or its HELLO did not (its frames are dropped).
 */
static uint32_t image_of(struct agg *a, uint32_t pid)
{
	struct pid_ent *p;
	HASH_FIND(hh, a->pids, &pid, sizeof(pid), p);
	if (p)
		return p->image;
	uint32_t img = new_image(a, pid, 0);
	if (img != NO_IMAGE)
		a->t.frames_orphan++;
	return img;
}

void aggi_note_thread(struct agg *a, uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)pid << 32 | tid;
	struct tidset_ent *e;
	HASH_FIND(hh, a->tidset, &key, sizeof(key), e);
	if (e || !aggi_room(a, sizeof(*e) + CHUNK))
		return;         /* the count of threads is all that is missed */
	e = xcalloc(1, sizeof(*e));
	e->key = key;
	HASH_ADD(hh, a->tidset, key, sizeof(e->key), e);
	a->t.threads++;
}

/* argv joined by spaces, printable, at most about 4 KiB. */
static char *join_args(const char **argv, unsigned argc)
{
	size_t cap = 4096, n = 0;
	char *buf = xmalloc(cap + 1);
	buf[0] = '\0';
	for (unsigned i = 0; i < argc && n < cap; i++) {
		size_t l = strlen(argv[i]);
		if (i)
			buf[n++] = ' ';
		if (l > cap - n)
			l = cap - n;
		memcpy(buf + n, argv[i], l);
		n += l;
		buf[n] = '\0';
	}
	char *p = printable_dup(buf);
	free(buf);
	return p;
}

static void add_info(struct agg *a, const struct probe_msg *m)
{
	struct agg_info *in = &a->info;
	if (in->have)
		return;         /* the first one is the recording's */
	in->have = 1;
	in->start_ns = m->u.info.start_ns;
	in->start_real_ns = m->u.info.start_real_ns;
	in->host = printable_dup(m->u.info.host);
	in->sysname = printable_dup(m->u.info.sysname);
	in->release = printable_dup(m->u.info.release);
	in->version = printable_dup(m->u.info.version);
	in->machine = printable_dup(m->u.info.machine);
	in->cmdline = join_args(m->u.info.argv, m->u.info.argc);
}

const struct agg_info *agg_info(const struct agg *a)
{
	return &a->info;
}

/* The number of event name in a->events (a new one when there is room). */
static uint8_t event_id(struct agg *a, const char *name)
{
	size_t i;
	for (i = 0; i < a->nevents; i++)
		if (strcmp(a->events[i].name, name) == 0)
			return (uint8_t)i;
	if (i == AGG_EVENTS_MAX)
		return AGG_EVENTS_MAX;          /* counted as none */
	a->events[i].name = xstrdup(name);
	a->nevents++;
	return (uint8_t)i;
}

/* im's events from its HELLO; the one shown is the selected one. */
static void hello_events(struct agg *a, struct agg_image *im, const struct probe_msg *m)
{
	const char *name = m->u.hello.event_name ? m->u.hello.event_name : "";
	uint32_t type = m->u.hello.event_type;
	im->nev = (uint8_t)(1 + m->u.hello.nextra);
	im->shown = a->event_sel ? -1 : 0;
	if (type == PROBE_EVENT_ALLOC) {        /* --alloc alone: the first */
		im->alloc = 0;
		im->alloc_every = m->u.hello.event_config;
	}
	for (unsigned i = 0; i < im->nev; i++) {
		const char *n = i ? m->u.hello.extra[i - 1].name : name;
		char *pn = printable_dup(n ? n : "");
		im->ev[i] = event_id(a, pn);
		if (i && m->u.hello.extra[i - 1].type == PROBE_EVENT_OFFCPU) {
			im->offcpu = (int)i;
			im->offcpu_how = m->u.hello.extra[i - 1].config;
		}
		if (i && m->u.hello.extra[i - 1].type == PROBE_EVENT_ALLOC) {
			im->alloc = (int)i;
			im->alloc_every = m->u.hello.extra[i - 1].config;
		}
		if (a->event_sel && im->shown < 0 && strcmp(pn, a->event_sel) == 0) {
			im->shown = (int)i;
			if (i) {
				name = n;
				type = m->u.hello.extra[i - 1].type;
			}
		}
		free(pn);
	}
	im->event_name = printable_dup(name);
	im->event_type = type;
	if (im->offcpu >= 0 && (!a->event_sel || im->shown == im->offcpu))
		a->wall = 1;
	if (im->alloc >= 0) {
		/* "inuse": the same samples, less those freed (inuse.h). */
		a->inuse_ev = event_id(a, "inuse");
		if (a->event_sel && strcmp(a->event_sel, "inuse") == 0) {
			im->shown = im->alloc;
			a->inuse_shown = 1;
		}
	}
	if (im->alloc >= 0 && im->shown == im->alloc)
		a->bytes = 1;
}

int agg_bytes(const struct agg *a)
{
	return a->bytes;
}

int agg_wall(const struct agg *a)
{
	return a->wall;
}

void agg_select_event(struct agg *a, const char *name)
{
	free(a->event_sel);
	a->event_sel = name ? xstrdup(name) : NULL;
}

size_t agg_nevents(const struct agg *a)
{
	return a->nevents;
}

const struct agg_event *agg_events(const struct agg *a)
{
	return a->events;
}

/* Is a sample of event index ev of image img one of those counted? */
int aggi_event_shown(struct agg *a, uint32_t img, uint32_t ev, uint64_t weight)
{
	const struct agg_image *im = &a->images[img];
	uint8_t id = ev < im->nev ? im->ev[ev] : AGG_EVENTS_MAX;
	if (id < a->nevents) {
		a->events[id].samples++;
		a->events[id].weight = sat_add(a->events[id].weight, weight);
	}
	int shown = (int64_t)ev == im->shown ||
		    (!a->event_sel && im->offcpu >= 0 && (int64_t)ev == im->offcpu);
	if (!shown)
		a->t.other_events++;
	return shown;
}

/* What a HELLO's strings will take (join_args keeps 4 KiB of argv). */
static size_t hello_cost(const struct probe_msg *m)
{
	size_t args = 0;
	for (unsigned i = 0; i < m->u.hello.argc && args < 4096; i++)
		args += strlen(m->u.hello.argv[i]) + 1;
	return 2 * str_cost(m->u.hello.exe) + str_cost(m->u.hello.comm) +
	       str_cost(m->u.hello.event_name) + (args < 4096 ? args : 4096) + 2 * CHUNK;
}

static void add_hello(struct agg *a, const struct probe_msg *m)
{
	uint32_t img;
	struct pid_ent *p;
	HASH_FIND(hh, a->pids, &m->pid, sizeof(m->pid), p);
	size_t cost = hello_cost(m);
	/* A placeholder made by earlier frames becomes this image. */
	if (p && p->image != NO_IMAGE && !a->images[p->image].have_hello &&
	    a->images[p->image].nmaps == 0)
		img = aggi_room(a, cost) ? p->image : NO_IMAGE;
	else
		img = new_image(a, m->pid, cost);
	if (img == NO_IMAGE) {
		/* Not the earlier image's either, nor a placeholder's: dropped. */
		a->t.frames_dropped++;
		if (!p && aggi_room(a, sizeof(*p) + CHUNK)) {
			p = xcalloc(1, sizeof(*p));
			p->pid = m->pid;
			HASH_ADD(hh, a->pids, pid, sizeof(p->pid), p);
			a->t.processes++;
		}
		if (p)
			p->image = NO_IMAGE;
		return;
	}
	struct agg_image *im = &a->images[img];
	im->have_hello = 1;
	im->ppid = m->u.hello.ppid;
	free(im->exe);
	free(im->comm);
	free(im->name);
	free(im->event_name);
	im->exe = printable_dup(m->u.hello.exe ? m->u.hello.exe : "");
	im->comm = printable_dup(m->u.hello.comm ? m->u.hello.comm : "");
	free(im->args);
	im->args = join_args(m->u.hello.argv, m->u.hello.argc);
	hello_events(a, im, m);
	if (im->exe[0])
		im->name = xstrdup(path_basename(im->exe));
	else if (im->comm[0])
		im->name = xstrdup(im->comm);
	else
		im->name = xasprintf("[pid %u]", m->pid);
	im->freq = m->u.hello.freq;
	im->value = m->u.hello.value;
	im->hello_flags = m->u.hello.flags;
	aggi_note_thread(a, m->pid, m->pid);
}

static int same_object(const struct agg_map *x, const struct agg_map *y)
{
	return x->start == y->start && x->end == y->end && x->bias == y->bias &&
	       x->pgoff == y->pgoff && x->build_id_len == y->build_id_len &&
	       memcmp(x->build_id, y->build_id, x->build_id_len) == 0 &&
	       x->jit == y->jit && strcmp(x->path, y->path) == 0;
}

/*
 * A MAP that overlaps a different mapping of the image starts a new
 * generation: samples that came before it keep resolving against what was
 * mapped then (agg_find_map).  The same mapping announced again (an object
 * unloaded and loaded again at the same place) changes nothing.
 */
static int cmp_map(const void *x, const void *y);
static void add_mapping(struct agg *a, uint32_t pid, const struct agg_map *nm);

/*
 * The newest mapping of im that overlaps [start, end), or NULL.  The maps
 * that came since the last sort are newer than the sorted ones: looked at
 * first, newest first; then the sorted ones through maxend, as
 * agg_find_map does.  Linear only in what came since the last sort.
 */
static const struct agg_map *newest_overlap(const struct agg_image *im,
					    uint64_t start, uint64_t end)
{
	const struct agg_map *best = NULL;
	for (size_t i = im->nmaps; i-- > im->nsorted;)
		if (im->maps[i].start < end && start < im->maps[i].end)
			return &im->maps[i];
	size_t hi = interval_upper(im->maps, im->nsorted, sizeof(im->maps[0]),
				   offsetof(struct agg_map, start), end - 1);
	for (size_t i = hi; i-- > 0 && im->maxend[i] > start;) {
		const struct agg_map *mp = &im->maps[i];
		if (mp->end > start && (!best || mp->seq > best->seq))
			best = mp;
	}
	return best;
}

/*
 * Sort the maps that came since the last sort into the sorted ones (a
 * merge: linear) once there are about sqrt(n) of them, so that a recording
 * of many MAPs costs n sqrt(n), not n^2 (160,000 MAPs took 20 s).
 */
static void merge_tail(struct agg_image *im)
{
	size_t n = im->nmaps, s = im->nsorted, t = n - s;
	size_t want = 256;
	while (want * want < s)
		want *= 2;
	if (t < want)
		return;
	qsort(im->maps + s, t, sizeof(*im->maps), cmp_map);
	/* Into the other buffer, then swap: no copy back, no new pages. */
	if (im->spare_cap < im->maps_cap) {
		free(im->spare);
		im->spare = xmalloc(im->maps_cap * sizeof(*im->spare));
		im->spare_cap = im->maps_cap;
	}
	struct agg_map *out = im->spare;
	size_t i = 0, j = s, k = 0;
	while (i < s && j < n)
		out[k++] = cmp_map(&im->maps[j], &im->maps[i]) < 0 ? im->maps[j++] : im->maps[i++];
	while (i < s)
		out[k++] = im->maps[i++];
	while (j < n)
		out[k++] = im->maps[j++];
	im->spare = im->maps;
	im->maps = out;
	size_t cap = im->spare_cap;
	im->spare_cap = im->maps_cap;
	im->maps_cap = cap;
	im->maxend = xrealloc(im->maxend, n * sizeof(uint64_t));
	interval_maxend(im->maps, n, sizeof(*im->maps), offsetof(struct agg_map, end),
			im->maxend);
	im->nsorted = n;
}

static void add_map(struct agg *a, const struct probe_msg *m)
{
	struct agg_map nm = { 0 };
	nm.start = m->u.map.start;
	nm.end = m->u.map.end;
	nm.bias = m->u.map.bias;
	nm.pgoff = m->u.map.pgoff;
	nm.build_id_len = m->u.map.build_id_len;
	if (nm.build_id_len > PROBE_BUILD_ID_MAX)
		nm.build_id_len = PROBE_BUILD_ID_MAX;
	memcpy(nm.build_id, m->u.map.build_id, nm.build_id_len);
	nm.path = (char *)(m->u.map.path ? m->u.map.path : "");
	add_mapping(a, m->pid, &nm);
}

/* A JIT frame: a mapping of its own, named (aggregate.h). */
static void add_jit(struct agg *a, const struct probe_msg *m)
{
	struct agg_map nm = { 0 };
	nm.start = m->u.jit.start;
	nm.end = m->u.jit.start + m->u.jit.size;
	nm.jit = m->u.jit.source ? m->u.jit.source : 1;
	nm.path = (char *)m->u.jit.name;
	add_mapping(a, m->pid, &nm);
}

static void add_mapping(struct agg *a, uint32_t pid, const struct agg_map *mp_in)
{
	uint32_t img = image_of(a, pid);  /* may move a->images */
	if (img == NO_IMAGE) {
		a->t.frames_dropped++;
		return;
	}
	struct agg_image *im = &a->images[img];
	struct agg_map nm = *mp_in;
	/* The newest mapping that overlaps: is this one just repeated? */
	const struct agg_map *o = newest_overlap(im, nm.start, nm.end);
	if (o && same_object(o, &nm))
		return;
	/* An object's own names win over a JIT's for its code, as in perf. */
	if (o && nm.jit && !o->jit)
		return;
	/* Itself, merge_tail's other buffer, maxend, its path. */
	if (!aggi_room(a, 2 * sizeof(nm) + sizeof(uint64_t) + str_cost(nm.path))) {
		a->t.frames_dropped++;
		return;
	}
	if (o)
		im->gen++;
	im->maps = xgrow(im->maps, &im->maps_cap, im->nmaps + 1, sizeof(*im->maps));
	struct agg_map *mp = &im->maps[im->nmaps++];
	*mp = nm;
	mp->seq = a->map_seq++;
	mp->gen = im->gen;
	mp->path = xstrdup(nm.path);
	merge_tail(im);
}

static void add_thread(struct agg *a, const struct probe_msg *m)
{
	struct thread_key key = { image_of(a, m->pid), m->u.thread.tid };
	struct thread_ent *t = NULL;
	if (key.image != NO_IMAGE)
		HASH_FIND(hh, a->threads, &key, sizeof(key), t);
	/* A new name in place of the old one: what it takes more. */
	size_t was = t ? str_cost(t->name) : 0;
	size_t cost = str_cost(m->u.thread.name) + (t ? 0 : sizeof(*t) + CHUNK);
	if (key.image == NO_IMAGE || (cost > was && !aggi_room(a, cost - was))) {
		a->t.frames_dropped++;
		return;
	}
	if (cost <= was)
		a->cost -= was - cost;
	if (!t) {
		t = xcalloc(1, sizeof(*t));
		t->key = key;
		HASH_ADD(hh, a->threads, key, sizeof(t->key), t);
	}
	free(t->name);
	/* The latest name wins: threads are often renamed after they start. */
	t->name = printable_dup(m->u.thread.name ? m->u.thread.name : "");
	aggi_note_thread(a, m->pid, m->u.thread.tid);
}

/* The id of the stack frames[0..n), NO_STACK when a new one does not fit. */
static uint32_t intern_stack(struct agg *a, const uint64_t *frames, uint32_t n)
{
	struct stack_ent *s;
	size_t bytes = (size_t)n * sizeof(uint64_t);
	HASH_FIND(hh, a->stacks, frames, bytes, s);
	if (s)
		return s->id;
	/* Itself, its place in stack_vec (doubling) and in the hash's buckets. */
	if (!aggi_room(a, sizeof(*s) + bytes + CHUNK + 2 * sizeof(s) + 16))
		return NO_STACK;
	s = xmalloc(sizeof(*s) + bytes);
	memset(&s->hh, 0, sizeof(s->hh));
	s->id = (uint32_t)a->nstacks;
	s->nframes = n;
	for (uint32_t i = 0; i < n; i++)
		s->frames[i] = frames[i];
	HASH_ADD_KEYPTR(hh, a->stacks, s->frames, bytes, s);
	a->stack_vec = xgrow(a->stack_vec, &a->stacks_cap, a->nstacks + 1,
			     sizeof(*a->stack_vec));
	a->stack_vec[a->nstacks++] = s;
	return s->id;
}

static void enc_grow(struct agg *a)
{
	size_t ncap = a->enc ? 2 * (a->enc_mask + 1) : 4096;
	struct enc_slot *n = xcalloc(ncap, sizeof(*n));
	for (size_t i = 0; a->enc && i <= a->enc_mask; i++) {
		if (!a->enc[i].len)
			continue;
		size_t j = a->enc[i].hash & (ncap - 1);
		while (n[j].len)
			j = (j + 1) & (ncap - 1);
		n[j] = a->enc[i];
	}
	free(a->enc);
	a->enc = n;
	a->enc_mask = ncap - 1;
}

/*
 * The slot of a sample's encoded stack, made (and the stack decoded) when
 * new; NULL when a new one does not fit the bound.
 */
struct enc_slot *aggi_sample_slot(struct agg *a, const struct probe_sample_raw *s)
{
	if (!a->enc || 2 * (a->enc_used + 1) > a->enc_mask + 1)
		enc_grow(a);
	uint32_t h = probe_hash_bytes(s->frames, s->frames_len);
	uint32_t len = (uint32_t)s->frames_len;     /* >= 1: nframes >= 1 */
	size_t j = h & a->enc_mask;
	for (;; j = (j + 1) & a->enc_mask) {
		struct enc_slot *e = &a->enc[j];
		if (!e->len)
			break;
		if (e->hash == h && e->len == len &&
		    memcmp(a->enc_bytes + e->off, s->frames, len) == 0)
			return e;
	}
	uint64_t frames[PROBE_MAX_FRAMES];
	uint32_t n = probe_sample_frames(s, frames);
	if (n == 0) {           /* the decoder forbids it; never drop a sample */
		frames[0] = 0;
		n = 1;
	}
	/* The table at a quarter full after it doubled; the bytes' doubling vector. */
	size_t cost = 4 * sizeof(struct enc_slot) + 2 * (size_t)(len ? len : 1);
	uint32_t stack = NO_STACK;
	if (aggi_room(a, cost)) {
		stack = intern_stack(a, frames, n);
		if (stack == NO_STACK)
			a->cost -= cost;
	}
	if (stack == NO_STACK)
		return NULL;
	struct enc_slot *e = &a->enc[j];
	e->stack = stack;
	e->hash = h;
	e->len = len ? len : 1;
	a->enc_bytes = xgrow(a->enc_bytes, &a->enc_cap, a->enc_len + e->len, 1);
	e->off = a->enc_len;
	memcpy(a->enc_bytes + a->enc_len, s->frames, len);
	if (!len)
		a->enc_bytes[a->enc_len] = 0;
	a->enc_len += e->len;
	e->last = NULL;
	a->enc_used++;
	return e;
}

/*
 * An off-CPU sample's stack: its frames under the leaf AGG_FRAME_OFFCPU.
 * Not through the encoded-stack cache: the same bytes as a CPU sample's
 * would be another stack.  They are few (about one per period of waiting).
 */
uint32_t aggi_offcpu_stack(struct agg *a, const struct probe_sample_raw *s)
{
	uint64_t frames[PROBE_MAX_FRAMES + 1];
	uint32_t n = probe_sample_frames(s, frames + 1);
	if (n > PROBE_MAX_FRAMES - 1) {
		/* No room for the leaf [off-cpu]: cut one more, marked (wire.h). */
		n = PROBE_MAX_FRAMES - 1;
		frames[n] = PROBE_FRAME_TRUNCATED;
	}
	frames[0] = AGG_FRAME_OFFCPU;
	return intern_stack(a, frames, n + 1);
}

void agg_add(struct agg *a, struct probe_msg *m)
{
	switch (m->type) {
	case PROBE_F_HELLO:
		add_hello(a, m);
		break;
	case PROBE_F_MAP:
		add_map(a, m);
		break;
	case PROBE_F_THREAD:
		add_thread(a, m);
		break;
	case PROBE_F_SAMPLES: {
		uint32_t img = image_of(a, m->pid);
		struct probe_sample_raw s;
		while (probe_samples_next_raw(m, &s))
			if (img == NO_IMAGE)
				aggi_drop_sample(a, &s);
			else if ((int64_t)s.event == a->images[img].alloc)
				aggi_add_alloc(a, img, m->pid, &s);
			else if (!aggi_stackref_count(a, img, &s))
				aggi_add_sample(a, img, m->pid, &s);
		break;
	}
	case PROBE_F_LOST: {
		unsigned r = m->u.lost.reason < PROBE_LOST_REASON_MAX ? m->u.lost.reason : 0;
		(void)image_of(a, m->pid);
		a->t.lost[r] = sat_add(a->t.lost[r], m->u.lost.count);
		break;
	}
	case PROBE_F_EXIT: {
		uint32_t img = image_of(a, m->pid);  /* may move a->images */
		if (img == NO_IMAGE)
			break;
		struct agg_image *im = &a->images[img];
		im->have_exit = 1;
		im->exit_status = m->u.exit.status;
		break;
	}
	case PROBE_F_INFO:
		add_info(a, m);
		break;
	case PROBE_F_JIT:
		add_jit(a, m);
		break;
	case PROBE_F_SYMTAB:
		aggi_add_symtab(a, m);
		break;
	default:                /* unknown kinds: skipped, by the protocol */
		break;
	}
}

static int cmp_map(const void *x, const void *y)
{
	const struct agg_map *a = x, *b = y;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int cmp_count(const void *x, const void *y)
{
	const struct agg_count *a = x, *b = y;
	if (a->image != b->image)
		return a->image < b->image ? -1 : 1;
	if (a->gen != b->gen)
		return a->gen < b->gen ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->stack < b->stack ? -1 : a->stack > b->stack;
}


void agg_finish(struct agg *a)
{
	for (size_t i = 0; i < a->nimages; i++) {
		struct agg_image *im = &a->images[i];
		if (im->nmaps)
			qsort(im->maps, im->nmaps, sizeof(*im->maps), cmp_map);
		free(im->maxend);
		im->maxend = xmalloc((im->nmaps ? im->nmaps : 1) * sizeof(uint64_t));
		interval_maxend(im->maps, im->nmaps, sizeof(*im->maps),
				offsetof(struct agg_map, end), im->maxend);
		im->nsorted = im->nmaps;
	}
	aggi_stackref_settle_all(a);
	free(a->count_vec);
	a->ncounts = HASH_COUNT(a->counts);
	a->count_vec = xmalloc((a->ncounts ? a->ncounts : 1) * sizeof(*a->count_vec));
	size_t i = 0;
	for (struct count_ent *c = a->counts; c; c = c->hh.next) {
		/* "inuse": a row whose allocations were all freed is no row. */
		if (a->inuse_shown && !a->keep && !c->samples)
			continue;
		struct agg_count *o = &a->count_vec[i++];
		o->image = c->key.image;
		o->gen = c->key.gen;
		o->tid = c->key.tid;
		o->stack = c->key.stack;
		o->samples = c->samples;
		o->weight = c->weight;
		o->objects = c->objects;
		o->inuse_objects = c->inuse_objects;
		o->inuse_weight = c->inuse_weight;
	}
	a->ncounts = i;
	/* A stable order makes every output deterministic. */
	if (a->ncounts)
		qsort(a->count_vec, a->ncounts, sizeof(*a->count_vec), cmp_count);
	if (a->keep && !a->finished_samples) {
		uint32_t *row_of_id = xmalloc((a->ncreated ? a->ncreated : 1) * sizeof(uint32_t));
		for (size_t r = 0; r < a->ncounts; r++) {
			const struct agg_count *o = &a->count_vec[r];
			struct count_key key = { o->image, o->gen, o->tid, o->stack };
			struct count_ent *c;
			HASH_FIND(hh, a->counts, &key, sizeof(key), c);
			row_of_id[c->id] = (uint32_t)r;
		}
		aggi_finish_samples(a, row_of_id);
		free(row_of_id);
		a->finished_samples = 1;
	}
}

const struct agg_totals *agg_totals(const struct agg *a)
{
	return &a->t;
}

void agg_set_limit(struct agg *a, size_t bytes)
{
	a->limit = bytes;
}

size_t agg_cost(const struct agg *a)
{
	return a->cost;
}

int agg_dropped_text(const struct agg *a, char *buf, size_t cap)
{
	const struct agg_totals *t = &a->t;
	if (cap)
		buf[0] = 0;
	if (!t->dropped && !t->frames_dropped)
		return 0;
	/* Of the weight; after agg_window the dropped may lie outside it: no share. */
	char pct[32] = "";
	if (t->weight && t->weight != UINT64_MAX && t->dropped_weight <= t->weight)
		snprintf(pct, sizeof(pct), " (%.2f%%)",
			 100.0 * (double)t->dropped_weight / (double)t->weight);
	snprintf(buf, cap, "dropped: %" PRIu64 " sample%s%s and %" PRIu64
		 " frame%s over the memory bound", t->dropped, t->dropped == 1 ? "" : "s",
		 pct, t->frames_dropped, t->frames_dropped == 1 ? "" : "s");
	return 1;
}

size_t agg_nimages(const struct agg *a)
{
	return a->nimages;
}

const struct agg_image *agg_image(const struct agg *a, uint32_t image)
{
	return image < a->nimages ? &a->images[image] : NULL;
}

const char *agg_thread_name(const struct agg *a, uint32_t image, uint32_t tid)
{
	struct thread_key key = { image, tid };
	struct thread_ent *t;
	HASH_FIND(hh, a->threads, &key, sizeof(key), t);
	return t ? t->name : NULL;
}

size_t agg_nstacks(const struct agg *a)
{
	return a->nstacks;
}

const uint64_t *agg_stack(const struct agg *a, uint32_t stack, uint32_t *nframes)
{
	if (stack >= a->nstacks) {
		*nframes = 0;
		return NULL;
	}
	*nframes = a->stack_vec[stack]->nframes;
	return a->stack_vec[stack]->frames;
}

size_t agg_ncounts(const struct agg *a)
{
	return a->ncounts;
}

const struct agg_count *agg_counts(const struct agg *a)
{
	return a->count_vec;
}

/*
 * How far back to look past maps that start below addr: a bound for hostile
 * input.  Real address spaces stop the walk at once (maxend), except where
 * many generations of mappings overlap (plugins loaded in turn at one place).
 */
#define MAP_WALK_MAX 4096

/* Is x a better answer than best for a sample of generation gen? */
static int map_better(const struct agg_map *x, const struct agg_map *best, uint32_t gen)
{
	if (!best)
		return 1;
	int xin = x->gen <= gen, bin = best->gen <= gen;
	if (xin != bin)
		return xin;
	if (xin)        /* both were mapped then: the latest */
		return x->seq > best->seq;
	return x->seq < best->seq;     /* both came later: the earliest */
}

const struct agg_map *agg_find_map(const struct agg *a, uint32_t image, uint32_t gen,
				   uint64_t addr)
{
	const struct agg_image *im = agg_image(a, image);
	if (!im || !im->nmaps || !im->maxend)
		return NULL;
	/* Last map with start <= addr. */
	size_t lo = interval_upper(im->maps, im->nmaps, sizeof(im->maps[0]),
				   offsetof(struct agg_map, start), addr);
	const struct agg_map *best = NULL;
	for (size_t i = lo, steps = 0; i-- > 0 && steps < MAP_WALK_MAX; steps++) {
		if (im->maxend[i] <= addr)
			break;  /* nothing at or before i reaches addr */
		const struct agg_map *mp = &im->maps[i];
		if (addr < mp->end && map_better(mp, best, gen))
			best = mp;
	}
	return best;
}
