/*
 * child.h - collecting the profiled command's exit status.
 *
 * Contract: child_wait(pid, &status) never blocks.  It returns 0 while pid
 * runs (stopped or continued counts as running), else 1 with status set to
 * the shell's view: its exit code, 128 + N if signal N killed it, 1 if it
 * cannot be waited for (ECHILD: the caller must not hang on it).
 */
#ifndef PROBE_CHILD_H
#define PROBE_CHILD_H

#include <sys/types.h>

int child_wait(pid_t pid, int *status);

#endif
