/*
 * lost.h - how the summaries (probe record, probe report, probe top) say
 * what was lost.
 *
 * Contract: lost_total() counts the samples that are missing from a
 * recording, by every reason but PROBE_LOST_UNWIND: those samples are in
 * it, kept with their leaf frame only, and are said apart as "truncated".
 * lost_text() writes "lost: N (n1 reason1, n2 reason2)" and, when there are
 * any, "; truncated: M (stack not unwound)" into buf.
 */
#ifndef PROBE_LOST_H
#define PROBE_LOST_H

#include <stddef.h>
#include <stdint.h>

#include "probe/wire.h"

uint64_t lost_total(const uint64_t lost[PROBE_LOST_REASON_MAX]);
void lost_text(const uint64_t lost[PROBE_LOST_REASON_MAX], char *buf, size_t cap);

#endif
