/*
 * loop.h - one turn of the event loop that probe record, top and agent
 * share.
 *
 * Contract:
 *   - A command's epoll set (ingest.ep) holds its listening socket, tagged
 *     &loop_tag_listen (ingest.lfd_tag), a signalfd (&loop_tag_signal), the
 *     rings of what is sampled from outside (&loop_tag_ring, given to
 *     sampler_watch), every connection (tagged with its struct ingest_conn,
 *     ingest.c), and what the command adds itself (top's keys and stderr
 *     pipe, agent's HTTP server) under tags of its own.
 *   - loop_open(in, sfd) makes the set (in->ep) with in->lfd and sfd in it,
 *     each when it is >= 0; loop_add(in, fd, tag) adds one of the
 *     command's own.  0, or -1 with errno set.
 *   - loop_ms(in, ms, outside): how long the next wait may last: ms (-1: no
 *     bound of the command's own), shortened to ingest's next poll, and to
 *     SAMPLER_READ_MS while something is sampled from outside.
 *   - loop_turn(in, ms, own, ctx, &ready) waits up to ms for the set, then
 *     reads each ready connection (one closed on the way is marked dead,
 *     not touched again, and freed after the batch), accepts new ones and
 *     runs ingest's poll when it is due.  A ready tag of the command's is
 *     given to own(ctx, tag), before the connections are read; own returns
 *     1 for its tags, 0 for any other (own may be NULL: no tags of its
 *     own).  ready says whether the signalfd and the rings were ready: the
 *     command acts on them after the connections (a frame sampled from
 *     outside refers to the MAPs read with them, translate.c).
 *     It returns the events' count (0: the time ran out), or -1 as
 *     epoll_wait does (EINTR included), with nothing read.
 */
#ifndef PROBE_SESSION_LOOP_H
#define PROBE_SESSION_LOOP_H

#include "ingest/ingest.h"

extern char loop_tag_listen, loop_tag_signal, loop_tag_ring;

struct loop_ready {
	int signal;             /* the signalfd has something */
	int ring;               /* a ring of what is sampled from outside woke */
};

typedef int (*loop_own_fn)(void *ctx, void *tag);

int loop_open(struct ingest *in, int sfd);
int loop_add(struct ingest *in, int fd, void *tag);
int loop_ms(struct ingest *in, int ms, int outside);
int loop_turn(struct ingest *in, int ms, loop_own_fn own, void *ctx, struct loop_ready *ready);

#endif
