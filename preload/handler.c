/*
 * handler.c - the signal handlers: the profiling signal, the SIGIO guard,
 * and the last-gasp flush on fatal signals.
 *
 * EVERYTHING IN THIS FILE BELOW "SIGNAL CONTEXT" RUNS IN SIGNAL CONTEXT:
 * async-signal-safe only - no malloc, no stdio, no locks, errno saved and
 * restored.  It touches only memory prepared before the thread's event was
 * enabled: the thread's perf ring (event.c) and arena slot (arena.c), the
 * frame rules (cfi.c), and libunwind (unwind.c).
 *
 * Contract:
 *   - A signal is ours only when the kernel sent it for one of our events
 *     (sigtrap: TRAP_PERF with the current thread's state plus the event's
 *     index as si_perf_data; F_SETSIG: si_code > 0 and si_fd is one of the
 *     current thread's events) or for our timer
 *     (SI_TIMER and si_value is the current thread's state).  Anything else
 *     (kill, sigqueue, the program's own F_SETSIG fds and timers) goes to the
 *     program as it would have without us (signals.c: its handler, its mask,
 *     its flags, or the default action).
 *   - Ours, perf mode: drain the perf ring of the event that overflowed.
 *     Each PERF_RECORD_SAMPLE becomes one sample in the thread's arena slot,
 *     tagged with the event's index; the one taken at the
 *     interrupted instruction (the ucontext's RIP) gets the unwound stack,
 *     others keep their IP only (counted as PROBE_LOST_UNWIND, "truncated"
 *     in the summaries).  A sample taken in the kernel carries the
 *     kernel's own stack (its callchain, leaf first), and the user stack
 *     walked from the ucontext follows it.  Inside the dynamic loader
 *     (dlopen, dlclose, dl_iterate_phdr) only the cached frame rules walk
 *     the stack (libunwind could deadlock there); where a rule is missing
 *     the walk keeps what it reached (counted as truncated).  A thread without a ring (no locked memory left for one)
 *     takes its sample from the ucontext, weighted by the nominal period.
 *   - Ours, timer mode: one sample from the ucontext, weighted by the CPU
 *     time since the previous one; the timer is re-armed.
 *   - Never re-entered on the same thread (our signal is blocked while it
 *     runs, and in_handler guards against anything else).
 *   - SA_RESTART: the program's slow system calls are restarted, not failed
 *     with EINTR; no other signal is blocked while it runs.
 *
 * SIGIO guard: when a realtime signal cannot be queued (RLIMIT_SIGPENDING)
 * the kernel sends plain SIGIO instead (si_code SI_KERNEL), whose default
 * action kills the process.  Our guard stays installed whatever the program
 * does with SIGIO (signals.c keeps its view): such a SIGIO is taken as our
 * sample, and a SIGIO that is not ours gets the program's disposition.
 *
 * Fatal signals: for every signal whose default action kills the process
 * and that the program leaves at SIG_DFL, a handler sends what was sampled
 * (probe_finish, bounded) and then lets the same signal kill the process:
 * installed with SA_RESETHAND, it raises the signal again, which is
 * delivered with the default action as soon as the handler returns (a
 * fault would also simply happen again).  As soon as the program installs
 * its own disposition for one of them, it gets it for real.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "probe.h"

int probe_sigio_seen;                   /* the rt signal queue overflowed */

/*
 * PROBE_HANDLER_STATS=1: how long the handler takes per signal, as a
 * histogram of 50 ns buckets (scripts/bench reads the line probe_fini
 * prints).  Atomic adds only, so any thread may count.
 */
#define HSTAT_NS 50
#define HSTAT_N 400                     /* 0 to 20 us; the last: beyond */
static uint64_t hstat[HSTAT_N + 1], hstat_ns, hstat_n, hstat_max,
		hstat_frames, hstat_stacks;

/* ---- SIGNAL CONTEXT ------------------------------------------------------ */

/* Counters in the arena: the collector reads them, whole. */
void probe_lost(struct probe_thread *t, unsigned r, uint64_t n)
{
	struct probe_arena *a = probe_arena;
	uint64_t *p = t && t->s ? &t->s->lost[r] : a ? &a->lost[r] : NULL;

	if (p && r < PROBE_LOST_REASON_MAX)
		__atomic_add_fetch(p, n, __ATOMIC_RELAXED);
}

/* One more sample taken by t (the owner alone writes it). */
static inline void counted(struct probe_thread *t)
{
	if (t->s)
		__atomic_store_n(&t->s->samples, t->s->samples + 1,
				 __ATOMIC_RELAXED);
}

/* Into t's slot; a full ring is a loss the collector will see (-1). */
static int push(struct probe_thread *t, uint64_t time, uint64_t period,
		unsigned ev, const uint64_t *frames, int n)
{
	if (probe_slot_push(t->slot, time, period, ev, frames, (uint32_t)n) < 0) {
		probe_lost(t, PROBE_LOST_QUEUE, 1);
		return -1;
	}
	return 0;
}

int probe_sample_push(struct probe_thread *t, uint64_t time, uint64_t weight,
		      unsigned ev, const uint64_t *frames, int n)
{
	counted(t);
	return push(t, time, weight, ev, frames, n);
}

/* The collector did not make room within a wait: do not wait again until it does. */
static int push_stuck;

int probe_sample_push_wait(struct probe_thread *t, uint64_t time, uint64_t weight,
			   unsigned ev, const uint64_t *frames, int n)
{
	struct timespec pause = { 0, 50000 };   /* 50 us, 2,000 times at most */

	counted(t);
	for (unsigned i = 0; i < 2000 && !__atomic_load_n(&push_stuck, __ATOMIC_RELAXED) &&
			     !probe_stopping; i++) {
		if (probe_slot_push(t->slot, time, weight, ev, frames, (uint32_t)n) == 0)
			return 0;
		/* The ring is full: the watermark has woken the collector. */
		syscall(SYS_nanosleep, &pause, NULL);
	}
	if (push(t, time, weight, ev, frames, n) == 0) {
		__atomic_store_n(&push_stuck, 0, __ATOMIC_RELAXED);
		return 0;
	}
	__atomic_store_n(&push_stuck, 1, __ATOMIC_RELAXED);
	return -1;
}

/*
 * The n frames unwound at stack + *first, or (n <= 0) the leaf alone,
 * counted as a stack not unwound; a walk that stopped early (in the loader)
 * is kept, counted as truncated too.  Returns the frames to keep.
 */
static int stack_or_leaf(struct probe_thread *t, uint64_t *stack, int *first,
			 int n, uint64_t leaf, int partial)
{
	if (n <= 0) {
		stack[0] = leaf;
		*first = 0;
		probe_lost(t, PROBE_LOST_UNWIND, 1);
		return 1;
	}
	if (partial)
		probe_lost(t, PROBE_LOST_UNWIND, 1);
	if (probe_cfg.handler_stats) {
		__atomic_add_fetch(&hstat_frames, (uint64_t)n, __ATOMIC_RELAXED);
		__atomic_add_fetch(&hstat_stacks, 1, __ATOMIC_RELAXED);
	}
	return n;
}

/* The record of one sample: header, ip, pid|tid, time, period[, callchain]. */
#define REC_WORDS (6 + PROBE_KSTACK_MAX + 8)

/*
 * A kernel sample's frames from its callchain (the kernel's stack, leaf
 * first; PERF_CONTEXT_* markers are not addresses) into k, at most
 * PROBE_KSTACK_MAX; at least the sampled IP.
 */
static int kernel_frames(const struct probe_ev *e, const uint64_t *w,
			 size_t len, uint64_t *k)
{
	int nk = 0;
	size_t at = 4 + (e->fixed_period == 0);   /* the callchain's nr */

	if (e->kstack && len >= (at + 1) * sizeof(uint64_t)) {
		uint64_t nr = w[at], have = len / sizeof(uint64_t) - at - 1;

		for (uint64_t i = 0; i < nr && i < have && nk < (int)PROBE_KSTACK_MAX; i++)
			if (w[at + 1 + i] < PERF_CONTEXT_MAX)
				k[nk++] = w[at + 1 + i];
	}
	if (nk == 0 || k[0] != w[1]) {
		/* No chain (or not starting at the IP): the IP alone. */
		k[0] = w[1];
		nk = 1;
	}
	return nk;
}

/*
 * The user stack of the interrupted context, walked once per drain: every
 * kernel sample in the ring shares it (each kernel sample's signal comes
 * on the thread's next way back to user space, so they were all taken in
 * the kernel entry that returns to RIP; only while our signal is held, as
 * glibc holds every signal for a few system calls in pthread_create and
 * posix_spawn, can an older one wait, and it then gets the stack of where
 * the thread is now), and so does a user sample taken at RIP.  Kernel
 * frames go in front of it: room for both.
 */
struct ustack {
	uint64_t buf[PROBE_KSTACK_MAX + 1 + PROBE_UNWIND_BUF];
	int first, n, partial, walked;
};

static uint64_t *user_stack(struct probe_thread *t, void *uc, struct ustack *u)
{
	uint64_t *at = u->buf + PROBE_KSTACK_MAX + 1;

	if (!u->walked) {
		u->walked = 1;
		u->first = u->partial = 0;
		u->n = probe_unwind(t, uc, at, &u->first, probe_in_loader != 0,
				    &u->partial);
		if (u->n > 0 && probe_cfg.handler_stats) {
			__atomic_add_fetch(&hstat_frames, (uint64_t)u->n,
					   __ATOMIC_RELAXED);
			__atomic_add_fetch(&hstat_stacks, 1, __ATOMIC_RELAXED);
		}
	}
	return at + u->first;
}

static void probe_on_signal(int sig, siginfo_t *si, void *uc);

/*
 * Taken while this thread ran our handler: the last one (its window) or
 * this one (since it began).  Such a sample (page-faults: libunwind's
 * first touch of its caches, a ring's new page; libunwind loading
 * liblzma's code) is the profiler's own, not the program's, and the
 * interrupted context is not where it was taken.
 */
extern char __ehdr_start[], etext[];

static int own_sample(const struct probe_thread *t, uint64_t time, uint64_t ip,
		      int in_kernel)
{
	if (!((t->own_to && time >= t->own_from && time <= t->own_to) ||
	      (t->own_now && time >= t->own_now)))
		return 0;
	/*
	 * And at our code: a program's handler of a signal that came while
	 * ours ran (our mask is empty) runs nested in it and may never
	 * return to it (exit(7) from a SIGALRM handler): own_now stays set,
	 * and its work must not become ours (tests/62, handler).
	 */
	return in_kernel || (ip >= (uintptr_t)__ehdr_start && ip < (uintptr_t)etext) ||
	       probe_unwind_ours(ip);
}

/* One sample of the ring; u: NULL when no stack can be walked. */
static void ring_sample(struct probe_thread *t, const struct probe_ev *e,
			unsigned ev, const uint64_t *w, size_t len, uint64_t rip,
			void *uc, struct ustack *u)
{
	/* header, ip, pid|tid, time, period (unless fixed)[, nr, ips[nr]] */
	uint64_t ip = w[1], time = w[3];
	uint64_t period = e->fixed_period ? e->fixed_period : w[4];
	int in_kernel = ip >= PROBE_KERNEL_START;
	uint64_t *us = NULL;

	counted(t);
	/*
	 * Only where no stack can be had (the exit path's drain, an older
	 * record): code our libunwind brought in, at its .fini.  A walked
	 * stack says itself whose it is.
	 */
	if (own_sample(t, time, ip, in_kernel) ||
	    (!in_kernel && (!u || ip != rip) && probe_unwind_ours(ip))) {
		/* One frame in libprobe: the report names it [probe]. */
		uint64_t ours = (uint64_t)(uintptr_t)probe_on_signal;

		push(t, time, period, ev, &ours, 1);
		return;
	}
	if (in_kernel)
		t->saw_kernel = 1;
	if (u && (ip == rip || in_kernel))
		us = user_stack(t, uc, u);
	if (us && (u->n <= 0 || u->partial))
		probe_lost(t, PROBE_LOST_UNWIND, 1);    /* truncated */
	if (!in_kernel) {
		if (!us)
			probe_lost(t, PROBE_LOST_UNWIND, 1);
		if (us && u->n > 0)
			push(t, time, period, ev, us, u->n);
		else
			push(t, time, period, ev, &ip, 1);
		return;
	}
	/*
	 * A kernel sample is followed by this signal on the way back to user
	 * space: RIP is where the user stack resumes.  Its frames: the
	 * kernel's callchain (leaf first), then the user stack.
	 */
	uint64_t k[PROBE_KSTACK_MAX];
	int nk = kernel_frames(e, w, len, k), n = us && u->n > 0 ? u->n : 0;

	if (!us) {
		probe_lost(t, PROBE_LOST_UNWIND, 1);
		us = u ? u->buf + PROBE_KSTACK_MAX + 1 : k + nk;
	}
	/* More than the wire carries: probe_slot_push cuts it, marked. */
	if (n > (int)PROBE_WALK_MAX - nk)
		n = (int)PROBE_WALK_MAX - nk;
	if (us != k + nk)
		memcpy(us - nk, k, (size_t)nk * sizeof k[0]);
	push(t, time, period, ev, us - nk, nk + n);
}

int probe_drain_ring(struct probe_thread *t, unsigned ev, void *uc)
{
	const struct probe_ev *e = &t->ev[ev];
	struct probe_ring_it it;
	union {
		struct perf_event_header h;
		uint64_t w[REC_WORDS];
	} rec;
	struct ustack u;
	uint64_t rip = 0;
	int can_unwind = 0, taken = 0;
	unsigned type;
	size_t len;

	if (!probe_ring_begin(e, &it))
		return 0;
	if (uc) {
		rip = (uint64_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
		can_unwind = !probe_stopping;
	}
	u.walked = 0;
	while ((type = probe_ring_next(&it, &rec, sizeof rec, &len)) != 0) {
		taken++;
		if (type == PERF_RECORD_SAMPLE) {
			if (len >= (4 + (e->fixed_period == 0)) * sizeof(uint64_t))
				ring_sample(t, e, ev, rec.w, len, rip, uc,
					    can_unwind ? &u : NULL);
		} else if (type == PERF_RECORD_LOST) {
			/* header, id, lost */
			if (len >= 3 * sizeof(uint64_t))
				probe_lost(t, PROBE_LOST_KERNEL, rec.w[2]);
		} else if (type == PERF_RECORD_THROTTLE) {
			probe_lost(t, PROBE_LOST_THROTTLE, 1);
		}
	}
	probe_ring_end(&it);
	return taken;
}

/*
 * Is in_handler held by a frame that can still resume (probe.h)?  The
 * holder's frame is gone when the asking one is at or above it on the
 * same stack, the thread's own: a handler of the program's nested in the
 * holder left it with siglongjmp (a frame nested inside the holder's is
 * below it, a signal frame deeper).  On another stack (sigaltstack) it
 * cannot be told: held.  Before, such a thread was never sampled again.
 */
int probe_held(struct probe_thread *t, uintptr_t sp)
{
	uintptr_t h = t->held_sp;

	if (!t->in_handler)
		return 0;
	if (!h || !t->stack_hi || sp < h || sp >= t->stack_hi ||
	    h < t->stack_lo)
		return 1;
	t->in_handler = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return 0;
}

int probe_drain_all(struct probe_thread *t)
{
	int n = 0;

	for (unsigned i = 0; i < PROBE_EVENTS_MAX; i++)
		if (t->ev[i].ring)
			n += probe_drain_ring(t, i, NULL);
	return n;
}

/* One sample at the interrupted instruction, with its stack. */
static void sample_uc(struct probe_thread *t, unsigned ev, void *uc,
		      uint64_t period)
{
	uint64_t stack[PROBE_UNWIND_BUF];
	int first = 0, n = 0, partial = 0;

	counted(t);
	if (!probe_stopping)
		n = probe_unwind(t, uc, stack, &first, probe_in_loader != 0,
				 &partial);
	n = stack_or_leaf(t, stack, &first, n,
			  (uint64_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP],
			  partial);
	push(t, probe_now_ns(), period ? period : 1, ev, stack + first, n);
}

/* The calling thread's state (adopted threads have no TLS pointer yet). */
struct probe_thread *probe_current_thread(void)
{
	struct probe_thread *t = probe_self;
	int n = __atomic_load_n(&probe_nadopted, __ATOMIC_ACQUIRE);
	pid_t tid;

	if (t || n == 0)
		return t;
	tid = (pid_t)syscall(SYS_gettid);
	for (int i = 0; i < n; i++) {
		t = probe_adopted[i];
		if (t && t->tid == tid) {
			probe_self = t;
			return t;
		}
	}
	return NULL;
}

/*
 * Is si one of ours, for the calling thread?  Its state, or NULL; *ev:
 * which of its events overflowed.
 */
static struct probe_thread *ours(const siginfo_t *si, unsigned *ev)
{
	struct probe_thread *t;

	*ev = 0;
	if (!si)
		return NULL;
	if (probe_mode == PROBE_MODE_TIMER) {
		if (si->si_code != SI_TIMER)
			return NULL;
		t = probe_current_thread();
		return t && si->si_value.sival_ptr == (void *)t && t->timer >= 0 ?
		       t : NULL;
	}
	if (!probe_signal_from_event(probe_cfg.signo, si))
		return NULL;    /* kill, sigqueue, setitimer's SIGPROF (SI_KERNEL) */
	t = probe_current_thread();
	if (!t || __atomic_load_n(&t->ev[0].sigfd, __ATOMIC_ACQUIRE) < 0)
		return NULL;
	if (probe_cfg.trap) {
		/* sig_data: t's address (64-byte aligned) + the event's index. */
		unsigned long d = probe_si_perf_data(si);

		if (si->si_code != TRAP_PERF ||
		    (d & ~63ul) != (unsigned long)(uintptr_t)t ||
		    (d & 63) >= PROBE_EVENTS_MAX)
			return NULL;
		*ev = (unsigned)(d & 63);
		return t;
	}
	for (unsigned i = 0; i < PROBE_EVENTS_MAX; i++) {
		int fd = __atomic_load_n(&t->ev[i].sigfd, __ATOMIC_ACQUIRE);

		if (fd >= 0 && si->si_fd == fd) {
			*ev = i;
			return t;
		}
	}
	return NULL;
}

/* Take the sample(s) signalled to t for event ev; returns how many records. */
static int take(struct probe_thread *t, unsigned ev, void *uc)
{
	if (probe_mode == PROBE_MODE_TIMER) {
		uint64_t now = probe_timer_cpu_ns(t);

		sample_uc(t, 0, uc, now > t->cpu_last ? now - t->cpu_last : 1);
		if (!probe_stopping)
			probe_timer_arm(t);
		else
			probe_timer_stop(t);    /* it would go on every period */
		return 1;
	}
	if (t->ev[ev].data_pages) {
		int n = probe_drain_ring(t, ev, uc);

		/*
		 * SIGPROF (not queued): another event's signal, pending when
		 * this one was sent, merged with it.  Its samples are most
		 * often from the same kernel entry, at this RIP; the others
		 * keep their IP, as a ring's older records do.
		 */
		for (unsigned i = 0; probe_cfg.one_pending && i < PROBE_EVENTS_MAX; i++)
			if (i != ev && t->ev[i].data_pages)
				n += probe_drain_ring(t, i, uc);
		return n;
	}
	sample_uc(t, ev, uc, probe_nominal_period());
	return 1;
}

/*
 * Our SIGTRAP must not decide whether the program's system call restarts.
 * A sample taken in the kernel (in a system call, before it blocks) is
 * sent as task work, which the kernel runs at the start of signal
 * delivery: when a signal of the program's then interrupts that call, our
 * SIGTRAP is delivered first (synchronous signals go first) and its
 * SA_RESTART restarts the call; the program's handler runs before ours
 * (its frame is set up last) and then the call is made again, where the
 * program, its handler without SA_RESTART, expected EINTR: a read that an
 * alarm should end blocks for good (gt_signals interrupt: 195 of 300
 * reads restarted at 20 kHz; gt_signals alarm hung about 1 run in 5).
 * The kernel left RIP on the "syscall" instruction (0f 05) and RAX the
 * call's number.  Which signal interrupted the call is gone by the time
 * we run, so when the program has a handler without SA_RESTART for a
 * signal it lets through, the call fails with EINTR as such a handler
 * would have made it: RAX = -EINTR, RIP after the instruction.  Without
 * such a handler, restarting is what any of its signals would have done.
 * (What this gets wrong, rarely: an interruption by one of its handlers
 * with SA_RESTART, or by a stop, then fails with EINTR; so does a call
 * the kernel restarts whatever the handler, fork's -ERESTARTNOINTR.)
 *
 * The CPU-time timers do the same: their expiry is task work too, and
 * their signal, sent to the thread, is taken before the program's signal
 * sent to the process (the kernel takes a thread's own pending signals
 * first): gt_signals interrupt saw 1 or 2 of 300 reads restarted under
 * PROBE_TIMER=1.  There, the tick can also interrupt user code that is
 * about to execute a "syscall" instruction: that call would fail with
 * EINTR unmade, when the program has such a handler; one instruction in
 * the millions a tick lands among.
 */
static void keep_eintr(void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;
	uint8_t insn[2];

	if (!probe_signal_any_norestart(&uc->uc_sigmask))
		return;
	/* The code's bytes through the kernel: execute-only pages exist. */
	struct iovec lo = { insn, 2 }, re = { (void *)(uintptr_t)g[REG_RIP], 2 };
	if (syscall(SYS_process_vm_readv, getpid(), &lo, 1, &re, 1, 0) != 2 ||
	    insn[0] != 0x0f || insn[1] != 0x05)
		return;
	g[REG_RAX] = -EINTR;
	g[REG_RIP] += 2;
}

static void handler_count(uint64_t d)
{
	uint64_t mx = __atomic_load_n(&hstat_max, __ATOMIC_RELAXED);

	__atomic_add_fetch(&hstat[d / HSTAT_NS < HSTAT_N ? d / HSTAT_NS : HSTAT_N],
			   1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&hstat_ns, d, __ATOMIC_RELAXED);
	__atomic_add_fetch(&hstat_n, 1, __ATOMIC_RELAXED);
	while (d > mx && !__atomic_compare_exchange_n(&hstat_max, &mx, d, 0,
						      __ATOMIC_RELAXED,
						      __ATOMIC_RELAXED))
		;
}

static void probe_on_signal(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno;
	unsigned ev;
	struct probe_thread *t = ours(si, &ev);

	if (!t) {
		probe_signal_chain(sig, si, uc);
		errno = saved_errno;
		return;
	}
	if (probe_held(t, PROBE_SP())) {
		/*
		 * Our own code on this thread is writing its slot (an off-CPU
		 * wrapper's sample, the exit path, our handler under a handler
		 * of the program's): this sample is left out - in perf mode it
		 * stays in the ring for the holder's drain or the exit's; a
		 * timer is armed again with the CPU time kept, so that the next
		 * sample weighs it.
		 */
		if (probe_mode == PROBE_MODE_TIMER && !probe_stopping) {
			uint64_t last = t->cpu_last;

			probe_timer_arm(t);
			t->cpu_last = last;
		} else if (probe_mode == PROBE_MODE_TIMER) {
			probe_timer_stop(t);
		}
		errno = saved_errno;
		return;
	}
	probe_hold(t, PROBE_SP());
	t->saw_kernel = 0;
	if (probe_mode != PROBE_MODE_TIMER)
		t->own_now = probe_now_ns();
	/*
	 * The process's first sample: its start waited for it (lazy.c).  After
	 * own_now: a sample taken during the start is the profiler's own.
	 */
	if (probe_lazy_waiting()) {
		probe_lazy_start_signal();
		if (!probe_active) {
			t->own_now = 0;
			probe_unhold(t);
			errno = saved_errno;
			return;
		}
	}
	if (probe_cfg.handler_stats) {
		uint64_t a = probe_now_ns();

		take(t, ev, uc);
		handler_count(probe_now_ns() - a);
	} else {
		take(t, ev, uc);
	}
	if (ev == 0 && probe_cfg.offcpu)
		probe_offcpu_tick(t);
	if ((t->saw_kernel && probe_cfg.trap) || probe_mode == PROBE_MODE_TIMER)
		keep_eintr(uc);
	if (t->own_now) {
		t->own_from = t->own_now;
		t->own_to = probe_now_ns();
		t->own_now = 0;
	}
	probe_unhold(t);
	errno = saved_errno;
}

static void probe_on_sigio(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno;

	if (si && si->si_code == SI_KERNEL && probe_active &&
	    probe_mode == PROBE_MODE_PERF) {
		struct probe_thread *t = probe_current_thread();

		if (t && !probe_held(t, PROBE_SP()) &&
		    __atomic_load_n(&t->ev[0].sigfd, __ATOMIC_ACQUIRE) >= 0) {
			int n = 0;

			__atomic_store_n(&probe_sigio_seen, 1, __ATOMIC_RELAXED);
			probe_hold(t, PROBE_SP());
			/* Which event it was for is lost: take them all. */
			for (unsigned i = 0; i < PROBE_EVENTS_MAX; i++)
				if (i == 0 || (t->ev[i].data_pages &&
				    __atomic_load_n(&t->ev[i].sigfd,
						    __ATOMIC_ACQUIRE) >= 0))
					n += take(t, i, uc);
			probe_unhold(t);
			if (n > 0) {
				errno = saved_errno;
				return;
			}
		}
	}
	probe_signal_chain(sig, si, uc);
	errno = saved_errno;
}

static void probe_on_fatal(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno;

	(void)si;
	(void)uc;
	probe_finish(128 + sig);
	/*
	 * SA_RESETHAND made the disposition SIG_DFL: raised again, the signal
	 * is delivered as soon as we return and ends the process as it would
	 * have without us (a fault would also simply happen again).
	 */
	syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
	errno = saved_errno;
}

/* ---- normal context ------------------------------------------------------ */

/* Fork child: its own figures, not its parent's. */
void probe_handler_stats_reset(void)
{
	memset(hstat, 0, sizeof hstat);
	hstat_ns = hstat_n = hstat_max = hstat_frames = hstat_stacks = 0;
}

/* The PROBE_HANDLER_STATS line, once, at the end. */
void probe_handler_stats_report(void)
{
	uint64_t n = __atomic_load_n(&hstat_n, __ATOMIC_RELAXED), seen = 0;
	uint64_t p50 = 0, p99 = 0, st;
	int got50 = 0;

	if (!probe_cfg.handler_stats || n == 0)
		return;
	for (int i = 0; i <= HSTAT_N; i++) {
		seen += hstat[i];
		if (!got50 && seen * 2 >= n) {
			p50 = (uint64_t)(i + 1) * HSTAT_NS;
			got50 = 1;
		}
		if (seen * 100 >= n * 99) {
			p99 = (uint64_t)(i + 1) * HSTAT_NS;
			break;
		}
	}
	st = hstat_stacks ? hstat_stacks : 1;
	probe_msg("handler: %llu signals, %.1f frames per unwound stack; "
		  "mean %llu ns, p50 < %llu ns, p99 < %llu ns, max %llu ns",
		  (unsigned long long)n, (double)hstat_frames / (double)st,
		  (unsigned long long)(hstat_ns / n), (unsigned long long)p50,
		  (unsigned long long)p99, (unsigned long long)hstat_max);
}

/* The signals whose default action ends the process. */
static const int fatal_signals[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE,
	SIGUSR1, SIGSEGV, SIGUSR2, SIGPIPE, SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ,
	SIGVTALRM, SIGPROF, SIGSYS, SIGSTKFLT, SIGPWR,
};

int probe_handler_install(void)
{
	if (probe_signal_take(probe_cfg.signo, PROBE_SIG_CHAIN, probe_on_signal,
			      SA_RESTART) < 0) {
		probe_msg("cannot install the handler for signal %d (%s); not "
			  "profiling", probe_cfg.signo, strerror(errno));
		return -1;
	}
	probe_signal_take(SIGIO, PROBE_SIG_CHAIN, probe_on_sigio, SA_RESTART);
	for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++)
		if (fatal_signals[i] != probe_cfg.signo)   /* SIGTRAP: chained */
			probe_signal_take(fatal_signals[i], PROBE_SIG_FATAL,
					  probe_on_fatal,
					  SA_RESETHAND | SA_ONSTACK);
	return 0;
}

/*
 * Something replaced our handler without going through sigaction or
 * signal (sigset, sysv_signal, a raw system call): take it back, keeping
 * what it installed as the program's view.  Returns 1 once when it happened.
 */
int probe_handler_taken_over(void)
{
	static int said;
	struct sigaction cur;
	int sig = probe_cfg.signo;

	if (probe_real_sigaction(sig, NULL, &cur) < 0)
		return 0;
	if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == probe_on_signal)
		return 0;
	probe_signal_take(sig, PROBE_SIG_CHAIN, probe_on_signal, SA_RESTART);
	if (said)
		return 0;
	said = 1;
	return 1;
}

void probe_block_signal(sigset_t *old)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, probe_cfg.signo);
	probe_real_sigmask(SIG_BLOCK, &s, old);
}

void probe_restore_mask(const sigset_t *old)
{
	probe_real_sigmask(SIG_SETMASK, old, NULL);
}
