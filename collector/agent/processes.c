/* processes.c - see processes.h (its functions and types: aproc_, an agent's process). */
#include "agent/processes.h"

#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/sink.h"
#include "util.h"

/* What malloc takes besides the bytes asked for (its header, rounding), about. */
#define CHUNK 16u

void aprocs_init(struct aprocs *t)
{
	memset(t, 0, sizeof(*t));
	if (probe_scratch_init(&t->sc) < 0)
		probe_oom();
}

struct auser *aprocs_user(struct aprocs *t, uint32_t uid)
{
	struct auser *u;
	HASH_FIND(hh, t->users, &uid, sizeof(uid), u);
	if (!u) {
		u = xcalloc(1, sizeof(*u));
		u->uid = uid;
		HASH_ADD(hh, t->users, uid, sizeof(u->uid), u);
	}
	return u;
}

void aprocs_freed(struct aprocs *t, size_t bytes)
{
	t->freed += bytes;
	if (t->freed < APROC_TRIM_BYTES)
		return;
	t->freed = 0;
	malloc_trim(0);
}

/* ---- the bounds on what is kept --------------------------------------- */

/* What keeping len bytes of a frame costs: the copy and its slot. */
static size_t kept_cost(size_t len)
{
	return len + CHUNK + 2 * sizeof(struct kept);
}

/*
 * Take n bytes of p's, its user's and everyone's bound; 0 when they do not
 * fit (counted), unless force: a HELLO is kept whatever else was (its
 * bytes are bounded, and a process has one).
 */
static int charge_as(struct aprocs *t, struct aproc *p, size_t n, int force)
{
	struct auser *u = aprocs_user(t, p->uid);
	if (!force && (p->bytes + n > APROC_PROC_BYTES || u->kept + n > APROC_UID_BYTES ||
		       t->kept + n > APROC_ALL_BYTES)) {
		u->frames_dropped++;
		t->frames_dropped++;
		return 0;
	}
	p->bytes += n;
	u->kept += n;
	t->kept += n;
	return 1;
}

static int charge(struct aprocs *t, struct aproc *p, size_t n)
{
	return charge_as(t, p, n, 0);
}

static void refund(struct aprocs *t, struct aproc *p, size_t n)
{
	struct auser *u = aprocs_user(t, p->uid);
	p->bytes -= n;
	u->kept -= n;
	t->kept -= n;
	aprocs_freed(t, n);
}

static void kept_free(struct aprocs *t, struct aproc *p, struct kept *k)
{
	if (k->f)
		refund(t, p, kept_cost(k->len));
	free(k->f);
	k->f = NULL;
	k->len = 0;
}

/* k becomes a copy of f; 0 (k as it was) when that does not fit. */
static int keep_as(struct aprocs *t, struct aproc *p, struct kept *k, const uint8_t *f,
		   size_t len, int force)
{
	if (!charge_as(t, p, kept_cost(len), force))
		return 0;
	kept_free(t, p, k);
	k->f = xmalloc(len);
	memcpy(k->f, f, len);
	k->len = len;
	return 1;
}

static int keep(struct aprocs *t, struct aproc *p, struct kept *k, const uint8_t *f,
		size_t len)
{
	return keep_as(t, p, k, f, len, 0);
}

static char *claim_dup(struct aprocs *t, struct aproc *p, const char *s)
{
	if (!charge(t, p, strlen(s) + 1 + CHUNK))
		return NULL;
	return printable_dup(s);
}

static void claim_free(struct aprocs *t, struct aproc *p, char **s)
{
	if (*s)
		refund(t, p, strlen(*s) + 1 + CHUNK);
	free(*s);
	*s = NULL;
}

/* Forget what describes p (a new HELLO, or its end). */
static void forget(struct aprocs *t, struct aproc *p)
{
	kept_free(t, p, &p->hello);
	for (size_t i = 0; i < p->nmaps; i++)
		kept_free(t, p, &p->maps[i]);
	for (size_t i = 0; i < p->nthr; i++)
		kept_free(t, p, &p->thr[i]);
	p->nmaps = p->nthr = 0;
	struct kjit *j, *tmp;
	HASH_ITER(hh, p->jits, j, tmp) {
		HASH_DEL(p->jits, j);
		kept_free(t, p, &j->k);
		refund(t, p, sizeof(*j) + CHUNK);
		free(j);
	}
	p->njits = 0;
	claim_free(t, p, &p->claimed_comm);
	claim_free(t, p, &p->claimed_exe);
}

static void proc_free(struct aprocs *t, struct aproc *p)
{
	forget(t, p);
	free(p->maps);
	free(p->thr);
	free(p->name);
	free(p->comm);
	free(p->exe);
	free(p);
}

void aprocs_free(struct aprocs *t)
{
	struct aproc *p, *tmp;
	HASH_ITER(hh, t->byid, p, tmp) {
		HASH_DEL(t->byid, p);
		proc_free(t, p);
	}
	struct auser *u, *utmp;
	HASH_ITER(hh, t->users, u, utmp) {
		HASH_DEL(t->users, u);
		free(u);
	}
	probe_scratch_free(&t->sc);
}

struct aproc *aproc_find(struct aprocs *t, uint32_t pid)
{
	struct aproc *p;
	HASH_FIND(hh, t->byid, &pid, sizeof(pid), p);
	return p;
}

struct aproc *aproc_get(struct aprocs *t, uint32_t pid)
{
	struct aproc *p = aproc_find(t, pid);
	if (p)
		return p;
	p = xcalloc(1, sizeof(*p));
	p->pid = pid;
	p->name = xasprintf("[pid %u]", pid);
	p->comm = xstrdup("");
	p->exe = xstrdup("");
	HASH_ADD(hh, t->byid, pid, sizeof(p->pid), p);
	t->nlive++;
	t->seen++;
	return p;
}

void aproc_set_uid(struct aprocs *t, struct aproc *p, uint32_t uid)
{
	if (p->uid == uid)
		return;
	struct auser *was = aprocs_user(t, p->uid), *now = aprocs_user(t, uid);
	was->kept -= p->bytes;
	now->kept += p->bytes;
	p->uid = uid;
}

/* ---- HELLO: the kernel's names ---------------------------------------- */

/*
 * pid's comm and executable as the kernel has them now ("" where they
 * cannot be read: the process has ended).
 */
static void kernel_names(uint32_t pid, char comm[64], char exe[PROBE_STR_MAX + 1])
{
	char path[64];
	comm[0] = exe[0] = 0;
	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/comm", pid);
	FILE *f = fopen(path, "re");
	if (f) {
		if (fgets(comm, 64, f))
			comm[strcspn(comm, "\n")] = 0;
		else
			comm[0] = 0;
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/exe", pid);
	ssize_t n = readlink(path, exe, PROBE_STR_MAX);
	exe[n > 0 ? n : 0] = 0;
}

/* s cut to max bytes (into buf), for a copy that is kept. */
static const char *cut(const char *s, char *buf, size_t max)
{
	size_t n = s ? strnlen(s, max) : 0;
	memcpy(buf, s ? s : "", n);
	buf[n] = 0;
	return buf;
}

/*
 * The HELLO kept of m: the kernel's comm and exe, argv and event names
 * cut (processes.h), into the caller's buffer; its length, 0 when it did not
 * fit (it always does: every string is bounded).
 */
static size_t hello_encode(const struct probe_msg *m, const char *comm, const char *exe,
			   uint8_t *b, size_t cap)
{
	char name[APROC_NAME_MAX + 1];
	struct probe_wbuf w;
	probe_wbuf_init(&w, b, cap);
	size_t at = probe_frame_begin(&w, PROBE_F_HELLO, m->pid);
	probe_put_u32(&w, m->u.hello.version);
	probe_put_u32(&w, m->u.hello.ppid);
	probe_put_u32(&w, m->u.hello.event_type);
	probe_put_u64(&w, m->u.hello.event_config);
	probe_put_u8(&w, m->u.hello.freq);
	probe_put_u64(&w, m->u.hello.value);
	probe_put_u64(&w, m->u.hello.start_ns);
	probe_put_str(&w, cut(m->u.hello.event_name, name, APROC_NAME_MAX));
	probe_put_str(&w, exe);
	probe_put_str(&w, comm);
	size_t argc = 0, room = APROC_ARGS_MAX;
	while (argc < m->u.hello.argc && room > 0) {
		size_t l = strlen(m->u.hello.argv[argc]);
		room -= l < room ? l : room;
		argc++;
	}
	probe_put_u16(&w, argc);
	room = APROC_ARGS_MAX;
	for (size_t i = 0; i < argc; i++) {
		size_t l = strnlen(m->u.hello.argv[i], room);
		probe_put_u16(&w, l);
		probe_put_bytes(&w, m->u.hello.argv[i], l);
		room -= l;
	}
	if (m->u.hello.nextra) {
		probe_put_u8(&w, m->u.hello.nextra);
		for (unsigned i = 0; i < m->u.hello.nextra; i++) {
			probe_put_u32(&w, m->u.hello.extra[i].type);
			probe_put_u64(&w, m->u.hello.extra[i].config);
			probe_put_str(&w, cut(m->u.hello.extra[i].name, name, APROC_NAME_MAX));
		}
	}
	probe_frame_end(&w, at);
	if (!w.ok)
		return 0;
	b[at + 6] = (uint8_t)m->u.hello.flags;
	b[at + 7] = (uint8_t)(m->u.hello.flags >> 8);
	return w.len;
}

/* What it claimed, kept where it is not what the kernel says. */
static char *claimed(struct aprocs *t, struct aproc *p, const char *said, const char *real)
{
	char buf[PROBE_STR_MAX + 1];
	cut(said, buf, PROBE_STR_MAX);
	return strcmp(buf, real) != 0 ? claim_dup(t, p, buf) : NULL;
}

static void note_hello(struct aprocs *t, struct aproc *p, const struct probe_msg *m)
{
	static uint8_t b[64 + 3 * PROBE_STR_MAX + APROC_ARGS_MAX + 4 * PROBE_MAX_ARGS +
			 PROBE_EVENTS_MAX * (APROC_NAME_MAX + 16)];
	char comm[64], exe[PROBE_STR_MAX + 1];
	forget(t, p);
	p->alloc_beside = 0;
	for (unsigned i = 0; i < m->u.hello.nextra && i < PROBE_EVENTS_MAX - 1; i++)
		if (m->u.hello.extra[i].name && !strcmp(m->u.hello.extra[i].name, "alloc"))
			p->alloc_beside = 1;
	p->has_alloc = p->alloc_beside ||
		       (m->u.hello.event_name && !strcmp(m->u.hello.event_name, "alloc"));
	kernel_names(p->pid, comm, exe);
	size_t len = hello_encode(m, comm, exe, b, sizeof(b));
	if (len)
		keep_as(t, p, &p->hello, b, len, 1);
	free(p->comm);
	free(p->exe);
	p->comm = printable_dup(comm);
	p->exe = printable_dup(exe);
	p->claimed_comm = claimed(t, p, m->u.hello.comm, comm);
	p->claimed_exe = claimed(t, p, m->u.hello.exe, exe);
	const char *n = p->exe[0] ? path_basename(p->exe) : p->comm;
	free(p->name);
	p->name = n[0] ? xstrdup(n) : xasprintf("[pid %u]", p->pid);
}

/* ---- MAP, THREAD, JIT --------------------------------------------------- */

/* A new entry at the end of a kept vector, or NULL when it holds max or p its bound. */
static struct kept *append(struct aprocs *t, struct aproc *p, struct kept **v, size_t *n,
			   size_t *cap, size_t max, const uint8_t *f, size_t len)
{
	struct kept k = { 0 };
	if (*n == max) {
		aprocs_user(t, p->uid)->frames_dropped++;
		t->frames_dropped++;
		return NULL;
	}
	if (!keep(t, p, &k, f, len))
		return NULL;
	*v = xgrow(*v, cap, *n + 1, sizeof(**v));
	(*v)[*n] = k;
	return &(*v)[(*n)++];
}

/* The address space now: the mappings this one overlaps are gone. */
static void note_map(struct aprocs *t, struct aproc *p, const struct probe_msg *m,
		     const uint8_t *f, size_t len)
{
	uint64_t s = m->u.map.start, e = m->u.map.end;
	size_t j = 0;
	for (size_t i = 0; i < p->nmaps; i++) {
		if (p->maps[i].start < e && s < p->maps[i].end)
			kept_free(t, p, &p->maps[i]);
		else
			p->maps[j++] = p->maps[i];
	}
	p->nmaps = j;
	struct kept *k = append(t, p, &p->maps, &p->nmaps, &p->mcap, APROC_MAPS, f, len);
	if (k) {
		k->start = s;
		k->end = e;
	}
}

/* A THREAD frame of tid named name, cut to APROC_NAME_MAX, into b. */
static size_t thread_encode(uint32_t pid, uint32_t tid, const char *name, uint8_t *b,
			    size_t cap)
{
	char buf[APROC_NAME_MAX + 1];
	struct probe_wbuf w;
	probe_wbuf_init(&w, b, cap);
	size_t at = probe_frame_begin(&w, PROBE_F_THREAD, pid);
	probe_put_u32(&w, tid);
	probe_put_str(&w, cut(name, buf, APROC_NAME_MAX));
	probe_frame_end(&w, at);
	return w.ok ? w.len : 0;
}

static void note_thread(struct aprocs *t, struct aproc *p, const struct probe_msg *m)
{
	uint8_t b[PROBE_FRAME_HDR + 8 + APROC_NAME_MAX];
	size_t len = thread_encode(p->pid, m->u.thread.tid, m->u.thread.name, b, sizeof(b));
	if (!len)
		return;
	for (size_t i = 0; i < p->nthr; i++)
		if (p->thr[i].tid == m->u.thread.tid) {
			keep(t, p, &p->thr[i], b, len);
			return;
		}
	struct kept *k = append(t, p, &p->thr, &p->nthr, &p->tcap, APROC_THREADS, b, len);
	if (k)
		k->tid = m->u.thread.tid;
}

/* Code named again at the same start was replaced: the newer name, last. */
static void note_jit(struct aprocs *t, struct aproc *p, const struct probe_msg *m,
		     const uint8_t *f, size_t len)
{
	uint64_t start = m->u.jit.start;
	struct kjit *j;
	HASH_FIND(hh, p->jits, &start, sizeof(start), j);
	if (j) {
		struct kept k = { 0 };
		if (!keep(t, p, &k, f, len))
			return;
		kept_free(t, p, &j->k);
		j->k = k;
		HASH_DEL(p->jits, j);   /* to the end: the newest last */
		HASH_ADD(hh, p->jits, start, sizeof(j->start), j);
		return;
	}
	if (p->njits >= APROC_JITS || !charge(t, p, sizeof(*j) + CHUNK)) {
		if (p->njits >= APROC_JITS) {
			aprocs_user(t, p->uid)->frames_dropped++;
			t->frames_dropped++;
		}
		return;
	}
	j = xcalloc(1, sizeof(*j));
	j->start = start;
	if (!keep(t, p, &j->k, f, len)) {
		refund(t, p, sizeof(*j) + CHUNK);
		free(j);
		return;
	}
	HASH_ADD(hh, p->jits, start, sizeof(j->start), j);
	p->njits++;
}

struct aproc *aproc_note(struct aprocs *t, const struct probe_msg *m,
			 const uint8_t *f, size_t len)
{
	struct aproc *p = aproc_get(t, m->pid);
	switch (m->type) {
	case PROBE_F_HELLO:
		note_hello(t, p, m);
		break;
	case PROBE_F_MAP:
		note_map(t, p, m, f, len);
		break;
	case PROBE_F_THREAD:
		note_thread(t, p, m);
		break;
	case PROBE_F_JIT:
		note_jit(t, p, m, f, len);
		break;
	case PROBE_F_SAMPLES:
		p->samples += m->u.samples.count;
		break;
	case PROBE_F_EXIT:
		p->have_exit = 1;
		p->status = m->u.exit.status;
		break;
	default:
		break;
	}
	return p;
}

void aproc_connected(struct aprocs *t, struct aproc *p)
{
	if (p->gone) {          /* a pid used again before it was forgotten */
		p->gone = 0;
		t->nlive++;
	}
	p->connected++;
}

void aproc_gone(struct aprocs *t, struct aproc *p)
{
	if (p->gone)
		return;
	p->gone = 1;
	t->nlive--;
	struct arecent *r = &t->recent[t->nrecent++ % APROC_RECENT];
	r->pid = p->pid;
	snprintf(r->name, sizeof(r->name), "%s", p->name);
	r->samples = p->samples;
	r->have_exit = p->have_exit;
	r->status = p->status;
	forget(t, p);
	/* Its vectors too: nothing is kept of it any more. */
	aprocs_freed(t, (p->mcap + p->tcap) * sizeof(struct kept));
	free(p->maps);
	free(p->thr);
	p->maps = p->thr = NULL;
	p->mcap = p->tcap = 0;
}

void aproc_reap(struct aprocs *t)
{
	struct aproc *p, *tmp;
	HASH_ITER(hh, t->byid, p, tmp) {
		if (!p->gone || p->win || p->win_alloc)
			continue;
		HASH_DEL(t->byid, p);
		proc_free(t, p);
	}
}

/* Decode k again; pid and tid as they were rewritten when it came. */
static void replay_one(struct aprocs *t, const struct aproc *p, const struct kept *k,
		       aproc_fn fn, void *ctx)
{
	struct probe_msg m;
	char err[PROBE_ERR_MAX];
	if (!k->f || probe_decode_frame(k->f, k->len, &m, &t->sc, err) < 0)
		return;
	m.pid = p->pid;
	if (m.type == PROBE_F_THREAD)
		m.u.thread.tid = k->tid;
	fn(ctx, &m);
}

void aproc_replay(struct aprocs *t, const struct aproc *p, aproc_fn fn, void *ctx)
{
	replay_one(t, p, &p->hello, fn, ctx);
	for (size_t i = 0; i < p->nmaps; i++)
		replay_one(t, p, &p->maps[i], fn, ctx);
	for (size_t i = 0; i < p->nthr; i++)
		replay_one(t, p, &p->thr[i], fn, ctx);
	for (const struct kjit *j = p->jits; j; j = j->hh.next)
		replay_one(t, p, &j->k, fn, ctx);
}

/* ---- the index page ------------------------------------------------------ */

static double mib(size_t n)
{
	return (double)n / (1 << 20);
}

void aprocs_bounds_html(const struct aprocs *t, FILE *f)
{
	fprintf(f, "<h2>Bounds</h2>\n<p>Kept of the processes: %.1f of %u MiB (%u MiB a "
		"user, %u MiB a process). Profiles being taken: %.1f of %u MiB (%u MiB a "
		"user, %u MiB a profile). Dropped at these bounds: %" PRIu64 " samples, %"
		PRIu64 " frames.</p>\n", mib(t->kept), APROC_ALL_BYTES >> 20,
		APROC_UID_BYTES >> 20, APROC_PROC_BYTES >> 20, mib(t->profiles),
		SINK_ALL_BYTES >> 20, SINK_UID_BYTES >> 20, SINK_BYTES >> 20, t->dropped,
		t->frames_dropped);
	fputs("<table>\n<tr><th>uid</th><th>kept MiB</th><th>profiles MiB</th>"
	      "<th>samples dropped</th><th>frames dropped</th></tr>\n", f);
	for (const struct auser *u = t->users; u; u = u->hh.next)
		fprintf(f, "<tr><td>%" PRIu32 "</td><td>%.1f</td><td>%.1f</td><td>%" PRIu64
			"</td><td>%" PRIu64 "</td></tr>\n", u->uid, mib(u->kept),
			mib(u->profiles), u->dropped, u->frames_dropped);
	fputs("</table>\n", f);
}
