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
 * under ASan) and answer with one of the rule kinds.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfi_learn.h"
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

int main(int argc, char **argv)
{
	size_t n = 0;
	uint8_t *img = argc > 1 ? slurp(argv[1], &n) : NULL;
	int nf = argc - 2;
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	plan(nf + 2);
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
