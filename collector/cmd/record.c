/*
 * record.c - `probe record`: options, then one epoll loop over the listening
 * socket, every process's connection (ingest.c) and a signalfd; frames are
 * validated by the one decoder and saved verbatim; a summary at the end.
 *
 * Why this shape: every process of the program (forks, execs) connects on
 * its own, so connections come and go while the command runs; a signalfd
 * keeps signal handling (SIGCHLD, the user's Ctrl-C) inside the same loop
 * with no async handlers.
 *
 * Order across connections: a process that execs (or whose connection the
 * program closed) connects again with a new HELLO for the same pid, which
 * starts a new image for the readers.  Its old connection has been closed
 * by then (exec closes it), but its last frames may still wait in the
 * socket: before the new HELLO is saved, every other connection of that
 * pid is read to its end, so the old image's samples never land after the
 * new image's HELLO.
 *
 * Stopping: SIGINT, SIGTERM and SIGHUP are passed on to the command (not
 * when the terminal sent them to its whole group), and the recording stops
 * when the command has ended, or STOP_NS after the signal, or at a second
 * one, whatever the command does; a command that outlives that is left
 * running and named, and probe exits with 128 + the signal.
 *
 * The summary names every process (the busiest few of many): pid, parent,
 * what it ran (comm and argv of its last image, and the names of the images
 * it exec'd from), its samples and threads, and how it ended, from its EXIT
 * frame.  For the timer fallback it gives the rate really achieved
 * (samples per second of sampled CPU time).
 */
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "cmdopt.h"
#include "elfmap.h"
#include "events.h"
#include "hashtab.h"
#include "ingest.h"
#include "lost.h"
#include "recfile.h"
#include "sampler.h"
#include "spawn.h"
#include "unseen.h"
#include "usock.h"
#include "util.h"
#include "wire_decode.h"

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
	int serve;              /* --serve: libprobe started us (see serve()) */
	const char *callgraph;  /* -g / --call-graph: accepted, said once */
	uint64_t delay_ms;      /* -D: samples of the first MSECS dropped */
	int no_inherit;         /* --no-inherit: the command's process alone */
	unsigned ring_pages;    /* -m: libprobe's perf ring and the arena ring's largest, pages */
	const char *pids, *tids;        /* -p, -t: sampled from outside */
	int all;                /* -a: the whole system, from outside */
	uint32_t stack_bytes;   /* --call-graph dwarf,SIZE: the copy from outside */
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
	uint64_t samples, sample_bytes, lost[PROBE_LOST_REASON_MAX];
	struct id_ent *pids, *tids;
	unsigned npids, ntids, nconnected;
	struct proc_ent *procs;
	unsigned nunprof;       /* processes that exec'd something unprofiled */
	struct unseen unseen;   /* descendants that never connected (root set) */
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

static char tag_listen, tag_signal, tag_ring;

void record_usage(FILE *out)
{
	fprintf(out,
		"usage: probe record [-o FILE] [-e EVENT] [-F HZ | -c PERIOD] [-D MSECS]\n"
		"                    [-m PAGES] [--no-inherit] [--off-cpu] [--alloc[=BYTES]]\n"
		"                    [-g] [-q] [-p PID,... | -t TID,... | -a]\n"
		"                    [--] [CMD [ARG...]]\n"
		"\n"
		"Run CMD with libprobe.so preloaded and save a recording of where its\n"
		"threads spend their time (every process it starts included).  What\n"
		"LD_PRELOAD cannot reach (a statically linked program, Go) is sampled\n"
		"from outside with perf events, as are -p, -t and -a.\n"
		"\n"
		"  -o, --output FILE   the recording (default probe.data; an existing one\n"
		"                      becomes FILE.old)\n"
		"  -e, --event EVENT   what to sample (default cpu-clock): a name 'probe list'\n"
		"                      shows (task-clock, page-faults, cycles...), rNNN or\n"
		"                      PMU/TERM=VALUE,.../; EVENT:u user space only, :k\n"
		"                      kernel only, :uk both; several: -e a,b or -e a\n"
		"                      -e b, each sampled on its own (report: each)\n"
		"  -F, --freq HZ       samples per second per thread (default %d)\n"
		"  -c, --count PERIOD  one sample every PERIOD events instead\n"
		"  -D, --delay MSECS   drop the samples of the first MSECS milliseconds\n"
		"  -m, --mmap-pages N  each thread's rings: its perf ring N data pages, a\n"
		"                      power of two (or a size: 64K, 1M), default 1; its\n"
		"                      sample ring grows to N pages when it fills (32K to\n"
		"                      4M), default 256K\n"
		"      --no-inherit    profile the command's process only, not its children\n"
		"      --off-cpu       where threads wait too: the time in blocking calls\n"
		"                      (sleep, poll, read, locks...) with its stacks, under\n"
		"                      [off-cpu]; report shows shares of wall time (CPU\n"
		"                      time sampled with CPU-time timers unless -e); with\n"
		"                      -p/-t/-a: every switch off the CPU, timed by the\n"
		"                      kernel, with its stack where kernel sampling is\n"
		"                      allowed\n"
		"      --alloc[=BYTES] where memory is allocated: one allocation sampled\n"
		"                      about every BYTES bytes (default 512K; 1: every\n"
		"                      one), with its stack; alone, nothing else is\n"
		"                      sampled; report --event inuse: what was not freed\n"
		"  -g, --call-graph M  accepted for perf's sake (fp, dwarf, lbr): probe always\n"
		"                      records whole stacks with its own DWARF unwinder;\n"
		"                      dwarf,SIZE: the stack copy's bytes when sampling\n"
		"                      from outside (default 8192, at most 65528)\n"
		"  -p, --pid PID,...   sample running processes from outside (perf events;\n"
		"                      their threads, and those they start later) until\n"
		"                      they end or Ctrl-C, or while CMD runs\n"
		"  -t, --tid TID,...   the same for threads\n"
		"  -a, --all-cpus      the whole system (root, CAP_PERFMON, or\n"
		"                      kernel.perf_event_paranoid <= 0)\n"
		"  -q, --quiet         no summary (that nothing was profiled is still said)\n"
		"  -h, --help          this help\n"
		"\n"
		"SIGINT, SIGTERM or SIGHUP is passed on to CMD; the recording stops when CMD\n"
		"ends, or 1 s later whatever it does (a second signal: at once), and a CMD\n"
		"still running is left running and named.\n"
		"\n"
		"probe exits with CMD's exit status (128 + N if signal N stopped probe while\n"
		"CMD ran on).  Show the result with probe report.\n",
		PROBE_DEFAULT_FREQ);
}

#define usage_error(...) cmd_usage_error("record", __VA_ARGS__)

/* ---- sets for the summary ------------------------------------------- */

static int set_add(struct id_ent **set, uint64_t id)
{
	struct id_ent *e;
	HASH_FIND(hh, *set, &id, sizeof(id), e);
	if (e)
		return 0;
	e = xcalloc(1, sizeof(*e));
	e->id = id;
	HASH_ADD(hh, *set, id, sizeof(e->id), e);
	return 1;
}

static void set_free(struct id_ent **set)
{
	struct id_ent *e, *t;
	HASH_ITER(hh, *set, e, t) {
		HASH_DEL(*set, e);
		free(e);
	}
}

static struct proc_ent *proc_get(struct recorder *r, uint32_t pid)
{
	struct proc_ent *p;
	HASH_FIND(hh, r->procs, &pid, sizeof(pid), p);
	if (p)
		return p;
	p = xcalloc(1, sizeof(*p));
	p->pid = pid;
	p->order = HASH_COUNT(r->procs);
	p->status = -1;
	HASH_ADD(hh, r->procs, pid, sizeof(p->pid), p);
	return p;
}

/* "comm: argv..." of a HELLO, at most about 100 printable bytes. */
static char *image_desc(const struct probe_msg *m)
{
	char buf[128];
	size_t n = 0;
	int k = snprintf(buf, sizeof(buf), "%s%s", m->u.hello.comm, m->u.hello.argc ? ":" : "");
	n = k > 0 && (size_t)k < sizeof(buf) ? (size_t)k : sizeof(buf) - 1;
	for (unsigned i = 0; i < m->u.hello.argc && n < sizeof(buf) - 1; i++) {
		k = snprintf(buf + n, sizeof(buf) - n, " %s", m->u.hello.argv[i]);
		if (k < 0 || (size_t)k >= sizeof(buf) - n) {
			n = sizeof(buf) - 1;
			memcpy(buf + sizeof(buf) - 4, "...", 4);
			break;
		}
		n += (size_t)k;
	}
	return printable_dup(buf);
}

static void procs_free(struct recorder *r)
{
	struct proc_ent *p, *t;
	HASH_ITER(hh, r->procs, p, t) {
		HASH_DEL(r->procs, p);
		free(p->ran);
		free(p->before);
		free(p->unprof_path);
		free(p->outside_path);
		free(p);
	}
}

/* ---- connections ---------------------------------------------------- */

static void on_note(void *ctx, enum ingest_note kind, const char *msg)
{
	struct recorder *r = ctx;
	switch (kind) {
	case INGEST_BAD_DATA:
	case INGEST_REFUSED:
		probe_err("%s", msg);
		break;
	case INGEST_PARTIAL:
		if (!r->o->quiet)
			probe_warn("%s", msg);
		break;
	default:
		probe_warn("%s", msg);
		break;
	}
}

static void on_opened(void *ctx, struct ingest_conn *c)
{
	struct recorder *r = ctx;
	(void)c;
	r->nconnected++;
}

/* --serve: a process has ended (maybe killed): its samples are on disk now. */
static void on_closed(void *ctx, struct ingest_conn *c)
{
	struct recorder *r = ctx;
	(void)c;
	if (r->o->serve)
		recfile_flush(&r->out);
}

/*
 * A HELLO for pid arrived on c: read every older connection of that pid to
 * its end first (the image before an exec, a connection the program
 * closed), so that their frames are saved before the new image's.  Only
 * older ones: a newer one is the image after this one.
 */
static void drain_others(struct recorder *r, struct ingest_conn *c)
{
	struct ingest_conn *olds[64];
	unsigned n = 0;

	if (r->draining || !c)
		return;
	r->draining = 1;
	for (struct ingest_conn *o = r->in.conns; o && n < 64; o = o->next)
		if (o != c && o->pid == c->pid && !o->dead && o->seq < c->seq)
			olds[n++] = o;
	/* Closed ones stay allocated until ingest_free_dead, after this batch. */
	for (unsigned i = 0; i < n; i++) {
		struct ingest_conn *o = olds[i];
		for (int k = 0; k < 4096 && !o->dead; k++) {
			int avail = 0;
			ingest_read(&r->in, o);
			if (o->dead || ioctl(o->fd, FIONREAD, &avail) < 0 || avail == 0)
				break;
		}
	}
	r->draining = 0;
}

static int follow_static(struct recorder *r, uint32_t pid);

/* Save one valid frame and count it (ingest.h checked it). */
static void on_frame(void *ctx, struct ingest_conn *c, struct probe_msg *m,
		     const uint8_t *f, size_t len)
{
	struct recorder *r = ctx;
	struct proc_ent *p = proc_get(r, m->pid);
	if (m->type == PROBE_F_HELLO) {
		/* The decoded message lives in r->in.sc: take what we need first. */
		char *desc = image_desc(m);
		uint32_t ppid = m->u.hello.ppid;
		int timer = m->u.hello.event_type == PROBE_EVENT_TIMER;
		uint64_t asked = m->u.hello.freq ? m->u.hello.value : 0;
		drain_others(r, c);
		p = proc_get(r, m->pid);
		if (!p->ran) {
			p->ran = desc;
		} else if (strcmp(desc, p->ran) != 0) {
			/* A new image (exec): remember what ran before, by name. */
			const char *colon = strchr(p->ran, ':');
			int clen = colon ? (int)(colon - p->ran) : (int)strlen(p->ran);
			char *b = p->before ? xasprintf("%s, %.*s", p->before, clen, p->ran)
					    : xasprintf("%.*s", clen, p->ran);
			free(p->before);
			p->before = b;
			free(p->ran);
			p->ran = desc;
		} else {
			free(desc);
		}
		p->ppid = ppid;
		p->timer |= timer;
		p->asked = asked;
		p->inside |= c != NULL;
	}
	recfile_frame(&r->out, f, len);
	switch (m->type) {
	case PROBE_F_HELLO:
		r->npids += set_add(&r->pids, m->pid);
		if (set_add(&r->tids, (uint64_t)m->pid << 32 | m->pid)) {
			r->ntids++;
			p->threads++;
		}
		break;
	case PROBE_F_THREAD:
		if (set_add(&r->tids, (uint64_t)m->pid << 32 | m->u.thread.tid)) {
			r->ntids++;
			p->threads++;
		}
		break;
	case PROBE_F_SAMPLES: {
		struct probe_sample_raw s;
		r->sample_bytes += len;
		while (probe_samples_next_raw(m, &s)) {
			/* A free (--alloc) is no sample: counted by the aggregator. */
			if (probe_sample_is_free(&s))
				continue;
			r->samples++;
			p->samples++;
			/* The timers' rate is of CPU samples alone (not --off-cpu's). */
			if (s.event == 0) {
				p->cpu_samples++;
				p->weight = sat_add(p->weight, s.weight);
			}
			if (set_add(&r->tids, (uint64_t)m->pid << 32 | s.tid)) {
				r->ntids++;
				p->threads++;
			}
		}
		break;
	}
	case PROBE_F_LOST: {
		unsigned why = m->u.lost.reason < PROBE_LOST_REASON_MAX ? m->u.lost.reason : 0;
		r->lost[why] = sat_add(r->lost[why], m->u.lost.count);
		if (why != PROBE_LOST_UNWIND)
			p->lost = sat_add(p->lost, m->u.lost.count);
		break;
	}
	case PROBE_F_UNPROFILED: {
		/* The process that runs it: the sender, or a child it spawned. */
		uint32_t who = m->u.unprof.pid && m->u.unprof.pid != c->wire_pid ?
			       m->u.unprof.pid : m->pid;
		struct proc_ent *q = who == m->pid ? p : proc_get(r, who);
		if (m->u.unprof.reason == PROBE_UNPROF_STATIC &&
		    (r->tree_outside || follow_static(r, who) == 0)) {
			/* Its events start at the exec (inherited ones sample it already). */
			q->outside = 1;
			q->inside = 0;
			free(q->outside_path);
			q->outside_path = printable_dup(m->u.unprof.path);
			if (!q->ppid && who != m->pid)
				q->ppid = m->pid;
			break;
		}
		r->nunprof += !q->unprof;
		q->unprof = m->u.unprof.reason;
		q->unprof_parent = m->pid;
		free(q->unprof_path);
		q->unprof_path = printable_dup(m->u.unprof.path);
		break;
	}
	case PROBE_F_EXIT:
		p->exited = 1;
		p->status = m->u.exit.status;
		/* The process waits for our word that its samples are saved. */
		if (r->o->serve)
			recfile_flush(&r->out);
		break;
	default:
		break;
	}
}

/* ---- sampled from outside (sampler.h) -------------------------------- */

/*
 * A frame made of what a sampler read.  Events inherited by a process
 * that libprobe profiles (a dynamic program a static one started) sample
 * it twice: from libprobe's HELLO on, its image is libprobe's, and what
 * came from outside for it is left out (its EXIT too: libprobe's has the
 * status).  An exec into a static program is said first (UNPROFILED, or
 * found in /proc): from then on its frames come from outside again.
 */
static void outside_frame(void *ctx, struct probe_msg *m, const uint8_t *f, size_t len)
{
	struct recorder *r = ctx;
	struct proc_ent *p;
	uint32_t pid = m->pid, type = m->type;
	HASH_FIND(hh, r->procs, &pid, sizeof(pid), p);
	if (p && p->inside) {
		r->outside_dup++;
		return;
	}
	r->outside_samples += type == PROBE_F_SAMPLES;
	on_frame(r, NULL, m, f, len);
	p = proc_get(r, pid);
	p->outside = 1;
	p->outside_hello |= type == PROBE_F_HELLO;
}

static void stats_add(struct sampler_stats *t, const struct sampler_stats *st)
{
	t->samples += st->samples;
	t->dropped += st->dropped;
	t->bad += st->bad;
	t->truncated += st->truncated;
	t->dwarf += st->dwarf;
	t->fp += st->fp;
	t->waits += st->waits;
	t->waits_unseen += st->waits_unseen;
}

/*
 * Read every sampler; one that followed a static exec is closed once all
 * its events reached has ended (its rings are locked memory, its events
 * descriptors: a script running static programs in a loop must not pile
 * them up).  Its stats stay in the summary's totals.
 */
static void samplers_read(struct recorder *r)
{
	for (unsigned i = 0; i < r->nsmps; i++) {
		sampler_read(r->smps[i]);
		if (!r->smp_followed[i] || !sampler_done(r->smps[i]))
			continue;
		struct sampler_stats st;
		sampler_stats(r->smps[i], &st);
		stats_add(&r->closed, &st);
		sampler_close(r->smps[i]);
		r->nsmps--;
		r->smps[i] = r->smps[r->nsmps];
		r->smp_followed[i--] = r->smp_followed[r->nsmps];
	}
	r->smp_read_at = now_ns();
}

/* The recording's end: every sampler's last records, and waits still going. */
static void samplers_finish(struct recorder *r)
{
	samplers_read(r);
	for (unsigned i = 0; i < r->nsmps; i++)
		sampler_finish(r->smps[i]);
}

static int sampler_add(struct recorder *r, struct sampler *s, int followed)
{
	if (!s)
		return -1;
	if (r->nsmps == SAMPLERS_MAX || sampler_watch(s, r->in.ep, &tag_ring) < 0) {
		sampler_close(s);
		return -1;
	}
	r->smp_followed[r->nsmps] = followed;
	r->smps[r->nsmps++] = s;
	r->nsmps_ever++;
	return 0;
}

/*
 * pid exec'd (or is about to exec) a static program, where libprobe
 * cannot go: sample it from outside.  Before its exec (libprobe said so
 * from the process itself), its events start at the exec; after, at once.
 */
static int follow_static(struct recorder *r, uint32_t pid)
{
	char exe[64];
	size_t n;
	if (r->o->no_inherit || r->tree_outside || r->follow_refused)
		return -1;
	snprintf(exe, sizeof exe, "/proc/%u/exe", pid);
	int *tasks = sampler_threads((int)pid, &n);
	if (!tasks)
		return -1;      /* it ended already */
	int now = elfmap_is_static(exe);
	struct sampler *s = sampler_open(tasks, n, 0, &r->o->smp, r->o->stack_bytes, !now,
					 outside_frame, r);
	free(tasks);
	/* The kernel's refusal is said once (perfring.c): the next ones are like it. */
	r->follow_refused |= !s;
	if (sampler_add(r, s, 1) < 0)
		return -1;
	/* It exec'd between the open and the look: enable_on_exec came too late. */
	if (!now && elfmap_is_static(exe))
		sampler_enable(s);
	return 0;
}

/* The processes sampled from outside that still run (their EXIT has not come). */
static void outside_running(struct recorder *r)
{
	struct proc_ent *p, *t;
	HASH_ITER(hh, r->procs, p, t)
		if (p->outside && !p->exited && !p->reaped)
			p->running = sampler_task_lives((int)p->pid);
}

static void outside_summary(const struct recorder *r)
{
	struct sampler_stats t = r->closed, st;
	if (!r->nsmps_ever)
		return;
	for (unsigned i = 0; i < r->nsmps; i++) {
		sampler_stats(r->smps[i], &st);
		stats_add(&t, &st);
	}
	if (!r->outside_samples) {
		probe_err("sampled from outside (perf events): 0 samples");
		return;
	}
	double all = (double)(t.dwarf + t.fp ? t.dwarf + t.fp : 1);
	probe_err("sampled from outside (perf events): %" PRIu64 " samples; stacks: "
		  "%.1f%% by the stack copy's CFI, %.1f%% by frame pointers, %.1f%% cut "
		  "at the copy's %u bytes ([truncated])", r->outside_samples,
		  100.0 * (double)t.dwarf / all, 100.0 * (double)t.fp / all,
		  100.0 * (double)t.truncated / all, r->o->stack_bytes);
	if (t.waits)
		probe_err("off-cpu from outside: %" PRIu64 " of those are waits (timed by the "
			  "kernel's switch records), %.1f%% of them under the stack where the "
			  "thread left the CPU", t.waits,
			  100.0 * (double)(t.waits - t.waits_unseen) / (double)t.waits);
	if (t.dropped)
		probe_err("%" PRIu64 " sample%s with no user stack (kernel threads, or "
			  "in the kernel only) left out", t.dropped, t.dropped == 1 ? "" : "s");
	if (t.bad)
		probe_err("%" PRIu64 " perf record%s did not decode", t.bad,
			  t.bad == 1 ? "" : "s");
	if (r->outside_dup)
		probe_err("%" PRIu64 " frame%s sampled from outside left out: libprobe "
			  "profiled those processes", r->outside_dup,
			  r->outside_dup == 1 ? "" : "s");
}

/* ---- signals -------------------------------------------------------- */

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

/* How a process we waited for ended, for one whose EXIT never came. */
static void reaped(struct recorder *r, uint32_t pid, int st)
{
	struct proc_ent *p;
	HASH_FIND(hh, r->procs, &pid, sizeof(pid), p);
	if (!p || p->exited)
		return;
	p->reaped = 1;
	p->status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
	/*
	 * It sent no EXIT (SIGKILL, or it died before libprobe could say):
	 * the recording gets one from the wait status, so that the report's
	 * header can say how it ended (flag PROBE_EXIT_WAITED).
	 */
	uint8_t buf[64];
	struct probe_wbuf w;
	probe_wbuf_init(&w, buf, sizeof(buf));
	size_t at = probe_frame_begin(&w, PROBE_F_EXIT, pid);
	probe_put_u32(&w, (uint32_t)p->status);
	probe_put_u64(&w, p->samples);
	probe_put_u32(&w, p->threads);
	probe_frame_end(&w, at);
	if (w.ok) {
		buf[at + 6] = PROBE_EXIT_WAITED;
		recfile_frame(&r->out, buf, w.len);
	}
}

/*
 * We are the subreaper of everything the command starts: its orphans (a
 * background `./app &` of a shell that exits) become our children, and
 * the recording stays open until the last of them has ended, as perf
 * follows inherited children.  Reap them all; the command's own status is
 * the one we exit with.
 */
static void child_reap(struct recorder *r)
{
	int st;
	pid_t p;
	while ((p = waitpid(-1, &st, WNOHANG)) != 0) {
		if (p < 0) {
			if (errno == EINTR)
				continue;
			if (r->child_done && !r->all_gone) {
				r->all_gone = 1;
				r->t_gone = now_ns();
			}
			return;         /* ECHILD: nobody left */
		}
		if (!(WIFEXITED(st) || WIFSIGNALED(st)))
			continue;
		reaped(r, (uint32_t)p, st);
		if (p != r->child || r->child_done)
			continue;
		r->status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
		r->killed_by = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
		r->child_done = 1;
		r->t_exit = now_ns();
	}
	if (r->child_done && !r->said_waiting && !r->o->quiet && !r->stop_sig) {
		r->said_waiting = 1;
		probe_err("the command exited; still recording the processes it left "
			  "running (Ctrl-C stops)");
	}
}

/*
 * Before reaping: every connection waiting to be accepted, and what every
 * connection holds.  A process that ended at once (a raw exit_group) sent
 * its HELLO first, but it may still sit in the backlog: reaped() needs its
 * entry to keep the status wait() gives.
 */
static void read_all(struct recorder *r)
{
	ingest_accept_all(&r->in);
	for (struct ingest_conn *c = r->in.conns; c; c = c->next)
		if (!c->dead && !c->orphan)
			ingest_read(&r->in, c);
	ingest_free_dead(&r->in);
}

static int is_stop_signal(int sig)
{
	return sig == SIGINT || sig == SIGTERM || sig == SIGHUP;
}

/*
 * The user wants the recording now, as perf record gives it: the command
 * has STOP_NS to end on the signal passed on to it (its last samples are
 * then saved too), a second signal cuts that short.  A command that
 * ignores the signal must not keep probe (and the recording) hostage.
 */
static void stop_asked(struct recorder *r, int sig)
{
	if (r->stop_sig) {
		r->stop_now = 1;
		return;
	}
	r->stop_sig = sig;
	r->stop_by = now_ns() + STOP_NS;
}

/* Asked to stop, and the command had its time to end. */
static int stop_due(const struct recorder *r, uint64_t now)
{
	return r->stop_sig && (r->stop_now || now >= r->stop_by);
}

static void on_signal(struct recorder *r)
{
	struct signalfd_siginfo si;
	while (read(r->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			read_all(r);
			child_reap(r);
			continue;
		}
		if (r->child_done) {
			r->interrupted = 1;     /* stop waiting for stragglers */
			if (is_stop_signal((int)si.ssi_signo) && !r->stop_sig)
				r->stop_sig = (int)si.ssi_signo;        /* to say so */
			continue;
		}
		/*
		 * A signal from the terminal (Ctrl-C: SI_KERNEL) reached the
		 * command too, being in our process group: forwarding it would
		 * deliver it twice.  Only a signal sent to probe alone is passed on.
		 */
		if (si.ssi_code != SI_KERNEL)
			kill(r->child, (int)si.ssi_signo);
		if (is_stop_signal((int)si.ssi_signo))
			stop_asked(r, (int)si.ssi_signo);
	}
}

/*
 * SIGCHLD and the signals passed on to the command, blocked (before a
 * fork, so none is lost: the child unblocks) and read from a signalfd,
 * returned (-1 when it could not be made).
 */
static int signals_block(sigset_t *mask, sigset_t *old)
{
	sigemptyset(mask);
	sigaddset(mask, SIGCHLD);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(mask, forwarded[i]);
	sigprocmask(SIG_BLOCK, mask, old);
	return signalfd(-1, mask, SFD_NONBLOCK | SFD_CLOEXEC);
}

/* ---- descendants that never connected (unseen.h) -------------------- */

static enum unseen_state unseen_state(void *ctx, pid_t pid)
{
	struct recorder *r = ctx;
	uint32_t id = (uint32_t)pid;
	struct proc_ent *p;
	HASH_FIND(hh, r->procs, &id, sizeof(id), p);
	if (!p || (!p->ran && !p->unprof))
		return UNSEEN_NEW;
	if (p->unprof || p->exited || p->outside)
		return UNSEEN_KNOWN;
	for (struct ingest_conn *c = r->in.conns; c; c = c->next)
		if (c->pid == pid && !c->dead && !c->orphan)
			return UNSEEN_KNOWN;
	return UNSEEN_GONE;     /* its connection ended, and it lives on */
}

static void unseen_found(void *ctx, pid_t pid, pid_t ppid, unsigned reason,
			 const char *path)
{
	struct recorder *r = ctx;
	struct proc_ent *p = proc_get(r, (uint32_t)pid), *pp;
	uint32_t parent = (uint32_t)ppid;
	HASH_FIND(hh, r->procs, &parent, sizeof(parent), pp);
	/*
	 * Its parent sampled from outside: inherited events sample it already
	 * (a setuid program excepted); or a static program: followed now.
	 */
	if ((pp && pp->outside && reason != PROBE_UNPROF_SECURE) ||
	    (reason == PROBE_UNPROF_STATIC && follow_static(r, (uint32_t)pid) == 0)) {
		p->outside = 1;
		p->inside = 0;
		free(p->outside_path);
		p->outside_path = printable_dup(path);
		if (!p->ppid)
			p->ppid = parent;
		return;
	}
	r->nunprof += !p->unprof;
	p->unprof = reason;
	p->unprof_parent = (uint32_t)ppid;
	free(p->unprof_path);
	p->unprof_path = printable_dup(path);
}

/* ---- the loop ------------------------------------------------------- */

/*
 * One epoll batch: the connections that are ready are read (one closed on
 * the way is marked dead, not touched again, freed after the batch), new
 * ones accepted, and the arenas read when due.  1 if the signalfd is ready.
 */
static int dispatch(struct recorder *r, const struct epoll_event *evs, int n)
{
	int sig = 0, lis = 0, ring = 0;
	for (int i = 0; i < n; i++) {
		void *p = evs[i].data.ptr;
		if (p == &tag_listen)
			lis = 1;
		else if (p == &tag_signal)
			sig = 1;
		else if (p == &tag_ring)
			ring = 1;
		else if (!((struct ingest_conn *)p)->dead)
			ingest_read(&r->in, p);
	}
	ingest_free_dead(&r->in);
	if (lis)
		ingest_accept_all(&r->in);
	if (ingest_timeout(&r->in) == 0)
		ingest_poll(&r->in);
	/* After the connections: see outside_frame. */
	if (ring || (r->nsmps && now_ns() - r->smp_read_at >= SAMPLER_READ_MS * 1000000ull))
		samplers_read(r);
	return sig;
}

static void run_loop(struct recorder *r)
{
	struct epoll_event evs[64];
	uint64_t last_flush = now_ns();
	for (;;) {
		uint64_t now = now_ns();
		if (now - last_flush >= FLUSH_NS) {
			recfile_flush(&r->out);
			last_flush = now;
		}
		if ((r->child_done && r->interrupted) || stop_due(r, now))
			break;
		if (r->all_gone) {
			/* Connections still queued in the backlog count too. */
			ingest_accept_all(&r->in);
			/* Out of fds a moment ago: the queue is taken when the pause ends. */
			if (r->in.nconns == 0 && !r->in.paused_until)
				break;
			/* (A pause ends within INGEST_PAUSE_MAX_MS: its queue first.) */
			if (now_ns() >= r->t_gone + DRAIN_NS + (r->in.paused_until ?
				INGEST_PAUSE_MAX_MS * 1000000ull : 0)) {
				if (!r->o->quiet)
					probe_warn("stopped waiting for %u process%s 2 s after the "
						   "last one exited; their last samples may be missing",
						   r->in.nconns, r->in.nconns == 1 ? "" : "es");
				break;
			}
		}
		if (r->unseen.root && !r->all_gone && unseen_due(&r->unseen, now))
			unseen_scan(&r->unseen, now);
		int timeout = ingest_timeout(&r->in);
		if (r->unseen.root && !r->all_gone) {
			uint64_t t = now_ns(), due = r->unseen.next_ns;
			int left = due <= t ? 0 : (int)((due - t) / 1000000 + 1);
			if (timeout < 0 || left < timeout)
				timeout = left;
		}
		if (r->all_gone || r->stop_sig) {
			uint64_t t = now_ns(), end = r->t_gone + DRAIN_NS;
			if (r->stop_sig && (!r->all_gone || r->stop_by < end))
				end = r->stop_by;
			int left = t >= end ? 0 : (int)((end - t) / 1000000 + 1);
			if (timeout < 0 || left < timeout)
				timeout = left;
		}
		if (r->nsmps && (timeout < 0 || timeout > SAMPLER_READ_MS))
			timeout = SAMPLER_READ_MS;
		int n = epoll_wait(r->in.ep, evs, (int)(sizeof(evs) / sizeof(evs[0])), timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			probe_err("epoll_wait: %s", strerror(errno));
			break;
		}
		if (dispatch(r, evs, n))
			on_signal(r);
	}
}

/*
 * -p, -t or -a with no command: read the rings until a stop signal (one
 * is enough: there is no command to wait for), or until every process
 * asked for has ended.
 */
static void nocmd_loop(struct recorder *r)
{
	struct epoll_event evs[64];
	uint64_t last_flush = now_ns();
	while (!r->stop_sig) {
		uint64_t now = now_ns();
		if (now - last_flush >= FLUSH_NS) {
			recfile_flush(&r->out);
			last_flush = now;
		}
		int alive = 0;
		for (unsigned i = 0; i < r->nsmps; i++)
			alive |= sampler_alive(r->smps[i]);
		if (!alive) {
			r->all_gone = 1;
			r->t_gone = now;
			break;
		}
		int n = epoll_wait(r->in.ep, evs, (int)(sizeof(evs) / sizeof(evs[0])),
				   SAMPLER_READ_MS);
		if (n < 0 && errno != EINTR) {
			probe_err("epoll_wait: %s", strerror(errno));
			break;
		}
		if (!dispatch(r, evs, n > 0 ? n : 0))
			continue;
		struct signalfd_siginfo si;
		while (read(r->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			if (is_stop_signal((int)si.ssi_signo))
				r->stop_sig = (int)si.ssi_signo;
	}
	samplers_finish(r);
}

static int by_pid(struct proc_ent *a, struct proc_ent *b)
{
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

/*
 * How a process ended: from its EXIT frame, else from wait() when it was
 * ours to wait for (the command, or an orphan of it); else unknown.
 */
static void ended(const struct proc_ent *p, char *buf, size_t n)
{
	const char *how = p->reaped ? " (it sent no exit record: that status is "
				      "from wait)" : "";
	if (!p->exited && !p->reaped && p->running)
		snprintf(buf, n, "still running when probe stopped");
	else if (!p->exited && !p->reaped && p->outside)
		snprintf(buf, n, "ended (sampled from outside: its exit status is not seen)");
	else if (!p->exited && !p->reaped && p->unprof)
		snprintf(buf, n, "then exec'd what is below, whose exit probe does "
			 "not see");
	else if (!p->exited && !p->reaped)
		snprintf(buf, n, "ended with no exit record (killed by SIGKILL, or it "
			 "exec'd something probe cannot follow, or its record was lost)");
	else if (p->status < 0)
		snprintf(buf, n, "exited");
	else if (p->status > 128 && p->status < 128 + 65) {
		const char *abbrev = sigabbrev_np(p->status - 128);
		snprintf(buf, n, "killed by SIG%s%s", abbrev ? abbrev : "?", how);
	} else
		snprintf(buf, n, "exit %d%s", (int)p->status, how);
}

/*
 * The summary keeps to a screen: every process when there are few, else
 * the busiest few (most samples first), a few never profiled (the report
 * cannot name those), and a count of the rest; `probe report
 * --header-only` lists every profiled one.
 */
#define PROC_ALL_MAX 10
#define PROC_BUSIEST 6
#define PROC_UNPROF_MAX 3

static int by_samples(const void *a, const void *b)
{
	const struct proc_ent *p = *(struct proc_ent *const *)a;
	const struct proc_ent *q = *(struct proc_ent *const *)b;
	if (p->samples != q->samples)
		return p->samples > q->samples ? -1 : 1;
	return p->pid < q->pid ? -1 : p->pid > q->pid;
}

/*
 * The processes the summary names, in its order, into list (room for all
 * of them); returns how many.  r->procs is left in pid order.
 */
static unsigned procs_pick(struct recorder *r, struct proc_ent **list)
{
	struct proc_ent *procs = r->procs, *p;
	unsigned n = 0, k, unprof = 0;

	HASH_SORT(procs, by_pid);
	r->procs = procs;
	for (p = procs; p; p = p->hh.next)
		list[n++] = p;
	if (n <= PROC_ALL_MAX)
		return n;
	qsort(list, n, sizeof(*list), by_samples);
	k = PROC_BUSIEST;
	for (unsigned i = 0; i < k; i++)
		unprof += list[i]->unprof != 0;
	for (p = procs; p && unprof < PROC_UNPROF_MAX; p = p->hh.next) {
		int have = 0;
		for (unsigned i = 0; i < k && !have; i++)
			have = list[i] == p;
		if (!p->unprof || have)
			continue;
		list[k++] = p;
		unprof++;
	}
	return k;
}

static void proc_line(const struct proc_ent *p)
{
	char end[128];
	if (!p->ran && p->unprof) {
		/* Never profiled at all: a child spawned straight into it. */
		probe_err("  pid %" PRIu32 " (parent %" PRIu32 ") ran %s, not profiled: %s",
			  p->pid, p->unprof_parent, p->unprof_path,
			  probe_unprof_reason_name(p->unprof));
		return;
	}
	ended(p, end, sizeof(end));
	if (!p->ran && p->outside_path) {
		/* Followed from outside, and never sampled: no CPU time. */
		probe_err("  pid %" PRIu32 " (parent %" PRIu32 ") ran %s, statically linked: "
			  "sampled from outside, 0 samples, %s", p->pid, p->ppid,
			  p->outside_path, end);
		return;
	}
	probe_err("  pid %" PRIu32 " (parent %" PRIu32 ") %s%s%s%s: %" PRIu64
		  " samples, %u thread%s, %s", p->pid, p->ppid,
		  p->ran ? p->ran : "?", p->before ? " [exec'd from " : "",
		  p->before ? p->before : "", p->before ? "]" : "", p->samples, p->threads,
		  p->threads == 1 ? "" : "s", end);
	if (p->unprof)
		probe_err("  pid %" PRIu32 " then ran %s, not profiled: %s", p->pid,
			  p->unprof_path, probe_unprof_reason_name(p->unprof));
	else if (p->outside_path && !p->outside_hello)
		probe_err("  pid %" PRIu32 " then ran %s, statically linked: sampled from "
			  "outside, 0 samples", p->pid, p->outside_path);
}

/* "... and N more": their samples, the unprofiled among them, where to look. */
static void procs_rest(const struct recorder *r, struct proc_ent **list, unsigned shown)
{
	unsigned n = HASH_COUNT(r->procs), unprof = r->nunprof;
	uint64_t samples = r->samples;
	for (unsigned i = 0; i < shown; i++) {
		samples -= list[i]->samples;
		unprof -= list[i]->unprof != 0;
	}
	char more[64] = "";
	if (unprof)
		snprintf(more, sizeof(more), ", %u of them not profiled", unprof);
	if (r->out.regular)
		probe_err("  ... and %u more processes (%" PRIu64 " samples%s): probe report "
			  "--header-only %s lists every profiled one", n - shown, samples,
			  more, r->o->output);
	else
		probe_err("  ... and %u more processes (%" PRIu64 " samples%s)", n - shown,
			  samples, more);
}

/* One line per process (or the busiest few), and the timer rate. */
static void proc_summary(struct recorder *r)
{
	struct proc_ent *p;
	uint64_t tsamples = 0, tweight = 0, asked = 0;
	unsigned n = HASH_COUNT(r->procs);
	struct proc_ent **list = xcalloc(n ? n : 1, sizeof(*list));
	unsigned shown = procs_pick(r, list);

	for (unsigned i = 0; i < shown; i++)
		proc_line(list[i]);
	if (shown < n)
		procs_rest(r, list, shown);
	free(list);
	for (p = r->procs; p; p = p->hh.next) {
		if (p->timer) {
			tsamples += p->cpu_samples;
			tweight = sat_add(tweight, p->weight);
			asked = p->asked;
		}
	}
	if (tsamples && tweight) {
		double hz = (double)tsamples / ((double)tweight / 1e9);
		char want[64] = "";
		if (asked)
			snprintf(want, sizeof(want), " (%" PRIu64 " Hz asked)", asked);
		probe_err("CPU-time timers, not perf events, sampled at %.0f Hz of "
			  "CPU time%s: they fire on the kernel's scheduler tick",
			  hz, want);
	}
}

/*
 * What was not profiled.  Also under -q when nothing was: an empty
 * recording must never pass for a profile without a word.
 */
static void unprofiled_said(const struct recorder *r)
{
	int quiet = r->o->quiet;
	if (r->nconnected == 0 && !r->nsmps_ever)
		probe_err("no process connected: is %s statically linked or setuid? "
			  "LD_PRELOAD does not reach those", r->o->argv[0]);
	else if (r->nunprof && (!quiet || r->samples == 0))
		probe_err("%u program%s ran without being profiled%s: %s",
			  r->nunprof, r->nunprof == 1 ? "" : "s",
			  quiet ? " (without -q the summary names them)" : " (below)",
			  r->nunprof == 1 ? "it is missing from the recording" :
			  "they are missing from the recording");
}

static void summary(struct recorder *r, int write_failed)
{
	double secs = (double)((r->all_gone ? r->t_gone : now_ns()) - r->t_start) / 1e9;
	char size[32];
	human_size(r->out.bytes, size, sizeof(size));
	char lost[512];
	lost_text(r->lost, lost, sizeof(lost));
	char *per = r->samples
		? xasprintf(", %.1f bytes/sample", (double)r->sample_bytes / (double)r->samples)
		: xstrdup("");
	char evs[64] = "";
	if (r->o->smp.nmore)
		snprintf(evs, sizeof(evs), " of %u events", r->o->smp.nmore + 1);
	probe_err("%" PRIu64 " samples%s (%s) from %u process%s, %u thread%s, %.2f s; "
		  "%s %s (%s%s)", r->samples, evs, lost, r->npids, r->npids == 1 ? "" : "es",
		  r->ntids, r->ntids == 1 ? "" : "s", secs,
		  write_failed ? "FAILED to write" : "wrote", r->o->output, size, per);
	free(per);
	if (r->o->delay_ms)
		probe_err("-D %" PRIu64 ": dropped the %" PRIu64 " sample%s taken in the first "
			  "%" PRIu64 " ms", r->o->delay_ms, r->in.dropped,
			  r->in.dropped == 1 ? "" : "s", r->o->delay_ms);
	if (r->o->no_inherit)
		probe_err("--no-inherit: only the command's own process was profiled (and "
			  "what it exec'd), not the processes it started");
	outside_summary(r);
	if (r->o->argv)
		unprofiled_said(r);
	proc_summary(r);
	if (!write_failed && r->samples && r->out.regular)
		recfile_hint(r->o->output);
}

/* ---- stopped by a signal -------------------------------------------- */

/*
 * Asked to stop: read what the connections hold, reap what has ended, and
 * mark the processes still connected as running.  How many of them are
 * not the command itself.
 */
static unsigned stop_collect(struct recorder *r)
{
	unsigned others = 0;
	read_all(r);
	child_reap(r);
	for (struct ingest_conn *c = r->in.conns; c; c = c->next) {
		struct proc_ent *p;
		uint32_t pid = (uint32_t)c->pid;
		if (c->dead)
			continue;
		HASH_FIND(hh, r->procs, &pid, sizeof(pid), p);
		if (!p || p->exited || p->reaped || p->running)
			continue;
		p->running = 1;
		others += c->pid != r->child;
	}
	return others;
}

/*
 * What became of the command (and of what it started), last, so that it
 * is seen: a command that outlived the signal is said even under -q, since
 * it runs on unrecorded.  probe leaves it running: it was asked to stop
 * recording, and a program that ignores SIGINT may mean to outlive it.
 */
/* "SIGINT", or "signal 40" where the signal has no name (realtime ones). */
static const char *sig_name(int sig, char *buf, size_t n)
{
	const char *a = sigabbrev_np(sig);
	if (a)
		snprintf(buf, n, "SIG%s", a);
	else
		snprintf(buf, n, "signal %d", sig);
	return buf;
}

static void stop_said(const struct recorder *r, unsigned others)
{
	char sb[32], kb[32];
	const char *sig = sig_name(r->stop_sig, sb, sizeof(sb));
	if (!r->child_done)
		probe_err("the command did not end on %s and is still running as pid %d; "
			  "probe stopped recording and leaves it running (kill -KILL %d "
			  "ends it)", sig, (int)r->child, (int)r->child);
	else if (!r->o->quiet && r->killed_by)
		probe_err("stopped on %s: the command was killed by %s", sig,
			  sig_name(r->killed_by, kb, sizeof(kb)));
	else if (!r->o->quiet)
		probe_err("stopped on %s: the command exited with status %d", sig, r->status);
	if (others && (!r->child_done || !r->o->quiet))
		probe_err("%u process%s the command started %s still running, not recorded "
			  "from here", others, others == 1 ? "" : "es", others == 1 ? "is" : "are");
}

/* ---- the recording's header ----------------------------------------- */

/*
 * The INFO frame (wire.h), first in the file: what `probe report --header`
 * shows besides the processes (their HELLO and EXIT frames).  argv is
 * probe's own, from "record" on; as many arguments as fit in a frame.
 */
static void write_info(struct recfile *out, int argc, char **argv)
{
	struct utsname u;
	if (uname(&u) < 0)
		memset(&u, 0, sizeof(u));
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	size_t cap = PROBE_FRAME_MAX, room = cap - 5 * (2 + sizeof(u.nodename)) - 64;
	unsigned n = 0;
	for (size_t used = 2 + 5; n + 1 < PROBE_MAX_ARGS && (int)n < argc; n++) {
		size_t l = strnlen(argv[n], PROBE_STR_MAX);
		if (used + 2 + l > room)
			break;
		used += 2 + l;
	}
	uint8_t *buf = xmalloc(cap);
	struct probe_wbuf w;
	probe_wbuf_init(&w, buf, cap);
	size_t at = probe_frame_begin(&w, PROBE_F_INFO, (uint32_t)getpid());
	probe_put_u64(&w, now_ns());
	probe_put_u64(&w, (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec);
	probe_put_str(&w, u.nodename);
	probe_put_str(&w, u.sysname);
	probe_put_str(&w, u.release);
	probe_put_str(&w, u.version);
	probe_put_str(&w, u.machine);
	probe_put_u16(&w, n + 1);
	probe_put_str(&w, "probe");
	for (unsigned i = 0; i < n; i++)
		probe_put_str(&w, argv[i]);
	probe_frame_end(&w, at);
	if (w.ok)
		recfile_frame(out, buf, w.len);
	free(buf);
}

/* ---- the command ---------------------------------------------------- */

/* -m N or -m SIZE (64K, 1M...), as perf takes them: a power of two of pages. */
static int ring_size(const char *arg, unsigned *pages)
{
	long page = sysconf(_SC_PAGESIZE);
	char *end;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 10);
	int bad = errno || end == arg || *arg == '-' || *arg == '+';
	if (!bad && *end) {
		unsigned long long mul = 0;
		switch (*end) {
		case 'B': case 'b': mul = 1; break;
		case 'K': case 'k': mul = 1ull << 10; break;
		case 'M': case 'm': mul = 1ull << 20; break;
		case 'G': case 'g': mul = 1ull << 30; break;
		}
		if (!mul || end[1] || v > (1ull << 40) / mul)
			bad = 1;
		else if ((v * mul) % (unsigned long long)page) {
			usage_error("-m %s: %llu bytes is not a whole number of %ld-byte pages",
				    arg, v * mul, page);
			return -1;
		} else
			v = v * mul / (unsigned long long)page;
	}
	if (bad || v == 0) {
		usage_error("-m %s: give the ring size in pages (a power of two) or in "
			    "bytes with a unit (64K, 1M)", arg);
		return -1;
	}
	if (v & (v - 1) || v > (1u << 20)) {
		usage_error("-m %s: the ring size must be a power of two of pages, from 1 "
			    "to 1048576, as perf takes it (%llu pages is not)", arg, v);
		return -1;
	}
	*pages = (unsigned)v;
	return 0;
}

/* --call-graph dwarf,SIZE: the stack copy's bytes, as perf takes them. */
static int stack_size(const char *arg, uint32_t *bytes)
{
	uint64_t v;
	if (parse_u64(arg, &v) < 0 || v < 8 || v > 65528 || v % 8)
		return usage_error("--call-graph dwarf,%s: the stack copy is a multiple of 8 "
				   "bytes from 8 to 65528 (the kernel's limit), as perf takes "
				   "it", arg);
	*bytes = (uint32_t)v;
	return 0;
}

/* -p, -t, -a: one of them, and none of what needs libprobe in the process. */
static int outside_check(const struct record_opts *o)
{
	const char *what = o->pids ? "-p" : o->tids ? "-t" : o->all ? "-a" : NULL;
	if (!what)
		return 0;
	if (sampler_target_check("record", o->pids, o->tids, o->all))
		return 2;
	const char *lib = o->smp.alloc ? "--alloc" :
			  o->delay_ms ? "-D" : o->no_inherit ? "--no-inherit" :
			  o->serve ? "--serve" : o->smp.nmore ? "several events" : NULL;
	if (lib)
		return usage_error("%s samples from outside (perf events) and %s is not "
				   "supported there; run the program under probe record "
				   "without %s for it", what, lib, what);
	return 0;
}

static int parse_args(int argc, char **argv, struct record_opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "event", required_argument, NULL, 'e' },
		{ "freq", required_argument, NULL, 'F' },
		{ "count", required_argument, NULL, 'c' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "serve", no_argument, NULL, 'S' },
		{ "call-graph", required_argument, NULL, 'G' },
		{ "delay", required_argument, NULL, 'D' },
		{ "no-inherit", no_argument, NULL, 'I' },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "off-cpu", no_argument, NULL, SAMPLING_OFFCPU },
		{ "alloc", optional_argument, NULL, SAMPLING_ALLOC },
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	o->output = "probe.data";
	o->stack_bytes = SAMPLER_STACK_DEFAULT;
	sampling_init(&o->smp);
	opterr = 0;
	optind = 1;
	/* "+": the command's own options are not ours, even without "--". */
	while ((c = getopt_long(argc, argv, "+:o:e:F:c:qhgD:m:p:t:a", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg)
				return usage_error("-o needs a file name");
			o->output = optarg;
			break;
		case 'e':
		case 'F':
		case 'c':
		case SAMPLING_OFFCPU:
		case SAMPLING_ALLOC:
			if (sampling_option("record", c, optarg, &o->smp) == 2)
				return 2;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'S':
			o->serve = 1;
			break;
		case 'g':
			o->callgraph = "-g";
			break;
		case 'G':
			if (strcmp(optarg, "fp") != 0 && strcmp(optarg, "lbr") != 0 &&
			    strcmp(optarg, "dwarf") != 0 && strncmp(optarg, "dwarf,", 6) != 0)
				return usage_error("--call-graph %s: perf's modes are fp, dwarf[,SIZE] "
						   "and lbr (probe takes any: it always unwinds with "
						   "DWARF)", optarg);
			o->callgraph = "--call-graph";
			if (!strncmp(optarg, "dwarf,", 6)) {
				if (stack_size(optarg + 6, &o->stack_bytes))
					return 2;
				o->callgraph = NULL;    /* used: see record_usage */
			}
			break;
		case 'p':
			o->pids = optarg;
			break;
		case 't':
			o->tids = optarg;
			break;
		case 'a':
			o->all = 1;
			break;
		case 'D':
			if (parse_u64(optarg, &o->delay_ms) < 0 || o->delay_ms > 86400000)
				return usage_error("-D %s: the delay must be a whole number of "
						   "milliseconds from 0 to 86400000 (perf's -1, start "
						   "disabled, is not supported)", optarg);
			break;
		case 'I':
			o->no_inherit = 1;
			break;
		case 'm':
			if (ring_size(optarg, &o->ring_pages) < 0)
				return 2;
			break;
		case 'h':
			record_usage(stdout);
			return 0;
		default:
			return cmd_bad_option("record", c, argv);
		}
	}
	if (sampling_check("record", &o->smp) >= 0)
		return 2;
	if (outside_check(o))
		return 2;
	if (o->serve) {
		if (optind < argc)
			return usage_error("--serve takes no command");
		return -1;
	}
	if (optind < argc)
		o->argv = argv + optind;
	else if (!o->pids && !o->tids && !o->all)
		return usage_error("no command to run (probe record [OPTIONS] -- CMD [ARG...]), "
				   "and no -p PID, -t TID or -a to sample");
	return -1;      /* go on */
}

/*
 * probe record --serve -o FILE: the collector libprobe starts for itself
 * when a program runs with LD_PRELOAD alone (preload/conn.c).  Its
 * listening socket is fd 3; stdin, stdout and stderr are /dev/null, and it
 * is its own session.  The recording is opened first: our exit status
 * tells libprobe whether we serve.  Then we fork, the first process exits
 * (so that we are not the program's child), and the second records until
 * no process has been connected for IDLE_NS (a descendant between exec
 * and connect has that long), or none came at all within FIRST_NS.
 */
#define SERVE_FD 3
#define IDLE_NS 2000000000ull
#define FIRST_NS 10000000000ull

static void serve_loop(struct recorder *r)
{
	struct epoll_event evs[64];
	uint64_t idle_since = now_ns(), limit = FIRST_NS;
	for (;;) {
		if (r->in.nconns == 0 && now_ns() - idle_since >= limit)
			break;
		int timeout = ingest_timeout(&r->in);
		if (timeout < 0 || timeout > 100)
			timeout = 100;
		int n = epoll_wait(r->in.ep, evs, (int)(sizeof(evs) / sizeof(evs[0])), timeout);
		if (n < 0 && errno != EINTR)
			break;
		dispatch(r, evs, n > 0 ? n : 0);
		/* A static program followed from outside has no connection: it counts. */
		if (r->in.nconns || r->nsmps) {
			idle_since = now_ns();
			limit = IDLE_NS;
		}
	}
	samplers_finish(r);
}

static int serve(struct record_opts *o)
{
	struct recorder r = { .o = o, .sfd = -1 };
	r.in = (struct ingest){ .ep = -1, .lfd = SERVE_FD, .uid = geteuid(),
				.lfd_tag = &tag_listen,
				.what = "recorded", .ctx = &r, .frame = on_frame,
				.note = on_note, .opened = on_opened, .closed = on_closed };
	int listening = 0;
	socklen_t len = sizeof(listening);
	if (getsockopt(SERVE_FD, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) < 0 ||
	    !listening) {
		probe_err("--serve is for libprobe.so, which starts it with a "
			  "listening socket as descriptor 3");
		return 2;
	}
	if (recfile_open(&r.out, o->output) < 0)
		return 1;
	char *serve_argv[] = { "record", "--serve", "-o", (char *)o->output };
	write_info(&r.out, 4, serve_argv);
	pid_t pid = fork();
	if (pid < 0) {
		recfile_discard(&r.out);
		return 1;
	}
	if (pid > 0)
		_exit(0);
	fcntl(SERVE_FD, F_SETFL, O_NONBLOCK);
	fcntl(SERVE_FD, F_SETFD, FD_CLOEXEC);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	if (probe_scratch_init(&r.in.sc) < 0)
		probe_oom();
	r.in.ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &tag_listen };
	if (r.in.ep < 0 || epoll_ctl(r.in.ep, EPOLL_CTL_ADD, SERVE_FD, &ev) < 0)
		_exit(1);
	ingest_raise_nofile();
	serve_loop(&r);
	ingest_close_all(&r.in);
	recfile_close(&r.out);
	_exit(0);
}

/*
 * The command, started: a statically linked one (no loader: LD_PRELOAD
 * reaches nothing) held before its exec while events are opened on it,
 * with inherit and enable_on_exec, so that it and all it starts are
 * sampled from outside from its first instruction; any other at once.
 */
static pid_t start_command(struct recorder *r, char **env, const sigset_t *mask, int *rc)
{
	char *path = spawn_which(r->o->argv[0]);
	int is_static = path && elfmap_is_static(path);
	free(path);
	if (!is_static || r->o->no_inherit)
		return spawn(r->o->argv, env, mask, rc);
	struct spawn_hold h;
	if (spawn_held(r->o->argv, env, mask, &h, 1) < 0) {
		*rc = 1;
		return -1;
	}
	int one = (int)h.pid;
	struct sampler *s = sampler_open(&one, 1, 0, &r->o->smp, r->o->stack_bytes, 1,
					 outside_frame, r);
	if (sampler_add(r, s, 0) == 0) {
		r->tree_outside = 1;
		if (!r->o->quiet) {
			char *name = printable_dup(r->o->argv[0]);
			probe_err("%s is statically linked: libprobe cannot load into it, so "
				  "it is sampled from outside (perf events, as probe record -p)",
				  name);
			free(name);
		}
	}
	return spawn_release(&h, r->o->argv, rc);
}

/*
 * -p, -t or -a: events probe opens on those (sampler.h), nothing loaded
 * into them.  A command given with them runs as it is (perf's
 * `-p PID -- sleep 5`), and the recording ends with it.
 */
static int record_outside(struct record_opts *o, int argc, char **argv)
{
	struct recorder r = { .o = o, .sfd = -1, .nocmd = !o->argv };
	r.in = (struct ingest){ .ep = -1, .lfd = -1, .uid = geteuid(), .lfd_tag = &tag_listen,
				.what = "recorded", .quiet = 1, .ctx = &r, .frame = on_frame,
				.note = on_note, .opened = on_opened };
	int rc = 1;
	size_t n = 0;
	int *tasks = o->all ? NULL : sampler_tasks("record", o->pids ? o->pids : o->tids,
						   o->tids != NULL, &n);
	if (!o->all && !tasks)
		return 2;
	sigset_t mask, old;
	r.sfd = signals_block(&mask, &old);
	r.in.ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event sev = { .events = EPOLLIN, .data.ptr = &tag_signal };
	if (r.sfd < 0 || r.in.ep < 0 || epoll_ctl(r.in.ep, EPOLL_CTL_ADD, r.sfd, &sev) < 0) {
		probe_err("cannot set up the event loop: %s", strerror(errno));
		goto out;
	}
	if (probe_scratch_init(&r.in.sc) < 0)
		probe_oom();
	ingest_raise_nofile();
	if (sampler_add(&r, sampler_open(tasks, n, o->all, &o->smp, o->stack_bytes, 0,
					 outside_frame, &r), 0) < 0)
		goto out;
	if (recfile_open(&r.out, o->output) < 0)
		goto out;
	write_info(&r.out, argc, argv);
	r.t_start = now_ns();
	if (o->callgraph && !o->quiet)
		probe_warn("%s: stacks come from the kernel's copy of each sample's user "
			   "stack, walked with DWARF CFI, or from frame pointers", o->callgraph);
	if (o->argv) {
		r.child = spawn(o->argv, environ, &old, &rc);
		if (r.child < 0) {
			recfile_discard(&r.out);
			goto out;
		}
		run_loop(&r);
		samplers_finish(&r);
	} else {
		nocmd_loop(&r);
	}
	int werr = recfile_close(&r.out) < 0;
	outside_running(&r);
	if (!o->quiet)
		summary(&r, werr);
	if (r.nocmd && r.stop_sig && !o->quiet) {
		char sb[32];
		probe_err("stopped on %s", sig_name(r.stop_sig, sb, sizeof(sb)));
	} else if (r.nocmd && !o->quiet) {
		probe_err("stopped: %s ended", o->tids ? "the threads asked for" :
			  "the processes asked for");
	}
	rc = r.nocmd ? 0 : r.child_done ? r.status : 128 + r.stop_sig;
	if (werr && rc == 0)
		rc = 1;
out:
	sigprocmask(SIG_SETMASK, &old, NULL);
	for (unsigned i = 0; i < r.nsmps; i++)
		sampler_close(r.smps[i]);
	if (r.out.fd >= 0 && r.out.path)
		recfile_close(&r.out);
	if (r.in.ep >= 0)
		close(r.in.ep);
	if (r.sfd >= 0)
		close(r.sfd);
	if (r.in.sc.mem)
		probe_scratch_free(&r.in.sc);
	set_free(&r.pids);
	set_free(&r.tids);
	procs_free(&r);
	free(tasks);
	return rc;
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = { 0 };
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (o.serve)
		return serve(&o);
	if (o.pids || o.tids || o.all)
		return record_outside(&o, argc, argv);

	struct recorder r = { .o = &o, .sfd = -1 };
	r.in = (struct ingest){ .ep = -1, .lfd = -1, .uid = geteuid(),
				.lfd_tag = &tag_listen,
				.what = "recorded", .quiet = 1, .ctx = &r, .frame = on_frame,
				.note = on_note, .opened = on_opened };
	char *lib = NULL, *dir = NULL, *sock = NULL;
	char **env = NULL;
	rc = 1;

	lib = find_libprobe_for(o.smp.offcpu, o.smp.alloc != 0);
	if (!lib) {
		rc = 2;
		goto out;
	}
	dir = usock_dir();
	if (!dir)
		goto out;
	sock = usock_path(dir, getpid());
	r.in.lfd = usock_listen(sock);
	if (r.in.lfd < 0) {
		free(sock);
		sock = NULL;    /* not ours to remove */
		goto out;
	}
	if (recfile_open(&r.out, o.output) < 0)
		goto out;
	write_info(&r.out, argc, argv);
	if (probe_scratch_init(&r.in.sc) < 0)
		probe_oom();

	/* Block the signals before fork so none is lost; the child unblocks. */
	sigset_t mask, old;
	r.sfd = signals_block(&mask, &old);
	r.in.ep = epoll_create1(EPOLL_CLOEXEC);
	if (r.sfd < 0 || r.in.ep < 0) {
		probe_err("cannot set up the event loop: %s", strerror(errno));
		goto out_mask;
	}
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &tag_listen };
	struct epoll_event sev = { .events = EPOLLIN, .data.ptr = &tag_signal };
	if (epoll_ctl(r.in.ep, EPOLL_CTL_ADD, r.in.lfd, &ev) < 0 ||
	    epoll_ctl(r.in.ep, EPOLL_CTL_ADD, r.sfd, &sev) < 0) {
		probe_err("cannot set up the event loop: %s", strerror(errno));
		goto out_mask;
	}

	struct child_settings cs = { lib, sock, o.smp.event, o.smp.use_period, o.smp.value,
				     &o.smp.ev, o.smp.more, o.smp.nmore, o.ring_pages,
				     o.no_inherit, o.smp.offcpu, o.smp.timer,
				     o.smp.alloc, o.smp.alloc_only };
	env = child_environ(&cs);
	if (o.callgraph && !o.quiet)
		probe_warn("%s: call stacks are always recorded, by probe's own DWARF "
			   "unwinder (no frame pointers needed); nothing to change", o.callgraph);
	r.t_start = now_ns();
	if (o.delay_ms)
		r.in.drop_before_ns = r.t_start + o.delay_ms * 1000000ull;
	/* The command's orphans become ours: see child_reap(). */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	r.child = start_command(&r, env, &old, &rc);
	if (r.child < 0) {
		/* rc is 127 or 126; leave no empty recording behind. */
		recfile_discard(&r.out);
		goto out_mask;
	}
	ingest_raise_nofile();  /* after the fork: the command keeps its own limit */
	/* --no-inherit: descendants that never connect are meant not to. */
	r.unseen = (struct unseen){ .root = o.no_inherit ? 0 : getpid(), .ctx = &r,
				    .state = unseen_state, .found = unseen_found,
				    .next_ns = now_ns() + UNSEEN_SCAN_MS * 1000000ull };
	run_loop(&r);
	samplers_finish(&r);
	unseen_free(&r.unseen);
	unsigned others = r.stop_sig ? stop_collect(&r) : 0;
	if (!r.child_done && !r.stop_sig) {
		/* epoll failed: still wait for the command, as a shell would. */
		int st;
		while (waitpid(r.child, &st, 0) < 0 && errno == EINTR)
			;
		r.status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
		r.child_done = 1;
		r.t_exit = now_ns();
	}
	ingest_close_all(&r.in);
	int werr = recfile_close(&r.out) < 0;
	outside_running(&r);
	if (!o.quiet)
		summary(&r, werr);
	else
		unprofiled_said(&r);
	if (r.stop_sig)
		stop_said(&r, others);
	/* Still running: the status a shell gives a command that signal ended. */
	rc = r.child_done ? r.status : 128 + r.stop_sig;
	if (werr && rc == 0)
		rc = 1;

out_mask:
	sigprocmask(SIG_SETMASK, &old, NULL);
out:
	if (r.out.fd >= 0 && r.out.path)
		recfile_close(&r.out);
	if (r.in.ep >= 0)
		close(r.in.ep);
	if (r.sfd >= 0)
		close(r.sfd);
	if (r.in.lfd >= 0)
		close(r.in.lfd);
	if (sock)
		unlink(sock);
	for (unsigned i = 0; i < r.nsmps; i++)
		sampler_close(r.smps[i]);
	if (r.in.sc.mem)
		probe_scratch_free(&r.in.sc);
	set_free(&r.pids);
	set_free(&r.tids);
	procs_free(&r);
	free_environ(env);
	free(sock);
	free(dir);
	free(lib);
	return rc;
}
