/*
 * events.h - the event names `probe record -e` accepts (perf's spelling).
 *
 * Contract: event_known() says whether NAME is one of them; the name is
 * passed to libprobe unchanged (PROBE_EVENT), which opens it or, for a
 * hardware event the machine lacks, falls back to cpu-clock and says so.
 */
#ifndef PROBE_EVENTS_H
#define PROBE_EVENTS_H

int event_known(const char *name);
/* "cpu-clock, task-clock, ..." for messages and help. */
const char *event_list(void);

#endif
