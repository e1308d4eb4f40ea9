/* context.c - what every format shares (format.h): the report context, amounts and
 * percentages, names, sort keys, and the table of formats; headers: header.c. */
#include "format/format.h"
#include "data/inuse.h"
#include "flame/flame.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "data/lost.h"
#include "util.h"
#include "data/wire_decode.h"

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
	c->alias = NULL;
	c->nalias = 0;
}

static const char *alias_of(const struct report_ctx *c, const char *exe)
{
	for (size_t i = 0; i < c->nalias; i++)
		if (strcmp(c->alias[i].exe, exe) == 0)
			return c->alias[i].name;
	return NULL;
}

const char *report_loc_module(const struct report_ctx *c, const struct loc *l)
{
	const char *a = c->nalias && l->dso_path ? alias_of(c, l->dso_path) : NULL;
	return a ? a : l->dso;
}

const char *report_image_name(const struct report_ctx *c, uint32_t image)
{
	const struct agg_image *im = agg_image(c->agg, image);
	const char *a = c->nalias && im->exe[0] ? alias_of(c, im->exe) : NULL;
	return a ? a : im->name;
}

uint64_t report_amount(const struct report_ctx *c, const struct agg_count *k)
{
	return c->by_samples ? k->samples : k->weight;
}

double report_pct(const struct report_ctx *c, uint64_t amount)
{
	return c->total ? 100.0 * (double)amount / (double)c->total : 0.0;
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

/* A thread's name: its latest THREAD name, else its process's; "?". */
const char *report_thread_name(const struct agg *a, uint32_t image, uint32_t tid)
{
	const char *n = agg_thread_name(a, image, tid);
	if (n && *n)
		return n;
	const struct agg_image *im = agg_image(a, image);
	if (im && tid == im->pid)
		return im->comm[0] ? im->comm : im->name;
	return "?";
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
	{ "annotate", report_annotate, 0, 0,
	  "the hottest functions' instructions and source lines (probe annotate)" },
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
