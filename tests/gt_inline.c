/*
 * gt_inline - ground truth for inline frames: two always_inline functions,
 * inline_three and inline_one, do 3:1 units of work inside one real
 * function (work), and inline_three reaches its loop through a second
 * inlined level (inline_outer).  Built -O2 -g: DWARF describes the inlined
 * instances; the symbol table knows only work and main.
 *   gt_inline [ROUNDS]
 * A profile with inline frames must show "inline_three [inlined]" and
 * "inline_one [inlined]" at 75/25 % of the samples, under work, and
 * inline_three under "inline_outer [inlined]".  Each loop is one source
 * line (marked HOT3 and HOT1) so that a profile by line shows those lines.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gt_work.h"

static inline __attribute__((always_inline)) double inline_three(double x)
{
	for (long u = 0; u < 3L * GT_UNIT; u++) x = x * 1.0000001 + 0.25; /* HOT3 */
	return x;
}

static inline __attribute__((always_inline)) double inline_outer(double x)
{
	return inline_three(x) + 1.0;
}

static inline __attribute__((always_inline)) double inline_one(double x)
{
	for (long u = 0; u < 1L * GT_UNIT; u++) x = x * 1.0000001 + 0.5; /* HOT1 */
	return x;
}

GT_KEEP static double work(double x)
{
	x = inline_outer(x);
	x = inline_one(x);
	return x;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 300;
	double x = 1.0;
	for (long r = 0; r < rounds; r++)
		x = work(x) * 1e-9;
	gt_sink += x;
	printf("checksum %.6g\n", gt_sink > 0 ? 1.0 : 0.0);
	return 0;
}
