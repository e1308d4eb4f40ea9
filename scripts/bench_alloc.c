/*
 * bench_alloc - what an allocation costs: N malloc/free pairs of 64 bytes,
 * with a 4 KiB block every 64th and a 1 MiB block every 4096th (issue 24's
 * loop).  Prints "N pairs in S s: X ns per pair".
 *   bench_alloc [N]   (default 20,000,000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static char *volatile sink;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000000;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		size_t sz = (i & 4095) == 4095 ? 1 << 20 : (i & 63) == 63 ? 4096 : 64;
		sink = malloc(sz);
		sink[0] = 1;
		free(sink);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	printf("%ld pairs in %.3f s: %.2f ns per pair\n", n, s, s * 1e9 / (double)n);
	return 0;
}
