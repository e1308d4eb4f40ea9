/* ehframe.c - see ehframe.h. */
#include "ehframe.h"

#include <stdlib.h>
#include <string.h>

#include "interval.h"
#include "util.h"

/* A bounded reader over the section's bytes. */
struct rd {
	const uint8_t *base, *p, *end;
	uint64_t vaddr;         /* of base */
	int bad;
};

/* LEB128 numbers longer than this are not real ones. */
#define LEB_MAX 10

static uint64_t uleb(struct rd *r)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < LEB_MAX && r->p < r->end; i++) {
		uint8_t b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			return v;
	}
	r->bad = 1;
	return 0;
}

static int64_t sleb(struct rd *r)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < LEB_MAX && r->p < r->end; i++) {
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

static uint64_t fixed(struct rd *r, unsigned n)
{
	uint64_t v = 0;
	if ((size_t)(r->end - r->p) < n) {
		r->bad = 1;
		return 0;
	}
	memcpy(&v, r->p, n);            /* little endian */
	r->p += n;
	return v;
}

/*
 * A DW_EH_PE-encoded value: absolute or pc-relative (pcrel: 1 adds the
 * field's own address when the encoding says so; 0 for lengths).
 */
static uint64_t encoded(struct rd *r, uint8_t enc, unsigned ptrsize, int pcrel)
{
	uint64_t at = r->vaddr + (uint64_t)(r->p - r->base), v;
	switch (enc & 0x0f) {
	case 0x00: v = fixed(r, ptrsize); break;
	case 0x01: v = uleb(r); break;
	case 0x02: v = fixed(r, 2); break;
	case 0x03: v = fixed(r, 4); break;
	case 0x04: v = fixed(r, 8); break;
	case 0x09: v = (uint64_t)sleb(r); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)fixed(r, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)fixed(r, 4); break;
	case 0x0c: v = fixed(r, 8); break;
	default: r->bad = 1; return 0;
	}
	if (ptrsize == 4 && (enc & 0x0f) == 0x00)
		v &= 0xffffffffu;
	if (!pcrel)
		return v;
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += at; break;
	default: r->bad = 1; break;     /* textrel, datarel, funcrel, aligned */
	}
	if (enc & 0x80)
		r->bad = 1;             /* indirect */
	if (ptrsize == 4)
		v &= 0xffffffffu;
	return v;
}

/* Real augmentation strings are a few letters: "zR", "zPLR", "zPLRS"... */
#define AUG_MAX 16

/*
 * The FDE pointer encoding of the CIE at cie (bounded by end): 0..255, or
 * -1 when it is not a CIE we can read.  Bounded time whatever its length.
 */
static int cie_encoding(const uint8_t *base, const uint8_t *cie, const uint8_t *end,
			uint64_t vaddr, unsigned ptrsize)
{
	struct rd r = { base, cie, end, vaddr, 0 };
	uint64_t len = fixed(&r, 4);
	if (r.bad || len == 0 || len == 0xffffffffu || len > (uint64_t)(end - r.p))
		return -1;
	r.end = r.p + len;
	if (fixed(&r, 4) != 0)          /* a CIE's id */
		return -1;
	uint8_t version = (uint8_t)fixed(&r, 1);
	if (r.bad || (version != 1 && version != 3 && version != 4))
		return -1;
	char aug[AUG_MAX];
	size_t k = 0;
	while (k < AUG_MAX && r.p < r.end && *r.p)
		aug[k++] = (char)*r.p++;
	if (k == AUG_MAX || r.p >= r.end)
		return -1;
	r.p++;                          /* its NUL */
	aug[k] = '\0';
	if (aug[0] && aug[0] != 'z')
		return -1;              /* "eh" and older forms */
	if (version == 4)
		fixed(&r, 2);           /* address and segment selector sizes */
	uleb(&r);                       /* code alignment */
	sleb(&r);                       /* data alignment */
	if (version == 1)
		fixed(&r, 1);
	else
		uleb(&r);               /* return address register */
	if (r.bad)
		return -1;
	if (aug[0] != 'z')
		return 0;               /* absptr */
	uint64_t alen = uleb(&r);
	if (r.bad || alen > (uint64_t)(r.end - r.p))
		return -1;
	r.end = r.p + alen;
	int enc = 0;
	for (const char *a = aug + 1; *a && !r.bad; a++) {
		if (*a == 'R') {
			enc = (int)fixed(&r, 1);
			break;          /* all we need */
		} else if (*a == 'L') {
			fixed(&r, 1);
		} else if (*a == 'P') {
			uint8_t pe = (uint8_t)fixed(&r, 1);
			encoded(&r, pe, ptrsize, 0);    /* the personality: skipped */
		} else if (*a == 'S' || *a == 'B' || *a == 'G') {
			/* no data */
		} else {
			break;          /* unknown: what follows cannot be read */
		}
	}
	return r.bad ? -1 : enc;
}

/* CIEs seen, by offset: FDEs of one CIE are usually together. */
#define CIE_CACHE 64

static int cmp_range(const void *x, const void *y)
{
	const struct ehf_range *a = x, *b = y;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->end > b->end ? -1 : a->end < b->end;  /* the longest first */
}

size_t ehframe_ranges(const uint8_t *buf, size_t len, uint64_t vaddr, unsigned ptrsize,
		      struct ehf_range **out)
{
	struct { size_t off; int enc; } cache[CIE_CACHE];
	for (size_t i = 0; i < CIE_CACHE; i++)
		cache[i].off = (size_t)-1;
	struct ehf_range *v = NULL;
	size_t n = 0, cap = 0, off = 0;
	*out = NULL;
	if (ptrsize != 4 && ptrsize != 8)
		return 0;
	while (len - off >= 8) {
		uint32_t l;
		memcpy(&l, buf + off, 4);
		if (l == 0 || l == 0xffffffffu || l > len - off - 4)
			break;          /* the end, 64-bit DWARF, or damage */
		size_t rec = off + 4, recend = rec + l;
		off = recend;
		if (l < 8)
			continue;
		uint32_t id;
		memcpy(&id, buf + rec, 4);
		if (id == 0 || id > rec)
			continue;       /* a CIE, or an FDE pointing outside */
		size_t cie = rec - id;
		size_t slot = (cie / 4) % CIE_CACHE;
		if (cache[slot].off != cie) {
			cache[slot].off = cie;
			cache[slot].enc = cie_encoding(buf, buf + cie, buf + len, vaddr, ptrsize);
		}
		int enc = cache[slot].enc;
		if (enc < 0)
			continue;
		struct rd r = { buf, buf + rec + 4, buf + recend, vaddr, 0 };
		uint64_t begin = encoded(&r, (uint8_t)enc, ptrsize, 1);
		uint64_t range = encoded(&r, (uint8_t)(enc & 0x0f), ptrsize, 0);
		if (r.bad || range == 0 || begin + range < begin)
			continue;
		v = xgrow(v, &cap, n + 1, sizeof(*v));
		v[n++] = (struct ehf_range){ begin, begin + range };
	}
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_range);
	size_t w = 0;
	for (size_t i = 0; i < n; i++) {
		if (w > 0 && v[w - 1].start == v[i].start)
			continue;       /* the longest of one start is kept */
		v[w++] = v[i];
	}
	for (size_t i = 0; i + 1 < w; i++)
		if (v[i].end > v[i + 1].start)
			v[i].end = v[i + 1].start;
	*out = v;
	return w;
}

const struct ehf_range *ehframe_find(const struct ehf_range *r, size_t n, uint64_t vaddr)
{
	size_t i = interval_upper(r, n, sizeof(*r), offsetof(struct ehf_range, start), vaddr);
	if (i == 0 || vaddr >= r[i - 1].end)
		return NULL;
	return &r[i - 1];
}

int ehframe_hdr_target(const uint8_t *hdr, size_t len, uint64_t hdr_vaddr, unsigned ptrsize,
		       uint64_t *eh_frame_vaddr)
{
	struct rd r = { hdr, hdr, hdr + len, hdr_vaddr, 0 };
	if ((ptrsize != 4 && ptrsize != 8) || fixed(&r, 1) != 1)
		return 0;                       /* version 1 */
	uint8_t enc = (uint8_t)fixed(&r, 1);
	fixed(&r, 2);                           /* the table's encodings */
	if (r.bad || enc == 0xff)
		return 0;
	uint64_t v = encoded(&r, enc, ptrsize, 1);
	if (r.bad)
		return 0;
	*eh_frame_vaddr = v;
	return 1;
}
