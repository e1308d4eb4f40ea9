/*
 * arena.c - this process's half of the arena (include/probe/arena.h): the
 * shared memory its threads write their samples into and the collector
 * drains.  No thread of ours moves a sample: the handler writes it into its
 * thread's ring and is done.
 *
 * The arena is a memfd sealed against shrinking and growing (the collector
 * maps it and must not be made to fault), mapped MAP_SHARED.  Its size is
 * reserved, not used: a thread's slot header and the first PROBE_RING_MIN
 * bytes of its ring become memory when the thread takes the slot (touched
 * then, in normal context); a ring that fills past half grows, up to
 * the arena's slot_data (probe record -m), and the handler touches the new
 * pages (a minor fault in the handler: the profiler's own, which the
 * page-faults event shows as [probe], handler.c).  The descriptor is
 * kept, moved high and guarded (fds.c), to send it again on a new
 * connection.
 *
 * Why rings grow and wake: a thread taking samples fast (page-faults -c 1:
 * 90,000 a second here) filled its 32 KiB between two of the collector's
 * 10 ms reads and lost up to half of them.  Now the handler, when its ring
 * passes half full, sends one byte (MSG_DONTWAIT) on a datagram socket
 * whose other end the collector polls (the wake socket, sent with the
 * HELLO), once until the ring is below half again; and the ring grows, so
 * that the collector's lateness, not its poll period, is what it must
 * cover.  A thread that never hurries keeps 32 KiB.
 *
 * A fork child inherits the parent's mapping, which is shared: it must not
 * write there.  probe_arena_drop() unmaps it; the child makes an arena of
 * its own, at once or at its first need (lazy.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "probe.h"

struct probe_arena *probe_arena;
int probe_arena_fd = -1;
static struct probe_fd_id arena_id;
static uint64_t arena_size;             /* this arena's (mapped) size */

/*
 * The wake socket (a SOCK_DGRAM pair): wake_fd[0] is what the handler sends
 * on, wake_fd[1] goes to the collector with the HELLO.  Both stay ours (the
 * collector's end too: sent again on a new connection; and a send never
 * meets a closed peer, no SIGPIPE).  Checked by identity before a send: a
 * program that dup2()ed onto the number gets no byte of ours.
 */
static int wake_fd[2] = { -1, -1 };
static struct probe_fd_id wake_id[2];

/* Producer-only state of each slot (one thread writes each). */
static struct {
	uint8_t woken;                  /* woke the collector for this fill */
	uint8_t grow;                   /* filled past half: grow when it can */
} slot_prod[PROBE_ARENA_SLOTS];

/*
 * The arena's descriptor, when it is still ours (the program may have
 * closed it, or put another file on its number, by means fds.c cannot
 * see); else -1: the collector keeps the mapping it had (ingest.h).
 */
int probe_arena_fd_ok(void)
{
	return probe_fd_id_same(probe_arena_fd, &arena_id) ? probe_arena_fd : -1;
}

int probe_arena_wake_fd_ok(void)
{
	return probe_fd_id_same(wake_fd[1], &wake_id[1]) ? wake_fd[1] : -1;
}

/* The largest ring: PROBE_RING_PAGES (probe record -m) pages, else the default. */
static uint32_t slot_data_wanted(void)
{
	uint64_t want = (uint64_t)probe_cfg.ring_pages * (uint64_t)sysconf(_SC_PAGESIZE);

	if (!probe_cfg.ring_pages)
		return PROBE_SLOT_DATA;
	if (want < PROBE_RING_MIN)
		return PROBE_RING_MIN;
	return want > PROBE_RING_LIMIT ? PROBE_RING_LIMIT : (uint32_t)want;
}

/* The wake socket pair, high and ours; without it, the 10 ms poll alone. */
static void wake_create(void)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0)
		return;
	for (int i = 0; i < 2; i++) {
		wake_fd[i] = probe_fd_high(sv[i]);
		probe_fd_own(wake_fd[i]);
		probe_fd_id_take(wake_fd[i], &wake_id[i]);
	}
}

static void wake_drop(void)
{
	for (int i = 0; i < 2; i++) {
		if (wake_fd[i] < 0)
			continue;
		/* Not ours to close if the program put something on its number. */
		if (probe_fd_id_same(wake_fd[i], &wake_id[i]))
			probe_sys_close(wake_fd[i]);
		probe_fd_disown(wake_fd[i]);
		wake_fd[i] = -1;
	}
}

/*
 * The memfd's size.  A file size limit (ulimit -f) below it would make
 * ftruncate raise SIGXFSZ, whose default action kills the program: the soft
 * limit is lifted to the hard one for the call (constructor or fork child:
 * the program's own threads are not running here), or we give up first.
 */
static int size_arena(int fd, uint64_t size)
{
	struct rlimit rl, up;
	int raised = 0, r;

	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < size) {
		up.rlim_cur = up.rlim_max = rl.rlim_max;
		if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < size) {
			errno = EFBIG;
			return -1;
		}
		if (setrlimit(RLIMIT_FSIZE, &up) < 0)
			return -1;
		raised = 1;
	}
	r = ftruncate(fd, (off_t)size);
	if (raised) {
		int e = errno;

		setrlimit(RLIMIT_FSIZE, &rl);
		errno = e;
	}
	return r;
}

int probe_arena_create(void)
{
	struct probe_arena *a;
	uint32_t slot_data = slot_data_wanted();
	uint64_t size = PROBE_ARENA_SIZE_FOR(slot_data);
	int fd;

	/* Said with probe_say: this may run in our handler (lazy.c). */
	fd = memfd_create("probe-arena", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		probe_say("cannot create the memory shared with the collector "
			  "(memfd_create: ", probe_strerror(errno), "); not profiling", NULL);
		return -1;
	}
	if (size_arena(fd, size) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		int e = errno;

		probe_say("cannot size the memory shared with the collector (",
			  probe_strerror(e), e == EFBIG ? ": the hard file size limit, "
			  "ulimit -Hf, is below it" : "", "); not profiling", NULL);
		probe_sys_close(fd);
		return -1;
	}
	a = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
		 fd, 0);
	if (a == MAP_FAILED) {
		probe_say("cannot map the memory shared with the collector (",
			  probe_strerror(errno), "); not profiling", NULL);
		probe_sys_close(fd);
		return -1;
	}
	a->magic = PROBE_ARENA_MAGIC;
	a->version = PROBE_WIRE_VERSION;
	a->nslots = PROBE_ARENA_SLOTS;
	a->slot_data = slot_data;
	a->size = size;
	arena_size = size;
	probe_arena = a;
	wake_create();
	fd = probe_fd_high(fd);
	probe_fd_own(fd);
	probe_arena_fd = fd;
	probe_fd_id_take(fd, &arena_id);
	return 0;
}

/* snprintf's "%s" without stdio: probe_slot_take may run in our handler (lazy.c). */
static void name_copy(char *to, size_t cap, const char *from)
{
	size_t n = strnlen(from, cap - 1);

	memcpy(to, from, n);
	to[n] = 0;
}

/*
 * A free slot for thread tid, touched (header and ring), LIVE; -1 when none
 * is left (the collector frees ended threads' slots as it drains them).
 */
int probe_slot_take(pid_t tid, const char *name)
{
	struct probe_arena *a = probe_arena;

	if (!a)
		return -1;
	for (unsigned i = 0; i < PROBE_ARENA_SLOTS; i++) {
		struct probe_slot *s = &a->slots[i];
		uint32_t want = PROBE_SLOT_FREE;
		uint32_t used;

		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != PROBE_SLOT_FREE)
			continue;
		/* Another thread of ours may be taking slots too. */
		if (!__atomic_compare_exchange_n(&s->state, &want, PROBE_SLOT_TAKING,
						 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		/*
		 * Touch the page its first records go to; the others of its
		 * first size fault in the handler as the thread fills them
		 * (its own faults, handler.c): touching all 8 here cost 25 us
		 * of every process's start, and most short ones never sample.
		 * The head goes on from where the last owner left it (the
		 * collector's tail is there): ring stays as it was until it is
		 * empty, which it is once the collector freed it.
		 */
		uint8_t *ring = probe_arena_ring(a, i, a->slot_data);
		if (!probe_ring_size_ok(s->ring, a->slot_data))
			s->ring = PROBE_RING_MIN;
		uint64_t first = s->head & (s->ring - 1) & ~4095ull;
		__atomic_store_n(&ring[first], ring[first], __ATOMIC_RELAXED);
		slot_prod[i].woken = slot_prod[i].grow = 0;
		s->tid = (uint32_t)tid;
		s->gen++;
		name_copy(s->name, sizeof s->name, name);
		used = __atomic_load_n(&a->slots_used, __ATOMIC_RELAXED);
		while (used < i + 1 &&
		       !__atomic_compare_exchange_n(&a->slots_used, &used, i + 1, 0,
						    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			;
		__atomic_store_n(&s->state, PROBE_SLOT_LIVE, __ATOMIC_RELEASE);
		return (int)i;
	}
	return -1;
}

/* The owner ended: its last name, then DONE (the collector frees it). */
void probe_slot_done(int slot, const char *name)
{
	struct probe_slot *s;

	if (!probe_arena || slot < 0)
		return;
	s = &probe_arena->slots[slot];
	snprintf(s->name, sizeof s->name, "%s", name);
	__atomic_store_n(&s->state, PROBE_SLOT_DONE, __ATOMIC_RELEASE);
}

/* ---- SIGNAL CONTEXT ------------------------------------------------------ */

/* One byte to the collector: read the arena now.  Never blocks. */
static void wake_collector(void)
{
	int e = errno;

	if (probe_fd_id_same(wake_fd[0], &wake_id[0]))
		(void)send(wake_fd[0], "w", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	errno = e;
}

/*
 * Around a record: past half full, wake the collector once for this fill
 * and ask for a larger ring; make it as large as it can become while every
 * byte in it stays where it is (probe_ring_can_grow), the new pages
 * touched here.
 */
static uint32_t watermark(struct probe_slot *s, unsigned slot, uint32_t ring,
			  uint64_t tail, uint64_t head)
{
	uint32_t max = probe_arena->slot_data;

	if (head - tail > ring / 2) {
		if (!slot_prod[slot].woken) {
			slot_prod[slot].woken = 1;
			wake_collector();
		}
		if (ring < max)
			slot_prod[slot].grow = 1;
	} else {
		slot_prod[slot].woken = 0;
	}
	if (!slot_prod[slot].grow || ring >= max)
		return ring;
	/* The largest it can become now: a collector behind gets all of it. */
	for (uint32_t to = max; to > ring; to /= 2) {
		if (!probe_ring_can_grow(ring, to, tail, head))
			continue;
		uint8_t *r = probe_arena_ring(probe_arena, slot, max);

		for (uint32_t off = ring; off < to; off += 4096)
			__atomic_store_n(&r[off], r[off], __ATOMIC_RELAXED);
		slot_prod[slot].grow = 0;
		__atomic_store_n(&s->ring, to, __ATOMIC_RELAXED);
		return to;
	}
	return ring;
}

int probe_slot_push(int slot, uint64_t time, uint64_t weight, unsigned ev,
		    const uint64_t *frames, uint32_t n)
{
	struct probe_arena *a = probe_arena;
	uint8_t rec[PROBE_REC_MAX];
	uint64_t prev = 0, head, tail;
	uint32_t ring;
	struct probe_wbuf w;
	struct probe_slot *s;
	size_t len;

	if (!a || slot < 0 || n == 0)
		return -1;
	/* Deeper than the wire carries: cut, its outermost frame the mark. */
	int cut = n > PROBE_MAX_FRAMES;
	if (cut)
		n = PROBE_MAX_FRAMES;
	s = &a->slots[slot];
	/* The wire's encoding (PROBE_REC_MAX is room for the worst case). */
	probe_wbuf_init(&w, rec, sizeof rec);
	probe_put_u16(&w, 0);
	probe_put_uv(&w, time);
	probe_put_uv(&w, weight);
	probe_put_uv(&w, ev);
	probe_put_uv(&w, n);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t f = cut && i == n - 1 ? PROBE_FRAME_TRUNCATED : frames[i];

		probe_put_sv(&w, (int64_t)(f - prev));
		prev = f;
	}
	len = w.len;
	rec[0] = (uint8_t)len;
	rec[1] = (uint8_t)(len >> 8);
	head = s->head;                 /* ours alone, and so is ring */
	tail = __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE);
	ring = s->ring;
	/* Grown (or woken) before it is written: the room is there first. */
	ring = watermark(s, (unsigned)slot, ring, tail, head);
	if (head - tail > ring || ring - (head - tail) < len)
		return -1;
	probe_ring_put(probe_arena_ring(a, (unsigned)slot, a->slot_data), ring,
		       head, rec, len);
	/* ring (if it grew) before the head that covers bytes written with it. */
	__atomic_store_n(&s->head, head + len, __ATOMIC_RELEASE);
	watermark(s, (unsigned)slot, ring, tail, head + len);
	return 0;
}

/*
 * At the end, for the messages: samples still in the rings (the collector
 * has not taken them), and samples a full ring turned away that the
 * collector has not counted yet.  Our own memory: async-signal-safe.
 */
uint64_t probe_arena_untaken(void)
{
	struct probe_arena *a = probe_arena;
	uint64_t n = 0;

	for (uint32_t i = 0; a && i < a->slots_used && i < PROBE_ARENA_SLOTS; i++) {
		struct probe_slot *s = &a->slots[i];
		uint64_t head = __atomic_load_n(&s->head, __ATOMIC_ACQUIRE);
		uint64_t tail = __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE);
		uint32_t ring = s->ring;
		uint8_t b[2];

		while (probe_ring_size_ok(ring, a->slot_data) &&
		       head - tail >= 2 && head - tail <= ring) {
			probe_ring_get(probe_arena_ring(a, i, a->slot_data), ring,
				       tail, b, 2);
			size_t len = (size_t)b[0] | (size_t)b[1] << 8;
			if (len < 2 || len > head - tail)
				break;
			tail += len;
			n++;
		}
	}
	return n + probe_arena_overflowed();
}

uint64_t probe_arena_overflowed(void)
{
	struct probe_arena *a = probe_arena;
	uint64_t n = 0;

	for (uint32_t i = 0; a && i < a->slots_used && i < PROBE_ARENA_SLOTS; i++) {
		struct probe_slot *s = &a->slots[i];

		n += __atomic_load_n(&s->lost[PROBE_LOST_QUEUE], __ATOMIC_RELAXED) -
		     __atomic_load_n(&s->lost_taken[PROBE_LOST_QUEUE], __ATOMIC_RELAXED);
	}
	return n;
}

/* ---- fork ----------------------------------------------------------------- */

/*
 * The arena unmapped and forgotten: a fork child's copy of its parent's
 * (never written), or one whose connection failed (lazy.c).  Async-signal-
 * safe.
 */
void probe_arena_drop(void)
{
	if (probe_arena)
		munmap(probe_arena, arena_size);
	probe_arena = NULL;
	wake_drop();
	if (probe_arena_fd >= 0) {
		/* Not ours to close if the program put something on its number. */
		if (probe_arena_fd_ok() >= 0)
			probe_sys_close(probe_arena_fd);
		probe_fd_disown(probe_arena_fd);
		probe_arena_fd = -1;
	}
}
