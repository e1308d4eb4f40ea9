/*
 * record_summary.c - what probe record says at the end: every process
 * (the busiest few of many), with pid, parent, what it ran (comm and argv
 * of its last image, and the images it exec'd from), its samples and
 * threads and how it ended, from its EXIT frame; the rate the timer
 * fallback really achieved; and, when a signal stopped the recording,
 * the processes still running.  record_int.h has the recorder.
 */
#include "cmd/record_int.h"

#include "cmd/record.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session/child.h"
#include "cmdopt.h"
#include "outside/elfmap.h"
#include "session/events.h"
#include "hashtab.h"
#include "ingest/ingest.h"
#include "data/lost.h"
#include "session/recfile.h"
#include "outside/sampler.h"
#include "session/spawn.h"
#include "session/unconnected.h"
#include "ingest/usock.h"
#include "util.h"
#include "data/wire_decode.h"

/* ---- sets for the summary ------------------------------------------- */

int rec_set_add(struct id_ent **set, uint64_t id)
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

void rec_set_free(struct id_ent **set)
{
	struct id_ent *e, *t;
	HASH_ITER(hh, *set, e, t) {
		HASH_DEL(*set, e);
		free(e);
	}
}

struct proc_ent *rec_proc_get(struct recorder *r, uint32_t pid)
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
char *rec_image_desc(const struct probe_msg *m)
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

void rec_procs_free(struct recorder *r)
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

static int by_pid(struct proc_ent *a, struct proc_ent *b)
{
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

/*
 * How a process ended: from its EXIT frame, else from wait() when it was
 * ours to wait for (the command, or an orphan of it); else unknown.
 */
void rec_ended(const struct proc_ent *p, char *buf, size_t n)
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
	rec_ended(p, end, sizeof(end));
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
void rec_unprofiled_said(const struct recorder *r)
{
	int quiet = r->o->quiet;
	/* One found in /proc (a raw exec before its first sample) says more. */
	if (r->nconnected == 0 && !r->nsmps_ever && !r->nunprof)
		probe_err("no process connected: is %s statically linked or setuid? "
			  "LD_PRELOAD does not reach those", r->o->argv[0]);
	else if (r->nunprof && (!quiet || r->samples == 0))
		probe_err("%u program%s ran without being profiled%s: %s",
			  r->nunprof, r->nunprof == 1 ? "" : "s",
			  quiet ? " (without -q the summary names them)" : " (below)",
			  r->nunprof == 1 ? "it is missing from the recording" :
			  "they are missing from the recording");
}

void rec_summary(struct recorder *r, int write_failed)
{
	double secs = (double)((r->all_gone ? r->t_gone : now_ns()) - r->t_start) / 1e9;
	char size[32];
	human_size(r->out.bytes, size, sizeof(size));
	char lost[512];
	lost_text(r->lost, lost, sizeof(lost));
	/* What the file takes a sample, all in (its names, maps... too). */
	char *per = r->samples
		? xasprintf(", %.1f bytes a sample; names of %zu object%s", (double)r->out.bytes /
			    (double)r->samples, r->out.named, r->out.named == 1 ? "" : "s")
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
	rec_outside_summary(r);
	if (r->o->argv)
		rec_unprofiled_said(r);
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
unsigned rec_stop_collect(struct recorder *r)
{
	unsigned others = 0;
	rec_read_all(r);
	rec_child_reap(r);
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
const char *rec_sig_name(int sig, char *buf, size_t n)
{
	const char *a = sigabbrev_np(sig);
	if (a)
		snprintf(buf, n, "SIG%s", a);
	else
		snprintf(buf, n, "signal %d", sig);
	return buf;
}

void rec_stop_said(const struct recorder *r, unsigned others)
{
	char sb[32], kb[32];
	const char *sig = rec_sig_name(r->stop_sig, sb, sizeof(sb));
	if (!r->child_done)
		probe_err("the command did not end on %s and is still running as pid %d; "
			  "probe stopped recording and leaves it running (kill -KILL %d "
			  "ends it)", sig, (int)r->child, (int)r->child);
	else if (!r->o->quiet && r->killed_by)
		probe_err("stopped on %s: the command was killed by %s", sig,
			  rec_sig_name(r->killed_by, kb, sizeof(kb)));
	else if (!r->o->quiet)
		probe_err("stopped on %s: the command exited with status %d", sig, r->status);
	if (others && (!r->child_done || !r->o->quiet))
		probe_err("%u process%s the command started %s still running, not recorded "
			  "from here", others, others == 1 ? "" : "es", others == 1 ? "is" : "are");
}

