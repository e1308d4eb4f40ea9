/*
 * gt_many - many threads at once.
 *   gt_many THREADS UNITS
 * Starts THREADS threads named t0, t1, ... (64 KiB stacks), holds them at a
 * barrier until all exist, then each does UNITS of work and ends.  Prints
 * "THREADS threads done" (or what failed).  A profile by thread name must
 * show every one of them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gt_work.h"

static pthread_barrier_t start;
static long units = 10;

GT_KEEP static void thread_work(long u) { GT_SPIN(u, 1.0); }

static void *worker(void *arg)
{
	char name[16];

	snprintf(name, sizeof name, "t%ld", (long)arg);
	pthread_setname_np(pthread_self(), name);
	pthread_barrier_wait(&start);
	thread_work(units);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	pthread_attr_t attr;
	pthread_t *t;
	int err;

	if (argc > 2)
		units = atol(argv[2]);
	t = calloc((size_t)n, sizeof *t);
	if (!t || n < 1)
		return 2;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	pthread_barrier_init(&start, NULL, (unsigned)n + 1);
	for (long i = 0; i < n; i++) {
		err = pthread_create(&t[i], &attr, worker, (void *)i);
		if (err) {
			printf("pthread_create %ld: %s\n", i, strerror(err));
			return 1;
		}
	}
	pthread_barrier_wait(&start);
	for (long i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("%ld threads done\n", n);
	return 0;
}
