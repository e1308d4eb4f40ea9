/*
 * gopclntab.h - Go's own function table (.gopclntab), which every Go
 * binary keeps, stripped or not (the runtime needs it for its tracebacks):
 * each function's name, and its frame size at each instruction (the pcsp
 * table), by which a Go frame is walked with no CFI and no frame pointer
 * (a leaf function has neither).
 *
 * Contract:
 *   - gopcln_open() finds .gopclntab in an ELF image in memory (img, size:
 *     the file, untrusted: every read is bounded by it) and checks its
 *     header: Go 1.18 and 1.19 (magic 0xfffffff0) and 1.20 on (0xfffffff1),
 *     64-bit.  0, or -1 when there is none or it is of another version.
 *   - gopcln_at(): the i-th function, in address order;
 *     gopcln_find(): the function whose code holds vaddr (a file address):
 *     its entry and name (pointing into img; NUL-terminated within it).
 *   - gopcln_sp(): the frame's size at vaddr in it (bytes below the return
 *     address the function has pushed there), from its pcsp table.
 *   - gopcln_frames(): the functions at vaddr, innermost first: each call
 *     inlined there (the function's inline tree, FUNCDATA_InlTree, indexed
 *     by PCDATA_InlTreeIndex; its base, moduledata.gofunc, found once in
 *     the data), then the function itself, each with its source position
 *     (pcfile, pcln): what DWARF would say, in a binary without it.  Its
 *     count (at least 1), or 0 when no function holds vaddr.
 *   - gopcln_outermost(): a function no Go stack goes above (goexit,
 *     mstart, rt0_go): the walk ends there.
 */
#ifndef PROBE_GOPCLNTAB_H
#define PROBE_GOPCLNTAB_H

#include <stddef.h>
#include <stdint.h>

struct gopcln {
	const uint8_t *p, *end;         /* the table, in the image */
	unsigned version;               /* 118 (1.18/1.19) or 120 */
	uint8_t quantum;
	uint64_t nfunc, text;           /* the functions' count, textStart */
	const uint8_t *names, *pctab, *functab;
	const uint8_t *cutab, *filetab; /* NULL: positions not known */
	const uint8_t *img;             /* the whole file */
	size_t size;
	uint64_t addr;                  /* .gopclntab's file address */
	uint64_t gofunc;                /* moduledata.gofunc (0: not found) */
	int gofunc_tried;
};

struct gopcln_frame {
	const char *name;               /* into the image */
	const char *file;               /* NULL: not known */
	unsigned line;                  /* 0: not known */
	int inlined;
};

struct gofunc {
	uint64_t entry, end;            /* [entry, end): its code, file addresses */
	const char *name;
	uint32_t pcsp;
	const uint8_t *raw;             /* its _func record */
};

int gopcln_open(struct gopcln *g, const uint8_t *img, size_t size);
/* Function i (0 .. nfunc - 1), for a symbol table: 0, or -1. */
int gopcln_at(const struct gopcln *g, uint64_t i, struct gofunc *f);
int gopcln_find(const struct gopcln *g, uint64_t vaddr, struct gofunc *f);
int gopcln_sp(const struct gopcln *g, const struct gofunc *f, uint64_t vaddr, int32_t *sp);
int gopcln_outermost(const struct gofunc *f);
size_t gopcln_frames(struct gopcln *g, uint64_t vaddr, struct gopcln_frame *out, size_t max);

#endif
