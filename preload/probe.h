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
 *   arena.c    the memory shared with the collector: a ring per thread
 *              that the handler writes samples into (include/probe/arena.h)
 *   handler.c  the profiling signal handler (SIGNAL CONTEXT)
 *   loader.c   interposed dlopen/dlclose: the "inside the loader" guard
 *   maps.c     dl_iterate_phdr -> MAP frames
 *   conn.c     the connection to the collector (or starting one)
 *   conn_frames.c HELLO (with the arena), SYNC, EXIT
 *   timer.c    the fallback without perf events: per-thread CPU-time timers
 *   signals.c  interposed sigaction/signal/sigprocmask/pthread_sigmask: the
 *              program's view of the signals libprobe holds
 *   exec.c     interposed exec family: flush, leave no signal pending
 *   fds.c      interposed close/close_range/closefrom/pipe2: our descriptors
 *
 * No thread of libprobe's runs in the program: glibc keeps its
 * single-thread fast paths, the thread count is the program's, and
 * credential changes (setxid broadcasts) reach only the program's threads.
 *
 * Threads and ownership:
 *   - A profiled thread T owns its struct probe_thread and its arena slot:
 *     only T (its signal handler, its trampoline, its key destructor, its
 *     exec and exit paths) writes the event, the ring, the timer, the slot
 *     and the handler counters.  T frees its state itself at its end.
 *   - The collector, in another process, drains the slots (arena.h).
 *   - probe_reg_lock protects the registry list.
 *
 * Descriptors: a thread's perf event fd is closed as soon as its ring is
 * mapped (the mapping keeps the event alive; munmap ends it), so threads
 * cost no descriptors and a program that closes "all" descriptors cannot
 * touch them.  Only the output and the events of ringless threads (no
 * locked memory left for a ring) stay open, moved high and guarded (fds.c).
 *
 * Exit: the samples are in the arena already; the exiting thread only
 * drains its own perf ring into its slot and sends EXIT (async-signal-safe:
 * it may be in a signal handler, or a crash may hold malloc's lock).
 */
#ifndef PROBE_PRELOAD_H
#define PROBE_PRELOAD_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <ucontext.h>

#include "probe/arena.h"
#include "probe/wire.h"

/*
 * perf's sigtrap (Linux 5.13): SIGTRAP with si_code TRAP_PERF and the
 * event's sig_data in the word after si_addr (the kernel's si_perf_data;
 * glibc does not name either).
 */
#ifndef TRAP_PERF
#define TRAP_PERF 6
#endif
static inline unsigned long probe_si_perf_data(const siginfo_t *si)
{
	unsigned long v;

	__builtin_memcpy(&v, (const char *)&si->si_addr + sizeof(void *),
			 sizeof v);
	return v;
}

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
	int signo;              /* the profiling signal: SIGTRAP when trap */
	int signal_set;         /* PROBE_SIGNAL was given */
	int trap;               /* perf events signal with sigtrap (event.c) */
	int debugger;           /* traced at the start (SIGPROF unless
				   PROBE_SIGNAL says otherwise: event.c) */
	int one_pending;        /* signo is not realtime: pending signals
				   merge, so one may stand for several
				   overflows (handler.c drains every ring) */
	int kernel;             /* sample kernel time too (PROBE_KERNEL) */
	int kernel_asked;       /* PROBE_KERNEL=1 given (F_SETSIG: still on) */
	int kernel_why;         /* !kernel: PROBE_HELLO_KWHY_*, in HELLO */
	int timer;              /* PROBE_TIMER=1: CPU-time timers, no perf events */
	int handler_stats;      /* PROBE_HANDLER_STATS=1: time the handler */
	int eager;              /* PROBE_LAZY=0: start at once (lazy.c) */
	int unwind;             /* PROBE_UNWIND: PROBE_UNWIND_* */
	/* probe record's perf spellings (config.c: read_record_opts) */
	uint64_t config1, config2;      /* PROBE_EVENT_ATTR */
	int modifier;           /* PROBE_EVENT_MODIFIER: PROBE_MOD_*; 0: unset */
	unsigned ring_pages;    /* PROBE_RING_PAGES: data pages; 0: default */
	int no_inherit;         /* PROBE_NO_INHERIT: this process alone */
	int offcpu;             /* PROBE_OFFCPU=1: off-CPU time too (offcpu.c) */
	uint64_t alloc;         /* PROBE_ALLOC: allocations too, one sample per
				   this many bytes (alloc.c); 0: off */
	int not_ours;           /* PROBE_NO_INHERIT of another process: stay out */
	/* PROBE_EVENT_MORE: events sampled beside the first (-e a,b) */
	unsigned nextra;
	struct probe_xevent {
		char name[64];
		uint32_t type;
		uint64_t config, config1, config2;
		int modifier;   /* PROBE_MOD_*; 0: as the first event */
	} extra[PROBE_EVENTS_MAX - 1];
};


#define PROBE_MOD_USER 1
#define PROBE_MOD_KERNEL 2

extern struct probe_config probe_cfg;

void probe_config_read(void);
/* Is si a signal of our perf events' kind (not yet: for which thread)? */
int probe_signal_from_event(int sig, const siginfo_t *si);
/* Switch the event to cpu-clock (hardware event not available). */
void probe_config_fallback_cpu_clock(void);

/* One line on stderr, prefixed "probe: ".  Normal context only. */
void probe_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same from strings (NULL last); async-signal-safe. */
void probe_say(const char *first, ...) __attribute__((sentinel));
const char *probe_strerror(int err);    /* strerror, async-signal-safe */
/* Mean sampling period in nanoseconds of CPU time (timer mode, ringless). */
uint64_t probe_nominal_period(void);

/* ---- thread.c ----------------------------------------------------------- */

/* A signal the program sent itself while it (in its view) had it blocked. */
#define PROBE_DEFER_MAX 4

/* One perf event of a thread (event.c). */
struct probe_ev {
	int sigfd;                      /* si_fd of its signals; -1: none */
	int fd;                         /* fd kept open (ringless), or -1 */
	void *ring;                     /* 1 metadata page [+ data pages] */
	size_t ring_len;
	unsigned data_pages;            /* 0: samples are taken from the ucontext */
	int kstack;                     /* samples carry a kernel callchain */
	uint64_t fixed_period;          /* -c: every sample's weight (samples
					   carry no PERF_SAMPLE_PERIOD); 0: -F */
};
/*
 * Off-CPU accounting of one thread (offcpu.c).  Written by the thread
 * alone (its wrappers, its handler), except claim: at exit another thread
 * may claim a wait the thread is still blocked in.
 */
struct probe_wait {
	int depth;                      /* 1: in a wrapped call (the outermost) */
	int ended;                      /* its last account is done */
	int claim;                      /* PROBE_WAIT_*: who ends the open wait */
	const void *fn;                 /* the open wait: the real function */
	uint64_t t0;                    /* ... its start (CLOCK_MONOTONIC ns) */
	uint64_t ret, cfa, rbp;         /* ... its caller's context */
	uint64_t credited;              /* ... its time already counted by ticks */
	uint64_t acc;                   /* short waits not yet in a sample */
	uint64_t acc_unseen;            /* unseen time not yet in a sample */
	uint64_t wall_last, cpu_last;   /* the last tick: wall and CPU ns */
	uint64_t seen;                  /* waits counted since the last tick */
	uint64_t debt;                  /* counted twice, to take off later */
};
enum { PROBE_WAIT_NONE, PROBE_WAIT_OPEN, PROBE_WAIT_TAKING, PROBE_WAIT_TAKEN };

struct probe_thread {
	struct probe_thread *next;      /* registry list, probe_reg_lock */
	pid_t tid;
	uint64_t stack_lo, stack_hi;    /* its stack (cfi.c); 0: unknown */
	/* ev[0]: the first event (its sigfd >= 0: the thread is sampled). */
	struct probe_ev ev[PROBE_EVENTS_MAX];
	int timer;                      /* timer mode: kernel timer id, -1: none */
	clockid_t cpu_clock;            /* timer mode: this thread's CPU clock */
	uint64_t cpu_last;              /* timer mode: CPU ns at the last sample */
	uint64_t rng;                   /* timer mode: interval randomness */
	int closed;                     /* release-stored by the owner at its end */
	int adopted;                    /* existed before we were loaded */
	volatile sig_atomic_t in_handler;
	uintptr_t held_sp;              /* the frame that set it (probe_hold) */
	int slot;                       /* its arena slot; -1: none */
	struct probe_slot *s;           /* &probe_arena->slots[slot], or NULL */
	int peek;                       /* exit path looking at the ring */
	int saw_kernel;                 /* the handler's drain found a kernel sample */
	/*
	 * The handler's own time (perf mode): now, since it began (0 outside
	 * it), and the last one's [from, to].  A sample taken then (a fault in
	 * libunwind, in a ring's new page) is the profiler's own (handler.c).
	 */
	uint64_t own_now, own_from, own_to;
	uint64_t ndefer;                /* deferred signals (see signals.c) */
	struct probe_wait w;            /* off-CPU accounting (offcpu.c) */
	siginfo_t defer[PROBE_DEFER_MAX];
};

extern pthread_mutex_t probe_reg_lock;
extern struct probe_thread *probe_threads;   /* registry list head */
extern uint32_t probe_threads_seen;          /* for the EXIT frame */
extern __thread struct probe_thread *probe_self;

/* Adopted threads (found in /proc/self/task): looked up by tid in the handler. */
#define PROBE_ADOPT_MAX 64
extern struct probe_thread *probe_adopted[PROBE_ADOPT_MAX];
extern int probe_nadopted;

/* Threads that could not be profiled, by cause (for the message at exit). */
enum { PROBE_UNPROF_FDS, PROBE_UNPROF_MEM, PROBE_UNPROF_SIGQ,
       PROBE_UNPROF_REFUSED, PROBE_UNPROF_OTHER, PROBE_UNPROF_MAX };
extern uint64_t probe_unprofiled[PROBE_UNPROF_MAX];
extern uint64_t probe_ringless;              /* threads sampled without a ring */

/* SIGNAL CONTEXT: count n losses of reason r against t (or the process). */
void probe_lost(struct probe_thread *t, unsigned r, uint64_t n);

struct probe_thread *probe_thread_alloc(void);
void probe_thread_free(struct probe_thread *t);
int probe_thread_take_slot(struct probe_thread *t);
void probe_thread_register(struct probe_thread *t);
/* Make t the calling thread's state: tid, TLS, key, arena slot. */
void probe_thread_attach_self(struct probe_thread *t);
/* The calling thread is ending or the process is: stop and drain its event. */
void probe_thread_stop_self(void);
/*
 * Exec path (may run in a vfork-free child only): stop the calling thread's
 * sampling without touching locks (async-signal-safe), and start it again.
 */
void probe_thread_pause_self(void);
void probe_thread_resume_self(void);
/* Adopt threads that existed before the constructor ran. */
void probe_threads_adopt_existing(void);
int probe_thread_init(void);   /* pthread key, real pthread_create */
/* The main thread's source: decides perf vs timer, hardware -> cpu-clock. */
int probe_thread_open_first(struct probe_thread *t);
void probe_threads_enable_all(void);
/* After fork, in the child: forget the parent's threads, keep ours. */
void probe_threads_after_fork_child(void);
/* At the end: threads that blocked our signal behind our back (SigBlk). */
unsigned probe_threads_stuck(void);
/* Samples in the arena the collector has not taken, and rings' overflows. */
uint64_t probe_arena_untaken(void);
uint64_t probe_arena_overflowed(void);
/* comm of a thread of ours, "" on failure */
void probe_thread_comm(pid_t tid, char out[17]);

/* ---- event.c ------------------------------------------------------------ */

/* How the process samples: perf events, or CPU-time timers (timer.c). */
/* PROBE_MODE_NONE: no CPU event at all, allocations only (--alloc alone). */
enum { PROBE_MODE_PERF, PROBE_MODE_TIMER, PROBE_MODE_NONE };
extern int probe_mode;

/*
 * Open the configured event for thread tid (disabled), map the biggest ring
 * the locked-memory budget allows (1 data page, the metadata page only, or
 * none) and route its overflow signal to tid.  Returns 0 or -errno; *step
 * says which step failed ("perf_event_open", "fcntl").
 */
int probe_event_open(struct probe_thread *t, pid_t tid, const char **step);
/*
 * The extra events (-e a,b) are opened the same way after the first, each
 * with its own ring and signal; one the kernel refuses is left out for that
 * thread (said once per event).  sigtrap's si_perf_data is t's address
 * plus the event's index (t is 64-byte aligned).
 */
/* Every event of t unopened (fd and sigfd -1): alloc and fork child. */
void probe_events_clear(struct probe_thread *t);
/* Once, before the handlers: sigtrap (SIGTRAP) or F_SETSIG (probe_cfg). */
void probe_event_choose_signal(void);
/* Enable; a thread with a ring then closes its fd (the mapping holds it). */
int probe_event_enable(struct probe_thread *t);
/* Owner only: end the event (munmap / close); its ring must be drained. */
void probe_event_close(struct probe_thread *t);
/* Fork child: drop the copies of the parent's rings and fds. */
void probe_event_forget(struct probe_thread *t);

/* Ring reader: SIGNAL CONTEXT safe. */
struct probe_ring_it {
	void *meta;
	const uint8_t *data;
	uint64_t size, head, tail;
};
/* Returns 0 when the ring is empty (nothing to end). */
int probe_ring_begin(const struct probe_ev *e, struct probe_ring_it *it);
/*
 * Next record copied into buf (at most cap bytes, the rest skipped); returns
 * its type, or 0 at the end (or on a corrupt header, which skips all).
 */
unsigned probe_ring_next(struct probe_ring_it *it, void *buf, size_t cap,
			 size_t *len);
void probe_ring_end(struct probe_ring_it *it);
/* Another thread: samples in t's first ring its thread has not taken (<= 16). */
unsigned probe_ring_pending(struct probe_thread *t, uint64_t *tail);

/* ---- timer.c ------------------------------------------------------------ */

/* A CPU-time timer for thread tid, signalling it with probe_cfg.signo. */
int probe_timer_open(struct probe_thread *t, pid_t tid);
void probe_timer_arm(struct probe_thread *t);        /* SIGNAL CONTEXT safe */
void probe_timer_stop(struct probe_thread *t);       /* disarmed; SIGNAL CONTEXT safe */
void probe_timer_close(struct probe_thread *t);      /* SIGNAL CONTEXT safe */
/* The CPU-time clock of thread tid of this process. */
clockid_t probe_thread_cpu_clock(pid_t tid);
/* SIGNAL CONTEXT: thread CPU time now, ns. */
uint64_t probe_timer_cpu_ns(struct probe_thread *t);

/* ---- unwind.c ----------------------------------------------------------- */

/*
 * The constructor: libunwind now for PROBE_UNWIND=libunwind or check (0 ok,
 * -1 none: stacks hold what cfi.c walks), else nothing yet.
 */
int probe_unwind_load(void);
/*
 * Normal context, where the program could call dlopen itself (its dlopen,
 * pthread_create, posix_spawn): load libunwind now if code was loaded
 * (loaded_code) or a walk needed it since, once.
 */
void probe_unwind_lazy(int loaded_code);
/* Is pc in libunwind's code?  (Its sigprocmask calls are not the program's.) */
int probe_unwind_owns(const void *pc);
/* pc is in code our dlopen of libunwind loaded (the program had not).  Async-signal-safe. */
int probe_unwind_ours(uint64_t pc);
/*
 * SIGNAL CONTEXT.  Unwind t's interrupted context uc into buf (room for
 * PROBE_UNWIND_BUF entries): cfi.c's walk, else libunwind.  Returns the
 * index of the interrupted frame in buf via *first (1: buf[0] is left for
 * a kernel sample's IP) and the number of frames from there (0: none).
 */
#define PROBE_UNWIND_BUF (PROBE_MAX_FRAMES + 32)
/*
 * Frames a walk takes at most: one more than the wire carries, so that a
 * stack cut there is known to be cut (probe_slot_push marks it).
 */
#define PROBE_WALK_MAX (PROBE_MAX_FRAMES + 1)
/*
 * in_loader: the thread is inside the dynamic loader (dlopen, dlclose,
 * dl_iterate_phdr): cached frame rules only, never libunwind (it calls
 * dl_iterate_phdr and takes a lock of its own: deadlock); a frame without a
 * rule ends the walk there, and what was walked is kept (*partial = 1).
 */
int probe_unwind(const struct probe_thread *t, void *uc, uint64_t *buf,
		 int *first, int in_loader, int *partial);
/* Kernel frames a sample carries at most (the event's sample_max_stack). */
#define PROBE_KSTACK_MAX 64
/* PROBE_UNWIND=check: one line on how often the two walks disagreed. */
void probe_unwind_check_report(void);

/* Sampled IPs at or above this are the kernel's (x86-64 canonical upper half). */
#define PROBE_KERNEL_START 0xffff800000000000ull

/* ---- cfi.c: the fast path in front of libunwind -------------------------- */

/* Where a walk stopped: for libunwind to go on from there (mixed code). */
struct probe_walk_at {
	int n;                  /* frames in buf; buf[n - 1] not stepped past */
	uint64_t rip, rsp, rbp; /* that frame's registers (rip = buf[n - 1]) */
};
/*
 * SIGNAL CONTEXT: walk t's stack from the ucontext with cached frame rules;
 * buf[0] is the interrupted RIP, then the return addresses.  Returns the
 * frames, or 0 (a rule not cached yet, which is then noted for the collector;
 * another stack; code we do not follow): use libunwind.  With partial
 * non-NULL, a walk that stops early returns the frames walked so far and
 * sets *partial (in the loader, where libunwind must not run).
 * Frames without CFI (PROBE_RULE_NONE, or in the arena's JIT ranges) are
 * walked by frame pointer.  A walk that went through such frames and then
 * stops (0 returned) says where in *at (at->n > 0), for libunwind to go on
 * from there: it could not have walked through them from the start.
 */
int probe_cfi_walk(const struct probe_thread *t, const void *uc,
		   uint64_t *buf, int max, int *partial, struct probe_walk_at *at);
/*
 * SIGNAL CONTEXT: the same walk from frame from->n - 1 (buf[0..n - 1)
 * filled, from's registers that frame's), where libunwind stopped at JIT
 * code; returns all the frames, or 0 with *at saying where it stopped.
 */
int probe_cfi_walk_from(const struct probe_thread *t, const struct probe_walk_at *from,
			uint64_t *buf, int max, struct probe_walk_at *at);
/* SIGNAL CONTEXT: is pc in the JIT ranges the collector published? */
int probe_cfi_in_jit(uint64_t pc);
/*
 * SIGNAL CONTEXT: frames libunwind walked; note the rules not cached
 * (leaf: frames[0] is the interrupted pc, not a return address).
 */
void probe_cfi_note(const uint64_t *frames, int n, int leaf);
/*
 * dlclose unloaded something: forget the rules of code no longer loaded
 * (loaded: every object dl_iterate_phdr still lists, when loaded_only),
 * else every rule but those of the objects loaded at start.
 */
void probe_cfi_flush(int loaded_only);
/* Constructor: note the code of the objects loaded at start (never unloaded). */
void probe_cfi_keep_init(void);
/* PROBE_UNWIND: 0 cfi then libunwind (default), 1 libunwind only, 2 check */
enum { PROBE_UNWIND_FAST, PROBE_UNWIND_LIBUNWIND, PROBE_UNWIND_CHECK };

/* ---- handler.c ---------------------------------------------------------- */

/* PROBE_HANDLER_STATS: one line on stderr with the handler's times. */
void probe_handler_stats_report(void);
void probe_handler_stats_reset(void);
int probe_handler_install(void);
/* SIGNAL CONTEXT: the calling thread's state (adopted ones by tid), or NULL. */
struct probe_thread *probe_current_thread(void);
/* Has something replaced our handler behind sigaction's back?  Once. */
int probe_handler_taken_over(void);
/*
 * Drain t's perf ring into its arena slot (returns the records taken).
 * uc != NULL: SIGNAL CONTEXT, the stack of uc
 * is attached to the sample taken at uc's instruction pointer; uc == NULL:
 * the owner's exit path (its signal blocked), samples keep their leaf only.
 */
int probe_drain_ring(struct probe_thread *t, unsigned ev, void *uc);
/*
 * in_handler: this thread's own code (our handler, an off-CPU or
 * allocation wrapper, the exit path) is writing its slot or reading its
 * rings, from the frame at held_sp; a signal of ours then leaves them be.
 * The program's signals are not blocked meanwhile: blocked, a signal
 * sent to the process goes to another of its threads (tests/61
 * interrupt: 67 of 300 reads an alarm should have ended were restarted),
 * so a handler of the program's may run nested inside ours and never
 * return to it: exit,
 * pthread_exit, siglongjmp.  probe_held (SIGNAL CONTEXT) says whether the
 * holder can still resume: not when the frame asking (sp) is on the same
 * stack at or above the holder's, which then was unwound (siglongjmp).
 * The exit paths do not ask: whoever holds it never runs again.
 */
#define PROBE_SP() ((uintptr_t)__builtin_frame_address(0))
static inline void probe_hold(struct probe_thread *t, uintptr_t sp)
{
	t->held_sp = sp;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->in_handler = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}
static inline void probe_unhold(struct probe_thread *t)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->in_handler = 0;
}
int probe_held(struct probe_thread *t, uintptr_t sp);
/* Owner, exit path (uc == NULL above) for every event of t. */
int probe_drain_all(struct probe_thread *t);
/* SIGNAL CONTEXT, owner: one sample taken, into t's slot (a loss if full). */
int probe_sample_push(struct probe_thread *t, uint64_t time, uint64_t weight,
		      unsigned ev, const uint64_t *frames, int n);
/*
 * Normal context (alloc.c): the same, but a full ring is waited for (the
 * collector woken, 100 ms at most) rather than a loss, unless a wait
 * already timed out and nothing was written since.  0, or -1: lost.
 */
int probe_sample_push_wait(struct probe_thread *t, uint64_t time, uint64_t weight,
			   unsigned ev, const uint64_t *frames, int n);
/* Block / restore our signal on the calling thread (the real mask). */
void probe_block_signal(sigset_t *old);
void probe_restore_mask(const sigset_t *old);
extern int probe_sigio_seen;            /* the rt signal queue overflowed */

/* ---- signals.c ---------------------------------------------------------- */

/* The real functions (never our interposed ones). */
int probe_real_sigaction(int sig, const struct sigaction *act,
			 struct sigaction *old);
int probe_real_sigmask(int how, const sigset_t *set, sigset_t *old);
/*
 * Take signal sig over: install ours (handler, flags), remember the
 * program's disposition as its view.  kind: PROBE_SIG_CHAIN (ours stays,
 * the program's handler gets the signals that are not ours) or
 * PROBE_SIG_FATAL (ours only while the program leaves it at SIG_DFL).
 */
enum { PROBE_SIG_NONE, PROBE_SIG_CHAIN, PROBE_SIG_FATAL };
int probe_signal_take(int sig, int kind, void (*fn)(int, siginfo_t *, void *),
		      int flags);
/* SIGNAL CONTEXT: the program's view of sig (a copy). */
void probe_signal_app(int sig, struct sigaction *out);
/*
 * SIGNAL CONTEXT: hand a signal that is not ours to the program as it would
 * have got it without us (its handler, honouring its mask and flags; the
 * default action; nothing when ignored, or when it has it blocked: then it
 * is deferred and raised again when the program unblocks it).
 */
void probe_signal_chain(int sig, siginfo_t *si, void *uc);
/* SIGNAL CONTEXT: has the program a handler without SA_RESTART for a signal mask lets through? */
int probe_signal_any_norestart(const sigset_t *mask);
/*
 * Depth of our own calls into libunwind on this thread: its sigprocmask
 * calls are not the program's (mask_call passes them straight through).
 */
extern __thread int probe_in_probe;
/* Does the calling thread, in the program's view, block our signal? */
extern __thread int probe_app_blocked;
extern uint64_t probe_block_attempts;        /* the program tried to block it */
extern int probe_handler_replaced;           /* ... installed its own handler */
/* SIGNAL CONTEXT: raise the deferred signals of the calling thread. */
void probe_signal_flush_deferred(void);
/* The real mask as the program wants it (exec): our signal per its view. */
void probe_signal_app_mask(sigset_t *mask);

/* ---- offcpu.c / waits.c --------------------------------------------------- */

/*
 * --off-cpu (PROBE_OFFCPU=1): the time a thread spends in the blocking
 * calls of libc that waits.c interposes is sampled as the event of index
 * probe_offcpu_ev(), weighted in nanoseconds, with the stack it waits in
 * (the libc function, then its callers); the rest of its off-CPU time
 * (preempted, blocked where no wrapper sees) is found by each tick of the
 * handler (wall time minus CPU time minus the waits seen) and sampled
 * without a stack (the frame PROBE_FRAME_UNSEEN).
 */
unsigned probe_offcpu_ev(void);
void probe_offcpu_init(void);                   /* our code's bounds */
void probe_offcpu_thread_start(struct probe_thread *t);   /* the thread itself */
/* SIGNAL CONTEXT: a sample of t's (its handler): account the time since the last. */
void probe_offcpu_tick(struct probe_thread *t);
/* The thread is ending (itself): account what is left. */
void probe_offcpu_thread_end(struct probe_thread *t);
/* Exit: the waits other threads are still blocked in, as samples. */
void probe_offcpu_claim_all(void);
/*
 * waits.c's wrappers around the real call fn, entered from ret (frame fp):
 * the calling thread when the call is timed (then _end it), else NULL.
 */
struct probe_thread *probe_wait_begin(const void *fn, void *ret, void *fp);
void probe_wait_end(struct probe_thread *t);
void *probe_wait_real(const char *name, void **cache);
void probe_waits_resolve(void);                  /* waits.c: the constructor */

/* ---- alloc.c (libprobe-alloc.so) ------------------------------------------ */

/*
 * --alloc (PROBE_ALLOC=BYTES): allocations sampled by bytes as the event
 * of index probe_alloc_ev() (after off-cpu's), weighted in bytes, with the
 * stack that allocated.  probe_alloc_init (weak: absent from the
 * libraries without the wrappers) starts sampling once the constructor
 * is done.
 */
unsigned probe_alloc_ev(void);
void probe_alloc_init(void);

/* ---- exec.c ------------------------------------------------------------- */

void probe_exec_init(void);             /* resolve the real functions */

/* ---- fds.c -------------------------------------------------------------- */

/* Our descriptors, which close()/close_range()/closefrom() must not close. */
void probe_fd_own(int fd);
void probe_fd_disown(int fd);
int probe_fd_is_own(int fd);
int probe_sys_close(int fd);            /* the real close, no checks */
void probe_fds_init(void);              /* resolve the real functions */
/* Move fd to a high number (O_CLOEXEC), out of the program's way. */
int probe_fd_high(int fd);
/*
 * What a descriptor of ours is (device and inode), to tell it later from
 * whatever the program may have put on its number by means fds.c cannot
 * see (a raw close_range, dup2 onto it).
 */
struct probe_fd_id {
	dev_t dev;
	ino_t ino;
};
void probe_fd_id_take(int fd, struct probe_fd_id *id);
int probe_fd_id_same(int fd, const struct probe_fd_id *id);
/* A file we read and close at once (/proc), guarded meanwhile. */
int probe_open_ro(const char *path);
void probe_close_own(int fd);
/* Up to cap bytes of a (/proc) file, through probe_open_ro; 0 on failure. */
size_t probe_read_file(const char *path, char *out, size_t cap);
/* The value of a /proc/self/status field (to the line's end), or NULL. */
const char *probe_status_field(const char *name);

/* ---- loader.c ----------------------------------------------------------- */

extern __thread int probe_in_loader;   /* depth of dlopen/dlclose on this thread */
/*
 * The return addresses the real dlopen was entered with (loader.c: a "ret"
 * byte in the caller's code), by dlopen depth; 0: none.  cfi.c steps over
 * such a frame as the ret does (SIGNAL CONTEXT reads them).
 */
#define PROBE_GADGETS 4
extern __thread uintptr_t probe_gadgets[PROBE_GADGETS];
void probe_loader_init(void);
void *probe_real_dlopen(const char *file, int mode);

/* ---- maps.c ------------------------------------------------------------- */

/* Send MAP frames for objects not sent yet; returns frames added. */
#define PROBE_MAPS_SYNC 1u      /* SYNC first (see conn_frames.c) */
#define PROBE_MAPS_ALL  2u      /* forget what was sent: a new connection */
int probe_maps_scan(uint32_t pid, unsigned how);
/*
 * Normal context: every object's MAPs built now and held, for a start that
 * waits (lazy.c); -1 when they do not fit one record.  Sending them is
 * async-signal-safe; any other scan sends what it finds held first.
 */
int probe_maps_hold(uint32_t pid);
int probe_maps_send_held(void);
void probe_maps_after_fork_child(void);
/* The loader's load/unload counters (dlpi_adds/dlpi_subs); -1: unknown. */
int probe_maps_counts(unsigned long long *adds, unsigned long long *subs);

/* ---- arena.c ------------------------------------------------------------- */

extern struct probe_arena *probe_arena;
extern int probe_arena_fd;
int probe_arena_create(void);
int probe_arena_fd_ok(void);            /* its descriptor, or -1: lost */
int probe_arena_wake_fd_ok(void);       /* the collector's wake end, or -1 */
void probe_arena_drop(void);            /* unmapped, forgotten (async-signal-safe) */
/*
 * A LIVE slot for tid (-1: none left), and its end.  Taking one is
 * async-signal-safe (lazy.c takes the first in our handler).
 */
int probe_slot_take(pid_t tid, const char *name);
void probe_slot_done(int slot, const char *name);
/*
 * SIGNAL CONTEXT: one sample into the slot's ring; -1 when it is full.
 * More than PROBE_MAX_FRAMES frames (a walk of PROBE_WALK_MAX): the first
 * PROBE_MAX_FRAMES - 1, then PROBE_FRAME_TRUNCATED.
 */
int probe_slot_push(int slot, uint64_t time, uint64_t weight, unsigned ev,
		    const uint64_t *frames, uint32_t n);

/* ---- conn.c -------------------------------------------------------------- */

/* Connect to the collector, or start one; may print the one line. */
int probe_conn_open(void);
void probe_conn_drop_inherited(void);   /* fork child: the parent's, closed */
/* A start that waits (lazy.c): where to, without connecting; -1: cannot wait. */
int probe_conn_prepare(void);
/* Connect there now; async-signal-safe, -1 with *err. */
int probe_conn_open_now(int *err);
/*
 * One record on a connection of its own, then the collector's one byte
 * until reply_deadline (0: none); async-signal-safe, -1 with *err.
 */
int probe_conn_send_once(const void *p, size_t n, int *err, uint64_t reply_deadline);
const char *probe_conn_path(void);
/* One record of whole frames (with a descriptor); async-signal-safe. */
int probe_conn_send(const void *p, size_t n);
int probe_conn_send_fd(const void *p, size_t n, int fd);
/* The same from a vfork child: our state untouched. */
void probe_conn_send_child(const void *p, size_t n);
/* A new connection replaced one the program closed: 1 once. */
int probe_conn_restarted(void);
void probe_conn_check(void);            /* normal context: still ours? */
uid_t probe_conn_uid(void);             /* our euid when we connected */
int probe_conn_ok(void);
void probe_conn_wait_ack(uint64_t deadline_ns);
/* The collector's one byte after UNPROFILED for a static exec (async-signal-safe). */
void probe_conn_wait_reply(uint64_t deadline_ns);
const char *probe_conn_trouble(void);
/* Connected to a probe top or agent found without PROBE_SOCKET. */
int probe_conn_watcher(void);
extern uint64_t probe_conn_dropped;     /* frames that could not be sent */

/* ---- conn_frames.c ------------------------------------------------------- */

struct probe_proc {
	uint32_t pid, ppid;
	uint64_t start_ns;
	char exe[PATH_MAX];
	char comm[17];
	char *args;         /* argv, NUL-separated */
	size_t args_len;
};
extern struct probe_proc probe_proc;

/* Who we are: pid, ppid, exe, comm, and argv (NULL: read from /proc). */
void probe_proc_read(char **argv);
/* HELLO with the arena, then every MAP.  Normal context. */
int probe_announce_start(void);
/* HELLO with the arena, then the MAPs held (lazy.c): async-signal-safe. */
int probe_announce_start_held(void);
/*
 * HELLO without an arena, SYNC and EXIT in one record, on a connection of
 * its own: async-signal-safe; -1 with *err.
 */
int probe_announce_gone(int status, int *err);
/* A vfork child of a process still waiting: HELLO as itself, then frame. */
int probe_announce_child_once(const void *frame, size_t n, uint64_t reply_deadline);
/* Normal context: SYNC and the MAPs of objects loaded since. */
void probe_announce_maps(void);
/* Async-signal-safe: SYNC, EXIT; then the collector's word, bounded. */
void probe_announce_exit(int status, uint64_t deadline_ns);
void probe_put_sync(struct probe_wbuf *w);
void probe_put_sync_at(struct probe_wbuf *w, uint64_t t);
uint64_t probe_now_ns(void);          /* CLOCK_MONOTONIC, as sample times */

/* ---- lazy.c ------------------------------------------------------------- */

void probe_lazy_init(void);             /* resolve setuid and its kin */
/* PROBE_* let a start wait (the constructor asks before making anything). */
int probe_lazy_allowed(void);
/* Constructor or fork child: wait for the first need to start?  0: waiting. */
int probe_lazy_prepare(void);
int probe_lazy_waiting(void);
/* Start now if waiting (async-signal-safe; every signal waits meanwhile). */
void probe_lazy_start_now(void);
/* SIGNAL CONTEXT, our handler on the only thread: the first sample. */
void probe_lazy_start_signal(void);
/* The exit path, still waiting: HELLO and EXIT (async-signal-safe). */
void probe_lazy_exit(int status);

/* ---- main.c ------------------------------------------------------------- */

extern volatile int probe_active;    /* set up; pthread_create wraps threads */
/* Exit in progress: no unwinding, no new events. */
extern volatile int probe_stopping;
/*
 * Is this the process libprobe set up?  Not in a vfork child (it shares our
 * memory) or a child forked without the atfork handlers (_Fork, clone):
 * there every interposed function just calls the real one.
 */
int probe_is_ours(void);
/*
 * The process is ending with status (exit code, 128 + signal, or -1
 * unknown), from _exit, _Exit or a fatal signal: what this thread's perf
 * ring holds goes to its slot, and EXIT is sent.  No maps scan (this may be
 * a signal handler, or the loader's lock may be held).  Async-signal-safe
 * and bounded.
 */
void probe_finish(int status);

#endif /* PROBE_PRELOAD_H */
