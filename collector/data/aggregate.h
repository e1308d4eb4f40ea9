/*
 * aggregate.h - what a recording says, in tables: process images, their
 * mappings, thread names, interned stacks and sample counts.
 *
 * Contract:
 *   - Feed every decoded frame to agg_add() in stream order, then call
 *     agg_finish() once; the accessors are valid after agg_finish().
 *   - A process image is one pid between two HELLOs: a HELLO for a pid seen
 *     before (exec) starts a new image with no mappings.  Frames for a pid
 *     with no HELLO get a placeholder image (counted in frames_orphan).
 *   - Stacks are interned: identical frame arrays share one id, so memory
 *     grows with distinct stacks, not with samples.  Counts are keyed by
 *     (image, generation, tid, stack) and hold samples and the sum of sample weights
 *     (saturating: weights are untrusted).
 *   - Every mapping an image ever had is kept.  A MAP overlapping a different
 *     earlier mapping of the image (a library unloaded and another loaded in
 *     its place) starts a new generation of the image's address space;
 *     samples are counted with the generation current when they arrived
 *     (stream order: libprobe sends a MAP before any sample that points into
 *     it).  agg_find_map() returns, among the mappings containing addr, the
 *     latest one that had arrived by that generation; if none had, the
 *     earliest that came later (a sample that overtook its MAP).
 *   - Memory can be bounded (agg_set_limit): the tables' cost (agg_cost)
 *     counts what they hold and what a report made of them will take on
 *     top (each distinct address of an image is resolved into a location
 *     of its own, each count entry becomes a sample of all its frames).
 *     What does not fit is not kept and is counted: a sample that needs a
 *     new stack, count entry or image in dropped (and dropped_weight; it
 *     stays in samples and weight, so shares are of everything sampled);
 *     a HELLO, MAP, THREAD or JIT frame in frames_dropped (a process
 *     whose HELLO did not fit has its samples dropped until one does).
 *     Samples of stacks and threads already kept are always counted.
 *     agg_keep_samples()' 32 bytes a sample are not bounded.
 *   - A JIT frame (code generated at run time, named by its runtime) is kept
 *     as a mapping of its own, with jit set and its name as path: the same
 *     generations give a reused address the name it had when it was
 *     sampled, and a sample taken before the collector read the name the
 *     first name it got.
 * Nothing here symbolizes; see resolve.h.
 */
#ifndef PROBE_AGGREGATE_H
#define PROBE_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

#include "data/wire_decode.h"

struct agg_map {
	uint64_t start, end, bias, pgoff;
	uint64_t seq;           /* arrival order */
	uint32_t gen;           /* generation of the image it arrived in */
	uint8_t build_id_len;
	uint8_t build_id[PROBE_BUILD_ID_MAX];
	char *path;             /* as recorded; a JIT entry's name */
	uint8_t jit;            /* 0, or a JIT frame's source (PROBE_JIT_*) */
};

struct agg_image {
	uint32_t pid, ppid;
	int have_hello;
	char *exe, *comm;       /* printable; "" when unknown */
	char *args;             /* argv joined by spaces, printable; "" when none */
	char *name;             /* basename of exe, else comm, else "[pid N]" */
	char *event_name;       /* printable; "" when unknown */
	uint32_t event_type;
	uint8_t freq;
	uint64_t value;         /* Hz when freq, else the period */
	uint16_t hello_flags;   /* PROBE_HELLO_*: kernel time sampled or why not */
	/*
	 * Its events (-e a,b: several), as agg_events() numbers them: ev[i]
	 * for the samples of its event index i; the one shown (agg_select_event)
	 * is the event_* above, the samples of its index shown (-1: none of
	 * them; an image with no HELLO shows index 0 unless one was chosen).
	 * nev 0: no HELLO.
	 */
	uint8_t nev;
	uint8_t ev[PROBE_EVENTS_MAX];
	int shown;
	/*
	 * --off-cpu: the index of its off-cpu event (wire.h's
	 * PROBE_EVENT_OFFCPU), -1: none.  With no event chosen it is shown
	 * with the first: running and waiting together, in ns of wall time.
	 */
	int offcpu;
	uint64_t offcpu_how;    /* PROBE_OFFCPU_*: how it was seen */
	/*
	 * --alloc: the index of its alloc event (PROBE_EVENT_ALLOC), -1:
	 * none, and its mean sampling interval in bytes (1: every
	 * allocation).  Its samples' weights are unbiased as they are added:
	 * n bytes sampled with chance 1 - exp(-n / alloc_every) weigh
	 * n / (1 - exp(-n / alloc_every)).
	 */
	int alloc;
	uint64_t alloc_every;
	int have_exit;
	int32_t exit_status;
	struct agg_map *maps;   /* sorted by start after agg_finish */
	uint64_t *maxend;       /* maxend[i] = max(end of maps[0..i]) */
	size_t nmaps, maps_cap;
	size_t nsorted;         /* maps[0..nsorted) sorted, with maxend; the
				   rest in the order they came */
	struct agg_map *spare;  /* merge_tail's other buffer */
	size_t spare_cap;
	uint32_t gen;           /* current generation (MAPs that overlapped) */
};

struct agg_count {
	uint32_t image, gen, tid, stack;
	uint64_t samples, weight;
	/*
	 * Allocations (--alloc): the objects they stand for (each sample
	 * unbiased as its bytes are), and of them what was not freed.
	 */
	double objects, inuse_objects;
	uint64_t inuse_weight;
};

/* One sample, when they are kept (agg_keep_samples). */
struct agg_sample {
	uint64_t time;          /* ns, CLOCK_MONOTONIC of the recording machine */
	uint64_t weight;        /* its period (ns for clock events) */
	uint32_t count;         /* its row of agg_counts(): image, tid, stack */
	/*
	 * An allocation (--alloc) seen freed: when (ns as time, at least 1);
	 * 0: in use at the end (or not an allocation, or its free unseen).
	 */
	uint64_t freed;
};

/* The recording's INFO frame (wire.h), when it has one. */
struct agg_info {
	int have;               /* 0: a recording made before INFO existed */
	uint64_t start_ns, start_real_ns;
	char *host, *sysname, *release, *version, *machine;     /* printable */
	char *cmdline;          /* argv joined by spaces, printable */
};

struct agg_totals {
	uint64_t samples, weight;
	uint64_t lost[PROBE_LOST_REASON_MAX]; /* [0]: reasons we do not know */
	uint32_t processes;     /* distinct pids with a HELLO or any frame */
	uint32_t threads;       /* distinct (pid, tid) named or sampled */
	uint64_t t_min, t_max;  /* sample times (ns), t_min > t_max if none */
	uint64_t frames_orphan; /* pids whose first frame was not a HELLO */
	uint64_t other_events;  /* samples of the events not shown */
	/* Not kept: over agg_set_limit's bound (see the contract). */
	uint64_t dropped, dropped_weight;       /* samples, in samples and weight */
	uint64_t frames_dropped;                /* HELLO, MAP, THREAD, JIT frames */
};

/* The events of a recording (several with -e a,b): each with its samples. */
#define AGG_EVENTS_MAX 16
struct agg_event {
	char *name;             /* printable */
	uint64_t samples, weight;
};

struct agg;

struct agg *agg_new(void);
void agg_free(struct agg *a);
/* One decoded frame (SAMPLES are walked here). */
void agg_add(struct agg *a, struct probe_msg *m);
void agg_finish(struct agg *a);
/*
 * Count only the samples of the event named name (NULL: each process's
 * first event, the default); call before the first agg_add.  The others
 * are counted in agg_events() and totals.other_events only.
 */
void agg_select_event(struct agg *a, const char *name);
/*
 * Do the counts hold off-CPU time (--off-cpu, shown)?  Its samples then
 * end in the frame AGG_FRAME_OFFCPU (leaf first: frame 0), and weights
 * are ns of wall time, running or waiting.
 */
int agg_wall(const struct agg *a);
/* 1 when the samples shown are allocations (--alloc): weights in bytes. */
int agg_bytes(const struct agg *a);
/*
 * --alloc: what stays in use of the allocations sampled (inuse.h; NULL:
 * none were); agg_inuse_shown: the event chosen is "inuse", so the
 * counts are of the allocations not freed (at the end of the recording).
 */
struct inuse_totals;
const struct inuse_totals *agg_inuse(const struct agg *a);
int agg_inuse_shown(const struct agg *a);
#define AGG_FRAME_OFFCPU 0x2u   /* beside wire.h's PROBE_FRAME_UNSEEN */
/* The events the processes sampled, by name, in the order they came. */
size_t agg_nevents(const struct agg *a);
const struct agg_event *agg_events(const struct agg *a);
/* Keep every sample too (32 bytes each); call before the first agg_add. */
void agg_keep_samples(struct agg *a);
/* The samples kept, in time order (ties in the order they came). */
size_t agg_nsamples(const struct agg *a);
const struct agg_sample *agg_samples(const struct agg *a);

const struct agg_totals *agg_totals(const struct agg *a);
/*
 * The bound on agg_cost() (bytes; 0: none), from now on: it may be set
 * below what is held already (nothing new is then kept) and changed
 * between frames.  agg_cost: what the tables hold and what reporting them
 * will take (bytes, estimated: see the contract).
 */
void agg_set_limit(struct agg *a, size_t bytes);
size_t agg_cost(const struct agg *a);
/*
 * "dropped: N samples (P % of the weight) and F frames over the memory
 * bound" into buf when anything was dropped; 0 when nothing was (buf "").
 */
int agg_dropped_text(const struct agg *a, char *buf, size_t cap);
/* The first INFO frame (later ones are ignored); .have 0 when none. */
const struct agg_info *agg_info(const struct agg *a);
/*
 * Restrict what the counts hold, after agg_finish (probe report's filters):
 *   agg_window: only samples with lo <= time <= hi (the samples must be
 *     kept); the counts, the kept samples and the totals (samples, weight,
 *     times) become those of the window;
 *   agg_keep_counts: only the rows i of agg_counts() with keep[i] set; the
 *     kept samples follow, the totals do not change (shares stay of all).
 */
void agg_window(struct agg *a, uint64_t lo, uint64_t hi);
void agg_keep_counts(struct agg *a, const uint8_t *keep);
size_t agg_nimages(const struct agg *a);
const struct agg_image *agg_image(const struct agg *a, uint32_t image);
/* The thread's latest name in that image, or NULL. */
const char *agg_thread_name(const struct agg *a, uint32_t image, uint32_t tid);
size_t agg_nstacks(const struct agg *a);
const uint64_t *agg_stack(const struct agg *a, uint32_t stack, uint32_t *nframes);
size_t agg_ncounts(const struct agg *a);
const struct agg_count *agg_counts(const struct agg *a);
const struct agg_map *agg_find_map(const struct agg *a, uint32_t image, uint32_t gen,
				   uint64_t addr);
/*
 * The recording's SYMTAB frames (the names it carries: wire.h,
 * symbols/symrec.h), each a decoded message whose bytes the aggregate
 * holds (walk it with probe_symtab_*).
 */
size_t agg_nsymtabs(const struct agg *a);
const struct probe_msg *agg_symtab(const struct agg *a, size_t i);

#endif
