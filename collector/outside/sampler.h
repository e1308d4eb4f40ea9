/*
 * sampler.h - sampling from outside, as `probe record` and `probe top`
 * use it: the tasks asked for (-p, -t, -a, a command probe holds before
 * its exec), their perf events (perfring.h) and the wire's frames made of
 * what they record (translate.h), handed to the caller's emit.
 *
 * Contract:
 *   - sampler_tasks(): for command cmd, the threads of the processes in a "1,2,3" list (from
 *     /proc/PID/task) or the thread ids themselves (tids): a malloc'd
 *     array; NULL after one message when an entry is not a number or names
 *     no process.
 *   - sampler_open(): events on tasks (or the whole system: all), read by
 *     sampler_read(); NULL after the kernel's refusal was said
 *     (perfring.h).  The event is smp's first (-e), at its -F or -c.
 *   - sampler_watch(): its rings into epoll set ep, each with data.ptr tag:
 *     call sampler_read() when one is ready, and at least every
 *     SAMPLER_READ_MS (a ring fills to its watermark before it wakes).
 *   - sampler_read(): every record so far, merged in time order, through
 *     translate.c, each frame to frame(), decoded (wire_decode.h).
 *   - --off-cpu (smp's offcpu): switches off the CPU and back, as off-CPU
 *     samples (translate.h), with their stacks where the kernel lets us
 *     sample in it (else said once); sampler_finish() at the end adds the
 *     waits still going, and -p's threads that never ran meanwhile.
 *   - sampler_alive(): 0 when every task it was opened on has ended; 1
 *     for -a.  sampler_done(): and every process its events reached
 *     (inherited: a fork) has ended too: it can be closed.
 *   - Counts for the summary: samples read, dropped (no user frames),
 *     records that did not decode, stacks cut by the copy's size.
 */
#ifndef PROBE_SAMPLER_H
#define PROBE_SAMPLER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cmdopt.h"
#include "outside/translate.h"
#include "data/wire_decode.h"

#define SAMPLER_READ_MS 100
/* STACK_USER's copy, bytes: see docs/architecture.md ("Sampling from outside"). */
#define SAMPLER_STACK_DEFAULT 8192u

struct sampler_stats {
	uint64_t samples, dropped, bad, truncated, dwarf, fp;
	uint64_t waits, waits_unseen;   /* --off-cpu's samples; with no stack */
};

struct sampler;

/* A wire frame made of what was sampled, whole (f, len) and decoded (m). */
typedef void (*sampler_frame_fn)(void *ctx, struct probe_msg *m, const uint8_t *f,
				 size_t len);

int *sampler_tasks(const char *cmd, const char *list, int tids, size_t *n);
/* -p, -t and -a given together: a usage error for cmd (2, said), else 0. */
int sampler_target_check(const char *cmd, const char *pids, const char *tids, int all);
/* A task that has not ended: its /proc entry is there, and not a zombie's. */
int sampler_task_lives(int tid);
/* pid's threads, as sampler_tasks gives them; NULL, quietly, when it is gone. */
int *sampler_threads(int pid, size_t *n);
struct sampler *sampler_open(const int *tasks, size_t ntasks, int all,
			     const struct sampling *smp, uint32_t stack_bytes,
			     int enable_on_exec, sampler_frame_fn frame, void *ctx);
int sampler_watch(struct sampler *s, int ep, void *tag);
void sampler_read(struct sampler *s);
void sampler_enable(struct sampler *s);
/* The end: read what is left, and (--off-cpu) the waits still going. */
void sampler_finish(struct sampler *s);
int sampler_alive(const struct sampler *s);
int sampler_done(const struct sampler *s);
void sampler_stats(const struct sampler *s, struct sampler_stats *st);
void sampler_close(struct sampler *s);

#endif
