/*
 * fds.c - the descriptors libprobe keeps open, and the interposed close,
 * close_range and closefrom that leave them alone.
 *
 * What we keep open: the output (collector socket or file), the event fds
 * of ringless threads (event.c; threads with a ring hold no fd), and
 * libunwind's address-validation pipe.  They are moved to high numbers, so
 * the program's own numbering is what it would be without us, and they are
 * marked in a bitmap.  The files we read now and then (/proc) are marked
 * while they are open (probe_open_ro).
 *
 * libunwind's pipe matters most: libunwind checks an address by reading a
 * byte from one end and writing the address's byte to the other; when the
 * program has closed those descriptors and reused the numbers, libunwind
 * reads from and writes stack bytes into the program's own files, and
 * closes them to "reopen" its pipe (seen: a daemon's log file got stack
 * garbage and lost its descriptor).  So pipe2() called from libunwind is
 * interposed: the ends move high and become ours, and a close() from
 * libunwind of one of ours really closes it.  A daemon that
 * closes every descriptor (a loop over close(), close_range(3, ~0U, 0),
 * closefrom(3)) gets success and keeps our few: to it they are as closed as
 * the ones it never opened.  What still gets past (a raw close_range
 * system call; dup2 onto one of ours) is noticed by conn.c, which checks
 * its descriptor before every write and reconnects.
 *
 * In a vfork child or a child forked without our atfork handlers (see
 * probe_is_ours) the wrappers do nothing but the real call: that process
 * is about to exec or exit, and our state there is not its own.
 *
 * All of this is async-signal-safe: close() may be called in a handler.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "probe.h"

#define FD_BITS 65536
static uint64_t fd_map[FD_BITS / 64];
static int nown;                       /* how many bits are set */

void probe_fd_own(int fd)
{
	if (fd < 0 || fd >= FD_BITS)
		return;
	if (!(__atomic_fetch_or(&fd_map[fd / 64], 1ull << (fd % 64),
				__ATOMIC_SEQ_CST) & (1ull << (fd % 64))))
		__atomic_add_fetch(&nown, 1, __ATOMIC_SEQ_CST);
}

void probe_fd_disown(int fd)
{
	if (fd < 0 || fd >= FD_BITS)
		return;
	if (__atomic_fetch_and(&fd_map[fd / 64], ~(1ull << (fd % 64)),
			       __ATOMIC_SEQ_CST) & (1ull << (fd % 64)))
		__atomic_sub_fetch(&nown, 1, __ATOMIC_SEQ_CST);
}

int probe_fd_is_own(int fd)
{
	if (fd < 0 || fd >= FD_BITS || !__atomic_load_n(&nown, __ATOMIC_RELAXED))
		return 0;
	return (__atomic_load_n(&fd_map[fd / 64], __ATOMIC_SEQ_CST) >>
		(fd % 64)) & 1;
}

int probe_sys_close(int fd)
{
	return (int)syscall(SYS_close, fd);
}

/*
 * Above half the soft RLIMIT_NOFILE (at most from 1024): the kernel hands
 * out the lowest free number, so the program will not reach ours soon.
 */
int probe_fd_high(int fd)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > 64) {
		rlim_t base = rl.rlim_cur / 2 > 1024 ? 1024 : rl.rlim_cur / 2;
		int hi = fcntl(fd, F_DUPFD_CLOEXEC, (int)base);

		if (hi >= 0) {
			probe_sys_close(fd);
			fd = hi;
		}
	}
	return fd;
}

/* ---- the interposed functions ------------------------------------------- */

static int guarded(void)
{
	return __atomic_load_n(&nown, __ATOMIC_RELAXED) && probe_is_ours();
}

void probe_fd_id_take(int fd, struct probe_fd_id *id)
{
	struct stat st;

	if (fstat(fd, &st) == 0) {
		id->dev = st.st_dev;
		id->ino = st.st_ino;
	}
}

int probe_fd_id_same(int fd, const struct probe_fd_id *id)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == id->dev &&
	       st.st_ino == id->ino;
}

int probe_open_ro(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	probe_fd_own(fd);
	return fd;
}

void probe_close_own(int fd)
{
	if (fd < 0)
		return;
	probe_fd_disown(fd);
	probe_sys_close(fd);
}

size_t probe_read_file(const char *path, char *out, size_t cap)
{
	int fd = probe_open_ro(path);
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
	probe_close_own(fd);
	return n;
}

/*
 * A field of /proc/self/status, read once per process at start (three
 * callers of the constructor each read it before: 8 us a read).  Normal
 * context; the cache is for the process that read it (a fork child reads
 * its own).
 */
const char *probe_status_field(const char *name)
{
	static char buf[4096];
	static pid_t read_by;
	const char *p;
	size_t n, len = strlen(name);

	if (read_by != getpid()) {
		n = probe_read_file("/proc/self/status", buf, sizeof buf - 1);
		buf[n] = 0;
		read_by = getpid();
	}
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, len) && p[len] == ':') {
			p += len + 1;
			while (*p == ' ' || *p == '\t')
				p++;
			return p;
		}
	return NULL;
}

static int (*real_close)(int);
static int (*real_pipe2)(int *, int);
static void (*real_closefrom)(int);

/* Resolved at start: close() may first be called in a signal handler. */
void probe_fds_init(void)
{
	real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
	real_pipe2 = (int (*)(int *, int))dlsym(RTLD_NEXT, "pipe2");
	real_closefrom = (void (*)(int))dlsym(RTLD_NEXT, "closefrom");
}

__attribute__((visibility("default")))
int close(int fd)
{
	if (probe_fd_is_own(fd) && probe_is_ours()) {
		if (!probe_unwind_owns(__builtin_return_address(0)))
			return 0;       /* ours: "closed" as far as it knows */
		probe_fd_disown(fd);    /* libunwind closing its own pipe */
		return probe_sys_close(fd);
	}
	/* glibc's close, a cancellation point, when we can find it. */
	if (!real_close)
		real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
	return real_close ? real_close(fd) : (int)syscall(SYS_close, fd);
}

static int sys_close_range(unsigned lo, unsigned hi, int flags)
{
	return (int)syscall(SYS_close_range, lo, hi, flags);
}

/*
 * close_range(lo, hi) without our descriptors: the pieces between them.
 * CLOSE_RANGE_CLOEXEC only marks descriptors (ours are close-on-exec
 * already); CLOSE_RANGE_UNSHARE applies to the first piece and the rest
 * then work on the unshared table.
 */
/* libunwind's validation pipe: high and ours (see the top of this file). */
__attribute__((visibility("default")))
int pipe2(int fds[2], int flags)
{
	int r;

	if (!real_pipe2)
		real_pipe2 = (int (*)(int *, int))dlsym(RTLD_NEXT, "pipe2");
	r = real_pipe2 ? real_pipe2(fds, flags) : (int)syscall(SYS_pipe2, fds, flags);
	if (r == 0 && probe_unwind_owns(__builtin_return_address(0))) {
		fds[0] = probe_fd_high(fds[0]);
		fds[1] = probe_fd_high(fds[1]);
		probe_fd_own(fds[0]);
		probe_fd_own(fds[1]);
	}
	return r;
}

__attribute__((visibility("default")))
int close_range(unsigned lo, unsigned hi, int flags)
{
	unsigned from = lo;

	if (!guarded() || lo > hi || (flags & ~(0u + CLOSE_RANGE_UNSHARE)) != 0)
		return sys_close_range(lo, hi, flags);
	for (unsigned w = lo / 64; w < FD_BITS / 64 && w <= hi / 64; w++) {
		uint64_t bits = __atomic_load_n(&fd_map[w], __ATOMIC_SEQ_CST);

		while (bits) {
			unsigned fd = w * 64 + (unsigned)__builtin_ctzll(bits);

			bits &= bits - 1;
			if (fd < lo || fd > hi)
				continue;
			if (fd > from && sys_close_range(from, fd - 1, flags) < 0)
				return -1;
			from = fd + 1;
		}
	}
	if (from <= hi && from >= lo)
		return sys_close_range(from, hi, flags);
	return 0;
}

__attribute__((visibility("default")))
void closefrom(int lowfd)
{
	struct rlimit rl;
	int max;

	if (lowfd < 0)
		lowfd = 0;
	if (!guarded()) {
		if (!real_closefrom)
			real_closefrom = (void (*)(int))dlsym(RTLD_NEXT, "closefrom");
		if (real_closefrom) {
			real_closefrom(lowfd);
			return;
		}
	}
	if (close_range((unsigned)lowfd, ~0u, 0) == 0)
		return;
	/* close_range refused (old kernel): one by one, as glibc falls back. */
	max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ?
	      (int)rl.rlim_cur : 65536;
	for (int fd = lowfd; fd < max; fd++)
		if (!probe_fd_is_own(fd) || !probe_is_ours())
			syscall(SYS_close, fd);
}
