/*
 * libgt_thrower - a shared object that throws C++ exceptions, for
 * gt_throw.  Built twice: libgt_thrower.so (linked by gt_throw: its
 * exceptions are caught in the program) and, with -DPLUGIN,
 * libgt_thrower_plugin.so (dlopen'ed and dlclose'd in loops by several
 * threads; it throws and catches inside itself and also lets exceptions
 * out to its caller).
 */
#include <stdexcept>
#include <string>

#include "gt_work.h"

#ifdef PLUGIN
#define NAME(x) plugin_##x
#else
#define NAME(x) thrower_##x
#endif

struct gt_error : std::runtime_error {
	int value;
	explicit gt_error(int v) : std::runtime_error("gt_error " + std::to_string(v)), value(v) {}
};

/* depth frames of this library, then a throw that the caller catches. */
extern "C" __attribute__((noinline, visibility("default")))
int NAME(depth)(int depth, int value)
{
	if (depth <= 0) {
		GT_SPIN(0, 1.0);
		throw gt_error(value);
	}
	int r = NAME(depth)(depth - 1, value) + 1;
	gt_sink = gt_sink + r;          /* not a tail call */
	return r;
}

/* Throw and catch inside the library; returns the sum of what it caught. */
extern "C" __attribute__((noinline, visibility("default")))
long NAME(inside)(int n)
{
	long sum = 0;
	for (int i = 0; i < n; i++) {
		try {
			NAME(depth)(i % 8, i);
		} catch (const gt_error &e) {
			sum += e.value;
		}
	}
	return sum;
}
