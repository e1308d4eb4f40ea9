/* usock.c - see usock.h. */
#include "ingest/usock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "util.h"

/* Room left in sun_path for "/probe/record-4294967295.sock". */
#define SOCK_SUFFIX_MAX 32

static int xdg_usable(const char *d)
{
	struct stat st;
	if (!d || d[0] != '/')
		return 0;
	if (strlen(d) + SOCK_SUFFIX_MAX >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return 0;
	if (lstat(d, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return 0;
	return faccessat(AT_FDCWD, d, W_OK | X_OK, AT_EACCESS) == 0;
}

char *usock_dir(void)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char *dir = xdg_usable(xdg) ? xasprintf("%s/probe", xdg)
				    : xasprintf("/tmp/probe-%u", (unsigned)geteuid());
	int created = mkdir(dir, 0700) == 0;
	if (!created && errno != EEXIST) {
		probe_err("cannot create %s: %s; set XDG_RUNTIME_DIR to a private "
			  "directory of yours", dir, strerror(errno));
		free(dir);
		return NULL;
	}
	struct stat st;
	if (lstat(dir, &st) < 0) {
		probe_err("cannot check %s: %s", dir, strerror(errno));
		free(dir);
		return NULL;
	}
	const char *why = NULL;
	if (S_ISLNK(st.st_mode))
		why = "is a symbolic link, not a directory";
	else if (!S_ISDIR(st.st_mode))
		why = "is not a directory";
	else if (st.st_uid != geteuid())
		why = "belongs to another user";
	if (why) {
		probe_err("%s %s; remove it (someone else may have made it) or set "
			  "XDG_RUNTIME_DIR to a private directory", dir, why);
		free(dir);
		return NULL;
	}
	if ((st.st_mode & 07777) != 0700) {
		/* Ours, just made under a umask that took bits away: fix it. */
		if (created && chmod(dir, 0700) == 0)
			return dir;
		probe_err("%s has mode %04o, not 0700; run 'chmod 700 %s' or remove it",
			  dir, (unsigned)(st.st_mode & 07777), dir);
		free(dir);
		return NULL;
	}
	return dir;
}

char *usock_path(const char *dir, pid_t pid)
{
	return xasprintf("%s/record-%ld.sock", dir, (long)pid);
}

int usock_listen(const char *path)
{
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		probe_err("socket path %s is too long; set XDG_RUNTIME_DIR to a "
			  "shorter directory", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		probe_err("cannot create a socket: %s", strerror(errno));
		return -1;
	}
	/* A previous probe with our pid died without cleaning up. */
	if (unlink(path) < 0 && errno != ENOENT) {
		probe_err("cannot remove the stale socket %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	mode_t old = umask(0177);       /* the socket file is created 0600 */
	int r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	int e = errno;
	umask(old);
	if (r < 0) {
		probe_err("cannot bind %s: %s", path, strerror(e));
		close(fd);
		return -1;
	}
	if (listen(fd, SOMAXCONN) < 0) {
		probe_err("cannot listen on %s: %s", path, strerror(errno));
		close(fd);
		unlink(path);
		return -1;
	}
	return fd;
}

int usock_peer(int fd, pid_t *pid, uid_t *uid)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || len != sizeof(cr))
		return -1;
	*pid = cr.pid;
	*uid = cr.uid;
	return 0;
}

int usock_live(const char *path)
{
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path))
		return 0;
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	int live = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return live;
}
