/*
 * cfi_learn.h - learning the frame rules libprobe's handler walks stacks
 * with (preload/cfi.c), from the object files, for the arena's table.
 *
 * Contract:
 *   - The handler notes in the arena's want[] the code addresses it has no
 *     rule for.  cfi_learn() takes them, finds each one's object among the
 *     process's MAPs (cfi_maps_add), reads that object's .eh_frame_hdr and
 *     .eh_frame from its file (through /proc/PID/root when the process is
 *     in another mount namespace; the build-id must match when the MAP
 *     has one), runs the CIE's and FDE's CFA programs up to the address,
 *     and publishes the rule (arena.h's protocol).  An address in no MAP
 *     is left for later: its MAP may still be on the way.
 *   - A rule learned while rules_epoch moved (libprobe flushed the table
 *     for a dlclose meanwhile) is not published, or taken back at once.
 *   - Rules learned are remembered per file (by file address, at most
 *     MEM_CAP/2 each) and given to the next process that maps the file
 *     (cfi_seed).
 *   - An object without .eh_frame_hdr (a static executable) is read
 *     through a table of its .eh_frame's FDEs, made once.
 *   - Files are untrusted: every read is bounded by the file's mapping.
 *     Opened files stay mapped in a cache shared by all processes
 *     (CFI_FILES_MAX of them, then the oldest is dropped).
 */
#ifndef PROBE_CFI_LEARN_H
#define PROBE_CFI_LEARN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "probe/arena.h"

struct cfi_map {
	uint64_t start, end, bias;
	uint8_t build_id_len;
	uint8_t build_id[PROBE_BUILD_ID_MAX];
	char *path;
};

struct cfi_maps {
	struct cfi_map *v;
	size_t n, cap;
};

void cfi_maps_add(struct cfi_maps *m, uint64_t start, uint64_t end, uint64_t bias,
		  const uint8_t *build_id, size_t build_id_len, const char *path);
void cfi_maps_clear(struct cfi_maps *m);

struct cfi_learner {
	uint8_t victim[PROBE_RULE_SETS];        /* next way to replace */
};

/* The addresses asked for that lie in no MAP (JIT code: jit.h's to answer). */
struct cfi_unmapped {
	unsigned n;
	uint64_t key[PROBE_ARENA_WANT];
};

/* Learn what a's want[] asks for; pid names the process (for /proc).
 * Returns how many addresses were asked for. */
unsigned cfi_learn(struct probe_arena *a, struct cfi_learner *l,
	       const struct cfi_maps *maps, pid_t pid, struct cfi_unmapped *um);
/* Publish one rule (arena.h's protocol; a full set loses its victim way). */
void cfi_publish(struct probe_arena *a, struct cfi_learner *l, uint64_t key,
		 uint64_t rule);
/* Drop the rules of [lo, hi) (JIT code replaced there), or of one key. */
void cfi_forget(struct probe_arena *a, uint64_t lo, uint64_t hi);
void cfi_forget_key(struct probe_arena *a, uint64_t key);
/*
 * A process mapped m: publish the rules learned for m's file from other
 * processes (or earlier images of this one), so that its first samples
 * walk as far as those did.  Only while the arena's rules_epoch is 0:
 * nothing was ever unloaded, so every MAP received names code that is
 * mapped now (a later dlclose bumps the epoch first, and nothing is
 * published after that).  Returns how many rules.
 */
unsigned cfi_seed(struct probe_arena *a, struct cfi_learner *l, const struct cfi_map *m);
/*
 * The rule at addr in m's object, for a walk done here (a stack copied by
 * the kernel: collector/outside/unwind_copy.c); remembered as cfi_learn's.
 */
uint64_t cfi_rule_at(const struct cfi_map *m, pid_t pid, uint64_t addr);
/* The pure part, for tests: the rule at vaddr from an ELF image in memory. */
uint64_t cfi_rule_in_image(const uint8_t *img, size_t size, uint64_t vaddr);
void cfi_files_free(void);

#endif
