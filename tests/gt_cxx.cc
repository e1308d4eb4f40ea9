// gt_cxx - ground truth for C++ names: the work is done in a member function
// of a class template in a namespace, gt::Acc<double>::spin(long), mangled
// _ZN2gt3AccIdE4spinEl.  A report shows it demangled, and as mangled with
// --no-demangle.
//   gt_cxx [UNITS]
#include <cstdio>
#include <cstdlib>

namespace gt {
template <typename T> struct Acc {
	T x;
	__attribute__((noipa)) T spin(long units);
};

template <typename T> T Acc<T>::spin(long units)
{
	for (long u = 0; u < units * 200000L; u++)
		x = x * (T)1.0000001 + (T)0.25;
	return x;
}
} // namespace gt

int main(int argc, char **argv)
{
	long units = argc > 1 ? std::atol(argv[1]) : 1000;
	gt::Acc<double> a{1.0};
	double r = 0;
	for (long i = 0; i < units; i++)
		r += a.spin(1) * 1e-9;
	std::printf("checksum %.6g\n", r > 0 ? 1.0 : 0.0);
	return 0;
}
