/*
 * child.c - collecting the profiled command's exit status (see child.h).
 */
#include "session/child.h"

#include <errno.h>
#include <sys/wait.h>

int child_wait(pid_t pid, int *status)
{
	int st;
	pid_t p;
	while ((p = waitpid(pid, &st, WNOHANG)) != 0) {
		if (p < 0) {
			if (errno == EINTR)
				continue;
			/* ECHILD: nothing to wait for; do not hang. */
			*status = 1;
		} else if (WIFEXITED(st)) {
			*status = WEXITSTATUS(st);
		} else if (WIFSIGNALED(st)) {
			*status = 128 + WTERMSIG(st);
		} else {
			continue;       /* stopped or continued: still running */
		}
		return 1;
	}
	return 0;
}
