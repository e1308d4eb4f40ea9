/*
 * jitrule.h - frame rules for JIT code, from its first instructions.
 *
 * JIT code has no .eh_frame.  Most runtimes give every function a frame
 * pointer (V8, HotSpot, .NET), which the handler follows; some stubs have
 * none (CPython 3.12's perf trampolines: "sub $8,%rsp; call *%rcx").  Given
 * the code of one function from its start (its runtime's perf map says
 * where that is), jit_rule() simulates its instructions up to key (a
 * sampled address, or a return address - 1) as far as it knows them:
 * push, pop, sub/add of rsp, mov %rsp,%rbp, calls.  It returns
 *   - PROBE_RULE_RBP once "mov %rsp,%rbp" ran (the CFA is rbp + what was
 *     pushed before it, wherever rbp was saved),
 *   - PROBE_RULE_RSP when every instruction before key was understood
 *     (the CFA is rsp + what is on the stack then), or when a prologue
 *     that allocated a frame ("sub $N,%rsp", after pushes, a stack bang)
 *     ran before the first instruction it does not know: a body that
 *     keeps rsp where its prologue put it, as compiled Java's does,
 *   - PROBE_RULE_NONE otherwise: the handler's frame-pointer step.
 * code holds n bytes from start; bytes it would need beyond them give NONE.
 */
#ifndef PROBE_JITRULE_H
#define PROBE_JITRULE_H

#include <stddef.h>
#include <stdint.h>

uint64_t jit_rule(const uint8_t *code, size_t n, uint64_t start, uint64_t key);

#endif
