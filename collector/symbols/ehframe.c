/* ehframe.c - see ehframe.h. */
#include "symbols/ehframe.h"

#include <stdlib.h>
#include <string.h>

#include "interval.h"
#include "probe/bytes.h"
#include "util.h"

/*
 * A reader over the section's bytes (bytes.h) whose pc-relative pointers
 * come out as file addresses: the bytes are at base, vaddr in the file.
 */
static struct probe_rd reader(const uint8_t *base, const uint8_t *p, const uint8_t *end,
			      uint64_t vaddr, unsigned ptrsize)
{
	return (struct probe_rd){ .p = p, .end = end, .ptrsize = (uint8_t)ptrsize,
				  .pc_adj = (int64_t)(vaddr - (uint64_t)(uintptr_t)base) };
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
	struct probe_rd r = reader(base, cie, end, vaddr, ptrsize);
	uint64_t len = probe_rd_le(&r, 4);
	if (r.bad || len == 0 || len == 0xffffffffu || len > (uint64_t)(end - r.p))
		return -1;
	r.end = r.p + len;
	if (probe_rd_le(&r, 4) != 0)          /* a CIE's id */
		return -1;
	uint8_t version = (uint8_t)probe_rd_le(&r, 1);
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
		probe_rd_le(&r, 2);           /* address and segment selector sizes */
	probe_rd_uleb(&r);                       /* code alignment */
	probe_rd_sleb(&r);                       /* data alignment */
	if (version == 1)
		probe_rd_le(&r, 1);
	else
		probe_rd_uleb(&r);               /* return address register */
	if (r.bad)
		return -1;
	if (aug[0] != 'z')
		return 0;               /* absptr */
	uint64_t alen = probe_rd_uleb(&r);
	if (r.bad || alen > (uint64_t)(r.end - r.p))
		return -1;
	r.end = r.p + alen;
	int enc = 0;
	for (const char *a = aug + 1; *a && !r.bad; a++) {
		if (*a == 'R') {
			enc = (int)probe_rd_le(&r, 1);
			break;          /* all we need */
		} else if (*a == 'L') {
			probe_rd_le(&r, 1);
		} else if (*a == 'P') {
			uint8_t pe = (uint8_t)probe_rd_le(&r, 1);
			probe_rd_eh_value(&r, pe);      /* the personality: skipped */
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
		struct probe_rd r = reader(buf, buf + rec + 4, buf + recend, vaddr, ptrsize);
		uint64_t begin = probe_rd_eh_pointer(&r, (uint8_t)enc);
		uint64_t range = probe_rd_eh_value(&r, (uint8_t)enc);
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
	struct probe_rd r = reader(hdr, hdr, hdr + len, hdr_vaddr, ptrsize);
	if ((ptrsize != 4 && ptrsize != 8) || probe_rd_le(&r, 1) != 1)
		return 0;                       /* version 1 */
	uint8_t enc = (uint8_t)probe_rd_le(&r, 1);
	probe_rd_le(&r, 2);                           /* the table's encodings */
	if (r.bad || enc == 0xff)
		return 0;
	uint64_t v = probe_rd_eh_pointer(&r, enc);
	if (r.bad)
		return 0;
	*eh_frame_vaddr = v;
	return 1;
}
