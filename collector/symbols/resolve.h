/*
 * resolve.h - sampled addresses to locations (function, module) and source
 * lines, for the report formats.
 *
 * Contract:
 *   - resolve_addr() maps an address of one process image, as mapped in one
 *     generation of its address space (aggregate.h), to frames: the image's
 *     MAP containing it gives the object and the file-relative address
 *     (addr - bias); symbols.h names the function.  Where DWARF has inline
 *     information (and opts.inline_frames), the functions inlined at that
 *     address come first, innermost first, named "NAME [inlined]", then the
 *     containing function.  An address no symbol covers is "module+0xSTART"
 *     when the object's .eh_frame has an FDE covering it (START: the FDE's
 *     first address, the function's start, so every address of one stripped
 *     function is one location), else "module+0xOFFSET" (module = basename
 *     of the object, START and OFFSET ELF addresses, what addr2line -e
 *     takes), one in no map "[unknown]+0xADDR", and one in the kernel's
 *     half of the address space (the kernel's frames of a sample taken in
 *     kernel mode) is named from /proc/kallsyms (kallsyms.h) in module
 *     "[kernel.kallsyms]" or "[MODULE]", as perf names them, and is
 *     "[kernel]", one location, where kallsyms shows no addresses.
 *     No frame is ever dropped here (resolve_stack() leaves libprobe's out,
 *     below).  Each frame carries its source line ("file.c:12",
 *     basename) where DWARF has one, else NULL.
 *   - Return addresses (every frame but the leaf) are looked up at addr - 1,
 *     which lies inside the call instruction, so a call at the very end of a
 *     function is not credited to the next one, and their line is the call's.
 *   - Names are demangled (C++, Rust) unless opts.demangle is 0; with
 *     opts.short_names, without their parameter lists (demangle.h).
 *   - For formats that keep names and positions apart (pprof): each
 *     location also has its function's name without " [inlined]" (fn) and
 *     as the binary spells it (raw: mangled); resolve_addr_src() gives each
 *     frame's source file as DWARF names it (a full path where it has one)
 *     and its line, separately.
 *   - Each distinct (image, generation, address) is resolved once and
 *     cached; locations are interned by (function, object path), so one
 *     function reached from many addresses, images or processes is one
 *     location.
 *   - Strings (sym, dso, dso_path, lines, source files, and anything passed
 *     to resolver_intern) are interned: equal strings are equal pointers.  They
 *     are printable.
 */
#ifndef PROBE_RESOLVE_H
#define PROBE_RESOLVE_H

#include <stddef.h>
#include <stdint.h>

#include "data/aggregate.h"
#include "symbols/symbols.h"

/* The profiler's own library, recognised by its mapping's basename. */
#define PROBE_LIB_BASENAME "libprobe.so"

/* Where the kernel's half of the address space starts (x86-64, 48 or 57 bits). */
#define RESOLVE_KERNEL_START 0xff00000000000000ull

/* Frames one stack can expand to with its inline frames. */
#define RESOLVE_MAX_FRAMES (4 * PROBE_MAX_FRAMES)
/* Inline frames one address can add. */
#define RESOLVE_MAX_INLINE 15

struct resolve_opts {
	int demangle;           /* 1: demangle C++ and Rust names */
	int inline_frames;      /* 1: expand inline frames from DWARF */
	int short_names;        /* 1 (with demangle): C++ names without their
				   parameter lists, as perf shows them
				   (demangle.h); overloads are then one
				   location, as they are one name */
};

struct loc {
	const char *sym;        /* function name or module+0xOFFSET */
	const char *dso;        /* module basename, or "[unknown]" */
	const char *dso_path;   /* object path as recorded (printable) */
	int named;              /* 1 when a symbol named it */
	int inlined;            /* 1 for an inlined instance */
	int kernel;             /* 1 for a kernel address (named or not) */
	int offcpu;             /* 1 for --off-cpu's "[off-cpu]", "[stack unknown]" */
	int truncated;          /* 1 for "[truncated]": a stack cut at the wire's depth */
	const char *fn;         /* sym without " [inlined]" */
	const char *raw;        /* the name in the binary (mangled), else fn */
};

/*
 * Is frame i of a stack a return address (looked up at the byte before)?
 * All but the first are, but for the frame under --off-cpu's
 * "[off-cpu]" leaf, which is a function's entry (aggregate.h).
 */
static inline int resolve_is_return(const uint64_t *frames, uint32_t i)
{
	return i > 1 || (i == 1 && frames[0] != AGG_FRAME_OFFCPU);
}

struct rframe {
	uint32_t loc;
	const char *line;       /* "file.c:12", or NULL */
};

/* A frame's source position, file and line apart (pprof, speedscope). */
struct rsrc {
	const char *file;       /* symbols.h's src_frame file (printable), or NULL */
	unsigned line;          /* 0: unknown */
};

struct resolver;

struct resolver *resolver_new(const struct agg *a, struct symcache *c,
			      const struct resolve_opts *o);
void resolver_free(struct resolver *r);
/*
 * The frames of one address, innermost first (at least one); *out points
 * into the resolver's memory, valid until the next resolve call.
 */
uint32_t resolve_addr(struct resolver *r, uint32_t image, uint32_t gen, uint64_t addr,
		      int is_return, const struct rframe **out);
/* The same, and *src[i] the source position of (*out)[i], as long lived. */
uint32_t resolve_addr_src(struct resolver *r, uint32_t image, uint32_t gen, uint64_t addr,
			  int is_return, const struct rframe **out, const struct rsrc **src);
/*
 * The frames of one count's stack, leaf first (as recorded), inline frames
 * expanded; out must hold RESOLVE_MAX_FRAMES (inline frames are left out
 * where a stack would not fit, never an address).  Returns the frame count.
 */
uint32_t resolve_stack(struct resolver *r, const struct agg_count *k, struct rframe *out);
/* The same, and src[i] the source position of out[i] (src: RESOLVE_MAX_FRAMES too). */
uint32_t resolve_stack_src(struct resolver *r, const struct agg_count *k, struct rframe *out,
			   struct rsrc *src);
/*
 * libprobe's own frames: an address in a mapping whose basename is
 * libprobe.so or libprobe-*.so (its handler, its wrappers of
 * pthread_create, dlopen, malloc...) is
 * "hidden".  resolve_stack() leaves hidden addresses out, so a sample taken
 * in libprobe counts for the function that called into it (the next frame,
 * a return address: its call's line); a stack with nothing else is one
 * frame, "[probe]" (module "[probe]"), resolve_probe_loc().  Formats that
 * walk addresses themselves skip those resolve_hidden() names, and use
 * that location for a stack left empty.  resolve_addr() still resolves
 * them (the contract above).
 */
int resolve_hidden(struct resolver *r, uint32_t image, uint32_t gen, uint64_t addr,
		   int is_return);
uint32_t resolve_probe_loc(struct resolver *r);
/*
 * For formats that print what the others leave out (speedscope's source
 * files, perf script's addresses and SYMBOL+0xOFF): where one address
 * lies.  struct rsrc's file/line are per frame of resolve_addr()'s answer
 * (same order and count); vaddr and symoff belong to the address.
 */
struct rwhere {
	uint64_t vaddr;         /* the address looked up (a return address less
				   1: inside its call, as perf's DWARF call
				   graphs show it) - bias, the ELF address
				   addr2line -e takes; itself in no map */
	uint64_t symoff;        /* vaddr - start of the symbol naming the
				   containing function, when has_symoff */
	int has_symoff;         /* 0: no symbol-table entry names it (a DWARF
				   name, module+0xOFFSET, [kernel]) */
};
/*
 * resolve_addr() and, for each of its frames, the source file and line
 * (*src, n entries), and where the address lies (*where; NULL: not
 * needed).  The symbol's start is found on first use and cached with the
 * address, so formats that do not ask never pay for it.
 */
uint32_t resolve_addr_where(struct resolver *r, uint32_t image, uint32_t gen, uint64_t addr,
			    int is_return, const struct rframe **out,
			    const struct rsrc **src, struct rwhere *where);
const struct loc *resolver_loc(const struct resolver *r, uint32_t id);
size_t resolver_nlocs(const struct resolver *r);
const char *resolver_intern(struct resolver *r, const char *s);
/* The same of s made printable (util.h: printable_dup). */
const char *resolver_intern_printable(struct resolver *r, const char *s);
/* A function's name as the resolver shows names: demangled (as its opts say), printable, interned. */
const char *resolver_func_name(struct resolver *r, const char *raw);
/* The symbol cache it names from (probe annotate reads code through it). */
struct symcache *resolver_symcache(const struct resolver *r);

#endif
