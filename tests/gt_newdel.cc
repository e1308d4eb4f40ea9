// gt_newdel - ground truth for --alloc in C++: two threads, each making
// blocks with new[] in cxx_new (70 % of the bytes) and std::vector in
// cxx_vector (30 %), freed at once; libstdc++'s operator new reaches
// malloc.
//   gt_newdel [MIB]   (default 64 MiB in all)
// Prints the bytes each function allocated, both threads together.
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

// Each block escapes here (so that new and delete are kept), one per thread:
// a shared one would have each thread delete the other's blocks.
static thread_local char *volatile sink;

__attribute__((noinline)) static size_t cxx_new(size_t bytes, unsigned seed)
{
	size_t done = 0;
	while (done < bytes) {
		size_t n = 64 + (seed = seed * 1103515245u + 12345u) % 8192;
		if (n > bytes - done)
			n = bytes - done;
		char *p = new char[n];
		p[0] = 1;
		sink = p;
		delete[] p;
		done += n;
	}
	return done;
}

__attribute__((noinline)) static size_t cxx_vector(size_t bytes, unsigned seed)
{
	size_t done = 0;
	while (done < bytes) {
		size_t n = 64 + (seed = seed * 1103515245u + 12345u) % 8192;
		if (n > bytes - done)
			n = bytes - done;
		std::vector<char> v(n);
		sink = v.data();
		done += n;
	}
	return done;
}

int main(int argc, char **argv)
{
	size_t total = (argc > 1 ? strtoul(argv[1], nullptr, 10) : 64) << 20;
	size_t a[2] = { 0, 0 }, b[2] = { 0, 0 };
	std::thread t[2];
	for (int i = 0; i < 2; i++)
		t[i] = std::thread([&, i] {
			for (int r = 0; r < 64; r++) {
				a[i] += cxx_new(total * 7 / 10 / 2 / 64, 17u + i + r);
				b[i] += cxx_vector(total * 3 / 10 / 2 / 64, 91u + i + r);
			}
		});
	for (auto &th : t)
		th.join();
	std::printf("cxx_new %zu cxx_vector %zu\n", a[0] + a[1], b[0] + b[1]);
	return 0;
}
