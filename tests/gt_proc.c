/*
 * gt_proc - ground truth for processes: every way a program makes another.
 *   gt_proc fork UNITS            parent_work, then a child (no exec) that
 *                                 does child_work on its thread and
 *                                 child_thread_work on a thread it creates
 *   gt_proc exec UNITS PROG ARG...  pre_exec_work, then execv(PROG)
 *   gt_proc execlp UNITS PROG ARG   pre_exec_work, then execlp(PROG, PROG, ARG)
 *   gt_proc vfork UNITS PROG ARG... vfork + execv(PROG) in the child
 *   gt_proc spawn UNITS PROG ARG... posix_spawn(PROG)
 *   gt_proc system UNITS CMD        system(CMD)
 *   gt_proc badexec UNITS          execv of a missing file fails (ENOENT),
 *                                 then parent_work: sampling goes on
 * Each does UNITS x GT_UNIT of work in the function named, prints what
 * happened (the same text with and without probe), and exits 0 (or with
 * the status of what it ran).
 */
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gt_work.h"

extern char **environ;

GT_KEEP static void parent_work(long u) { GT_SPIN(u, 1.0); }
GT_KEEP static void child_work(long u) { GT_SPIN(u, 2.0); }
GT_KEEP static void child_thread_work(long u) { GT_SPIN(u, 3.0); }
GT_KEEP static void pre_exec_work(long u) { GT_SPIN(u, 4.0); }

static void *child_thread(void *arg)
{
	child_thread_work((long)arg);
	return NULL;
}

static int status_of(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "fork";
	long units = argc > 2 ? atol(argv[2]) : 100;
	int st = 0;
	pid_t pid;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (strcmp(mode, "fork") == 0) {
		parent_work(units);
		pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			pthread_t t;
			if (pthread_create(&t, NULL, child_thread, (void *)units)) {
				perror("pthread_create");
				_exit(1);
			}
			child_work(units);
			pthread_join(t, NULL);
			printf("child done\n");
			exit(0);
		}
		waitpid(pid, &st, 0);
		printf("parent: child exited %d\n", status_of(st));
		return 0;
	}
	if (strcmp(mode, "exec") == 0 && argc > 3) {
		pre_exec_work(units);
		execv(argv[3], argv + 3);
		perror("execv");
		return 127;
	}
	if (strcmp(mode, "execlp") == 0 && argc > 4) {
		pre_exec_work(units);
		execlp(argv[3], argv[3], argv[4], (char *)NULL);
		perror("execlp");
		return 127;
	}
	if (strcmp(mode, "badexec") == 0) {
		char *args[] = { "/nonexistent/gt_proc", NULL };
		pre_exec_work(units);
		if (execv(args[0], args) < 0)
			printf("execv failed: %s\n", strerror(errno));
		parent_work(units);
		return 0;
	}
	if (strcmp(mode, "vfork") == 0 && argc > 3) {
		parent_work(units);
		pid = vfork();
		if (pid == 0) {
			execv(argv[3], argv + 3);
			_exit(127);
		}
		waitpid(pid, &st, 0);
		printf("vfork child exited %d\n", status_of(st));
		return 0;
	}
	if (strcmp(mode, "spawn") == 0 && argc > 3) {
		parent_work(units);
		int r = posix_spawn(&pid, argv[3], NULL, NULL, argv + 3, environ);
		if (r) {
			printf("posix_spawn: %s\n", strerror(r));
			return 1;
		}
		waitpid(pid, &st, 0);
		printf("spawned child exited %d\n", status_of(st));
		return 0;
	}
	if (strcmp(mode, "system") == 0 && argc > 3) {
		parent_work(units);
		st = system(argv[3]);
		printf("system returned %d\n", status_of(st));
		return 0;
	}
	fprintf(stderr, "usage: gt_proc fork|exec|execlp|vfork|spawn|system|badexec UNITS [PROG ARG...]\n");
	return 2;
}
