/*
 * offcpu.c - --off-cpu: where threads wait, in nanoseconds of wall time.
 *
 * Contract:
 *   - A wait is the time a thread spends in one of the blocking calls of
 *     libc that waits.c interposes (nanosleep, poll, read, pthread_cond_wait
 *     ...), measured with the vDSO's CLOCK_MONOTONIC around the real call.
 *     It is sampled as the event probe_offcpu_ev(), weighted in ns, with the
 *     stack it waited in: the libc function, then its caller and theirs.
 *   - Sampling, as a period does for CPU time: a wait at least one period
 *     long (probe_nominal_period(), 1 ms at 999 Hz) is one sample of its
 *     own length; shorter ones add up, and the one that brings the sum to
 *     a period is sampled with the sum.  So a stack is walked about once
 *     per period of waiting, however many waits there are.
 *   - Every thread's wall time is accounted: each sample the handler takes
 *     (a "tick", SIGNAL CONTEXT) computes the thread's off-CPU time since
 *     the previous tick as wall time minus CPU time (its CPU clock), takes
 *     off the waits seen meanwhile, and what is left (preempted, blocked
 *     where no wrapper sees: inside libc, a page fault) is sampled without
 *     a stack, as the frame PROBE_FRAME_UNSEEN.  A wait's own time on the
 *     CPU (the kernel's entry and wake-up, about 1 us) is in both its wait
 *     and the CPU time; where the remainder comes out negative, the excess
 *     is a debt that the thread's next waits pay, so that running plus
 *     waiting adds up to the thread's wall time.
 *   - A thread still blocked in a wrapped call when the process exits (a
 *     worker waiting on a condition variable for its whole life) has that
 *     wait sampled by the exiting thread, from the caller's context the
 *     wrapper saved (its stack is intact while it waits): claim says who
 *     ends the wait, the thread or the exit.
 *
 * Why wrappers, measured on the 2-core VM (per block and wake of a pipe
 * ping-pong, 2.8 us bare): perf's sigtrap on a context-switches event
 * gives the exact stack of every switch, but needs kernel sampling (root,
 * or perf_event_paranoid <= 1) and costs 3.8 us per switch; switch records
 * (attr.context_switch) work for any user but carry no stack, and any perf
 * event in a thread's context costs 1.5 to 2 us per switch here.  The
 * wrappers cost two vDSO clock reads (25 ns each) per call, and work at
 * every privilege level and without perf events at all.  What they miss
 * is counted, not guessed: the unseen frame.
 */
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

#include "probe.h"

/* Our own code: calls from it (the connection, libunwind's) are not waits. */
extern char __ehdr_start[], etext[];
static uintptr_t own_lo, own_hi;

/* waits.c's, in libprobe-offcpu.so only (weak: 0 in libprobe.so). */
extern const int probe_waits_linked __attribute__((weak, visibility("hidden")));
void probe_waits_resolve(void) __attribute__((weak, visibility("hidden")));

void probe_offcpu_init(void)
{
	own_lo = (uintptr_t)__ehdr_start;
	own_hi = (uintptr_t)etext;
	if (probe_cfg.offcpu && !&probe_waits_linked) {
		probe_msg("PROBE_OFFCPU=1 needs libprobe-offcpu.so in LD_PRELOAD (this "
			  "is libprobe.so, without the wait wrappers); off-CPU time not "
			  "sampled");
		probe_cfg.offcpu = 0;
	}
	if (probe_waits_resolve)
		probe_waits_resolve();
}

unsigned probe_offcpu_ev(void)
{
	return probe_mode == PROBE_MODE_TIMER ? 1 : 1 + probe_cfg.nextra;
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	if (clock_gettime(c, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

void probe_offcpu_thread_start(struct probe_thread *t)
{
	if (!probe_cfg.offcpu)
		return;
	t->w.wall_last = probe_now_ns();
	t->w.cpu_last = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* ---- SIGNAL CONTEXT safe (the caller keeps t's handler out) --------------- */

static void push(struct probe_thread *t, uint64_t now, uint64_t weight,
		 const uint64_t *frames, int n)
{
	probe_sample_push(t, now, weight, probe_offcpu_ev(), frames, n);
}

/* One sample of the open wait of t: its function, then its caller's stack. */
static void push_wait(struct probe_thread *t, uint64_t now, uint64_t weight)
{
	const struct probe_wait *w = &t->w;
	uint64_t buf[1 + PROBE_UNWIND_BUF];
	ucontext_t uc;
	int first = 0, partial = 0, n = 0;

	memset(&uc, 0, sizeof uc);
	uc.uc_mcontext.gregs[REG_RIP] = (greg_t)w->ret;
	uc.uc_mcontext.gregs[REG_RSP] = (greg_t)w->cfa;
	uc.uc_mcontext.gregs[REG_RBP] = (greg_t)w->rbp;
	if (!probe_stopping)            /* exit: no unwinding (main.c) */
		n = probe_unwind(t, &uc, buf + 1, &first, probe_in_loader != 0,
				 &partial);
	if (n <= 0 || partial)
		probe_lost(t, PROBE_LOST_UNWIND, 1);    /* truncated */
	if (n <= 0) {
		first = 0;
		buf[1] = w->ret;
		n = 1;
	}
	buf[first] = (uint64_t)(uintptr_t)w->fn;
	/* Deeper than the wire carries: probe_slot_push cuts it, marked. */
	push(t, now, weight, buf + first, n + 1);
}

/* Off-CPU time of t no wrapper saw (gap < 0: counted twice, a debt). */
static void unseen(struct probe_thread *t, int64_t gap, uint64_t now, int last)
{
	struct probe_wait *w = &t->w;
	uint64_t g, pay, frame = PROBE_FRAME_UNSEEN;

	if (gap < 0) {
		w->debt += (uint64_t)-gap;
		return;
	}
	g = (uint64_t)gap;
	pay = min64(g, w->debt);
	w->debt -= pay;
	w->acc_unseen += g - pay;
	if (w->acc_unseen && (last || w->acc_unseen >= probe_nominal_period())) {
		push(t, now, w->acc_unseen, &frame, 1);
		w->acc_unseen = 0;
	}
}

/* Account [wall_last, now] of t, whose CPU clock reads cpu. */
static void account(struct probe_thread *t, uint64_t now, uint64_t cpu,
		    int last)
{
	struct probe_wait *w = &t->w;
	uint64_t seen = w->seen;
	int64_t gap;

	if (!w->wall_last) {
		w->wall_last = now;
		w->cpu_last = cpu;
		return;
	}
	if (w->depth) {
		/* The open wait's part of the interval: counted here, once. */
		uint64_t from = w->t0 > w->wall_last ? w->t0 : w->wall_last;

		if (now > from) {
			w->credited += now - from;
			seen += now - from;
		}
	}
	gap = (int64_t)(now - w->wall_last) -
	      (int64_t)(cpu > w->cpu_last ? cpu - w->cpu_last : 0) -
	      (int64_t)seen;
	w->wall_last = now;
	w->cpu_last = cpu > w->cpu_last ? cpu : w->cpu_last;
	w->seen = 0;
	unseen(t, gap, now, last);
}

void probe_offcpu_tick(struct probe_thread *t)
{
	/*
	 * The timers' handler has just read the thread's CPU clock (to arm
	 * the next expiry): one system call less in the handler, whose
	 * system calls are places where the thread can be preempted.
	 */
	uint64_t cpu = probe_mode == PROBE_MODE_TIMER ? t->cpu_last :
		       clock_ns(CLOCK_THREAD_CPUTIME_ID);

	if (probe_cfg.offcpu && t->slot >= 0)
		account(t, probe_now_ns(), cpu, 0);
}

/*
 * A wait of d ns (fresh of it not yet counted by a tick) ended at now:
 * its debt paid first, then sampled as the contract says.
 */
static void wait_done(struct probe_thread *t, uint64_t now, uint64_t d,
		      uint64_t fresh)
{
	struct probe_wait *w = &t->w;
	uint64_t pay = min64(d, w->debt), period = probe_nominal_period();

	w->seen += fresh;
	w->debt -= pay;
	d -= pay;
	if (d >= period) {
		push_wait(t, now, d);
		return;
	}
	w->acc += d;
	if (w->acc >= period) {
		push_wait(t, now, w->acc);
		w->acc = 0;
	}
}

/* ---- the wrappers' side (normal context) --------------------------------- */

void *probe_wait_real(const char *name, void **cache)
{
	void *p = __atomic_load_n(cache, __ATOMIC_RELAXED);

	if (!p) {
		p = dlsym(RTLD_NEXT, name);
		__atomic_store_n(cache, p, __ATOMIC_RELAXED);
	}
	return p;
}

/*
 * A wrapper entered while t has an open wait: below that wait's frame it
 * is a signal handler's call inside the wait (0: leave the wait alone);
 * at or above it, the wait was left without returning (a siglongjmp out
 * of a handler): forget it, its time is counted as unseen (1).
 */
static int wait_left(struct probe_thread *t, void *fp)
{
	int c = PROBE_WAIT_OPEN;

	if ((uint64_t)(uintptr_t)fp < t->w.cfa - 16)
		return 0;
	if (!__atomic_compare_exchange_n(&t->w.claim, &c, PROBE_WAIT_NONE, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 0;       /* the exit has it */
	t->w.depth = 0;
	return 1;
}

struct probe_thread *probe_wait_begin(const void *fn, void *ret, void *fp)
{
	struct probe_thread *t = probe_self;

	if (!probe_cfg.offcpu || !t || t->closed || t->slot < 0 ||
	    t->in_handler || probe_stopping ||
	    ((uintptr_t)ret >= own_lo && (uintptr_t)ret < own_hi))
		return NULL;
	if (t->w.depth && !wait_left(t, fp))
		return NULL;    /* called inside the open wait: a signal handler */
	t->w.fn = fn;
	t->w.ret = (uint64_t)(uintptr_t)ret;
	t->w.cfa = (uint64_t)(uintptr_t)fp + 16;   /* above rbp and the return address */
	t->w.rbp = *(const uint64_t *)fp;
	t->w.credited = 0;
	t->w.t0 = probe_now_ns();
	t->w.depth = 1;
	__atomic_store_n(&t->w.claim, PROBE_WAIT_OPEN, __ATOMIC_RELEASE);
	return t;
}

void probe_wait_end(struct probe_thread *t)
{
	int saved_errno = errno, c = PROBE_WAIT_OPEN;
	uint64_t now = probe_now_ns(), d;

	if (!__atomic_compare_exchange_n(&t->w.claim, &c, PROBE_WAIT_NONE, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		/* The exit took this wait: let it finish reading our stack. */
		while (__atomic_load_n(&t->w.claim, __ATOMIC_ACQUIRE) ==
		       PROBE_WAIT_TAKING)
			sched_yield();
		errno = saved_errno;
		return;
	}
	probe_hold(t, PROBE_SP());
	d = now > t->w.t0 ? now - t->w.t0 : 0;
	wait_done(t, now, d, d - min64(d, t->w.credited));
	t->w.depth = 0;
	probe_unhold(t);
	errno = saved_errno;
}

/* ---- the end --------------------------------------------------------------- */

/* t's last samples: what is left, short waits (their stacks are gone) too. */
static void flush_rest(struct probe_thread *t, uint64_t now)
{
	t->w.acc_unseen += t->w.acc;
	t->w.acc = 0;
	unseen(t, 0, now, 1);
	t->w.ended = 1;
}

void probe_offcpu_thread_end(struct probe_thread *t)
{
	uint64_t now = probe_now_ns();
	int was;
	uintptr_t was_sp;

	if (!probe_cfg.offcpu || t->slot < 0 || t->w.ended)
		return;
	was = t->in_handler;
	was_sp = t->held_sp;
	probe_hold(t, PROBE_SP());
	account(t, now, clock_ns(CLOCK_THREAD_CPUTIME_ID), 0);
	flush_rest(t, now);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->in_handler = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->held_sp = was_sp;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->in_handler = was;
}

/* Another thread, blocked in a wrapped call at exit: its wait and the rest. */
static void claim(struct probe_thread *t, uint64_t now)
{
	int c = PROBE_WAIT_OPEN;
	uint64_t d;

	if (t == probe_self || t->closed || t->slot < 0 || t->w.ended ||
	    !__atomic_compare_exchange_n(&t->w.claim, &c, PROBE_WAIT_TAKING, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	d = now > t->w.t0 ? now - t->w.t0 : 0;
	/* Its ticks before the wait, then the wait, then nothing is left. */
	t->w.depth = 0;
	account(t, t->w.t0 > t->w.wall_last ? t->w.t0 : t->w.wall_last,
		clock_ns(probe_thread_cpu_clock(t->tid)), 0);
	wait_done(t, now, d, 0);
	t->w.wall_last = now;
	flush_rest(t, now);
	__atomic_store_n(&t->w.claim, PROBE_WAIT_TAKEN, __ATOMIC_RELEASE);
}

void probe_offcpu_claim_all(void)
{
	uint64_t now = probe_now_ns();

	if (!probe_cfg.offcpu || pthread_mutex_trylock(&probe_reg_lock) != 0)
		return;
	for (struct probe_thread *t = probe_threads; t; t = t->next)
		claim(t, now);
	pthread_mutex_unlock(&probe_reg_lock);
}
