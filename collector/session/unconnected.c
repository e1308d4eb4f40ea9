/*
 * unconnected.c - the command's descendants that run without probe (unconnected.h).
 *
 * Why /proc and not the kernel's process events: the proc connector
 * needs CAP_NET_ADMIN, and ptrace would change what the program sees;
 * reading /proc needs nothing, and being the command's subreaper keeps
 * every descendant in our tree even when its parent dies first.
 */
#include "session/unconnected.h"

#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../include/probe/wire.h"
#include "util.h"

/* At most one scan per this many ns of its own cost (under 1 % of a CPU). */
#define COST_FACTOR 100

struct pinfo {
	pid_t pid, ppid;
	char state;
	uint64_t start;
	int desc;               /* 0 unknown, 1 a descendant of root, 2 not */
};

int unconnected_due(const struct unconnected *u, uint64_t t)
{
	return t >= u->next_ns;
}

/* /proc/PID/stat: parent, state and start time.  0 on success. */
static int read_stat(pid_t pid, struct pinfo *p)
{
	char path[64], buf[1024], *rp;
	unsigned long long start;
	int fd, ppid;
	ssize_t n;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* comm may hold anything, ')' included: the last one ends it. */
	rp = strrchr(buf, ')');
	if (!rp || sscanf(rp + 1, " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u "
			  "%*u %*d %*d %*d %*d %*d %*d %llu", &p->state, &ppid,
			  &start) != 3)
		return -1;
	p->pid = pid;
	p->ppid = ppid;
	p->start = start;
	p->desc = 0;
	return 0;
}

static int by_pid(const void *a, const void *b)
{
	const struct pinfo *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Every process now, sorted by pid; *n set. */
static struct pinfo *list_procs(size_t *n)
{
	struct pinfo *v = NULL;
	size_t cap = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;

	*n = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		v = xgrow(v, &cap, *n + 1, sizeof *v);
		if (read_stat((pid_t)atoi(e->d_name), &v[*n]) == 0)
			(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof *v, by_pid);
	return v;
}

static struct pinfo *find(struct pinfo *v, size_t n, pid_t pid)
{
	struct pinfo key = { .pid = pid };

	return n ? bsearch(&key, v, n, sizeof *v, by_pid) : NULL;
}

/* Is v[i] below root?  Walks up its parents, remembering the answer. */
static int is_desc(struct pinfo *v, size_t n, struct pinfo *p, pid_t root)
{
	struct pinfo *q = p;
	int ans = 2;

	for (int hops = 0; q && hops < 4096; hops++) {
		if (q->desc) {
			ans = q->desc;
			break;
		}
		if (q->ppid == root) {
			ans = 1;
			break;
		}
		if (q->ppid <= 1)
			break;
		q = find(v, n, q->ppid);
	}
	/*
	 * Remembered for p and the parents walked, but not for root and its
	 * own parents: marked "below root", the shell that ran probe would be
	 * named as the command's once pids wrap and it is scanned after
	 * (tests/69).
	 */
	for (q = p; q && !q->desc && q->pid != root; q = find(v, n, q->ppid))
		q->desc = ans;
	return ans == 1;
}

/* Does the process have libprobe.so mapped?  -1: cannot tell. */
static int has_libprobe(pid_t pid)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	int r = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (!r && getline(&line, &cap, f) > 0)
		r = strstr(line, "/libprobe.so") != NULL;
	free(line);
	fclose(f);
	return r;
}

/* "Uid:" or "Gid:" of /proc/PID/status: real and effective; 0 on success. */
static int ids(const char *status, const char *key, unsigned long *r,
	       unsigned long *e)
{
	const char *p = strstr(status, key);

	return p && sscanf(p + strlen(key), "%lu %lu", r, e) == 2 ? 0 : -1;
}

/* Setuid or setgid, another user's, or 0. */
static unsigned reason_ids(pid_t pid)
{
	char path[64], buf[4096];
	unsigned long ru, eu, rg, eg;
	int fd;
	ssize_t n;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	if (ids(buf, "\nUid:", &ru, &eu) < 0 || ids(buf, "\nGid:", &rg, &eg) < 0)
		return 0;
	if (ru != eu || rg != eg)
		return PROBE_UNPROF_SECURE;
	return ru != (unsigned long)geteuid() ? PROBE_UNPROF_OTHERUSER : 0;
}

/* Statically linked (no PT_INTERP), or 0. */
static unsigned reason_static(pid_t pid)
{
	char path[64];
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	unsigned r = PROBE_UNPROF_STATIC;
	int fd;

	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof ph)
		r = 0;  /* not one we know: said as "did not load it" */
	for (unsigned i = 0; r && i < eh.e_phnum && i < 4096; i++)
		if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) !=
		    (ssize_t)sizeof ph || ph.p_type == PT_INTERP)
			r = 0;
	close(fd);
	return r;
}

/* Its environment has no LD_PRELOAD naming libprobe.so, or 0. */
static unsigned reason_env(pid_t pid)
{
	char path[64], *env = NULL;
	size_t len = 0, cap = 0;
	unsigned r = PROBE_UNPROF_NOPRELOAD;
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	for (;;) {
		env = xgrow(env, &cap, len + 65536 + 1, 1);
		if ((n = read(fd, env + len, 65536)) <= 0 || len > (8u << 20))
			break;
		len += (size_t)n;
	}
	close(fd);
	if (n < 0)
		r = 0;
	for (size_t i = 0; r && i < len; i += strlen(env + i) + 1) {
		env[len] = 0;
		if (!strncmp(env + i, "LD_PRELOAD=", 11) &&
		    strstr(env + i, "libprobe.so"))
			r = 0;
	}
	free(env);
	return r;
}

/* Why pid runs without libprobe.so; the path of what it runs in buf. */
static unsigned why(pid_t pid, char *buf, size_t len)
{
	char path[64];
	unsigned r;
	ssize_t n;

	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	n = readlink(path, buf, len - 1);
	buf[n > 0 ? n : 0] = 0;
	if (n <= 0)
		snprintf(buf, len, "(pid %d)", (int)pid);
	if ((r = reason_ids(pid)) || (r = reason_static(pid)) ||
	    (r = reason_env(pid)))
		return r;
	return PROBE_UNPROF_NOTLOADED;
}

/* Was p there at the last scan too (same start: not a reused pid)? */
static struct unconn_proc *before(struct unconnected *u, const struct pinfo *p)
{
	for (size_t i = 0; i < u->nseen; i++)
		if (u->seen[i].pid == p->pid && u->seen[i].start == p->start)
			return &u->seen[i];
	return NULL;
}

/* Look at one descendant; keep it in next for the next scan. */
static void check(struct unconnected *u, const struct pinfo *p,
		  struct unconn_proc *next, size_t *nnext)
{
	enum unconn_state st = u->state(u->ctx, p->pid);
	struct unconn_proc *b = before(u, p);
	char path[4096];
	unsigned r;

	if (st == UNCONN_KNOWN || p->state == 'Z' || p->state == 'X')
		return;
	next[*nnext] = (struct unconn_proc){ p->pid, p->start, b && b->named };
	if (!b || b->named)
		goto keep;
	next[*nnext].named = 1;
	if (has_libprobe(p->pid) == 1)
		goto keep;      /* profiled, or libprobe says itself why not */
	r = why(p->pid, path, sizeof path);
	u->found(u->ctx, p->pid, p->ppid, r, path);
keep:
	(*nnext)++;
}

/* CPU time of this thread (ns): what a scan costs, whatever the load. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void unconnected_scan(struct unconnected *u, uint64_t t0)
{
	uint64_t c0 = cpu_ns();
	size_t n, nnext = 0;
	struct pinfo *v = list_procs(&n);
	struct unconn_proc *next = xcalloc(n + 1, sizeof *next);

	for (size_t i = 0; i < n; i++)
		if (v[i].pid != u->root && is_desc(v, n, &v[i], u->root))
			check(u, &v[i], next, &nnext);
	free(u->seen);
	u->seen = next;
	u->nseen = nnext;
	free(v);
	u->cost_ns = cpu_ns() - c0;
	u->next_ns = t0 + (uint64_t)UNCONN_SCAN_MS * 1000000u;
	if (u->next_ns < t0 + u->cost_ns * COST_FACTOR)
		u->next_ns = t0 + u->cost_ns * COST_FACTOR;
}

void unconnected_free(struct unconnected *u)
{
	free(u->seen);
	u->seen = NULL;
	u->nseen = 0;
}
