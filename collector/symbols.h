/*
 * symbols.h - function names from ELF files on disk (libelf), and C++
 * demangling.
 *
 * Contract:
 *   - symcache_get() loads an object once per (path, build-id): a sorted table
 *     of function symbols (STT_FUNC / STT_GNU_IFUNC with nonzero size) from
 *     .symtab (static functions too), else from a separate debug file found by
 *     build-id or .gnu_debuglink under /usr/lib/debug, else from .dynsym.  At
 *     one address GLOBAL beats WEAK beats LOCAL, then the most public-looking
 *     alias wins; version suffixes ("@@GLIBC_2.34") are dropped.  "[vdso]"
 *     is read from the collector's own vDSO when its build-id matches.
 *   - If the file cannot be read, or its build-id differs from the recorded
 *     one, the object has no names and one warning says so (once per object).
 *     Only regular files are opened (a recording may name any path).
 *   - symobj_lookup() takes a file-relative address (runtime - bias, i.e. the
 *     ELF vaddr) and returns the innermost function containing it, or NULL.
 *   - probe_demangle() returns a malloc'd demangled C++ name, or NULL when the
 *     name is not mangled or no demangler is available (it uses libstdc++'s
 *     __cxa_demangle, loaded with dlopen so the collector does not link C++).
 */
#ifndef PROBE_SYMBOLS_H
#define PROBE_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct symcache;
struct symobj;

struct symcache *symcache_new(void);
void symcache_free(struct symcache *c);
/* Never NULL; an object with no names when nothing could be read. */
struct symobj *symcache_get(struct symcache *c, const char *path,
			    const uint8_t *build_id, size_t build_id_len);
const char *symobj_lookup(const struct symobj *o, uint64_t vaddr);
/* Number of function symbols loaded (0: no names). */
size_t symobj_count(const struct symobj *o);

char *probe_demangle(const char *name);

#endif
