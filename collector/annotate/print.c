/*
 * print.c - one annotated function as text, perf annotate --stdio's layout
 * (annotate.h: ann_print): a head, source lines where they change,
 * instructions with their share and samples, then its hottest lines.
 */
#include "annotate/annotate.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "annotate/srcfile.h"
#include "util.h"

#define HOT_LINES 10    /* the summary's lines, at most */

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* A row's amount, as the function's shares count it (samples if no weights). */
static uint64_t row_amount(const struct ann_func *fn, const struct ann_row *r)
{
	return fn->amount ? r->amount : r->samples;
}

static uint64_t fn_amount(const struct ann_func *fn)
{
	return fn->amount ? fn->amount : fn->samples;
}

/* Text from a file or a binary, made printable, at most max characters. */
static void put_text(FILE *out, const char *s, size_t max)
{
	char buf[1024];
	printable_copy(buf, sizeof(buf), s, max);
	fputs(buf, out);
}

static void head(const struct report_ctx *c, const struct ann_view *v, FILE *out)
{
	const struct ann_func *fn = v->fn;
	const struct loc *l = resolver_loc(c->res, fn->loc);
	fprintf(out, " Percent  Samples : Source code & disassembly of ");
	put_text(out, l->sym, 300);
	fprintf(out, " in ");
	put_text(out, report_loc_module(c, l), 200);
	fprintf(out, "\n%18s: %" PRIu64 " sample%s, %.2f%% of all", "", fn->samples,
		fn->samples == 1 ? "" : "s", report_pct(c, fn->amount ? fn->amount : fn->samples));
	if (fn->bounds)
		fprintf(out, "; %" PRIx64 "..%" PRIx64 " (%s)", fn->start, fn->end, fn->bounds);
	fprintf(out, "\n");
	if (v->code_from) {
		fprintf(out, "%18s: code from ", "");
		put_text(out, v->code_from, 300);
		fprintf(out, "\n");
	}
	if (v->note) {
		fprintf(out, "%18s: no instructions: ", "");
		put_text(out, v->note, 400);
		fprintf(out, "\n");
	}
	fprintf(out, "%s\n", "------------------------------------------------------------"
		"--------------------");
}

/* "file.c:12  text  [fn inlined at x.c:3]" */
static void source_row(struct srcfiles *sf, const struct ann_row *r, FILE *out)
{
	fprintf(out, "%18s:  ", "");
	put_text(out, path_basename(r->file), 200);
	fprintf(out, ":%u", r->line);
	const char *text = srcfile_line(sf, r->file, r->line);
	if (text) {
		fprintf(out, "   ");
		while (*text == ' ' || *text == '\t')
			text++;
		put_text(out, text, 160);
	}
	if (r->inl) {
		fprintf(out, "   [");
		put_text(out, r->inl, 200);
		fprintf(out, " inlined");
		if (r->inl_at) {
			fprintf(out, " at ");
			put_text(out, r->inl_at, 200);
		}
		fprintf(out, "]");
	}
	fprintf(out, "\n");
}

static void insn_row(const struct ann_func *fn, const struct ann_row *r,
		     const struct ann_print_opts *o, FILE *out)
{
	fprintf(out, "%8.2f %8" PRIu64 " :  %8" PRIx64 ":   ",
		share(row_amount(fn, r), fn_amount(fn)), r->samples, r->addr);
	if (o->raw && r->len) {
		char hex[3 * 16 + 1] = "";
		size_t n = r->len < 10 ? r->len : 10;
		for (size_t i = 0; i < n; i++)
			snprintf(hex + 3 * i, 4, "%02x ", r->bytes[i]);
		fprintf(out, "%-30s ", hex);
	}
	if (r->text)
		put_text(out, r->text, 300);
	else
		fprintf(out, "(sampled address: no instruction read)");
	fprintf(out, "\n");
}

struct line_sum {
	const char *file;
	unsigned line;
	const char *inl;
	uint64_t samples, amount;
};

static int by_amount(const void *a, const void *b)
{
	const struct line_sum *x = a, *y = b;
	if (x->amount != y->amount)
		return x->amount > y->amount ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* The function's hottest source lines (perf annotate --print-line's summary). */
static void hot_lines(const struct ann_view *v, FILE *out)
{
	const struct ann_func *fn = v->fn;
	struct line_sum *s = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < v->nrows; i++) {
		const struct ann_row *r = &v->rows[i];
		if (!r->file || !r->samples)
			continue;
		size_t j = 0;
		while (j < n && !(s[j].line == r->line && s[j].file == r->file))
			j++;
		if (j == n) {
			s = xgrow(s, &cap, n + 1, sizeof(*s));
			s[n++] = (struct line_sum){ r->file, r->line, r->inl, 0, 0 };
		}
		s[j].samples += r->samples;
		s[j].amount += row_amount(fn, r);
	}
	if (n) {
		qsort(s, n, sizeof(*s), by_amount);
		fprintf(out, "\n Percent  Samples : hottest source lines\n");
		for (size_t j = 0; j < n && j < HOT_LINES; j++) {
			fprintf(out, "%8.2f %8" PRIu64 " :  ", share(s[j].amount, fn_amount(fn)),
				s[j].samples);
			put_text(out, path_basename(s[j].file), 200);
			fprintf(out, ":%u", s[j].line);
			if (s[j].inl) {
				fprintf(out, "   [");
				put_text(out, s[j].inl, 200);
				fprintf(out, " inlined]");
			}
			fprintf(out, "\n");
		}
		if (n > HOT_LINES)
			fprintf(out, "%18s:  (%zu more lines)\n", "", n - HOT_LINES);
	}
	free(s);
}

/* One line per source file changed since the recording began: its lines may have moved. */
static void stale_sources(const struct report_ctx *c, const struct ann_view *v,
			  struct srcfiles *sf, FILE *out)
{
	const struct agg_info *info = agg_info(c->agg);
	int64_t when = info && info->have ? (int64_t)(info->start_real_ns / 1000000000u) : 0;
	const char *seen[8];
	size_t nseen = 0;
	for (size_t i = 0; i < v->nrows && when && nseen < 8; i++) {
		const char *f = v->rows[i].file;
		size_t j = 0;
		while (j < nseen && seen[j] != f)
			j++;
		if (!f || j < nseen)
			continue;
		seen[nseen++] = f;
		if (srcfile_newer(sf, f, when)) {
			fprintf(out, "%18s: ", "");
			put_text(out, f, 300);
			fprintf(out, " changed after the recording: its lines may not be "
				"the ones that ran\n");
		}
	}
}

long ann_print(const struct report_ctx *c, const struct ann_view *v,
	       const struct ann_print_opts *o, FILE *out)
{
	const struct ann_func *fn = v->fn;
	long hottest = -1;
	uint64_t best = 0;
	struct srcfiles *sf = srcfiles_new();
	head(c, v, out);
	stale_sources(c, v, sf, out);
	const char *last_file = NULL;
	unsigned last_line = 0;
	size_t hidden = 0;
	for (size_t i = 0; i < v->nrows; i++) {
		const struct ann_row *r = &v->rows[i];
		double pct = share(row_amount(fn, r), fn_amount(fn));
		if (o->percent_limit > 0 && pct < o->percent_limit) {
			hidden++;
			continue;
		}
		if (o->source && r->file && r->line &&
		    (r->file != last_file || r->line != last_line)) {
			source_row(sf, r, out);
			last_file = r->file;
			last_line = r->line;
		}
		if (r->samples > best) {
			best = r->samples;
			hottest = ftell(out);
		}
		insn_row(fn, r, o, out);
	}
	if (hidden)
		fprintf(out, "%18s:  (%zu instruction%s under %g%% not shown)\n", "", hidden,
			hidden == 1 ? "" : "s", o->percent_limit);
	hot_lines(v, out);
	srcfiles_free(sf);
	return hottest;
}
