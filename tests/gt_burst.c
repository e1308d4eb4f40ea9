/*
 * gt_burst - page faults in a burst, on one thread: touch PAGES fresh pages
 * of an anonymous mapping (one write each), as fast as it can (RATE 0) or
 * paced to RATE faults a second (a busy wait, no sleep: the thread stays on
 * the CPU, as a program filling memory does).
 *   gt_burst PAGES [RATE]
 * Prints "faults N seconds S rate R": the pages touched, the time the
 * touching took and the rate that came of it (a test checks the rate was
 * reached, load may make it lower).  The faults are in touch_pages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "gt_work.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

GT_KEEP static double touch_pages(long pages, double rate)
{
	long page = sysconf(_SC_PAGESIZE);
	volatile char *p = mmap(NULL, (size_t)(pages * page), PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double t0 = now_s();

	if (p == MAP_FAILED) {
		perror("gt_burst: mmap");
		exit(1);
	}
	for (long i = 0; i < pages; i++) {
		if (rate > 0)
			while (now_s() - t0 < (double)i / rate)
				;
		p[i * page] = 1;
	}
	return now_s() - t0;
}

int main(int argc, char **argv)
{
	long pages = argc > 1 ? atol(argv[1]) : 51200;
	double rate = argc > 2 ? atof(argv[2]) : 0;
	double s;

	if (pages <= 0 || rate < 0) {
		fprintf(stderr, "usage: gt_burst PAGES [RATE]\n");
		return 2;
	}
	s = touch_pages(pages, rate);
	printf("faults %ld seconds %.4f rate %.0f\n", pages, s, (double)pages / s);
	return 0;
}
