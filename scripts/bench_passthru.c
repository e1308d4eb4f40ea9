/*
 * bench_passthru.so - the least an LD_PRELOAD allocation profiler can cost:
 * malloc and free that only jump on to the next definitions (dlsym
 * RTLD_NEXT), no counting, no filter.  scripts/bench --alloc runs its loop
 * under it beside --alloc, so that the figure says how much of --alloc's
 * cost is interposing at all (one more indirect jump per call, one more
 * function in the branch predictor) and how much is probe's own.
 */
#include <dlfcn.h>
#include <stddef.h>

static void *(*next_malloc)(size_t);
static void (*next_free)(void *);

__attribute__((constructor)) static void find(void)
{
	next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
}

/* Before find(): only the loader's own calls, which dlsym does not make. */
__attribute__((visibility("default"))) void *malloc(size_t n)
{
	if (__builtin_expect(next_malloc == NULL, 0))
		find();
	return next_malloc(n);
}

__attribute__((visibility("default"))) void free(void *p)
{
	if (__builtin_expect(next_free == NULL, 0))
		find();
	next_free(p);
}
