/*
 * gt_fds - a program that closes every descriptor it did not open, as
 * daemons and careful spawners do, and carries on.
 *   gt_fds MODE [UNITS [OUT]]
 * before_close_work, then close everything above 2 by MODE:
 *   loop        close() on every number up to the soft RLIMIT_NOFILE
 *   proc        close() on every number listed in /proc/self/fd
 *   close_range close_range(3, ~0U, 0) from the C library
 *   closefrom   closefrom(3)
 *   raw         the close_range system call itself (no library in between)
 *   dup2        dup2(/dev/null) onto every number up to 2048, then close
 *   daemon      close 0..max, /dev/null on 0, 1 and 2; results go to OUT
 * then after_close_work on this thread and in a new thread, and a fork
 * child that does child_work; prints what it did ("done").
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gt_work.h"

GT_KEEP static void before_close_work(long u) { GT_SPIN(u, 1.0); }
GT_KEEP static void after_close_work(long u) { GT_SPIN(u, 2.0); }
GT_KEEP static void thread_work(long u) { GT_SPIN(u, 3.0); }
GT_KEEP static void child_work(long u) { GT_SPIN(u, 4.0); }

static void *worker(void *arg)
{
	thread_work((long)arg);
	return NULL;
}

static int max_fd(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur > 65536)
		return 65536;
	return (int)rl.rlim_cur;
}

static int close_all(const char *m)
{
	if (!strcmp(m, "loop")) {
		for (int fd = 3; fd < max_fd(); fd++)
			close(fd);
	} else if (!strcmp(m, "proc")) {
		int fds[4096], n = 0;
		DIR *d = opendir("/proc/self/fd");
		struct dirent *e;
		if (!d)
			return -1;
		while ((e = readdir(d)) != NULL && n < 4096) {
			int fd = atoi(e->d_name);
			if (fd > 2 && fd != dirfd(d))
				fds[n++] = fd;
		}
		closedir(d);
		for (int i = 0; i < n; i++)
			close(fds[i]);
	} else if (!strcmp(m, "close_range")) {
		if (close_range(3, ~0U, 0) < 0)
			return -1;
	} else if (!strcmp(m, "closefrom")) {
		closefrom(3);
	} else if (!strcmp(m, "raw")) {
		if (syscall(SYS_close_range, 3, ~0U, 0) < 0)
			return -1;
	} else if (!strcmp(m, "dup2")) {
		int nul = open("/dev/null", O_RDONLY);
		for (int fd = 3; fd < 2048 && fd < max_fd(); fd++)
			if (fd != nul)
				dup2(nul, fd);
		for (int fd = 3; fd < 2048 && fd < max_fd(); fd++)
			close(fd);
	} else if (!strcmp(m, "daemon")) {
		for (int fd = 0; fd < max_fd(); fd++)
			close(fd);
		if (open("/dev/null", O_RDWR) != 0 || dup(0) != 1 || dup(0) != 2)
			return -1;
	} else {
		return -2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "loop";
	long units = argc > 2 ? atol(argv[2]) : 100;
	const char *out = argc > 3 ? argv[3] : NULL;
	pthread_t t;
	int st, r;
	pid_t pid;
	FILE *o = stdout;

	before_close_work(units);
	r = close_all(m);
	if (r == -2) {
		fprintf(stderr, "usage: gt_fds loop|proc|close_range|closefrom|raw|dup2|daemon [UNITS [OUT]]\n");
		return 2;
	}
	if (out && !(o = fopen(out, "w")))
		return 3;
	fprintf(o, "closed (%s): %s\n", m, r == 0 ? "ok" : "failed");
	pthread_create(&t, NULL, worker, (void *)units);
	after_close_work(units);
	pthread_join(t, NULL);
	fflush(o);
	pid = fork();
	if (pid == 0) {
		child_work(units);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	fprintf(o, "child exited %d\ndone\n", WEXITSTATUS(st));
	return 0;
}
