/*
 * wire_decode.c - the one decoder of the probe wire protocol.
 *
 * Everything that arrives is untrusted: a frame's size is bounded before a
 * single body byte is buffered, every field read is bounds-checked against
 * the frame, and a frame must decode to exactly its size.  Strings are copied
 * NUL-terminated into the reader's scratch so callers never see raw bytes.
 */
#include "data/wire_decode.h"
#include "data/wire_int.h"
#include "probe/bytes.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* ---- CRCs of damaged bytes ----------------------------------------- */

/*
 * Skipping damage a byte at a time checks a frame's CRC at every byte, and
 * each check ran over the frame's size, up to PROBE_FRAME_MAX: quadratic
 * (3 MiB of frame headers took 85 s).  Instead, from the first frame
 * checked while skipping damage (or whose CRC does not match), the stream
 * keeps pre[i], the CRC-32 of its bytes from
 * there to buffer index i, each computed once; CRC-32 being linear, the
 * CRC of a window [p, q) follows in constant time (zlib's crc32_combine,
 * solved for its second part):
 *
 *     crc(buf[p..q)) = pre[q] ^ (x^(8(q-p)) * pre[p] mod P)
 *
 * Polynomials are 32-bit words, reflected as zlib keeps them: bit 31 is
 * x^0.  x^(8n) for n up to PROBE_FRAME_MAX is the product of two table
 * entries, x^(8 (n % 1024)) and x^(8 * 1024 (n / 1024)).
 */
#define CRC_POLY 0xedb88320u
#define POW_SPLIT 1024u
#define STREAM_CAP_MAX (2 * PROBE_STREAM_CAP)

struct probe_crcidx {
	uint32_t table[256];                    /* bytewise CRC-32 */
	uint32_t pow_lo[POW_SPLIT];             /* x^(8n), n < 1024 */
	uint32_t pow_hi[PROBE_FRAME_MAX / POW_SPLIT + 1];       /* n = 1024 j */
	uint32_t pre[STREAM_CAP_MAX + 1];       /* valid from..to (if on) */
	size_t from, to;
	int on;
};

/* a * b mod P: 32 steps of shift-and-add, b times x at each. */
static uint32_t gf2_mul(uint32_t a, uint32_t b)
{
	uint32_t p = 0;
	for (unsigned i = 0; i < 32; i++) {
		if (a & (0x80000000u >> i))
			p ^= b;
		b = b & 1 ? (b >> 1) ^ CRC_POLY : b >> 1;
	}
	return p;
}

static struct probe_crcidx *crcidx_new(void)
{
	struct probe_crcidx *ci = malloc(sizeof(*ci));
	if (!ci)
		return NULL;
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ CRC_POLY : c >> 1;
		ci->table[i] = c;
	}
	const uint32_t x8 = 0x80000000u >> 8;
	ci->pow_lo[0] = 0x80000000u;            /* x^0 */
	for (unsigned i = 1; i < POW_SPLIT; i++)
		ci->pow_lo[i] = gf2_mul(ci->pow_lo[i - 1], x8);
	uint32_t step = gf2_mul(ci->pow_lo[POW_SPLIT - 1], x8);
	ci->pow_hi[0] = 0x80000000u;
	for (unsigned j = 1; j < sizeof(ci->pow_hi) / sizeof(ci->pow_hi[0]); j++)
		ci->pow_hi[j] = gf2_mul(ci->pow_hi[j - 1], step);
	ci->on = 0;
	return ci;
}

/* pre[] on to buffer index q, a byte at a time. */
static void crcidx_extend(struct probe_stream *s, size_t q)
{
	struct probe_crcidx *ci = s->ci;
	uint32_t r = ~ci->pre[ci->to];
	for (size_t i = ci->to; i < q; i++) {
		r = ci->table[(r ^ s->buf[i]) & 0xff] ^ (r >> 8);
		ci->pre[i + 1] = ~r;
	}
	if (q > ci->to) {
		s->crc_bytes += q - ci->to;
		ci->to = q;
	}
}

/* CRC-32 of buffer [p, q), both within pre[]'s range. */
static uint32_t crcidx_window(const struct probe_crcidx *ci, size_t p, size_t q)
{
	size_t n = q - p;
	uint32_t xn = gf2_mul(ci->pow_hi[n / POW_SPLIT], ci->pow_lo[n % POW_SPLIT]);
	return ci->pre[q] ^ gf2_mul(xn, ci->pre[p]);
}

/* The buffer moved its bytes from off to the front: pre[] follows them. */
static void crcidx_shift(struct probe_stream *s, size_t off)
{
	struct probe_crcidx *ci = s->ci;
	if (!ci || !ci->on)
		return;
	if (ci->to < off) {
		ci->on = 0;
		return;
	}
	size_t from = ci->from > off ? ci->from : off;
	memmove(ci->pre + (from - off), ci->pre + from,
		(ci->to - from + 1) * sizeof(ci->pre[0]));
	ci->from = from - off;
	ci->to -= off;
}

/* pre[] (re)starts at buffer index p; 0 when there is no memory for it. */
static int crcidx_start(struct probe_stream *s, size_t p)
{
	struct probe_crcidx *ci = s->ci;
	if (!ci)
		ci = s->ci = crcidx_new();      /* NULL: checked directly, slower */
	if (!ci)
		return 0;
	ci->on = 1;
	ci->from = ci->to = p;
	ci->pre[p] = 0;                         /* CRC-32 of nothing */
	return 1;
}

/*
 * Whether the frame of size bytes at off matches the CRC after it.  A
 * frame where pre[] reaches is checked from it, and so is every frame met
 * while skipping damage (resync): pre[] starts at the first and goes on
 * over the rest, so that frames nested a few bytes apart cost a few CRC
 * steps each, whether their CRCs match or not (checked directly, nested
 * 1 MiB frames whose CRCs matched but which did not decode cost 1 MiB
 * every 8 bytes: 6 s a MiB).  Another frame (right after one that was
 * taken) is checked directly, the faster CRC; if that fails (damage
 * begins), pre[] starts there.  pre[] runs over each byte once; a direct
 * check over a frame's bytes once, but for frames that then do not
 * decode: what those cost is counted by the reader (recfile.c) and
 * bounded there.
 */
static int crc_matches(struct probe_stream *s, uint32_t size)
{
	size_t p = s->off, q = p + size;
	uint32_t want = le32(s->buf + q);
	struct probe_crcidx *ci = s->ci;
	int in = ci && ci->on && p >= ci->from && p <= ci->to;
	if (in || (s->resync && crcidx_start(s, p))) {
		crcidx_extend(s, q);
		return crcidx_window(s->ci, p, q) == want;
	}
	s->crc_bytes += size;
	if (crc32(0L, s->buf + p, size) == want)
		return 1;
	if (crcidx_start(s, p))
		crcidx_extend(s, q);
	return 0;
}

/* ---- frame splitting ------------------------------------------------ */

int probe_stream_init(struct probe_stream *s)
{
	memset(s, 0, sizeof(*s));
	s->cap = PROBE_STREAM_CAP;
	s->buf = malloc(s->cap);
	return s->buf ? 0 : -1;
}

void probe_stream_free(struct probe_stream *s)
{
	free(s->buf);
	s->buf = NULL;
	free(s->ci);
	s->ci = NULL;
}

/* Move the unread tail to the front so the buffer has room for a frame. */
static void stream_compact(struct probe_stream *s)
{
	if (s->off == 0)
		return;
	size_t off = s->off;
	memmove(s->buf, s->buf + off, s->len - off);
	s->moved += s->len - off;
	s->len -= off;
	s->off = 0;
	crcidx_shift(s, off);
}

/*
 * Room for whole bytes at off.  While skipping damage the buffer holds
 * twice the largest frame, so that it moves only once off has passed
 * PROBE_STREAM_CAP bytes: each move is paid for by the bytes passed.
 */
static void make_room(struct probe_stream *s, size_t whole)
{
	if (s->off + whole <= s->cap)
		return;
	if (s->resync && s->cap < STREAM_CAP_MAX) {
		uint8_t *b = realloc(s->buf, STREAM_CAP_MAX);
		if (b) {
			s->buf = b;
			s->cap = STREAM_CAP_MAX;
			if (s->off + whole <= s->cap)
				return;
		}
	}
	stream_compact(s);
}

uint8_t *probe_stream_space(struct probe_stream *s, size_t *avail)
{
	if (s->len == s->cap || s->off > s->cap / 2 || s->off == s->len)
		stream_compact(s);
	*avail = s->cap - s->len;
	return s->buf + s->len;
}

void probe_stream_commit(struct probe_stream *s, size_t n)
{
	s->len += n;
}

size_t probe_stream_feed(struct probe_stream *s, const void *data, size_t n)
{
	size_t avail;
	uint8_t *dst = probe_stream_space(s, &avail);
	if (n > avail)
		n = avail;
	memcpy(dst, data, n);
	probe_stream_commit(s, n);
	return n;
}

void wire_seterr(char err[PROBE_ERR_MAX], const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, PROBE_ERR_MAX, fmt, ap);
	va_end(ap);
}

/* The frame flags each type may carry (wire.h); the others carry none. */
#define HELLO_FLAGS (PROBE_HELLO_KSTATE | PROBE_HELLO_KERNEL | \
		     PROBE_HELLO_KWHY_MASK | PROBE_HELLO_NOUSER | PROBE_HELLO_NOARENA)
#define EXIT_FLAGS PROBE_EXIT_WAITED

/*
 * Flags a writer of today sets are plausible (every HELLO has KSTATE: were
 * they not, the HELLO after damage would be skipped, and its process's
 * frames shown as an orphan's); a bit no writer sets is not.
 */
int probe_frame_plausible(const uint8_t *f)
{
	unsigned type = (unsigned)f[4] | (unsigned)f[5] << 8;
	unsigned flags = (unsigned)f[6] | (unsigned)f[7] << 8;
	unsigned allowed = type == PROBE_F_HELLO ? HELLO_FLAGS :
			   type == PROBE_F_EXIT ? EXIT_FLAGS : 0;
	return type > 0 && type < PROBE_F_TYPE_MAX && type != PROBE_F_SYNC &&
	       (flags & ~allowed) == 0;
}

/* Whether a frame of a plausible size and header can start at p. */
static int can_start(const uint8_t *p)
{
	uint32_t size = le32(p);
	return size >= PROBE_FRAME_HDR && size <= PROBE_FRAME_MAX &&
	       probe_frame_plausible(p);
}

/*
 * While resynchronising, pass over the bytes where no frame can start, in
 * one loop (before a frame's body is waited for or its CRC run over it);
 * 1 when one could start at off, 0 when too few bytes are left to tell.
 */
static int resync_scan(struct probe_stream *s)
{
	size_t off = s->off, end = s->len;
	while (end - off >= PROBE_FRAME_HDR && !can_start(s->buf + off))
		off++;
	s->skipped += off - s->off;
	s->consumed += off - s->off;
	s->off = off;
	return end - off >= PROBE_FRAME_HDR;
}

int probe_stream_next(struct probe_stream *s, const uint8_t **frame,
		      size_t *len, char err[PROBE_ERR_MAX])
{
	size_t have = s->len - s->off;
	s->last = 0;
	if (have < PROBE_FRAME_HDR) {
		stream_compact(s);
		return 0;
	}
	if (s->resync && !resync_scan(s)) {
		stream_compact(s);
		return 0;
	}
	have = s->len - s->off;
	const uint8_t *p = s->buf + s->off;
	uint32_t size = le32(p);
	if (size < PROBE_FRAME_HDR || size > PROBE_FRAME_MAX) {
		wire_seterr(err, "frame at byte %" PRIu64 " has impossible size %" PRIu32
		       " (allowed %u..%u): not a probe stream, or corrupt",
		       s->consumed, size, PROBE_FRAME_HDR, PROBE_FRAME_MAX);
		return -1;
	}
	size_t whole = size + (s->crc ? PROBE_FILE_CRC : 0);
	if (have < whole) {
		if (s->eof) {
			wire_seterr(err, "frame at byte %" PRIu64 " of %zu bytes is cut short "
			       "at %zu", s->consumed, whole, have);
			return -1;
		}
		make_room(s, whole);
		return 0;
	}
	if (s->crc && !crc_matches(s, size)) {
		wire_seterr(err, "frame at byte %" PRIu64 " does not match its checksum: "
		       "corrupt", s->consumed);
		return -1;
	}
	*frame = s->buf + s->off;
	*len = size;
	s->off += whole;
	s->consumed += whole;
	s->last = whole;
	return 1;
}

void probe_stream_unget(struct probe_stream *s)
{
	s->off -= s->last;
	s->consumed -= s->last;
	s->last = 0;
}

void probe_stream_skip(struct probe_stream *s, size_t n)
{
	if (n > s->len - s->off)
		n = s->len - s->off;
	s->skipped += n;
	s->off += n;
	s->consumed += n;
	s->last = 0;
}

size_t probe_stream_pending(const struct probe_stream *s)
{
	return s->len - s->off;
}

int probe_file_header_check(const uint8_t *p, size_t n, uint32_t *version_out,
			    char err[PROBE_ERR_MAX])
{
	if (n >= 8 && (memcmp(p, "PERFILE2", 8) == 0 || memcmp(p, "PERFFILE", 8) == 0)) {
		wire_seterr(err, "a recording of perf's (perf record), not of probe's: open "
		       "it with perf report");
		return -1;
	}
	if (n < PROBE_FILE_HDR || memcmp(p, PROBE_FILE_MAGIC, 8) != 0) {
		wire_seterr(err, "not a probe recording (no '%s' header)",
		       PROBE_FILE_MAGIC);
		return -1;
	}
	uint32_t version = le32(p + 8), hdr = le32(p + 12);
	if (version < PROBE_FILE_V1 || version > PROBE_FILE_VERSION) {
		wire_seterr(err, "recording has format version %" PRIu32
		       ", this probe reads versions %u to %u (a newer probe wrote "
		       "it?)", version, PROBE_FILE_V1, PROBE_FILE_VERSION);
		return -1;
	}
	if (hdr != PROBE_FILE_HDR) {
		wire_seterr(err, "recording header size %" PRIu32 " is not %u", hdr,
		       PROBE_FILE_HDR);
		return -1;
	}
	*version_out = version;
	return 0;
}

/* ---- field readers -------------------------------------------------- */

/* Copy a u16-length string into scratch, NUL-terminated. */
const char *wire_rd_str(struct probe_rd *r, struct probe_scratch *sc)
{
	size_t n = (size_t)probe_rd_le(r, 2);
	if (r->bad)
		return "";
	if (n > PROBE_STR_MAX || (size_t)(r->end - r->p) < n ||
	    sc->cap - sc->len < n + 1) {
		r->bad = 1;
		return "";
	}
	char *s = sc->mem + sc->len;
	memcpy(s, r->p, n);
	s[n] = '\0';
	/* An embedded NUL would make the string lie about its length. */
	if (memchr(s, '\0', n)) {
		r->bad = 1;
		return "";
	}
	sc->len += n + 1;
	r->p += n;
	return s;
}

int probe_scratch_init(struct probe_scratch *sc)
{
	sc->cap = PROBE_FRAME_MAX + PROBE_MAX_ARGS + 16;
	sc->len = 0;
	sc->mem = malloc(sc->cap);
	return sc->mem ? 0 : -1;
}

void probe_scratch_free(struct probe_scratch *sc)
{
	free(sc->mem);
	sc->mem = NULL;
}

/* ---- frames --------------------------------------------------------- */

const char *probe_frame_type_name(unsigned type)
{
	static const char *names[] = {
		[PROBE_F_HELLO] = "HELLO", [PROBE_F_MAP] = "MAP",
		[PROBE_F_THREAD] = "THREAD", [PROBE_F_SAMPLES] = "SAMPLES",
		[PROBE_F_LOST] = "LOST", [PROBE_F_EXIT] = "EXIT",
		[PROBE_F_SYNC] = "SYNC", [PROBE_F_UNPROFILED] = "UNPROFILED",
		[PROBE_F_INFO] = "INFO", [PROBE_F_JIT] = "JIT",
		[PROBE_F_STACK] = "STACK", [PROBE_F_STACKED] = "STACKED",
		[PROBE_F_ZSTD] = "ZSTD", [PROBE_F_SYMTAB] = "SYMTAB",
	};
	if (type > 0 && type < PROBE_F_TYPE_MAX)
		return names[type];
	return "unknown";
}

const char *probe_unprof_reason_name(unsigned reason)
{
	static const char *names[] = {
		[PROBE_UNPROF_STATIC] = "it is statically linked, and LD_PRELOAD "
			"reaches only dynamically linked programs",
		[PROBE_UNPROF_SECURE] = "it is setuid or setgid, and the loader "
			"ignores LD_PRELOAD for it",
		[PROBE_UNPROF_NOPRELOAD] = "its environment has no LD_PRELOAD of "
			"libprobe.so",
		[PROBE_UNPROF_OTHERUSER] = "it runs as another user, and the "
			"collector takes connections from its own user only",
		[PROBE_UNPROF_NOTLOADED] = "its loader did not load libprobe.so "
			"(a 32-bit program, or one whose loader ignores LD_PRELOAD)",
	};
	if (reason > 0 && reason < PROBE_UNPROF_REASON_MAX)
		return names[reason];
	return "for a reason this probe does not know";
}

const char *probe_lost_reason_name(unsigned reason)
{
	static const char *names[] = {
		[PROBE_LOST_KERNEL] = "ring buffer overflow",
		[PROBE_LOST_THROTTLE] = "kernel throttling",
		[PROBE_LOST_QUEUE] = "collector behind (thread's ring full)",
		[PROBE_LOST_SOCKET] = "collector too slow or gone",
		[PROBE_LOST_UNWIND] = "stack not unwound",
		[PROBE_LOST_THREAD] = "thread not profiled",
	};
	if (reason > 0 && reason < PROBE_LOST_REASON_MAX)
		return names[reason];
	return "other";
}

/*
 * Check n varints without computing them: each ends within the frame and is
 * at most 10 bytes, the 10th holding only bit 63 (what probe_rd_uleb accepts).
 *
 * Eight bytes at a time: a byte with its top bit clear ends a varint.  While
 * no run of continuation bytes is longer than 8 (varints of up to 9 bytes,
 * always valid), whole words are taken by counting those ends; anything
 * else (a long varint, the last few bytes) goes byte by byte.
 */
#define HI_BITS 0x8080808080808080ull

static const uint8_t *skip_words(const uint8_t *p, const uint8_t *end, uint64_t *np)
{
	uint64_t n = *np;
	unsigned tail = 0;      /* continuation bytes ending the previous word */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	return p;               /* the word tricks below read bytes in LE order */
#endif
	while (n && end - p >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		uint64_t t = ~w & HI_BITS;      /* the ends */
		if (!t)
			break;
		unsigned lead = (unsigned)__builtin_ctzll(t) >> 3;
		if (tail + lead > 8)
			break;
		/* One bit per end, at bit 7 of its byte: count them by multiplying. */
		unsigned k = (unsigned)(((t >> 7) * 0x0101010101010101ull) >> 56);
		if (k < n) {
			n -= k;
			tail = (unsigned)__builtin_clzll(t) >> 3;
			p += 8;
			continue;
		}
		for (uint64_t i = 1; i < n; i++)
			t &= t - 1;
		p += ((unsigned)__builtin_ctzll(t) >> 3) + 1;
		n = 0;
	}
	if (n && tail) {
		/* Back to the start of the varint that runs on, for the slow path. */
		p -= tail;
	}
	*np = n;
	return p;
}

void wire_skip_varints(struct probe_rd *r, uint64_t n)
{
	const uint8_t *p = skip_words(r->p, r->end, &n), *end = r->end;
	while (n--) {
		const uint8_t *start = p;
		while (p < end && (*p & 0x80))
			p++;
		if (p >= end || p - start > 9 || (p - start == 9 && (*p & 0x7e))) {
			r->bad = 1;
			return;
		}
		p++;
	}
	r->p = p;
}

/* Walk one sample; shared by validation (out NULL) and iteration. */
static int rd_sample(struct probe_rd *r, uint64_t base_ns, struct probe_sample *out)
{
	uint64_t tid = probe_rd_uleb(r), dt = probe_rd_uleb(r), weight = probe_rd_uleb(r);
	uint64_t event = probe_rd_uleb(r), n = probe_rd_uleb(r);
	if (r->bad || tid > UINT32_MAX || event > UINT32_MAX || n == 0 ||
	    n > PROBE_MAX_FRAMES) {
		r->bad = 1;
		return -1;
	}
	if (!out) {
		wire_skip_varints(r, n);
		return r->bad ? -1 : 0;
	}
	uint64_t pc = 0;
	for (uint64_t i = 0; i < n; i++) {
		pc += (uint64_t)probe_rd_zigzag(r);
		out->frames[i] = pc;
	}
	if (r->bad)
		return -1;
	out->tid = (uint32_t)tid;
	out->event = (uint32_t)event;
	out->time_ns = base_ns + dt;
	out->weight = weight;
	out->nframes = (uint32_t)n;
	return 0;
}

/* probe_decode_frame's fields, read through r: where r stops, it stopped. */
/* HELLO: its fields, checked; the extra events where there are some. */
static int dec_hello(struct probe_rd *r, struct probe_msg *m, struct probe_scratch *sc,
		     char err[PROBE_ERR_MAX], uint16_t flags)
{
	m->u.hello.version = (uint32_t)probe_rd_le(r, 4);
	if (!r->bad && m->u.hello.version != PROBE_WIRE_VERSION) {
		wire_seterr(err, "HELLO speaks protocol version %" PRIu32
		       ", expected %u (mixed probe versions?)",
		       m->u.hello.version, PROBE_WIRE_VERSION);
		return -1;
	}
	m->u.hello.ppid = (uint32_t)probe_rd_le(r, 4);
	m->u.hello.event_type = (uint32_t)probe_rd_le(r, 4);
	m->u.hello.event_config = probe_rd_le(r, 8);
	m->u.hello.freq = (uint8_t)probe_rd_le(r, 1);
	m->u.hello.value = probe_rd_le(r, 8);
	m->u.hello.start_ns = probe_rd_le(r, 8);
	m->u.hello.event_name = wire_rd_str(r, sc);
	m->u.hello.exe = wire_rd_str(r, sc);
	m->u.hello.comm = wire_rd_str(r, sc);
	m->u.hello.argc = (uint16_t)probe_rd_le(r, 2);
	if (!r->bad && (m->u.hello.argc > PROBE_MAX_ARGS ||
		     m->u.hello.freq > 1)) {
		wire_seterr(err, "HELLO has %u arguments or bad freq flag %u",
		       m->u.hello.argc, m->u.hello.freq);
		return -1;
	}
	for (unsigned i = 0; !r->bad && i < m->u.hello.argc; i++)
		sc->argv[i] = wire_rd_str(r, sc);
	m->u.hello.argv = sc->argv;
	m->u.hello.flags = flags;
	if (!r->bad && r->p < r->end) {      /* the extra events (-e a,b) */
		m->u.hello.nextra = (uint8_t)probe_rd_le(r, 1);
		if (!r->bad && (m->u.hello.nextra == 0 ||
			     m->u.hello.nextra >= PROBE_EVENTS_MAX)) {
			wire_seterr(err, "HELLO has %u extra events (1 to %u)",
			       m->u.hello.nextra, PROBE_EVENTS_MAX - 1);
			return -1;
		}
		for (unsigned i = 0; !r->bad && i < m->u.hello.nextra; i++) {
			m->u.hello.extra[i].type = (uint32_t)probe_rd_le(r, 4);
			m->u.hello.extra[i].config = probe_rd_le(r, 8);
			m->u.hello.extra[i].name = wire_rd_str(r, sc);
		}
	}
	return 0;
}

/* MAP: a non-empty range, a build-id that fits, a path. */
static int dec_map(struct probe_rd *r, struct probe_msg *m, struct probe_scratch *sc,
		     char err[PROBE_ERR_MAX])
{
	m->u.map.start = probe_rd_le(r, 8);
	m->u.map.end = probe_rd_le(r, 8);
	m->u.map.bias = probe_rd_le(r, 8);
	m->u.map.pgoff = probe_rd_le(r, 8);
	m->u.map.build_id_len = (uint8_t)probe_rd_le(r, 1);
	if (!r->bad && (m->u.map.build_id_len > PROBE_BUILD_ID_MAX ||
		     m->u.map.start >= m->u.map.end)) {
		wire_seterr(err, "MAP with build-id of %u bytes or empty range "
		       "0x%" PRIx64 "-0x%" PRIx64, m->u.map.build_id_len,
		       m->u.map.start, m->u.map.end);
		return -1;
	}
	if (!r->bad && (size_t)(r->end - r->p) >= m->u.map.build_id_len) {
		memcpy(m->u.map.build_id, r->p, m->u.map.build_id_len);
		r->p += m->u.map.build_id_len;
	} else {
		r->bad = 1;
	}
	m->u.map.path = wire_rd_str(r, sc);
	if (!r->bad && !m->u.map.path[0]) {
		wire_seterr(err, "MAP without a path");
		return -1;
	}
	return 0;
}

/* SAMPLES: every sample checked now, so that iterating cannot fail. */
static int dec_samples(struct probe_rd *r, struct probe_msg *m, struct probe_scratch *sc,
		     char err[PROBE_ERR_MAX])
{
	m->u.samples.base_ns = probe_rd_le(r, 8);
	m->u.samples.count = probe_rd_uleb(r);
	if (!r->bad && m->u.samples.count == 0) {
		wire_seterr(err, "SAMPLES batch with no samples");
		return -1;
	}
	const uint8_t *body = r->p;
	/* Validate every sample now so iteration cannot fail later. */
	for (uint64_t i = 0; !r->bad && i < m->u.samples.count; i++)
		rd_sample(r, 0, NULL);
	m->u.samples.p = body;
	m->u.samples.end = r->p;
	m->u.samples.left = m->u.samples.count;
	return 0;
}

/* INFO: the recording's header. */
static int dec_info(struct probe_rd *r, struct probe_msg *m, struct probe_scratch *sc,
		     char err[PROBE_ERR_MAX])
{
	m->u.info.start_ns = probe_rd_le(r, 8);
	m->u.info.start_real_ns = probe_rd_le(r, 8);
	m->u.info.host = wire_rd_str(r, sc);
	m->u.info.sysname = wire_rd_str(r, sc);
	m->u.info.release = wire_rd_str(r, sc);
	m->u.info.version = wire_rd_str(r, sc);
	m->u.info.machine = wire_rd_str(r, sc);
	m->u.info.argc = (uint16_t)probe_rd_le(r, 2);
	if (!r->bad && m->u.info.argc > PROBE_MAX_ARGS) {
		wire_seterr(err, "INFO has %u arguments (at most %u)", m->u.info.argc,
		       PROBE_MAX_ARGS);
		return -1;
	}
	for (unsigned i = 0; !r->bad && i < m->u.info.argc; i++)
		sc->argv[i] = wire_rd_str(r, sc);
	m->u.info.argv = sc->argv;
	return 0;
}

/* JIT: a name over a range that neither is empty nor wraps. */
static int dec_jit(struct probe_rd *r, struct probe_msg *m, struct probe_scratch *sc,
		     char err[PROBE_ERR_MAX])
{
	m->u.jit.start = probe_rd_le(r, 8);
	m->u.jit.size = probe_rd_le(r, 8);
	m->u.jit.source = (uint8_t)probe_rd_le(r, 1);
	m->u.jit.name = wire_rd_str(r, sc);
	if (!r->bad && (!m->u.jit.size || m->u.jit.start + m->u.jit.size <
		     m->u.jit.start)) {
		wire_seterr(err, "JIT entry with an empty or wrapping range "
		       "0x%" PRIx64 " +0x%" PRIx64, m->u.jit.start,
		       m->u.jit.size);
		return -1;
	}
	return 0;
}

static int decode_frame(const uint8_t *frame, size_t len, struct probe_msg *m,
			struct probe_scratch *sc, char err[PROBE_ERR_MAX], struct probe_rd *r)
{
	memset(m, 0, sizeof(*m));
	m->type = (unsigned)probe_rd_le(r, 2);
	uint16_t flags = (uint16_t)probe_rd_le(r, 2); /* HELLO's only, so far */
	m->pid = (uint32_t)probe_rd_le(r, 4);
	sc->len = 0;

	switch (m->type) {
	case PROBE_F_HELLO:
		if (dec_hello(r, m, sc, err, flags) < 0)
			return -1;
		break;
	case PROBE_F_MAP:
		if (dec_map(r, m, sc, err) < 0)
			return -1;
		break;
	case PROBE_F_THREAD:
		m->u.thread.tid = (uint32_t)probe_rd_le(r, 4);
		m->u.thread.name = wire_rd_str(r, sc);
		break;
	case PROBE_F_SAMPLES:
		if (dec_samples(r, m, sc, err) < 0)
			return -1;
		break;
	case PROBE_F_LOST:
		m->u.lost.tid = (uint32_t)probe_rd_le(r, 4);
		m->u.lost.reason = (uint32_t)probe_rd_le(r, 4);
		m->u.lost.count = probe_rd_le(r, 8);
		break;
	case PROBE_F_EXIT:
		m->u.exit.status = (int32_t)(uint32_t)probe_rd_le(r, 4);
		m->u.exit.samples = probe_rd_le(r, 8);
		m->u.exit.threads = (uint32_t)probe_rd_le(r, 4);
		break;
	case PROBE_F_SYNC:
		m->u.sync.time_ns = probe_rd_le(r, 8);
		break;
	case PROBE_F_UNPROFILED:
		m->u.unprof.pid = (uint32_t)probe_rd_le(r, 4);
		m->u.unprof.reason = (uint32_t)probe_rd_le(r, 4);
		m->u.unprof.path = wire_rd_str(r, sc);
		break;
	case PROBE_F_INFO:
		if (dec_info(r, m, sc, err) < 0)
			return -1;
		break;
	case PROBE_F_JIT:
		if (dec_jit(r, m, sc, err) < 0)
			return -1;
		break;
	case PROBE_F_STACK:
		if (wire_dec_stack(r, m, err) < 0)
			return -1;
		break;
	case PROBE_F_STACKED:
		if (wire_dec_stacked(r, m, err) < 0)
			return -1;
		break;
	case PROBE_F_ZSTD:
		if (wire_dec_zstd(r, m, err) < 0)
			return -1;
		break;
	case PROBE_F_SYMTAB:
		if (wire_dec_symtab(r, m, sc, err) < 0)
			return -1;
		break;
	default:
		/* Unknown kinds are skipped by size: newer writers stay readable. */
		return 0;
	}
	if (r->bad) {
		wire_seterr(err, "%s frame of %zu bytes is truncated or has a field "
		       "out of bounds", probe_frame_type_name(m->type), len);
		return -1;
	}
	if (r->p != r->end) {
		wire_seterr(err, "%s frame has %zu stray bytes after its fields",
		       probe_frame_type_name(m->type), (size_t)(r->end - r->p));
		return -1;
	}
	return 0;
}

int probe_decode_frame(const uint8_t *frame, size_t len, struct probe_msg *m,
		       struct probe_scratch *sc, char err[PROBE_ERR_MAX])
{
	sc->examined = 0;
	if (len < PROBE_FRAME_HDR || len > PROBE_FRAME_MAX || le32(frame) != len) {
		wire_seterr(err, "frame size %zu does not match its header", len);
		return -1;
	}
	struct probe_rd r = { .p = frame + 4, .end = frame + len };
	int rc = decode_frame(frame, len, m, sc, err, &r);
	sc->examined = (size_t)(r.p - frame);
	return rc;
}

int probe_samples_next_raw(struct probe_msg *m, struct probe_sample_raw *out)
{
	if (m->type != PROBE_F_SAMPLES || m->u.samples.left == 0)
		return 0;
	if (m->u.samples.stacked)
		return wire_stacked_next(m, out);
	out->stack_id = 0;
	out->stack_serial = 0;
	struct probe_rd r = { .p = m->u.samples.p, .end = m->u.samples.end };
	uint64_t tid = probe_rd_uleb(&r), dt = probe_rd_uleb(&r), weight = probe_rd_uleb(&r);
	uint64_t event = probe_rd_uleb(&r), n = probe_rd_uleb(&r);
	if (r.bad || tid > UINT32_MAX || event > UINT32_MAX || n == 0 ||
	    n > PROBE_MAX_FRAMES)
		return 0; /* cannot happen: validated in probe_decode_frame */
	/* The deltas were validated too: skip to the byte ending the n-th. */
	uint64_t left = n;
	const uint8_t *p = skip_words(r.p, r.end, &left);
	for (; left; p++) {
		if (p >= r.end)
			return 0;
		left -= !(*p & 0x80);
	}
	out->tid = (uint32_t)tid;
	out->event = (uint32_t)event;
	out->time_ns = m->u.samples.base_ns + dt;
	out->weight = weight;
	out->nframes = (uint32_t)n;
	out->frames = r.p;
	out->frames_len = (size_t)(p - r.p);
	m->u.samples.p = p;
	m->u.samples.left--;
	return 1;
}

uint32_t probe_sample_frames(const struct probe_sample_raw *s, uint64_t *out)
{
	struct probe_rd r = { .p = s->frames, .end = s->frames + s->frames_len };
	uint64_t pc = 0;
	uint32_t i;
	for (i = 0; i < s->nframes && i < PROBE_MAX_FRAMES && !r.bad; i++) {
		pc += (uint64_t)probe_rd_zigzag(&r);
		out[i] = pc;
	}
	return !r.bad ? i : 0;
}

int probe_sample_is_free(const struct probe_sample_raw *s)
{
	struct probe_rd r = { .p = s->frames, .end = s->frames + s->frames_len };

	if (s->nframes != 2)
		return 0;
	return (uint64_t)probe_rd_zigzag(&r) == PROBE_FRAME_FREED && !r.bad;
}

int probe_samples_next(struct probe_msg *m, struct probe_sample *out)
{
	if (m->type != PROBE_F_SAMPLES || m->u.samples.left == 0)
		return 0;
	if (m->u.samples.stacked) {
		struct probe_sample_raw s;
		if (!wire_stacked_next(m, &s))
			return 0;
		out->tid = s.tid;
		out->event = s.event;
		out->time_ns = s.time_ns;
		out->weight = s.weight;
		out->nframes = probe_sample_frames(&s, out->frames);
		return 1;
	}
	struct probe_rd r = { .p = m->u.samples.p, .end = m->u.samples.end };
	if (rd_sample(&r, m->u.samples.base_ns, out) < 0)
		return 0; /* cannot happen: validated in probe_decode_frame */
	m->u.samples.p = r.p;
	m->u.samples.left--;
	return 1;
}
