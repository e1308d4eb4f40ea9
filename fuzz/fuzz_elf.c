/*
 * fuzz_elf - libFuzzer target: hostile object files through the symbolizer
 * (ELF symbol tables, .gnu_debugdata, DWARF scopes and lines, .eh_frame's
 * function ranges) and through
 * the frame-rule learner (.eh_frame_hdr, .eh_frame, CFA programs).
 *
 * The input is written to a file and looked up as an object: names, inline
 * frames and source lines at a few addresses, the rules at the same ones.
 * Built and run by `make fuzz`; the seed corpus is real objects of the
 * build (scripts/fuzz-corpus).
 */
#include <stddef.h>
#include <stdint.h>

#include "ingest/cfi_learn.h"
#include "fuzz_io.h"
#include "symbols/symbols.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_init("elf", "so");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t addrs[] = { 0x1000, 0x1001, 0x1139, 0x1180, 0x2000, 0x401000 };
	if (fuzz_write(data, size) < 0)
		return 0;
	int saved = fuzz_quiet();
	/* A fresh cache each time: objects are keyed by inode, which repeats. */
	struct symcache *c = symcache_new();
	struct symobj *o = symcache_get(c, fuzz_path, NULL, 0);
	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		struct src_frame fr[16];
		uint64_t start;
		(void)symobj_lookup(o, addrs[i]);
		(void)symobj_func_start(o, addrs[i], &start);
		(void)symobj_srcframes(o, addrs[i], fr, 16);
		(void)cfi_rule_in_image(data, size, addrs[i]);
	}
	symcache_free(c);
	fuzz_loud(saved);
	unlink(fuzz_path);
	return 0;
}
