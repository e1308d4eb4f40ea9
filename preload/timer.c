/*
 * timer.c - the fallback when perf events are refused (perf_event_paranoid
 * 3 or 4, a container's seccomp policy, a kernel without them) or when
 * PROBE_TIMER=1: one POSIX timer per thread on that thread's CPU-time clock,
 * signalling that very thread (SIGEV_THREAD_ID) with our realtime signal,
 * the timer's address in si_value.  No privilege is needed.
 *
 * Each expiry is re-armed by the handler with the next interval drawn
 * uniformly from [mean/2, 3 mean/2] (xorshift per thread), so that samples
 * do not fall into lockstep with a periodic program; the mean is the
 * timer's interval too, for when the handler never gets to re-arm it.  The
 * sample's weight is the CPU time the thread really used since the
 * previous one, so the profile is right even where the kernel fires late.
 *
 * What the kernel does with them (CONFIG_POSIX_CPU_TIMERS_TASK_WORK, x86
 * since 5.x): CPU timers are checked on the scheduler tick (250 Hz here)
 * and fire from task work on the way back to user space.  So the real rate
 * is at most the tick rate per thread, and a timer never interrupts a
 * system call (no EINTR).  The collector reports the rate achieved.
 *
 * Raw system calls: the kernel's timer id is what the handler compares,
 * and the program's own timer_create, if it has one interposed, stays out
 * of our way.
 */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

/* clockid of another thread's CPU clock (the kernel's MAKE_THREAD_CPUCLOCK). */
clockid_t probe_thread_cpu_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned)tid << 3) | 4u | 2u);
}

int probe_timer_open(struct probe_thread *t, pid_t tid)
{
	struct sigevent sev;
	int id = -1;

	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = probe_cfg.signo;
	sev.sigev_value.sival_ptr = t;
	sev._sigev_un._tid = tid;
	t->cpu_clock = tid == gettid() ? CLOCK_THREAD_CPUTIME_ID
				       : probe_thread_cpu_clock(tid);
	if (syscall(SYS_timer_create, t->cpu_clock, &sev, &id) < 0)
		return -errno;
	t->timer = id;
	t->rng = (probe_now_ns() ^ ((uint64_t)tid << 32) ^ (uintptr_t)t) | 1;
	return 0;
}

/* SIGNAL CONTEXT. */
uint64_t probe_timer_cpu_ns(struct probe_thread *t)
{
	struct timespec ts;

	if (clock_gettime(t->cpu_clock, &ts) < 0)
		return t->cpu_last;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* SIGNAL CONTEXT. */
void probe_timer_arm(struct probe_thread *t)
{
	struct itimerspec its;
	uint64_t mean = probe_nominal_period(), ns, x = t->rng;

	if (t->timer < 0)
		return;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	t->rng = x;
	ns = mean / 2 + (mean ? x % (mean + 1) : 0);
	if (ns < 1000)
		ns = 1000;
	memset(&its, 0, sizeof its);
	its.it_value.tv_sec = (time_t)(ns / 1000000000ull);
	its.it_value.tv_nsec = (long)(ns % 1000000000ull);
	/*
	 * Then every period, until the handler arms it again: a handler of
	 * the program's can run nested in ours before its first instruction
	 * (both signals delivered at once) and leave with siglongjmp; armed
	 * once only, the thread was never sampled again (gt_signals
	 * nested_jump under PROBE_TIMER=1: 0 samples in 3 runs of 3).
	 */
	its.it_interval.tv_sec = (time_t)(mean / 1000000000ull);
	its.it_interval.tv_nsec = (long)(mean % 1000000000ull);
	t->cpu_last = probe_timer_cpu_ns(t);
	syscall(SYS_timer_settime, t->timer, 0, &its, NULL);
}

/* SIGNAL CONTEXT. */
void probe_timer_stop(struct probe_thread *t)
{
	struct itimerspec its;

	memset(&its, 0, sizeof its);
	if (t->timer >= 0)
		syscall(SYS_timer_settime, t->timer, 0, &its, NULL);
}

/* SIGNAL CONTEXT. */
void probe_timer_close(struct probe_thread *t)
{
	int id = t->timer;

	t->timer = -1;
	if (id >= 0)
		syscall(SYS_timer_delete, id);
}
