/*
 * gt_dlloop - time in the dynamic loader: dlopen and dlclose libraries in a
 * loop, so that most samples land inside ld.so (relocation, symbol lookup,
 * mapping), called from dlopen, called from main.
 *   gt_dlloop ROUNDS LIB...
 * Each round loads every LIB (RTLD_NOW | RTLD_LOCAL: all its relocations
 * now) and unloads it.  Prints "rounds N" at the end.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: gt_dlloop ROUNDS LIB...\n");
		return 2;
	}
	long rounds = atol(argv[1]), r;
	for (r = 0; r < rounds; r++)
		for (int i = 2; i < argc; i++) {
			void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
			if (!h) {
				fprintf(stderr, "gt_dlloop: %s\n", dlerror());
				return 1;
			}
			dlclose(h);
		}
	printf("rounds %ld\n", r);
	return 0;
}
