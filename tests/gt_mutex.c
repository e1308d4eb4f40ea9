/*
 * gt_mutex - ground truth for off-CPU time around a contended mutex:
 * threads that take turns at one lock, all on one CPU, so that the thread
 * that unlocks is often preempted inside pthread_mutex_unlock by the
 * waiter it wakes (the kernel's wake-up preemption).
 *   gt_mutex [SECONDS [THREADS]]     (default 1.5 s, 3 threads)
 * Each thread loops { lock_here: pthread_mutex_lock; held_here: work;
 * unlock_here: pthread_mutex_unlock; free_here: work } and times itself
 * with CLOCK_MONOTONIC (wall) and its thread CPU clock.
 * Prints on stdout, summed over the threads (ns):
 *   wall_ns W       the threads' wall time, from start to end of the loop
 *   cpu_ns C        their CPU time over the same
 *   lock_ns L       wall time inside pthread_mutex_lock
 *   unlock_ns U     wall time inside pthread_mutex_unlock
 *   rest_ns R       W - C - L - U: off the CPU outside both calls (preempted
 *                   while working), plus the CPU time inside the calls
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
static long deadline;

struct worker {
	pthread_t id;
	long wall, cpu, in_lock, in_unlock;
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
	long t0 = now_ns(CLOCK_MONOTONIC);
	int e = pthread_mutex_lock(&lock);

	if (e)
		die("pthread_mutex_lock", e);
	w->in_lock += now_ns(CLOCK_MONOTONIC) - t0;
}

GT_KEEP static void unlock_here(struct worker *w)
{
	long t0 = now_ns(CLOCK_MONOTONIC);
	int e = pthread_mutex_unlock(&lock);

	if (e)
		die("pthread_mutex_unlock", e);
	w->in_unlock += now_ns(CLOCK_MONOTONIC) - t0;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	long t0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);

	while (now_ns(CLOCK_MONOTONIC) < deadline) {
		lock_here(w);
		held_here();
		unlock_here(w);
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
	long wall = 0, cpu = 0, in_lock = 0, in_unlock = 0;

	if (n < 1 || n > MAX_THREADS || seconds <= 0) {
		fprintf(stderr, "usage: gt_mutex [SECONDS [THREADS (1-%d)]]\n", MAX_THREADS);
		return 1;
	}
	deadline = now_ns(CLOCK_MONOTONIC) + (long)(seconds * 1e9);
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
	}
	printf("wall_ns %ld\ncpu_ns %ld\nlock_ns %ld\nunlock_ns %ld\nrest_ns %ld\ncpus %d\n",
	       wall, cpu, in_lock, in_unlock, wall - cpu - in_lock - in_unlock, cpus);
	return 0;
}
