/*
 * gt_mutex - ground truth for off-CPU time around a contended mutex:
 * threads that take turns at one lock, all on one CPU, so that the thread
 * that unlocks (or signals) is often preempted inside pthread_mutex_unlock
 * (pthread_cond_broadcast) by the waiter it wakes (wake-up preemption).
 *   gt_mutex [SECONDS [THREADS [cond]]]     (default 1.5 s, 3 threads)
 * Each thread loops { lock_here: pthread_mutex_lock; [cond: wait_here:
 * pthread_cond_wait until it is its turn]; held_here: work [cond: and
 * pass the turn]; unlock_here: pthread_mutex_unlock; [cond: wake_here:
 * pthread_cond_broadcast]; free_here: work } and times itself with
 * CLOCK_MONOTONIC (wall) and its thread CPU clock.
 * Prints on stdout, summed over the threads (ns):
 *   wall_ns W       the threads' wall time, from start to end of the loop
 *   cpu_ns C        their CPU time over the same
 *   lock_ns L       wall time inside pthread_mutex_lock
 *   unlock_ns U     wall time inside pthread_mutex_unlock
 *   wait_ns A       wall time inside pthread_cond_wait (cond)
 *   wake_ns K       wall time inside pthread_cond_broadcast (cond)
 *   calls_cpu_ns P  CPU time inside those four calls (their system calls)
 *   rest_ns R       W - C - (L + U + A + K - P): the time off the CPU
 *                   outside those calls (preempted while working)
 *   cpus N          how many CPUs it ran on (1 unless pinning failed)
 * Exits 0; 1 (with a message) when a call it needs fails.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE             /* sched_setaffinity, sched_getcpu */
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gt_work.h"

#define WORK_ITERS 20000        /* about 50 us of CPU per piece of work */
#define MAX_THREADS 16

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_cv;         /* on CLOCK_MONOTONIC, as deadline */
static long deadline;
static int cond_mode, nthreads, turn;   /* turn: under lock */

struct worker {
	pthread_t id;
	int me;
	long wall, cpu, in_lock, in_unlock, in_wait, in_wake;
	long cpu_in_calls;      /* CPU time inside those calls */
};

static void die(const char *what, int e)
{
	fprintf(stderr, "gt_mutex: %s: %s\n", what, strerror(e));
	exit(1);
}

static long now_ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts) < 0)
		die("clock_gettime", errno);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/*
 * A call's span: started with the CPU clock read before the wall clock,
 * ended after, so the CPU time the call used (its system calls) is within.
 */
struct span {
	long wall, cpu;
};

static struct span span_start(void)
{
	struct span sp;

	sp.cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
	sp.wall = now_ns(CLOCK_MONOTONIC);
	return sp;
}

/* The span's wall time; its CPU time goes to w->cpu_in_calls. */
static long span_end(struct span sp, struct worker *w)
{
	long wall = now_ns(CLOCK_MONOTONIC) - sp.wall;

	w->cpu_in_calls += now_ns(CLOCK_THREAD_CPUTIME_ID) - sp.cpu;
	return wall;
}

GT_KEEP static void work(long seed)
{
	double x = (double)seed;

	for (long i = 0; i < WORK_ITERS; i++)
		x = x * 1.0000001 + 0.25;
	gt_sink += x;
}

GT_KEEP static void held_here(void) { work(1); }
GT_KEEP static void free_here(void) { work(2); }

GT_KEEP static void lock_here(struct worker *w)
{
	struct span sp = span_start();
	int e = pthread_mutex_lock(&lock);

	if (e)
		die("pthread_mutex_lock", e);
	w->in_lock += span_end(sp, w);
}

GT_KEEP static void unlock_here(struct worker *w)
{
	struct span sp = span_start();
	int e = pthread_mutex_unlock(&lock);

	if (e)
		die("pthread_mutex_unlock", e);
	w->in_unlock += span_end(sp, w);
}

/* Until it is w's turn, or the time is up (then no one waits forever). */
GT_KEEP static void wait_here(struct worker *w)
{
	struct span sp = span_start();

	while (turn != w->me && turn >= 0) {
		struct timespec dl = { deadline / 1000000000L, deadline % 1000000000L };
		int e = pthread_cond_timedwait(&turn_cv, &lock, &dl);

		if (e == ETIMEDOUT)
			turn = -1;
		else if (e)
			die("pthread_cond_timedwait", e);
	}
	w->in_wait += span_end(sp, w);
}

/* The turn was passed under the lock; the waiters are woken after it. */
GT_KEEP static void wake_here(struct worker *w)
{
	struct span sp = span_start();
	int e;

	if ((e = pthread_cond_broadcast(&turn_cv)))
		die("pthread_cond_broadcast", e);
	w->in_wake += span_end(sp, w);
}

static void *run(void *arg)
{
	struct worker *w = arg;
	long t0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);

	while (now_ns(CLOCK_MONOTONIC) < deadline) {
		lock_here(w);
		if (cond_mode)
			wait_here(w);
		held_here();
		if (cond_mode && turn >= 0)
			turn = (w->me + 1) % nthreads;
		unlock_here(w);
		if (cond_mode)
			wake_here(w);
		free_here();
	}
	w->wall = now_ns(CLOCK_MONOTONIC) - t0;
	w->cpu = now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	return NULL;
}

/* All threads on the CPU main runs on: wake-ups then preempt the waker. */
static int pin(void)
{
	cpu_set_t one;
	int cpu = sched_getcpu();

	CPU_ZERO(&one);
	CPU_SET(cpu < 0 ? 0 : cpu, &one);
	if (sched_setaffinity(0, sizeof one, &one) == 0)
		return 1;
	return CPU_COUNT(&one);
}

int main(int argc, char **argv)
{
	static struct worker w[MAX_THREADS];
	double seconds = argc > 1 ? atof(argv[1]) : 1.5;
	int n = argc > 2 ? atoi(argv[2]) : 3, cpus = pin(), e;
	long wall = 0, cpu = 0, in_lock = 0, in_unlock = 0, in_wait = 0, in_wake = 0,
	     in_calls = 0;

	cond_mode = argc > 3 && strcmp(argv[3], "cond") == 0;
	if (n < 1 || n > MAX_THREADS || seconds <= 0 || (argc > 3 && !cond_mode)) {
		fprintf(stderr, "usage: gt_mutex [SECONDS [THREADS (1-%d) [cond]]]\n",
			MAX_THREADS);
		return 1;
	}
	nthreads = n;
	{
		pthread_condattr_t ca;

		if ((e = pthread_condattr_init(&ca)) ||
		    (e = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC)) ||
		    (e = pthread_cond_init(&turn_cv, &ca)))
			die("pthread_cond_init", e);
	}
	deadline = now_ns(CLOCK_MONOTONIC) + (long)(seconds * 1e9);
	for (int i = 0; i < n; i++)
		w[i].me = i;
	for (int i = 0; i < n; i++)
		if ((e = pthread_create(&w[i].id, NULL, run, &w[i])))
			die("pthread_create", e);
	for (int i = 0; i < n; i++) {
		if ((e = pthread_join(w[i].id, NULL)))
			die("pthread_join", e);
		wall += w[i].wall;
		cpu += w[i].cpu;
		in_lock += w[i].in_lock;
		in_unlock += w[i].in_unlock;
		in_wait += w[i].in_wait;
		in_wake += w[i].in_wake;
		in_calls += w[i].cpu_in_calls;
	}
	printf("wall_ns %ld\ncpu_ns %ld\nlock_ns %ld\nunlock_ns %ld\nwait_ns %ld\n"
	       "wake_ns %ld\ncalls_cpu_ns %ld\nrest_ns %ld\ncpus %d\n", wall, cpu,
	       in_lock, in_unlock, in_wait, in_wake, in_calls,
	       wall - cpu - (in_lock + in_unlock + in_wait + in_wake - in_calls), cpus);
	return 0;
}
