/*
 * probe.h - internal interfaces of libprobe.so (nothing here is exported:
 * the library is built with -fvisibility=hidden and libprobe.map exports
 * only the functions it interposes).
 *
 * The pieces and who calls whom:
 *   main.c     constructor / destructor / on_exit / fork: the lifecycle
 *   config.c   PROBE_* environment -> probe_cfg, read once
 *   event.c    perf_event_open for one thread + its mmap ring (and the ring
 *              reader the signal handler uses)
 *   unwind.c   libunwind, loaded privately with dlopen(RTLD_LOCAL)
 *   thread.c   per-thread state, the registry, interposed pthread_create
 *   queue.c    per-thread single-producer/single-consumer sample queue
 *   handler.c  the profiling signal handler (SIGNAL CONTEXT)
 *   loader.c   interposed dlopen/dlclose: the "inside the loader" guard
 *   maps.c     dl_iterate_phdr -> MAP frames
 *   output.c   the collector socket or the recording file, with a bounded
 *              backlog that never blocks the application
 *   sender.c   the sender thread: queues -> frames -> output
 *
 * Threads and ownership:
 *   - A profiled thread T owns its struct probe_thread: only T (its signal
 *     handler, its trampoline, its key destructor) writes the event fd, the
 *     ring, the queue head and the handler-side counters.
 *   - The sender (or whoever holds probe_consumer_lock) is the only reader of
 *     the queues and the only one that frees a thread's state, after T has
 *     marked it closed.
 *   - probe_reg_lock protects the registry list and each entry's fd field
 *     against the exit path closing it while the finalizer disables it.
 */
#ifndef PROBE_PRELOAD_H
#define PROBE_PRELOAD_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <ucontext.h>

#include "probe/wire.h"

/* ---- config.c ----------------------------------------------------------- */

struct probe_config {
	char socket_path[108];  /* PROBE_SOCKET; "" when unset */
	char output_path[PATH_MAX]; /* PROBE_OUTPUT; "" when unset */
	int append;             /* PROBE_APPEND=1: a probe'd ancestor made the file */
	char event_name[64];    /* what the user asked for */
	uint32_t type;          /* perf_event_attr.type */
	uint64_t config;        /* perf_event_attr.config */
	int freq;               /* 1: value is Hz; 0: value is a period */
	uint64_t value;
	int signo;              /* the profiling realtime signal */
	int kernel;             /* sample kernel time too (where allowed) */
};

extern struct probe_config probe_cfg;

void probe_config_read(void);
/* Switch the event to cpu-clock (hardware event not available). */
void probe_config_fallback_cpu_clock(void);

/* One line on stderr, prefixed "probe: ".  Normal context only. */
void probe_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- queue.c ------------------------------------------------------------ */

/*
 * A sample in the queue is a run of 64-bit words:
 *   [0] tid << 32 | nframes   [1] time_ns   [2] period   [3..] frames
 * head is written only by the producer (the owning thread's signal handler
 * or exit path), tail only by the consumer (the sender).
 */
#define PROBE_QUEUE_WORDS 8192u          /* 64 KiB per thread */
#define PROBE_QUEUE_REC_WORDS 3u

struct probe_queue {
	uint64_t head __attribute__((aligned(64)));
	uint64_t tail __attribute__((aligned(64)));
	uint64_t *words;                /* PROBE_QUEUE_WORDS, pre-faulted */
};

int probe_queue_init(struct probe_queue *q);
void probe_queue_free(struct probe_queue *q);
/* SIGNAL CONTEXT safe.  Returns 0, or -1 when full (nothing written). */
int probe_queue_push(struct probe_queue *q, uint32_t tid, uint64_t time,
		     uint64_t period, const uint64_t *frames, uint32_t n);

/* Consumer side: read records from tail up to a snapshot of head. */
struct probe_qrec {
	uint32_t tid, nframes;
	uint64_t time, period;
	uint64_t pos;                   /* word index of the first frame */
};
uint64_t probe_queue_snapshot(struct probe_queue *q);
/* Parse the record at *pos (< end); advances *pos.  0 when *pos == end. */
int probe_queue_read(struct probe_queue *q, uint64_t *pos, uint64_t end,
		     struct probe_qrec *r);
static inline uint64_t probe_queue_frame(const struct probe_queue *q,
					 const struct probe_qrec *r, uint32_t i)
{
	return q->words[(r->pos + i) & (PROBE_QUEUE_WORDS - 1)];
}
void probe_queue_release(struct probe_queue *q, uint64_t pos);

/* ---- thread.c ----------------------------------------------------------- */

struct probe_thread {
	struct probe_thread *next;      /* registry list, probe_reg_lock */
	pid_t tid;
	int fd;                         /* perf event; -1: not profiled */
	uint64_t event_id;              /* PERF_EVENT_IOC_ID: is fd still ours? */
	void *ring;                     /* 1 metadata page + data pages */
	size_t ring_len;
	int closed;                     /* release-stored by the owner at its end */
	int adopted;                    /* existed before we were loaded */
	volatile sig_atomic_t in_handler;
	char end_name[16];              /* comm at the end, set with closed */

	/* handler side: single writer (the owning thread), read by the sender */
	uint64_t lost[PROBE_LOST_REASON_MAX];
	uint64_t samples;

	/* sender side only */
	uint64_t lost_sent[PROBE_LOST_REASON_MAX];
	char sent_name[17];
	int announced;

	struct probe_queue q;
};

extern pthread_mutex_t probe_reg_lock;
extern struct probe_thread *probe_threads;   /* registry list head */
extern uint32_t probe_threads_seen;          /* for the EXIT frame */
extern __thread struct probe_thread *probe_self;

/* Adopted threads (found in /proc/self/task): looked up by fd in the handler. */
#define PROBE_ADOPT_MAX 64
extern struct probe_thread *probe_adopted[PROBE_ADOPT_MAX];
extern int probe_nadopted;

struct probe_thread *probe_thread_alloc(void);
void probe_thread_free(struct probe_thread *t);
void probe_thread_register(struct probe_thread *t);
/* Make t the calling thread's state: tid, TLS, key, libunwind priming. */
void probe_thread_attach_self(struct probe_thread *t);
/* The calling thread is ending or the process is: stop and drain its event. */
void probe_thread_stop_self(void);
/* Adopt threads that existed before the constructor ran. */
void probe_threads_adopt_existing(void);
/* Disable every thread's event (finalizer). */
void probe_threads_disable_all(void);
int probe_thread_init(void);   /* pthread key, real pthread_create */
/* The main thread's event: decides the hardware -> cpu-clock fallback. */
int probe_thread_open_first(struct probe_thread *t);
void probe_threads_enable_all(void);
/* pthread_create without our trampoline (the sender thread). */
int probe_real_pthread_create(pthread_t *th, const pthread_attr_t *attr,
			      void *(*fn)(void *), void *arg);
/* After fork, in the child: forget the parent's threads, keep ours. */
void probe_threads_after_fork_child(void);
/* Set when the main thread called pthread_exit. */
extern int probe_main_exited;
int probe_app_threads_alive(pid_t self);
/* comm of a thread of ours, "" on failure */
void probe_thread_comm(pid_t tid, char out[17]);

/* ---- event.c ------------------------------------------------------------ */

/*
 * Open the configured event for thread tid (disabled), map its ring and
 * route its overflow signal to tid.  Returns 0 or -errno; *step says which
 * step failed ("perf_event_open", "mmap", "fcntl").
 */
int probe_event_open(struct probe_thread *t, pid_t tid, const char **step);
int probe_event_enable(struct probe_thread *t);
void probe_event_disable(struct probe_thread *t);
/* Disable, unmap and close (the ring must have been drained by the owner). */
void probe_event_close(struct probe_thread *t);
/* Forget fd and ring without touching the event (fork child). */
void probe_event_forget(struct probe_thread *t);

/* Ring reader: SIGNAL CONTEXT safe. */
struct probe_ring_it {
	void *meta;
	const uint8_t *data;
	uint64_t size, head, tail;
};
/* Returns 0 when the ring is empty (nothing to end). */
int probe_ring_begin(struct probe_thread *t, struct probe_ring_it *it);
/*
 * Next record copied into buf (at most cap bytes, the rest skipped); returns
 * its type, or 0 at the end (or on a corrupt header, which skips all).
 */
unsigned probe_ring_next(struct probe_ring_it *it, void *buf, size_t cap,
			 size_t *len);
void probe_ring_end(struct probe_ring_it *it);

/* ---- unwind.c ----------------------------------------------------------- */

int probe_unwind_load(void);    /* 0 ok, -1 no libunwind (leaf-only stacks) */
/* Prime libunwind's per-thread state; normal context, on the thread itself. */
void probe_unwind_prime(void);
/*
 * SIGNAL CONTEXT.  Unwind the interrupted context uc into buf (room for
 * PROBE_UNWIND_BUF entries); returns the index of the interrupted frame in
 * buf via *first and the number of frames from there (0: not found).
 */
#define PROBE_UNWIND_BUF (PROBE_MAX_FRAMES + 32)
int probe_unwind(void *uc, uint64_t *buf, int *first);

/* Sampled IPs at or above this are the kernel's (x86-64 canonical upper half). */
#define PROBE_KERNEL_START 0xffff800000000000ull

/* ---- handler.c ---------------------------------------------------------- */

int probe_handler_install(void);
/* The app replaced our handler?  Returns 1 once when it is noticed. */
int probe_handler_taken_over(void);
/*
 * Drain t's ring into its queue.  uc != NULL: SIGNAL CONTEXT, the stack of uc
 * is attached to the sample taken at uc's instruction pointer; uc == NULL:
 * the owner's exit path (its signal blocked), samples keep their leaf only.
 */
void probe_drain_ring(struct probe_thread *t, void *uc);
void probe_block_signal(sigset_t *old);
void probe_restore_mask(const sigset_t *old);

/* ---- loader.c ----------------------------------------------------------- */

extern __thread int probe_in_loader;   /* depth of dlopen/dlclose on this thread */
void probe_loader_init(void);
void *probe_real_dlopen(const char *file, int mode);

/* ---- maps.c ------------------------------------------------------------- */

/* Queue MAP frames for objects not sent yet; returns frames added. */
int probe_maps_scan(uint32_t pid);
/* Forget what was sent (after fork: the new process needs them all). */
void probe_maps_reset(void);

/* ---- output.c ----------------------------------------------------------- */

/* Open the collector connection or the file; may print the one line. */
int probe_output_open(void);
/*
 * Queue whole frames for output.  Sample-carrying data (nsamples > 0) is
 * dropped when the backlog is over its bound: returns -1 then, and the
 * caller counts them as PROBE_LOST_SOCKET.
 */
int probe_output_append(const void *p, size_t n, uint64_t nsamples);
/* Write what can be written now (file: all of it). */
void probe_output_flush(void);
/* Flush, waiting at most timeout_ms for a slow collector. */
void probe_output_drain(int timeout_ms);
int probe_output_fd(void);          /* for poll, -1 if nothing pending */
void probe_output_after_fork_child(void);

/* ---- sender.c ----------------------------------------------------------- */

struct probe_proc {
	uint32_t pid, ppid;
	uint64_t start_ns;
	char exe[PATH_MAX];
	char comm[17];
	char *args;         /* argv, NUL-separated */
	size_t args_len;
};
extern struct probe_proc probe_proc;
extern pthread_mutex_t probe_consumer_lock;

void probe_proc_read(void);
int probe_sender_start(void);
/*
 * Exit path, holding probe_consumer_lock: the last pass (everything queued,
 * every thread's current name), then the EXIT frame (status: exit code, or
 * -1 unknown).  Each waits at most timeout_ms for the output.
 */
void probe_sender_final(int timeout_ms);
void probe_sender_exit(int status, int timeout_ms);
void probe_sender_after_fork_child(void);

uint64_t probe_now_ns(void);          /* CLOCK_MONOTONIC, as sample times */

/* ---- main.c ------------------------------------------------------------- */

extern volatile int probe_active;    /* set up; pthread_create wraps threads */
/* Exit in progress (or our signal was taken): no unwinding, no new events. */
extern volatile int probe_stopping;

#endif /* PROBE_PRELOAD_H */
