/*
 * unconnected.h - the command's descendants that run without probe, found in
 * /proc, with why (static, setuid, no LD_PRELOAD, another user, or a
 * loader that did not load libprobe.so).
 *
 * libprobe names what it sees a process exec or spawn; this finds the
 * rest: children of unprofiled programs (a static shell's, sudo's), and
 * programs started by raw system calls (clone, execve), which libprobe
 * cannot see.  It sees only what lives across two scans: a program that
 * runs for less than UNCONN_SCAN_MS stays unnamed.
 *
 * Contract:
 *   - unconnected_scan() reads /proc (every process's stat), and for each
 *     descendant of root that state() does not call known, and that has
 *     lived since the previous scan (same start time), reads why it runs
 *     without libprobe.so and calls found() once per process image.
 *   - state() answers UNCONN_NEW (never connected), UNCONN_KNOWN (connected
 *     now, or already named), or UNCONN_GONE (it was connected, and its
 *     connection ended while it lives on: it may have exec'd something not
 *     profiled).
 *   - A scan reads one small file per process on the machine (about 0.8 ms
 *     for 65 processes here); unconnected_due() spaces scans UNCONN_SCAN_MS
 *     apart, or further so that they take under 1 % of a CPU (their CPU
 *     time: a loaded machine that descheduled a scan does not space them).
 */
#ifndef PROBE_UNCONNECTED_H
#define PROBE_UNCONNECTED_H

#include <stdint.h>
#include <sys/types.h>

#define UNCONN_SCAN_MS 200

enum unconn_state { UNCONN_NEW, UNCONN_KNOWN, UNCONN_GONE };

struct unconn_proc {            /* one descendant seen by the last scan */
	pid_t pid;
	uint64_t start;         /* its start time (clock ticks after boot) */
	int named;              /* found() was called for it, or it has libprobe */
};

struct unconnected {
	pid_t root;
	uint64_t next_ns, cost_ns;
	struct unconn_proc *seen;
	size_t nseen;
	void *ctx;
	enum unconn_state (*state)(void *ctx, pid_t pid);
	/* reason: enum probe_unprof_reason; path: what it runs */
	void (*found)(void *ctx, pid_t pid, pid_t ppid, unsigned reason,
		      const char *path);
};

/* Is a scan due at t (now_ns(), util.h)?  Scan at t. */
int unconnected_due(const struct unconnected *u, uint64_t t);
void unconnected_scan(struct unconnected *u, uint64_t t);
void unconnected_free(struct unconnected *u);

#endif
