/*
 * recnames.h - the names a recording carries (symbols/symrec.h), gathered
 * while it is written: an aggregate of its frames as they go to the file,
 * and at the end the SYMTAB frames for every address its samples hold,
 * from the files on disk as they are then (before the program is rebuilt,
 * or the recording taken elsewhere).
 *
 * Contract: recnames_msg() takes each frame written, decoded (its samples
 * not walked yet: it walks a copy), in order; recnames_idle(), called
 * often while recording (it keeps its own pace), loads the files of the
 * sampled processes' objects ahead of the end;
 * recnames_write() hands the SYMTAB frames to emit() (the file's writer)
 * and returns the objects named.  Memory is bounded (RECNAMES_MIB: the
 * aggregate's bound, aggregate.h); stacks over it go unnamed, and say so.
 */
#ifndef PROBE_RECNAMES_H
#define PROBE_RECNAMES_H

#include <stddef.h>
#include <stdint.h>

#define RECNAMES_MIB 256

struct recnames;

struct recnames *recnames_new(void);
struct probe_msg;

void recnames_msg(struct recnames *n, const struct probe_msg *m);
void recnames_idle(struct recnames *n, uint64_t now);
size_t recnames_write(struct recnames *n, void (*emit)(void *arg, const uint8_t *f, size_t len),
		      void *arg);
void recnames_free(struct recnames *n);

#endif
