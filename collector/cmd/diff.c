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
 * rebuilt program moves every address.  With no files named, BASE is
 * probe.data.old and NEW probe.data (probe record moves the old recording
 * aside), as perf diff takes perf.data.old and perf.data.
 */
#include "diff.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmdopt.h"
#include "flame.h"
#include "format.h"
#include "hashtab.h"
#include "outfile.h"
#include "report.h"
#include "resolve.h"
#include "symbols.h"
#include "util.h"

#define usage_error(...) cmd_usage_error("diff", __VA_ARGS__)

void diff_usage(FILE *out)
{
	fprintf(out,
		"usage: probe diff [BASE NEW] [--format text|folded|svg] [-o OUT]\n"
		"                  [--percent-limit PCT] [--no-demangle] [--no-inline]\n"
		"                  [--title TEXT] [--width PX]\n"
		"\n"
		"What changed from BASE to NEW (default probe.data.old and probe.data):\n"
		"each function's self share in both, and the change in points, largest\n"
		"first.  --format folded: every stack with its samples in BASE and in\n"
		"NEW (difffolded.pl's layout: flamegraph.pl draws it in red and blue).\n"
		"--format svg: that differential flame graph, drawn by probe: NEW's\n"
		"widths, red where a frame's share grew, blue where it shrank (a\n"
		"function found only in BASE has no width: see the text rows).\n"
		"\n"
		"  --format FORMAT        text (default), folded or svg\n"
		"  -o, --output OUT       write to OUT instead of standard output\n"
		"  --percent-limit PCT    hide rows that changed less than PCT points\n"
		"  -M, --no-demangle      names as they are in the binary\n"
		"  --no-inline            no inline frames\n"
		"  --title TEXT, --width PX   the svg's title and width (default 1200)\n"
		"  -h, --help             this help\n");
}

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
	struct symcache *sc;
	struct side side[2];
	struct frow *rows;
};

static int load_side(struct diff *d, int i)
{
	struct side *s = &d->side[i];
	if (!(s->agg = report_load(s->file, 0)))
		return -1;
	s->res = resolver_new(s->agg, d->sc, &d->o.resolve);
	report_ctx_init(&s->ctx, &d->o, s->agg, s->res);
	return 0;
}

static struct frow *row_of(struct diff *d, const struct loc *l)
{
	size_t ns = strlen(l->sym), nd = strlen(l->dso);
	char key[8192];
	if (ns + nd + 2 > sizeof(key))
		ns = sizeof(key) - nd - 2;
	memcpy(key, l->sym, ns);
	key[ns] = '\0';
	memcpy(key + ns + 1, l->dso, nd + 1);
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
		struct frow *r = row_of(d, resolver_loc(s->res, fr[0].loc));
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
}

static int parse(struct diff *d, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "percent-limit", required_argument, NULL, 'p' },
		{ "no-demangle", no_argument, NULL, 'M' },
		{ "no-inline", no_argument, NULL, 'N' },
		{ "title", required_argument, NULL, 'T' },
		{ "width", required_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	uint64_t width;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:hM", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "folded") == 0)
				d->folded = optarg;
			else if (strcmp(optarg, "svg") == 0)
				d->svg = 1;
			else if (strcmp(optarg, "text") != 0)
				return usage_error("unknown format '%s' (use text, folded or svg)",
						   optarg);
			break;
		case 'T':
			d->o.title = optarg;
			break;
		case 'W':
			if (parse_u64(optarg, &width) < 0 || width < 100 || width > 100000)
				return usage_error("bad --width '%s': use a number of pixels "
						   "from 100 to 100000", optarg);
			d->o.width = (unsigned)width;
			break;
		case 'o':
			d->o.output = optarg;
			break;
		case 'p':
			if (parse_percent(optarg, &d->o.percent_limit) < 0)
				return usage_error("bad --percent-limit '%s': use a number from 0 "
						   "to 100", optarg);
			break;
		case 'M':
			d->o.resolve.demangle = 0;
			break;
		case 'N':
			d->o.resolve.inline_frames = 0;
			break;
		case 'h':
			diff_usage(stdout);
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
	rc = load_side(&d, 0) < 0 || load_side(&d, 1) < 0 || write_out(&d) < 0;
	diff_free(&d);
	return rc;
}
