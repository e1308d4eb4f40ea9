/*
 * conn_frames.c - what the process tells the collector over its connection
 * (conn.c is the connection itself): HELLO (who it is, with the arena's
 * descriptor), MAPs (maps.c), SYNC and EXIT, through probe_announce_*.
 * Samples do not come this way: they are in the arena.
 *
 * Who sends, and when (no thread of ours does it):
 *   - start (constructor, fork child, a new connection): HELLO with the
 *     arena, then the MAPs of every loaded object;
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

void probe_proc_read(void)
{
	ssize_t n;
	size_t m;

	probe_proc.pid = (uint32_t)getpid();
	probe_proc.ppid = (uint32_t)getppid();
	probe_proc.start_ns = probe_now_ns();
	n = readlink("/proc/self/exe", probe_proc.exe, sizeof probe_proc.exe - 1);
	probe_proc.exe[n > 0 ? n : 0] = 0;
	m = probe_read_file("/proc/self/comm", probe_proc.comm, 16);
	probe_proc.comm[m] = 0;
	if (m && probe_proc.comm[m - 1] == '\n')
		probe_proc.comm[m - 1] = 0;
	free(probe_proc.args);
	probe_proc.args = malloc(ARGS_MAX);
	probe_proc.args_len = probe_proc.args ?
		probe_read_file("/proc/self/cmdline", probe_proc.args, ARGS_MAX) : 0;
}

/* HELLO, with the arena's descriptor.  Normal context. */
static int send_hello(void)
{
	size_t cap = PROBE_FRAME_HDR + 128 + 2 * PATH_MAX + ARGS_MAX +
		     PROBE_MAX_ARGS * 2 + PROBE_EVENTS_MAX * 80;
	uint8_t *b = malloc(cap);
	struct probe_wbuf w;
	size_t at, i, argc = 0, nx, xalloc;
	const char *a = probe_proc.args;
	int r;

	if (!b)
		return -1;
	probe_wbuf_init(&w, b, cap);
	at = probe_frame_begin(&w, PROBE_F_HELLO, probe_proc.pid);
	probe_put_u32(&w, PROBE_WIRE_VERSION);
	probe_put_u32(&w, probe_proc.ppid);
	if (probe_mode == PROBE_MODE_TIMER) {
		/* CPU time, whatever event was asked for. */
		probe_put_u32(&w, PROBE_EVENT_TIMER);
		probe_put_u64(&w, 0);
	} else {
		probe_put_u32(&w, probe_cfg.type);
		probe_put_u64(&w, probe_cfg.config);
	}
	probe_put_u8(&w, probe_cfg.freq ? 1 : 0);
	probe_put_u64(&w, probe_cfg.value);
	probe_put_u64(&w, probe_proc.start_ns);
	probe_put_str(&w, probe_mode == PROBE_MODE_TIMER ? "cpu-clock"
						       : probe_cfg.event_name);
	probe_put_str(&w, probe_proc.exe);
	probe_put_str(&w, probe_proc.comm);
	/* cmdline: NUL-terminated strings; the last may be cut by ARGS_MAX. */
	for (i = 0; i < probe_proc.args_len && argc < PROBE_MAX_ARGS; argc++)
		i += strnlen(a + i, probe_proc.args_len - i) + 1;
	probe_put_u16(&w, argc);
	for (i = 0; argc > 0; argc--) {
		size_t n = strnlen(a + i, probe_proc.args_len - i);
		char tmp[PROBE_STR_MAX + 1];

		if (n > PROBE_STR_MAX)
			n = PROBE_STR_MAX;
		memcpy(tmp, a + i, n);
		tmp[n] = 0;
		probe_put_str(&w, tmp);
		i += strnlen(a + i, probe_proc.args_len - i) + 1;
	}
	nx = probe_mode != PROBE_MODE_TIMER ? probe_cfg.nextra : 0;
	xalloc = probe_cfg.alloc && probe_mode != PROBE_MODE_NONE;
	if (nx || probe_cfg.offcpu || xalloc) {
		/* --off-cpu, then --alloc: the last extra events (their
		 * indexes probe_offcpu_ev(), probe_alloc_ev()). */
		probe_put_u8(&w, (uint8_t)(nx + (probe_cfg.offcpu != 0) + xalloc));
		for (i = 0; i < nx; i++) {
			probe_put_u32(&w, probe_cfg.extra[i].type);
			probe_put_u64(&w, probe_cfg.extra[i].config);
			probe_put_str(&w, probe_cfg.extra[i].name);
		}
		if (probe_cfg.offcpu) {
			probe_put_u32(&w, PROBE_EVENT_OFFCPU);
			probe_put_u64(&w, PROBE_OFFCPU_WRAPPERS | PROBE_OFFCPU_CLOCKS |
					   PROBE_OFFCPU_WAKES);
			probe_put_str(&w, "off-cpu");
		}
		if (xalloc) {
			probe_put_u32(&w, PROBE_EVENT_ALLOC);
			probe_put_u64(&w, probe_cfg.alloc);
			probe_put_str(&w, "alloc");
		}
	}
	probe_frame_end(&w, at);
	if (w.ok) {
		unsigned fl = PROBE_HELLO_KSTATE;

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
		w.p[at + 6] = (uint8_t)fl;      /* the frame's u16 flags */
		w.p[at + 7] = (uint8_t)(fl >> 8);
	}
	r = w.ok ? probe_conn_send_fd(w.p, w.len, probe_arena_fd_ok()) : -1;
	free(b);
	return r;
}

int probe_announce_start(void)
{
	if (send_hello() < 0)
		return -1;
	probe_maps_scan(probe_proc.pid, PROBE_MAPS_ALL);
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

/* Async-signal-safe.  status: exit code, 128 + signal, or -1 unknown. */
void probe_announce_exit(int status, uint64_t deadline)
{
	uint8_t b[64];
	struct probe_wbuf w;
	size_t at;

	probe_wbuf_init(&w, b, sizeof b);
	probe_put_sync(&w);
	at = probe_frame_begin(&w, PROBE_F_EXIT, probe_proc.pid);
	probe_put_u32(&w, (uint32_t)status);
	probe_put_u64(&w, total_samples());
	probe_put_u32(&w, probe_threads_seen);
	probe_frame_end(&w, at);
	if (w.ok && probe_conn_send(w.p, w.len) == 0)
		probe_conn_wait_ack(deadline);
}
