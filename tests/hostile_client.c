/*
 * hostile_client - a local user's process that speaks probe's wire protocol
 * (include/probe/wire.h) and fills its arena (include/probe/arena.h)
 * itself, as libprobe never would: for the tests of what a collector run by
 * root bounds for every user (tests/96-agent-bounds.t).  Built by the test
 * itself: cc -Iinclude tests/hostile_client.c.
 *
 *   hostile_client flood SOCKET RINGS SECONDS [DEPTH]
 *       a HELLO, then RINGS threads' rings kept full of samples of random
 *       DEPTH-frame stacks (default 256), every one distinct, for SECONDS
 *   hostile_client bloat SOCKET HELLO_KIB MAPS PATHLEN THREADS SECONDS [DIR]
 *       a HELLO of about HELLO_KIB KiB (long argv), MAPS MAP frames with
 *       paths of PATHLEN bytes, THREADS THREAD frames with names as long,
 *       then a few samples a second of one stack for SECONDS; then exits.
 *       With DIR the MAPs are true: a file made under DIR at a path of
 *       PATHLEN bytes, mapped MAPS times (what the kernel confirms)
 *   hostile_client spoof SOCKET COMM EXE SECONDS
 *       a HELLO that claims COMM and EXE, then samples of one stack whose
 *       leaf is SPOOF_LEAF (0x5ca1ab1e000), for SECONDS
 *   hostile_client record FILE MIB [DEPTH]
 *       a recording (file version 1) of MIB MiB: one process, samples of
 *       random DEPTH-frame stacks (default 256), every one distinct
 *
 * A mode is a function of its arguments; the socket modes share connect(),
 * arena() and hello().  Random addresses lie in user space (below 2^47),
 * where nothing maps them: each is a distinct location for a report.
 * Exit status: 0, 1 when the collector hung up or a call failed, 2 for a
 * usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "probe/arena.h"
#include "probe/wire.h"

#define SPOOF_LEAF 0x5ca1ab1e000ull
#define RECORD_BYTES (200u * 1024)      /* one sendmsg: the collector takes 256 KiB */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;       /* xorshift64* */
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ull;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "hostile_client: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p)
		die("malloc");
	return p;
}

/* ---- the socket ------------------------------------------------------- */

static int sock = -1;

static void connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock < 0 || connect(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die(path);
}

/* A second descriptor sent with the next record that carries one (wake). */
static int extra_fd = -1;

/* One record of whole frames, with fd (>= 0) passed along. */
static void send_record(const void *b, size_t n, int fd)
{
	struct iovec iov = { (void *)b, n };
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (fd >= 0) {
		int fds[2] = { fd, extra_fd }, nfd = extra_fd >= 0 ? 2 : 1;
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE((size_t)nfd * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((size_t)nfd * sizeof(int));
		memcpy(CMSG_DATA(c), fds, (size_t)nfd * sizeof(int));
	}
	if (sendmsg(sock, &mh, MSG_NOSIGNAL) != (ssize_t)n)
		die("sendmsg");
}

/* ---- the arena -------------------------------------------------------- */

static struct probe_arena *ar;
static int ar_fd = -1;

static void arena(void)
{
	ar_fd = memfd_create("hostile-arena", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (ar_fd < 0 || ftruncate(ar_fd, (off_t)PROBE_ARENA_SIZE) < 0 ||
	    fcntl(ar_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0)
		die("memfd");
	ar = mmap(NULL, PROBE_ARENA_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, ar_fd, 0);
	if (ar == MAP_FAILED)
		die("mmap");
	ar->magic = PROBE_ARENA_MAGIC;
	ar->version = PROBE_WIRE_VERSION;
	ar->nslots = PROBE_ARENA_SLOTS;
	ar->slot_data = PROBE_SLOT_DATA;
	ar->size = PROBE_ARENA_SIZE;
}

/* Slot i, LIVE, for thread tid. */
static void slot_live(unsigned i, uint32_t tid)
{
	struct probe_slot *s = &ar->slots[i];
	s->tid = tid;
	/* A ring of a thread that never grows it: the flood's rate is then
	 * what one such thread can send (tests/93 sizes its pulls by it). */
	s->ring = PROBE_RING_MIN;
	s->gen++;
	snprintf(s->name, sizeof(s->name), "hostile-%u", i);
	__atomic_store_n(&s->state, PROBE_SLOT_LIVE, __ATOMIC_RELEASE);
	if (ar->slots_used < i + 1)
		__atomic_store_n(&ar->slots_used, i + 1, __ATOMIC_RELEASE);
}

/* A sample's record into ring i, if there is room; 1 when written. */
static int put_record(unsigned i, const uint64_t *frames, unsigned n)
{
	uint8_t rec[PROBE_REC_MAX];
	struct probe_wbuf w;
	probe_wbuf_init(&w, rec, sizeof(rec));
	probe_put_u16(&w, 0);
	probe_put_uv(&w, mono_ns());
	probe_put_uv(&w, 10000000);     /* 10 ms */
	probe_put_uv(&w, 0);
	probe_put_uv(&w, n);
	for (unsigned k = 0; k < n; k++)
		probe_put_sv(&w, (int64_t)(frames[k] - (k ? frames[k - 1] : 0)));
	rec[0] = (uint8_t)w.len;
	rec[1] = (uint8_t)(w.len >> 8);
	struct probe_slot *s = &ar->slots[i];
	uint64_t head = s->head, tail = __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE);
	if (PROBE_RING_MIN - (head - tail) < w.len)
		return 0;
	probe_ring_put(probe_arena_ring(ar, i, PROBE_SLOT_DATA), PROBE_RING_MIN, head,
		       rec, w.len);
	__atomic_store_n(&s->head, head + w.len, __ATOMIC_RELEASE);
	__atomic_add_fetch(&s->samples, 1, __ATOMIC_RELAXED);
	return 1;
}

static void random_stack(uint64_t *frames, unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		frames[k] = 0x10000 + rnd() % ((1ull << 47) - 0x10000);
}

/* ---- frames ----------------------------------------------------------- */

/* "xxxx...": n bytes of c, NUL-terminated, in a buffer of the caller's. */
static char *filled(char *buf, char c, size_t n)
{
	memset(buf, c, n);
	buf[n] = 0;
	return buf;
}

/* HELLO claiming comm and exe, argv of about argv_bytes; the arena with it. */
static void hello(const char *comm, const char *exe, size_t argv_bytes)
{
	size_t cap = 64 * 1024 + argv_bytes + 2 * PROBE_MAX_ARGS;
	uint8_t *b = xmalloc(cap);
	char *arg = xmalloc(PROBE_STR_MAX + 1);
	struct probe_wbuf w;
	probe_wbuf_init(&w, b, cap);
	size_t at = probe_frame_begin(&w, PROBE_F_HELLO, (uint32_t)getpid());
	probe_put_u32(&w, PROBE_WIRE_VERSION);
	probe_put_u32(&w, (uint32_t)getppid());
	probe_put_u32(&w, PROBE_EVENT_TIMER);
	probe_put_u64(&w, 0);
	probe_put_u8(&w, 1);
	probe_put_u64(&w, 100);
	probe_put_u64(&w, mono_ns());
	probe_put_str(&w, "cpu-clock");
	probe_put_str(&w, exe);
	probe_put_str(&w, comm);
	size_t argc = (argv_bytes + PROBE_STR_MAX - 1) / PROBE_STR_MAX;
	if (argc > PROBE_MAX_ARGS)
		argc = PROBE_MAX_ARGS;
	probe_put_u16(&w, argc ? argc : 1);
	if (!argc)
		probe_put_str(&w, exe);
	for (size_t i = 0; i < argc; i++)
		probe_put_str(&w, filled(arg, 'A' + (char)(i % 26), PROBE_STR_MAX));
	probe_frame_end(&w, at);
	if (!w.ok) {
		fprintf(stderr, "hostile_client: HELLO too big\n");
		exit(2);
	}
	send_record(b, w.len, ar_fd);
	free(arg);
	free(b);
}

/* Frames built one after another, sent a record at a time. */
struct outbuf {
	struct probe_wbuf w;
	uint8_t b[RECORD_BYTES + 16384];
};

static void out_flush(struct outbuf *o)
{
	if (o->w.len)
		send_record(o->b, o->w.len, -1);
	probe_wbuf_init(&o->w, o->b, sizeof(o->b));
}

static void out_room(struct outbuf *o, size_t need)
{
	if (o->w.len + need > RECORD_BYTES)
		out_flush(o);
}

/* A file of one page at a path of about pathlen bytes under dir (directories of 200). */
static char *long_file(const char *dir, size_t pathlen)
{
	char *path = xmalloc(pathlen + 256);
	size_t n = (size_t)snprintf(path, pathlen + 256, "%s", dir);
	while (n + 210 < pathlen) {
		path[n++] = '/';
		filled(path + n, 'd', 200);
		n += 200;
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			die(path);
	}
	path[n++] = '/';
	filled(path + n, 'f', pathlen > n + 1 ? pathlen - n : 1);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, 4096) < 0)
		die(path);
	close(fd);
	return path;
}

/* n MAPs at paths of pathlen bytes; with dir, of a file there mapped n times. */
static void send_maps(unsigned n, size_t pathlen, const char *dir)
{
	static struct outbuf o;
	char *path = xmalloc(pathlen + 2);
	filled(path, 'm', pathlen);
	path[0] = '/';
	uint64_t *at_addr = NULL;
	if (dir) {
		/* All mapped before the first MAP goes: each is there when it is checked. */
		free(path);
		path = long_file(dir, pathlen);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			die(path);
		at_addr = xmalloc((n ? n : 1) * sizeof(*at_addr));
		for (unsigned i = 0; i < n; i++) {
			void *m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
			if (m == MAP_FAILED)
				die("mmap");
			at_addr[i] = (uint64_t)(uintptr_t)m;
		}
		close(fd);
	}
	size_t len = strlen(path);
	probe_wbuf_init(&o.w, o.b, sizeof(o.b));
	for (unsigned i = 0; i < n; i++) {
		out_room(&o, 128 + len);
		size_t at = probe_frame_begin(&o.w, PROBE_F_MAP, (uint32_t)getpid());
		uint64_t start = at_addr ? at_addr[i] : 0x100000000ull + (uint64_t)i * 0x10000;
		probe_put_u64(&o.w, start);
		probe_put_u64(&o.w, start + 0x1000);
		probe_put_u64(&o.w, start);
		probe_put_u64(&o.w, 0);
		probe_put_u8(&o.w, 20);
		for (int k = 0; k < 20; k++)
			probe_put_u8(&o.w, (uint8_t)(i + k));
		probe_put_str(&o.w, path);
		probe_frame_end(&o.w, at);
	}
	out_flush(&o);
	free(path);
	free(at_addr);
}

static void send_threads(unsigned n, size_t namelen)
{
	static struct outbuf o;
	char *name = xmalloc(namelen + 1);
	filled(name, 't', namelen);
	probe_wbuf_init(&o.w, o.b, sizeof(o.b));
	for (unsigned i = 0; i < n; i++) {
		out_room(&o, 32 + namelen);
		size_t at = probe_frame_begin(&o.w, PROBE_F_THREAD, (uint32_t)getpid());
		probe_put_u32(&o.w, 1000000 + i);
		probe_put_str(&o.w, name);
		probe_frame_end(&o.w, at);
	}
	out_flush(&o);
	free(name);
}

/* ---- modes ------------------------------------------------------------ */

static long num(const char *s, long lo, long hi)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi) {
		fprintf(stderr, "hostile_client: '%s': give a number from %ld to %ld\n",
			s, lo, hi);
		exit(2);
	}
	return v;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

/* Samples of one fixed stack (leaf first), about rate a second, for secs. */
static void steady(const uint64_t *frames, unsigned n, long rate, long secs)
{
	slot_live(0, (uint32_t)getpid());
	uint64_t end = mono_ns() + (uint64_t)secs * 1000000000ull;
	while (mono_ns() < end) {
		put_record(0, frames, n);
		sleep_ms(1000 / rate);
	}
}

static int mode_flood(int argc, char **argv)
{
	if (argc < 3)
		return -1;
	unsigned rings = (unsigned)num(argv[1], 1, PROBE_ARENA_SLOTS);
	long secs = num(argv[2], 1, 3600);
	unsigned depth = argc > 3 ? (unsigned)num(argv[3], 1, PROBE_MAX_FRAMES) : 256;
	connect_to(argv[0]);
	arena();
	hello("hostile", "/usr/bin/hostile", 0);
	for (unsigned i = 0; i < rings; i++)
		slot_live(i, (uint32_t)getpid() + 100000 + i);
	uint64_t frames[PROBE_MAX_FRAMES], end = mono_ns() + (uint64_t)secs * 1000000000ull;
	unsigned long written = 0;
	while (mono_ns() < end) {
		int any = 0;
		for (unsigned i = 0; i < rings; i++) {
			random_stack(frames, depth);
			while (put_record(i, frames, depth)) {
				written++;
				any = 1;
				random_stack(frames, depth);
			}
		}
		if (!any)
			sleep_ms(1);
	}
	fprintf(stderr, "hostile_client: flood: %lu samples of distinct stacks\n", written);
	return 0;
}

static int mode_bloat(int argc, char **argv)
{
	if (argc < 6 || argc > 7)
		return -1;
	size_t hello_kib = (size_t)num(argv[1], 0, 1024);
	unsigned maps = (unsigned)num(argv[2], 0, 1000000);
	size_t pathlen = (size_t)num(argv[3], 1, PROBE_STR_MAX);
	unsigned threads = (unsigned)num(argv[4], 0, 1000000);
	long secs = num(argv[5], 0, 3600);
	connect_to(argv[0]);
	arena();
	hello("bloat", "/usr/bin/bloat", hello_kib * 1024);
	send_maps(maps, pathlen, argc > 6 ? argv[6] : NULL);
	send_threads(threads, pathlen);
	/* Samples, so that every profile being taken replays all of that. */
	uint64_t frames[2] = { 0x100000100ull, 0x100010100ull };
	if (secs)
		steady(frames, 2, 20, secs);
	return 0;
}

static int mode_spoof(int argc, char **argv)
{
	if (argc < 4)
		return -1;
	long secs = num(argv[3], 1, 3600);
	connect_to(argv[0]);
	arena();
	hello(argv[1], argv[2], 0);
	uint64_t frames[2] = { SPOOF_LEAF, SPOOF_LEAF + 0x1000 };
	steady(frames, 2, 100, secs);
	return 0;
}

static int mode_record(int argc, char **argv)
{
	if (argc < 2)
		return -1;
	uint64_t want = (uint64_t)num(argv[1], 1, 1 << 20) << 20;
	unsigned depth = argc > 2 ? (unsigned)num(argv[2], 1, PROBE_MAX_FRAMES) : 256;
	FILE *f = fopen(argv[0], "we");
	if (!f)
		die(argv[0]);
	static uint8_t b[PROBE_FRAME_MAX];
	struct probe_wbuf w;
	probe_wbuf_init(&w, b, sizeof(b));
	probe_put_file_header(&w, PROBE_FILE_V1);
	size_t at = probe_frame_begin(&w, PROBE_F_HELLO, 4242);
	probe_put_u32(&w, PROBE_WIRE_VERSION);
	probe_put_u32(&w, 1);
	probe_put_u32(&w, PROBE_EVENT_TIMER);
	probe_put_u64(&w, 0);
	probe_put_u8(&w, 1);
	probe_put_u64(&w, 100);
	probe_put_u64(&w, 1000000000ull);
	probe_put_str(&w, "cpu-clock");
	probe_put_str(&w, "/usr/bin/deep");
	probe_put_str(&w, "deep");
	probe_put_u16(&w, 1);
	probe_put_str(&w, "deep");
	probe_frame_end(&w, at);
	uint64_t written = 0, t = 1000000000ull, frames[PROBE_MAX_FRAMES];
	for (;;) {
		if (fwrite(b, 1, w.len, f) != w.len)
			die(argv[0]);
		written += w.len;
		if (written >= want)
			break;
		probe_wbuf_init(&w, b, sizeof(b));
		at = probe_frame_begin(&w, PROBE_F_SAMPLES, 4242);
		probe_put_u64(&w, t);
		probe_put_uv(&w, 64);
		for (int s = 0; s < 64; s++) {
			random_stack(frames, depth);
			probe_put_uv(&w, 4242);
			probe_put_uv(&w, (uint64_t)s * 10000000u);
			probe_put_uv(&w, 10000000);
			probe_put_uv(&w, 0);
			probe_put_uv(&w, depth);
			for (unsigned k = 0; k < depth; k++)
				probe_put_sv(&w, (int64_t)(frames[k] - (k ? frames[k - 1] : 0)));
		}
		probe_frame_end(&w, at);
		t += 64 * 10000000ull;
	}
	if (fclose(f) != 0)
		die(argv[0]);
	return 0;
}

/*
 * A wake socket that is no wake: its collector end shut down for reading
 * (ready for ever, recv returns 0) or fed zero-length datagrams without end.
 */
static int mode_wake(int argc, char **argv)
{
	if (argc < 3)
		return -1;
	long secs = num(argv[1], 1, 3600);
	int shut = strcmp(argv[2], "shut") == 0, sv[2];
	if (!shut && strcmp(argv[2], "zero") != 0)
		return -1;
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv) < 0)
		die("socketpair");
	if (shut && shutdown(sv[1], SHUT_RD) < 0)
		die("shutdown");
	connect_to(argv[0]);
	arena();
	extra_fd = sv[1];
	hello("hostile", "/usr/bin/hostile", 0);
	uint64_t end = mono_ns() + (uint64_t)secs * 1000000000ull;
	while (mono_ns() < end)
		if (shut || send(sv[0], "", 0, MSG_DONTWAIT) < 0)
			sleep_ms(1);
	return 0;
}

static const struct mode {
	const char *name;
	int (*fn)(int argc, char **argv);
} modes[] = {
	{ "flood", mode_flood },
	{ "bloat", mode_bloat },
	{ "spoof", mode_spoof },
	{ "record", mode_record },
	{ "wake", mode_wake },
};

int main(int argc, char **argv)
{
	for (size_t i = 0; argc > 1 && i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(argv[1], modes[i].name) == 0) {
			int rc = modes[i].fn(argc - 2, argv + 2);
			if (rc >= 0)
				return rc;
			break;
		}
	fprintf(stderr, "usage: hostile_client flood SOCKET RINGS SECONDS [DEPTH]\n"
		"       hostile_client bloat SOCKET HELLO_KIB MAPS PATHLEN THREADS SECONDS"
		" [DIR]\n"
		"       hostile_client spoof SOCKET COMM EXE SECONDS\n"
		"       hostile_client record FILE MIB [DEPTH]\n"
		"       hostile_client wake SOCKET SECONDS shut|zero\n");
	return 2;
}
