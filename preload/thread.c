/*
 * thread.c - per-thread profiling state, the registry of threads, and the
 * interposed pthread_create.
 *
 * Life of a thread's state (struct probe_thread):
 *   1. allocated by the creator (pthread_create wrapper), never in the
 *      signal handler;
 *   2. the trampoline, on the new thread, before the user's routine:
 *      unblocks our signal (the creator may have blocked everything; the
 *      thread keeps the creator's view of its mask, signals.c), sets the
 *      TLS pointer and the pthread key, takes an arena slot (touched here:
 *      the handler never faults on a new page), registers the thread,
 *      opens its source (perf event, or CPU-time timer) and starts it;
 *   3. at thread end (return or pthread_exit) the key destructor blocks our
 *      signal for good, drains the perf ring a last time into the slot and
 *      ends the source, gives the slot its final name and hands it to the
 *      collector (DONE), and frees the state: the samples are in the arena.
 * A thread that cannot be profiled (descriptors, memory, signal queue) is
 * counted by cause, said once at the time and in total at exit.
 * Threads that existed before the constructor ran (another preloaded
 * library's threads) are found in /proc/self/task and given an event that
 * is opened for their tid and owned by it; the handler finds their state by
 * tid since their TLS pointer is not set.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

pthread_mutex_t probe_reg_lock = PTHREAD_MUTEX_INITIALIZER;
struct probe_thread *probe_threads;
uint32_t probe_threads_seen;
__thread struct probe_thread *probe_self;
struct probe_thread *probe_adopted[PROBE_ADOPT_MAX];
int probe_nadopted;

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *,
				 void *(*)(void *), void *);
static pthread_create_fn real_create;
static pthread_key_t probe_key;
static int key_ok;

static void resolve_create(void)
{
	if (!real_create)
		real_create = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
}

void probe_thread_comm(pid_t tid, char out[17])
{
	char path[64];
	size_t n;

	out[0] = 0;
	snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
	n = probe_read_file(path, out, 16);
	if (n == 0)
		return;
	out[n] = 0;
	if (out[n - 1] == '\n')
		out[n - 1] = 0;
}

struct probe_thread *probe_thread_alloc(void)
{
	struct probe_thread *t;

	if (posix_memalign((void **)&t, 64, sizeof *t))
		return NULL;
	memset(t, 0, sizeof *t);
	probe_events_clear(t);
	t->timer = -1;
	t->slot = -1;
	return t;
}

void probe_thread_free(struct probe_thread *t)
{
	free(t);
}

/* Its slot in the arena (normal context); -1: none left. */
static int take_slot(struct probe_thread *t, const char *name)
{
	t->slot = probe_slot_take(t->tid, name);
	t->s = t->slot >= 0 ? &probe_arena->slots[t->slot] : NULL;
	return t->slot;
}

/* The calling thread's slot, once the arena exists (lazy.c): async-signal-safe. */
int probe_thread_take_slot(struct probe_thread *t)
{
	char name[17] = "";

	prctl(PR_GET_NAME, name, 0, 0, 0);
	return take_slot(t, name);
}

void probe_thread_register(struct probe_thread *t)
{
	pthread_mutex_lock(&probe_reg_lock);
	t->next = probe_threads;
	probe_threads = t;
	probe_threads_seen++;
	pthread_mutex_unlock(&probe_reg_lock);
}

/* ---- opening events, with one clear message per kind of failure --------- */

uint64_t probe_unprofiled[PROBE_UNPROF_MAX];
static int events_refused;      /* no source can be opened here: stop trying */

static int read_int_file(const char *path)
{
	char buf[32];
	size_t n = probe_read_file(path, buf, sizeof buf - 1);

	if (n == 0)
		return -1;
	buf[n] = 0;
	return atoi(buf);
}

static void unprofiled(int why)
{
	__atomic_add_fetch(&probe_unprofiled[why], 1, __ATOMIC_RELAXED);
}

/* A thread's source failed (err, at step): say so once per kind, count it. */
static void report_open_error(int err, const char *step, pid_t tid)
{
	static int said_fds, said_mem, said_sigq, said_other, said_slots;

	if (err == EMFILE || err == ENFILE) {
		unprofiled(PROBE_UNPROF_FDS);
		if (!said_fds++)
			probe_msg("cannot open a perf event for thread %d (%s); it "
				  "is not profiled, nor are later threads while "
				  "this lasts (raise ulimit -n)", (int)tid,
				  strerror(err));
	} else if (err == ENOSPC) {
		unprofiled(PROBE_UNPROF_MEM);
		if (!said_slots++)
			probe_msg("thread %d is not profiled: %u threads are being "
				  "profiled at once already, or the collector is "
				  "not taking the ended ones' samples", (int)tid,
				  PROBE_ARENA_SLOTS);
	} else if (err == ENOMEM) {
		unprofiled(PROBE_UNPROF_MEM);
		if (!said_mem++)
			probe_msg("out of memory setting up profiling of thread "
				  "%d (%s failed); it is not profiled", (int)tid,
				  step);
	} else if (err == EAGAIN && probe_mode == PROBE_MODE_TIMER) {
		unprofiled(PROBE_UNPROF_SIGQ);
		if (!said_sigq++)
			probe_msg("cannot create a CPU-time timer for thread %d "
				  "(%s): the signal queue limit is reached (raise "
				  "ulimit -i); it is not profiled", (int)tid,
				  strerror(err));
	} else {
		unprofiled(PROBE_UNPROF_OTHER);
		if (!said_other++)
			probe_msg("cannot set up profiling of thread %d: %s "
				  "failed (%s); it is not profiled", (int)tid,
				  step, strerror(err));
	}
}

/* The thread's sampling source for tid: a perf event, or a timer. */
static int source_open(struct probe_thread *t, pid_t tid, const char **step)
{
	if (probe_mode == PROBE_MODE_NONE)
		return 0;       /* allocations only: the thread needs its slot alone */
	if (probe_mode == PROBE_MODE_TIMER) {
		*step = "timer_create";
		return probe_timer_open(t, tid);
	}
	return probe_event_open(t, tid, step);
}

/* Start it: enable the event (and drop its fd) or arm the timer. */
static void source_start(struct probe_thread *t)
{
	if (probe_mode == PROBE_MODE_NONE)
		return;
	if (probe_mode == PROBE_MODE_TIMER) {
		if (t->timer >= 0)
			probe_timer_arm(t);
	} else if (t->ev[0].fd >= 0) {
		probe_event_enable(t);
	}
}

/*
 * Owner, its signal blocked: end the source, keeping what the ring holds
 * (unless our handler is under us on this thread and may resume: an exec
 * that fails returns; a thread that ends does not, and drains over it, as
 * main.c's finish does).
 */
static void source_close(struct probe_thread *t, int ending)
{
	if (probe_mode == PROBE_MODE_NONE)
		return;
	if (probe_mode == PROBE_MODE_TIMER) {
		probe_timer_close(t);
		return;
	}
	if (!t->in_handler || ending) {
		probe_hold(t, PROBE_SP());
		probe_drain_all(t);
		probe_unhold(t);
	}
	probe_event_close(t);
}

/* Open t's source for tid; on failure count the thread as lost. */
static int open_source(struct probe_thread *t, pid_t tid)
{
	const char *step = "";
	int r;

	if (events_refused) {
		probe_lost(NULL, PROBE_LOST_THREAD, 1);
		unprofiled(PROBE_UNPROF_REFUSED);
		return -1;
	}
	if (t->slot < 0)
		r = -ENOSPC;
	else
		r = source_open(t, tid, &step);
	if (r == 0)
		return 0;
	report_open_error(-r, step, tid);
	probe_lost(NULL, PROBE_LOST_THREAD, 1);
	return -1;
}

/* Perf events refused: say why once, with the remedy, and use timers. */
static void fall_back_to_timers(int err)
{
	int paranoid = read_int_file("/proc/sys/kernel/perf_event_paranoid");
	int clock = probe_cfg.type == 1 /* PERF_TYPE_SOFTWARE */ &&
		    (probe_cfg.config == 0 || probe_cfg.config == 1) &&
		    !probe_cfg.nextra;
	char what[640];
	size_t n;

	n = (size_t)snprintf(what, sizeof what, "%s%s", clock ? "" :
			     "CPU time, not ", clock ? "" : probe_cfg.event_name);
	for (unsigned i = 0; !clock && i < probe_cfg.nextra && n < sizeof what; i++)
		n += (size_t)snprintf(what + n, sizeof what - n, ",%s",
				      probe_cfg.extra[i].name);
	if (!clock && n < sizeof what)
		snprintf(what + n, sizeof what - n, ", ");
	if (err == ENOSYS)
		probe_msg("perf_event_open is not available (%s: the kernel "
			  "lacks perf events, or a seccomp policy blocks them): "
			  "sampling %swith per-thread CPU-time timers instead, at "
			  "most one sample per kernel tick (allow perf_event_open "
			  "in the container's seccomp profile for full rate)",
			  strerror(err), what);
	else if ((err == EACCES || err == EPERM) && paranoid > 2 && geteuid() != 0)
		probe_msg("perf_event_open is refused (%s): kernel."
			  "perf_event_paranoid is %d, and ordinary users need 2 "
			  "or less; sampling %swith per-thread CPU-time timers "
			  "instead, at most one sample per kernel tick (sysctl "
			  "kernel.perf_event_paranoid=2 for full rate)",
			  strerror(err), paranoid, what);
	else if (err == EACCES || err == EPERM)
		probe_msg("perf_event_open is refused (%s) although kernel."
			  "perf_event_paranoid is %d: a seccomp policy (as in "
			  "containers) or a security module refuses it; sampling "
			  "%swith per-thread CPU-time timers instead, at most one "
			  "sample per kernel tick (allow perf_event_open in the "
			  "seccomp profile for full rate)", strerror(err),
			  paranoid, what);
	else
		probe_msg("perf_event_open failed (%s): sampling %swith "
			  "per-thread CPU-time timers instead, at most one sample "
			  "per kernel tick", strerror(err), what);
	probe_mode = PROBE_MODE_TIMER;
}

/*
 * The main thread's source decides what this process can do: a hardware
 * event that this machine does not have falls back to cpu-clock; perf
 * events refused (or PROBE_TIMER=1) fall back to CPU-time timers; if those
 * fail too, no thread is profiled.
 */
int probe_thread_open_first(struct probe_thread *t)
{
	const char *step = "";
	int r;

	if (probe_cfg.timer)
		probe_mode = PROBE_MODE_TIMER;
	if (probe_cfg.type == PROBE_EVENT_ALLOC)
		probe_mode = PROBE_MODE_NONE;   /* --alloc alone */
	r = source_open(t, t->tid, &step);
	if (probe_mode == PROBE_MODE_PERF &&
	    (r == -ENOENT || r == -EOPNOTSUPP || r == -ENODEV)) {
		char name[64];

		snprintf(name, sizeof name, "%s", probe_cfg.event_name);
		probe_config_fallback_cpu_clock();
		probe_msg("event '%s' is not supported on this machine (%s); "
			  "falling back to cpu-clock", name,
			  r == -ENOENT || r == -EOPNOTSUPP ?
			  "the CPU or hypervisor exposes no such counter, as in most "
			  "VMs" : "the kernel has no such event");
		r = source_open(t, t->tid, &step);
	}
	if (probe_mode == PROBE_MODE_PERF && strcmp(step, "perf_event_open") == 0 &&
	    (r == -EACCES || r == -EPERM || r == -ENOSYS)) {
		fall_back_to_timers(-r);
		r = source_open(t, t->tid, &step);
	}
	if (r == 0)
		return 0;
	if (probe_mode == PROBE_MODE_PERF && strcmp(step, "perf_event_open") == 0 &&
	    r == -EINVAL) {
		probe_msg("the kernel rejected the settings of event '%s' (%s): "
			  "is the rate above /proc/sys/kernel/"
			  "perf_event_max_sample_rate (%d)? not profiling",
			  probe_cfg.event_name, strerror(-r),
			  read_int_file("/proc/sys/kernel/perf_event_max_sample_rate"));
		events_refused = 1;
		unprofiled(PROBE_UNPROF_REFUSED);
	} else if (probe_mode == PROBE_MODE_TIMER && r != -EAGAIN) {
		probe_msg("cannot create a CPU-time timer either (%s); not "
			  "profiling", strerror(-r));
		events_refused = 1;
		unprofiled(PROBE_UNPROF_REFUSED);
	} else {
		report_open_error(-r, step, t->tid);
	}
	probe_lost(NULL, PROBE_LOST_THREAD, 1);
	return -1;
}

/* The loader's: the top of the initial thread's stack, where _start began. */
extern void *__libc_stack_end;

/*
 * The initial thread's stack, as pthread_getattr_np finds its top (the
 * page above __libc_stack_end) but without the /proc/self/maps read it
 * does for the bottom (20 to 40 us of every process's start): the bottom
 * is the stack limit below the top (1 GiB at most), which only bounds
 * where an interrupted rsp may be.  -1 when sp is not on that stack (a
 * fork child of another thread: its thread's stack).
 */
static int initial_stack(struct probe_thread *t)
{
	uint64_t hi, lim = 1ull << 30, sp = (uint64_t)(uintptr_t)__builtin_frame_address(0);
	struct rlimit rl;

	if (!__libc_stack_end)
		return -1;
	hi = ((uint64_t)(uintptr_t)__libc_stack_end & ~4095ull) + 4096;
	if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < lim)
		lim = rl.rlim_cur;
	if (sp >= hi || hi - sp >= lim)
		return -1;
	t->stack_lo = hi - lim;
	t->stack_hi = hi;
	return 0;
}

void probe_thread_attach_self(struct probe_thread *t)
{
	pthread_attr_t a;
	void *addr;
	size_t size;

	t->tid = gettid();
	probe_thread_take_slot(t);
	/* Its stack's bounds, for cfi.c's walk (which reads nothing else). */
	if (initial_stack(t) == 0) {
		/* the initial thread's, found without reading /proc */
	} else if (pthread_getattr_np(pthread_self(), &a) == 0) {
		if (pthread_attr_getstack(&a, &addr, &size) == 0) {
			t->stack_lo = (uint64_t)(uintptr_t)addr;
			t->stack_hi = t->stack_lo + size;
		}
		pthread_attr_destroy(&a);
	}
	probe_self = t;
	if (key_ok)
		pthread_setspecific(probe_key, t);
	probe_offcpu_thread_start(t);
}

/* ---- thread end ---------------------------------------------------------- */

static unsigned probe_stuck_ended;     /* threads that ended stuck */

/*
 * Samples held in a ring before we call its thread stuck.  One is normal:
 * its signal is on its way, or held by one of glibc's own windows with
 * every signal blocked (posix_spawn, pthread_create), which may last long
 * in wall time (a vfork child slow to exec) but run for less than one
 * sampling period.  A second came once in a CI run with both cores busy
 * (gt_signals window, which runs microseconds after its first sample,
 * was called stuck; not reproduced in 40 loaded runs).  The likely cause:
 * cpu-clock's timer counts the time the hypervisor holds the virtual CPU
 * (this VM shows steal time).  Four mean the thread ran periods more with
 * our signal held: blocked for real, by a raw system call (such a thread
 * gathers hundreds).
 */
#define STUCK_SAMPLES 4

/* On t itself: is our signal really blocked (only a raw system call can)? */
static int is_stuck(struct probe_thread *t)
{
	sigset_t cur;
	uint64_t tail;

	return probe_real_sigmask(SIG_BLOCK, NULL, &cur) == 0 &&
	       sigismember(&cur, probe_cfg.signo) == 1 &&
	       probe_ring_pending(t, &tail) >= STUCK_SAMPLES;
}

/* ending: the thread ends here (its key's destructor), else it goes on. */
static void stop_self(int ending)
{
	struct probe_thread *t = probe_self, **pp;
	char name[17] = "";

	if (!t || t->closed)
		return;
	/* Its handler never took what its ring holds: blocked behind our back. */
	if (is_stuck(t))
		__atomic_add_fetch(&probe_stuck_ended, 1, __ATOMIC_RELAXED);
	/*
	 * Blocked for good: a signal still queued for the closed event must
	 * not reach the program's handler (or the default action) later.  The
	 * kernel discards it when the thread exits.
	 */
	probe_block_signal(NULL);
	probe_offcpu_thread_end(t);
	/* The exit path may be looking at the ring (stuck check): reg lock. */
	pthread_mutex_lock(&probe_reg_lock);
	source_close(t, ending);
	prctl(PR_GET_NAME, name, 0, 0, 0);
	probe_slot_done(t->slot, name);
	probe_self = NULL;
	t->closed = 1;
	for (pp = &probe_threads; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	pthread_mutex_unlock(&probe_reg_lock);
	if (!t->adopted)
		probe_thread_free(t);
}

/*
 * Exec path: no locks (exec may be called from a signal handler).  The
 * caller has blocked our signal; the event ends (munmap, no more signals)
 * and the timer is deleted, so nothing new can be queued for this thread.
 */
void probe_thread_pause_self(void)
{
	struct probe_thread *t = probe_current_thread();

	if (!t || t->closed)
		return;
	source_close(t, 0);
}

/* The exec failed: sample this thread again. */
void probe_thread_resume_self(void)
{
	struct probe_thread *t = probe_self;

	if (!t || t->closed || probe_stopping)
		return;
	if ((t->ev[0].sigfd >= 0 || t->timer >= 0) || open_source(t, t->tid) < 0)
		return;
	source_start(t);
}

void probe_thread_stop_self(void)
{
	stop_self(0);
}

static void key_destructor(void *p)
{
	(void)p;
	stop_self(1);
}

/*
 * Does thread tid have our signal blocked (its SigBlk)?  Asked at the end,
 * of threads whose ring still holds what their handler never took.
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

/*
 * A thread whose ring holds STUCK_SAMPLES its handler never took, and that
 * has our signal blocked, twice 5 ms apart with nothing taken meanwhile.
 */
unsigned probe_threads_stuck(void)
{
	unsigned n = __atomic_load_n(&probe_stuck_ended, __ATOMIC_RELAXED);
	struct { pid_t tid; uint64_t tail; } c[64];
	unsigned nc = 0;
	struct timespec wait = { 0, 5 * 1000 * 1000 };
	uint64_t tail;

	if (pthread_mutex_trylock(&probe_reg_lock) != 0)
		return n;
	for (struct probe_thread *t = probe_threads; t && nc < 64; t = t->next)
		if (t != probe_self && !t->closed &&
		    probe_ring_pending(t, &tail) >= STUCK_SAMPLES &&
		    blocks_our_signal(t->tid)) {
			c[nc].tid = t->tid;
			c[nc++].tail = tail;
		}
	pthread_mutex_unlock(&probe_reg_lock);
	if (!nc)
		return n;
	nanosleep(&wait, NULL);
	if (pthread_mutex_trylock(&probe_reg_lock) != 0)
		return n;
	for (struct probe_thread *t = probe_threads; t; t = t->next)
		for (unsigned i = 0; i < nc; i++)
			if (t->tid == c[i].tid && !t->closed &&
			    probe_ring_pending(t, &tail) >= STUCK_SAMPLES &&
			    tail == c[i].tail &&
			    blocks_our_signal(t->tid))
				n++;
	pthread_mutex_unlock(&probe_reg_lock);
	return n;
}

/* ---- pthread_create ------------------------------------------------------ */

struct probe_start {
	void *(*fn)(void *);
	void *arg;
	struct probe_thread *t;
	int app_blocked;        /* the creator's view of our signal */
};

static __attribute__((noinline)) void thread_begin(struct probe_thread *t,
						   int app_blocked)
{
	sigset_t ours;

	/* The creator may have blocked everything: the view stays its own. */
	probe_app_blocked = app_blocked;
	sigemptyset(&ours);
	sigaddset(&ours, probe_cfg.signo);
	probe_real_sigmask(SIG_UNBLOCK, &ours, NULL);
	probe_thread_attach_self(t);
	probe_thread_register(t);
	if (!probe_stopping && open_source(t, t->tid) == 0)
		source_start(t);
}

/*
 * The new thread's first function.  The user's routine is its last call, so
 * the compiler makes it a jump: our frame is not left in every stack.
 */
static void *probe_thread_start(void *p)
{
	struct probe_start *s = p;
	void *(*fn)(void *) = s->fn;
	void *arg = s->arg;

	thread_begin(s->t, s->app_blocked);
	free(s);
	return fn(arg);
}

__attribute__((visibility("default")))
int pthread_create(pthread_t *th, const pthread_attr_t *attr,
		   void *(*fn)(void *), void *arg)
{
	struct probe_start *s;
	int r;

	resolve_create();
	if (!real_create)
		return EAGAIN;
	if (!probe_active || probe_stopping || !probe_is_ours())
		return real_create(th, attr, fn, arg);
	/* A normal-context moment: a lost connection, objects loaded unseen. */
	probe_announce_maps();
	probe_unwind_lazy(0);
	s = malloc(sizeof *s);
	if (s)
		s->t = probe_thread_alloc();
	if (!s || !s->t) {
		/* Out of memory: run the thread unprofiled rather than fail it. */
		free(s);
		unprofiled(PROBE_UNPROF_MEM);
		return real_create(th, attr, fn, arg);
	}
	s->fn = fn;
	s->arg = arg;
	s->app_blocked = probe_app_blocked;
	r = real_create(th, attr, probe_thread_start, s);
	if (r) {
		probe_thread_free(s->t);
		free(s);
	}
	return r;
}

int probe_thread_init(void)
{
	resolve_create();
	if (!real_create) {
		probe_msg("cannot find pthread_create in the C library; not "
			  "profiling");
		return -1;
	}
	key_ok = pthread_key_create(&probe_key, key_destructor) == 0;
	return 0;
}

/* ---- threads that were there before us ---------------------------------- */

void probe_threads_adopt_existing(void)
{
	const char *threads = probe_status_field("Threads");
	DIR *d;
	struct dirent *e;
	pid_t self = gettid();
	char name[17];

	/* Only this one (nearly always, before main): no directory to read. */
	if (threads && strtol(threads, NULL, 10) == 1)
		return;
	d = opendir("/proc/self/task");
	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		pid_t tid = (pid_t)atoi(e->d_name);
		struct probe_thread *t;

		if (tid <= 0 || tid == self)
			continue;
		if (probe_nadopted >= PROBE_ADOPT_MAX || events_refused)
			break;
		t = probe_thread_alloc();
		if (!t)
			break;
		t->tid = tid;
		t->adopted = 1;
		probe_thread_comm(tid, name);
		take_slot(t, name);
		if (open_source(t, tid) < 0) {
			probe_slot_done(t->slot, name);
			/* Gone already, or not ours to profile. */
			probe_thread_free(t);
			continue;
		}
		probe_adopted[probe_nadopted] = t;
		__atomic_store_n(&probe_nadopted, probe_nadopted + 1,
				 __ATOMIC_RELEASE);
		probe_thread_register(t);
	}
	closedir(d);
}

void probe_threads_enable_all(void)
{
	pthread_mutex_lock(&probe_reg_lock);
	for (struct probe_thread *t = probe_threads; t; t = t->next)
		if (!t->closed)
			source_start(t);
	pthread_mutex_unlock(&probe_reg_lock);
}

/*
 * Fork child (only the forking thread exists; the registry lock was taken
 * in the prepare handler, so the list is consistent): every ring and fd we
 * inherited belongs to the parent's events (timers are not inherited), and
 * the slots are the parent's arena, already replaced by the child's own.
 * Drop ours without disabling, forget the parent's threads, keep (and
 * reset) the calling thread's state.
 */
void probe_threads_after_fork_child(void)
{
	struct probe_thread *self = probe_self, *t, *next;

	pthread_mutex_init(&probe_reg_lock, NULL);
	if (self && self->closed)
		self = NULL;
	for (t = probe_threads; t; t = next) {
		next = t->next;
		probe_event_forget(t);
		if (t != self)
			probe_thread_free(t);
	}
	probe_threads = NULL;
	probe_threads_seen = 0;
	probe_stuck_ended = 0;  /* the parent's, said by the parent */
	probe_nadopted = 0;
	memset(probe_adopted, 0, sizeof probe_adopted);
	memset(probe_unprofiled, 0, sizeof probe_unprofiled);
	if (!self) {
		self = probe_thread_alloc();
		if (!self) {
			probe_self = NULL;
			return;
		}
	} else {
		memset(self, 0, sizeof *self);
		probe_events_clear(self);
		self->timer = -1;
		self->slot = -1;
	}
	probe_thread_attach_self(self);
	probe_thread_register(self);
}
