/*
 * symbols.h - function names from ELF files on disk (libelf), inline frames
 * and source lines from DWARF (libdw), and demangling.
 *
 * Contract:
 *   - symcache_get() loads an object once per (path, build-id): a sorted table
 *     of function symbols (STT_FUNC / STT_GNU_IFUNC; one without a size ends
 *     where the next begins, within its section) from .symtab (static
 *     functions too), else from a separate debug file found by build-id
 *     (ROOT/.build-id/xx/rest.debug) or .gnu_debuglink (next to the file, in
 *     its .debug/, under ROOT/DIR), else from .dynsym plus the MiniDebugInfo
 *     (.gnu_debugdata: an xz-compressed ELF whose .symtab holds what .dynsym
 *     lacks, as Fedora and others ship; liblzma is loaded when first needed).
 *     ROOT is /usr/lib/debug, or $PROBE_DEBUG_ROOT (tests).  PLT stubs are
 *     named "func@plt" (x86-64), as perf names them.  At one address the name
 *     perf would choose wins (sized, not weak, global, fewer leading
 *     underscores, longer, first read); version suffixes ("@@GLIBC_2.34")
 *     are dropped.  "[vdso]" is read from the collector's own vDSO when its
 *     build-id matches.
 *   - If the file cannot be read, or its build-id differs from the recorded
 *     one, a file with the recorded build-id is looked for instead: the debug
 *     file ROOT/.build-id/xx/rest.debug, or a copy in perf's build-id cache
 *     (~/.debug/.build-id/xx/rest/elf or debug).  If there is none the object
 *     has no names.  One warning says which (once per object).  Only regular
 *     files are opened (a recording may name any path).  Where no file
 *     with the recorded build-id is found, the names the recording carries
 *     (symrec.h, given with symcache_add_recorded) are taken for such an
 *     object: its sampled functions, their inline frames and lines; one
 *     line says so.
 *   - symobj_lookup() takes a file-relative address (runtime - bias, i.e. the
 *     ELF vaddr) and returns the innermost function containing it, or NULL.
 *   - The function ranges of .eh_frame are read too (symobj_func_start), from
 *     the same file as the names (a debug file's .eh_frame is empty), at
 *     most 256 MiB of it (more: one warning, not read); in a file with no
 *     section headers (sstrip), through PT_GNU_EH_FRAME.
 *   - symobj_srcframes() asks DWARF (the file's own, else its separate debug
 *     file's; opened on first use) about vaddr: the functions inlined there,
 *     innermost first, each with the source position inside it, then the
 *     containing function (name from DWARF, may be NULL: callers name it from
 *     the symbol table) with its position.  Names may be mangled.  Returns
 *     the count (at least 1), or 0 when DWARF does not cover vaddr.  Strings
 *     live as long as the cache.
 */
#ifndef PROBE_SYMBOLS_H
#define PROBE_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct symcache;
struct symobj;

/* Where an object's names came from (symobj_sources), for tests and notes. */
#define SYMSRC_SYMTAB    0x01u  /* the file's .symtab */
#define SYMSRC_DEBUGFILE 0x02u  /* a separate debug file's .symtab */
#define SYMSRC_DYNSYM    0x04u  /* .dynsym */
#define SYMSRC_MINIDEBUG 0x08u  /* .gnu_debugdata */
#define SYMSRC_DWARF     0x10u  /* DWARF available (inline frames, lines) */
#define SYMSRC_MISMATCH  0x20u  /* the file is gone or changed: no names */
#define SYMSRC_BYBUILDID 0x40u  /* ... but another file with its build-id named it */
#define SYMSRC_EHFRAME   0x80u  /* .eh_frame's function ranges (symobj_func_start) */
#define SYMSRC_GOPCLN    0x100u /* a Go binary's .gopclntab (stripped of .symtab) */
#define SYMSRC_RECORDED  0x200u /* the file is gone or changed: named from the recording */

struct src_frame {
	const char *name;       /* function (maybe mangled), or NULL */
	const char *file;       /* source file as DWARF names it, joined to its
				   compile unit's directory where relative (as
				   addr2line shows it), or NULL */
	unsigned line;          /* 0: unknown */
	int inlined;            /* 1: an inlined instance */
};

struct symcache *symcache_new(void);
void symcache_free(struct symcache *c);
/*
 * The running kernel's names (kallsyms.h; PROBE_KALLSYMS: another copy),
 * read once per cache, at the first call; NULL when kallsyms shows none.
 * Every resolver of the cache shares them (probe agent makes one per
 * profile: reading /proc/kallsyms each time was most of its CPU).
 */
struct kallsyms;
const struct kallsyms *symcache_kallsyms(struct symcache *c);
/* Never NULL; an object with no names when nothing could be read. */
struct symobj *symcache_get(struct symcache *c, const char *path,
			    const uint8_t *build_id, size_t build_id_len);
const char *symobj_lookup(const struct symobj *o, uint64_t vaddr);
/* Number of function symbols loaded (0: no names). */
/*
 * For an address no symbol names: the start (ELF address) of the function
 * containing it as the file's .eh_frame records it (one FDE per function,
 * which stripping keeps: ehframe.h); 1, or 0 when no FDE covers vaddr.
 */
int symobj_func_start(const struct symobj *o, uint64_t vaddr, uint64_t *start);
/* The same with where the function ends; and symobj_lookup() with the
   named symbol's [start, end). */
int symobj_func_range(const struct symobj *o, uint64_t vaddr, uint64_t *start,
		      uint64_t *end);
const char *symobj_lookup_range(const struct symobj *o, uint64_t vaddr, uint64_t *start,
				uint64_t *end);
size_t symobj_count(const struct symobj *o);
unsigned symobj_sources(const struct symobj *o);
size_t symobj_srcframes(struct symobj *o, uint64_t vaddr, struct src_frame *out, size_t max);


#endif
