/*
 * annotate.c - --format annotate: probe annotate's view of the hottest
 * functions (annotate/annotate.h), for a report's filters and -o; its
 * --percent-limit hides cold instructions.  probe annotate itself chooses
 * functions by name and has the disassembler's options.
 */
#include "format/format.h"
#include "annotate/annotate.h"

#define FORMAT_FUNCTIONS 5

int report_annotate(const struct report_ctx *c, FILE *out)
{
	struct symcache *sc = resolver_symcache(c->res);
	struct ann_set *s = ann_collect(c, sc);
	struct ann_print_opts po = { .source = 1, .percent_limit = c->opts->percent_limit };
	report_header(c, out);
	for (size_t i = 0; i < s->n && i < FORMAT_FUNCTIONS; i++) {
		struct ann_view v;
		ann_build(c, sc, &s->fns[i], 0, &v);
		if (i)
			fputc('\n', out);
		ann_print(c, &v, &po, out);
		ann_view_free(&v);
	}
	ann_set_free(s);
	return 0;
}
