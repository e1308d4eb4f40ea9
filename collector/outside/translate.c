/*
 * translate.c - perf's records as the wire's frames: translate.h says
 * what.  Each frame is built in one buffer (PROBE_FRAME_MAX) and handed to
 * emit at once; a process's MAPs are kept so that a fork's child, and a
 * HELLO sent late, can have them.
 */
#include "outside/translate.h"

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "hashtab.h"

#include "ingest/cfi_learn.h"
#include "outside/elfmap.h"
#include "probe/wire.h"
#include "outside/unwind_copy.h"
#include "util.h"

/* A process's name when the events started (-a): perf's synthesized COMMs. */
struct oname {
	uint32_t pid;
	char comm[16];
	UT_hash_handle hh;
};

struct omap {
	uint64_t start, end, bias, pgoff;
	char *path;
};

struct otid {                   /* a thread seen */
	uint32_t tid;
	int named;                      /* its THREAD frame was sent */
	int active;                     /* a record of its own came: it ran */
	int gone;                       /* its EXIT came */
	uint64_t born;                  /* its FORK's time (0: there before us) */
	uint64_t out;                   /* off the CPU since (0: on it) */
	uint64_t acc;                   /* off-CPU ns not yet sampled (see wait_add) */
	uint64_t *stack;                /* where it left the CPU (switch_stacks) */
	uint32_t nstack;
	UT_hash_handle hh;
};

struct oproc {
	uint32_t pid, ppid;
	struct otid *tids;
	int hello;                      /* HELLO sent for its current image */
	int seeded;                     /* its mappings before ours are known:
					   a fork's copy, or /proc read */
	struct omap *maps;
	size_t nmaps, cap;
	uint64_t samples;
	uint32_t threads;
	uint64_t exited;                /* its EXIT's time (kept a while: see on_exit_rec) */
	int exec_pending;               /* exec'd: its HELLO at its next record */
	char comm[16];                  /* its name as COMM records said it (or its
					   parent's, a fork's), for one gone from /proc */
	UT_hash_handle hh;
};


struct outside {
	struct perfring_opts o;
	struct oname *names;            /* outside_seed_names */
	char *event;
	outside_emit_fn emit;
	void *ctx;
	struct oproc *procs;
	uint64_t purged;                /* when exited processes were last dropped */
	struct outside_stats st;
	uint64_t start;                 /* when the events started (off-CPU's origin) */
	uint64_t wait_period;           /* off-CPU ns per sample (see wait_add) */
	uint8_t *buf;                   /* PROBE_FRAME_MAX: one frame */
};

/* ---- processes ---------------------------------------------------------- */

static struct oproc *proc_get(struct outside *x, uint32_t pid)
{
	struct oproc *p;
	HASH_FIND(hh, x->procs, &pid, sizeof pid, p);
	if (!p) {
		struct oname *o;

		p = xcalloc(1, sizeof(*p));
		p->pid = pid;
		p->threads = 1;
		/* There at the start: its name then (its children's, until exec). */
		HASH_FIND(hh, x->names, &pid, sizeof pid, o);
		if (o)
			memcpy(p->comm, o->comm, sizeof p->comm);
		HASH_ADD(hh, x->procs, pid, sizeof p->pid, p);
	}
	return p;
}

static void maps_clear(struct oproc *p)
{
	for (size_t i = 0; i < p->nmaps; i++)
		free(p->maps[i].path);
	p->nmaps = 0;
}

static void proc_drop(struct outside *x, struct oproc *p)
{
	struct otid *t, *tmp;
	HASH_ITER(hh, p->tids, t, tmp) {
		HASH_DEL(p->tids, t);
		free(t->stack);
		free(t);
	}
	HASH_DEL(x->procs, p);
	maps_clear(p);
	free(p->maps);
	free(p);
}

/* /proc/PID/NAME into buf (NUL-terminated, n bytes at most): its length. */
static size_t proc_read(uint32_t pid, const char *name, char *buf, size_t n)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%u/%s", pid, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t k = fd >= 0 ? read(fd, buf, n - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[k > 0 ? k : 0] = 0;
	return k > 0 ? (size_t)k : 0;
}

/* ---- frames ------------------------------------------------------------- */

static void send(struct outside *x, struct probe_wbuf *w, size_t at)
{
	probe_frame_end(w, at);
	if (w->ok)
		x->emit(x->ctx, w->p, w->len);
}

/* Its parent, from /proc/PID/stat, when no FORK record said it. */
static void ppid_read(struct oproc *p)
{
	char stat[512];
	const char *rp = proc_read(p->pid, "stat", stat, sizeof stat) ? strrchr(stat, ')') : NULL;
	unsigned ppid;
	if (!p->ppid && rp && sscanf(rp, ") %*c %u", &ppid) == 1)
		p->ppid = ppid;
}

/* HELLO: what /proc says of pid now (a process gone: what is known). */
static void send_hello(struct outside *x, struct oproc *p, const char *comm_hint)
{
	ppid_read(p);
	char exe[4096], comm[64], args[8192], link[64];
	struct probe_wbuf w;
	snprintf(link, sizeof link, "/proc/%u/exe", p->pid);
	ssize_t k = readlink(link, exe, sizeof exe - 1);
	exe[k > 0 ? k : 0] = 0;
	if (!comm_hint && p->comm[0])
		comm_hint = p->comm;
	if (!proc_read(p->pid, "comm", comm, sizeof comm) && comm_hint)
		snprintf(comm, sizeof comm, "%s", comm_hint);
	if (!comm[0]) {         /* gone, and no record named it: as at the start */
		struct oname *o;
		HASH_FIND(hh, x->names, &p->pid, sizeof p->pid, o);
		if (o)
			snprintf(comm, sizeof comm, "%s", o->comm);
	}
	comm[strcspn(comm, "\n")] = 0;
	size_t alen = proc_read(p->pid, "cmdline", args, sizeof args);
	probe_wbuf_init(&w, x->buf, PROBE_FRAME_MAX);
	size_t at = probe_frame_begin(&w, PROBE_F_HELLO, p->pid);
	probe_put_u32(&w, PROBE_WIRE_VERSION);
	probe_put_u32(&w, p->ppid);
	probe_put_u32(&w, x->o.type);
	probe_put_u64(&w, x->o.config);
	probe_put_u8(&w, x->o.freq != 0);
	probe_put_u64(&w, x->o.value);
	probe_put_u64(&w, now_ns());
	probe_put_str(&w, x->event);
	probe_put_str(&w, exe);
	probe_put_str(&w, comm);
	uint16_t argc = 0;
	for (size_t i = 0; i < alen && argc < PROBE_MAX_ARGS; i += strlen(args + i) + 1)
		argc++;
	probe_put_u16(&w, argc);
	for (size_t i = 0, n = 0; n < argc; i += strlen(args + i) + 1, n++)
		probe_put_str(&w, args + i);
	if (x->o.switches) {    /* off-CPU time: the extra event 1 */
		probe_put_u8(&w, 1);
		probe_put_u32(&w, PROBE_EVENT_OFFCPU);
		probe_put_u64(&w, PROBE_OFFCPU_SWITCHES |
				  (x->o.switch_stacks ? PROBE_OFFCPU_SWITCH_STACKS : 0));
		probe_put_str(&w, "off-cpu");
	}
	/* The frame's u16 flags: was kernel time sampled (wire.h). */
	unsigned fl = PROBE_HELLO_KSTATE | (x->o.kernel ? PROBE_HELLO_KERNEL :
		(unsigned)PROBE_HELLO_KWHY_DENIED << PROBE_HELLO_KWHY_SHIFT);
	if (w.ok) {
		w.p[at + 6] = (uint8_t)fl;
		w.p[at + 7] = (uint8_t)(fl >> 8);
	}
	send(x, &w, at);
	p->hello = 1;
}

static void send_map(struct outside *x, uint32_t pid, const struct omap *m)
{
	struct probe_wbuf w;
	probe_wbuf_init(&w, x->buf, PROBE_FRAME_MAX);
	size_t at = probe_frame_begin(&w, PROBE_F_MAP, pid);
	probe_put_u64(&w, m->start);
	probe_put_u64(&w, m->end);
	probe_put_u64(&w, m->bias);
	probe_put_u64(&w, m->pgoff);
	probe_put_u8(&w, 0);            /* no build id: the reader reads the file */
	probe_put_str(&w, m->path);
	send(x, &w, at);
}

/*
 * The vDSO mapped at start (its names and frame rules are read in ours:
 * util.h's own_vdso): its bias (its first PT_LOAD's vaddr is at start).
 */
static int vdso_bias(uint64_t start, uint64_t *bias)
{
	Elf64_Ehdr eh;
	const uint8_t *vdso;
	size_t vdso_len;
	if (own_vdso(&vdso, &vdso_len) < 0 || vdso_len < sizeof eh)
		return -1;
	memcpy(&eh, vdso, sizeof eh);
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (eh.e_phoff + (i + 1) * sizeof ph > vdso_len)
			return -1;
		memcpy(&ph, vdso + eh.e_phoff + i * sizeof ph, sizeof ph);
		if (ph.p_type == PT_LOAD && ph.p_offset == 0) {
			*bias = start - ph.p_vaddr;
			return 0;
		}
	}
	return -1;
}

/* An executable file mapping (or the vDSO): kept, and said when its HELLO was. */
static void add_map(struct outside *x, struct oproc *p, uint64_t start, uint64_t end,
		    uint64_t pgoff, const char *path)
{
	struct omap m = { start, end, 0, pgoff, NULL };
	/*
	 * Already known: a process's first record reads /proc/PID/maps, and
	 * the MMAP2 record of an object mapped just before it comes after.
	 */
	for (size_t i = 0; i < p->nmaps; i++)
		if (p->maps[i].start == start && p->maps[i].end == end &&
		    p->maps[i].pgoff == pgoff && !strcmp(p->maps[i].path, path))
			return;
	/* The file as the process sees it (another mount namespace), then as we do. */
	char root[64 + 4096];
	snprintf(root, sizeof root, "/proc/%u/root%s", p->pid, path);
	if (!strcmp(path, "[vdso]") ? vdso_bias(start, &m.bias) < 0 :
	    path[0] != '/' || (elfmap_bias(root, start, pgoff, &m.bias) < 0 &&
			       elfmap_bias(path, start, pgoff, &m.bias) < 0))
		return;         /* anonymous, or not ELF: no symbols to give */
	m.path = xstrdup(path);
	p->maps = xgrow(p->maps, &p->cap, p->nmaps + 1, sizeof(*p->maps));
	p->maps[p->nmaps++] = m;
	if (p->hello)
		send_map(x, p->pid, &m);
}

static int has_map(const struct oproc *p, uint64_t start)
{
	for (size_t i = 0; i < p->nmaps; i++)
		if (p->maps[i].start == start)
			return 1;
	return 0;
}

/* The executable file mappings /proc/PID/maps lists now (the vDSO too). */
static void maps_from_proc(struct outside *x, struct oproc *p)
{
	char path[64], line[4096 + 128], file[4096];
	snprintf(path, sizeof path, "/proc/%u/maps", p->pid);
	FILE *f = fopen(path, "re");
	while (f && fgets(line, sizeof line, f)) {
		unsigned long long lo, hi, off;
		char perms[8];
		file[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &lo, &hi, perms, &off,
			   file) == 5 && perms[2] == 'x' && !has_map(p, lo) &&
		    (file[0] == '/' || !strcmp(file, "[vdso]")))
			add_map(x, p, lo, hi, off, file);
	}
	if (f)
		fclose(f);
	p->seeded = 1;
}

/* Before a process's first frame: its HELLO, then the MAPs it has. */
static void ensure_hello(struct outside *x, struct oproc *p, const char *comm)
{
	if (p->hello)
		return;
	p->exec_pending = 0;
	if (!p->seeded)         /* MMAP2 records tell only what came after us */
		maps_from_proc(x, p);
	send_hello(x, p, comm);
	for (size_t i = 0; i < p->nmaps; i++)
		send_map(x, p->pid, &p->maps[i]);
}

/* ---- records ------------------------------------------------------------ */

static struct otid *thread_get(struct oproc *p, uint32_t tid)
{
	struct otid *t;
	HASH_FIND(hh, p->tids, &tid, sizeof tid, t);
	if (!t) {
		t = xcalloc(1, sizeof(*t));
		t->tid = tid;
		HASH_ADD(hh, p->tids, tid, sizeof t->tid, t);
	}
	return t;
}

/* tid's name is said (now, or before): 1 when it was not yet. */
static int tid_seen(struct oproc *p, uint32_t tid)
{
	struct otid *t = thread_get(p, tid);
	int was = t->named;
	t->named = 1;
	return !was;
}

static void send_thread(struct outside *x, uint32_t pid, uint32_t tid, const char *name)
{
	struct probe_wbuf w;
	probe_wbuf_init(&w, x->buf, PROBE_FRAME_MAX);
	size_t at = probe_frame_begin(&w, PROBE_F_THREAD, pid);
	probe_put_u32(&w, tid);
	probe_put_str(&w, name);
	send(x, &w, at);
}

/* A thread that was there before us (no COMM record names it): /proc does. */
static void thread_named(struct outside *x, struct oproc *p, uint32_t tid)
{
	char name[64], rel[64];
	if (!tid_seen(p, tid))
		return;
	snprintf(rel, sizeof rel, "task/%u/comm", tid);
	if (!proc_read(p->pid, rel, name, sizeof name))
		return;
	name[strcspn(name, "\n")] = 0;
	send_thread(x, p->pid, tid, name);
}

/* The user part of the kernel's callchain, IP first, into f: its count. */
static uint32_t user_frames(const struct perfring_rec *r, uint64_t *f)
{
	uint32_t n;
	const uint64_t *u = perfring_user_chain(r, &n);
	if (n > PROBE_MAX_FRAMES) {     /* cut: its outermost frame the mark */
		n = PROBE_MAX_FRAMES;
		memcpy(f, u, (n - 1) * sizeof(*f));
		f[n - 1] = PROBE_FRAME_TRUNCATED;
	} else if (n) {
		memcpy(f, u, n * sizeof(*f));
	}
	return n;
}

struct rule_ctx {
	struct oproc *p;
};

/* The frame rule at addr: its object's (cfi_learn.c), or by frame pointer. */
static uint64_t rule_at(void *ctx, uint64_t addr)
{
	struct oproc *p = ((struct rule_ctx *)ctx)->p;
	for (size_t i = 0; i < p->nmaps; i++) {
		struct omap *m = &p->maps[i];
		if (addr < m->start || addr >= m->end)
			continue;
		/* The vDSO's too: cfi_learn.c reads ours, the same. */
		struct cfi_map cm = { .start = m->start, .end = m->end, .bias = m->bias,
				      .path = m->path };
		return cfi_rule_at(&cm, (pid_t)p->pid, addr);
	}
	return probe_rule_pack(PROBE_RULE_NONE, 0, 0, 0);      /* JIT, vDSO: no file */
}

/*
 * The sample's stack: the copy walked with the objects' CFI where the
 * copy is there, else (or where that walk stops short of the frame-pointer
 * chain's length) the kernel's frame-pointer chain.  A walk cut by the
 * copy's size ends in PROBE_FRAME_TRUNCATED.
 */
static uint32_t sample_frames(struct outside *x, struct oproc *p,
			      const struct perfring_rec *r, uint64_t *f)
{
	uint64_t g[PROBE_MAX_FRAMES];
	uint32_t nfp = user_frames(r, f);
	if (!x->o.stack_bytes || !r->u.sample.have_regs)
		return nfp;
	struct rule_ctx rc = { p };
	int cut, complete;
	int n = unwind_copy(r, x->o.stack_bytes, rule_at, &rc, g, PROBE_MAX_FRAMES - 1,
			    &cut, &complete);
	if (n <= 0 || (!complete && !cut && (uint32_t)n < nfp)) {
		x->st.fp += nfp != 0;
		return nfp;
	}
	x->st.dwarf++;
	if (cut || (n == PROBE_MAX_FRAMES - 1 && !complete)) {
		g[n++] = PROBE_FRAME_TRUNCATED;
		x->st.truncated++;
	}
	memcpy(f, g, (size_t)n * sizeof(*f));
	return (uint32_t)n;
}

/* The kernel part of the callchain (kernel frames allowed), into f: its count. */
static uint32_t kernel_frames(const struct perfring_rec *r, uint64_t *f, uint32_t max)
{
	const uint64_t *c = r->u.sample.chain;
	uint32_t nc = r->u.sample.nchain, n = 0, i = 0;
	while (i < nc && c[i] != (uint64_t)PERF_CONTEXT_KERNEL)
		i++;
	for (i++; i < nc && c[i] < (uint64_t)PERF_CONTEXT_MAX && n < max; i++)
		f[n++] = c[i];
	return n;
}

/* One sample of tid in p: a SAMPLES frame of one, its frames IP first. */
static void send_sample(struct outside *x, struct oproc *p, uint32_t tid, uint64_t time,
			uint64_t weight, unsigned ev, const uint64_t *f, uint32_t n)
{
	struct probe_wbuf w;
	uint64_t prev = 0;
	thread_named(x, p, tid);
	probe_wbuf_init(&w, x->buf, PROBE_FRAME_MAX);
	size_t at = probe_frame_begin(&w, PROBE_F_SAMPLES, p->pid);
	probe_put_u64(&w, time);
	probe_put_uv(&w, 1);
	probe_put_uv(&w, tid);
	probe_put_uv(&w, 0);
	probe_put_uv(&w, weight);
	probe_put_uv(&w, ev);
	probe_put_uv(&w, n);
	for (uint32_t i = 0; i < n; i++) {
		probe_put_sv(&w, (int64_t)(f[i] - prev));
		prev = f[i];
	}
	send(x, &w, at);
	p->samples++;
}

/* A switch off the CPU's stack: kept until the thread is back on it. */
static void keep_stack(struct oproc *p, uint32_t tid, const uint64_t *f, uint32_t n)
{
	struct otid *t = thread_get(p, tid);
	if (!t->stack)
		t->stack = xcalloc(PROBE_MAX_FRAMES, sizeof(*t->stack));
	memcpy(t->stack, f, n * sizeof(*f));
	t->nstack = n;
	t->active = 1;
}

static void on_sample(struct outside *x, const struct perfring_rec *r)
{
	uint64_t f[PROBE_MAX_FRAMES], k[PROBE_MAX_FRAMES];
	uint32_t nu, nk = x->o.kernel ? kernel_frames(r, k, PROBE_MAX_FRAMES / 2) : 0;
	int cs = r->u.sample.cs;
	/*
	 * Idle; a task at the very end of its exit, its pid already released
	 * (the kernel says -1: nobody to show it under); or a kernel thread
	 * with no kernel frames.
	 */
	if (r->pid == 0 || r->pid == UINT32_MAX ||
	    (!nk && !r->u.sample.have_regs && !perfring_user_chain(r, &nu))) {
		x->st.dropped += !cs;
		return;
	}
	struct oproc *p = proc_get(x, r->pid);
	ensure_hello(x, p, NULL);
	uint32_t n = sample_frames(x, p, r, f);
	if (nk) {               /* the kernel's frames first: they are the innermost */
		n = n + nk > PROBE_MAX_FRAMES ? PROBE_MAX_FRAMES - nk : n;
		memmove(f + nk, f, n * sizeof(*f));
		memcpy(f, k, nk * sizeof(*f));
		n += nk;
	}
	if (n == 0) {
		x->st.dropped += !cs;
		return;
	}
	if (cs)
		keep_stack(p, r->tid, f, n);
	else
		send_sample(x, p, r->tid, r->time, r->u.sample.period, 0, f, n);
}

/*
 * Off-CPU time, sampled as libprobe samples it (preload/offcpu.c): a wait
 * at least a period long is a sample of its own length; shorter ones add
 * up, and the one that brings the sum to a period is sampled with the
 * sum, under its own stack.  So a thread that switches often makes about
 * one sample per period of waiting, not one per switch.  all: the sum
 * too, whatever it is (the thread's last wait).
 */
static void wait_add(struct outside *x, struct oproc *p, struct otid *t, uint64_t time,
		     uint64_t ns, int all)
{
	static const uint64_t unseen = PROBE_FRAME_UNSEEN;
	if (ns < x->wait_period || all) {
		t->acc += ns;
		if (t->acc < x->wait_period && !all)
			return;
		ns = t->acc;
		t->acc = 0;
	}
	if (!ns)
		return;
	ensure_hello(x, p, NULL);
	if (t->nstack)
		send_sample(x, p, t->tid, time, ns, 1, t->stack, t->nstack);
	else
		send_sample(x, p, t->tid, time, ns, 1, &unseen, 1);
	x->st.waits++;
	x->st.waits_unseen += !t->nstack;
}

/*
 * A switch record: off the CPU, its time kept; back on, the time off is a
 * wait, under the stack the context-switches event took as it left.  A
 * thread first seen coming back on was off since it was born, or since
 * the events started.
 */
static void on_switch(struct outside *x, const struct perfring_rec *r)
{
	if (r->pid == 0)
		return;         /* the idle task (-a) */
	struct oproc *p = proc_get(x, r->pid);
	struct otid *t = thread_get(p, r->tid);
	if (t->gone)
		return;         /* its last switch, after its EXIT (-a) */
	if (r->u.sw.out) {
		t->out = r->time;
		t->active = 1;
		return;
	}
	uint64_t from = t->out ? t->out : t->active ? 0 : t->born ? t->born : x->start;
	if (!t->out)
		t->nstack = 0;  /* a stack from before a lost record: not this wait's */
	if (from && r->time > from)
		wait_add(x, p, t, from, r->time - from, 0);
	t->out = 0;
	t->nstack = 0;
	t->active = 1;
}

static void on_comm(struct outside *x, const struct perfring_rec *r)
{
	struct oproc *p = proc_get(x, r->pid);
	if (r->u.comm.exec) {
		/*
		 * A new image: its mappings to come.  Its HELLO waits for its
		 * next record: the kernel says COMM before the new image's
		 * arguments are in place (/proc/PID/cmdline is empty then).
		 */
		char args[8];
		maps_clear(p);
		p->hello = 0;
		p->seeded = 1;
		ppid_read(p);           /* while it lives */
		snprintf(p->comm, sizeof p->comm, "%s", r->u.comm.comm);
		if (proc_read(p->pid, "cmdline", args, sizeof args))
			send_hello(x, p, r->u.comm.comm);
		else
			p->exec_pending = 1;
		return;
	}
	if (r->tid == r->pid)           /* the process's own name */
		snprintf(p->comm, sizeof p->comm, "%s", r->u.comm.comm);
	ensure_hello(x, p, r->u.comm.comm);
	tid_seen(p, r->tid);
	send_thread(x, r->pid, r->tid, r->u.comm.comm);
}

static void on_fork(struct outside *x, const struct perfring_rec *r)
{
	if (r->pid == r->u.task.ppid) {         /* a thread */
		struct oproc *p = proc_get(x, r->pid);
		struct otid *t = thread_get(p, r->tid);
		p->threads++;
		t->born = r->time;      /* a new thread (its tid may be reused) */
		t->active = t->gone = 0;
		t->out = t->acc = 0;
		t->nstack = 0;
		return;
	}
	struct oproc *parent = proc_get(x, r->u.task.ppid), *c;
	if (parent->exec_pending)       /* its arguments are in place by now */
		ensure_hello(x, parent, NULL);
	HASH_FIND(hh, x->procs, &r->pid, sizeof r->pid, c);
	if (c && c->exited)             /* its pid again: another process */
		proc_drop(x, c);
	c = proc_get(x, r->pid);
	c->ppid = r->u.task.ppid;
	memcpy(c->comm, parent->comm, sizeof c->comm);
	c->seeded = parent->seeded;     /* else read in /proc at its first sample */
	thread_get(c, r->tid)->born = r->time;
	maps_clear(c);
	for (size_t i = 0; i < parent->nmaps; i++) {
		c->maps = xgrow(c->maps, &c->cap, c->nmaps + 1, sizeof(*c->maps));
		c->maps[c->nmaps] = parent->maps[i];
		c->maps[c->nmaps++].path = xstrdup(parent->maps[i].path);
	}
}

/*
 * Exited processes are kept 2 s (of record time): another CPU's ring may
 * still hold samples from before the exit, read in a later pass; they go
 * to the image they belong to, not to a new nameless one.
 */
#define EXITED_KEEP_NS 2000000000ull

static void purge_exited(struct outside *x, uint64_t now)
{
	struct oproc *p, *tmp;
	if (now - x->purged < EXITED_KEEP_NS / 2)
		return;
	x->purged = now;
	HASH_ITER(hh, x->procs, p, tmp)
		if (p->exited && now - p->exited > EXITED_KEEP_NS)
			proc_drop(x, p);
}

/* A thread's end: its waits' sum not yet sampled is, and it waits no more. */
static void thread_ends(struct outside *x, struct oproc *p, uint32_t tid, uint64_t time)
{
	struct otid *t;
	HASH_FIND(hh, p->tids, &tid, sizeof tid, t);
	if (!t)
		return;
	if (t->acc)
		wait_add(x, p, t, time, 0, 1);
	t->gone = 1;
	t->out = 0;
	t->nstack = 0;
}

static void on_exit_rec(struct outside *x, const struct perfring_rec *r)
{
	struct oproc *p;
	HASH_FIND(hh, x->procs, &r->pid, sizeof r->pid, p);
	if (p && !p->exited)
		thread_ends(x, p, r->tid, r->time);
	if (p && r->pid == r->tid && !p->exited) {
		if (p->exec_pending)    /* exec'd, and ended before any sample */
			ensure_hello(x, p, NULL);
		if (p->hello) {
			struct probe_wbuf w;
			probe_wbuf_init(&w, x->buf, PROBE_FRAME_MAX);
			size_t at = probe_frame_begin(&w, PROBE_F_EXIT, r->pid);
			probe_put_u32(&w, (uint32_t)-1);        /* the status: not known here */
			probe_put_u64(&w, p->samples);
			probe_put_u32(&w, p->threads);
			send(x, &w, at);
		}
		p->exited = r->time ? r->time : 1;
	}
	purge_exited(x, r->time);
}

static void on_lost(struct outside *x, const struct perfring_rec *r)
{
	struct probe_wbuf w;
	probe_wbuf_init(&w, x->buf, PROBE_FRAME_MAX);
	size_t at = probe_frame_begin(&w, PROBE_F_LOST, r->pid);
	probe_put_u32(&w, 0);
	probe_put_u32(&w, r->kind == PERFRING_LOST ? PROBE_LOST_KERNEL : PROBE_LOST_THROTTLE);
	probe_put_u64(&w, r->u.lost.lost);
	send(x, &w, at);
}

void outside_record(struct outside *x, const struct perfring_rec *r)
{
	switch (r->kind) {
	case PERFRING_SAMPLE:
		on_sample(x, r);
		break;
	case PERFRING_MMAP:
		if (r->u.mmap.prot & PROT_EXEC)
			add_map(x, proc_get(x, r->pid), r->u.mmap.start,
				r->u.mmap.start + r->u.mmap.len, r->u.mmap.pgoff, r->u.mmap.path);
		break;
	case PERFRING_COMM:
		on_comm(x, r);
		break;
	case PERFRING_FORK:
		on_fork(x, r);
		break;
	case PERFRING_EXIT:
		on_exit_rec(x, r);
		break;
	case PERFRING_LOST:
	case PERFRING_THROTTLE:
		on_lost(x, r);
		break;
	case PERFRING_SWITCH:
		on_switch(x, r);
		break;
	}
}

/* Each thread still off the CPU: its wait until now, and every sum left. */
void outside_flush(struct outside *x, uint64_t now)
{
	struct oproc *p, *ptmp;
	struct otid *t, *ttmp;
	if (!x->o.switches)
		return;
	HASH_ITER(hh, x->procs, p, ptmp) {
		if (p->exited)
			continue;
		HASH_ITER(hh, p->tids, t, ttmp) {
			if (t->gone)
				continue;
			if (t->out && now > t->out)
				wait_add(x, p, t, t->out, now - t->out, 1);
			else if (t->acc)
				wait_add(x, p, t, now, 0, 1);
			t->out = 0;
		}
	}
}

/*
 * tid, asked for, that no record came from: off the CPU since the events
 * started (a thread that runs switches, and is sampled), where no stack
 * was taken.
 */
void outside_idle(struct outside *x, uint32_t tid, uint64_t now)
{
	char rel[64], st[4096];
	unsigned pid;
	snprintf(rel, sizeof rel, "task/%u/status", tid);
	const char *tg = proc_read(tid, rel, st, sizeof st) ? strstr(st, "\nTgid:") : NULL;
	if (!x->o.switches || !tg || sscanf(tg, "\nTgid: %u", &pid) != 1 || now <= x->start)
		return;
	struct oproc *p = proc_get(x, pid);
	struct otid *t = thread_get(p, tid);
	if (t->active || t->gone || p->exited)
		return;
	t->active = 1;
	wait_add(x, p, t, x->start, now - x->start, 1);
}

void outside_started(struct outside *x, uint64_t now)
{
	x->start = now;
}

void outside_seed_names(struct outside *x)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	while (d && (e = readdir(d)) != NULL) {
		char *end, comm[64];
		unsigned long pid = strtoul(e->d_name, &end, 10);
		struct oname *o;

		if (*end || !pid || pid > UINT32_MAX ||
		    !proc_read((uint32_t)pid, "comm", comm, sizeof comm))
			continue;
		o = xcalloc(1, sizeof(*o));
		o->pid = (uint32_t)pid;
		comm[strcspn(comm, "\n")] = 0;
		comm[sizeof o->comm - 1] = 0;
		memcpy(o->comm, comm, sizeof o->comm);
		HASH_ADD(hh, x->names, pid, sizeof o->pid, o);
	}
	if (d)
		closedir(d);
}

struct outside *outside_new(const struct perfring_opts *o, const char *event_name,
			    outside_emit_fn emit, void *ctx)
{
	struct outside *x = xcalloc(1, sizeof(*x));
	x->o = *o;
	x->event = xstrdup(event_name);
	x->emit = emit;
	x->ctx = ctx;
	x->buf = xmalloc(PROBE_FRAME_MAX);
	x->start = now_ns();
	/* Off-CPU ns per sample: the event's period in ns where it has one. */
	int clock = o->type == PERF_TYPE_SOFTWARE && (o->config == PERF_COUNT_SW_CPU_CLOCK ||
						      o->config == PERF_COUNT_SW_TASK_CLOCK);
	x->wait_period = o->freq && o->value ? 1000000000ull / o->value :
			 !o->freq && clock && o->value ? o->value : 1000000ull;
	return x;
}

void outside_free(struct outside *x)
{
	if (!x)
		return;
	struct oproc *p, *tmp;
	HASH_ITER(hh, x->procs, p, tmp)
		proc_drop(x, p);
	struct oname *o, *otmp;
	HASH_ITER(hh, x->names, o, otmp) {
		HASH_DEL(x->names, o);
		free(o);
	}
	free(x->event);
	free(x->buf);
	free(x);
}

size_t outside_live(const struct outside *x)
{
	size_t n = 0;
	const struct oproc *p;
	for (p = x->procs; p; p = p->hh.next)
		n += !p->exited;
	return n;
}

void outside_stats(const struct outside *x, struct outside_stats *st)
{
	*st = x->st;
}
