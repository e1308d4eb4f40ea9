/*
 * gt_waiters - ground truth for sampling a running process from outside
 * (probe record -p, tests/46-outside.t): two threads spin in spin_a and
 * spin_b (the same work, so 50/50 of the samples), one waits in read() on
 * a pipe nobody writes, one sleeps 20 ms at a time in nanosleep().
 *   gt_waiters
 * Prints "ready" once its four threads run and the reader sleeps in read()
 * (so a recording started after "ready" finds it blocked since before;
 * main prints it just before pause(): a test waits for main's state S
 * too, tests/47-outside-offcpu.t); then, on stdout at once, any
 * disturbance a profiler from outside must not cause: "read: ..." when
 * read() returns (EINTR or otherwise), "nanosleep: ..." when nanosleep()
 * fails, "early: ..." when one returns before its 20 ms.  Runs until
 * killed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE             /* gettid; the Makefile passes -D */
#endif
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gt_work.h"

static int pfd[2];
static atomic_int reader_tid;

GT_KEEP static void spin_a(void) { for (;;) GT_SPIN(1, 1.0); }
GT_KEEP static void spin_b(void) { for (;;) GT_SPIN(1, 2.0); }

static void *run_a(void *arg) { spin_a(); return arg; }
static void *run_b(void *arg) { spin_b(); return arg; }

static void *reader(void *arg)
{
	char c;
	atomic_store(&reader_tid, (int)gettid());
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

/* The state letter of thread tid of this process ('?' if unreadable). */
static char task_state(int tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	char *close = strrchr(buf, ')');
	return close && close[1] == ' ' ? close[2] : '?';
}

/* Until the reader sleeps in read(): 10 s at most, then "ready" anyway. */
static void wait_reader(void)
{
	struct timespec ms = { 0, 1000000 };
	for (int i = 0; i < 10000; i++) {
		int tid = atomic_load(&reader_tid);
		if (tid && task_state(tid) == 'S')
			return;
		nanosleep(&ms, NULL);
	}
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
	wait_reader();
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
