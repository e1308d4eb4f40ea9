/*
 * conn.c - the connection to the collector: the only way out of the
 * process besides the arena (arena.c).
 *
 * A SOCK_SEQPACKET Unix socket: every send is one record of whole frames,
 * delivered whole or not at all, so threads that send at once (a dlopen on
 * one, an exit on another) never interleave, and a full socket never leaves
 * half a frame behind.  Sends are non-blocking; a full socket is waited on
 * for at most SEND_WAIT_MS (the collector drains fast: samples do not come
 * this way, only HELLO, MAP, SYNC and EXIT), then the frame is dropped and
 * counted.  MSG_NOSIGNAL: a collector that went away is an error, not a
 * SIGPIPE.  Everything that sends is async-signal-safe (the exit path may
 * be in a signal handler).
 *
 * Which collector:
 *   1. PROBE_SOCKET (set by probe record / probe top): connect there.  If
 *      that fails, say so and do not profile: a file written instead could
 *      replace the user's recording.  A name starting with '@' is in the
 *      abstract namespace (the collector this library started, below).
 *   2. No PROBE_SOCKET and no PROBE_OUTPUT: a `probe top` may be watching
 *      this user's DIR/top.sock, or a `probe agent` DIR/agent.sock (DIR as
 *      collector/ingest/usock.c's usock_dir() has it): connect there when
 *      DIR is a real directory (not a symbolic link) of our euid with mode
 *      0700 and holds the socket (a top is named once on stderr, since
 *      ./probe.data is not written; an agent is silent).  Else root's agent
 *      for the whole host, PROBE_HOST_SOCKET, in a directory of root's that
 *      only root may write to; its peer must be root.  Such a watcher may
 *      come and go: the program says nothing of what it could not deliver
 *      (probe_conn_watcher()).
 *   3. Otherwise LD_PRELOAD alone: start a collector, `probe record
 *      --serve`, found next to this library (or in ../../bin, as installed)
 *      to write PROBE_OUTPUT or ./probe.data.  We make its listening socket
 *      (abstract, with a random name: nothing on disk to clean up, and
 *      nobody can guess it), start it with posix_spawn (no atfork handlers
 *      run, and it does not exec through our interposed execve), and it
 *      forks at once so that it is not our child (the program's wait()
 *      must not see it); we reap the intermediate.  PROBE_SOCKET and
 *      PROBE_EXIT_ACK=1 go into the environment, so that exec'd children
 *      record into the same file.  With PROBE_EXIT_ACK, the exit path waits
 *      (bounded) for the collector to say it has saved this process's
 *      samples: the file is whole when the program's exit status is.
 *
 * The peer must be of our euid (SO_PEERCRED on the connected socket), or
 * root for the host's agent: a socket another user put in our path must
 * not receive our samples.
 *
 * The descriptor is moved high and guarded (fds.c).  What gets past (a raw
 * close_range, dup2 onto it) is caught before every send (device and inode
 * checked); then we connect again and the caller sends HELLO and MAPs again
 * (probe_conn_restarted).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#define SEND_WAIT_MS 200                /* a full socket, at most */
#define REOPEN_MAX 8                    /* times we follow a closed descriptor */
#define SUN_MAX ((int)sizeof(((struct sockaddr_un *)0)->sun_path))

static int conn_fd = -1;
static uid_t conn_uid;                  /* our euid when we connected */
static struct probe_fd_id conn_id;
static char conn_path[SUN_MAX + 1];
static int broken;
static int restarted;
static int reopens;
static int wait_ack;
static int host_agent;                  /* connected to root's agent: peer root */
static int watcher;                     /* ... or to another found by connect_watcher */
static const char *trouble = "";
uint64_t probe_conn_dropped;

/* "@name" is abstract (sun_path[0] = 0); returns the address length. */
static socklen_t make_addr(const char *path, struct sockaddr_un *sa)
{
	size_t n = strlen(path);

	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	if (n >= (size_t)SUN_MAX)
		n = SUN_MAX - 1;
	memcpy(sa->sun_path, path, n);
	if (path[0] == '@')
		sa->sun_path[0] = 0;
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
			   (path[0] == '@' ? 0 : 1));
}

/* The peer is of our euid, or root where root's host agent is asked for. */
static int peer_is_us(int fd, int root_too)
{
	struct ucred cr;
	socklen_t len = sizeof cr;

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 &&
	       (cr.uid == geteuid() || (root_too && cr.uid == 0));
}

static int connect_peer(const char *path, int *err, int root_too)
{
	struct sockaddr_un sa;
	socklen_t sl = make_addr(path, &sa);
	int fd, tries = 0;

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		*err = errno;
		return -1;
	}
	for (;;) {
		if (connect(fd, (struct sockaddr *)&sa, sl) == 0)
			break;
		if (errno == EINTR)
			continue;
		/* A full listen backlog: give the collector a moment. */
		if (errno == EAGAIN && ++tries < 50) {
			struct timespec ts = { 0, 10 * 1000 * 1000 };
			nanosleep(&ts, NULL);
			continue;
		}
		*err = errno;
		probe_sys_close(fd);
		return -1;
	}
	if (!peer_is_us(fd, root_too)) {
		*err = EACCES;
		probe_sys_close(fd);
		return -1;
	}
	return fd;
}

static int connect_socket(const char *path, int *err)
{
	return connect_peer(path, err, 0);
}

/* Keep it out of the program's way, and remember what and where it is. */
static void adopt(int fd, const char *path)
{
	fd = probe_fd_high(fd);
	probe_fd_id_take(fd, &conn_id);
	if (path != conn_path)
		snprintf(conn_path, sizeof conn_path, "%s", path);
	probe_fd_own(fd);
	conn_fd = fd;
	conn_uid = geteuid();
	broken = 0;
}

uid_t probe_conn_uid(void)
{
	return conn_uid;
}

static int still_ours(void)
{
	return probe_fd_id_same(conn_fd, &conn_id);
}

/* ---- `probe top` watching ------------------------------------------------ */

/*
 * The per-user directory of `probe top`.  This must stay in step with
 * collector/ingest/usock.c (SOCK_SUFFIX_MAX, xdg_usable(), usock_dir()), except
 * that we never create it: we only look.
 */
#define USOCK_SUFFIX_MAX 32     /* "/probe/record-4294967295.sock" */

static int xdg_usable(const char *d)
{
	struct stat st;

	if (!d || d[0] != '/')
		return 0;
	if (strlen(d) + USOCK_SUFFIX_MAX >= (size_t)SUN_MAX)
		return 0;
	if (lstat(d, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return 0;
	return faccessat(AT_FDCWD, d, W_OK | X_OK, AT_EACCESS) == 0;
}

/* DIR/NAME into path when DIR is private and the socket is there. */
static int user_socket_path(char *path, size_t cap, const char *name)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char dir[SUN_MAX];
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
	n = snprintf(path, cap, "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= cap)
		return -1;
	if (lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode))
		return -1;
	return 0;
}

/*
 * The host's agent (root's probe agent): PROBE_HOST_SOCKET when it is a
 * socket in a directory of root's that nobody else may write to.
 */
static int host_socket_path(char *path, size_t cap)
{
	struct stat st;
	char dir[SUN_MAX + 1];

	if (snprintf(dir, sizeof dir, "%s", PROBE_HOST_SOCKET) >= (int)sizeof dir)
		return -1;
	*strrchr(dir, '/') = 0;
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 022))
		return -1;
	if (lstat(PROBE_HOST_SOCKET, &st) < 0 || !S_ISSOCK(st.st_mode) || st.st_uid != 0)
		return -1;
	return snprintf(path, cap, "%s", PROBE_HOST_SOCKET) < (int)cap ? 0 : -1;
}

/*
 * A program run with LD_PRELOAD alone expects ./probe.data (the README says
 * so): when a `probe top` takes its samples instead, say so, once for the
 * program: its exec'd children find PROBE_TOP_SAID and stay quiet, fork
 * children reconnect without coming here.  An agent is not announced: it
 * is set up to watch every program, which must not notice it.
 */
static void say_top(int fd, const char *path)
{
	struct ucred cr;
	socklen_t len = sizeof cr;

	if (getenv("PROBE_TOP_SAID"))
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		cr.pid = 0;
	probe_msg("sending samples to `probe top` (pid %d) at %s; ./probe.data is "
		  "not written (PROBE_OUTPUT=FILE records to a file instead)",
		  (int)cr.pid, path);
	setenv("PROBE_TOP_SAID", "1", 1);
}

/*
 * Someone watching without PROBE_SOCKET: this user's probe top, else this
 * user's probe agent, else the host's.  Silent when none is there.
 */
static int connect_watcher(void)
{
	static const char *const names[] = { "top.sock", "agent.sock" };
	char path[SUN_MAX + 1];
	int fd, err = 0;

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (user_socket_path(path, sizeof path, names[i]) < 0)
			continue;
		fd = connect_socket(path, &err);
		if (fd >= 0) {
			if (i == 0)
				say_top(fd, path);
			adopt(fd, path);
			watcher = 1;
			return 0;
		}
	}
	if (host_socket_path(path, sizeof path) == 0) {
		fd = connect_peer(path, &err, 1);
		if (fd >= 0) {
			adopt(fd, path);
			host_agent = watcher = 1;
			return 0;
		}
	}
	return -1;
}

int probe_conn_watcher(void)
{
	return watcher;
}

/* ---- LD_PRELOAD alone: a collector of our own ----------------------------- */

/* The probe command beside this library, or in ../../bin (installed). */
static int find_probe(char *out, size_t cap, char *tried, size_t tcap)
{
	Dl_info info;
	char lib[PATH_MAX], *dir;
	const char *rel[] = { "probe", "../../bin/probe" };

	if (!dladdr((void *)find_probe, &info) || !info.dli_fname ||
	    !realpath(info.dli_fname, lib)) {
		snprintf(tried, tcap, "(libprobe.so's own path is unknown)");
		return -1;
	}
	dir = dirname(lib);
	tried[0] = 0;
	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
		snprintf(out, cap, "%s/%s", dir, rel[i]);
		if (access(out, X_OK) == 0)
			return 0;
		size_t n = strlen(tried);
		snprintf(tried + n, tcap - n, "%s%s", n ? " and " : "", out);
	}
	return -1;
}

/* The recording's absolute path: PROBE_OUTPUT or ./probe.data. */
static void output_path(char *out, size_t cap)
{
	const char *p = probe_cfg.output_path[0] ? probe_cfg.output_path
						 : "probe.data";
	char cwd[PATH_MAX];

	if (p[0] == '/' || !getcwd(cwd, sizeof cwd) ||
	    snprintf(out, cap, "%s/%s", cwd, p) >= (int)cap)
		snprintf(out, cap, "%s", p);
}

/* A listening socket at a fresh abstract name; its name into path. */
static int listen_abstract(char *path, size_t cap)
{
	struct sockaddr_un sa;
	uint64_t r[2] = { 0, 0 };
	int fd;

	if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
		r[0] ^= (uint64_t)probe_now_ns() * 0x9e3779b97f4a7c15ull;
		r[1] ^= (uint64_t)getpid() << 32 | (uint64_t)(uintptr_t)&fd;
	}
	snprintf(path, cap, "@probe-%u-%016llx%016llx", (unsigned)geteuid(),
		 (unsigned long long)r[0], (unsigned long long)r[1]);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, make_addr(path, &sa)) < 0 ||
	    listen(fd, 128) < 0) {
		probe_sys_close(fd);
		return -1;
	}
	return fd;
}

/*
 * posix_spawn `probe record --serve -o FILE` with the listening socket as
 * its fd 3 and /dev/null for 0-2; it forks and its first process exits at
 * once.  Returns 0 when that first process said it is serving (exit 0).
 */
static int spawn_collector(const char *probe, int lfd, const char *file)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all, cur, pend;
	char *argv[] = { "probe", "record", "--serve", "-o", (char *)file, NULL };
	char *envp[] = { "PATH=/usr/bin:/bin", NULL };
	pid_t pid;
	int st = -1, r, chld_was_pending;

	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, lfd, 3);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawnattr_init(&at);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
				 POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSID);
	/* Our SIGCHLD must not reach a program that has it blocked. */
	probe_real_sigmask(SIG_BLOCK, NULL, &cur);
	sigpending(&pend);
	chld_was_pending = sigismember(&pend, SIGCHLD) == 1;
	r = posix_spawn(&pid, probe, &fa, &at, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (r != 0) {
		errno = r;
		return -1;
	}
	while ((r = (int)waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	/* SIGCHLD ignored (inherited SIG_IGN): reaped for us, status unknown. */
	if (r < 0 && errno == ECHILD)
		st = 0;
	if (sigismember(&cur, SIGCHLD) == 1 && !chld_was_pending) {
		sigset_t chld;
		struct timespec zero = { 0, 0 };

		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		sigtimedwait(&chld, NULL, &zero);
	}
	errno = EIO;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int start_own_collector(void)
{
	char probe[PATH_MAX], tried[2 * PATH_MAX + 16], file[PATH_MAX];
	char name[SUN_MAX];
	int lfd, fd, err = 0;

	output_path(file, sizeof file);
	if (find_probe(probe, sizeof probe, tried, sizeof tried) < 0) {
		probe_msg("no collector (PROBE_SOCKET is not set), and the probe "
			  "command that would record into %s is not at %s; not "
			  "profiling (run the program with probe record)", file,
			  tried);
		return -1;
	}
	lfd = listen_abstract(name, sizeof name);
	if (lfd < 0 || spawn_collector(probe, lfd, file) < 0) {
		probe_msg("no collector (PROBE_SOCKET is not set), and %s could "
			  "not be started to record into %s (%s); not profiling",
			  probe, file, strerror(errno));
		if (lfd >= 0)
			probe_sys_close(lfd);
		return -1;
	}
	probe_sys_close(lfd);
	fd = connect_socket(name, &err);
	if (fd < 0) {
		probe_msg("cannot connect to the collector probe started (%s); "
			  "not profiling", strerror(err));
		return -1;
	}
	adopt(fd, name);
	snprintf(probe_cfg.socket_path, sizeof probe_cfg.socket_path, "%s", name);
	/* Exec'd children record into the same file. */
	setenv("PROBE_SOCKET", name, 1);
	setenv("PROBE_EXIT_ACK", "1", 1);
	wait_ack = 1;
	probe_msg("writing profile to %s (no collector: PROBE_SOCKET is not set)",
		  file);
	return 0;
}

int probe_conn_open(void)
{
	int fd, err = 0;

	broken = 0;
	restarted = 0;
	wait_ack = getenv("PROBE_EXIT_ACK") != NULL;
	if (probe_cfg.socket_path[0]) {
		fd = connect_socket(probe_cfg.socket_path, &err);
		if (fd < 0) {
			probe_msg("cannot connect to the collector at %s (%s); not "
				  "profiling", probe_cfg.socket_path,
				  err == EACCES ? "permission denied: another user's"
				  " collector" : strerror(err));
			return -1;
		}
		adopt(fd, probe_cfg.socket_path);
		return 0;
	}
	/* An explicit file (PROBE_OUTPUT) wins over a watching probe top. */
	if (!probe_cfg.output_path[0] && connect_watcher() == 0)
		return 0;
	return start_own_collector();
}

/* ---- sending: async-signal-safe ------------------------------------------ */

/*
 * The program closed our descriptor behind fds.c's back (or put another
 * file on its number).  Not ours to close now; connect again.
 */
static void lost_descriptor(void)
{
	static int busy;
	int fd = -1, err = 0;

	/* Another thread is at it: this send is dropped, as with a full socket. */
	if (__atomic_exchange_n(&busy, 1, __ATOMIC_ACQUIRE))
		return;
	/* The old number is the program's now: forget it, never close it. */
	probe_fd_disown(conn_fd);
	while (fd < 0 && ++reopens <= REOPEN_MAX)
		fd = connect_peer(conn_path, &err, host_agent);
	if (fd < 0) {
		broken = 1;
		trouble = "the program closed probe's connection to the collector, "
			  "and it could not be opened again";
	} else {
		adopt(fd, conn_path);
		restarted = 1;
	}
	__atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
}

static int wait_out(int ms)
{
	struct pollfd p = { .fd = conn_fd, .events = POLLOUT };

	return poll(&p, 1, ms) > 0 && (p.revents & POLLOUT);
}

int probe_conn_send_fd(const void *p, size_t n, int pass_fd)
{
	struct iovec iov = { (void *)p, n };
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	int fds[2] = { pass_fd, probe_arena_wake_fd_ok() };
	unsigned nfds = fds[1] >= 0 ? 2 : 1;   /* the arena's wake socket after it */
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	int waited = 0;

	if (conn_fd < 0 || broken) {
		probe_conn_dropped++;
		return -1;
	}
	if (!still_ours()) {
		lost_descriptor();
		/* The caller sends HELLO again first (probe_conn_restarted). */
		probe_conn_dropped++;
		return -1;
	}
	if (pass_fd >= 0) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof ctl);
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	for (;;) {
		ssize_t r = sendmsg(conn_fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (r == (ssize_t)n)
			return 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && !waited) {
			waited = 1;
			if (wait_out(SEND_WAIT_MS))
				continue;
			trouble = "the collector stopped reading";
			probe_conn_dropped++;
			return -1;
		}
		if (r < 0 && (errno == ENOTSOCK || errno == EBADF)) {
			lost_descriptor();
			probe_conn_dropped++;
			return -1;
		}
		broken = 1;
		trouble = r < 0 && errno != EPIPE && errno != ECONNRESET ?
			  "the connection to the collector failed" :
			  "the collector went away";
		probe_conn_dropped++;
		return -1;
	}
}

/*
 * Normal context: is our descriptor still ours (if not, connect again), and
 * is the collector still there?
 */
void probe_conn_check(void)
{
	struct pollfd p = { .fd = conn_fd, .events = POLLRDHUP };

	if (conn_fd < 0 || broken)
		return;
	if (!still_ours()) {
		lost_descriptor();
		return;
	}
	if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR))) {
		broken = 1;
		trouble = "the collector went away";
	}
}

int probe_conn_send(const void *p, size_t n)
{
	return probe_conn_send_fd(p, n, -1);
}

/*
 * From a vfork child (or one forked without our handlers): it shares, or
 * has a copy of, our state, which it must not change.  One try, no
 * reconnecting, nothing counted.
 */
void probe_conn_send_child(const void *p, size_t n)
{
	if (conn_fd >= 0 && !broken && still_ours())
		(void)send(conn_fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

int probe_conn_restarted(void)
{
	return __atomic_exchange_n(&restarted, 0, __ATOMIC_ACQ_REL);
}

int probe_conn_ok(void)
{
	return conn_fd >= 0 && !broken;
}

const char *probe_conn_trouble(void)
{
	return trouble;
}

/* One byte from the collector on fd, or deadline. Async-signal-safe. */
static void wait_byte(int fd, uint64_t deadline)
{
	char b[16];

	for (;;) {
		uint64_t now = probe_now_ns();
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (now >= deadline)
			return;
		int r = poll(&p, 1, (int)((deadline - now) / 1000000u) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r > 0)
			(void)recv(fd, b, sizeof b, MSG_DONTWAIT);
		return;
	}
}

/*
 * After EXIT, when this process's collector is one that libprobe started
 * (PROBE_EXIT_ACK): wait until it says it has saved everything of ours,
 * at most until deadline.
 */
void probe_conn_wait_ack(uint64_t deadline)
{
	if (!wait_ack || conn_fd < 0 || broken)
		return;
	wait_byte(conn_fd, deadline);
}

/*
 * After UNPROFILED for a static program this process is about to exec:
 * the collector opens perf events on us that start at the exec (it
 * samples the program from outside), then says so with one byte; at most
 * until deadline.  Async-signal-safe: exec may be called in a handler.
 */
void probe_conn_wait_reply(uint64_t deadline)
{
	if (conn_fd < 0 || broken)
		return;
	wait_byte(conn_fd, deadline);
}

/*
 * Fork child: the socket is the parent's connection: close our copy (never
 * shutdown(), which would cut the parent's).  Where it led is kept.
 */
void probe_conn_drop_inherited(void)
{
	trouble = "";
	probe_conn_dropped = 0;
	reopens = 0;
	restarted = 0;
	if (conn_fd >= 0) {
		if (still_ours())
			probe_sys_close(conn_fd);
		probe_fd_disown(conn_fd);
		conn_fd = -1;
	}
}

/*
 * A start that waits (lazy.c): the collector PROBE_SOCKET names, not yet
 * connected to.  -1 where a start cannot wait: no PROBE_SOCKET (a watcher
 * found or a collector to start), or one libprobe started (its EXIT waits
 * for a word on a connection made at the start).
 */
int probe_conn_prepare(void)
{
	broken = 0;
	restarted = 0;
	wait_ack = getenv("PROBE_EXIT_ACK") != NULL;
	if (!probe_cfg.socket_path[0] || wait_ack)
		return -1;
	snprintf(conn_path, sizeof conn_path, "%s", probe_cfg.socket_path);
	return 0;
}

/*
 * Connect to conn_path now (a fork child, a start that waited).
 * Async-signal-safe; -1 with *err on failure.
 */
int probe_conn_open_now(int *err)
{
	int fd = connect_peer(conn_path, err, host_agent);

	if (fd < 0) {
		broken = 1;
		return -1;
	}
	adopt(fd, conn_path);
	return 0;
}

/*
 * One record on a connection of its own, closed once sent (after the
 * collector's one byte, or reply_deadline, when that is not 0): the last
 * word of a process that never started (lazy.c), so none of adopt()'s
 * guarding.  Async-signal-safe; -1 with *err.
 */
int probe_conn_send_once(const void *p, size_t n, int *err, uint64_t reply_deadline)
{
	int fd = connect_peer(conn_path, err, host_agent), r;

	if (fd < 0)
		return -1;
	r = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)n ? 0 : -1;
	if (r < 0)
		*err = errno;
	else if (reply_deadline)
		wait_byte(fd, reply_deadline);
	probe_sys_close(fd);
	return r;
}

/* Where the connection goes (PROBE_SOCKET's name, or the collector's). */
const char *probe_conn_path(void)
{
	return conn_path;
}
