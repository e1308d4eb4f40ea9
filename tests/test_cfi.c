/*
 * test_cfi - the collector's frame-rule learner (collector/ingest/cfi_learn.c) on
 * real object files and on hostile ones.
 *
 *   test_cfi ELF FUNC...   (tests/02-cfi.t passes gt_recurse and its
 *                           functions' addresses)
 *
 * Rules for the named functions' entry points must be real rules (the
 * CFA from rsp at entry: offset 8), and the same rules as the arena
 * protocol packs them; then thousands of damaged copies of the file (bytes
 * flipped in .eh_frame_hdr and .eh_frame, cut short anywhere) must be
 * read without a crash or a read out of bounds (make sanitize runs this
 * under ASan) and answer with one of the rule kinds.  Then rules for JIT
 * code from its prologue (jitrule.c): CPython's trampoline, a frame-pointer
 * prologue, code it does not know, and random bytes.  And the PLT's CFA
 * expression (PLT=ADDR in the environment: the .plt section's address).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ingest/cfi_learn.h"
#include "ingest/jitrule.h"
#include "tap.h"

static uint8_t *slurp(const char *path, size_t *n)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0)
		return NULL;
	uint8_t *p = malloc((size_t)st.st_size);
	if (!p || read(fd, p, (size_t)st.st_size) != st.st_size)
		return NULL;
	close(fd);
	*n = (size_t)st.st_size;
	return p;
}

static int rule_is(uint64_t r, unsigned kind, int cfa, int rbp_saved, int rbp_off)
{
	return (r & 15) == kind && (int32_t)(r >> 32) == cfa &&
	       (int)((r >> 4) & 1) == rbp_saved &&
	       (!rbp_saved || (int16_t)(r >> 16) == rbp_off);
}

#define JIT_TESTS 11

static void test_jit_rules(void)
{
	/* CPython 3.12's perf trampoline: sub $8,%rsp; call *%rcx; add $8,%rsp; ret */
	static const uint8_t tramp[] = { 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1,
					 0x48, 0x83, 0xc4, 0x08, 0xc3 };
	/* push %rbx; push %rbp; mov %rsp,%rbp; sub $0x20,%rsp; call rel32 */
	static const uint8_t fp[] = { 0x53, 0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec,
				      0x20, 0xe8, 0, 0, 0, 0, 0xc9, 0xc3 };
	static const uint8_t ud2[] = { 0x0f, 0x0b, 0xff, 0xd0 };
	const uint64_t s = 0x7f0000001000ull;

	ok(rule_is(jit_rule(tramp, sizeof tramp, s, s + 5), PROBE_RULE_RSP, 16, 0, 0),
	   "trampoline, its call's return address: CFA = rsp + 16");
	ok(rule_is(jit_rule(tramp, sizeof tramp, s, s), PROBE_RULE_RSP, 8, 0, 0),
	   "trampoline, sampled at its entry: CFA = rsp + 8");
	ok(rule_is(jit_rule(tramp, sizeof tramp, s, s + 10), PROBE_RULE_RSP, 8, 0, 0),
	   "trampoline, sampled at its ret: CFA = rsp + 8");
	ok(rule_is(jit_rule(fp, sizeof fp, s, s + 13), PROBE_RULE_RBP, 24, 1, -24),
	   "frame-pointer prologue after a push: CFA = rbp + 24, rbp saved at CFA - 24");
	ok(rule_is(jit_rule(fp, sizeof fp, s, s + 2), PROBE_RULE_RSP, 24, 1, -24),
	   "sampled between push %%rbp and mov %%rsp,%%rbp: CFA = rsp + 24");
	ok((jit_rule(ud2, sizeof ud2, s, s + 3) & 15) == PROBE_RULE_NONE,
	   "an instruction it does not know before the address: the frame pointer (NONE)");
	ok((jit_rule(tramp, 4, s, s + 5) & 15) == PROBE_RULE_NONE,
	   "code not read that far: NONE");
	ok((jit_rule(tramp, sizeof tramp, s, s - 1) & 15) == PROBE_RULE_NONE,
	   "an address before the function: NONE");

	/* HotSpot C1: stack bang, push %rbp, sub $0x70,%rsp, then a body it does not know */
	static const uint8_t c1[] = { 0x89, 0x84, 0x24, 0x00, 0xc0, 0xfe, 0xff, 0x55,
				      0x48, 0x83, 0xec, 0x70, 0x48, 0xbf, 1, 2, 3, 4, 5, 6, 7, 8 };
	/* HotSpot C2: sub $0x28,%rsp; mov %rbp,0x20(%rsp); then its body */
	static const uint8_t c2[] = { 0x48, 0x81, 0xec, 0x28, 0, 0, 0, 0x48, 0x89, 0x6c,
				      0x24, 0x20, 0x48, 0x85, 0xf6, 0x0f, 0x8e, 1, 2, 3, 4 };
	ok(rule_is(jit_rule(c1, sizeof c1, s, s + 20), PROBE_RULE_RSP, 0x80, 1, -16),
	   "HotSpot C1 prologue, then its body: CFA = rsp + 0x80, rbp saved at CFA - 16");
	ok(rule_is(jit_rule(c2, sizeof c2, s, s + 18), PROBE_RULE_RSP, 0x30, 1, -16),
	   "HotSpot C2 prologue (rbp stored, not pushed): CFA = rsp + 0x30, rbp at CFA - 16");

	uint64_t seed = 0x2545f4914f6cdd1dull;
	unsigned bad = 0;
	for (int round = 0; round < 20000; round++) {
		size_t n = 1 + round % 64;
		uint8_t *code = malloc(n);      /* exact size: ASan sees overreads */
		for (size_t i = 0; i < n; i++) {
			seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
			code[i] = (uint8_t)seed;
		}
		unsigned k = jit_rule(code, n, s, s + seed % (n + 8)) & 15;
		if (k != PROBE_RULE_NONE && k != PROBE_RULE_RSP && k != PROBE_RULE_RBP)
			bad++;
		free(code);
	}
	ok(bad == 0, "20000 random functions: every answer NONE, RSP or RBP (%u not)", bad);
}

#define PLT_TESTS 4

/*
 * The lazy-binding PLT's CFA expression (cfa.h): a plain rsp rule for each
 * address of an entry, rsp + 8 until its push, rsp + 16 from its byte 11.
 * plt: the .plt section's address (02-cfi.t reads it with readelf).
 */
static void test_plt(const uint8_t *img, size_t n, const char *plt)
{
	static const struct { unsigned at; int cfa; } want[PLT_TESTS] = {
		{ 16, 8 }, { 16 + 6, 8 }, { 16 + 11, 16 }, { 32 + 15, 16 },
	};
	uint64_t base = plt ? strtoull(plt, NULL, 16) : 0;

	for (int i = 0; i < PLT_TESTS; i++) {
		uint64_t r = base ? cfi_rule_in_image(img, n, base + want[i].at) : 0;

		ok(base && rule_is(r, PROBE_RULE_RSP, want[i].cfa, 0, 0),
		   ".plt+%u: CFA = rsp + %d, from the PLT's CFA expression (rule %llx)",
		   want[i].at, want[i].cfa, (unsigned long long)r);
	}
}

int main(int argc, char **argv)
{
	size_t n = 0;
	uint8_t *img = argc > 1 ? slurp(argv[1], &n) : NULL;
	int nf = argc - 2;
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	plan(nf + 2 + JIT_TESTS + PLT_TESTS);
	test_jit_rules();
	if (!img) {
		ok(0, "read %s", argc > 1 ? argv[1] : "(no file)");
		return done();
	}
	for (int i = 0; i < nf; i++) {
		uint64_t a = strtoull(argv[2 + i], NULL, 16);
		uint64_t r = cfi_rule_in_image(img, n, a);
		ok((r & 15) == PROBE_RULE_RSP && (int32_t)(r >> 32) == 8,
		   "entry 0x%llx: CFA = rsp + 8 (rule %llx)", (unsigned long long)a,
		   (unsigned long long)r);
	}
	ok((cfi_rule_in_image(img, n, 0x10) & 15) != PROBE_RULE_RSP,
	   "an address before any code has no rule");
	test_plt(img, n, getenv("PLT"));

	/* Damaged copies: flipped bytes, cut short; every answer a kind. */
	uint8_t *copy = malloc(n);
	unsigned bad_kind = 0;
	for (int round = 0; round < 4000; round++) {
		size_t len = n;
		memcpy(copy, img, n);
		for (int k = 0; k < 1 + round % 16; k++) {
			seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
			copy[seed % n] ^= (uint8_t)(seed >> 32 | 1);
		}
		if (round % 3 == 0)
			len = (size_t)(seed >> 20) % n;
		/* An exact-size heap copy: ASan sees any read past its end. */
		uint8_t *cut = malloc(len ? len : 1);
		memcpy(cut, copy, len);
		for (int i = 0; i < nf; i++) {
			uint64_t a = strtoull(argv[2 + i], NULL, 16);
			if ((cfi_rule_in_image(cut, len, a + (uint64_t)(round % 7)) & 15) > PROBE_RULE_UNSUP)
				bad_kind++;
		}
		free(cut);
	}
	ok(bad_kind == 0, "4000 damaged copies read, every answer a rule kind (%u not)", bad_kind);
	free(copy);
	free(img);
	return done();
}
