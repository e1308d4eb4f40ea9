/*
 * cmdopt.c - option parsing shared by the commands (see cmdopt.h).
 */
#include "cmdopt.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "events.h"
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

void sampling_init(struct sampling *s)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->ev.name, sizeof(s->ev.name), "cpu-clock");
	s->event = s->ev.name;
	s->value = PROBE_DEFAULT_FREQ;
}

int sampling_option(const char *cmd, int c, const char *arg, struct sampling *s)
{
	switch (c) {
	case 'e': {
		char err[768];
		if (event_parse(arg, &s->ev, err, sizeof(err)) < 0) {
			fprintf(stderr, "probe: %s: %s\n", cmd, err);
			return 2;
		}
		s->event = s->ev.name;
		return 1;
	}
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
	default:
		return 0;
	}
}

int sampling_check(const char *cmd, const struct sampling *s)
{
	if (s->have_freq && s->have_period)
		return cmd_usage_error(cmd, "-F and -c exclude each other: give a frequency "
				       "or a period");
	return -1;
}
