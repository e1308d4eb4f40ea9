/*
 * arena_read.c - reading a process's arena (see arena_read.h).
 *
 * Why frames: everything downstream (probe record's file and summary, probe
 * top's aggregation) already takes frames, checked by the one decoder; the
 * records of a ring become SAMPLES frames of up to BATCH bytes (their frame
 * deltas are the wire's encoding already, copied as they are once checked),
 * and the slot's counters and names become LOST and THREAD frames.
 */
#include "ingest/arena_read.h"

#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe/arena.h"
#include "probe/bytes.h"
#include "ingest/ingest.h"
#include "ingest/jit.h"
#include "util.h"

#define BATCH (256u * 1024)             /* a SAMPLES frame, about */
#define FRAME_CAP (BATCH + 2 * PROBE_REC_MAX + 64)
#define NAME_CHECK_NS 1000000000ull
#define COUNT_BYTES 3u                  /* the batch's count, patched in */

struct seen {
	uint32_t gen;                   /* the slot's occupant we announced */
	uint32_t tid;
	int live;                       /* announced, not ended */
	int bad;                        /* held something else: not read */
	char name[17];
};

struct arena_reader {
	struct probe_arena *a;
	uint64_t size;                  /* mapped, checked at attach */
	uint32_t slot_data;             /* a ring's largest, checked at attach */
	int wake_fd;                    /* the process's wake socket, or -1 */
	uint64_t woke_ns;               /* when a wake last read the arena */
	struct seen *seen;              /* PROBE_ARENA_SLOTS */
	uint8_t *buf;                   /* FRAME_CAP */
	uint64_t name_check;
	int said_bad;
	struct cfi_learner learn;
	struct jit_watch *jit;          /* its JIT code (jit.h), or NULL */
};

struct arena_reader *arena_attach(int fd, char *err, size_t errlen)
{
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "not a memory file");
		return NULL;
	}
	if (seals < 0 || !(seals & F_SEAL_SHRINK)) {
		snprintf(err, errlen, "it is not sealed against shrinking");
		return NULL;
	}
	/* Its header says how large its rings may grow: its size follows. */
	uint64_t size = (uint64_t)st.st_size;
	if (size < PROBE_ARENA_SIZE_FOR(PROBE_RING_MIN) ||
	    size > PROBE_ARENA_SIZE_FOR(PROBE_RING_LIMIT)) {
		snprintf(err, errlen, "%jd bytes, not %" PRIu64 " to %" PRIu64 ": another "
			 "version of libprobe.so?", (intmax_t)st.st_size,
			 (uint64_t)PROBE_ARENA_SIZE_FOR(PROBE_RING_MIN),
			 (uint64_t)PROBE_ARENA_SIZE_FOR(PROBE_RING_LIMIT));
		return NULL;
	}
	struct probe_arena *a = mmap(NULL, size, PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_NORESERVE, fd, 0);
	if (a == MAP_FAILED) {
		snprintf(err, errlen, "mmap: %s", strerror(errno));
		return NULL;
	}
	/* Read once: the process may change them later, we keep these. */
	uint32_t slot_data = __atomic_load_n(&a->slot_data, __ATOMIC_RELAXED);
	if (a->magic != PROBE_ARENA_MAGIC || a->version != PROBE_WIRE_VERSION ||
	    a->nslots != PROBE_ARENA_SLOTS ||
	    !probe_ring_size_ok(slot_data, PROBE_RING_LIMIT) ||
	    a->size != size || size != PROBE_ARENA_SIZE_FOR(slot_data)) {
		snprintf(err, errlen, "its header is not one this probe reads");
		munmap(a, size);
		return NULL;
	}
	struct arena_reader *ar = xcalloc(1, sizeof(*ar));
	ar->a = a;
	ar->size = size;
	ar->slot_data = slot_data;
	ar->wake_fd = -1;
	ar->seen = xcalloc(PROBE_ARENA_SLOTS, sizeof(*ar->seen));
	ar->buf = xmalloc(FRAME_CAP);
	return ar;
}

void arena_detach(struct arena_reader *ar)
{
	if (!ar)
		return;
	munmap(ar->a, ar->size);
	if (ar->wake_fd >= 0)
		close(ar->wake_fd);     /* (closing it takes it out of any epoll) */
	jit_free(ar->jit);
	free(ar->seen);
	free(ar->buf);
	free(ar);
}

/* ---- small frames ---------------------------------------------------------- */

static void send_thread(struct ingest *in, struct ingest_conn *c, uint32_t tid,
			const char *name)
{
	uint8_t b[64];
	struct probe_wbuf w;
	probe_wbuf_init(&w, b, sizeof(b));
	size_t at = probe_frame_begin(&w, PROBE_F_THREAD, (uint32_t)c->pid);
	probe_put_u32(&w, ingest_our_tid(c, tid));
	probe_put_str(&w, name);
	probe_frame_end(&w, at);
	ingest_deliver(in, c, w.p, w.len);
}

/* LOST frames for what counters grew by since we last looked. */
static void send_lost(struct ingest *in, struct ingest_conn *c, uint32_t tid,
		      uint64_t *lost, uint64_t *taken)
{
	for (unsigned r = 1; r < PROBE_LOST_REASON_MAX; r++) {
		uint64_t cur = __atomic_load_n(&lost[r], __ATOMIC_RELAXED);
		uint64_t was = __atomic_load_n(&taken[r], __ATOMIC_RELAXED);
		if (cur == was)
			continue;
		__atomic_store_n(&taken[r], cur, __ATOMIC_RELAXED);
		if (cur < was)
			continue;       /* not counters after all: start over */
		uint8_t b[64];
		struct probe_wbuf w;
		probe_wbuf_init(&w, b, sizeof(b));
		size_t at = probe_frame_begin(&w, PROBE_F_LOST, (uint32_t)c->pid);
		probe_put_u32(&w, tid ? ingest_our_tid(c, tid) : 0);
		probe_put_u32(&w, r);
		probe_put_u64(&w, cur - was);
		probe_frame_end(&w, at);
		ingest_deliver(in, c, w.p, w.len);
	}
}

/* ---- a ring's records -------------------------------------------------------- */

/* One record's fields; its deltas stay where they are.  0 if malformed. */
struct rec {
	uint64_t time, weight, event;
	uint32_t n;
	const uint8_t *deltas;
	size_t deltas_len;
};

static int parse_rec(const uint8_t *p, size_t len, struct rec *out)
{
	struct probe_rd r = { .p = p + 2, .end = p + len };
	out->time = probe_rd_uleb(&r);
	out->weight = probe_rd_uleb(&r);
	out->event = probe_rd_uleb(&r);
	uint64_t n = probe_rd_uleb(&r);
	if (r.bad || n == 0 || n > PROBE_MAX_FRAMES || out->event >= PROBE_EVENTS_MAX)
		return 0;
	out->n = (uint32_t)n;
	out->deltas = r.p;
	for (uint64_t i = 0; i < n && !r.bad; i++)
		probe_rd_uleb(&r);
	out->deltas_len = (size_t)(r.p - out->deltas);
	return !r.bad && r.p == r.end;
}

struct batch {
	struct probe_wbuf w;
	size_t at, count_at;
	uint64_t base, count;
};

static void batch_begin(struct arena_reader *ar, struct ingest_conn *c,
			struct batch *b, uint64_t base)
{
	probe_wbuf_init(&b->w, ar->buf, FRAME_CAP);
	b->at = probe_frame_begin(&b->w, PROBE_F_SAMPLES, (uint32_t)c->pid);
	probe_put_u64(&b->w, base);
	b->count_at = b->w.len;
	probe_put_bytes(&b->w, "\x80\x80\0", COUNT_BYTES);
	b->base = base;
	b->count = 0;
}

static void batch_end(struct ingest *in, struct ingest_conn *c, struct batch *b)
{
	uint64_t n = b->count;
	if (!n)
		return;
	/* A fixed-width varint: every byte but the last has the continuation bit. */
	for (unsigned i = 0; i < COUNT_BYTES; i++, n >>= 7)
		b->w.p[b->count_at + i] = (uint8_t)((n & 0x7f) |
						    (i + 1 < COUNT_BYTES ? 0x80 : 0));
	probe_frame_end(&b->w, b->at);
	if (b->w.ok)
		ingest_deliver(in, c, b->w.p, b->w.len);
	b->count = 0;
}

/* The slot held something that is not records: read it no more. */
static void slot_bad(struct ingest *in, struct ingest_conn *c,
		     struct arena_reader *ar, struct seen *sn, const char *why)
{
	sn->bad = 1;
	if (!ar->said_bad++)
		ingest_note(in, INGEST_ARENA, "process %ld, thread %" PRIu32 ": its "
			    "samples are unreadable (%s); that thread is not read "
			    "further", (long)c->pid, sn->tid, why);
}

/* The records of one ring taken before until. */
static void drain_ring(struct ingest *in, struct ingest_conn *c,
		       struct arena_reader *ar, unsigned i, uint64_t until)
{
	struct probe_slot *s = &ar->a->slots[i];
	struct seen *sn = &ar->seen[i];
	const uint8_t *ring = probe_arena_ring(ar->a, i, ar->slot_data);
	uint64_t head = __atomic_load_n(&s->head, __ATOMIC_ACQUIRE);
	/* After head: a ring grown for bytes up to head is seen (arena.h). */
	uint32_t size = __atomic_load_n(&s->ring, __ATOMIC_RELAXED);
	uint64_t tail = __atomic_load_n(&s->tail, __ATOMIC_RELAXED);
	uint32_t tid = ingest_our_tid(c, sn->tid);
	uint8_t rec[PROBE_REC_MAX];
	struct batch b = { .count = 0 };

	if (!probe_ring_size_ok(size, ar->slot_data)) {
		slot_bad(in, c, ar, sn, "its ring's size is out of bounds");
		return;
	}
	if (head - tail > size) {
		slot_bad(in, c, ar, sn, "its ring's counters are inconsistent");
		return;
	}
	while (tail != head) {
		uint8_t hdr[2];
		struct rec r;
		if (head - tail < 2) {
			slot_bad(in, c, ar, sn, "a record cut short");
			break;
		}
		probe_ring_get(ring, size, tail, hdr, 2);
		size_t len = (size_t)hdr[0] | (size_t)hdr[1] << 8;
		if (len < 5 || len > PROBE_REC_MAX || len > head - tail) {
			slot_bad(in, c, ar, sn, "a record of a size out of bounds");
			break;
		}
		probe_ring_get(ring, size, tail, rec, len);
		if (!parse_rec(rec, len, &r)) {
			slot_bad(in, c, ar, sn, "a malformed record");
			break;
		}
		if (r.time >= until)
			break;
		if (r.time < in->drop_before_ns) {     /* record -D */
			in->dropped++;
			tail += len;
			continue;
		}
		if (b.count && (r.time < b.base || b.w.len > BATCH))
			batch_end(in, c, &b);
		if (!b.count)
			batch_begin(ar, c, &b, r.time);
		probe_put_uv(&b.w, tid);
		probe_put_uv(&b.w, r.time - b.base);
		probe_put_uv(&b.w, r.weight);
		probe_put_uv(&b.w, r.event);
		probe_put_uv(&b.w, r.n);
		probe_put_bytes(&b.w, r.deltas, r.deltas_len);
		b.count++;
		tail += len;
	}
	batch_end(in, c, &b);
	__atomic_store_n(&s->tail, tail, __ATOMIC_RELEASE);
}

/* Its comm as the kernel has it now, when we can see it (our namespace). */
static void live_name(struct ingest_conn *c, uint32_t tid, char out[17])
{
	char path[64];
	out[0] = 0;
	if (c->wire_pid != (uint32_t)c->pid)
		return;
	snprintf(path, sizeof(path), "/proc/%ld/task/%" PRIu32 "/comm", (long)c->pid, tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(out, 17, f))
		out[strcspn(out, "\n")] = 0;
	else
		out[0] = 0;
	fclose(f);
}

static void announce(struct ingest *in, struct ingest_conn *c, struct seen *sn,
		     const char *name)
{
	if (sn->live && strcmp(name, sn->name) == 0)
		return;
	snprintf(sn->name, sizeof(sn->name), "%s", name);
	send_thread(in, c, sn->tid, sn->name);
}

static void read_slot(struct ingest *in, struct ingest_conn *c,
		      struct arena_reader *ar, unsigned i, uint64_t until,
		      int check_name)
{
	struct probe_slot *s = &ar->a->slots[i];
	struct seen *sn = &ar->seen[i];
	uint32_t state = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
	char name[17];

	if (state != PROBE_SLOT_LIVE && state != PROBE_SLOT_DONE)
		return;
	uint32_t gen = __atomic_load_n(&s->gen, __ATOMIC_RELAXED);
	if (!sn->live || sn->gen != gen) {
		sn->gen = gen;
		sn->tid = __atomic_load_n(&s->tid, __ATOMIC_RELAXED);
		sn->bad = 0;
		sn->live = 0;
		memcpy(name, s->name, 16);
		name[16] = 0;
		announce(in, c, sn, name);
		sn->live = 1;
	} else if (check_name && state == PROBE_SLOT_LIVE) {
		live_name(c, sn->tid, name);
		if (name[0])
			announce(in, c, sn, name);
	}
	if (!sn->bad)
		drain_ring(in, c, ar, i, until);
	send_lost(in, c, sn->tid, s->lost, s->lost_taken);
	if (state == PROBE_SLOT_DONE && (sn->bad || until == UINT64_MAX)) {
		uint64_t head = __atomic_load_n(&s->head, __ATOMIC_ACQUIRE);
		if (!sn->bad && head != __atomic_load_n(&s->tail, __ATOMIC_RELAXED))
			return;
		memcpy(name, s->name, 16);
		name[16] = 0;
		announce(in, c, sn, name);
		sn->live = 0;
		if (sn->bad)    /* the rest of it is unreadable: skip it */
			__atomic_store_n(&s->tail, head, __ATOMIC_RELEASE);
		uint32_t done = PROBE_SLOT_DONE;
		__atomic_compare_exchange_n(&s->state, &done, PROBE_SLOT_FREE, 0,
					    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
	}
}

void arena_set_wake(struct arena_reader *ar, int fd)
{
	if (ar->wake_fd >= 0)
		close(ar->wake_fd);
	ar->wake_fd = fd;
}

int arena_wake_fd(const struct arena_reader *ar)
{
	return ar ? ar->wake_fd : -1;
}

/*
 * Bounded: a process sending without end must not keep us here, and its
 * wakes read the arena at most once a millisecond (the poll reads it
 * anyway).  A recv that returns 0 (a zero-length datagram, or a socket
 * shut down for reading, which stays ready for ever) or fails otherwise
 * than EAGAIN is no wake of libprobe's: the socket is given up (-1).
 */
int arena_woken(struct arena_reader *ar)
{
	char b[64];
	int n = 0;
	ssize_t r = -1;

	if (!ar || ar->wake_fd < 0)
		return 0;
	while (n < 64 && (r = recv(ar->wake_fd, b, sizeof b, MSG_DONTWAIT)) > 0)
		n++;
	if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
		return -1;
	if (!n) {
		/* Empty, yet ready (shut down for reading: recv says EAGAIN, poll
		 * says readable), or hung up: it would wake us for ever. */
		struct pollfd p = { .fd = ar->wake_fd, .events = POLLIN | POLLRDHUP };
		if (poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR |
							 POLLNVAL)))
			return -1;
		return 0;
	}
	uint64_t now = now_ns();
	if (now - ar->woke_ns < 1000000)
		return 0;
	ar->woke_ns = now;
	return 1;
}

void arena_seed_rules(struct ingest_conn *c)
{
	if (c->ar && c->maps.n)
		cfi_seed(c->ar->a, &c->ar->learn, &c->maps.v[c->maps.n - 1]);
}

unsigned arena_read(struct ingest *in, struct ingest_conn *c, uint64_t until_ns, int final)
{
	struct arena_reader *ar = c->ar;
	unsigned asked = 0;
	struct cfi_unmapped um;
	if (!ar)
		return 0;
	um.n = 0;
	struct probe_arena *a = ar->a;
	uint32_t used = __atomic_load_n(&a->slots_used, __ATOMIC_ACQUIRE);
	uint64_t now = now_ns();
	int check_name = !final && now - ar->name_check >= NAME_CHECK_NS;

	if (used > PROBE_ARENA_SLOTS)
		used = PROBE_ARENA_SLOTS;
	/* Rules first: the sooner they are there, the fewer stacks libunwind walks. */
	if (!final)
		asked = cfi_learn(a, &ar->learn, &c->maps, c->pid, &um);
	/* JIT names before the samples: the runtime wrote them before running the code. */
	jit_poll(in, c, a, &ar->learn, &ar->jit, &um, final);
	if (check_name)
		ar->name_check = now;
	for (unsigned i = 0; i < used && !c->dead; i++)
		read_slot(in, c, ar, i, until_ns, check_name);
	if (!c->dead)
		send_lost(in, c, 0, a->lost, a->lost_taken);
	return asked;
}
