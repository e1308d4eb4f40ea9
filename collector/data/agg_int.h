/*
 * agg_int.h - inside aggregate.h: the tables of struct agg, and what
 * aggregate.c, agg_bound.c, agg_inuse.c and agg_samples.c call in each
 * other (named aggi_).  Not for other modules: aggregate.h is the
 * interface.
 */
#ifndef PROBE_AGG_INT_H
#define PROBE_AGG_INT_H

#include <stddef.h>
#include <stdint.h>

#include "data/aggregate.h"
#include "data/inuse.h"
#include "hashtab.h"

/*
 * The bound (agg_set_limit): what each thing kept costs, in bytes as
 * malloc gives them (CHUNK: its header and rounding, about), vectors that
 * double counted at twice their use; and what a report will take for it:
 * ADDR_COST for each distinct address of an image (resolve.c's cache
 * entry, its location and name, pprof's Location, Line and Function and
 * their tables: about 1 KiB measured, probe report --format pprof of
 * random deep stacks), SAMPLE_COST and 8 bytes a frame for each count
 * entry (pprof's Sample and its location ids).
 */
#define CHUNK 16u
#define ADDR_COST 1024u
#define SAMPLE_COST 160u
#define NO_IMAGE UINT32_MAX
#define NO_STACK UINT32_MAX

struct pid_ent {                /* pid -> its current image */
	uint32_t pid, image;
	UT_hash_handle hh;
};

struct thread_key {
	uint32_t image, tid;
};
struct thread_ent {             /* (image, tid) -> name */
	struct thread_key key;
	char *name;
	UT_hash_handle hh;
};

struct tidset_ent {             /* (pid, tid) seen, for the thread count */
	uint64_t key;
	UT_hash_handle hh;
};

struct stack_ent {
	UT_hash_handle hh;
	uint32_t id, nframes;
	uint64_t frames[];
};

struct count_key {
	uint32_t image, gen, tid, stack;
};
struct addr_key {               /* a distinct address of an image, for the bound */
	uint64_t addr;
	uint32_t image;         /* + 1: 0 is an empty slot */
	uint32_t gen;
};
struct count_ent {
	struct count_key key;
	uint64_t samples, weight;
	double objects, inuse_objects;  /* --alloc (agg_count) */
	uint64_t inuse_weight;
	uint32_t id;                    /* order of creation */
	UT_hash_handle hh;
};

struct agg {
	struct agg_image *images;
	size_t nimages, images_cap;
	struct pid_ent *pids;
	struct thread_ent *threads;
	struct tidset_ent *tidset;
	struct stack_ent *stacks;       /* hash by frames */
	/*
	 * A stack as it is encoded on the wire (its zig-zag deltas) -> its id,
	 * in an open-addressing table: a sample's stack is found by hashing a
	 * few dozen bytes, and its addresses are decoded only the first time.
	 * Different encodings of one stack (varints that are not minimal)
	 * still get one id through the frames table.  Each slot remembers the
	 * count entry its last sample went to: a stack is mostly sampled in
	 * one thread, so the count is found without another lookup.
	 */
	struct enc_slot *enc;
	size_t enc_mask, enc_used;
	uint8_t *enc_bytes;
	size_t enc_len, enc_cap;
	/*
	 * A recording's STACK ids (file v3) -> the stack and the count its
	 * last sample went to, for the STACK that defined each (its serial):
	 * a sample of a stack met before costs no hashing at all.
	 */
	struct stackref *refs;
	size_t refs_cap;
	/* SYMTAB frames: the names the recording carries (agg_symtab.c) */
	struct probe_msg *symtabs;
	size_t nsymtabs, symtabs_cap;
	struct stack_ent **stack_vec;   /* by id */
	size_t nstacks, stacks_cap;
	struct count_ent *counts;
	struct agg_count *count_vec;    /* built by agg_finish */
	size_t ncounts;
	uint32_t ncreated;              /* count entries made so far */
	int keep;                       /* keep every sample (agg_keep_samples) */
	int finished_samples;           /* their counts are rows, in time order */
	struct agg_sample *samples;     /* .count is a count id until agg_finish */
	size_t nsamples, samples_cap;
	uint64_t map_seq;
	struct agg_totals t;
	struct agg_info info;
	char *event_sel;                /* agg_select_event; NULL: the first */
	int wall;                       /* agg_wall */
	int bytes;                      /* agg_bytes */
	/* --alloc: what stays in use; inuse_shown: the "inuse" event chosen. */
	struct inuse *inuse;
	int inuse_shown;
	char inuse_row;                 /* the row of allocations not shown */
	uint8_t inuse_ev;               /* "inuse"'s number in events[] */
	struct agg_event events[AGG_EVENTS_MAX];
	size_t nevents;
	/* The bound: agg_cost, agg_set_limit; the addresses counted in it. */
	size_t cost, limit;
	struct addr_key *addrs;         /* open addressing, by a seeded hash */
	size_t addrs_mask, naddrs;
	uint64_t seed;
};

struct enc_slot {
	uint64_t off;                   /* of the bytes in enc_bytes */
	struct count_ent *last;
	uint32_t hash, len, stack;      /* len 0: empty slot */
};

/*
 * A STACK id's stack, and the count its last sample went to (c, its key
 * kept here): the next sample of that stack, thread, image and generation
 * is counted here (samples, weight: pending) without touching c, which
 * is mostly not in the cache; the pending counts go to c before c changes
 * (aggi_stackref settles them: aggi_add_sample then sets c and key), and
 * at agg_finish (aggi_stackref_settle_all).
 */
struct stackref {
	uint64_t serial;                /* 0: nothing cached */
	struct count_ent *c;
	struct count_key key;           /* c's */
	uint64_t samples, weight;       /* pending, for c */
	uint32_t stack;
};

/* agg_stackref.c */
/* s's entry (NULL: s names no STACK, or no room); its pending counts settled */
struct stackref *aggi_stackref(struct agg *a, const struct probe_sample_raw *s);
/* s counted on the fast path (1), or not (0: count it with aggi_add_sample) */
int aggi_stackref_count(struct agg *a, uint32_t img, const struct probe_sample_raw *s);
void aggi_stackref_settle_all(struct agg *a);

/* agg_symtab.c */
void aggi_add_symtab(struct agg *a, const struct probe_msg *m);
void aggi_free_symtabs(struct agg *a);

/* aggregate.c */
int aggi_room(struct agg *a, size_t n);
void aggi_note_thread(struct agg *a, uint32_t pid, uint32_t tid);
int aggi_event_shown(struct agg *a, uint32_t img, uint32_t ev, uint64_t weight);
struct enc_slot *aggi_sample_slot(struct agg *a, const struct probe_sample_raw *s);
uint32_t aggi_offcpu_stack(struct agg *a, const struct probe_sample_raw *s);

/* agg_bound.c */
void aggi_count_total(struct agg *a, const struct probe_sample_raw *s);
void aggi_drop_sample(struct agg *a, const struct probe_sample_raw *s);
struct probe_sample_raw *aggi_unbiased(const struct agg_image *im,
	struct probe_sample_raw *s);
struct count_ent *aggi_add_sample(struct agg *a, uint32_t img, uint32_t pid,
	const struct probe_sample_raw *s);

/* agg_inuse.c */
void aggi_add_alloc(struct agg *a, uint32_t img, uint32_t pid, struct probe_sample_raw *s);

/* agg_samples.c */
void aggi_finish_samples(struct agg *a, const uint32_t *row_of_id);

#endif
