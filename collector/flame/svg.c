/*
 * svg.c - an interactive flame graph in one SVG file (flamegraph.pl's
 * kind): a <g> per frame with its tooltip (<title>), rectangle and label,
 * and a script (assets/core.js, assets/svg.js) for zoom, search and colours.  Nothing is
 * loaded from elsewhere: it opens offline in any browser.
 *
 * Frames narrower than 0.1 px (flamegraph.pl's --minwidth), or under
 * --percent-limit when given, are left out: their share stays in their
 * parent.  Geometry is in hundredths of a pixel, rounded from the amounts
 * at both edges, so a child never pokes out of its parent and the script
 * can find a frame's ancestors and descendants by their spans.
 *
 * A deep flame is taller than any window, its root at the bottom: the
 * script scrolls it there on load, and the title, buttons and legend (a
 * group drawn after the frames, over them) and the details line follow
 * the window as it scrolls.  Labels are black or white, whichever reads
 * better on their frame (flame_ink: at least 4.58:1).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flame/flame.h"
#include "util.h"

#define SVG_WIDTH 1200          /* default --width */
#define XPAD 10                 /* left and right margins */
#define FRAME_H 16              /* a row */
#define HEAD_H 72               /* title, controls, legend */
#define FOOT_H 30               /* the details line */
#define CHAR_W 6.6              /* 11px monospace, for fitting labels */

struct svg {
	const struct report_ctx *c;
	const struct report_ctx *base;  /* a differential graph's base, or NULL */
	const struct flame *f;
	int set;                /* the set whose amounts make the widths */
	double maxdelta;        /* the largest change of a frame, in points */
	FILE *out;
	unsigned width;
	double plotw;
	uint64_t total;
	long y0, dy;            /* the root's row, and the step a level */
	double merged;          /* share below frames too narrow to draw */
};

/* A frame's change from base to new, in points of each one's total. */
static double delta(const struct svg *s, const struct flame_node *nd)
{
	return report_pct(s->c, nd->amount[1]) - report_pct(s->base, nd->amount[0]);
}

/*
 * flamegraph.pl's differential colours: red where new spends more, blue
 * where less, deeper the larger the change against the largest one.
 */
static void diff_colour(const struct svg *s, const struct flame_node *nd, char out[8])
{
	double d = delta(s, nd), r = s->maxdelta > 0 ? fabs(d) / s->maxdelta : 0;
	int c = (int)lround(210.0 * (1.0 - (r > 1 ? 1 : r)));
	/* Under a hundredth of the largest change: rounding, not a change. */
	if (fabs(d) < 0.01 || r < 0.01)
		d = 0;
	if (d > 0)
		snprintf(out, 8, "#ff%02x%02x", c, c);
	else if (d < 0)
		snprintf(out, 8, "#%02x%02xff", c, c);
	else
		snprintf(out, 8, "#d2d2d2");
}

/* Where an amount offset falls, in hundredths of a pixel from the left margin. */
static long long cpx(const struct svg *s, uint64_t x)
{
	return llround((double)x / (double)s->total * s->plotw * 100.0);
}

static void put_cpx(FILE *out, long long v)
{
	fprintf(out, "%lld.%02lld", v / 100, v % 100);
}

/*
 * "5012 samples, 50.12%" (samples as counted; the share by weight); for
 * allocations their bytes too, "5012 samples, 1.2 MiB, 50.12%".
 */
static void put_amount(const struct svg *s, const struct flame_node *nd)
{
	uint64_t n = nd->samples[s->set];
	char bytes[40] = "";
	if (agg_bytes(s->c->agg) && !s->c->by_samples) {
		human_size(nd->amount[s->set], bytes, sizeof bytes - 2);
		strcat(bytes, ", ");
	}
	fprintf(s->out, "%" PRIu64 " sample%s, %s%.2f%%", n, n == 1 ? "" : "s", bytes,
		report_pct(s->c, nd->amount[s->set]));
	if (s->base)
		fprintf(s->out, " (base %.2f%%, %+.2f points)",
			report_pct(s->base, nd->amount[0]), delta(s, nd));
}

static void put_frame(const struct svg *s, const struct flame_rect *r)
{
	const struct flame_node *nd = flame_node_at(s->f, r->node);
	const struct flame_frame *fr = flame_frame_at(s->f, nd->frame);
	FILE *out = s->out;
	long long x = cpx(s, r->x), w = cpx(s, r->x + r->width) - x;
	long y = s->y0 + s->dy * (long)r->depth;
	char fill[8];
	if (s->base)
		diff_colour(s, nd, fill);
	else
		flame_colour(fr->kind, fr->name, fill);

	fprintf(out, "<g class=\"%c\"><title>", flame_kind_letter(fr->kind));
	flame_put_xml(out, fr->name, 0);
	if (fr->kind == FK_GROUP) {
		fprintf(out, "\n");
		flame_put_xml(out, fr->module, 0);
	} else if (fr->kind != FK_ROOT) {
		fprintf(out, "\nin ");
		flame_put_xml(out, fr->module, 0);
		fprintf(out, " (%s)", flame_kind_name(fr->kind));
	}
	fputc('\n', out);
	put_amount(s, nd);
	fprintf(out, "</title><rect x=\"");
	put_cpx(out, x + 100 * XPAD);
	fprintf(out, "\" y=\"%ld\" width=\"", y);
	put_cpx(out, w);
	fprintf(out, "\" height=\"%d\" fill=\"%s\"/>", FRAME_H - 1, fill);
	double room = (double)w / 100.0 - 6;   /* 3 px either side of the label */
	size_t fit = room > 0 ? (size_t)(room / CHAR_W) : 0;
	if (fit >= 3) {
		fprintf(out, "<text x=\"");
		put_cpx(out, x + 100 * XPAD + 300);
		fprintf(out, "\" y=\"%.1f\" fill=\"%s\">", (double)y + 11.5, flame_ink(fill));
		flame_put_xml(out, fr->name, fit);
		fprintf(out, "</text>");
	}
	fprintf(out, "</g>\n");
}

/* A differential graph's legend: what its colours say. */
static const char *const diff_legend[][2] = {
	{ "#ff0000", "more in new" }, { "#0000ff", "less in new" },
	{ "#d2d2d2", "the same" },
};

/* The same legend drawn, for viewers that run no script. */
static void put_legend(const struct svg *s, unsigned mask)
{
	FILE *out = s->out;
	double x = 0;
	fprintf(out, "<g id=\"legend\" transform=\"translate(%d,%d)\">", XPAD, HEAD_H - 10);
	for (int k = 0; k < (s->base ? 3 : FK_COUNT); k++) {
		if (!s->base && !(mask & 1u << k))
			continue;
		const char *name = s->base ? diff_legend[k][1] :
				   flame_kind_name((enum flame_kind)k);
		char fill[8];
		if (s->base)
			snprintf(fill, sizeof(fill), "%s", diff_legend[k][0]);
		else
			flame_colour((enum flame_kind)k, "", fill);
		fprintf(out, "<rect x=\"%.1f\" y=\"-9\" width=\"10\" height=\"10\" fill=\"%s\"/>"
			"<text x=\"%.1f\">%s</text>", x, fill, x + 14, name);
		x += 24 + CHAR_W * (double)strlen(name);
	}
	fprintf(out, "</g>\n");
}

static void put_head(const struct svg *s, unsigned height, unsigned kinds)
{
	FILE *out = s->out;
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" "
		"height=\"%u\" viewBox=\"0 0 %u %u\">\n", s->width, height, s->width, height);
	fprintf(out, "<style type=\"text/css\"><![CDATA[\n%s]]></style>\n", flame_css);
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n"
		"var C = { xpad: %d, plotw: %.0f, y0: %ld, dy: %ld, ty: 11.5, cw: %.1f, "
		"merged: %.4f, colours: \"%s\", h: %u };\n", XPAD, s->plotw, s->y0, s->dy, CHAR_W,
		s->merged, s->base ? "change" : "kind", height);
	if (s->base)
		fprintf(out, "var KINDS = [[\"%s\", \"%s\"], [\"%s\", \"%s\"], [\"%s\", \"%s\"]];\n",
			diff_legend[0][0], diff_legend[0][1], diff_legend[1][0],
			diff_legend[1][1], diff_legend[2][0], diff_legend[2][1]);
	else
		flame_put_kinds_js(out, kinds);
	fprintf(out, "%s%s]]></script>\n", flame_js_core, flame_js_svg);
	fprintf(out, "<defs><linearGradient id=\"bg\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
		"<stop stop-color=\"#eeeeee\" offset=\"5%%\"/><stop stop-color=\"#eeeeb0\" "
		"offset=\"95%%\"/></linearGradient></defs>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"url(#bg)\"/>\n");
}

/*
 * Title, buttons and legend, after the frames: drawn over them when the
 * script keeps them in view of a picture taller than the window.
 */
static void put_controls(const struct svg *s, unsigned kinds)
{
	FILE *out = s->out;
	char sub[320];
	flame_subtitle(s->c, s->merged, sub, sizeof(sub));
	fprintf(out, "<g id=\"head\"><rect width=\"100%%\" height=\"%d\" fill=\"#eeeeee\"/>\n",
		HEAD_H);
	fprintf(out, "<text id=\"title\" x=\"%u\" y=\"24\">", s->width / 2);
	flame_put_xml(out, flame_title(s->c), 0);
	fprintf(out, "</text>\n<text id=\"sub\" x=\"%u\" y=\"42\">", s->width / 2);
	flame_put_xml(out, sub, 0);
	fprintf(out, "</text>\n"
		"<text id=\"reset\" class=\"btn\" x=\"%d\" y=\"24\"></text>\n"
		"<text id=\"search\" class=\"btn\" x=\"%u\" y=\"24\" text-anchor=\"end\">Search</text>\n"
		"<text id=\"colour\" class=\"btn\" x=\"%u\" y=\"%d\" text-anchor=\"end\">"
		"Colour: %s</text>\n", XPAD, s->width - XPAD, s->width - XPAD, HEAD_H - 10,
		s->base ? "change" : "kind");
	put_legend(s, kinds);
	fprintf(out, "</g>\n");
}

static void put_foot(const struct svg *s, unsigned height)
{
	fprintf(s->out, "<g id=\"foot\"><rect y=\"%u\" width=\"100%%\" height=\"%d\" "
		"fill=\"#eeeeb0\"/>\n<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n"
		"<text id=\"matched\" x=\"%u\" y=\"%u\" text-anchor=\"end\"></text></g>\n",
		height - FOOT_H + 2, FOOT_H - 2, XPAD, height - 10, s->width - XPAD, height - 10);
	if (!s->total)
		fprintf(s->out, "<text x=\"%u\" y=\"%d\" text-anchor=\"middle\">no samples "
			"in this recording</text>\n", s->width / 2, HEAD_H + FRAME_H);
	fprintf(s->out, "</svg>\n");
}

static int svg_write(struct svg *sp)
{
	struct svg s = *sp;
	const struct report_ctx *c = s.c;
	const struct flame *f = s.f;
	FILE *out = s.out;
	s.width = c->opts->width ? c->opts->width : SVG_WIDTH;
	s.plotw = (double)s.width - 2 * XPAD;
	s.total = flame_node_at(f, 0)->amount[s.set];

	struct flame_layout l = { 0 };
	if (s.total)
		flame_layout(f, s.set, flame_min_amount(c, s.total, s.plotw), &l);
	for (size_t i = 0; s.base && i < l.n; i++) {
		double d = fabs(delta(&s, flame_node_at(f, l.rects[i].node)));
		if (d > s.maxdelta)
			s.maxdelta = d;
	}
	s.merged = s.total ? (double)l.merged / (double)s.total : 0;
	unsigned height = HEAD_H + (l.max_depth + 1) * FRAME_H + FOOT_H;
	/* Flame: the root at the bottom, callees above; icicle: upside down. */
	s.y0 = c->opts->inverted ? HEAD_H : HEAD_H + (long)l.max_depth * FRAME_H;
	s.dy = c->opts->inverted ? FRAME_H : -FRAME_H;

	put_head(&s, height, flame_kinds(f, &l));
	fprintf(out, "<g id=\"frames\">\n");
	for (size_t i = 0; i < l.n; i++)
		put_frame(&s, &l.rects[i]);
	fprintf(out, "</g>\n");
	put_controls(&s, flame_kinds(f, &l));
	put_foot(&s, height);
	flame_layout_free(&l);
	return 0;
}

int flame_svg(const struct report_ctx *c, const struct flame *f, FILE *out)
{
	struct svg s = { .c = c, .f = f, .out = out };
	return svg_write(&s);
}

int flame_svg_diff(const struct report_ctx *base, const struct report_ctx *c,
		   const struct flame *f, FILE *out)
{
	struct svg s = { .c = c, .base = base, .f = f, .set = 1, .out = out };
	return svg_write(&s);
}

int report_svg(const struct report_ctx *c, FILE *out)
{
	struct flame *f = flame_new();
	flame_fill(f, c, 0);
	int rc = flame_svg(c, f, out);
	flame_free(f);
	return rc;
}
