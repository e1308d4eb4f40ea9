/*
 * gt_liar - a process that lies to its collector, for tests/97-trust.t:
 * it speaks include/probe/wire.h and arena.h itself, as a hostile user
 * would, and claims what it likes.
 *
 *   gt_liar SOCKET [-p PID] [-m PATH,BIAS,START,END] [-a ADDR]... [-j]
 *           [-c CONNS] [-t SECONDS]
 *     -p PID    the pid its frames name (default: its own)
 *     -m ...    a MAP of PATH over [START, END) with BIAS (hex), build-id
 *               none (claim one with -b HEX)
 *     -a ADDR   a frame of every sample, leaf first (hex; repeatable)
 *     -j        JIT code: an anonymous executable mapping at 0x3e0000000000
 *               whose address 0x3e0000000100 leads every stack; the handler's want[] asks a
 *               rule for it (so the collector looks for a perf map)
 *     -w ADDR   ask for the frame rule of ADDR (hex) all along, as the
 *               handler does; at the end print "rules N from-cfi M", the
 *               rules the collector wrote into the arena, M of them
 *               learned from an object's CFI (kind RSP or RBP)
 *     -M N      N more MAPs of -m's PATH, each at an address it maps nothing
 *               at (every one makes the collector look at its maps again)
 *     -V N      N more mappings of its own (its maps grow long)
 *     -x PROG   once connected, fork: this process execs PROG (a setuid
 *               program, say) and its child, keeping the socket, says
 *               it is this process and does the rest
 *     -c CONNS  open CONNS more connections and hold them (no HELLO)
 *     -t SEC    run that long (default 2), sending samples every 10 ms
 * Prints "pid PID jit ADDR" once set up; exit status 0, or 1 when the
 * collector could not be reached.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "probe/arena.h"
#include "probe/wire.h"
#include "wire_frames.h"

#define MAX_ADDRS 64
#define JIT_AT 0x3e0000000000ull

static uint64_t addrs[MAX_ADDRS];
static unsigned naddrs;
static uint32_t pid;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Send w's bytes, with the arena's descriptor when afd >= 0. */
static int send_rec(int fd, struct probe_wbuf *w, int afd)
{
	union { char b[CMSG_SPACE(sizeof(int))]; struct cmsghdr a; } ctl;
	struct iovec iov = { w->p, w->len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (afd >= 0) {
		mh.msg_control = ctl.b;
		mh.msg_controllen = sizeof ctl.b;
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &afd, sizeof afd);
	}
	return w->ok && sendmsg(fd, &mh, MSG_NOSIGNAL) == (ssize_t)w->len ? 0 : -1;
}

static void put_hello(struct probe_wbuf *w)
{
	test_put_hello(w, pid, (uint32_t)getppid(), now_ns(), "/usr/bin/gt_liar", "gt_liar");
}

static void put_map(struct probe_wbuf *w, const char *spec, const char *bid_hex)
{
	char path[4096];
	unsigned long long bias, start, end;
	uint8_t bid[PROBE_BUILD_ID_MAX];
	size_t nbid = 0;
	if (sscanf(spec, "%4095[^,],%llx,%llx,%llx", path, &bias, &start, &end) != 4) {
		fprintf(stderr, "gt_liar: -m PATH,BIAS,START,END\n");
		exit(2);
	}
	for (; bid_hex && bid_hex[0] && bid_hex[1] && nbid < sizeof bid; bid_hex += 2)
		sscanf(bid_hex, "%2hhx", &bid[nbid++]);
	size_t at = probe_frame_begin(w, PROBE_F_MAP, pid);
	probe_put_u64(w, start);
	probe_put_u64(w, end);
	probe_put_u64(w, bias);
	probe_put_u64(w, 0);
	probe_put_u8(w, nbid);
	probe_put_bytes(w, bid, nbid);
	probe_put_str(w, path);
	probe_frame_end(w, at);
}

static void put_samples(struct probe_wbuf *w, unsigned n)
{
	size_t at = probe_frame_begin(w, PROBE_F_SAMPLES, pid);
	probe_put_u64(w, now_ns());
	probe_put_uv(w, n);
	for (unsigned i = 0; i < n; i++) {
		uint64_t prev = 0;
		probe_put_uv(w, pid);
		probe_put_uv(w, i);
		probe_put_uv(w, 1001001);
		probe_put_uv(w, 0);
		probe_put_uv(w, naddrs);
		for (unsigned k = 0; k < naddrs; k++) {
			probe_put_sv(w, (int64_t)(addrs[k] - prev));
			prev = addrs[k];
		}
	}
	probe_frame_end(w, at);
}

/* A sealed arena, as libprobe makes one; NULL when it cannot. */
static struct probe_arena *make_arena(int *afd)
{
	int fd = memfd_create("probe-arena", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || ftruncate(fd, (off_t)PROBE_ARENA_SIZE) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		return NULL;
	struct probe_arena *a = mmap(NULL, PROBE_ARENA_SIZE, PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_NORESERVE, fd, 0);
	if (a == MAP_FAILED)
		return NULL;
	a->magic = PROBE_ARENA_MAGIC;
	a->version = PROBE_WIRE_VERSION;
	a->nslots = PROBE_ARENA_SLOTS;
	a->slot_data = PROBE_SLOT_DATA;
	a->size = PROBE_ARENA_SIZE;
	a->slots[0].tid = pid;
	a->slots[0].ring = PROBE_SLOT_DATA;     /* its largest from the start */
	memcpy(a->slots[0].name, "gt_liar", 8);
	__atomic_store_n(&a->slots[0].state, PROBE_SLOT_LIVE, __ATOMIC_RELEASE);
	__atomic_store_n(&a->slots_used, 1, __ATOMIC_RELEASE);
	*afd = fd;
	return a;
}

/* One record of the sample's stack into slot 0's ring, if it has room. */
static void ring_sample(struct probe_arena *a)
{
	uint8_t rec[PROBE_REC_MAX];
	struct probe_wbuf w;
	struct probe_slot *s = &a->slots[0];
	uint64_t prev = 0;
	probe_wbuf_init(&w, rec, sizeof rec);
	probe_put_u16(&w, 0);
	probe_put_uv(&w, now_ns());
	probe_put_uv(&w, 1001001);
	probe_put_uv(&w, 0);
	probe_put_uv(&w, naddrs);
	for (unsigned k = 0; k < naddrs; k++) {
		probe_put_sv(&w, (int64_t)(addrs[k] - prev));
		prev = addrs[k];
	}
	rec[0] = (uint8_t)w.len;
	rec[1] = (uint8_t)(w.len >> 8);
	uint64_t head = s->head, tail = __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE);
	if (head - tail + w.len > PROBE_SLOT_DATA)
		return;
	probe_ring_put(probe_arena_ring(a, 0, PROBE_SLOT_DATA), PROBE_SLOT_DATA, head,
		       rec, w.len);
	__atomic_store_n(&s->head, head + w.len, __ATOMIC_RELEASE);
}

/* Ask for a rule at key, as the handler does on a miss. */
static void want(struct probe_arena *a, uint64_t key)
{
	__atomic_store_n(&a->want[probe_rule_hash(key) & (PROBE_ARENA_WANT - 1)], key,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&a->want_pending, 1, __ATOMIC_RELEASE);
}

/* n mappings that cannot merge (every other page made unreadable). */
static void grow_maps(int n)
{
	if (n <= 0)
		return;
	uint8_t *p = mmap(NULL, (size_t)n * 2 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	if (p == MAP_FAILED)
		return;
	for (int i = 0; i < n; i++)
		mprotect(p + (size_t)i * 2 * 4096, 4096, PROT_NONE);
}

/* n MAPs of spec's path, each a page higher than the last, nothing mapped there. */
static int send_maps(int fd, const char *spec, int n)
{
	static uint8_t buf[PROBE_FRAME_MAX];
	char path[4096];
	unsigned long long bias, start, end;
	struct probe_wbuf w;
	if (sscanf(spec, "%4095[^,],%llx,%llx,%llx", path, &bias, &start, &end) != 4)
		return -1;
	for (int i = 0; i < n; i++) {
		uint64_t at = 0x200000000000ull + (uint64_t)i * 4096;
		probe_wbuf_init(&w, buf, sizeof buf);
		size_t f = probe_frame_begin(&w, PROBE_F_MAP, pid);
		probe_put_u64(&w, at);
		probe_put_u64(&w, at + 4096);
		probe_put_u64(&w, at);
		probe_put_u64(&w, 0);
		probe_put_u8(&w, 0);
		probe_put_str(&w, path);
		probe_frame_end(&w, f);
		if (send_rec(fd, &w, -1) < 0)
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *map = NULL, *bid = NULL;
	int jit = 0, conns = 0, opt, nmaps = 0, nvmas = 0;
	const char *become = NULL;
	uint64_t ask = 0;
	double secs = 2;
	pid = (uint32_t)getpid();
	if (argc < 2)
		return 2;
	const char *sock = argv[1];
	optind = 2;
	while ((opt = getopt(argc, argv, "p:m:b:a:jw:M:V:x:c:t:")) != -1) {
		switch (opt) {
		case 'p': pid = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'm': map = optarg; break;
		case 'b': bid = optarg; break;
		case 'a':
			if (naddrs < MAX_ADDRS)
				addrs[naddrs++] = strtoull(optarg, NULL, 16);
			break;
		case 'j': jit = 1; break;
		case 'w': ask = strtoull(optarg, NULL, 16); break;
		case 'c': conns = atoi(optarg); break;
		case 'x': become = optarg; break;
		case 'M': nmaps = atoi(optarg); break;
		case 'V': nvmas = atoi(optarg); break;
		case 't': secs = atof(optarg); break;
		default: return 2;
		}
	}
	uint64_t jit_at = 0;
	if (jit) {
		/* At a known place, for the perf maps the test writes. */
		void *code = mmap((void *)JIT_AT, 65536, PROT_READ | PROT_WRITE | PROT_EXEC,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (code == MAP_FAILED)
			return 1;
		memset(code, 0xc3, 65536);      /* ret */
		jit_at = (uint64_t)(uintptr_t)code + 0x100;
		memmove(addrs + 1, addrs, sizeof addrs[0] * (MAX_ADDRS - 1));
		addrs[0] = jit_at;
		naddrs += naddrs < MAX_ADDRS;
	}
	if (!naddrs)
		addrs[naddrs++] = 0x1000;
	int fd = connect_to(sock), afd = -1;
	if (fd < 0) {
		perror("gt_liar: connect");
		return 1;
	}
	if (become) {
		pid_t child = fork();
		if (child > 0) {
			execl(become, become, (char *)NULL);
			_exit(127);
		}
		usleep(300000);         /* the parent runs PROG by now */
		pid = (uint32_t)getppid();
	}
	struct probe_arena *a = make_arena(&afd);
	static uint8_t buf[PROBE_FRAME_MAX];
	struct probe_wbuf w;
	probe_wbuf_init(&w, buf, sizeof buf);
	put_hello(&w);
	if (map)
		put_map(&w, map, bid);
	if (send_rec(fd, &w, a ? afd : -1) < 0)
		return 1;
	grow_maps(nvmas);
	if (map && nmaps && send_maps(fd, map, nmaps) < 0)
		return 1;
	int held = 0;
	for (int i = 0; i < conns; i++)
		held += connect_to(sock) >= 0;
	printf("pid %u jit %llx held %d\n", (unsigned)getpid(), (unsigned long long)jit_at, held);
	fflush(stdout);
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);
	while (now_ns() < end) {
		probe_wbuf_init(&w, buf, sizeof buf);
		put_samples(&w, 10);
		if (send_rec(fd, &w, -1) < 0 && errno != EAGAIN)
			break;
		if (a) {
			ring_sample(a);
			if (jit)
				want(a, jit_at);
			if (ask)
				want(a, ask);
		}
		usleep(10000);
	}
	if (ask && a) {
		unsigned rules = 0, cfa = 0;
		for (unsigned i = 0; i < PROBE_RULE_SETS; i++)
			for (unsigned k = 0; k < PROBE_RULE_WAYS; k++) {
				unsigned kind = a->rules[i][k].rule & 0xf;
				rules += a->rules[i][k].key != 0;
				cfa += a->rules[i][k].key && (kind == PROBE_RULE_RSP ||
							      kind == PROBE_RULE_RBP);
			}
		printf("rules %u from-cfi %u\n", rules, cfa);
	}
	return 0;
}
