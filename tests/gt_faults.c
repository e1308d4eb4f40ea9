/*
 * gt_faults - ground truth for several events in one run (-e a,b):
 * touch_pages makes PAGES page faults ROUNDS times (a fresh anonymous
 * mapping each time, one write per page), then spin works for UNITS units
 * of CPU work.
 *   gt_faults [PAGES [ROUNDS [UNITS]]]    (default 20000, 10 and 300)
 * cpu-clock's samples are nearly all in spin, page-faults' nearly all in
 * touch_pages, whose weights add up to PAGES x ROUNDS and the few faults of the
 * start and the end (perf stat -e page-faults counts them all).  Its last
 * line is the ground truth for cpu-clock's share of spin in this very run:
 * spin's CPU time (its thread's clock) and the process's CPU time so far,
 * kernel time included, as a profiler that samples the kernel sees it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "gt_work.h"

GT_KEEP static void touch_pages(long pages)
{
	long page = sysconf(_SC_PAGESIZE);
	volatile char *p = mmap(NULL, (size_t)(pages * page), PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("gt_faults: mmap");
		exit(1);
	}
	for (long i = 0; i < pages; i++)
		p[i * page] = 1;
	munmap((void *)p, (size_t)(pages * page));
}

static long long cpu_us(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

GT_KEEP static void spin(long units)
{
	GT_SPIN(units, 1.0);
}

int main(int argc, char **argv)
{
	long pages = argc > 1 ? atol(argv[1]) : 20000;
	long rounds = argc > 2 ? atol(argv[2]) : 10;
	long units = argc > 3 ? atol(argv[3]) : 300;

	for (long r = 0; r < rounds; r++)
		touch_pages(pages);
	long long before = cpu_us(CLOCK_THREAD_CPUTIME_ID);
	spin(units);
	long long spun = cpu_us(CLOCK_THREAD_CPUTIME_ID) - before;
	printf("touched %ld pages %ld times, %ld units of work\n", pages, rounds,
	       units);
	printf("cpu: spin %lld us of %lld us\n", spun,
	       cpu_us(CLOCK_PROCESS_CPUTIME_ID));
	return 0;
}
