/*
 * main.c - libprobe's lifecycle: start in the constructor, finish at exit,
 * start again in a fork child.
 *
 * Start (constructor, before main): read PROBE_*, open the output, load
 * libunwind, install the handler, open the main thread's event (deciding
 * the hardware -> cpu-clock fallback), adopt threads that already exist,
 * start the sender, and only then enable the events.
 *
 * Finish: exit() runs the ELF destructors (from _dl_fini) before the
 * on_exit handler registered by our constructor, and only on_exit knows
 * the exit status.  So whichever runs first stops sampling and sends the
 * remaining samples (the destructor, normally), and on_exit sends the EXIT
 * frame with the status; if the destructor runs without on_exit having been
 * registered, it sends EXIT with status -1.  Together they wait at most
 * about 1 s for a slow collector.  _exit() and fatal signals skip both: the
 * collector then sees the connection close without an EXIT.
 *
 * main() calling pthread_exit: glibc ends the process when its last thread
 * ends, but the sender thread counts as one, so the sender notices that no
 * application thread is left and calls exit(0) itself (sender.c).
 *
 * The status is the exit code (status & 0xff, as the parent sees it).
 *
 * fork() without exec: the child gets copies of our event fds that still
 * measure the parent's threads, and of the parent's connection.  The atfork
 * child handler closes those copies (without disabling: that would disable
 * the parent's events), and starts over as a new process: its own HELLO,
 * connection (the file is shared), sender and event for its one thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

volatile int probe_active;
volatile int probe_stopping;

static int on_exit_ok;
static int samples_done;
static int exit_done;
static uint64_t exit_deadline;          /* one ~1 s budget for all of exit */

#define EXIT_WAIT_NS 1000000000ull

static int exit_budget_ms(void)
{
	uint64_t now = probe_now_ns();

	if (!exit_deadline)
		exit_deadline = now + EXIT_WAIT_NS;
	return now >= exit_deadline ? 0 : (int)((exit_deadline - now) / 1000000u);
}

#ifdef PROBE_HANDLER_TIMING
extern uint64_t probe_timing_ns, probe_timing_n, probe_timing_max;
#endif

/* ---- finishing ----------------------------------------------------------- */

/* The consumer lock, waiting at most the exit budget (100 ms at least). */
static int lock_consumer(void)
{
	struct timespec ts;
	int ms = exit_budget_ms();

	if (ms < 100)
		ms = 100;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return pthread_mutex_timedlock(&probe_consumer_lock, &ts);
}

static void finish_samples(void)
{
	if (samples_done || !probe_active)
		return;
	samples_done = 1;
	probe_stopping = 1;
	probe_thread_stop_self();
	probe_threads_disable_all();
	/* Bounded: a sender stuck on a dead disk must not hang the exit. */
	if (lock_consumer() != 0)
		return;
	probe_sender_final(exit_budget_ms());
	pthread_mutex_unlock(&probe_consumer_lock);
#ifdef PROBE_HANDLER_TIMING
	if (probe_timing_n)
		probe_msg("handler: %llu calls, mean %llu ns, max %llu ns",
			  (unsigned long long)probe_timing_n,
			  (unsigned long long)(probe_timing_ns / probe_timing_n),
			  (unsigned long long)probe_timing_max);
#endif
}

static void send_exit(int status)
{
	if (exit_done || !probe_active)
		return;
	exit_done = 1;
	if (lock_consumer() != 0)
		return;
	probe_sender_exit(status, exit_budget_ms());
	pthread_mutex_unlock(&probe_consumer_lock);
}

static void probe_on_exit(int status, void *arg)
{
	(void)arg;
	finish_samples();
	send_exit(status & 0xff);
}

__attribute__((destructor))
static void probe_fini(void)
{
	finish_samples();
	if (!on_exit_ok)
		send_exit(-1);
}

/* ---- fork ---------------------------------------------------------------- */

static __thread sigset_t fork_mask;

static void fork_prepare(void)
{
	if (!probe_active)
		return;
	probe_block_signal(&fork_mask);
	pthread_mutex_lock(&probe_consumer_lock);
	pthread_mutex_lock(&probe_reg_lock);
}

static void fork_parent(void)
{
	if (!probe_active)
		return;
	pthread_mutex_unlock(&probe_reg_lock);
	pthread_mutex_unlock(&probe_consumer_lock);
	probe_restore_mask(&fork_mask);
}

static void fork_child(void)
{
	struct probe_thread *t;

	if (!probe_active)
		return;
	probe_sender_after_fork_child();
	probe_threads_after_fork_child();
	if (probe_stopping) {
		/* Forked while exiting: stay quiet in the child. */
		probe_active = 0;
		probe_restore_mask(&fork_mask);
		return;
	}
	probe_proc.pid = (uint32_t)getpid();
	probe_proc.ppid = (uint32_t)getppid();
	probe_proc.start_ns = probe_now_ns();
	samples_done = exit_done = 0;
	exit_deadline = 0;
	probe_output_after_fork_child();
	t = probe_self;
	if (t && probe_thread_open_first(t) == 0)
		probe_event_enable(t);
	if (probe_sender_start() < 0)
		probe_threads_disable_all();
	probe_restore_mask(&fork_mask);
}

/* ---- start --------------------------------------------------------------- */

__attribute__((constructor))
static void probe_init(void)
{
	struct probe_thread *t;
	int saved_errno = errno;

	probe_config_read();
	probe_loader_init();
	if (probe_thread_init() < 0)
		goto out;
	probe_proc_read();
	if (probe_output_open() < 0)
		goto out;
	probe_unwind_load();
	if (probe_handler_install() < 0)
		goto out;

	t = probe_thread_alloc();
	if (!t) {
		probe_msg("out of memory at start; not profiling");
		goto out;
	}
	probe_thread_attach_self(t);
	probe_thread_register(t);
	probe_thread_open_first(t);
	probe_threads_adopt_existing();

	if (probe_sender_start() < 0)
		goto out;
	probe_active = 1;
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	on_exit_ok = on_exit(probe_on_exit, NULL) == 0;
	probe_threads_enable_all();
out:
	errno = saved_errno;
}
