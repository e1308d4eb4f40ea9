/*
 * bytes.h - the one bounded reader of untrusted bytes: little-endian
 * integers, LEB128 (DWARF's, and the wire's varints with their zig-zag
 * signed form), and DWARF's DW_EH_PE-encoded pointers.
 *
 * Contract:
 *   - Users: the wire's decoder (collector/data/wire_decode.c), the arena's
 *     reader (collector/ingest/arena_read.c), .eh_frame's function ranges
 *     (collector/symbols/ehframe.c) and CFI (cfa.h: cfi_learn.c in the
 *     collector, and libprobe's handler in SIGNAL CONTEXT).  So: static
 *     inline, no allocation, no lock, nothing but the bytes in [p, end).
 *   - A read past end, a LEB128 of more than 10 bytes (or, unsigned, of
 *     more than 64 bits), or a pointer encoding not handled sets bad and
 *     gives 0; once bad is set every read gives 0 and moves nothing.
 *   - A reader is made with designated fields: { .p = p, .end = end }.
 */
#ifndef PROBE_BYTES_H
#define PROBE_BYTES_H

#include <stdint.h>
#include <string.h>

struct probe_rd {
	const uint8_t *p, *end;
	int bad;
	int64_t abs_adj;        /* DW_EH_PE absolute pointers: + abs_adj */
	int64_t pc_adj;         /* DW_EH_PE pc-relative ones: the field's address
				   in memory + pc_adj (its address in the file's
				   space, when the bytes are a copy) */
	uint8_t ptrsize;        /* DW_EH_PE_absptr's bytes: 8 (0: 8), or 4 */
};

#define PROBE_LEB_MAX 10u       /* bytes: a longer LEB128 is not a real one */

/* n (1 to 8) bytes, little-endian. */
static inline uint64_t probe_rd_le(struct probe_rd *r, unsigned n)
{
	uint64_t v = 0;

	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = 1;
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

static inline uint64_t probe_rd_uleb_slow(struct probe_rd *r)
{
	uint64_t v = 0;

	for (unsigned shift = 0; !r->bad; shift += 7) {
		if (r->p >= r->end || shift > 63) {
			r->bad = 1;
			break;
		}
		uint8_t c = *r->p++;
		if (shift == 63 && (c & 0x7e)) {        /* bits beyond 64 */
			r->bad = 1;
			break;
		}
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	return 0;
}

/* Unsigned LEB128 (the wire's "uv").  Most are one byte: those at once. */
static inline uint64_t probe_rd_uleb(struct probe_rd *r)
{
	if (!r->bad && r->p < r->end && *r->p < 0x80)
		return *r->p++;
	return probe_rd_uleb_slow(r);
}

/* Signed LEB128 (DWARF's sleb). */
static inline int64_t probe_rd_sleb(struct probe_rd *r)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < PROBE_LEB_MAX && !r->bad && r->p < r->end; i++) {
		uint8_t b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			if (7 * (i + 1) < 64 && (b & 0x40))
				v |= ~(uint64_t)0 << (7 * (i + 1));
			return (int64_t)v;
		}
	}
	r->bad = 1;
	return 0;
}

/* Zig-zag signed varint (the wire's "sv"). */
static inline int64_t probe_rd_zigzag(struct probe_rd *r)
{
	uint64_t u = probe_rd_uleb(r);
	return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

/* A DW_EH_PE value as stored (enc's low nibble), nothing added: a length. */
static inline uint64_t probe_rd_eh_value(struct probe_rd *r, uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x00: return probe_rd_le(r, r->ptrsize == 4 ? 4 : 8);
	case 0x01: return probe_rd_uleb(r);
	case 0x02: return probe_rd_le(r, 2);
	case 0x03: return probe_rd_le(r, 4);
	case 0x04: return probe_rd_le(r, 8);
	case 0x09: return (uint64_t)probe_rd_sleb(r);
	case 0x0a: return (uint64_t)(int64_t)(int16_t)probe_rd_le(r, 2);
	case 0x0b: return (uint64_t)(int64_t)(int32_t)probe_rd_le(r, 4);
	case 0x0c: return probe_rd_le(r, 8);
	default: r->bad = 1; return 0;
	}
}

/*
 * A DW_EH_PE-encoded pointer: absolute (+ abs_adj) or pc-relative (+ the
 * field's own address, + pc_adj); DW_EH_PE_omit (0xff) gives 0.  textrel,
 * datarel, funcrel and indirect ones are not in the CIEs and FDEs read
 * here (only personality pointers are indirect: eh_value skips those).
 */
static inline uint64_t probe_rd_eh_pointer(struct probe_rd *r, uint8_t enc)
{
	const uint8_t *at = r->p;
	uint64_t v;

	if (enc == 0xff)
		return 0;
	v = probe_rd_eh_value(r, enc);
	switch (enc & 0x70) {
	case 0x00: v += (uint64_t)r->abs_adj; break;
	case 0x10: v += (uint64_t)(uintptr_t)at + (uint64_t)r->pc_adj; break;
	default: r->bad = 1; return 0;
	}
	if (enc & 0x80) {
		r->bad = 1;
		return 0;
	}
	if (r->ptrsize == 4)
		v &= 0xffffffffu;
	return r->bad ? 0 : v;
}

#endif
