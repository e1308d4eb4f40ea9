/*
 * sink.h - one profile `probe agent` is building: an aggregate (aggregate.h)
 * fed with the frames of the processes it takes, from the time it starts.
 *
 * Contract:
 *   - sink_add() adds one frame of process p.  The first time p's
 *     samples, losses or end come here, what the agent keeps of p (its
 *     HELLO, mappings and thread names: processes.h) is replayed first, so a
 *     process that started before the sink is symbolized like one that
 *     started after; its HELLO, MAP and THREAD frames before that are
 *     left to the replay.  m is copied: the caller's stays unread.  Call
 *     aproc_note() with m first: a HELLO is taken as processes.h keeps it
 *     (the kernel's names), a THREAD's name cut as processes.h cuts it.
 *   - sink_pprof() finishes the aggregate and writes it as a gzipped pprof
 *     (format/pprof.c) of the window [start, end], symbolized through sc,
 *     into a malloc'd buffer; 0, or -1 after one "probe:" message.  The
 *     sink takes no frame after it.
 *   - Memory grows with the distinct stacks and mappings of the window,
 *     not with its samples, and is bounded: the aggregate's cost (what it
 *     holds and what writing its pprof takes, aggregate.h) is at most
 *     SINK_BYTES for one profile, and the parts of all profiles being
 *     taken that the processes of one uid brought at most SINK_UID_BYTES,
 *     of every uid SINK_ALL_BYTES (charged to processes.h's users).  What
 *     does not fit is dropped and counted (aggregate.h's totals, the
 *     user's dropped and frames_dropped): the pprof says so in a comment.
 *     A process of one user cannot take another user's share: a pull of
 *     another user's processes, or of all, still gets theirs whole.
 *     sink_free() gives it all back (and the memory to the system:
 *     aprocs_freed).
 */
#ifndef PROBE_AGENT_SINK_H
#define PROBE_AGENT_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "data/aggregate.h"
#include "agent/processes.h"
#include "symbols/symbols.h"

/*
 * One profile, one uid's processes in all of them, everyone's.  With 16
 * pulls (HTTPD_CAPTURES) or two push windows a process (its first event's
 * and its allocations'), the sum binds: the
 * agent's profiles cost at most SINK_ALL_BYTES, and the one pprof being
 * written at most SINK_BYTES more.
 */
#define SINK_BYTES (128u << 20)
#define SINK_UID_BYTES (96u << 20)
#define SINK_ALL_BYTES (320u << 20)

struct sink_pid;

struct sink {
	struct agg *agg;
	struct sink_pid *pids;  /* processes replayed here */
	struct aprocs *procs;
	uint64_t start_mono, start_real;        /* ns */
	int finished;
	int alloc_default;      /* pprof's default: alloc_space (sink_new) */
};

/*
 * event: the event to take (NULL: each process's first, the CPU's);
 * "alloc": the allocations sampled by --alloc, as Go's heap profile
 * (alloc_default: alloc_space its default sample type, else inuse_space).
 */
struct sink *sink_new(struct aprocs *procs, const char *event, int alloc_default);
void sink_add(struct sink *s, struct aproc *p, const struct probe_msg *m);
int sink_pprof(struct sink *s, struct symcache *sc, uint64_t end_mono,
	       uint8_t **body, size_t *len);
/*
 * The same of what s holds so far, s going on taking frames after it (a
 * process's allocations since it connected); alloc_default as sink_new's.
 */
int sink_pprof_now(struct sink *s, struct symcache *sc, uint64_t end_mono,
		   int alloc_default, uint8_t **body, size_t *len);
void sink_free(struct sink *s);

#endif
