/*
 * symobj.h - inside symbols.h: an object's tables, and what symbols.c,
 * debugfile.c and dwarf_lines.c call in each other.  Not for other
 * modules: symbols.h is the interface.
 */
#ifndef PROBE_SYMOBJ_H
#define PROBE_SYMOBJ_H

#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

#include "hashtab.h"
#include "strpool.h"
#include "symbols/symbols.h"

struct sym {
	uint64_t addr, end;
	const char *name;       /* in the object's arena */
	uint32_t idx;           /* order read: the last tie-break, as perf */
	uint8_t weak, global;
	uint8_t sized;          /* st_size was not 0 */
};

struct cu_range {
	uint64_t lo, hi;
	Dwarf_Die cu;
	uint32_t unit;          /* its compile unit: index into symobj.units */
};

/*
 * One address range of a DIE that scope_chain() may pick first in a compile
 * unit: a subprogram, inlined subroutine or entry point (or a lexical, try
 * or catch block) that is a child of the unit, or of the namespaces, modules
 * and classes it holds.  order is the DIE's place in that walk (pre-order):
 * of those containing an address, the one with the lowest order is what the
 * walk would find.
 */
struct scope_ent {
	uint64_t lo, hi;
	uint32_t order;
	uint8_t block;          /* a lexical, try or catch block */
	Dwarf_Die die;
};

/* A compile unit's scope_ents sorted by lo, built on first use. */
struct cu_scopes {
	int built;
	struct scope_ent *ents;
	uint64_t *maxend;       /* maxend[i] = max(hi of ents[0..i]) */
	size_t n, cap;
};

/* How far back to look past symbols that start below vaddr but end before. */
#define SYM_WALK_MAX 64

#define RESOLVE_GO_MAX 64        /* inline depth read from .gopclntab */

struct symobj {
	UT_hash_handle hh;
	unsigned char *key;     /* its identity (symcache_get) */
	size_t keylen;
	struct sym *syms;
	uint64_t *maxend;       /* maxend[i] = max(end of syms[0..i]) */
	size_t nsyms, cap;
	char **arena;           /* blocks holding the names */
	size_t narena, arena_cap;
	char *cur;              /* free space in the last block */
	size_t cur_left;
	uint32_t next_idx;
	struct ehf_range *fdes; /* .eh_frame's function ranges, sorted */
	size_t nfdes;
	unsigned sources;       /* SYMSRC_* bits */
	const char *loading;    /* the path being loaded, for messages */
	/* DWARF: opened on first use from dw_path (the file or its debug file). */
	char *dw_path;
	struct strpool *paths;  /* source files joined to their unit's directory */
	uint8_t dw_bid[64];     /* ... and the build-id it must still have */
	size_t dw_bidlen;
	int dw_tried, dw_fd;
	Elf *dw_elf;
	int go;                 /* dw_path is a Go binary without DWARF: its
				   .gopclntab gives inline frames and lines */
	struct gopcln *gp;      /* ... opened at the first question */
	Dwarf *dw;
	struct cu_range *cus;
	uint64_t *cu_maxend;
	size_t ncus, cus_cap;
	struct cu_scopes *units;    /* per compile unit with addresses */
	size_t nunits, units_cap;
	/* Named from the recording (symrec.h): its sampled addresses' source
	   frames, sorted by vaddr; each rsrcs[i] holds nsrc frames from first. */
	struct rec_addr *raddrs;
	size_t nraddrs;
	struct src_frame *rsrcs;
	size_t nrsrcs, rsrcs_cap;
};

struct rec_addr {
	uint64_t vaddr;
	uint32_t first, n;
};

struct agg;

struct symcache {
	struct symobj *objs;
	const struct agg **recs;        /* recordings whose names it may use (symrec.h) */
	size_t nrecs, recs_cap;
	int elf_ready;
	const char *debug_root;
	struct kallsyms *ksyms; /* loaded at the first kernel address */
	int ksyms_tried;
};

/* symbols.c */
const char *sym_arena_dup(struct symobj *o, const char *s, size_t n);
void sym_add(struct symobj *o, uint64_t addr, uint64_t size, const char *name);

/* symrec.c: o named from the recordings c holds (1), or not (0). */
int symrec_fill(const struct symcache *c, struct symobj *o, const uint8_t *bid,
		size_t bidlen);
size_t symrec_srcframes(const struct symobj *o, uint64_t vaddr, struct src_frame *out,
			size_t max);

size_t sym_read_table(struct symobj *o, Elf *e, unsigned type);
Elf_Scn *sym_find_section(Elf *e, const char *want, GElf_Shdr *out);

/* debugfile.c */
size_t sym_read_minidebuginfo(struct symobj *o, Elf *e);
int sym_debug_file_matches(const char *path, const uint8_t *bid, size_t bidlen,
	int *fdp, Elf **ep);
char *sym_find_separate_debug(const struct symcache *c, Elf *e, const char *path,
	const uint8_t *bid, size_t bidlen, int *fdp, Elf **ep);
char *sym_find_by_build_id(const struct symcache *c, const uint8_t *bid,
	size_t bidlen, int *fdp, Elf **ep);

#endif
