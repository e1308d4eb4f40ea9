/*
 * cfa.h - reading x86-64 DWARF CFI (.eh_frame): the CIE's and FDE's CFA
 * programs run up to one address, giving arena.h's packed frame rule.
 *
 * Contract:
 *   - Two users: the collector (collector/ingest/cfi_learn.c), over an
 *     object's file mapped in the collector, untrusted; and libprobe's
 *     handler (preload/cfi.c), over the .eh_frame of an object mapped for
 *     good in its own process, in SIGNAL CONTEXT.  So: no allocation, no
 *     lock, no stdio; only memcpy/memset (async-signal-safe) and reads
 *     bounded by the reader's [p, end): a damaged or hostile section gives
 *     PROBE_RULE_UNSUP, never a read outside the bounds.
 *   - Bytes are read with bytes.h's reader.  Pointers are computed where
 *     the bytes are (pc-relative encodings), absolute ones (absptr) moved
 *     by the reader's abs_adj: the caller puts the address looked up in
 *     the same space.
 */
#ifndef PROBE_CFA_H
#define PROBE_CFA_H

#include <stdint.h>
#include <string.h>

#include "probe/arena.h"
#include "probe/bytes.h"

/* a * b wrapping as the hardware does (a damaged file's factors overflow). */
static inline int64_t cfa_mul(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a * (uint64_t)b);
}

/* Register rules we track: rbx (3), rbp (6) and the return address (16). */
enum { CFA_SAME, CFA_OFFSET, CFA_UNDEF, CFA_OTHER };
struct cfa_regs {
	int cfa_reg;
	int64_t cfa_off;
	int cfa_expr;                   /* CFA_EXPR_* (below) */
	int rbx, rbp, ra;
	int64_t rbx_off, rbp_off, ra_off;
};

struct cfa_cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	int signal_frame, has_z;
	const uint8_t *insns, *insns_end;
};

static inline void cfa_set_reg(struct cfa_regs *s, uint64_t reg, int how, int64_t off)
{
	if (reg == 3) {
		s->rbx = how;
		s->rbx_off = off;
	} else if (reg == 6) {
		s->rbp = how;
		s->rbp_off = off;
	} else if (reg == 16) {
		s->ra = how;
		s->ra_off = off;
	}
}

/* DW_CFA_restore: the rule the CIE's initial instructions left. */
static inline void cfa_restore_reg(struct cfa_regs *s, const struct cfa_regs *init, uint64_t reg)
{
	if (reg == 3)
		cfa_set_reg(s, reg, init->rbx, init->rbx_off);
	else if (reg == 6)
		cfa_set_reg(s, reg, init->rbp, init->rbp_off);
	else if (reg == 16)
		cfa_set_reg(s, reg, init->ra, init->ra_off);
}

/*
 * The one CFA expression nearly every object has: its lazy-binding PLT's
 * (binutils' x86-64 .plt, 16-byte entries: "jmp *GOT; push $n; jmp PLT0"),
 *   DW_OP_breg7 (rsp) 8; DW_OP_breg16 (rip) 0; DW_OP_lit15; DW_OP_and;
 *   DW_OP_lit11 (lit10 with -z bndplt); DW_OP_ge; DW_OP_lit3; DW_OP_shl;
 *   DW_OP_plus
 * that is, CFA = rsp + 8, plus 8 past the entry's push.  Returns
 * CFA_EXPR_PLT + the literal (the rule then depends only on pc & 15, so
 * each address gets a plain rsp rule), or CFA_EXPR_OTHER.  Stubs are where
 * a sample lands often (every call to a shared library goes through one),
 * and libunwind walked those stacks when this was not followed.
 */
enum { CFA_EXPR_NONE = 0, CFA_EXPR_OTHER = 1, CFA_EXPR_PLT = 32 };

static inline int cfa_plt_expr(const uint8_t *p, size_t n)
{
	static const uint8_t plt[11] = { 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a,
					 0x3b, 0x2a, 0x33, 0x24, 0x22 };

	if (n != sizeof plt || memcmp(p, plt, 6) != 0 ||
	    memcmp(p + 7, plt + 7, 4) != 0 || (p[6] != 0x3a && p[6] != 0x3b))
		return CFA_EXPR_OTHER;
	return CFA_EXPR_PLT + (p[6] - 0x30);    /* DW_OP_lit0 is 0x30 */
}

/*
 * Run a CFA program.  Stops when the location passes pc (FDE programs;
 * pc = UINT64_MAX for a CIE's initial instructions).  0, or -1 when it
 * holds something we do not follow.
 */
static inline int cfa_run(struct probe_rd *r, const struct cfa_cie *c, struct cfa_regs *s,
	       const struct cfa_regs *init, uint64_t loc, uint64_t pc)
{
	struct cfa_regs stack[8];
	int depth = 0;

	while (r->p < r->end && !r->bad) {
		uint8_t op = *r->p++;
		uint64_t reg, delta = 0;
		int64_t off;

		switch (op & 0xc0) {
		case 0x40:
			delta = (uint64_t)(op & 0x3f) * c->code_align;
			goto advance;
		case 0x80:
			off = cfa_mul((int64_t)probe_rd_uleb(r), c->data_align);
			cfa_set_reg(s, op & 0x3f, CFA_OFFSET, off);
			continue;
		case 0xc0:
			cfa_restore_reg(s, init, op & 0x3f);
			continue;
		}
		switch (op) {
		case 0x00:              /* nop */
			continue;
		case 0x01:              /* set_loc */
			{
				uint64_t to = probe_rd_eh_pointer(r, c->fde_enc);
				if (to > pc)
					return 0;
				loc = to;
			}
			continue;
		case 0x02: delta = probe_rd_le(r, 1) * c->code_align; goto advance;
		case 0x03: delta = probe_rd_le(r, 2) * c->code_align; goto advance;
		case 0x04: delta = probe_rd_le(r, 4) * c->code_align; goto advance;
		case 0x05:              /* offset_extended */
			reg = probe_rd_uleb(r);
			off = cfa_mul((int64_t)probe_rd_uleb(r), c->data_align);
			cfa_set_reg(s, reg, CFA_OFFSET, off);
			continue;
		case 0x06:              /* restore_extended */
			cfa_restore_reg(s, init, probe_rd_uleb(r));
			continue;
		case 0x07:              /* undefined */
			cfa_set_reg(s, probe_rd_uleb(r), CFA_UNDEF, 0);
			continue;
		case 0x08:              /* same_value */
			cfa_set_reg(s, probe_rd_uleb(r), CFA_SAME, 0);
			continue;
		case 0x09:              /* register: reg, reg2 */
		case 0x14:              /* val_offset: reg, offset (the same shape) */
			reg = probe_rd_uleb(r);
			probe_rd_uleb(r);
			cfa_set_reg(s, reg, CFA_OTHER, 0);
			continue;
		case 0x0a:              /* remember_state */
			if (depth == 8)
				return -1;
			stack[depth++] = *s;
			continue;
		case 0x0b:              /* restore_state: the whole row */
			if (depth == 0)
				return -1;
			{
				*s = stack[--depth];
			}
			continue;
		case 0x0c:              /* def_cfa */
			s->cfa_reg = (int)probe_rd_uleb(r);
			s->cfa_off = (int64_t)probe_rd_uleb(r);
			s->cfa_expr = CFA_EXPR_NONE;
			continue;
		case 0x0d:              /* def_cfa_register */
			s->cfa_reg = (int)probe_rd_uleb(r);
			s->cfa_expr = CFA_EXPR_NONE;
			continue;
		case 0x0e:              /* def_cfa_offset */
			s->cfa_off = (int64_t)probe_rd_uleb(r);
			continue;
		case 0x0f:              /* def_cfa_expression */
			off = (int64_t)probe_rd_uleb(r);
			if (off < 0 || off > r->end - r->p)
				return -1;
			s->cfa_expr = cfa_plt_expr(r->p, (size_t)off);
			r->p += off;
			continue;
		case 0x10:              /* expression */
		case 0x16:              /* val_expression */
			reg = probe_rd_uleb(r);
			off = (int64_t)probe_rd_uleb(r);
			if (off < 0 || off > r->end - r->p)
				return -1;
			r->p += off;
			cfa_set_reg(s, reg, CFA_OTHER, 0);
			continue;
		case 0x11:              /* offset_extended_sf */
			reg = probe_rd_uleb(r);
			off = cfa_mul(probe_rd_sleb(r), c->data_align);
			cfa_set_reg(s, reg, CFA_OFFSET, off);
			continue;
		case 0x12:              /* def_cfa_sf */
			s->cfa_reg = (int)probe_rd_uleb(r);
			s->cfa_off = cfa_mul(probe_rd_sleb(r), c->data_align);
			s->cfa_expr = CFA_EXPR_NONE;
			continue;
		case 0x13:              /* def_cfa_offset_sf */
			s->cfa_off = cfa_mul(probe_rd_sleb(r), c->data_align);
			continue;
		case 0x15:              /* val_offset_sf */
			reg = probe_rd_uleb(r);
			probe_rd_sleb(r);
			cfa_set_reg(s, reg, CFA_OTHER, 0);
			continue;
		case 0x2e:              /* GNU_args_size */
			probe_rd_uleb(r);
			continue;
		case 0x2f:              /* GNU_negative_offset_extended */
			reg = probe_rd_uleb(r);
			off = cfa_mul((int64_t)(0 - probe_rd_uleb(r)), c->data_align);
			cfa_set_reg(s, reg, CFA_OFFSET, off);
			continue;
		default:
			return -1;
		}
advance:
		if (loc + delta > pc)
			return 0;
		loc += delta;
	}
	return r->bad ? -1 : 0;
}

static inline int cfa_parse_cie(const uint8_t *p, const uint8_t *end, int64_t adj, struct cfa_cie *c)
{
	struct probe_rd r = { .p = p, .end = end, .abs_adj = adj };
	uint64_t len = probe_rd_le(&r, 4);
	const char *aug;
	uint8_t version;

	if (len == 0xffffffffu || len == 0 || len > (uint64_t)(end - r.p))
		return -1;
	r.end = r.p + len;
	if (probe_rd_le(&r, 4) != 0)          /* CIE id */
		return -1;
	version = (uint8_t)probe_rd_le(&r, 1);
	if (version != 1 && version != 3)
		return -1;
	aug = (const char *)r.p;
	while (r.p < r.end && *r.p)
		r.p++;
	if (r.p >= r.end)
		return -1;
	r.p++;
	memset(c, 0, sizeof *c);
	if (aug[0] && aug[0] != 'z')
		return -1;              /* "eh" and other old forms */
	c->code_align = probe_rd_uleb(&r);
	c->data_align = probe_rd_sleb(&r);
	c->ra_reg = version == 1 ? probe_rd_le(&r, 1) : probe_rd_uleb(&r);
	c->fde_enc = 0;             /* absptr */
	if (aug[0] == 'z') {
		uint64_t alen = probe_rd_uleb(&r);
		const uint8_t *aend;

		if (alen > (uint64_t)(r.end - r.p))
			return -1;
		aend = r.p + alen;
		c->has_z = 1;
		for (const char *a = aug + 1; *a && !r.bad; a++) {
			if (*a == 'R') {
				c->fde_enc = (uint8_t)probe_rd_le(&r, 1);
			} else if (*a == 'L') {
				probe_rd_le(&r, 1);
			} else if (*a == 'P') {
				uint8_t enc = (uint8_t)probe_rd_le(&r, 1);
				/* skip the pointer; its value does not matter */
				probe_rd_eh_value(&r, enc);
				if (r.bad)
					return -1;
			} else if (*a == 'S') {
				c->signal_frame = 1;
			} else if (*a == 'B' || *a == 'G') {
				/* no data */
			} else {
				return -1;
			}
		}
		r.p = aend;
	}
	if (r.bad || c->ra_reg != 16)
		return -1;
	c->insns = r.p;
	c->insns_end = r.end;
	return 0;
}

/* The rule at pc from the FDE at fde (an .eh_frame record). */
static inline uint64_t cfa_rule_from_fde(const uint8_t *lo, const uint8_t *fde,
			      const uint8_t *end, int64_t adj, uint64_t pc)
{
	struct probe_rd r = { .p = fde, .end = end, .abs_adj = adj };
	struct cfa_cie c;
	struct cfa_regs init, s;
	uint64_t len = probe_rd_le(&r, 4), cie_off, begin, range;
	const uint8_t *id_at;

	if (len == 0 || len == 0xffffffffu || len > (uint64_t)(end - r.p))
		return probe_rule_pack(PROBE_RULE_UNSUP, 0, 0, 0);
	r.end = r.p + len;
	id_at = r.p;
	cie_off = probe_rd_le(&r, 4);
	if (cie_off == 0 || cie_off > (uint64_t)(id_at - lo))
		return probe_rule_pack(PROBE_RULE_UNSUP, 0, 0, 0);
	if (cfa_parse_cie(id_at - cie_off, end, adj, &c) < 0 || c.signal_frame)
		return probe_rule_pack(PROBE_RULE_UNSUP, 0, 0, 0);
	begin = probe_rd_eh_pointer(&r, c.fde_enc);
	range = probe_rd_eh_value(&r, c.fde_enc);     /* a length, not a pointer */
	if (r.bad || pc < begin || pc - begin >= range)
		return probe_rule_pack(PROBE_RULE_NONE, 0, 0, 0);
	if (c.has_z) {
		uint64_t alen = probe_rd_uleb(&r);
		if (alen > (uint64_t)(r.end - r.p))
			return probe_rule_pack(PROBE_RULE_UNSUP, 0, 0, 0);
		r.p += alen;
	}
	memset(&init, 0, sizeof init);
	init.cfa_reg = -1;
	init.rbx = CFA_SAME;
	init.rbp = CFA_SAME;
	init.ra = CFA_OTHER;
	struct probe_rd ci = { .p = c.insns, .end = c.insns_end, .abs_adj = adj };
	if (cfa_run(&ci, &c, &init, &init, 0, UINT64_MAX) < 0)
		return probe_rule_pack(PROBE_RULE_UNSUP, 0, 0, 0);
	s = init;
	if (cfa_run(&r, &c, &s, &init, begin, pc) < 0)
		return probe_rule_pack(PROBE_RULE_UNSUP, 0, 0, 0);
	if (s.ra == CFA_UNDEF)
		return probe_rule_pack(PROBE_RULE_LAST, 0, 0, 0);
	if (s.cfa_expr >= CFA_EXPR_PLT) {
		/* The PLT's: rsp + 8, + 8 from the entry's byte (pc & 15) lit on. */
		uint64_t lit = (uint64_t)(s.cfa_expr - CFA_EXPR_PLT);

		s.cfa_expr = CFA_EXPR_NONE;
		s.cfa_reg = 7;
		s.cfa_off = 8 + ((pc & 15) >= lit ? 8 : 0);
	}
	if (s.cfa_expr || (s.cfa_reg != 7 && s.cfa_reg != 6 && s.cfa_reg != 3) ||
	    s.ra != CFA_OFFSET || s.ra_off != -8 ||
	    s.cfa_off < 8 || s.cfa_off > INT32_MAX ||
	    (s.rbp != CFA_SAME && s.rbp != CFA_OFFSET) ||
	    (s.rbp == CFA_OFFSET && (s.rbp_off < INT16_MIN || s.rbp_off > INT16_MAX)))
		return probe_rule_pack(PROBE_RULE_UNSUP, 0, 0, 0);
	unsigned kind = s.cfa_reg == 7 ? PROBE_RULE_RSP :
			s.cfa_reg == 6 ? PROBE_RULE_RBP : PROBE_RULE_RBX;
	return probe_rule_rbx(probe_rule_pack(kind, s.rbp == CFA_OFFSET, (int)s.rbp_off,
					      (int32_t)s.cfa_off),
			      s.rbx == CFA_OFFSET, s.rbx != CFA_SAME && s.rbx != CFA_OFFSET,
			      s.rbx_off);
}

#endif /* PROBE_CFA_H */
