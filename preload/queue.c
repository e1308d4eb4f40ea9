/*
 * queue.c - the per-thread sample queue between a thread's signal handler
 * (the single producer) and the sender (the single consumer).
 *
 * A ring of 64-bit words indexed by free-running counters: head (producer)
 * and tail (consumer) only grow, and word i lives at words[i % size].  A
 * record may wrap around the end; that costs nothing with word indexing and
 * avoids padding records.  The producer publishes a record with a release
 * store of head; the consumer frees space with a release store of tail.
 *
 * The memory is allocated and touched by the thread's creator, so the
 * handler never allocates and never takes a page fault on a fresh page.
 */
#include <stdlib.h>
#include <string.h>

#include "probe.h"

#define MASK (PROBE_QUEUE_WORDS - 1)

_Static_assert((PROBE_QUEUE_WORDS & MASK) == 0, "queue size is a power of 2");

int probe_queue_init(struct probe_queue *q)
{
	q->head = q->tail = 0;
	q->words = malloc(PROBE_QUEUE_WORDS * sizeof q->words[0]);
	if (!q->words)
		return -1;
	memset(q->words, 0, PROBE_QUEUE_WORDS * sizeof q->words[0]);
	return 0;
}

void probe_queue_free(struct probe_queue *q)
{
	free(q->words);
	q->words = NULL;
}

/* SIGNAL CONTEXT: no calls, no allocation. */
int probe_queue_push(struct probe_queue *q, uint32_t tid, uint64_t time,
		     uint64_t period, const uint64_t *frames, uint32_t n)
{
	uint64_t head = q->head;   /* ours: no ordering needed */
	uint64_t tail = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE);
	uint64_t need = PROBE_QUEUE_REC_WORDS + n;

	if (n == 0 || n > PROBE_MAX_FRAMES ||
	    PROBE_QUEUE_WORDS - (head - tail) < need)
		return -1;
	q->words[head & MASK] = (uint64_t)tid << 32 | n;
	q->words[(head + 1) & MASK] = time;
	q->words[(head + 2) & MASK] = period;
	for (uint32_t i = 0; i < n; i++)
		q->words[(head + 3 + i) & MASK] = frames[i];
	__atomic_store_n(&q->head, head + need, __ATOMIC_RELEASE);
	return 0;
}

uint64_t probe_queue_snapshot(struct probe_queue *q)
{
	return __atomic_load_n(&q->head, __ATOMIC_ACQUIRE);
}

int probe_queue_read(struct probe_queue *q, uint64_t *pos, uint64_t end,
		     struct probe_qrec *r)
{
	uint64_t w0;

	if (*pos >= end)
		return 0;
	w0 = q->words[*pos & MASK];
	r->tid = (uint32_t)(w0 >> 32);
	r->nframes = (uint32_t)w0;
	r->time = q->words[(*pos + 1) & MASK];
	r->period = q->words[(*pos + 2) & MASK];
	r->pos = *pos + PROBE_QUEUE_REC_WORDS;
	/* The producer never writes a bad count; stay in bounds regardless. */
	if (r->nframes == 0 || r->nframes > PROBE_MAX_FRAMES ||
	    end - *pos < PROBE_QUEUE_REC_WORDS + r->nframes) {
		*pos = end;
		return 0;
	}
	*pos = r->pos + r->nframes;
	return 1;
}

void probe_queue_release(struct probe_queue *q, uint64_t pos)
{
	__atomic_store_n(&q->tail, pos, __ATOMIC_RELEASE);
}
