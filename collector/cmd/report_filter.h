/*
 * report_filter.h - probe report's filters, as perf's (report.c reads the
 * options, this applies them).
 *
 * Contract:
 *   - parse_names() takes a comma list of non-empty names into l (-1: an
 *     empty one); parse_ids() the same of numbers (pids, tids); parse_time()
 *     "START,END" in seconds from the start, either empty (-1: not that);
 *     names_free() frees a list, filters_free() every list of a struct filters.
 *   - apply_filters() applies --time (the window becomes the total) and the
 *     others (the total stays: shares are of all samples, as perf shows
 *     them) to a, and sets the header lines that say so (o->time_line,
 *     o->filter_line, allocated into *time_line and *filter_line for the
 *     caller to free).
 */
#ifndef PROBE_CMD_REPORT_FILTER_H
#define PROBE_CMD_REPORT_FILTER_H

#include <stddef.h>

#include "data/aggregate.h"
#include "format/format.h"
#include "symbols/resolve.h"

struct namelist {
	char **v;
	size_t n;
	const char *text;       /* as given */
};

struct filters {
	struct namelist comms, pids, tids, dsos, syms;
	int time_set;
	int have_lo, have_hi;
	double lo, hi;          /* seconds from the start */
};

int parse_names(const char *s, struct namelist *l);
int parse_ids(const char *s, struct namelist *l);
void names_free(struct namelist *l);
void filters_free(struct filters *fl);
int parse_time(const char *s, struct filters *fl);
void apply_filters(struct agg *a, struct resolver *res, struct filters *fl,
		   struct report_opts *o, char **time_line, char **filter_line);

#endif
