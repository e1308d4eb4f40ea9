/*
 * lost.c - how the summaries say what was lost (see lost.h).
 */
#include "data/lost.h"

#include <inttypes.h>
#include <stdio.h>

#include "util.h"
#include "data/wire_decode.h"

uint64_t lost_total(const uint64_t lost[PROBE_LOST_REASON_MAX])
{
	uint64_t n = 0;
	for (unsigned r = 0; r < PROBE_LOST_REASON_MAX; r++)
		if (r != PROBE_LOST_UNWIND)
			n = sat_add(n, lost[r]);
	return n;
}

void lost_text(const uint64_t lost[PROBE_LOST_REASON_MAX], char *buf, size_t cap)
{
	size_t n = 0;
	const char *sep = " (";
#define PUT(...) do { \
		int k_ = snprintf(buf + n, cap - n, __VA_ARGS__); \
		if (k_ > 0) n = (size_t)k_ < cap - n ? n + (size_t)k_ : cap - 1; \
	} while (0)
	if (!cap)
		return;
	buf[0] = 0;
	PUT("lost: %" PRIu64, lost_total(lost));
	for (unsigned r = 0; r < PROBE_LOST_REASON_MAX; r++) {
		if (!lost[r] || r == PROBE_LOST_UNWIND)
			continue;
		PUT("%s%" PRIu64 " %s", sep, lost[r], probe_lost_reason_name(r));
		sep = ", ";
	}
	if (sep[0] == ',')
		PUT(")");
	if (lost[PROBE_LOST_UNWIND])
		PUT("; truncated: %" PRIu64 " (%s)", lost[PROBE_LOST_UNWIND],
		    probe_lost_reason_name(PROBE_LOST_UNWIND));
#undef PUT
}
