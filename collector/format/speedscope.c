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

#include "format.h"
#include "hashtab.h"
#include "util.h"
#include "wire_decode.h"

struct sframe {
	uint32_t loc;
	const char *file;       /* source file, or NULL */
	unsigned line;          /* lowest line sampled in file, 0: none */
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
		s->frames[s->nframes] = (struct sframe){ loc, NULL, 0 };
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

/* order[]: the samples of each profile together, each in time order. */
static void group_samples(struct scope *s)
{
	const struct agg *a = s->c->agg;
	size_t n = agg_nsamples(a), ncounts = agg_ncounts(a);
	const struct agg_sample *sm = agg_samples(a);
	for (size_t i = 0; i < n; i++) {
		if (sm[i].count >= ncounts)
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
		if (sm[i].count >= ncounts)
			continue;
		uint32_t p = s->prof_of_count[sm[i].count];
		s->order[s->profs[p].at + fill[p]++] = i;
	}
	free(fill);
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
		const struct loc *l = resolver_loc(s->c->res, f->loc);
		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
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
	free(s->frames);
	free(s->frame_of_loc);
	free(s->stacks);
	free(s->stack_at);
	free(s->stack_len);
	free(s->profs);
	free(s->prof_of_count);
	free(s->order);
}

int report_speedscope(const struct report_ctx *c, FILE *out)
{
	struct scope s = { .c = c };
	build_stacks(&s);
	build_profs(&s);
	group_samples(&s);

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
	fputs("]}\n", out);
	scope_free(&s);
	return 0;
}
