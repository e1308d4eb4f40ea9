/*
 * cmdopt.h - option parsing shared by the commands (record, report, top,
 * diff, agent).
 *
 * Contract:
 *   - cmd_usage_error(cmd, fmt, ...) prints "probe: CMD: MESSAGE; see
 *     'probe CMD -h'" on stderr and returns 2 (the usage-error status).
 *   - cmd_bad_option(cmd, c, argv) explains what getopt_long (opterr = 0,
 *     optstring starting ":" or "+:") returned ':' or '?' for, the same way,
 *     and returns 2.
 *   - struct sampling holds what is sampled, -e/-F/-c (-e as events.h
 *     parses it; several events, as perf takes them: -e a,b or -e a -e b,
 *     each checked to open here), and whom from outside, -p/-t/-a (their
 *     lists as given: sampler.h checks them): sampling_init() sets the defaults
 *     (cpu-clock at PROBE_DEFAULT_FREQ Hz); sampling_option() takes option c
 *     with its argument: 1 when it was one of them, 0 when not (nothing
 *     done), 2 after a message when its value is bad; sampling_check()
 *     returns 2 after a message when -F and -c were both given, else -1.
 *   - --off-cpu (option value SAMPLING_OFFCPU) sets offcpu: the waits too
 *     (preload/offcpu.c); CPU time is then sampled with CPU-time timers
 *     unless an -e was given (timer: see sampling_check).
 *   - --alloc[=BYTES] (SAMPLING_ALLOC) sets alloc: allocations sampled
 *     about every BYTES bytes (preload/alloc.c; 1: every one; K, M, G
 *     suffixes are KiB, MiB, GiB); alone (no -e, no --off-cpu) they are
 *     all that is sampled (alloc_only).
 *   - struct cmd_spec is a command's one table of options (struct
 *     cmd_option, in the order -h lists them) with the words around it;
 *     the same table feeds getopt_long (cmdopt_next: its optstring and
 *     option array are made from the table) and the help (cmdopt_usage:
 *     the synopsis, made from the table too, the text before the options,
 *     an entry per option, the notes after), so that what is accepted and
 *     what is listed cannot drift apart.  An entry without help is
 *     accepted but not listed (an alias, or --serve, which libprobe gives).
 *     Each command exports its spec (record_spec, ...: cmd/CMD.h), which
 *     main.c's table of commands holds for the general help and `probe
 *     help`.  The caller sets opterr = 0 and optind = 1 before its first call, and
 *     its cases are the entries' keys: a short option's letter, or from
 *     CMDOPT_LONG up for the long-only ones.
 *   - help_wrap(out, col, indent, text) writes text word-wrapped so that no
 *     line of a help passes HELP_COLUMNS columns (a terminal's 80, less the
 *     last, where some terminals wrap): the first line goes on from column
 *     col (what is already written on it), the others start with indent
 *     spaces; it ends the last line.  For help built from lists (events,
 *     formats) that no literal can wrap in advance.
 */
#ifndef PROBE_CMDOPT_H
#define PROBE_CMDOPT_H

#include <stdint.h>
#include <stdio.h>

#include "session/events.h"
#include "probe/wire.h"

#define PROBE_DEFAULT_FREQ 999
#define PROBE_MAX_FREQ 100000

int cmd_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int cmd_bad_option(const char *cmd, int c, char **argv);

#define HELP_COLUMNS 79
void help_wrap(FILE *out, int col, int indent, const char *text);

/* A number macro as a string, for help texts: CMDOPT_STR(PROBE_DEFAULT_FREQ). */
#define CMDOPT_STR_(x) #x
#define CMDOPT_STR(x) CMDOPT_STR_(x)

/* Keys from here up are long-only options (below: a short option's letter). */
#define CMDOPT_LONG 0x100
/* cmd_option.flags */
#define CMDOPT_OR 1             /* in the synopsis, an alternative to the entry before */
#define CMDOPT_NOSYN 2          /* not in the synopsis (the lead or operands name it) */
#define CMDOPT_MAX 48           /* entries in one table */

struct cmd_option {
	int key;                /* what cmdopt_next returns for it */
	const char *name;       /* the long name, or NULL */
	int has_arg;            /* no_argument, required_argument, optional_argument */
	const char *arg;        /* the argument's name in the help, or NULL */
	const char *help;       /* what it does (wrapped); NULL: not listed */
	unsigned flags;         /* CMDOPT_OR, CMDOPT_NOSYN */
	/* Lines after the text, each from column col (a list), or NULL. */
	void (*more)(FILE *out, int col);
};

struct cmd_spec {
	const char *cmd;        /* "record" */
	int in_order;           /* options end at the first operand (the command's own) */
	const char *lead;       /* the synopsis before the options, or NULL */
	const char *operands;   /* the synopsis after them, or NULL */
	const char *about;      /* between the synopsis and the options */
	const char *notes;      /* after the options, or NULL */
	const struct cmd_option *opts;  /* ended by an entry with key 0 */
};

int cmdopt_next(int argc, char **argv, const struct cmd_spec *s);
void cmdopt_usage(FILE *out, const struct cmd_spec *s);

struct sampling {
	const char *event;      /* ev.name */
	struct event_spec ev;   /* -e as parsed (events.h): the first event */
	/* The events after it (-e a,b or -e a -e b), attr resolved (has_attr). */
	struct event_spec more[PROBE_EVENTS_MAX - 1];
	unsigned nmore;
	int have_event;         /* an -e was given */
	int use_period;         /* value is a period, not a frequency */
	uint64_t value;
	int have_freq, have_period;
	int offcpu;             /* --off-cpu */
	int timer;              /* --off-cpu without -e: CPU-time timers */
	uint64_t alloc;         /* --alloc[=BYTES]: the mean interval; 0: off */
	int alloc_only;         /* --alloc alone (no -e, no --off-cpu) */
	/* Whom, from outside (perf events), instead of a command's processes. */
	const char *pids, *tids;        /* -p, -t */
	int all;                /* -a: the whole system */
};
#define SAMPLING_OFFCPU 0x4f43  /* getopt_long's value for --off-cpu */
#define SAMPLING_ALLOC 0x414c   /* ... for --alloc[=BYTES] */
#define SAMPLING_ALLOC_DEFAULT 524288   /* 512 KiB, as Go, jemalloc, tcmalloc */

void sampling_init(struct sampling *s);
int sampling_option(const char *cmd, int c, const char *arg, struct sampling *s);
int sampling_check(const char *cmd, struct sampling *s);

#endif
