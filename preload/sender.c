/*
 * sender.c - the sender thread: per-thread queues -> wire frames -> output.
 *
 * Created with the real pthread_create (so it has no event and is never
 * sampled) and with every signal blocked.  Every ~10 ms (50 ms when idle):
 *   1. HELLO once (this process's identity and event),
 *   2. MAP frames for objects loaded since the last pass (maps.c), before
 *      any sample that could point into them,
 *   3. for each thread: THREAD when first seen and when its name changes
 *      (checked about once a second, and at its end), its queued samples as
 *      SAMPLES batches, and LOST deltas of its counters,
 *   4. a non-blocking flush of the output.
 * A closed thread (it ended) is freed once its queue is drained.  Every
 * pass it checks that our handler is still installed (a raw rt_sigaction
 * could have replaced it), and about once a second that no thread has our
 * signal blocked behind our back; it says once what it found.
 *
 * Requests (probe_request): the exec and exit paths never do this work
 * themselves - they may be in a signal handler, or a crash may have left
 * malloc's lock held - but ask the sender (a futex wakes it) and wait for
 * it, bounded by a deadline.  FLUSH sends everything queued now (exec),
 * FINAL stops sampling and sends everything with the messages of the run's
 * end, EXIT sends the EXIT frame; then the sender stops.  Without the
 * CRASH bit the sender also scans for new objects; with it (a fatal
 * signal) it does nothing that could need a lock the crashed thread holds
 * besides ours.  PASS (dlopen/dlclose, loader.c) is one ordinary pass now,
 * so that MAPs and samples leave in the order maps.c needs.
 *
 * A pass that finds objects unloaded since the last one drains the queues
 * before sending the MAPs of what was loaded since (maps.c).
 *
 * The consumer lock makes one pass exclusive; fork's prepare handler takes
 * it so that the child inherits consistent state.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#define BATCH_MAX (256u * 1024)         /* encoded SAMPLES frame, about */
#define SCRATCH (BATCH_MAX + 64 * 1024)
#define ARGS_MAX (64u * 1024)           /* argv bytes carried in HELLO */
#define TICK_MS 10
#define IDLE_TICK_MS 50
#define NAME_CHECK_NS 1000000000ull
#define CHECK_NS 1000000000ull          /* handler and blocked-thread checks */

struct probe_proc probe_proc;
pthread_mutex_t probe_consumer_lock = PTHREAD_MUTEX_INITIALIZER;

static uint8_t *scratch;
static int sender_quit;
static int hello_sent;
static uint64_t lost_socket;            /* samples dropped, not yet reported */
static uint64_t samples_freed;          /* samples of threads already freed */
static uint64_t last_name_check;
static uint64_t last_check;
static unsigned stuck_threads;
static int said_replaced, said_sigio, said_stuck, said_blocked;

/* Requests: futex words, written by any thread, in any context. */
static unsigned req_seq, done_seq, req_what;
static int req_status;
static uint64_t req_deadline;
static pid_t sender_tid;
static int sender_running;
static int exit_sent;

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

/* ---- frames ------------------------------------------------------------- */

static void emit(struct probe_wbuf *w)
{
	if (w->ok)
		probe_output_append(w->p, w->len, 0);
}

static void send_hello(void)
{
	struct probe_wbuf w;
	size_t at, i, argc = 0;
	const char *a = probe_proc.args;

	probe_wbuf_init(&w, scratch, SCRATCH);
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
	probe_frame_end(&w, at);
	emit(&w);
}

static void send_thread(uint32_t tid, const char *name)
{
	uint8_t b[64];
	struct probe_wbuf w;
	size_t at;

	probe_wbuf_init(&w, b, sizeof b);
	at = probe_frame_begin(&w, PROBE_F_THREAD, probe_proc.pid);
	probe_put_u32(&w, tid);
	probe_put_str(&w, name);
	probe_frame_end(&w, at);
	emit(&w);
}

static void send_lost(uint32_t tid, unsigned reason, uint64_t count)
{
	uint8_t b[64];
	struct probe_wbuf w;
	size_t at;

	probe_wbuf_init(&w, b, sizeof b);
	at = probe_frame_begin(&w, PROBE_F_LOST, probe_proc.pid);
	probe_put_u32(&w, tid);
	probe_put_u32(&w, reason);
	probe_put_u64(&w, count);
	probe_frame_end(&w, at);
	emit(&w);
}

static void send_exit(int status, uint64_t samples, uint32_t threads)
{
	uint8_t b[64];
	struct probe_wbuf w;
	size_t at;

	probe_wbuf_init(&w, b, sizeof b);
	at = probe_frame_begin(&w, PROBE_F_EXIT, probe_proc.pid);
	probe_put_u32(&w, (uint32_t)status);
	probe_put_u64(&w, samples);
	probe_put_u32(&w, threads);
	probe_frame_end(&w, at);
	emit(&w);
}

/*
 * Bytes the batch's sample count takes: a fixed-width LEB128 varint (every
 * byte but the last carries the continuation bit; readers take non-minimal
 * varints as usual), so the count can be written after the samples.
 */
#define COUNT_BYTES 3u                  /* up to 2^21 samples a batch */

static void put_count(uint8_t *at, uint64_t count)
{
	for (unsigned i = 0; i < COUNT_BYTES; i++, count >>= 7)
		at[i] = (uint8_t)((count & 0x7f) | (i + 1 < COUNT_BYTES ? 0x80 : 0));
}

/*
 * All of t's queued samples, in SAMPLES frames of about BATCH_MAX bytes.
 * Returns how full the queue was, in words.
 */
static uint64_t drain_queue(struct probe_thread *t)
{
	struct probe_queue *q = &t->q;
	uint64_t end = probe_queue_snapshot(q);
	uint64_t pos = q->tail;
	uint64_t fill = end - pos;
	struct probe_qrec r;

	/*
	 * One pass per batch.  A thread's queue is in time order (one producer,
	 * the thread itself, appending as its samples are taken), so the first
	 * sample's time is the batch's base and every dt is >= 0.
	 */
	while (probe_queue_read(q, &pos, end, &r)) {
		uint64_t base = r.time, count = 0;
		struct probe_wbuf w;
		size_t at, count_at;

		probe_wbuf_init(&w, scratch, SCRATCH);
		at = probe_frame_begin(&w, PROBE_F_SAMPLES, probe_proc.pid);
		probe_put_u64(&w, base);
		count_at = w.len;
		probe_put_bytes(&w, "\0\0\0", COUNT_BYTES);
		do {
			uint64_t prev = 0;

			probe_put_uv(&w, r.tid);
			probe_put_uv(&w, r.time - base);
			probe_put_uv(&w, r.period);
			probe_put_uv(&w, 0);
			probe_put_uv(&w, r.nframes);
			for (uint32_t i = 0; i < r.nframes; i++) {
				uint64_t f = probe_queue_frame(q, &r, i);

				probe_put_sv(&w, (int64_t)(f - prev));
				prev = f;
			}
			count++;
			/* SCRATCH - BATCH_MAX leaves room for one more whole sample. */
		} while (w.len < BATCH_MAX && probe_queue_read(q, &pos, end, &r));
		put_count(w.p + count_at, count);
		probe_frame_end(&w, at);
		if (!w.ok || probe_output_append(w.p, w.len, count) < 0)
			lost_socket += count;
	}
	probe_queue_release(q, end);
	return fill;
}

static void report_lost(struct probe_thread *t)
{
	for (unsigned r = 1; r < PROBE_LOST_REASON_MAX; r++) {
		uint64_t cur = __atomic_load_n(&t->lost[r], __ATOMIC_RELAXED);

		if (cur != t->lost_sent[r]) {
			send_lost((uint32_t)t->tid, r, cur - t->lost_sent[r]);
			t->lost_sent[r] = cur;
		}
	}
}

static void announce(struct probe_thread *t, const char *name)
{
	if (t->announced && strcmp(name, t->sent_name) == 0)
		return;
	snprintf(t->sent_name, sizeof t->sent_name, "%s", name);
	t->announced = 1;
	send_thread((uint32_t)t->tid, name);
}

/*
 * Does thread tid have our signal blocked (its SigBlk)?  Asked only when
 * its ring has waited for a second.
 */
static int blocks_our_signal(pid_t tid)
{
	char path[64], buf[2048], *p;
	unsigned long long blk;
	size_t n;

	snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
	n = probe_read_file(path, buf, sizeof buf - 1);
	buf[n] = 0;
	p = strstr(buf, "SigBlk:");
	if (!p || sscanf(p + 7, "%llx", &blk) != 1)
		return 0;
	return (blk >> (probe_cfg.signo - 1)) & 1;
}

/* A thread whose ring has not been taken since the last check. */
static void check_stuck(struct probe_thread *t)
{
	uint64_t tail = 0;

	if (t->stuck || t->closed || !probe_ring_pending(t, &tail)) {
		t->stuck_tail = ~0ull;
		return;
	}
	if (t->stuck_tail == tail && blocks_our_signal(t->tid)) {
		t->stuck = 1;
		stuck_threads++;
	}
	t->stuck_tail = tail;
}

/* Every queue drained now (threads announced first), nothing freed. */
static void drain_all(void)
{
	struct probe_thread *t;
	char name[17];

	pthread_mutex_lock(&probe_reg_lock);
	for (t = probe_threads; t; t = t->next) {
		if (__atomic_load_n(&t->closed, __ATOMIC_ACQUIRE)) {
			announce(t, t->end_name);
		} else if (!t->announced) {
			probe_thread_comm(t->tid, name);
			announce(t, name[0] ? name : probe_proc.comm);
		}
		drain_queue(t);
	}
	pthread_mutex_unlock(&probe_reg_lock);
}

/*
 * One pass over everything.  final: names of all threads, free nothing;
 * crash: no maps scan (it could wait for a lock the crashed thread holds).
 * Returns the fullest queue's fill, in words.
 */
static uint64_t pass(int final, int crash)
{
	struct probe_thread **pp, *t;
	uint64_t fill, max_fill = 0;
	uint64_t now = probe_now_ns();
	int check_names = final || now - last_name_check >= NAME_CHECK_NS;
	int check = !final && now - last_check >= CHECK_NS;
	int restarted = probe_output_restarted();
	char name[17];

	if (restarted) {
		/* A new connection: it starts with HELLO, MAPs, THREADs. */
		hello_sent = 0;
		probe_maps_reset();
	}
	if (!hello_sent) {
		send_hello();
		hello_sent = 1;
	}
	if (!crash) {
		/*
		 * Objects were unloaded since the last scan (and their dlclose
		 * did not see its samples out, or was not ours): what is queued
		 * was mostly taken before, so it goes before the MAPs of
		 * whatever was loaded since, maybe at the same addresses.
		 */
		if (probe_maps_unloaded())
			drain_all();
		probe_maps_scan(probe_proc.pid);
	}
	if (check_names)
		last_name_check = now;
	if (check)
		last_check = now;

	pthread_mutex_lock(&probe_reg_lock);
	for (pp = &probe_threads; (t = *pp) != NULL;) {
		int closed = __atomic_load_n(&t->closed, __ATOMIC_ACQUIRE);

		if (restarted)
			t->announced = 0;
		if (closed) {
			announce(t, t->end_name);
		} else if (!t->announced || check_names) {
			probe_thread_comm(t->tid, name);
			if (name[0])
				announce(t, name);
			else if (!t->announced)
				announce(t, probe_proc.comm);
		}
		fill = drain_queue(t);
		if (fill > max_fill)
			max_fill = fill;
		report_lost(t);
		if (check)
			check_stuck(t);
		if (closed && !final && !t->adopted) {
			*pp = t->next;
			samples_freed += t->samples;
			probe_thread_free(t);
			continue;
		}
		pp = &t->next;
	}
	pthread_mutex_unlock(&probe_reg_lock);

	if (lost_socket) {
		send_lost(0, PROBE_LOST_SOCKET, lost_socket);
		lost_socket = 0;
	}
	if (__atomic_load_n(&probe_handler_replaced, __ATOMIC_RELAXED) &&
	    !said_replaced++)
		probe_msg("the program installed its own handler for signal %d, "
			  "which probe samples with; probe keeps sampling and "
			  "passes the signals that are not its own to the "
			  "program's handler (set PROBE_SIGNAL to a realtime "
			  "signal the program does not use)", probe_cfg.signo);
	if (!final && probe_handler_taken_over() && !said_replaced++)
		probe_msg("the program replaced probe's handler for signal %d "
			  "without sigaction or signal (sysv_signal, sigset or a "
			  "system call); probe put its own back and passes the "
			  "program's signals on (set PROBE_SIGNAL to a realtime "
			  "signal the program does not use)", probe_cfg.signo);
	if (__atomic_load_n(&probe_block_attempts, __ATOMIC_RELAXED) &&
	    !said_blocked++)
		probe_msg("the program blocks signal %d, which probe samples "
			  "with; probe keeps it deliverable so those threads stay "
			  "profiled, and holds the program's own signal %d until it "
			  "unblocks it (set PROBE_SIGNAL to a realtime signal the "
			  "program does not use)", probe_cfg.signo, probe_cfg.signo);
	if (__atomic_load_n(&probe_sigio_seen, __ATOMIC_RELAXED) && !said_sigio++)
		probe_msg("the realtime signal queue was full (ulimit -i): "
			  "samples arrived as SIGIO instead, which probe took; "
			  "the program was not disturbed");
	if (stuck_threads && !said_stuck++)
		probe_msg("%u thread%s blocked signal %d (probe's) by a means "
			  "probe cannot see, such as a raw system call; %s not "
			  "sampled while %s so", stuck_threads,
			  stuck_threads == 1 ? "" : "s", probe_cfg.signo,
			  stuck_threads == 1 ? "it is" : "they are",
			  stuck_threads == 1 ? "it stays" : "they stay");
	probe_output_flush();
	return max_fill;
}

static uint64_t total_samples(void)
{
	uint64_t n = samples_freed;

	pthread_mutex_lock(&probe_reg_lock);
	for (struct probe_thread *t = probe_threads; t; t = t->next)
		n += __atomic_load_n(&t->samples, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&probe_reg_lock);
	return n;
}

/* The messages of the run's end: what went wrong, counted. */
static void final_messages(void)
{
	uint64_t *u = probe_unprofiled, unprof = 0;
	const char *trouble = probe_output_trouble();

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
	if (probe_output_dropped && trouble[0])
		probe_msg("%llu samples of process %u could not be delivered: %s",
			  (unsigned long long)probe_output_dropped, probe_proc.pid,
			  trouble);
}

static int ms_left(uint64_t deadline)
{
	uint64_t now = probe_now_ns();

	return now >= deadline ? 0 : (int)((deadline - now) / 1000000u);
}

/* Consumer lock held. */
static void do_request(unsigned what, int status, uint64_t deadline)
{
	if (!scratch)
		return;
	if (what & PROBE_REQ_FINAL) {
		probe_stopping = 1;
		pass(1, (what & PROBE_REQ_CRASH) != 0);
	} else if (what & PROBE_REQ_FLUSH) {
		pass(0, 0);
	} else if ((what & PROBE_REQ_PASS) && !probe_stopping && !sender_quit) {
		pass(0, 0);
	}
	if ((what & PROBE_REQ_EXIT) && !exit_sent) {
		exit_sent = 1;
		send_exit(status, total_samples(), probe_threads_seen);
		sender_quit = 1;
	}
	if (what & (PROBE_REQ_FLUSH | PROBE_REQ_FINAL | PROBE_REQ_EXIT))
		probe_output_drain(ms_left(deadline));
	/* Last: the drain may have had to give up on some. */
	if (what & PROBE_REQ_EXIT)
		final_messages();
}

static long futex(unsigned *addr, int op, unsigned val, uint64_t timeout_ns)
{
	struct timespec ts = { (time_t)(timeout_ns / 1000000000u),
			       (long)(timeout_ns % 1000000000u) };

	return syscall(SYS_futex, addr, op, val,
		       op == FUTEX_WAIT_PRIVATE ? &ts : NULL, NULL, 0);
}

void probe_request(unsigned what, int status, uint64_t deadline)
{
	unsigned mine, done;

	if (!__atomic_load_n(&sender_running, __ATOMIC_ACQUIRE))
		return;
	if ((pid_t)syscall(SYS_gettid) == sender_tid) {
		/* The sender itself is exiting (or crashed): do it here. */
		if (pthread_mutex_trylock(&probe_consumer_lock) != 0)
			return;
		do_request(what, status, deadline);
		pthread_mutex_unlock(&probe_consumer_lock);
		return;
	}
	if (what & PROBE_REQ_EXIT)
		__atomic_store_n(&req_status, status, __ATOMIC_RELAXED);
	/* A PASS has nothing to wait for at the output: leave FLUSH's deadline. */
	if (what & ~PROBE_REQ_PASS)
		__atomic_store_n(&req_deadline, deadline, __ATOMIC_RELAXED);
	__atomic_or_fetch(&req_what, what, __ATOMIC_SEQ_CST);
	mine = __atomic_add_fetch(&req_seq, 1, __ATOMIC_SEQ_CST);
	futex(&req_seq, FUTEX_WAKE_PRIVATE, 1, 0);
	for (;;) {
		uint64_t now = probe_now_ns();

		done = __atomic_load_n(&done_seq, __ATOMIC_ACQUIRE);
		if ((int)(done - mine) >= 0 || now >= deadline)
			return;
		if (!__atomic_load_n(&sender_running, __ATOMIC_ACQUIRE))
			return;
		futex(&done_seq, FUTEX_WAIT_PRIVATE, done,
		      deadline - now < 50000000u ? deadline - now : 50000000u);
	}
}

/* ---- the thread ---------------------------------------------------------- */

static void *sender_main(void *arg)
{
	int tick = TICK_MS;
	pid_t self = gettid();
	unsigned seen = 0;      /* requests may come before we run */

	(void)arg;
	sender_tid = self;
	for (;;) {
		unsigned seq = __atomic_load_n(&req_seq, __ATOMIC_ACQUIRE);
		int out = probe_output_fd();

		if (seq == seen) {
			/* One tick, or a request, or a slow collector taking more. */
			if (out >= 0) {
				struct pollfd p = { .fd = out, .events = POLLOUT };
				poll(&p, 1, tick);
			} else {
				futex(&req_seq, FUTEX_WAIT_PRIVATE, seq,
				      (uint64_t)tick * 1000000u);
			}
		}
		pthread_mutex_lock(&probe_consumer_lock);
		seq = __atomic_load_n(&req_seq, __ATOMIC_ACQUIRE);
		if (seq != seen) {
			unsigned what = __atomic_exchange_n(&req_what, 0,
							    __ATOMIC_SEQ_CST);

			do_request(what, __atomic_load_n(&req_status, __ATOMIC_RELAXED),
				   __atomic_load_n(&req_deadline, __ATOMIC_RELAXED));
			seen = seq;
			__atomic_store_n(&done_seq, seq, __ATOMIC_RELEASE);
			futex(&done_seq, FUTEX_WAKE_PRIVATE, 0x7fffffff, 0);
			tick = TICK_MS;
		} else if (!sender_quit && !probe_stopping) {
			/*
			 * A queue over 1/8 full (high rate, deep stacks): come
			 * back soon; nothing at all: the program is idle, wake up
			 * less often.
			 */
			uint64_t fill = pass(0, 0);
			tick = fill > PROBE_QUEUE_WORDS / 8 ? 1 : fill ? TICK_MS : IDLE_TICK_MS;
		} else {
			tick = IDLE_TICK_MS;
		}
		pthread_mutex_unlock(&probe_consumer_lock);
		probe_cfi_learn();
		if (sender_quit)
			break;
		if (__atomic_load_n(&probe_main_exited, __ATOMIC_ACQUIRE)) {
			tick = TICK_MS;
			/* What glibc's last thread would do; we are the last one. */
			if (!probe_app_threads_alive(self))
				exit(0);
		}
	}
	__atomic_store_n(&sender_running, 0, __ATOMIC_RELEASE);
	futex(&done_seq, FUTEX_WAKE_PRIVATE, 0x7fffffff, 0);
	return NULL;
}

int probe_sender_start(void)
{
	pthread_t th;
	pthread_attr_t attr;
	sigset_t all, old;
	int r;

	if (!scratch)
		scratch = malloc(SCRATCH);
	if (!scratch)
		return -1;
	/* Born with every signal blocked: no window where one could land. */
	sigfillset(&all);
	probe_real_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	__atomic_store_n(&sender_running, 1, __ATOMIC_RELEASE);
	r = probe_real_pthread_create(&th, &attr, sender_main, NULL);
	pthread_attr_destroy(&attr);
	probe_real_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		__atomic_store_n(&sender_running, 0, __ATOMIC_RELEASE);
		probe_msg("cannot start the sender thread (%s); not profiling",
			  strerror(r));
		return -1;
	}
	pthread_setname_np(th, "probe-sender");
	return 0;
}

/*
 * Fork child: a new process with its own HELLO, MAPs and sender.  The
 * parent's sender is not here; the consumer lock (taken in prepare) is
 * re-created.
 */
void probe_sender_after_fork_child(void)
{
	pthread_mutex_init(&probe_consumer_lock, NULL);
	sender_quit = 0;
	hello_sent = 0;
	lost_socket = 0;
	samples_freed = 0;
	last_name_check = 0;
	last_check = 0;
	stuck_threads = 0;
	said_replaced = said_sigio = said_stuck = said_blocked = 0;
	req_seq = done_seq = req_what = 0;
	sender_tid = 0;
	sender_running = 0;
	exit_sent = 0;
	probe_maps_reset();
}
