/*
 * record_outside.c - what probe record samples from outside (sampler.h):
 * -p, -t and -a, a statically linked command, and a static program that a
 * profiled process execs (followed: its sampler is closed once all it
 * reached has ended).  A process that libprobe profiles and that inherited
 * events also sample is counted once (outside_frame).
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

/* ---- sampled from outside (sampler.h) -------------------------------- */

/*
 * A frame made of what a sampler read.  Events inherited by a process
 * that libprobe profiles (a dynamic program a static one started) sample
 * it twice: from libprobe's HELLO on, its image is libprobe's, and what
 * came from outside for it is left out (its EXIT too: libprobe's has the
 * status).  An exec into a static program is said first (UNPROFILED, or
 * found in /proc): from then on its frames come from outside again.
 */
void outside_frame(void *ctx, struct probe_msg *m, const uint8_t *f, size_t len)
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
	p = rec_proc_get(r, pid);
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
void rec_samplers_read(struct recorder *r)
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
void rec_samplers_finish(struct recorder *r)
{
	rec_samplers_read(r);
	for (unsigned i = 0; i < r->nsmps; i++)
		sampler_finish(r->smps[i]);
}

int rec_sampler_add(struct recorder *r, struct sampler *s, int followed)
{
	if (!s)
		return -1;
	if (r->nsmps == SAMPLERS_MAX || sampler_watch(s, r->in.ep, &loop_tag_ring) < 0) {
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
int rec_follow_static(struct recorder *r, uint32_t pid)
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
	if (rec_sampler_add(r, s, 1) < 0)
		return -1;
	/* It exec'd between the open and the look: enable_on_exec came too late. */
	if (!now && elfmap_is_static(exe))
		sampler_enable(s);
	return 0;
}

/* The processes sampled from outside that still run (their EXIT has not come). */
void rec_outside_running(struct recorder *r)
{
	struct proc_ent *p, *t;
	HASH_ITER(hh, r->procs, p, t)
		if (p->outside && !p->exited && !p->reaped)
			p->running = sampler_task_lives((int)p->pid);
}

void rec_outside_summary(const struct recorder *r)
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
		probe_err("%" PRIu64 " sample%s with no user stack or no process (kernel "
			  "threads, in the kernel only, or a process's last moments, after "
			  "its pid was released) left out", t.dropped, t.dropped == 1 ? "" : "s");
	if (t.bad)
		probe_err("%" PRIu64 " perf record%s did not decode", t.bad,
			  t.bad == 1 ? "" : "s");
	if (r->outside_dup)
		probe_err("%" PRIu64 " frame%s sampled from outside left out: libprobe "
			  "profiled those processes", r->outside_dup,
			  r->outside_dup == 1 ? "" : "s");
}

/*
 * -p, -t or -a: events probe opens on those (sampler.h), nothing loaded
 * into them.  A command given with them runs as it is (perf's
 * `-p PID -- sleep 5`), and the recording ends with it.
 */
int record_outside(struct record_opts *o, int argc, char **argv)
{
	struct recorder r = { .o = o, .sfd = -1, .nocmd = !o->argv };
	r.in = (struct ingest){ .ep = -1, .lfd = -1, .uid = geteuid(), .lfd_tag = &loop_tag_listen,
				.what = "recorded", .quiet = 1, .ctx = &r, .frame = on_frame,
				.note = on_note, .opened = on_opened };
	int rc = 1;
	size_t n = 0;
	int *tasks = o->smp.all ? NULL : sampler_tasks("record", o->smp.pids ? o->smp.pids : o->smp.tids,
						   o->smp.tids != NULL, &n);
	if (!o->smp.all && !tasks)
		return 2;
	sigset_t mask, old;
	r.sfd = rec_signals_block(&mask, &old);
	if (r.sfd < 0 || loop_open(&r.in, r.sfd) < 0) {
		probe_err("cannot set up the event loop: %s", strerror(errno));
		goto out;
	}
	if (probe_scratch_init(&r.in.sc) < 0)
		probe_oom();
	ingest_raise_nofile();
	if (rec_sampler_add(&r, sampler_open(tasks, n, o->smp.all, &o->smp, o->stack_bytes, 0,
					 outside_frame, &r), 0) < 0)
		goto out;
	if (recfile_open(&r.out, o->output) < 0)
		goto out;
	recfile_level(&r.out, o->zlevel);
	rec_write_info(&r.out, argc, argv);
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
		rec_run_loop(&r);
		rec_samplers_finish(&r);
	} else {
		rec_nocmd_loop(&r);
	}
	int werr = recfile_close(&r.out) < 0;
	rec_outside_running(&r);
	if (!o->quiet)
		rec_summary(&r, werr);
	if (r.nocmd && r.stop_sig && !o->quiet) {
		char sb[32];
		probe_err("stopped on %s", rec_sig_name(r.stop_sig, sb, sizeof(sb)));
	} else if (r.nocmd && !o->quiet) {
		probe_err("stopped: %s ended", o->smp.tids ? "the threads asked for" :
			  "the processes asked for");
	}
	rc = r.nocmd ? 0 : r.child_done ? r.status : 128 + r.stop_sig;
	if (werr && rc == 0)
		rc = 1;
out:
	sigprocmask(SIG_SETMASK, &old, NULL);
	rec_close(&r);
	free(tasks);
	return rc;
}

