/*
 * gt_leaf - ground truth: three leaf functions called in the ratio 5:3:2.
 *   gt_leaf [ROUNDS [EXIT_CODE]]
 * Prints one line per 100 rounds and a checksum, exits with EXIT_CODE (0).
 * A profile must show leaf_five, leaf_three and leaf_two at 50/30/20 % of
 * the samples (main's own loop is negligible).
 */
#include <stdio.h>
#include <stdlib.h>

#include "gt_work.h"

GT_KEEP static void leaf_five(void) { GT_SPIN(5, 1.0); }
GT_KEEP static void leaf_three(void) { GT_SPIN(3, 2.0); }
GT_KEEP static void leaf_two(void) { GT_SPIN(2, 3.0); }

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 300;
	int code = argc > 2 ? atoi(argv[2]) : 0;
	for (long r = 1; r <= rounds; r++) {
		leaf_five();
		leaf_three();
		leaf_two();
		if (r % 100 == 0)
			printf("round %ld\n", r);
	}
	printf("checksum %.6g\n", gt_sink > 0 ? 1.0 : 0.0);
	return code;
}
