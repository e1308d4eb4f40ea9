/*
 * events.h - the perf events probe knows by name, one table for both
 * sides: the collector (-e, probe list; collector/session/events.c) and
 * libprobe (PROBE_EVENT; preload/config.c).
 *
 * Contract: PROBE_EVENT_DEFS initializes an array of struct
 * probe_event_def, perf's names (and perf list's "NAME OR ALIAS") with
 * their attr type and config; record says what probe record -e does with
 * it: 0 not sampled (it counts nothing by itself), 1 libprobe knows the
 * name (PROBE_EVENT=NAME), 2 libprobe takes it as an attr
 * (PROBE_EVENT_ATTR: the collector passes type and config).
 */
#ifndef PROBE_SHARED_EVENTS_H
#define PROBE_SHARED_EVENTS_H

#include <linux/perf_event.h>
#include <stdint.h>

struct probe_event_def {
	const char *name, *alias;       /* alias: perf's "NAME OR ALIAS", or NULL */
	uint32_t type;
	uint64_t config;
	int record;                     /* 0, 1 or 2: see above */
};

/* A PERF_TYPE_HW_CACHE config: cache id, operation, result. */
#define PROBE_HWC(id, op, res) ((uint64_t)(id) | (uint64_t)(op) << 8 | (uint64_t)(res) << 16)

#define PROBE_EVENT_DEFS { \
	{ "alignment-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, 1 }, \
	{ "bpf-output", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, 0 }, \
	{ "cgroup-switches", NULL, PERF_TYPE_SOFTWARE, 11 /* PERF_COUNT_SW_CGROUP_SWITCHES */, 2 }, \
	{ "context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 1 }, \
	{ "cpu-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 1 }, \
	{ "cpu-migrations", "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 1 }, \
	{ "dummy", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, 0 }, \
	{ "emulation-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, 1 }, \
	{ "major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, 1 }, \
	{ "minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, 1 }, \
	{ "page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 1 }, \
	{ "task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 1 }, \
	{ "branch-instructions", "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 1 }, \
	{ "branch-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, 1 }, \
	{ "bus-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, 1 }, \
	{ "cache-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, 1 }, \
	{ "cache-references", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, 1 }, \
	{ "cpu-cycles", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 1 }, \
	{ "instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 1 }, \
	{ "ref-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, 1 }, \
	{ "stalled-cycles-backend", "idle-cycles-backend", PERF_TYPE_HARDWARE, \
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND, 1 }, \
	{ "stalled-cycles-frontend", "idle-cycles-frontend", PERF_TYPE_HARDWARE, \
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, 1 }, \
	{ "L1-dcache-loads", NULL, PERF_TYPE_HW_CACHE, PROBE_HWC(0, 0, 0), 2 }, \
	{ "L1-dcache-load-misses", NULL, PERF_TYPE_HW_CACHE, PROBE_HWC(0, 0, 1), 2 }, \
	{ "L1-dcache-stores", NULL, PERF_TYPE_HW_CACHE, PROBE_HWC(0, 1, 0), 2 }, \
	{ "L1-icache-load-misses", NULL, PERF_TYPE_HW_CACHE, PROBE_HWC(1, 0, 1), 2 }, \
	{ "LLC-loads", NULL, PERF_TYPE_HW_CACHE, PROBE_HWC(2, 0, 0), 2 }, \
	{ "LLC-load-misses", NULL, PERF_TYPE_HW_CACHE, PROBE_HWC(2, 0, 1), 2 }, \
	{ "LLC-stores", NULL, PERF_TYPE_HW_CACHE, PROBE_HWC(2, 1, 0), 2 }, \
	{ "LLC-store-misses", NULL, PERF_TYPE_HW_CACHE, PROBE_HWC(2, 1, 1), 2 }, \
	{ "dTLB-loads", NULL, PERF_TYPE_HW_CACHE, PROBE_HWC(3, 0, 0), 2 }, \
	{ "dTLB-load-misses", NULL, PERF_TYPE_HW_CACHE, PROBE_HWC(3, 0, 1), 2 }, \
	{ "iTLB-loads", NULL, PERF_TYPE_HW_CACHE, PROBE_HWC(4, 0, 0), 2 }, \
	{ "iTLB-load-misses", NULL, PERF_TYPE_HW_CACHE, PROBE_HWC(4, 0, 1), 2 }, \
	{ "branch-loads", NULL, PERF_TYPE_HW_CACHE, PROBE_HWC(5, 0, 0), 2 }, \
	{ "branch-load-misses", NULL, PERF_TYPE_HW_CACHE, PROBE_HWC(5, 0, 1), 2 }, \
}

#endif
