/*
 * report.c - `probe report`: options, reading a recording through the one
 * decoder (wire_decode.h, session/load.h), the filters (report_filter.c),
 * then one of the formats (format.h).
 *
 * The file is read through the same frame splitter as a live socket, a
 * buffer at a time: memory is bounded by the tables, not the file size.
 */
#include "cmd/report.h"
#include "cmd/report_filter.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/aggregate.h"
#include "cmdopt.h"
#include "format/format.h"
#include "format/outfile.h"
#include "session/load.h"
#include "symbols/resolve.h"
#include "symbols/symbols.h"
#include "util.h"
#include "data/wire_decode.h"

/* --max-memory: the bound on a recording's tables (session/load.h). */
#define REPORT_MEMORY_MIB LOAD_MEMORY_MIB
static uint64_t memory_mib = REPORT_MEMORY_MIB;

/* Long-only options' keys (cmdopt.h). */
enum {
	OPT_CHILDREN = CMDOPT_LONG, OPT_NO_CHILDREN, OPT_PID, OPT_TID, OPT_TIME, OPT_HEADER,
	OPT_HEADER_ONLY, OPT_EVENT, OPT_MAX_MEMORY, OPT_SIGNATURES, OPT_FORMAT, OPT_TREE,
	OPT_TITLE, OPT_WIDTH, OPT_INVERTED, OPT_LINES, OPT_DEMANGLE, OPT_NO_INLINE,
	OPT_INLINE, OPT_PERCENT, OPT_STDIO,
};

/* --format's list: each format and what it is for. */
static void formats_more(FILE *out, int col)
{
	for (unsigned i = 0; format_at(i); i++) {
		int c = fprintf(out, "%*s%-12s ", col + 2, "", format_at(i)->name);
		help_wrap(out, c, c, format_at(i)->help);
	}
}

static const struct cmd_option report_opts[] = {
	{ 'i', "input", required_argument, "FILE", "the recording (\"-\": standard input)",
	  CMDOPT_NOSYN, NULL },
	{ OPT_FORMAT, "format", required_argument, "FORMAT", "one of:", 0, formats_more },
	{ 'o', "output", required_argument, "OUT", "write the report to OUT (made whole, then "
	  "renamed into place) instead of standard output", 0, NULL },
	{ OPT_TREE, "tree", no_argument, NULL, "same as --format tree (its lines cut to "
	  "$COLUMNS, else a terminal's width, \"..\" at the cut; COLUMNS=0 or -o FILE: "
	  "whole lines)", 0, NULL },
	{ 's', "sort", required_argument, "KEYS", "text rows grouped by a comma list of pid, "
	  "tid, comm (thread name), exe, sym, dso, srcline (default sym,dso); event: each "
	  "event on its own (--off-cpu: running and waiting apart)", 0, NULL },
	{ OPT_LINES, "lines", no_argument, NULL, "flat profile by source line (file:line, "
	  "from DWARF; [module] where there is none): the same as --sort srcline,sym", 0,
	  NULL },
	{ OPT_EVENT, "event", required_argument, "NAME", "a recording of several events: "
	  "this one only (text shows each by default, other formats the first); inuse: "
	  "the allocations --alloc sampled that were not freed", 0, NULL },
	{ 'M', "no-demangle", no_argument, NULL, "show C++ and Rust names as they are in the "
	  "binary", 0, NULL },
	{ OPT_DEMANGLE, "demangle", no_argument, NULL, NULL, 0, NULL },
	{ OPT_SIGNATURES, "signatures", no_argument, NULL, "text and tree: C++ names with "
	  "their parameter lists (gt::mix(int) const), overloads apart; by default they "
	  "show as perf shows them (gt::mix); other formats always have them (also "
	  "--full-names)", 0, NULL },
	{ OPT_SIGNATURES, "full-names", no_argument, NULL, NULL, 0, NULL },
	{ OPT_NO_INLINE, "no-inline", no_argument, NULL, "no inline frames (by default "
	  "functions inlined at a sampled address are frames of their own, shown as NAME "
	  "[inlined], where DWARF describes them)", 0, NULL },
	{ OPT_INLINE, "inline", no_argument, NULL, NULL, 0, NULL },
	{ OPT_PERCENT, "percent-limit", required_argument, "PCT", "hide rows under PCT% in "
	  "the column they sort by (Self; Total with --children), tree nodes under PCT% "
	  "Total (default 0 for text, 0.5 for the tree and for text on a terminal, which "
	  "says what it hid)", 0, NULL },
	{ OPT_CHILDREN, "children", no_argument, NULL, "perf's default: Total (self and "
	  "callees) before Self, rows by Total (probe's default: Self, Total, rows by "
	  "Self)", 0, NULL },
	{ OPT_NO_CHILDREN, "no-children", no_argument, NULL, "Self only: rows with samples "
	  "of their own", CMDOPT_OR, NULL },
	{ 'g', "call-graph", required_argument, "SPEC", "the call tree (perf's words: graph, "
	  "caller, callee, a threshold %, function, percent); callee: leaves at the root, "
	  "callers below", 0, NULL },
	{ 'G', NULL, no_argument, NULL, "the same as -g callee", 0, NULL },
	{ 'c', "comms", required_argument, "NAMES", "only samples of these threads (comma "
	  "list of thread names)", 0, NULL },
	{ OPT_PID, "pid", required_argument, "PIDS", "only samples of these processes", 0,
	  NULL },
	{ OPT_TID, "tid", required_argument, "TIDS", "only samples of these threads", 0,
	  NULL },
	{ 'd', "dsos", required_argument, "NAMES", "only samples whose leaf is in these "
	  "modules (basename or path)", 0, NULL },
	{ 'S', "symbols", required_argument, "NAMES", "only samples whose leaf is in these "
	  "functions (filters keep shares of the whole total)", 0, NULL },
	{ OPT_TIME, "time", required_argument, "START,END", "only samples between these "
	  "seconds from the start of the recording (either may be empty); shares are of "
	  "that window", 0, NULL },
	{ OPT_HEADER, "header", no_argument, NULL, "the recording's header first: command "
	  "line, host, kernel, event, duration, every process", 0, NULL },
	{ OPT_HEADER_ONLY, "header-only", no_argument, NULL, "that header alone", CMDOPT_OR,
	  NULL },
	{ 'n', "show-nr-samples", no_argument, NULL, "accepted (the Samples column always "
	  "shows)", 0, NULL },
	{ 'q', "quiet", no_argument, NULL, "no warnings, no header lines: rows only", 0,
	  NULL },
	{ OPT_STDIO, "stdio", no_argument, NULL, "accepted for perf compatibility (always "
	  "stdio)", 0, NULL },
	{ OPT_TITLE, "title", required_argument, "TEXT", "a picture's title", 0, NULL },
	{ OPT_WIDTH, "width", required_argument, "PX", "a picture's width in pixels (default "
	  "1200)", 0, NULL },
	{ OPT_INVERTED, "inverted", no_argument, NULL, "a picture upside down: leaves at the "
	  "root (icicle)", 0, NULL },
	{ OPT_MAX_MEMORY, "max-memory", required_argument, "MIB", "the memory the "
	  "recording's distinct stacks may take, reporting them included (default "
	  CMDOPT_STR(REPORT_MEMORY_MIB) "; 0: no bound); samples of stacks beyond are "
	  "counted as dropped, and the report says how many", 0, NULL },
	{ 'h', "help", no_argument, NULL, "this help", 0, NULL },
	{ 0, NULL, 0, NULL, NULL, 0, NULL },
};

const struct cmd_spec report_spec = {
	.cmd = "report",
	.lead = "[[-i] FILE]",
	.about = "Show a recording made by probe record (default FILE: probe.data).\n",
	.notes =
		"Shares are by event weight (the sampling period), like perf's period.\n"
		"Names come from the files the recording names, checked against their\n"
		"recorded build-ids: .symtab, separate debug files (/usr/lib/debug),\n"
		"MiniDebugInfo, .dynsym; an address nothing names is module+0xOFFSET.\n",
	.opts = report_opts,
};

#define usage_error(...) cmd_usage_error("report", __VA_ARGS__)

/*
 * The width the tree's lines are cut to on standard output: $COLUMNS
 * where it is set to a number (0: whole lines), else a terminal's; 0:
 * not cut.
 */
static unsigned terminal_columns(void)
{
	const char *env = getenv("COLUMNS");
	uint64_t v;
	if (env && *env && parse_u64(env, &v) == 0)
		return v > 100000 ? 100000 : (unsigned)v;
	struct winsize ws;
	if (isatty(1) && ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 0;
}

/* "event" among the keys: each event on its own (*by_event). */
static int parse_keys(const char *s, struct report_opts *o, int *by_event)
{
	o->nkeys = 0;
	const char *p = s;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == 5 && strncmp(p, "event", 5) == 0 && !*by_event) {
			*by_event = 1;
			if (!comma)
				break;
			p = comma + 1;
			continue;
		}
		enum sort_key k = sort_key_parse(p, len);
		if (k == KEY_COUNT || o->nkeys == REPORT_MAX_KEYS)
			return -1;
		for (int i = 0; i < o->nkeys; i++)
			if (o->keys[i] == k)
				return -1;
		o->keys[o->nkeys++] = k;
		if (!comma)
			return 0;
		p = comma + 1;
	}
	if (o->nkeys == 0) {            /* event alone: the default rows */
		o->keys[0] = KEY_SYM;
		o->keys[1] = KEY_DSO;
		o->nkeys = 2;
	}
	return 0;
}

/* ---- perf's -g (the filters and --time: report_filter.c) ---------------- */

/*
 * perf's -g words: print type, threshold, order, key, value.  What probe
 * cannot show is refused with why (msg); 0, or -1.
 */
static int parse_callgraph(const char *spec, struct report_opts *o, int *tree,
			   char *msg, size_t msgn)
{
	char *copy = xstrdup(spec), *save = NULL;
	int rc = 0, nums = 0;
	*tree = 1;
	for (char *w = strtok_r(copy, ",", &save); w && rc == 0; w = strtok_r(NULL, ",", &save)) {
		double pct;
		if (strcmp(w, "graph") == 0 || strcmp(w, "function") == 0 ||
		    strcmp(w, "percent") == 0 || strcmp(w, "caller") == 0) {
			if (strcmp(w, "caller") == 0)
				o->callee = 0;
		} else if (strcmp(w, "callee") == 0) {
			o->callee = 1;
		} else if (strcmp(w, "none") == 0) {
			*tree = 0;
		} else if (parse_percent(w, &pct) == 0) {
			if (nums++) {
				snprintf(msg, msgn, "'%s': a print limit is not supported (probe's "
					 "tree shows every node over the threshold)", w);
				rc = -1;
			} else if (!o->percent_limit_set) {
				o->percent_limit = pct;
				o->percent_limit_set = 1;
			}
		} else if (strcmp(w, "fractal") == 0 || strcmp(w, "flat") == 0) {
			snprintf(msg, msgn, "'%s': probe's tree shows shares of the total only "
				 "(use graph)", w);
			rc = -1;
		} else if (strcmp(w, "folded") == 0) {
			snprintf(msg, msgn, "'folded': use --format folded");
			rc = -1;
		} else if (strcmp(w, "address") == 0 || strcmp(w, "period") == 0 ||
			   strcmp(w, "count") == 0 || strcmp(w, "branch") == 0) {
			snprintf(msg, msgn, "'%s': probe's tree is by function, in percent", w);
			rc = -1;
		} else {
			snprintf(msg, msgn, "unknown word '%s' (use graph, caller, callee, "
				 "none, or a threshold in %%)", w);
			rc = -1;
		}
	}
	free(copy);
	return rc;
}

/* Is w a comma list of -g's words and numbers ("-g callee" takes it)? */
static int callgraph_word(const char *w)
{
	static const char *const words[] = { "graph", "fractal", "flat", "folded", "none",
		"caller", "callee", "function", "address", "percent", "period", "count",
		"branch" };
	if (!*w)
		return 0;
	for (const char *p = w; *p;) {
		size_t len = strcspn(p, ","), i;
		if (len && strspn(p, "0123456789.") == len)
			i = 0;
		else {
			for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
				if (strlen(words[i]) == len && strncmp(words[i], p, len) == 0)
					break;
			if (i == sizeof(words) / sizeof(words[0]))
				return 0;
		}
		p += len;
		if (*p)
			p++;
	}
	return 1;
}

/*
 * "-g callee" is two words for perf; getopt takes one.  A bare -g takes the
 * next word when it is one of -g's ("-g caller"), else means "graph".
 */
static char **join_g(int argc, char **argv, char ***owned, size_t *nowned, int *nargs)
{
	char **v = xmalloc(((size_t)argc + 1) * sizeof(*v));
	int n = 0;
	*owned = xmalloc(((size_t)argc + 1) * sizeof(**owned));
	*nowned = 0;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			while (i < argc)
				v[n++] = argv[i++];
			break;
		}
		if (strcmp(argv[i], "-g") == 0) {
			int take = i + 1 < argc && callgraph_word(argv[i + 1]);
			char *s = xasprintf("--call-graph=%s", take ? argv[i + 1] : "graph");
			(*owned)[(*nowned)++] = s;
			v[n++] = s;
			i += take;
			continue;
		}
		v[n++] = argv[i];
	}
	v[n] = NULL;
	*nargs = n;
	return v;
}


/* Does the recording (agg) hold an event named name? */
static int has_event(const struct agg *a, const char *name)
{
	for (size_t i = 0; i < agg_nevents(a); i++)
		if (strcmp(agg_events(a)[i].name, name) == 0)
			return 1;
	return 0;
}

/* "cpu-clock, page-faults" */
static char *event_names(const struct agg *a)
{
	char *s = xstrdup("");
	for (size_t i = 0; i < agg_nevents(a); i++) {
		char *n = xasprintf("%s%s%s", s, i ? ", " : "", agg_events(a)[i].name);
		free(s);
		s = n;
	}
	return s;
}

/*
 * One report of the recording (of one event of it, when it holds several)
 * into out; *keep: what was read, for the caller to free.  0, or -1
 * after a message; 1: the recording could not be read.
 */
static int report_one(struct report_opts *o, struct filters *fl, int header,
		      const char *event, FILE *out, struct agg **keep)
{
	if (event && strcmp(event, "inuse") == 0 && fl->time_set) {
		probe_err("--event inuse: what stays in use is what the whole recording "
			  "left: not with --time (the speedscope format shows it over time)");
		return -1;
	}
	struct agg *a = recording_load(o->file, o->format->samples || fl->time_set, event,
				       memory_mib);
	if (!a)
		return 1;
	*keep = a;
	if (event && !has_event(a, event)) {
		char *names = event_names(a), *f = printable_dup(o->file);
		probe_err("%s: no event '%s' in this recording; it holds %s", f, event,
			  names[0] ? names : "none");
		free(names);
		free(f);
		return -1;
	}
	if (header == 2) {
		report_info(a, o->file, out);
		*keep = a;
		return 0;
	}
	if (agg_totals(a)->samples == 0 && !agg_totals(a)->other_events && !agg_inuse_shown(a)) {
		char *f = printable_dup(o->file);
		probe_warn("%s: no samples in this recording", f);
		free(f);
	}
	if (header == 1)
		report_info(a, o->file, out);
	char *time_line = NULL, *filter_line = NULL;
	struct symcache *sc = symcache_new();
	struct resolver *res = resolver_new(a, sc, &o->resolve);
	apply_filters(a, res, fl, o, &time_line, &filter_line);
	struct report_ctx ctx;
	report_ctx_init(&ctx, o, a, res);
	int rc = o->format->write(&ctx, out);
	o->time_line = o->filter_line = NULL;
	free(time_line);
	free(filter_line);
	resolver_free(res);
	symcache_free(sc);
	*keep = a;
	return rc < 0 ? -1 : 0;
}

/*
 * The report: of the event asked for (--event), else of the first; a text
 * report of a recording of several events (-e a,b) shows each in turn, as
 * perf report does; other formats show the first and say how to see the
 * others.  A recording made with --off-cpu shows its off-CPU time with the
 * first event, as shares of wall time, unless by_event (--sort event)
 * asks for each on its own.
 */
static int report_events_of(struct report_opts *o, struct filters *fl, int header,
			    const char *event, int by_event)
{
	struct outfile of;
	struct agg *a = NULL;
	if (outfile_open(&of, o->output) < 0)
		return 1;
	int rc = report_one(o, fl, header, event, of.f, &a);
	int texty = o->format == format_find("text") || o->format == format_find("stdio") ||
		    o->format == format_find("tree");
	size_t nev = a ? agg_nevents(a) : 0;
	/*
	 * The events not shown yet: after the first, and off-cpu when it was
	 * shown with it, inuse when pprof's heap types hold it; by_event:
	 * every other one (event is the first).
	 */
	char **names = xcalloc(nev ? nev : 1, sizeof(*names));
	size_t nrest = 0, nshown = 1;
	for (size_t i = 1; i < nev; i++) {
		const char *n = agg_events(a)[i].name;
		if (!by_event && ((agg_wall(a) && strcmp(n, "off-cpu") == 0) ||
				  (agg_bytes(a) && !agg_inuse_shown(a) &&
				   o->format == format_find("pprof") && strcmp(n, "inuse") == 0)))
			nshown++;
		else
			names[nrest++] = xstrdup(n);
	}
	if (by_event)
		event = NULL;
	nev = nrest + 1;
	if (rc == 0 && !event && nev > 1 && header != 2 && texty &&
	    strcmp(o->file, "-") == 0) {
		probe_warn("the recording holds %zu events; from standard input only the "
			   "first is shown (give the file, or --event NAME)", nev);
	} else if (rc == 0 && !event && nev > 1 && header != 2 && texty) {
		for (size_t i = 0; i < nrest && rc == 0; i++) {
			struct agg *b = NULL;
			fprintf(of.f, "\n");
			rc = report_one(o, fl, 0, names[i], of.f, &b);
			agg_free(b);
		}
	} else if (rc == 0 && !event && nev > 1 && header != 2) {
		char *all = event_names(a);
		probe_warn("the recording holds %zu events (%s); --format %s shows the "
			   "first%s: --event NAME for another", agg_nevents(a), all,
			   o->format->name, agg_wall(a) ? " with off-cpu" :
			   nshown > 1 ? " with inuse" : "");
		free(all);
	}
	for (size_t i = 0; i < nrest; i++)
		free(names[i]);
	free(names);
	agg_free(a);
	return outfile_close(&of, rc ? -1 : 0) < 0 || rc ? 1 : 0;
}

static int report_events(struct report_opts *o, struct filters *fl, int header,
			 const char *event, int by_event)
{
	const char *first = NULL;
	if (event)
		by_event = 0;   /* --event: that one alone */
	if (by_event && strcmp(o->file, "-") == 0) {
		probe_err("--sort event reads the recording once per event: give "
			  "the file, not standard input");
		return 1;
	}
	if (by_event) {
		/* The first event by its name: alone, not with off-cpu. */
		struct agg *b = recording_load(o->file, 0, NULL, memory_mib);
		if (!b)
			return 1;
		if (agg_nevents(b))
			first = xstrdup(agg_events(b)[0].name);
		agg_free(b);
		event = first;
	}
	int rc = report_events_of(o, fl, header, event, by_event);
	free((char *)first);
	return rc;
}

/* What the command line says: the options, then the file. */
struct report_args {
	struct report_opts o;
	struct filters fl;
	int header;             /* 1: --header, 2: --header-only */
	int want_tree;          /* -g: 1 a tree, -1 not, 0 not said */
	int format_set, by_event, signatures;
	const char *event;
	char msg[256];
};

/* The filters (--comms, --dsos, --symbols, --pid, --tid, --time): 0, 1 not one, -1 said. */
static int filter_option(struct report_args *a, int c)
{
	switch (c) {
	case 'c':
		if (parse_names(optarg, &a->fl.comms) < 0) {
			usage_error("bad --comms '%s': use a comma list of thread names", optarg);
			return -1;
		}
		break;
	case 'd':
		if (parse_names(optarg, &a->fl.dsos) < 0) {
			usage_error("bad --dsos '%s': use a comma list of modules (libc.so.6 "
				    "or its path)", optarg);
			return -1;
		}
		break;
	case 'S':
		if (parse_names(optarg, &a->fl.syms) < 0) {
			usage_error("bad --symbols '%s': use a comma list of function names",
				    optarg);
			return -1;
		}
		break;
	case OPT_PID:
		if (parse_ids(optarg, &a->fl.pids) < 0) {
			usage_error("bad --pid '%s': use a comma list of process ids", optarg);
			return -1;
		}
		break;
	case OPT_TID:
		if (parse_ids(optarg, &a->fl.tids) < 0) {
			usage_error("bad --tid '%s': use a comma list of thread ids", optarg);
			return -1;
		}
		break;
	case OPT_TIME:
		if (parse_time(optarg, &a->fl) < 0) {
			usage_error("bad --time '%s': use START,END in seconds from the start "
				    "of the recording, either may be empty (1.5,3 or ,2.5 or "
				    "1,), START not after END", optarg);
			return -1;
		}
		break;
	default:
		return 1;
	}
	return 0;
}

/* Where and how it is written (--format, --tree, -o, the picture's): as filter_option. */
static int output_option(struct report_args *a, int c)
{
	uint64_t width;
	switch (c) {
	case OPT_FORMAT:
		if (!(a->o.format = format_find(optarg))) {
			usage_error("unknown format '%s' (use %s)", optarg, format_names());
			return -1;
		}
		a->format_set = 1;
		break;
	case OPT_TREE:
		a->o.format = format_find("tree");
		a->format_set = 1;
		break;
	case 'o':
		a->o.output = optarg;
		break;
	case OPT_TITLE:
		a->o.title = optarg;
		break;
	case OPT_WIDTH:
		if (parse_u64(optarg, &width) < 0 || width < 100 || width > 100000) {
			usage_error("bad --width '%s': use a number of pixels "
				    "from 100 to 100000", optarg);
			return -1;
		}
		a->o.width = (unsigned)width;
		break;
	case OPT_INVERTED:
		a->o.inverted = 1;
		a->o.callee = 1;   /* the tree too: perf's -G, --inverted */
		break;
	default:
		return 1;
	}
	return 0;
}

/* One option (filter_option's, then output_option's): 0, or -1 after a usage error. */
static int report_option(struct report_args *a, int c)
{
	int f = filter_option(a, c);
	if (f == 1)
		f = output_option(a, c);
	if (f <= 0)
		return f;
	switch (c) {
	case OPT_CHILDREN:
		a->o.children = 1;
		break;
	case OPT_NO_CHILDREN:
		a->o.children = -1;
		break;
	case 'g': {
		int tree;
		if (parse_callgraph(optarg, &a->o, &tree, a->msg, sizeof(a->msg)) < 0) {
			usage_error("bad -g '%s': %s", optarg, a->msg);
			return -1;
		}
		a->want_tree = tree ? 1 : -1;
		break;
	}
	case 'G':
		a->o.callee = 1;
		a->o.inverted = 1;
		a->want_tree = 1;
		break;
	case 'n':
		break;
	case 'q':
		a->o.quiet = 1;
		probe_no_warnings = 1;
		break;
	case OPT_HEADER:
		a->header = a->header ? a->header : 1;
		break;
	case OPT_HEADER_ONLY:
		a->header = 2;
		break;
	case OPT_EVENT:
		a->event = optarg;
		break;
	case OPT_SIGNATURES:
		a->signatures = 1;
		break;
	case OPT_MAX_MEMORY:
		if (parse_u64(optarg, &memory_mib) < 0 || memory_mib > (1u << 30)) {
			usage_error("bad --max-memory '%s': use MiB, 0 for no bound",
				    optarg);
			return -1;
		}
		break;
	case 'i':
		a->o.file = optarg;
		break;
	case 's':
		if (parse_keys(optarg, &a->o, &a->by_event) < 0) {
			usage_error("bad --sort '%s': use a comma list of distinct "
				    "pid, tid, comm, exe, sym, dso, srcline, event",
				    optarg);
			return -1;
		}
		break;
	case OPT_LINES:
		a->o.keys[0] = KEY_SRCLINE;
		a->o.keys[1] = KEY_SYM;
		a->o.nkeys = 2;
		a->o.format = format_find("text");
		a->format_set = 1;
		break;
	case 'M':
		a->o.resolve.demangle = 0;
		break;
	case OPT_DEMANGLE:
		a->o.resolve.demangle = 1;
		break;
	case OPT_NO_INLINE:
		a->o.resolve.inline_frames = 0;
		break;
	case OPT_INLINE:
		a->o.resolve.inline_frames = 1;
		break;
	case OPT_PERCENT:
		if (parse_percent(optarg, &a->o.percent_limit) < 0) {
			usage_error("bad --percent-limit '%s': use a number from 0 to 100",
				    optarg);
			return -1;
		}
		a->o.percent_limit_set = 1;
		break;
	case OPT_STDIO:
		break;
	}
	return 0;
}

/* After the options: the file, the format -g and --tree made, the terminal's bounds. */
static int report_settle(struct report_args *a, int argc, char **args)
{
	struct report_opts *o = &a->o;
	if (optind < argc) {
		if (o->file || optind + 1 < argc) {
			usage_error("one recording at a time (extra '%s')",
				    args[o->file ? optind : optind + 1]);
			return -1;
		}
		o->file = args[optind];
	}
	if (!o->file)
		o->file = "probe.data";
	int texty = o->format == format_find("text") || o->format == format_find("stdio");
	if (a->want_tree == 1 && texty)
		o->format = format_find("tree");
	else if (a->want_tree == -1 && o->format == format_find("tree") && !a->format_set)
		o->format = format_find("text");
	texty = o->format == format_find("text") || o->format == format_find("stdio");
	/*
	 * The terminal's reports name C++ functions as perf does, without
	 * their parameter lists; the formats other tools read keep the full
	 * signature (pprof, speedscope and flame graphs merge frames by name,
	 * and overloads must stay apart there).
	 */
	o->resolve.short_names = !a->signatures && (texty || o->format == format_find("tree"));
	if (a->header == 1 && !texty && o->format != format_find("tree")) {
		usage_error("--header is for the text reports (text, tree), not --format %s: "
			    "use --header-only for the header alone", o->format->name);
		return -1;
	}
	if (o->format->binary && !o->output && isatty(1) && a->header != 2) {
		usage_error("--format %s is binary: give -o FILE, or pipe it", o->format->name);
		return -1;
	}
	if (o->format == format_find("tree") && !o->output)
		o->columns = terminal_columns();
	/* A terminal shows what fits: rows over 0.5 %, and how many are not. */
	if (texty && !o->output && !o->percent_limit_set && !o->quiet && isatty(1)) {
		o->percent_limit = 0.5;
		o->tty_limit = 1;
	}

	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct report_args a = { .o = { .file = NULL, .format = format_find("text") } };
	memory_mib = REPORT_MEMORY_MIB;
	a.o.keys[0] = KEY_SYM;
	a.o.keys[1] = KEY_DSO;
	a.o.nkeys = 2;
	a.o.resolve.demangle = 1;
	a.o.resolve.inline_frames = 1;
	char **owned;
	size_t nowned;
	char **args = join_g(argc, argv, &owned, &nowned, &argc);
	int c, rc = 2;
	opterr = 0;
	optind = 1;
	while ((c = cmdopt_next(argc, args, &report_spec)) != -1) {
		if (c == 'h') {
			cmdopt_usage(stdout, &report_spec);
			rc = 0;
			goto out;
		}
		if (c == '?' || c == ':') {
			rc = cmd_bad_option("report", c, args);
			goto out;
		}
		if (report_option(&a, c) < 0)
			goto out;
	}
	if (report_settle(&a, argc, args) == 0)
		rc = report_events(&a.o, &a.fl, a.header, a.event, a.by_event);
out:
	filters_free(&a.fl);
	for (size_t i = 0; i < nowned; i++)
		free(owned[i]);
	free(owned);
	free(args);
	return rc;
}
