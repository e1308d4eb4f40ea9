/*
 * test_perfring - perf events on another process, read from outside
 * (collector/outside/perfring.c; tests/09-perfring.t).  A child of ours,
 * held on a pipe, spins in spin_here for 0.3 s of CPU (cpu-clock at
 * 999 Hz) while we read its CPU rings:
 *   - samples are the child's, each with a user callchain (frame pointers:
 *     this file is built with them), user registers and a stack copy
 *     from SP whose first word is readable;
 *   - most samples' IP is in spin_here, and their callchain's second
 *     user entry returns into main's caller chain (a frame pointer walk);
 *   - the child's exit comes as an EXIT record; records that did not
 *     decode: none;
 *   - translated into the wire's frames (collector/outside/translate.c),
 *     each decodes (wire_decode.c): the child's HELLO first, with its exe,
 *     a MAP of this executable with the loader's bias (read in /proc: the
 *     plugin's MMAP2 came first) and one of the plugin, SAMPLES whose IP is
 *     the record's (with a caller), and EXIT; with a path, written there as a recording
 *     (collector/session/recfile.c) for tests/09 to report on.
 * Skipped, with the reason, where the kernel gives no perf events.
 */
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <link.h>

#include "outside/perfring.h"
#include "session/recfile.h"
#include "tap.h"
#include "outside/translate.h"
#include "data/wire_decode.h"

static volatile uint64_t sink;

static __attribute__((noinline)) void spin_here(double seconds)
{
	struct timespec a, b;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 100000; i++)
			sink += (uint64_t)i * 7;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	} while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < seconds);
}

struct seen {
	struct outside *tr;
	struct recfile *out;    /* NULL: no recording asked for */
	struct probe_scratch sc;
	unsigned frames, bad_frames, before_hello, hellos, exe_ok, maps_ok, plugin_maps,
		 sample_frames, ip_ok, exit_frames;
	uint64_t base;          /* this executable's bias (the loader's) */
	uint64_t ips_rec, ips_frames;   /* the child's samples' IPs, added up */
	pid_t child;
	unsigned samples, ours, with_user_chain, with_regs, with_stack, in_spin, exits;
	unsigned chain_two;
	uint64_t spin_lo, spin_hi;
};

/* A frame of translate.c's, decoded as a recording's would be. */
static void on_frame(void *ctx, const uint8_t *f, size_t len)
{
	struct seen *s = ctx;
	struct probe_msg m;
	char err[PROBE_ERR_MAX];
	s->frames++;
	if (s->out)
		recfile_frame(s->out, f, len);
	if (probe_decode_frame(f, len, &m, &s->sc, err) < 0) {
		if (s->bad_frames++ == 0)
			diag("a frame did not decode: %s", err);
		return;
	}
	if (m.pid != (uint32_t)s->child)
		return;
	if (m.type != PROBE_F_HELLO && !s->hellos)
		s->before_hello++;
	if (m.type == PROBE_F_HELLO) {
		char self[4096];
		ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
		self[k > 0 ? k : 0] = 0;
		s->hellos++;
		s->exe_ok += strcmp(m.u.hello.exe, self) == 0;
	} else if (m.type == PROBE_F_MAP) {
		s->maps_ok += m.u.map.start <= s->spin_lo && s->spin_lo < m.u.map.end &&
			      m.u.map.bias == s->base;
		size_t l = strlen(m.u.map.path);
		s->plugin_maps += l >= 17 && strcmp(m.u.map.path + l - 17, "libgt_plugin_a.so") == 0;
	} else if (m.type == PROBE_F_SAMPLES) {
		struct probe_sample ps;
		while (probe_samples_next(&m, &ps)) {
			s->sample_frames++;
			s->ip_ok += ps.nframes >= 2;
			s->ips_frames += ps.frames[0];
		}
	} else if (m.type == PROBE_F_EXIT) {
		s->exit_frames++;
	}
}

static int base_of(struct dl_phdr_info *i, size_t size, void *arg)
{
	(void)size;
	if (i->dlpi_name && i->dlpi_name[0])
		return 0;
	*(uint64_t *)arg = i->dlpi_addr;
	return 1;
}

static int on_rec(void *ctx, const struct perfring_rec *r)
{
	struct seen *s = ctx;
	outside_record(s->tr, r);
	if (r->kind == PERFRING_EXIT && r->pid == (uint32_t)s->child)
		s->exits++;
	if (r->kind != PERFRING_SAMPLE)
		return 0;
	s->samples++;
	if (r->pid != (uint32_t)s->child)
		return 0;
	s->ours++;
	s->ips_rec += r->u.sample.ip;
	uint32_t users;
	perfring_user_chain(r, &users);
	s->with_user_chain += users > 0;
	s->chain_two += users >= 2;
	s->with_regs += r->u.sample.have_regs && r->u.sample.regs[PERFRING_REG_IP] == r->u.sample.ip;
	s->with_stack += r->u.sample.stack_len >= 8;
	s->in_spin += r->u.sample.ip >= s->spin_lo && r->u.sample.ip < s->spin_hi;
	return 0;
}

int main(int argc, char **argv)
{
	int go[2];
	if (pipe(go) < 0)
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		char self[4096], plugin[4200];
		ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
		self[k > 0 ? k : 0] = 0;
		snprintf(plugin, sizeof plugin, "%s/libgt_plugin_a.so", dirname(self));
		if (!dlopen(plugin, RTLD_NOW))
			_exit(3);       /* said by check 1 */
		spin_here(0.3);
		_exit(0);
	}
	close(go[0]);
	struct perfring_opts o = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
				   .freq = 1, .value = 999, .stack_bytes = 8192 };
	int task = pid;
	struct perfring *pr = perfring_open(&task, 1, &o);
	if (!pr) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		printf("1..0 # SKIP no perf events here (perfring_open said why)\n");
		return 0;
	}
	plan(11);
	struct seen s = { .child = pid, .spin_lo = (uint64_t)(uintptr_t)spin_here,
			  .spin_hi = (uint64_t)(uintptr_t)spin_here + 256 };
	s.tr = outside_new(&o, "cpu-clock", on_frame, &s);
	struct recfile rec;
	if (argc > 1 && recfile_open(&rec, argv[1]) == 0)
		s.out = &rec;
	probe_scratch_init(&s.sc);
	dl_iterate_phdr(base_of, &s.base);
	if (write(go[1], "g", 1) != 1)
		return 1;
	int st = 0, done_child = 0;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* 60 s at most, by the clock: a loaded machine runs the child slowly. */
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 60)
			break;
		struct pollfd pf[64];
		size_t n = perfring_nrings(pr);
		for (size_t i = 0; i < n && i < 64; i++)
			pf[i] = (struct pollfd){ .fd = perfring_fd(pr, i), .events = POLLIN };
		poll(pf, n < 64 ? n : 64, 20);
		for (size_t i = 0; i < n; i++)
			perfring_read(pr, i, on_rec, &s);
		if (!done_child && waitpid(pid, &st, WNOHANG) == pid)
			done_child = 1;
		else if (done_child)
			break;          /* one more round after it ended: its EXIT */
	}
	for (size_t i = 0; i < perfring_nrings(pr); i++)
		perfring_read(pr, i, on_rec, &s);
	ok(done_child && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "the child ran and exited 0 (3: it could not dlopen libgt_plugin_a.so): %d",
	   WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	/* 0.3 s of CPU at 999 Hz: about 300; 150 leaves room for a slow VM. */
	ok(s.ours >= 150 && s.ours == s.samples, "%u samples, all the child's (%u in all)",
	   s.ours, s.samples);
	ok(s.with_user_chain == s.ours, "each with a user callchain (%u)", s.with_user_chain);
	ok(s.with_regs == s.ours && s.with_stack == s.ours,
	   "each with user registers (IP as the sample's: %u) and a stack copy (%u)",
	   s.with_regs, s.with_stack);
	ok(s.in_spin * 10 >= s.ours * 9, "spin_here holds %u of %u IPs (>= 90 %%)", s.in_spin, s.ours);
	ok(s.chain_two * 10 >= s.ours * 9, "%u callchains go past the leaf (frame pointers)",
	   s.chain_two);
	ok(s.exits >= 1 && perfring_bad(pr) == 0, "its EXIT record came (%u); %llu records did "
	   "not decode", s.exits, (unsigned long long)perfring_bad(pr));
	ok(s.frames > 0 && s.bad_frames == 0, "translated: %u frames, each decodes (%u did not)",
	   s.frames, s.bad_frames);
	ok(s.hellos == 1 && s.before_hello == 0 && s.exe_ok == 1,
	   "the child's HELLO came first (%u frames before it), naming this executable", s.before_hello);
	ok(s.maps_ok == 1 && s.plugin_maps == 1,
	   "a MAP of spin_here's code with the loader's bias (%llx), once; the plugin's once (%u)",
	   (unsigned long long)s.base, s.plugin_maps);
	ok(s.sample_frames == s.ours && s.ip_ok == s.ours && s.ips_frames == s.ips_rec &&
	   s.exit_frames == 1, "%u samples (of %u), %u with a caller, the records' IPs first "
	   "(%s); its EXIT (%u)", s.sample_frames, s.ours, s.ip_ok,
	   s.ips_frames == s.ips_rec ? "the same" : "not the same", s.exit_frames);
	if (s.out && recfile_close(s.out) < 0)
		diag("the recording %s could not be written", argv[1]);
	outside_free(s.tr);
	probe_scratch_free(&s.sc);
	perfring_close(pr);
	return done();
}
