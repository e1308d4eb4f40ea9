/*
 * arena.c - this process's half of the arena (include/probe/arena.h): the
 * shared memory its threads write their samples into and the collector
 * drains.  No thread of ours moves a sample: the handler writes it into its
 * thread's ring and is done.
 *
 * The arena is a memfd sealed against shrinking and growing (the collector
 * maps it and must not be made to fault), mapped MAP_SHARED.  Its size is
 * reserved, not used: a thread's slot header and ring become memory when
 * the thread takes the slot (they are touched then, in normal context, so
 * the handler does not fault on a fresh page).  The descriptor is kept,
 * moved high and guarded (fds.c), to send it again on a new connection.
 *
 * A fork child inherits the parent's mapping, which is shared: it must not
 * write there.  probe_arena_after_fork_child() unmaps it and makes the
 * child an arena of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "probe.h"

struct probe_arena *probe_arena;
int probe_arena_fd = -1;
static struct probe_fd_id arena_id;

/*
 * The arena's descriptor, when it is still ours (the program may have
 * closed it, or put another file on its number, by means fds.c cannot
 * see); else -1: the collector keeps the mapping it had (ingest.h).
 */
int probe_arena_fd_ok(void)
{
	return probe_fd_id_same(probe_arena_fd, &arena_id) ? probe_arena_fd : -1;
}

/*
 * The memfd's size.  A file size limit (ulimit -f) below it would make
 * ftruncate raise SIGXFSZ, whose default action kills the program: the soft
 * limit is lifted to the hard one for the call (constructor or fork child:
 * the program's own threads are not running here), or we give up first.
 */
static int size_arena(int fd)
{
	struct rlimit rl, up;
	int raised = 0, r;

	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < PROBE_ARENA_SIZE) {
		up.rlim_cur = up.rlim_max = rl.rlim_max;
		if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < PROBE_ARENA_SIZE) {
			errno = EFBIG;
			return -1;
		}
		if (setrlimit(RLIMIT_FSIZE, &up) < 0)
			return -1;
		raised = 1;
	}
	r = ftruncate(fd, (off_t)PROBE_ARENA_SIZE);
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
	int fd;

	fd = memfd_create("probe-arena", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		probe_msg("cannot create the memory shared with the collector "
			  "(memfd_create: %s); not profiling", strerror(errno));
		return -1;
	}
	if (size_arena(fd) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		probe_msg("cannot size the memory shared with the collector (%s%s); "
			  "not profiling", strerror(errno), errno == EFBIG ?
			  ": the hard file size limit, ulimit -Hf, is below it" : "");
		probe_sys_close(fd);
		return -1;
	}
	a = mmap(NULL, PROBE_ARENA_SIZE, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_NORESERVE, fd, 0);
	if (a == MAP_FAILED) {
		probe_msg("cannot map the memory shared with the collector (%s); "
			  "not profiling", strerror(errno));
		probe_sys_close(fd);
		return -1;
	}
	a->magic = PROBE_ARENA_MAGIC;
	a->version = PROBE_WIRE_VERSION;
	a->nslots = PROBE_ARENA_SLOTS;
	a->slot_data = PROBE_SLOT_DATA;
	a->size = PROBE_ARENA_SIZE;
	probe_arena = a;
	fd = probe_fd_high(fd);
	probe_fd_own(fd);
	probe_arena_fd = fd;
	probe_fd_id_take(fd, &arena_id);
	return 0;
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
		/* Touch the ring: the handler must not fault on a new page. */
		uint8_t *ring = probe_arena_ring(a, i);
		for (unsigned off = 0; off < PROBE_SLOT_DATA; off += 4096)
			__atomic_store_n(&ring[off], ring[off], __ATOMIC_RELAXED);
		s->tid = (uint32_t)tid;
		s->gen++;
		snprintf(s->name, sizeof s->name, "%s", name);
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

int probe_slot_push(int slot, uint64_t time, uint64_t weight, unsigned ev,
		    const uint64_t *frames, uint32_t n)
{
	struct probe_arena *a = probe_arena;
	uint8_t rec[PROBE_REC_MAX];
	uint64_t prev = 0, head, tail;
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
	head = s->head;                 /* ours alone */
	tail = __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE);
	if (PROBE_SLOT_DATA - (head - tail) < len)
		return -1;
	probe_ring_put(probe_arena_ring(a, (unsigned)slot), head, rec, len);
	__atomic_store_n(&s->head, head + len, __ATOMIC_RELEASE);
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
		uint8_t b[2];

		while (head - tail >= 2 && head - tail <= PROBE_SLOT_DATA) {
			probe_ring_get(probe_arena_ring(a, i), tail, b, 2);
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
 * Fork child: the mapping and the descriptor are the parent's arena.  Drop
 * both (the parent's stay) and make a new one.  Returns -1 when that fails:
 * the child is then not profiled.
 */
int probe_arena_after_fork_child(void)
{
	if (probe_arena)
		munmap(probe_arena, PROBE_ARENA_SIZE);
	probe_arena = NULL;
	if (probe_arena_fd >= 0) {
		/* Not ours to close if the program put something on its number. */
		if (probe_arena_fd_ok() >= 0)
			probe_sys_close(probe_arena_fd);
		probe_fd_disown(probe_arena_fd);
		probe_arena_fd = -1;
	}
	return probe_arena_create();
}
