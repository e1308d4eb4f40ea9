/*
 * wire_recorded.c - decoding the frames only recordings of version 3 hold
 * (include/probe/wire.h): STACK, STACKED, ZSTD and SYMTAB, and the table
 * of STACKs a reader keeps.
 *
 * As in wire_decode.c, every field is checked when the frame is decoded,
 * so that walking a STACKED frame's samples or a SYMTAB's entries later
 * cannot fail.  A STACKED sample is handed out as a SAMPLES one: its
 * frames point into the STACK table (or, inline, into the frame).
 */
#include "data/wire_int.h"

#include <stdlib.h>
#include <string.h>

int wire_dec_stack(struct probe_rd *r, struct probe_msg *m, char err[PROBE_ERR_MAX])
{
	m->u.stack.epoch = probe_rd_uleb(r);
	uint64_t id = probe_rd_uleb(r), n = probe_rd_uleb(r);
	uint64_t base = probe_rd_uleb(r), shared = probe_rd_uleb(r);
	if (r->bad)
		return 0;
	if (id >= PROBE_STACK_IDS || n == 0 || n > PROBE_MAX_FRAMES ||
	    base > PROBE_STACK_IDS || shared > n || (!base && shared)) {
		wire_seterr(err, "STACK %llu of %llu frames, %llu shared with %llu (ids below "
			    "%u, 1 to %u frames)", (unsigned long long)id,
			    (unsigned long long)n, (unsigned long long)shared,
			    (unsigned long long)base, PROBE_STACK_IDS, PROBE_MAX_FRAMES);
		return -1;
	}
	const uint8_t *frames = r->p;
	wire_skip_varints(r, n - shared);
	m->u.stack.id = (uint32_t)id;
	m->u.stack.nframes = (uint32_t)n;
	m->u.stack.base = (uint32_t)base;
	m->u.stack.shared = (uint32_t)shared;
	m->u.stack.frames = frames;
	m->u.stack.frames_len = (size_t)(r->p - frames);
	return 0;
}

/* One STACKED sample checked: 0, or -1 (r->bad, or err for a bad field). */
static int check_stacked(struct probe_rd *r, uint64_t *prev_ref, char err[PROBE_ERR_MAX])
{
	uint64_t tid = probe_rd_uleb(r);
	(void)probe_rd_zigzag(r);
	(void)probe_rd_uleb(r);
	uint64_t event = probe_rd_uleb(r);
	uint64_t ref = *prev_ref + (uint64_t)probe_rd_zigzag(r);
	*prev_ref = ref;
	if (r->bad)
		return -1;
	if (tid > UINT32_MAX || event > UINT32_MAX || ref > PROBE_STACK_IDS) {
		wire_seterr(err, "STACKED sample with a thread, event or stack out of "
			    "bounds");
		return -1;
	}
	if (ref)
		return 0;
	uint64_t n = probe_rd_uleb(r);
	if (!r->bad && (n == 0 || n > PROBE_MAX_FRAMES)) {
		wire_seterr(err, "STACKED sample of %llu frames (1 to %u)",
			    (unsigned long long)n, PROBE_MAX_FRAMES);
		return -1;
	}
	wire_skip_varints(r, n);
	return r->bad ? -1 : 0;
}

int wire_dec_stacked(struct probe_rd *r, struct probe_msg *m, char err[PROBE_ERR_MAX])
{
	m->type = PROBE_F_SAMPLES;      /* what readers see */
	m->u.samples.stacked = 1;
	m->u.samples.base_ns = probe_rd_le(r, 8);
	m->u.samples.epoch = probe_rd_uleb(r);
	m->u.samples.count = probe_rd_uleb(r);
	if (!r->bad && m->u.samples.count == 0) {
		wire_seterr(err, "STACKED batch with no samples");
		return -1;
	}
	const uint8_t *body = r->p;
	err[0] = '\0';
	uint64_t prev_ref = 0;
	for (uint64_t i = 0; !r->bad && i < m->u.samples.count; i++)
		if (check_stacked(r, &prev_ref, err) < 0 && err[0])
			return -1;
	m->u.samples.p = body;
	m->u.samples.end = r->p;
	m->u.samples.left = m->u.samples.count;
	m->u.samples.prev_ns = m->u.samples.base_ns;
	return 0;
}

int wire_stacked_next(struct probe_msg *m, struct probe_sample_raw *out)
{
	while (m->u.samples.left) {
		struct probe_rd r = { .p = m->u.samples.p, .end = m->u.samples.end };
		uint64_t tid = probe_rd_uleb(&r);
		int64_t dt = probe_rd_zigzag(&r);
		uint64_t weight = probe_rd_uleb(&r), event = probe_rd_uleb(&r);
		uint64_t ref = m->u.samples.prev_ref + (uint64_t)probe_rd_zigzag(&r);
		m->u.samples.prev_ref = ref;
		m->u.samples.left--;
		m->u.samples.prev_ns += (uint64_t)dt;
		out->tid = (uint32_t)tid;
		out->event = (uint32_t)event;
		out->time_ns = m->u.samples.prev_ns;
		out->weight = weight;
		if (!ref) {
			uint64_t n = probe_rd_uleb(&r);
			out->frames = r.p;
			wire_skip_varints(&r, n);
			out->nframes = (uint32_t)n;
			out->frames_len = (size_t)(r.p - out->frames);
			out->stack_id = 0;
			out->stack_serial = 0;
			m->u.samples.p = r.p;
			return 1;
		}
		m->u.samples.p = r.p;
		struct probe_stacks *t = m->u.samples.stacks;
		uint32_t id = (uint32_t)(ref - 1);
		if (!t || t->epoch != m->u.samples.epoch || id >= t->cap ||
		    !t->v[id].serial) {
			if (t)
				t->unknown++;
			continue;
		}
		const struct probe_stack_def *d = &t->v[id];
		out->frames = d->frames;
		out->frames_len = d->len;
		out->nframes = d->nframes;
		out->stack_id = id;
		out->stack_serial = d->serial;
		return 1;
	}
	return 0;
}

/* A new epoch: the stacks of the one before are named no more. */
static void forget(struct probe_stacks *t, uint64_t epoch)
{
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->v[i].serial)
			continue;
		free(t->v[i].frames);
		t->bytes -= t->v[i].len;
		t->v[i] = (struct probe_stack_def){ 0 };
	}
	t->epoch = epoch;
}

/*
 * m's frames whole, encoded as SAMPLES' are (zig-zag deltas) into out
 * (room for PROBE_MAX_FRAMES varints): its own, then its base's
 * outermost shared ones.  The length, or 0 when the base is not held.
 */
static size_t whole_stack(const struct probe_stacks *t, const struct probe_msg *m,
			  uint8_t *out, size_t cap)
{
	uint64_t f[PROBE_MAX_FRAMES], bf[PROBE_MAX_FRAMES], prev = 0;
	uint32_t k = m->u.stack.nframes - m->u.stack.shared, nb = 0;
	if (m->u.stack.base) {
		uint32_t b = m->u.stack.base - 1;
		if (b >= t->cap || !t->v[b].serial || t->v[b].nframes < m->u.stack.shared)
			return 0;
		struct probe_sample_raw bs = { .nframes = t->v[b].nframes,
					       .frames = t->v[b].frames,
					       .frames_len = t->v[b].len };
		nb = probe_sample_frames(&bs, bf);
		if (nb != bs.nframes || (m->u.stack.shared && !nb))
			return 0;
		if (m->u.stack.shared)
			prev = bf[nb - m->u.stack.shared];
	}
	/* Its own frames, outermost first, each from the one outside it. */
	struct probe_rd r = { .p = m->u.stack.frames,
			      .end = m->u.stack.frames + m->u.stack.frames_len };
	for (uint32_t i = k; i-- > 0;) {
		prev += (uint64_t)probe_rd_zigzag(&r);
		f[i] = prev;
	}
	if (r.bad)
		return 0;
	for (uint32_t i = 0; i < m->u.stack.shared; i++)
		f[k + i] = bf[nb - m->u.stack.shared + i];
	k += m->u.stack.shared;
	struct probe_wbuf w;
	probe_wbuf_init(&w, out, cap);
	prev = 0;
	for (uint32_t i = 0; i < k; i++) {
		probe_put_sv(&w, (int64_t)(f[i] - prev));
		prev = f[i];
	}
	return w.ok ? w.len : 0;
}

int probe_stacks_define(struct probe_stacks *t, const struct probe_msg *m)
{
	uint32_t id = m->u.stack.id;
	uint8_t whole[PROBE_MAX_FRAMES * 10];
	if (m->u.stack.epoch < t->epoch)
		return -1;      /* never written so: its samples are left out */
	if (m->u.stack.epoch > t->epoch)
		forget(t, m->u.stack.epoch);
	size_t len = whole_stack(t, m, whole, sizeof(whole));
	if (id >= t->cap) {
		size_t ncap = t->cap ? t->cap : 1024;
		while (ncap <= id)
			ncap *= 2;
		uint64_t grow = (ncap - t->cap) * sizeof(*t->v);
		if (t->bytes + grow > PROBE_STACKS_BYTES) {
			t->refused++;
			return -1;
		}
		struct probe_stack_def *v = realloc(t->v, ncap * sizeof(*v));
		if (!v) {
			t->refused++;
			return -1;
		}
		memset(v + t->cap, 0, (ncap - t->cap) * sizeof(*v));
		t->v = v;
		t->bytes += grow;
		t->cap = ncap;
	}
	struct probe_stack_def *d = &t->v[id];
	t->bytes -= d->len;
	d->serial = 0;
	d->len = 0;
	if (!len)
		return -1;      /* its base is not here (lost): nor is it */
	if (t->bytes + len > PROBE_STACKS_BYTES) {
		t->refused++;
		return -1;
	}
	uint8_t *f = realloc(d->frames, len);
	if (!f) {
		t->refused++;
		return -1;
	}
	memcpy(f, whole, len);
	d->frames = f;
	d->len = (uint32_t)len;
	d->nframes = m->u.stack.nframes;
	d->serial = ++t->serial;
	t->bytes += len;
	return 0;
}

void probe_stacks_free(struct probe_stacks *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->v[i].frames);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

int wire_dec_zstd(struct probe_rd *r, struct probe_msg *m, char err[PROBE_ERR_MAX])
{
	m->u.zstd.size = probe_rd_uleb(r);
	if (r->bad)
		return 0;
	if (m->u.zstd.size == 0 || m->u.zstd.size > PROBE_ZSTD_RAW_MAX || r->p == r->end) {
		wire_seterr(err, "ZSTD frame of %llu bytes compressed into %zu (1 to %u, "
			    "from at least 1)", (unsigned long long)m->u.zstd.size,
			    (size_t)(r->end - r->p), PROBE_ZSTD_RAW_MAX);
		return -1;
	}
	m->u.zstd.data = r->p;
	m->u.zstd.len = (size_t)(r->end - r->p);
	r->p = r->end;
	return 0;
}

/* ---- SYMTAB --------------------------------------------------------- */

/* A u16-length string left where it lies: *s NULL when empty. */
static void rd_span(struct probe_rd *r, const char **s, size_t *n)
{
	size_t len = (size_t)probe_rd_le(r, 2);
	*s = NULL;
	*n = 0;
	if (r->bad)
		return;
	if (len > PROBE_STR_MAX || (size_t)(r->end - r->p) < len ||
	    memchr(r->p, '\0', len)) {
		r->bad = 1;
		return;
	}
	if (len)
		*s = (const char *)r->p;
	*n = len;
	r->p += len;
}

static int rd_func(struct probe_rd *r, uint64_t *prev, struct probe_symfunc *f)
{
	uint64_t start = *prev + probe_rd_uleb(r);
	f->start = start;
	f->size = probe_rd_uleb(r);
	f->kind = (uint8_t)probe_rd_le(r, 1);
	rd_span(r, &f->name, &f->name_len);
	if (r->bad || start < *prev || !f->size || start + f->size < start ||
	    f->kind > PROBE_SYM_FDE) {
		r->bad = 1;
		return -1;
	}
	*prev = start;
	return 0;
}

static int rd_addr(struct probe_rd *r, uint64_t *prev, struct probe_symaddr *a)
{
	uint64_t v = *prev + probe_rd_uleb(r);
	a->vaddr = v;
	a->nsrc = (uint8_t)probe_rd_le(r, 1);
	if (r->bad || v < *prev || !a->nsrc || a->nsrc > PROBE_SYM_SRC_MAX) {
		r->bad = 1;
		return -1;
	}
	for (unsigned i = 0; i < a->nsrc && !r->bad; i++) {
		struct probe_symsrc *s = &a->src[i];
		rd_span(r, &s->name, &s->name_len);
		rd_span(r, &s->file, &s->file_len);
		s->line = probe_rd_uleb(r);
		s->inlined = (uint8_t)probe_rd_le(r, 1);
		if (s->line > UINT32_MAX || s->inlined > 1)
			r->bad = 1;
	}
	*prev = v;
	return r->bad ? -1 : 0;
}

int wire_dec_symtab(struct probe_rd *r, struct probe_msg *m, struct probe_scratch *sc,
		    char err[PROBE_ERR_MAX])
{
	uint8_t n = (uint8_t)probe_rd_le(r, 1);
	if (!r->bad && (n == 0 || n > PROBE_BUILD_ID_MAX)) {
		wire_seterr(err, "SYMTAB with a build-id of %u bytes (1 to %u)", n,
			    PROBE_BUILD_ID_MAX);
		return -1;
	}
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = 1;
		return 0;
	}
	m->u.symtab.build_id_len = n;
	memcpy(m->u.symtab.build_id, r->p, n);
	r->p += n;
	m->u.symtab.path = wire_rd_str(r, sc);
	m->u.symtab.nfuncs = probe_rd_uleb(r);
	m->u.symtab.funcs = r->p;
	uint64_t prev = 0;
	struct probe_symfunc f;
	for (uint64_t i = 0; i < m->u.symtab.nfuncs && !r->bad; i++)
		rd_func(r, &prev, &f);
	m->u.symtab.naddrs = probe_rd_uleb(r);
	m->u.symtab.addrs = r->p;
	prev = 0;
	struct probe_symaddr a;
	for (uint64_t i = 0; i < m->u.symtab.naddrs && !r->bad; i++)
		rd_addr(r, &prev, &a);
	m->u.symtab.end = r->p;
	return 0;
}

void probe_symtab_funcs(const struct probe_msg *m, struct probe_symtab_walk *w)
{
	*w = (struct probe_symtab_walk){ m->u.symtab.funcs, m->u.symtab.addrs,
					 m->u.symtab.nfuncs, 0 };
}

int probe_symtab_next_func(struct probe_symtab_walk *w, struct probe_symfunc *out)
{
	if (!w->left)
		return 0;
	struct probe_rd r = { .p = w->p, .end = w->end };
	if (rd_func(&r, &w->prev, out) < 0)
		return 0;       /* cannot happen: validated */
	w->p = r.p;
	w->left--;
	return 1;
}

void probe_symtab_addrs(const struct probe_msg *m, struct probe_symtab_walk *w)
{
	/* The addresses' count precedes them: start after the functions. */
	*w = (struct probe_symtab_walk){ m->u.symtab.addrs, m->u.symtab.end,
					 m->u.symtab.naddrs, 0 };
}

int probe_symtab_next_addr(struct probe_symtab_walk *w, struct probe_symaddr *out)
{
	if (!w->left)
		return 0;
	struct probe_rd r = { .p = w->p, .end = w->end };
	if (rd_addr(&r, &w->prev, out) < 0)
		return 0;
	w->p = r.p;
	w->left--;
	return 1;
}
