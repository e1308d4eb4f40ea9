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
 * A closed thread (it ended) is freed once its queue is drained.
 *
 * The consumer lock makes one pass exclusive: the exit path takes it to run
 * the last pass itself, and fork's prepare handler takes it so that the
 * child inherits consistent state.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#define BATCH_MAX (256u * 1024)         /* encoded SAMPLES frame, about */
#define SCRATCH (BATCH_MAX + 64 * 1024)
#define ARGS_MAX (64u * 1024)           /* argv bytes carried in HELLO */
#define TICK_MS 10
#define IDLE_TICK_MS 50
#define NAME_CHECK_NS 1000000000ull

struct probe_proc probe_proc;
pthread_mutex_t probe_consumer_lock = PTHREAD_MUTEX_INITIALIZER;

static uint8_t *scratch;
static int sender_quit;
static int hello_sent;
static uint64_t lost_socket;            /* samples dropped, not yet reported */
static uint64_t samples_freed;          /* samples of threads already freed */
static uint64_t last_name_check;

uint64_t probe_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static size_t read_file(const char *path, char *out, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;

	if (fd < 0)
		return 0;
	while (n < cap) {
		ssize_t r = read(fd, out + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	return n;
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
	m = read_file("/proc/self/comm", probe_proc.comm, 16);
	probe_proc.comm[m] = 0;
	if (m && probe_proc.comm[m - 1] == '\n')
		probe_proc.comm[m - 1] = 0;
	free(probe_proc.args);
	probe_proc.args = malloc(ARGS_MAX);
	probe_proc.args_len = probe_proc.args ?
		read_file("/proc/self/cmdline", probe_proc.args, ARGS_MAX) : 0;
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
	probe_put_u32(&w, probe_cfg.type);
	probe_put_u64(&w, probe_cfg.config);
	probe_put_u8(&w, probe_cfg.freq ? 1 : 0);
	probe_put_u64(&w, probe_cfg.value);
	probe_put_u64(&w, probe_proc.start_ns);
	probe_put_str(&w, probe_cfg.event_name);
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

	while (pos < end) {
		uint64_t p = pos, bend = pos, count = 0, base = UINT64_MAX;
		size_t est = 0;
		struct probe_wbuf w;
		size_t at;

		/* Pass 1: how many fit, and the earliest time (dt >= 0). */
		for (;;) {
			uint64_t before = p;

			if (!probe_queue_read(q, &p, end, &r))
				break;
			size_t e = 40 + 10 * (size_t)r.nframes;
			if (count && est + e > BATCH_MAX) {
				p = before;
				break;
			}
			est += e;
			count++;
			if (r.time < base)
				base = r.time;
			bend = p;
		}
		if (count == 0)
			break;

		/* Pass 2: encode. */
		probe_wbuf_init(&w, scratch, SCRATCH);
		at = probe_frame_begin(&w, PROBE_F_SAMPLES, probe_proc.pid);
		probe_put_u64(&w, base);
		probe_put_uv(&w, count);
		p = pos;
		while (probe_queue_read(q, &p, bend, &r)) {
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
		}
		probe_frame_end(&w, at);
		if (!w.ok || probe_output_append(w.p, w.len, count) < 0)
			lost_socket += count;
		pos = bend;
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
 * One pass over everything.  final: names of all threads, free nothing.
 * Returns the fullest queue's fill, in words.
 */
static uint64_t pass(int final)
{
	struct probe_thread **pp, *t;
	uint64_t fill, max_fill = 0;
	uint64_t now = probe_now_ns();
	int check_names = final || now - last_name_check >= NAME_CHECK_NS;
	char name[17];

	if (!hello_sent) {
		send_hello();
		hello_sent = 1;
	}
	probe_maps_scan(probe_proc.pid);
	if (check_names)
		last_name_check = now;

	pthread_mutex_lock(&probe_reg_lock);
	for (pp = &probe_threads; (t = *pp) != NULL;) {
		int closed = __atomic_load_n(&t->closed, __ATOMIC_ACQUIRE);

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
	if (!final && probe_handler_taken_over()) {
		probe_msg("the program installed its own handler for signal %d, "
			  "which profiling uses; profiling stops here (set "
			  "PROBE_SIGNAL to a realtime signal it does not use)",
			  probe_cfg.signo);
		probe_stopping = 1;     /* and no events for new threads */
		probe_threads_disable_all();
	}
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

void probe_sender_final(int timeout_ms)
{
	sender_quit = 1;
	if (!scratch)
		return;
	pass(1);
	probe_output_drain(timeout_ms);
}

void probe_sender_exit(int status, int timeout_ms)
{
	if (!scratch)
		return;
	send_exit(status, total_samples(), probe_threads_seen);
	probe_output_drain(timeout_ms);
}

/* ---- the thread ---------------------------------------------------------- */

static void *sender_main(void *arg)
{
	int tick = TICK_MS;
	pid_t self = gettid();

	(void)arg;
	for (;;) {
		/* Sleep one tick, or until a slow collector takes more. */
		struct pollfd p = { .fd = probe_output_fd(), .events = POLLOUT };
		uint64_t fill;

		poll(&p, p.fd >= 0 ? 1 : 0, tick);
		pthread_mutex_lock(&probe_consumer_lock);
		if (sender_quit) {
			pthread_mutex_unlock(&probe_consumer_lock);
			break;
		}
		/*
		 * A queue over 1/8 full (high rate, deep stacks): come back soon;
		 * nothing at all: the program is idle, wake up less often.
		 */
		fill = pass(0);
		tick = fill > PROBE_QUEUE_WORDS / 8 ? 1 : fill ? TICK_MS : IDLE_TICK_MS;
		pthread_mutex_unlock(&probe_consumer_lock);
		if (__atomic_load_n(&probe_main_exited, __ATOMIC_ACQUIRE)) {
			tick = TICK_MS;
			/* What glibc's last thread would do; we are the last one. */
			if (!probe_app_threads_alive(self))
				exit(0);
		}
	}
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
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	r = probe_real_pthread_create(&th, &attr, sender_main, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
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
	probe_maps_reset();
}
