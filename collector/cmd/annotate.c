/*
 * annotate.c - `probe annotate`: which instructions and source lines of
 * the hottest functions (or of those named) the samples fell on, as perf
 * annotate --stdio shows them (annotate/annotate.h does the work).
 */
#include "cmd/annotate.h"
#include "cmd/report_filter.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "annotate/annotate.h"
#include "cmdopt.h"
#include "format/format.h"
#include "session/load.h"
#include "symbols/resolve.h"
#include "util.h"

#define ANNOTATE_FUNCTIONS 5    /* shown when none is named */

enum {
	OPT_STDIO = CMDOPT_LONG, OPT_PERCENT, OPT_FUNCTIONS, OPT_ASM_RAW, OPT_NO_SOURCE,
	OPT_SOURCE, OPT_PID, OPT_TID, OPT_TIME, OPT_EVENT, OPT_NO_DEMANGLE, OPT_NO_INLINE,
};

static const struct cmd_option annotate_opts[] = {
	{ 'i', "input", required_argument, "FILE", "the recording (default probe.data)", 0,
	  NULL },
	{ 's', "symbol", required_argument, "NAME", "annotate this function (as SYMBOL; "
	  "may be repeated)", 0, NULL },
	{ OPT_FUNCTIONS, "functions", required_argument, "N", "with no SYMBOL, the N "
	  "hottest functions (default " CMDOPT_STR(ANNOTATE_FUNCTIONS) "; 0: every sampled "
	  "one)", 0, NULL },
	{ OPT_PERCENT, "percent-limit", required_argument, "PCT", "hide instructions "
	  "under PCT% of their function's samples", 0, NULL },
	{ 'M', "disassembler-style", required_argument, "STYLE", "att (objdump's "
	  "default) or intel", 0, NULL },
	{ OPT_ASM_RAW, "asm-raw", no_argument, NULL, "each instruction's bytes too", 0,
	  NULL },
	{ OPT_NO_SOURCE, "no-source", no_argument, NULL, "instructions only, no source "
	  "lines between them", 0, NULL },
	{ OPT_SOURCE, "source", no_argument, NULL, NULL, 0, NULL },
	{ OPT_EVENT, "event", required_argument, "NAME", "a recording of several events: "
	  "this one (default: the first)", 0, NULL },
	{ 'c', "comms", required_argument, "NAMES", "only samples of these threads", 0,
	  NULL },
	{ OPT_PID, "pid", required_argument, "PIDS", "only samples of these processes", 0,
	  NULL },
	{ OPT_TID, "tid", required_argument, "TIDS", "only samples of these threads", 0,
	  NULL },
	{ 'd', "dsos", required_argument, "NAMES", "only functions of these modules", 0,
	  NULL },
	{ OPT_TIME, "time", required_argument, "START,END", "only samples between these "
	  "seconds from the start", 0, NULL },
	{ OPT_NO_DEMANGLE, "no-demangle", no_argument, NULL, "C++ and Rust names as the "
	  "binary spells them", 0, NULL },
	{ OPT_STDIO, "stdio", no_argument, NULL, "accepted for perf compatibility (always "
	  "stdio)", 0, NULL },
	{ 'n', "show-nr-samples", no_argument, NULL, "accepted (the Samples column always "
	  "shows)", 0, NULL },
	{ 'q', "quiet", no_argument, NULL, "no warnings, no header lines", 0, NULL },
	{ 'h', "help", no_argument, NULL, "this help", 0, NULL },
	{ 0, NULL, 0, NULL, NULL, 0, NULL },
};

const struct cmd_spec annotate_spec = {
	.cmd = "annotate",
	.lead = "[SYMBOL...]",
	.about = "Show where in the hottest functions of a recording (or in the functions\n"
		 "named) the samples fell: each instruction with its share of the\n"
		 "function's samples and their count, the source lines between them.\n",
	.notes =
		"Addresses are the object's own, as objdump prints them.  Source lines\n"
		"and inline frames come from DWARF (a program built with -g); a stripped\n"
		"function is named module+0xSTART and shown as instructions only.  Code\n"
		"is read from the file that ran (or perf's ~/.debug copy with its\n"
		"build-id); kernel code from /proc/kcore (root only); JIT code from the\n"
		"jitdump file the process wrote.  A SYMBOL may be a glob (\"hot_*\").\n",
	.opts = annotate_opts,
};

#define usage_error(...) cmd_usage_error("annotate", __VA_ARGS__)

struct annotate_args {
	struct report_opts o;
	struct filters fl;
	struct ann_print_opts p;
	const char **names;
	size_t nnames;
	uint64_t functions;
	const char *event;
};

static int filter_arg(struct annotate_args *a, int c)
{
	struct namelist *l = c == 'c' ? &a->fl.comms : c == 'd' ? &a->fl.dsos :
			     c == OPT_PID ? &a->fl.pids : &a->fl.tids;
	int bad = c == 'c' || c == 'd' ? parse_names(optarg, l) : parse_ids(optarg, l);
	if (bad < 0)
		return usage_error("bad %s '%s': use a comma list", c == 'c' ? "--comms" :
				   c == 'd' ? "--dsos" : c == OPT_PID ? "--pid" : "--tid",
				   optarg);
	return 0;
}

/* One option: 0, or 2 after a usage error. */
static int annotate_option(struct annotate_args *a, int c)
{
	switch (c) {
	case 'i':
		a->o.file = optarg;
		break;
	case 's':
		a->names = xrealloc(a->names, (a->nnames + 1) * sizeof(*a->names));
		a->names[a->nnames++] = optarg;
		break;
	case OPT_FUNCTIONS:
		if (parse_u64(optarg, &a->functions) < 0)
			return usage_error("bad --functions '%s': use a number", optarg);
		break;
	case OPT_PERCENT:
		if (parse_percent(optarg, &a->p.percent_limit) < 0)
			return usage_error("bad --percent-limit '%s': use a number from 0 "
					   "to 100", optarg);
		break;
	case 'M':
		if (strcmp(optarg, "att") != 0 && strcmp(optarg, "intel") != 0)
			return usage_error("bad --disassembler-style '%s': use att or intel",
					   optarg);
		a->p.intel = strcmp(optarg, "intel") == 0;
		break;
	case OPT_ASM_RAW:
		a->p.raw = 1;
		break;
	case OPT_NO_SOURCE:
		a->p.source = 0;
		break;
	case OPT_SOURCE:
		a->p.source = 1;
		break;
	case OPT_EVENT:
		a->event = optarg;
		break;
	case 'c': case 'd': case OPT_PID: case OPT_TID:
		return filter_arg(a, c);
	case OPT_TIME:
		if (parse_time(optarg, &a->fl) < 0)
			return usage_error("bad --time '%s': use START,END in seconds from "
					   "the start of the recording", optarg);
		break;
	case OPT_NO_DEMANGLE:
		a->o.resolve.demangle = 0;
		break;
	case 'q':
		a->o.quiet = 1;
		probe_no_warnings = 1;
		break;
	}
	return 0;
}

/* The functions to show, hottest first: those named, else the hottest few. */
static size_t choose(const struct report_ctx *c, const struct ann_set *s,
		     const struct annotate_args *a, size_t *pick)
{
	size_t n = 0;
	if (!a->nnames) {
		for (size_t i = 0; i < s->n && (!a->functions || n < a->functions); i++)
			pick[n++] = i;
		return n;
	}
	for (size_t i = 0; i < s->n; i++)
		for (size_t j = 0; j < a->nnames; j++)
			if (ann_func_matches(c, &s->fns[i], a->names[j])) {
				pick[n++] = i;
				break;
			}
	for (size_t j = 0; j < a->nnames && n == 0; j++)
		for (size_t i = 0; i < s->n; i++)
			if (ann_func_inlines(c, &s->fns[i], a->names[j], 0)) {
				if (!n)
					probe_warn("%s has no code of its own that was sampled: "
						   "it is inlined; showing the functions it is "
						   "inlined into", a->names[j]);
				pick[n++] = i;
			}
	return n;
}

static void say_none(const struct report_ctx *c, const struct ann_set *s,
		     const struct annotate_args *a)
{
	char hot[512] = "";
	size_t at = 0;
	for (size_t i = 0; i < s->n && i < 5 && at < sizeof(hot) - 1; i++)
		at += (size_t)snprintf(hot + at, sizeof(hot) - at, "%s%s", i ? ", " : "",
				       resolver_loc(c->res, s->fns[i].loc)->sym);
	char *name = printable_dup(a->names[0]);
	char *h = printable_dup(hot);
	if (s->n)
		probe_err("no sampled function is named '%s'%s; the hottest are: %s", name,
			  a->nnames > 1 ? " (nor the others given)" : "", h);
	else
		probe_err("no samples to annotate in this recording");
	free(name);
	free(h);
}

static int annotate_run(struct annotate_args *a)
{
	struct agg *ag = recording_load(a->o.file, a->fl.time_set, a->event, LOAD_MEMORY_MIB);
	if (!ag)
		return 1;
	struct symcache *sc = symcache_new();
	struct resolver *res = resolver_new(ag, sc, &a->o.resolve);
	char *time_line = NULL, *filter_line = NULL;
	apply_filters(ag, res, &a->fl, &a->o, &time_line, &filter_line);
	struct report_ctx ctx;
	report_ctx_init(&ctx, &a->o, ag, res);
	struct ann_set *s = ann_collect(&ctx, sc);
	size_t *pick = xcalloc(s->n + 1, sizeof(*pick));
	size_t n = choose(&ctx, s, a, pick);
	int rc = 0;
	if (n == 0 && (a->nnames || s->n == 0)) {
		say_none(&ctx, s, a);
		rc = 1;
	} else {
		report_header(&ctx, stdout);
	}
	for (size_t i = 0; i < n; i++) {
		struct ann_view v;
		ann_build(&ctx, sc, &s->fns[pick[i]], a->p.intel, &v);
		if (i)
			fputc('\n', stdout);
		ann_print(&ctx, &v, &a->p, stdout);
		ann_view_free(&v);
	}
	free(pick);
	ann_set_free(s);
	free(time_line);
	free(filter_line);
	resolver_free(res);
	symcache_free(sc);
	agg_free(ag);
	if (fflush(stdout) != 0)
		rc = 1;
	return rc;
}

int cmd_annotate(int argc, char **argv)
{
	struct annotate_args a = { .o = { .format = format_find("text"), .command = "annotate" },
				   .functions = ANNOTATE_FUNCTIONS };
	a.o.resolve = (struct resolve_opts){ .demangle = 1, .inline_frames = 1,
					     .short_names = 1 };
	a.o.keys[0] = KEY_SYM;
	a.o.keys[1] = KEY_DSO;
	a.o.nkeys = 2;
	a.p.source = 1;
	int c, rc = 0;
	opterr = 0;
	optind = 1;
	while (rc == 0 && (c = cmdopt_next(argc, argv, &annotate_spec)) != -1) {
		if (c == 'h') {
			cmdopt_usage(stdout, &annotate_spec);
			goto out;
		}
		if (c == '?' || c == ':')
			rc = cmd_bad_option("annotate", c, argv);
		else
			rc = annotate_option(&a, c);
	}
	for (int i = optind; rc == 0 && i < argc; i++) {
		a.names = xrealloc(a.names, (a.nnames + 1) * sizeof(*a.names));
		a.names[a.nnames++] = argv[i];
	}
	if (!a.o.file)
		a.o.file = "probe.data";
	if (rc == 0)
		rc = annotate_run(&a);
out:
	filters_free(&a.fl);
	free(a.names);
	return rc;
}
