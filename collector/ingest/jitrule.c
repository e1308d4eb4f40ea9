/*
 * jitrule.c - frame rules for JIT code from its prologue (see jitrule.h).
 *
 * Only the few x86-64 instructions prologues and stubs are made of are
 * decoded; anything else ends the simulation (the frame-pointer rule, which
 * is what most JIT code wants).  Calls leave the stack as they found it.
 */
#include "ingest/jitrule.h"

#include <string.h>

#include "probe/arena.h"

/* What the simulation knows at one point of the function. */
struct sim {
	int32_t off;            /* CFA = rsp + off (8 at entry: the return address) */
	int rbp_saved;          /* rbp pushed, at CFA - rbp_at */
	int32_t rbp_at;
	int allocated;          /* "sub $N,%rsp" ran: a fixed frame */
	int fp;                 /* "mov %rsp,%rbp" ran: rbp = CFA - off from then on */
};

/* Instructions with no effect on rsp or rbp that prologues start with. */
static size_t harmless(const uint8_t *p, size_t avail)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };

	if (avail >= 4 && !memcmp(p, endbr64, 4))
		return 4;
	if (avail >= 1 && p[0] == 0x90)                 /* nop */
		return 1;
	if (avail >= 2 && p[0] == 0x66 && p[1] == 0x90) /* xchg %ax,%ax */
		return 2;
	/* nopw/nopl: 66 prefixes, 0f 1f and a memory operand */
	size_t i = 0;
	while (i < avail && i < 4 && p[i] == 0x66)
		i++;
	if (i + 3 <= avail && p[i] == 0x0f && p[i + 1] == 0x1f) {
		static const uint8_t len[256] = { [0x00] = 3, [0x40] = 4, [0x44] = 5,
						  [0x80] = 7, [0x84] = 8 };
		size_t n = len[p[i + 2]];
		return n && i + n <= avail ? i + n : 0;
	}
	/* The stack bang (HotSpot): mov %eax,disp32(%rsp) / disp8(%rsp). */
	if (avail >= 7 && p[0] == 0x89 && p[1] == 0x84 && p[2] == 0x24)
		return 7;
	if (avail >= 4 && p[0] == 0x89 && p[1] == 0x44 && p[2] == 0x24)
		return 4;
	return 0;
}

/* One instruction at p (avail bytes): its length, its effect on s; 0 unknown. */
static size_t step(const uint8_t *p, size_t avail, struct sim *s)
{
	uint8_t rex = 0;
	size_t i = harmless(p, avail);

	if (i)
		return i;
	if (avail && (p[0] & 0xf0) == 0x40) {
		rex = p[0];
		i = 1;
	}
	if (i >= avail)
		return 0;
	uint8_t op = p[i];
	if (op >= 0x50 && op <= 0x57) {                 /* push r */
		s->off += 8;
		if (op == 0x55 && !(rex & 1)) {
			s->rbp_saved = 1;
			s->rbp_at = s->off;
		}
		return i + 1;
	}
	if (op >= 0x58 && op <= 0x5f) {                 /* pop r */
		s->off -= 8;
		if (op == 0x5d && !(rex & 1))
			s->rbp_saved = 0;
		return i + 1;
	}
	if (op == 0xe8)                                 /* call rel32 */
		return i + 5 <= avail ? i + 5 : 0;
	if (i + 1 >= avail)
		return 0;
	uint8_t modrm = p[i + 1];
	if (op == 0xff && (modrm & 0xf8) == 0xd0)       /* call *%reg */
		return i + 2;
	if (op == 0xff && modrm == 0x15)                /* call *disp32(%rip) */
		return i + 6 <= avail ? i + 6 : 0;
	if (rex == 0x48 && op == 0x89 && modrm == 0x6c && i + 3 < avail &&
	    p[i + 2] == 0x24) {                         /* mov %rbp,disp8(%rsp) */
		s->rbp_saved = 1;
		s->rbp_at = s->off - (int8_t)p[i + 3];
		return i + 4;
	}
	if (rex == 0x48 && ((op == 0x89 && modrm == 0xe5) ||
			    (op == 0x8b && modrm == 0xec))) {  /* mov %rsp,%rbp */
		s->fp = 1;
		return i + 2;
	}
	if (rex == 0x48 && (op == 0x83 || op == 0x81) &&
	    (modrm == 0xec || modrm == 0xc4)) {         /* sub/add $imm,%rsp */
		size_t len = i + 2 + (op == 0x83 ? 1 : 4);
		if (len > avail)
			return 0;
		int32_t imm = op == 0x83 ? (int8_t)p[i + 2] :
			      (int32_t)((uint32_t)p[i + 2] | (uint32_t)p[i + 3] << 8 |
					(uint32_t)p[i + 4] << 16 | (uint32_t)p[i + 5] << 24);
		s->off += modrm == 0xec ? imm : -imm;
		if (modrm == 0xec)
			s->allocated = 1;
		return len;
	}
	return 0;
}

static uint64_t rsp_rule(const struct sim *s)
{
	if (s->off <= 0 || s->off >= (1 << 20))
		return probe_rule_pack(PROBE_RULE_NONE, 0, 0, 0);
	return probe_rule_pack(PROBE_RULE_RSP, s->rbp_saved, -s->rbp_at, s->off);
}

uint64_t jit_rule(const uint8_t *code, size_t n, uint64_t start, uint64_t key)
{
	struct sim s = { 8, 0, 0, 0, 0 };

	for (uint64_t pc = start; pc <= key && pc - start < n;) {
		struct sim before = s;

		if (pc == key)          /* the instruction at key has not run */
			return rsp_rule(&s);
		size_t len = step(code + (pc - start), n - (size_t)(pc - start), &s);
		if (!len && s.allocated)
			/* Past a prologue that allocated a fixed frame (compiled
			   Java without frame pointers): its body keeps rsp. */
			return rsp_rule(&s);
		if (!len)
			break;
		if (pc + len > key)     /* key inside it: a call, not returned yet */
			return rsp_rule(&before);
		if (s.fp)
			return probe_rule_pack(PROBE_RULE_RBP, s.rbp_saved,
					       -s.rbp_at, s.off);
		pc += len;
	}
	return probe_rule_pack(PROBE_RULE_NONE, 0, 0, 0);
}
