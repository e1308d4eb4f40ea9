/*
 * gt_work.h - the unit of CPU work shared by the ground-truth programs.
 *
 * One unit is a fixed dependency chain of floating-point operations, so its
 * cost is the same wherever it runs; the programs call it in known
 * proportions and the tests check that probe measures those proportions.
 * GT_UNIT is the same in every program so shares are comparable.
 */
#ifndef GT_WORK_H
#define GT_WORK_H

#define GT_UNIT 200000

/*
 * GT_KEEP keeps a function whole and separately named at -O2: gcc's noipa
 * also stops identical-code folding and interprocedural shortcuts; clang has
 * no noipa, and noinline is what it needs.
 */
#ifdef __clang__
#define GT_KEEP __attribute__((noinline))
#else
#define GT_KEEP __attribute__((noipa))
#endif

/* Defined as a macro so each leaf gets its own copy of the loop. */
#define GT_SPIN(units, seed)                                              \
	do {                                                              \
		double x_ = (seed);                                       \
		for (long u_ = 0; u_ < (long)(units) * GT_UNIT; u_++)     \
			x_ = x_ * 1.0000001 + 0.25;                       \
		gt_sink += x_;                                            \
	} while (0)

static volatile double gt_sink;

#endif
