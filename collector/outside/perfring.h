/*
 * perfring.h - perf events the collector opens on processes it did not
 * start with libprobe (issue 25: static programs, Go, -p, -a), and their
 * ring buffers, read as perf reads them.  The first stage of sampling from
 * outside: records in, decoded; nothing here unwinds or symbolizes.
 *
 * Contract:
 *   - perfring_open() opens one sampling event per (task, online CPU):
 *     task a thread id, or -1 for every task (the whole system).  inherit
 *     is set, so that the threads and children a task makes later are
 *     sampled too (the kernel maps an inherited event only per CPU, hence
 *     the events per CPU).  Every event of a CPU writes into that CPU's
 *     one ring (PERF_EVENT_IOC_SET_OUTPUT).
 *   - A sample carries IP, TID, TIME, CPU, PERIOD, the kernel's CALLCHAIN
 *     (frame pointers: what Go and JIT code keep), REGS_USER (the
 *     registers a DWARF unwinder starts from) and STACK_USER (a copy of
 *     the user stack from SP, stack_bytes long, for that unwinder).
 *     mmap2, comm and task records come beside them (objects mapped,
 *     names and execs, forks and exits), each with the time it happened
 *     (sample_id_all).
 *   - switches: each task's switches off and back on the CPU come too, as
 *     SWITCH records (pid, tid, time: what off-CPU time is made of); with
 *     switch_stacks, a context-switches event (period 1) per (task, CPU)
 *     beside the first, in rings of its own, samples the stack at each
 *     switch off (marked cs).  It counts in the kernel, so it needs kernel
 *     sampling allowed (perf_event_paranoid <= 1, CAP_PERFMON or root).
 *   - enable_on_exec: the events start counting when the task execs (a
 *     command probe forks, holds, then lets exec); else at once.
 *   - perfring_read() hands each record of a CPU's ring to a callback,
 *     decoded (struct perfring_rec: pointers into a buffer of the ring's
 *     that is valid during the call alone), and frees the room.  A record
 *     that does not decode is skipped and counted (bad).
 *   - Errors are said once (probe_err), saying what to do: EACCES/EPERM
 *     names perf_event_paranoid and CAP_PERFMON; ESRCH a task that ended.
 */
#ifndef PROBE_PERFRING_H
#define PROBE_PERFRING_H

#include <stddef.h>
#include <stdint.h>

/* The user registers sampled (x86-64, perf_regs.h order): AX..IP, R8..R15. */
#define PERFRING_REGS_MASK 0xff01ffull
#define PERFRING_REG_BP 6
#define PERFRING_REG_SP 7
#define PERFRING_REG_IP 8
#define PERFRING_NREGS 17       /* bits set in PERFRING_REGS_MASK */
#define PERFRING_CALLCHAIN_MAX 512

struct perfring_opts {
	uint32_t type;          /* perf_event_attr.type and config: the event */
	uint64_t config;
	int freq;               /* 1: value is Hz, 0: a period */
	uint64_t value;
	uint32_t stack_bytes;   /* STACK_USER's copy (multiple of 8); 0: none */
	int kernel;             /* 1: kernel frames too (exclude_kernel 0) */
	int enable_on_exec;
	int switches;           /* PERF_RECORD_SWITCH: each task's switches off
				   and back on the CPU, timed (any user) */
	int switch_stacks;      /* and a context-switches event, period 1, in
				   rings of its own: the stack at each switch
				   off (kernel sampling allowed only) */
};

enum perfring_kind {
	PERFRING_SAMPLE, PERFRING_MMAP, PERFRING_COMM, PERFRING_FORK,
	PERFRING_EXIT, PERFRING_LOST, PERFRING_THROTTLE, PERFRING_SWITCH,
};

struct perfring_rec {
	enum perfring_kind kind;
	uint32_t pid, tid, cpu;
	uint64_t time;
	union {
		struct {
			uint64_t ip, period;
			uint32_t nchain;                /* kernel's callchain */
			const uint64_t *chain;          /* PERF_CONTEXT_* marks included */
			int have_regs;                  /* 0: a kernel thread, no user regs */
			uint64_t regs[PERFRING_NREGS];
			uint32_t stack_len;             /* bytes of the copy that hold data */
			const uint8_t *stack;           /* the copy, from regs' SP */
			int cs;                         /* a switch off the CPU's (switch_stacks),
							   not a sample of the event */
		} sample;
		struct {
			uint64_t start, len, pgoff;
			uint32_t prot, flags;
			uint8_t build_id_len;           /* 0: the kernel gave none */
			uint8_t build_id[20];
			const char *path;
		} mmap;
		struct {
			const char *comm;
			int exec;                       /* the name an exec gave */
		} comm;
		struct {
			uint32_t ppid, ptid;            /* FORK and EXIT */
		} task;
		struct {
			uint64_t lost;                  /* LOST: records; THROTTLE: 1 */
		} lost;
		struct {
			int out;                        /* 1: off the CPU; 0: back on */
			int preempt;                    /* off while runnable */
		} sw;
	} u;
};

struct perfring;

/*
 * One event per task x online CPU (tasks[i] a tid, or -1 once: every task);
 * NULL (said) when none could be opened.
 */
struct perfring *perfring_open(const int *tasks, size_t ntasks,
			       const struct perfring_opts *o);
void perfring_close(struct perfring *pr);
/* The rings: fds to poll (POLLIN at the watermark), one per CPU. */
size_t perfring_nrings(const struct perfring *pr);
int perfring_fd(const struct perfring *pr, size_t ring);
/* Start (or stop) every event now (enable_on_exec's task never exec'd). */
void perfring_enable(struct perfring *pr, int on);
/* Every record in ring's buffer, in order: fn's return != 0 stops early. */
typedef int (*perfring_fn)(void *ctx, const struct perfring_rec *r);
size_t perfring_read(struct perfring *pr, size_t ring, perfring_fn fn, void *ctx);
/* Every ring's records up to now, merged in time order (perf's ordered
 * events, within one call); fn's return != 0 stops early. */
size_t perfring_read_all(struct perfring *pr, perfring_fn fn, void *ctx);
/*
 * A sample's user frames in its callchain: the entries after the
 * PERF_CONTEXT_USER mark up to the next mark, IP first (*n of them; NULL
 * and 0 when it has none: a kernel thread, or kernel frames alone).
 */
const uint64_t *perfring_user_chain(const struct perfring_rec *r, uint32_t *n);
/* Records that did not decode, in all rings so far. */
uint64_t perfring_bad(const struct perfring *pr);

#endif
