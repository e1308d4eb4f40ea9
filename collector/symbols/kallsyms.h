/*
 * kallsyms.h - kernel addresses to names, from /proc/kallsyms.
 *
 * Contract:
 *   - kallsyms_load() reads the text symbols (t, T, w, W) of a kallsyms
 *     file once; NULL when it cannot be read or shows no addresses (all
 *     zeros: kernel.kptr_restrict, or not root).
 *   - kallsyms_lookup() names the function containing addr (the last symbol
 *     at or below it, up to the next one), and its module: NULL for the
 *     kernel itself (perf's "[kernel.kallsyms]"), else the module's name as
 *     kallsyms gives it ("xfs").  NULL when no symbol covers addr.
 *   - The names are of the running kernel: a recording made before a reboot
 *     (KASLR moves the kernel) or on another machine is named wrongly, as
 *     perf's would be without its build-id cache.
 */
#ifndef PROBE_KALLSYMS_H
#define PROBE_KALLSYMS_H

#include <stdint.h>

struct kallsyms;

struct kallsyms *kallsyms_load(const char *path);
const char *kallsyms_lookup(const struct kallsyms *k, uint64_t addr,
			    const char **module);
/* The same, and the function's bounds: its symbol up to the next one. */
const char *kallsyms_lookup_range(const struct kallsyms *k, uint64_t addr,
				  const char **module, uint64_t *start, uint64_t *end);
void kallsyms_free(struct kallsyms *k);

#endif
