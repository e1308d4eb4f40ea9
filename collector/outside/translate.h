/*
 * translate.h - perf's records of a process sampled from outside
 * (perfring.h) as the wire's frames (include/probe/wire.h), so that what
 * reads libprobe's frames (recording, aggregation, every format) reads
 * these the same.
 *
 * Contract:
 *   - outside_record() turns one record into the frames it implies and
 *     hands each, whole, to emit:
 *       - a process's first sample: its HELLO (exe, comm, argv and ppid
 *         read in /proc), then its MAPs: what MMAP2 said, and, unless it
 *         is a fork's child of a known process or a new image, each other
 *         executable file mapping /proc/PID/maps lists (mapped before the
 *         sampling began);
 *       - an exec (COMM marked exec): a new HELLO (a new image), its
 *         mappings to come as MMAP2 records;
 *       - an executable file MMAP2: a MAP, its bias read from the file
 *         (elfmap.h); a fork's child starts with its parent's MAPs;
 *       - COMM: THREAD (tid, name); a process's EXIT: EXIT (status
 *         unknown, -1, with the samples and threads seen);
 *       - LOST and THROTTLE: LOST frames (PROBE_LOST_KERNEL, _THROTTLE);
 *       - SAMPLE: a SAMPLES frame of one sample, its frames IP first:
 *         the stack copy walked with the objects' CFI (unwind_copy.h)
 *         where the sample has one, else (or where that walk stops before
 *         the chain's end) the user part of the kernel's callchain (frame
 *         pointers); cut at PROBE_MAX_FRAMES, or by the copy's size, with
 *         PROBE_FRAME_TRUNCATED.  A sample with no user frames (a kernel
 *         thread, or in the kernel only) is dropped, counted in
 *         outside_stats().
 *   - The event is said in each HELLO as o gives it (event_name names it).
 *   - Memory: a process's state and MAPs until 2 s (of record time) after
 *     its EXIT: samples another CPU's ring still held then go to its image.
 */
#ifndef PROBE_TRANSLATE_H
#define PROBE_TRANSLATE_H

#include <stddef.h>
#include <stdint.h>

#include "outside/perfring.h"

typedef void (*outside_emit_fn)(void *ctx, const uint8_t *frame, size_t len);

struct outside;

struct outside *outside_new(const struct perfring_opts *o, const char *event_name,
			    outside_emit_fn emit, void *ctx);
void outside_free(struct outside *x);
void outside_record(struct outside *x, const struct perfring_rec *r);
struct outside_stats {
	uint64_t dropped;       /* samples with no user frames, or no pid */
	uint64_t dwarf, fp;     /* stacks from the copy's walk, from the chain */
	uint64_t truncated;     /* ... of the first, cut by the copy's size */
	uint64_t waits;         /* off-CPU samples (switches) */
	uint64_t waits_unseen;  /* ... with no stack ([stack unknown]) */
};
void outside_stats(const struct outside *x, struct outside_stats *st);
/* When the events started counting (off-CPU time counts from there). */
void outside_started(struct outside *x, uint64_t now);
/*
 * -a, once its events count: every process's name now, for one that ends
 * before its first record is read (no FORK or COMM record named it, and
 * /proc no longer does): perf synthesizes the same COMMs at its start.
 */
void outside_seed_names(struct outside *x);
/* At the end: each wait still going, until now, and every sum left. */
void outside_flush(struct outside *x, uint64_t now);
/* At the end: tid, a thread asked for that no record came from, waited
 * since the start, no stack known. */
void outside_idle(struct outside *x, uint32_t tid, uint64_t now);
/* The processes seen (a record, a fork) whose EXIT has not come. */
size_t outside_live(const struct outside *x);

#endif
