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

/* ---- the option table ------------------------------------------------- */

/* getopt_long's optstring and options, made from the table last asked for. */
static const struct cmd_spec *built;
static char shorts[3 + 3 * CMDOPT_MAX];
static struct option longs[CMDOPT_MAX + 1];

static void build(const struct cmd_spec *s)
{
	size_t n = 0, nl = 0;

	if (s->in_order)
		shorts[n++] = '+';
	shorts[n++] = ':';
	for (const struct cmd_option *o = s->opts; o->key && nl < CMDOPT_MAX; o++) {
		if (o->key < CMDOPT_LONG && !memchr(shorts, o->key, n)) {
			shorts[n++] = (char)o->key;
			if (o->has_arg != no_argument)
				shorts[n++] = ':';
			if (o->has_arg == optional_argument)
				shorts[n++] = ':';
		}
		if (o->name)
			longs[nl++] = (struct option){ o->name, o->has_arg, NULL, o->key };
	}
	shorts[n] = 0;
	longs[nl] = (struct option){ 0 };
	built = s;
}

int cmdopt_next(int argc, char **argv, const struct cmd_spec *s)
{
	if (built != s)
		build(s);
	return getopt_long(argc, argv, shorts, longs, NULL);
}

/* " FILE", "[=BYTES]" or "": an option's argument as the help writes it. */
static const char *arg_word(char *b, size_t cap, const struct cmd_option *o)
{
	if (!o->arg)
		b[0] = 0;
	else if (o->has_arg == optional_argument)
		snprintf(b, cap, "[=%s]", o->arg);
	else
		snprintf(b, cap, " %s", o->arg);
	return b;
}

/* "-o FILE", "--alloc[=BYTES]": the option as the synopsis writes it. */
static int syn_word(char *b, size_t cap, const struct cmd_option *o)
{
	char arg[64];
	if (o->key < CMDOPT_LONG)
		return snprintf(b, cap, "-%c%s", o->key, arg_word(arg, sizeof arg, o));
	return snprintf(b, cap, "--%s%s", o->name, arg_word(arg, sizeof arg, o));
}

/* "usage: probe CMD [-o FILE] [-F HZ | -c PERIOD] ...", wrapped. */
static void synopsis(FILE *out, const struct cmd_spec *s)
{
	char item[256];
	int indent = fprintf(out, "usage: probe %s ", s->cmd), col = indent;
	size_t n = 0;
	const struct cmd_option *o = s->opts;

	for (int first = 1;; first = 0) {
		n = 0;
		if (first && s->lead) {
			n = (size_t)snprintf(item, sizeof item, "%s", s->lead);
		} else {
			while (o->key && (!o->help || (o->flags & CMDOPT_NOSYN) || o->key == 'h' ||
					  (o->flags & CMDOPT_OR)))
				o++;
			if (!o->key)
				break;
			do {
				n += (size_t)snprintf(item + n, sizeof item - n, "%s", n ? " | " : "[");
				n += (size_t)syn_word(item + n, sizeof item - n, o);
				o++;
			} while (o->key && (o->flags & CMDOPT_OR) && n < sizeof item - 64);
			if (n < sizeof item - 1)
				n += (size_t)snprintf(item + n, sizeof item - n, "]");
			if (n > sizeof item - 1)
				n = sizeof item - 1;    /* cut (a table's words are short) */
		}
		if (col > indent && col + 1 + (int)n > HELP_COLUMNS) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
		}
		col += fprintf(out, "%s%s", col > indent ? " " : "", item);
	}
	if (s->operands) {
		if (col > indent && col + 1 + (int)strlen(s->operands) > HELP_COLUMNS) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
		}
		fprintf(out, "%s%s", col > indent ? " " : "", s->operands);
	}
	fputc('\n', out);
}

/* "  -o, --output FILE", "      --no-inherit": an entry's left part. */
static int entry_name(char *b, size_t cap, const struct cmd_option *o)
{
	char arg[64];
	arg_word(arg, sizeof arg, o);
	if (o->key < CMDOPT_LONG && o->name)
		return snprintf(b, cap, "  -%c, --%s%s", o->key, o->name, arg);
	if (o->key < CMDOPT_LONG)
		return snprintf(b, cap, "  -%c%s", o->key, arg);
	return snprintf(b, cap, "      --%s%s", o->name, arg);
}

void cmdopt_usage(FILE *out, const struct cmd_spec *s)
{
	char name[128];
	int col = 0;

	synopsis(out, s);
	fprintf(out, "\n%s\n", s->about);
	/* The text column: after the longest name that is not overlong. */
	for (const struct cmd_option *o = s->opts; o->key; o++) {
		int n = o->help ? entry_name(name, sizeof name, o) : 0;
		if (n <= 26 && n + 2 > col)
			col = n + 2;
	}
	for (const struct cmd_option *o = s->opts; o->key; o++) {
		if (!o->help)
			continue;
		int n = entry_name(name, sizeof name, o);
		fputs(name, out);
		if (n + 1 > col) {
			fputc('\n', out);
			n = 0;
		}
		fprintf(out, "%*s", col - n, "");
		help_wrap(out, col, col, o->help);
		if (o->more)
			o->more(out, col);
	}
	if (s->notes)
		fprintf(out, "\n%s", s->notes);
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
	case 'p':
		s->pids = arg;
		return 1;
	case 't':
		s->tids = arg;
		return 1;
	case 'a':
		s->all = 1;
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
