/*
 * gt_recurse - ground truth: nearly all time is spent 60 calls deep.
 *   gt_recurse [REPEATS [DEPTH]]
 * Every sample's stack must show DEPTH frames of descend() down to main.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gt_work.h"

GT_KEEP static void bottom(void) { GT_SPIN(1, 0.5); }

static volatile int gt_depth_seen;

/*
 * The volatile store after the call keeps gcc from turning the recursion
 * into a loop (it does that even for "return descend(d - 1) + 1").
 */
GT_KEEP static int descend(int depth)
{
	if (depth <= 1) {
		bottom();
		return 1;
	}
	int r = descend(depth - 1);
	gt_depth_seen = depth;
	return r + 1;
}

int main(int argc, char **argv)
{
	long repeats = argc > 1 ? atol(argv[1]) : 3000;
	int depth = argc > 2 ? atoi(argv[2]) : 60;
	long sum = 0;
	for (long i = 0; i < repeats; i++)
		sum += descend(depth);
	printf("depth %d sum %ld\n", depth, sum);
	return 0;
}
