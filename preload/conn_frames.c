/*
 * conn_frames.c - what the process tells the collector over its connection
 * (conn.c is the connection itself): HELLO (who it is, with the arena's
 * descriptor), MAPs (maps.c), SYNC and EXIT, through probe_announce_*.
 * Samples do not come this way: they are in the arena.
 *
 * Who sends, and when (no thread of ours does it):
 *   - start (constructor, fork child, a new connection; or the first need
 *     of a process whose start waited, lazy.c): HELLO with the arena, then
 *     the MAPs of every loaded object;
 *   - the end of a process whose start waited and never came: HELLO
 *     without an arena, SYNC and EXIT, on a connection of its own;
 *   - dlopen/dlclose (loader.c), pthread_create and the exit path: SYNC and
 *     the MAPs of objects loaded since (and a look at our handler).  SYNC carries the time: the
 *     collector reads the arena's records taken before it first, so that
 *     samples in an unloaded object are never named after what a later
 *     dlopen put at the same address.  Objects loaded behind our back
 *     (glibc's own NSS modules, dlmopen) are named at the next of these;
 *   - exit: EXIT with the status, then (with a collector libprobe started)
 *     a bounded wait for its word that everything is saved.
 * The exit path may be in a signal handler: what it sends is built on the
 * stack and sent with one sendmsg, and after a crash it scans no maps (the
 * loader's lock may be held by the crashed thread).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#define ARGS_MAX (64u * 1024)           /* argv bytes carried in HELLO */

struct probe_proc probe_proc;

uint64_t probe_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* argv as /proc/self/cmdline has it: NUL-terminated strings, cut at cap. */
static size_t args_join(char **argv, char *to, size_t cap)
{
	size_t n = 0;

	for (; *argv && n < cap; argv++) {
		size_t k = strnlen(*argv, cap - n - 1) + 1;

		if (n + k > cap)
			break;
		memcpy(to + n, *argv, k - 1);
		to[n + k - 1] = 0;
		n += k;
	}
	return n;
}

/*
 * argv: the constructor's (glibc passes it; no file to read), the same
 * strings /proc/self/cmdline shows until the program changes them.
 */
void probe_proc_read(char **argv)
{
	ssize_t n;
	char comm[17] = "";

	probe_proc.pid = (uint32_t)getpid();
	probe_proc.ppid = (uint32_t)getppid();
	probe_proc.start_ns = probe_now_ns();
	n = readlink("/proc/self/exe", probe_proc.exe, sizeof probe_proc.exe - 1);
	probe_proc.exe[n > 0 ? n : 0] = 0;
	prctl(PR_GET_NAME, comm, 0, 0, 0);
	memcpy(probe_proc.comm, comm, sizeof probe_proc.comm);
	free(probe_proc.args);
	probe_proc.args = malloc(ARGS_MAX);
	probe_proc.args_len = !probe_proc.args ? 0 : argv ?
		args_join(argv, probe_proc.args, ARGS_MAX) :
		probe_read_file("/proc/self/cmdline", probe_proc.args, ARGS_MAX);
}

#define HELLO_CAP (PROBE_FRAME_HDR + 128 + 2 * PATH_MAX + ARGS_MAX + \
		   PROBE_MAX_ARGS * 2 + PROBE_EVENTS_MAX * 80)

/*
 * A start that waited (lazy.c) builds its record here: in our handler, or
 * at exit, on the process's only thread, once.  Untouched until then.
 */
static uint8_t lazy_buf[HELLO_CAP + 128];

/*
 * HELLO into w for process pid (child of ppid), with these flags besides
 * the kernel's.  Async-signal-safe.
 */
static void put_hello(struct probe_wbuf *w, uint32_t pid, uint32_t ppid, unsigned more)
{
	size_t at, i, argc = 0, nx, xalloc;
	const char *a = probe_proc.args;

	at = probe_frame_begin(w, PROBE_F_HELLO, pid);
	probe_put_u32(w, PROBE_WIRE_VERSION);
	probe_put_u32(w, ppid);
	if (probe_mode == PROBE_MODE_TIMER) {
		/* CPU time, whatever event was asked for. */
		probe_put_u32(w, PROBE_EVENT_TIMER);
		probe_put_u64(w, 0);
	} else {
		probe_put_u32(w, probe_cfg.type);
		probe_put_u64(w, probe_cfg.config);
	}
	probe_put_u8(w, probe_cfg.freq ? 1 : 0);
	probe_put_u64(w, probe_cfg.value);
	probe_put_u64(w, probe_proc.start_ns);
	probe_put_str(w, probe_mode == PROBE_MODE_TIMER ? "cpu-clock"
						       : probe_cfg.event_name);
	probe_put_str(w, probe_proc.exe);
	probe_put_str(w, probe_proc.comm);
	/* cmdline: NUL-terminated strings; the last may be cut by ARGS_MAX. */
	for (i = 0; a && i < probe_proc.args_len && argc < PROBE_MAX_ARGS; argc++)
		i += strnlen(a + i, probe_proc.args_len - i) + 1;
	probe_put_u16(w, argc);
	for (i = 0; argc > 0; argc--) {
		size_t n = strnlen(a + i, probe_proc.args_len - i);
		char tmp[PROBE_STR_MAX + 1];

		if (n > PROBE_STR_MAX)
			n = PROBE_STR_MAX;
		memcpy(tmp, a + i, n);
		tmp[n] = 0;
		probe_put_str(w, tmp);
		i += strnlen(a + i, probe_proc.args_len - i) + 1;
	}
	nx = probe_mode != PROBE_MODE_TIMER ? probe_cfg.nextra : 0;
	xalloc = probe_cfg.alloc && probe_mode != PROBE_MODE_NONE;
	if (nx || probe_cfg.offcpu || xalloc) {
		/* --off-cpu, then --alloc: the last extra events (their
		 * indexes probe_offcpu_ev(), probe_alloc_ev()). */
		probe_put_u8(w, (uint8_t)(nx + (probe_cfg.offcpu != 0) + xalloc));
		for (i = 0; i < nx; i++) {
			probe_put_u32(w, probe_cfg.extra[i].type);
			probe_put_u64(w, probe_cfg.extra[i].config);
			probe_put_str(w, probe_cfg.extra[i].name);
		}
		if (probe_cfg.offcpu) {
			probe_put_u32(w, PROBE_EVENT_OFFCPU);
			probe_put_u64(w, PROBE_OFFCPU_WRAPPERS | PROBE_OFFCPU_CLOCKS |
					  PROBE_OFFCPU_WAKES);
			probe_put_str(w, "off-cpu");
		}
		if (xalloc) {
			probe_put_u32(w, PROBE_EVENT_ALLOC);
			probe_put_u64(w, probe_cfg.alloc);
			probe_put_str(w, "alloc");
		}
	}
	probe_frame_end(w, at);
	if (w->ok) {
		unsigned fl = PROBE_HELLO_KSTATE | more;

		if (probe_mode == PROBE_MODE_TIMER)
			fl |= PROBE_HELLO_KWHY_TIMER << PROBE_HELLO_KWHY_SHIFT;
		else if (probe_cfg.kernel)
			fl |= PROBE_HELLO_KERNEL;
		else
			fl |= ((unsigned)probe_cfg.kernel_why << PROBE_HELLO_KWHY_SHIFT) &
			      PROBE_HELLO_KWHY_MASK;
		if (probe_mode != PROBE_MODE_TIMER && probe_cfg.modifier &&
		    !(probe_cfg.modifier & PROBE_MOD_USER))
			fl |= PROBE_HELLO_NOUSER;
		w->p[at + 6] = (uint8_t)fl;     /* the frame's u16 flags */
		w->p[at + 7] = (uint8_t)(fl >> 8);
	}
}

/* HELLO, with the arena's descriptor, built in b.  Async-signal-safe. */
static int send_hello(uint8_t *b, size_t cap)
{
	struct probe_wbuf w;

	probe_wbuf_init(&w, b, cap);
	put_hello(&w, probe_proc.pid, probe_proc.ppid, 0);
	return w.ok ? probe_conn_send_fd(w.p, w.len, probe_arena_fd_ok()) : -1;
}

int probe_announce_start(void)
{
	uint8_t *b = malloc(HELLO_CAP);
	int r = b ? send_hello(b, HELLO_CAP) : -1;

	free(b);
	if (r < 0)
		return -1;
	probe_maps_scan(probe_proc.pid, PROBE_MAPS_ALL);
	return 0;
}

int probe_announce_start_held(void)
{
	if (send_hello(lazy_buf, sizeof lazy_buf) < 0)
		return -1;
	probe_maps_send_held();
	return 0;
}

/*
 * Normal context (dlopen, dlclose, pthread_create, exit): a new connection
 * starts over; else new objects' MAPs.  And our handler is checked: one
 * replaced by a raw rt_sigaction is put back (the program's stays its
 * view), and said at exit.
 */
void probe_announce_maps(void)
{
	/* A start that waited (lazy.c): now, with the MAPs held, then new ones. */
	probe_lazy_start_now();
	if (!probe_active)
		return;
	if (probe_handler_taken_over())
		__atomic_store_n(&probe_handler_replaced, 1, __ATOMIC_RELAXED);
	probe_conn_check();
	if (probe_conn_restarted()) {
		probe_announce_start();
		return;
	}
	probe_maps_scan(probe_proc.pid, PROBE_MAPS_SYNC);
}

/* SYNC into w: the collector takes the arena's records up to now first. */
void probe_put_sync(struct probe_wbuf *w)
{
	probe_put_sync_at(w, probe_now_ns());
}

/* The same, up to time t. */
void probe_put_sync_at(struct probe_wbuf *w, uint64_t t)
{
	size_t at = probe_frame_begin(w, PROBE_F_SYNC, probe_proc.pid);

	probe_put_u64(w, t);
	probe_frame_end(w, at);
}

/* Samples taken by this process: every slot's count (they only grow). */
static uint64_t total_samples(void)
{
	struct probe_arena *a = probe_arena;
	uint64_t n = 0;

	if (!a)
		return 0;
	for (uint32_t i = 0; i < a->slots_used && i < PROBE_ARENA_SLOTS; i++)
		n += __atomic_load_n(&a->slots[i].samples, __ATOMIC_RELAXED);
	return n;
}

/* SYNC and EXIT into w.  status: exit code, 128 + signal, or -1 unknown. */
static void put_exit(struct probe_wbuf *w, int status)
{
	size_t at;

	probe_put_sync(w);
	at = probe_frame_begin(w, PROBE_F_EXIT, probe_proc.pid);
	probe_put_u32(w, (uint32_t)status);
	probe_put_u64(w, total_samples());
	probe_put_u32(w, probe_threads_seen);
	probe_frame_end(w, at);
}

/* Async-signal-safe. */
void probe_announce_exit(int status, uint64_t deadline)
{
	uint8_t b[64];
	struct probe_wbuf w;

	probe_wbuf_init(&w, b, sizeof b);
	put_exit(&w, status);
	if (w.ok && probe_conn_send(w.p, w.len) == 0)
		probe_conn_wait_ack(deadline);
}

/*
 * A process that ended before its start (lazy.c): who it was, no arena,
 * and how it ended, in one record.  Async-signal-safe.
 */
int probe_announce_gone(int status, int *err)
{
	struct probe_wbuf w;

	probe_wbuf_init(&w, lazy_buf, sizeof lazy_buf);
	put_hello(&w, probe_proc.pid, probe_proc.ppid, PROBE_HELLO_NOARENA);
	put_exit(&w, status);
	*err = EMSGSIZE;
	return w.ok ? probe_conn_send_once(w.p, w.len, err, 0) : -1;
}

/*
 * A vfork child of a process that has not started (lazy.c), about to exec
 * what will not be profiled, says so itself on a connection of its own:
 * HELLO without an arena, as itself (the collector checks the pid), then
 * frame (made under its pid), then, until reply_deadline (0: none), the
 * collector's one byte.  It shares its parent's memory: it writes only
 * its stack and lazy_buf, which nothing uses while the parent waits.
 * Async-signal-safe.
 */
int probe_announce_child_once(const void *frame, size_t n, uint64_t reply_deadline)
{
	struct probe_wbuf w;
	int err;

	probe_wbuf_init(&w, lazy_buf, sizeof lazy_buf);
	put_hello(&w, (uint32_t)getpid(), (uint32_t)getppid(), PROBE_HELLO_NOARENA);
	probe_put_bytes(&w, frame, n);
	return w.ok ? probe_conn_send_once(w.p, w.len, &err, reply_deadline) : -1;
}
