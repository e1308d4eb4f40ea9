/*
 * interval.h - lookup in arrays of address intervals sorted by start, the
 * shape of maps (aggregate.c), symbols and DWARF units (symbols.c).
 *
 * interval_upper() is the binary search they share: the index one past the
 * last element whose start is <= addr.  Elements are stride bytes apart and
 * their start is a uint64_t at byte offset start_off.  Callers then walk
 * back from there, stopping where their running maximum of ends no longer
 * reaches addr (interval_maxend() fills it in, once the array is sorted);
 * what makes a match differs between them.
 */
#ifndef PROBE_INTERVAL_H
#define PROBE_INTERVAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline size_t interval_upper(const void *base, size_t n, size_t stride,
				    size_t start_off, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t start;
		memcpy(&start, (const char *)base + mid * stride + start_off,
		       sizeof(start));
		if (start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* maxend[i] = the largest end (a uint64_t at end_off) of elements 0..i. */
static inline void interval_maxend(const void *base, size_t n, size_t stride,
				   size_t end_off, uint64_t *maxend)
{
	uint64_t mx = 0, end;
	for (size_t i = 0; i < n; i++) {
		memcpy(&end, (const char *)base + i * stride + end_off, sizeof(end));
		if (end > mx)
			mx = end;
		maxend[i] = mx;
	}
}

#endif
