/*
 * cmdopt.c - option parsing shared by the commands (see cmdopt.h).
 */
#include "cmdopt.h"

#include <errno.h>
#include <getopt.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session/events.h"
#include "util.h"

int cmd_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "probe: %s: ", cmd);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "; see 'probe %s -h'\n", cmd);
	va_end(ap);
	return 2;
}

int cmd_bad_option(const char *cmd, int c, char **argv)
{
	const char *arg = argv[optind - 1];
	int short_opt = strncmp(arg, "--", 2) != 0 && optopt;
	if (c == ':') {
		if (short_opt)
			return cmd_usage_error(cmd, "-%c needs an argument", optopt);
		return cmd_usage_error(cmd, "%s needs an argument", arg);
	}
	if (short_opt)
		return cmd_usage_error(cmd, "unknown option '-%c'", optopt);
	return cmd_usage_error(cmd, "unknown option '%s'", arg);
}

void help_wrap(FILE *out, int col, int indent, const char *text)
{
	while (*text) {
		size_t n = strcspn(text, " ");
		if (n) {
			int gap = col > indent;         /* after a word on this line */
			if (col + gap + (int)n > HELP_COLUMNS && gap) {
				fprintf(out, "\n%*s", indent, "");
				col = indent;
				gap = 0;
			}
			fprintf(out, "%s%.*s", gap ? " " : "", (int)n, text);
			col += gap + (int)n;
		}
		text += n;
		text += strspn(text, " ");
	}
	fputc('\n', out);
}

void sampling_init(struct sampling *s)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->ev.name, sizeof(s->ev.name), "cpu-clock");
	s->event = s->ev.name;
	s->value = PROBE_DEFAULT_FREQ;
}

/* One more event after the first: distinct, and one this machine samples. */
static int add_more(const char *cmd, const char *arg, struct sampling *s,
		    const struct event_spec *ev)
{
	int dup = strcmp(ev->name, s->ev.name) == 0;
	for (unsigned i = 0; i < s->nmore; i++)
		dup |= strcmp(ev->name, s->more[i].name) == 0;
	if (dup) {
		fprintf(stderr, "probe: %s: -e %s: %s is asked for twice; give each "
			"event once\n", cmd, arg, ev->name);
		return 2;
	}
	if (s->nmore == PROBE_EVENTS_MAX - 1) {
		fprintf(stderr, "probe: %s: -e %s: at most %u events in one run\n", cmd,
			arg, PROBE_EVENTS_MAX);
		return 2;
	}
	struct event_spec *m = &s->more[s->nmore];
	*m = *ev;               /* event_parse set type and config */
	m->has_attr = 1;
	int e = event_try_open(m->type, m->config, m->config1, m->config2,
			       strchr(m->modifier, 'k') != NULL);
	if (e) {
		int hw = m->type != PERF_TYPE_SOFTWARE;
		fprintf(stderr, "probe: %s: -e %s: %s cannot be sampled here (%s)%s; "
			"leave it out\n", cmd, arg, m->name, strerror(e),
			hw && (e == ENOENT || e == EOPNOTSUPP || e == ENODEV) ?
			": it counts with the CPU's performance counters, which this "
			"machine does not expose (as in most VMs)" : "");
		return 2;
	}
	s->nmore++;
	return 1;
}

/* -e SPEC: one event, or several separated by commas outside PMU/.../. */
static int event_option(const char *cmd, const char *arg, struct sampling *s)
{
	char err[768], one[256];
	const char *p = arg;
	if (!*arg) {
		fprintf(stderr, "probe: %s: -e needs an event name; use one of %s\n", cmd,
			event_list());
		return 2;
	}
	while (*p) {
		size_t n = 0;
		int slashes = 0;
		while (p[n] && !(p[n] == ',' && !(slashes & 1)))
			slashes += p[n++] == '/';
		if (n == 0 || n >= sizeof(one)) {
			fprintf(stderr, "probe: %s: -e %s: %s\n", cmd, arg, n ? "an event "
				"name too long" : "an empty event name between commas");
			return 2;
		}
		memcpy(one, p, n);
		one[n] = 0;
		p += n;
		if (*p == ',' && !*++p) {
			fprintf(stderr, "probe: %s: -e %s: an event name is missing after "
				"the last comma\n", cmd, arg);
			return 2;
		}
		struct event_spec ev;
		if (event_parse(one, &ev, err, sizeof(err)) < 0) {
			fprintf(stderr, "probe: %s: %s\n", cmd, err);
			return 2;
		}
		if (!s->have_event) {
			s->ev = ev;
			s->event = s->ev.name;
			s->have_event = 1;
		} else if (add_more(cmd, arg, s, &ev) != 1) {
			return 2;
		}
	}
	return 1;
}

/* "512K", "1M", "4096": bytes (K, M, G, T: powers of 1024), 1 to 2^40. */
static int parse_bytes(const char *arg, uint64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	if (!*arg || *arg == '-' || *arg == '+')
		return -1;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg)
		return -1;
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	case 'T': case 't': shift = 40; end++; break;
	}
	if (*end == 'i' && shift)
		end++;
	if ((*end == 'B' || *end == 'b') && shift)
		end++;
	if (*end || v == 0 || v > (1ull << 40) >> shift)
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

int sampling_option(const char *cmd, int c, const char *arg, struct sampling *s)
{
	switch (c) {
	case 'e':
		return event_option(cmd, arg, s);
	case 'F':
		if (parse_u64(arg, &s->value) < 0 || s->value < 1 || s->value > PROBE_MAX_FREQ) {
			fprintf(stderr, "probe: %s: -F %s: the frequency must be a whole "
				"number of Hz from 1 to %d\n", cmd, arg, PROBE_MAX_FREQ);
			return 2;
		}
		s->have_freq = 1;
		s->use_period = 0;
		return 1;
	case 'c':
		if (parse_u64(arg, &s->value) < 0 || s->value < 1)
			return cmd_usage_error(cmd, "-c %s: the period must be a whole number "
					       "above 0", arg);
		s->have_period = 1;
		s->use_period = 1;
		return 1;
	case SAMPLING_OFFCPU:
		s->offcpu = 1;
		return 1;
	case SAMPLING_ALLOC:
		s->alloc = SAMPLING_ALLOC_DEFAULT;
		if (arg && parse_bytes(arg, &s->alloc) < 0)
			return cmd_usage_error(cmd, "--alloc=%s: the interval must be a number "
					       "of bytes from 1 to 1T (K, M, G: KiB, MiB, GiB)",
					       arg);
		return 1;
	default:
		return 0;
	}
}

int sampling_check(const char *cmd, struct sampling *s)
{
	if (s->have_freq && s->have_period)
		return cmd_usage_error(cmd, "-F and -c exclude each other: give a frequency "
				       "or a period");
	if (s->offcpu && s->have_event && strcmp(s->event, "cpu-clock") != 0 &&
	    strcmp(s->event, "task-clock") != 0)
		return cmd_usage_error(cmd, "--off-cpu counts wall time in nanoseconds: the "
				       "time on the CPU must be too, so -e cpu-clock or "
				       "task-clock (not %s)", s->event);
	if (s->offcpu && s->nmore > PROBE_EVENTS_MAX - 2)
		return cmd_usage_error(cmd, "--off-cpu counts as an event: at most %u "
				       "events beside it", PROBE_EVENTS_MAX - 1);
	/*
	 * A per-thread perf clock event costs about 11 us per context switch
	 * on a VM (its hrtimer is re-armed at every switch); CPU-time timers
	 * and the wait wrappers together 0.12 us (scripts/bench --wake).  A
	 * program that waits a lot switches a lot.
	 */
	s->timer = s->offcpu && !s->have_event;
	s->alloc_only = s->alloc && !s->have_event && !s->offcpu;
	if (s->alloc && s->nmore > PROBE_EVENTS_MAX - 2 - (s->offcpu != 0))
		return cmd_usage_error(cmd, "--alloc counts as an event: at most %u "
				       "events beside it", PROBE_EVENTS_MAX - 1 - (s->offcpu != 0));
	return -1;
}
