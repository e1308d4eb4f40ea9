/*
 * handler.c - the profiling signal handler.
 *
 * EVERYTHING IN probe_on_signal() AND WHAT IT CALLS RUNS IN SIGNAL CONTEXT:
 * async-signal-safe only - no malloc, no stdio, no locks, errno saved and
 * restored.  It touches only memory prepared before the thread's event was
 * enabled: the thread's ring (event.c) and queue (queue.c), and libunwind's
 * per-thread state, primed on the thread beforehand (unwind.c).
 *
 * Contract:
 *   - A signal is ours only when the kernel sent it for an fd (si_code > 0)
 *     and si_fd is the current thread's event.  Anything else (kill,
 *     sigqueue, the app's own F_SETSIG fds) goes to the handler the app had
 *     installed before us, if it had one.
 *   - Ours: drain the thread's ring.  Each PERF_RECORD_SAMPLE becomes one
 *     queued sample; the one taken at the interrupted instruction (the
 *     ucontext's RIP) gets the unwound stack, others keep their IP only
 *     (counted as PROBE_LOST_UNWIND, like samples taken while the thread
 *     is inside the dynamic loader, where unwinding could deadlock).
 *   - Never re-entered on the same thread (our signal is blocked while it
 *     runs, and in_handler guards against anything else).
 *   - SA_RESTART: the app's slow system calls are restarted, not failed with
 *     EINTR; no other signal is blocked while it runs.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

#include "probe.h"

static struct sigaction prev_action;    /* the app's, before us */
static struct sigaction prev_sigio;
static int sigio_guarded;
int probe_sigio_seen;                   /* the rt signal queue overflowed */

#ifdef PROBE_HANDLER_TIMING
uint64_t probe_timing_ns, probe_timing_n, probe_timing_max;
#endif

/* A single writer (the owning thread) and a reader that wants whole values. */
static inline void bump(uint64_t *p, uint64_t n)
{
	__atomic_store_n(p, *p + n, __ATOMIC_RELAXED);
}

/* ---- SIGNAL CONTEXT ------------------------------------------------------ */

void probe_drain_ring(struct probe_thread *t, void *uc)
{
	struct probe_ring_it it;
	union {
		struct perf_event_header h;
		uint64_t w[16];
	} rec;
	uint64_t stack[PROBE_UNWIND_BUF];
	uint64_t rip = 0;
	int can_unwind = 0, attached = 0;
	unsigned type;
	size_t len;

	if (!probe_ring_begin(t, &it))
		return;
	if (uc) {
		rip = (uint64_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
		can_unwind = !probe_in_loader && !probe_stopping;
	}
	while ((type = probe_ring_next(&it, &rec, sizeof rec, &len)) != 0) {
		if (type == PERF_RECORD_SAMPLE) {
			/* header, ip, pid|tid, time, period */
			if (len < 5 * sizeof(uint64_t))
				continue;
			uint64_t ip = rec.w[1];
			uint32_t tid = (uint32_t)(rec.w[2] >> 32);
			uint64_t time = rec.w[3], period = rec.w[4];
			int first = 0, n = 0;

			bump(&t->samples, 1);
			/*
			 * A kernel sample (a system call, a page fault) is
			 * followed by this signal on the way back to user
			 * space: RIP is where the user stack resumes, so the
			 * kernel IP goes on top of the unwound user stack.
			 */
			int in_kernel = ip >= PROBE_KERNEL_START;
			if (can_unwind && !attached && (ip == rip || in_kernel)) {
				attached = 1;
				n = probe_unwind(uc, stack, &first);
				if (n > 0 && in_kernel && first > 0) {
					stack[--first] = ip;
					if (n < (int)PROBE_MAX_FRAMES)
						n++;
				}
			}
			if (n <= 0) {
				stack[0] = ip;
				first = 0;
				n = 1;
				bump(&t->lost[PROBE_LOST_UNWIND], 1);
			}
			if (probe_queue_push(&t->q, tid, time, period,
					     stack + first, (uint32_t)n) < 0)
				bump(&t->lost[PROBE_LOST_QUEUE], 1);
		} else if (type == PERF_RECORD_LOST) {
			/* header, id, lost */
			if (len >= 3 * sizeof(uint64_t))
				bump(&t->lost[PROBE_LOST_KERNEL], rec.w[2]);
		} else if (type == PERF_RECORD_THROTTLE) {
			bump(&t->lost[PROBE_LOST_THROTTLE], 1);
		}
	}
	probe_ring_end(&it);
}

static void chain(const struct sigaction *prev, int sig, siginfo_t *si,
		  void *uc)
{
	if (prev->sa_flags & SA_SIGINFO) {
		if (prev->sa_sigaction)
			prev->sa_sigaction(sig, si, uc);
	} else if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN) {
		prev->sa_handler(sig);
	}
	/*
	 * SIG_DFL/SIG_IGN: dropped.  The default action of a realtime signal is
	 * to terminate, and a late signal of one of our closed events must not
	 * kill the program.
	 */
}

static struct probe_thread *find_thread(int fd)
{
	struct probe_thread *t = probe_self;

	if (t)
		return t;
	/* A thread that existed before us has no TLS pointer yet. */
	for (int i = 0; i < probe_nadopted; i++) {
		t = probe_adopted[i];
		if (t && t->fd == fd && t->fd >= 0) {
			probe_self = t;
			return t;
		}
	}
	return NULL;
}

static void probe_on_signal(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno;
	struct probe_thread *t = NULL;

	if (si && si->si_code > 0)
		t = find_thread(si->si_fd);
	if (!t || t->fd < 0 || si->si_fd != t->fd) {
		chain(&prev_action, sig, si, uc);
		errno = saved_errno;
		return;
	}
	if (t->in_handler) {
		errno = saved_errno;
		return;
	}
	t->in_handler = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
#ifdef PROBE_HANDLER_TIMING
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
#endif
	probe_drain_ring(t, uc);
#ifdef PROBE_HANDLER_TIMING
	clock_gettime(CLOCK_MONOTONIC, &b);
	uint64_t d = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u +
		     (uint64_t)(b.tv_nsec - a.tv_nsec);
	__atomic_add_fetch(&probe_timing_ns, d, __ATOMIC_RELAXED);
	__atomic_add_fetch(&probe_timing_n, 1, __ATOMIC_RELAXED);
	uint64_t mx = __atomic_load_n(&probe_timing_max, __ATOMIC_RELAXED);
	while (d > mx && !__atomic_compare_exchange_n(&probe_timing_max, &mx, d,
			0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
#endif
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->in_handler = 0;
	errno = saved_errno;
}

/*
 * SIGIO guard.  When a realtime signal cannot be queued (RLIMIT_SIGPENDING)
 * the kernel sends plain SIGIO instead (si_code SI_KERNEL), whose default
 * action kills the process.  Installed only while the app leaves SIGIO at
 * SIG_DFL: our overflow is drained as usual; any other SIGIO gets the
 * default action it would have had without us.
 */
static void probe_on_sigio(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno;
	struct probe_thread *t = probe_self;

	if (si && si->si_code == SI_KERNEL && probe_active) {
		probe_sigio_seen = 1;
		if (t && t->fd >= 0 && !t->in_handler) {
			t->in_handler = 1;
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			probe_drain_ring(t, uc);
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			t->in_handler = 0;
		}
		errno = saved_errno;
		return;
	}
	if (prev_sigio.sa_handler == SIG_DFL) {
		/* Re-deliver with the default action once we return. */
		signal(sig, SIG_DFL);
		raise(sig);
	} else {
		chain(&prev_sigio, sig, si, uc);
	}
	errno = saved_errno;
}

/* ---- normal context ------------------------------------------------------ */

int probe_handler_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = probe_on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(probe_cfg.signo, &sa, &prev_action) < 0) {
		probe_msg("cannot install the handler for signal %d (%s); not "
			  "profiling", probe_cfg.signo, strerror(errno));
		return -1;
	}
	if ((prev_action.sa_flags & SA_SIGINFO) ||
	    (prev_action.sa_handler != SIG_DFL &&
	     prev_action.sa_handler != SIG_IGN)) {
		/* Someone (a parent libprobe's image survived exec?) was there. */
		if (!(prev_action.sa_flags & SA_SIGINFO) ||
		    prev_action.sa_sigaction != probe_on_signal)
			probe_msg("signal %d already has a handler; it will "
				  "still get the signals that are not ours (set "
				  "PROBE_SIGNAL to a free realtime signal)",
				  probe_cfg.signo);
	}

	if (sigaction(SIGIO, NULL, &prev_sigio) == 0 &&
	    !(prev_sigio.sa_flags & SA_SIGINFO) &&
	    prev_sigio.sa_handler == SIG_DFL) {
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = probe_on_sigio;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigemptyset(&sa.sa_mask);
		sigio_guarded = sigaction(SIGIO, &sa, NULL) == 0;
	}
	return 0;
}

int probe_handler_taken_over(void)
{
	static int noticed;
	struct sigaction cur;

	if (noticed || sigaction(probe_cfg.signo, NULL, &cur) < 0)
		return 0;
	if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == probe_on_signal)
		return 0;
	noticed = 1;
	return 1;
}

void probe_block_signal(sigset_t *old)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, probe_cfg.signo);
	pthread_sigmask(SIG_BLOCK, &s, old);
}

void probe_restore_mask(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}
