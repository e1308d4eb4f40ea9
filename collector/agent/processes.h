/*
 * processes.h - what `probe agent` keeps of each process that streams to it:
 * its names and figures for the index page, and the frames that describe
 * it (its HELLO, its mappings as they are now, its threads' names), to be
 * replayed into every profile it later appears in (sink.h).  Its functions
 * and types are named aproc_ (an agent's process).
 *
 * Contract:
 *   - aproc_note() is given every frame as it arrives (pids already as
 *     ingest.h rewrites them) and returns the process's entry.  A HELLO
 *     starts the process afresh (an exec: no mappings, no threads); a MAP
 *     replaces the earlier ones it overlaps (a library unloaded and
 *     another loaded there), so what is kept is the address space now; a
 *     THREAD replaces that thread's earlier name.  A JIT frame (code
 *     generated at run time, named) replaces the one at the same start
 *     (code replaced there).
 *   - Its names are the kernel's: comm and exe are read from /proc/PID/comm
 *     and /proc/PID/exe when its HELLO arrives (pid: SO_PEERCRED's, as
 *     ingest.h gives it), whatever the HELLO claimed; what it claimed is
 *     kept in claimed_comm and claimed_exe where it differs.  The HELLO
 *     kept (and replayed into profiles) carries the kernel's names, its
 *     argv cut to APROC_ARGS_MAX bytes and its event names to
 *     APROC_NAME_MAX; THREAD names are kept cut to APROC_NAME_MAX.
 *   - Memory is bounded, whatever a process does: at most APROC_MAPS
 *     mappings, APROC_THREADS thread names and APROC_JITS JIT names (the
 *     first ones) a process, and the bytes kept (frames, names, their
 *     slots) at most APROC_PROC_BYTES for a process, APROC_UID_BYTES for
 *     all the processes of one uid (aproc_set_uid: its connection's), and
 *     APROC_ALL_BYTES in all.  A frame past a bound is not kept: counted
 *     in its user's frames_dropped (its addresses are named as unknown in
 *     later profiles).  The profiles being taken have their own bounds,
 *     charged to the same users (sink.h).
 *   - aproc_replay() decodes the kept frames again, HELLO first, and hands
 *     each to fn with the pid and tids as they came.
 *   - aproc_gone() marks a process whose last connection closed and frees
 *     what was kept of it; aproc_reap() frees those entries (after the
 *     owner is done with them: a window still being built holds a
 *     pointer), keeping the last APROC_RECENT in a ring for the index page.
 *     aprocs_freed() is told of every large free: past APROC_TRIM_BYTES
 *     freed, malloc_trim() gives the memory back to the system (glibc
 *     keeps it otherwise, and the agent's RSS would stay at its peak).
 *   - aprocs_bounds_html() writes the bounds and what each user had
 *     dropped at them, for the index page.
 */
#ifndef PROBE_AGENT_PROCESSES_H
#define PROBE_AGENT_PROCESSES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hashtab.h"
#include "data/wire_decode.h"

#define APROC_MAPS 8192
#define APROC_THREADS 4096
#define APROC_JITS 65536
#define APROC_NAME_MAX 64               /* a kept thread name, event name */
#define APROC_ARGS_MAX 4096             /* a kept HELLO's argv, in all */
#define APROC_PROC_BYTES (8u << 20)
#define APROC_UID_BYTES (64u << 20)
#define APROC_ALL_BYTES (192u << 20)
#define APROC_TRIM_BYTES (16u << 20)
#define APROC_RECENT 64

struct sink;

struct kept {                   /* one frame, as it came */
	uint8_t *f;
	size_t len;
	uint64_t start, end;    /* MAP: its range */
	uint32_t tid;           /* THREAD: its tid (rewritten) */
};

struct kjit {                   /* a JIT frame kept, by its start */
	uint64_t start;
	struct kept k;
	UT_hash_handle hh;
};

struct aproc {
	uint32_t pid;
	uint32_t uid;           /* its last connection's (aproc_set_uid) */
	char *name;             /* basename of exe, else comm; printable */
	char *comm, *exe;       /* the kernel's; printable; "" when unknown */
	char *claimed_comm, *claimed_exe;       /* its HELLO's, when not those; NULL */
	size_t bytes;           /* kept of it, as the bounds count */
	uint64_t samples;       /* since it connected */
	int connected;          /* open connections */
	int gone;               /* its last connection closed */
	int have_exit;
	int32_t status;
	struct kept hello;
	struct kept *maps, *thr;
	size_t nmaps, mcap, nthr, tcap;
	struct kjit *jits;      /* in the order they came (uthash keeps it) */
	size_t njits;
	struct sink *win;       /* its push window (agent.c), or NULL */
	struct sink *win_alloc; /* the same of its --alloc samples beside another event */
	int alloc_beside;       /* its HELLO: "alloc" sampled, not its first event */
	int has_alloc;          /* its HELLO: "alloc" sampled (first or beside) */
	/*
	 * --http: its allocations since it connected (agent.c), for Go's
	 * /debug/pprof/heap and /allocs without seconds; freed when it goes.
	 */
	struct sink *heap;
	UT_hash_handle hh;
};

struct arecent {                /* an ended process, for the index page */
	uint32_t pid;
	char name[64];
	uint64_t samples;
	int have_exit;
	int32_t status;
};

struct auser {                  /* one uid's share of the agent's memory */
	uint32_t uid;
	size_t kept;            /* bytes kept of its processes */
	size_t profiles;        /* its part of the profiles being taken (sink.h) */
	uint64_t dropped;       /* samples not kept in a profile, at a bound */
	uint64_t frames_dropped;        /* frames not kept, at a bound */
	UT_hash_handle hh;
};

struct aprocs {
	struct aproc *byid;
	size_t nlive;           /* not gone */
	uint64_t seen;          /* processes ever */
	struct arecent recent[APROC_RECENT];
	size_t nrecent;         /* how many ever ended (ring index: % APROC_RECENT) */
	struct probe_scratch sc;        /* for replay */
	struct auser *users;    /* every uid seen (kept: they are few) */
	size_t kept, profiles;  /* the users' sums */
	uint64_t dropped, frames_dropped;
	size_t freed;           /* since the last malloc_trim */
};

void aprocs_init(struct aprocs *t);
void aprocs_free(struct aprocs *t);
struct aproc *aproc_find(struct aprocs *t, uint32_t pid);
struct aproc *aproc_get(struct aprocs *t, uint32_t pid);
struct aproc *aproc_note(struct aprocs *t, const struct probe_msg *m,
			 const uint8_t *f, size_t len);
/* One more connection of p (a pid used again: p lives again). */
void aproc_connected(struct aprocs *t, struct aproc *p);
/* p belongs to uid (what is kept of it is charged to uid from now on). */
void aproc_set_uid(struct aprocs *t, struct aproc *p, uint32_t uid);
/* uid's share (made when new). */
struct auser *aprocs_user(struct aprocs *t, uint32_t uid);
void aprocs_freed(struct aprocs *t, size_t bytes);
void aprocs_bounds_html(const struct aprocs *t, FILE *f);
void aproc_gone(struct aprocs *t, struct aproc *p);
/* Free the processes that are gone and hold no window. */
void aproc_reap(struct aprocs *t);
typedef void (*aproc_fn)(void *ctx, struct probe_msg *m);
void aproc_replay(struct aprocs *t, const struct aproc *p, aproc_fn fn, void *ctx);

#endif
