/*
 * bench_sender - a synthetic libprobe for measuring the collector alone.
 *
 * Run under `probe record` or `probe top` (which set PROBE_SOCKET); forks
 * SENDERS processes, each of which connects like libprobe does and sends
 * HELLO, one MAP, then SAMPLES samples (in batches of 512) of DEPTH-frame
 * stacks drawn from STACKS distinct stacks, as fast as the collector reads
 * them, and an EXIT.  Prints its own CPU time so the bench can subtract it
 * from the total.
 *
 * The MAP is the real executable segment of this process's libc (address,
 * bias, offset, build-id, path), and every frame is an address inside it, so
 * a collector that symbolizes (probe top, probe report) resolves the frames
 * from the real libc on disk, as it would a real program's.  If libc cannot
 * be found, a 16 MiB mapping of a file that does not exist stands in (the
 * frames then show as object+offset).
 *
 *   bench_sender SAMPLES_PER_SENDER [SENDERS [STACKS [DEPTH]]]
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe/buildid.h"
#include "probe/wire.h"

#define BATCH 512

static int send_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The mapping every frame points into (see the top of this file). */
struct text_map {
	uint64_t start, end, bias, pgoff;
	uint8_t build_id[PROBE_BUILD_ID_MAX];
	unsigned build_id_len;
	char path[4096];
};

static int find_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct text_map *tm = arg;
	(void)size;
	const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
	if (!base || strncmp(base + 1, "libc.so", 7) != 0 ||
	    strlen(info->dlpi_name) >= sizeof(tm->path))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || ph->p_memsz < 4096)
			continue;
		tm->start = info->dlpi_addr + ph->p_vaddr;
		tm->end = tm->start + ph->p_memsz;
		tm->bias = info->dlpi_addr;
		tm->pgoff = ph->p_offset;
		tm->build_id_len = probe_build_id(info, tm->build_id);
		strcpy(tm->path, info->dlpi_name);
		return 1;
	}
	return 0;
}

static struct text_map text;

static int sender(long samples, long stacks, int depth)
{
	const char *path = getenv("PROBE_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (!path || strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "probe: bench_sender needs PROBE_SOCKET (run it under probe record)\n");
		return 1;
	}
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("probe: bench_sender: connect");
		return 1;
	}
	static uint8_t buf[PROBE_FRAME_MAX];
	struct probe_wbuf w;
	uint32_t pid = (uint32_t)getpid();
	probe_wbuf_init(&w, buf, sizeof(buf));
	size_t at = probe_frame_begin(&w, PROBE_F_HELLO, pid);
	probe_put_u32(&w, PROBE_WIRE_VERSION);
	probe_put_u32(&w, (uint32_t)getppid());
	probe_put_u32(&w, 1);
	probe_put_u64(&w, 0);
	probe_put_u8(&w, 1);
	probe_put_u64(&w, 999);
	probe_put_u64(&w, now_ns());
	probe_put_str(&w, "cpu-clock");
	char exe[4096];
	ssize_t el = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[el > 0 ? el : 0] = '\0';
	probe_put_str(&w, exe);
	probe_put_str(&w, "bench_sender");
	probe_put_u16(&w, 0);
	probe_frame_end(&w, at);
	at = probe_frame_begin(&w, PROBE_F_MAP, pid);
	probe_put_u64(&w, text.start);
	probe_put_u64(&w, text.end);
	probe_put_u64(&w, text.bias);
	probe_put_u64(&w, text.pgoff);
	probe_put_u8(&w, (uint8_t)text.build_id_len);
	probe_put_bytes(&w, text.build_id, text.build_id_len);
	probe_put_str(&w, text.path);
	probe_frame_end(&w, at);
	if (send_all(fd, buf, w.len) < 0)
		return 1;

	uint64_t seed = 0x9e3779b97f4a7c15ull ^ pid, t = now_ns();
	for (long done = 0; done < samples;) {
		long n = samples - done < BATCH ? samples - done : BATCH;
		probe_wbuf_init(&w, buf, sizeof(buf));
		at = probe_frame_begin(&w, PROBE_F_SAMPLES, pid);
		probe_put_u64(&w, t);
		probe_put_uv(&w, (uint64_t)n);
		for (long i = 0; i < n; i++) {
			seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
			uint64_t s = seed % (uint64_t)stacks, prev = 0;
			probe_put_uv(&w, pid);
			probe_put_uv(&w, (uint64_t)i * 1000);
			probe_put_uv(&w, 1001001);
			probe_put_uv(&w, 0);
			probe_put_uv(&w, (uint64_t)depth);
			for (int f = 0; f < depth; f++) {
				/* Stack s: a leaf that depends on s, callers shared. */
				uint64_t off = f == 0 ? s * 64 : (uint64_t)f * 4096 + (s >> (f % 8)) % 64;
				uint64_t pc = text.start + off % (text.end - text.start);
				probe_put_sv(&w, (int64_t)(pc - prev));
				prev = pc;
			}
		}
		probe_frame_end(&w, at);
		if (!w.ok || send_all(fd, buf, w.len) < 0) {
			fprintf(stderr, "probe: bench_sender: send failed\n");
			return 1;
		}
		done += n;
		t += 1000000;
	}
	probe_wbuf_init(&w, buf, sizeof(buf));
	at = probe_frame_begin(&w, PROBE_F_EXIT, pid);
	probe_put_u32(&w, 0);
	probe_put_u64(&w, (uint64_t)samples);
	probe_put_u32(&w, 1);
	probe_frame_end(&w, at);
	send_all(fd, buf, w.len);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	long samples = argc > 1 ? atol(argv[1]) : 1000000;
	int senders = argc > 2 ? atoi(argv[2]) : 1;
	long stacks = argc > 3 ? atol(argv[3]) : 10000;
	int depth = argc > 4 ? atoi(argv[4]) : 20;
	if (samples < 1 || senders < 1 || stacks < 1 || depth < 1 || depth > (int)PROBE_MAX_FRAMES) {
		fprintf(stderr, "usage: bench_sender SAMPLES [SENDERS [STACKS [DEPTH]]]\n");
		return 2;
	}
	if (!dl_iterate_phdr(find_libc, &text)) {
		text.start = 0x400000;
		text.end = 0x400000 + (1u << 24);
		strcpy(text.path, "/nonexistent/bench-object");
	}
	for (int i = 0; i < senders; i++) {
		pid_t p = fork();
		if (p == 0)
			_exit(sender(samples, stacks, depth));
		if (p < 0) {
			perror("probe: bench_sender: fork");
			return 1;
		}
	}
	int st, bad = 0;
	while (wait(&st) > 0)
		bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	struct rusage ru;
	getrusage(RUSAGE_CHILDREN, &ru);
	double cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		     (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	fprintf(stderr, "bench_sender: cpu %.3f s\n", cpu);
	return bad;
}
