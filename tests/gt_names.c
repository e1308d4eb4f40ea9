/*
 * gt_names - ground truth for how probe top fits names: all its time is
 * in one function whose name is wider than any name column top draws
 * (tests/75-top-names.t).
 *   gt_names [UNITS]   (default 600 units of gt_work.h, about 0.1 s of CPU)
 */
#include <stdio.h>
#include <stdlib.h>

#include "gt_work.h"

GT_KEEP static void names_a_function_whose_name_is_wider_than_the_column(long units)
{
	GT_SPIN(units, 1.0);
}

int main(int argc, char **argv)
{
	long units = argc > 1 ? atol(argv[1]) : 600;
	names_a_function_whose_name_is_wider_than_the_column(units);
	printf("checksum %.6g\n", gt_sink > 0 ? 1.0 : 0.0);
	return 0;
}
