/*
 * header.c - a report's header (report_header: the event and its rate,
 * kernel time, off-CPU and allocation lines, lost and cut stacks) and
 * --header-only's account of the recording (report_info): format.h.
 */
#include "format/format.h"
#include "data/inuse.h"
#include "flame/flame.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "data/lost.h"
#include "util.h"
#include "data/wire_decode.h"

/*
 * Is the weight of im's event shown nanoseconds of CPU time?  The timers'
 * is (the CPU time used since the previous sample), and so is perf's
 * cpu-clock and task-clock period.
 */
static int cpu_time_event(const struct agg_image *im)
{
	return im->event_type == PROBE_EVENT_TIMER ||
	       (im->event_type == 1 /* PERF_TYPE_SOFTWARE */ &&
		(strcmp(im->event_name, "cpu-clock") == 0 ||
		 strcmp(im->event_name, "task-clock") == 0));
}

/*
 * The mean weight of a sample of im's event over the whole recording
 * (every image of that event): for a clock, the period achieved in ns;
 * 0 when not known (no samples, or weights that overflowed).
 */
static double mean_weight(const struct agg *a, const struct agg_image *im)
{
	int i = im->shown >= 0 ? im->shown : 0;
	uint8_t id = i < im->nev ? im->ev[i] : AGG_EVENTS_MAX;

	if (id >= agg_nevents(a))
		return 0;
	const struct agg_event *ev = &agg_events(a)[id];
	if (!ev->samples || !ev->weight || ev->weight == UINT64_MAX)
		return 0;
	return (double)ev->weight / (double)ev->samples;
}

/*
 * The rate im's event achieved: its samples per second of the CPU time
 * they weigh; 0 when that is not known (weights that are not time).
 */
double report_achieved_hz(const struct agg *a, const struct agg_image *im)
{
	double w = cpu_time_event(im) ? mean_weight(a, im) : 0;
	return w > 0 ? 1e9 / w : 0;
}

/*
 * "cpu-clock, 999 Hz" for the event an image shows; for a clock, the rate
 * achieved first ("cpu-clock (CPU-time timer), 212 Hz of CPU time (999 Hz
 * asked)"): the CPU-time timers fire on the scheduler's tick, far below
 * the rate asked, and a header that repeated the request overstated it.
 */
char *report_event_text(const struct agg *a, const struct agg_image *im)
{
	if (im->alloc >= 0 && im->shown == im->alloc) {
		char every[32];
		const char *what = agg_inuse_shown(a) ? "inuse (bytes still in use at the end"
						      : "alloc (bytes allocated";

		human_size(im->alloc_every, every, sizeof every);
		return im->alloc_every <= 1 ? xasprintf("%s: every allocation)", what) :
			xasprintf("%s: one sample about every %s allocated, unbiased)",
				  what, every);
	}
	const char *name = im->event_name[0] ? im->event_name : "unknown event";
	const char *timer = im->event_type == PROBE_EVENT_TIMER ? " (CPU-time timer)" : "";
	/* perf's modifiers, when they were asked for (HELLO's flags) */
	unsigned why = (im->hello_flags & PROBE_HELLO_KWHY_MASK) >> PROBE_HELLO_KWHY_SHIFT;
	const char *mod = im->hello_flags & PROBE_HELLO_NOUSER ? ":k" :
			  (im->hello_flags & PROBE_HELLO_KSTATE) &&
			  why == PROBE_HELLO_KWHY_USER ? ":u" : "";
	double hz = report_achieved_hz(a, im);
	if (im->freq && hz > 0)
		return xasprintf("%s%s%s, %.0f Hz of CPU time (%" PRIu64 " Hz asked)",
				 name, mod, timer, hz, im->value);
	if (im->freq)
		return xasprintf("%s%s%s, %" PRIu64 " Hz", name, mod, timer, im->value);
	return xasprintf("%s%s%s, period %" PRIu64, name, mod, timer, im->value);
}

/* The same, or with --off-cpu what the counts hold. */
static char *event_text(const struct agg *a, const struct agg_image *im)
{
	if (im->offcpu >= 0 && im->shown == im->offcpu)
		return xstrdup("off-cpu (ns waited; a sample about every period of "
			       "waiting)");
	char *e = report_event_text(a, im);
	if (im->offcpu < 0 || !agg_wall(a))
		return e;
	char *s = xasprintf("%s + off-cpu: shares of wall time", e);
	free(e);
	return s;
}

/* Why kernel time was not sampled, as HELLO's flags say. */
static const char *kernel_why(unsigned flags)
{
	switch ((flags & PROBE_HELLO_KWHY_MASK) >> PROBE_HELLO_KWHY_SHIFT) {
	case PROBE_HELLO_KWHY_OFF:
		return "turned off (PROBE_KERNEL=0)";
	case PROBE_HELLO_KWHY_DENIED:
		return "not allowed for this user (needs root, CAP_PERFMON or "
		       "kernel.perf_event_paranoid <= 1)";
	case PROBE_HELLO_KWHY_TIMER:
		return "CPU-time timers see user space only";
	case PROBE_HELLO_KWHY_USER:
		return "user space only was asked for (-e EVENT:u)";
	case PROBE_HELLO_KWHY_SETSIG:
		/* F_SETSIG: PROBE_SIGNAL, a debugger (event.c), or no sigtrap. */
		return "the F_SETSIG signal (PROBE_SIGNAL, SIGPROF under a "
		       "debugger, or no perf sigtrap in the kernel) would "
		       "interrupt system calls; PROBE_KERNEL=1 samples it anyway";
	default:
		return "for a reason this probe does not know";
	}
}

/*
 * "# kernel: ..." - whether the processes' samples include kernel time
 * (HELLO's flags); nothing for recordings that do not say (older ones).
 */
static void kernel_line(const struct report_ctx *c, FILE *out)
{
	unsigned yes = 0, no = 0, first_no = 0, first_flags = 0;

	if (agg_bytes(c->agg))
		return;         /* allocations: no kernel frames to speak of */
	for (size_t i = 0; i < agg_nimages(c->agg); i++) {
		const struct agg_image *im = agg_image(c->agg, (uint32_t)i);

		if (!im->have_hello || !(im->hello_flags & PROBE_HELLO_KSTATE))
			continue;
		if (im->hello_flags & PROBE_HELLO_KERNEL) {
			if (yes++ == 0)
				first_flags = im->hello_flags;
		}
		else if (no++ == 0)
			first_no = im->hello_flags;
	}
	if (yes && !no && (first_flags & PROBE_HELLO_NOUSER))
		fprintf(out, "# kernel: kernel only, no user space (-e EVENT:k)\n");
	else if (yes && !no)
		fprintf(out, "# kernel: included\n");
	else if (no && !yes)
		fprintf(out, "# kernel: not sampled: %s\n", kernel_why(first_no));
	else if (yes && no)
		fprintf(out, "# kernel: included in %u process%s, not in %u: %s\n",
			yes, yes == 1 ? "" : "es", no, kernel_why(first_no));
}

/* The event of the first image with a HELLO, and how many others differ. */
static char *event_summary(const struct agg *a, const char *none)
{
	char *ev = NULL;
	unsigned others = 0;
	for (size_t i = 0; i < agg_nimages(a); i++) {
		const struct agg_image *im = agg_image(a, (uint32_t)i);
		if (!im->have_hello)
			continue;
		char *e = event_text(a, im);
		if (!ev)
			ev = e;
		else {
			others += strcmp(ev, e) != 0;
			free(e);
		}
	}
	if (!ev)
		return xstrdup(none);
	if (!others)
		return ev;
	char *s = xasprintf("%s (and %u other setting%s)", ev, others, others > 1 ? "s" : "");
	free(ev);
	return s;
}

/* The weight of the off-CPU time no wrapper saw ("[stack unknown]"). */
static uint64_t unseen_weight(const struct report_ctx *c)
{
	uint64_t w = 0;

	for (size_t i = 0; i < agg_ncounts(c->agg); i++) {
		const struct agg_count *k = &agg_counts(c->agg)[i];
		uint32_t n = 0;
		const uint64_t *f = agg_stack(c->agg, k->stack, &n);

		if (n == 2 && f[0] == AGG_FRAME_OFFCPU && f[1] == PROBE_FRAME_UNSEEN)
			w += report_amount(c, k);
	}
	return w;
}

/*
 * --off-cpu: how waits were seen, and what could not be: how much of the
 * wall time has no stack, and what that time can be.
 */
static void offcpu_line(const struct report_ctx *c, FILE *out)
{
	const struct agg *a = c->agg;
	uint64_t how = 0;
	if (!agg_wall(a))
		return;
	for (size_t i = 0; i < agg_nimages(a); i++)
		if (agg_image(a, (uint32_t)i)->offcpu >= 0)
			how |= agg_image(a, (uint32_t)i)->offcpu_how;
	/* A line for each way waits were seen, each short enough to read. */
	if (how & PROBE_OFFCPU_WRAPPERS)
		fprintf(out, "# off-cpu: the waits in libc's blocking calls (sleep, poll, "
			"read, write, locks...: interposed), each under its stack and "
			"\"[off-cpu]\"\n");
	if ((how & PROBE_OFFCPU_WRAPPERS) && (how & PROBE_OFFCPU_WAKES))
		fprintf(out, "# off-cpu: and the calls that wake a waiter (a mutex unlock, a "
			"condition signal: the waker is often preempted there)\n");
	if (how & PROBE_OFFCPU_CLOCKS)
		fprintf(out, "# off-cpu: the rest of each thread's wall time off the CPU "
			"(preempted, blocked inside libc, a raw system call, a page fault) is "
			"\"[stack unknown]\"\n");
	if (how & PROBE_OFFCPU_SWITCHES)
		fprintf(out, "# off-cpu: every switch of a thread sampled from outside off the "
			"CPU and back on, timed by the kernel's switch records, %s\n",
			how & PROBE_OFFCPU_SWITCH_STACKS ?
			"each under the stack where it left the CPU (a context-switches "
			"event)" : "with no stack (\"[stack unknown]\": the kernel refused "
			"kernel sampling, which that stack needs)");
	if (how & PROBE_OFFCPU_CLOCKS)
		fprintf(out, "# stack unknown: %.2f%% of wall time: the thread was off "
			"the CPU outside every interposed call, so no stack was "
			"there to read (its clocks tell how long, not where)\n",
			report_pct(c, unseen_weight(c)));
	else if (how & PROBE_OFFCPU_SWITCHES)
		fprintf(out, "# stack unknown: %.2f%% of wall time: waits whose stack the "
			"kernel did not give (its switch off came before the recording, or "
			"kernel sampling is refused)\n", report_pct(c, unseen_weight(c)));
}

/* --alloc shown: what the samples stand for, in all. */
static void alloc_line(const struct report_ctx *c, FILE *out)
{
	const struct agg_image *im = NULL;
	const struct agg_totals *t = agg_totals(c->agg);
	char total[32];

	for (size_t i = 0; i < agg_nimages(c->agg) && !im; i++) {
		const struct agg_image *m = agg_image(c->agg, (uint32_t)i);
		if (m->have_hello && m->alloc >= 0 && m->shown == m->alloc)
			im = m;
	}
	if (!im)
		return;
	const char *est = im->alloc_every <= 1 ? "" : ", estimated";
	const struct inuse_totals *u = agg_inuse(c->agg);
	char live[32], peak[32];

	human_size(t->weight, total, sizeof total);
	fprintf(out, "# %s: %s (%" PRIu64 " bytes%s) in %" PRIu64 " samples\n",
		agg_inuse_shown(c->agg) ? "in use at the end" : "allocated", total,
		t->weight, est, t->samples);
	if (!u)
		return;
	human_size(u->bytes, live, sizeof live);
	human_size(u->peak, peak, sizeof peak);
	if (!agg_inuse_shown(c->agg))
		fprintf(out, "# in use at the end: %s in %" PRIu64 " samples (--event inuse: "
			"where they were allocated)\n", live, u->objects);
	const struct agg_info *in = agg_info(c->agg);
	uint64_t t0 = in->have && in->start_ns ? in->start_ns : t->t_min;
	fprintf(out, "# the most in use: %s, %.3f s after the recording began", peak,
		u->peak_ns > t0 ? (double)(u->peak_ns - t0) / 1e9 : 0.0);
	if (u->untracked || u->freed_first)
		fprintf(out, "; not followed to their free: %" PRIu64 " allocations%s",
			u->untracked, u->freed_first ? " (and frees of allocations not "
			"sampled here)" : "");
	fprintf(out, "\n");
}

/* A recording of several events (-e a,b): each, with its samples. */
static void events_line(const struct agg *a, FILE *out)
{
	size_t n = agg_nevents(a);
	if (n < 2)
		return;
	fprintf(out, "# events recorded:");
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s %s (%" PRIu64 " samples)", i ? "," : "",
			agg_events(a)[i].name, agg_events(a)[i].samples);
	if (agg_wall(a))
		fprintf(out, "; --sort event: each on its own, --event NAME: one\n");
	else
		fprintf(out, "; each is reported on its own (--event NAME: one)\n");
}

/*
 * "# stacks cut short: ..." - the share of samples whose stack ends in
 * [truncated] (wire.h: deeper than the wire carries, or, sampled from
 * outside, than the kernel's copy of the stack held); nothing when none.
 */
static void truncated_line(const struct report_ctx *c, FILE *out)
{
	const struct agg_count *v = agg_counts(c->agg);
	uint64_t cut = 0, all = 0;
	for (size_t i = 0; i < agg_ncounts(c->agg); i++) {
		uint32_t n;
		const uint64_t *f = agg_stack(c->agg, v[i].stack, &n);
		all += v[i].samples;
		if (n && f[n - 1] == PROBE_FRAME_TRUNCATED)
			cut += v[i].samples;
	}
	if (cut)
		fprintf(out, "# stacks cut short ([truncated]): %" PRIu64 " samples, %.2f%%\n",
			cut, 100.0 * (double)cut / (double)(all ? all : 1));
}

void report_header(const struct report_ctx *c, FILE *out)
{
	const struct agg_totals *t = agg_totals(c->agg);
	if (c->opts->quiet)
		return;
	char *file = printable_dup(c->opts->file);
	fprintf(out, "# probe %s: %s\n", c->opts->command ? c->opts->command : "report", file);
	free(file);

	char *ev = event_summary(c->agg, "unknown");
	fprintf(out, "# event: %s", ev);
	free(ev);
	char lost[512];
	lost_text(t->lost, lost, sizeof(lost));
	fprintf(out, "; %" PRIu64 " samples, %u process%s, %u thread%s; %s\n",
		t->samples, t->processes, t->processes == 1 ? "" : "es",
		t->threads, t->threads == 1 ? "" : "s", lost);
	events_line(c->agg, out);
	char dropped[256];
	if (agg_dropped_text(c->agg, dropped, sizeof(dropped)))
		fprintf(out, "# %s (--max-memory): shares are of all samples\n", dropped);
	if (t->samples && t->t_max > t->t_min)
		fprintf(out, "# duration: %.2f s of samples%s\n",
			(double)(t->t_max - t->t_min) / 1e9,
			c->by_samples && !c->weight_saturated ?
			"; samples carry no weight, so shares are of samples" : "");
	if (c->weight_saturated)
		fprintf(out, "# the samples' weights add up past 2^64 (a damaged or forged "
			"recording?), so shares are of samples\n");
	if (c->opts->time_line)
		fprintf(out, "%s\n", c->opts->time_line);
	if (c->opts->filter_line)
		fprintf(out, "%s\n", c->opts->filter_line);
	kernel_line(c, out);
	truncated_line(c, out);
	offcpu_line(c, out);
	alloc_line(c, out);
	fprintf(out, "#\n");
}


/* How image i ended: its EXIT frame, or a later image of its pid (exec). */
static void image_end(const struct agg *a, uint32_t i, char *buf, size_t n)
{
	const struct agg_image *im = agg_image(a, i);
	for (size_t j = i + 1; j < agg_nimages(a); j++)
		if (agg_image(a, (uint32_t)j)->pid == im->pid &&
		    agg_image(a, (uint32_t)j)->have_hello) {
			snprintf(buf, n, "exec'd");
			return;
		}
	if (!im->have_exit)
		snprintf(buf, n, "unknown");
	else if (im->exit_status < 0)
		snprintf(buf, n, "exited");
	else if (im->exit_status > 128 && im->exit_status < 128 + 65) {
		const char *ab = sigabbrev_np(im->exit_status - 128);
		snprintf(buf, n, "SIG%s", ab ? ab : "?");
	} else
		snprintf(buf, n, "exit %d", (int)im->exit_status);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

void report_info(const struct agg *a, const char *file, FILE *out)
{
	const struct agg_info *in = agg_info(a);
	const struct agg_totals *t = agg_totals(a);
	char *f = printable_dup(file);
	fprintf(out, "# ========\n# recording      : %s\n", f);
	free(f);
	if (in->have) {
		time_t secs = (time_t)(in->start_real_ns / 1000000000u);
		struct tm tm;
		char when[64] = "?";
		if (gmtime_r(&secs, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
		fprintf(out, "# captured on    : %s\n", when);
		fprintf(out, "# hostname       : %s\n", in->host);
		fprintf(out, "# os release     : %s\n", in->release);
		fprintf(out, "# kernel         : %s %s %s\n", in->sysname, in->version, in->machine);
		fprintf(out, "# cmdline        : %s\n", in->cmdline);
	} else {
		fprintf(out, "# captured on    : not recorded\n"
			"# hostname       : not recorded\n"
			"# os release     : not recorded\n"
			"# kernel         : not recorded\n"
			"# cmdline        : not recorded (the recording was made by a probe "
			"that kept no header)\n");
	}
	char *ev = event_summary(a, "unknown (no process said)");
	fprintf(out, "# event          : %s\n", ev);
	free(ev);
	if (t->samples && in->have && t->t_max >= in->start_ns)
		fprintf(out, "# duration       : %.3f s (from the start to the last sample)\n",
			(double)(t->t_max - in->start_ns) / 1e9);
	else if (t->samples && t->t_max >= t->t_min)
		fprintf(out, "# duration       : %.3f s of samples (the start was not "
			"recorded)\n", (double)(t->t_max - t->t_min) / 1e9);
	else
		fprintf(out, "# duration       : unknown (no samples)\n");
	char lost[512];
	lost_text(t->lost, lost, sizeof(lost));
	fprintf(out, "# samples        : %" PRIu64 "; %s\n", t->samples, lost);
	char dropped[256];
	if (agg_dropped_text(a, dropped, sizeof(dropped)))
		fprintf(out, "# %-15s: %s\n", "not kept", dropped);
	size_t ni = agg_nimages(a);
	uint64_t *per = xcalloc(ni ? ni : 1, sizeof(*per));
	for (size_t i = 0; i < agg_ncounts(a); i++) {
		const struct agg_count *k = &agg_counts(a)[i];
		if (k->image < ni)
			per[k->image] += k->samples;
	}
	fprintf(out, "# processes      : %u (%zu image%s: an exec starts a new one)\n",
		t->processes, ni, ni == 1 ? "" : "s");
	fprintf(out, "# %8s %8s %9s  %-12s  %s\n", "pid", "parent", "samples", "ended",
		"command");
	/* By pid; a pid's images in the order they came (exec after exec). */
	uint64_t *order = xmalloc((ni ? ni : 1) * sizeof(*order));
	for (size_t i = 0; i < ni; i++)
		order[i] = (uint64_t)agg_image(a, (uint32_t)i)->pid << 32 | i;
	qsort(order, ni, sizeof(*order), cmp_u64);
	unsigned unknown = 0;
	for (size_t j = 0; j < ni; j++) {
		uint32_t i = (uint32_t)order[j];
		const struct agg_image *im = agg_image(a, i);
		char end[64];
		image_end(a, i, end, sizeof(end));
		unknown += strcmp(end, "unknown") == 0;
		fprintf(out, "# %8u %8u %9" PRIu64 "  %-12s  %s%s%s\n", im->pid, im->ppid,
			per[i], end, im->comm[0] ? im->comm : im->name,
			im->args[0] ? ": " : "", im->args);
	}
	free(order);
	free(per);
	if (unknown)
		fprintf(out, "# ended unknown: no exit record came, and its parent, not "
			"probe, waited for it (killed by SIGKILL, or still running when the "
			"recording ended)\n");
	fprintf(out, "# ========\n#\n");
}
