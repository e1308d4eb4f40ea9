/*
 * exec.c - the interposed exec family.
 *
 * exec replaces the image.  What the old one sampled is in the arena
 * already (the collector reads it when exec closes our connection), but
 * nothing of ours may be left pending: a realtime signal's default action
 * is to terminate, pending signals survive exec, and the new image's
 * handler does not exist until its constructor runs.  So, before the real
 * call:
 *   1. block our signal and SIGIO on this thread (the real mask);
 *   2. end this thread's event or timer (probe_thread_pause_self: what its
 *      perf ring holds goes to its slot), so that nothing new can be queued
 *      for it (other threads' signals are directed at them, and they die
 *      with their pending signals);
 *   3. take our signals that are still pending (sigtimedwait, no wait):
 *      ours are dropped, the program's own are kept;
 *   4. set the mask the new image inherits to the program's own view, and
 *      queue the program's own signals again.
 * If the exec fails, the mask is restored and the thread samples again.
 * The new image (dynamically linked, with LD_PRELOAD still set) starts
 * profiling from its constructor; its HELLO names the new exe and argv.
 *
 * Async-signal-safe (execve may be called from a handler): no locks, no
 * allocation.  In a vfork child, or a child forked without our atfork
 * handlers (probe_is_ours() is 0), nothing is done: that process's state is
 * not its own, and it has nothing of ours pending.  glibc's posix_spawn and
 * system() exec in such a child, internally.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#define KEEP_MAX 16

struct exec_state {
	int active;
	sigset_t saved;                 /* the real mask before */
};

static void *real(const char *name, void **cache)
{
	if (!*cache)
		*cache = dlsym(RTLD_NEXT, name);
	return *cache;
}

/* Is this pending signal one of ours (from our events or timers)? */
static int ours(int sig, const siginfo_t *si)
{
	if (sig == SIGIO)
		return si->si_code == SI_KERNEL;
	if (si->si_code == SI_TIMER)
		return si->si_value.sival_ptr == (void *)probe_self;
	return probe_signal_from_event(sig, si);
}

/* ---- what the new image will not be (async-signal-safe) --------------- */

/* Does envp preload libprobe.so? */
static int preloads_us(char *const envp[])
{
	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], "LD_PRELOAD=", 11) && strstr(envp[i], "libprobe"))
			return 1;
	return 0;
}

/* An ELF header (in b, n bytes read) with no PT_INTERP: statically linked. */
static int is_static(const Elf64_Ehdr *eh, const unsigned char *b, ssize_t n)
{
	int interp = 0;

	if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff >= (uint64_t)n ||
	    eh->e_phnum > ((uint64_t)n - eh->e_phoff) / sizeof(Elf64_Phdr))
		return 0;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, b + eh->e_phoff + i * sizeof ph, sizeof ph);
		interp |= ph.p_type == PT_INTERP;
	}
	return !interp;
}

/* Why the file at dirfd/path will not be profiled, or 0 (or not known). */
static unsigned unprofiled_why(int dirfd, const char *path, char *const envp[])
{
	unsigned char b[4096];
	struct stat st;
	Elf64_Ehdr eh;
	ssize_t n;
	unsigned why = 0;
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return 0;               /* the exec will say */
	n = read(fd, b, sizeof b);
	if (fstat(fd, &st) < 0 || n < (ssize_t)sizeof eh || memcmp(b, ELFMAG, SELFMAG) ||
	    b[EI_CLASS] != ELFCLASS64) {
		probe_sys_close(fd);
		return 0;               /* a script: its interpreter is what runs */
	}
	memcpy(&eh, b, sizeof eh);
	/*
	 * Static before no-LD_PRELOAD: the collector samples a static program
	 * from outside (and what it starts, by inheritance), whatever its
	 * environment says.
	 */
	if ((st.st_mode & S_ISUID && st.st_uid != geteuid()) ||
	    (st.st_mode & S_ISGID && st.st_gid != getegid()))
		why = PROBE_UNPROF_SECURE;
	else if (probe_conn_uid() != geteuid())
		why = PROBE_UNPROF_OTHERUSER;
	else if (is_static(&eh, b, n))
		why = PROBE_UNPROF_STATIC;
	else if (!preloads_us(envp))
		why = PROBE_UNPROF_NOPRELOAD;
	probe_sys_close(fd);
	return why;
}

/* How long an exec of a static program waits for the collector (below). */
#define EXEC_REPLY_NS 250000000ull

/*
 * Tell the collector that what this process is about to exec will not be
 * profiled, and why: otherwise it would be missing without a word.
 */
static void say_unprofiled_pid(int dirfd, const char *path, char *const envp[],
			       pid_t who)
{
	uint8_t f[PROBE_FRAME_HDR + 12 + PATH_MAX];
	struct probe_wbuf w;
	unsigned why;
	size_t at;

	if (!probe_active || !path)
		return;
	why = unprofiled_why(dirfd, path, envp);
	if (!why)
		return;
	probe_lazy_start_now();         /* a start that waited: now (lazy.c) */
	/*
	 * A vfork child of a process that has not started (lazy.c) speaks for
	 * itself, on a connection of its own: the frame goes under its pid.
	 */
	int alone = !probe_is_ours() && probe_lazy_waiting();
	probe_wbuf_init(&w, f, sizeof f);
	/* On our connection, under our pid; who runs it is in the body. */
	at = probe_frame_begin(&w, PROBE_F_UNPROFILED, alone ? (uint32_t)getpid() : probe_proc.pid);
	probe_put_u32(&w, (uint32_t)who);
	probe_put_u32(&w, why);
	probe_put_str(&w, path);
	probe_frame_end(&w, at);
	if (!w.ok)
		return;
	/*
	 * A static program this very process is about to run: the collector
	 * samples it from outside, with events it opens on us now, that start
	 * at the exec.  Give it the time (it answers at once, whatever it did).
	 */
	int wait = why == PROBE_UNPROF_STATIC && who == getpid();
	if (alone) {
		probe_announce_child_once(w.p, w.len, wait ? probe_now_ns() + EXEC_REPLY_NS : 0);
		return;
	}
	if (probe_is_ours())
		probe_conn_send(w.p, w.len);
	else
		probe_conn_send_child(w.p, w.len);      /* a vfork child of ours */
	if (wait)
		probe_conn_wait_reply(probe_now_ns() + EXEC_REPLY_NS);
}

/* Before an exec, in the process that execs (ours, or a vfork child). */
static void say_unprofiled(int dirfd, const char *path, char *const envp[])
{
	say_unprofiled_pid(dirfd, path, envp, getpid());
}

/* execvp's search, for say_unprofiled: the file it would run. */
static void say_unprofiled_path_pid(const char *file, char *const envp[], pid_t who)
{
	const char *p = getenv("PATH");
	char buf[PATH_MAX];

	if (!file || !*file)
		return;
	if (strchr(file, '/') || !p) {
		say_unprofiled_pid(AT_FDCWD, file, envp, who);
		return;
	}
	while (*p) {
		size_t n = strcspn(p, ":");
		if (n + 1 + strlen(file) < sizeof buf) {
			memcpy(buf, p, n);
			buf[n] = 0;
			if (n == 0)
				buf[0] = '.', buf[1] = 0, n = 1;
			buf[n] = '/';
			strcpy(buf + n + 1, file);
			if (access(buf, X_OK) == 0) {
				say_unprofiled_pid(AT_FDCWD, buf, envp, who);
				return;
			}
		}
		p += n + (p[n] == ':');
	}
}

static void say_unprofiled_path(const char *file, char *const envp[])
{
	say_unprofiled_path_pid(file, envp, getpid());
}

extern char **environ;

/*
 * posix_spawn and posix_spawnp: glibc's exec in the child is its own, not
 * ours; the parent says what the child will run, once it has its pid.
 */
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			const posix_spawnattr_t *, char *const[], char *const[]);
static void *c_spawn, *c_spawnp;

/* The real call; then, in the process we set up, what the child runs. */
static int spawn_and_say(spawn_fn fn, int search, pid_t *pid, const char *file,
			 const posix_spawn_file_actions_t *fa,
			 const posix_spawnattr_t *at, char *const argv[],
			 char *const envp[])
{
	pid_t p = 0;
	int r;

	if (!fn)
		return ENOSYS;
	/* Normal context (posix_spawn is not async-signal-safe). */
	if (probe_active && probe_is_ours())
		probe_unwind_lazy(0);
	r = fn(&p, file, fa, at, argv, envp);
	if (pid)
		*pid = p;
	if (r == 0 && probe_is_ours()) {
		if (search)
			say_unprofiled_path_pid(file, envp, p);
		else
			say_unprofiled_pid(AT_FDCWD, file, envp, p);
	}
	return r;
}

__attribute__((visibility("default")))
int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
	return spawn_and_say((spawn_fn)real("posix_spawn", &c_spawn), 0, pid, path,
			     fa, at, argv, envp);
}

__attribute__((visibility("default")))
int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
		 const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
	return spawn_and_say((spawn_fn)real("posix_spawnp", &c_spawnp), 1, pid, file,
			     fa, at, argv, envp);
}

static void before_exec(struct exec_state *st)
{
	sigset_t s, m;
	siginfo_t keep[KEEP_MAX];
	int nkeep = 0, sig;
	struct timespec zero = { 0, 0 };

	st->active = 0;
	if (!probe_active || !probe_is_ours())
		return;
	st->active = 1;
	sigemptyset(&s);
	sigaddset(&s, probe_cfg.signo);
	sigaddset(&s, SIGIO);
	probe_real_sigmask(SIG_BLOCK, &s, &st->saved);
	probe_thread_pause_self();
	for (int i = 0; i < 100000; i++) {
		siginfo_t si;

		sig = (int)syscall(SYS_rt_sigtimedwait, &s, &si, &zero, 8);
		if (sig <= 0)
			break;
		if (!ours(sig, &si) && nkeep < KEEP_MAX)
			keep[nkeep++] = si;
	}
	/* What the new image inherits: the program's own view of the mask. */
	m = st->saved;
	if (probe_app_blocked)
		sigaddset(&m, probe_cfg.signo);
	else
		sigdelset(&m, probe_cfg.signo);
	probe_real_sigmask(SIG_SETMASK, &m, NULL);
	for (int i = 0; i < nkeep; i++)
		syscall(SYS_rt_tgsigqueueinfo, getpid(), (pid_t)syscall(SYS_gettid),
			keep[i].si_signo, &keep[i]);
}

static void after_failed_exec(struct exec_state *st)
{
	int saved_errno = errno;

	if (st->active) {
		probe_real_sigmask(SIG_SETMASK, &st->saved, NULL);
		probe_thread_resume_self();
	}
	errno = saved_errno;
}

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

static void *c_execve, *c_execv, *c_execvp, *c_execvpe, *c_execveat, *c_fexecve;

/* Resolved at start: execve may be called from a signal handler. */
void probe_exec_init(void)
{
	real("execve", &c_execve);
	real("execv", &c_execv);
	real("execvp", &c_execvp);
	real("execvpe", &c_execvpe);
	real("execveat", &c_execveat);
	real("fexecve", &c_fexecve);
	real("posix_spawn", &c_spawn);
	real("posix_spawnp", &c_spawnp);
}

__attribute__((visibility("default")))
int execve(const char *path, char *const argv[], char *const envp[])
{
	execve_fn fn = (execve_fn)real("execve", &c_execve);
	struct exec_state st;

	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	say_unprofiled(AT_FDCWD, path, envp);
	before_exec(&st);
	fn(path, argv, envp);
	after_failed_exec(&st);
	return -1;
}

__attribute__((visibility("default")))
int execv(const char *path, char *const argv[])
{
	execv_fn fn = (execv_fn)real("execv", &c_execv);
	struct exec_state st;

	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	say_unprofiled(AT_FDCWD, path, environ);
	before_exec(&st);
	fn(path, argv);
	after_failed_exec(&st);
	return -1;
}

__attribute__((visibility("default")))
int execvp(const char *file, char *const argv[])
{
	execv_fn fn = (execv_fn)real("execvp", &c_execvp);
	struct exec_state st;

	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	say_unprofiled_path(file, environ);
	before_exec(&st);
	fn(file, argv);
	after_failed_exec(&st);
	return -1;
}

__attribute__((visibility("default")))
int execvpe(const char *file, char *const argv[], char *const envp[])
{
	execve_fn fn = (execve_fn)real("execvpe", &c_execvpe);
	struct exec_state st;

	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	say_unprofiled_path(file, envp);
	before_exec(&st);
	fn(file, argv, envp);
	after_failed_exec(&st);
	return -1;
}

__attribute__((visibility("default")))
int execveat(int dirfd, const char *path, char *const argv[],
	     char *const envp[], int flags)
{
	execveat_fn fn = (execveat_fn)real("execveat", &c_execveat);
	struct exec_state st;

	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	say_unprofiled(dirfd, path, envp);
	before_exec(&st);
	fn(dirfd, path, argv, envp, flags);
	after_failed_exec(&st);
	return -1;
}

__attribute__((visibility("default")))
int fexecve(int fd, char *const argv[], char *const envp[])
{
	fexecve_fn fn = (fexecve_fn)real("fexecve", &c_fexecve);
	struct exec_state st;

	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	before_exec(&st);
	fn(fd, argv, envp);
	after_failed_exec(&st);
	return -1;
}

/*
 * The execl family builds an argv and calls the matching execv* (glibc's
 * own execl calls its internal execve, which we would not see).  The argv
 * lives on the stack: these are async-signal-safe too.
 *
 * GATHER_ARGV declares argv (a VLA in the caller's block: a function could
 * not return it) holding arg and the variadic arguments up to the NULL, and
 * leaves ap_ positioned after that NULL (execle's envp follows it).
 */
#define GATHER_ARGV(argv, arg)                                          \
	size_t n_ = 1;                                                  \
	va_list ap_;                                                    \
	va_start(ap_, arg);                                             \
	while (va_arg(ap_, char *) != NULL)                             \
		n_++;                                                   \
	va_end(ap_);                                                    \
	char *argv[n_ + 1];                                             \
	argv[0] = (char *)(arg);                                        \
	va_start(ap_, arg);                                             \
	for (size_t i_ = 1; i_ <= n_; i_++)                             \
		argv[i_] = va_arg(ap_, char *)

__attribute__((visibility("default")))
int execl(const char *path, const char *arg, ...)
{
	GATHER_ARGV(argv, arg);
	va_end(ap_);
	return execv(path, argv);
}

__attribute__((visibility("default")))
int execlp(const char *file, const char *arg, ...)
{
	GATHER_ARGV(argv, arg);
	va_end(ap_);
	return execvp(file, argv);
}

__attribute__((visibility("default")))
int execle(const char *path, const char *arg, ...)
{
	GATHER_ARGV(argv, arg);
	char *const *envp = va_arg(ap_, char *const *);
	va_end(ap_);
	return execve(path, argv, envp);
}
