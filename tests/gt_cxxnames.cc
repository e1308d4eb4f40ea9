// gt_cxxnames - ground truth for how reports name C++ functions: the work
// is done in two overloads of gt::mix (3:2), a const member of a class
// template, gt::Box<int>::get(long) const, a lambda's operator() in main,
// and clock_gettime in the vDSO (called from gt::clocks), in the ratio
// 3:2:2:2:1.  perf report shows them as gt::mix, gt::Box<int>::get,
// main::{lambda(long)#1}::operator() (without parameter lists), and with
// them under -v.
//   gt_cxxnames [ROUNDS]
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "gt_work.h"

namespace gt {
GT_KEEP double mix(long units, int seed)
{
	GT_SPIN(units, seed);
	return gt_sink;
}

GT_KEEP double mix(long units, double seed)
{
	GT_SPIN(units, seed);
	return gt_sink;
}

template <typename T> struct Box {
	T v;
	GT_KEEP T get(long units) const
	{
		GT_SPIN(units, v);
		return v;
	}
};

// About as long as one unit of work: clock_gettime calls into the vDSO.
GT_KEEP long clocks(long units)
{
	struct timespec ts;
	long n = 0;
	for (long i = 0; i < units * 20000; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		n += ts.tv_nsec & 1;
	}
	return n;
}
} // namespace gt

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? std::atol(argv[1]) : 100;
	gt::Box<int> box{1};
	auto spin = [](long units) GT_KEEP { GT_SPIN(units, 4.0); };
	long n = 0;
	for (long r = 0; r < rounds; r++) {
		gt::mix(3, 1);
		gt::mix(2, 1.0);
		box.get(2);
		spin(2);
		n += gt::clocks(1);
	}
	std::printf("checksum %.6g %ld\n", gt_sink > 0 ? 1.0 : 0.0, n > 0 ? 1L : 0L);
	return 0;
}
