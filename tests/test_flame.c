/*
 * test_flame.c - the flame graphs' shared code (format/flame.c):
 *   - names from untrusted binaries escaped for XML and JSON, invalid UTF-8
 *     and what XML cannot carry replaced by U+FFFD, labels cut by characters;
 *   - the layout: children in name order, narrow nodes left out with their
 *     amount kept in the parent (and counted as merged), two sets per node
 *     (a diff's base and new) laid out each by its own amounts;
 *   - with an argument FILE: an SVG of hostile frame names written there,
 *     for tests/83-flamegraph.t to parse and open in Chromium.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/aggregate.h"
#include "flame/flame.h"
#include "tap.h"

static char *xml(const char *s, size_t max)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	flame_put_xml(m, s, max);
	fclose(m);
	return buf;
}

static char *json(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	flame_put_json(m, s);
	fclose(m);
	return buf;
}

#define FFFD "\xef\xbf\xbd"

static void check_xml(const char *in, size_t max, const char *want, const char *name)
{
	char *got = xml(in, max);
	if (!ok(strcmp(got, want) == 0, "xml: %s", name))
		diag("  got '%s', expected '%s'", got, want);
	free(got);
}

static void test_escaping(void)
{
	check_xml("a<b>&\"'c", 0, "a&lt;b&gt;&amp;&quot;&#39;c", "markup characters");
	check_xml("caf\xc3\xa9 \xf0\x9f\x94\xa5", 0, "caf\xc3\xa9 \xf0\x9f\x94\xa5",
		  "valid UTF-8 kept");
	check_xml("x\xffy", 0, "x" FFFD "y", "a stray byte");
	check_xml("\xc0\xaf", 0, FFFD FFFD, "an overlong '/'");
	check_xml("\xed\xa0\x80", 0, FFFD FFFD FFFD, "a UTF-16 surrogate");
	check_xml("\xef\xbf\xbe", 0, FFFD, "U+FFFE (not an XML character)");
	check_xml("a\x01" "b\x7f", 0, "a" FFFD "b" FFFD, "control characters");
	check_xml("end\xf0\x9f", 0, "end" FFFD FFFD, "a sequence cut at the end");
	check_xml("\xf4\x90\x80\x80", 0, FFFD FFFD FFFD FFFD, "past U+10FFFF");
	check_xml("abcdefgh", 5, "abc..", "cut to 5 characters");
	check_xml("abcde", 5, "abcde", "5 characters fit in 5");
	check_xml("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 4, "\xc3\xa9\xc3\xa9..",
		  "cut by characters, not bytes");
	check_xml("a&b<cdef", 5, "a&amp;b..", "cut before escaping");
	is_int(flame_chars("\xc3\xa9t\xff"), 3, "characters counted as decoded");

	char *j = json("</script>\"\\\xe2\x80\xa8\xff");
	const char *want = "\\u003c/script\\u003e\\u0022\\u005c\\u2028" FFFD;
	if (!ok(strcmp(j, want) == 0, "json: no </script>, quotes, U+2028 escaped"))
		diag("  got '%s'", j);
	free(j);
}

/* The path a;b;... of frame names into set, each of module "m". */
static void add(struct flame *f, const char *path, int set, uint64_t amount)
{
	uint32_t ids[16], n = 0;
	char *copy = strdup(path), *save = NULL;
	for (char *t = strtok_r(copy, ";", &save); t && n < 16; t = strtok_r(NULL, ";", &save))
		ids[n++] = flame_frame_id(f, t, "m", FK_PROGRAM);
	flame_add(f, ids, n, set, amount, amount);
	free(copy);
}

static const char *name_of(const struct flame *f, const struct flame_rect *r)
{
	return flame_frame_at(f, flame_node_at(f, r->node)->frame)->name;
}

static void test_layout(void)
{
	struct flame *f = flame_new();
	add(f, "main;zeta", 0, 30);
	add(f, "main;alpha;leaf", 0, 50);
	add(f, "main;tiny", 0, 2);
	add(f, "main", 0, 18);
	add(f, "main;alpha;leaf", 1, 10);
	add(f, "main;zeta", 1, 90);

	struct flame_layout l;
	flame_layout(f, 0, 5, &l);
	is_int(l.n, 5, "set 0: all, main, alpha, leaf, zeta (tiny left out)");
	const char *order[] = { "all", "main", "alpha", "leaf", "zeta" };
	const uint64_t x[] = { 0, 0, 0, 0, 52 }, w[] = { 100, 100, 50, 50, 30 };
	int good = l.n == 5;
	for (size_t i = 0; good && i < 5; i++)
		good = strcmp(name_of(f, &l.rects[i]), order[i]) == 0 &&
		       l.rects[i].x == x[i] && l.rects[i].width == w[i] &&
		       l.rects[i].depth == (i < 3 ? i : i == 3 ? 3 : 2);
	ok(good, "pre-order, children by name, tiny's place kept (zeta at 52)");
	is_int(l.merged, 2, "the amount left out is counted as merged");
	is_int(l.max_depth, 3, "deepest depth placed");
	const struct flame_node *main_node = flame_node_at(f, l.rects[1].node);
	ok(main_node->amount[0] == 100 && main_node->amount[1] == 100 &&
	   main_node->samples[1] == 100, "a node counts both sets");
	flame_layout_free(&l);

	flame_layout(f, 1, 1, &l);
	is_int(l.n, 5, "set 1: all, main, alpha, leaf, zeta");
	ok(l.n == 5 && l.rects[4].x == 10 && l.rects[4].width == 90,
	   "set 1 is laid out by its own amounts (zeta at 10, 90 wide)");
	is_int(l.merged, 0, "nothing merged in set 1");
	flame_layout_free(&l);

	flame_layout(f, 0, 1000, &l);
	is_int(l.n, 1, "a min_amount above everything leaves the root alone");
	flame_layout_free(&l);
	flame_free(f);
}

/* WCAG 2's contrast ratio of two "#rrggbb" colours (flame_ink's measure). */
static double contrast(const char *a, const char *b)
{
	double l[2];
	const char *c[2] = { a, b };
	for (int k = 0; k < 2; k++) {
		unsigned long v = strtoul(c[k] + 1, NULL, 16);
		double s = 0, w[3] = { 0.2126, 0.7152, 0.0722 };
		for (int i = 0; i < 3; i++) {
			double x = ((v >> (16 - 8 * i)) & 0xff) / 255.0;
			s += w[i] * (x <= 0.03928 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4));
		}
		l[k] = s + 0.05;
	}
	return l[0] > l[1] ? l[0] / l[1] : l[1] / l[0];
}

/* Every label readable: flame_ink's colour on any fill, >= 4.5:1 (WCAG AA). */
static void test_ink(void)
{
	double worst = 99;
	char fill[8], at[8] = "";
	/* Every colour with channels in steps of 5 (52^3 of them), and 255. */
	for (unsigned r = 0; r < 256; r += 5)
		for (unsigned g = 0; g < 256; g += 5)
			for (unsigned b = 0; b < 256; b += 5) {
				snprintf(fill, sizeof(fill), "#%02x%02x%02x", r, g, b);
				double q = contrast(fill, flame_ink(fill));
				if (q < worst) {
					worst = q;
					memcpy(at, fill, sizeof(at));
				}
			}
	ok(worst >= 4.5, "flame_ink: every fill's label at least 4.5:1 (least %.2f, on %s)",
	   worst, at);
	ok(strcmp(flame_ink("#283c8c"), "#ffffff") == 0 && strcmp(flame_ink("#0000ff"), "#ffffff") == 0 &&
	   strcmp(flame_ink("#ff0000"), "#000000") == 0,
	   "flame_ink: white on navy and blue, black on red");
}

/* An SVG whose frames have the names a hostile binary could give. */
static int write_hostile(const char *path)
{
	struct flame *f = flame_new();
	add(f, "main;<script>alert(1)</script>", 0, 40);
	add(f, "main;a&b \"q\" 'x' ]]> x\xff\xfe y", 0, 30);
	add(f, "main;\xed\xa0\x80" "caf\xc3\xa9", 0, 30);
	struct agg *a = agg_new();
	agg_finish(a);
	struct report_opts o = { .file = "hostile", .title = "T<i>tle & \xff" };
	struct report_ctx c = { .opts = &o, .agg = a, .by_samples = 1, .total = 100 };
	FILE *out = fopen(path, "w");
	int rc = out ? flame_svg(&c, f, out) : -1;
	if (out && fclose(out) != 0)
		rc = -1;
	agg_free(a);
	flame_free(f);
	return rc;
}

int main(int argc, char **argv)
{
	plan(argc > 1 ? 27 : 26);
	test_escaping();
	test_layout();
	test_ink();
	if (argc > 1)
		is_int(write_hostile(argv[1]), 0, "an SVG of hostile names written to %s", argv[1]);
	return done();
}
