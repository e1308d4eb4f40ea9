/*
 * disasm.h - machine code to text, with capstone.
 *
 * Why capstone, not libopcodes or objdump (perf's default):
 *   - objdump is a process per function and its text must be parsed back:
 *     perf annotate spends most of its time there.  Measured here on a
 *     function of 10,000 instructions: objdump --start-address/--stop-address
 *     took 40 ms, capstone 4 ms (docs/annotate.md).
 *   - libopcodes (binutils-dev) prints exactly objdump's text, but its API
 *     is internal to binutils (it changed in 2.39: disassembler_style
 *     callbacks), Debian ships it only as a static archive tied to one
 *     binutils version, and it is GPL-3, which the rest of probe is not.
 *   - capstone is a stable, BSD-licensed library Debian keeps, thread-safe,
 *     with AT&T (objdump's default) and Intel syntax; its AT&T text differs
 *     from objdump's in details (size suffixes: "addl" for "add").
 *
 * Contract:
 *   - disasm_open() for an ELF e_machine (x86-64, i386, AArch64, ARM);
 *     NULL with *why (static) for another.
 *   - disasm_next() decodes one instruction at *code (*left bytes, at
 *     address *addr), advances all three, and writes "mnemonic operands"
 *     (mnemonic padded as objdump pads it) into buf; a direct call or jump
 *     target is left as an address for the caller to name.  Returns its
 *     length, or 0 where the bytes decode to nothing (the caller shows
 *     them as "(bad)" and steps one byte, as objdump does).
 */
#ifndef PROBE_DISASM_H
#define PROBE_DISASM_H

#include <stddef.h>
#include <stdint.h>

struct disasm;

struct disasm *disasm_open(unsigned machine, int intel, const char **why);
void disasm_close(struct disasm *d);
size_t disasm_next(struct disasm *d, const uint8_t **code, size_t *left, uint64_t *addr,
		   char *buf, size_t bufn, uint64_t *target);

#endif
