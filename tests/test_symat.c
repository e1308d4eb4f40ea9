/*
 * test_symat - the name the symbolizer gives each address of an object
 * (symcache_get, symobj_lookup), one "ADDR NAME" line each ("-": none), so
 * that a test can hold probe's names to another tool's (tests/51-plt.t:
 * objdump's names of PLT entries).
 *
 *   test_symat FILE ADDR...       (ADDR in hex, an ELF address of FILE)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "symbols/symbols.h"

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_symat FILE ADDR...\n");
		return 2;
	}
	struct symcache *c = symcache_new();
	struct symobj *o = symcache_get(c, argv[1], NULL, 0);
	for (int i = 2; i < argc; i++) {
		uint64_t a = strtoull(argv[i], NULL, 16);
		const char *name = o ? symobj_lookup(o, a) : NULL;
		printf("%" PRIx64 " %s\n", a, name ? name : "-");
	}
	symcache_free(c);
	return 0;
}
