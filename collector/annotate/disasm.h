/*
 * disasm.h - machine code to text, with capstone.
 *
 * Why capstone, not objdump (perf's default) or libopcodes:
 *   - Speed is not what decides: on a function of 12,511 instructions
 *     (docs/annotate.md) capstone decoded and printed them in 10.6 ms,
 *     objdump --start-address/--stop-address took 20 ms with its start;
 *     both are far under the second the issue allows.
 *   - objdump needs a file: kernel code read from /proc/kcore and JIT code
 *     from a jitdump would have to be written out first (perf writes
 *     temporary files for both), and its output, text meant for people
 *     that changes between binutils versions, would have to be parsed
 *     back into addresses.  capstone takes bytes and gives one
 *     instruction at a time, with its length.
 *   - libopcodes (binutils-dev) prints exactly objdump's text, but its API
 *     is internal to binutils (its disassembler callbacks changed in
 *     2.39), Debian ships it only as a static archive tied to one binutils
 *     version, and it is GPL-3.
 *   - capstone is a stable, BSD-licensed library Debian keeps, with AT&T
 *     (objdump's default) and Intel syntax.  Its AT&T text differs from
 *     objdump's in details: size suffixes ("movl" for "mov"), small
 *     immediates in decimal ("$1" for "$0x1"), a space after commas.
 *
 * Contract:
 *   - disasm_open() for an ELF e_machine (x86-64, i386, AArch64, ARM);
 *     NULL with *why (static) for another.
 *   - disasm_next() decodes one instruction at *code (*left bytes, at
 *     address *addr), advances all three, and writes "mnemonic operands"
 *     (mnemonic padded as objdump pads it) into buf; a direct call or jump
 *     target is written as objdump writes it (hex, no 0x) and returned in
 *     *target for the caller to name, and a RIP-relative operand's address
 *     in *rip (0: none), as objdump's "# 1de50" comment shows it.  Returns its
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
		   char *buf, size_t bufn, uint64_t *target, uint64_t *rip);

#endif
