/*
 * test_wire.c - the wire decoder against good, truncated, oversized and
 * garbage input.  Encodes with wire.h's helpers (the writer libprobe uses),
 * decodes with collector/data/wire_decode.c (the one decoder).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "probe/wire.h"
#include "tap.h"
#include "data/wire_decode.h"

static uint8_t buf[1 << 16];

/* A stream with one frame of each kind; returns its length. */
static size_t make_stream(uint8_t *out, size_t cap)
{
	struct probe_wbuf w;
	probe_wbuf_init(&w, out, cap);
	size_t at = probe_frame_begin(&w, PROBE_F_HELLO, 42);
	probe_put_u32(&w, PROBE_WIRE_VERSION);
	probe_put_u32(&w, 1);
	probe_put_u32(&w, 1);
	probe_put_u64(&w, 0);
	probe_put_u8(&w, 1);
	probe_put_u64(&w, 999);
	probe_put_u64(&w, 1000);
	probe_put_str(&w, "cpu-clock");
	probe_put_str(&w, "/bin/app");
	probe_put_str(&w, "app");
	probe_put_u16(&w, 2);
	probe_put_str(&w, "app");
	probe_put_str(&w, "--flag");
	probe_frame_end(&w, at);

	at = probe_frame_begin(&w, PROBE_F_MAP, 42);
	probe_put_u64(&w, 0x400000);
	probe_put_u64(&w, 0x401000);
	probe_put_u64(&w, 0);
	probe_put_u64(&w, 0);
	probe_put_u8(&w, 3);
	probe_put_bytes(&w, "\x01\x02\x03", 3);
	probe_put_str(&w, "/bin/app");
	probe_frame_end(&w, at);

	at = probe_frame_begin(&w, PROBE_F_THREAD, 42);
	probe_put_u32(&w, 43);
	probe_put_str(&w, "worker");
	probe_frame_end(&w, at);

	at = probe_frame_begin(&w, PROBE_F_SAMPLES, 42);
	probe_put_u64(&w, 5000);
	probe_put_uv(&w, 2);
	for (int s = 0; s < 2; s++) {
		uint64_t frames[3] = { 0x400123, 0x400456 + s, 0x7fff00001000ull };
		uint64_t prev = 0;
		probe_put_uv(&w, 43);
		probe_put_uv(&w, 10 + s);
		probe_put_uv(&w, 1001001);
		probe_put_uv(&w, 0);
		probe_put_uv(&w, 3);
		for (int i = 0; i < 3; i++) {
			probe_put_sv(&w, (int64_t)(frames[i] - prev));
			prev = frames[i];
		}
	}
	probe_frame_end(&w, at);

	at = probe_frame_begin(&w, PROBE_F_LOST, 42);
	probe_put_u32(&w, 43);
	probe_put_u32(&w, PROBE_LOST_SOCKET);
	probe_put_u64(&w, 7);
	probe_frame_end(&w, at);

	at = probe_frame_begin(&w, 99, 42); /* unknown kind: skipped */
	probe_put_u32(&w, 0xdeadbeef);
	probe_frame_end(&w, at);

	at = probe_frame_begin(&w, PROBE_F_EXIT, 42);
	probe_put_u32(&w, (uint32_t)-1);
	probe_put_u64(&w, 2);
	probe_put_u32(&w, 1);
	probe_frame_end(&w, at);
	return w.ok ? w.len : 0;
}

/* Decode a whole buffer; returns frames decoded or -1 on the first error. */
static int decode_all(const uint8_t *p, size_t n, char err[PROBE_ERR_MAX],
		      int *pending)
{
	struct probe_stream s;
	struct probe_scratch sc;
	struct probe_msg m;
	struct probe_sample smp;
	const uint8_t *f;
	size_t flen;
	int frames = 0, r;
	probe_stream_init(&s);
	probe_scratch_init(&sc);
	size_t fed = 0;
	while (fed < n) {
		/* Feed in odd-sized pieces to exercise reassembly. */
		size_t piece = n - fed < 37 ? n - fed : 37;
		fed += probe_stream_feed(&s, p + fed, piece);
		while ((r = probe_stream_next(&s, &f, &flen, err)) == 1) {
			if (probe_decode_frame(f, flen, &m, &sc, err) < 0) {
				frames = -1;
				goto out;
			}
			while (probe_samples_next(&m, &smp))
				;
			frames++;
		}
		if (r < 0) {
			frames = -1;
			goto out;
		}
	}
	*pending = (int)probe_stream_pending(&s);
out:
	probe_stream_free(&s);
	probe_scratch_free(&sc);
	return frames;
}


/* ---- damaged recordings: resynchronisation in linear time ------------- */

/* A frame of type and size bytes (header included, body filler) and its
 * CRC-32 at d; returns the bytes written. */
static size_t put_frame_crc(uint8_t *d, unsigned type, size_t size, uint8_t filler)
{
	struct probe_wbuf w;
	probe_wbuf_init(&w, d, size);
	size_t at = probe_frame_begin(&w, type, 7);
	while (w.len < size)
		probe_put_u8(&w, filler);
	probe_frame_end(&w, at);
	uLong c = crc32(0L, d, (uInt)size);
	for (int i = 0; i < 4; i++)
		d[size + i] = (uint8_t)(c >> (8 * i));
	return size + PROBE_FILE_CRC;
}

struct resync_run {
	uint64_t at[64];        /* offsets of the frames found */
	int n;
	uint64_t crc_bytes, moved, skipped, pending;
};

/*
 * Split p[0..n) (a recording's body, CRCs after frames) as recfile_read
 * does, fed piece bytes at a time: what does not check out is skipped a
 * byte at a time, frames are not decoded but those of type reject fail to,
 * as if they had been (put back, skipped a byte at a time as well).
 */
static void resync_split_rej(const uint8_t *p, size_t n, size_t piece, unsigned reject,
			     struct resync_run *out)
{
	struct probe_stream s;
	char err[PROBE_ERR_MAX];
	const uint8_t *f;
	size_t flen, fed = 0;
	memset(out, 0, sizeof(*out));
	probe_stream_init(&s);
	s.crc = 1;
	for (;;) {
		int r = probe_stream_next(&s, &f, &flen, err);
		if (r == 1 && ((unsigned)f[4] | (unsigned)f[5] << 8) == reject) {
			probe_stream_unget(&s);
			r = -1;
		}
		if (r == 1) {
			if (out->n < 64)
				out->at[out->n++] = s.consumed - flen - PROBE_FILE_CRC;
			s.resync = 0;
			continue;
		}
		if (r < 0) {
			s.resync = 1;
			probe_stream_skip(&s, 1);
			continue;
		}
		if (fed == n) {
			if (s.eof || probe_stream_pending(&s) < PROBE_FRAME_HDR)
				break;
			s.eof = 1;
			continue;
		}
		size_t avail, k;
		uint8_t *dst = probe_stream_space(&s, &avail);
		k = n - fed < piece ? n - fed : piece;
		k = k < avail ? k : avail;
		memcpy(dst, p + fed, k);
		probe_stream_commit(&s, k);
		fed += k;
	}
	out->crc_bytes = s.crc_bytes;
	out->moved = s.moved;
	out->skipped = s.skipped;
	out->pending = probe_stream_pending(&s);
	probe_stream_free(&s);
}

static void resync_split(const uint8_t *p, size_t n, size_t piece, struct resync_run *out)
{
	resync_split_rej(p, n, piece, 0, out);
}

static void put_le32(uint8_t *d, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		d[i] = (uint8_t)(v >> (8 * i));
}

/*
 * Frames nested in one another 8 bytes apart whose CRCs all match but which
 * do not decode (a forgery): each was checked over its size, 1 MiB every 8
 * bytes (6 s a MiB), since the kept CRCs began only at a CRC that failed.
 */
static void test_resync_nested(void)
{
	const uint32_t s0 = PROBE_FRAME_MAX - 64, nest = 4000;
	const size_t cap = PROBE_FRAME_MAX + 4096;
	uint8_t *b = calloc(1, cap);
	for (uint32_t i = 0; i < nest; i++) {
		put_le32(b + 8 * i, s0 - 16 * i);
		b[8 * i + 4] = PROBE_F_MAP;
	}
	/* The innermost CRC first; each frame is its header, the frame in it
	 * with its CRC and 4 bytes more (CRC-32 of a concatenation: combined). */
	uLong c = crc32(0L, b + 8 * (nest - 1), s0 - 16 * (nest - 1));
	put_le32(b + 8 * (nest - 1) + s0 - 16 * (nest - 1), (uint32_t)c);
	for (uint32_t i = nest - 1; i-- > 0;) {
		size_t end = 8 * i + s0 - 16 * i;
		c = crc32_combine(crc32(0L, b + 8 * i, 8), c, s0 - 16 * (i + 1));
		c = crc32_combine(c, crc32(0L, b + end - 8, 8), 8);
		put_le32(b + end, (uint32_t)c);
	}
	size_t n = s0 + 4, planted = n;
	n += put_frame_crc(b + n, PROBE_F_THREAD, 40, 'a');
	struct resync_run r;
	resync_split_rej(b, n, 65536, PROBE_F_MAP, &r);
	ok(r.n == 1 && r.at[0] == planted,
	   "nested frames whose CRCs match but do not decode: the frame after them "
	   "is found (%d)", r.n);
	ok(r.crc_bytes <= 3 * (uint64_t)n,
	   "nested: %" PRIu64 " bytes run through CRC-32 for %zu read (at most 3 "
	   "times; each frame over its size: %u times)", r.crc_bytes, n, nest / 2);
	free(b);
}

/* A header of type and flags; whether it may start a frame after damage. */
static int plausible(unsigned type, unsigned flags)
{
	uint8_t h[PROBE_FRAME_HDR] = { 40, 0, 0, 0 };
	h[4] = (uint8_t)type;
	h[6] = (uint8_t)flags;
	h[7] = (uint8_t)(flags >> 8);
	return probe_frame_plausible(h);
}

/* The flags of today's HELLO and EXIT are plausible; others are not. */
static void test_plausible_flags(void)
{
	unsigned why = PROBE_HELLO_KWHY_SETSIG << PROBE_HELLO_KWHY_SHIFT;
	ok(plausible(PROBE_F_HELLO, 0) && plausible(PROBE_F_HELLO, PROBE_HELLO_KSTATE) &&
	   plausible(PROBE_F_HELLO, PROBE_HELLO_KSTATE | PROBE_HELLO_KERNEL) &&
	   plausible(PROBE_F_HELLO, PROBE_HELLO_KSTATE | why | PROBE_HELLO_NOUSER) &&
	   plausible(PROBE_F_EXIT, PROBE_EXIT_WAITED) && plausible(PROBE_F_MAP, 0),
	   "after damage, a HELLO with its kernel flags (KSTATE...) and an EXIT "
	   "with WAITED can start a frame");
	ok(plausible(PROBE_F_HELLO, PROBE_HELLO_KSTATE | PROBE_HELLO_NOARENA) &&
	   !plausible(PROBE_F_HELLO, 0x80) && !plausible(PROBE_F_HELLO, 0x100) &&
	   !plausible(PROBE_F_EXIT, 0x2) && !plausible(PROBE_F_MAP, 1) &&
	   !plausible(PROBE_F_SAMPLES, PROBE_HELLO_KSTATE) &&
	   !plausible(PROBE_F_SYNC, 0) && !plausible(PROBE_F_TYPE_MAX, 0),
	   "flags no writer sets, or set on another type, cannot; nor SYNC or an "
	   "unknown type");
}

static void test_resync(void)
{
	/* 3 MiB of frame headers claiming 1 MiB each (the file, with a
	 * plausible type: every 8th byte could start a frame), then frames. */
	const size_t junk = 3u << 20, cap = junk + 2 * PROBE_FRAME_MAX + 4096;
	uint8_t *b = malloc(cap);
	for (size_t i = 0; i < junk; i += 8)
		memcpy(b + i, "\x00\x00\x10\x00\x01\x00\x00\x00", 8);
	size_t n = junk, planted[3];
	planted[0] = n;
	n += put_frame_crc(b + n, PROBE_F_THREAD, 40, 'a');
	memset(b + n, 0x55, 1000);              /* damage between two frames */
	n += 1000;
	planted[1] = n;
	n += put_frame_crc(b + n, PROBE_F_MAP, PROBE_FRAME_MAX, 'b');   /* the largest */
	b[n - 7] ^= 1;                          /* its CRC fails: not found */
	memcpy(b + n, "\x00\x00\x10\x00\x01\x00\x00\x00", 8);
	n += 8 + 3;
	planted[2] = n;
	n += put_frame_crc(b + n, PROBE_F_LOST, 28, 'c');
	memcpy(b + n, "\x30\x00\x00\x00\x01\x00\x00\x00", 8);     /* cut short */
	n += 8;

	struct resync_run r;
	resync_split(b, n, 65536, &r);
	ok(r.n == 2 && r.at[0] == planted[0] && r.at[1] == planted[2],
	   "damage: the intact frames after 3 MiB of frame headers are found, the "
	   "one whose CRC fails is not (%d found)", r.n);
	ok(r.crc_bytes <= 3 * (uint64_t)n,
	   "damage: %" PRIu64 " bytes run through CRC-32 for %zu read (at most 3 "
	   "times; a CRC at every 8th byte over its size: 100,000 times)",
	   r.crc_bytes, n);
	ok(r.moved <= 2 * (uint64_t)n,
	   "damage: %" PRIu64 " bytes moved in the buffer for %zu read (at most twice)",
	   r.moved, n);
	ok(r.skipped + r.pending == n - 40 - 28 - 2 * PROBE_FILE_CRC && r.pending < 12,
	   "damage: every other byte skipped (%" PRIu64 "), but for the last %" PRIu64
	   " (too few for a frame)", r.skipped, r.pending);

	/* The CRC of a window from the kept CRCs is the CRC: frames of every
	 * size after damage, fed in odd pieces (the buffer moves under them). */
	size_t m = 0, nplant = 0;
	size_t sizes[] = { 12, 13, 1023, 1024, 1025, 4097, 65536, 300000, 12, 777 };
	unsigned seed = 99;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (int k = 0; k < 3000; k++) {
			seed = seed * 1103515245 + 12345;
			b[m++] = (uint8_t)(seed >> 16);
		}
		b[0] = 0xff;                    /* the first check fails */
		planted[nplant < 3 ? nplant : 2] = m;
		r.at[nplant] = m;
		nplant++;
		m += put_frame_crc(b + m, PROBE_F_THREAD + (unsigned)i % 3, sizes[i],
				   (uint8_t)i);
	}
	uint64_t want[16];
	memcpy(want, r.at, nplant * sizeof(want[0]));
	resync_split(b, m, 4093, &r);
	int same = r.n == (int)nplant;
	for (size_t i = 0; same && i < nplant; i++)
		same = r.at[i] == want[i];
	ok(same, "damage: %zu frames of 12 bytes to 300,000 among random bytes, "
	   "checked from the kept CRCs, all found (%d)", nplant, r.n);
	free(b);
}

int main(void)
{
	char err[PROBE_ERR_MAX];
	int pending = 0;
	plan(39);

	size_t n = make_stream(buf, sizeof(buf));
	ok(n > 0, "encoder produced a stream of %zu bytes", n);
	is_int(decode_all(buf, n, err, &pending), 7, "all 7 frames decode");
	is_int(pending, 0, "nothing left over");

	/* Field values survive the round trip. */
	{
		struct probe_scratch sc;
		struct probe_msg m;
		struct probe_sample smp;
		probe_scratch_init(&sc);
		uint32_t hello_len = buf[0] | buf[1] << 8;
		ok(probe_decode_frame(buf, hello_len, &m, &sc, err) == 0 &&
		   m.type == PROBE_F_HELLO && m.pid == 42 &&
		   m.u.hello.value == 999 && m.u.hello.argc == 2 &&
		   strcmp(m.u.hello.argv[1], "--flag") == 0 &&
		   strcmp(m.u.hello.exe, "/bin/app") == 0, "HELLO fields round-trip");
		size_t off = 0;
		for (int i = 0; i < 3; i++)
			off += buf[off] | buf[off + 1] << 8;
		uint32_t slen = buf[off] | buf[off + 1] << 8;
		int good = probe_decode_frame(buf + off, slen, &m, &sc, err) == 0 &&
			   m.type == PROBE_F_SAMPLES && m.u.samples.count == 2;
		good = good && probe_samples_next(&m, &smp) && smp.tid == 43 &&
		       smp.time_ns == 5010 && smp.weight == 1001001 &&
		       smp.nframes == 3 && smp.frames[0] == 0x400123 &&
		       smp.frames[2] == 0x7fff00001000ull;
		good = good && probe_samples_next(&m, &smp) &&
		       smp.frames[1] == 0x400457 && !probe_samples_next(&m, &smp);
		ok(good, "SAMPLES round-trip: tid, time, weight and frames");
		probe_scratch_free(&sc);
	}

	/* Truncation anywhere: never an error mid-frame, only "pending". */
	int trunc_ok = 1;
	for (size_t cut = 0; cut < n; cut++) {
		int fr = decode_all(buf, cut, err, &pending);
		if (fr < 0 || (pending == 0 && cut != 0 && fr == 0))
			trunc_ok = 0;
	}
	ok(trunc_ok, "every truncation leaves a pending partial frame, no error");

	/* Oversized and undersized frame headers. */
	uint8_t big[PROBE_FRAME_HDR] = { 0x01, 0x00, 0x20, 0x00, 4, 0, 0, 0, 1, 0, 0, 0 };
	ok(decode_all(big, sizeof(big), err, &pending) < 0 &&
	   strstr(err, "impossible size"), "2 MiB frame rejected: %s", err);
	uint8_t tiny[PROBE_FRAME_HDR] = { 4, 0, 0, 0 };
	ok(decode_all(tiny, sizeof(tiny), err, &pending) < 0,
	   "frame smaller than its header rejected: %s", err);

	/* A body shorter than its fields, inside a well-sized frame. */
	{
		struct probe_wbuf w;
		uint8_t b[64];
		probe_wbuf_init(&w, b, sizeof(b));
		size_t at = probe_frame_begin(&w, PROBE_F_LOST, 1);
		probe_put_u32(&w, 1);
		probe_frame_end(&w, at);
		ok(decode_all(b, w.len, err, &pending) < 0 && strstr(err, "LOST"),
		   "short LOST body rejected: %s", err);
	}
	/* Stray bytes after the fields. */
	{
		struct probe_wbuf w;
		uint8_t b[64];
		probe_wbuf_init(&w, b, sizeof(b));
		size_t at = probe_frame_begin(&w, PROBE_F_THREAD, 1);
		probe_put_u32(&w, 1);
		probe_put_str(&w, "x");
		probe_put_u8(&w, 0);
		probe_frame_end(&w, at);
		ok(decode_all(b, w.len, err, &pending) < 0 && strstr(err, "stray"),
		   "stray bytes rejected: %s", err);
	}
	/* A string claiming more bytes than the frame has. */
	{
		struct probe_wbuf w;
		uint8_t b[64];
		probe_wbuf_init(&w, b, sizeof(b));
		size_t at = probe_frame_begin(&w, PROBE_F_THREAD, 1);
		probe_put_u32(&w, 1);
		probe_put_u16(&w, 4000);
		probe_put_bytes(&w, "abc", 3);
		probe_frame_end(&w, at);
		ok(decode_all(b, w.len, err, &pending) < 0, "overlong string rejected");
	}
	/* Embedded NUL in a string. */
	{
		struct probe_wbuf w;
		uint8_t b[64];
		probe_wbuf_init(&w, b, sizeof(b));
		size_t at = probe_frame_begin(&w, PROBE_F_THREAD, 1);
		probe_put_u32(&w, 1);
		probe_put_u16(&w, 3);
		probe_put_bytes(&w, "a\0b", 3);
		probe_frame_end(&w, at);
		ok(decode_all(b, w.len, err, &pending) < 0, "embedded NUL rejected");
	}
	/* Samples: zero frames, too many frames, a runaway varint, count lies. */
	{
		struct probe_wbuf w;
		static uint8_t b[8192];
		const struct { unsigned nframes; int bad_varint; uint64_t count; const char *what; } cases[] = {
			{ 0, 0, 1, "zero-frame sample" },
			{ PROBE_MAX_FRAMES + 1, 0, 1, "sample deeper than the cap" },
			{ 3, 1, 1, "11-byte varint" },
			{ 3, 0, 2, "count larger than the samples present" },
			{ 3, 0, 0, "empty batch" },
		};
		for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			probe_wbuf_init(&w, b, sizeof(b));
			size_t at = probe_frame_begin(&w, PROBE_F_SAMPLES, 1);
			probe_put_u64(&w, 0);
			probe_put_uv(&w, cases[c].count);
			probe_put_uv(&w, 1);
			probe_put_uv(&w, 0);
			probe_put_uv(&w, 1);
			probe_put_uv(&w, 0);
			probe_put_uv(&w, cases[c].nframes);
			if (cases[c].bad_varint)
				probe_put_bytes(&w, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
			for (unsigned i = 0; i < cases[c].nframes; i++)
				probe_put_sv(&w, 16);
			probe_frame_end(&w, at);
			ok(decode_all(b, w.len, err, &pending) < 0, "%s rejected: %s",
			   cases[c].what, err);
		}
	}
	/* MAP with an empty range. */
	{
		struct probe_wbuf w;
		uint8_t b[128];
		probe_wbuf_init(&w, b, sizeof(b));
		size_t at = probe_frame_begin(&w, PROBE_F_MAP, 1);
		probe_put_u64(&w, 0x2000);
		probe_put_u64(&w, 0x1000);
		probe_put_u64(&w, 0);
		probe_put_u64(&w, 0);
		probe_put_u8(&w, 0);
		probe_put_str(&w, "/x");
		probe_frame_end(&w, at);
		ok(decode_all(b, w.len, err, &pending) < 0, "MAP end < start rejected: %s", err);
	}

	/* File headers. */
	{
		struct probe_wbuf w;
		uint8_t b[PROBE_FILE_HDR];
		probe_wbuf_init(&w, b, sizeof(b));
		uint32_t v = 0;
		probe_put_file_header(&w, PROBE_FILE_VERSION);
		int hr = probe_file_header_check(b, w.len, &v, err);
		ok(hr == 0 && v == PROBE_FILE_VERSION, "file header accepted: version %u",
		   (unsigned)v);
		b[8] = PROBE_FILE_V1;
		ok(probe_file_header_check(b, w.len, &v, err) == 0 && v == PROBE_FILE_V1,
		   "version 1 (no CRCs) still accepted");
		b[8] = 9;
		ok(probe_file_header_check(b, w.len, &v, err) < 0 && strstr(err, "version"),
		   "other version refused: %s", err);
		ok(probe_file_header_check((const uint8_t *)"#!/bin/sh\necho hi\n", 18, &v, err) < 0,
		   "a shell script is not a recording: %s", err);
	}

	/* Version 2: each frame followed by its CRC-32; a flipped byte is caught. */
	{
		static uint8_t b[256];
		struct probe_wbuf w;
		struct probe_stream s;
		const uint8_t *f;
		size_t flen, one;
		int nf = 0, r;
		probe_wbuf_init(&w, b, sizeof(b));
		for (int i = 0; i < 2; i++) {
			size_t at = probe_frame_begin(&w, PROBE_F_THREAD, 42);
			probe_put_u32(&w, 43);
			probe_put_str(&w, "worker");
			probe_frame_end(&w, at);
			uLong c = crc32(0L, b + at, (uInt)(w.len - at));
			probe_put_u32(&w, (uint32_t)c);
			one = w.len;
		}
		one /= 2;
		probe_stream_init(&s);
		s.crc = 1;
		probe_stream_feed(&s, b, w.len);
		while ((r = probe_stream_next(&s, &f, &flen, err)) == 1)
			nf++;
		ok(nf == 2 && r == 0 && flen == one - PROBE_FILE_CRC,
		   "frames with CRCs: 2 frames of %zu bytes, CRCs skipped", flen);
		probe_stream_free(&s);
		b[one + PROBE_FRAME_HDR + 5] ^= 0x20;   /* a letter of "worker" */
		probe_stream_init(&s);
		s.crc = 1;
		probe_stream_feed(&s, b, w.len);
		nf = 0;
		while ((r = probe_stream_next(&s, &f, &flen, err)) == 1)
			nf++;
		ok(nf == 1 && r < 0 && strstr(err, "checksum"),
		   "a flipped byte in a name fails the second frame's CRC: %s", err);
		probe_stream_free(&s);
	}

	/* INFO (the recording's header): round trip, short body, too many args. */
	{
		struct probe_scratch sc;
		struct probe_msg m;
		struct probe_wbuf w;
		static uint8_t b[512];
		probe_scratch_init(&sc);
		probe_wbuf_init(&w, b, sizeof(b));
		size_t at = probe_frame_begin(&w, PROBE_F_INFO, 7);
		probe_put_u64(&w, 1000);
		probe_put_u64(&w, 1700000000000000000ull);
		probe_put_str(&w, "host");
		probe_put_str(&w, "Linux");
		probe_put_str(&w, "6.1.0");
		probe_put_str(&w, "#1 SMP");
		probe_put_str(&w, "x86_64");
		probe_put_u16(&w, 3);
		probe_put_str(&w, "probe");
		probe_put_str(&w, "record");
		probe_put_str(&w, "./app");
		probe_frame_end(&w, at);
		ok(w.ok && probe_decode_frame(b, w.len, &m, &sc, err) == 0 &&
		   m.type == PROBE_F_INFO && m.u.info.start_ns == 1000 &&
		   strcmp(m.u.info.host, "host") == 0 && strcmp(m.u.info.release, "6.1.0") == 0 &&
		   m.u.info.argc == 3 && strcmp(m.u.info.argv[2], "./app") == 0,
		   "INFO fields round-trip");
		size_t whole = w.len;
		b[0] = (uint8_t)(whole - 3);    /* cut inside the last string */
		ok(probe_decode_frame(b, whole - 3, &m, &sc, err) < 0 && strstr(err, "INFO"),
		   "short INFO rejected: %s", err);
		probe_wbuf_init(&w, b, sizeof(b));
		at = probe_frame_begin(&w, PROBE_F_INFO, 7);
		probe_put_u64(&w, 0);
		probe_put_u64(&w, 0);
		for (int i = 0; i < 5; i++)
			probe_put_str(&w, "");
		probe_put_u16(&w, PROBE_MAX_ARGS + 1);
		probe_frame_end(&w, at);
		ok(probe_decode_frame(b, w.len, &m, &sc, err) < 0 && strstr(err, "arguments"),
		   "INFO with too many arguments rejected: %s", err);
		probe_scratch_free(&sc);
	}

	/* JIT (a name the collector read in a perf map): round trip, bad ranges. */
	{
		struct probe_scratch sc;
		struct probe_msg m;
		struct probe_wbuf w;
		static uint8_t b[256];
		const uint64_t bad[][2] = { { 0x7000, 0 }, { UINT64_MAX - 4, 16 } };
		probe_scratch_init(&sc);
		probe_wbuf_init(&w, b, sizeof(b));
		size_t at = probe_frame_begin(&w, PROBE_F_JIT, 7);
		probe_put_u64(&w, 0x7f0000001000ull);
		probe_put_u64(&w, 0x2c8);
		probe_put_u8(&w, PROBE_JIT_PERFMAP);
		probe_put_str(&w, "JS:*hot /a.js:2:14");
		probe_frame_end(&w, at);
		ok(w.ok && probe_decode_frame(b, w.len, &m, &sc, err) == 0 &&
		   m.type == PROBE_F_JIT && m.u.jit.start == 0x7f0000001000ull &&
		   m.u.jit.size == 0x2c8 && m.u.jit.source == PROBE_JIT_PERFMAP &&
		   strcmp(m.u.jit.name, "JS:*hot /a.js:2:14") == 0, "JIT fields round-trip");
		int rejected = 0;
		for (int i = 0; i < 2; i++) {
			probe_wbuf_init(&w, b, sizeof(b));
			at = probe_frame_begin(&w, PROBE_F_JIT, 7);
			probe_put_u64(&w, bad[i][0]);
			probe_put_u64(&w, bad[i][1]);
			probe_put_u8(&w, PROBE_JIT_PERFMAP);
			probe_put_str(&w, "x");
			probe_frame_end(&w, at);
			rejected += probe_decode_frame(b, w.len, &m, &sc, err) < 0 &&
				    strstr(err, "JIT") != NULL;
		}
		ok(rejected == 2, "JIT entries that are empty or wrap around are rejected: %s", err);
		probe_scratch_free(&sc);
	}

	/* Garbage and mutated streams: errors, never crashes (ASan watches). */
	{
		unsigned seed = 12345;
		int clean = 1;
		static uint8_t g[4096];
		for (int round = 0; round < 20000; round++) {
			memcpy(g, buf, n);
			int flips = 1 + round % 8;
			for (int k = 0; k < flips; k++) {
				seed = seed * 1103515245 + 12345;
				g[(seed >> 8) % n] = (uint8_t)(seed >> 20);
			}
			int fr = decode_all(g, n, err, &pending);
			if (fr > 7)
				clean = 0;
		}
		for (int round = 0; round < 2000; round++) {
			for (size_t k = 0; k < sizeof(g); k++) {
				seed = seed * 1103515245 + 12345;
				g[k] = (uint8_t)(seed >> 16);
			}
			(void)decode_all(g, sizeof(g), err, &pending);
		}
		ok(clean, "22000 mutated and random streams decoded without a crash");
	}
	test_resync();
	test_resync_nested();
	test_plausible_flags();
	return done();
}
