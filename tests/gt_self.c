/*
 * gt_self - ground truth for "the program runs as it would without probe".
 *   gt_self threads        prints its own thread count (/proc/self/status)
 *                          and glibc's __libc_single_threaded
 *   gt_self kill MS        spins MS ms of its own CPU time in spin_kill(),
 *                          then SIGKILLs itself
 * A profiler with a thread of its own in the program shows "Threads: 2"
 * and "single_threaded 0" (glibc's stdio and malloc then take locks).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <time.h>
#include <unistd.h>

#include "gt_work.h"

static int threads(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 1;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "Threads:", 8))
			fputs(line, stdout);
	fclose(f);
	printf("single_threaded %d\n", (int)__libc_single_threaded);
	return 0;
}

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

GT_KEEP static void spin_kill(double ms)
{
	while (cpu_ms() < ms)
		GT_SPIN(1, 1.0);
	kill(getpid(), SIGKILL);
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "threads";

	if (!strcmp(m, "threads"))
		return threads();
	if (!strcmp(m, "kill")) {
		spin_kill(argc > 2 ? atof(argv[2]) : 1500);
		return 1;
	}
	fprintf(stderr, "usage: gt_self threads | kill [MS]\n");
	return 2;
}
