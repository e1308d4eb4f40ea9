/*
 * code.h - the bytes of a sampled function, for its disassembly.
 *
 * Contract:
 *   - code_read() reads [fn->start, fn->end) of the function's code:
 *       ELF: from the mapped file when its build-id is the recorded one,
 *         else from perf's build-id cache (~/.debug/.build-id/xx/rest/elf),
 *         through the PT_LOAD segment holding it (a separate debug file
 *         has no code: its .text is NOBITS);
 *       kernel: from /proc/kcore's segment holding it (root only);
 *       JIT: from the JIT_CODE_LOAD record of a jitdump file the process
 *         mapped (jit-PID.dump, as perf inject --jit finds it) whose code
 *         is at that address with that size.
 *     Returns the bytes (malloc'd, *len of them), *machine the ELF e_machine
 *     they are for, and *from the file they came from (malloc'd); or NULL
 *     with *why (malloc'd) saying what was missing and what would help.
 *   - At most CODE_MAX bytes: a bigger range is refused with a why.
 *     Files are opened only if regular (util.h: open_regular).
 */
#ifndef PROBE_ANNOTATE_CODE_H
#define PROBE_ANNOTATE_CODE_H

#include <stddef.h>
#include <stdint.h>

#include "annotate/annotate.h"

#define CODE_MAX (2u << 20)

uint8_t *code_read(const struct report_ctx *c, const struct ann_func *fn, size_t *len,
		   unsigned *machine, char **from, char **why);

#endif
