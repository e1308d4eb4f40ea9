/*
 * html.c - the same flame graph as svg.c, as one HTML page that draws it
 * on a <canvas>: the frames travel as a list of numbers (D.f) and the
 * names once each (D.names), so the page is a third of the SVG's size and
 * the browser builds no element per frame.  Same features, same script
 * core (assets/core.js); tooltips are the canvas's title.
 *
 * As the SVG, a flame taller than the window opens scrolled to its root,
 * the head (title, buttons, legend) and the details line sticky.
 *
 * Widths are the amounts themselves (integers, exact in JavaScript up to
 * 2^53; a total above that is scaled down), so shares read back from the
 * page are the report's.
 *
 * A click on a frame also shows its function's hottest source lines
 * (flame_fill_lines()): D.src holds them for the functions drawn that
 * have any, with the text of each line where its file can be read now,
 * trimmed and cut; the page puts all of it in as text, never as markup.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "annotate/srcfile.h"
#include "flame/flame.h"
#include "hashtab.h"
#include "util.h"

#define PAGE_WIDTH 1200         /* default --width */
#define XPAD 10
#define FRAME_H 16
#define CHAR_W 6.6              /* 11px monospace */
#define EXACT_MAX 9007199254740992.0    /* 2^53 */
#define HOT_LINES 10            /* source lines a function's panel lists */

/* A string (by its interned pointer) or colour -> its index in D's tables. */
struct idx_ent {
	uint64_t key;
	uint32_t idx;
	UT_hash_handle hh;
};

struct table {
	struct idx_ent *map;
	uint32_t n;
};

/* The index of key, and 1 in *is_new the first time it is seen. */
static uint32_t table_index(struct table *t, uint64_t key, int *is_new)
{
	struct idx_ent *e;
	HASH_FIND(hh, t->map, &key, sizeof(key), e);
	*is_new = !e;
	if (e)
		return e->idx;
	e = xcalloc(1, sizeof(*e));
	e->key = key;
	e->idx = t->n++;
	HASH_ADD(hh, t->map, key, sizeof(e->key), e);
	return e->idx;
}

static void table_free(struct table *t)
{
	struct idx_ent *e, *tmp;
	HASH_ITER(hh, t->map, e, tmp) {
		HASH_DEL(t->map, e);
		free(e);
	}
}

/* Every name and module once, in the order first used: D.names. */
static void put_names(FILE *out, const struct flame *f, const struct flame_layout *l,
		      struct table *names)
{
	fprintf(out, "var D = {\nnames: [");
	for (size_t i = 0; i < l->n; i++) {
		const struct flame_frame *fr = flame_frame_at(f, flame_node_at(f, l->rects[i].node)->frame);
		const char *s[2] = { fr->name, fr->module };
		for (int j = 0; j < 2; j++) {
			int is_new;
			table_index(names, (uintptr_t)s[j], &is_new);
			if (!is_new)
				continue;
			fprintf(out, "%s\"", names->n > 1 ? "," : "");
			flame_put_json(out, s[j]);
			fputc('"', out);
			if (names->n % 8 == 0)
				fputc('\n', out);
		}
	}
	fprintf(out, "],\n");
}

/* The colours used, D.cols, and each frame's index into them. */
static uint32_t *put_colours(FILE *out, const struct flame *f, const struct flame_layout *l)
{
	struct table cols = { 0 };
	uint32_t *ci = xmalloc((l->n ? l->n : 1) * sizeof(*ci));
	fprintf(out, "cols: [");
	for (size_t i = 0; i < l->n; i++) {
		const struct flame_frame *fr = flame_frame_at(f, flame_node_at(f, l->rects[i].node)->frame);
		char fill[8];
		int is_new;
		flame_colour(fr->kind, fr->name, fill);
		ci[i] = table_index(&cols, strtoull(fill + 1, NULL, 16), &is_new);
		if (is_new)
			fprintf(out, "%s\"%s\"%s", cols.n > 1 ? "," : "", fill,
				cols.n % 12 == 0 ? "\n" : "");
	}
	fprintf(out, "],\nkinds: [");
	for (int k = 0; k < FK_COUNT; k++)
		fprintf(out, "%s\"%c\"", k ? "," : "", flame_kind_letter((enum flame_kind)k));
	fprintf(out, "],\nkindNames: [");
	for (int k = 0; k < FK_COUNT; k++)
		fprintf(out, "%s\"%s\"", k ? "," : "", flame_kind_name((enum flame_kind)k));
	fprintf(out, "],\n");
	table_free(&cols);
	return ci;
}

/* D.f: depth, x, width, name, module, kind, colour, samples per frame. */
static void put_frames(FILE *out, const struct flame *f, const struct flame_layout *l,
		       struct table *names, const uint32_t *ci, uint64_t total)
{
	double scale = (double)total > EXACT_MAX ? EXACT_MAX / (double)total : 1;
	fprintf(out, "f: [\n");
	for (size_t i = 0; i < l->n; i++) {
		const struct flame_rect *r = &l->rects[i];
		const struct flame_node *nd = flame_node_at(f, r->node);
		const struct flame_frame *fr = flame_frame_at(f, nd->frame);
		int is_new;
		uint32_t name = table_index(names, (uintptr_t)fr->name, &is_new);
		uint32_t mod = table_index(names, (uintptr_t)fr->module, &is_new);
		uint64_t x = r->x, w = r->width;
		if (scale < 1) {
			/* Both edges rounded: a child stays inside its parent. */
			x = (uint64_t)llround((double)r->x * scale);
			w = (uint64_t)llround((double)(r->x + r->width) * scale) - x;
		}
		fprintf(out, "%u,%" PRIu64 ",%" PRIu64 ",%u,%u,%d,%u,%" PRIu64 ",%s", r->depth, x, w,
			name, mod, (int)fr->kind, ci[i], nd->samples[0], i % 8 == 7 ? "\n" : "");
	}
	fprintf(out, "],\n");
}

/* amount in the page's units (put_frames()'s scale). */
static uint64_t scaled(uint64_t amount, double scale)
{
	return scale < 1 ? (uint64_t)llround((double)amount * scale) : amount;
}

/*
 * A line of source as a JSON string's inside: blanks trimmed at both
 * ends, tabs made spaces, at most max_chars characters ("..": cut).
 */
static void put_src_text(FILE *out, const char *s, size_t max_chars)
{
	while (*s == ' ' || *s == '\t' || *s == '\f' || *s == '\v' || *s == '\r')
		s++;
	size_t len = strlen(s);
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\f' ||
		       s[len - 1] == '\v' || s[len - 1] == '\r'))
		len--;
	char *t = xmalloc(len + 3);
	memcpy(t, s, len);
	t[len] = 0;
	for (char *p = t; *p; p++)
		if (*p == '\t')
			*p = ' ';
	size_t chars = 0, at = 0;
	uint32_t cp;
	while (t[at] && chars < max_chars) {
		at += printable_next(t + at, &cp);
		chars++;
	}
	if (t[at]) {            /* more than max_chars: cut, ".." in place of the last two */
		at = 0;
		for (size_t k = 0; k + 2 < max_chars; k++)
			at += printable_next(t + at, &cp);
		memcpy(t + at, "..", 3);
	}
	flame_put_json(out, t);
	free(t);
}

#define SRC_TEXT_MAX 120        /* characters of a line's text */

/*
 * D.src, one list per function drawn that has source lines: name and
 * module (indexes into D.names), its self, total and samples, the number
 * of its lines not listed, then per line listed: file (index into
 * D.files), line, self, total, samples, its text (null: not read).
 * D.files: [path, 0 read, 1 changed after the recording, 2 not readable].
 */
static void put_lines(FILE *out, const struct report_ctx *c, const struct flame *f,
		      const struct flame_layout *l, struct table *names,
		      const struct flame_lines *lines, uint64_t total)
{
	double scale = (double)total > EXACT_MAX ? EXACT_MAX / (double)total : 1;
	const struct agg_info *info = agg_info(c->agg);
	int64_t when = info && info->have ? (int64_t)(info->start_real_ns / 1000000000u) : 0;
	struct srcfiles *sf = srcfiles_new();
	struct table seen = { 0 }, files = { 0 };
	const char **paths = NULL;
	int *state = NULL;
	size_t paths_cap = 0, state_cap = 0, nfn = 0;
	fprintf(out, "src: [");
	for (size_t i = 0; lines && i < l->n; i++) {
		const struct flame_node *nd = flame_node_at(f, l->rects[i].node);
		int is_new;
		table_index(&seen, nd->frame, &is_new);
		const struct flame_fn_lines *fl = is_new ? flame_lines_of(lines, nd->frame) : NULL;
		if (!fl)
			continue;
		const struct flame_frame *fr = flame_frame_at(f, nd->frame);
		fprintf(out, "%s[%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%zu", nfn++ ? ",\n" : "\n",
			table_index(names, (uintptr_t)fr->name, &is_new),
			table_index(names, (uintptr_t)fr->module, &is_new),
			scaled(fl->self, scale), scaled(fl->total, scale), fl->samples, fl->more);
		for (size_t j = 0; j < fl->nlines; j++) {
			const struct flame_line *ln = &fl->lines[j];
			uint32_t fi = table_index(&files, (uintptr_t)ln->file, &is_new);
			if (is_new) {
				paths = xgrow(paths, &paths_cap, fi + 1, sizeof(*paths));
				state = xgrow(state, &state_cap, fi + 1, sizeof(*state));
				paths[fi] = ln->file;
				state[fi] = 2;
			}
			const char *text = srcfile_line(sf, ln->file, ln->line);
			fprintf(out, ",\n%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", fi, ln->line,
				scaled(ln->self, scale), scaled(ln->total, scale), ln->samples);
			if (text) {
				fputc('"', out);
				put_src_text(out, text, SRC_TEXT_MAX);
				fputc('"', out);
				state[fi] = 0;
			} else {
				fputs("null", out);
			}
		}
		fputc(']', out);
	}
	fprintf(out, "],\nfiles: [");
	for (uint32_t i = 0; i < files.n; i++) {
		if (state[i] == 0 && srcfile_newer(sf, paths[i], when))
			state[i] = 1;
		fprintf(out, "%s[\"", i ? ",\n" : "");
		flame_put_json(out, paths[i]);
		fprintf(out, "\",%d]", state[i]);
	}
	fprintf(out, "]};\n");
	free(paths);
	free(state);
	table_free(&files);
	table_free(&seen);
	srcfiles_free(sf);
}

static void put_page_head(FILE *out, const struct report_ctx *c, unsigned width, double merged)
{
	char sub[320];
	flame_subtitle(c, merged, sub, sizeof(sub));
	fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>");
	flame_put_xml(out, flame_title(c), 0);
	fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body style=\"width: %upx\">\n"
		"<div id=\"top\"><div id=\"head\"><span id=\"reset\" class=\"btn\"></span><h1>", flame_css_html, width);
	flame_put_xml(out, flame_title(c), 0);
	fprintf(out, "</h1><span id=\"search\" class=\"btn\">Search</span>\n<div id=\"sub\">");
	flame_put_xml(out, sub, 0);
	fprintf(out, "</div></div>\n<div id=\"bar\"><span id=\"legend\"></span>"
		"<span id=\"colour\" class=\"btn\">Colour: kind</span></div></div>\n"
		"<canvas id=\"flame\"></canvas>\n"
		"<div id=\"dock\"><div id=\"panel\" role=\"dialog\" aria-labelledby=\"pname\" hidden>"
		"<div id=\"phead\"><span id=\"pclose\" class=\"btn\" title=\"Escape\">Close</span>"
		"<b id=\"pname\"></b> <span id=\"pmod\"></span></div>"
		"<div id=\"psum\"></div><table id=\"plines\"></table><div id=\"pnote\"></div></div>\n"
		"<div id=\"foot\"><span id=\"details\"> </span><span id=\"matched\"></span></div></div>\n"
		"<noscript>This flame graph is drawn by JavaScript: allow it, or use "
		"probe report --format svg.</noscript>\n");
}

int flame_html(const struct report_ctx *c, const struct flame *f,
	       const struct flame_lines *lines, FILE *out)
{
	unsigned width = c->opts->width ? c->opts->width : PAGE_WIDTH;
	double plotw = (double)width - 2 * XPAD;
	uint64_t total = flame_node_at(f, 0)->amount[0];
	struct flame_layout l = { 0 };
	if (total)
		flame_layout(f, 0, flame_min_amount(c, total, plotw), &l);
	double merged = total ? (double)l.merged / (double)total : 0;
	unsigned height = (l.max_depth + 1) * FRAME_H;

	put_page_head(out, c, width, merged);
	if (!total)
		fprintf(out, "<p>no samples in this recording</p>\n");
	/* Flame: the root at the bottom of the canvas; icicle: at its top. */
	/* bytes: allocations (--alloc), whose tooltips say their bytes too. */
	fprintf(out, "<script>\n\"use strict\";\nvar C = { width: %u, height: %u, xpad: %d, "
		"plotw: %.0f, fh: %d, y0: %d, dy: %d, ty: 11.5, cw: %.1f, merged: %.4f, "
		"bytes: %" PRIu64 " };\n",
		width, height, XPAD, plotw, FRAME_H,
		c->opts->inverted ? 0 : (int)l.max_depth * FRAME_H,
		c->opts->inverted ? FRAME_H : -FRAME_H, CHAR_W, merged,
		agg_bytes(c->agg) && !c->by_samples ? total : 0);
	flame_put_kinds_js(out, flame_kinds(f, &l));
	struct table names = { 0 };
	put_names(out, f, &l, &names);
	uint32_t *ci = put_colours(out, f, &l);
	put_frames(out, f, &l, &names, ci, total);
	put_lines(out, c, f, &l, &names, lines, total);
	fprintf(out, "%s%s</script>\n</body>\n</html>\n", flame_js_core, flame_js_html);
	free(ci);
	table_free(&names);
	flame_layout_free(&l);
	return 0;
}

int report_html(const struct report_ctx *c, FILE *out)
{
	struct flame *f = flame_new();
	struct flame_lines *lines = flame_fill_lines(f, c, 0, HOT_LINES);
	int rc = flame_html(c, f, lines, out);
	flame_lines_free(lines);
	flame_free(f);
	return rc;
}
