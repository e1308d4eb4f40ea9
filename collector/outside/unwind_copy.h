/*
 * unwind_copy.h - a sample's user stack walked in the copy the kernel took
 * (PERF_SAMPLE_STACK_USER), with the frame rules of the objects' .eh_frame
 * (cfi_learn.h), as libprobe's handler walks its own stack in place
 * (preload/cfi.c); frame pointers where code has no CFI (Go, JIT code).
 *
 * Contract:
 *   - unwind_copy() starts from the sample's user registers (IP, SP, BP)
 *     and reads memory only inside the copy [SP, SP + stack_len): a read
 *     past it ends the walk, as cut (*cut = 1) when the copy was full (the
 *     stack goes on beyond what the kernel copied), as an end otherwise.
 *   - rule(ctx, addr) gives the rule at a code address (PROBE_RULE_* of
 *     arena.h): the caller finds the object.  A frame with no FDE
 *     (PROBE_RULE_NONE) is walked by its frame pointer.
 *   - Returns the frames, IP first (at most max); *complete is 1 when the
 *     walk reached the outermost frame (an undefined return address, or 0).
 */
#ifndef PROBE_UNWIND_COPY_H
#define PROBE_UNWIND_COPY_H

#include <stdint.h>

#include "outside/perfring.h"

typedef uint64_t (*unwind_rule_fn)(void *ctx, uint64_t addr);

int unwind_copy(const struct perfring_rec *r, uint32_t copy_size, unwind_rule_fn rule,
		void *ctx, uint64_t *out, int max, int *cut, int *complete);

#endif
