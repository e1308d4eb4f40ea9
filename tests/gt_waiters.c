/*
 * gt_waiters - ground truth for sampling a running process from outside
 * (probe record -p, tests/46-outside.t): two threads spin in spin_a and
 * spin_b (the same work, so 50/50 of the samples), one waits in read() on
 * a pipe nobody writes, one sleeps 20 ms at a time in nanosleep().
 *   gt_waiters
 * Prints "ready" once its four threads run; then, on stdout at once, any
 * disturbance a profiler from outside must not cause: "read: ..." when
 * read() returns (EINTR or otherwise), "nanosleep: ..." when nanosleep()
 * fails, "early: ..." when one returns before its 20 ms.  Runs until
 * killed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gt_work.h"

static int pfd[2];

GT_KEEP static void spin_a(void) { for (;;) GT_SPIN(1, 1.0); }
GT_KEEP static void spin_b(void) { for (;;) GT_SPIN(1, 2.0); }

static void *run_a(void *arg) { spin_a(); return arg; }
static void *run_b(void *arg) { spin_b(); return arg; }

static void *reader(void *arg)
{
	char c;
	ssize_t r = read(pfd[0], &c, 1);
	printf("read: returned %zd (%s)\n", r, r < 0 ? strerror(errno) : "data");
	fflush(stdout);
	return arg;
}

static double mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *sleeper(void *arg)
{
	for (;;) {
		struct timespec t = { 0, 20000000 };
		double a = mono();
		if (nanosleep(&t, NULL) != 0)
			printf("nanosleep: %s\n", strerror(errno));
		else if (mono() - a < 0.020)
			printf("early: %.6f s\n", mono() - a);
		fflush(stdout);
	}
	return arg;
}

int main(void)
{
	pthread_t t[4];
	if (pipe(pfd) != 0)
		return 1;
	pthread_create(&t[0], NULL, run_a, NULL);
	pthread_create(&t[1], NULL, run_b, NULL);
	pthread_create(&t[2], NULL, reader, NULL);
	pthread_create(&t[3], NULL, sleeper, NULL);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
