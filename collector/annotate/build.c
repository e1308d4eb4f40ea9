/*
 * build.c - one function's rows: its instructions with their samples and
 * source positions (annotate.h: ann_build).
 */
#include "annotate/annotate.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "annotate/code.h"
#include "annotate/disasm.h"
#include "symbols/kallsyms.h"
#include "util.h"

/* " <name+0xOFF>" for a branch's target, as objdump names it; "" when nothing names it. */
static void name_target(const struct report_ctx *c, struct symcache *sc,
			const struct ann_func *fn, uint64_t t, char *buf, size_t n)
{
	uint64_t s = 0, e = 0;
	const char *name = NULL, *mod;
	buf[0] = 0;
	if (fn->kind == ANN_ELF && fn->obj)
		name = symobj_lookup_range(fn->obj, t, &s, &e);
	else if (fn->kind == ANN_KERNEL && symcache_kallsyms(sc))
		name = kallsyms_lookup_range(symcache_kallsyms(sc), t, &mod, &s, &e);
	if (!name)
		return;
	const char *shown = resolver_func_name(c->res, name);
	if (t == s)
		snprintf(buf, n, " <%s>", shown);
	else
		snprintf(buf, n, " <%s+0x%" PRIx64 ">", shown, t - s);
}

static struct ann_row *add_row(struct ann_view *v, size_t *cap)
{
	v->rows = xgrow(v->rows, cap, v->nrows + 1, sizeof(*v->rows));
	struct ann_row *r = &v->rows[v->nrows++];
	memset(r, 0, sizeof(*r));
	return r;
}

/* Every instruction of fn's bytes, one row each. */
static void disassemble(const struct report_ctx *c, struct symcache *sc,
			const struct ann_func *fn, struct disasm *d, const uint8_t *bytes,
			size_t len, struct ann_view *v)
{
	size_t cap = 0;
	const uint8_t *p = bytes;
	size_t left = len;
	uint64_t addr = fn->start;
	char text[192], tname[256];
	while (left > 0) {
		struct ann_row *r = add_row(v, &cap);
		uint64_t at = addr, target, rip;
		const uint8_t *from = p;
		size_t n = disasm_next(d, &p, &left, &addr, text, sizeof(text), &target, &rip);
		if (n == 0) {           /* undecodable: one byte, as objdump */
			snprintf(text, sizeof(text), "(bad)");
			n = 1;
			p++;
			left--;
			addr++;
			target = rip = 0;
		}
		r->addr = at;
		r->len = (uint32_t)n;
		memcpy(r->bytes, from, n < sizeof(r->bytes) ? n : sizeof(r->bytes));
		tname[0] = 0;
		if (target) {
			name_target(c, sc, fn, target, tname, sizeof(tname));
		} else if (rip) {       /* objdump's "        # 1de50 <sym+0x8>" */
			size_t k = (size_t)snprintf(tname, sizeof(tname), "        # %" PRIx64, rip);
			name_target(c, sc, fn, rip, tname + k, sizeof(tname) - k);
		}
		r->text = xasprintf("%s%s", text, tname);
	}
}

/* Each hit onto the instruction holding it; hits no instruction holds get rows of their own. */
static void place_hits(const struct ann_func *fn, struct ann_view *v)
{
	size_t cap = v->nrows, r = 0, nrows = v->nrows;
	for (size_t i = 0; i < fn->nhits; i++) {
		const struct ann_hit *h = &fn->hits[i];
		while (r < nrows && v->rows[r].addr + v->rows[r].len <= h->addr)
			r++;
		struct ann_row *row;
		if (r < nrows && v->rows[r].addr <= h->addr) {
			row = &v->rows[r];
		} else {
			row = add_row(v, &cap);
			row->addr = h->addr;
		}
		row->samples += h->samples;
		row->amount += h->amount;
	}
}

static int by_addr(const void *a, const void *b)
{
	const struct ann_row *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Each row's source position and inline chain, from DWARF (or the recording). */
static void add_sources(const struct report_ctx *c, const struct ann_func *fn,
			struct ann_view *v)
{
	if (fn->kind != ANN_ELF || !fn->obj)
		return;
	struct src_frame sf[16];
	for (size_t i = 0; i < v->nrows; i++) {
		struct ann_row *r = &v->rows[i];
		size_t n = symobj_srcframes(fn->obj, r->addr, sf, 16);
		if (n == 0)
			continue;
		r->file = resolver_intern_printable(c->res, sf[0].file);
		r->line = sf[0].line;
		if (n > 1 && sf[0].inlined) {
			r->inl = resolver_func_name(c->res, sf[0].name);
			if (sf[1].file && sf[1].line) {
				char *at = xasprintf("%s:%u", path_basename(sf[1].file), sf[1].line);
				r->inl_at = resolver_intern_printable(c->res, at);
				free(at);
			}
		}
	}
}

int ann_build(const struct report_ctx *c, struct symcache *sc, const struct ann_func *fn,
	      int intel, struct ann_view *v)
{
	memset(v, 0, sizeof(*v));
	v->fn = fn;
	size_t len;
	unsigned machine = 0;
	char *why = NULL;
	uint8_t *bytes = code_read(c, fn, &len, &machine, &v->code_from, &why);
	if (bytes) {
		const char *dwhy = NULL;
		struct disasm *d = disasm_open(machine, intel, &dwhy);
		if (d)
			disassemble(c, sc, fn, d, bytes, len, v);
		else
			why = xstrdup(dwhy);
		disasm_close(d);
		free(bytes);
	}
	v->note = why;
	place_hits(fn, v);
	qsort(v->rows, v->nrows, sizeof(*v->rows), by_addr);
	add_sources(c, fn, v);
	return v->nrows ? 0 : -1;
}

void ann_view_free(struct ann_view *v)
{
	for (size_t i = 0; i < v->nrows; i++)
		free(v->rows[i].text);
	free(v->rows);
	free(v->note);
	free(v->code_from);
	memset(v, 0, sizeof(*v));
}
