/*
 * waits.c - the blocking calls of libc, interposed for --off-cpu
 * (offcpu.c says what is done with them).  Built into libprobe-offcpu.so
 * only, which --off-cpu preloads instead of libprobe.so: the real call is
 * timed, and the caller's context kept in case the process exits while it
 * blocks (a call from libprobe itself, or made inside another wait, is a
 * plain call to the real one).
 *
 * Locks and semaphores try first (trylock, trywait), so that only the
 * calls that may block are timed; what they return on that path is what
 * the blocking call would have returned (EBUSY alone sends on to it).
 *
 * A contended mutex's unlock and a condition variable's signal or broadcast
 * are timed too when they wake a waiter: the kernel often runs that waiter
 * at once, preempting the waker inside the call (wake-ups are where
 * threads that share a CPU are preempted).
 *
 * What no wrapper sees: calls inside libc itself (fread's read, system's
 * waitpid, stdio's locks), raw system calls (syscall(SYS_futex), Go),
 * and blocking that is not a call (a page fault, being preempted while
 * running).  offcpu.c counts that time as unseen.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

/* offcpu.c: the wrappers are here (libprobe-offcpu.so). */
extern const int probe_waits_linked;
const int probe_waits_linked = 1;

/*
 * name's wrapper: the real call between probe_wait_begin and _end.  The
 * frame address makes the compiler keep a frame pointer here, from which
 * the caller's context (return address, stack pointer, rbp) is read.
 */
#define WAIT_BODY(ret_t, sym, params, args)                                \
	static void *real_;                                                 \
	ret_t (*fn_) params = probe_wait_real(sym, &real_);                 \
	struct probe_thread *t_;                                            \
	ret_t r_;                                                           \
									    \
	if (!fn_) {                                                         \
		errno = ENOSYS;                                             \
		return (ret_t)-1;                                           \
	}                                                                   \
	t_ = probe_wait_begin((const void *)fn_, __builtin_return_address(0), \
			      __builtin_frame_address(0));                  \
	if (!t_)                                                            \
		return fn_ args;                                            \
	r_ = fn_ args;                                                      \
	probe_wait_end(t_);                                                 \
	return r_;

#define WAIT(ret_t, name, params, args)                                     \
	__attribute__((visibility("default"))) ret_t name params            \
	{                                                                   \
		WAIT_BODY(ret_t, #name, params, args)                       \
	}

/* Sleeps and waits for descriptors. */
WAIT(unsigned int, sleep, (unsigned int s), (s))
WAIT(int, usleep, (useconds_t us), (us))
WAIT(int, nanosleep, (const struct timespec *req, struct timespec *rem),
     (req, rem))
WAIT(int, clock_nanosleep, (clockid_t c, int fl, const struct timespec *req,
			    struct timespec *rem), (c, fl, req, rem))
WAIT(int, poll, (struct pollfd *fds, nfds_t n, int ms), (fds, n, ms))
WAIT(int, ppoll, (struct pollfd *fds, nfds_t n, const struct timespec *ts,
		  const sigset_t *m), (fds, n, ts, m))
WAIT(int, select, (int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv),
     (n, r, w, e, tv))
WAIT(int, pselect, (int n, fd_set *r, fd_set *w, fd_set *e,
		    const struct timespec *ts, const sigset_t *m),
     (n, r, w, e, ts, m))
WAIT(int, epoll_wait, (int fd, struct epoll_event *ev, int n, int ms),
     (fd, ev, n, ms))
WAIT(int, epoll_pwait, (int fd, struct epoll_event *ev, int n, int ms,
			const sigset_t *m), (fd, ev, n, ms, m))

/* Reads and writes that may wait for a pipe, a socket, a terminal, a disk. */
WAIT(ssize_t, read, (int fd, void *b, size_t n), (fd, b, n))
WAIT(ssize_t, readv, (int fd, const struct iovec *v, int n), (fd, v, n))
WAIT(ssize_t, pread, (int fd, void *b, size_t n, off_t o), (fd, b, n, o))
WAIT(ssize_t, pread64, (int fd, void *b, size_t n, off_t o), (fd, b, n, o))
WAIT(ssize_t, write, (int fd, const void *b, size_t n), (fd, b, n))
WAIT(ssize_t, writev, (int fd, const struct iovec *v, int n), (fd, v, n))
WAIT(ssize_t, recv, (int fd, void *b, size_t n, int fl), (fd, b, n, fl))
WAIT(ssize_t, recvfrom, (int fd, void *b, size_t n, int fl,
			 struct sockaddr *a, socklen_t *al), (fd, b, n, fl, a, al))
WAIT(ssize_t, recvmsg, (int fd, struct msghdr *m, int fl), (fd, m, fl))
WAIT(ssize_t, send, (int fd, const void *b, size_t n, int fl), (fd, b, n, fl))
WAIT(ssize_t, sendto, (int fd, const void *b, size_t n, int fl,
		       const struct sockaddr *a, socklen_t al), (fd, b, n, fl, a, al))
WAIT(ssize_t, sendmsg, (int fd, const struct msghdr *m, int fl), (fd, m, fl))
WAIT(int, accept, (int fd, struct sockaddr *a, socklen_t *al), (fd, a, al))
WAIT(int, accept4, (int fd, struct sockaddr *a, socklen_t *al, int fl),
     (fd, a, al, fl))
WAIT(int, connect, (int fd, const struct sockaddr *a, socklen_t al), (fd, a, al))
WAIT(int, fsync, (int fd), (fd))
WAIT(int, fdatasync, (int fd), (fd))
WAIT(int, flock, (int fd, int op), (fd, op))

/* Children and signals. */
WAIT(pid_t, wait, (int *st), (st))
WAIT(pid_t, waitpid, (pid_t p, int *st, int o), (p, st, o))
WAIT(pid_t, wait4, (pid_t p, int *st, int o, struct rusage *ru), (p, st, o, ru))
WAIT(int, waitid, (idtype_t t, id_t id, siginfo_t *si, int o), (t, id, si, o))
WAIT(int, sigwait, (const sigset_t *s, int *sig), (s, sig))
WAIT(int, sigwaitinfo, (const sigset_t *s, siginfo_t *si), (s, si))
WAIT(int, sigtimedwait, (const sigset_t *s, siginfo_t *si,
			 const struct timespec *ts), (s, si, ts))
WAIT(int, sigsuspend, (const sigset_t *s), (s))
WAIT(int, pause, (void), ())

/* Threads. */
WAIT(int, pthread_cond_wait, (pthread_cond_t *c, pthread_mutex_t *m), (c, m))
WAIT(int, pthread_cond_timedwait, (pthread_cond_t *c, pthread_mutex_t *m,
				   const struct timespec *ts), (c, m, ts))
WAIT(int, pthread_cond_clockwait, (pthread_cond_t *c, pthread_mutex_t *m,
				   clockid_t k, const struct timespec *ts),
     (c, m, k, ts))
WAIT(int, pthread_join, (pthread_t t, void **ret), (t, ret))

/*
 * name's wrapper for a lock that can be tried first: try's answer unless
 * busy says it would block, then the blocking call, timed.
 */
#define LOCK(name, try, params, args, busy)                                 \
	__attribute__((visibility("default"))) int name params              \
	{                                                                   \
		static void *try_;                                          \
		int (*try_fn_) params = probe_wait_real(#try, &try_);       \
									    \
		if (probe_cfg.offcpu && try_fn_) {                          \
			int e_ = errno, r_ = try_fn_ args;                  \
									    \
			if (!(busy))                                        \
				return r_;                                  \
			errno = e_;                                         \
		}                                                           \
		{                                                           \
			WAIT_BODY(int, #name, params, args)                 \
		}                                                           \
	}

LOCK(pthread_mutex_lock, pthread_mutex_trylock, (pthread_mutex_t *m), (m),
     r_ == EBUSY)
LOCK(pthread_rwlock_rdlock, pthread_rwlock_tryrdlock, (pthread_rwlock_t *l),
     (l), r_ == EBUSY)
LOCK(pthread_rwlock_wrlock, pthread_rwlock_trywrlock, (pthread_rwlock_t *l),
     (l), r_ == EBUSY)
LOCK(sem_wait, sem_trywait, (sem_t *s), (s), r_ == -1 && errno == EAGAIN)
WAIT(int, pthread_mutex_timedlock, (pthread_mutex_t *m,
				    const struct timespec *ts), (m, ts))
WAIT(int, sem_timedwait, (sem_t *s, const struct timespec *ts), (s, ts))

/*
 * Calls that wake waiters: the kernel often runs the woken thread at once
 * on the waker's CPU, so the waker is preempted inside the call, off the
 * CPU until its turn comes again (gt_mutex: 20 % of its threads' wall time
 * in pthread_mutex_unlock, all "[stack unknown]" before).  Timed only when
 * busy, glibc's own test read before the call, says there are waiters:
 * the common call costs a load more and saves no registers (the timed
 * path is out of line).
 */
#define WAKE(name, type, busy)                                              \
	static void *name##_real_;                                          \
									    \
	__attribute__((noinline)) static int name##_timed(type *o,          \
		int (*fn)(type *), void *ret, void *fp)                     \
	{                                                                   \
		struct probe_thread *t = probe_wait_begin((const void *)fn, \
							  ret, fp);         \
		int r;                                                      \
									    \
		if (!t)                                                     \
			return fn(o);                                       \
		r = fn(o);                                                  \
		probe_wait_end(t);                                          \
		return r;                                                   \
	}                                                                   \
									    \
	__attribute__((visibility("default"))) int name(type *o)            \
	{                                                                   \
		int (*fn)(type *) = __atomic_load_n(&name##_real_,          \
						    __ATOMIC_RELAXED);      \
									    \
		if (!fn && !(fn = probe_wait_real(#name, &name##_real_)))   \
			return ENOSYS;                                      \
		if (!probe_cfg.offcpu || !(busy))                           \
			return fn(o);                                       \
		return name##_timed(o, fn, __builtin_return_address(0),     \
				    __builtin_frame_address(0));            \
	}

/*
 * A mutex's lock word is above 1 when it is locked with waiters (a robust
 * or PI mutex holds its owner's tid there: always timed); a condition
 * variable's waiters are counted in __wrefs from bit 3 (pthread_cond_signal
 * returns at once when there are none).
 */
WAKE(pthread_mutex_unlock, pthread_mutex_t,
     (unsigned)__atomic_load_n(&o->__data.__lock, __ATOMIC_RELAXED) > 1)
WAKE(pthread_cond_signal, pthread_cond_t,
     __atomic_load_n(&o->__data.__wrefs, __ATOMIC_RELAXED) >> 3 != 0)
WAKE(pthread_cond_broadcast, pthread_cond_t,
     __atomic_load_n(&o->__data.__wrefs, __ATOMIC_RELAXED) >> 3 != 0)

/*
 * The wake calls' libc functions looked up now, in the constructor: their
 * first call may come from a program's signal handler (pthread_cond_signal
 * there is common), where dlsym could deadlock on the loader's lock.
 */
void probe_waits_resolve(void)
{
	probe_wait_real("pthread_mutex_unlock", &pthread_mutex_unlock_real_);
	probe_wait_real("pthread_cond_signal", &pthread_cond_signal_real_);
	probe_wait_real("pthread_cond_broadcast", &pthread_cond_broadcast_real_);
}
