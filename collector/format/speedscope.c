/*
 * speedscope.c - speedscope's JSON file format
 * (https://www.speedscope.app/file-format-schema.json): one "sampled"
 * profile per thread, its samples in time order with their weights, so
 * that speedscope's Time Order view is each thread's timeline.
 *
 * Contract:
 *   - shared.frames: one frame per location (a function in a module: the
 *     text report's rows), named as there ("NAME [inlined]" included).
 *     file is the function's source file (the full path DWARF gives) where
 *     DWARF knows it, else the module's path; line is the lowest source line
 *     sampled in it (speedscope shows one position per frame; DWARF's
 *     declaration line is not read), only with a source file.
 *   - profiles: one per thread of each process image (a thread that exec'd
 *     has one per image), named "comm pid/tid", in pid, tid, image order.
 *     samples: frame indices root first, as the schema wants; weights as
 *     the text report counts them: the period (ns for clock events), or 1
 *     each where the recording's weights are all 0 (or add up past 2^64).
 *     unit "nanoseconds" for clock events (cpu-clock, task-clock, the
 *     CPU-time timers) with real weights, "bytes" for allocations
 *     (--alloc: bytes allocated, unbiased), else "none".  startValue: for
 *     nanoseconds, the thread's first sample, ns after the recording's
 *     first, else 0; endValue = startValue + the sum of its weights (the
 *     importer takes endValue - startValue as the profile's length).
 *   - Allocations (--alloc): after the threads, one profile per process
 *     image, "in use over time: comm pid": moments (100 at most, evenly
 *     from its first allocation to its last allocation or free; fewer
 *     where it has many stacks; and the peak's, just after the allocation
 *     that took the total to its most), each a root frame "in use at T s:
 *     SIZE" (T after the recording's first sample) above the stacks of the
 *     sampled allocations in use then, each weighted with its bytes
 *     (unbiased), so that the Time Order view draws live bytes over time
 *     (a moment with nothing in use: its frame alone, weight 0).
 *     With --event inuse, a thread's profile holds the allocations still
 *     in use at the end alone.
 *   - activeProfileIndex: the heaviest thread, the one speedscope opens.
 *   - Strings come from untrusted files: every one is read through
 *     printable_next (util.h: control characters, C1 ones too, and each
 *     byte that is not part of valid UTF-8 become U+FFFD) and ", \ escaped,
 *     so the file is valid JSON whatever a recording names, and no name
 *     carries a control character to the viewer.
 * A stack keeps at most RESOLVE_MAX_FRAMES frames, inline frames dropped
 * first, as resolve_stack() does.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "hashtab.h"
#include "util.h"
#include "data/wire_decode.h"

struct sframe {
	uint32_t loc;
	const char *file;       /* source file, or NULL */
	unsigned line;          /* lowest line sampled in file, 0: none */
	char *name;             /* a moment of "in use over time" (not a loc) */
};

struct prof {
	uint32_t pid, tid, image;
	uint32_t old;           /* its index before sorting */
	uint64_t first;         /* time of its first sample */
	uint64_t weight;        /* its samples' weights, saturating */
	size_t nsamples;
	size_t at;              /* its samples: order[at .. at + nsamples) */
};

struct prof_ent {
	uint64_t key;           /* image << 32 | tid */
	uint32_t prof;
	UT_hash_handle hh;
};

struct scope {
	const struct report_ctx *c;
	struct sframe *frames;
	size_t nframes, frames_cap;
	uint32_t *frame_of_loc; /* location -> frame + 1; 0: none yet */
	size_t frame_of_loc_cap;
	uint32_t *stacks;       /* frame indices, root first, of every count row */
	size_t nstacks, stacks_cap;
	size_t *stack_at;       /* count row -> its first index in stacks */
	uint32_t *stack_len;    /* count row -> its frame count */
	struct prof *profs;
	size_t nprofs, profs_cap;
	uint32_t *prof_of_count;        /* count row -> its profile */
	size_t *order;          /* sample indices grouped by profile, in time order */
	struct overtime *ots;   /* --alloc: in use over time, one per image */
	size_t nots;
};

/* A moment's allocations of one stack in use: one sample of "over time". */
struct osample {
	uint32_t moment;        /* the moment's frame */
	uint32_t row;           /* the count row: its stack; UINT32_MAX: none */
	uint64_t bytes;
};

struct overtime {
	uint32_t image, pid;
	struct osample *v;
	size_t n, cap;
	uint64_t weight;
};

/* ---- JSON strings ----------------------------------------------------- */

/* s as a JSON string: quoted, escaped, made printable (util.h). */
static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (const char *p = s; *p;) {
		uint32_t cp;
		char enc[4];
		p += printable_next(p, &cp);
		if (cp == '"' || cp == '\\')
			fputc('\\', out);
		fwrite(enc, 1, utf8_encode(cp, enc), out);
	}
	fputc('"', out);
}

/* ---- frames and stacks ------------------------------------------------ */

/* The frame of a location, made on first sight; src refines its position. */
static uint32_t frame_of(struct scope *s, uint32_t loc, const struct rsrc *src)
{
	if (loc >= s->frame_of_loc_cap) {
		size_t old = s->frame_of_loc_cap;
		s->frame_of_loc = xgrow(s->frame_of_loc, &s->frame_of_loc_cap, (size_t)loc + 1,
					sizeof(*s->frame_of_loc));
		memset(s->frame_of_loc + old, 0,
		       (s->frame_of_loc_cap - old) * sizeof(*s->frame_of_loc));
	}
	if (!s->frame_of_loc[loc]) {
		s->frames = xgrow(s->frames, &s->frames_cap, s->nframes + 1, sizeof(*s->frames));
		s->frames[s->nframes] = (struct sframe){ loc, NULL, 0, NULL };
		s->frame_of_loc[loc] = (uint32_t)++s->nframes;
	}
	struct sframe *f = &s->frames[s->frame_of_loc[loc] - 1];
	/* Strings are interned: one file is one pointer. */
	if (src->file && (!f->file || (src->file == f->file && src->line < f->line))) {
		f->file = src->file;
		f->line = src->line;
	}
	return s->frame_of_loc[loc] - 1;
}

/* The frames of one count row's stack, leaf first, into buf; their count. */
static uint32_t leaf_first(struct scope *s, const struct agg_count *k, uint32_t *buf)
{
	uint32_t n;
	const uint64_t *addrs = agg_stack(s->c->agg, k->stack, &n);
	if (n > PROBE_MAX_FRAMES)
		n = PROBE_MAX_FRAMES;
	uint32_t used = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct rframe *f;
		const struct rsrc *src;
		if (resolve_hidden(s->c->res, k->image, k->gen, addrs[i],
				   resolve_is_return(addrs, i)))
			continue;       /* libprobe's own frames (resolve.h) */
		uint32_t m = resolve_addr_where(s->c->res, k->image, k->gen, addrs[i],
						resolve_is_return(addrs, i),
						&f, &src, NULL);
		/* Room for these and one frame for each address left. */
		uint32_t room = RESOLVE_MAX_FRAMES - used - (n - i - 1);
		uint32_t skip = m > room ? m - 1 : 0;   /* only the containing function */
		for (uint32_t j = skip; j < m; j++)
			buf[used++] = frame_of(s, f[j].loc, &src[j]);
	}
	if (used == 0 && n > 0) {
		static const struct rsrc none;
		buf[used++] = frame_of(s, resolve_probe_loc(s->c->res), &none);
	}
	return used;
}

/* Every count row's stack, root first, into s->stacks. */
static void build_stacks(struct scope *s)
{
	size_t ncounts = agg_ncounts(s->c->agg);
	const struct agg_count *counts = agg_counts(s->c->agg);
	uint32_t *buf = xmalloc(RESOLVE_MAX_FRAMES * sizeof(*buf));
	s->stack_at = xmalloc((ncounts ? ncounts : 1) * sizeof(*s->stack_at));
	s->stack_len = xmalloc((ncounts ? ncounts : 1) * sizeof(*s->stack_len));
	for (size_t i = 0; i < ncounts; i++) {
		uint32_t n = leaf_first(s, &counts[i], buf);
		s->stacks = xgrow(s->stacks, &s->stacks_cap, s->nstacks + n, sizeof(*s->stacks));
		s->stack_at[i] = s->nstacks;
		s->stack_len[i] = n;
		for (uint32_t j = 0; j < n; j++)
			s->stacks[s->nstacks++] = buf[n - 1 - j];
	}
	free(buf);
}

/* ---- profiles: one per thread ----------------------------------------- */

static int cmp_prof(const void *x, const void *y)
{
	const struct prof *a = x, *b = y;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->image < b->image ? -1 : a->image > b->image;
}

/* The profile of every count row: one per (image, tid), sorted. */
static void build_profs(struct scope *s)
{
	const struct agg *a = s->c->agg;
	size_t ncounts = agg_ncounts(a);
	const struct agg_count *counts = agg_counts(a);
	struct prof_ent *index = NULL, *e, *tmp;
	s->prof_of_count = xmalloc((ncounts ? ncounts : 1) * sizeof(*s->prof_of_count));
	for (size_t i = 0; i < ncounts; i++) {
		uint64_t key = (uint64_t)counts[i].image << 32 | counts[i].tid;
		HASH_FIND(hh, index, &key, sizeof(key), e);
		if (!e) {
			s->profs = xgrow(s->profs, &s->profs_cap, s->nprofs + 1, sizeof(*s->profs));
			s->profs[s->nprofs] = (struct prof){
				.pid = agg_image(a, counts[i].image)->pid, .tid = counts[i].tid,
				.image = counts[i].image, .old = (uint32_t)s->nprofs,
			};
			e = xcalloc(1, sizeof(*e));
			e->key = key;
			e->prof = (uint32_t)s->nprofs++;
			HASH_ADD(hh, index, key, sizeof(e->key), e);
		}
		s->prof_of_count[i] = e->prof;
	}
	HASH_ITER(hh, index, e, tmp) {
		HASH_DEL(index, e);
		free(e);
	}
	if (s->nprofs)          /* qsort's array may not be NULL, even empty */
		qsort(s->profs, s->nprofs, sizeof(*s->profs), cmp_prof);
	uint32_t *rank = xmalloc((s->nprofs ? s->nprofs : 1) * sizeof(*rank));
	for (size_t p = 0; p < s->nprofs; p++)
		rank[s->profs[p].old] = (uint32_t)p;
	for (size_t i = 0; i < ncounts; i++)
		s->prof_of_count[i] = rank[s->prof_of_count[i]];
	free(rank);
}

/* A sample's weight as the text report counts it. */
static uint64_t weight_of(const struct scope *s, const struct agg_sample *sm)
{
	return s->c->by_samples ? 1 : sm->weight;
}

/*
 * A sample a thread's profile shows: with --event inuse, the allocations
 * not freed by the end alone.
 */
static int shown(const struct scope *s, const struct agg_sample *sm)
{
	return sm->count < agg_ncounts(s->c->agg) &&
	       !(agg_inuse_shown(s->c->agg) && sm->freed);
}

/* order[]: the samples of each profile together, each in time order. */
static void group_samples(struct scope *s)
{
	const struct agg *a = s->c->agg;
	size_t n = agg_nsamples(a);
	const struct agg_sample *sm = agg_samples(a);
	for (size_t i = 0; i < n; i++) {
		if (!shown(s, &sm[i]))
			continue;
		struct prof *p = &s->profs[s->prof_of_count[sm[i].count]];
		if (!p->nsamples++)
			p->first = sm[i].time;  /* samples come in time order */
		p->weight = sat_add(p->weight, weight_of(s, &sm[i]));
	}
	size_t at = 0;
	for (size_t p = 0; p < s->nprofs; p++) {
		s->profs[p].at = at;
		at += s->profs[p].nsamples;
	}
	s->order = xmalloc((at ? at : 1) * sizeof(*s->order));
	size_t *fill = xcalloc(s->nprofs ? s->nprofs : 1, sizeof(*fill));
	for (size_t i = 0; i < n; i++) {
		if (!shown(s, &sm[i]))
			continue;
		uint32_t p = s->prof_of_count[sm[i].count];
		s->order[s->profs[p].at + fill[p]++] = i;
	}
	free(fill);
}

/* ---- in use over time (--alloc) ------------------------------------------ */

/*
 * Moments of one process image, MOMENTS_MAX at most, evenly from its first
 * allocation to its last allocation or free, and fewer where it has many
 * stacks: MOMENT_ROWS moments x stacks at most.
 */
#define MOMENTS_MAX 100
#define MOMENT_ROWS 100000

struct free_ev {
	uint64_t t;
	size_t i;               /* the allocation's sample */
};

static int cmp_free_ev(const void *x, const void *y)
{
	const struct free_ev *a = x, *b = y;
	return a->t < b->t ? -1 : a->t > b->t;
}

/*
 * A frame of its own for a moment: "in use at T s: SIZE", T to the ms, or
 * to the us where moments are less than 1 ms apart.
 */
static uint32_t moment_frame(struct scope *s, uint64_t t, uint64_t step, uint64_t bytes)
{
	uint64_t t_min = agg_totals(s->c->agg)->t_min;
	char size[32];
	if (s->c->by_samples)
		snprintf(size, sizeof size, "%" PRIu64 " samples", bytes);
	else
		human_size(bytes, size, sizeof size);
	s->frames = xgrow(s->frames, &s->frames_cap, s->nframes + 1, sizeof(*s->frames));
	s->frames[s->nframes] = (struct sframe){
		0, NULL, 0, xasprintf("in use at %.*f s: %s", step < 1000000 ? 6 : 3,
				      t >= t_min ? (double)(t - t_min) / 1e9 : 0.0, size),
	};
	return (uint32_t)s->nframes++;
}

/*
 * When the most was in use: allocations and frees in time order (at one
 * time, the allocations first), the time after which the total was largest.
 */
static uint64_t peak_time(const struct scope *s, const size_t *idx, size_t ni,
			  const struct free_ev *fr, size_t nf)
{
	const struct agg_sample *sm = agg_samples(s->c->agg);
	uint64_t total = 0, best = 0, when = sm[idx[0]].time;
	for (size_t ai = 0, fi = 0; ai < ni || fi < nf;) {
		if (ai < ni && (fi == nf || sm[idx[ai]].time <= fr[fi].t)) {
			total = sat_add(total, weight_of(s, &sm[idx[ai]]));
			if (total > best) {
				best = total;
				when = sm[idx[ai]].time;
			}
			ai++;
		} else {
			uint64_t w = weight_of(s, &sm[fr[fi++].i]);
			total -= w <= total ? w : total;
		}
	}
	return when;
}

/*
 * The moments from t0 to t1, k of them, the peak's added, and what was in
 * use at each (live[]).
 */
static void moments(struct scope *s, struct overtime *o, const size_t *idx, size_t ni,
		    const struct free_ev *fr, size_t nf, const uint32_t *rows, size_t nrows)
{
	const struct agg_sample *sm = agg_samples(s->c->agg);
	uint64_t t0 = sm[idx[0]].time, t1 = sm[idx[ni - 1]].time;
	if (nf && fr[nf - 1].t > t1)
		t1 = fr[nf - 1].t;
	size_t k = MOMENT_ROWS / nrows;
	k = t1 == t0 ? 1 : k < 2 ? 2 : k > MOMENTS_MAX ? MOMENTS_MAX : k;
	uint64_t peak = peak_time(s, idx, ni, fr, nf);
	uint64_t *live = xcalloc(agg_ncounts(s->c->agg), sizeof(*live));
	for (size_t j = 0, ai = 0, fi = 0, peak_done = 0; j < k; j++) {
		uint64_t t = k == 1 || j == k - 1 ? t1 :
			     t0 + (uint64_t)((double)(t1 - t0) * (double)j / (double)(k - 1));
		if (!peak_done && peak <= t) {
			/* Past the previous moment: the peak's first, then t's. */
			peak_done = 1;
			if (peak < t) {
				t = peak;
				j--;    /* unsigned: j == 0 cannot be (peak >= t0) */
			}
		}
		for (; ai < ni && sm[idx[ai]].time <= t; ai++)
			live[sm[idx[ai]].count] = sat_add(live[sm[idx[ai]].count],
							   weight_of(s, &sm[idx[ai]]));
		for (; fi < nf && fr[fi].t <= t; fi++) {
			uint64_t *l = &live[sm[fr[fi].i].count], w = weight_of(s, &sm[fr[fi].i]);
			*l -= w <= *l ? w : *l;
		}
		uint64_t total = 0;
		for (size_t r = 0; r < nrows; r++)
			total = sat_add(total, live[rows[r]]);
		uint32_t m = moment_frame(s, t, k > 1 ? (t1 - t0) / (k - 1) : 0, total);
		if (!total) {           /* nothing in use: the moment alone, weight 0 */
			o->v = xgrow(o->v, &o->cap, o->n + 1, sizeof(*o->v));
			o->v[o->n++] = (struct osample){ m, UINT32_MAX, 0 };
		}
		for (size_t r = 0; r < nrows; r++) {
			if (!live[rows[r]])
				continue;
			o->v = xgrow(o->v, &o->cap, o->n + 1, sizeof(*o->v));
			o->v[o->n++] = (struct osample){ m, rows[r], live[rows[r]] };
			o->weight = sat_add(o->weight, live[rows[r]]);
		}
	}
	free(live);
}

/* One image's allocations over time: idx[0..ni), its samples in time order. */
static void overtime_of(struct scope *s, struct overtime *o, const size_t *idx, size_t ni)
{
	const struct agg_sample *sm = agg_samples(s->c->agg);
	size_t ncounts = agg_ncounts(s->c->agg), nf = 0, nrows = 0;
	struct free_ev *fr = xmalloc(ni * sizeof(*fr));
	uint32_t *rows = xmalloc(ni * sizeof(*rows));
	uint8_t *seen = xcalloc(ncounts ? ncounts : 1, 1);
	for (size_t j = 0; j < ni; j++) {
		const struct agg_sample *x = &sm[idx[j]];
		if (x->freed)           /* never before its allocation */
			fr[nf++] = (struct free_ev){ x->freed > x->time ? x->freed : x->time,
						     idx[j] };
		if (!seen[x->count]) {
			seen[x->count] = 1;
			rows[nrows++] = x->count;
		}
	}
	if (nf)
		qsort(fr, nf, sizeof(*fr), cmp_free_ev);
	moments(s, o, idx, ni, fr, nf, rows, nrows);
	free(seen);
	free(rows);
	free(fr);
}

/*
 * An "in use over time" profile for each image with allocations, in the
 * order of the threads' profiles: the samples bucketed by image first
 * (one pass, whatever the number of processes).
 */
static void build_overtime(struct scope *s)
{
	const struct agg *a = s->c->agg;
	if (!agg_bytes(a))
		return;
	const struct agg_sample *sm = agg_samples(a);
	const struct agg_count *counts = agg_counts(a);
	size_t n = agg_nsamples(a), ncounts = agg_ncounts(a), nimages = 0;
	for (size_t i = 0; i < n; i++)
		if (sm[i].count < ncounts && counts[sm[i].count].image >= nimages)
			nimages = (size_t)counts[sm[i].count].image + 1;
	size_t *at = xcalloc(nimages + 1, sizeof(*at)), *idx = xmalloc((n ? n : 1) * sizeof(*idx));
	for (size_t i = 0; i < n; i++)
		if (sm[i].count < ncounts)
			at[counts[sm[i].count].image + 1]++;
	for (size_t im = 0; im < nimages; im++)
		at[im + 1] += at[im];
	size_t *fill = xcalloc(nimages ? nimages : 1, sizeof(*fill));
	for (size_t i = 0; i < n; i++)      /* stable: each bucket in time order */
		if (sm[i].count < ncounts) {
			uint32_t im = counts[sm[i].count].image;
			idx[at[im] + fill[im]++] = i;
		}
	uint8_t *done = xcalloc(nimages ? nimages : 1, 1);
	for (size_t p = 0; p < s->nprofs; p++) {
		uint32_t im = s->profs[p].image;
		if (im >= nimages || done[im] || at[im + 1] == at[im])
			continue;
		done[im] = 1;
		s->ots = xrealloc(s->ots, (s->nots + 1) * sizeof(*s->ots));
		s->ots[s->nots] = (struct overtime){ .image = im, .pid = s->profs[p].pid };
		overtime_of(s, &s->ots[s->nots++], idx + at[im], at[im + 1] - at[im]);
	}
	free(done);
	free(fill);
	free(idx);
	free(at);
}

/* ---- writing ------------------------------------------------------------ */


/* Weights in nanoseconds: a clock event's period, the CPU-time timers'. */
static int clock_event(const struct agg_image *im)
{
	return im->event_type == PROBE_EVENT_TIMER || strcmp(im->event_name, "cpu-clock") == 0 ||
	       strcmp(im->event_name, "task-clock") == 0;
}

static void write_frames(const struct scope *s, FILE *out)
{
	fputs("\"shared\":{\"frames\":[", out);
	for (size_t i = 0; i < s->nframes; i++) {
		const struct sframe *f = &s->frames[i];
		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
		if (f->name) {
			json_str(out, f->name);
			fputc('}', out);
			continue;
		}
		const struct loc *l = resolver_loc(s->c->res, f->loc);
		json_str(out, l->sym);
		/* Without a source file, the module: what speedscope can show. */
		const char *file = f->file ? f->file : l->dso_path[0] != '[' ? l->dso_path : NULL;
		if (file) {
			fputs(",\"file\":", out);
			json_str(out, file);
		}
		if (f->file && f->line)
			fprintf(out, ",\"line\":%u", f->line);
		fputc('}', out);
	}
	fputs("]},\n", out);
}

static void write_profile(const struct scope *s, const struct prof *p, FILE *out)
{
	const struct agg *a = s->c->agg;
	const struct agg_image *im = agg_image(a, p->image);
	int ns = !s->c->by_samples && clock_event(im);
	uint64_t t_min = agg_totals(a)->t_min;
	uint64_t start = ns && p->first >= t_min ? p->first - t_min : 0;
	char *name = xasprintf("%s %u/%u", report_thread_name(a, p->image, p->tid), p->pid, p->tid);
	fputs("{\"type\":\"sampled\",\"name\":", out);
	json_str(out, name);
	free(name);
	const char *unit = ns ? "nanoseconds" : !s->c->by_samples && agg_bytes(a) ? "bytes" : "none";
	fprintf(out, ",\"unit\":\"%s\",\"startValue\":%" PRIu64 ",\"endValue\":%" PRIu64
		",\n\"samples\":[", unit, start, sat_add(start, p->weight));
	const struct agg_sample *sm = agg_samples(a);
	for (size_t i = 0; i < p->nsamples; i++) {
		uint32_t k = sm[s->order[p->at + i]].count;
		fputs(i ? ",\n[" : "\n[", out);
		for (uint32_t j = 0; j < s->stack_len[k]; j++)
			fprintf(out, j ? ",%u" : "%u", s->stacks[s->stack_at[k] + j]);
		fputc(']', out);
	}
	fputs("],\n\"weights\":[", out);
	for (size_t i = 0; i < p->nsamples; i++)
		fprintf(out, i ? ",%" PRIu64 : "%" PRIu64, weight_of(s, &sm[s->order[p->at + i]]));
	fputs("]}", out);
}

static void write_overtime(const struct scope *s, const struct overtime *o, FILE *out)
{
	char *name = xasprintf("in use over time: %s %u",
			       report_thread_name(s->c->agg, o->image, o->pid), o->pid);
	fputs("{\"type\":\"sampled\",\"name\":", out);
	json_str(out, name);
	free(name);
	fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64
		",\n\"samples\":[", s->c->by_samples ? "none" : "bytes", o->weight);
	for (size_t i = 0; i < o->n; i++) {
		uint32_t k = o->v[i].row;
		fprintf(out, i ? ",\n[%u" : "\n[%u", o->v[i].moment);
		for (uint32_t j = 0; k != UINT32_MAX && j < s->stack_len[k]; j++)
			fprintf(out, ",%u", s->stacks[s->stack_at[k] + j]);
		fputc(']', out);
	}
	fputs("],\n\"weights\":[", out);
	for (size_t i = 0; i < o->n; i++)
		fprintf(out, i ? ",%" PRIu64 : "%" PRIu64, o->v[i].bytes);
	fputs("]}", out);
}

/* The heaviest thread: what speedscope shows first. */
static size_t heaviest(const struct scope *s)
{
	size_t best = 0;
	for (size_t p = 1; p < s->nprofs; p++)
		if (s->profs[p].weight > s->profs[best].weight)
			best = p;
	return best;
}

static void scope_free(struct scope *s)
{
	for (size_t i = 0; i < s->nframes; i++)
		free(s->frames[i].name);
	free(s->frames);
	free(s->frame_of_loc);
	free(s->stacks);
	free(s->stack_at);
	free(s->stack_len);
	free(s->profs);
	free(s->prof_of_count);
	free(s->order);
	for (size_t i = 0; i < s->nots; i++)
		free(s->ots[i].v);
	free(s->ots);
}

int report_speedscope(const struct report_ctx *c, FILE *out)
{
	struct scope s = { .c = c };
	build_stacks(&s);
	build_profs(&s);
	group_samples(&s);
	build_overtime(&s);

	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n", out);
	fputs("\"exporter\":\"probe " PROBE_VERSION "\",\"name\":", out);
	json_str(out, path_basename(c->opts->file));
	fprintf(out, ",\"activeProfileIndex\":%zu,\n", heaviest(&s));
	write_frames(&s, out);
	fputs("\"profiles\":[", out);
	for (size_t p = 0; p < s.nprofs; p++) {
		fputs(p ? ",\n" : "\n", out);
		write_profile(&s, &s.profs[p], out);
	}
	for (size_t i = 0; i < s.nots; i++) {
		fputs(s.nprofs || i ? ",\n" : "\n", out);
		write_overtime(&s, &s.ots[i], out);
	}
	fputs("]}\n", out);
	scope_free(&s);
	return 0;
}
