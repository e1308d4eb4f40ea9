/*
 * main.c - libprobe's lifecycle: start in the constructor, finish at exit,
 * start again in a fork child; the interposed exit, _exit and _Exit.
 *
 * Start (constructor, before main): read PROBE_*, install the handlers
 * (libunwind is loaded later, when first needed: unwind.c), open the main
 * thread's event (deciding perf events or the CPU-time timer fallback, and
 * the hardware -> cpu-clock fallback), adopt threads that already exist,
 * and enable the events.  The arena, the connection to the collector (or
 * one started), HELLO and the MAPs come first where they must; under a
 * collector that is there already they wait for the first need, most
 * often the first sample (lazy.c): most short processes never take one.
 * No thread of ours is started: samples go from the handler into the
 * arena, and the collector takes them from there.
 *
 * Finish: the samples are in the arena already, where the collector reads
 * them even after a SIGKILL.  Every way out ends in probe_finish(), which
 * drains the exiting thread's perf ring into its slot and sends EXIT (with
 * a collector libprobe started, it then waits, bounded, for the collector
 * to say it saved this process's samples).  It is async-signal-safe: the
 * exiting thread may be in a signal handler, or a crash may have left
 * malloc's lock held.
 *   - exit() (and return from main, and the last thread's pthread_exit,
 *     which glibc turns into exit(0)): the application's atexit handlers
 *     run, then the ELF destructors (from _dl_fini, ours among them), then
 *     the on_exit handler our constructor registered, which alone knows the
 *     status when main returned.  The destructor sends the last MAPs and
 *     EXIT when the interposed exit() told us the status; otherwise on_exit
 *     sends EXIT.  Without on_exit, the destructor sends EXIT with status -1.
 *   - _exit() / _Exit(): interposed; EXIT, then the system call.
 *   - fatal signals the program leaves at SIG_DFL (handler.c): EXIT with
 *     128 + signal, then the same signal ends the process.
 * The status is the exit code (status & 0xff, as the parent sees it).
 *
 * fork() without exec: the child gets copies of our rings, of the parent's
 * arena mapping (shared: it must not write there) and of the parent's
 * connection.  The atfork child handler drops them (without disabling: that
 * would disable the parent's events), and starts over as a new process: an
 * event for its one thread, and its own arena, connection and HELLO (pid,
 * parent pid), now or at its first need (lazy.c).  Threads it creates
 * later are covered as before.  The pid also tells a vfork child (which
 * shares our memory) or a child forked without the atfork handlers (_Fork,
 * raw clone) from the process we set up: probe_is_ours() is 0 there and
 * every interposed function just does the real thing.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

volatile int probe_active;
volatile int probe_stopping;

static int on_exit_ok;
static int final_done, exit_sent;
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

/*
 * How to move probe off a signal the program uses too.  Under a debugger
 * a realtime signal stops the program at every sample unless the debugger
 * is told to pass it on (gdb names realtime signals by number: SIG40).
 */
static const char *other_signal(void)
{
	static char buf[256];
	int sig = SIGRTMIN + 6 != probe_cfg.signo ? 6 : 7;

	if (!probe_cfg.debugger)
		return "set PROBE_SIGNAL to a realtime signal the program does "
		       "not use";
	snprintf(buf, sizeof buf, "set PROBE_SIGNAL to a realtime signal the "
		 "program does not use, and tell the debugger to pass it on "
		 "quietly: PROBE_SIGNAL=RTMIN+%d and gdb's 'handle SIG%d nostop "
		 "noprint'", sig, SIGRTMIN + sig);
	return buf;
}

/* Say once what went wrong, counted.  Normal context (the end of exit). */
static void final_messages(void)
{
	static int said;
	uint64_t *u = probe_unprofiled, unprof = 0, untaken;
	unsigned stuck;

	if (said++)
		return;
	for (int i = 0; i < PROBE_UNPROF_MAX; i++)
		unprof += u[i];
	if (unprof)
		probe_msg("%llu of %u threads were not profiled: %llu for lack "
			  "of file descriptors (ulimit -n), %llu of memory, %llu "
			  "of room in the signal queue (ulimit -i), %llu refused "
			  "by the kernel, %llu for other reasons",
			  (unsigned long long)unprof, probe_threads_seen,
			  (unsigned long long)u[PROBE_UNPROF_FDS],
			  (unsigned long long)u[PROBE_UNPROF_MEM],
			  (unsigned long long)u[PROBE_UNPROF_SIGQ],
			  (unsigned long long)u[PROBE_UNPROF_REFUSED],
			  (unsigned long long)u[PROBE_UNPROF_OTHER]);
	if (__atomic_load_n(&probe_handler_replaced, __ATOMIC_RELAXED) ||
	    probe_handler_taken_over())
		probe_msg("the program installed its own handler for signal %d, "
			  "which probe samples with; probe kept sampling and "
			  "passed the signals that are not its own to the "
			  "program's handler (%s)", probe_cfg.signo,
			  other_signal());
	if (__atomic_load_n(&probe_block_attempts, __ATOMIC_RELAXED))
		probe_msg("the program blocks signal %d, which probe samples "
			  "with; probe kept it deliverable so those threads stayed "
			  "profiled, and held the program's own signal %d until it "
			  "unblocked it (%s)", probe_cfg.signo, probe_cfg.signo,
			  other_signal());
	if (__atomic_load_n(&probe_sigio_seen, __ATOMIC_RELAXED))
		probe_msg("the realtime signal queue was full (ulimit -i): "
			  "samples arrived as SIGIO instead, which probe took; "
			  "the program was not disturbed");
	stuck = probe_threads_stuck();
	if (stuck)
		probe_msg("%u thread%s blocked signal %d (probe's) by a means "
			  "probe cannot see, such as a raw system call; %s not "
			  "sampled while %s so", stuck, stuck == 1 ? "" : "s",
			  probe_cfg.signo, stuck == 1 ? "it was" : "they were",
			  stuck == 1 ? "it stayed" : "they stayed");
	/*
	 * A probe top or agent the program found by itself may come and go
	 * (a service restarted): what it missed is not the program's to say.
	 */
	if (probe_conn_watcher())
		return;
	untaken = probe_conn_ok() ? 0 : probe_arena_untaken();
	if (untaken)
		probe_msg("%llu samples of process %u could not be delivered: %s",
			  (unsigned long long)untaken, probe_proc.pid,
			  probe_conn_trouble()[0] ? probe_conn_trouble()
						  : "no connection to the collector");
	else if (probe_arena_overflowed())
		probe_msg("%llu samples of process %u could not be delivered: the "
			  "collector stopped reading (they are counted as lost in "
			  "the recording)", (unsigned long long)probe_arena_overflowed(),
			  probe_proc.pid);
	else if (probe_conn_dropped && probe_conn_trouble()[0])
		probe_msg("process %u could not tell the collector everything: "
			  "%s", probe_proc.pid, probe_conn_trouble());
}

/* A sample in t's ring that its handler has not taken (held by the exit). */
static int ring_holds(struct probe_thread *t)
{
	uint64_t tail;

	return probe_ring_pending(t, &tail) > 0;
}

/*
 * This thread samples no more; what its perf ring holds goes to its slot.
 * Then, once: the last MAPs (normal: not after a crash or from _exit, which
 * may be called in a signal handler) and EXIT, when the status is known.
 */
static void finish(int status, int normal, int send_exit)
{
	struct probe_thread *t = probe_current_thread();
	sigset_t s;

	if (!probe_active || !probe_is_ours())
		return;
	sigemptyset(&s);
	sigaddset(&s, probe_cfg.signo);
	probe_real_sigmask(SIG_BLOCK, &s, NULL);
	/* Not started (lazy.c): a sample its held signal would take starts it. */
	if (probe_lazy_waiting() && t && !t->closed && ring_holds(t))
		probe_lazy_start_signal();
	if (probe_lazy_waiting()) {
		probe_stopping = 1;
		if (normal && !__atomic_exchange_n(&final_done, 1, __ATOMIC_ACQ_REL))
			final_messages();
		if (send_exit && !__atomic_exchange_n(&exit_sent, 1, __ATOMIC_ACQ_REL))
			probe_lazy_exit(status);
		return;
	}
	/*
	 * Held (in_handler) here only by our code under a handler of the
	 * program's that is ending the process (exit in a SIGALRM handler
	 * that came while ours ran): it never runs again, and the ring is
	 * drained over it.  Its unfinished record is not published (a slot's
	 * head moves last), its perf record may be taken twice.  Before, the
	 * ring was left: the handler's last work went unsampled (tests/62).
	 */
	if (t && !t->closed) {
		probe_hold(t, PROBE_SP());
		probe_drain_all(t);
		probe_unhold(t);
		probe_offcpu_thread_end(t);
	}
	/* Before probe_stopping: their stacks are walked. */
	probe_offcpu_claim_all();
	probe_stopping = 1;
	if (normal && !__atomic_exchange_n(&final_done, 1, __ATOMIC_ACQ_REL)) {
		probe_announce_maps();
		final_messages();
	}
	if (send_exit && !__atomic_exchange_n(&exit_sent, 1, __ATOMIC_ACQ_REL))
		probe_announce_exit(status, deadline());
}

void probe_finish(int status)
{
	finish(status, 0, 1);
}

static void probe_on_exit(int status, void *arg)
{
	(void)arg;
	finish(status & 0xff, 1, 1);
}

__attribute__((destructor))
static void probe_fini(void)
{
	int st = __atomic_load_n(&exit_status, __ATOMIC_ACQUIRE);

	finish(st, 1, st >= 0 || !on_exit_ok);
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
	finish(status & 0xff, 0, 1);
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

/* ---- start ------------------------------------------------------------- */

/*
 * Arena, connection (anew to the same collector in a fork child) and this
 * thread's slot: now, not at the first need (lazy.c).  HELLO and the MAPs
 * are the caller's to send.
 */
static int make_own(struct probe_thread *t, int child)
{
	int err = 0;

	if (probe_arena_create() < 0 ||
	    (child ? probe_conn_open_now(&err) : probe_conn_open()) < 0)
		return -1;
	if (t)
		probe_thread_take_slot(t);
	return 0;
}

/* ---- fork ---------------------------------------------------------------- */

static __thread sigset_t fork_mask;

static void fork_prepare(void)
{
	if (!probe_active)
		return;
	probe_block_signal(&fork_mask);
	pthread_mutex_lock(&probe_reg_lock);
}

static void fork_parent(void)
{
	if (!probe_active)
		return;
	pthread_mutex_unlock(&probe_reg_lock);
	probe_restore_mask(&fork_mask);
}

/* The child could not get an arena or a connection: it is not profiled. */
static void fork_child_quiet(void)
{
	probe_active = 0;
	if (probe_self)
		probe_thread_stop_self();
}

static void fork_child(void)
{
	struct probe_thread *t;

	if (!probe_active)
		return;
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
	final_done = exit_sent = 0;
	exit_status = -1;
	exit_deadline = 0;
	probe_maps_after_fork_child();
	/* Its own arena and connection, now or at its first need (lazy.c). */
	probe_arena_drop();
	probe_conn_drop_inherited();
	probe_threads_after_fork_child();
	t = probe_self;
	if (t)
		probe_thread_open_first(t);
	if (probe_cfg.no_inherit) {
		fork_child_quiet();     /* --no-inherit: a fork child is not profiled */
		probe_restore_mask(&fork_mask);
		return;
	}
	if (probe_lazy_prepare() < 0 &&
	    (make_own(t, 1) < 0 || probe_announce_start() < 0))
		fork_child_quiet();
	else
		probe_threads_enable_all();
	probe_restore_mask(&fork_mask);
}

/* alloc.c's, in libprobe-alloc.so only (weak: NULL in the others). */
void probe_alloc_init(void) __attribute__((weak, visibility("hidden")));

/* PROBE_ALLOC without the allocator's wrappers: say so, sample none. */
static void alloc_check(void)
{
	if (probe_cfg.alloc && !probe_alloc_init) {
		probe_msg("PROBE_ALLOC needs libprobe-alloc.so in LD_PRELOAD (this "
			  "library has no allocator wrappers); allocations not sampled");
		probe_cfg.alloc = 0;
	}
}

/*
 * Can the start wait for the first need (lazy.c)?  Asked before anything
 * is made: where it cannot, the arena and the connection come first, as
 * threads that exist already take their slots as they are adopted.
 */
static int may_wait(void)
{
	const char *threads = probe_status_field("Threads");

	return probe_lazy_allowed() && threads && strtoul(threads, NULL, 10) == 1;
}

/* glibc gives constructors main's arguments: argv is /proc/self/cmdline's. */
__attribute__((constructor))
static void probe_init(int argc, char **argv, char **envp)
{
	struct probe_thread *t;
	int saved_errno = errno, wait, waiting;
	sigset_t cur, ours;

	if (!real_exit)
		real_exit = (exit_fn)dlsym(RTLD_NEXT, "exit");
	probe_fds_init();
	probe_exec_init();
	probe_lazy_init();
	probe_config_read();
	probe_loader_init();
	probe_offcpu_init();
	alloc_check();
	if (probe_thread_init() < 0)
		goto out;
	if (probe_cfg.not_ours)
		goto out;       /* --no-inherit: a descendant of the profiled process */
	(void)envp;
	probe_proc_read(argc > 0 ? argv : NULL);
	wait = may_wait();
	if (!wait && (probe_arena_create() < 0 || probe_conn_open() < 0))
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

	/* Wait for the first need (lazy.c), or make what was not made yet. */
	waiting = wait && probe_lazy_prepare() == 0;
	if (wait && !waiting && make_own(t, 0) < 0) {
		probe_thread_stop_self();
		goto out;
	}
	/* HELLO says the mode (perf or timer) open_first chose. */
	if (!waiting && probe_announce_start() < 0) {
		probe_msg("cannot reach the collector (%s); not profiling",
			  probe_conn_trouble()[0] ? probe_conn_trouble() : "send failed");
		probe_thread_stop_self();
		goto out;
	}
	probe_active = 1;
	if (probe_alloc_init)
		probe_alloc_init();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	on_exit_ok = on_exit(probe_on_exit, NULL) == 0;
	probe_threads_enable_all();
out:
	errno = saved_errno;
}
