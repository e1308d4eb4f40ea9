/*
 * resolve.h - sampled addresses to locations (function, module), for the
 * report formats.
 *
 * Contract:
 *   - resolve_frame() maps an address of one process image to a location id:
 *     the image's MAP containing it gives the object and the file-relative
 *     address (addr - bias); symbols.h names the function (demangled).  An
 *     address no symbol covers is "module+0xOFFSET" (module = basename of the
 *     object), one in no map "[unknown]+0xADDR": no frame is ever dropped.
 *   - Return addresses (every frame but the leaf) are looked up at addr - 1,
 *     which lies inside the call instruction, so a call at the very end of a
 *     function is not credited to the next one; they are displayed as is.
 *   - Each distinct (image, address) is resolved once and cached; locations
 *     are interned by (function, object path), so one function reached from
 *     many addresses, images or processes is one location.
 *   - Strings (sym, dso, dso_path, and anything passed to resolver_intern)
 *     are interned: equal strings are equal pointers.  They are printable.
 */
#ifndef PROBE_RESOLVE_H
#define PROBE_RESOLVE_H

#include <stddef.h>
#include <stdint.h>

#include "aggregate.h"
#include "symbols.h"

struct loc {
	const char *sym;        /* function name or module+0xOFFSET */
	const char *dso;        /* module basename, or "[unknown]" */
	const char *dso_path;   /* object path as recorded (printable) */
	int named;              /* 1 when a symbol named it */
};

struct resolver;

struct resolver *resolver_new(const struct agg *a, struct symcache *c);
void resolver_free(struct resolver *r);
uint32_t resolve_frame(struct resolver *r, uint32_t image, uint64_t addr, int is_return);
/*
 * Location ids of one interned stack of an image, leaf first (as recorded);
 * out must hold PROBE_MAX_FRAMES.  Returns the frame count.
 */
uint32_t resolve_stack(struct resolver *r, uint32_t image, uint32_t stack, uint32_t *out);
const struct loc *resolver_loc(const struct resolver *r, uint32_t id);
size_t resolver_nlocs(const struct resolver *r);
const char *resolver_intern(struct resolver *r, const char *s);

#endif
