/*
 * bench_kill - a program that ends by SIGKILL, which no handler sees.
 *   bench_kill [MS [exit]]
 * Spins on the CPU until its thread has used MS ms (default 1500) of CPU
 * time (CLOCK_THREAD_CPUTIME_ID: its own CPU, whatever else the machine
 * runs), then kill(getpid(), SIGKILL).  A profiler at F Hz should have
 * taken about MS/1000 x F samples; what it kept of them is what it had
 * delivered before the kill.  With "exit" it returns 0 from main instead:
 * the same work, ended the ordinary way (the control).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../tests/gt_work.h"

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

GT_KEEP static void spin(void) { GT_SPIN(1, 1.0); }

int main(int argc, char **argv)
{
	double limit = (argc > 1 ? atof(argv[1]) : 1500) / 1000;
	double t0 = cpu_s();

	while (cpu_s() - t0 < limit)
		spin();
	if (argc > 2 && strcmp(argv[2], "exit") == 0)
		return 0;
	kill(getpid(), SIGKILL);
	return 1;
}
