/*
 * libgt_dlvia - gt_dlloop's rounds from a library that is itself loaded
 * with dlopen (as Python's _ctypes calls dlopen and dlclose): the frames
 * that call into the loader belong to an object that was not there at
 * start.  gt_dl_rounds(ROUNDS, N, LIBS) loads and unloads each of the N
 * LIBS ROUNDS times; returns the rounds done, or -1.
 */
#include <dlfcn.h>
#include <stdio.h>

__attribute__((noinline)) long gt_dl_rounds(long rounds, int n, char **libs)
{
	long r;

	for (r = 0; r < rounds; r++)
		for (int i = 0; i < n; i++) {
			void *h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);

			if (!h) {
				fprintf(stderr, "libgt_dlvia: %s\n", dlerror());
				return -1;
			}
			dlclose(h);
		}
	return r;
}
