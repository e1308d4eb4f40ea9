/*
 * gt_threads - ground truth: four threads named w1..w4 doing 1:2:3:4 units
 * of the same work (plus an idle main thread that only waits).
 *   gt_threads [UNITS_PER_SHARE]
 * A profile grouped by thread must show 10/20/30/40 % of the samples.
 *
 * All four share one CPU (the first the process may use): on this kind of
 * VM two threads on two vCPUs slow each other down by a point or two, so
 * the last thread left running would do its units faster than the others
 * and the "truth" would drift from 1:2:3:4.  Time-sliced on one CPU every
 * unit costs the same.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "gt_work.h"

static long per_share = 100;

GT_KEEP static void work(long units) { GT_SPIN(units, 1.5); }

static void *worker(void *arg)
{
	long n = (long)arg;
	char name[16];
	snprintf(name, sizeof(name), "w%ld", n);
	pthread_setname_np(pthread_self(), name);
	for (long i = 0; i < n * per_share; i++)
		work(1);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[4];
	cpu_set_t cpus, one;
	if (argc > 1)
		per_share = atol(argv[1]);
	CPU_ZERO(&one);
	if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &cpus)) {
				CPU_SET(c, &one);
				sched_setaffinity(0, sizeof(one), &one);
				break;
			}
	for (long i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(i + 1)) != 0) {
			perror("pthread_create");
			return 1;
		}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("threads done\n");
	return 0;
}
