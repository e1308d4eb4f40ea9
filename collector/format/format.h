/*
 * format.h - what the report formats share: their options, the data they
 * read, the header lines, percentages, and the table of formats.
 *
 * Contract:
 *   - Each format is one file of format/ and one row of format_table
 *     (context.c; the header lines: header.c): it reads a finished struct
 *     agg (aggregate.h) through a resolver (resolve.h) and writes to out;
 *     it returns 0, or -1 after printing a "probe:" message.  A format
 *     whose row says samples gets the recording's samples one by one in
 *     time order (agg_samples()).
 *   - Percentages are by weight (the sum of sample periods, like perf's
 *     period); if every weight is 0 they fall back to sample counts.
 */
#ifndef PROBE_REPORT_FMT_H
#define PROBE_REPORT_FMT_H

#include <stdint.h>
#include <stdio.h>

#include "data/aggregate.h"
#include "symbols/resolve.h"

struct report_ctx;

struct format_desc {
	const char *name;       /* --format NAME */
	int (*write)(const struct report_ctx *c, FILE *out);
	int binary;             /* not for a terminal: needs -o or a pipe */
	int samples;            /* reads agg_samples() (time order) */
	const char *help;       /* one line for --help */
};

/* The format named name, or NULL. */
const struct format_desc *format_find(const char *name);
/* "text, tree, folded, ...": every name, for messages and --help. */
const char *format_names(void);
/* Row i of the table, or NULL past its end. */
const struct format_desc *format_at(unsigned i);

enum sort_key { KEY_PID, KEY_TID, KEY_COMM, KEY_EXE, KEY_SYM, KEY_DSO, KEY_SRCLINE,
		KEY_COUNT };
#define REPORT_MAX_KEYS 8

struct report_opts {
	const char *file;
	const char *command;    /* the header's "# probe CMD:"; NULL: report */
	const struct format_desc *format;
	const char *output;     /* -o FILE, or NULL: stdout */
	const char *title;      /* --title (pictures), or NULL: the default */
	unsigned width;         /* --width in pixels (pictures), 0: the default */
	int inverted;           /* --inverted: icicle, leaves at the root */
	enum sort_key keys[REPORT_MAX_KEYS];
	int nkeys;
	double percent_limit;
	int percent_limit_set;
	int tty_limit;          /* percent_limit is the terminal's default: say
				   how many rows it hid */
	int children;           /* text: 0 probe's (Self, Total by Self),
				   1 --children (Total, Self by Total),
				   -1 --no-children (Self only) */
	int callee;             /* tree: -g callee, leaves at the root */
	int quiet;              /* -q: no header lines */
	unsigned columns;       /* tree: cut lines to this many characters (the
				   terminal's width); 0: whole lines */
	const char *filter_line;        /* "# filter: ..." or NULL */
	const char *time_line;          /* "# time: ..." or NULL */
	struct resolve_opts resolve;    /* demangling, inline frames */
	uint64_t start_real_ns;         /* pprof of a live window (probe agent): */
	uint64_t window_ns;             /* its start (CLOCK_REALTIME) and length */
	int alloc_default;              /* pprof of allocations: alloc_space is the
					   default sample type (Go's /allocs), not
					   inuse_space (/heap) */
};

/*
 * probe diff: an executable keyed and shown under a name that both
 * recordings share ("app_old->app_new"), so that two builds of one program
 * under two names pair their functions by name (diff.c).
 */
struct exe_alias {
	const char *exe;        /* an image's exe, as recorded (a loc's dso_path) */
	const char *name;
};

struct report_ctx {
	const struct report_opts *opts;
	const struct agg *agg;
	struct resolver *res;
	int by_samples;         /* all weights 0 (or saturated): percentages of samples */
	int weight_saturated;   /* the weights' total reached UINT64_MAX */
	uint64_t total;         /* total weight (or samples) */
	const struct exe_alias *alias;  /* NULL (report_ctx_init): none */
	size_t nalias;
};

/* Fill by_samples and total; no alias. */
void report_ctx_init(struct report_ctx *c, const struct report_opts *o,
		     const struct agg *a, struct resolver *r);
/* A frame's module, and an image's name (its exe's basename), as c->alias renames them. */
const char *report_loc_module(const struct report_ctx *c, const struct loc *l);
const char *report_image_name(const struct report_ctx *c, uint32_t image);
/* The weight (or samples) of a count entry, as percentages count it. */
uint64_t report_amount(const struct report_ctx *c, const struct agg_count *k);
double report_pct(const struct report_ctx *c, uint64_t amount);
/* "# probe report: FILE", "# event: ...; N samples, ...; lost: ..." */
void report_header(const struct report_ctx *c, FILE *out);
/* For a clock, the rate im's event achieved (samples per s of CPU); else 0. */
double report_achieved_hz(const struct agg *a, const struct agg_image *im);
/* "cpu-clock, 212 Hz of CPU time (999 Hz asked)": im's event (malloc'd). */
char *report_event_text(const struct agg *a, const struct agg_image *im);
/*
 * --header: the recording's INFO (captured on, host, kernel, command
 * line), event, duration and every process image (pid, parent, samples,
 * how it ended, comm and argv), as "# " lines between "# ========".
 */
void report_info(const struct agg *a, const char *file, FILE *out);

/* A thread's name: its latest THREAD name, else its process's; "?". */
const char *report_thread_name(const struct agg *a, uint32_t image, uint32_t tid);

/* Key names: "pid", ...; parse one (KEY_COUNT if unknown). */
const char *sort_key_name(enum sort_key k);
enum sort_key sort_key_parse(const char *s, size_t len);

int report_text(const struct report_ctx *c, FILE *out);
int report_tree(const struct report_ctx *c, FILE *out);
int report_folded(const struct report_ctx *c, FILE *out);
int report_pprof(const struct report_ctx *c, FILE *out);     /* pprof.c */
int report_speedscope(const struct report_ctx *c, FILE *out); /* speedscope.c */
int report_perf_script(const struct report_ctx *c, FILE *out);
/* --format annotate: probe annotate's view of the hottest functions (annotate.h). */
int report_annotate(const struct report_ctx *c, FILE *out); /* perf_script.c */

/* Folded stacks of one or two recordings (probe diff: which 0 base, 1 new). */
struct folded_line;
struct folded {
	struct folded_line *lines;
	int wall;               /* --off-cpu: counts are microseconds of wall time */
	int bytes;              /* --alloc: counts are bytes allocated */
};
void folded_add(struct folded *set, const struct report_ctx *c, int which);
/* "stack COUNT" lines, or "stack BASE NEW" with both. */
void folded_write(struct folded *set, FILE *out, int both);
void folded_free(struct folded *set);

#endif
