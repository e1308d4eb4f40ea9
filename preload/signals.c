/*
 * signals.c - the program's view of the signals libprobe holds, and the
 * interposed sigaction, signal (and bsd_signal, sysv_signal, sigset),
 * sigprocmask and pthread_sigmask that keep that view.  (sysv_signal and
 * sigset matter: they would otherwise replace our handler with one that
 * SA_RESETHAND turns back into SIG_DFL, and our next signal would kill the
 * program.  What still gets past, a raw rt_sigaction, the sender notices
 * within 10 ms and undoes.)
 *
 * Signals we hold (probe_signal_take):
 *   - PROBE_SIG_CHAIN: our profiling signal (SIGTRAP, a realtime one, or
 *     SIGPROF under a debugger: event.c) and SIGIO.  Our handler stays
 *     installed whatever the program does; what the program installs is
 *     kept as its view: sigaction's oldact and signal()'s return value
 *     report it back, and probe_signal_chain() gives it every signal that
 *     is not ours (with its sa_mask, SA_NODEFER, SA_RESETHAND, SA_SIGINFO;
 *     SIG_IGN; SIG_DFL's action).  A program that installs a handler for
 *     our signal is told once (by the sender) that it shares the signal.
 *   - PROBE_SIG_FATAL: signals whose default action ends the process, while
 *     the program leaves them at SIG_DFL (handler.c flushes, then dies the
 *     same way).  Whatever else it installs, it gets for real.
 *
 * Masks: our signal stays deliverable even where the program blocks it
 * (sigfillset in worker threads is common), so those threads stay
 * profiled: the interposed sigprocmask/pthread_sigmask take it out of the
 * set they apply, and report the program's own view back in oldset
 * (probe_app_blocked, per thread, inherited by threads it creates).
 * Blocking every signal (a set with SIGKILL's bit, as sigfillset makes) is
 * common and needs no word; blocking our signal by name is counted and said
 * once.  A signal of the program's own that arrives for our signal while it
 * (in its view) has it blocked is deferred on that thread and raised again
 * when it unblocks it (sigpending and sigwait do not see it meanwhile: a
 * program that sigwaits for our signal needs PROBE_SIGNAL).
 *
 * The view is read in signal context without locks: each signal's view
 * has two slots and a generation counter; writers (sigaction, rare) take a
 * spin lock.  In a vfork child or a child forked without our atfork
 * handlers (probe_is_ours() is 0) everything passes straight through.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "probe.h"

#define NSIGS 65

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef int (*sigmask_fn)(int, const sigset_t *, sigset_t *);
typedef void (*sighandler_fn)(int);

static sigaction_fn real_sa;
static sigmask_fn real_procmask, real_pthread_mask;

static sighandler_fn (*real_signal)(int, sighandler_fn);
static sighandler_fn (*real_sysv_signal)(int, sighandler_fn);
static sighandler_fn (*real_sigset)(int, sighandler_fn);
static int kind[NSIGS];
static struct sigaction ours_act[NSIGS];
static struct sigaction view[NSIGS][2];
static unsigned view_gen[NSIGS];
static int view_lock;

__thread int probe_app_blocked;
__thread int probe_in_probe;
uint64_t probe_block_attempts;
int probe_handler_replaced;

static void resolve(void)
{
	if (!real_sa)
		real_sa = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
	if (!real_procmask)
		real_procmask = (sigmask_fn)dlsym(RTLD_NEXT, "sigprocmask");
	if (!real_pthread_mask)
		real_pthread_mask = (sigmask_fn)dlsym(RTLD_NEXT, "pthread_sigmask");
	if (!real_signal)
		real_signal = (sighandler_fn (*)(int, sighandler_fn))
			dlsym(RTLD_NEXT, "signal");
	if (!real_sysv_signal)
		real_sysv_signal = (sighandler_fn (*)(int, sighandler_fn))
			dlsym(RTLD_NEXT, "sysv_signal");
	if (!real_sigset)
		real_sigset = (sighandler_fn (*)(int, sighandler_fn))
			dlsym(RTLD_NEXT, "sigset");
}

int probe_real_sigaction(int sig, const struct sigaction *act,
			 struct sigaction *old)
{
	resolve();
	if (!real_sa) {
		errno = ENOSYS;
		return -1;
	}
	return real_sa(sig, act, old);
}

/* The kernel's mask, directly: no wrapper, no filtering. */
int probe_real_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return (int)syscall(SYS_rt_sigprocmask, how, set, old, NSIGS / 8);
}

/* ---- the program's view ------------------------------------------------- */

static void view_set(int sig, const struct sigaction *act)
{
	unsigned g;
	int spins = 0;

	/* Bounded: a writer interrupted on this very thread must not hang us. */
	while (__atomic_exchange_n(&view_lock, 1, __ATOMIC_ACQUIRE) && ++spins < 100000)
		__builtin_ia32_pause();
	g = __atomic_load_n(&view_gen[sig], __ATOMIC_RELAXED);
	view[sig][(g + 1) & 1] = *act;
	__atomic_store_n(&view_gen[sig], g + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&view_lock, 0, __ATOMIC_RELEASE);
}

void probe_signal_app(int sig, struct sigaction *out)
{
	unsigned g = __atomic_load_n(&view_gen[sig], __ATOMIC_ACQUIRE);

	*out = view[sig][g & 1];
}

static int is_default(const struct sigaction *a)
{
	return !(a->sa_flags & SA_SIGINFO) && a->sa_handler == SIG_DFL;
}

int probe_signal_take(int sig, int k, void (*fn)(int, siginfo_t *, void *),
		      int flags)
{
	struct sigaction sa, cur;

	if (sig <= 0 || sig >= NSIGS)
		return -1;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = fn;
	sa.sa_flags = flags | SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (probe_real_sigaction(sig, NULL, &cur) < 0)
		return -1;
	if (k == PROBE_SIG_FATAL && !is_default(&cur))
		return 0;       /* the program's own disposition: leave it */
	if (probe_real_sigaction(sig, &sa, NULL) < 0)
		return -1;
	ours_act[sig] = sa;
	view_set(sig, &cur);
	__atomic_store_n(&kind[sig], k, __ATOMIC_RELEASE);
	return 0;
}

/* ---- SIGNAL CONTEXT: handing signals on -------------------------------- */

static int held(int sig);

static int default_ignores(int sig)
{
	return sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH ||
	       sig == SIGCONT;
}

/*
 * What delivering sig to the program does to a system call it interrupted
 * with -ERESTARTSYS: 1 restarts it (a handler with SA_RESTART, a stop), 0
 * fails it with EINTR (a handler without), -1 has no say (ignored, or the
 * process ends).  Normal context: it asks the kernel (sigaction).
 */
static int signal_restarts(int sig)
{
	struct sigaction a;

	if (sig <= 0 || sig >= NSIGS)
		return -1;
	if (held(sig))
		probe_signal_app(sig, &a);
	else if (probe_real_sigaction(sig, NULL, &a) < 0)
		return -1;
	if (!(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_IGN)
		return -1;
	if (is_default(&a))
		return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
		       sig == SIGTTOU ? 1 : -1;
	return (a.sa_flags & SA_RESTART) != 0;
}

/* The signals whose handler the program installed without SA_RESTART. */
static uint64_t norestart;

/* Normal context: sig's disposition changed; keep norestart true. */
static void note_restart(int sig)
{
	uint64_t bit = sig > 0 && sig <= 64 ? 1ull << (sig - 1) : 0;

	if (signal_restarts(sig) == 0)
		__atomic_or_fetch(&norestart, bit, __ATOMIC_RELAXED);
	else
		__atomic_and_fetch(&norestart, ~bit, __ATOMIC_RELAXED);
}

/*
 * SIGNAL CONTEXT: norestart alone.  Our own signal (SIGTRAP under
 * sigtrap, the realtime one of F_SETSIG and of the timers) is left out:
 * what it interrupted is ours to restart, whatever the program's view.
 */
int probe_signal_any_norestart(const sigset_t *mask)
{
	uint64_t m = __atomic_load_n(&norestart, __ATOMIC_RELAXED);

	for (int sig = 1; m && sig <= 64; sig++, m >>= 1)
		if ((m & 1) && sig != probe_cfg.signo && sigismember(mask, sig) != 1)
			return 1;
	return 0;
}

void probe_signal_chain(int sig, siginfo_t *si, void *uc)
{
	struct sigaction a;
	struct probe_thread *t;

	if (sig <= 0 || sig >= NSIGS)
		return;
	probe_signal_app(sig, &a);
	if (sig == probe_cfg.signo && probe_app_blocked && si &&
	    probe_cfg.trap && si->si_code > 0 && si->si_code != TRAP_PERF) {
		/*
		 * A trap the program caused (int3, single step) while it has
		 * SIGTRAP blocked: the kernel forces such a signal through
		 * with the default action.  So do we.
		 */
		memset(&a, 0, sizeof a);
		a.sa_handler = SIG_DFL;
	} else if (sig == probe_cfg.signo && probe_app_blocked) {
		/* Blocked in the program's view: keep it for when it unblocks. */
		t = probe_self;
		if (t && si && t->ndefer < PROBE_DEFER_MAX)
			t->defer[t->ndefer++] = *si;
		return;
	}
	if (!(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_IGN)
		return;
	if (is_default(&a)) {
		/* Never the default action for what may be our own signals. */
		if (sig == SIGIO && si && si->si_code == SI_KERNEL)
			return;
		/*
		 * Late ones of our closed events and timers (SI_TIMER) are
		 * dropped: any other signal gets the default action, as
		 * without us: kill, sigqueue, and the kernel's own (the
		 * program's traps under sigtrap, int3: SI_KERNEL; its
		 * setitimer's SIGPROF when SIGPROF is ours, under a debugger).
		 */
		if (sig == probe_cfg.signo && si &&
		    (probe_signal_from_event(sig, si) || si->si_code == SI_TIMER))
			return;
		if (default_ignores(sig))
			return;
		/*
		 * As without us: the default action, right after we return
		 * (a trap would also simply happen again); what was sampled is
		 * sent first, as for the fatal signals (handler.c).
		 */
		probe_finish(128 + sig);
		struct sigaction d;
		memset(&d, 0, sizeof d);
		d.sa_handler = SIG_DFL;
		probe_real_sigaction(sig, &d, NULL);
		syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
		return;
	}
	if (a.sa_flags & SA_RESETHAND) {
		struct sigaction d;
		memset(&d, 0, sizeof d);
		d.sa_handler = SIG_DFL;
		view_set(sig, &d);
	}
	/* Its sa_mask (and the signal itself) blocked while its handler runs. */
	sigset_t block = a.sa_mask, old;
	if (!(a.sa_flags & SA_NODEFER))
		sigaddset(&block, sig);
	sigdelset(&block, probe_cfg.signo);
	probe_real_sigmask(SIG_BLOCK, &block, &old);
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, si, uc);
	else
		a.sa_handler(sig);
	probe_real_sigmask(SIG_SETMASK, &old, NULL);
}

void probe_signal_flush_deferred(void)
{
	struct probe_thread *t = probe_self;
	pid_t pid, tid;
	uint64_t n;

	if (!t || !t->ndefer)
		return;
	pid = getpid();
	tid = (pid_t)syscall(SYS_gettid);
	n = t->ndefer;
	t->ndefer = 0;
	for (uint64_t i = 0; i < n; i++)
		syscall(SYS_rt_tgsigqueueinfo, pid, tid, probe_cfg.signo,
			&t->defer[i]);
}

void probe_signal_app_mask(sigset_t *mask)
{
	probe_real_sigmask(SIG_BLOCK, NULL, mask);
	if (probe_app_blocked)
		sigaddset(mask, probe_cfg.signo);
	else
		sigdelset(mask, probe_cfg.signo);
}

/* ---- the interposed functions ------------------------------------------- */

static int held(int sig)
{
	return sig > 0 && sig < NSIGS &&
	       __atomic_load_n(&kind[sig], __ATOMIC_ACQUIRE) != PROBE_SIG_NONE &&
	       probe_is_ours();
}

__attribute__((visibility("default")))
int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction prev;

	if (!held(sig)) {
		int r = probe_real_sigaction(sig, act, old);

		if (r == 0 && act)
			note_restart(sig);
		return r;
	}
	probe_signal_app(sig, &prev);
	if (act) {
		if (kind[sig] == PROBE_SIG_FATAL) {
			/* SIG_DFL: ours again; anything else: the program's. */
			if (probe_real_sigaction(sig, is_default(act) ? &ours_act[sig]
								      : act,
						 NULL) < 0)
				return -1;
		} else if (sig == probe_cfg.signo &&
			   ((act->sa_flags & SA_SIGINFO) ||
			    (act->sa_handler != SIG_DFL &&
			     act->sa_handler != SIG_IGN))) {
			__atomic_store_n(&probe_handler_replaced, 1,
					 __ATOMIC_RELAXED);
		}
		view_set(sig, act);
		note_restart(sig);
	}
	if (old)
		*old = prev;
	return 0;
}

/* glibc's signal(): BSD semantics, the signal blocked in its handler. */
__attribute__((visibility("default")))
sighandler_fn signal(int sig, sighandler_fn fn)
{
	struct sigaction sa, old;

	if (!held(sig)) {
		resolve();
		if (real_signal) {
			sighandler_fn r = real_signal(sig, fn);

			if (r != SIG_ERR)
				note_restart(sig);
			return r;
		}
		errno = ENOSYS;
		return SIG_ERR;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, sig);
	sa.sa_flags = SA_RESTART;
	if (sigaction(sig, &sa, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

__attribute__((visibility("default")))
sighandler_fn bsd_signal(int sig, sighandler_fn fn)
{
	return signal(sig, fn);
}

/* System V: no SA_RESTART, reset to SIG_DFL when delivered, not blocked in it. */
__attribute__((visibility("default")))
sighandler_fn sysv_signal(int sig, sighandler_fn fn)
{
	struct sigaction sa, old;

	if (!held(sig)) {
		resolve();
		if (real_sysv_signal) {
			sighandler_fn r = real_sysv_signal(sig, fn);

			if (r != SIG_ERR)
				note_restart(sig);
			return r;
		}
		errno = ENOSYS;
		return SIG_ERR;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	if (sigaction(sig, &sa, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

/* System V's sigset: SIG_HOLD blocks; anything else installs and unblocks. */
__attribute__((visibility("default")))
sighandler_fn sigset(int sig, sighandler_fn fn)
{
	struct sigaction sa, old;
	sigset_t one, prev;

	if (!held(sig)) {
		resolve();
		if (real_sigset) {
			sighandler_fn r = real_sigset(sig, fn);

			if (r != SIG_ERR)
				note_restart(sig);
			return r;
		}
		errno = ENOSYS;
		return SIG_ERR;
	}
	sigemptyset(&one);
	sigaddset(&one, sig);
	if (fn == SIG_HOLD) {
		if (sigprocmask(SIG_BLOCK, &one, &prev) < 0 ||
		    sigaction(sig, NULL, &old) < 0)
			return SIG_ERR;
		return sigismember(&prev, sig) ? SIG_HOLD : old.sa_handler;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, &old) < 0 ||
	    sigprocmask(SIG_UNBLOCK, &one, &prev) < 0)
		return SIG_ERR;
	return sigismember(&prev, sig) ? SIG_HOLD : old.sa_handler;
}

/*
 * The mask calls: our signal is never blocked for real, but the program
 * sees its own view.  fail is how the real call reports an error (-1 and
 * errno, or the error number).
 */
static int mask_call(sigmask_fn real, int how, const sigset_t *set,
		     sigset_t *old, const void *caller)
{
	int sig = probe_cfg.signo, before, after, r;
	sigset_t s;
	const sigset_t *use = set;

	if (!probe_active || sig <= 0 || probe_in_probe ||
	    probe_unwind_owns(caller) || !probe_is_ours())
		return real(how, set, old);
	before = after = probe_app_blocked;
	if (set) {
		int in = sigismember(set, sig) == 1;

		if (how == SIG_BLOCK)
			after = before || in;
		else if (how == SIG_UNBLOCK)
			after = before && !in;
		else if (how == SIG_SETMASK)
			after = in;
		else
			return real(how, set, old);     /* EINVAL, as it is */
		if (in && how != SIG_UNBLOCK) {
			s = *set;
			sigdelset(&s, sig);
			use = &s;
		}
	}
	r = real(how, use, old);
	if (old) {
		if (before)
			sigaddset(old, sig);
		else
			sigdelset(old, sig);
	}
	if (set && r == 0) {
		probe_app_blocked = after;
		/*
		 * Blocking everything (sigfillset: SIGKILL's bit is set too) is
		 * common and harmless; blocking our signal by name is worth a
		 * word (the sender says it once).
		 */
		if (after && !before && sigismember(set, SIGKILL) != 1)
			__atomic_add_fetch(&probe_block_attempts, 1,
					   __ATOMIC_RELAXED);
		if (before && !after)
			probe_signal_flush_deferred();
	}
	return r;
}

__attribute__((visibility("default")))
int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	resolve();
	if (!real_pthread_mask)
		return ENOSYS;
	return mask_call(real_pthread_mask, how, set, old,
			 __builtin_return_address(0));
}

__attribute__((visibility("default")))
int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	resolve();
	if (!real_procmask) {
		errno = ENOSYS;
		return -1;
	}
	return mask_call(real_procmask, how, set, old,
			 __builtin_return_address(0));
}
