/*
 * bench_threads - what a profiler costs per thread in memory.
 *   bench_threads [N]
 * Starts N threads (default 1000; 0: none), each with a 64 KiB stack, that
 * each say they are running and then block in pause() for ever.  Once all
 * N run, the main thread reads VmRSS and Threads from /proc/self/status and
 * prints them on stdout as "rss_kb=K threads=T", then exits 0 (exit ends
 * the blocked threads).  Threads counts every thread of the process: N + 1
 * bare, more where something in the process started its own.
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STACK (64 * 1024)

static int running;

static void *worker(void *arg)
{
	(void)arg;
	__atomic_add_fetch(&running, 1, __ATOMIC_RELEASE);
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	long rss = -1, threads = -1;
	pthread_attr_t attr;
	char line[256];
	FILE *f;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK < PTHREAD_STACK_MIN ? PTHREAD_STACK_MIN : STACK);
	for (long i = 0; i < n; i++) {
		pthread_t t;
		int e = pthread_create(&t, &attr, worker, NULL);
		if (e) {
			fprintf(stderr, "bench_threads: pthread_create %ld: %s\n", i, strerror(e));
			return 1;
		}
	}
	while (__atomic_load_n(&running, __ATOMIC_ACQUIRE) < n) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	f = fopen("/proc/self/status", "r");
	if (!f) {
		perror("bench_threads: /proc/self/status");
		return 1;
	}
	while (fgets(line, sizeof line, f)) {
		sscanf(line, "VmRSS: %ld", &rss);
		sscanf(line, "Threads: %ld", &threads);
	}
	fclose(f);
	printf("rss_kb=%ld threads=%ld\n", rss, threads);
	fflush(stdout);
	return 0;
}
