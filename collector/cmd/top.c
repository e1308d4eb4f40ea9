/*
 * top.c - `probe top`: one epoll loop over the listening socket, every
 * process's connection, a signalfd and (on a terminal) the keyboard; frames
 * are validated by the one decoder, fed to the aggregator as they arrive
 * (and saved verbatim with -o); every interval the rows are recomputed from
 * the interned stacks through one long-lived resolver, whose caches make
 * each distinct address symbolized once.
 *
 * Why this shape: the same as record.c (whose connection handling is
 * duplicated here in small: accept with SO_PEERCRED, bounded non-blocking
 * reads per wakeup so one busy process cannot starve the others); the view
 * is redrawn from a snapshot taken at each tick (agg_finish), so keys that
 * change grouping, sorting or focus recompute from the same snapshot.
 *
 * Interval figures: each count entry (image, generation, thread, stack)
 * remembers its amount at the previous tick and at the last 'z'; the
 * interval view shows the difference since the previous tick, the
 * cumulative view the difference since 'z' (or the start).
 *
 * Call tree (Enter, c on a function): from the same interned stacks, the
 * selected function with its callees as a tree below it, then its callers
 * as an inverted tree towards main/_start (struct ctree); it is flattened
 * into lines (pruned under 0.5 %) which the arrows scroll.
 */
#include "cmd/top.h"
#include "top/annot.h"
#include "top/top_state.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "data/aggregate.h"
#include "session/child.h"
#include "cmdopt.h"
#include "session/events.h"
#include "session/loop.h"
#include "hashtab.h"
#include "ingest/ingest.h"
#include "data/lost.h"
#include "session/recfile.h"
#include "symbols/resolve.h"
#include "outside/sampler.h"
#include "session/spawn.h"
#include "symbols/symbols.h"
#include "ingest/usock.h"
#include "util.h"
static char tag_keys, tag_stderr;


/* Long-only options' keys (cmdopt.h); --off-cpu and --alloc are sampling's. */
enum { OPT_SIGNATURES = CMDOPT_LONG, OPT_EXIT };

/* -e's list: long, so wrapped under the entry's text. */
static void events_more(FILE *out, int col)
{
	fprintf(out, "%*s", col, "");
	help_wrap(out, col, col, event_list());
}

static const struct cmd_option top_opts[] = {
	{ 'd', "delay", required_argument, "SECS", "redraw every SECS seconds (default 1)",
	  0, NULL },
	{ 'n', "rows", required_argument, "N", "rows per snapshot when not on a terminal "
	  "(default 20)", 0, NULL },
	{ 'o', "output", required_argument, "FILE", "also save the recording (as probe "
	  "record does)", 0, NULL },
	{ 'e', "event", required_argument, "EVENT", "what to sample (default cpu-clock), "
	  "one of:", 0, events_more },
	{ 'F', "freq", required_argument, "HZ", "samples per second per thread (default "
	  CMDOPT_STR(PROBE_DEFAULT_FREQ) ")", 0, NULL },
	{ 'c', "count", required_argument, "PERIOD", "one sample every PERIOD events "
	  "instead", CMDOPT_OR, NULL },
	{ SAMPLING_OFFCPU, "off-cpu", no_argument, NULL, "where the threads wait too, as "
	  "shares of wall time (a wait shows when it ends); with -p/-t/-a: every switch "
	  "off the CPU, timed by the kernel", 0, NULL },
	{ SAMPLING_ALLOC, "alloc", optional_argument, "BYTES", "where CMD allocates memory "
	  "instead: one allocation sampled about every BYTES bytes (default 512K), "
	  "shares of the bytes allocated", 0, NULL },
	{ OPT_SIGNATURES, "signatures", no_argument, NULL, "C++ names with their parameter "
	  "lists (by default without, as perf shows them)", 0, NULL },
	{ OPT_SIGNATURES, "full-names", no_argument, NULL, NULL, 0, NULL },
	{ OPT_EXIT, "exit", no_argument, NULL, "end as soon as CMD has exited (default on a "
	  "terminal: keep the last view until q; off one, probe top always ends with "
	  "CMD)", 0, NULL },
	{ 'p', "pid", required_argument, "PID,...", "processes already running (their "
	  "threads, and those they start later)", 0, NULL },
	{ 't', "tid", required_argument, "TID,...", "threads already running", CMDOPT_OR,
	  NULL },
	{ 'a', "all-cpus", no_argument, NULL, "the whole system (root, CAP_PERFMON, or "
	  "kernel.perf_event_paranoid <= 0)", CMDOPT_OR, NULL },
	{ 'h', "help", no_argument, NULL, "this help", 0, NULL },
	{ 0, NULL, 0, NULL, NULL, 0, NULL },
};

const struct cmd_spec top_spec = {
	.cmd = "top",
	.in_order = 1,
	.operands = "[-- CMD [ARG...]]",
	.about =
		"Watch where a running program spends its time, updated every interval.\n"
		"With CMD, run it with libprobe.so preloaded.  With -p, -t or -a, sample\n"
		"running processes from outside (perf events, as perf top).  Without any,\n"
		"watch every program the same user starts with the line probe top prints\n"
		"first:\n"
		"  PROBE_SOCKET=DIR/top.sock LD_PRELOAD=.../libprobe.so PROGRAM\n",
	.notes =
		"Keys: q quit, ? help, s sort (self/total/name), g group (function/module/\n"
		"thread/process), f focus the selected thread or process, F clear focus,\n"
		"/ filter by name, Enter or c call tree of the selected function, a its\n"
		"instructions and source lines (as probe annotate), z zero, p pause,\n"
		"i interval or cumulative, arrows/PgUp/PgDn scroll.\n"
		"Not on a terminal, a plain-text snapshot is printed every interval: on\n"
		"stdout, or on stderr when probe top runs a command (its stdout is its own).\n",
	.opts = top_opts,
};

#define usage_error(...) cmd_usage_error("top", __VA_ARGS__)

/* ---- processes ------------------------------------------------------ */

static struct pent *proc_get(struct top *t, uint32_t pid)
{
	struct pent *p;
	HASH_FIND(hh, t->procs, &pid, sizeof(pid), p);
	if (p)
		return p;
	p = xcalloc(1, sizeof(*p));
	p->pid = pid;
	p->order = HASH_COUNT(t->procs);
	p->status = -1;
	p->name = xasprintf("[pid %u]", pid);
	HASH_ADD(hh, t->procs, pid, sizeof(p->pid), p);
	return p;
}

/* Warnings go to the status line on a terminal, else to stderr. */
static void top_warn(struct top *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void top_warn(struct top *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(status_msg, sizeof(status_msg), fmt, ap);
	va_end(ap);
	if (!t->tty)
		fprintf(stderr, "probe: %s\n", status_msg);
}

/* ---- connections (ingest.h) ------------------------------------------ */

static void on_opened(void *ctx, struct ingest_conn *c)
{
	struct top *t = ctx;
	proc_get(t, (uint32_t)c->pid)->connected++;
}

static void on_closed(void *ctx, struct ingest_conn *c)
{
	struct top *t = ctx;
	struct pent *p = proc_get(t, (uint32_t)c->pid);
	if (p->connected > 0)
		p->connected--;
}

/* Messages from ingest.c: bad data and refusals are shown, the rest (a
 * process that went away mid-frame, say) is not worth the status line. */
static void on_note(void *ctx, enum ingest_note kind, const char *msg)
{
	struct top *t = ctx;
	switch (kind) {
	case INGEST_BAD_DATA:
	case INGEST_REFUSED:
	case INGEST_NOFILE:
		top_warn(t, "%s", msg);
		break;
	default:
		break;
	}
}

/* Count one valid frame, save it (-o), add it to the profile. */
static void on_frame(void *ctx, struct ingest_conn *c, struct probe_msg *m,
		     const uint8_t *f, size_t len)
{
	struct top *t = ctx;
	struct pent *p = proc_get(t, m->pid);
	switch (m->type) {
	case PROBE_F_HELLO: {
		const char *n = m->u.hello.exe && *m->u.hello.exe ? path_basename(m->u.hello.exe)
								: m->u.hello.comm;
		if (n && *n) {
			free(p->name);
			p->name = printable_dup(n);
		}
		break;
	}
	case PROBE_F_SAMPLES: {
		struct probe_sample_raw s;
		struct probe_msg walk = *m;     /* m itself goes to agg_add whole */

		/* A free (--alloc) is no sample. */
		while (probe_samples_next_raw(&walk, &s))
			t->samples += !probe_sample_is_free(&s);
		break;
	}
	case PROBE_F_LOST: {
		unsigned why = m->u.lost.reason < PROBE_LOST_REASON_MAX ? m->u.lost.reason : 0;
		t->lost[why] = sat_add(t->lost[why], m->u.lost.count);
		break;
	}
	case PROBE_F_EXIT:
		p->exited = 1;
		p->status = m->u.exit.status;
		break;
	default:
		break;
	}
	if (t->saving)
		recfile_msg(&t->out, f, len, m);
	agg_add(t->agg, m);
	if (m->type == PROBE_F_HELLO) {
		/* A HELLO starts an image (an exec: a new one for the same pid);
		 * rows of the process are named after it (rows.c). */
		for (size_t i = agg_nimages(t->agg); i-- > 0;)
			if (agg_image(t->agg, (uint32_t)i)->pid == m->pid) {
				p->image = (uint32_t)i;
				p->have_image = 1;
				break;
			}
	}
}

/* ---- sampled from outside (-p, -t, -a) ------------------------------- */

static void outside_frame(void *ctx, struct probe_msg *m, const uint8_t *f, size_t len)
{
	on_frame(ctx, NULL, m, f, len);
}

static void outside_read(struct top *t)
{
	sampler_read(t->smp);
	t->smp_read_at = now_ns();
}

/* -p, -t: every process asked for has ended (a last view, then as a command's end). */
static void outside_check_end(struct top *t)
{
	if (t->smp && !t->child_done && !sampler_alive(t->smp)) {
		outside_read(t);
		t->child_done = 1;
		t->t_exit = now_ns();
	}
}

/* ---- signals and the command ---------------------------------------- */

static void child_reap(struct top *t)
{
	if (t->child > 0 && !t->child_done && child_wait(t->child, &t->status)) {
		t->child_done = 1;
		t->t_exit = now_ns();
	}
}

static void on_signal(struct top *t)
{
	struct signalfd_siginfo si;
	while (read(t->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			child_reap(t);
			continue;
		}
		/* Ctrl-C, SIGTERM: leave (the command, if any, got it too from the
		 * terminal; one sent to probe alone is passed on). */
		if (t->child > 0 && !t->child_done && si.ssi_code != SI_KERNEL)
			kill(t->child, (int)si.ssi_signo);
		t->interrupted = 1;
		t->quit = 1;
	}
}

static void errpipe_start(struct top *t)
{
	int p[2];
	t->ep2.rfd = t->ep2.saved = -1;
	if (pipe2(p, O_NONBLOCK | O_CLOEXEC) < 0)
		return;
	t->ep2.saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (t->ep2.saved < 0 || dup2(p[1], STDERR_FILENO) < 0) {
		close(p[0]);
		close(p[1]);
		if (t->ep2.saved >= 0)
			close(t->ep2.saved);
		t->ep2.saved = -1;
		return;
	}
	close(p[1]);
	t->ep2.rfd = p[0];
	loop_add(&t->in, p[0], &tag_stderr);
}

static void errpipe_read(struct top *t)
{
	struct errpipe *e = &t->ep2;
	char buf[1024];
	ssize_t n;
	while (e->rfd >= 0 && (n = read(e->rfd, buf, sizeof(buf))) > 0) {
		size_t k = (size_t)n;
		if (k > sizeof(e->log) - e->len) {
			k = sizeof(e->log) - e->len;
			e->cut = 1;
		}
		memcpy(e->log + e->len, buf, k);
		e->len += k;
		/* The last whole line read goes to the status line. */
		size_t end = (size_t)n;
		while (end > 0 && buf[end - 1] == '\n')
			end--;
		size_t start = end;
		while (start > 0 && buf[start - 1] != '\n')
			start--;
		if (end > start) {
			/* The program's own words: printable (util.h), whole characters. */
			char line[sizeof(status_msg)];
			size_t m = end - start < sizeof(line) - 1 ? end - start
								 : sizeof(line) - 1;
			memcpy(line, buf + start, m);
			line[m] = 0;
			printable_copy(status_msg, sizeof(status_msg), line, 0);
		}
	}
}

static void errpipe_stop(struct top *t)
{
	struct errpipe *e = &t->ep2;
	if (e->saved < 0)
		return;
	errpipe_read(t);
	dup2(e->saved, STDERR_FILENO);
	close(e->saved);
	e->saved = -1;
	if (e->rfd >= 0)
		close(e->rfd);
	e->rfd = -1;
	if (e->len && write(STDERR_FILENO, e->log, e->len) < 0)
		return;
	if (e->cut)
		fputs("probe: (more messages were dropped)\n", stderr);
}

/* ---- the loop ------------------------------------------------------- */

static void tick(struct top *t)
{
	take_snapshot(t);
	if (!t->paused)
		recompute(t);
	if (t->tty)
		draw(t);
	else
		print_snapshot(t, t->snap);
}

/* The loop's tags of top's own (loop.h): the stderr pipe read now, keys noted. */
static int own_tag(void *ctx, void *tag)
{
	struct top *t = ctx;
	if (tag == &tag_stderr)
		errpipe_read(t);
	else if (tag == &tag_keys)
		t->keys_ready = 1;
	else
		return 0;
	return 1;
}

static void run_loop(struct top *t)
{
	uint64_t period = (uint64_t)(t->o->delay * 1e9);
	uint64_t next = now_ns() + period;
	for (;;) {
		uint64_t now = now_ns();
		if (t->quit)
			break;
		outside_check_end(t);
		if ((t->o->argv || t->smp) && t->child_done && !t->finished) {
			ingest_accept_all(&t->in);
			if (t->in.nconns == 0 || now >= t->t_exit + DRAIN_NS) {
				t->finished = 1;
				tick(t);
				if (!t->tty || t->o->exit_at_end)
					break;
				if (t->saving)
					recfile_flush(&t->out);
			}
		}
		if (now >= next) {
			if (!t->finished)
				tick(t);
			if (t->saving)
				recfile_flush(&t->out);
			next = now + period;
		}
		uint64_t wait = next > now ? next - now : 0;
		if (t->o->argv && t->child_done && !t->finished)
			wait = wait > 50000000 ? 50000000 : wait;
		int ms = loop_ms(&t->in, (int)(wait / 1000000) + 1, t->smp != NULL);
		struct loop_ready ready;
		t->keys_ready = 0;
		if (loop_turn(&t->in, ms, own_tag, t, &ready) < 0) {
			if (errno == EINTR) {
				if (t->tty && read_keys(t))
					draw(t);
				continue;
			}
			top_warn(t, "epoll_wait: %s", strerror(errno));
			break;
		}
		if (ready.signal)
			on_signal(t);
		if (t->keys_ready && t->tty && read_keys(t))
			draw(t);
		if (t->smp && (ready.ring || now_ns() - t->smp_read_at >= SAMPLER_READ_MS * 1000000ull))
			outside_read(t);
	}
}

/* ---- set-up --------------------------------------------------------- */

/* --signatures: C++ names in full (resolve.h); kept apart from top_opts,
   which the view's files share, as only the resolver's set-up reads it. */
static int top_signatures;

static int parse_args(int argc, char **argv, struct top_opts *o)
{
	int c;
	o->delay = 1.0;
	o->nrows = 20;
	top_signatures = 0;
	sampling_init(&o->smp);
	opterr = 0;
	optind = 1;
	while ((c = cmdopt_next(argc, argv, &top_spec)) != -1) {
		/* What and whom to sample: -e, -F, -c, --off-cpu, --alloc, -p, -t, -a. */
		int taken = sampling_option("top", c, optarg, &o->smp);
		if (taken == 2)
			return 2;
		if (taken)
			continue;
		switch (c) {
		case 'd': {
			char *end;
			errno = 0;
			o->delay = strtod(optarg, &end);
			if (errno || end == optarg || *end || !isfinite(o->delay) ||
			    o->delay < 0.05 || o->delay > 3600)
				return usage_error("-d %s: the interval must be a number of seconds "
						   "from 0.05 to 3600", optarg);
			break;
		}
		case 'n': {
			uint64_t v;
			if (parse_u64(optarg, &v) < 0 || v < 1 || v > 100000)
				return usage_error("-n %s: the row count must be a whole number from "
						   "1 to 100000", optarg);
			o->nrows = (long)v;
			break;
		}
		case 'o':
			if (!*optarg)
				return usage_error("-o needs a file name");
			o->output = optarg;
			break;
		case OPT_EXIT:
			o->exit_at_end = 1;
			break;
		case OPT_SIGNATURES:
			top_signatures = 1;
			break;
		case 'h':
			cmdopt_usage(stdout, &top_spec);
			return 0;
		default:
			return cmd_bad_option("top", c, argv);
		}
	}
	if (sampling_check("top", &o->smp) >= 0)
		return 2;
	if (o->smp.nmore)
		return usage_error("-e: probe top shows one event at a time; record several "
				   "with probe record -e a,b and see each with probe report");
	o->argv = optind < argc ? argv + optind : NULL;
	if (o->smp.pids || o->smp.tids || o->smp.all) {
		const char *what = o->smp.pids ? "-p" : o->smp.tids ? "-t" : "-a";
		if (sampler_target_check("top", o->smp.pids, o->smp.tids, o->smp.all))
			return 2;
		if (o->argv)
			return usage_error("%s watches processes already running: give no "
					   "command with it", what);
		if (o->smp.alloc)
			return usage_error("%s samples from outside (perf events): --alloc "
					   "needs libprobe in the process (probe top -- CMD)", what);
		return -1;
	}
	if (!o->argv && o->smp.offcpu)
		return usage_error("--off-cpu applies to a command probe top runs; without "
				   "one, set PROBE_OFFCPU=1 for the programs you start");
	if (!o->argv && o->smp.alloc)
		return usage_error("--alloc applies to a command probe top runs; without "
				   "one, preload libprobe-alloc.so with PROBE_ALLOC=BYTES");
	if (o->smp.alloc && !o->smp.alloc_only)
		return usage_error("--alloc: probe top shows one event at a time: allocations "
				   "alone here (probe record --alloc -e ... records both)");
	if (!o->argv && (o->smp.have_freq || o->smp.have_period ||
			   strcmp(o->smp.event, "cpu-clock") != 0 || o->smp.ev.modifier[0]))
		return usage_error("-e, -F and -c apply to a command probe top runs; without "
				   "one, set PROBE_EVENT/PROBE_FREQ for the programs you start");
	return -1;
}

/* Start the command with its stdio away from the terminal view. */
static pid_t start_command(struct top *t, char **env, const sigset_t *old, int *rc)
{
	int saved[3] = { -1, -1, -1 };
	if (t->tty) {
		int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
		for (int i = 0; i < 3 && nul >= 0; i++) {
			saved[i] = fcntl(i, F_DUPFD_CLOEXEC, 3);
			dup2(nul, i);
		}
		if (nul >= 0)
			close(nul);
	}
	pid_t p = spawn(t->o->argv, env, old, rc);
	for (int i = 0; i < 3; i++)
		if (saved[i] >= 0) {
			dup2(saved[i], i);
			close(saved[i]);
		}
	return p;
}

/* Where programs connect: a socket of this user's, or none (outside). */
static int top_socket(struct top *t, const char *dir)
{
	if (t->o->argv) {
		t->sock = xasprintf("%s/top-%ld.sock", dir, (long)getpid());
	} else {
		t->sock = xasprintf("%s/top.sock", dir);
		if (usock_live(t->sock)) {
			probe_err("another probe top is already watching %s; quit it first, or "
				  "give a command to run (probe top -- CMD)", t->sock);
			free(t->sock);
			t->sock = NULL;
			return -1;
		}
	}
	t->in.lfd = usock_listen(t->sock);
	if (t->in.lfd < 0) {
		free(t->sock);
		t->sock = NULL;
		return -1;
	}
	return 0;
}

/* The signals into a signalfd, and the epoll set (the socket, where there is one). */
static int top_loop_setup(struct top *t, sigset_t *old)
{
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigprocmask(SIG_BLOCK, &mask, old);
	t->sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (t->sfd < 0 || loop_open(&t->in, t->sfd) < 0) {
		probe_err("cannot set up the event loop: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * What is watched: processes from outside (-p, -t, -a), the command, or
 * whatever connects (said, so that it can be copied).  0, or -1 with *rc.
 */
static int top_start(struct top *t, int outside, const char *lib, char ***env,
		     const sigset_t *old, int *rc)
{
	const struct top_opts *o = t->o;
	if (outside) {
		size_t n = 0;
		int *tasks = o->smp.all ? NULL : sampler_tasks("top", o->smp.pids ? o->smp.pids : o->smp.tids,
							   o->smp.tids != NULL, &n);
		if (!o->smp.all && !tasks) {
			*rc = 2;
			return -1;
		}
		t->smp = sampler_open(tasks, n, o->smp.all, &o->smp, SAMPLER_STACK_DEFAULT, 0,
				      outside_frame, t);
		free(tasks);
		return !t->smp || sampler_watch(t->smp, t->in.ep, &loop_tag_ring) < 0 ? -1 : 0;
	}
	if (o->argv) {
		struct child_settings cs = { lib, t->sock, o->smp.event, o->smp.use_period,
					     o->smp.value, &o->smp.ev, NULL, 0, 0, 0, o->smp.offcpu,
					     o->smp.timer, o->smp.alloc, o->smp.alloc_only };
		*env = child_environ(&cs);
		t->child = start_command(t, *env, old, rc);
		if (t->child < 0) {
			if (t->saving)
				recfile_discard(&t->out);
			t->saving = 0;
			return -1;
		}
		return 0;
	}
	char *line = xasprintf("start programs to watch with:  PROBE_SOCKET=%s "
			       "LD_PRELOAD=%s PROGRAM [ARG...]", t->sock, lib);
	if (t->tty)
		snprintf(status_msg, sizeof(status_msg), "%s", line);
	/* Printed as is, before the view, so it can be copied. */
	printf("%s\n", line);
	fflush(stdout);
	free(line);
	return 0;
}

/* The full-screen view (curses), its keys in the epoll set, first drawn. */
static int top_terminal(struct top *t)
{
	set_escdelay(25);
	/* The terminal's character set: UTF-8 names shown as such, not as M-x. */
	setlocale(LC_CTYPE, "");
	if (!initscr()) {
		probe_err("cannot start the terminal view (TERM=%s); run probe top "
			  "with its output piped for plain-text snapshots",
			  getenv("TERM") ? getenv("TERM") : "");
		return -1;
	}
	errpipe_start(t);
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	loop_add(&t->in, STDIN_FILENO, &tag_keys);
	take_snapshot(t);
	recompute(t);
	draw(t);
	return 0;
}

/* Quit while the command runs: stop it (SIGKILL if it lingers 2 s), its status. */
static void top_end_command(struct top *t)
{
	if (!t->interrupted)
		kill(t->child, SIGTERM);
	int st = 0;
	uint64_t t_kill = now_ns() + DRAIN_NS;
	pid_t w;
	while ((w = waitpid(t->child, &st, WNOHANG)) == 0 || (w < 0 && errno == EINTR)) {
		if (w == 0 && now_ns() >= t_kill) {
			kill(t->child, SIGKILL);
			t_kill = UINT64_MAX;
		}
		usleep(10000);
	}
	t->status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
	t->child_done = 1;
}

/* Everything t holds, given back. */
static void top_free(struct top *t)
{
	if (t->in.ep >= 0)
		close(t->in.ep);
	if (t->sfd >= 0)
		close(t->sfd);
	if (t->in.lfd >= 0)
		close(t->in.lfd);
	sampler_close(t->smp);
	if (t->sock)
		unlink(t->sock);
	free(t->sock);
	if (t->in.sc.mem)
		probe_scratch_free(&t->in.sc);
	rows_clear(&t->rows);
	free(t->rows.v);
	free(t->down.v);
	free(t->up.v);
	free(t->tl);
	annot_close(t);
	struct cent *c, *ct;
	HASH_ITER(hh, t->cents, c, ct) {
		HASH_DEL(t->cents, c);
		free(c);
	}
	struct pent *p, *pt;
	HASH_ITER(hh, t->procs, p, pt) {
		HASH_DEL(t->procs, p);
		free(p->name);
		free(p);
	}
	free(t->cvec);
	free(t->frames);
	free(t->stamp);
	resolver_free(t->res);
	if (t->syms)
		symcache_free(t->syms);
	if (t->agg)
		agg_free(t->agg);
}

int cmd_top(int argc, char **argv)
{
	struct top_opts o = { 0 };
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;

	struct top t = { .o = &o, .sfd = -1, .ep2 = { .rfd = -1, .saved = -1 } };
	t.in = (struct ingest){ .ep = -1, .lfd = -1, .uid = geteuid(),
				.lfd_tag = &loop_tag_listen,
				.what = "watched", .quiet = 1, .ctx = &t, .frame = on_frame,
				.note = on_note, .opened = on_opened, .closed = on_closed };
	t.tty = isatty(STDOUT_FILENO) && isatty(STDIN_FILENO);
	t.snap = o.argv ? stderr : stdout;
	char *lib = NULL, *dir = NULL;
	char **env = NULL;
	int curses = 0, hint = 0;
	sigset_t old;
	sigemptyset(&old);
	rc = 1;

	int outside = o.smp.pids || o.smp.tids || o.smp.all;
	lib = outside ? NULL : find_libprobe_for(o.smp.offcpu, o.smp.alloc != 0);
	if (!lib && !outside) {
		rc = 2;
		goto out;
	}
	dir = outside ? NULL : usock_dir();
	if (!outside && (!dir || top_socket(&t, dir) < 0))
		goto out;
	if (o.output) {
		if (recfile_open(&t.out, o.output) < 0)
			goto out;
		t.saving = 1;
	}
	if (probe_scratch_init(&t.in.sc) < 0)
		probe_oom();
	t.agg = agg_new();
	t.syms = symcache_new();
	struct resolve_opts ro = { .demangle = 1, .inline_frames = 1,
				   .short_names = !top_signatures };
	t.res = resolver_new(t.agg, t.syms, &ro);
	t.frames = xmalloc(RESOLVE_MAX_FRAMES * sizeof(*t.frames));
	if (top_loop_setup(&t, &old) < 0)
		goto out_mask;
	t.t_start = t.last_tick = now_ns();
	if (top_start(&t, outside, lib, &env, &old, &rc) < 0)
		goto out_mask;
	ingest_raise_nofile();
	if (t.tty) {
		if (top_terminal(&t) < 0)
			goto out_mask;
		curses = 1;
	}
	run_loop(&t);
	if (curses) {
		endwin();
		curses = 0;
		errpipe_stop(&t);
	}
	if (o.argv && !t.child_done)
		top_end_command(&t);
	if (!t.tty && !t.finished) {
		/* Interrupted: a last snapshot. */
		t.finished = 1;
		t.t_exit = now_ns();
		take_snapshot(&t);
		recompute(&t);
		print_snapshot(&t, t.snap);
	}
	ingest_close_all(&t.in);
	if (t.smp)
		outside_read(&t);
	rc = o.argv ? t.status : 0;
	if (t.saving) {
		int werr = recfile_close(&t.out) < 0;
		if (werr && rc == 0)
			rc = 1;
		hint = !werr && t.samples && t.out.regular;
	}
	t.saving = 0;

out_mask:
	if (curses) {
		endwin();
		errpipe_stop(&t);
	}
	if (hint)
		recfile_hint(o.output);
	sigprocmask(SIG_SETMASK, &old, NULL);
out:
	if (t.saving)
		recfile_close(&t.out);
	top_free(&t);
	free_environ(env);
	free(dir);
	free(lib);
	return rc;
}
