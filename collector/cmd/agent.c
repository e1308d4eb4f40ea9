/*
 * agent.c - `probe agent`: one epoll loop, as probe top's, over the
 * listening socket, every process's connection, a signalfd and the HTTP
 * server's fd.  Every frame updates what is kept of its process (processes.h)
 * and goes on to the profiles being built from it (sink.h): the pull
 * requests waiting for their seconds (httpd.h), and, with --push, one
 * window per process, sent (push.h) and dropped every --interval.
 *
 * Why no store of its own: profiles live at most one window (or one
 * request) here, so memory follows the processes running now and the
 * stacks of one window, never the days the agent has run; keeping them
 * is the backend's job.  The symbol cache, the one thing that would grow
 * with every binary ever seen, is started afresh every SYMS_MAX_AGE.
 */
#include "cmd/agent.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/processes.h"
#include "cmdopt.h"
#include "agent/httpd.h"
#include "ingest/ingest.h"
#include "agent/push.h"
#include "outside/sampler.h"
#include "agent/sink.h"
#include "session/loop.h"
#include "session/spawn.h"
#include "symbols/symbols.h"
#include "ingest/usock.h"
#include "util.h"

#define SYMS_MAX_AGE (600 * 1000000000ull)
#define REAP_NS (10 * 1000000000ull)    /* without --push: forget ended processes */
#define LABELS_MAX 32
#define PUSH_WAIT_MS 10000              /* at exit, for the last window */

static char tag_http;

struct agent_opts {
	const char *http, *push, *service, *socket;
	const char *pids;       /* -p: running processes, sampled from outside */
	long interval;
	long queue_mib;         /* --queue; 0: push.h's default */
	const char *labels[LABELS_MAX];
	int nlabels;
};

struct agent {
	const struct agent_opts *o;
	struct ingest in;
	struct aprocs procs;
	struct symcache *syms;
	uint64_t syms_born;
	struct httpd *http;
	struct pusher *push;
	int sfd, quit;
	char *sock;
	char host[256];
	uint64_t win_mono, win_real;    /* the window's start */
	uint64_t samples;
	struct sampler *smp;    /* -p (sampler.h) */
	uint64_t smp_read_at;
};

/* Long-only options' keys (cmdopt.h). */
enum { OPT_HTTP = CMDOPT_LONG, OPT_PUSH, OPT_INTERVAL, OPT_LABEL, OPT_SERVICE, OPT_QUEUE,
       OPT_SOCKET, OPT_VERSION };

static const struct cmd_option agent_opts[] = {
	{ OPT_HTTP, "http", required_argument, "ADDR:PORT", "serve Go's "
	  "/debug/pprof/profile?seconds=N (pprof, for Parca, Grafana Alloy, go tool "
	  "pprof), /heap and /allocs (the allocations of programs started with "
	  "libprobe-alloc.so and PROBE_ALLOC=BYTES: since they started, at once, as "
	  "Go's, of all in one profile (label pid) or of ?pid=P; with ?seconds=N those "
	  "of a window) and an index of the processes at /; PORT alone binds to "
	  "loopback", 0, NULL },
	{ OPT_PUSH, "push", required_argument, "URL", "send each process's profile to "
	  "Pyroscope's ingest API (URL/ingest) every interval", 0, NULL },
	{ OPT_INTERVAL, "interval", required_argument, "SECS", "the push interval (default "
	  "15)", 0, NULL },
	{ OPT_LABEL, "label", required_argument, "KEY=VALUE", "a label on every pushed "
	  "profile (again for more)", 0, NULL },
	{ OPT_SERVICE, "service", required_argument, "NAME", "the pushed profiles' name "
	  "(default: each program's)", 0, NULL },
	{ OPT_QUEUE, "queue", required_argument, "MIB", "profiles kept while the backend "
	  "does not take them (default 32; past that the oldest are dropped)", 0, NULL },
	{ OPT_SOCKET, "socket", required_argument, "PATH", "listen for programs at PATH "
	  "instead (start them with PROBE_SOCKET=PATH); only this user's may connect", 0,
	  NULL },
	{ 'p', "pid", required_argument, "PID,...", "also processes already running, "
	  "sampled from outside (perf events; their threads and children too)", 0, NULL },
	{ OPT_VERSION, "version", no_argument, NULL, "probe's version", CMDOPT_NOSYN, NULL },
	{ 'h', "help", no_argument, NULL, "this help", 0, NULL },
	{ 0, NULL, 0, NULL, NULL, 0, NULL },
};

const struct cmd_spec agent_spec = {
	.cmd = "agent",
	.in_order = 1,
	.about =
		"Profile every program this user starts with LD_PRELOAD=libprobe.so (run\n"
		"by root: every user's), continuously, for a profiling backend.\n",
	.notes =
		"Programs find the agent without PROBE_SOCKET: DIR/agent.sock of their user,\n"
		"or root's " PROBE_HOST_SOCKET ".  It runs until SIGTERM or SIGINT, then\n"
		"sends its last window.\n",
	.opts = agent_opts,
};

#define usage_error(...) cmd_usage_error("agent", __VA_ARGS__)

/* KEY=VALUE with a label name Pyroscope takes. */
static int label_ok(const char *s)
{
	const char *eq = strchr(s, '=');
	if (!eq || eq == s || !eq[1])
		return 0;
	for (const char *c = s; c < eq; c++)
		if (!(*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (c > s && *c >= '0' && *c <= '9')))
			return 0;
	return 1;
}

static int parse_args(int argc, char **argv, struct agent_opts *o)
{
	int c;
	char *end;
	o->interval = 15;
	opterr = 0;
	optind = 1;
	while ((c = cmdopt_next(argc, argv, &agent_spec)) != -1) {
		switch (c) {
		case 'p': o->pids = optarg; break;
		case OPT_HTTP: o->http = optarg; break;
		case OPT_PUSH: o->push = optarg; break;
		case OPT_SERVICE: o->service = optarg; break;
		case OPT_SOCKET: o->socket = optarg; break;
		case OPT_INTERVAL:
			errno = 0;
			o->interval = strtol(optarg, &end, 10);
			if (errno || *end || o->interval < 1 || o->interval > 3600)
				return usage_error("--interval %s: give whole seconds, 1 to 3600",
						   optarg);
			break;
		case OPT_QUEUE:
			errno = 0;
			o->queue_mib = strtol(optarg, &end, 10);
			if (errno || *end || o->queue_mib < 1 || o->queue_mib > 4096)
				return usage_error("--queue %s: give MiB, 1 to 4096", optarg);
			break;
		case OPT_LABEL:
			if (!label_ok(optarg))
				return usage_error("--label %s: give KEY=VALUE, KEY of letters, "
						   "digits and _", optarg);
			if (o->nlabels == LABELS_MAX)
				return usage_error("at most %d --label", LABELS_MAX);
			o->labels[o->nlabels++] = optarg;
			break;
		case OPT_VERSION:
			printf("probe %s\n", PROBE_VERSION);
			return 0;
		case 'h':
			cmdopt_usage(stdout, &agent_spec);
			return 0;
		default:
			return cmd_bad_option("agent", c, argv);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s': probe agent runs no command; "
				   "start programs with LD_PRELOAD", argv[optind]);
	if (!o->http && !o->push)
		return usage_error("nothing to serve: give --http ADDR:PORT, --push URL, or both");
	if (!o->push && (o->service || o->nlabels || o->queue_mib))
		return usage_error("--label, --service and --queue are for pushing: give --push");
	return -1;
}

/* ---- pushing ---------------------------------------------------------- */

static void url_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_' || c == '.' || c == '~')
			fputc(c, f);
		else
			fprintf(f, "%%%02X", c);
	}
}

/* A label value as Pyroscope's name{k=v,...} can carry it. */
static void label_value(FILE *f, const char *s, size_t max)
{
	for (size_t i = 0; s[i] && i < max; i++) {
		unsigned char c = (unsigned char)s[i];
		fputc(c <= ' ' || c >= 0x7f || strchr(",{}=\"\\", c) ? '_' : c, f);
	}
}

/*
 * name=SERVICE{host=,pid=,uid=,comm=,exe=,[claimed_comm=,claimed_exe=,]labels}
 * &from=&until=&format=pprof: the names are the kernel's (processes.h), what
 * the process claimed beside them where it differs.
 */
static char *push_query(const struct agent *a, const struct aproc *p, uint64_t until_real)
{
	char *name = NULL, *q = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&name, &n);
	if (!f)
		probe_oom();
	label_value(f, a->o->service ? a->o->service : p->name, 128);
	fputs("{host=", f);
	label_value(f, a->host, 128);
	fprintf(f, ",pid=%u,uid=%u,comm=", p->pid, p->uid);
	label_value(f, p->comm[0] ? p->comm : "?", 128);
	fputs(",exe=", f);
	label_value(f, p->exe[0] ? p->exe : "?", 512);
	if (p->claimed_comm) {
		fputs(",claimed_comm=", f);
		label_value(f, p->claimed_comm[0] ? p->claimed_comm : "?", 128);
	}
	if (p->claimed_exe) {
		fputs(",claimed_exe=", f);
		label_value(f, p->claimed_exe[0] ? p->claimed_exe : "?", 512);
	}
	for (int i = 0; i < a->o->nlabels; i++) {
		const char *eq = strchr(a->o->labels[i], '=');
		fprintf(f, ",%.*s=", (int)(eq - a->o->labels[i]), a->o->labels[i]);
		label_value(f, eq + 1, 256);
	}
	fputc('}', f);
	if (fclose(f) != 0)
		probe_oom();
	f = open_memstream(&q, &n);
	if (!f)
		probe_oom();
	fputs("name=", f);
	url_escape(f, name);
	fprintf(f, "&from=%" PRIu64 "&until=%" PRIu64 "&format=pprof&spyName=probe",
		a->win_real / 1000000000u, (until_real + 999999999u) / 1000000000u);
	if (fclose(f) != 0)
		probe_oom();
	free(name);
	return q;
}

static uint64_t real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One window's profile queued (its pprof's sample types say what it is). */
static void push_window(struct agent *a, struct aproc *p, struct sink **w, uint64_t now,
			uint64_t real)
{
	uint8_t *body;
	size_t len;

	if (!*w)
		return;
	if (sink_pprof(*w, a->syms, now, &body, &len) == 0)
		push_add(a->push, push_query(a, p, real), body, len);
	sink_free(*w);
	*w = NULL;
}

/*
 * The window ends: each process's profile queued, the next one begun.  A
 * process that samples allocations beside its first event (probe record
 * --alloc -e ..., PROBE_ALLOC with a CPU event) has a second profile, Go's
 * heap profile of the window (alloc/inuse, objects/space), pushed as such.
 */
static void end_window(struct agent *a)
{
	uint64_t now = now_ns(), real = real_ns();
	struct aproc *p, *tmp;
	HASH_ITER(hh, a->procs.byid, p, tmp) {
		push_window(a, p, &p->win, now, real);
		push_window(a, p, &p->win_alloc, now, real);
	}
	a->win_mono = now;
	a->win_real = real;
}

/* ---- connections (ingest.h) ------------------------------------------ */

/* What is kept of the process is charged to its uid (processes.h's bounds). */
static void on_opened(void *ctx, struct ingest_conn *c)
{
	struct agent *a = ctx;
	struct aproc *p = aproc_get(&a->procs, (uint32_t)c->pid);
	aproc_set_uid(&a->procs, p, (uint32_t)c->uid);
	aproc_connected(&a->procs, p);
}

static void on_closed(void *ctx, struct ingest_conn *c)
{
	struct agent *a = ctx;
	struct aproc *p = aproc_find(&a->procs, (uint32_t)c->pid);
	if (p && p->connected > 0 && --p->connected == 0) {
		sink_free(p->heap);
		p->heap = NULL;
		aproc_gone(&a->procs, p);
	}
}

static void on_note(void *ctx, enum ingest_note kind, const char *msg)
{
	switch (kind) {
	case INGEST_BAD_DATA:
	case INGEST_REFUSED:
	case INGEST_NOFILE:
	case INGEST_ARENA:
	case INGEST_UNVERIFIED:
	case INGEST_LIMIT:
		probe_warn("%s", msg);
		break;
	default:
		break;
	}
}

static void on_frame(void *ctx, struct ingest_conn *c, struct probe_msg *m,
		     const uint8_t *f, size_t len)
{
	struct agent *a = ctx;
	struct aproc *p = aproc_note(&a->procs, m, f, len);
	if (m->type == PROBE_F_SAMPLES)
		a->samples += m->u.samples.count;
	if (a->push) {
		if (!p->win && m->type == PROBE_F_SAMPLES) {
			p->win = sink_new(&a->procs, NULL, 0);
			p->win->start_mono = a->win_mono;
			p->win->start_real = a->win_real;
		}
		if (!p->win_alloc && p->alloc_beside && m->type == PROBE_F_SAMPLES) {
			p->win_alloc = sink_new(&a->procs, "alloc", 0);
			p->win_alloc->start_mono = a->win_mono;
			p->win_alloc->start_real = a->win_real;
		}
		if (p->win)
			sink_add(p->win, p, m);
		if (p->win_alloc)
			sink_add(p->win_alloc, p, m);
	}
	if (a->http) {
		/* Its allocations since it connected (processes.h), for /heap and /allocs. */
		if (!p->heap && p->has_alloc && m->type == PROBE_F_SAMPLES)
			p->heap = sink_new(&a->procs, "alloc", 0);
		if (p->heap)
			sink_add(p->heap, p, m);
		httpd_frame(a->http, p, m);
	}
}

/* ---- sampled from outside (-p) ---------------------------------------- */

/* The real uid /proc gives pid (the kernel's word), or -1. */
static long proc_uid(uint32_t pid)
{
	char path[64], line[256];
	long uid = -1;
	snprintf(path, sizeof path, "/proc/%u/status", pid);
	FILE *f = fopen(path, "re");
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "Uid: %ld", &uid) == 1)
			break;
	if (f)
		fclose(f);
	return uid;
}

/*
 * A frame sampled from outside, as if its process had connected: its
 * HELLO opens it (charged to the uid /proc gives it, as a connection's is
 * to SO_PEERCRED's), its EXIT closes it.
 */
static void outside_frame(void *ctx, struct probe_msg *m, const uint8_t *f, size_t len)
{
	struct agent *a = ctx;
	uint32_t pid = m->pid, type = m->type;
	if (type == PROBE_F_HELLO) {
		struct aproc *p = aproc_get(&a->procs, pid);
		long uid = proc_uid(pid);
		if (uid < 0)
			return;         /* gone already: nothing to say of it */
		aproc_set_uid(&a->procs, p, (uint32_t)uid);
		if (!p->connected)
			aproc_connected(&a->procs, p);
	} else if (!aproc_find(&a->procs, pid)) {
		return;                 /* its HELLO was not taken */
	}
	on_frame(a, NULL, m, f, len);
	if (type == PROBE_F_EXIT) {
		struct aproc *p = aproc_find(&a->procs, pid);
		if (p && p->connected > 0 && --p->connected == 0) {
			sink_free(p->heap);
			p->heap = NULL;
			aproc_gone(&a->procs, p);
		}
	}
}

static void outside_read(struct agent *a)
{
	if (!a->smp)
		return;
	sampler_read(a->smp);
	a->smp_read_at = now_ns();
}

static int outside_start(struct agent *a)
{
	struct sampling smp;
	size_t n;
	int *tasks = sampler_tasks("agent", a->o->pids, 0, &n);
	if (!tasks)
		return -1;
	sampling_init(&smp);
	a->smp = sampler_open(tasks, n, 0, &smp, SAMPLER_STACK_DEFAULT, 0, outside_frame, a);
	free(tasks);
	return a->smp && sampler_watch(a->smp, a->in.ep, &loop_tag_ring) == 0 ? 0 : -1;
}

/* ---- setting up ------------------------------------------------------- */

/* Root's socket for the host: /run/probe, root's, writable by root alone. */
static char *host_socket(void)
{
	char dir[] = PROBE_HOST_SOCKET;
	*strrchr(dir, '/') = 0;
	struct stat st;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		probe_err("cannot create %s: %s", dir, strerror(errno));
		return NULL;
	}
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022)) {
		probe_err("%s must be a directory of root's that only root may write to; "
			  "fix it or remove it", dir);
		return NULL;
	}
	return xstrdup(PROBE_HOST_SOCKET);
}

static int listen_programs(struct agent *a)
{
	int root = geteuid() == 0 && !a->o->socket;
	if (a->o->socket) {
		a->sock = xstrdup(a->o->socket);
	} else if (root) {
		a->sock = host_socket();
	} else {
		char *dir = usock_dir();
		a->sock = dir ? xasprintf("%s/agent.sock", dir) : NULL;
		free(dir);
	}
	if (!a->sock)
		return -1;
	if (usock_live(a->sock)) {
		probe_err("another probe agent already listens at %s; stop it first", a->sock);
		free(a->sock);
		a->sock = NULL;
		return -1;
	}
	a->in.lfd = usock_listen(a->sock);
	if (a->in.lfd < 0) {
		free(a->sock);
		a->sock = NULL;
		return -1;
	}
	/* Every user's programs connect to root's; SO_PEERCRED says who they are. */
	if (root && chmod(a->sock, 0666) < 0) {
		probe_err("cannot open %s to every user: %s", a->sock, strerror(errno));
		return -1;
	}
	a->in.any_uid = root;
	a->in.live_roots = 1;   /* frames are named while the processes live */
	return 0;
}

/*
 * The signals the loop reads from a signalfd, blocked before any thread
 * starts (the push thread inherits the mask: a SIGTERM it took would kill
 * the agent without its last window).
 */
static void block_signals(sigset_t *mask, sigset_t *old)
{
	sigemptyset(mask);
	sigaddset(mask, SIGINT);
	sigaddset(mask, SIGTERM);
	sigaddset(mask, SIGHUP);
	sigaddset(mask, SIGQUIT);
	sigprocmask(SIG_BLOCK, mask, old);
	signal(SIGPIPE, SIG_IGN);
}

static int setup_loop(struct agent *a, const sigset_t *mask)
{
	a->sfd = signalfd(-1, mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (a->sfd < 0 || loop_open(&a->in, a->sfd) < 0 ||
	    (a->http && loop_add(&a->in, httpd_fd(a->http), &tag_http) < 0)) {
		probe_err("cannot set up the event loop: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- the loop ------------------------------------------------------- */

static void on_signal(struct agent *a)
{
	struct signalfd_siginfo si;
	while (read(a->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		if (si.ssi_signo != SIGHUP)
			a->quit = 1;
}

static int min_ms(int a, int b)
{
	return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

/* The periodic work: windows, forgetting ended processes, the symbol cache. */
static void housekeeping(struct agent *a, uint64_t now, uint64_t *next)
{
	if (now < *next)
		return;
	if (a->push)
		end_window(a);
	aproc_reap(&a->procs);
	if (now - a->syms_born >= SYMS_MAX_AGE) {
		symcache_free(a->syms);
		a->syms = symcache_new();
		a->syms_born = now;
	}
	*next = now + (a->push ? (uint64_t)a->o->interval * 1000000000ull : REAP_NS);
}

/* The HTTP server's tag (loop.h): served after each turn, by run_loop. */
static int own_tag(void *ctx, void *tag)
{
	(void)ctx;
	return tag == &tag_http;
}

static void run_loop(struct agent *a)
{
	uint64_t next = now_ns() + (a->push ? (uint64_t)a->o->interval * 1000000000ull
					    : REAP_NS);
	while (!a->quit) {
		uint64_t now = now_ns();
		housekeeping(a, now, &next);
		int ms = (int)((next - now) / 1000000) + 1;
		if (a->http)
			ms = min_ms(ms, httpd_timeout(a->http));
		struct loop_ready ready;
		if (loop_turn(&a->in, loop_ms(&a->in, ms, a->smp != NULL), own_tag, a, &ready) < 0 &&
		    errno != EINTR) {
			probe_err("epoll_wait: %s", strerror(errno));
			break;
		}
		if (a->smp && now_ns() - a->smp_read_at >= SAMPLER_READ_MS * 1000000ull / 2)
			outside_read(a);
		if (a->http) {
			httpd_tick(a->http, 0);
			httpd_run(a->http);
		}
		if (ready.signal)
			on_signal(a);
	}
}

/* SIGTERM: what the processes sampled is read, answered and sent. */
static void shut_down(struct agent *a)
{
	outside_read(a);
	ingest_poll(&a->in);
	ingest_close_all(&a->in);
	ingest_free_dead(&a->in);
	if (a->http) {
		httpd_tick(a->http, 1);
		/* Let the answers go out: until no client is connected, 2 s at most. */
		uint64_t until = now_ns() + 2000000000ull;
		httpd_run(a->http);
		while (httpd_connections(a->http) && now_ns() < until) {
			struct epoll_event ev;
			if (epoll_wait(httpd_fd(a->http), &ev, 1, 50) < 0 && errno != EINTR)
				break;
			httpd_run(a->http);
		}
	}
	if (a->push) {
		end_window(a);
		push_stop(a->push, PUSH_WAIT_MS);
	}
}

/* What the processes were not believed, or not given (ingest.h), if any. */
static void guarded_summary(const struct ingest *in)
{
	if (in->bad_pid || in->unverified || in->kernel_hidden || in->limited || in->nofile ||
	    in->scrub_dropped || in->budgets.denied_bytes)
		probe_info("agent: refused %" PRIu64 " HELLOs naming another pid and %" PRIu64
			   " connections over a share; %" PRIu64 " MAPs not confirmed by the "
			   "kernel (%" PRIu64 " for want of time to check); %" PRIu64 " sample "
			   "batches with kernel frames unnamed; out of descriptors %" PRIu64
			   " times; %" PRIu64 " frames that could not be rewritten dropped; "
			   "perf map reads cut to a user's bytes a second %" PRIu64 " times",
			   in->bad_pid, in->limited, in->unverified, in->budgets.denied,
			   in->kernel_hidden, in->nofile, in->scrub_dropped,
			   in->budgets.denied_bytes);
}

static void summary(struct agent *a)
{
	char pushed[512] = "";
	if (a->push) {
		struct push_stats s;
		push_stats(a->push, &s);
		uint64_t lost = s.dropped_full + s.dropped_refused + s.gave_up + s.unsent_at_stop;
		snprintf(pushed, sizeof(pushed), "; pushed %" PRIu64 " of %" PRIu64 " profiles "
			 "(%" PRIu64 " failed tries)", s.sent, s.queued, s.failed_tries);
		if (lost)
			snprintf(pushed + strlen(pushed), sizeof(pushed) - strlen(pushed),
				 "; not sent: %" PRIu64 " (queue full %" PRIu64 ", refused %"
				 PRIu64 ", gave up %" PRIu64 ", still queued at exit %" PRIu64 ")",
				 lost, s.dropped_full, s.dropped_refused, s.gave_up,
				 s.unsent_at_stop);
	}
	probe_info("agent stopped: %" PRIu64 " processes, %" PRIu64 " samples; served %" PRIu64
		   " profiles%s", a->procs.seen, a->samples,
		   a->http ? httpd_served(a->http) : 0, pushed);
	guarded_summary(&a->in);
}

int cmd_agent(int argc, char **argv)
{
	struct agent_opts o = { 0 };
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	struct agent a = { .o = &o, .sfd = -1 };
	a.in = (struct ingest){ .ep = -1, .lfd = -1, .uid = geteuid(),
				.lfd_tag = &loop_tag_listen,
				.what = "profiled", .quiet = 1, .ctx = &a, .frame = on_frame,
				.note = on_note, .opened = on_opened, .closed = on_closed };
	sigset_t mask, old;
	block_signals(&mask, &old);
	aprocs_init(&a.procs);
	a.syms = symcache_new();
	a.syms_born = now_ns();
	a.win_mono = now_ns();
	a.win_real = real_ns();
	if (gethostname(a.host, sizeof(a.host) - 1) < 0)
		snprintf(a.host, sizeof(a.host), "?");
	if (probe_scratch_init(&a.in.sc) < 0)
		probe_oom();
	char *lib = find_libprobe_for(0, 0);
	rc = 1;
	if (!lib || listen_programs(&a) < 0)
		goto out;
	if (o.http && !(a.http = httpd_start(o.http, &a.procs, &a.syms)))
		goto out;
	if (o.push && !(a.push = push_start(o.push, (size_t)o.queue_mib << 20)))
		goto out;
	if (setup_loop(&a, &mask) < 0)
		goto out;
	ingest_raise_nofile();
	if (o.pids && outside_start(&a) < 0)
		goto out;
	probe_info("agent: programs started with LD_PRELOAD=%s connect to %s%s", lib, a.sock,
		   a.in.any_uid ? " (every user's)" : "");
	if (a.http)
		probe_info("agent: profiles at http://%s/debug/pprof/profile?seconds=N",
			   httpd_where(a.http));
	if (a.push)
		probe_info("agent: pushing to %s/ingest every %ld s", o.push, o.interval);
	if (a.smp)
		probe_info("agent: sampling %s from outside (perf events)", o.pids);
	run_loop(&a);
	shut_down(&a);
	summary(&a);
	rc = 0;
out:
	sigprocmask(SIG_SETMASK, &old, NULL);
	sampler_close(a.smp);
	httpd_stop(a.http);
	if (a.push)
		push_free(a.push);
	if (a.in.ep >= 0)
		close(a.in.ep);
	if (a.sfd >= 0)
		close(a.sfd);
	if (a.in.lfd >= 0)
		close(a.in.lfd);
	if (a.sock)
		unlink(a.sock);
	free(a.sock);
	probe_scratch_free(&a.in.sc);
	struct aproc *p, *tmp;
	HASH_ITER(hh, a.procs.byid, p, tmp) {
		sink_free(p->win);
		sink_free(p->win_alloc);
		sink_free(p->heap);
		p->win = p->win_alloc = p->heap = NULL;
	}
	aprocs_free(&a.procs);
	symcache_free(a.syms);
	free(lib);
	return rc;
}
