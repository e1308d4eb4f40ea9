/*
 * main.c - libprobe's lifecycle: start in the constructor, finish at exit,
 * start again in a fork child; the interposed exit, _exit and _Exit.
 *
 * Start (constructor, before main): read PROBE_*, open the output, load
 * libunwind, install the handlers, open the main thread's event (deciding
 * perf events or the CPU-time timer fallback, and the hardware ->
 * cpu-clock fallback), adopt threads that already exist, start the sender,
 * and only then enable the events.
 *
 * Finish: every way out ends in probe_finish(), which hands the work to
 * the sender thread and waits for it, bounded (about 1 s in all), so that
 * it is async-signal-safe and cannot hang: the exiting thread may be in a
 * signal handler, or a crash may have left malloc's lock held.
 *   - exit() (and return from main, and the last thread's pthread_exit,
 *     which glibc turns into exit(0)): the application's atexit handlers
 *     run, then the ELF destructors (from _dl_fini, ours among them), then
 *     the on_exit handler our constructor registered, which alone knows the
 *     status when main returned.  The destructor sends the samples (and
 *     EXIT when the interposed exit() told us the status); on_exit sends
 *     EXIT.  Without on_exit, the destructor sends EXIT with status -1.
 *   - _exit() / _Exit(): interposed; samples and EXIT, then the system call.
 *   - fatal signals the program leaves at SIG_DFL (handler.c): samples and
 *     EXIT with 128 + signal, then the same signal ends the process.
 *   - main() calling pthread_exit: glibc ends the process when its last
 *     thread ends, but the sender thread counts as one, so the sender
 *     notices that no application thread is left and calls exit(0) itself
 *     (sender.c); then the work is done on the sender, inline.
 * The status is the exit code (status & 0xff, as the parent sees it).
 *
 * fork() without exec: the child gets copies of our rings and of the
 * parent's connection.  The atfork child handler drops them (without
 * disabling: that would disable the parent's events), and starts over as a
 * new process: its own HELLO (pid, parent pid), connection (the file is
 * shared), sender and event for its one thread.  Threads it creates later
 * are covered as before.  The pid also tells a vfork child (which shares
 * our memory) or a child forked without the atfork handlers (_Fork, raw
 * clone) from the process we set up: probe_is_ours() is 0 there and every
 * interposed function just does the real thing.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

volatile int probe_active;
volatile int probe_stopping;

static int on_exit_ok;
static int final_requested, exit_requested;
static int exit_status = -1;            /* from the interposed exit() */
static uint64_t exit_deadline;          /* one ~1 s budget for all of exit */

#define EXIT_WAIT_NS 1000000000ull

int probe_is_ours(void)
{
	return probe_proc.pid != 0 && (uint32_t)getpid() == probe_proc.pid;
}

/* ---- finishing (async-signal-safe) -------------------------------------- */

static uint64_t deadline(void)
{
	uint64_t d = __atomic_load_n(&exit_deadline, __ATOMIC_ACQUIRE), z = 0;

	if (!d) {
		d = probe_now_ns() + EXIT_WAIT_NS;
		if (!__atomic_compare_exchange_n(&exit_deadline, &z, d, 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			d = z;
	}
	return d;
}

/* what: FINAL and/or EXIT wanted; status -1 with EXIT: unknown. */
static void finish(unsigned what, int status, int crash)
{
	struct probe_thread *t = probe_current_thread();
	sigset_t s;
	unsigned req = 0;

	if (!probe_active || !probe_is_ours())
		return;
	/* This thread samples no more; what its ring holds goes to the queue. */
	sigemptyset(&s);
	sigaddset(&s, probe_cfg.signo);
	probe_real_sigmask(SIG_BLOCK, &s, NULL);
	if (t && !t->in_handler && !t->closed) {
		t->in_handler = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		probe_drain_ring(t, NULL);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->in_handler = 0;
	}
	if ((what & PROBE_REQ_FINAL) &&
	    !__atomic_exchange_n(&final_requested, 1, __ATOMIC_ACQ_REL))
		req |= PROBE_REQ_FINAL | (crash ? PROBE_REQ_CRASH : 0);
	if ((what & PROBE_REQ_EXIT) &&
	    !__atomic_exchange_n(&exit_requested, 1, __ATOMIC_ACQ_REL))
		req |= PROBE_REQ_EXIT;
	if (req)
		probe_request(req, status, deadline());
}

void probe_finish(int status, int crash)
{
	finish(PROBE_REQ_FINAL | PROBE_REQ_EXIT, status, crash);
}

static void probe_on_exit(int status, void *arg)
{
	(void)arg;
	finish(PROBE_REQ_FINAL | PROBE_REQ_EXIT, status & 0xff, 0);
}

__attribute__((destructor))
static void probe_fini(void)
{
	int st = __atomic_load_n(&exit_status, __ATOMIC_ACQUIRE);

	if (st >= 0 || !on_exit_ok)
		finish(PROBE_REQ_FINAL | PROBE_REQ_EXIT, st, 0);
	else
		finish(PROBE_REQ_FINAL, -1, 0);
	probe_handler_stats_report();
	probe_unwind_check_report();
}

/* ---- exit, _exit, _Exit -------------------------------------------------- */

typedef void (*exit_fn)(int);
static exit_fn real_exit;

__attribute__((visibility("default"), noreturn))
void exit(int status)
{
	if (!real_exit)
		real_exit = (exit_fn)dlsym(RTLD_NEXT, "exit");
	if (probe_active && probe_is_ours())
		__atomic_store_n(&exit_status, status & 0xff, __ATOMIC_RELEASE);
	if (real_exit)
		real_exit(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

/* No destructors run: send what we have, then the system call, as glibc. */
static __attribute__((noreturn)) void quick_exit_now(int status)
{
	finish(PROBE_REQ_FINAL | PROBE_REQ_EXIT, status & 0xff, 0);
	for (;;)
		syscall(SYS_exit_group, status);
}

__attribute__((visibility("default"), noreturn))
void _exit(int status)
{
	quick_exit_now(status);
}

__attribute__((visibility("default"), noreturn))
void _Exit(int status)
{
	quick_exit_now(status);
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
	probe_handler_stats_reset();
	probe_proc.pid = (uint32_t)getpid();
	probe_proc.ppid = (uint32_t)getppid();
	probe_proc.start_ns = probe_now_ns();
	final_requested = exit_requested = 0;
	exit_status = -1;
	exit_deadline = 0;
	probe_main_exited = 0;
	probe_output_after_fork_child();
	t = probe_self;
	if (t)
		probe_thread_open_first(t);
	if (probe_sender_start() < 0) {
		probe_active = 0;
		if (t)
			probe_thread_stop_self();
	} else {
		probe_threads_enable_all();
	}
	probe_restore_mask(&fork_mask);
}

/* ---- start --------------------------------------------------------------- */

__attribute__((constructor))
static void probe_init(void)
{
	struct probe_thread *t;
	int saved_errno = errno;
	sigset_t cur, ours;

	if (!real_exit)
		real_exit = (exit_fn)dlsym(RTLD_NEXT, "exit");
	probe_fds_init();
	probe_exec_init();
	probe_config_read();
	probe_loader_init();
	if (probe_thread_init() < 0)
		goto out;
	probe_proc_read();
	if (probe_output_open() < 0)
		goto out;
	probe_unwind_load();
	probe_event_choose_signal();
	if (probe_handler_install() < 0)
		goto out;

	t = probe_thread_alloc();
	if (!t) {
		probe_msg("out of memory at start; not profiling");
		goto out;
	}
	/*
	 * Our signal blocked from the start (the exec'ing image had it blocked
	 * in its view): the program keeps that view, we unblock it for real.
	 */
	probe_real_sigmask(SIG_BLOCK, NULL, &cur);
	if (sigismember(&cur, probe_cfg.signo) == 1) {
		probe_app_blocked = 1;
		sigemptyset(&ours);
		sigaddset(&ours, probe_cfg.signo);
		probe_real_sigmask(SIG_UNBLOCK, &ours, NULL);
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
