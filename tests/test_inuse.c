/*
 * test_inuse - what stays in use of the sampled allocations
 * (collector/data/inuse.c; tests/08-inuse.t): the two words after an
 * allocation's stack taken off, a free before its allocation, forged ids,
 * the bound on early frees, the peak.
 */
#include <stdint.h>
#include <string.h>

#include "data/inuse.h"
#include "probe/wire.h"
#include "tap.h"

static uint8_t buf[256];

/* A sample whose frames are f[0..n) (the wire's deltas), weight w. */
static struct probe_sample_raw sample(const uint64_t *f, uint32_t n, uint64_t w)
{
	struct probe_wbuf wb;
	uint64_t prev = 0;

	probe_wbuf_init(&wb, buf, sizeof buf);
	for (uint32_t i = 0; i < n; i++) {
		probe_put_sv(&wb, (int64_t)(f[i] - prev));
		prev = f[i];
	}
	return (struct probe_sample_raw){ .tid = 1, .event = 1, .nframes = n, .weight = w,
					  .frames = buf, .frames_len = wb.len };
}

static void test_split(void)
{
	uint64_t id = 0, out[8];
	uint64_t a[] = { 0x401000, 0x7f0000123456, PROBE_FRAME_ALLOC_ID, 42 };
	struct probe_sample_raw s = sample(a, 4, 64);

	ok(inuse_split(&s, &id) == INUSE_ALLOC && id == 42 && s.nframes == 2,
	   "an allocation: its id (42) taken off, two frames left");
	ok(probe_sample_frames(&s, out) == 2 && out[0] == 0x401000 && out[1] == 0x7f0000123456,
	   "its stack is the two frames it had");
	uint64_t f[] = { PROBE_FRAME_FREED, 42 };
	s = sample(f, 2, 0);
	ok(inuse_split(&s, &id) == INUSE_FREED && id == 42, "a free: its id");
	uint64_t plain[] = { 0x401000, 0x402000 };
	s = sample(plain, 2, 1);
	ok(inuse_split(&s, &id) == INUSE_NONE && s.nframes == 2, "a plain sample: left as it is");
	uint64_t bare[] = { PROBE_FRAME_ALLOC_ID, 5 };
	s = sample(bare, 2, 1);
	ok(inuse_split(&s, &id) == INUSE_NONE, "an allocation without a stack (forged): none");
	uint64_t mixed[] = { 0x401000, PROBE_FRAME_FREED, 7 };
	s = sample(mixed, 3, 1);
	ok(inuse_split(&s, &id) == INUSE_NONE, "a free with a stack (forged): none");
}

static void add_up(void *row, uint64_t weight, void *arg)
{
	uint64_t *sum = arg;

	(void)row;
	sum[0]++;
	sum[1] += weight;
}

static void test_follow(void)
{
	struct inuse *u = inuse_new();
	int row_a, row_b;
	void *row = NULL;
	uint64_t w = 0;
	double objs = 0;

	ok(inuse_alloc(u, 0, 1, &row_a, 100, 1.0, 10, 0, NULL) == 1, "allocation 1 (100 bytes) in use");
	ok(inuse_alloc(u, 0, 2, &row_b, 50, 2.0, 20, 0, NULL) == 1, "allocation 2 (50 bytes) in use");
	ok(inuse_freed(u, 0, 1, &row, &w, &objs, 1, 0, NULL) == 1 && row == &row_a && w == 100 &&
	   objs == 1.0, "free 1: its row, weight and objects");
	uint64_t tag = 0, when = 0;
	ok(inuse_alloc(u, 0, 4, &row_a, 1, 1.0, 25, 41, NULL) == 1 &&
	   inuse_freed(u, 0, 4, &row, &w, &objs, 1, 26, &tag) == 1 && tag == 41,
	   "an allocation's tag comes back with its free (%llu)", (unsigned long long)tag);
	ok(inuse_freed(u, 0, 5, &row, &w, &objs, 1, 27, NULL) == 0 &&
	   inuse_alloc(u, 0, 5, &row_a, 1, 1.0, 28, 42, &when) == 0 && when == 27,
	   "an early free's time comes with its allocation (%llu)", (unsigned long long)when);
	ok(inuse_alloc(u, 0, 3, &row_a, 20, 1.0, 30, 0, NULL) == 1, "allocation 3 (20 bytes)");
	const struct inuse_totals *t = inuse_totals(u);
	ok(t->bytes == 70 && t->objects == 2 && t->peak == 150 && t->peak_ns == 20,
	   "in use 70 bytes in 2, the peak 150 at the second allocation (%llu, %llu, %llu at %llu)",
	   (unsigned long long)t->bytes, (unsigned long long)t->objects,
	   (unsigned long long)t->peak, (unsigned long long)t->peak_ns);
	/* A free that comes before its allocation (another thread's ring). */
	ok(inuse_freed(u, 0, 9, &row, &w, &objs, 1, 0, NULL) == 0 && t->freed_first == 1,
	   "free 9 before allocation 9: kept for it");
	ok(inuse_alloc(u, 0, 9, &row_b, 500, 1.0, 40, 0, NULL) == 0 && t->freed_first == 0 &&
	   t->bytes == 70, "allocation 9 then: not in use");
	/* Forged: an id twice, id 0; the same id in another image is another. */
	ok(inuse_alloc(u, 0, 2, &row_b, 5, 1.0, 50, 0, NULL) == -1 && t->untracked == 1,
	   "an id given twice: the first kept, the second not followed");
	ok(inuse_alloc(u, 0, 0, &row_b, 5, 1.0, 50, 0, NULL) == -1 && t->untracked == 2,
	   "id 0: not followed");
	ok(inuse_alloc(u, 1, 2, &row_b, 5, 1.0, 60, 0, NULL) == 1 && t->objects == 3,
	   "id 2 of another image: its own");
	/* No room to keep an early free: forgotten, its allocation in use. */
	ok(inuse_freed(u, 0, 77, &row, &w, &objs, 0, 0, NULL) == 0 && t->freed_first == 0 &&
	   inuse_alloc(u, 0, 77, &row_a, 8, 1.0, 70, 0, NULL) == 1,
	   "an early free with no room: forgotten, its allocation counted in use");
	uint64_t sum[2] = { 0, 0 };
	inuse_each(u, add_up, sum);
	ok(sum[0] == 4 && sum[1] == t->bytes && t->bytes == 83,
	   "inuse_each: the 4 allocations in use, %llu bytes, as the totals",
	   (unsigned long long)sum[1]);
	inuse_free(u);
}

int main(void)
{
	plan(6 + 14);
	test_split();
	test_follow();
	return done();
}
