/*
 * gt_signals - a program that uses signals, masks and timers itself; its
 * output must be the same with and without probe.
 *   gt_signals alarm    SIGALRM from an interval timer (no SA_RESTART), a
 *                       read that the program expects to see EINTR, and one
 *                       it expects restarted (SA_RESTART)
 *   gt_signals prof     SIGPROF from ITIMER_PROF, handler set with signal()
 *   gt_signals chld     SIGCHLD (SA_SIGINFO) for five children, one by one
 *   gt_signals interrupt [N]  readv that an alarm must end with EINTR
 *   gt_signals eintr [N] slow calls between bursts of work: none may fail
 *                       with EINTR (nanosleep, poll, epoll_wait, select,
 *                       read, sigtimedwait); N rounds (2000) of one each
 *   gt_signals mask     every signal blocked in all threads (sigwait for
 *                       SIGUSR1 in one), the mask read back; masked_work
 *                       runs in two threads that block everything
 *   gt_signals ours     the program uses probe's signal with its own
 *                       handler, sigqueue, a timer, and blocks it; reads
 *                       back SIGIO's disposition.  Probe's signal: $GT_SIG,
 *                       TRAP (probe's default, SIGTRAP) or RTMIN+6 (the
 *                       default of PROBE_SIGNAL; used when GT_SIG is unset)
 *   gt_signals segv     a SIGSEGV handler that recovers with siglongjmp
 *   gt_signals sysv     $GT_SIG through sysv_signal (reset after each
 *                       delivery) and sigset (SIG_HOLD, then a handler)
 *   gt_signals trap     a SIGTRAP handler that counts int3 breakpoints and
 *                       raise(SIGTRAP) between bursts of work
 *   gt_signals int3     an int3 with SIGTRAP left at SIG_DFL: dies of it
 *   gt_signals int3blocked  the same with SIGTRAP blocked: the kernel
 *                       forces it through and the program dies of it
 *   gt_signals window   a thread in a window like glibc's own (posix_spawn,
 *                       pthread_create): every signal blocked with the raw
 *                       system call, for less than one sampling period of
 *                       work, then asleep so (as waiting for a vfork child)
 *                       when the program exits; nothing to warn about
 *   gt_signals rawmask  a thread that blocks every signal with the raw
 *                       rt_sigprocmask system call, and works
 *   gt_signals nested_exit  SIGALRM every 100 us; the first one that
 *                       comes while libprobe's code runs (its handler) does
 *                       after_nested's work in the handler and exit(7)
 *   gt_signals nested_jump  the same, but siglongjmp out of the handler,
 *                       then after_jump's work; exits 0
 *                       Both print "nested: yes", or "nested: no" after
 *                       10 s without such an alarm (always, without probe)
 * Prints what it saw; exits 0.
 */
#include <errno.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "gt_work.h"

GT_KEEP static void busy(long u) { GT_SPIN(u, 1.0); }
GT_KEEP static void masked_work(long u) { GT_SPIN(u, 2.0); }
GT_KEEP static void small_work(long iters)
{
	double x = 1.0;
	for (long i = 0; i < iters; i++)
		x = x * 1.0000001 + 0.25;
	gt_sink += x;
}

static volatile sig_atomic_t count, sum;

/* The signal the "ours" and "sysv" modes share with probe ($GT_SIG). */
static int shared_sig(void)
{
	const char *s = getenv("GT_SIG");

	return s && !strcmp(s, "TRAP") ? SIGTRAP : SIGRTMIN + 6;
}

static void on_count(int sig)
{
	(void)sig;
	count++;
}

static void on_info(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	count++;
	sum += si->si_value.sival_int;
}

static void *late_writer(void *arg)
{
	int fd = (int)(long)arg;
	struct timespec ts = { 0, 60 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	if (write(fd, "x", 1) != 1)
		perror("write");
	return NULL;
}

static int mode_alarm(void)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 5000 }, { 0, 5000 } };
	int p[2];
	char c;
	pthread_t t;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_count;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);          /* no SA_RESTART */
	setitimer(ITIMER_REAL, &it, NULL);
	while (count < 40)
		busy(1);
	memset(&it, 0, sizeof it);
	setitimer(ITIMER_REAL, &it, NULL);
	printf("alarms: at least 40\n");

	if (pipe(p) < 0)
		return 1;
	it.it_value.tv_usec = 30000;            /* one shot, 30 ms */
	setitimer(ITIMER_REAL, &it, NULL);
	ssize_t r = read(p[0], &c, 1);
	printf("read without SA_RESTART: %zd (%s)\n", r, r < 0 ? strerror(errno) : "data");

	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	it.it_value.tv_usec = 20000;            /* before the writer writes */
	setitimer(ITIMER_REAL, &it, NULL);
	pthread_create(&t, NULL, late_writer, (void *)(long)p[1]);
	r = read(p[0], &c, 1);
	printf("read with SA_RESTART: %zd (%s)\n", r, r < 0 ? strerror(errno) : "data");
	pthread_join(t, NULL);
	return 0;
}

static int mode_prof(void)
{
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } };

	signal(SIGPROF, on_count);
	setitimer(ITIMER_PROF, &it, NULL);
	while (count < 50)
		busy(1);
	memset(&it, 0, sizeof it);
	setitimer(ITIMER_PROF, &it, NULL);
	printf("sigprof: at least 50, handler %s\n",
	       signal(SIGPROF, SIG_DFL) == on_count ? "as set" : "CHANGED");
	return 0;
}

static int mode_chld(void)
{
	struct sigaction sa;
	sigset_t block, none;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_info;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &none);
	sigdelset(&none, SIGCHLD);
	for (int i = 0; i < 5; i++) {
		int st;
		pid_t pid = fork();
		if (pid == 0) {
			busy(5);
			_exit(i);
		}
		int before = count;
		while (count == before)
			sigsuspend(&none);
		waitpid(pid, &st, 0);
		printf("child %d exited %d\n", i, WEXITSTATUS(st));
	}
	printf("sigchld: %d\n", (int)count);
	return 0;
}

static int mode_eintr(long rounds)
{
	int p[2], ep = epoll_create1(0);
	long fails[6] = { 0 };
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t usr;

	if (pipe(p) < 0 || ep < 0)
		return 1;
	ev.data.fd = p[0];
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
	sigemptyset(&usr);
	sigaddset(&usr, SIGUSR2);
	sigprocmask(SIG_BLOCK, &usr, NULL);
	for (long i = 0; i < rounds; i++) {
		struct timespec ts = { 0, 10000 };
		struct pollfd pf = { p[0], POLLIN, 0 };
		struct epoll_event e;
		struct timeval tv = { 0, 10 };
		fd_set rd;

		small_work(20000);
		if (nanosleep(&ts, NULL) < 0 && errno == EINTR)
			fails[0]++;
		small_work(20000);
		if (poll(&pf, 1, 0) < 0 && errno == EINTR)
			fails[1]++;
		if (epoll_wait(ep, &e, 1, 0) < 0 && errno == EINTR)
			fails[2]++;
		FD_ZERO(&rd);
		FD_SET(p[0], &rd);
		if (select(p[0] + 1, &rd, NULL, NULL, &tv) < 0 && errno == EINTR)
			fails[3]++;
		if (read(p[0], &(char){ 0 }, 0) < 0 && errno == EINTR)
			fails[4]++;
		struct timespec z = { 0, 1000 };
		if (sigtimedwait(&usr, NULL, &z) < 0 && errno == EINTR)
			fails[5]++;
	}
	printf("EINTR: nanosleep %ld, poll %ld, epoll_wait %ld, select %ld, "
	       "read %ld, sigtimedwait %ld\n", fails[0], fails[1],
	       fails[2], fails[3], fails[4], fails[5]);
	return 0;
}

static void *masked_thread(void *arg)
{
	masked_work((long)arg);
	return NULL;
}

static void *waiter(void *arg)
{
	sigset_t s;
	int sig = 0;

	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigaddset(&s, SIGRTMIN + 6);
	sigwait(&s, &sig);
	printf("sigwait got %s\n", sig == SIGUSR1 ? "SIGUSR1" : "something else");
	return NULL;
}

static int mode_mask(void)
{
	sigset_t all, cur, old;
	pthread_t t[3];

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	printf("before: SIGRTMIN+6 %s\n", sigismember(&old, SIGRTMIN + 6) ? "blocked" : "open");
	sigprocmask(SIG_BLOCK, NULL, &cur);
	printf("after: SIGRTMIN+6 %s, SIGUSR1 %s\n",
	       sigismember(&cur, SIGRTMIN + 6) ? "blocked" : "open",
	       sigismember(&cur, SIGUSR1) ? "blocked" : "open");
	pthread_create(&t[0], NULL, waiter, NULL);
	pthread_create(&t[1], NULL, masked_thread, (void *)150L);
	pthread_create(&t[2], NULL, masked_thread, (void *)150L);
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	printf("thread mask read back: SIGRTMIN+6 %s\n",
	       sigismember(&cur, SIGRTMIN + 6) ? "blocked" : "open");
	pthread_join(t[1], NULL);
	pthread_join(t[2], NULL);
	kill(getpid(), SIGUSR1);
	pthread_join(t[0], NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	sigprocmask(SIG_BLOCK, NULL, &cur);
	printf("restored: SIGRTMIN+6 %s\n", sigismember(&cur, SIGRTMIN + 6) ? "blocked" : "open");
	return 0;
}

static int mode_ours(void)
{
	int sig = shared_sig();
	struct sigaction sa, old;
	sigset_t s;
	timer_t tm;
	struct sigevent sev;
	struct itimerspec its;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_info;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, &old);
	printf("old handler: %s\n", (old.sa_flags & SA_SIGINFO) ? "a handler" :
	       old.sa_handler == SIG_DFL ? "SIG_DFL" : "other");
	sigaction(sig, NULL, &old);
	printf("read back: %s\n", (old.sa_flags & SA_SIGINFO) &&
	       old.sa_sigaction == on_info ? "ours" : "NOT OURS");
	for (int i = 1; i <= 10; i++) {
		union sigval v = { .sival_int = i };
		sigqueue(getpid(), sig, v);
		busy(2);
	}
	printf("queued: count %d sum %d\n", (int)count, (int)sum);
	sigemptyset(&s);
	sigaddset(&s, sig);
	sigprocmask(SIG_BLOCK, &s, NULL);
	union sigval v = { .sival_int = 100 };
	sigqueue(getpid(), sig, v);
	busy(20);
	printf("while blocked: count %d\n", (int)count);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	busy(2);
	printf("after unblock: count %d sum %d\n", (int)count, (int)sum);

	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = sig;
	sev.sigev_value.sival_int = 0;
	timer_create(CLOCK_MONOTONIC, &sev, &tm);
	memset(&its, 0, sizeof its);
	its.it_value.tv_nsec = 2000000;
	its.it_interval.tv_nsec = 2000000;
	int before = count;
	timer_settime(tm, 0, &its, NULL);
	while (count < before + 5)
		busy(1);
	timer_delete(tm);
	printf("timer: fired at least 5 times\n");

	signal(sig, SIG_IGN);
	sigqueue(getpid(), sig, v);
	busy(2);
	sigaction(sig, NULL, &old);
	printf("ignored: count %d, disposition %s\n", (int)count - before >= 5 ? 5 : -1,
	       old.sa_handler == SIG_IGN ? "SIG_IGN" : "other");
	sigaction(SIGIO, NULL, &old);
	printf("SIGIO: %s\n", !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL ?
	       "SIG_DFL" : "NOT SIG_DFL");
	sigaction(SIGSEGV, NULL, &old);
	printf("SIGSEGV: %s\n", !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL ?
	       "SIG_DFL" : "NOT SIG_DFL");
	return 0;
}

static sigjmp_buf jb;

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(jb, 1);
}

static volatile int recovered;
static int *volatile bad_ptr;

static void try_fault(void)
{
	if (sigsetjmp(jb, 1) == 0) {
		busy(10);
		*bad_ptr = 1;
	} else {
		recovered++;
	}
}

static int mode_segv(void)
{
	signal(SIGSEGV, on_segv);
	for (int i = 0; i < 3; i++)
		try_fault();
	printf("recovered %d\n", recovered);
	return 0;
}

/* sigset is deprecated, and that is the point: old programs call it. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static int mode_sysv(void)
{
	int sig = shared_sig();

	for (int i = 0; i < 3; i++) {
		sysv_signal(sig, on_count);
		raise(sig);
		busy(5);
	}
	struct sigaction old;
	sigaction(sig, NULL, &old);
	printf("sysv_signal: count %d, then %s\n", (int)count,
	       old.sa_handler == SIG_DFL ? "SIG_DFL" : "not SIG_DFL");
	sigset(sig, SIG_HOLD);
	raise(sig);
	busy(10);
	printf("held: count %d\n", (int)count);
	sigset(sig, on_count);
	busy(2);
	printf("released: count %d\n", (int)count);
	return 0;
}

static void *raw_masked(void *arg)
{
	sigset_t all;

	sigfillset(&all);
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, 8);
	masked_work((long)arg);
	return NULL;
}

static int mode_rawmask(void)
{
	pthread_t t;

	pthread_create(&t, NULL, raw_masked, (void *)400L);
	busy(400);
	pthread_join(t, NULL);
	printf("rawmask done\n");
	return 0;
}

/* Any signal pending?  (glibc 2.36's sigisemptyset misses bits 32-63.) */
static int any_pending(void)
{
	sigset_t pend;

	sigemptyset(&pend);
	sigpending(&pend);
	for (int s = 1; s < SIGRTMAX + 1; s++)
		if (sigismember(&pend, s) == 1)
			return 1;
	return 0;
}

/* Blocked, and ran only until the first sample's signal was held. */
static void *window(void *arg)
{
	sigset_t all;
	struct timespec t0, t;
	int held;

	sigfillset(&all);
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, 8);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		held = any_pending();
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while (!held &&
		 (t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec <
			 50000000L);
	*(int *)arg = held;
	pause();
	return NULL;
}

static int mode_window(void)
{
	pthread_t t;
	static int held;

	pthread_create(&t, NULL, window, &held);
	busy(200);
	printf("window done\n");
	/* For the test, out of band: was a sample's signal really held? */
	if (getenv("GT_HELD")) {
		FILE *f = fopen(getenv("GT_HELD"), "w");

		if (f) {
			fprintf(f, "%s\n", held ? "held" : "none");
			fclose(f);
		}
	}
	exit(0);
}

static void on_trap(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_code == SI_TKILL)
		sum++;
	else
		count++;
}

static int mode_trap(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTRAP, &sa, NULL);
	for (int i = 0; i < 20; i++) {
		__asm__ volatile("int3");
		busy(5);
		raise(SIGTRAP);
		busy(5);
	}
	printf("int3 breakpoints %d, raised %d\n", (int)count, (int)sum);
	return 0;
}

/*
 * interrupt [N]: N rounds of a readv on an empty pipe (1024 iovecs: some
 * kernel time before it blocks, where a kernel sample may land) that a
 * one-shot alarm, handler without SA_RESTART, must end with EINTR.  A
 * watchdog thread writes a byte when a read has not ended 100 ms after its
 * alarm, so a read restarted by mistake returns data instead of hanging.
 * Prints how many failed with EINTR and how many were restarted.  An
 * alarm that came before the read began (the thread was off the CPU for
 * the 2 ms between setitimer and readv: a loaded machine, or a profiler's
 * handler that ran there) also ends with the watchdog's byte: its handler
 * saw the interrupted code elsewhere than in readv's system call.  Such a
 * round is the test's own race, not a restart: it is run again (N times
 * at most, and then "early N" is printed).
 */
static volatile int round_done, alarm_in_readv;

/* SIGALRM: did it interrupt readv's system call (ended or to restart)? */
static void on_alarm_where(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t rax = uc->uc_mcontext.gregs[REG_RAX];
	const unsigned char *ip = (const unsigned char *)uc->uc_mcontext.gregs[REG_RIP];

	(void)sig;
	(void)si;
	count++;
	alarm_in_readv = rax == -EINTR ||
			 (rax == SYS_readv && ip[0] == 0x0f && ip[1] == 0x05);
}

static void *watchdog(void *arg)
{
	int fd = (int)(long)arg;
	struct timespec ts = { 0, 100 * 1000 * 1000 };

	for (;;) {
		int seen = round_done;

		nanosleep(&ts, NULL);
		if (round_done == seen && round_done >= 0 && write(fd, "w", 1) != 1)
			return NULL;
		if (round_done < 0)
			return NULL;
	}
}

static int mode_interrupt(long rounds)
{
	static char bytes[1024];
	static struct iovec iov[1024];
	struct sigaction sa;
	struct itimerval it = { { 0, 0 }, { 0, 2000 } };
	long eintr = 0, restarted = 0, other = 0, early = 0;
	pthread_t w;
	int p[2];

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_alarm_where;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGALRM, &sa, NULL);          /* no SA_RESTART */
	if (pipe(p) < 0)
		return 1;
	for (int i = 0; i < 1024; i++)
		iov[i] = (struct iovec){ bytes + i, 1 };
	pthread_create(&w, NULL, watchdog, (void *)(long)p[1]);
	for (long r = 0; r < rounds; r++) {
		alarm_in_readv = 0;
		count = 0;
		setitimer(ITIMER_REAL, &it, NULL);
		ssize_t n = readv(p[0], iov, 1024);
		if (n < 0 && errno == EINTR) {
			eintr++;
		} else if (n > 0 && count && !alarm_in_readv && early < rounds) {
			early++;
			round_done++;
			r--;            /* again: this round tells nothing */
			continue;
		} else if (n > 0)
			restarted++;
		else
			other++;
		round_done++;
	}
	round_done = -1;
	close(p[1]);
	pthread_join(w, NULL);
	printf("interrupt: %ld rounds, EINTR %ld, restarted %ld, other %ld", rounds,
	       eintr, restarted, other);
	if (early == rounds)
		printf(", early %ld", early);   /* gave up telling */
	putchar('\n');
	return 0;
}

/*
 * nested_exit, nested_jump: the executable segments of any object named
 * libprobe*, found before the alarms start; the handler acts on the first
 * alarm whose interrupted code lies in one.
 */
GT_KEEP static void after_nested(long u) { GT_SPIN(u, 3.0); }
GT_KEEP static void after_jump(long u) { GT_SPIN(u, 4.0); }
GT_KEEP static void before_nested(long u) { GT_SPIN(u, 5.0); }

static struct { uintptr_t lo, hi; } probe_code[8];
static int nprobe_code, nested_jump;
static sigjmp_buf nested_env;

static int find_probe(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	const char *name = strrchr(info->dlpi_name, '/');
	if (!strstr(name ? name + 1 : info->dlpi_name, "libprobe"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum && nprobe_code < 8; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			probe_code[nprobe_code].lo = info->dlpi_addr + ph->p_vaddr;
			probe_code[nprobe_code].hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
			nprobe_code++;
		}
	}
	return 0;
}

static void on_alarm_nested(int sig, siginfo_t *si, void *ucv)
{
	uintptr_t ip = (uintptr_t)((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RIP];
	struct itimerval off = { { 0, 0 }, { 0, 0 } };

	(void)sig;
	(void)si;
	for (int i = 0; i < nprobe_code; i++) {
		if (ip < probe_code[i].lo || ip >= probe_code[i].hi)
			continue;
		setitimer(ITIMER_REAL, &off, NULL);
		if (nested_jump)
			siglongjmp(nested_env, 1);
		after_nested(20);
		printf("nested: yes\n");
		exit(7);
	}
}

static int mode_nested(int jump)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 100 }, { 0, 100 } }, off = { { 0, 0 }, { 0, 0 } };
	struct timespec t0, t1;

	dl_iterate_phdr(find_probe, NULL);
	nested_jump = jump;
	if (sigsetjmp(nested_env, 1)) {
		after_jump(200);
		printf("nested: yes\n");
		return 0;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_alarm_nested;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		before_nested(1);
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while (t1.tv_sec - t0.tv_sec < 10);
	setitimer(ITIMER_REAL, &off, NULL);
	printf("nested: no\n");
	return jump ? 0 : 7;
}

static int mode_int3(int blocked)
{
	busy(50);
	if (blocked) {
		sigset_t s;

		sigemptyset(&s);
		sigaddset(&s, SIGTRAP);
		sigprocmask(SIG_BLOCK, &s, NULL);
	}
	printf("before int3\n");
	__asm__ volatile("int3");
	printf("after int3\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(m, "alarm"))
		return mode_alarm();
	if (!strcmp(m, "prof"))
		return mode_prof();
	if (!strcmp(m, "chld"))
		return mode_chld();
	if (!strcmp(m, "eintr"))
		return mode_eintr(argc > 2 ? atol(argv[2]) : 2000);
	if (!strcmp(m, "mask"))
		return mode_mask();
	if (!strcmp(m, "ours"))
		return mode_ours();
	if (!strcmp(m, "segv"))
		return mode_segv();
	if (!strcmp(m, "sysv"))
		return mode_sysv();
	if (!strcmp(m, "rawmask"))
		return mode_rawmask();
	if (!strcmp(m, "window"))
		return mode_window();
	if (!strcmp(m, "trap"))
		return mode_trap();
	if (!strcmp(m, "interrupt"))
		return mode_interrupt(argc > 2 ? atol(argv[2]) : 300);
	if (!strcmp(m, "nested_exit"))
		return mode_nested(0);
	if (!strcmp(m, "nested_jump"))
		return mode_nested(1);
	if (!strcmp(m, "int3"))
		return mode_int3(0);
	if (!strcmp(m, "int3blocked"))
		return mode_int3(1);
	fprintf(stderr, "usage: gt_signals alarm|prof|chld|eintr|interrupt|mask|ours|segv|sysv|rawmask|window|trap|int3|int3blocked\n");
	return 2;
}
