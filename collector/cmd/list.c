/*
 * list.c - `probe list`: the events this machine can sample, as `perf list`
 * prints them (NAME [OR ALIAS] padded, then [Kind]), each followed by
 * whether probe can sample it here for the calling user and, if not, why.
 *
 * Each event is tried with perf_event_open on the calling process, as a
 * sampling event as libprobe opens it, kernel time included only where the
 * user may sample it (root, CAP_PERFMON, perf_event_paranoid <= 1).
 */
#include "cmd/list.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdopt.h"
#include "session/events.h"
#include "util.h"

#define PMU_DIR "/sys/bus/event_source/devices"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static const struct cmd_option list_opts[] = {
	{ 'h', "help", no_argument, NULL, "this help", 0, NULL },
	{ 0, NULL, 0, NULL, NULL, 0, NULL },
};

const struct cmd_spec list_spec = {
	.cmd = "list",
	.in_order = 1,
	.operands = "[sw|hw|cache|pmu|tracepoint]",
	.about =
		"The events probe record -e and probe top -e take, as perf list names\n"
		"them, each marked available or not here, and why: every one is tried\n"
		"as a sampling event of this process (kernel time included where this\n"
		"user may sample it).  With an argument, that group only.\n",
	.opts = list_opts,
};

static void line(const char *name, const char *kind, const char *state)
{
	printf("  %-50s [%s]  %s\n", name, kind, state);
}

/* Why an event cannot be opened, in words. */
static const char *why(int e, uint32_t type)
{
	switch (e) {
	case ENOENT:
	case EOPNOTSUPP:
		if (type == PERF_TYPE_HARDWARE || type == PERF_TYPE_HW_CACHE ||
		    type == PERF_TYPE_RAW)
			return "not supported here: the CPU or hypervisor exposes no such counter";
		return "not supported here: the kernel has no such event";
	case ENODEV:
		return "not supported here: the kernel has no such event";
	case EACCES:
	case EPERM:
		return "not allowed for this user: see /proc/sys/kernel/perf_event_paranoid";
	case EINVAL:
		return "not available: the kernel refuses it as a sampling event (Invalid argument)";
	default:
		return NULL;
	}
}

static void show(const char *name, const char *kind, uint32_t type, uint64_t config,
		 int kernel, int sampleable)
{
	char buf[160];
	int e = event_try_open(type, config, 0, 0, kernel);
	const char *w = why(e, type);
	if (e && !w) {
		snprintf(buf, sizeof(buf), "not available: %s", strerror(e));
		w = buf;
	}
	if (!e && !sampleable)
		w = "not sampled by probe: it counts nothing by itself";
	line(name, kind, e || !sampleable ? w : "available");
}

static int want(const char *group, const char *g)
{
	return !group || strcmp(group, g) == 0;
}

static void pmu_events(int kernel)
{
	DIR *d = opendir(PMU_DIR);
	struct dirent *e;
	char *names[256];
	size_t n = 0;
	if (!d)
		return;
	while ((e = readdir(d)) && n < 256) {
		if (e->d_name[0] == '.')
			continue;
		char path[512];
		snprintf(path, sizeof(path), PMU_DIR "/%.200s/events", e->d_name);
		DIR *ed = opendir(path);
		struct dirent *ee;
		if (!ed)
			continue;
		while ((ee = readdir(ed)) && n < 256) {
			if (ee->d_name[0] == '.' || strchr(ee->d_name, '.'))
				continue;       /* .scale, .unit files */
			names[n++] = xasprintf("%.200s/%.200s/", e->d_name, ee->d_name);
		}
		closedir(ed);
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_str);
	for (size_t i = 0; i < n; i++) {
		struct event_spec ev;
		char err[512];
		if (event_parse(names[i], &ev, err, sizeof(err)) == 0) {
			line(names[i], "Kernel PMU event", "available");
		} else {
			/* "-e NAME: the kernel refuses it ...": the reason, without the name */
			const char *r = strstr(err, ": ");
			char buf[600], *tail = strstr(err, "; 'probe list'");
			if (tail)
				*tail = 0;
			snprintf(buf, sizeof(buf), "not available: %s", r ? r + 2 : err);
			line(names[i], "Kernel PMU event", buf);
		}
		free(names[i]);
	}
	(void)kernel;
}

static void tracepoints(void)
{
	const char *roots[] = { "/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events" };
	unsigned long count = 0;
	for (size_t r = 0; r < 2 && !count; r++) {
		DIR *d = opendir(roots[r]);
		struct dirent *e;
		if (!d)
			continue;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char path[512];
			snprintf(path, sizeof(path), "%s/%.200s", roots[r], e->d_name);
			DIR *sd = opendir(path);
			struct dirent *se;
			if (!sd)
				continue;
			while ((se = readdir(sd)))
				count += se->d_name[0] != '.' && se->d_type == DT_DIR;
			closedir(sd);
		}
		closedir(d);
	}
	char name[64], state[160];
	if (count)
		snprintf(name, sizeof(name), "%lu tracepoints, SYSTEM:NAME", count);
	else
		snprintf(name, sizeof(name), "SYSTEM:NAME");
	snprintf(state, sizeof(state), "not sampled by probe: it samples time, not kernel "
		 "events (perf list names them; perf record -e takes them)");
	line(name, "Tracepoint event", state);
}

int cmd_list(int argc, char **argv)
{
	const char *group = NULL;
	int c;
	opterr = 0;
	optind = 1;
	while ((c = cmdopt_next(argc, argv, &list_spec)) != -1) {
		if (c != 'h')
			return cmd_bad_option("list", c, argv);
		cmdopt_usage(stdout, &list_spec);
		return 0;
	}
	if (argc - optind > 1)
		return cmd_usage_error("list", "one group at most (sw, hw, cache, pmu or "
				       "tracepoint)");
	if (optind < argc) {
		group = argv[optind];
		if (strcmp(group, "sw") && strcmp(group, "hw") && strcmp(group, "cache") &&
		    strcmp(group, "pmu") && strcmp(group, "tracepoint"))
			return cmd_usage_error("list", "unknown group '%s': sw, hw, cache, pmu "
					       "or tracepoint", group);
	}
	int kernel = event_kernel_refused() == 0;
	size_t n;
	const struct event_def *defs = events_table(&n);
	char par[32];
	event_paranoid(par, sizeof(par));
	printf("# events this process can sample here, as probe record -e takes them "
	       "(EVENT:u user space, :k kernel, :uk both)\n");
	if (kernel)
		printf("# kernel samples: allowed for this user (%sperf_event_paranoid %s)\n",
		       atoi(par) > 1 ? "root or CAP_PERFMON; " : "", par);
	else
		printf("# kernel samples: not allowed for this user (perf_event_paranoid %s; "
		       "they need root, CAP_PERFMON or <= 1): tried with :u\n", par);
	const char *kinds[] = { "sw", "hw", "cache" };
	const uint32_t types[] = { PERF_TYPE_SOFTWARE, PERF_TYPE_HARDWARE, PERF_TYPE_HW_CACHE };
	const char *names[] = { "Software event", "Hardware event", "Hardware cache event" };
	for (size_t k = 0; k < 3; k++) {
		if (!want(group, kinds[k]))
			continue;
		for (size_t i = 0; i < n; i++) {
			char name[128];
			if (defs[i].type != types[k])
				continue;
			if (defs[i].alias)
				snprintf(name, sizeof(name), "%s OR %s", defs[i].name, defs[i].alias);
			else
				snprintf(name, sizeof(name), "%s", defs[i].name);
			show(name, names[k], defs[i].type, defs[i].config, kernel, defs[i].record);
		}
	}
	if (want(group, "pmu")) {
		pmu_events(kernel);
		struct event_spec ev;
		char err[768];
		int raw = event_parse("r0", &ev, err, sizeof(err)) == 0;
		const char *state = raw ? "available" :
			"not supported here: no CPU PMU (the CPU or hypervisor exposes no "
			"hardware counters)";
		line("rNNN", "Raw hardware event descriptor", state);
		line("cpu/t1=v1[,t2=v2,t3 ...]/modifier", "Raw hardware event descriptor", state);
		line("mem:<addr>[/len][:access]", "Hardware breakpoint",
		     "not sampled by probe: breakpoints are not sampling events");
	}
	if (want(group, "tracepoint"))
		tracepoints();
	return 0;
}
