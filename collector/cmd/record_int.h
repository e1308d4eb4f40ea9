/*
 * record_int.h - inside probe record: its options, the recorder (the state
 * of one recording) and what its files (record.c, record_loop.c,
 * record_summary.c, record_outside.c) call in each other.  Not for other
 * commands: record.h is the command's interface.
 */
#ifndef PROBE_RECORD_INT_H
#define PROBE_RECORD_INT_H

#include <signal.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/types.h>

#include "cmdopt.h"
#include "hashtab.h"
#include "ingest/ingest.h"
#include "session/recfile.h"
#include "outside/sampler.h"
#include "session/loop.h"
#include "session/unconnected.h"
#include "data/wire_decode.h"

/* How long to wait for connections to close after the command exited. */
#define DRAIN_NS 2000000000ull
/* How often buffered frames go to the file while the command runs. */
#define FLUSH_NS 1000000000ull
/* After SIGINT, SIGTERM or SIGHUP: we stop by then, whatever the command does. */
#define STOP_NS 1000000000ull

struct record_opts {
	const char *output;
	struct sampling smp;    /* -e, -F, -c */
	int quiet;
	int serve;              /* --serve: libprobe started us (see rec_serve()) */
	const char *callgraph;  /* -g / --call-graph: accepted, said once */
	uint64_t delay_ms;      /* -D: samples of the first MSECS dropped */
	int no_inherit;         /* --no-inherit: the command's process alone */
	unsigned ring_pages;    /* -m: libprobe's perf ring and the arena ring's largest, pages */
	uint32_t stack_bytes;   /* --call-graph dwarf,SIZE: the copy from outside */
	int zlevel;             /* -z: zstd's level, 0: none (recpack.h) */
	char **argv;            /* NULL: none (-p, -t, -a alone) */
};

/* Samplers from outside at once: -p/-t/-a or the command, and static execs. */
#define SAMPLERS_MAX 64

struct id_ent {                 /* a set of pids, or of (pid, tid) */
	uint64_t id;
	UT_hash_handle hh;
};

struct proc_ent {               /* one process, for the summary */
	uint32_t pid, ppid;
	unsigned order;         /* first seen */
	char *ran;              /* "comm: argv" of its last image */
	char *before;           /* comm of the images before (exec), or NULL */
	uint64_t samples, weight, lost;
	unsigned threads;
	int exited;             /* an EXIT frame came */
	int running;            /* still connected when a signal stopped us */
	int reaped;             /* we waited for it (ours, or an orphan) */
	unsigned unprof;        /* it exec'd something not profiled: why */
	uint32_t unprof_parent; /* the process that said so */
	char *unprof_path;
	int32_t status;         /* from EXIT, else from wait when reaped */
	int timer;              /* CPU-time timer fallback */
	int inside;             /* its image is libprobe's (see outside_frame) */
	int outside;            /* sampled from outside */
	int outside_hello;      /* ... and its image said (a sample, an exec) */
	char *outside_path;     /* the static program it exec'd, followed */
	uint64_t asked;         /* Hz asked (freq), 0 for a period */
	uint64_t cpu_samples;   /* of its first event (CPU time): their weights
				   add up in weight, the timers' rate */
	UT_hash_handle hh;
};

struct recorder {
	const struct record_opts *o;
	int sfd;
	struct ingest in;       /* the connections (ingest.h) */
	struct recfile out;
	pid_t child;
	int child_done, status, interrupted;
	int killed_by;          /* the signal that ended the command, or 0 */
	int all_gone;           /* the command and every descendant have ended */
	int said_waiting;
	int stop_sig;           /* the first SIGINT, SIGTERM or SIGHUP we got */
	int stop_now;           /* a second one: stop at once */
	uint64_t stop_by;       /* else stop then (STOP_NS after the first) */
	uint64_t t_start, t_exit, t_gone;
	/* summary */
	uint64_t samples, lost[PROBE_LOST_REASON_MAX];
	struct id_ent *pids, *tids;
	unsigned npids, ntids, nconnected;
	struct proc_ent *procs;
	unsigned nunprof;       /* processes that exec'd something unprofiled */
	struct unconnected unconn;  /* descendants that never connected (root set) */
	int draining;           /* reading old connections before a HELLO */
	/* sampled from outside (sampler.h) */
	struct sampler *smps[SAMPLERS_MAX];
	int smp_followed[SAMPLERS_MAX]; /* a static exec's: closed when done */
	unsigned nsmps, nsmps_ever;
	struct sampler_stats closed;    /* of those closed */
	uint64_t smp_read_at;   /* when they were last read */
	uint64_t outside_dup;   /* frames dropped: libprobe sent that process's */
	uint64_t outside_samples;       /* sample frames kept */
	int follow_refused;     /* the kernel refused once (said): no more tries */
	int tree_outside;       /* the command and all it starts: from outside */
	int nocmd;              /* -p, -t or -a alone: until they end, or a signal */
};

/* record.c */
void rec_write_info(struct recfile *out, int argc, char **argv);
int rec_serve(struct record_opts *o);

/* record_loop.c */
void on_note(void *ctx, enum ingest_note kind, const char *msg);
void on_opened(void *ctx, struct ingest_conn *c);
void on_closed(void *ctx, struct ingest_conn *c);
void on_frame(void *ctx, struct ingest_conn *c, struct probe_msg *m,
	const uint8_t *f, size_t len);
void rec_reaped(struct recorder *r, uint32_t pid, int st);
void rec_child_reap(struct recorder *r);
void rec_read_all(struct recorder *r);
int rec_signals_block(sigset_t *mask, sigset_t *old);
enum unconn_state rec_unconn_state(void *ctx, pid_t pid);
void rec_unconn_found(void *ctx, pid_t pid, pid_t ppid, unsigned reason, const char *path);
int rec_turn(struct recorder *r, int ms);
void rec_run_loop(struct recorder *r);
void rec_nocmd_loop(struct recorder *r);
void rec_close(struct recorder *r);

/* record_summary.c */
int rec_set_add(struct id_ent **set, uint64_t id);
void rec_set_free(struct id_ent **set);
struct proc_ent *rec_proc_get(struct recorder *r, uint32_t pid);
char *rec_image_desc(const struct probe_msg *m);
void rec_procs_free(struct recorder *r);
void rec_ended(const struct proc_ent *p, char *buf, size_t n);
void rec_unprofiled_said(const struct recorder *r);
void rec_summary(struct recorder *r, int write_failed);
unsigned rec_stop_collect(struct recorder *r);
const char *rec_sig_name(int sig, char *buf, size_t n);
void rec_stop_said(const struct recorder *r, unsigned others);

/* record_outside.c */
void outside_frame(void *ctx, struct probe_msg *m, const uint8_t *f, size_t len);
void rec_samplers_read(struct recorder *r);
void rec_samplers_finish(struct recorder *r);
int rec_sampler_add(struct recorder *r, struct sampler *s, int followed);
int rec_follow_static(struct recorder *r, uint32_t pid);
void rec_outside_running(struct recorder *r);
void rec_outside_summary(const struct recorder *r);
int record_outside(struct record_opts *o, int argc, char **argv);

#endif
