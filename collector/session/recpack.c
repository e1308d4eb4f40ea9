/* recpack.c - see recpack.h: stacks once, blocks compressed. */
#include "session/recpack.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "hashtab.h"
#include "probe/wire.h"
#include "util.h"
#include "data/wire_decode.h"

/* A STACKED frame is written before its body could not take one more sample. */
#define SAMPLE_MAX (5 * 10 + 10 + PROBE_MAX_FRAMES * 10)
#define BODY_CAP (PROBE_FRAME_MAX - 64)

/* A stack written this epoch: its encoded bytes (as in SAMPLES), its id. */
struct written {
	UT_hash_handle hh;
	uint32_t id, len;
	uint8_t frames[];
};

/* What one costs against RECPACK_STACK_BYTES, beside its bytes. */
#define WRITTEN_COST (sizeof(struct written) + 16)

struct recpack {
	recpack_emit emit;
	void *arg;
	/* the block being gathered */
	uint8_t *raw;
	size_t rawlen;
	/* stacks written this epoch: encoded bytes -> id */
	struct written *stacks;
	size_t blen;            /* their bytes */
	uint32_t nids;
	uint64_t epoch;         /* of the ids given (wire.h's STACK) */
	/* the last STACK written this epoch: the next one's base */
	uint64_t last[PROBE_MAX_FRAMES];
	uint32_t nlast, last_id;
	uint64_t since;         /* bytes of STACKED frames since the table started */
	/* the STACKED frame being built */
	uint8_t *body;
	size_t bodylen;
	uint64_t count, base_ns, prev_ns, prev_ref;
	uint32_t pid;
	/* compression */
	ZSTD_CCtx *z;
	int level;              /* 0: blocks stay frames */
	uint8_t *zout;
};

static void forget_stacks(struct recpack *p);

struct recpack *recpack_new(recpack_emit emit, void *arg)
{
	struct recpack *p = xcalloc(1, sizeof(*p));
	p->emit = emit;
	p->arg = arg;
	p->raw = xmalloc(PROBE_ZSTD_RAW_MAX);
	p->body = xmalloc(BODY_CAP);
	p->zout = xmalloc(PROBE_FRAME_MAX);
	p->z = ZSTD_createCCtx();
	if (!p->z)
		probe_oom();
	recpack_level(p, RECPACK_ZSTD_LEVEL);
	return p;
}

void recpack_level(struct recpack *p, int level)
{
	p->level = level;
	if (level)
		ZSTD_CCtx_setParameter(p->z, ZSTD_c_compressionLevel, level);
}

void recpack_free(struct recpack *p)
{
	if (!p)
		return;
	ZSTD_freeCCtx(p->z);
	free(p->raw);
	free(p->body);
	free(p->zout);
	forget_stacks(p);
	free(p);
}

/* ---- blocks --------------------------------------------------------- */

/* The block's frames as they are (compressing did not pay). */
static void emit_raw(struct recpack *p)
{
	size_t off = 0;
	while (off + PROBE_FRAME_HDR <= p->rawlen) {
		const uint8_t *f = p->raw + off;
		uint32_t n = (uint32_t)f[0] | (uint32_t)f[1] << 8 |
			     (uint32_t)f[2] << 16 | (uint32_t)f[3] << 24;
		p->emit(p->arg, f, n);
		off += n;
	}
}

/* Write the block out: one ZSTD frame, or its frames when that is no smaller. */
static void seal(struct recpack *p)
{
	if (!p->rawlen)
		return;
	if (p->rawlen < RECPACK_ZMIN || !p->level) {
		emit_raw(p);
		p->rawlen = 0;
		return;
	}
	struct probe_wbuf w;
	probe_wbuf_init(&w, p->zout, PROBE_FRAME_MAX);
	size_t at = probe_frame_begin(&w, PROBE_F_ZSTD, 0);
	probe_put_uv(&w, p->rawlen);
	size_t hdr = w.len;
	size_t z = ZSTD_compress2(p->z, p->zout + hdr, PROBE_FRAME_MAX - hdr, p->raw,
				  p->rawlen);
	if (ZSTD_isError(z) || hdr + z >= p->rawlen) {
		emit_raw(p);
	} else {
		w.len = hdr + z;
		probe_frame_end(&w, at);
		p->emit(p->arg, p->zout, w.len);
	}
	p->rawlen = 0;
}

static void append(struct recpack *p, const uint8_t *f, size_t n)
{
	if (n > PROBE_ZSTD_RAW_MAX - p->rawlen)
		seal(p);
	memcpy(p->raw + p->rawlen, f, n);
	p->rawlen += n;
	if (p->rawlen >= RECPACK_BLOCK)
		seal(p);
}

/* ---- stacks --------------------------------------------------------- */

static void end_stacked(struct recpack *p);

static void forget_stacks(struct recpack *p)
{
	struct written *e, *t;
	HASH_ITER(hh, p->stacks, e, t) {
		HASH_DEL(p->stacks, e);
		free(e);
	}
	p->blen = 0;
	p->nids = 0;
	p->since = 0;
	p->nlast = 0;
	p->epoch++;
}

/*
 * A STACK frame: its innermost frames, and the outermost ones it shares
 * with the last STACK written (its base: callers mostly repeat); wire.h
 * says how.
 */
static void put_stack_frame(struct recpack *p, uint32_t pid, uint32_t id,
			    const struct probe_sample_raw *s)
{
	uint64_t f[PROBE_MAX_FRAMES];
	uint32_t n = probe_sample_frames(s, f), shared = 0;
	while (shared < n && shared < p->nlast &&
	       f[n - 1 - shared] == p->last[p->nlast - 1 - shared])
		shared++;
	uint8_t buf[64 + PROBE_MAX_FRAMES * 10];
	struct probe_wbuf w;
	probe_wbuf_init(&w, buf, sizeof(buf));
	size_t at = probe_frame_begin(&w, PROBE_F_STACK, pid);
	probe_put_uv(&w, p->epoch);
	probe_put_uv(&w, id);
	probe_put_uv(&w, n);
	probe_put_uv(&w, shared ? p->last_id + 1 : 0);
	probe_put_uv(&w, shared);
	/* Its own frames outermost first: each near the one outside it. */
	uint64_t prev = shared ? f[n - shared] : 0;
	for (uint32_t i = n - shared; i-- > 0;) {
		probe_put_sv(&w, (int64_t)(f[i] - prev));
		prev = f[i];
	}
	probe_frame_end(&w, at);
	if (w.ok)
		append(p, buf, w.len);
	memcpy(p->last, f, n * sizeof(*f));
	p->nlast = n;
	p->last_id = id;
}

/* The id of s's stack, written in a STACK frame first when new. */
static uint32_t stack_id(struct recpack *p, uint32_t pid, const struct probe_sample_raw *s)
{
	uint32_t len = (uint32_t)s->frames_len;
	if (p->blen + (p->nids + 1) * WRITTEN_COST + len > RECPACK_STACK_BYTES ||
	    p->nids >= PROBE_STACK_IDS ||
	    (p->since >= RECPACK_REFRESH && p->since >= 16 * (uint64_t)p->blen)) {
		/* The samples waiting name the ids about to be given again. */
		end_stacked(p);
		forget_stacks(p);
	}
	struct written *e;
	HASH_FIND(hh, p->stacks, s->frames, len, e);
	if (e)
		return e->id;
	e = xmalloc(sizeof(*e) + len);
	e->id = p->nids++;
	e->len = len;
	memcpy(e->frames, s->frames, len);
	HASH_ADD_KEYPTR(hh, p->stacks, e->frames, len, e);
	p->blen += len;
	put_stack_frame(p, pid, e->id, s);
	return e->id;
}

/* ---- STACKED frames ------------------------------------------------- */

static void end_stacked(struct recpack *p)
{
	if (!p->count)
		return;
	uint8_t hdr[PROBE_FRAME_HDR + 8 + 20];
	struct probe_wbuf w;
	probe_wbuf_init(&w, hdr, sizeof(hdr));
	size_t at = probe_frame_begin(&w, PROBE_F_STACKED, p->pid);
	probe_put_u64(&w, p->base_ns);
	probe_put_uv(&w, p->epoch);
	probe_put_uv(&w, p->count);
	size_t size = w.len + p->bodylen;
	for (unsigned i = 0; i < 4; i++)
		hdr[at + i] = (uint8_t)(size >> (8 * i));
	if (size > PROBE_ZSTD_RAW_MAX - p->rawlen)
		seal(p);
	memcpy(p->raw + p->rawlen, hdr, w.len);
	memcpy(p->raw + p->rawlen + w.len, p->body, p->bodylen);
	p->rawlen += size;
	p->since += size;
	p->count = 0;
	p->bodylen = 0;
	if (p->rawlen >= RECPACK_BLOCK)
		seal(p);
}

static void add_sample(struct recpack *p, uint32_t pid, const struct probe_sample_raw *s)
{
	/* Stacks first: a STACK must come before the STACKED that names it. */
	uint64_t ref = probe_sample_is_free(s) ? 0 : 1 + (uint64_t)stack_id(p, pid, s);
	/* A STACKED frame ends with its block (or at the frame's bound). */
	if (p->bodylen + SAMPLE_MAX > BODY_CAP || p->rawlen + p->bodylen >= RECPACK_BLOCK ||
	    (p->count && pid != p->pid))
		end_stacked(p);
	if (!p->count) {
		p->base_ns = p->prev_ns = s->time_ns;
		p->prev_ref = 0;
		p->pid = pid;
	}
	struct probe_wbuf w;
	probe_wbuf_init(&w, p->body + p->bodylen, BODY_CAP - p->bodylen);
	probe_put_uv(&w, s->tid);
	probe_put_sv(&w, (int64_t)(s->time_ns - p->prev_ns));
	probe_put_uv(&w, s->weight);
	probe_put_uv(&w, s->event);
	probe_put_sv(&w, (int64_t)(ref - p->prev_ref));
	p->prev_ref = ref;
	if (!ref) {
		probe_put_uv(&w, s->nframes);
		probe_put_bytes(&w, s->frames, s->frames_len);
	}
	p->bodylen += w.len;
	p->prev_ns = s->time_ns;
	p->count++;
}

/*
 * A SAMPLES frame as STACKs and STACKED frames.  A STACK goes into the
 * block as soon as its stack is met, the STACKED frame of the samples
 * only when it ends (full, another process's samples, another frame, a
 * flush): each sample's STACK comes before it in the stream, and
 * consecutive batches of one process share a STACKED frame when blocks
 * are compressed (damage costs a block then anyway).
 */
void recpack_samples(struct recpack *p, const struct probe_msg *m)
{
	struct probe_msg walk = *m;     /* the caller's stays unwalked */
	struct probe_sample_raw s;
	while (probe_samples_next_raw(&walk, &s))
		add_sample(p, m->pid, &s);
	/* Uncompressed, each batch stays a frame of its own: a unit of damage. */
	if (!p->level)
		end_stacked(p);
}

void recpack_frame(struct recpack *p, const uint8_t *f, size_t n)
{
	/* The samples before it stay before it (a MAP starts a generation). */
	end_stacked(p);
	append(p, f, n);
}

void recpack_flush(struct recpack *p)
{
	end_stacked(p);
	seal(p);
}
