/*
 * gt_plugin - ground truth for objects that come and go: dlopen a plugin,
 * work in it, dlclose it, then the next one.
 *   gt_plugin GAP_MS LIB:UNITS [LIB:UNITS [LIB:UNITS]]
 * Each LIB (a path) is loaded, its plugin_run(UNITS) called (one unit is
 * the same work everywhere, see gt_work.h), and unloaded; then the program
 * sleeps GAP_MS before the next.  Each plugin is called through its own
 * caller (run_first, run_second, run_third), so a profile's stacks tell
 * which plugin was really running whatever its leaf frame is named.
 * Prints one line per plugin: "LIB at 0xADDR cpu_ms N" (plugin_run's
 * address, and the CPU time spent in it: the truth a profile's shares are
 * checked against, since a machine's speed drifts between one plugin's run
 * and the next), with "reused" when a plugin was loaded where an earlier one
 * had been.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gt_work.h"

typedef void (*run_fn)(long);

/* The empty asm after the call keeps it a call (not a tail jump). */
#define CALLER(name) \
	GT_KEEP static void name(run_fn f, long n) { f(n); __asm__ volatile(""); }
CALLER(run_first)
CALLER(run_second)
CALLER(run_third)

int main(int argc, char **argv)
{
	void (*callers[3])(run_fn, long) = { run_first, run_second, run_third };
	uintptr_t seen[3] = { 0 };
	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: gt_plugin GAP_MS LIB:UNITS [LIB:UNITS [LIB:UNITS]]\n");
		return 2;
	}
	long gap = atol(argv[1]);
	for (int i = 2; i < argc; i++) {
		char *spec = strdup(argv[i]);
		char *colon = strrchr(spec, ':');
		if (!colon) {
			fprintf(stderr, "gt_plugin: %s: want LIB:UNITS\n", argv[i]);
			return 2;
		}
		*colon = '\0';
		long units = atol(colon + 1);
		void *h = dlopen(spec, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "gt_plugin: %s\n", dlerror());
			return 1;
		}
		run_fn f = (run_fn)dlsym(h, "plugin_run");
		if (!f) {
			fprintf(stderr, "gt_plugin: %s\n", dlerror());
			return 1;
		}
		int reused = 0;
		for (int k = 0; k < i - 2; k++)
			reused |= seen[k] == (uintptr_t)f;
		seen[i - 2] = (uintptr_t)f;
		struct timespec t0, t1;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
		callers[i - 2](f, units);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
		printf("%s at %p cpu_ms %.3f%s\n", spec, (void *)f,
		       (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6,
		       reused ? " reused" : "");
		fflush(stdout);
		dlclose(h);
		free(spec);
		if (gap > 0) {
			struct timespec ts = { gap / 1000, (gap % 1000) * 1000000L };
			nanosleep(&ts, NULL);
		}
	}
	return 0;
}
