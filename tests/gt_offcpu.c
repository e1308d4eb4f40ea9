/*
 * gt_offcpu - ground truth for off-CPU (wall-clock) profiling: one thread
 * that alternates CPU work and sleep, and three that stay blocked.
 *   gt_offcpu [SECONDS]     (default 2.0)
 * For SECONDS of wall time:
 *   main     loop { compute_here: 5 ms of thread CPU;
 *                   sleep_here: one 15 ms nanosleep }
 *   gt-cond  wait_cond_here: pthread_cond_wait, signalled only at the end
 *   gt-read  wait_read_here: read on an empty pipe, written only at the end
 *   gt-poll  wait_poll_here: poll (no timeout) on another empty pipe
 * So a wall-clock profile of main splits about 1:3 between compute_here and
 * sleep_here (the exact split is printed), and each waiting thread spends
 * the whole run in its one frame.  Nothing here sends a signal, so every
 * EINTR or early return is one a profiler caused.
 * Prints on stdout:
 *   cycles N         main loop iterations
 *   compute_ns X     thread CPU ns main spent in compute_here
 *   sleep_ns Y       wall ns main spent in sleep_here
 *   main_wall_ns Z   wall ns of main's whole loop
 *   eintr E          EINTR returns seen, all threads
 *   short S          sleeps that ended early, plus unexpected returns
 * Exits 0; 1 (with a message) when a system call it needs fails.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE             /* pthread_setname_np; the Makefile passes -D */
#endif
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gt_work.h"

/*
 * Longer than the scheduler's tick (4 ms at 250 Hz): the CPU-time timers
 * are checked on the tick, and a thread that runs 1 ms after each wakeup
 * can be started just after a tick each time on a busy machine (a woken
 * thread waits for the tick to preempt the busy one), so that no tick ever
 * lands while it runs: its timer then never fires (seen: 4 samples in the
 * first 40 ms of a 2 s run, then none; the compute share 1.09 % for 5.06 %).
 */
#define COMPUTE_NS 5000000L     /* CPU per compute_here */
#define SLEEP_NS 15000000L      /* requested per sleep_here */

/* Anomalies one thread saw; each thread owns one, main reads after join. */
struct counts {
	long eintr;
	long odd;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int done;                /* the cond predicate, under lock */
static int read_pipe[2], poll_pipe[2];

static void die(const char *what)
{
	fprintf(stderr, "gt_offcpu: %s: %s\n", what, strerror(errno));
	exit(1);
}

static long now_ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts) < 0)
		die("clock_gettime");
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* GT_SPIN's loop, bounded by CPU time rather than a unit count. */
GT_KEEP static void compute_here(void)
{
	long start = now_ns(CLOCK_THREAD_CPUTIME_ID);
	double x = 1.0;

	do {
		for (int i = 0; i < 4096; i++)
			x = x * 1.0000001 + 0.25;
	} while (now_ns(CLOCK_THREAD_CPUTIME_ID) - start < COMPUTE_NS);
	gt_sink += x;
}

/* No retry: an interrupted sleep is what the test wants to count. */
GT_KEEP static void sleep_here(struct counts *c)
{
	struct timespec ts = { 0, SLEEP_NS };
	long start = now_ns(CLOCK_MONOTONIC);

	if (nanosleep(&ts, NULL) < 0) {
		if (errno == EINTR)
			c->eintr++;
		else
			c->odd++;
	} else if (now_ns(CLOCK_MONOTONIC) - start < SLEEP_NS) {
		c->odd++;
	}
}

GT_KEEP static void wait_cond_here(struct counts *c)
{
	pthread_mutex_lock(&lock);
	while (!done)
		if (pthread_cond_wait(&cond, &lock) != 0)
			c->odd++;
	pthread_mutex_unlock(&lock);
}

/* Retries EINTR (counted) so the thread stays blocked until the end. */
GT_KEEP static void wait_read_here(struct counts *c)
{
	char b;

	for (;;) {
		ssize_t n = read(read_pipe[0], &b, 1);

		if (n == 1)
			return;
		if (n < 0 && errno == EINTR) {
			c->eintr++;
			continue;
		}
		c->odd++;       /* EOF or an error: waiting longer won't help */
		return;
	}
}

GT_KEEP static void wait_poll_here(struct counts *c)
{
	struct pollfd pf = { poll_pipe[0], POLLIN, 0 };

	for (;;) {
		int n = poll(&pf, 1, -1);

		if (n < 0 && errno == EINTR) {
			c->eintr++;
		} else if (n == 0) {
			c->odd++;       /* a timeout, with none asked for */
		} else {
			if (n != 1 || !(pf.revents & POLLIN))
				c->odd++;
			return;
		}
	}
}

static void *cond_thread(void *arg)
{
	pthread_setname_np(pthread_self(), "gt-cond");
	wait_cond_here(arg);
	return NULL;
}

static void *read_thread(void *arg)
{
	pthread_setname_np(pthread_self(), "gt-read");
	wait_read_here(arg);
	return NULL;
}

static void *poll_thread(void *arg)
{
	pthread_setname_np(pthread_self(), "gt-poll");
	wait_poll_here(arg);
	return NULL;
}

/* What main's loop measured of itself. */
struct totals {
	long cycles, compute, slept, wall;
};

/* Main's loop; adds its anomalies to *c. */
static void run_main(double seconds, struct totals *r, struct counts *c)
{
	long t0 = now_ns(CLOCK_MONOTONIC), limit = (long)(seconds * 1e9);

	while (now_ns(CLOCK_MONOTONIC) - t0 < limit) {
		long c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		compute_here();
		r->compute += now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;

		long w0 = now_ns(CLOCK_MONOTONIC);
		sleep_here(c);
		r->slept += now_ns(CLOCK_MONOTONIC) - w0;
		r->cycles++;
	}
	r->wall = now_ns(CLOCK_MONOTONIC) - t0;
}

/* Let all three waiters go, so they can be joined. */
static void wake_all(void)
{
	pthread_mutex_lock(&lock);
	done = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	if (write(read_pipe[1], "x", 1) != 1 || write(poll_pipe[1], "x", 1) != 1)
		die("write");
}

int main(int argc, char **argv)
{
	static void *(*const fn[3])(void *) = { cond_thread, read_thread, poll_thread };
	struct counts c[4];
	struct totals r = { 0, 0, 0, 0 };
	pthread_t t[3];
	double seconds = 2.0;
	long eintr = 0, odd = 0;

	if (argc > 1) {
		char *end;
		seconds = strtod(argv[1], &end);
		if (*end || !(seconds > 0)) {
			fprintf(stderr, "usage: gt_offcpu [SECONDS]\n");
			return 2;
		}
	}
	memset(c, 0, sizeof c);
	if (pipe(read_pipe) < 0 || pipe(poll_pipe) < 0)
		die("pipe");
	for (int i = 0; i < 3; i++) {
		errno = pthread_create(&t[i], NULL, fn[i], &c[i + 1]);
		if (errno)
			die("pthread_create");
	}
	run_main(seconds, &r, &c[0]);
	wake_all();
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 4; i++) {
		eintr += c[i].eintr;
		odd += c[i].odd;
	}
	printf("cycles %ld\ncompute_ns %ld\nsleep_ns %ld\nmain_wall_ns %ld\n"
	       "eintr %ld\nshort %ld\n",
	       r.cycles, r.compute, r.slept, r.wall, eintr, odd);
	return 0;
}
