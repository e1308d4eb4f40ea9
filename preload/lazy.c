/*
 * lazy.c - a process starts talking to the collector at its first need,
 * not at its start.
 *
 * Most processes a shell script or a build runs end before one sampling
 * period of CPU time (/bin/true takes 0.3 ms): they never take a sample.
 * Yet making the arena, connecting, taking a slot and sending HELLO and
 * MAPs cost each about 150 us of its start, and the collector work for
 * each (docs/performance.md).  So where it can, the constructor (and a fork
 * child) only opens the thread's event and prepares what the start sends:
 * the HELLO's fields (probe_proc) and the MAPs (built and held in maps.c's
 * batch).  The start itself - arena, connection, the thread's slot, HELLO,
 * the held MAPs - waits for the first of:
 *   - the first sample, in our handler: everything it does is system
 *     calls on prepared memory (async-signal-safe), on the process's only
 *     thread, our signal blocked;
 *   - a moment that needs the collector: pthread_create (so the start
 *     always runs while there is one thread), dlopen and dlclose (new
 *     MAPs), a static program about to be run (UNPROFILED), and a change
 *     of user (setuid and its kin: the collector takes connections from
 *     the user that started it, and the user it profiles is who connects);
 *   - the exit, with a sample still in the ring (its signal held by the
 *     exit path).
 * A process that ends with none of them sends one record as it ends: HELLO
 * without an arena (PROBE_HELLO_NOARENA), SYNC and EXIT, so the recording
 * still names it, its parent and its status.  What that record costs is a
 * connection; what a process that never samples no longer pays is the
 * arena, its slot, the MAPs and their handling in the collector.
 *
 * It waits only where nothing else needs the start: a collector already
 * there (PROBE_SOCKET: probe record or probe top; not the one libprobe
 * starts, whose exit handshake needs the connection), perf events (the
 * timer fallback samples on a CPU-time timer of its own), one thread, no
 * --alloc or --off-cpu (their samples come from interposed calls, not our
 * signal), and MAPs that fit one record.  PROBE_LAZY=0 starts at once.
 *
 * A start that fails says why, once, as the constructor would have, and
 * the process runs on unprofiled (its event closed).
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe.h"

static int waiting;                     /* the start waits; one thread */

int probe_lazy_waiting(void)
{
	return __atomic_load_n(&waiting, __ATOMIC_ACQUIRE);
}

/* What the configuration allows: PROBE_*, before anything is made. */
int probe_lazy_allowed(void)
{
	return !probe_cfg.eager && !probe_cfg.alloc && !probe_cfg.offcpu &&
	       probe_cfg.socket_path[0] && !getenv("PROBE_EXIT_ACK");
}

/*
 * Constructor or fork child (normal context, one thread, its event open,
 * not yet enabled): wait for the start?  0: waiting; -1: start at once.
 */
int probe_lazy_prepare(void)
{
	waiting = 0;
	if (!probe_lazy_allowed() || probe_mode != PROBE_MODE_PERF ||
	    probe_nadopted || probe_arena || probe_conn_prepare() < 0 ||
	    probe_maps_hold(probe_proc.pid) < 0)
		return -1;
	waiting = 1;
	return 0;
}

/* ---- async-signal-safe from here on ------------------------------------- */

static void conn_failed(int err)
{
	probe_say("cannot connect to the collector at ", probe_conn_path(), " (",
		  err == EACCES ? "permission denied: another user's collector" :
		  probe_strerror(err), "); not profiling", NULL);
}

/* It cannot start: closed events, nothing interposed does anything more. */
static void give_up(void)
{
	probe_active = 0;
	probe_thread_pause_self();
}

/* The start, every signal blocked (start() says why). */
static void start_masked(void)
{
	struct probe_thread *t = probe_current_thread();
	int err = 0;

	__atomic_store_n(&waiting, 0, __ATOMIC_RELEASE);
	if (probe_arena_create() < 0) {         /* it said why */
		give_up();
		return;
	}
	if (probe_conn_open_now(&err) < 0) {
		conn_failed(err);
		probe_arena_drop();
		give_up();
		return;
	}
	if (t)
		probe_thread_take_slot(t);
	if (probe_announce_start_held() < 0) {
		probe_say("cannot reach the collector (", probe_conn_trouble()[0] ?
			  probe_conn_trouble() : "send failed", "); not profiling", NULL);
		give_up();
	}
}

/*
 * The start; our signal is blocked, and this is the only thread.  Every
 * other signal waits too: a program's handler run in the middle of it
 * might never return (exit, siglongjmp) and leave half a start (tests/61,
 * nested_exit).  They wait as long as the start takes, once.
 */
static void start(void)
{
	sigset_t all, old;

	sigfillset(&all);
	probe_real_sigmask(SIG_BLOCK, &all, &old);
	start_masked();
	probe_real_sigmask(SIG_SETMASK, &old, NULL);
}

/* errno is the program's: its setuid() or dlopen() sets it, not our start. */
void probe_lazy_start_now(void)
{
	sigset_t old;
	int e = errno;

	if (!probe_lazy_waiting() || !probe_is_ours())
		return;
	probe_block_signal(&old);
	if (probe_lazy_waiting())
		start();
	probe_restore_mask(&old);
	errno = e;
}

/* SIGNAL CONTEXT: our handler, the first sample (our signal is blocked). */
void probe_lazy_start_signal(void)
{
	if (probe_lazy_waiting() && !probe_stopping)
		start();
}

/* The exit path, still waiting: who it was and how it ended. */
void probe_lazy_exit(int status)
{
	int err = 0;

	if (!probe_lazy_waiting())
		return;
	__atomic_store_n(&waiting, 0, __ATOMIC_RELEASE);
	if (probe_announce_gone(status, &err) < 0)
		conn_failed(err);
}

/* ---- a change of user: start first (normal context) ---------------------- */

typedef int (*id1_fn)(uid_t);
typedef int (*id2_fn)(uid_t, uid_t);
typedef int (*id3_fn)(uid_t, uid_t, uid_t);
static id1_fn real_setuid, real_seteuid;
static id2_fn real_setreuid;
static id3_fn real_setresuid;

/* Resolved at start: setuid is async-signal-safe, dlsym is not. */
void probe_lazy_init(void)
{
	real_setuid = (id1_fn)dlsym(RTLD_NEXT, "setuid");
	real_seteuid = (id1_fn)dlsym(RTLD_NEXT, "seteuid");
	real_setreuid = (id2_fn)dlsym(RTLD_NEXT, "setreuid");
	real_setresuid = (id3_fn)dlsym(RTLD_NEXT, "setresuid");
}

#define NO_REAL(f) do { if (!(f)) { errno = ENOSYS; return -1; } } while (0)

__attribute__((visibility("default")))
int setuid(uid_t u)
{
	NO_REAL(real_setuid);
	probe_lazy_start_now();
	return real_setuid(u);
}

__attribute__((visibility("default")))
int seteuid(uid_t u)
{
	NO_REAL(real_seteuid);
	probe_lazy_start_now();
	return real_seteuid(u);
}

__attribute__((visibility("default")))
int setreuid(uid_t r, uid_t e)
{
	NO_REAL(real_setreuid);
	probe_lazy_start_now();
	return real_setreuid(r, e);
}

__attribute__((visibility("default")))
int setresuid(uid_t r, uid_t e, uid_t s)
{
	NO_REAL(real_setresuid);
	probe_lazy_start_now();
	return real_setresuid(r, e, s);
}
