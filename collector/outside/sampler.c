/*
 * sampler.c - the tasks, events and frames of sampling from outside:
 * sampler.h says what.  The events are per (task, CPU) with inherit
 * (perfring.c): a thread the target starts after we opened ours is
 * sampled too, as perf record -p samples it.
 */
#include "outside/sampler.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "session/events.h"
#include "outside/perfring.h"
#include "util.h"

struct sampler {
	struct perfring *pr;
	struct outside *tr;
	sampler_frame_fn frame;
	void *ctx;
	struct probe_scratch sc;        /* the frame handed on, decoded */
	int *procs;                     /* -p's pids, -t's tids: to see them end */
	size_t nprocs;
	int watch_all;                  /* -a or a command: no end of ours to see */
	uint64_t samples;
};

/* ---- tasks ------------------------------------------------------------ */

static int add_task(int **v, size_t *n, size_t *cap, int t)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i] == t)
			return 0;
	*v = xgrow(*v, cap, *n + 1, sizeof(**v));
	(*v)[(*n)++] = t;
	return 0;
}

/* The threads of pid, from /proc/PID/task: how many (0: it is gone). */
static size_t threads_of(int pid, int **v, size_t *n, size_t *cap)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	DIR *d = opendir(path);
	size_t k = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9') {
			add_task(v, n, cap, atoi(e->d_name));
			k++;
		}
	if (d)
		closedir(d);
	return k;
}

/* A thread id that is a thread of some process (its /proc entry). */
static int task_exists(int tid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", tid);
	return access(path, F_OK) == 0;
}

int sampler_target_check(const char *cmd, const char *pids, const char *tids, int all)
{
	if (!!pids + !!tids + !!all > 1)
		return cmd_usage_error(cmd, "-p, -t and -a are one target each: give one "
				       "of them");
	return 0;
}

int *sampler_threads(int pid, size_t *n)
{
	int *v = NULL;
	size_t cap = 0;
	*n = 0;
	if (!threads_of(pid, &v, n, &cap)) {
		free(v);
		return NULL;
	}
	return v;
}

int *sampler_tasks(const char *cmd, const char *list, int tids, size_t *n)
{
	int *v = NULL;
	size_t cap = 0;
	*n = 0;
	const char *what = tids ? "-t" : "-p";
	for (const char *p = list; *p;) {
		char *end;
		errno = 0;
		long id = strtol(p, &end, 10);
		if (errno || end == p || id <= 0 || id > 0x3fffffff || (*end && *end != ',')) {
			cmd_usage_error(cmd, "%s %s: give process ids as numbers, separated by commas "
				    "(%s 1234,5678)", what, list, what);
			free(v);
			return NULL;
		}
		size_t got = tids ? (task_exists((int)id) ? (add_task(&v, n, &cap, (int)id), 1) : 0)
				  : threads_of((int)id, &v, n, &cap);
		if (!got) {
			probe_err("%s %ld: no such %s (ps -e%s lists them)", what, id,
				  tids ? "thread" : "process", tids ? "L" : "");
			free(v);
			return NULL;
		}
		p = *end ? end + 1 : end;
	}
	if (!*n) {
		cmd_usage_error(cmd, "%s needs at least one id", what);
		free(v);
		return NULL;
	}
	return v;
}

/* ---- the sampler ------------------------------------------------------ */

static void event_of(const struct sampling *smp, struct perfring_opts *o)
{
	if (smp->have_event) {
		o->type = smp->ev.type;
		o->config = smp->ev.config;
	} else {
		o->type = PERF_TYPE_SOFTWARE;
		o->config = PERF_COUNT_SW_CPU_CLOCK;
	}
	o->freq = !smp->use_period;
	o->value = smp->value;
}

/* --off-cpu where the kernel keeps its switches' stacks from us: said once. */
static void offcpu_unseen_said(void)
{
	static int said;
	char par[16];
	if (said++)
		return;
	probe_warn("--off-cpu from outside: the kernel times each switch off the CPU for "
		   "any user, but its stack needs kernel sampling, which it refuses here "
		   "(kernel.perf_event_paranoid is %s): waits are shown as [stack unknown]; "
		   "run as root or with CAP_PERFMON, or lower it to 1, for their stacks",
		   event_paranoid(par, sizeof par));
}

/* The ids the processes asked for are known by: -p's pids, -t's tids. */
static void keep_procs(struct sampler *s, const int *tasks, size_t n)
{
	s->procs = xcalloc(n ? n : 1, sizeof(*s->procs));
	for (size_t i = 0; i < n; i++)
		s->procs[s->nprocs++] = tasks[i];
}

/* A frame translate.c made, decoded once for whichever command reads it. */
static void emit(void *ctx, const uint8_t *f, size_t len)
{
	struct sampler *s = ctx;
	struct probe_msg m;
	char err[PROBE_ERR_MAX];
	if (probe_decode_frame(f, len, &m, &s->sc, err) < 0)
		probe_err("internal: a frame sampled from outside does not decode: %s", err);
	else
		s->frame(s->ctx, &m, f, len);
}

static int rec_in(void *ctx, const struct perfring_rec *r)
{
	struct sampler *s = ctx;
	s->samples += r->kind == PERFRING_SAMPLE && !r->u.sample.cs;
	outside_record(s->tr, r);
	return 0;
}

struct sampler *sampler_open(const int *tasks, size_t ntasks, int all,
			     const struct sampling *smp, uint32_t stack_bytes,
			     int enable_on_exec, sampler_frame_fn frame, void *ctx)
{
	struct perfring_opts o = { 0 };
	event_of(smp, &o);
	o.stack_bytes = stack_bytes;
	/* Kernel frames where the kernel allows them, unless -e EVENT:u. */
	int kernel_ok = event_kernel_refused() == 0;
	o.kernel = strcmp(smp->ev.modifier, "u") != 0 && kernel_ok;
	o.enable_on_exec = enable_on_exec;
	o.switches = smp->offcpu;
	o.switch_stacks = smp->offcpu && kernel_ok;
	if (o.switches && !o.switch_stacks)
		offcpu_unseen_said();
	int every = -1;
	struct perfring *pr = all ? perfring_open(&every, 1, &o)
				  : perfring_open(tasks, ntasks, &o);
	if (!pr)
		return NULL;
	struct sampler *s = xcalloc(1, sizeof(*s));
	s->pr = pr;
	s->frame = frame;
	s->ctx = ctx;
	if (probe_scratch_init(&s->sc) < 0)
		probe_oom();
	s->tr = outside_new(&o, smp->event, emit, s);
	s->watch_all = all;
	/* -a: its events count from their open, so every process is seen now or in a record. */
	if (all)
		outside_seed_names(s->tr);
	if (!all)
		keep_procs(s, tasks, ntasks);
	return s;
}

int sampler_watch(struct sampler *s, int ep, void *tag)
{
	for (size_t i = 0; i < perfring_nrings(s->pr); i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = tag };
		if (epoll_ctl(ep, EPOLL_CTL_ADD, perfring_fd(s->pr, i), &ev) < 0)
			return -1;
	}
	return 0;
}

void sampler_read(struct sampler *s)
{
	perfring_read_all(s->pr, rec_in, s);
}

void sampler_enable(struct sampler *s)
{
	perfring_enable(s->pr, 1);
	outside_started(s->tr, now_ns());
}

void sampler_finish(struct sampler *s)
{
	uint64_t now = now_ns();
	sampler_read(s);
	outside_flush(s->tr, now);
	for (size_t i = 0; i < s->nprocs; i++)
		outside_idle(s->tr, (uint32_t)s->procs[i], now);
}

int sampler_task_lives(int tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t k = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[k > 0 ? k : 0] = 0;
	const char *rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

int sampler_alive(const struct sampler *s)
{
	if (s->watch_all)
		return 1;
	for (size_t i = 0; i < s->nprocs; i++)
		if (sampler_task_lives(s->procs[i]))
			return 1;
	return 0;
}

int sampler_done(const struct sampler *s)
{
	return !s->watch_all && !sampler_alive(s) && outside_live(s->tr) == 0;
}

void sampler_stats(const struct sampler *s, struct sampler_stats *st)
{
	struct outside_stats os;
	outside_stats(s->tr, &os);
	st->samples = s->samples;
	st->dropped = os.dropped;
	st->truncated = os.truncated;
	st->dwarf = os.dwarf;
	st->fp = os.fp;
	st->waits = os.waits;
	st->waits_unseen = os.waits_unseen;
	st->bad = perfring_bad(s->pr);
}

void sampler_close(struct sampler *s)
{
	if (!s)
		return;
	perfring_close(s->pr);
	outside_free(s->tr);
	probe_scratch_free(&s->sc);
	free(s->procs);
	free(s);
}
