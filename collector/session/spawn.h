/*
 * spawn.h - starting the profiled command: finding libprobe.so, building
 * its environment, fork + exec.
 *
 * Contract:
 *   - find_libprobe(): $PROBE_LIBPROBE if set (it must exist), else
 *     libprobe.so next to the probe binary (the build layout), else
 *     ../lib/probe/libprobe.so from it (the install layout).  Returns an
 *     absolute malloc'd path, or NULL after one message.
 *   - child_environ(): our environment with LD_PRELOAD = libprobe first
 *     (before any existing entries, space-separated), PROBE_SOCKET,
 *     PROBE_EVENT and exactly one of PROBE_FREQ / PROBE_PERIOD; when set,
 *     PROBE_EVENT_ATTR (raw and PMU events), PROBE_EVENT_MODIFIER (u, k,
 *     uk), PROBE_RING_PAGES (-m), PROBE_NO_INHERIT=1 (--no-inherit),
 *     PROBE_OFFCPU=1 and PROBE_TIMER=1 (--off-cpu); inherited values of
 *     all of these are dropped (PROBE_TIMER only when it is set here).
 *   - spawn(): fork, restore the signal mask, exec argv (PATH search).  If
 *     the exec fails the child reports errno through a close-on-exec pipe,
 *     and spawn prints a shell-like message and returns -1 with *status set
 *     to 127 (not found) or 126 (found but not executable).
 */
#ifndef PROBE_SPAWN_H
#define PROBE_SPAWN_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "session/events.h"

struct child_settings {
	const char *libprobe, *socket, *event;
	int use_period;         /* 1: value is PROBE_PERIOD, 0: PROBE_FREQ */
	uint64_t value;
	const struct event_spec *ev;    /* attr, modifier; NULL: none */
	const struct event_spec *more;  /* the events after it (attr set) */
	unsigned nmore;
	unsigned ring_pages;            /* 0: libprobe's default */
	int no_inherit;
	int offcpu;                     /* --off-cpu: PROBE_OFFCPU=1 */
	int timer;                      /* PROBE_TIMER=1 */
	uint64_t alloc;                 /* --alloc: PROBE_ALLOC=BYTES; 0: none */
	int alloc_only;                 /* ... alone: PROBE_ALLOC_ONLY=1 */
};

char *find_libprobe(void);
/*
 * The same, or the library beside it with the wrappers asked for:
 * libprobe-offcpu.so (the waits), libprobe-alloc.so (the allocator),
 * libprobe-offcpu-alloc.so (both).
 */
char *find_libprobe_for(int offcpu, int alloc);
char **child_environ(const struct child_settings *s);
void free_environ(char **env);
pid_t spawn(char *const argv[], char *const envp[], const sigset_t *mask, int *status);
/*
 * spawn() in two steps: spawn_held() forks (hold: the child waits before
 * its exec, for events opened on it with enable_on_exec), spawn_release()
 * lets it exec and gives what spawn() gives.  -1 from spawn_held: said.
 */
struct spawn_hold {
	pid_t pid;
	int gate, err;
};
int spawn_held(char *const argv[], char *const envp[], const sigset_t *mask,
	       struct spawn_hold *h, int hold);
pid_t spawn_release(struct spawn_hold *h, char *const argv[], int *status);
/* The file argv0 names, as execvp finds it in PATH (malloc'd), or NULL. */
char *spawn_which(const char *argv0);

/*
 * Ignore SIGXFSZ in the collector (a write past ulimit -f then fails with
 * EFBIG instead of killing it); spawn() gives the command the disposition
 * the collector was started with.
 */
void spawn_ignore_xfsz(void);

#endif
