/*
 * unseen.h - the command's descendants that run without probe, found in
 * /proc, with why (static, setuid, no LD_PRELOAD, another user, or a
 * loader that did not load libprobe.so).
 *
 * libprobe names what it sees a process exec or spawn; this finds the
 * rest: children of unprofiled programs (a static shell's, sudo's), and
 * programs started by raw system calls (clone, execve), which libprobe
 * cannot see.  It sees only what lives across two scans: a program that
 * runs for less than UNSEEN_SCAN_MS stays unnamed.
 *
 * Contract:
 *   - unseen_scan() reads /proc (every process's stat), and for each
 *     descendant of root that state() does not call known, and that has
 *     lived since the previous scan (same start time), reads why it runs
 *     without libprobe.so and calls found() once per process image.
 *   - state() answers UNSEEN_NEW (never connected), UNSEEN_KNOWN (connected
 *     now, or already named), or UNSEEN_GONE (it was connected, and its
 *     connection ended while it lives on: it may have exec'd something not
 *     profiled).
 *   - A scan reads one small file per process on the machine (about 0.8 ms
 *     for 65 processes here); unseen_due() spaces scans UNSEEN_SCAN_MS
 *     apart, or further so that they take under 1 % of a CPU (their CPU
 *     time: a loaded machine that descheduled a scan does not space them).
 */
#ifndef PROBE_UNSEEN_H
#define PROBE_UNSEEN_H

#include <stdint.h>
#include <sys/types.h>

#define UNSEEN_SCAN_MS 200

enum unseen_state { UNSEEN_NEW, UNSEEN_KNOWN, UNSEEN_GONE };

struct unseen_proc {            /* one descendant seen by the last scan */
	pid_t pid;
	uint64_t start;         /* its start time (clock ticks after boot) */
	int named;              /* found() was called for it, or it has libprobe */
};

struct unseen {
	pid_t root;
	uint64_t next_ns, cost_ns;
	struct unseen_proc *seen;
	size_t nseen;
	void *ctx;
	enum unseen_state (*state)(void *ctx, pid_t pid);
	/* reason: enum probe_unprof_reason; path: what it runs */
	void (*found)(void *ctx, pid_t pid, pid_t ppid, unsigned reason,
		      const char *path);
};

/* Is a scan due at t (now_ns(), util.h)?  Scan at t. */
int unseen_due(const struct unseen *u, uint64_t t);
void unseen_scan(struct unseen *u, uint64_t t);
void unseen_free(struct unseen *u);

#endif
