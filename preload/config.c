/*
 * config.c - the PROBE_* environment, read once by the constructor.
 *
 *   PROBE_SOCKET  collector's Unix socket; unreachable: a file; unset: the
 *                 socket of a `probe top` without a command, when one
 *                 listens in this user's private directory, else a file
 *                 (conn.c)
 *   PROBE_OUTPUT  the file ("./probe.data" when unset)
 *   PROBE_APPEND  internal: set by libprobe for its descendants so that an
 *                 exec'd child appends to its ancestor's file
 *   PROBE_EVENT   a name of include/probe/events.h (perf's, or its alias):
 *                 cpu-clock (default), task-clock, page-faults, cycles, ...
 *   PROBE_FREQ    Hz (default 999); PROBE_PERIOD wins when both are set
 *   PROBE_PERIOD  events per sample (nanoseconds for clock events)
 *   PROBE_SIGNAL  the signal to sample with, as the kernel delivers perf
 *                 events' signals to other tools (F_SETSIG): a realtime
 *                 one (RTMIN+N, SIGRTMIN+N or its number), or PROF
 *                 (SIGPROF, which debuggers pass on without stopping);
 *                 unset: SIGTRAP from the kernel's perf sigtrap where it
 *                 has one, SIGPROF when a debugger (any tracer) is
 *                 attached at the start (event.c says why), else
 *                 SIGRTMIN+6
 *   PROBE_KERNEL  unset or 1: sample kernel time too wherever the user may
 *                 (root, CAP_PERFMON, perf_event_paranoid <= 1), as perf
 *                 does; where the kernel refuses it (EACCES/EPERM), user
 *                 space only, silently (the recording says why: HELLO's
 *                 flags).  0: user space only.  Samples arrive by sigtrap,
 *                 as task work on the way back to user space, so an
 *                 overflow in a system call breaks nothing: 0 EINTR from
 *                 100,000 nanosleep and poll calls here (tests/86).  Under
 *                 F_SETSIG (PROBE_SIGNAL, or no sigtrap) the signal
 *                 interrupts the call (76 nanosleep and 35 poll EINTRs in
 *                 100,000 at 999 Hz), so kernel time is then sampled only
 *                 with PROBE_KERNEL=1.
 *   PROBE_TIMER   1: sample with per-thread CPU-time timers instead of perf
 *                 events (what happens anyway when perf_event_open is
 *                 refused); for testing the fallback
 *   PROBE_HANDLER_STATS  1: time the signal handler; each process says
 *                 at its end: mean, p50, p99, max (scripts/bench)
 *   PROBE_EVENT_ATTR  TYPE:CONFIG:CONFIG1:CONFIG2 (probe record -e rNNN or
 *                 PMU/.../): the event's perf_event_attr fields, PROBE_EVENT
 *                 being its name for the recording
 *   PROBE_EVENT_MODIFIER  u, k or uk (probe record -e EVENT:u...): user
 *                 space only, kernel only, or both; overrides PROBE_KERNEL
 *   PROBE_EVENT_MORE  the events sampled beside PROBE_EVENT (probe record
 *                 -e a,b), each sampled on its own at the same rate:
 *                 TYPE:CONFIG:CONFIG1:CONFIG2:MOD:NAME, separated by ';'
 *                 (MOD: empty, u, k or uk), at most 7
 *   PROBE_RING_PAGES  data pages of each thread's perf ring (probe record
 *                 -m; a power of two), default 1; also the size its arena
 *                 ring may grow to (32 KiB to 4 MiB; default 256 KiB)
 *   PROBE_NO_INHERIT  1 (probe record --no-inherit): profile this process
 *                 only; libprobe sets it to its pid, so that an exec keeps
 *                 profiling and the process's children (forked, or exec'd
 *                 from a fork) do not
 *   PROBE_ALLOC   BYTES: sample allocations too, one about every BYTES
 *                 bytes allocated (alloc.c; 1: every allocation); only
 *                 libprobe-alloc.so has the allocator's wrappers
 *   PROBE_ALLOC_ONLY  1 (probe record --alloc alone): no CPU event; the
 *                 allocations are the first event
 *   PROBE_UNWIND  fast (default: cfi.c's cached rules, libunwind for the
 *                 rest), libunwind (libunwind only), check (both, compared;
 *                 each process says at its end how many stacks differed)
 *
 * A bad value is reported in one line and replaced by its default: a
 * profiler that refuses to let the program start is worse than one that
 * samples at the default rate.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe.h"
#include "probe/events.h"

struct probe_config probe_cfg;

void probe_msg(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n = snprintf(buf, sizeof buf, "probe: ");

	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof buf - 2)
		n = (int)sizeof buf - 2;
	buf[n++] = '\n';
	/* One write so that lines of several processes do not interleave. */
	ssize_t r = write(STDERR_FILENO, buf, (size_t)n);
	(void)r;
}

/*
 * The same from pieces (strings, NULL last), without stdio: async-signal-
 * safe, for what may fail in our handler (lazy.c's start).
 */
void probe_say(const char *first, ...)
{
	char buf[1024];
	size_t n = 7;
	va_list ap;

	memcpy(buf, "probe: ", n);
	va_start(ap, first);
	for (const char *p = first; p; p = va_arg(ap, const char *)) {
		size_t k = strnlen(p, sizeof buf - 1 - n);

		memcpy(buf + n, p, k);
		n += k;
	}
	va_end(ap);
	buf[n++] = '\n';
	ssize_t r = write(STDERR_FILENO, buf, n);
	(void)r;
}

/* strerror's text without locale or allocation (a table): async-signal-safe. */
const char *probe_strerror(int err)
{
	const char *s = strerrordesc_np(err);

	return s ? s : "unknown error";
}

/* The events probe knows by name: the collector's table (include/probe/events.h). */
static const struct probe_event_def events[] = PROBE_EVENT_DEFS;
#define NEVENTS (sizeof events / sizeof events[0])

#define DEFAULT_FREQ 999u

/* A positive decimal integer, or 0 if s is not one. */
static uint64_t parse_u64(const char *s)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return 0;
	return v;
}

/* e, under the name it was asked by (perf's name, or its alias). */
static void set_event(const struct probe_event_def *e, const char *name)
{
	snprintf(probe_cfg.event_name, sizeof probe_cfg.event_name, "%s", name);
	probe_cfg.type = e->type;
	probe_cfg.config = e->config;
	probe_cfg.config1 = probe_cfg.config2 = 0;     /* PROBE_EVENT_ATTR's */
}

static const struct probe_event_def *cpu_clock(void)
{
	for (size_t i = 0; i < NEVENTS; i++)
		if (events[i].type == PERF_TYPE_SOFTWARE && events[i].config == PERF_COUNT_SW_CPU_CLOCK)
			return &events[i];
	return &events[0];      /* not reached: the table has it */
}

void probe_config_fallback_cpu_clock(void)
{
	set_event(cpu_clock(), "cpu-clock");
}

static int read_event_attr(const char *name);

static void read_event(void)
{
	const char *s = getenv("PROBE_EVENT");

	set_event(cpu_clock(), "cpu-clock");
	if (!s || !*s || read_event_attr(s))
		return;
	/* The names libprobe takes (record 1; the others come as an attr). */
	for (size_t i = 0; i < NEVENTS; i++) {
		if (events[i].record == 1 && (strcmp(s, events[i].name) == 0 ||
		    (events[i].alias && strcmp(s, events[i].alias) == 0))) {
			set_event(&events[i], s);
			return;
		}
	}
	probe_msg("unknown event '%.64s' in PROBE_EVENT; using cpu-clock "
		  "(known: cpu-clock, task-clock, page-faults, minor-faults, "
		  "major-faults, context-switches, cpu-migrations, cycles, "
		  "instructions, branches, branch-misses, cache-references, "
		  "cache-misses)", s);
}

static void read_rate(void)
{
	const char *fs = getenv("PROBE_FREQ");
	const char *ps = getenv("PROBE_PERIOD");

	probe_cfg.freq = 1;
	probe_cfg.value = DEFAULT_FREQ;
	if (ps && *ps) {
		uint64_t p = parse_u64(ps);
		if (p) {
			probe_cfg.freq = 0;
			probe_cfg.value = p;
			return;
		}
		probe_msg("PROBE_PERIOD='%.64s' is not a positive integer; "
			  "sampling at %u Hz instead", ps, DEFAULT_FREQ);
		return;
	}
	if (fs && *fs) {
		uint64_t f = parse_u64(fs);
		if (f && f <= 1000000) {
			probe_cfg.value = f;
			return;
		}
		probe_msg("PROBE_FREQ='%.64s' is not a frequency in Hz (1 to "
			  "1000000); sampling at %u Hz instead", fs, DEFAULT_FREQ);
	}
}

/* PROBE_SIGNAL's value as a signal number, or 0 if it names none we take. */
static int parse_signal(const char *s)
{
	int lo = SIGRTMIN, hi = SIGRTMAX;
	uint64_t v;

	/* The spellings of kill -l: SIGRTMIN+N, RTMIN+N, SIGPROF, PROF. */
	if (strncmp(s, "SIG", 3) == 0)
		s += 3;
	if (strcmp(s, "PROF") == 0)
		return SIGPROF;
	if (strcmp(s, "RTMIN") == 0)
		return lo;
	if (strncmp(s, "RTMIN+", 6) == 0) {
		v = parse_u64(s + 6);
		return v && v <= (uint64_t)(hi - lo) ? lo + (int)v : 0;
	}
	v = parse_u64(s);
	return v == SIGPROF || (v >= (uint64_t)lo && v <= (uint64_t)hi) ? (int)v : 0;
}

/* The default (SIGRTMIN+6) until event.c chooses; PROBE_SIGNAL's if valid. */
static void read_signal(void)
{
	const char *s = getenv("PROBE_SIGNAL");
	int lo = SIGRTMIN, hi = SIGRTMAX, sig;

	probe_cfg.signo = lo + 6 <= hi ? lo + 6 : lo;
	if (!s || !*s)
		return;
	sig = parse_signal(s);
	if (sig) {
		probe_cfg.signo = sig;
		probe_cfg.signal_set = 1;
		return;
	}
	probe_msg("PROBE_SIGNAL='%.32s' is not a realtime signal (%d to %d, "
		  "RTMIN+N) or PROF; ignoring it", s, lo, hi);
}

/* Kernel samples by default (see the header); the event decides later. */
static void read_kernel(void)
{
	const char *s = getenv("PROBE_KERNEL");

	probe_cfg.kernel = 1;
	probe_cfg.kernel_asked = 0;
	probe_cfg.kernel_why = PROBE_HELLO_KWHY_NONE;
	if (!s || !*s)
		return;
	if (strcmp(s, "1") == 0) {
		probe_cfg.kernel_asked = 1;
		return;
	}
	probe_cfg.kernel = 0;
	probe_cfg.kernel_why = PROBE_HELLO_KWHY_OFF;
	if (strcmp(s, "0") == 0)
		return;
	probe_msg("PROBE_KERNEL='%.32s' is not 0 or 1; sampling user space only",
		  s);
}

/* ---- probe record's perf spellings (-e rNNN / PMU/../ / :u :k, -m, --no-inherit) */

/* PROBE_EVENT_ATTR=TYPE:CONFIG:CONFIG1:CONFIG2 for the event named name. */
static int read_event_attr(const char *name)
{
	const char *s = getenv("PROBE_EVENT_ATTR");
	unsigned long long v[4] = { 0, 0, 0, 0 };
	char *end;
	int i;

	if (!s || !*s)
		return 0;
	for (i = 0; i < 4; i++) {
		errno = 0;
		v[i] = strtoull(s, &end, 0);
		if (errno || end == s || (*end && *end != ':'))
			break;
		s = *end ? end + 1 : end;
		if (!*end) {
			i++;
			break;
		}
	}
	if (i < 2 || *s || v[0] > 0xffffffffull) {
		probe_msg("PROBE_EVENT_ATTR='%.64s' is not TYPE:CONFIG[:CONFIG1:CONFIG2]; "
			  "using cpu-clock", getenv("PROBE_EVENT_ATTR"));
		return 1;
	}
	snprintf(probe_cfg.event_name, sizeof probe_cfg.event_name, "%s", name);
	probe_cfg.type = (uint32_t)v[0];
	probe_cfg.config = v[1];
	probe_cfg.config1 = v[2];
	probe_cfg.config2 = v[3];
	return 1;
}

/* One entry of PROBE_EVENT_MORE (see the header) into x; 0 if malformed. */
static int parse_extra(const char *s, size_t n, struct probe_xevent *x)
{
	char buf[256], *p = buf, *end;
	unsigned long long v[4];

	if (n >= sizeof buf)
		return 0;
	memcpy(buf, s, n);
	buf[n] = 0;
	for (int i = 0; i < 4; i++) {
		errno = 0;
		v[i] = strtoull(p, &end, 0);
		if (errno || end == p || *end != ':')
			return 0;
		p = end + 1;
	}
	x->modifier = 0;
	for (; *p && *p != ':'; p++) {
		if (*p == 'u')
			x->modifier |= PROBE_MOD_USER;
		else if (*p == 'k')
			x->modifier |= PROBE_MOD_KERNEL;
		else
			return 0;
	}
	if (*p != ':' || !p[1] || v[0] > 0xffffffffull)
		return 0;
	snprintf(x->name, sizeof x->name, "%s", p + 1);
	x->type = (uint32_t)v[0];
	x->config = v[1];
	x->config1 = v[2];
	x->config2 = v[3];
	return 1;
}

static void read_extra_events(void)
{
	const char *s = getenv("PROBE_EVENT_MORE"), *e;

	probe_cfg.nextra = 0;
	for (; s && *s; s = *e ? e + 1 : e) {
		e = strchr(s, ';');
		if (!e)
			e = s + strlen(s);
		if (probe_cfg.nextra == PROBE_EVENTS_MAX - 1 ||
		    !parse_extra(s, (size_t)(e - s),
				 &probe_cfg.extra[probe_cfg.nextra])) {
			probe_msg("PROBE_EVENT_MORE: '%.*s' is not TYPE:CONFIG:CONFIG1:"
				  "CONFIG2:MOD:NAME, or more than %u events; sampling "
				  "the ones before it", (int)(e - s > 64 ? 64 : e - s),
				  s, PROBE_EVENTS_MAX - 1);
			return;
		}
		probe_cfg.nextra++;
	}
}

static void read_record_opts(void)
{
	const char *s = getenv("PROBE_EVENT_MODIFIER");
	uint64_t v;
	char pid[24];

	if (s && *s) {
		if (strcmp(s, "u") == 0)
			probe_cfg.modifier = PROBE_MOD_USER;
		else if (strcmp(s, "k") == 0)
			probe_cfg.modifier = PROBE_MOD_KERNEL;
		else if (strcmp(s, "uk") == 0 || strcmp(s, "ku") == 0)
			probe_cfg.modifier = PROBE_MOD_USER | PROBE_MOD_KERNEL;
		else
			probe_msg("PROBE_EVENT_MODIFIER='%.32s' is not u, k or uk; "
				  "ignoring it", s);
		if (probe_cfg.modifier) {
			probe_cfg.kernel = !!(probe_cfg.modifier & PROBE_MOD_KERNEL);
			probe_cfg.kernel_asked = probe_cfg.kernel;
			probe_cfg.kernel_why = probe_cfg.kernel ? PROBE_HELLO_KWHY_NONE :
					       PROBE_HELLO_KWHY_USER;
		}
	}
	s = getenv("PROBE_RING_PAGES");
	if (s && *s) {
		v = parse_u64(s);
		if (v && !(v & (v - 1)) && v <= (1u << 20))
			probe_cfg.ring_pages = (unsigned)v;
		else
			probe_msg("PROBE_RING_PAGES='%.32s' is not a power of two from 1 "
				  "to 1048576; using 1", s);
	}
	/*
	 * probe record's command starts at once, not at its first need
	 * (lazy.c): it is the one process whose end wait() tells probe
	 * record, so an end that says nothing (a raw exit_group, a SIGKILL, a
	 * raw exec) is still told under its name.  "1" becomes its pid, which
	 * its exec'd images keep and its children do not.
	 */
	s = getenv("PROBE_COMMAND");
	if (s && *s) {
		snprintf(pid, sizeof pid, "%ld", (long)getpid());
		if (strcmp(s, "1") == 0)
			setenv("PROBE_COMMAND", pid, 1);
		probe_cfg.eager |= strcmp(s, "1") == 0 || strcmp(s, pid) == 0;
	}
	s = getenv("PROBE_NO_INHERIT");
	if (s && *s && strcmp(s, "0") != 0) {
		snprintf(pid, sizeof pid, "%ld", (long)getpid());
		if (strcmp(s, "1") == 0) {
			probe_cfg.no_inherit = 1;
			setenv("PROBE_NO_INHERIT", pid, 1);
		} else {
			probe_cfg.no_inherit = 1;
			probe_cfg.not_ours = strcmp(s, pid) != 0;
		}
	}
}

/* SIGNAL CONTEXT safe. */
int probe_signal_from_event(int sig, const siginfo_t *si)
{
	if (!si || sig != probe_cfg.signo)
		return 0;
	if (probe_cfg.trap)
		return si->si_code == TRAP_PERF;
	/*
	 * F_SETSIG signals carry the poll band's code (POLL_IN, POLL_HUP).
	 * Not SI_KERNEL (also > 0): that is the kernel's own, setitimer's
	 * SIGPROF for one, the program's when SIGPROF is ours.
	 */
	return si->si_code >= POLL_IN && si->si_code <= POLL_HUP;
}

uint64_t probe_nominal_period(void)
{
	if (!probe_cfg.freq)
		return probe_cfg.value ? probe_cfg.value : 1;
	return probe_cfg.value ? 1000000000ull / probe_cfg.value : 1000000ull;
}

/*
 * PROBE_ALLOC=BYTES: the mean sampling interval of allocations (alloc.c);
 * PROBE_ALLOC_ONLY=1 beside it: no CPU event, the alloc event is the first.
 */
static void read_alloc(void)
{
	const char *s = getenv("PROBE_ALLOC");
	char *end;
	unsigned long long v;

	probe_cfg.alloc = 0;
	if (!s || !*s)
		return;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v == 0 || v > (1ull << 40) || *s == '-') {
		probe_msg("PROBE_ALLOC='%.64s' is not a number of bytes from 1 to 2^40; "
			  "using 524288 (512 KiB)", s);
		v = 524288;
	}
	probe_cfg.alloc = v;
	s = getenv("PROBE_ALLOC_ONLY");
	if (s && strcmp(s, "1") == 0) {
		probe_cfg.type = PROBE_EVENT_ALLOC;
		probe_cfg.config = v;
		probe_cfg.freq = 0;
		probe_cfg.value = v;
		snprintf(probe_cfg.event_name, sizeof probe_cfg.event_name, "alloc");
		probe_cfg.nextra = 0;
		probe_cfg.timer = 0;
	}
}

void probe_config_read(void)
{
	const char *s;

	memset(&probe_cfg, 0, sizeof probe_cfg);
	s = getenv("PROBE_SOCKET");
	if (s && *s) {
		if (strlen(s) >= sizeof probe_cfg.socket_path)
			probe_msg("PROBE_SOCKET path is too long for a Unix "
				  "socket (%zu bytes, at most %zu); ignoring it",
				  strlen(s), sizeof probe_cfg.socket_path - 1);
		else
			snprintf(probe_cfg.socket_path,
				 sizeof probe_cfg.socket_path, "%s", s);
	}
	s = getenv("PROBE_OUTPUT");
	if (s && *s)
		snprintf(probe_cfg.output_path, sizeof probe_cfg.output_path,
			 "%s", s);
	s = getenv("PROBE_APPEND");
	probe_cfg.append = s && strcmp(s, "1") == 0;
	read_event();
	read_rate();
	read_signal();
	read_kernel();
	read_record_opts();
	read_extra_events();
	s = getenv("PROBE_TIMER");
	probe_cfg.timer = s && strcmp(s, "1") == 0;
	s = getenv("PROBE_OFFCPU");
	probe_cfg.offcpu = s && strcmp(s, "1") == 0;
	read_alloc();
	if (probe_cfg.nextra > PROBE_EVENTS_MAX - 1 - (probe_cfg.offcpu != 0) -
			       (probe_cfg.alloc != 0))
		/* off-cpu and alloc are one more each */
		probe_cfg.nextra = PROBE_EVENTS_MAX - 1 - (probe_cfg.offcpu != 0) -
				   (probe_cfg.alloc != 0);
	s = getenv("PROBE_HANDLER_STATS");
	probe_cfg.handler_stats = s && strcmp(s, "1") == 0;
	s = getenv("PROBE_LAZY");
	probe_cfg.eager |= s && strcmp(s, "0") == 0;
	s = getenv("PROBE_UNWIND");
	probe_cfg.unwind = !s || !*s || strcmp(s, "fast") == 0 ? PROBE_UNWIND_FAST :
			   strcmp(s, "libunwind") == 0 ? PROBE_UNWIND_LIBUNWIND :
			   strcmp(s, "check") == 0 ? PROBE_UNWIND_CHECK : -1;
	if (probe_cfg.unwind < 0) {
		probe_msg("PROBE_UNWIND='%.32s' is not fast, libunwind or check; "
			  "using fast", s);
		probe_cfg.unwind = PROBE_UNWIND_FAST;
	}
}
