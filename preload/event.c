/*
 * event.c - the perf events of a thread, and the reader of their mmap rings.
 *
 * Each thread has the first event (probe_cfg's) and the extra ones asked
 * for (-e a,b: PROBE_EVENT_MORE), each sampled on its own, as perf samples
 * each event of a list, with its own ring and signal: the handler is told
 * which one overflowed (sigtrap's si_perf_data, F_SETSIG's si_fd) and
 * tags the sample with its index.  Everything below holds for each event.
 *
 * An event is opened for one tid (cpu = -1: wherever it runs), counts
 * kernel time too where the user may (else user space only, silently; see
 * config.c: PROBE_KERNEL), and signals that very thread on every sample, so
 * the handler runs on the stack it must unwind.  With kernel time, each
 * sample carries the kernel's part of the stack (PERF_SAMPLE_CALLCHAIN with
 * exclude_callchain_user, at most PROBE_KSTACK_MAX entries): the kernel walks its
 * own stack, the handler walks the user part.  Two ways, chosen once per process (probe_event_choose_signal):
 *
 *   - sigtrap (default where the kernel has it, 5.13+): the kernel sends
 *     SIGTRAP (si_code TRAP_PERF, si_perf_data = the thread's state) to the
 *     task the event overflowed in, queued as task work that runs on the
 *     way back to user space.  Nothing else is involved, and the ring is
 *     told to wake nobody (watermark = the whole ring).
 *   - F_SETSIG: the event wakes up on every sample and the wakeup is turned
 *     into our signal (realtime, or SIGPROF), directed at the thread
 *     (F_SETOWN_EX + F_OWNER_TID; plain F_SETOWN would let any thread
 *     take it).  The kernel raises that wakeup from irq_work, i.e. a
 *     self-IPI per sample; in a VM each IPI is a VM exit.  Measured on the 2-core KVM guest this
 *     was written on, cpu-clock at 10 kHz, per sample: the overflow alone
 *     13 us, + F_SETSIG signal 11.5 us, + sigtrap signal 2.5 us.
 *   F_SETSIG is used when PROBE_SIGNAL names a signal, when the kernel
 *   refuses sigtrap (SIGRTMIN+6), and under a debugger (SIGPROF).  A
 *   tracer sees every signal before the program: gdb takes a SIGTRAP for
 *   a breakpoint of its own and stops the program at any other signal
 *   but a few it passes on quietly by default (SIGPROF, SIGIO, SIGALRM,
 *   SIGCHLD, SIGURG, SIGWINCH, SIGVTALRM: `info signals`).  Of those,
 *   SIGPROF, the profiling signal: SIGIO is our guard for a full realtime
 *   queue (handler.c), and the others are the program's more often.
 *   SIGPROF is not queued: a pending one stands for every overflow until
 *   it is taken (the handler drains all the rings), and the program's
 *   own SIGPROF (setitimer's: SI_KERNEL) is told from ours by its code
 *   and goes to the program (signals.c).  The choice is made once, at the
 *   start (TracerPid is the debugger's from the exec on, through the
 *   shell gdb starts it with), and kept by fork children and threads; a
 *   debugger attached later sees the samples' SIGTRAPs (PROBE_SIGNAL=PROF
 *   avoids that).
 *
 * The ring adapts to the locked-memory budget (perf_event_mlock_kb per CPU
 * for the user, then RLIMIT_MEMLOCK per process): 1 metadata page + 1 data
 * page (the handler drains it on every overflow, so one page is plenty);
 * when mmap says EPERM/ENOMEM, the metadata page only; then no mapping at
 * all.  Without data pages the handler takes the sample from the signal's
 * ucontext (exact for user-space overflows: the signal is delivered on the
 * way back from the interrupt that overflowed).  The event is left enabled
 * (no IOC_REFRESH, reported to hang some kernels).
 *
 * Descriptors: once a thread's event is mapped and enabled, its fd is
 * closed.  The mapping keeps the event and its signal routing alive (the
 * fasync entry belongs to the file, not the descriptor), si_fd keeps the
 * number it had, and munmap ends the event.  So a thousand threads cost no
 * descriptors, and a program that closes every descriptor cannot disturb
 * them.  A ringless event keeps its fd, moved high and guarded (fds.c).
 *
 * Ring protocol (the kernel is the producer): load data_head, acquire fence,
 * read records (which may wrap around the end of the data area; every copy
 * is bounded by the record's own size and the caller's buffer), release
 * fence, store data_tail.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "probe.h"

#define RING_DATA_PAGES 1

int probe_mode = PROBE_MODE_PERF;
uint64_t probe_ringless;

void probe_events_clear(struct probe_thread *t)
{
	for (unsigned i = 0; i < PROBE_EVENTS_MAX; i++) {
		memset(&t->ev[i], 0, sizeof t->ev[i]);
		t->ev[i].fd = -1;
		t->ev[i].sigfd = -1;
	}
}

/* What to open: the first event (probe_cfg) or extra event i - 1. */
struct ev_spec {
	uint32_t type;
	uint64_t config, config1, config2;
	int modifier;
};

static void ev_spec_of(unsigned i, struct ev_spec *sp)
{
	if (i == 0) {
		*sp = (struct ev_spec){ probe_cfg.type, probe_cfg.config,
					probe_cfg.config1, probe_cfg.config2,
					probe_cfg.modifier };
		return;
	}
	const struct probe_xevent *x = &probe_cfg.extra[i - 1];
	*sp = (struct ev_spec){ x->type, x->config, x->config1, x->config2,
				x->modifier };
}

/* The attr of event i for t (disabled; the sampling signal set up). */
static void attr_of(struct perf_event_attr *attr, struct probe_thread *t,
		    unsigned i, const struct ev_spec *sp)
{
	memset(attr, 0, sizeof *attr);
	attr->size = sizeof *attr;
	attr->type = sp->type;
	attr->config = sp->config;
	attr->config1 = sp->config1;
	attr->config2 = sp->config2;
	attr->freq = probe_cfg.freq ? 1 : 0;
	if (probe_cfg.freq)
		attr->sample_freq = probe_cfg.value;
	else
		attr->sample_period = probe_cfg.value;
	/*
	 * A fixed period (-c) is each sample's weight: PERF_SAMPLE_PERIOD is
	 * asked for with -F only.  With it, the kernel samples a software
	 * event such as page-faults on every occurrence, whatever the period
	 * (perf_swevent_event: "sample_type & PERF_SAMPLE_PERIOD && !freq":
	 * -c 10 gave 4,016 samples of weight 1 for 4,057 faults; perf,
	 * which leaves it out, 405 of 10).
	 */
	attr->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			    (probe_cfg.freq ? PERF_SAMPLE_PERIOD : 0);
	attr->disabled = 1;
	attr->exclude_kernel = !probe_cfg.kernel;
	if (sp->modifier) {             /* -e EVENT:u / :k / :uk wins */
		attr->exclude_user = !(sp->modifier & PROBE_MOD_USER);
		attr->exclude_kernel = !(sp->modifier & PROBE_MOD_KERNEL);
	}
	if (!attr->exclude_kernel) {
		attr->sample_type |= PERF_SAMPLE_CALLCHAIN;
		attr->exclude_callchain_user = 1;
		attr->sample_max_stack = PROBE_KSTACK_MAX;
	}
	attr->exclude_hv = 1;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
	if (probe_cfg.trap) {
		attr->sigtrap = 1;
		attr->remove_on_exec = 1;       /* required with sigtrap */
		attr->sig_data = (uint64_t)(uintptr_t)t + i;
		attr->watermark = 1;            /* the kernel caps it at the ring */
		attr->wakeup_watermark = 1u << 30;
	} else {
		attr->wakeup_events = 1;
	}
}

static int sys_open(struct perf_event_attr *attr, pid_t tid)
{
	return (int)syscall(SYS_perf_event_open, attr, tid, -1, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

/* perf_event_open, with the first event's fallbacks (kernel time refused). */
static int open_fd(struct perf_event_attr *attr, pid_t tid, unsigned i,
		   int modifier)
{
	int fd = sys_open(attr, tid);

	if (fd < 0 && errno == EOVERFLOW && attr->sample_max_stack) {
		/* kernel.perf_event_max_stack is lower: take its default. */
		attr->sample_max_stack = 0;
		fd = sys_open(attr, tid);
	}
	if (fd < 0 && i == 0 && (errno == EACCES || errno == EPERM) &&
	    !attr->exclude_kernel && !modifier) {
		/* Kernel samples not allowed: user space, as perf :u, silently. */
		probe_cfg.kernel = 0;
		probe_cfg.kernel_why = PROBE_HELLO_KWHY_DENIED;
		attr->exclude_kernel = 1;
		attr->sample_type &= ~(uint64_t)PERF_SAMPLE_CALLCHAIN;
		attr->exclude_callchain_user = 0;
		attr->sample_max_stack = 0;
		fd = sys_open(attr, tid);
	}
	return fd;
}

/* The biggest ring the locked-memory budget allows (-m: asked for). */
static void *map_ring(int fd, size_t *len, unsigned *pages)
{
	long page = sysconf(_SC_PAGESIZE);
	void *ring;
	unsigned n;

	for (n = probe_cfg.ring_pages ? probe_cfg.ring_pages : RING_DATA_PAGES;;
	     n = n > RING_DATA_PAGES ? RING_DATA_PAGES : 0) {
		*len = (size_t)page * (1 + n);
		ring = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (ring != MAP_FAILED) {
			*pages = n;
			return ring;
		}
		if (n == 0)
			break;
	}
	*len = 0;
	*pages = 0;
	return NULL;
}

/* Open event i of thread tid into t->ev[i]; 0 or -errno. */
static int open_one(struct probe_thread *t, unsigned i, pid_t tid,
		    const char **step)
{
	struct probe_ev *e = &t->ev[i];
	struct perf_event_attr attr;
	struct f_owner_ex owner = { .type = F_OWNER_TID, .pid = tid };
	struct ev_spec sp;
	unsigned pages;
	size_t len;
	void *ring;
	int fd, err;

	ev_spec_of(i, &sp);
	attr_of(&attr, t, i, &sp);
	*step = "perf_event_open";
	fd = open_fd(&attr, tid, i, sp.modifier);
	if (fd < 0)
		return -errno;
	ring = map_ring(fd, &len, &pages);
	if (!ring)      /* Ringless: the fd must stay; out of the program's way. */
		fd = probe_fd_high(fd);

	/* Owner and signal first, O_ASYNC last: no signal before both are set. */
	*step = "fcntl";
	if (!probe_cfg.trap && (fcntl(fd, F_SETOWN_EX, &owner) < 0 ||
	    fcntl(fd, F_SETSIG, probe_cfg.signo) < 0 ||
	    fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) < 0)) {
		err = errno;
		if (ring)
			munmap(ring, len);
		probe_sys_close(fd);
		return -err;
	}
	e->ring = ring;
	e->ring_len = len;
	e->data_pages = pages;
	e->kstack = (attr.sample_type & PERF_SAMPLE_CALLCHAIN) != 0;
	e->fixed_period = probe_cfg.freq ? 0 : (probe_cfg.value ? probe_cfg.value : 1);
	e->fd = fd;
	if (!ring)
		probe_fd_own(fd);
	__atomic_store_n(&e->sigfd, fd, __ATOMIC_RELEASE);
	if (pages == 0 && i == 0)
		__atomic_add_fetch(&probe_ringless, 1, __ATOMIC_RELAXED);
	return 0;
}

/* An extra event the kernel refused: said once per event, then left out. */
static void extra_refused(unsigned i, int err)
{
	static int said[PROBE_EVENTS_MAX];

	if (__atomic_exchange_n(&said[i], 1, __ATOMIC_RELAXED))
		return;
	probe_msg("cannot sample %s beside %s (%s); its samples are missing "
		  "from this process", probe_cfg.extra[i - 1].name,
		  probe_cfg.event_name, strerror(err));
}

int probe_event_open(struct probe_thread *t, pid_t tid, const char **step)
{
	int r;

	if (probe_cfg.kernel && !probe_cfg.trap && !probe_cfg.kernel_asked &&
	    !probe_cfg.modifier) {
		/* F_SETSIG: a kernel-mode overflow would break system calls. */
		probe_cfg.kernel = 0;
		probe_cfg.kernel_why = PROBE_HELLO_KWHY_SETSIG;
	}
	r = open_one(t, 0, tid, step);
	if (r < 0)
		return r;
	for (unsigned i = 1; i <= probe_cfg.nextra && i < PROBE_EVENTS_MAX; i++) {
		const char *st;

		r = open_one(t, i, tid, &st);
		if (r < 0)
			extra_refused(i, -r);
	}
	return 0;
}

/* Is a tracer (debugger, strace) attached to us? */
static int traced(void)
{
	const char *p = probe_status_field("TracerPid");

	return p && strtol(p, NULL, 10) != 0;
}

/* Does this kernel take sigtrap (5.13+)?  The same event, never enabled. */
static int sigtrap_ok(void)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.sigtrap = 1;
	attr.remove_on_exec = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return 0;       /* too old (EINVAL, E2BIG), or no perf at all */
	probe_sys_close(fd);
	return 1;
}

void probe_event_choose_signal(void)
{
	/* PROBE_SIGNAL's stays, debugger or not (main.c's hints use this). */
	probe_cfg.debugger = traced();
	if (!probe_cfg.signal_set && probe_cfg.debugger) {
		probe_cfg.signo = SIGPROF;      /* the timers' too */
	} else if (!probe_cfg.signal_set && !probe_cfg.timer && sigtrap_ok()) {
		probe_cfg.trap = 1;
		probe_cfg.signo = SIGTRAP;
	}
	probe_cfg.one_pending = !probe_cfg.trap && probe_cfg.signo < SIGRTMIN;
}

int probe_event_enable(struct probe_thread *t)
{
	int r = -1;

	for (unsigned i = 0; i < PROBE_EVENTS_MAX; i++) {
		struct probe_ev *e = &t->ev[i];

		if (e->fd < 0)
			continue;
		if (ioctl(e->fd, PERF_EVENT_IOC_ENABLE, 0) == 0 && i == 0)
			r = 0;
		if (e->ring) {
			/* The mapping holds the event from now on. */
			probe_sys_close(e->fd);
			e->fd = -1;
		}
	}
	return r;
}

static void close_one(struct probe_thread *t, struct probe_ev *e)
{
	__atomic_store_n(&e->sigfd, -1, __ATOMIC_RELEASE);
	if (e->fd >= 0) {
		ioctl(e->fd, PERF_EVENT_IOC_DISABLE, 0);
		probe_fd_disown(e->fd);
		probe_sys_close(e->fd);
		e->fd = -1;
	}
	void *ring = __atomic_exchange_n(&e->ring, NULL, __ATOMIC_SEQ_CST);
	if (ring) {
		while (__atomic_load_n(&t->peek, __ATOMIC_SEQ_CST))
			__builtin_ia32_pause();
		munmap(ring, e->ring_len);
	}
}

void probe_event_close(struct probe_thread *t)
{
	/* The first last: its sigfd says whether the thread is sampled. */
	for (unsigned i = PROBE_EVENTS_MAX; i-- > 0;)
		close_one(t, &t->ev[i]);
}

/*
 * Fork child: the fd and the MAP_SHARED ring are copies that still refer to
 * the parent's event.  Dropping our references is harmless to the parent
 * (the event lives until its last reference goes); disabling would not be.
 */
void probe_event_forget(struct probe_thread *t)
{
	for (unsigned i = 0; i < PROBE_EVENTS_MAX; i++) {
		struct probe_ev *e = &t->ev[i];

		if (e->ring)
			munmap(e->ring, e->ring_len);
		if (e->fd >= 0) {
			probe_fd_disown(e->fd);
			probe_sys_close(e->fd);
		}
	}
	probe_events_clear(t);
}

/* ---- ring reader: SIGNAL CONTEXT safe ---------------------------------- */

int probe_ring_begin(const struct probe_ev *e, struct probe_ring_it *it)
{
	struct perf_event_mmap_page *m = e->ring;

	if (!m || e->data_pages == 0)
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

/*
 * Another thread: how many samples does t's ring hold that its thread has
 * not taken (at most 16 counted)?  One is normal: its signal is on its way.
 * The owner may unmap the ring at any time (exec path, no locks): it
 * clears t->ev[0].ring first and waits while t->peek is set
 * (probe_event_close).
 */
unsigned probe_ring_pending(struct probe_thread *t, uint64_t *tail)
{
	struct perf_event_mmap_page *m;
	struct probe_ring_it it;
	struct perf_event_header h;
	unsigned n = 0;

	__atomic_store_n(&t->peek, 1, __ATOMIC_SEQ_CST);
	m = __atomic_load_n(&t->ev[0].ring, __ATOMIC_SEQ_CST);
	if (m && t->ev[0].data_pages) {
		it.data = (const uint8_t *)m + m->data_offset;
		it.size = m->data_size;
		it.head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
		it.tail = *tail = __atomic_load_n(&m->data_tail, __ATOMIC_RELAXED);
		while (n < 16 && it.size && !(it.size & (it.size - 1)) &&
		       it.head - it.tail >= sizeof h) {
			ring_copy(&it, it.tail, &h, sizeof h);
			if (h.size < sizeof h || h.size > it.head - it.tail)
				break;
			n += h.type == PERF_RECORD_SAMPLE;
			it.tail += h.size;
		}
	}
	__atomic_store_n(&t->peek, 0, __ATOMIC_RELEASE);
	return n;
}
