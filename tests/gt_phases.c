/*
 * gt_phases - ground truth for probe record -D: phase_one spins for MS
 * milliseconds (wall clock), then phase_two for as long.
 *   gt_phases [MS]     (default 500)
 * Without -D each has half of the samples; with -D 300 and MS 500,
 * phase_one keeps 200 ms of its 500 (2:5 against phase_two).
 */
#include <stdlib.h>
#include <time.h>

#include "gt_work.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

GT_KEEP static void phase_one(double until)
{
	while (now_ms() < until)
		GT_SPIN(1, 1.0);
}

GT_KEEP static void phase_two(double until)
{
	while (now_ms() < until)
		GT_SPIN(1, 2.0);
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 500;
	double t0 = now_ms();
	phase_one(t0 + ms);
	phase_two(t0 + 2 * ms);
	return 0;
}
