/*
 * demo - the program `make run` profiles: two worker threads with
 * recognisable hot spots (a prime sieve; sorting and hashing records)
 * for about two seconds.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile uint64_t sink;

/* Keep the hot functions whole and named at -O2 (clang has no noipa). */
#ifdef __clang__
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noipa))
#endif

KEEP static unsigned sieve(unsigned n)
{
	static unsigned char composite[1 << 20];
	unsigned count = 0;
	memset(composite, 0, n);
	for (unsigned i = 2; i < n; i++) {
		if (composite[i])
			continue;
		count++;
		for (unsigned j = 2 * i; j < n; j += i)
			composite[j] = 1;
	}
	return count;
}

static void *primes(void *arg)
{
	pthread_setname_np(pthread_self(), "primes");
	for (int i = 0; i < 300; i++)
		sink += sieve(1 << 20);
	return arg;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

KEEP static uint64_t fnv1a(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 1099511628211ull;
	return h;
}

KEEP static void fill(uint64_t *v, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		v[i] = seed;
	}
}

static void *records(void *arg)
{
	enum { N = 1 << 16 };
	static uint64_t v[N];
	pthread_setname_np(pthread_self(), "records");
	for (int i = 0; i < 180; i++) {
		fill(v, N, 88172645463325252ull + (uint64_t)i);
		qsort(v, N, sizeof(v[0]), cmp_u64);
		sink += fnv1a(v, sizeof(v));
	}
	return arg;
}

int main(void)
{
	pthread_t a, b;
	pthread_create(&a, NULL, primes, NULL);
	pthread_create(&b, NULL, records, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("demo done (%llu)\n", (unsigned long long)(sink & 0xff));
	return 0;
}
