/*
 * jit.h - code a live process generates at run time (JIT): where it lies,
 * for libprobe's handler, and what its runtime calls it, for the reports.
 *
 * Contract:
 *   - jit_poll() is called with each read of a process's arena, before its
 *     samples are taken (arena_read.c), so that a name the runtime wrote
 *     before running its code reaches the recording before the samples of
 *     that code.
 *   - Where: when the handler asked for rules of code in no MAP (unmapped,
 *     from cfi_learn), /proc/PID/maps is read (at once the first time,
 *     then backing off from 20 ms to 1 s while nothing changes) and its
 *     executable memory no file backs (no MAP overlaps it) is published in
 *     the arena's jit[] ranges (arena.h's seqlock), which the handler walks
 *     by frame pointer.  Neighbours with no object's code between them
 *     (only data, or nothing) are one range; at most PROBE_JIT_RANGES, the
 *     lowest.
 *   - Names: the runtime's perf map, PID/root/tmp/perf-NSPID.map (NSPID:
 *     the pid the process knows itself by), and a jitdump file the process
 *     has mapped (jit-NSPID.dump, as perf finds it: by its mapping), are
 *     read as they grow, each entry handed on as a JIT frame (wire.h)
 *     through ingest_deliver(), but for entries over an object's code
 *     (a MAP), whose own names win, as in perf.  Looked for when JIT ranges are first
 *     found, then every second while not found, and at the end (final):
 *     a runtime may write its map at exit (Java's DumpPerfMapAtExit).
 *     Only for a process that has JIT ranges: a perf map left in /tmp by
 *     an earlier process of the same pid is not read for a native one.
 *     A file is read only if it is a regular file owned by the process's
 *     uid or by root (/tmp is everybody's: anyone may create perf-N.map
 *     for a pid that is not theirs), opened without following links.
 *   - Rules: an address the handler asks about in a JIT range gets the rule
 *     jitrule.h finds in the code of the function the names say contains
 *     it, read from the process (process_vm_readv); the frame-pointer rule
 *     (NONE) when no name covers it or its code cannot be read.  One asked
 *     about outside every range, in memory the last /proc/PID/maps read
 *     (this very poll) shows not executable, is no code: UNSUP, so that
 *     it is not asked again.  Code named again at a start already named
 *     (replaced) loses the rules learned for it (cfi_forget).
 *   - jitdump: JIT_CODE_LOAD names code; JIT_CODE_MOVE names its new place
 *     with the name of the same code_index; other records are skipped.
 *     Records are read whole only once the file holds them whole.
 */
#ifndef PROBE_JIT_H
#define PROBE_JIT_H

#include <stdint.h>

#include "ingest/cfi_learn.h"

struct ingest;
struct ingest_conn;
struct jit_watch;

/* um: the addresses in no MAP the handler asked rules for since the last call. */
void jit_poll(struct ingest *in, struct ingest_conn *c, struct probe_arena *a,
	      struct cfi_learner *l, struct jit_watch **jw,
	      const struct cfi_unmapped *um, int final);
void jit_free(struct jit_watch *jw);

#endif
