/* report_common.c - see report_fmt.h: header lines, percentages, keys. */
#include "format.h"
#include "flame.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lost.h"
#include "util.h"
#include "wire_decode.h"

void report_ctx_init(struct report_ctx *c, const struct report_opts *o,
		     const struct agg *a, struct resolver *r)
{
	const struct agg_totals *t = agg_totals(a);
	c->opts = o;
	c->agg = a;
	c->res = r;
	/*
	 * Weights are untrusted and add up saturating: a total that reached
	 * UINT64_MAX is no total, and shares of it would not add up to 100 %.
	 */
	c->by_samples = t->weight == 0 || t->weight == UINT64_MAX;
	c->weight_saturated = t->weight == UINT64_MAX;
	c->total = c->by_samples ? t->samples : t->weight;
}

uint64_t report_amount(const struct report_ctx *c, const struct agg_count *k)
{
	return c->by_samples ? k->samples : k->weight;
}

double report_pct(const struct report_ctx *c, uint64_t amount)
{
	return c->total ? 100.0 * (double)amount / (double)c->total : 0.0;
}

/* "cpu-clock, 999 Hz" for one image. */
static char *event_text(const struct agg_image *im)
{
	const char *name = im->event_name[0] ? im->event_name : "unknown event";
	const char *timer = im->event_type == PROBE_EVENT_TIMER ? " (CPU-time timer)" : "";
	if (im->freq)
		return xasprintf("%s%s, %" PRIu64 " Hz", name, timer, im->value);
	return xasprintf("%s%s, period %" PRIu64, name, timer, im->value);
}

/* Why kernel time was not sampled, as HELLO's flags say. */
static const char *kernel_why(unsigned flags)
{
	switch ((flags & PROBE_HELLO_KWHY_MASK) >> PROBE_HELLO_KWHY_SHIFT) {
	case PROBE_HELLO_KWHY_OFF:
		return "turned off (PROBE_KERNEL=0)";
	case PROBE_HELLO_KWHY_DENIED:
		return "not allowed for this user (needs root, CAP_PERFMON or "
		       "kernel.perf_event_paranoid <= 1)";
	case PROBE_HELLO_KWHY_TIMER:
		return "CPU-time timers see user space only";
	case PROBE_HELLO_KWHY_SETSIG:
		return "the realtime signal (PROBE_SIGNAL) would interrupt system "
		       "calls; PROBE_KERNEL=1 samples it anyway";
	default:
		return "for a reason this probe does not know";
	}
}

/*
 * "# kernel: ..." - whether the processes' samples include kernel time
 * (HELLO's flags); nothing for recordings that do not say (older ones).
 */
static void kernel_line(const struct report_ctx *c, FILE *out)
{
	unsigned yes = 0, no = 0, first_no = 0;

	for (size_t i = 0; i < agg_nimages(c->agg); i++) {
		const struct agg_image *im = agg_image(c->agg, (uint32_t)i);

		if (!im->have_hello || !(im->hello_flags & PROBE_HELLO_KSTATE))
			continue;
		if (im->hello_flags & PROBE_HELLO_KERNEL)
			yes++;
		else if (no++ == 0)
			first_no = im->hello_flags;
	}
	if (yes && !no)
		fprintf(out, "# kernel: included\n");
	else if (no && !yes)
		fprintf(out, "# kernel: not sampled: %s\n", kernel_why(first_no));
	else if (yes && no)
		fprintf(out, "# kernel: included in %u process%s, not in %u: %s\n",
			yes, yes == 1 ? "" : "es", no, kernel_why(first_no));
}

void report_header(const struct report_ctx *c, FILE *out)
{
	const struct agg_totals *t = agg_totals(c->agg);
	char *file = printable_dup(c->opts->file);
	fprintf(out, "# probe report: %s\n", file);
	free(file);

	char *ev = NULL;
	unsigned others = 0;
	for (size_t i = 0; i < agg_nimages(c->agg); i++) {
		const struct agg_image *im = agg_image(c->agg, (uint32_t)i);
		if (!im->have_hello)
			continue;
		char *e = event_text(im);
		if (!ev)
			ev = e;
		else {
			others += strcmp(ev, e) != 0;
			free(e);
		}
	}
	fprintf(out, "# event: %s", ev ? ev : "unknown");
	if (others)
		fprintf(out, " (and %u other setting%s)", others, others > 1 ? "s" : "");
	free(ev);
	char lost[512];
	lost_text(t->lost, lost, sizeof(lost));
	fprintf(out, "; %" PRIu64 " samples, %u process%s, %u thread%s; %s\n",
		t->samples, t->processes, t->processes == 1 ? "" : "es",
		t->threads, t->threads == 1 ? "" : "s", lost);
	if (t->samples && t->t_max > t->t_min)
		fprintf(out, "# duration: %.2f s of samples%s\n",
			(double)(t->t_max - t->t_min) / 1e9,
			c->by_samples && !c->weight_saturated ?
			"; samples carry no weight, so shares are of samples" : "");
	if (c->weight_saturated)
		fprintf(out, "# the samples' weights add up past 2^64 (a damaged or forged "
			"recording?), so shares are of samples\n");
	kernel_line(c, out);
	fprintf(out, "#\n");
}

static const char *const key_names[KEY_COUNT] = {
	[KEY_PID] = "pid", [KEY_TID] = "tid", [KEY_COMM] = "comm",
	[KEY_EXE] = "exe", [KEY_SYM] = "sym", [KEY_DSO] = "dso",
	[KEY_SRCLINE] = "srcline",
};

const char *sort_key_name(enum sort_key k)
{
	return k < KEY_COUNT ? key_names[k] : "?";
}

enum sort_key sort_key_parse(const char *s, size_t len)
{
	for (int k = 0; k < KEY_COUNT; k++)
		if (strlen(key_names[k]) == len && strncmp(key_names[k], s, len) == 0)
			return (enum sort_key)k;
	return KEY_COUNT;
}

/* ---- the table of formats ------------------------------------------ */


static const struct format_desc format_table[] = {
	{ "text", report_text, 0, 0, "flat profile (the default)" },
	{ "stdio", report_text, 0, 0, "the same as text (perf's name)" },
	{ "tree", report_tree, 0, 0, "call tree, callers -> callees" },
	{ "folded", report_folded, 0, 0,
	  "exe;root;...;leaf COUNT (flamegraph.pl, speedscope)" },
	{ "pprof", report_pprof, 1, 0,
	  "gzipped profile.proto: go tool pprof, Pyroscope, Parca" },
	{ "svg", report_svg, 0, 0, "interactive flame graph, one SVG file" },
	{ "html", report_html, 0, 0,
	  "the same flame graph drawn on a canvas: lighter for big profiles" },
	{ "speedscope", report_speedscope, 0, 1,
	  "speedscope's JSON: a timeline per thread" },
	{ "perf-script", report_perf_script, 0, 1,
	  "perf script's text, for its readers" },
};

#define NFORMATS (sizeof(format_table) / sizeof(format_table[0]))

const struct format_desc *format_at(unsigned i)
{
	return i < NFORMATS ? &format_table[i] : NULL;
}

const struct format_desc *format_find(const char *name)
{
	for (size_t i = 0; i < NFORMATS; i++)
		if (strcmp(format_table[i].name, name) == 0)
			return &format_table[i];
	return NULL;
}

const char *format_names(void)
{
	static char names[512];
	size_t n = 0;
	for (size_t i = 0; i < NFORMATS && n < sizeof(names); i++)
		n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s",
				      i ? ", " : "", format_table[i].name);
	return names;
}
