/*
 * output.c - where the frames go: the collector's socket, or a file.
 *
 * Socket (PROBE_SOCKET): a non-blocking SOCK_STREAM connection; send() with
 * MSG_NOSIGNAL so a collector that went away is an error, not a SIGPIPE.
 * What the socket does not take now stays in a backlog; sample frames that
 * would push the backlog over BACKLOG_MAX are dropped (the caller counts
 * them as PROBE_LOST_SOCKET), so a stalled collector costs the application
 * bounded memory and never blocks it.  Small control frames (MAP, THREAD,
 * LOST, EXIT) are always queued.  On EPIPE and the like we stop sending.
 *
 * File (no PROBE_SOCKET, or it cannot be reached): PROBE_OUTPUT or
 * ./probe.data, opened O_APPEND.  The process that starts a recording moves
 * an existing file to FILE.old (like perf) and writes the 16-byte file
 * header; it then exports PROBE_OUTPUT=<absolute path> and PROBE_APPEND=1
 * so that exec'd children append to the same file (whoever creates the file
 * with O_EXCL writes the header; nobody truncates).  Every write() carries
 * whole frames, and O_APPEND writes are atomic, so several processes can
 * share the file.  Only the sender thread writes, so blocking on the disk
 * does not block the application.
 *
 * Only the sender, or the exit path holding probe_consumer_lock, calls in.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#define BACKLOG_MAX (4u << 20)          /* sample data waiting for the socket */
#define CONTROL_MAX (8u << 20)          /* hard cap, control frames included */

static int out_fd = -1;
static int out_socket;
static int out_broken;
static dev_t out_dev;                   /* identity of out_fd, checked */
static ino_t out_ino;                   /* before every write */
static char out_path[PATH_MAX];
static uint8_t *buf;
static size_t off, len, cap;

static int connect_socket(const char *path, int *err)
{
	struct sockaddr_un sa;
	int fd, tries = 0;

	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		*err = errno;
		return -1;
	}
	for (;;) {
		if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
			return fd;
		if (errno == EINTR)
			continue;
		/* A full listen backlog: give the collector a moment. */
		if (errno == EAGAIN && ++tries < 50) {
			struct timespec ts = { 0, 10 * 1000 * 1000 };
			nanosleep(&ts, NULL);
			continue;
		}
		*err = errno;
		close(fd);
		return -1;
	}
}

static void write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t r = write(fd, b, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return;
		b += r;
		n -= (size_t)r;
	}
}

/*
 * Keep our descriptor out of the program's way: move it high (the kernel
 * hands out the lowest free number, so the program will not get a number
 * we hold, even after closing ours), and remember what it is, so that a
 * program that closes all descriptors, or dup2()s onto ours, makes us stop
 * rather than write into its files.
 */
static int adopt_fd(int fd)
{
	struct rlimit rl;
	struct stat st;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > 64) {
		rlim_t base = rl.rlim_cur / 2 > 1024 ? 1024 : rl.rlim_cur / 2;
		int hi = fcntl(fd, F_DUPFD_CLOEXEC, (int)base);

		if (hi >= 0) {
			close(fd);
			fd = hi;
		}
	}
	if (fstat(fd, &st) == 0) {
		out_dev = st.st_dev;
		out_ino = st.st_ino;
	}
	return fd;
}

static int still_ours(void)
{
	struct stat st;

	return fstat(out_fd, &st) == 0 && st.st_dev == out_dev &&
	       st.st_ino == out_ino;
}

static int open_file(const char *why)
{
	const char *p = probe_cfg.output_path[0] ? probe_cfg.output_path
						 : "probe.data";
	int fd;

	if (p[0] == '/') {
		snprintf(out_path, sizeof out_path, "%s", p);
	} else {
		char cwd[PATH_MAX];

		if (!getcwd(cwd, sizeof cwd))
			snprintf(cwd, sizeof cwd, ".");
		if (snprintf(out_path, sizeof out_path, "%s/%s", cwd, p) >=
		    (int)sizeof out_path)
			snprintf(out_path, sizeof out_path, "%s", p);
	}

	if (!probe_cfg.append) {
		/* A new recording: keep the previous one as FILE.old. */
		struct stat st;
		char old[PATH_MAX + 8];

		if (stat(out_path, &st) == 0 && S_ISREG(st.st_mode)) {
			snprintf(old, sizeof old, "%s.old", out_path);
			if (rename(out_path, old) < 0) {
				probe_msg("cannot move the existing %s to %s "
					  "(%s); not profiling", out_path, old,
					  strerror(errno));
				return -1;
			}
		}
	}
	fd = open(out_path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC,
		  0644);
	if (fd >= 0) {
		uint8_t hdr[PROBE_FILE_HDR];
		struct probe_wbuf w;

		probe_wbuf_init(&w, hdr, sizeof hdr);
		probe_put_file_header(&w);
		write_all(fd, hdr, w.len);
	} else if (errno == EEXIST && probe_cfg.append) {
		/* An ancestor's recording: append, never truncate. */
		fd = open(out_path, O_WRONLY | O_APPEND | O_CLOEXEC);
	}
	if (fd < 0) {
		probe_msg("cannot write the profile to %s (%s); not profiling",
			  out_path, strerror(errno));
		return -1;
	}
	out_fd = adopt_fd(fd);
	out_socket = 0;
	if (!probe_cfg.append)
		probe_msg("writing profile to %s (%s)", out_path, why);
	/* Descendants (exec) append to this file instead of starting anew. */
	setenv("PROBE_OUTPUT", out_path, 1);
	setenv("PROBE_APPEND", "1", 1);
	return 0;
}

int probe_output_open(void)
{
	char why[sizeof probe_cfg.socket_path + 128];
	int err = 0;

	off = len = 0;
	out_broken = 0;
	if (probe_cfg.socket_path[0]) {
		int fd = connect_socket(probe_cfg.socket_path, &err);

		if (fd >= 0) {
			out_fd = adopt_fd(fd);
			out_socket = 1;
			return 0;
		}
		snprintf(why, sizeof why,
			 "cannot connect to collector at %s: %s",
			 probe_cfg.socket_path, strerror(err));
		/* Children would fail the same way: send them to the file. */
		unsetenv("PROBE_SOCKET");
		probe_cfg.socket_path[0] = 0;
	} else {
		snprintf(why, sizeof why, "no collector: PROBE_SOCKET is not set");
	}
	return open_file(why);
}

static int reserve(size_t n)
{
	size_t want;

	if (off && (off > cap / 2 || cap - len < n)) {
		memmove(buf, buf + off, len - off);
		len -= off;
		off = 0;
	}
	if (cap - len >= n)
		return 0;
	want = cap ? cap : 64 * 1024;
	while (want - len < n)
		want *= 2;
	if (want > CONTROL_MAX + PROBE_FRAME_MAX)
		return -1;
	uint8_t *nb = realloc(buf, want);
	if (!nb)
		return -1;
	buf = nb;
	cap = want;
	return 0;
}

int probe_output_append(const void *p, size_t n, uint64_t nsamples)
{
	size_t pending = len - off;

	if (out_fd < 0 || out_broken)
		return -1;
	if (nsamples && pending + n > BACKLOG_MAX)
		return -1;
	if (pending + n > CONTROL_MAX || reserve(n) < 0)
		return -1;
	memcpy(buf + len, p, n);
	len += n;
	return 0;
}

static void broken(const char *what, int err)
{
	if (!out_broken)
		probe_msg("%s (%s); the rest of this profile is dropped", what,
			  strerror(err));
	out_broken = 1;
	off = len = 0;
}

void probe_output_flush(void)
{
	if (off < len && !out_broken && !still_ours()) {
		out_broken = 1;
		off = len = 0;
		out_fd = -1;
		probe_msg("the program closed or replaced the descriptor of the "
			  "profile output; the rest of this profile is dropped");
		return;
	}
	while (off < len && !out_broken) {
		ssize_t r;

		if (out_socket)
			r = send(out_fd, buf + off, len - off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		else
			r = write(out_fd, buf + off, len - off);
		if (r > 0) {
			off += (size_t)r;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && out_socket && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (out_socket)
			broken("lost the connection to the collector",
			       r < 0 ? errno : EPIPE);
		else
			broken("cannot write the profile file",
			       r < 0 ? errno : ENOSPC);
	}
	if (off == len)
		off = len = 0;
}

void probe_output_drain(int timeout_ms)
{
	struct timespec now, end;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += timeout_ms / 1000;
	end.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	for (;;) {
		probe_output_flush();
		if (off == len || out_broken || !out_socket)
			return;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long left = (long)(end.tv_sec - now.tv_sec) * 1000 +
			    (end.tv_nsec - now.tv_nsec) / 1000000L;
		if (left <= 0)
			return;
		struct pollfd p = { .fd = out_fd, .events = POLLOUT };
		poll(&p, 1, (int)(left > 50 ? 50 : left));
	}
}

int probe_output_fd(void)
{
	return out_socket && !out_broken && off < len ? out_fd : -1;
}

/*
 * Fork child: the parent sends its own backlog.  The socket is the parent's
 * connection: close our copy (never shutdown(), which would cut the
 * parent's) and connect anew.  The file is shared by design: keep it.
 */
void probe_output_after_fork_child(void)
{
	off = len = 0;
	if (out_socket && out_fd >= 0) {
		if (still_ours())
			close(out_fd);
		out_fd = -1;
		out_socket = 0;
		if (probe_output_open() < 0)
			out_fd = -1;
	}
}
