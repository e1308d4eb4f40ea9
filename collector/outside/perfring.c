/*
 * perfring.c - perf events on other processes, and their rings: perfring.h
 * says what.  The ring protocol is perf's (perf_event_open(2)): the kernel
 * moves data_head, we read up to it (acquire) and give the room back by
 * moving data_tail (release); a record that wraps is copied whole first.
 */
#include "outside/perfring.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "session/events.h"
#include "util.h"

/*
 * Per CPU: 2 MiB of 4 KiB pages where the kernel lets us lock that much
 * (root, CAP_IPC_LOCK), else 512 KiB: what kernel.perf_event_mlock_kb
 * (516) gives any user per CPU.  A sample with an 8 KiB stack copy takes
 * 8.3 KiB of it: 61 of them fill the smaller ring, 60 ms at 999 Hz.
 */
#define RING_PAGES 512u
#define RING_PAGES_MIN 128u
#define WATERMARK (RING_PAGES_MIN * 4096 / 4)   /* woken at a quarter of the smaller */
#define REC_MAX (64u * 1024 + 4096)     /* a sample: 64 KiB of stack at most */

struct ring {
	int fd;                         /* the CPU's first event: the mapped one */
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	size_t size;                    /* data's bytes, a power of 2 */
	int cs;                         /* the context-switches event's ring */
};

struct perfring {
	struct perfring_opts o;
	struct ring *rings;
	size_t nrings;
	int *fds;                       /* every event, rings' first ones too */
	size_t nfds;
	uint8_t *rec;                   /* a record that wrapped, whole */
	uint64_t bad;
};

/* ---- opening ----------------------------------------------------------- */

/* The online CPUs ("0-3,6"), into cpus (at most max); their count. */
static size_t online_cpus(int *cpus, size_t max)
{
	size_t n = 0;
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	char buf[4096];
	if (f && fgets(buf, sizeof buf, f)) {
		for (char *p = buf; *p && *p != '\n' && n < max;) {
			char *e;
			long lo = strtol(p, &e, 10), hi = lo;
			if (e == p)
				break;
			if (*e == '-')
				hi = strtol(e + 1, &e, 10);
			for (long c = lo; c <= hi && n < max; c++)
				cpus[n++] = (int)c;
			p = *e == ',' ? e + 1 : e;
		}
	}
	if (f)
		fclose(f);
	if (n == 0) {           /* no sysfs: 0 .. the count online, less one */
		long on = sysconf(_SC_NPROCESSORS_ONLN);
		for (long c = 0; c < on && n < max; c++)
			cpus[n++] = (int)c;
	}
	return n;
}

static void attr_of(struct perf_event_attr *a, const struct perfring_opts *o, int all)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = o->type;
	a->config = o->config;
	a->freq = o->freq != 0;
	if (o->freq)
		a->sample_freq = o->value;
	else
		a->sample_period = o->value;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
			 PERF_SAMPLE_REGS_USER | (o->stack_bytes ? PERF_SAMPLE_STACK_USER : 0);
	a->sample_regs_user = PERFRING_REGS_MASK;
	a->sample_stack_user = o->stack_bytes;
	a->exclude_kernel = !o->kernel;
	a->exclude_hv = 1;
	a->exclude_callchain_kernel = !o->kernel;
	a->inherit = !all;
	a->mmap = a->mmap2 = a->comm = a->task = 1;
	a->comm_exec = 1;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;   /* the clock of libprobe's samples */
	a->disabled = 1;
	a->enable_on_exec = o->enable_on_exec != 0;
	a->watermark = 1;
	a->wakeup_watermark = WATERMARK;
	a->context_switch = o->switches != 0;
}

/*
 * The context-switches event beside it: a sample at every switch off the
 * CPU, its stack the thread's where it stopped.  The switch happens in the
 * kernel, so kernel events are counted (exclude_kernel 0); the side-band
 * records come with the first event alone.
 */
static void cs_attr_of(struct perf_event_attr *a, const struct perfring_opts *o, int all)
{
	attr_of(a, o, all);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	a->freq = 0;
	a->sample_period = 1;
	a->exclude_kernel = 0;
	a->mmap = a->mmap2 = a->comm = a->task = a->comm_exec = 0;
	a->context_switch = 0;
}

static int ring_map(struct ring *r, int fd)
{
	size_t pages = RING_PAGES;
	void *m;
	/* More than this user may lock: EPERM; then the size any user has. */
	while ((m = mmap(NULL, (1 + pages) * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 0)) == MAP_FAILED && (errno == EPERM || errno == ENOMEM) &&
	       pages > RING_PAGES_MIN)
		pages /= 2;
	if (m == MAP_FAILED)
		return -1;
	r->fd = fd;
	r->meta = m;
	r->data = (uint8_t *)m + 4096;
	r->size = pages * 4096;
	return 0;
}

/* task's owner is not us (a thread that is gone: 0, said otherwise). */
static int not_ours(int task)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof path, "/proc/%d", task);
	return task >= 0 && stat(path, &st) == 0 && st.st_uid != geteuid();
}

/* Why the kernel refused, and what would allow it. */
static void say_refused(int err, int task)
{
	if ((err == EACCES || err == EPERM) && not_ours(task)) {
		probe_err("the kernel refused to sample process %d from outside (%s): it "
			  "belongs to another user; run as root or with CAP_PERFMON", task,
			  strerror(err));
	} else if (err == EACCES || err == EPERM) {
		char buf[16];
		event_paranoid(buf, sizeof buf);
		probe_err("the kernel refused to sample %s from outside (%s; "
			  "kernel.perf_event_paranoid is %s): run as root or with CAP_PERFMON, "
			  "or lower it (sysctl kernel.perf_event_paranoid=%d)",
			  task < 0 ? "the whole system" : "this process", strerror(err), buf,
			  task < 0 ? 0 : 2);
	} else if (err == ESRCH) {
		probe_err("process %d is gone: nothing to sample", task);
	} else {
		probe_err("perf_event_open on %d: %s", task, strerror(err));
	}
}

/* CPU cpu's events, one per task; its ring is the first's. */
static int open_cpu(struct perfring *pr, struct perf_event_attr *a, int cpu,
		    const int *tasks, size_t ntasks, int cs)
{
	struct ring *r = &pr->rings[pr->nrings];
	r->cs = cs;
	int first = -1;
	for (size_t i = 0; i < ntasks; i++) {
		int fd = (int)syscall(SYS_perf_event_open, a, tasks[i], cpu, -1,
				      PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 && errno == ESRCH && ntasks > 1)
			continue;       /* a thread that ended meanwhile */
		if (fd < 0)
			return -errno;
		pr->fds[pr->nfds++] = fd;
		if (first < 0 && ring_map(r, fd) < 0)
			return -errno;
		if (first < 0) {
			first = fd;
			pr->nrings++;   /* mapped: perfring_close unmaps it */
		} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, first) < 0) {
			return -errno;
		}
	}
	return 0;
}

struct perfring *perfring_open(const int *tasks, size_t ntasks,
			       const struct perfring_opts *o)
{
	int cpus[1024];
	size_t ncpus = online_cpus(cpus, sizeof cpus / sizeof cpus[0]);
	struct perfring *pr = xcalloc(1, sizeof(*pr));
	struct perf_event_attr a;
	pr->o = *o;
	int all = ntasks == 1 && tasks[0] == -1, kinds = o->switch_stacks ? 2 : 1;
	pr->rings = xcalloc(ncpus ? ncpus * 2 : 1, sizeof(*pr->rings));
	pr->fds = xcalloc(ncpus * ntasks * 2 + 1, sizeof(*pr->fds));
	pr->rec = xmalloc(REC_MAX);
	for (size_t c = 0; c < ncpus * (size_t)kinds; c++) {
		int cs = c >= ncpus;
		if (cs)
			cs_attr_of(&a, o, all);
		else
			attr_of(&a, o, all);
		int err = open_cpu(pr, &a, cpus[c % ncpus], tasks, ntasks, cs);
		if (err < 0) {
			say_refused(-err, ntasks ? tasks[0] : -1);
			perfring_close(pr);
			return NULL;
		}
	}
	if (pr->nrings == 0) {
		say_refused(ESRCH, ntasks ? tasks[0] : -1);
		perfring_close(pr);
		return NULL;
	}
	if (!o->enable_on_exec)
		perfring_enable(pr, 1);
	return pr;
}

void perfring_close(struct perfring *pr)
{
	if (!pr)
		return;
	for (size_t i = 0; i < pr->nrings; i++)
		munmap(pr->rings[i].meta, pr->rings[i].size + 4096);
	for (size_t i = 0; i < pr->nfds; i++)
		close(pr->fds[i]);
	free(pr->rings);
	free(pr->fds);
	free(pr->rec);
	free(pr);
}

size_t perfring_nrings(const struct perfring *pr)
{
	return pr->nrings;
}

int perfring_fd(const struct perfring *pr, size_t ring)
{
	return ring < pr->nrings ? pr->rings[ring].fd : -1;
}

void perfring_enable(struct perfring *pr, int on)
{
	for (size_t i = 0; i < pr->nfds; i++)
		ioctl(pr->fds[i], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

const uint64_t *perfring_user_chain(const struct perfring_rec *r, uint32_t *n)
{
	const uint64_t *c = r->u.sample.chain;
	uint32_t nc = r->u.sample.nchain, i = 0;
	while (i < nc && c[i] != (uint64_t)PERF_CONTEXT_USER)
		i++;
	uint32_t first = i + 1;
	for (i = first; i < nc && c[i] < (uint64_t)PERF_CONTEXT_MAX; i++)
		;
	*n = first < i ? i - first : 0;
	return *n ? &c[first] : NULL;
}

uint64_t perfring_bad(const struct perfring *pr)
{
	return pr->bad;
}

/* ---- decoding ---------------------------------------------------------- */

struct cur {
	const uint8_t *p, *end;
	int ok;
};

static uint64_t take64(struct cur *c)
{
	uint64_t v = 0;
	if (c->end - c->p < 8) {
		c->ok = 0;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	return v;
}

/* Two u32 in one u64 (pid and tid, cpu and its reserved word). */
static void take32x2(struct cur *c, uint32_t *a, uint32_t *b)
{
	uint64_t v = take64(c);
	*a = (uint32_t)v;
	if (b)
		*b = (uint32_t)(v >> 32);
}

/* sample_id_all's trailer: pid, tid, time, cpu (the sample_type's order). */
static void trailer(struct cur *c, struct perfring_rec *r)
{
	if (c->end - c->p < 24)
		return;         /* older kernels: none */
	c->p = c->end - 24;
	take32x2(c, &r->pid, &r->tid);
	r->time = take64(c);
	take32x2(c, &r->cpu, NULL);
}

static void sample_stack(struct cur *c, struct perfring_rec *r, uint32_t asked)
{
	if (!asked)
		return;
	uint64_t size = take64(c);
	if (!c->ok || size > (uint64_t)(c->end - c->p)) {
		c->ok = 0;
		return;
	}
	r->u.sample.stack = c->p;
	c->p += size;
	uint64_t dyn = size ? take64(c) : 0;
	r->u.sample.stack_len = (uint32_t)(dyn < size ? dyn : size);
}

static void sample_of(struct cur *c, struct perfring_rec *r, uint32_t stack_bytes)
{
	r->kind = PERFRING_SAMPLE;
	r->u.sample.ip = take64(c);
	take32x2(c, &r->pid, &r->tid);
	r->time = take64(c);
	take32x2(c, &r->cpu, NULL);
	r->u.sample.period = take64(c);
	uint64_t nr = take64(c);
	if (!c->ok || nr > PERFRING_CALLCHAIN_MAX || nr * 8 > (uint64_t)(c->end - c->p)) {
		c->ok = 0;
		return;
	}
	r->u.sample.nchain = (uint32_t)nr;
	r->u.sample.chain = (const uint64_t *)(const void *)c->p;
	c->p += nr * 8;
	uint64_t abi = take64(c);
	r->u.sample.have_regs = abi != PERF_SAMPLE_REGS_ABI_NONE;
	for (unsigned i = 0; r->u.sample.have_regs && i < PERFRING_NREGS; i++)
		r->u.sample.regs[i] = take64(c);
	sample_stack(c, r, stack_bytes);
}

static void mmap_of(struct cur *c, struct perfring_rec *r, uint16_t misc)
{
	r->kind = PERFRING_MMAP;
	take32x2(c, &r->pid, &r->tid);
	r->u.mmap.start = take64(c);
	r->u.mmap.len = take64(c);
	r->u.mmap.pgoff = take64(c);
	if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		uint8_t hdr[24];
		if (c->end - c->p < 24) {
			c->ok = 0;
			return;
		}
		memcpy(hdr, c->p, 24);  /* u8 size, u8[3], u8 build_id[20] */
		r->u.mmap.build_id_len = hdr[0] <= 20 ? hdr[0] : 20;
		memcpy(r->u.mmap.build_id, hdr + 4, 20);
		c->p += 24;
	} else {
		c->p += 24;             /* maj, min, ino, ino_generation */
	}
	take32x2(c, &r->u.mmap.prot, &r->u.mmap.flags);
	const uint8_t *nul = c->ok && c->p < c->end ? memchr(c->p, 0, (size_t)(c->end - c->p))
						    : NULL;
	if (!nul) {
		c->ok = 0;
		return;
	}
	r->u.mmap.path = (const char *)c->p;
}

/* One record (hdr, len bytes with it) into r: 1, or 0 when not of ours. */
static int decode(const struct perfring *pr, const uint8_t *b, size_t len,
		  struct perfring_rec *r, int cs)
{
	const struct perf_event_header *h = (const void *)b;
	struct cur c = { b + sizeof(*h), b + len, 1 };
	memset(r, 0, sizeof(*r));
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		sample_of(&c, r, pr->o.stack_bytes);
		r->u.sample.cs = cs;
		return c.ok ? 1 : -1;
	case PERF_RECORD_MMAP2:
		mmap_of(&c, r, h->misc);
		break;
	case PERF_RECORD_COMM:
		r->kind = PERFRING_COMM;
		take32x2(&c, &r->pid, &r->tid);
		r->u.comm.comm = (const char *)c.p;
		r->u.comm.exec = (h->misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
		if (!c.ok || c.p >= c.end || !memchr(c.p, 0, (size_t)(c.end - c.p)))
			return -1;
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		r->kind = h->type == PERF_RECORD_FORK ? PERFRING_FORK : PERFRING_EXIT;
		take32x2(&c, &r->pid, &r->u.task.ppid);
		take32x2(&c, &r->tid, &r->u.task.ptid);
		r->time = take64(&c);
		break;
	case PERF_RECORD_LOST:
		r->kind = PERFRING_LOST;
		take64(&c);
		r->u.lost.lost = take64(&c);
		break;
	case PERF_RECORD_THROTTLE:
		r->kind = PERFRING_THROTTLE;
		r->u.lost.lost = 1;
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:       /* -a: the other task's ids first */
		r->kind = PERFRING_SWITCH;
		r->u.sw.out = (h->misc & PERF_RECORD_MISC_SWITCH_OUT) != 0;
		r->u.sw.preempt = (h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) != 0;
		if (c.end - c.p < 24 + (h->type == PERF_RECORD_SWITCH_CPU_WIDE ? 8 : 0))
			return -1;      /* no sample_id: no task, no time */
		break;
	default:
		return 0;
	}
	if (!c.ok)
		return -1;
	struct cur t = { b + sizeof(*h), b + len, 1 };
	uint32_t pid = r->pid, tid = r->tid;
	trailer(&t, r);
	if (r->kind == PERFRING_MMAP || r->kind == PERFRING_COMM || r->kind == PERFRING_FORK ||
	    r->kind == PERFRING_EXIT) {
		r->pid = pid;   /* the record's own, not the trailer's */
		r->tid = tid;
	}
	return 1;
}

/*
 * The record at *tail of rg (below head) decoded into r: 1 one of ours, 0
 * one to skip, -1 bad; *size its length (0: the ring is damaged, stop).
 */
static int at_tail(struct perfring *pr, struct ring *rg, uint64_t tail, uint64_t head,
		   struct perfring_rec *r, size_t *size)
{
	size_t mask = rg->size - 1;
	struct perf_event_header h;
	*size = 0;
	for (size_t i = 0; i < sizeof h; i++)
		((uint8_t *)&h)[i] = rg->data[(tail + i) & mask];
	if (h.size < sizeof h || h.size > head - tail)
		return 0;               /* the kernel's own: never; stop reading */
	const uint8_t *b = rg->data + (tail & mask);
	if ((tail & mask) + h.size > rg->size) {        /* wraps: copy */
		size_t first = rg->size - (tail & mask);
		memcpy(pr->rec, b, first);
		memcpy(pr->rec + first, rg->data, h.size - first);
		b = pr->rec;
	}
	*size = h.size;
	return decode(pr, b, h.size, r, rg->cs);
}

size_t perfring_read(struct perfring *pr, size_t ring, perfring_fn fn, void *ctx)
{
	struct ring *rg = &pr->rings[ring];
	uint64_t head = __atomic_load_n(&rg->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = rg->meta->data_tail;
	size_t n = 0, size;
	int stop = 0;
	while (tail < head && !stop) {
		struct perfring_rec r;
		int d = at_tail(pr, rg, tail, head, &r, &size);
		if (!size)
			break;
		if (d < 0)
			pr->bad++;
		else if (d > 0) {
			n++;
			stop = fn(ctx, &r);
		}
		tail += size;
	}
	__atomic_store_n(&rg->meta->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

/*
 * Every ring up to its head now, merged by time: the ring whose next
 * record is the oldest goes first (its time read by decoding it, then
 * decoded again to be handed on: the wrap buffer is one for all rings).
 */
size_t perfring_read_all(struct perfring *pr, perfring_fn fn, void *ctx)
{
	size_t nr = pr->nrings, n = 0;
	uint64_t *head = xcalloc(nr ? nr : 1, sizeof(*head));
	uint64_t *tail = xcalloc(nr ? nr : 1, sizeof(*tail));
	for (size_t i = 0; i < nr; i++) {
		head[i] = __atomic_load_n(&pr->rings[i].meta->data_head, __ATOMIC_ACQUIRE);
		tail[i] = pr->rings[i].meta->data_tail;
	}
	for (;;) {
		size_t best = nr, size;
		uint64_t best_t = UINT64_MAX;
		struct perfring_rec r;
		for (size_t i = 0; i < nr; i++) {
			while (tail[i] < head[i]) {
				int d = at_tail(pr, &pr->rings[i], tail[i], head[i], &r, &size);
				if (!size) {
					tail[i] = head[i];      /* damaged: the rest dropped */
					break;
				}
				if (d > 0) {
					if (r.time < best_t || best == nr) {
						best = i;
						best_t = r.time;
					}
					break;
				}
				pr->bad += d < 0;
				tail[i] += size;
			}
		}
		if (best == nr)
			break;
		at_tail(pr, &pr->rings[best], tail[best], head[best], &r, &size);
		tail[best] += size;
		n++;
		if (fn(ctx, &r))
			break;
	}
	for (size_t i = 0; i < nr; i++)
		__atomic_store_n(&pr->rings[i].meta->data_tail, tail[i], __ATOMIC_RELEASE);
	free(head);
	free(tail);
	return n;
}
