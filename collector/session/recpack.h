/*
 * recpack.h - frames packed for a recording (file version 3): each
 * distinct stack written once, and what is written compressed.
 *
 * Contract:
 *   - recpack_frame() takes one valid frame, as it arrived, in stream
 *     order; recpack_samples() a SAMPLES frame, decoded (its samples not
 *     walked yet: it walks a copy), which becomes STACK frames for the
 *     stacks not written before and STACKED frames naming them
 *     (include/probe/wire.h), every sample's thread, time, weight and
 *     event kept; a free's record (--alloc) keeps its frames inline.
 *     Frames gather in a block of up to PROBE_ZSTD_RAW_MAX bytes,
 *     written as one ZSTD frame when full or flushed, or as the frames
 *     themselves when compressing does not make it smaller.  emit() gets
 *     each frame to write (the caller adds its CRC).
 *   - recpack_flush() writes out the block now (probe record does when a
 *     process waits for its samples to be safe): what was handed in is
 *     then all emitted.
 *   - Memory is bounded: the stacks written (their bytes, and their ids)
 *     are remembered up to RECPACK_STACK_BYTES and PROBE_STACK_IDS, and
 *     for RECPACK_REFRESH bytes of samples at least; then the table starts again, a
 *     new epoch, ids from 0 (wire.h), so a recording of ever new stacks
 *     costs a STACK frame per stack, as before, and no more memory.
 */
#ifndef PROBE_RECPACK_H
#define PROBE_RECPACK_H

#include <stddef.h>
#include <stdint.h>

#define RECPACK_STACK_BYTES (64u << 20)
/*
 * A block is written once it holds RECPACK_BLOCK bytes (or is flushed),
 * compressed when it holds RECPACK_ZMIN at least.  Damage to a compressed
 * block loses all of it, so blocks are kept small: 64 KiB of frames is
 * about 6,000 samples, where a flipped bit used to cost one batch.
 */
#define RECPACK_BLOCK (16u << 10)
/*
 * The table of stacks written starts again (a new epoch, wire.h) once
 * this many bytes of samples (STACKED frames) were written with it, and
 * sixteen times the bytes of its stacks (so that writing them again
 * costs a sixteenth at most; eight times made 20 million samples of
 * 20,000 stacks 0.3 s slower to read): a STACK lost with a damaged block
 * costs the samples of its stack until then, not to the end of the
 * recording.
 */
#define RECPACK_REFRESH (1u << 20)
#define RECPACK_ZMIN (4u << 10)
#define RECPACK_ZSTD_LEVEL 3

struct recpack;

typedef void (*recpack_emit)(void *arg, const uint8_t *frame, size_t n);

struct recpack *recpack_new(recpack_emit emit, void *arg);
struct probe_msg;

void recpack_frame(struct recpack *p, const uint8_t *frame, size_t n);
void recpack_samples(struct recpack *p, const struct probe_msg *m);
void recpack_flush(struct recpack *p);
/* zstd's level (1 to RECPACK_LEVEL_MAX; default RECPACK_ZSTD_LEVEL), or 0:
   no compression (stacks are still written once). */
#define RECPACK_LEVEL_MAX 19
void recpack_level(struct recpack *p, int level);
void recpack_free(struct recpack *p);

#endif
