/*
 * aproc.h - what `probe agent` keeps of each process that streams to it:
 * its names and figures for the index page, and the frames that describe
 * it (its HELLO, its mappings as they are now, its threads' names), to be
 * replayed into every profile it later appears in (sink.h).
 *
 * Contract:
 *   - aproc_note() is given every frame as it arrives (pids already as
 *     ingest.h rewrites them) and returns the process's entry.  A HELLO
 *     starts the process afresh (an exec: no mappings, no threads); a MAP
 *     replaces the earlier ones it overlaps (a library unloaded and
 *     another loaded there), so what is kept is the address space now; a
 *     THREAD replaces that thread's earlier name.  At most APROC_MAPS
 *     mappings and APROC_THREADS names are kept (more are not: their
 *     addresses are then named as unknown in later profiles): memory per
 *     process is bounded, whatever it does.  A JIT frame (code generated at
 *     run time, named) replaces the one at the same start (code replaced
 *     there); at most APROC_JITS are kept, the first ones.
 *   - aproc_replay() decodes the kept frames again, HELLO first, and hands
 *     each to fn with the pid and tids as they came.
 *   - aproc_gone() marks a process whose last connection closed; aproc_reap()
 *     frees those (after the owner is done with them: a window still being
 *     built holds a pointer), keeping the last APROC_RECENT in a ring for
 *     the index page.
 */
#ifndef PROBE_AGENT_APROC_H
#define PROBE_AGENT_APROC_H

#include <stddef.h>
#include <stdint.h>

#include "hashtab.h"
#include "wire_decode.h"

#define APROC_MAPS 8192
#define APROC_THREADS 4096
#define APROC_JITS 65536
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
	char *name;             /* basename of exe, else comm; printable */
	char *comm, *exe;       /* printable; "" when unknown */
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
	UT_hash_handle hh;
};

struct arecent {                /* an ended process, for the index page */
	uint32_t pid;
	char name[64];
	uint64_t samples;
	int have_exit;
	int32_t status;
};

struct aprocs {
	struct aproc *byid;
	size_t nlive;           /* not gone */
	uint64_t seen;          /* processes ever */
	struct arecent recent[APROC_RECENT];
	size_t nrecent;         /* how many ever ended (ring index: % APROC_RECENT) */
	struct probe_scratch sc;        /* for replay */
};

void aprocs_init(struct aprocs *t);
void aprocs_free(struct aprocs *t);
struct aproc *aproc_find(struct aprocs *t, uint32_t pid);
struct aproc *aproc_get(struct aprocs *t, uint32_t pid);
struct aproc *aproc_note(struct aprocs *t, const struct probe_msg *m,
			 const uint8_t *f, size_t len);
/* One more connection of p (a pid used again: p lives again). */
void aproc_connected(struct aprocs *t, struct aproc *p);
void aproc_gone(struct aprocs *t, struct aproc *p);
/* Free the processes that are gone and hold no window. */
void aproc_reap(struct aprocs *t);
typedef void (*aproc_fn)(void *ctx, struct probe_msg *m);
void aproc_replay(struct aprocs *t, const struct aproc *p, aproc_fn fn, void *ctx);

#endif
