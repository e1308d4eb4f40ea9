/*
 * event.c - one perf event per thread, and the reader of its mmap ring.
 *
 * The event is opened for one tid (cpu = -1: wherever it runs), counts
 * kernel time too where the user may (probe_cfg.kernel), else user space
 * only (exclude_kernel, which perf_event_paranoid 2 allows an ordinary
 * user), and wakes up on every sample.  The wakeup is turned
 * into our realtime signal (F_SETSIG) directed at that very thread
 * (F_SETOWN_EX + F_OWNER_TID; plain F_SETOWN would let any thread take it),
 * so the handler runs on the stack it must unwind.
 *
 * The ring is 1 metadata page + 1 data page: the handler drains it on every
 * overflow, so one page is plenty, and small rings keep many threads under
 * perf_event_mlock_kb.  The event is left enabled (no IOC_REFRESH, reported
 * to hang some kernels).
 *
 * Ring protocol (the kernel is the producer): load data_head, acquire fence,
 * read records (which may wrap around the end of the data area; every copy
 * is bounded by the record's own size and the caller's buffer), release
 * fence, store data_tail.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "probe.h"

#define RING_DATA_PAGES 1

int probe_event_open(struct probe_thread *t, pid_t tid, const char **step)
{
	struct perf_event_attr attr;
	struct f_owner_ex owner = { .type = F_OWNER_TID, .pid = tid };
	long page = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)page * (1 + RING_DATA_PAGES);
	void *ring;
	int fd, err;

	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = probe_cfg.type;
	attr.config = probe_cfg.config;
	attr.freq = probe_cfg.freq ? 1 : 0;
	if (probe_cfg.freq)
		attr.sample_freq = probe_cfg.value;
	else
		attr.sample_period = probe_cfg.value;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			   PERF_SAMPLE_PERIOD;
	attr.disabled = 1;
	attr.exclude_kernel = !probe_cfg.kernel;
	attr.exclude_hv = 1;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.wakeup_events = 1;

	*step = "perf_event_open";
	fd = (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && (errno == EACCES || errno == EPERM) && !attr.exclude_kernel) {
		/* Kernel samples not allowed after all: user space, as perf :u. */
		probe_cfg.kernel = 0;
		attr.exclude_kernel = 1;
		fd = (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1,
				  PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0)
		return -errno;

	*step = "mmap";
	ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		err = errno;
		close(fd);
		return -err;
	}

	/* Owner and signal first, O_ASYNC last: no signal before both are set. */
	*step = "fcntl";
	if (fcntl(fd, F_SETOWN_EX, &owner) < 0 ||
	    fcntl(fd, F_SETSIG, probe_cfg.signo) < 0 ||
	    fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) < 0) {
		err = errno;
		munmap(ring, len);
		close(fd);
		return -err;
	}
	t->event_id = 0;
	ioctl(fd, PERF_EVENT_IOC_ID, &t->event_id);
	t->ring = ring;
	t->ring_len = len;
	__atomic_store_n(&t->fd, fd, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Is fd still our event?  A program that closes "all" fds, or dup2()s over
 * one, would otherwise have us close a descriptor that is now its own.
 */
static int still_ours(const struct probe_thread *t)
{
	uint64_t id = 0;

	return ioctl(t->fd, PERF_EVENT_IOC_ID, &id) == 0 && id == t->event_id;
}

int probe_event_enable(struct probe_thread *t)
{
	if (t->fd < 0 || !still_ours(t))
		return -1;
	return ioctl(t->fd, PERF_EVENT_IOC_ENABLE, 0);
}

void probe_event_disable(struct probe_thread *t)
{
	if (t->fd >= 0 && still_ours(t))
		ioctl(t->fd, PERF_EVENT_IOC_DISABLE, 0);
}

void probe_event_close(struct probe_thread *t)
{
	int fd = t->fd;

	if (fd < 0)
		return;
	int ours = still_ours(t);
	if (ours)
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	__atomic_store_n(&t->fd, -1, __ATOMIC_RELEASE);
	if (t->ring)
		munmap(t->ring, t->ring_len);
	t->ring = NULL;
	if (ours)
		close(fd);
}

/*
 * Fork child: the fd and the MAP_SHARED ring still belong to the parent's
 * event.  Closing our copy of the fd is harmless to the parent (the event
 * lives until its last reference goes); disabling it would not be.
 */
void probe_event_forget(struct probe_thread *t)
{
	if (t->ring)
		munmap(t->ring, t->ring_len);
	t->ring = NULL;
	if (t->fd >= 0 && still_ours(t))
		close(t->fd);
	t->fd = -1;
}

/* ---- ring reader: SIGNAL CONTEXT safe ---------------------------------- */

int probe_ring_begin(struct probe_thread *t, struct probe_ring_it *it)
{
	struct perf_event_mmap_page *m = t->ring;

	if (!m)
		return 0;
	it->meta = m;
	it->data = (const uint8_t *)m + m->data_offset;
	it->size = m->data_size;
	/* data_head, then acquire: record bytes are read after the head. */
	it->head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
	it->tail = m->data_tail;
	if (it->size == 0 || (it->size & (it->size - 1)))
		return 0;   /* not a ring we understand: leave it alone */
	return it->head != it->tail;
}

/* Copy n bytes at ring offset off (may wrap) into dst. */
static void ring_copy(const struct probe_ring_it *it, uint64_t off, void *dst,
		      size_t n)
{
	size_t at = (size_t)(off & (it->size - 1));
	size_t first = (size_t)it->size - at;

	if (first >= n) {
		memcpy(dst, it->data + at, n);
	} else {
		memcpy(dst, it->data + at, first);
		memcpy((uint8_t *)dst + first, it->data, n - first);
	}
}

unsigned probe_ring_next(struct probe_ring_it *it, void *buf, size_t cap,
			 size_t *len)
{
	struct perf_event_header h;
	size_t n;

	if (it->head - it->tail < sizeof h)
		return 0;
	ring_copy(it, it->tail, &h, sizeof h);
	if (h.size < sizeof h || h.size > it->head - it->tail) {
		/* Cannot happen with a sane kernel; never loop on it. */
		it->tail = it->head;
		return 0;
	}
	n = h.size < cap ? h.size : cap;
	ring_copy(it, it->tail, buf, n);
	*len = n;
	it->tail += h.size;
	return h.type ? h.type : 0xffffu;
}

void probe_ring_end(struct probe_ring_it *it)
{
	struct perf_event_mmap_page *m = it->meta;

	/* Release: our reads of the records happen before the kernel reuses them. */
	__atomic_store_n(&m->data_tail, it->tail, __ATOMIC_RELEASE);
}
