/*
 * annotate.h - which instructions and source lines of a function its
 * samples fell on: probe annotate, probe top's 'a' key.
 *
 * Contract:
 *   - ann_collect() takes each count of a finished (filtered) aggregate by
 *     its leaf: the first address of its stack that is not libprobe's own
 *     (a return address then, taken at the byte before it: inside its
 *     call).  Off-CPU time ([off-cpu], [stack unknown]) is not on any
 *     instruction and is left out.  The leaf's function is the one
 *     resolve.h names as containing it; its bounds are its symbol's, else
 *     its .eh_frame FDE's (a stripped function), the kernel symbol's (up to
 *     the next one), or a JIT entry's; a function no bound is known for
 *     keeps its sampled addresses only.  Functions come hottest first
 *     (amount as report_amount counts it, then samples, then name).
 *   - ann_build() makes one function's rows: every instruction of its
 *     bounds (disasm.h on the bytes code.h finds), each with the samples
 *     and amount that fell in it (an address inside an instruction counts
 *     for it), and the source position and inline chain DWARF gives its
 *     address (symbols.h); where no code can be read, one row per sampled
 *     address, with the recording's or the file's lines, and why (note).
 *     Addresses are the object's own (ELF virtual addresses, what objdump
 *     prints); the kernel's and JIT code's are run-time addresses.
 *   - ann_print() writes a function as perf annotate --stdio does: a head
 *     line, then source lines (when they change) interleaved with
 *     instructions; each instruction's share of the function and its
 *     sample count.  The shares of every instruction sum to 100 (rounding
 *     aside).  Nothing here exits or prints to stderr but through util.h.
 */
#ifndef PROBE_ANNOTATE_H
#define PROBE_ANNOTATE_H

#include <stdint.h>
#include <stdio.h>

#include "format/format.h"
#include "symbols/symbols.h"

enum ann_kind { ANN_ELF, ANN_KERNEL, ANN_JIT, ANN_OTHER };

#define ANN_MAX_INLINED 16

/* Samples at one address of a function. */
struct ann_hit {
	uint64_t addr;          /* the object's address (as printed) */
	uint64_t samples, amount;
};

struct ann_func {
	uint32_t loc;           /* resolver location: name and module */
	enum ann_kind kind;
	const struct agg_map *map;      /* ELF, JIT: one mapping it was sampled in */
	uint32_t image;                 /* ... and one process image it was sampled in */
	struct symobj *obj;             /* ELF: its object's names and DWARF */
	uint64_t start, end;    /* object addresses; start == end: bounds unknown */
	const char *bounds;     /* "symbol", ".eh_frame", "kallsyms", "JIT" or NULL */
	uint64_t samples, amount;
	uint32_t inl[ANN_MAX_INLINED];  /* locations of functions inlined where it
					   was sampled (the first ANN_MAX_INLINED) */
	size_t ninl;
	struct ann_hit *hits;   /* sorted by address */
	size_t nhits, hits_cap;
};

struct ann_set {
	struct ann_func *fns;
	size_t n;
	uint64_t samples, amount;       /* of every function */
};

/* One instruction (or, with no code, one sampled address) of a function. */
struct ann_row {
	uint64_t addr;
	uint32_t len;           /* 0: an address with no instruction read */
	char *text;             /* "mov    %rdi,%rax", or NULL */
	uint8_t bytes[16];      /* the instruction's first bytes (--asm-raw) */
	uint64_t samples, amount;
	const char *file;       /* innermost source file (printable), or NULL */
	unsigned line;
	const char *inl;        /* innermost inlined function's name, or NULL */
	const char *inl_at;     /* "file.c:12": where it was inlined into its caller */
};

struct ann_view {
	const struct ann_func *fn;
	struct ann_row *rows;
	size_t nrows;
	char *note;             /* why there are no instructions, or NULL */
	char *code_from;        /* the file the bytes came from, or NULL */
};

struct ann_print_opts {
	double percent_limit;   /* instructions under this share are hidden */
	int source;             /* 1: source lines interleaved */
	int raw;                /* 1: the instructions' bytes too */
	int intel;              /* 1: Intel syntax (else AT&T, as objdump) */
};

struct ann_set *ann_collect(const struct report_ctx *c, struct symcache *sc);
void ann_set_free(struct ann_set *s);
/* Does fn answer to name (its name, its name in the binary, module+0xSTART)? */
int ann_func_matches(const struct report_ctx *c, const struct ann_func *fn,
		     const char *name);
/* Is a function so named (or location loc, when name is NULL) inlined where fn was sampled? */
int ann_func_inlines(const struct report_ctx *c, const struct ann_func *fn,
		     const char *name, uint32_t loc);
/* The rows of fn; 0, or -1 when nothing at all can be shown (v->note says). */
int ann_build(const struct report_ctx *c, struct symcache *sc, const struct ann_func *fn,
	      int intel, struct ann_view *v);
void ann_view_free(struct ann_view *v);
/* Returns where in out (ftell) its hottest instruction's row begins; -1: none, or out cannot tell. */
long ann_print(const struct report_ctx *c, const struct ann_view *v,
	       const struct ann_print_opts *o, FILE *out);

#endif
