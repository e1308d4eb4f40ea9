/*
 * test_ehframe - collector/symbols/ehframe.c on .eh_frame sections built
 * here, byte by byte: pc-relative and absolute pointers, unsorted and
 * overlapping FDEs, and what a forged file holds (ranges that wrap, endless
 * LEB128 numbers and augmentation strings, CIE pointers outside the section
 * or at an FDE, lengths past the end, encodings we do not read, random
 * damage), .eh_frame_hdr's pointer to .eh_frame, and that 200,000 FDEs
 * take linear time.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "symbols/ehframe.h"
#include "tap.h"

static uint8_t buf[1 << 23];
static size_t len;
static const uint64_t VADDR = 0x2000;

static void put(const void *p, size_t n)
{
	memcpy(buf + len, p, n);
	len += n;
}
static void u8(uint8_t v) { put(&v, 1); }
static void u32(uint32_t v) { put(&v, 4); }
static void u64(uint64_t v) { put(&v, 8); }
static void patch_len(size_t start)
{
	uint32_t l = (uint32_t)(len - start - 4);
	memcpy(buf + start, &l, 4);
}

/* A CIE: augmentation aug ("zR": with enc), returns its offset. */
static size_t cie(const char *aug, uint8_t enc)
{
	size_t start = len;
	u32(0);
	u32(0);                 /* CIE id */
	u8(1);                  /* version */
	put(aug, strlen(aug) + 1);
	u8(1);                  /* code alignment */
	u8(0x78);               /* data alignment -8 */
	u8(16);                 /* return address register */
	if (aug[0] == 'z') {
		u8(strchr(aug, 'R') ? 1 : 0);
		if (strchr(aug, 'R'))
			u8(enc);
	}
	patch_len(start);
	return start;
}

/* An FDE of the CIE at c: pcrel sdata4 (0x1b) or absptr udata8 (0x00). */
static void fde(size_t c, uint8_t enc, int z, uint64_t begin, uint64_t range)
{
	size_t start = len;
	u32(0);
	u32((uint32_t)(len - c));
	if (enc == 0x1b) {
		u32((uint32_t)(begin - (VADDR + len)));
		u32((uint32_t)range);
	} else {
		u64(begin);
		u64(range);
	}
	if (z)
		u8(0);
	patch_len(start);
}

static size_t ranges(struct ehf_range **r)
{
	return ehframe_ranges(buf, len, VADDR, 8, r);
}

/* Sorted, one per start, none overlapping, none empty. */
static int sane(const struct ehf_range *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (r[i].start >= r[i].end)
			return 0;
		if (i + 1 < n && r[i].end > r[i + 1].start)
			return 0;
	}
	return 1;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

int main(void)
{
	struct ehf_range *r;
	size_t n;
	plan(18);

	/* gcc's shape: one "zR" CIE, pc-relative sdata4 pointers, unsorted. */
	len = 0;
	size_t c = cie("zR", 0x1b);
	fde(c, 0x1b, 1, 0x1100, 0x41);
	fde(c, 0x1b, 1, 0x1000, 0x50);
	fde(c, 0x1b, 1, 0x1150, 0x41);
	u32(0);
	n = ranges(&r);
	ok(n == 3 && r[0].start == 0x1000 && r[0].end == 0x1050 && r[1].start == 0x1100 &&
	   r[1].end == 0x1141 && r[2].start == 0x1150 && r[2].end == 0x1191,
	   "pc-relative FDEs: three ranges, sorted (%zu)", n);
	ok(ehframe_find(r, n, 0x1120) == &r[1] && ehframe_find(r, n, 0x1100) == &r[1] &&
	   ehframe_find(r, n, 0x1140) == &r[1] && !ehframe_find(r, n, 0x1141) &&
	   !ehframe_find(r, n, 0xfff) && ehframe_find(r, n, 0x1190) == &r[2] &&
	   !ehframe_find(r, n, 0x1191) && !ehframe_find(r, n, 0x1050),
	   "ehframe_find: inside, at the start, at the last byte; not in gaps or past the end");
	free(r);

	/* No augmentation: absolute pointers. */
	len = 0;
	c = cie("", 0);
	fde(c, 0x00, 0, 0x401000, 0x10);
	n = ranges(&r);
	ok(n == 1 && r[0].start == 0x401000 && r[0].end == 0x401010, "absptr FDE");
	free(r);

	/* Overlaps: cut where the next begins; one start, the longest kept. */
	len = 0;
	c = cie("", 0);
	fde(c, 0, 0, 0x1000, 0x100);
	fde(c, 0, 0, 0x1080, 0x10);
	fde(c, 0, 0, 0x3000, 0x10);
	fde(c, 0, 0, 0x3000, 0x40);
	n = ranges(&r);
	ok(n == 3 && r[0].end == 0x1080 && r[1].start == 0x1080 && r[2].start == 0x3000 &&
	   r[2].end == 0x3040 && sane(r, n), "overlapping FDEs are cut, equal starts kept once");
	free(r);

	/* Ranges that wrap around or are empty. */
	len = 0;
	c = cie("", 0);
	fde(c, 0, 0, UINT64_MAX - 0xf, 0x100);
	fde(c, 0, 0, 0x5000, 0);
	fde(c, 0, 0, 0x6000, 8);
	n = ranges(&r);
	ok(n == 1 && r[0].start == 0x6000, "wrapping and empty ranges are left out");
	free(r);

	/* An augmentation string longer than any real one. */
	len = 0;
	c = cie("zzzzzzzzzzzzzzzzzzzzzzzzzR", 0x1b);
	fde(c, 0x1b, 1, 0x1000, 0x10);
	n = ranges(&r);
	ok(n == 0 && !r, "a 26-letter augmentation string: its FDEs are left out");

	/* A CIE whose code alignment is an endless LEB128. */
	len = 0;
	size_t start = len;
	u32(0);
	u32(0);
	u8(1);
	put("zR", 3);
	for (int i = 0; i < 5000; i++)
		u8(0x80);
	u8(0);
	patch_len(start);
	fde(start, 0x1b, 1, 0x1000, 0x10);
	n = ranges(&r);
	ok(n == 0, "a 5,000-byte LEB128: the CIE is refused");

	/* CIE pointers: before the section, at an FDE. */
	len = 0;
	c = cie("zR", 0x1b);
	size_t f1 = len;
	fde(c, 0x1b, 1, 0x1000, 0x10);
	start = len;
	u32(12);
	u32((uint32_t)(len + 1000));    /* before the section */
	u32(0);
	u32(0x10);
	patch_len(start);
	start = len;
	u32(12);
	u32((uint32_t)(len - f1));      /* at an FDE, not a CIE */
	u32(0);
	u32(0x10);
	patch_len(start);
	n = ranges(&r);
	ok(n == 1 && r[0].start == 0x1000, "CIE pointers outside the section or at an FDE");
	free(r);

	/* A record longer than what is left: reading stops there. */
	len = 0;
	c = cie("zR", 0x1b);
	fde(c, 0x1b, 1, 0x1000, 0x10);
	u32(0x7fffffff);
	u32(0);
	n = ranges(&r);
	ok(n == 1, "a length past the end stops the walk (what came before is kept)");
	free(r);

	/* Encodings we do not read: datarel, indirect. */
	len = 0;
	c = cie("zR", 0x3b);
	fde(c, 0x1b, 1, 0x1000, 0x10);
	size_t c2 = cie("zR", 0x9b);
	fde(c2, 0x1b, 1, 0x2000, 0x10);
	n = ranges(&r);
	ok(n == 0, "datarel and indirect FDE encodings are left out");

	/* 64-bit DWARF lengths and a zero length end the walk. */
	len = 0;
	c = cie("zR", 0x1b);
	fde(c, 0x1b, 1, 0x1000, 0x10);
	u32(0);
	fde(c, 0x1b, 1, 0x2000, 0x10);
	n = ranges(&r);
	ok(n == 1, "a zero length is the end");
	free(r);

	/* Nothing but zeros (a sparse hole): nothing, at once. */
	memset(buf, 0, 1 << 20);
	len = 1 << 20;
	n = ranges(&r);
	ok(n == 0 && !r, "1 MiB of zeros: no ranges");

	/* ptrsize 4 (ELFCLASS32) absptr. */
	len = 0;
	c = cie("", 0);
	start = len;
	u32(0);
	u32((uint32_t)(len - c));
	u32(0x8048000);
	u32(0x20);
	patch_len(start);
	n = ehframe_ranges(buf, len, VADDR, 4, &r);
	ok(n == 1 && r[0].start == 0x8048000 && r[0].end == 0x8048020, "32-bit absptr");
	free(r);
	ok(ehframe_ranges(buf, len, VADDR, 3, &r) == 0, "a pointer size of 3 is refused");

	/* .eh_frame_hdr: version 1, eh_frame_ptr pcrel sdata4. */
	{
		uint8_t h[12] = { 1, 0x1b, 0x03, 0x3b };
		int32_t rel = 0x3000 - (0x2000 + 4);
		uint64_t at = 0;
		memcpy(h + 4, &rel, 4);
		int got = ehframe_hdr_target(h, sizeof(h), 0x2000, 8, &at);
		h[0] = 2;
		ok(got == 1 && at == 0x3000 && !ehframe_hdr_target(h, sizeof(h), 0x2000, 8, &at) &&
		   !ehframe_hdr_target(h, 5, 0x2000, 8, &at),
		   ".eh_frame_hdr: .eh_frame's address; another version or a short header refused");
	}

	/* 200,000 FDEs of one CIE: linear. */
	len = 0;
	c = cie("zR", 0x1b);
	for (uint64_t i = 0; i < 200000; i++)
		fde(c, 0x1b, 1, 0x100000 + 16 * (199999 - i), 16);
	double t0 = now();
	n = ranges(&r);
	double dt = now() - t0;
	ok(n == 200000 && sane(r, n) && r[0].start == 0x100000, "200,000 FDEs (%zu)", n);
	ok(dt < 1.0, "... read and sorted in %.3f s", dt);
	free(r);

	/* Random damage to a valid section: sane results, no crash. */
	len = 0;
	start = len;
	u32(0);
	u32(0);
	u8(1);
	put("zPLR", 5);
	u8(1);
	u8(0x78);
	u8(16);
	u8(7);                  /* augmentation data: P enc, 4 bytes, L enc, R enc */
	u8(0x9b);
	u32(0x1234);
	u8(0x1b);
	u8(0x1b);
	patch_len(start);
	c = start;
	for (uint64_t i = 0; i < 50; i++)
		fde(c, 0x1b, 1, 0x1000 + 0x40 * i, 0x30 + i);
	size_t good = len;
	n = ranges(&r);
	int all_sane = n == 50 && sane(r, n);
	free(r);
	uint8_t *orig = malloc(good);
	memcpy(orig, buf, good);
	srand(7);
	for (int it = 0; it < 20000; it++) {
		memcpy(buf, orig, good);
		for (int k = 1 + rand() % 6; k > 0; k--)
			buf[rand() % good] = (uint8_t)(rand() % 3 ? rand() : (rand() % 2 ? 0xff : 0x80));
		n = ranges(&r);
		if (!sane(r, n))
			all_sane = 0;
		free(r);
	}
	free(orig);
	ok(all_sane, "\"zPLR\" CIE, then 20,000 randomly damaged copies: sorted, disjoint ranges");
	return done();
}
