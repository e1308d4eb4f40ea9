/*
 * inuse.h - what stays in use of the sampled allocations (--alloc).
 *
 * Contract:
 *   - inuse_split() takes the two words wire.h puts after an allocation
 *     sample's stack (PROBE_FRAME_ALLOC_ID, id) off the sample, or reads
 *     a free (PROBE_FRAME_FREED, id): INUSE_ALLOC (the sample is then its
 *     stack alone), INUSE_FREED, or INUSE_NONE (neither: left as it is).
 *   - An allocation (image, id) is in use from inuse_alloc() until
 *     inuse_freed() names it, in whichever order the two come (the thread
 *     that frees is not always the one that allocated, and the collector
 *     reads their rings in turn): a free that comes first is kept until
 *     its allocation comes, which is then not in use.
 *   - Each allocation in use keeps the row (the caller's, opaque), the
 *     weight and the objects it was counted with, for the caller to take
 *     off when it is freed.
 *   - Totals: bytes and objects in use now, and the most bytes in use
 *     (the peak) with the time of the sample that reached it.  The
 *     samples come in the order the collector read them, not in time
 *     order across threads: the peak is that of this order.
 *   - Memory: an entry per allocation in use or early free; the caller
 *     bounds them (agg's limit: aggregate.c's INUSE_COST each), and
 *     an allocation it cannot keep is counted in untracked.
 */
#ifndef PROBE_INUSE_H
#define PROBE_INUSE_H

#include <stddef.h>
#include <stdint.h>

#include "data/wire_decode.h"

enum { INUSE_NONE, INUSE_ALLOC, INUSE_FREED };

struct inuse_totals {
	uint64_t bytes, objects;        /* in use now (weights, samples) */
	uint64_t peak, peak_ns;         /* the most bytes, and when */
	uint64_t freed_first;           /* frees waiting for their allocation */
	uint64_t untracked;             /* allocations not followed (id 0, room) */
};

struct inuse;

struct inuse *inuse_new(void);
void inuse_free(struct inuse *u);
int inuse_split(struct probe_sample_raw *s, uint64_t *id);
/*
 * 1: counted as in use (tag kept for its free); 0: its free came first
 * (not in use; *freed_ns, when not NULL, the time that free was given);
 * -1: no room.
 */
int inuse_alloc(struct inuse *u, uint32_t image, uint64_t id, void *row,
		uint64_t weight, double objects, uint64_t time_ns, uint64_t tag,
		uint64_t *freed_ns);
/*
 * 1: *row, *weight, *objects and *tag (when not NULL) are the
 * allocation's, now freed; 0: it is to come (kept for it, with time_ns,
 * when keep, else forgotten: it will count as in use).
 */
int inuse_freed(struct inuse *u, uint32_t image, uint64_t id, void **row,
		uint64_t *weight, double *objects, int keep, uint64_t time_ns,
		uint64_t *tag);
/* Calls fn for each allocation still in use. */
void inuse_each(const struct inuse *u, void (*fn)(void *row, uint64_t weight, void *arg),
		void *arg);
const struct inuse_totals *inuse_totals(const struct inuse *u);

#endif
