/*
 * output.c - where the frames go: the collector's socket, or a file.
 *
 * Socket (PROBE_SOCKET): a non-blocking SOCK_STREAM connection; send() with
 * MSG_NOSIGNAL so a collector that went away is an error, not a SIGPIPE.
 * What the socket does not take now stays in a backlog; sample frames that
 * would push the backlog over BACKLOG_MAX are dropped (the caller counts
 * them as PROBE_LOST_SOCKET), so a stalled collector costs the application
 * bounded memory and never blocks it.  Small control frames (MAP, THREAD,
 * LOST, EXIT) are queued up to a hard cap.  The backlog is one buffer
 * reserved (not touched) at start, so the exit path never allocates.  On
 * EPIPE and the like we stop sending; the samples dropped from then on are
 * counted and said at exit.  A collector that took nothing for STALL_NS is
 * stalled: the exit path does not wait for it.
 *
 * No PROBE_SOCKET (and no PROBE_OUTPUT): a `probe top` without a command
 * may be watching this user's DIR/top.sock (DIR as collector/usock.c's
 * usock_dir() has it: $XDG_RUNTIME_DIR/probe, else /tmp/probe-<euid>).  We
 * connect there, silently, when DIR is a real directory (not a symbolic
 * link) of our euid with mode 0700 and holds the socket; else the file.
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
 * The descriptor is moved high and guarded (fds.c), so a program that
 * closes every descriptor does not close it.  What gets past (a raw
 * close_range, dup2 onto it) is caught before every write by checking the
 * descriptor is still ours (device and inode); then we connect again (or
 * reopen the file) and the sender starts the new stream with HELLO, MAPs
 * and THREADs (probe_output_restarted).  Frames only ever leave whole, so
 * the backlog is cut at frame boundaries; frames that went with the old
 * descriptor are dropped, their samples counted.
 *
 * Only the sender calls in (the exit path asks the sender to, sender.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#define BACKLOG_MAX (4u << 20)          /* sample data waiting for the socket */
#define CONTROL_MAX (6u << 20)          /* hard cap, control frames included */
#define BUF_CAP (CONTROL_MAX + PROBE_FRAME_MAX)
#define STALL_NS 200000000ull           /* no progress for this long: stalled */
#define REOPEN_MAX 8                    /* times we follow a closed descriptor */

static int out_fd = -1;
static int out_socket;
static int out_broken;
static dev_t out_dev;                   /* identity of out_fd, checked */
static ino_t out_ino;                   /* before every write */
static char out_path[PATH_MAX];
static uint8_t *buf;                    /* BUF_CAP, reserved once */
static size_t off, len;                 /* sent up to off, queued up to len */
static size_t bound;                    /* a frame boundary, <= off */
static uint64_t last_progress;          /* when the socket last took bytes */
static int restarted;                   /* a new stream: sender resends */
static int reopens;
static const char *trouble = "";
uint64_t probe_output_dropped;

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
 * Keep our descriptor out of the program's way (fds.c) and remember what it
 * is, so that a program that closes it anyway, or dup2()s onto it, makes us
 * notice rather than write into its files.
 */
static int adopt_fd(int fd)
{
	struct stat st;

	fd = probe_fd_high(fd);
	if (fstat(fd, &st) == 0) {
		out_dev = st.st_dev;
		out_ino = st.st_ino;
	}
	probe_fd_own(fd);
	return fd;
}

/*
 * Is fd (just moved high) what we opened?  A program that dup2()s onto
 * every number may hit the low number we had for an instant, before it
 * moved (seen: /dev/null adopted as the collector's socket).
 */
static int is_expected(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 &&
	       (out_socket ? S_ISSOCK(st.st_mode) : S_ISREG(st.st_mode));
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

/*
 * The per-user directory of `probe top`.  This must stay in step with
 * collector/usock.c (SOCK_SUFFIX_MAX, xdg_usable(), usock_dir()), except
 * that we never create it: we only look.
 */
#define USOCK_SUFFIX_MAX 32     /* "/probe/record-4294967295.sock" */

static int xdg_usable(const char *d)
{
	struct stat st;

	if (!d || d[0] != '/')
		return 0;
	if (strlen(d) + USOCK_SUFFIX_MAX >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return 0;
	if (lstat(d, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return 0;
	return faccessat(AT_FDCWD, d, W_OK | X_OK, AT_EACCESS) == 0;
}

/* DIR/top.sock into path when DIR is private and the socket is there. */
static int top_socket_path(char *path, size_t cap)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct stat st;
	int n;

	if (xdg_usable(xdg))
		n = snprintf(dir, sizeof dir, "%s/probe", xdg);
	else
		n = snprintf(dir, sizeof dir, "/tmp/probe-%u", (unsigned)geteuid());
	if (n < 0 || (size_t)n >= sizeof dir)
		return -1;
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 07777) != 0700)
		return -1;
	n = snprintf(path, cap, "%s/top.sock", dir);
	if (n < 0 || (size_t)n >= cap)
		return -1;
	if (lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode))
		return -1;
	return 0;
}

static int ensure_buf(void)
{
	void *p;

	if (buf)
		return 0;
	/* Reserved, not touched: pages appear as the backlog grows. */
	p = mmap(NULL, BUF_CAP, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		probe_msg("cannot reserve the output buffer (%s); not profiling",
			  strerror(errno));
		return -1;
	}
	buf = p;
	return 0;
}

int probe_output_open(void)
{
	char why[sizeof probe_cfg.socket_path + 128];
	int err = 0;

	if (ensure_buf() < 0)
		return -1;
	off = len = bound = 0;
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
		char top[sizeof probe_cfg.socket_path];

		/* An explicit file (PROBE_OUTPUT, an ancestor's) wins. */
		if (!probe_cfg.output_path[0] && !probe_cfg.append &&
		    top_socket_path(top, sizeof top) == 0) {
			int fd = connect_socket(top, &err);

			if (fd >= 0) {
				out_fd = adopt_fd(fd);
				out_socket = 1;
				return 0;
			}
		}
		snprintf(why, sizeof why, "no collector: PROBE_SOCKET is not set");
	}
	return open_file(why);
}

static uint32_t frame_size_at(size_t at)
{
	return (uint32_t)buf[at] | (uint32_t)buf[at + 1] << 8 |
	       (uint32_t)buf[at + 2] << 16 | (uint32_t)buf[at + 3] << 24;
}

/* Samples in the whole frames of [from, to): SAMPLES is u64 base, uv count. */
static uint64_t samples_in(size_t from, size_t to)
{
	uint64_t n = 0;

	while (to - from >= PROBE_FRAME_HDR) {
		uint32_t size = frame_size_at(from);
		unsigned type = (unsigned)buf[from + 4] | (unsigned)buf[from + 5] << 8;

		if (size < PROBE_FRAME_HDR || size > to - from)
			break;
		if (type == PROBE_F_SAMPLES && size >= PROBE_FRAME_HDR + 9) {
			uint64_t v = 0;
			unsigned shift = 0;

			for (size_t i = from + PROBE_FRAME_HDR + 8;
			     i < from + size && shift < 64; i++, shift += 7) {
				v |= (uint64_t)(buf[i] & 0x7f) << shift;
				if (!(buf[i] & 0x80))
					break;
			}
			n += v;
		}
		from += size;
	}
	return n;
}

/* Move bound over the frames that left whole. */
static void advance_bound(void)
{
	while (off - bound >= PROBE_FRAME_HDR) {
		uint32_t size = frame_size_at(bound);

		if (size < PROBE_FRAME_HDR || size > off - bound)
			break;
		bound += size;
	}
	if (bound == len)
		off = len = bound = 0;
}

int probe_output_append(const void *p, size_t n, uint64_t nsamples)
{
	size_t pending = len - off;

	if (!buf || out_fd < 0 || out_broken || restarted) {
		probe_output_dropped += nsamples;
		return -1;
	}
	if (nsamples && pending + n > BACKLOG_MAX) {
		probe_output_dropped += nsamples;
		trouble = "the collector stopped reading (its backlog was full)";
		return -1;
	}
	if (pending + n > CONTROL_MAX)
		return -1;
	if (BUF_CAP - len < n && bound) {
		memmove(buf, buf + bound, len - bound);
		off -= bound;
		len -= bound;
		bound = 0;
	}
	if (BUF_CAP - len < n)
		return -1;
	if (pending == 0)
		last_progress = probe_now_ns();
	memcpy(buf + len, p, n);
	len += n;
	return 0;
}

/* Give up the frames not begun (a frame begun must still go out whole). */
static void drop_unsent(void)
{
	size_t keep = bound;

	if (off > bound)
		keep = bound + frame_size_at(bound);
	if (keep > len)
		keep = len;
	probe_output_dropped += samples_in(keep, len);
	len = keep;
}

static void broken(const char *what)
{
	if (!out_broken) {
		trouble = what;
		probe_output_dropped += samples_in(bound, len);
	}
	out_broken = 1;
	off = len = bound = 0;
}

/*
 * The program closed our descriptor behind fds.c's back (or put another
 * file on its number).  Not ours to close now; connect again (reopen the
 * file) and start a new stream.
 */
static void lost_descriptor(void)
{
	int fd = -1, err = 0;

	probe_fd_disown(out_fd);
	out_fd = -1;
	probe_output_dropped += samples_in(bound, len);
	off = len = bound = 0;
	while (fd < 0 && ++reopens <= REOPEN_MAX) {
		if (out_socket)
			fd = connect_socket(probe_cfg.socket_path, &err);
		else
			fd = open(out_path, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd >= 0) {
			fd = adopt_fd(fd);
			if (!is_expected(fd)) {
				probe_fd_disown(fd);
				probe_sys_close(fd);
				fd = -1;
			}
		}
	}
	if (fd < 0) {
		out_broken = 1;
		trouble = "the program closed probe's output descriptor, and it "
			  "could not be opened again";
		return;
	}
	out_fd = fd;
	restarted = 1;
}

int probe_output_restarted(void)
{
	int r = restarted;

	restarted = 0;
	return r;
}

const char *probe_output_trouble(void)
{
	return trouble;
}

void probe_output_flush(void)
{
	if (out_fd < 0 || out_broken || off >= len)
		return;
	if (!still_ours()) {
		lost_descriptor();
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
			last_progress = probe_now_ns();
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && out_socket && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (!still_ours() || (r < 0 && errno == ENOTSOCK)) {
			/* Replaced under us (dup2 onto it): not the collector's fault. */
			lost_descriptor();
			return;
		}
		if (out_socket)
			broken(r < 0 && errno != EPIPE && errno != ECONNRESET ?
			       "the connection to the collector failed" :
			       "the collector went away");
		else
			broken("the profile file could not be written");
	}
	advance_bound();
}

void probe_output_drain(int timeout_ms)
{
	uint64_t end = probe_now_ns() + (uint64_t)timeout_ms * 1000000u;

	for (;;) {
		uint64_t now;

		probe_output_flush();
		if (off == len || out_broken || !out_socket || out_fd < 0)
			return;
		now = probe_now_ns();
		if (now - last_progress >= STALL_NS || now >= end) {
			/* Stalled, or out of time: what is left is lost. */
			if (now - last_progress >= STALL_NS)
				trouble = "the collector stopped reading";
			else if (!trouble[0])
				trouble = "the collector was too slow at exit";
			drop_unsent();
			return;
		}
		uint64_t left = end - now, stall = last_progress + STALL_NS - now;
		if (stall < left)
			left = stall;
		struct pollfd p = { .fd = out_fd, .events = POLLOUT };
		poll(&p, 1, (int)(left / 1000000u > 50 ? 50 : left / 1000000u + 1));
	}
}

int probe_output_fd(void)
{
	return out_socket && !out_broken && out_fd >= 0 && off < len ? out_fd : -1;
}

/*
 * Fork child: the parent sends its own backlog.  The socket is the parent's
 * connection: close our copy (never shutdown(), which would cut the
 * parent's) and connect anew.  The file is shared by design: keep it.
 */
void probe_output_after_fork_child(void)
{
	off = len = bound = 0;
	restarted = 0;
	reopens = 0;
	trouble = "";
	probe_output_dropped = 0;
	if (out_socket && out_fd >= 0) {
		probe_fd_disown(out_fd);
		if (still_ours())
			probe_sys_close(out_fd);
		out_fd = -1;
		out_socket = 0;
		if (probe_output_open() < 0)
			out_fd = -1;
	}
}
