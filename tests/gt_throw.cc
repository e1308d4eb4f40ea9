/*
 * gt_throw - C++ exceptions in hot loops, across shared objects, while
 * other threads dlopen/dlclose and walk the loaded objects: a profiler
 * that samples it must change nothing (same output at any rate) and never
 * deadlock on the dynamic loader's locks.
 *   gt_throw [ITERS]
 * Threads:
 *   4 x thrower: catch, in the program, exceptions thrown ITERS times from
 *       libgt_thrower.so at various depths, and throw/catch in the program
 *   2 x loader: dlopen libgt_thrower_plugin.so (next to the program),
 *       call it (it throws and catches inside, and lets one out to us),
 *       dlclose, ITERS/20 times
 *   1 x walker: dl_iterate_phdr over the loaded objects, ITERS/4 times
 * Prints the sums (fixed for a given ITERS) and which objects define
 * _Unwind_RaiseException and backtrace as the program resolves them.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdexcept>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

extern "C" int thrower_depth(int depth, int value);
extern "C" long thrower_inside(int n);

static long iters = 20000;
static char plugin_path[4096];

struct local_error {
	int v;
};

__attribute__((noinline)) static void local_throw(int v)
{
	if (v % 3 == 0)
		throw local_error{ v };
	throw std::out_of_range(std::to_string(v));
}

static void *thrower(void *arg)
{
	long id = (long)arg, sum = 0;
	for (long i = 0; i < iters; i++) {
		try {
			thrower_depth((int)(i % 12), (int)(i % 1000));
		} catch (const std::runtime_error &e) {
			sum += std::atoi(e.what() + 9);
		}
		try {
			local_throw((int)(i % 7));
		} catch (const local_error &e) {
			sum += e.v;
		} catch (const std::exception &e) {
			sum += std::atoi(e.what());
		}
	}
	sum += thrower_inside((int)(iters / 10));
	return (void *)(sum * 10 + id);
}

static void *loader(void *arg)
{
	long loops = iters / 20, sum = 0;
	(void)arg;
	for (long i = 0; i < loops; i++) {
		void *h = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			std::fprintf(stderr, "dlopen: %s\n", dlerror());
			return (void *)-1L;
		}
		auto inside = (long (*)(int))dlsym(h, "plugin_inside");
		auto depth = (int (*)(int, int))dlsym(h, "plugin_depth");
		if (!inside || !depth) {
			std::fprintf(stderr, "dlsym: %s\n", dlerror());
			return (void *)-1L;
		}
		sum += inside(10);
		try {
			depth(3, 7);
		} catch (const std::exception &e) {
			sum += 1;
		}
		dlclose(h);
	}
	return (void *)sum;
}

static int count_cb(struct dl_phdr_info *info, size_t, void *data)
{
	long *n = (long *)data;
	*n += info->dlpi_phnum > 0;
	return 0;
}

static void *walker(void *)
{
	long n = 0, loops = iters / 4;
	for (long i = 0; i < loops; i++) {
		long k = 0;
		dl_iterate_phdr(count_cb, &k);
		n += k > 0;
	}
	return (void *)n;
}

static const char *defined_in(const char *sym)
{
	Dl_info di;
	void *p = dlsym(RTLD_DEFAULT, sym);
	if (!p || !dladdr(p, &di) || !di.dli_fname)
		return "(none)";
	const char *slash = std::strrchr(di.dli_fname, '/');
	return slash ? slash + 1 : di.dli_fname;
}

int main(int argc, char **argv)
{
	pthread_t t[7];
	void *r;
	long sums[7];

	if (argc > 1)
		iters = std::atol(argv[1]);
	const char *slash = std::strrchr(argv[0], '/');
	std::snprintf(plugin_path, sizeof plugin_path, "%.*slibgt_thrower_plugin.so",
		      slash ? (int)(slash - argv[0] + 1) : 0, argv[0]);
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], nullptr, thrower, (void *)i);
	pthread_create(&t[4], nullptr, loader, nullptr);
	pthread_create(&t[5], nullptr, loader, nullptr);
	pthread_create(&t[6], nullptr, walker, nullptr);
	for (int i = 0; i < 7; i++) {
		pthread_join(t[i], &r);
		sums[i] = (long)r;
	}
	std::printf("throwers: %ld %ld %ld %ld\n", sums[0], sums[1], sums[2], sums[3]);
	std::printf("loaders: %ld %ld\n", sums[4], sums[5]);
	std::printf("walker: %ld\n", sums[6]);
	std::printf("_Unwind_RaiseException from %s\n", defined_in("_Unwind_RaiseException"));
	std::printf("_Unwind_Backtrace from %s\n", defined_in("_Unwind_Backtrace"));
	std::printf("backtrace from %s\n", defined_in("backtrace"));
	return 0;
}
