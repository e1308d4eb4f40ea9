/* events.c - see events.h. */
#include "session/events.h"
#include "probe/events.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The table both sides share (include/probe/events.h). */
static const struct event_def defs[] = PROBE_EVENT_DEFS;

const struct event_def *events_table(size_t *n)
{
	*n = sizeof(defs) / sizeof(defs[0]);
	return defs;
}

const char *event_list(void)
{
	return "cpu-clock, task-clock, page-faults, minor-faults, major-faults, "
	       "context-switches, cpu-migrations, cycles, instructions, "
	       "cache-references, cache-misses, branches, branch-misses, "
	       "bus-cycles, ref-cycles, L1-dcache-load-misses, LLC-load-misses..., "
	       "rNNN, PMU/config=N/; 'probe list' shows which this machine has";
}

int event_kernel_refused(void)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.disabled = 1;
	attr.exclude_user = 1;
	attr.exclude_hv = 1;
	int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return errno ? errno : EPERM;
	close(fd);
	return 0;
}

int event_try_open(uint32_t type, uint64_t config, uint64_t config1, uint64_t config2,
		   int kernel)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = config;
	attr.config1 = config1;
	attr.config2 = config2;
	attr.freq = 1;                  /* as libprobe samples (event.c) */
	attr.sample_freq = 99;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			   PERF_SAMPLE_PERIOD;
	attr.disabled = 1;
	attr.exclude_kernel = !kernel;
	attr.exclude_hv = 1;
	int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return errno ? errno : EINVAL;
	close(fd);
	return 0;
}

#define PMU_DIR "/sys/bus/event_source/devices"

/* "breakpoint, msr, software, ..." : the PMUs this machine has. */
static void pmu_names(char *out, size_t n)
{
	char *names[64];
	size_t k = 0, len = 0;
	DIR *d = opendir(PMU_DIR);
	struct dirent *e;
	out[0] = 0;
	if (!d)
		return;
	while ((e = readdir(d)) && k < 64)
		if (e->d_name[0] != '.')
			names[k++] = strdup(e->d_name);
	closedir(d);
	for (size_t i = 1; i < k; i++)  /* sorted, as ls shows them */
		for (size_t j = i; j > 0 && names[j] && names[j - 1] &&
		     strcmp(names[j - 1], names[j]) > 0; j--) {
			char *t = names[j];
			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	for (size_t i = 0; i < k; i++) {
		if (names[i] && len < n)
			len += (size_t)snprintf(out + len, n - len, "%s%s", len ? ", " : "", names[i]);
		free(names[i]);
	}
	if (len >= n && n > 4)
		memcpy(out + n - 4, "...", 4);
}

/* A small sysfs file's first line, or -1. */
static int read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int ok = fgets(buf, (int)n, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

const char *event_paranoid(char *buf, size_t n)
{
	if (read_line("/proc/sys/kernel/perf_event_paranoid", buf, n) < 0)
		snprintf(buf, n, "?");
	return buf;
}

/* The PMU whose type is `type` (PERF_TYPE_RAW: the CPU's), or "" if none. */
static void pmu_of_type(uint32_t type, char *out, size_t n)
{
	DIR *d = opendir(PMU_DIR);
	struct dirent *e;
	char path[600], buf[32];
	out[0] = 0;
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), PMU_DIR "/%.255s/type", e->d_name);
		if (read_line(path, buf, sizeof(buf)) == 0 && strtoul(buf, NULL, 10) == type) {
			snprintf(out, n, "%.*s", (int)(n - 1), e->d_name);
			break;
		}
	}
	closedir(d);
}

static int parse_num(const char *s, uint64_t *v)
{
	char *end;
	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

/*
 * A format/ term: "config:0-7,21" or "config1:0-63": deposit v's bits
 * into the fields they name.  -1 when the file is not one we understand or
 * v does not fit.
 */
static int apply_format(const char *fmt, uint64_t v, struct event_spec *ev)
{
	uint64_t *dst;
	const char *p;
	if (strncmp(fmt, "config2:", 8) == 0) {
		dst = &ev->config2;
		p = fmt + 8;
	} else if (strncmp(fmt, "config1:", 8) == 0) {
		dst = &ev->config1;
		p = fmt + 8;
	} else if (strncmp(fmt, "config:", 7) == 0) {
		dst = &ev->config;
		p = fmt + 7;
	} else {
		return -1;
	}
	unsigned used = 0;
	while (*p) {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;
		if (end == p)
			return -1;
		if (*end == '-')
			hi = strtoul(end + 1, &end, 10);
		if (hi < lo || hi > 63)
			return -1;
		for (unsigned long b = lo; b <= hi; b++, used++)
			if (used < 64 && (v >> used & 1))
				*dst |= 1ull << b;
		if (*end == ',')
			end++;
		else if (*end)
			return -1;
		p = end;
	}
	return used >= 64 || (v >> used) == 0 ? 0 : -1;
}

/*
 * TERM[=VALUE],... of PMU pmu into ev: config, config1, config2, the
 * fields of its format/ directory, or (depth 0) an event of its events/
 * directory, whose own terms are applied.
 */
static int apply_terms(const char *spec, const char *pmu, char *terms,
		       struct event_spec *ev, int depth, char *err, size_t errlen)
{
	char path[512];
	char *save = NULL;
	for (char *t = strtok_r(terms, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		uint64_t v = 1;
		if (eq) {
			*eq = 0;
			if (parse_num(eq + 1, &v) < 0) {
				snprintf(err, errlen, "-e %s: '%s' is not a number (decimal, or "
					 "hexadecimal with 0x)", spec, eq + 1);
				return -1;
			}
		}
		if (strcmp(t, "config") == 0) {
			ev->config = v;
			continue;
		} else if (strcmp(t, "config1") == 0) {
			ev->config1 = v;
			continue;
		} else if (strcmp(t, "config2") == 0) {
			ev->config2 = v;
			continue;
		}
		char fmt[128], alias[256];
		int bad = strchr(t, '/') || strstr(t, "..") || !*t;
		snprintf(path, sizeof(path), PMU_DIR "/%s/format/%s", pmu, t);
		if (!bad && read_line(path, fmt, sizeof(fmt)) == 0) {
			if (apply_format(fmt, v, ev) < 0) {
				snprintf(err, errlen, "-e %s: %s=%" PRIu64 " does not fit the "
					 "PMU's format for it (%s)", spec, t, v, fmt);
				return -1;
			}
			continue;
		}
		snprintf(path, sizeof(path), PMU_DIR "/%s/events/%s", pmu, t);
		if (!bad && !eq && depth == 0 && read_line(path, alias, sizeof(alias)) == 0) {
			if (apply_terms(spec, pmu, alias, ev, 1, err, errlen) < 0)
				return -1;
			continue;
		}
		snprintf(err, errlen, "-e %s: PMU '%s' has no term or event '%s' (not config, "
			 "config1, config2, nor in %s/%s/format or events)", spec, pmu, t,
			 PMU_DIR, pmu);
		return -1;
	}
	return 0;
}

static int pmu_event(const char *spec, const char *pmu_end, struct event_spec *ev,
		     char *err, size_t errlen)
{
	char pmu[64], terms[256], path[512], buf[256];
	size_t plen = (size_t)(pmu_end - spec);
	const char *tend = strchr(pmu_end + 1, '/');
	if (!tend) {
		snprintf(err, errlen, "'%s' is not PMU/TERM=VALUE,.../ (the closing '/' "
			 "is missing)", spec);
		return -1;
	}
	if (plen == 0 || plen >= sizeof(pmu) || (size_t)(tend - pmu_end - 1) >= sizeof(terms)) {
		snprintf(err, errlen, "'%s' is not PMU/TERM=VALUE,.../", spec);
		return -1;
	}
	memcpy(pmu, spec, plen);
	pmu[plen] = 0;
	memcpy(terms, pmu_end + 1, (size_t)(tend - pmu_end - 1));
	terms[tend - pmu_end - 1] = 0;
	for (const char *c = pmu; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-' && *c != '.') {
			snprintf(err, errlen, "'%s' is not the name of a PMU", pmu);
			return -1;
		}
	snprintf(path, sizeof(path), PMU_DIR "/%s/type", pmu);
	if (read_line(path, buf, sizeof(buf)) < 0) {
		char have[256];
		pmu_names(have, sizeof(have));
		snprintf(err, errlen, "-e %s: this machine has no PMU named '%s' (no %s; "
			 "it has %s%s); 'probe list' shows the events it has", spec, pmu, path,
			 have[0] ? have : "none",
			 strcmp(pmu, "cpu") == 0 ? ": the CPU or hypervisor exposes no hardware "
			 "counters, as in most VMs" : "");
		return -1;
	}
	ev->has_attr = 1;
	ev->type = (uint32_t)strtoul(buf, NULL, 10);
	ev->config = ev->config1 = ev->config2 = 0;
	if (apply_terms(spec, pmu, terms, ev, 0, err, errlen) < 0)
		return -1;
	snprintf(ev->name, sizeof(ev->name), "%.*s", (int)(tend + 1 - spec), spec);
	/* Not in libprobe's hands: a PMU event the kernel will not sample is refused here. */
	int e = event_try_open(ev->type, ev->config, ev->config1, ev->config2, 0);
	if (e == EACCES || e == EPERM) {
		snprintf(err, errlen, "-e %s: the kernel does not let this user open it (%s); "
			 "see /proc/sys/kernel/perf_event_paranoid", spec, strerror(e));
		return -1;
	}
	if (e) {
		snprintf(err, errlen, "-e %s: the kernel refuses it as a sampling event of "
			 "this process (%s): PMU '%s' %s; 'probe list' shows what can be sampled",
			 spec, strerror(e), pmu, e == ENOENT || e == EOPNOTSUPP || e == EINVAL ?
			 "has no such event or cannot take samples (perf stat may still count it)" :
			 "cannot take it here");
		return -1;
	}
	return 0;
}

static int modifiers(const char *spec, const char *m, struct event_spec *ev,
		     char *err, size_t errlen)
{
	int u = 0, k = 0;
	for (const char *c = m; *c; c++) {
		if (*c == 'u') {
			u = 1;
		} else if (*c == 'k') {
			k = 1;
		} else {
			const char *why =
				*c == 'p' || *c == 'P' ? " (precise sampling, PEBS or IBS: "
				"probe takes each sample from the interrupted thread's registers)" :
				*c == 'h' || *c == 'H' || *c == 'G' ? " (probe samples the "
				"program only, never the hypervisor or guests)" : "";
			snprintf(err, errlen, "-e %s: modifier '%c' is not supported%s; probe "
				 "takes u (user space only), k (kernel only) or uk (both)",
				 spec, *c, why);
			return -1;
		}
	}
	if (!u && !k) {
		snprintf(err, errlen, "-e %s: an empty modifier; probe takes u (user space "
			 "only), k (kernel only) or uk (both)", spec);
		return -1;
	}
	snprintf(ev->modifier, sizeof(ev->modifier), "%s%s", u ? "u" : "", k ? "k" : "");
	if (k) {
		int e = event_kernel_refused();
		if (e) {
			char par[32];
			event_paranoid(par, sizeof(par));
			snprintf(err, errlen, "-e %s: kernel samples are not allowed here (%s): "
				 "they need root, CAP_PERFMON or /proc/sys/kernel/"
				 "perf_event_paranoid <= 1 (it is %s); use :u for user space only",
				 spec, strerror(e), par);
			return -1;
		}
	}
	return 0;
}

int event_parse(const char *spec, struct event_spec *ev, char *err, size_t errlen)
{
	memset(ev, 0, sizeof(*ev));
	/* Several events?  A comma outside PMU/.../ separates them. */
	int slashes = 0;
	for (const char *c = spec; *c; c++) {
		slashes += *c == '/';
		if (*c == ',' && !(slashes & 1)) {
			snprintf(err, errlen, "%s: one event here, not a list", spec);
			return -1;
		}
	}
	if (!*spec) {
		snprintf(err, errlen, "-e needs an event name; use one of %s", event_list());
		return -1;
	}
	const char *slash = strchr(spec, '/');
	if (slash) {
		if (pmu_event(spec, slash, ev, err, errlen) < 0)
			return -1;
		const char *m = strrchr(spec, '/') + 1;
		if (*m == ':')
			m++;
		return *m ? modifiers(spec, m, ev, err, errlen) : 0;
	}
	char base[128];
	const char *colon = strrchr(spec, ':');
	size_t blen = colon ? (size_t)(colon - spec) : strlen(spec);
	if (blen >= sizeof(base)) {
		snprintf(err, errlen, "unknown event '%.64s...'; use one of %s", spec, event_list());
		return -1;
	}
	memcpy(base, spec, blen);
	base[blen] = 0;
	snprintf(ev->name, sizeof(ev->name), "%s", base);
	int found = 0;
	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]) && !found; i++) {
		const struct event_def *d = &defs[i];
		if (strcmp(base, d->name) != 0 && !(d->alias && strcmp(base, d->alias) == 0))
			continue;
		if (!d->record) {
			snprintf(err, errlen, "-e %s: %s counts nothing by itself, so it "
				 "cannot be sampled; use cpu-clock or another event 'probe list' "
				 "shows", spec, base);
			return -1;
		}
		found = 1;
		ev->has_attr = d->record == 2;
		ev->type = d->type;
		ev->config = d->config;
	}
	if (!found && base[0] == 'r' && base[1] && strspn(base + 1, "0123456789abcdefABCDEF") ==
	    strlen(base + 1) && strlen(base + 1) <= 16) {
		char cpu[64];
		pmu_of_type(PERF_TYPE_RAW, cpu, sizeof(cpu));
		if (!cpu[0]) {
			char have[256];
			pmu_names(have, sizeof(have));
			snprintf(err, errlen, "-e %s: a raw event is a code of the CPU's "
				 "performance counters, and this machine exposes none (no PMU of "
				 "type %d in " PMU_DIR ", which has %s: the CPU or hypervisor "
				 "exposes no hardware counters, as in most VMs); use a software "
				 "event such as cpu-clock", spec, PERF_TYPE_RAW, have[0] ? have : "nothing");
			return -1;
		}
		found = 1;
		ev->has_attr = 1;
		ev->type = PERF_TYPE_RAW;
		ev->config = strtoull(base + 1, NULL, 16);
	}
	if (!found) {
		if (colon && strchr(base, ':') == NULL && strspn(colon + 1, "ukhpPGHSDIWeb") !=
		    strlen(colon + 1))
			snprintf(err, errlen, "-e %s: tracepoints (SYSTEM:NAME) are not "
				 "supported: probe samples time, not kernel events; use one of %s",
				 spec, event_list());
		else
			snprintf(err, errlen, "unknown event '%s'; use one of %s", spec,
				 event_list());
		return -1;
	}
	return colon ? modifiers(spec, colon + 1, ev, err, errlen) : 0;
}
