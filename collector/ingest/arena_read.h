/*
 * arena_read.h - reading a process's arena (include/probe/arena.h): its
 * threads' samples, losses and names, as frames for ingest.c to hand on.
 *
 * Contract:
 *   - arena_attach() takes the descriptor that came with a HELLO and maps
 *     it, after checking that it cannot shrink under us (F_SEAL_SHRINK:
 *     else a process could make us fault), its size and its header.  NULL
 *     with a reason in err when it is not an arena we can read.
 *   - arena_read() turns what c's threads wrote since the last read into
 *     frames, through ingest_deliver(): a THREAD frame for each thread it
 *     has not announced (and when a name changes), SAMPLES of the records
 *     taken before until_ns (UINT64_MAX: all), LOST frames of the counters'
 *     growth.  It frees the slots of threads that ended, once read whole.
 *     final: the process has gone; nothing will be written any more.
 *   - Nothing read is trusted: records are copied out and checked; a slot
 *     that holds something else is read no further (one message).
 *   - The process's wake socket (arena.h: its threads send a byte when a
 *     ring passes half full) is the reader's once arena_set_wake() gave it:
 *     the owner polls arena_wake_fd() and, when it is ready, calls
 *     arena_woken() (which empties it: 1 read the arena now, 0 not yet, -1
 *     the socket is no wake of libprobe's, ready for ever: give it up).
 *   - arena_detach() unmaps it and closes the wake socket.
 */
#ifndef PROBE_ARENA_READ_H
#define PROBE_ARENA_READ_H

#include <stddef.h>
#include <stdint.h>

struct ingest;
struct ingest_conn;
struct arena_reader;

struct arena_reader *arena_attach(int fd, char *err, size_t errlen);
/* Returns how many frame rules the handlers asked for (cfi_learn.h). */
unsigned arena_read(struct ingest *in, struct ingest_conn *c, uint64_t until_ns, int final);
void arena_detach(struct arena_reader *ar);
void arena_set_wake(struct arena_reader *ar, int fd);
int arena_wake_fd(const struct arena_reader *ar);        /* -1: none */
int arena_woken(struct arena_reader *ar);     /* 1 read it now, 0 not, -1 drop the socket */
/* c sent a MAP (the last of c->maps): the rules known for its file (cfi_seed). */
void arena_seed_rules(struct ingest_conn *c);

#endif
