/*
 * bench_floor.so - the least an in-process sampler costs each process: a
 * preload whose constructor installs a signal handler that does nothing
 * and opens, maps and enables one per-thread perf event (cpu-clock, 999
 * Hz) that signals the thread itself, as libprobe does, and nothing else
 * (no arena, no connection, no stacks).  scripts/bench --real runs the
 * fork+exec loop under it beside probe (tool "floor"; "preload" is
 * bench_passthru.so, a preload alone), so that probe's cost a process is
 * read against what any such sampler pays here.
 */
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
}

__attribute__((constructor)) static void floor_init(void)
{
	struct perf_event_attr a;
	struct sigaction sa;
	struct f_owner_ex owner = { F_OWNER_TID, (pid_t)syscall(SYS_gettid) };
	int fd;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_freq = 999;
	a.freq = 1;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.wakeup_events = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return;
	if (mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED)
		return;
	fcntl(fd, F_SETOWN_EX, &owner);
	fcntl(fd, F_SETSIG, SIGPROF);
	fcntl(fd, F_SETFL, O_NONBLOCK | O_ASYNC);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
}
