/*
 * symrec.h - the names a recording carries, so that it stands on its own:
 * SYMTAB frames (include/probe/wire.h), keyed by build-id.
 *
 * Contract:
 *   - symrec_write() finds every address a's samples hold (a finished
 *     aggregate of the recording being written), the object each lies in
 *     (with a build-id; not JIT code, not the kernel's), and what c says
 *     of it from the files on disk: the function containing it (its
 *     symbol's start, size and name as the binary spells it; or, in
 *     stripped code, its .eh_frame bounds), and where DWARF or .gopclntab
 *     knows, its inline frames and source lines (resolve.h's lookups, the
 *     same answers; inline frames and lines only where the object
 *     carries its own DWARF: a separate debug file is found by build-id
 *     wherever its package is installed, and reading it is what cost).
 *     Each object's names go to emit() as SYMTAB frames
 *     (several when they pass a frame's size); objects c has no names for
 *     are left out.  Returns the objects named.
 *   - symcache_add_recorded() lets c name, from a's SYMTAB frames, an
 *     object whose file is gone or changed (symbols.h says when); a stays
 *     the caller's and must outlive c's use of it, or be taken back with
 *     symcache_drop_recorded() (resolver_new and resolver_free do both).
 *     An object so named answers symobj_lookup, symobj_func_start and
 *     symobj_srcframes as the files did when it was recorded, for the
 *     addresses that were sampled.
 */
#ifndef PROBE_SYMREC_H
#define PROBE_SYMREC_H

#include <stddef.h>
#include <stdint.h>

#include "data/aggregate.h"
#include "symbols/symbols.h"

typedef void (*symrec_emit)(void *arg, const uint8_t *frame, size_t n);

size_t symrec_write(const struct agg *a, struct symcache *c, uint32_t pid,
		    symrec_emit emit, void *arg);
void symcache_add_recorded(struct symcache *c, const struct agg *a);
void symcache_drop_recorded(struct symcache *c, const struct agg *a);

#endif
