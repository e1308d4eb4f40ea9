/*
 * fuzz_elf - libFuzzer target: hostile object files through the symbolizer
 * (ELF symbol tables, .gnu_debugdata, DWARF scopes and lines) and through
 * the frame-rule learner (.eh_frame_hdr, .eh_frame, CFA programs).
 *
 * The input is written to a file and looked up as an object: names, inline
 * frames and source lines at a few addresses, the rules at the same ones.
 * Built and run by `make fuzz`; the seed corpus is real objects of the
 * build (scripts/fuzz-corpus).
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cfi_learn.h"
#include "symbols.h"

static char path[64];
static int nul = -1;

/* Our messages go away while the input runs; libFuzzer's own stay. */
static int quiet(void)
{
	fflush(stderr);
	int saved = dup(2);
	if (nul >= 0)
		dup2(nul, 2);
	return saved;
}

static void loud(int saved)
{
	fflush(stderr);
	if (saved >= 0) {
		dup2(saved, 2);
		close(saved);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(path, sizeof(path), "/tmp/fuzz-elf-%ld.so", (long)getpid());
	nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	/* A fresh cache each time: objects are keyed by inode, which repeats. */
	int saved = quiet();
	struct symcache *c = symcache_new();
	struct symobj *o = symcache_get(c, path, NULL, 0);
	static const uint64_t addrs[] = { 0x1000, 0x1001, 0x1139, 0x1180, 0x2000, 0x401000 };
	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		struct src_frame fr[16];
		(void)symobj_lookup(o, addrs[i]);
		(void)symobj_srcframes(o, addrs[i], fr, 16);
		(void)cfi_rule_in_image(data, size, addrs[i]);
	}
	symcache_free(c);
	loud(saved);
	unlink(path);
	return 0;
}
