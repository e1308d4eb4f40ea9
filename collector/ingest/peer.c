/*
 * peer.c - what the kernel vouches for about a connected process (see
 * peer.h).
 *
 * Why setfsuid and not access(): a check then an open races with the
 * user changing the path between them; opening as the user lets the
 * kernel apply the user's rights to the very open that reads the file.
 * The file-system ids and groups are changed with raw system calls, on
 * this thread alone (glibc's setgroups would change every thread's).
 */
#include "ingest/peer.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libelf.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util.h"

/* Are pid and ref in the same namespace of that kind?  (Unknown: no.) */
static int same_ns_as(pid_t pid, pid_t ref, const char *kind)
{
	char a_path[64], b_path[64];
	struct stat a, b;

	snprintf(a_path, sizeof a_path, "/proc/%ld/ns/%s", (long)pid, kind);
	snprintf(b_path, sizeof b_path, "/proc/%ld/ns/%s", (long)ref, kind);
	return stat(a_path, &a) == 0 && stat(b_path, &b) == 0 &&
	       a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

/*
 * Is pid in our mount namespace?  Ours is looked up once: a stat of a
 * /proc path less for every connection (a fork+exec loop under probe
 * record makes one a process).
 */
static int same_mnt_ns(pid_t pid)
{
	static struct stat own;
	static int have;
	char path[64];
	struct stat a;

	if (!have)
		have = stat("/proc/self/ns/mnt", &own) == 0 ? 1 : -1;
	snprintf(path, sizeof path, "/proc/%ld/ns/mnt", (long)pid);
	return have > 0 && stat(path, &a) == 0 && a.st_ino == own.st_ino &&
	       a.st_dev == own.st_dev;
}

int peer_init(struct peer *p, int fd, pid_t pid, uid_t uid)
{
	struct ucred cr;
	socklen_t len = sizeof cr;

	memset(p, 0, sizeof *p);
	p->pid = pid;
	p->uid = uid;
	p->gid = (gid_t)-1;
	p->ngroups = -1;
	p->untrusted = uid != geteuid();
	p->foreign_mnt = !same_mnt_ns(pid);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 && len == sizeof cr)
		p->gid = cr.gid;
	len = sizeof p->groups;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, p->groups, &len) == 0)
		p->ngroups = (int)(len / sizeof(gid_t));
	return p->gid == (gid_t)-1 ? -1 : 0;
}

void peer_free(struct peer *p)
{
	free(p->vmas);
	p->vmas = NULL;
	p->nvmas = p->vcap = 0;
}

/* The value of a "Key:" line of /proc/PID/status, copied into out; 0 or -1. */
static int status_line(pid_t pid, const char *key, char *out, size_t cap)
{
	char path[64], line[512];
	size_t kl = strlen(key);
	int found = -1;

	snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, key, kl) && line[kl] == ':') {
			snprintf(out, cap, "%s", line + kl + 1);
			found = 0;
			break;
		}
	fclose(f);
	return found;
}

int peer_pid_ok(const struct peer *p, uint32_t wire_pid)
{
	char v[256];

	char *last = NULL;
	unsigned long own = 0;

	/* "\t40\t7\n": the last is its pid in its own namespace. */
	if (status_line(p->pid, "NSpid", v, sizeof v) == 0)
		for (char *t = strtok(v, " \t\n"); t; t = strtok(NULL, " \t\n"))
			last = t;
	if (last)
		own = strtoul(last, NULL, 10);
	/*
	 * Gone already (its status with it), a kernel before 4.1, or being
	 * reaped as we read: the kernel prints 0 for a task it is releasing
	 * (a short-lived child of gdb's, reaped at once: tests/95 saw "process
	 * N calls itself process N" once; reading children's status while
	 * another thread reaps them saw 0 for 1 child in 6; tests/05-peer).
	 */
	if (own == 0)
		return wire_pid == (uint32_t)p->pid ? 1 : -1;
	return own == wire_pid;
}

/* ---- acting as the peer ------------------------------------------------- */

struct saved {
	int n;
	gid_t groups[PEER_GROUPS_MAX];
	struct __user_cap_data_struct caps[2];
};

static int caps_get(struct __user_cap_data_struct caps[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	return (int)syscall(SYS_capget, &h, caps);
}

static int caps_set(const struct __user_cap_data_struct caps[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	return (int)syscall(SYS_capset, &h, caps);
}

static void restore(const struct saved *s)
{
	caps_set(s->caps);
	setfsuid(geteuid());
	setfsgid(getegid());
	syscall(SYS_setgroups, (size_t)s->n, s->groups);
}

/*
 * This thread becomes the peer for what it opens: its file-system ids and
 * groups, and no effective capability (setfsuid drops those of files,
 * not CAP_SYS_PTRACE, which /proc/PID/ checks: a process of the peer's
 * uid that now runs a setuid program must stay closed to us).  0, or -1
 * (nothing changed).
 */
static int become(const struct peer *p, struct saved *s)
{
	struct __user_cap_data_struct none[2];
	s->n = getgroups(PEER_GROUPS_MAX, s->groups);
	if (s->n < 0 || caps_get(s->caps) < 0)
		return -1;
	int ng = p->ngroups < 0 ? 0 : p->ngroups;
	if (syscall(SYS_setgroups, (size_t)ng, p->groups) < 0)
		return -1;
	setfsgid(p->gid);
	setfsuid(p->uid);
	memcpy(none, s->caps, sizeof none);
	none[0].effective = none[1].effective = 0;
	/* setfsuid says nothing of failure: ask again (-1 changes nothing). */
	if ((uid_t)setfsuid((uid_t)-1) != p->uid || (gid_t)setfsgid((gid_t)-1) != p->gid ||
	    caps_set(none) < 0) {
		restore(s);
		return -1;
	}
	return 0;
}

static void unbecome(const struct saved *s)
{
	restore(s);
}

/* openat2 where the kernel has it (5.6); else the last component unfollowed. */
static int open_in(int dirfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS |
			   (flags & PEER_NOSYMLINKS ? RESOLVE_NO_SYMLINKS : 0),
	};
	int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
	if (fd >= 0 || errno != ENOSYS)
		return fd;
	return openat(dirfd, path[0] == '/' ? path + 1 : path, O_RDONLY | O_CLOEXEC |
		      O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
}

/* path in the process's root, else (ended, our PID namespace) in ours. */
static int open_as_peer(const struct peer *p, int same_pidns, const char *path, int flags)
{
	char root[64];
	int fd = -1, err = ENOENT;

	snprintf(root, sizeof root, "/proc/%ld/root", (long)p->pid);
	int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rfd >= 0) {
		fd = open_in(rfd, path, flags);
		err = errno;
		close(rfd);
	}
	if (fd < 0 && rfd < 0 && same_pidns) {
		int dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			fd = open_in(dfd, path, flags);
			err = errno;
			close(dfd);
		}
	}
	errno = err;
	return fd;
}

int peer_open(const struct peer *p, int same_pidns, const char *path, int flags)
{
	struct saved s;
	struct stat st;
	int fd;

	if (path[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	if (p->untrusted && become(p, &s) < 0) {
		errno = EPERM;
		return -1;
	}
	fd = open_as_peer(p, same_pidns, path, flags);
	int err = errno;
	if (p->untrusted)
		unbecome(&s);
	if (fd < 0) {
		errno = err;
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    ((flags & PEER_OWNED) && st.st_uid != p->uid)) {
		close(fd);
		errno = EACCES;
		return -1;
	}
	return fd;
}

int peer_open_proc(const struct peer *p, const char *name)
{
	char path[64];
	struct saved s;

	snprintf(path, sizeof path, "/proc/%ld/%s", (long)p->pid, name);
	if (p->untrusted && become(p, &s) < 0) {
		errno = EPERM;
		return -1;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int err = errno;
	if (p->untrusted)
		unbecome(&s);
	errno = err;
	return fd;
}

FILE *peer_fopen_proc(const struct peer *p, const char *name)
{
	int fd = peer_open_proc(p, name);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f && fd >= 0)
		close(fd);
	return f;
}

/* ---- its mappings --------------------------------------------------------- */

/* /proc/PID/maps' file mappings into p->vmas; -1 when it cannot be read. */
static int read_vmas(struct peer *p)
{
	char *line = NULL;
	size_t cap = 0;

	FILE *f = peer_fopen_proc(p, "maps");
	if (!f)
		return -1;
	p->nvmas = 0;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long lo, hi;
		unsigned maj, min;
		unsigned long long ino;
		if (sscanf(line, "%llx-%llx %*s %*x %x:%x %llu", &lo, &hi, &maj, &min, &ino) != 5 ||
		    !ino || lo >= hi)
			continue;
		p->vmas = xgrow(p->vmas, &p->vcap, p->nvmas + 1, sizeof *p->vmas);
		p->vmas[p->nvmas++] = (struct peer_vma){ lo, hi, makedev(maj, min), ino };
	}
	free(line);
	fclose(f);
	return 0;
}

static const struct peer_vma *vma_at(const struct peer *p, uint64_t at)
{
	for (size_t i = 0; i < p->nvmas; i++)
		if (p->vmas[i].lo <= at && at < p->vmas[i].hi)
			return &p->vmas[i];
	return NULL;
}

/* Is fd the file of v?  As /proc/PID/maps says, or as map_files/ opens it. */
static int same_file(const struct peer *p, const struct peer_vma *v, int fd)
{
	struct stat st, ms;
	char path[96];

	if (fstat(fd, &st) < 0)
		return 0;
	if (st.st_dev == v->dev && st.st_ino == v->ino)
		return 1;
	/* An overlay's maps may name the layer below: the file as mapped. */
	snprintf(path, sizeof path, "/proc/%ld/map_files/%" PRIx64 "-%" PRIx64,
		 (long)p->pid, v->lo, v->hi);
	return stat(path, &ms) == 0 && ms.st_dev == st.st_dev && ms.st_ino == st.st_ino;
}

/* The GNU build-id of the ELF file fd; its length, 0 when none. */
static size_t file_build_id(int fd, uint8_t bid[PROBE_BUILD_ID_MAX])
{
	const void *b = NULL;
	size_t n = 0;

	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e)
		return 0;
	ssize_t got = dwelf_elf_gnu_build_id(e, &b);
	if (got > 0 && (size_t)got <= PROBE_BUILD_ID_MAX) {
		memcpy(bid, b, (size_t)got);
		n = (size_t)got;
	}
	elf_end(e);
	return n;
}

/* Has this second's budget room left?  (A new second starts it afresh.) */
static int budget_left(struct peer_budget *b, uint64_t now, uint64_t cap)
{
	if (b->second != now / 1000000000u) {
		b->second = now / 1000000000u;
		b->spent_ns = 0;
		b->bytes = 0;
	}
	return b->spent_ns < cap;
}

static struct peer_budget *budget_of(struct peer_budgets *bs, uid_t uid)
{
	struct peer_budget *b;
	HASH_FIND(hh, bs->byuid, &uid, sizeof uid, b);
	if (!b) {
		b = xcalloc(1, sizeof *b);
		b->uid = uid;
		HASH_ADD(hh, bs->byuid, uid, sizeof b->uid, b);
	}
	return b;
}

void peer_budgets_free(struct peer_budgets *bs)
{
	struct peer_budget *b, *tmp;
	HASH_ITER(hh, bs->byuid, b, tmp) {
		HASH_DEL(bs->byuid, b);
		free(b);
	}
}

size_t peer_budget_bytes(struct peer_budgets *bs, const struct peer *p, size_t want)
{
	if (!p->untrusted)
		return want;
	struct peer_budget *b = budget_of(bs, p->uid);
	budget_left(b, now_ns(), PEER_READ_NS);
	uint64_t left = b->bytes < PEER_MAP_BYTES ? PEER_MAP_BYTES - b->bytes : 0;
	size_t got = want < left ? want : (size_t)left;
	b->bytes += got;
	if (got < want)
		bs->denied_bytes++;
	return got;
}

/* peer_map_check's work, its time counted by the caller. */
static int map_check(struct peer *p, int same_pidns, uint64_t start, const char *path,
		     uint8_t bid[PROBE_BUILD_ID_MAX], size_t *bid_len, const char **why)
{
	const struct peer_vma *v = vma_at(p, start);

	if (!v && (read_vmas(p) < 0 || !(v = vma_at(p, start)))) {
		*why = "the process maps no file there (that its user may see)";
		return 0;
	}
	int fd = peer_open(p, same_pidns, path, 0);
	if (fd < 0) {
		*why = "the process's user cannot open that file";
		return 0;
	}
	if (!same_file(p, v, fd)) {
		close(fd);
		*why = "the file is not the one the process maps there";
		return 0;
	}
	*bid_len = file_build_id(fd, bid);
	close(fd);
	return 1;
}

int peer_map_check(struct peer *p, struct peer_budgets *bs, int same_pidns, uint64_t start,
		   const char *path, uint8_t bid[PROBE_BUILD_ID_MAX], size_t *bid_len,
		   const char **why)
{
	uint64_t t0 = now_ns();
	struct peer_budget *b = budget_of(bs, p->uid);

	*bid_len = 0;
	if (!budget_left(b, t0, PEER_READ_NS) || !budget_left(&bs->all, t0, PEER_READ_ALL_NS)) {
		bs->denied++;
		*why = "its user's time for checking MAPs this second is spent";
		return 0;
	}
	int ok = map_check(p, same_pidns, start, path, bid, bid_len, why);
	uint64_t spent = now_ns() - t0;
	b->spent_ns += spent;
	bs->all.spent_ns += spent;
	return ok;
}

/* ---- kernel symbols --------------------------------------------------------- */

static long sysctl_long(const char *path, long dflt)
{
	char buf[32];
	FILE *f = fopen(path, "re");
	long v = dflt;
	if (!f)
		return dflt;
	if (fgets(buf, sizeof buf, f))
		v = strtol(buf, NULL, 10);
	fclose(f);
	return v;
}

#define CAP_SYSLOG_BIT 34

/* Capabilities count for kallsyms in the first user namespace only. */
static int same_userns(const struct peer *p)
{
	return same_ns_as(p->pid, 1, "user");
}

int peer_kallsyms_ok(const struct peer *p)
{
	long kptr = sysctl_long("/proc/sys/kernel/kptr_restrict", 2);
	long paranoid = sysctl_long("/proc/sys/kernel/perf_event_paranoid", 4);
	char v[64];
	unsigned long long caps = 0;

	if (kptr == 0 && paranoid <= 1)
		return 1;
	/*
	 * The capabilities /proc shows are those of whatever the pid runs
	 * now: a process of another uid could have exec'd a setuid program
	 * behind the socket it keeps.  Only a peer of our own uid is asked.
	 */
	if (p->untrusted || kptr > 1 || !same_userns(p) ||
	    status_line(p->pid, "CapEff", v, sizeof v) < 0)
		return 0;
	caps = strtoull(v, NULL, 16);
	return (caps >> CAP_SYSLOG_BIT) & 1;
}
