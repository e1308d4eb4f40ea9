/*
 * flame.h - the layout of a flame graph, shared by the pictures (svg.c,
 * html.c) and meant for a differential flame graph (probe diff) too.
 *
 * Contract:
 *   - A flame is a tree of nodes: the root ("all"), then one level per
 *     grouping key asked for (--sort pid, tid, comm, exe, in their order),
 *     then the call stack, outermost frame first.  Siblings showing the
 *     same frame (name and module) are one node.
 *   - Every node counts FLAME_SETS sets: set 0 is the profile (or a diff's
 *     base), set 1 a diff's new profile.  Per set: amount (what widths are
 *     made of: weight, or samples, as report_amount() counts) and samples.
 *   - Frames are interned by the flame itself (its own string pool), so
 *     two recordings read through two resolvers still meet in one node.
 *   - flame_layout() places the nodes of one set: children in name order
 *     (flamegraph.pl's order: the same call path lines up across pictures),
 *     each at the left edge of what its parent has left, in amount units.
 *     Nodes narrower than min_amount are left out with all below them:
 *     their amount stays in their parent, as its remainder.
 *   - Frame names and modules are kept as the resolver gave them; the
 *     writers escape them for their output (flame_put_xml).
 */
#ifndef PROBE_FLAME_H
#define PROBE_FLAME_H

#include <stdint.h>
#include <stdio.h>

#include "format/format.h"

#define FLAME_SETS 2

enum flame_kind {
	FK_ROOT,        /* "all" */
	FK_GROUP,       /* a process, thread, name or program (--sort) */
	FK_PROGRAM,     /* code of the process's own executable */
	FK_LIBRARY,     /* a shared object, the vDSO */
	FK_KERNEL,      /* [kernel] */
	FK_INLINED,     /* NAME [inlined] */
	FK_UNKNOWN,     /* no symbol: module+0xOFFSET, [unknown]+0xADDR, [truncated] */
	FK_OFFCPU,      /* --off-cpu: [off-cpu] above a wait, [stack unknown] */
	FK_COUNT
};

struct flame_frame {
	const char *name;       /* interned by the flame */
	const char *module;     /* interned; "" for the root and groups */
	enum flame_kind kind;
};

struct flame_node {
	uint32_t frame;         /* flame_frame_at() */
	uint32_t parent;        /* the root is its own parent */
	uint32_t first_child, next_sibling;     /* 0: none (0 is the root) */
	uint32_t nchildren, depth;
	uint64_t amount[FLAME_SETS], samples[FLAME_SETS];
};

/* One placed node: x and width in amount units, from the root's left edge. */
struct flame_rect {
	uint32_t node, depth;
	uint64_t x, width;
};

struct flame;

struct flame *flame_new(void);
void flame_free(struct flame *f);

/* The id of a frame (name and module are copied into the flame). */
uint32_t flame_frame_id(struct flame *f, const char *name, const char *module,
			enum flame_kind kind);
const struct flame_frame *flame_frame_at(const struct flame *f, uint32_t id);
/*
 * Count amount and samples in set for the root and every node of the path
 * (frame ids, outermost first).
 */
void flame_add(struct flame *f, const uint32_t *path, uint32_t n, int set,
	       uint64_t amount, uint64_t samples);
/* Every count of a report into set, grouped by its --sort keys. */
void flame_fill(struct flame *f, const struct report_ctx *c, int set);

/*
 * The source lines of each function (frame) of a report, for the HTML
 * page's panel.  Every count's stack is walked as flame_fill() walks it
 * (resolve_stack(): libprobe's frames left out, inline frames expanded),
 * each frame's line from resolve_addr_src(): the sampled line for the
 * leaf, the call's for a caller, where an inlined function was inlined
 * for the function containing it.  Per function and per (file, line) of
 * it: total, the amount of every count with it on the stack, counted once
 * however often it is there (recursion); self, where it is the leaf
 * frame; samples, as total.  Frames are the flame's (flame_frame_id()),
 * files the resolver's (resolve_addr_src(): the path as DWARF names it),
 * valid as long as it is.
 */
struct flame_line {
	const char *file;
	unsigned line;
	uint64_t self, total, samples;
};

struct flame_fn_lines {
	uint64_t self, total, samples;  /* the function's, lines or not */
	struct flame_line *lines;       /* hottest first (total, then self,
					   then file and line): at most top */
	size_t nlines;
	size_t more;                    /* lines not listed */
};

struct flame_lines;

/* flame_fill(), and the lines: at most top a function listed. */
struct flame_lines *flame_fill_lines(struct flame *f, const struct report_ctx *c, int set,
				     size_t top);
/* Frame id's lines, or NULL where none of its samples has a line. */
const struct flame_fn_lines *flame_lines_of(const struct flame_lines *l, uint32_t frame);
void flame_lines_free(struct flame_lines *l);

const struct flame_node *flame_node_at(const struct flame *f, uint32_t id);

/* What flame_layout() placed. */
struct flame_layout {
	struct flame_rect *rects;       /* parents before their children */
	size_t n;
	uint32_t max_depth;             /* the deepest placed (the root is 0) */
	uint64_t merged;                /* amount in the nodes left out (whole
					   subtrees: none counted twice) */
};

/* Place the nodes of set at least min_amount wide (and above 0). */
void flame_layout(const struct flame *f, int set, uint64_t min_amount,
		  struct flame_layout *out);
void flame_layout_free(struct flame_layout *l);

/*
 * The least amount a node needs to be drawn plotw pixels wide, total
 * being the whole width: 0.1 px (flamegraph.pl's --minwidth), or
 * --percent-limit of the total when that is given and more.
 */
uint64_t flame_min_amount(const struct report_ctx *c, uint64_t total, double plotw);
/* Bit k set for every kind k placed in l, the root's left out. */
unsigned flame_kinds(const struct flame *f, const struct flame_layout *l);
/* "var KINDS = [["#rrggbb", "program"], ...];": the legend by kind, in JavaScript. */
void flame_put_kinds_js(FILE *out, unsigned kinds);

/* Kind names for legends and tooltips: "program", "library", ... */
const char *flame_kind_name(enum flame_kind k);
/* The kind as the scripts know it: 'r'oot, 'g'roup, 'p'rogram, 'l'ibrary, ... */
char flame_kind_letter(enum flame_kind k);
/* A colour "#rrggbb" for a frame of kind k: the kind's hue, varied by name. */
void flame_colour(enum flame_kind k, const char *name, char out[8]);
/*
 * The text colour on fill ("#rrggbb"): "#000000" or "#ffffff", whichever
 * contrasts more (WCAG 2's contrast ratio, at least 4.58:1 either way);
 * assets/core.js's ink() is the same for the colours the scripts make.
 */
const char *flame_ink(const char *fill);

/*
 * s as XML character data or attribute text: &<>"' escaped, what
 * printable_next replaces (util.h: invalid UTF-8, C0 and C1 controls,
 * U+FFFE/U+FFFF, so all that XML cannot carry too) replaced by U+FFFD, at
 * most max_chars characters (0: all), ".." appended when cut.
 */
void flame_put_xml(FILE *out, const char *s, size_t max_chars);
/* s as the inside of a JSON string, with the same replacements. */
void flame_put_json(FILE *out, const char *s);
/* Characters (UTF-8 code points) in s, as flame_put_xml counts them. */
size_t flame_chars(const char *s);

/* The pictures' titles: --title, or a default; and the line under it. */
const char *flame_title(const struct report_ctx *c);
/*
 * "cpu-clock, 999 Hz; 12,345 samples, 1 process, 5 threads; widths by ..."
 * into buf, and how much of the total is under frames too narrow to draw
 * (merged, a fraction) when there is any.
 */
void flame_subtitle(const struct report_ctx *c, double merged, char *buf, size_t len);

/* The style sheets and scripts: collector/flame/assets/, embedded at
 * build time (scripts/embed). */
extern const char flame_css[], flame_css_html[];
extern const char flame_js_core[], flame_js_svg[], flame_js_html[];

/*
 * A flame's set 0 as one SVG (svg.c): c gives the options (--width,
 * --title, --inverted, --percent-limit), the recording for the subtitle,
 * and the total that percentages are of.
 */
int flame_svg(const struct report_ctx *c, const struct flame *f, FILE *out);
/*
 * A differential flame graph (probe diff): widths from set 1 (new, c),
 * each frame red where its share grew from set 0 (base), blue where it
 * shrank, deeper the larger the change; the tooltip gives both shares.
 */
int flame_svg_diff(const struct report_ctx *base, const struct report_ctx *c,
		   const struct flame *f, FILE *out);
/*
 * The same as one HTML page that draws it on a canvas (html.c); with
 * lines (or NULL), a click on a frame also shows its function's hottest
 * source lines, with their text where the file can be read now.
 */
int flame_html(const struct report_ctx *c, const struct flame *f,
	       const struct flame_lines *lines, FILE *out);

/* The formats (format.h's table, context.c). */
int report_svg(const struct report_ctx *c, FILE *out);
int report_html(const struct report_ctx *c, FILE *out);

#endif
