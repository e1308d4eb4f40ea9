/*
 * arena.h - the memory a profiled process shares with its collector: how
 * samples leave the process without a thread of probe's in it.
 *
 * Contract:
 *   - libprobe creates one arena per process (a sealed memfd: it can be
 *     neither shrunk nor grown) and sends its descriptor with the HELLO
 *     frame (SCM_RIGHTS).  The collector checks the seals, the size and the
 *     header before it maps it, and keeps the mapping until it has read the
 *     arena for the last time, after the connection ended: what was sampled
 *     up to a SIGKILL, an abort or a crash is still there to read.
 *   - Each profiled thread owns one slot: a header and the room for a byte
 *     ring of up to slot_data bytes (the arena's header: a power of two from
 *     PROBE_RING_MIN to PROBE_RING_LIMIT, PROBE_SLOT_DATA unless probe
 *     record -m said otherwise).  The ring in use is the slot's ring bytes
 *     (a power of two, PROBE_RING_MIN <= ring <= slot_data): it starts at
 *     PROBE_RING_MIN and the producer makes it larger when it has filled
 *     past half (to the largest size it can at once), only at a moment when every
 *     byte not yet taken sits where it would sit in the larger ring (see
 *     probe_ring_can_grow), and stores
 *     ring before the head that covers bytes written with it.  The thread
 *     (its signal handler, its exit path) is the only producer: it writes
 *     records and release-stores head.  The collector is the only
 *     consumer: it copies records out, then release-stores tail.  head and
 *     tail only grow; byte i of the stream is at data[i % ring], and a
 *     record may wrap around.  The memfd is sparse: a ring's pages become
 *     memory as it grows, not before.
 *   - Wakeups: when a thread's ring passes half full, its producer sends
 *     one byte (non-blocking; once, until the ring is below half again) on
 *     a datagram socket whose other end came with the HELLO, after the
 *     arena's descriptor: the collector reads the arena then, not only on
 *     its 10 ms poll (perf's wakeup_watermark).
 *   - A record: u16 size (the whole record, size field included), then
 *     uv time_ns (CLOCK_MONOTONIC, as the wire's sample times), uv weight,
 *     uv event (the index of the event sampled: 0 the first, as SAMPLES),
 *     uv nframes (1..PROBE_MAX_FRAMES), nframes x sv delta (as SAMPLES:
 *     frame[i] = frame[i-1] + delta, frame[-1] = 0).  Records of a slot are
 *     in time order.  The tid is the slot's.
 *   - Slot life: FREE -> LIVE (libprobe, with tid and name set first) ->
 *     DONE (the thread ended; its final name is set) -> FREE (collector,
 *     after its last read).  libprobe never reuses a slot that is not FREE.
 *   - Counters (lost[], samples) only grow and are written by libprobe;
 *     the collector keeps what it has reported in *_taken, in the arena
 *     too, so that a second connection of the same process (the program
 *     closed the first) does not count anything twice.
 *   - Frame rules (the fast unwinder's cache, preload/cfi.c): the handler
 *     reads rules[] and notes the code addresses it lacks in want[]; the
 *     collector learns those from the object files and writes rules[]
 *     (slot key 0, rule, then key, with release; a reader checks the key
 *     again after reading the rule).  libprobe empties rules[] itself when
 *     code is unloaded (dlclose) and bumps rules_epoch, so that a rule
 *     learned for the old code is not written back.
 *   - The collector trusts nothing it reads here: every record is copied
 *     out and checked before it is decoded; a bad one ends that slot.
 */
#ifndef PROBE_ARENA_H
#define PROBE_ARENA_H

#include <stdint.h>
#include <string.h>

#include "probe/wire.h"

#define PROBE_ARENA_MAGIC 0x33414e4552414250ull     /* "PBARENA3" */
#define PROBE_ARENA_SLOTS 4096u
#define PROBE_SLOT_DATA (256u * 1024)               /* a ring's largest, default */
#define PROBE_RING_MIN (32u * 1024)                 /* a ring's first size */
#define PROBE_RING_LIMIT (4u * 1024 * 1024)         /* the most -m may give */
#define PROBE_ARENA_WANT 256u
#define PROBE_RULE_SETS 1024u
#define PROBE_RULE_WAYS 4u
#define PROBE_JIT_RANGES 32u
/* The largest record: size, time, weight, event, count, PROBE_MAX_FRAMES deltas. */
#define PROBE_REC_MAX (2u + 10u + 10u + 1u + 2u + PROBE_MAX_FRAMES * 10u)

/* TAKING: libprobe is filling the slot in (the collector skips it). */
enum { PROBE_SLOT_FREE = 0, PROBE_SLOT_LIVE = 1, PROBE_SLOT_DONE = 2,
       PROBE_SLOT_TAKING = 3 };

struct probe_rule_slot {
	uint64_t key;                   /* code address looked up; 0: empty */
	uint64_t rule;                  /* preload/cfi.c's packing */
};

struct probe_range {
	uint64_t lo, hi;                /* [lo, hi) */
};

struct probe_slot {
	uint32_t state;                 /* PROBE_SLOT_* */
	uint32_t tid;                   /* as the process sees it */
	uint64_t head;                  /* bytes written (producer) */
	uint64_t tail;                  /* bytes taken (consumer) */
	uint64_t samples;               /* samples taken by the thread */
	uint64_t lost[PROBE_LOST_REASON_MAX];
	uint64_t lost_taken[PROBE_LOST_REASON_MAX];
	uint32_t gen;                   /* bumped each time the slot is taken */
	uint32_t ring;                  /* the ring's size now (producer) */
	char name[16];                  /* comm; final name once DONE */
} __attribute__((aligned(64)));

struct probe_arena {
	uint64_t magic;
	uint32_t version;               /* PROBE_WIRE_VERSION */
	uint32_t nslots;                /* PROBE_ARENA_SLOTS */
	uint32_t slot_data;             /* a ring's largest size (see above) */
	uint32_t slots_used;            /* slots [0, used) may be in use */
	uint64_t size;                  /* the whole arena, bytes */
	/* Process-wide losses (threads that could not be profiled...). */
	uint64_t lost[PROBE_LOST_REASON_MAX];
	uint64_t lost_taken[PROBE_LOST_REASON_MAX];
	/* Frame rules: see above. */
	uint64_t rules_epoch;
	uint32_t want_pending;
	uint32_t pad;
	uint64_t want[PROBE_ARENA_WANT];
	/*
	 * Executable memory that no object maps (JIT code), as the collector
	 * found it in /proc/PID/maps when the handler wanted a rule there:
	 * walked by frame pointer (see PROBE_RULE_NONE).  A seqlock: the
	 * collector makes jit_seq odd, writes, makes it even again; the
	 * handler uses what it read only if jit_seq was even and unchanged.
	 */
	uint32_t jit_seq;
	uint32_t njit;                  /* <= PROBE_JIT_RANGES */
	struct probe_range jit[PROBE_JIT_RANGES];
	struct probe_rule_slot rules[PROBE_RULE_SETS][PROBE_RULE_WAYS]
		__attribute__((aligned(64)));
	struct probe_slot slots[PROBE_ARENA_SLOTS];
	/* then PROBE_ARENA_SLOTS x PROBE_SLOT_DATA bytes of rings */
};

#define PROBE_ARENA_RINGS_AT \
	((sizeof(struct probe_arena) + 4095u) & ~(uint64_t)4095u)
/* The arena's size for rings of up to slot_data bytes. */
#define PROBE_ARENA_SIZE_FOR(slot_data) \
	(PROBE_ARENA_RINGS_AT + (uint64_t)PROBE_ARENA_SLOTS * (slot_data))
#define PROBE_ARENA_SIZE PROBE_ARENA_SIZE_FOR(PROBE_SLOT_DATA)

_Static_assert((PROBE_SLOT_DATA & (PROBE_SLOT_DATA - 1)) == 0,
	       "ring size is a power of 2");
_Static_assert((PROBE_RING_MIN & (PROBE_RING_MIN - 1)) == 0 &&
	       PROBE_RING_MIN <= PROBE_SLOT_DATA && PROBE_SLOT_DATA <= PROBE_RING_LIMIT,
	       "ring sizes");
_Static_assert(PROBE_REC_MAX < PROBE_RING_MIN / 2, "a record fits half a ring");
_Static_assert(PROBE_REC_MAX < 65536u, "a record's size fits its u16");

/*
 * A frame rule, for one code address: where the CFA is (rsp, rbp or rbx
 * plus an offset), that the return address is at CFA-8, and whether rbp
 * was saved (at CFA+off) or is unchanged, and rbx the same.  Packed: kind
 * (bits 0-3), rbp saved (bit 4), rbx saved (bit 5), rbx lost (bit 6: its
 * rule is one the walk does not follow), rbx offset in words (7-15,
 * signed), rbp offset (16-31), CFA offset (32-63).  NONE: no FDE covers
 * the address (code without CFI, as JIT code is): the handler walks that
 * frame by its frame pointer, rbp -> {caller's rbp, return address}; LAST:
 * the outermost frame (return address undefined); RBX: the CFA is rbx
 * plus the offset (ld.so's lazy-binding resolver, which realigns its
 * stack); UNSUP: anything else (CFA expressions but the PLT's, signal
 * frames...): libunwind walks it.  A reader that knows no RBX kind or rbx
 * bits stops at RBX as at UNSUP and never needs rbx otherwise.
 */
enum { PROBE_RULE_NONE, PROBE_RULE_RSP, PROBE_RULE_RBP, PROBE_RULE_LAST,
       PROBE_RULE_UNSUP, PROBE_RULE_RBX };

static inline uint64_t probe_rule_pack(unsigned kind, int rbp_saved,
				       int rbp_off, int32_t cfa_off)
{
	return (uint64_t)kind | (uint64_t)(rbp_saved ? 1 : 0) << 4 |
	       (uint64_t)(uint16_t)(int16_t)rbp_off << 16 |
	       (uint64_t)(uint32_t)cfa_off << 32;
}

#define PROBE_RULE_RBX_SAVED 32u
#define PROBE_RULE_RBX_LOST 64u

/* rbx's part: saved at CFA + off (off a multiple of 8, |off| < 2 KiB), or lost. */
static inline uint64_t probe_rule_rbx(uint64_t rule, int saved, int lost, int64_t off)
{
	if (lost || (saved && (off % 8 || off < -2048 || off > 2040)))
		return rule | PROBE_RULE_RBX_LOST;
	if (!saved)
		return rule;
	return rule | PROBE_RULE_RBX_SAVED | (uint64_t)((off / 8) & 511) << 7;
}

/* Where rbx was saved, from the CFA (with PROBE_RULE_RBX_SAVED). */
static inline int64_t probe_rule_rbx_off(uint64_t rule)
{
	int64_t w = (int64_t)((rule >> 7) & 511);

	return (w >= 256 ? w - 512 : w) * 8;
}

/* The set of a code address, and its place in want[]. */
static inline uint64_t probe_rule_hash(uint64_t a)
{
	return (a * 0x9e3779b97f4a7c15ull) >> 40;
}

/* A ring size the reader may use: a power of two in [PROBE_RING_MIN, max]. */
static inline int probe_ring_size_ok(uint64_t size, uint64_t max)
{
	return size >= PROBE_RING_MIN && size <= max && (size & (size - 1)) == 0;
}

/* Slot slot's ring, in an arena of rings of up to slot_data bytes. */
static inline uint8_t *probe_arena_ring(struct probe_arena *a, unsigned slot,
					uint32_t slot_data)
{
	return (uint8_t *)a + PROBE_ARENA_RINGS_AT + (uint64_t)slot * slot_data;
}

/*
 * Whether a ring of size bytes holding the stream's bytes [tail, head) may
 * become to bytes large now (to: a power of two above size): every one of
 * those bytes is at the same place in both (byte i at i % size and at
 * i % to), that is they lie in one size-aligned block of the stream whose
 * index is a multiple of to / size.  An empty ring always may.
 */
static inline int probe_ring_can_grow(uint64_t size, uint64_t to, uint64_t tail,
				      uint64_t head)
{
	return head == tail ||
	       (!(tail & (to - size)) &&
		(tail & ~(size - 1)) == ((head - 1) & ~(size - 1)));
}

/* Copy n bytes in or out of a ring of size bytes at stream offset off (may wrap). */
static inline void probe_ring_put(uint8_t *ring, uint32_t size, uint64_t off,
				  const void *src, size_t n)
{
	size_t at = (size_t)(off & (size - 1)), first = size - at;

	if (first >= n) {
		memcpy(ring + at, src, n);
	} else {
		memcpy(ring + at, src, first);
		memcpy(ring, (const uint8_t *)src + first, n - first);
	}
}

static inline void probe_ring_get(const uint8_t *ring, uint32_t size, uint64_t off,
				  void *dst, size_t n)
{
	size_t at = (size_t)(off & (size - 1)), first = size - at;

	if (first >= n) {
		memcpy(dst, ring + at, n);
	} else {
		memcpy(dst, ring + at, first);
		memcpy((uint8_t *)dst + first, ring, n - first);
	}
}

#endif /* PROBE_ARENA_H */
