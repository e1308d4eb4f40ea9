/*
 * diff.c - `probe diff BASE NEW`: what changed between two recordings, as
 * perf diff shows it.
 *
 * Rows are functions (name and module), with their self share in each
 * recording (percent of that recording's total weight, or of its samples
 * when weights are missing), and the change in points, NEW minus BASE;
 * sorted by the largest change.  --format folded writes every stack with
 * its samples in both (FlameGraph's difffolded.pl layout, which
 * flamegraph.pl draws as a differential flame graph); --format svg draws
 * that graph itself (flame.h): NEW's widths, red where a frame's share
 * grew, blue where it shrank.
 *
 * Functions are matched by name and module basename, not by address: a
 * rebuilt program moves every address.  A program's own functions are
 * matched by name alone when its builds have different names (app_old in
 * BASE, app_new in NEW), as pprof keys them: the executables of one
 * recording whose basename the other lacks are one module, shown as
 * "app_old->app_new", in the rows, the folded stacks and the SVG
 * (report_ctx's alias); executables found in both, and libraries, pair by
 * basename as before.  --by-module keeps every module in the key.
 * With no files named, BASE is
 * probe.data.old and NEW probe.data (probe record moves the old recording
 * aside), as perf diff takes perf.data.old and perf.data.
 */
#include "cmd/diff.h"
#include "session/load.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmdopt.h"
#include "flame/flame.h"
#include "format/format.h"
#include "hashtab.h"
#include "format/outfile.h"
#include "symbols/resolve.h"
#include "symbols/symbols.h"
#include "util.h"

#define usage_error(...) cmd_usage_error("diff", __VA_ARGS__)

/* Long-only options' keys (cmdopt.h). */
enum { OPT_FORMAT = CMDOPT_LONG, OPT_PERCENT, OPT_NO_INLINE, OPT_BY_MODULE, OPT_TITLE,
       OPT_WIDTH };

/* --format's names, in the order -h lists them (the completion reads them there). */
enum { FMT_TEXT, FMT_FOLDED, FMT_SVG, NFORMATS };
static const char *const formats[NFORMATS][2] = {
	{ "text", "each function's self share in BASE and NEW, and the change "
	  "(the default)" },
	{ "folded", "every stack with its samples in BASE and in NEW "
	  "(difffolded.pl's layout)" },
	{ "svg", "a differential flame graph" },
};

static void formats_more(FILE *out, int col)
{
	for (size_t i = 0; i < NFORMATS; i++) {
		int c = fprintf(out, "%*s%-12s ", col + 2, "", formats[i][0]);
		help_wrap(out, c, c, formats[i][1]);
	}
}

static const struct cmd_option diff_opts[] = {
	{ OPT_FORMAT, "format", required_argument, "FORMAT", "one of:", 0, formats_more },
	{ 'o', "output", required_argument, "OUT", "write to OUT instead of standard output",
	  0, NULL },
	{ OPT_PERCENT, "percent-limit", required_argument, "PCT", "hide rows that changed "
	  "less than PCT points", 0, NULL },
	{ 'M', "no-demangle", no_argument, NULL, "names as they are in the binary", 0, NULL },
	{ OPT_NO_INLINE, "no-inline", no_argument, NULL, "no inline frames", 0, NULL },
	{ OPT_BY_MODULE, "by-module", no_argument, NULL, "keep the program's name in the "
	  "key: app_old's and app_new's functions apart", 0, NULL },
	{ OPT_TITLE, "title", required_argument, "TEXT", "the svg's title", 0, NULL },
	{ OPT_WIDTH, "width", required_argument, "PX", "the svg's width (default 1200)", 0,
	  NULL },
	{ 'h', "help", no_argument, NULL, "this help", 0, NULL },
	{ 0, NULL, 0, NULL, NULL, 0, NULL },
};

const struct cmd_spec diff_spec = {
	.cmd = "diff",
	.lead = "[BASE NEW]",
	.about =
		"What changed from BASE to NEW (default probe.data.old and probe.data):\n"
		"each function's self share in both, and the change in points, largest\n"
		"first.  --format folded: every stack with its samples in BASE and in\n"
		"NEW (difffolded.pl's layout: flamegraph.pl draws it in red and blue).\n"
		"--format svg: that differential flame graph, drawn by probe: NEW's\n"
		"widths, red where a frame's share grew, blue where it shrank (a\n"
		"function found only in BASE has no width: see the text rows).\n"
		"Functions pair by name and module; a program built under two names\n"
		"(app_old in BASE, app_new in NEW) is one module, app_old->app_new, so\n"
		"that its functions pair by name, as pprof pairs them.\n",
	.opts = diff_opts,
};

/* One recording, loaded and ready to resolve. */
struct side {
	const char *file;
	struct agg *agg;
	struct resolver *res;
	struct report_ctx ctx;
};

/* One function: its self amount in base [0] and new [1]. */
struct frow {
	UT_hash_handle hh;
	const char *sym, *dso;
	uint64_t amount[2];
	double pct[2], delta;
	char key[];
};

struct diff {
	struct report_opts o;
	const char *folded;     /* non-NULL: --format folded */
	int svg;                /* --format svg */
	int by_module;          /* --by-module: no pairing of programs */
	char *paired;           /* "app_old->app_new", or NULL (pair_programs) */
	char *apart;            /* "a,b|c": several on a side, left apart */
	struct exe_alias *alias[2];
	struct symcache *sc;
	struct side side[2];
	struct frow *rows;
};

static int load_side(struct diff *d, int i)
{
	struct side *s = &d->side[i];
	if (!(s->agg = recording_load(s->file, 0, NULL, LOAD_MEMORY_MIB)))
		return -1;
	s->res = resolver_new(s->agg, d->sc, &d->o.resolve);
	report_ctx_init(&s->ctx, &d->o, s->agg, s->res);
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static int cmp_exe(const void *x, const void *y)
{
	const char *a = *(const char *const *)x, *b = *(const char *const *)y;
	int c = strcmp(base_name(a), base_name(b));
	return c ? c : strcmp(a, b);
}

/* The distinct executables of one recording, sorted by basename. */
static const char **exes_of(const struct agg *a, size_t *n)
{
	size_t ni = agg_nimages(a), m = 0, k = 0;
	const char **v = xmalloc((ni ? ni : 1) * sizeof(*v));
	for (size_t j = 0; j < ni; j++)
		if (agg_image(a, (uint32_t)j)->exe[0])
			v[m++] = agg_image(a, (uint32_t)j)->exe;
	qsort(v, m, sizeof(*v), cmp_exe);
	for (size_t j = 0; j < m; j++)
		if (!k || strcmp(v[k - 1], v[j]) != 0)
			v[k++] = v[j];
	*n = k;
	return v;
}

static int has_base(const char **v, size_t n, const char *base)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(base_name(v[mid]), base);
		if (!c)
			return 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/*
 * The basenames of v that w lacks, joined by commas (the first 3, then
 * "+N"), and how many distinct ones there are.
 */
static size_t unpaired(const char **v, size_t n, const char **w, size_t nw, char **names)
{
	size_t count = 0;
	*names = xstrdup("");
	for (size_t j = 0; j < n; j++) {
		const char *b = base_name(v[j]);
		if (has_base(w, nw, b) || (j && strcmp(base_name(v[j - 1]), b) == 0))
			continue;
		if (++count <= 3) {
			char *t = xasprintf("%s%s%s", *names, count > 1 ? "," : "", b);
			free(*names);
			*names = t;
		}
	}
	if (count > 3) {
		char *t = xasprintf("%s,+%zu", *names, count - 3);
		free(*names);
		*names = t;
	}
	return count;
}

/*
 * The executable of each recording that the other has none of by basename
 * becomes one module, "BASE'S->NEW'S", in both (the contexts' alias): a
 * program rebuilt under another name pairs its functions by name.  Only
 * one such on each side: with more (sh -c ./app_old against ./app_new, a
 * build that ran gcc against one that ran clang) which pairs with which
 * is a guess, and joining them all would add unrelated programs' main
 * into one row; they stay apart and the header says so.
 */
static void pair_programs(struct diff *d)
{
	const char **v[2];
	size_t n[2], count[2];
	char *names[2];
	for (int i = 0; i < 2; i++)
		v[i] = exes_of(d->side[i].agg, &n[i]);
	for (int i = 0; i < 2; i++)
		count[i] = unpaired(v[i], n[i], v[!i], n[!i], &names[i]);
	if (count[0] && count[1] && (count[0] > 1 || count[1] > 1))
		d->apart = xasprintf("%s|%s", names[0], names[1]);
	if (count[0] == 1 && count[1] == 1) {
		d->paired = xasprintf("%s->%s", names[0], names[1]);
		for (int i = 0; i < 2; i++) {
			struct side *s = &d->side[i];
			d->alias[i] = xmalloc(n[i] * sizeof(*d->alias[i]));
			for (size_t j = 0; j < n[i]; j++)
				if (!has_base(v[!i], n[!i], base_name(v[i][j])))
					d->alias[i][s->ctx.nalias++] =
						(struct exe_alias){ v[i][j], d->paired };
			s->ctx.alias = d->alias[i];
		}
	}
	for (int i = 0; i < 2; i++) {
		free(v[i]);
		free(names[i]);
	}
}

static struct frow *row_of(struct diff *d, const char *sym, const char *dso)
{
	size_t ns = strlen(sym), nd = strlen(dso);
	char key[8192];
	if (nd > 4096)
		nd = 4096;
	if (ns + nd + 2 > sizeof(key))
		ns = sizeof(key) - nd - 2;
	memcpy(key, sym, ns);
	key[ns] = '\0';
	memcpy(key + ns + 1, dso, nd);
	key[ns + 1 + nd] = '\0';
	struct frow *r;
	HASH_FIND(hh, d->rows, key, ns + nd + 2, r);
	if (r)
		return r;
	r = xcalloc(1, sizeof(*r) + ns + nd + 2);
	memcpy(r->key, key, ns + nd + 2);
	r->sym = r->key;
	r->dso = r->key + ns + 1;
	HASH_ADD(hh, d->rows, key, ns + nd + 2, r);
	return r;
}

/* Each count's leaf frame (the function it was in) gets its amount. */
static void add_side(struct diff *d, int i)
{
	struct side *s = &d->side[i];
	struct rframe *fr = xmalloc(RESOLVE_MAX_FRAMES * sizeof(*fr));
	const struct agg_count *k = agg_counts(s->agg);
	for (size_t j = 0; j < agg_ncounts(s->agg); j++) {
		uint32_t n = resolve_stack(s->res, &k[j], fr);
		if (!n)
			continue;
		const struct loc *l = resolver_loc(s->res, fr[0].loc);
		struct frow *r = row_of(d, l->sym, report_loc_module(&s->ctx, l));
		r->amount[i] += report_amount(&s->ctx, &k[j]);
	}
	free(fr);
}

static int cmp_row(const void *x, const void *y)
{
	const struct frow *a = *(const struct frow *const *)x;
	const struct frow *b = *(const struct frow *const *)y;
	double da = fabs(a->delta), db = fabs(b->delta);
	if (da != db)
		return da > db ? -1 : 1;
	int c = strcmp(a->sym, b->sym);
	return c ? c : strcmp(a->dso, b->dso);
}

static void header(const struct diff *d, FILE *out)
{
	fprintf(out, "# probe diff: %s (base) -> %s (new)\n", d->side[0].file,
		d->side[1].file);
	for (int i = 0; i < 2; i++) {
		const struct agg_totals *t = agg_totals(d->side[i].agg);
		fprintf(out, "# %s: %llu samples, %u process%s, %u thread%s\n",
			i ? "new " : "base", (unsigned long long)t->samples, t->processes,
			t->processes == 1 ? "" : "es", t->threads, t->threads == 1 ? "" : "s");
	}
	if (d->paired)
		fprintf(out, "# %s: programs found in one recording only, their functions "
			"paired by name (--by-module: apart)\n", d->paired);
	if (d->apart)
		fprintf(out, "# %s: programs found in one recording only, more than one "
			"on a side: not paired (which is which would be a guess)\n", d->apart);
	fprintf(out, "# self shares, in percent of each recording%s; Delta: new - base, "
		"in points\n#\n", d->side[0].ctx.by_samples || d->side[1].ctx.by_samples ?
		"'s samples" : "'s total weight");
}

static int write_text(struct diff *d, FILE *out)
{
	size_t n = HASH_COUNT(d->rows), m = 0;
	struct frow **v = xmalloc((n ? n : 1) * sizeof(*v));
	for (struct frow *r = d->rows; r; r = r->hh.next) {
		for (int i = 0; i < 2; i++)
			r->pct[i] = report_pct(&d->side[i].ctx, r->amount[i]);
		r->delta = r->pct[1] - r->pct[0];
		if (fabs(r->delta) >= d->o.percent_limit)
			v[m++] = r;
	}
	qsort(v, m, sizeof(*v), cmp_row);
	size_t w = 8;
	for (size_t i = 0; i < m; i++)
		if (strlen(v[i]->sym) > w)
			w = strlen(v[i]->sym) > 60 ? 60 : strlen(v[i]->sym);
	header(d, out);
	fprintf(out, "#  Base %%   New %%    Delta  %-*s  Module\n", (int)w, "Function");
	for (size_t i = 0; i < m; i++)
		fprintf(out, "  %7.2f  %7.2f  %+7.2f  %-*s  %s\n", v[i]->pct[0], v[i]->pct[1],
			v[i]->delta, (int)w, v[i]->sym, v[i]->dso);
	free(v);
	return 0;
}

static int write_out(struct diff *d)
{
	struct outfile of;
	if (outfile_open(&of, d->o.output) < 0)
		return -1;
	int rc = 0;
	if (d->svg) {
		struct flame *f = flame_new();
		flame_fill(f, &d->side[0].ctx, 0);
		flame_fill(f, &d->side[1].ctx, 1);
		rc = flame_svg_diff(&d->side[0].ctx, &d->side[1].ctx, f, of.f);
		flame_free(f);
	} else if (d->folded) {
		struct folded set = { 0 };
		folded_add(&set, &d->side[0].ctx, 0);
		folded_add(&set, &d->side[1].ctx, 1);
		folded_write(&set, of.f, 1);
		folded_free(&set);
	} else {
		for (int i = 0; i < 2; i++)
			add_side(d, i);
		rc = write_text(d, of.f);
	}
	return outfile_close(&of, rc);
}

static void diff_free(struct diff *d)
{
	struct frow *r, *t;
	HASH_ITER(hh, d->rows, r, t) {
		HASH_DEL(d->rows, r);
		free(r);
	}
	for (int i = 0; i < 2; i++) {
		if (d->side[i].res)
			resolver_free(d->side[i].res);
		if (d->side[i].agg)
			agg_free(d->side[i].agg);
	}
	if (d->sc)
		symcache_free(d->sc);
	free(d->alias[0]);
	free(d->alias[1]);
	free(d->paired);
	free(d->apart);
}

static int parse(struct diff *d, int argc, char **argv)
{
	int c;
	uint64_t width;
	opterr = 0;
	optind = 1;
	while ((c = cmdopt_next(argc, argv, &diff_spec)) != -1) {
		switch (c) {
		case OPT_FORMAT: {
			size_t f = 0;
			while (f < NFORMATS && strcmp(optarg, formats[f][0]) != 0)
				f++;
			if (f == NFORMATS)
				return usage_error("unknown format '%s' (use text, folded or svg)",
						   optarg);
			d->folded = f == FMT_FOLDED ? optarg : NULL;
			d->svg = f == FMT_SVG;
			break;
		}
		case OPT_TITLE:
			d->o.title = optarg;
			break;
		case OPT_WIDTH:
			if (parse_u64(optarg, &width) < 0 || width < 100 || width > 100000)
				return usage_error("bad --width '%s': use a number of pixels "
						   "from 100 to 100000", optarg);
			d->o.width = (unsigned)width;
			break;
		case 'o':
			d->o.output = optarg;
			break;
		case OPT_PERCENT:
			if (parse_percent(optarg, &d->o.percent_limit) < 0)
				return usage_error("bad --percent-limit '%s': use a number from 0 "
						   "to 100", optarg);
			break;
		case 'M':
			d->o.resolve.demangle = 0;
			break;
		case OPT_NO_INLINE:
			d->o.resolve.inline_frames = 0;
			break;
		case OPT_BY_MODULE:
			d->by_module = 1;
			break;
		case 'h':
			cmdopt_usage(stdout, &diff_spec);
			return 0;
		default:
			return cmd_bad_option("diff", c, argv);
		}
	}
	if (argc - optind == 1 || argc - optind > 2)
		return usage_error("give two recordings, BASE and NEW (or none: "
				   "probe.data.old and probe.data)");
	d->side[0].file = optind < argc ? argv[optind] : "probe.data.old";
	d->side[1].file = optind < argc ? argv[optind + 1] : "probe.data";
	return -1;
}

int cmd_diff(int argc, char **argv)
{
	struct diff d = { 0 };
	d.o.title = "Differential Flame Graph";
	d.o.resolve.demangle = 1;
	d.o.resolve.inline_frames = 1;
	int rc = parse(&d, argc, argv);
	if (rc >= 0)
		return rc;
	d.sc = symcache_new();
	rc = load_side(&d, 0) < 0 || load_side(&d, 1) < 0;
	if (!rc && !d.by_module)
		pair_programs(&d);
	rc = rc || write_out(&d) < 0;
	diff_free(&d);
	return rc;
}
