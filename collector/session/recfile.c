/* recfile.c - see recfile.h: writing a recording, and reading it back. */
#include "session/recfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "probe/wire.h"
#include "util.h"
#include "data/wire_decode.h"
#include "session/recnames.h"
#include "session/recpack.h"

#define RECFILE_BUF (1u << 20)

static void write_frame(void *arg, const uint8_t *frame, size_t n);

/* What lstat found at the path, for a message. */
static const char *kind_of(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISCHR(m) || S_ISBLK(m) ? "a device" :
	       S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/*
 * What is at path now (a file, a symbolic link: whatever it points to, and
 * whoever made it) goes aside to path.old, as perf does; a device, FIFO,
 * socket or directory is refused.  The new file is created with O_EXCL and
 * O_NOFOLLOW: nothing planted at the path between the two is written
 * through.
 */
int recfile_open(struct recfile *f, const char *path)
{
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
			probe_err("%s is %s, not a file a recording can go to; give -o a "
				  "file name", path, kind_of(st.st_mode));
			return -1;
		}
		char *old = xasprintf("%s.old", path);
		if (rename(path, old) < 0) {
			probe_err("cannot rename %s to %s: %s", path, old, strerror(errno));
			free(old);
			return -1;
		}
		free(old);
	}
	f->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
		     0600);
	if (f->fd < 0) {
		probe_err("cannot create %s: %s%s", path, strerror(errno),
			  errno == EEXIST || errno == ELOOP ?
			  " (something was put there meanwhile; not written through)" : "");
		return -1;
	}
	f->path = xstrdup(path);
	f->regular = fstat(f->fd, &st) == 0 && S_ISREG(st.st_mode);
	f->cap = RECFILE_BUF;
	f->buf = xmalloc(f->cap);
	struct probe_wbuf w;
	probe_wbuf_init(&w, f->buf, f->cap);
	probe_put_file_header(&w, PROBE_FILE_VERSION);
	f->len = w.len;
	f->bytes = w.len;
	f->pack = recpack_new(write_frame, f);
	f->names = recnames_new();
	if (probe_scratch_init(&f->sc) < 0)
		probe_oom();
	return 0;
}

static void write_all(struct recfile *f, const uint8_t *p, size_t n)
{
	while (n && !f->err) {
		ssize_t r = write(f->fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			f->err = r < 0 ? errno : EIO;
			return;
		}
		p += r;
		n -= (size_t)r;
		f->written += (uint64_t)r;
	}
}

static void flush(struct recfile *f)
{
	write_all(f, f->buf, f->len);
	f->len = 0;
}

void recfile_idle(struct recfile *f, uint64_t now)
{
	if (f->names && !f->err)
		recnames_idle(f->names, now);
}

void recfile_flush(struct recfile *f)
{
	if (f->fd >= 0)
		recpack_flush(f->pack);
	if (f->fd >= 0 && f->len)
		flush(f);
}

static void recfile_write(struct recfile *f, const void *data, size_t n)
{
	if (f->err || f->fd < 0)
		return;
	if (n > f->cap - f->len)
		flush(f);
	if (n >= f->cap)
		write_all(f, data, n);
	else {
		memcpy(f->buf + f->len, data, n);
		f->len += n;
	}
	if (!f->err)
		f->bytes += n;
}

/* A frame as the file holds it: itself, then its CRC-32. */
static void write_frame(void *arg, const uint8_t *frame, size_t n)
{
	struct recfile *f = arg;
	uint8_t crc[PROBE_FILE_CRC];
	uLong c = crc32(0L, frame, (uInt)n);
	for (unsigned i = 0; i < PROBE_FILE_CRC; i++)
		crc[i] = (uint8_t)(c >> (8 * i));
	recfile_write(f, frame, n);
	recfile_write(f, crc, sizeof(crc));
}

void recfile_level(struct recfile *f, int level)
{
	if (f->pack)
		recpack_level(f->pack, level);
}

void recfile_msg(struct recfile *f, const void *frame, size_t n, const struct probe_msg *m)
{
	if (f->fd < 0 || f->err)
		return;
	if (m->type == PROBE_F_SAMPLES && !m->u.samples.stacked)
		recpack_samples(f->pack, m);
	else
		recpack_frame(f->pack, frame, n);
	recnames_msg(f->names, m);
}

void recfile_frame(struct recfile *f, const void *frame, size_t n)
{
	char err[PROBE_ERR_MAX];
	struct probe_msg m;
	if (f->fd >= 0 && !f->err && probe_decode_frame(frame, n, &m, &f->sc, err) == 0)
		recfile_msg(f, frame, n, &m);
}

static void names_emit(void *pack, const uint8_t *frame, size_t n)
{
	recpack_frame(pack, frame, n);
}

/* Before the end: the names of what was sampled, so that it stands on its own. */
static void write_names(struct recfile *f)
{
	if (!f->names)
		return;
	if (!f->err)
		f->named = recnames_write(f->names, names_emit, f->pack);
	recnames_free(f->names);
	f->names = NULL;
}


int recfile_close(struct recfile *f)
{
	if (f->fd < 0)
		return -1;
	write_names(f);
	recpack_flush(f->pack);
	recpack_free(f->pack);
	f->pack = NULL;
	probe_scratch_free(&f->sc);
	flush(f);
	if (close(f->fd) < 0 && !f->err)
		f->err = errno;
	f->fd = -1;
	free(f->buf);
	f->buf = NULL;
	int rc = 0;
	/* What the summary reports: what is in the file, not what was meant to be. */
	f->bytes = f->written;
	if (f->err == EFBIG) {
		probe_err("writing %s stopped at the file size limit (ulimit -f) after %llu "
			  "bytes; the recording holds what was written before (raise the "
			  "limit, or lower -F)", f->path, (unsigned long long)f->written);
		rc = -1;
	} else if (f->err) {
		probe_err("writing %s failed: %s; the recording is incomplete",
			  f->path, strerror(f->err));
		rc = -1;
	}
	free(f->path);
	f->path = NULL;
	return rc;
}

void recfile_discard(struct recfile *f)
{
	if (f->fd < 0)
		return;
	close(f->fd);
	f->fd = -1;
	recpack_free(f->pack);
	f->pack = NULL;
	recnames_free(f->names);
	f->names = NULL;
	probe_scratch_free(&f->sc);
	if (f->regular)
		unlink(f->path);
	free(f->buf);
	f->buf = NULL;
	free(f->path);
	f->path = NULL;
}

/* path as the shell would take it back: bare when it is plain, else quoted. */
static char *shell_word(const char *path)
{
	size_t n = strlen(path), plain = strspn(path, "abcdefghijklmnopqrstuvwxyz"
		"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-+=:,@%");
	if (n && plain == n)
		return xstrdup(path);
	char *q = xmalloc(4 * n + 3), *o = q;
	*o++ = '\'';
	for (const char *p = path; *p; p++) {
		if (*p == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else
			*o++ = *p;
	}
	*o++ = '\'';
	*o = '\0';
	return q;
}

/* The picture the hint names: PATH less a .probe or .data ending, then .svg. */
static char *svg_name(const char *path)
{
	static const char *const ends[] = { ".probe", ".data" };
	const char *base = strrchr(path, '/');
	size_t n = strlen(path), bn = strlen(base ? base + 1 : path);

	for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
		size_t e = strlen(ends[i]);
		if (bn > e && !strcmp(path + n - e, ends[i])) {
			n -= e;
			break;
		}
	}
	char *svg = xmalloc(n + 5);
	memcpy(svg, path, n);
	memcpy(svg + n, ".svg", 5);
	return svg;
}

void recfile_hint(const char *path)
{
	char *svg = svg_name(path);
	char *w = shell_word(path), *ws = shell_word(svg);
	char *p = printable_dup(w), *ps = printable_dup(ws);
	probe_err("see it with: probe report %s; as a flame graph: probe report "
		  "--format svg -o %s %s", p, ps, p);
	free(ps);
	free(p);
	free(ws);
	free(w);
	free(svg);
}

/* ---- reading a recording back --------------------------------------- */

/* What was skipped: the damaged parts, reported once at the end. */
struct damage {
	uint64_t regions, first;
	uint64_t bytes;         /* the stream's skipped, once read */
	uint64_t frames;        /* frames read, in all */
	uint64_t wasted;        /* bytes read of frames that did not decode */
	int forged;             /* wasted passed its bound: read no further */
};

struct reader {
	struct probe_stream s;
	struct probe_scratch sc;
	void (*take)(void *arg, struct probe_msg *m);
	void *arg;
	struct probe_stacks stacks;     /* STACK frames so far (v3) */
	ZSTD_DCtx *z;                   /* made at the first ZSTD frame */
	uint8_t *raw;                   /* what one ZSTD frame holds */
	uint64_t zbad;                  /* ZSTD frames that did not unpack */
	uint64_t zbad_at;               /* the first one's offset */
	uint64_t unpacked;              /* bytes they gave, in all */
	int bomb;                       /* more than RECFILE_UNPACK_PER_BYTE */
};

static void dispatch(struct reader *rd, struct probe_msg *m, uint64_t at);

/*
 * A ZSTD frame's frames, each decoded and dispatched in turn.  Its CRC
 * matched: one that does not unpack, or holds a frame that does not
 * decode, is a forgery or a writer's bug, not damage; what it holds from
 * there is left out, and said once at the end.
 */
static void unpack(struct reader *rd, const struct probe_msg *zm, uint64_t at)
{
	if (!rd->z) {
		rd->z = ZSTD_createDCtx();
		rd->raw = xmalloc(PROBE_ZSTD_RAW_MAX);
		if (!rd->z)
			probe_oom();
	}
	size_t n = ZSTD_decompressDCtx(rd->z, rd->raw, PROBE_ZSTD_RAW_MAX,
				       zm->u.zstd.data, zm->u.zstd.len);
	size_t off = 0;
	int bad = ZSTD_isError(n) || n != zm->u.zstd.size;
	rd->unpacked += ZSTD_isError(n) ? zm->u.zstd.len : n;
	while (!bad && off < n) {
		char err[PROBE_ERR_MAX];
		struct probe_msg m;
		const uint8_t *f = rd->raw + off;
		size_t len = n - off < PROBE_FRAME_HDR ? 0 :
			     (size_t)f[0] | (size_t)f[1] << 8 | (size_t)f[2] << 16 |
			     (size_t)f[3] << 24;
		bad = len < PROBE_FRAME_HDR || len > n - off ||
		      probe_decode_frame(f, len, &m, &rd->sc, err) < 0 ||
		      m.type == PROBE_F_ZSTD;
		if (!bad)
			dispatch(rd, &m, at);
		off += len;
	}
	if (bad && !rd->zbad++)
		rd->zbad_at = at;
}

/* A decoded frame to its reader: the ones only recordings hold, unfolded. */
static void dispatch(struct reader *rd, struct probe_msg *m, uint64_t at)
{
	switch (m->type) {
	case PROBE_F_ZSTD:
		unpack(rd, m, at);
		return;
	case PROBE_F_STACK:
		probe_stacks_define(&rd->stacks, m);
		return;
	case PROBE_F_SAMPLES:
		if (m->u.samples.stacked)
			m->u.samples.stacks = &rd->stacks;
		break;
	default:
		break;
	}
	rd->take(rd->arg, m);
}

/* Skip one byte of damage; the first of a stretch opens a damaged part. */
static void skip_byte(struct probe_stream *s, struct damage *d)
{
	if (!s->resync) {
		s->resync = 1;
		if (!d->regions++)
			d->first = s->consumed;
	}
	probe_stream_skip(s, 1);
}

/*
 * A frame that checks out (size, CRC) but does not decode cost what the
 * decoder read of it (a SAMPLES body is read whole, strings are copied)
 * and the CRC run over it (over its whole size when it came right after a
 * frame that decoded: wire_decode.c).  Damage seldom gets that far (its
 * CRCs do not match) and fails within a few bytes (version 1); a stretch
 * of such frames a few bytes apart, failing only at their end or each
 * right after a small one that decodes, is a forgery, and would cost up to
 * a frame's size every few bytes: bounded here.
 */
static int wasted_too_much(const struct damage *d, const struct probe_stream *s)
{
	return d->wasted > RECFILE_WASTE_PER_BYTE * s->consumed +
			   64 * (uint64_t)PROBE_FRAME_MAX;
}

/* Every whole frame buffered to take(), skipping what does not decode. */
static uint64_t take_frames(struct reader *rd, struct damage *d)
{
	struct probe_stream *s = &rd->s;
	uint64_t taken = 0;
	char err[PROBE_ERR_MAX];
	struct probe_msg m;
	while (!d->forged && !rd->bomb) {
		const uint8_t *f;
		size_t flen;
		uint64_t crc0 = s->crc_bytes;
		int r = probe_stream_next(s, &f, &flen, err);
		if (r == 0)
			break;
		if (r == 1 && probe_decode_frame(f, flen, &m, &rd->sc, err) == 0) {
			s->resync = 0;
			dispatch(rd, &m, s->consumed - flen - (s->crc ? PROBE_FILE_CRC : 0));
			taken++;
			/* A compression bomb: read no further (legit: 2 to 20 times). */
			if (rd->unpacked > RECFILE_UNPACK_PER_BYTE * s->consumed +
					   64 * (uint64_t)PROBE_FRAME_MAX)
				rd->bomb = 1;
			continue;
		}
		if (r == 1) {
			/* Back to the bad frame's first byte, then one further. */
			probe_stream_unget(s);
			d->wasted += rd->sc.examined + (s->crc_bytes - crc0);
			d->forged = wasted_too_much(d, s);
		}
		skip_byte(s, d);
	}
	return taken;
}

/* read(2), again when a signal interrupted it. */
static ssize_t read_again(int fd, void *buf, size_t n)
{
	ssize_t r;
	do
		r = read(fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r;
}

/* The 16-byte header: 0 and *version, or -1 after a message. */
static int read_header(const char *file, int fd, uint32_t *version)
{
	char err[PROBE_ERR_MAX];
	uint8_t hdr[PROBE_FILE_HDR];
	size_t have = 0;
	while (have < sizeof(hdr)) {
		ssize_t n = read_again(fd, hdr + have, sizeof(hdr) - have);
		if (n < 0) {
			probe_err("%s: cannot read: %s", file, strerror(errno));
			return -1;
		}
		if (n == 0)
			break;
		have += (size_t)n;
	}
	if (have == 0) {
		probe_err("%s: empty file, not a probe recording", file);
		return -1;
	}
	if (have < sizeof(hdr) && memcmp(hdr, PROBE_FILE_MAGIC, have < 8 ? have : 8) == 0) {
		probe_err("%s: only %zu bytes, too short for a probe recording", file, have);
		return -1;
	}
	if (probe_file_header_check(hdr, have, version, err) < 0) {
		probe_err("%s: %s", file, err);
		return -1;
	}
	return 0;
}

/* Read to the end (or to a forgery); 0, or -1 after a message. */
static int read_body(const char *file, int fd, struct reader *rd, struct damage *d)
{
	while (!d->forged && !rd->bomb) {
		size_t avail;
		uint8_t *space = probe_stream_space(&rd->s, &avail);
		ssize_t n = avail ? read_again(fd, space, avail) : 0;
		if (n < 0) {
			probe_err("%s: cannot read: %s", file, strerror(errno));
			return -1;
		}
		if (n == 0)
			break;
		probe_stream_commit(&rd->s, (size_t)n);
		d->frames += take_frames(rd, d);
	}
	d->bytes = rd->s.skipped;
	return 0;
}

/*
 * At the end, a frame that wants more bytes than are left is a last frame
 * cut short, or damage with good frames after it: look for them (frames
 * found are kept, and what was passed over is damage; if none is, it was a
 * truncated tail).  *tail, *tail_at: what is left unread.
 */
static void read_tail(struct reader *rd, struct damage *d, size_t *tail, uint64_t *tail_at)
{
	*tail = rd->bomb ? 0 : probe_stream_pending(&rd->s);
	*tail_at = rd->s.consumed;
	if (d->forged || rd->bomb || *tail < PROBE_FRAME_HDR)
		return;
	struct damage dd = *d;
	rd->s.eof = 1;          /* what wants more than is left is no frame */
	uint64_t taken = take_frames(rd, &dd);
	if (!taken)
		return;
	*d = dd;
	d->frames += taken;
	d->bytes = rd->s.skipped;
	*tail = probe_stream_pending(&rd->s);
	*tail_at = rd->s.consumed;
}

/* The warnings (or the error) of what could not be read; 0 or -1. */
static int say_damage(const char *file, const struct damage *d, size_t tail,
		      uint64_t tail_at, uint64_t forged_at)
{
	if (d->forged && !d->frames) {
		probe_err("%s: not one frame of it can be read: from byte %" PRIu64
			  ", frames that check out do not decode, over and over (a "
			  "forged file, not damage); read no further", file, forged_at);
		return -1;
	}
	if (d->regions && !d->frames) {
		probe_err("%s: not one frame of it can be read (%" PRIu64 " bytes after the "
			  "header are damaged or not a probe stream)", file, d->bytes);
		return -1;
	}
	if (d->regions)
		probe_warn("%s: %" PRIu64 " damaged part%s of the recording (%" PRIu64
			   " bytes in all, the first at byte %" PRIu64 ") could not be read; "
			   "skipped to the next intact frame, and reporting the rest",
			   file, d->regions, d->regions == 1 ? "" : "s", d->bytes, d->first);
	if (d->forged)
		probe_warn("%s: read up to byte %" PRIu64 " only: from there, frames "
			   "that check out do not decode, over and over (a forged "
			   "file, not damage); reporting what precedes it", file,
			   forged_at);
	else if (tail)
		probe_warn("%s: the recording is truncated: its last frame is cut short "
			   "(%zu bytes at byte %" PRIu64 " ignored); reporting what precedes it",
			   file, tail, tail_at);
	return 0;
}

/* What the frames only recordings hold could not give; warnings. */
static void say_unpacked(const char *file, const struct reader *rd)
{
	if (rd->bomb)
		probe_warn("%s: read no further: its compressed blocks unpacked into more "
			   "than %u times the bytes read (a forged file, not a recording)",
			   file, RECFILE_UNPACK_PER_BYTE);
	if (rd->zbad)
		probe_warn("%s: %" PRIu64 " compressed block%s (the first at byte %" PRIu64
			   ") did not unpack into frames, though %s CRC matched (a "
			   "forged file, or a bug of the probe that wrote it); reporting "
			   "the rest", file, rd->zbad, rd->zbad == 1 ? "" : "s", rd->zbad_at,
			   rd->zbad == 1 ? "its" : "their");
	if (rd->stacks.refused)
		probe_warn("%s: %" PRIu64 " stack%s left out: the recording defines more "
			   "than the %u MiB of stacks a reader holds at once", file,
			   rd->stacks.refused, rd->stacks.refused == 1 ? "" : "s",
			   PROBE_STACKS_BYTES >> 20);
	if (rd->stacks.unknown)
		probe_warn("%s: %" PRIu64 " sample%s left out: %s stack was lost with a "
			   "damaged or left-out part of the recording", file,
			   rd->stacks.unknown, rd->stacks.unknown == 1 ? "" : "s",
			   rd->stacks.unknown == 1 ? "its" : "their");
}

int recfile_read(const char *file, int fd,
		 void (*take)(void *arg, struct probe_msg *m), void *arg)
{
	uint32_t version;
	if (read_header(file, fd, &version) < 0)
		return -1;
	struct reader rd = { .take = take, .arg = arg };
	if (probe_stream_init(&rd.s) < 0 || probe_scratch_init(&rd.sc) < 0)
		probe_oom();
	rd.s.consumed = PROBE_FILE_HDR; /* so the decoder's offsets are file offsets */
	rd.s.crc = version >= PROBE_FILE_V2;
	struct damage d = { 0 };
	size_t tail = 0;
	uint64_t tail_at = 0;
	int rc = read_body(file, fd, &rd, &d);
	if (rc == 0) {
		read_tail(&rd, &d, &tail, &tail_at);
		rc = say_damage(file, &d, tail, tail_at, rd.s.consumed);
	}
	if (rc == 0)
		say_unpacked(file, &rd);
	probe_stacks_free(&rd.stacks);
	ZSTD_freeDCtx(rd.z);
	free(rd.raw);
	probe_stream_free(&rd.s);
	probe_scratch_free(&rd.sc);
	return rc;
}
