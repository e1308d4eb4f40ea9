/*
 * sink.h - one profile `probe agent` is building: an aggregate (aggregate.h)
 * fed with the frames of the processes it takes, from the time it starts.
 *
 * Contract:
 *   - sink_add() adds one frame of process p.  The first time p's
 *     samples, losses or end come here, what the agent keeps of p (its
 *     HELLO, mappings and thread names: aproc.h) is replayed first, so a
 *     process that started before the sink is symbolized like one that
 *     started after; its HELLO, MAP and THREAD frames before that are
 *     left to the replay.  m is copied: the caller's stays unread.
 *   - sink_pprof() finishes the aggregate and writes it as a gzipped pprof
 *     (format/pprof.c) of the window [start, end], symbolized through sc,
 *     into a malloc'd buffer; 0, or -1 after one "probe:" message.  The
 *     sink takes no frame after it.
 *   - Memory grows with the distinct stacks and mappings of the window,
 *     not with its samples; sink_free() gives it all back.
 */
#ifndef PROBE_AGENT_SINK_H
#define PROBE_AGENT_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "aggregate.h"
#include "aproc.h"
#include "symbols.h"

struct sink_pid;

struct sink {
	struct agg *agg;
	struct sink_pid *pids;  /* processes replayed here */
	struct aprocs *procs;
	uint64_t start_mono, start_real;        /* ns */
	int finished;
};

struct sink *sink_new(struct aprocs *procs);
void sink_add(struct sink *s, struct aproc *p, const struct probe_msg *m);
int sink_pprof(struct sink *s, struct symcache *sc, uint64_t end_mono,
	       uint8_t **body, size_t *len);
void sink_free(struct sink *s);

#endif
