/*
 * report_filter.c - probe report's filters, as perf's: --comms, --pid,
 * --tid, --dsos, --symbols and --time (report_filter.h).
 */
#include "cmd/report_filter.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* A comma list of non-empty names; -1 if one is empty. */
int parse_names(const char *s, struct namelist *l)
{
	l->text = s;
	const char *p = s;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (!len)
			return -1;
		l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
		l->v[l->n++] = xasprintf("%.*s", (int)len, p);
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

int parse_ids(const char *s, struct namelist *l)
{
	if (parse_names(s, l) < 0)
		return -1;
	for (size_t i = 0; i < l->n; i++) {
		uint64_t v;
		if (parse_u64(l->v[i], &v) < 0 || v > UINT32_MAX)
			return -1;
	}
	return 0;
}

void names_free(struct namelist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

void filters_free(struct filters *fl)
{
	names_free(&fl->comms);
	names_free(&fl->pids);
	names_free(&fl->tids);
	names_free(&fl->dsos);
	names_free(&fl->syms);
}

static int in_list(const struct namelist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return 1;
	return 0;
}

static int id_in_list(const struct namelist *l, uint32_t id)
{
	for (size_t i = 0; i < l->n; i++)
		if (strtoull(l->v[i], NULL, 10) == id)
			return 1;
	return 0;
}

/* Seconds: a decimal number, >= 0; -1 otherwise. */
static int parse_secs(const char *s, size_t len, double *out)
{
	char buf[64];
	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (strspn(buf, "0123456789.") != len)
		return -1;
	char *end;
	errno = 0;
	double v = strtod(buf, &end);
	if (errno || *end || v < 0 || v > 1e9)
		return -1;
	*out = v;
	return 0;
}

int parse_time(const char *s, struct filters *fl)
{
	const char *comma = strchr(s, ',');
	if (!comma || strchr(comma + 1, ','))
		return -1;
	size_t l1 = (size_t)(comma - s), l2 = strlen(comma + 1);
	fl->have_lo = l1 > 0;
	fl->have_hi = l2 > 0;
	if ((l1 && parse_secs(s, l1, &fl->lo) < 0) ||
	    (l2 && parse_secs(comma + 1, l2, &fl->hi) < 0))
		return -1;
	if (fl->have_lo && fl->have_hi && fl->hi < fl->lo)
		return -1;
	fl->time_set = 1;
	return 0;
}

/* The thread's name as the text report shows it. */
static const char *comm_of(const struct agg *a, const struct agg_count *k)
{
	const char *n = agg_thread_name(a, k->image, k->tid);
	if (n && *n)
		return n;
	const struct agg_image *im = agg_image(a, k->image);
	return im->comm[0] ? im->comm : im->name;
}

static void append(char **s, const char *what, const struct namelist *l)
{
	if (!l->n)
		return;
	char *p = printable_dup(l->text);
	char *n = xasprintf("%s%s%s %s", *s ? *s : "", *s ? ", " : "", what, p);
	free(p);
	free(*s);
	*s = n;
}

/*
 * Apply --time (the window becomes the total) and the filters (the total
 * stays: shares are of all samples, as perf shows them); the header lines
 * that say so into o.
 */
void apply_filters(struct agg *a, struct resolver *res, struct filters *fl,
			  struct report_opts *o, char **time_line, char **filter_line)
{
	if (fl->time_set) {
		const struct agg_info *in = agg_info(a);
		const struct agg_totals *t = agg_totals(a);
		uint64_t start = in->have ? in->start_ns : t->t_min;
		uint64_t lo = start, hi = UINT64_MAX;
		if (fl->have_lo)
			lo = start + (uint64_t)(fl->lo * 1e9);
		if (fl->have_hi)
			hi = start + (uint64_t)(fl->hi * 1e9);
		uint64_t before = t->samples;
		if (t->samples)
			agg_window(a, lo, hi);
		char lo_s[32] = "the start", hi_s[32] = "the end";
		if (fl->have_lo)
			snprintf(lo_s, sizeof(lo_s), "%.3f s", fl->lo);
		if (fl->have_hi)
			snprintf(hi_s, sizeof(hi_s), "%.3f s", fl->hi);
		*time_line = xasprintf("# time: %s to %s from the start of the recording%s: "
				       "%" PRIu64 " of %" PRIu64 " samples; shares are of "
				       "those", lo_s, hi_s, in->have ? "" :
				       " (its first sample: the start was not recorded)",
				       agg_totals(a)->samples, before);
		o->time_line = *time_line;
	}
	struct namelist *ls[] = { &fl->comms, &fl->pids, &fl->tids, &fl->dsos, &fl->syms };
	int any = 0;
	for (size_t i = 0; i < sizeof(ls) / sizeof(ls[0]); i++)
		any |= ls[i]->n != 0;
	if (!any)
		return;
	size_t n = agg_ncounts(a);
	const struct agg_count *counts = agg_counts(a);
	uint8_t *keep = xmalloc(n ? n : 1);
	struct rframe *fr = xmalloc(RESOLVE_MAX_FRAMES * sizeof(*fr));
	uint64_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		const struct agg_count *k = &counts[i];
		int ok = 1;
		if (fl->comms.n)
			ok &= in_list(&fl->comms, comm_of(a, k));
		if (ok && fl->pids.n)
			ok &= id_in_list(&fl->pids, agg_image(a, k->image)->pid);
		if (ok && fl->tids.n)
			ok &= id_in_list(&fl->tids, k->tid);
		if (ok && (fl->dsos.n || fl->syms.n)) {
			uint32_t nf = resolve_stack(res, k, fr);
			const struct loc *l = nf ? resolver_loc(res, fr[0].loc) : NULL;
			if (!l)
				ok = 0;
			if (ok && fl->dsos.n)
				ok &= in_list(&fl->dsos, l->dso) || in_list(&fl->dsos, l->dso_path);
			if (ok && fl->syms.n)
				ok &= in_list(&fl->syms, l->fn) || in_list(&fl->syms, l->sym);
		}
		keep[i] = (uint8_t)ok;
		if (ok)
			kept += k->samples;
	}
	free(fr);
	agg_keep_counts(a, keep);
	free(keep);
	char *what = NULL;
	append(&what, "comm", &fl->comms);
	append(&what, "pid", &fl->pids);
	append(&what, "tid", &fl->tids);
	append(&what, "leaf module", &fl->dsos);
	append(&what, "leaf function", &fl->syms);
	uint64_t all = agg_totals(a)->samples;
	*filter_line = xasprintf("# filter: %s: %" PRIu64 " of %" PRIu64 " samples "
				 "(%.2f%%); shares are of all %" PRIu64, what, kept, all,
				 all ? 100.0 * (double)kept / (double)all : 0.0, all);
	free(what);
	o->filter_line = *filter_line;
}
