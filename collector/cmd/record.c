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
 * The command's parts: record_int.h (the recorder, shared by them),
 * record_loop.c (the loop, connections, signals), record_summary.c (what
 * is said at the end), record_outside.c (sampling from outside).
 *
 * The summary names every process (the busiest few of many): pid, parent,
 * what it ran (comm and argv of its last image, and the names of the images
 * it exec'd from), its samples and threads, and how it ended, from its EXIT
 * frame.  For the timer fallback it gives the rate really achieved
 * (samples per second of sampled CPU time).
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
#include "session/recpack.h"
#include "outside/sampler.h"
#include "session/spawn.h"
#include "session/unconnected.h"
#include "ingest/usock.h"
#include "util.h"
#include "data/wire_decode.h"


/* Long-only options' keys (cmdopt.h); --off-cpu and --alloc are sampling's. */
enum { OPT_SERVE = CMDOPT_LONG, OPT_CALLGRAPH, OPT_NO_INHERIT };

static const struct cmd_option record_opts[] = {
	{ 'o', "output", required_argument, "FILE", "the recording (default probe.data; "
	  "an existing one becomes FILE.old)", 0, NULL },
	{ 'e', "event", required_argument, "EVENT", "what to sample (default cpu-clock): "
	  "a name 'probe list' shows (task-clock, page-faults, cycles...), rNNN or "
	  "PMU/TERM=VALUE,.../; EVENT:u user space only, :k kernel only, :uk both; "
	  "several: -e a,b or -e a -e b, each sampled on its own (report: each)", 0, NULL },
	{ 'F', "freq", required_argument, "HZ", "samples per second per thread (default "
	  CMDOPT_STR(PROBE_DEFAULT_FREQ) ")", 0, NULL },
	{ 'c', "count", required_argument, "PERIOD", "one sample every PERIOD events "
	  "instead", CMDOPT_OR, NULL },
	{ 'D', "delay", required_argument, "MSECS", "drop the samples of the first MSECS "
	  "milliseconds", 0, NULL },
	{ 'm', "mmap-pages", required_argument, "N", "each thread's rings: its perf ring N "
	  "data pages, a power of two (or a size: 64K, 1M), default 1; its sample ring "
	  "grows to N pages when it fills (32K to 4M), default 256K", 0, NULL },
	{ OPT_NO_INHERIT, "no-inherit", no_argument, NULL, "profile the command's process "
	  "only, not its children", 0, NULL },
	{ SAMPLING_OFFCPU, "off-cpu", no_argument, NULL, "where threads wait too: the time "
	  "in blocking calls (sleep, poll, read, locks...) with its stacks, under "
	  "[off-cpu]; report shows shares of wall time (CPU time sampled with CPU-time "
	  "timers unless -e); with -p/-t/-a: every switch off the CPU, timed by the "
	  "kernel, with its stack where kernel sampling is allowed", 0, NULL },
	{ SAMPLING_ALLOC, "alloc", optional_argument, "BYTES", "where memory is allocated: "
	  "one allocation sampled about every BYTES bytes (default 512K; 1: every one), "
	  "with its stack; alone, nothing else is sampled; report --event inuse: what "
	  "was not freed", 0, NULL },
	{ 'g', NULL, no_argument, NULL, "accepted for perf's sake, as --call-graph", 0, NULL },
	{ OPT_CALLGRAPH, "call-graph", required_argument, "M", "accepted for perf's sake "
	  "(fp, dwarf, lbr): probe always records whole stacks with its own DWARF "
	  "unwinder; dwarf,SIZE: the stack copy's bytes when sampling from outside "
	  "(default 8192, at most 65528)", CMDOPT_OR, NULL },
	{ 'z', "compression-level", required_argument, "N", "zstd's level for the "
	  "recording, 1 to " CMDOPT_STR(RECPACK_LEVEL_MAX) " (default "
	  CMDOPT_STR(RECPACK_ZSTD_LEVEL) "), or 0: none; damage to a compressed "
	  "block loses its 16 KiB of frames, about 1,500 samples (each distinct "
	  "stack is written once either way)", 0, NULL },
	{ 'q', "quiet", no_argument, NULL, "no summary (that nothing was profiled is still "
	  "said)", 0, NULL },
	{ 'p', "pid", required_argument, "PID,...", "sample running processes from outside "
	  "(perf events; their threads, and those they start later) until they end or "
	  "Ctrl-C, or while CMD runs", 0, NULL },
	{ 't', "tid", required_argument, "TID,...", "the same for threads", CMDOPT_OR, NULL },
	{ 'a', "all-cpus", no_argument, NULL, "the whole system (root, CAP_PERFMON, or "
	  "kernel.perf_event_paranoid <= 0)", CMDOPT_OR, NULL },
	{ 'h', "help", no_argument, NULL, "this help", 0, NULL },
	/* libprobe's own collector (preload/conn.c): not for users. */
	{ OPT_SERVE, "serve", no_argument, NULL, NULL, 0, NULL },
	{ 0, NULL, 0, NULL, NULL, 0, NULL },
};

const struct cmd_spec record_spec = {
	.cmd = "record",
	.in_order = 1,          /* the command's own options are not ours, even without "--" */
	.operands = "[--] [CMD [ARG...]]",
	.about =
		"Run CMD with libprobe.so preloaded and save a recording of where its\n"
		"threads spend their time (every process it starts included).  What\n"
		"LD_PRELOAD cannot reach (a statically linked program, Go) is sampled\n"
		"from outside with perf events, as are -p, -t and -a.\n",
	.notes =
		"SIGINT, SIGTERM or SIGHUP is passed on to CMD; the recording stops when CMD\n"
		"ends, or 1 s later whatever it does (a second signal: at once), and a CMD\n"
		"still running is left running and named.\n"
		"\n"
		"probe exits with CMD's exit status (128 + N if signal N stopped probe while\n"
		"CMD ran on).  Show the result with probe report.\n",
	.opts = record_opts,
};

#define usage_error(...) cmd_usage_error("record", __VA_ARGS__)

/* ---- the recording's header ----------------------------------------- */

/*
 * The INFO frame (wire.h), first in the file: what `probe report --header`
 * shows besides the processes (their HELLO and EXIT frames).  argv is
 * probe's own, from "record" on; as many arguments as fit in a frame.
 */
void rec_write_info(struct recfile *out, int argc, char **argv)
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
	const char *what = o->smp.pids ? "-p" : o->smp.tids ? "-t" : o->smp.all ? "-a" : NULL;
	if (!what)
		return 0;
	if (sampler_target_check("record", o->smp.pids, o->smp.tids, o->smp.all))
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
	int c;
	o->output = "probe.data";
	o->stack_bytes = SAMPLER_STACK_DEFAULT;
	o->zlevel = RECPACK_ZSTD_LEVEL;
	sampling_init(&o->smp);
	opterr = 0;
	optind = 1;
	while ((c = cmdopt_next(argc, argv, &record_spec)) != -1) {
		/* What and whom to sample: -e, -F, -c, --off-cpu, --alloc, -p, -t, -a. */
		int taken = sampling_option("record", c, optarg, &o->smp);
		if (taken == 2)
			return 2;
		if (taken)
			continue;
		switch (c) {
		case 'o':
			if (!*optarg)
				return usage_error("-o needs a file name");
			o->output = optarg;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'z': {
			uint64_t z;
			if (parse_u64(optarg, &z) < 0 || z > RECPACK_LEVEL_MAX)
				return usage_error("-z %s: the compression level is a whole number "
						   "from 0 (none) to %u", optarg, RECPACK_LEVEL_MAX);
			o->zlevel = (int)z;
			break;
		}
		case OPT_SERVE:
			o->serve = 1;
			break;
		case 'g':
			o->callgraph = "-g";
			break;
		case OPT_CALLGRAPH:
			if (strcmp(optarg, "fp") != 0 && strcmp(optarg, "lbr") != 0 &&
			    strcmp(optarg, "dwarf") != 0 && strncmp(optarg, "dwarf,", 6) != 0)
				return usage_error("--call-graph %s: perf's modes are fp, dwarf[,SIZE] "
						   "and lbr (probe takes any: it always unwinds with "
						   "DWARF)", optarg);
			o->callgraph = "--call-graph";
			if (!strncmp(optarg, "dwarf,", 6)) {
				if (stack_size(optarg + 6, &o->stack_bytes))
					return 2;
				o->callgraph = NULL;    /* used: see --call-graph's help */
			}
			break;
		case 'D':
			if (parse_u64(optarg, &o->delay_ms) < 0 || o->delay_ms > 86400000)
				return usage_error("-D %s: the delay must be a whole number of "
						   "milliseconds from 0 to 86400000 (perf's -1, start "
						   "disabled, is not supported)", optarg);
			break;
		case OPT_NO_INHERIT:
			o->no_inherit = 1;
			break;
		case 'm':
			if (ring_size(optarg, &o->ring_pages) < 0)
				return 2;
			break;
		case 'h':
			cmdopt_usage(stdout, &record_spec);
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
	else if (!o->smp.pids && !o->smp.tids && !o->smp.all)
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
	uint64_t idle_since = now_ns(), limit = FIRST_NS;
	for (;;) {
		if (r->in.nconns == 0 && now_ns() - idle_since >= limit)
			break;
		if (rec_turn(r, loop_ms(&r->in, 100, r->nsmps)) < 0 && errno != EINTR)
			break;
		/* A static program followed from outside has no connection: it counts. */
		if (r->in.nconns || r->nsmps) {
			idle_since = now_ns();
			limit = IDLE_NS;
		}
	}
	rec_samplers_finish(r);
}

int rec_serve(struct record_opts *o)
{
	struct recorder r = { .o = o, .sfd = -1 };
	r.in = (struct ingest){ .ep = -1, .lfd = SERVE_FD, .uid = geteuid(),
				.lfd_tag = &loop_tag_listen,
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
	rec_write_info(&r.out, 4, serve_argv);
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
	if (loop_open(&r.in, -1) < 0)
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
	if (rec_sampler_add(r, s, 0) == 0) {
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
 * After the loop: the command waited for if the loop could not (a failed
 * epoll), the recording closed, the summary said; the exit status.
 */
static int record_finish(struct recorder *r)
{
	rec_samplers_finish(r);
	unconnected_free(&r->unconn);
	unsigned others = r->stop_sig ? rec_stop_collect(r) : 0;
	if (!r->child_done && !r->stop_sig) {
		int st;
		while (waitpid(r->child, &st, 0) < 0 && errno == EINTR)
			;
		r->status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
		r->child_done = 1;
		r->t_exit = now_ns();
	}
	ingest_close_all(&r->in);
	int werr = recfile_close(&r->out) < 0;
	rec_outside_running(r);
	if (!r->o->quiet)
		rec_summary(r, werr);
	else
		rec_unprofiled_said(r);
	if (r->stop_sig)
		rec_stop_said(r, others);
	/* Still running: the status a shell gives a command that signal ended. */
	int rc = r->child_done ? r->status : 128 + r->stop_sig;
	return werr && rc == 0 ? 1 : rc;
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = { 0 };
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (o.serve)
		return rec_serve(&o);
	if (o.smp.pids || o.smp.tids || o.smp.all)
		return record_outside(&o, argc, argv);

	struct recorder r = { .o = &o, .sfd = -1 };
	/*
	 * Connections are accepted on the 10 ms poll, not woken for: most
	 * processes of a script connect only as they end (preload/lazy.c),
	 * and a wakeup of the collector for each (an IPI in a VM) cost every
	 * fork+exec.  What waits on our answer (a static program's exec)
	 * waits 5 ms more on average.
	 */
	r.in = (struct ingest){ .ep = -1, .lfd = -1, .uid = geteuid(),
				.lfd_tag = &loop_tag_listen, .accept_polled = 1,
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
	recfile_level(&r.out, o.zlevel);
	rec_write_info(&r.out, argc, argv);
	if (probe_scratch_init(&r.in.sc) < 0)
		probe_oom();

	/* Block the signals before fork so none is lost; the child unblocks. */
	sigset_t mask, old;
	r.sfd = rec_signals_block(&mask, &old);
	if (r.sfd < 0 || loop_open(&r.in, r.sfd) < 0) {
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
	/* The command's orphans become ours: see rec_child_reap(). */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	r.child = start_command(&r, env, &old, &rc);
	if (r.child < 0) {
		/* rc is 127 or 126; leave no empty recording behind. */
		recfile_discard(&r.out);
		goto out_mask;
	}
	ingest_raise_nofile();  /* after the fork: the command keeps its own limit */
	/* --no-inherit: descendants that never connect are meant not to. */
	r.unconn = (struct unconnected){ .root = o.no_inherit ? 0 : getpid(), .ctx = &r,
				    .state = rec_unconn_state, .found = rec_unconn_found,
				    .next_ns = now_ns() + UNCONN_SCAN_MS * 1000000ull };
	rec_run_loop(&r);
	rc = record_finish(&r);

out_mask:
	sigprocmask(SIG_SETMASK, &old, NULL);
out:
	rec_close(&r);
	if (sock)
		unlink(sock);
	free_environ(env);
	free(sock);
	free(dir);
	free(lib);
	return rc;
}
