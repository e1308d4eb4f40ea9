/*
 * interval.h - lookup in arrays of address intervals sorted by start, the
 * shape of maps (aggregate.c), symbols and DWARF units (symbols.c).
 *
 * interval_upper() is the binary search they share: the index one past the
 * last element whose start is <= addr.  Elements are stride bytes apart and
 * their start is a uint64_t at byte offset start_off.  Callers then walk
 * back from there, stopping where their running maximum of ends no longer
 * reaches addr; what makes a match differs between them.
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

#endif
