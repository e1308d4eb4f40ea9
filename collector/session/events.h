/*
 * events.h - the events `probe record -e` (and `probe top -e`, `probe list`)
 * know, in perf's spelling.
 *
 * Contract:
 *   - event_parse(SPEC) takes what a perf user types for one event:
 *       NAME[:MODS]           a named event (cpu-clock, cycles, ...)
 *       rHEX[:MODS]           a raw event of the CPU's PMU (PERF_TYPE_RAW)
 *       PMU/TERM=V,.../[MODS] PMU's type from /sys/bus/event_source/devices;
 *                             terms config, config1, config2 and those the
 *                             PMU's format/ directory names
 *     with MODS u (user space only), k (kernel only) or uk (both).  It fills
 *     *ev and returns 0, or returns -1 with one sentence in err saying what
 *     is wrong and what to do (several events, a PMU this machine lacks, a
 *     modifier probe does not take, kernel samples the user may not take).
 *   - A named event is passed to libprobe unchanged (PROBE_EVENT), which
 *     opens it or, for a hardware event the machine lacks, falls back to
 *     cpu-clock and says so.  Raw and PMU events go as PROBE_EVENT (the
 *     spelling, for the report) + PROBE_EVENT_ATTR (TYPE:CONFIG:CONFIG1:
 *     CONFIG2); modifiers as PROBE_EVENT_MODIFIER (u, k or uk), which
 *     overrides libprobe's own choice (PROBE_KERNEL).
 *   - event_kernel_refused() is 0 when this process may sample kernel
 *     time (perf_event_open with exclude_user on itself), else the errno.
 *   - events_table() lists the named events for probe list.
 */
#ifndef PROBE_EVENTS_H
#define PROBE_EVENTS_H

#include <stddef.h>
#include <stdint.h>

struct event_spec {
	char name[128];         /* PROBE_EVENT: the spelling without modifiers */
	char modifier[4];       /* "", "u", "k" or "uk" */
	int has_attr;           /* raw or PMU event: libprobe takes the attr
				   below (a named one: type and config are
				   set too, for cmdopt's extra events) */
	uint32_t type;
	uint64_t config, config1, config2;
};

#include "probe/events.h"
#define event_def probe_event_def       /* the shared table's entries */

int event_parse(const char *spec, struct event_spec *ev, char *err, size_t errlen);
int event_kernel_refused(void);
/* kernel.perf_event_paranoid as /proc says it ("?" when it cannot be read), in buf. */
const char *event_paranoid(char *buf, size_t n);
/* 0 when this process can open that sampling event (as libprobe does), else errno. */
int event_try_open(uint32_t type, uint64_t config, uint64_t config1, uint64_t config2,
		   int kernel);
const struct event_def *events_table(size_t *n);
/* "cpu-clock, task-clock, ..." for messages and help. */
const char *event_list(void);

#endif
