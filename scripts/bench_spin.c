/*
 * bench_spin - the CPU-bound program scripts/bench times.
 *   bench_spin THREADS UNITS
 * THREADS threads (1: main alone) each do UNITS units of the ground-truth
 * work (tests/gt_work.h), then it prints a checksum.  No pinning: two
 * threads on the two vCPUs, as a real program runs.
 *
 * BENCH_FLOOR=MODE:FREQ measures what the kernel's sampling costs without
 * any profiler in the process: each thread opens its own cpu-clock event
 * (user space only, FREQ Hz) before working.
 *   event  the overflow only: no ring, no signal
 *   trap   the same plus perf's sigtrap to an empty SIGTRAP handler (what
 *          libprobe receives, minus its handler's own work)
 * It says on stderr how many signals arrived.
 */
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../tests/gt_work.h"

static long units;
static int floor_mode;                  /* 0 none, 1 event, 2 trap */
static long floor_freq;
static volatile long signals;

static void on_trap(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	__atomic_add_fetch(&signals, 1, __ATOMIC_RELAXED);
}

static void open_floor_event(void)
{
	struct perf_event_attr a;

	if (!floor_mode)
		return;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.freq = 1;
	a.sample_freq = (unsigned long)floor_freq;
	a.sample_type = PERF_SAMPLE_IP;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	if (floor_mode == 2) {
		a.sigtrap = 1;
		a.remove_on_exec = 1;
	}
	if (syscall(SYS_perf_event_open, &a, 0, -1, -1, 0) < 0) {
		perror("bench_spin: perf_event_open");
		exit(1);
	}
}

GT_KEEP static void spin(long n) { GT_SPIN(n, 1.0); }

static void *worker(void *arg)
{
	struct rusage ru;
	struct timespec c;

	(void)arg;
	open_floor_event();
	spin(units);
	if (getenv("BENCH_SPIN_VERBOSE")) {
		getrusage(RUSAGE_THREAD, &ru);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
		fprintf(stderr, "bench_spin: thread CPU %.4f s, switches %ld voluntary, %ld involuntary\n",
			c.tv_sec + c.tv_nsec / 1e9, ru.ru_nvcsw, ru.ru_nivcsw);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	const char *f = getenv("BENCH_FLOOR");
	pthread_t t[64];

	units = argc > 2 ? atol(argv[2]) : 100;
	if (threads < 1 || threads > 64 || units < 1) {
		fprintf(stderr, "usage: bench_spin THREADS(1-64) UNITS\n");
		return 2;
	}
	if (f && *f) {
		floor_mode = !strncmp(f, "event:", 6) ? 1 :
			     !strncmp(f, "trap:", 5) ? 2 : -1;
		floor_freq = floor_mode > 0 ? atol(strchr(f, ':') + 1) : 0;
		if (floor_mode < 0 || floor_freq <= 0) {
			fprintf(stderr, "bench_spin: BENCH_FLOOR is event:HZ or trap:HZ\n");
			return 2;
		}
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_trap;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigaction(SIGTRAP, &sa, NULL);
	}
	for (int i = 1; i < threads; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	worker(NULL);
	for (int i = 1; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("bench_spin: %d x %ld units, %.6g\n", threads, units, gt_sink);
	if (floor_mode)
		fprintf(stderr, "bench_spin: %ld signals\n", signals);
	return 0;
}
