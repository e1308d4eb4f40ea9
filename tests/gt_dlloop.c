/*
 * gt_dlloop - time in the dynamic loader: dlopen and dlclose libraries in a
 * loop, so that most samples land inside ld.so (relocation, symbol lookup,
 * mapping), called from dlopen, called from main.
 *   gt_dlloop [--via VIA.so] ROUNDS LIB...
 * Each round loads every LIB (RTLD_NOW | RTLD_LOCAL: all its relocations
 * now) and unloads it.  Prints "rounds N" at the end.  --via: the rounds
 * run in VIA.so's gt_dl_rounds, VIA.so loaded with dlopen first
 * (tests/libgt_dlvia.c).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rounds in VIA's gt_dl_rounds; -1 when it cannot be loaded. */
static long via(const char *lib, long rounds, int n, char **libs)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	long (*fn)(long, int, char **);

	if (!h || !(*(void **)&fn = dlsym(h, "gt_dl_rounds"))) {
		fprintf(stderr, "gt_dlloop: %s\n", dlerror());
		return -1;
	}
	return fn(rounds, n, libs);
}

int main(int argc, char **argv)
{
	const char *via_lib = NULL;

	if (argc > 2 && strcmp(argv[1], "--via") == 0) {
		via_lib = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: gt_dlloop [--via VIA.so] ROUNDS LIB...\n");
		return 2;
	}
	long rounds = atol(argv[1]), r;
	if (via_lib) {
		r = via(via_lib, rounds, argc - 2, argv + 2);
		if (r < 0)
			return 1;
		printf("rounds %ld\n", r);
		return 0;
	}
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
