/*
 * bench_wake - the cost of one block and wake of a thread.
 *   bench_wake [ROUNDS [WORK_NS]]     (defaults 200000 and 0)
 * Two threads pass a byte back and forth through two pipes ROUNDS times, so
 * each round blocks and wakes each thread once; after each wake the woken
 * thread spins WORK_NS ns of CPU.  Prints
 *   wakes W seconds S per_wake_ns P
 * W = 2 x ROUNDS, S the wall time of the ping-pong alone (threads already
 * made), P = S x 1e9 / W.  A profiler that does work at every switch (an
 * off-CPU profiler) shows up as a larger P.
 * Run it pinned (taskset -c 0) to measure the same-CPU path: a wake across
 * CPUs in a VM costs an inter-processor interrupt, whose latency would
 * swamp what is being measured.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long rounds = 200000, work_ns;
static int ping[2], pong[2];            /* main -> peer, peer -> main */
static pthread_barrier_t ready;
static volatile double sink;

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fail(const char *what)
{
	fprintf(stderr, "bench_wake: %s: %s\n", what, errno ? strerror(errno) : "short");
	exit(1);
}

/* Work after a wake, so the benchmark can model a thread that does some. */
static void spin(void)
{
	struct timespec t0, t;
	double x = 1.0;

	if (work_ns <= 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 16; i++)
			x = x * 1.0000001 + 0.25;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < work_ns);
	sink += x;
}

/* Blocks until the byte comes.  EINTR is retried: a profiler's signal is not a broken pipe. */
static void recv_byte(int fd)
{
	char b;
	ssize_t n;

	do {
		errno = 0;
		n = read(fd, &b, 1);
	} while (n < 0 && errno == EINTR);
	if (n != 1)
		fail("read");
}

static void send_byte(int fd)
{
	ssize_t n;

	do {
		errno = 0;
		n = write(fd, "x", 1);
	} while (n < 0 && errno == EINTR);
	if (n != 1)
		fail("write");
}

static void *peer(void *arg)
{
	pthread_barrier_wait(&ready);
	for (long i = 0; i < rounds; i++) {
		recv_byte(ping[0]);
		spin();
		send_byte(pong[1]);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 1)
		rounds = atol(argv[1]);
	if (argc > 2)
		work_ns = atol(argv[2]);
	if (rounds <= 0 || work_ns < 0) {
		fprintf(stderr, "usage: bench_wake [ROUNDS [WORK_NS]]\n");
		return 2;
	}
	if (pipe(ping) < 0 || pipe(pong) < 0)
		fail("pipe");
	pthread_barrier_init(&ready, NULL, 2);
	errno = pthread_create(&t, NULL, peer, NULL);
	if (errno)
		fail("pthread_create");
	pthread_barrier_wait(&ready);   /* time the ping-pong, not the start */

	double t0 = mono_s();
	for (long i = 0; i < rounds; i++) {
		send_byte(ping[1]);
		recv_byte(pong[0]);
		spin();
	}
	double s = mono_s() - t0;

	pthread_join(t, NULL);
	printf("wakes %ld seconds %.6f per_wake_ns %.1f\n", 2 * rounds, s,
	       s * 1e9 / (double)(2 * rounds));
	return 0;
}
