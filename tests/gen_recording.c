/*
 * gen_recording - write a synthetic probe recording for timing `probe
 * report` (scripts/bench --report).
 *
 *   gen_recording [--every] [--old | --v2] OUT [SAMPLES [STACKS [SEED]]]
 *
 * The recording describes this very process: a HELLO, one MAP per
 * executable segment of every object it has loaded (libc, libm, itself, the
 * vDSO) with their real build-ids, so that `probe report` symbolizes it from
 * the files on disk, and SAMPLES batches as libprobe sends them.
 *
 * "libc-heavy": STACKS distinct call stacks (default 20000), 8 to 40 frames
 * deep, built from the entry points of libc and libm functions (found with
 * dlsym, so every frame names a real function) over a few frames of this
 * program down to main; SAMPLES samples (default 1000000) drawn from them
 * with a skewed distribution (a few hot stacks, a long tail), as real
 * profiles look.  The same SEED gives the same file.  --every: the first
 * STACKS samples take every stack once, so that the recording has STACKS
 * distinct stacks (for the flame graphs' 100,000-stack case, scripts/bench
 * --flame), then the skewed draw goes on.  Samples are a timer's: 1001001
 * ns apart, give or take up to 2 us.
 *
 * The file is written as probe record writes it (session/recfile.h: stacks
 * once, compressed, named; file version 3); --old: as probe wrote
 * recordings at first (version 1, every sample's stack in full, no CRCs),
 * --v2: with a CRC after each frame (version 2), for the tests that old
 * recordings are still read.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
#include <zlib.h>

#include "probe/buildid.h"
#include "probe/wire.h"
#include "session/recfile.h"

#define BATCH_SAMPLES 512

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static FILE *out;                /* --old, --v2 */
static unsigned old_version;    /* their file version */
static struct recfile rf;       /* else */
static uint8_t *fbuf;
#define FBUF_CAP (PROBE_FRAME_MAX)

static void emit(struct probe_wbuf *w)
{
	if (!w->ok) {
		fprintf(stderr, "gen_recording: frame too big\n");
		exit(1);
	}
	if (!out) {
		recfile_frame(&rf, w->p, w->len);
		return;
	}
	if (old_version == PROBE_FILE_V2) {
		uLong c = crc32(0L, w->p, (uInt)w->len);
		uint8_t crc[4] = { (uint8_t)c, (uint8_t)(c >> 8), (uint8_t)(c >> 16),
				   (uint8_t)(c >> 24) };
		probe_put_bytes(w, crc, 4);
	}
	if (fwrite(w->p, 1, w->len, out) != w->len) {
		fprintf(stderr, "gen_recording: write: %s\n", strerror(errno));
		exit(1);
	}
}

static int map_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	int *index = arg;
	char exe[4096];
	const char *path = info->dlpi_name;
	uintptr_t vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	(void)size;
	if ((*index)++ == 0 && (!path || !*path)) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0)
			return 0;
		exe[n] = '\0';
		path = exe;
	} else if (vdso && (uintptr_t)info->dlpi_phdr >= vdso &&
		   (uintptr_t)info->dlpi_phdr < vdso + 4096) {
		path = "[vdso]";
	} else if (!path || !*path) {
		return 0;
	}
	uint8_t bid[PROBE_BUILD_ID_MAX];
	unsigned blen = probe_build_id(info, bid);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || !ph->p_memsz)
			continue;
		struct probe_wbuf w;
		probe_wbuf_init(&w, fbuf, FBUF_CAP);
		size_t at = probe_frame_begin(&w, PROBE_F_MAP, (uint32_t)getpid());
		probe_put_u64(&w, info->dlpi_addr + ph->p_vaddr);
		probe_put_u64(&w, info->dlpi_addr + ph->p_vaddr + ph->p_memsz);
		probe_put_u64(&w, info->dlpi_addr);
		probe_put_u64(&w, ph->p_offset);
		probe_put_u8(&w, blen);
		probe_put_bytes(&w, bid, blen);
		probe_put_str(&w, path);
		probe_frame_end(&w, at);
		emit(&w);
	}
	return 0;
}

/* Functions whose entry points make up the stacks (libc-heavy). */
static const char *const fnames[] = {
	"malloc", "free", "calloc", "realloc", "memcpy", "memmove", "memset",
	"memcmp", "strlen", "strcmp", "strncmp", "strchr", "strrchr", "strstr",
	"strcpy", "strncpy", "strdup", "qsort", "bsearch", "printf", "fprintf",
	"snprintf", "vfprintf", "sprintf", "sscanf", "fopen", "fclose", "fread",
	"fwrite", "fgets", "fputs", "puts", "getline", "read", "write", "open",
	"close", "lseek", "mmap", "munmap", "pthread_mutex_lock",
	"pthread_mutex_unlock", "pthread_create", "pthread_join", "clock_gettime",
	"gettimeofday", "time", "localtime_r", "strftime", "getenv", "setenv",
	"atoi", "strtol", "strtod", "strtoul", "isalpha", "toupper", "tolower",
	"rand", "srand", "random", "abort", "exit", "atexit", "dlopen", "dlsym",
	"iconv", "setlocale", "wcslen", "mbstowcs", "regcomp", "regexec",
	"fnmatch", "glob", "opendir", "readdir", "closedir", "stat", "fstat",
	"poll", "select", "epoll_wait", "socket", "connect", "send", "recv",
	"sin", "cos", "exp", "log", "pow", "sqrt", "floor", "ceil", "atan2",
	"tan", "fmod", "hypot",
};

static void spin_frame(void)
{
}

int main(int argc, char **argv)
{
	int every = 0, old = 0;
	for (;;) {
		if (argc > 1 && strcmp(argv[1], "--every") == 0)
			every = 1;
		else if (argc > 1 && strcmp(argv[1], "--old") == 0)
			old = PROBE_FILE_V1;
		else if (argc > 1 && strcmp(argv[1], "--v2") == 0)
			old = PROBE_FILE_V2;
		else
			break;
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: gen_recording [--every] [--old | --v2] OUT [SAMPLES [STACKS [SEED]]]\n");
		return 2;
	}
	uint64_t nsamples = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
	size_t nstacks = argc > 3 ? strtoul(argv[3], NULL, 10) : 20000;
	rng_state = argc > 4 ? strtoull(argv[4], NULL, 10) : 42;
	if (!rng_state)
		rng_state = 42;
	if (!nstacks)
		nstacks = 1;
	if (old)
		out = fopen(argv[1], "wbe");
	if (old && !out) {
		fprintf(stderr, "gen_recording: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (!old && recfile_open(&rf, argv[1]) < 0)
		return 1;

	fbuf = malloc(FBUF_CAP);
	void *libm = dlopen("libm.so.6", RTLD_NOW);
	uint64_t addrs[sizeof(fnames) / sizeof(fnames[0])];
	size_t naddrs = 0;
	for (size_t i = 0; i < sizeof(fnames) / sizeof(fnames[0]); i++) {
		void *p = dlsym(RTLD_DEFAULT, fnames[i]);
		if (!p && libm)
			p = dlsym(libm, fnames[i]);
		if (p)
			addrs[naddrs++] = (uint64_t)(uintptr_t)p;
	}
	if (naddrs < 8) {
		fprintf(stderr, "gen_recording: too few libc functions found\n");
		return 1;
	}
	uint32_t pid = (uint32_t)getpid();

	struct probe_wbuf w;
	probe_wbuf_init(&w, fbuf, FBUF_CAP);
	if (old) {
		old_version = (unsigned)old;
		probe_put_file_header(&w, old_version);  /* old files still read */
		fwrite(w.p, 1, w.len, out);
		probe_wbuf_init(&w, fbuf, FBUF_CAP);
	}
	size_t at = probe_frame_begin(&w, PROBE_F_HELLO, pid);
	probe_put_u32(&w, PROBE_WIRE_VERSION);
	probe_put_u32(&w, (uint32_t)getppid());
	probe_put_u32(&w, 1);           /* PERF_TYPE_SOFTWARE */
	probe_put_u64(&w, 0);           /* cpu-clock */
	probe_put_u8(&w, 1);
	probe_put_u64(&w, 999);
	probe_put_u64(&w, 1000000000ull);
	probe_put_str(&w, "cpu-clock");
	char exe[4096];
	ssize_t el = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[el > 0 ? el : 0] = '\0';
	probe_put_str(&w, exe);
	probe_put_str(&w, "gen_recording");
	probe_put_u16(&w, (unsigned)(argc < 256 ? argc : 256));
	for (int i = 0; i < argc && i < 256; i++)
		probe_put_str(&w, argv[i]);
	probe_frame_end(&w, at);
	emit(&w);
	int index = 0;
	dl_iterate_phdr(map_cb, &index);
	probe_wbuf_init(&w, fbuf, FBUF_CAP);
	at = probe_frame_begin(&w, PROBE_F_THREAD, pid);
	probe_put_u32(&w, pid);
	probe_put_str(&w, "gen_recording");
	probe_frame_end(&w, at);
	emit(&w);

	/* The stack pool: leaf first, a few of our own frames at the bottom. */
	uint64_t own[3] = { (uint64_t)(uintptr_t)main + 40, (uint64_t)(uintptr_t)spin_frame + 1,
			    (uint64_t)(uintptr_t)emit + 20 };
	uint64_t **stacks = malloc(nstacks * sizeof(*stacks));
	uint32_t *depth = malloc(nstacks * sizeof(*depth));
	for (size_t s = 0; s < nstacks; s++) {
		uint32_t d = 8 + (uint32_t)(rnd() % 33);
		stacks[s] = malloc(d * sizeof(uint64_t));
		depth[s] = d;
		for (uint32_t f = 0; f + 3 < d; f++) {
			/* A point inside the function: entry + a small offset. */
			uint64_t a = addrs[rnd() % naddrs];
			stacks[s][f] = a + (rnd() % 48) + (f ? 5 : 0);
		}
		for (uint32_t f = d - 3, k = 0; f < d; f++, k++)
			stacks[s][f] = own[2 - k];
	}

	uint64_t t = 1000000000ull;
	uint64_t left = nsamples;
	while (left) {
		uint32_t n = left > BATCH_SAMPLES ? BATCH_SAMPLES : (uint32_t)left;
		probe_wbuf_init(&w, fbuf, FBUF_CAP);
		at = probe_frame_begin(&w, PROBE_F_SAMPLES, pid);
		probe_put_u64(&w, t);
		probe_put_uv(&w, n);
		for (uint32_t i = 0; i < n; i++) {
			/* Skewed: a uniform number cubed favours low indexes. */
			double u = (double)(rnd() >> 11) / 9007199254740992.0;
			size_t s = (size_t)(u * u * u * (double)nstacks);
			if (s >= nstacks)
				s = nstacks - 1;
			if (every && nsamples - left + i < nstacks)
				s = nsamples - left + i;
			probe_put_uv(&w, pid);
			probe_put_uv(&w, (uint64_t)i * 1001001 + rnd() % 2000);
			probe_put_uv(&w, 1001001);
			probe_put_uv(&w, 0);
			probe_put_uv(&w, depth[s]);
			uint64_t prev = 0;
			for (uint32_t f = 0; f < depth[s]; f++) {
				probe_put_sv(&w, (int64_t)(stacks[s][f] - prev));
				prev = stacks[s][f];
			}
		}
		probe_frame_end(&w, at);
		emit(&w);
		t += (uint64_t)n * 1001001;
		left -= n;
	}
	probe_wbuf_init(&w, fbuf, FBUF_CAP);
	at = probe_frame_begin(&w, PROBE_F_EXIT, pid);
	probe_put_u32(&w, 0);
	probe_put_u64(&w, nsamples);
	probe_put_u32(&w, 1);
	probe_frame_end(&w, at);
	emit(&w);
	if (!old && recfile_close(&rf) < 0)
		return 1;
	if (old && fclose(out) != 0) {
		fprintf(stderr, "gen_recording: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	for (size_t s = 0; s < nstacks; s++)
		free(stacks[s]);
	free(stacks);
	free(depth);
	free(fbuf);
	return 0;
}
