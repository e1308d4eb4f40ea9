/*
 * bench_stdio - what a profiler costs a program that lives on glibc's
 * single-thread fast paths.
 *   bench_stdio [IDLE [ROUNDS_K]]
 * One thread (main) does ROUNDS_K (default 5500) thousand rounds of: 32
 * putc of one byte each to a FILE opened on /dev/null (fully buffered),
 * then HELD (24) malloc of one small size (16 to 112 bytes, a different
 * one each round) and their frees, so that beyond tcache's 7 blocks per
 * size they go through malloc's fastbins and arena.  About 2 s bare on the
 * 2-core VM.  With IDLE = 1 it first starts one extra thread of its own
 * that blocks in pause() for ever: from then on the process is
 * multi-threaded (glibc's SINGLE_THREAD_P is false for good), so every putc
 * takes the FILE's lock and malloc takes its arena lock and atomic
 * fastbin operations - as they do once anything in the process, a
 * profiler included, has started a thread.  Measured here with glibc 2.36:
 * putc 3.4 -> 6.5 ns, fastbin malloc/free 5.5 -> 7.8 ns.
 * Prints one line on stdout, a checksum; exits 0.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HELD 24

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	int idle_thread = argc > 1 ? atoi(argv[1]) : 0;
	long rounds = (argc > 2 ? atol(argv[2]) : 5500) * 1000L;
	unsigned long sum = 0;
	void *held[HELD];
	pthread_t t;
	FILE *f;

	if (idle_thread) {
		int e = pthread_create(&t, NULL, idle, NULL);
		if (e) {
			fprintf(stderr, "bench_stdio: pthread_create: %s\n", strerror(e));
			return 1;
		}
	}
	f = fopen("/dev/null", "w");
	if (!f) {
		perror("bench_stdio: /dev/null");
		return 1;
	}
	for (long r = 0; r < rounds; r++) {
		size_t n = 16 + (size_t)(r % 7) * 16;

		for (int i = 0; i < 32; i++)
			putc('a' + i, f);
		for (int i = 0; i < HELD; i++) {
			held[i] = malloc(n);
			if (!held[i])
				abort();
			((volatile char *)held[i])[0] = (char)i;
			sum += n + (unsigned long)((volatile char *)held[i])[0];
		}
		for (int i = HELD - 1; i >= 0; i--)
			free(held[i]);
	}
	if (fclose(f) != 0) {
		perror("bench_stdio: fclose");
		return 1;
	}
	printf("checksum %lu\n", sum);
	return 0;
}
