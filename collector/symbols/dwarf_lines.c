/*
 * dwarf_lines.c - symobj_srcframes(): the functions inlined at an address,
 * innermost first, and their source lines, from DWARF (libdw: compile
 * units indexed by address range, each unit's scopes on first use), or,
 * in a Go binary without DWARF, from its .gopclntab (gopclntab.h).  A file
 * name DWARF gives relative to its compile unit's directory is joined to it.
 */
#include "symbols/symobj.h"
#include "symbols/gopclntab.h"
#include "symbols/kallsyms.h"
#include "symbols/ehframe.h"
#include "interval.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hashtab.h"
#include "util.h"
/* ---- DWARF: inline frames and source lines (libdw) ---------------------- */

static int cmp_cu(const void *x, const void *y)
{
	const struct cu_range *a = x, *b = y;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->hi < b->hi ? -1 : a->hi > b->hi;
}

/*
 * The address ranges of every compile unit, sorted: .debug_aranges is
 * optional (clang does not emit it), so we do not rely on dwarf_addrdie.
 */
static void index_cus(struct symobj *o)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t type;
	Dwarf_Die cudie, sub;
	while (dwarf_get_units(o->dw, cu, &next, &version, &type, &cudie, &sub) == 0) {
		cu = next;
		if (type != DW_UT_compile && type != DW_UT_partial && type != DW_UT_skeleton)
			continue;
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		int added = 0;
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			if (lo >= hi)
				continue;
			if (!added) {
				o->units = xgrow(o->units, &o->units_cap, o->nunits + 1,
						 sizeof(*o->units));
				memset(&o->units[o->nunits++], 0, sizeof(*o->units));
				added = 1;
			}
			o->cus = xgrow(o->cus, &o->cus_cap, o->ncus + 1, sizeof(*o->cus));
			o->cus[o->ncus++] = (struct cu_range){ lo, hi, cudie,
							       (uint32_t)(o->nunits - 1) };
		}
	}
	if (!o->ncus)
		return;
	qsort(o->cus, o->ncus, sizeof(*o->cus), cmp_cu);
	o->cu_maxend = xmalloc(o->ncus * sizeof(*o->cu_maxend));
	interval_maxend(o->cus, o->ncus, sizeof(*o->cus),
			offsetof(struct cu_range, hi), o->cu_maxend);
}

static int dwarf_ready(struct symobj *o)
{
	if (o->dw_tried)
		return o->dw != NULL;
	o->dw_tried = 1;
	/*
	 * Opened again by name, later: it must still be the file read then
	 * (its build-id), or a path changed in between (a user's own
	 * directory) would have us read another file.
	 */
	if (!o->dw_path ||
	    !sym_debug_file_matches(o->dw_path, o->dw_bid, o->dw_bidlen, &o->dw_fd, &o->dw_elf))
		return 0;
	if (o->dw_elf)
		o->dw = dwarf_begin_elf(o->dw_elf, DWARF_C_READ, NULL);
	if (o->dw)
		index_cus(o);
	return o->dw != NULL;
}

static struct cu_range *cu_of(struct symobj *o, uint64_t vaddr)
{
	size_t lo = interval_upper(o->cus, o->ncus, sizeof(o->cus[0]),
				   offsetof(struct cu_range, lo), vaddr);
	for (size_t i = lo, steps = 0; i-- > 0 && steps < SYM_WALK_MAX; steps++) {
		if (o->cu_maxend[i] <= vaddr)
			break;
		if (vaddr < o->cus[i].hi)
			return &o->cus[i];
	}
	return NULL;
}

/* A DIE's linkage name (mangled: the resolver demangles) or plain name. */
static const char *die_name(Dwarf_Die *d)
{
	Dwarf_Attribute a;
	const char *n = NULL;
	if (dwarf_attr_integrate(d, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(d, DW_AT_MIPS_linkage_name, &a))
		n = dwarf_formstring(&a);
	if (!n && dwarf_attr_integrate(d, DW_AT_name, &a))
		n = dwarf_formstring(&a);
	return n && *n ? n : NULL;
}

static unsigned die_udata(Dwarf_Die *d, unsigned at)
{
	Dwarf_Attribute a;
	Dwarf_Word w;
	if (!dwarf_attr(d, at, &a) || dwarf_formudata(&a, &w) != 0 || w > 0xffffffffu)
		return 0;
	return (unsigned)w;
}

#define SCOPE_MAX 64
/*
 * Namespaces and classes nest this deep at most before we stop looking
 * inside (real code: a handful; a file nesting 100,000 overflowed the
 * stack, 20,000 took seconds).
 */
#define NEST_MAX 64

/* Said once per process: debug info nested past NEST_MAX. */
static void too_deep(const char *path)
{
	static int said;
	if (!said++)
		probe_warn("%s: its debug info nests namespaces or classes more than %d "
			   "deep; what is deeper is not looked into for inline frames",
			   path ? path : "an object", NEST_MAX);
}

/*
 * The chain of subprogram and inlined-subroutine DIEs containing vaddr,
 * outermost first, found by descending the tree from parent (namespaces and
 * classes have no addresses but hold functions: they are looked into while
 * the chain is still empty).  chain[0..n) and depth are where an earlier
 * step left off (0, 0 from a compile unit).  Returns the chain's length.
 */
static int scope_walk(Dwarf_Die *from, uint64_t vaddr, Dwarf_Die *chain, int n, int max,
		      int depth, int nest)
{
	Dwarf_Die parent = *from, child;
	while (depth++ < 256 && dwarf_child(&parent, &child) == 0) {
		int found = 0;
		do {
			int tag = dwarf_tag(&child);
			switch (tag) {
			case DW_TAG_subprogram:
			case DW_TAG_inlined_subroutine:
			case DW_TAG_entry_point:
			case DW_TAG_lexical_block:
			case DW_TAG_try_block:
			case DW_TAG_catch_block:
				if (dwarf_haspc(&child, vaddr) == 1) {
					if (tag != DW_TAG_lexical_block && tag != DW_TAG_try_block &&
					    tag != DW_TAG_catch_block && n < max)
						chain[n++] = child;
					found = 1;
				}
				break;
			case DW_TAG_namespace:
			case DW_TAG_module:
			case DW_TAG_class_type:
			case DW_TAG_structure_type:
			case DW_TAG_union_type:
				/* No addresses of their own: look inside only while
				 * nothing with addresses matched yet. */
				if (n == 0 && nest < NEST_MAX &&
				    dwarf_haschildren(&child) == 1) {
					/* Nothing is written to chain unless it matches. */
					int k = scope_walk(&child, vaddr, chain, 0, max, 0, nest + 1);
					if (k > 0)
						return k;
				}
				break;
			default:
				break;
			}
		} while (!found && dwarf_siblingof(&child, &child) == 0);
		if (!found)
			break;
		parent = child;
	}
	return n;
}

/*
 * The DIEs scope_walk() tests before its chain has anything in it, in the
 * order it tests them: parent's children, and inside namespaces and classes
 * (not inside what has addresses: it only goes into what matched).
 */
static void scopes_collect(struct cu_scopes *s, Dwarf_Die *parent, uint32_t *order,
			   int nest, const char *path)
{
	Dwarf_Die child;
	if (dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		switch (tag) {
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_entry_point:
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block: {
			/* The ranges dwarf_haspc() would test. */
			uint32_t ord = (*order)++;
			uint8_t block = tag == DW_TAG_lexical_block || tag == DW_TAG_try_block ||
					tag == DW_TAG_catch_block;
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;
			while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
				if (lo >= hi)
					continue;
				s->ents = xgrow(s->ents, &s->cap, s->n + 1, sizeof(*s->ents));
				s->ents[s->n++] = (struct scope_ent){ lo, hi, ord, block, child };
			}
			break;
		}
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			if (nest >= NEST_MAX)
				too_deep(path);
			else if (dwarf_haschildren(&child) == 1)
				scopes_collect(s, &child, order, nest + 1, path);
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int cmp_scope(const void *x, const void *y)
{
	const struct scope_ent *a = x, *b = y;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

static void scopes_build(struct cu_scopes *s, Dwarf_Die *cudie, const char *path)
{
	uint32_t order = 0;
	s->built = 1;
	scopes_collect(s, cudie, &order, 0, path);
	if (!s->n)
		return;
	qsort(s->ents, s->n, sizeof(*s->ents), cmp_scope);
	s->maxend = xmalloc(s->n * sizeof(*s->maxend));
	interval_maxend(s->ents, s->n, sizeof(*s->ents),
			offsetof(struct scope_ent, hi), s->maxend);
}

/* Past this many ranges overlapping an address, walk the tree instead. */
#define SCOPE_OVERLAP_MAX 256

/*
 * scope_walk() from the compile unit, without its linear search of the
 * unit's top level: the first DIE it would match there comes from the
 * unit's sorted index, and only what is under it is walked.  Where that DIE
 * is a block (the walk's next steps there differ), or the index is
 * unhelpful, the walk does it all.
 */
static int scope_chain(struct symobj *o, struct cu_range *r, uint64_t vaddr, Dwarf_Die *chain,
		       int max)
{
	struct cu_scopes *s = &o->units[r->unit];
	if (!s->built)
		scopes_build(s, &r->cu, o->dw_path);
	size_t i = interval_upper(s->ents, s->n, sizeof(s->ents[0]),
				  offsetof(struct scope_ent, lo), vaddr);
	const struct scope_ent *best = NULL;
	for (size_t steps = 0; i-- > 0; steps++) {
		if (s->maxend[i] <= vaddr)
			break;
		if (steps >= SCOPE_OVERLAP_MAX)
			return scope_walk(&r->cu, vaddr, chain, 0, max, 0, 0);
		if (vaddr < s->ents[i].hi && (!best || s->ents[i].order < best->order))
			best = &s->ents[i];
	}
	if (!best)
		return 0;
	if (best->block || max < 1)
		return scope_walk(&r->cu, vaddr, chain, 0, max, 0, 0);
	chain[0] = best->die;
	return scope_walk(&chain[0], vaddr, chain, 1, max, 1, 0);
}

/*
 * A source file as addr2line and perf name it: where DWARF names it relative
 * to its compile unit's directory (gcc run in the source tree: "tests/x.c",
 * or "x.c"), joined to that directory (DW_AT_comp_dir, when absolute), so
 * that a reader in another directory finds it (go tool pprof -list); else
 * as it is.  The joined names are the object's (o->paths): a few per source
 * file, however often asked for, and gone with the object (probe agent, run
 * as root, keeps a bounded cache of objects; a process-wide table grew with
 * every program any user profiled).
 */
static const char *full_path(struct symobj *o, Dwarf_Die *cu, const char *file)
{
	Dwarf_Attribute a;
	if (!file || !*file || file[0] == '/' || !dwarf_attr(cu, DW_AT_comp_dir, &a))
		return file;
	const char *dir = dwarf_formstring(&a);
	if (!dir || dir[0] != '/')
		return file;
	while (file[0] == '.' && file[1] == '/')
		file += 2;
	size_t dl = strlen(dir), fl = strlen(file);
	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	if (dl == 1)
		dl = 0;         /* "/": "/x.c", not "//x.c" */
	char *j = xmalloc(dl + fl + 2);
	memcpy(j, dir, dl);
	j[dl] = '/';
	memcpy(j + dl + 1, file, fl + 1);
	if (!o->paths)
		o->paths = strpool_new();
	const char *s = strpool_intern(o->paths, j);
	free(j);
	return s;
}

/* A Go binary without DWARF: what its .gopclntab says (gopclntab.h). */
static size_t go_srcframes(struct symobj *o, uint64_t vaddr, struct src_frame *out,
			   size_t max)
{
	struct gopcln_frame f[RESOLVE_GO_MAX];
	size_t size = 0;
	const char *img = o->dw_elf ? elf_rawfile(o->dw_elf, &size) : NULL;
	if (!o->gp && img) {
		o->gp = xcalloc(1, sizeof(*o->gp));
		if (gopcln_open(o->gp, (const uint8_t *)img, size) < 0)
			o->gp->p = NULL;
	}
	if (!o->gp || !o->gp->p)
		return 0;
	size_t n = gopcln_frames(o->gp, vaddr, f, max < RESOLVE_GO_MAX ? max : RESOLVE_GO_MAX);
	for (size_t i = 0; i < n; i++)
		out[i] = (struct src_frame){ f[i].name[0] ? f[i].name : NULL, f[i].file,
					     f[i].line, f[i].inlined };
	return n;
}

size_t symobj_srcframes(struct symobj *o, uint64_t vaddr, struct src_frame *out, size_t max)
{
	if (max == 0)
		return 0;
	if (o->sources & SYMSRC_RECORDED)
		return symrec_srcframes(o, vaddr, out, max);
	if (!dwarf_ready(o) || !o->ncus)
		return o->go ? go_srcframes(o, vaddr, out, max) : 0;
	struct cu_range *r = cu_of(o, vaddr);
	if (!r)
		return 0;
	Dwarf_Die *cu = &r->cu;
	const char *file = NULL;
	int line = 0;
	Dwarf_Line *l = dwarf_getsrc_die(cu, vaddr);
	if (l) {
		file = full_path(o, cu, dwarf_linesrc(l, NULL, NULL));
		if (dwarf_lineno(l, &line) != 0)
			line = 0;
	}
	Dwarf_Die chain[SCOPE_MAX];
	int n = scope_chain(o, r, vaddr, chain, SCOPE_MAX);
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	size_t k = 0;
	/* Innermost first: each inlined instance, then the function itself. */
	for (int i = n - 1; i >= 0 && k + 1 < max; i--) {
		if (dwarf_tag(&chain[i]) != DW_TAG_inlined_subroutine)
			break;
		out[k].name = die_name(&chain[i]);
		out[k].file = file;
		out[k].line = line > 0 ? (unsigned)line : 0;
		out[k].inlined = 1;
		k++;
		/* The caller's position: where this instance was inlined. */
		unsigned cf = die_udata(&chain[i], DW_AT_call_file);
		line = (int)die_udata(&chain[i], DW_AT_call_line);
		file = NULL;
		if (!files && dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
			files = NULL;
		if (files && cf < nfiles)
			file = full_path(o, cu, dwarf_filesrc(files, cf, NULL, NULL));
	}
	out[k].name = NULL;
	for (int i = n - 1; i >= 0; i--) {
		if (dwarf_tag(&chain[i]) != DW_TAG_inlined_subroutine) {
			out[k].name = die_name(&chain[i]);
			break;
		}
	}
	out[k].file = file;
	out[k].line = line > 0 ? (unsigned)line : 0;
	out[k].inlined = 0;
	return k + 1;
}

