/* disasm.c - see disasm.h. */
#include "annotate/disasm.h"

#include <capstone/capstone.h>
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct disasm {
	csh h;
	cs_insn *insn;
	unsigned machine;
};

struct disasm *disasm_open(unsigned machine, int intel, const char **why)
{
	cs_arch arch;
	cs_mode mode;
	switch (machine) {
	case EM_X86_64:
		arch = CS_ARCH_X86, mode = CS_MODE_64;
		break;
	case EM_386:
		arch = CS_ARCH_X86, mode = CS_MODE_32;
		break;
	case EM_AARCH64:
		arch = CS_ARCH_ARM64, mode = CS_MODE_ARM;
		break;
	case EM_ARM:
		arch = CS_ARCH_ARM, mode = CS_MODE_ARM;
		break;
	default:
		*why = "code for a machine probe annotate does not disassemble (it knows "
		       "x86-64, i386, AArch64 and ARM)";
		return NULL;
	}
	struct disasm *d = xcalloc(1, sizeof(*d));
	if (cs_open(arch, mode, &d->h) != CS_ERR_OK) {
		free(d);
		*why = "capstone could not be opened for this machine";
		return NULL;
	}
	if (arch == CS_ARCH_X86 && !intel)
		cs_option(d->h, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
	d->insn = cs_malloc(d->h);
	d->machine = machine;
	return d;
}

void disasm_close(struct disasm *d)
{
	if (!d)
		return;
	cs_free(d->insn, 1);
	cs_close(&d->h);
	free(d);
}

/* A direct branch's operand: "0x1149" (x86) or "#0x1149" (ARM): its address. */
static int branch_target(const cs_insn *i, uint64_t *target)
{
	const char *m = i->mnemonic, *op = i->op_str;
	int branch = m[0] == 'j' || strncmp(m, "call", 4) == 0 || strncmp(m, "b", 1) == 0 ||
		     strncmp(m, "cb", 2) == 0 || strncmp(m, "tb", 2) == 0;
	if (!branch)
		return 0;
	const char *p = strrchr(op, ' ');
	p = p ? p + 1 : op;
	if (*p == '#')
		p++;
	if (strncmp(p, "0x", 2) != 0 || !p[2] || strspn(p + 2, "0123456789abcdef") != strlen(p + 2))
		return 0;
	*target = strtoull(p, NULL, 16);
	return 1;
}

/* x86: the address "0x1cce9(%rip)" or "[rip + 0x1cce9]" names (next: the next instruction's). */
static uint64_t rip_operand(const char *op, uint64_t next)
{
	const char *p = strstr(op, "(%rip)"), *q;
	int neg = 0;
	if (p) {
		for (q = p; q > op && q[-1] != ' ' && q[-1] != ','; q--)
			;
	} else if ((q = strstr(op, "[rip "))) {
		q += 5;
		neg = *q == '-';
		q += 2;
	} else {
		return 0;
	}
	if (*q == '-') {
		neg = 1;
		q++;
	}
	if (strncmp(q, "0x", 2) != 0)
		return 0;
	uint64_t disp = strtoull(q, NULL, 16);
	return neg ? next - disp : next + disp;
}

size_t disasm_next(struct disasm *d, const uint8_t **code, size_t *left, uint64_t *addr,
		   char *buf, size_t bufn, uint64_t *target, uint64_t *rip)
{
	*target = *rip = 0;
	if (!cs_disasm_iter(d->h, code, left, addr, d->insn))
		return 0;
	const cs_insn *i = d->insn;
	if (!branch_target(i, target))
		*target = 0;
	if (d->machine == EM_X86_64)
		*rip = rip_operand(i->op_str, *addr);
	if (*target && d->machine != EM_AARCH64 && d->machine != EM_ARM)
		/* objdump's "call   1149": the target without its 0x */
		snprintf(buf, bufn, "%-6s %" PRIx64, i->mnemonic, *target);
	else if (i->op_str[0])
		snprintf(buf, bufn, "%-6s %s", i->mnemonic, i->op_str);
	else
		snprintf(buf, bufn, "%s", i->mnemonic);
	return i->size;
}
