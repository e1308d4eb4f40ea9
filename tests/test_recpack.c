/*
 * test_recpack.c - recordings of version 3 (session/recpack.h, recfile.h,
 * data/wire_recorded.c): samples written as STACKs and STACKED frames in
 * compressed blocks come back exactly (thread, time, weight, event,
 * frames, in order), across epochs of the writer's table and uncompressed
 * too; damage costs bounded samples and never gives one another stack;
 * the decoder refuses what is out of bounds; a compression bomb is read
 * no further.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "tap.h"
#include "probe/wire.h"
#include "data/wire_decode.h"
#include "session/recfile.h"
#include "session/recpack.h"
#include "wire_frames.h"

#define NSAMPLES 300000
#define NSTACKS 3000
#define BATCH 64
#define PID 4242

struct want {
	uint32_t tid, event, stack;
	uint64_t time, weight;
};

static struct want *want;
static uint64_t *stacks[NSTACKS];
static uint32_t depth[NSTACKS];
static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void make_stacks(void)
{
	for (int s = 0; s < NSTACKS; s++) {
		depth[s] = 4 + (uint32_t)(rnd() % 40);
		stacks[s] = malloc(depth[s] * sizeof(uint64_t));
		for (uint32_t f = 0; f < depth[s]; f++)
			stacks[s][f] = 0x400000 + (rnd() % 0x100000);
	}
	want = malloc(NSAMPLES * sizeof(*want));
	uint64_t t = 1000000000ull;
	for (int i = 0; i < NSAMPLES; i++) {
		double u = (double)(rnd() >> 11) / 9007199254740992.0;
		t += 1000000 + rnd() % 5000;
		want[i] = (struct want){ 100 + (uint32_t)(rnd() % 3), (uint32_t)(rnd() % 2),
					 (uint32_t)(u * u * NSTACKS), t, 1000000 + rnd() % 99 };
	}
}

static size_t put_hello(uint8_t *b)
{
	struct probe_wbuf w;
	probe_wbuf_init(&w, b, 4096);
	test_put_hello(&w, PID, 1, 1, "/bin/x", "x");
	return w.len;
}

/* The samples [i, i + n) as one SAMPLES frame. */
static size_t put_samples(uint8_t *b, size_t cap, int i, int n)
{
	struct probe_wbuf w;
	probe_wbuf_init(&w, b, cap);
	size_t at = probe_frame_begin(&w, PROBE_F_SAMPLES, PID);
	probe_put_u64(&w, want[i].time);
	probe_put_uv(&w, (uint64_t)n);
	for (int k = i; k < i + n; k++) {
		probe_put_uv(&w, want[k].tid);
		probe_put_uv(&w, want[k].time - want[i].time);
		probe_put_uv(&w, want[k].weight);
		probe_put_uv(&w, want[k].event);
		probe_put_uv(&w, depth[want[k].stack]);
		uint64_t prev = 0;
		for (uint32_t f = 0; f < depth[want[k].stack]; f++) {
			probe_put_sv(&w, (int64_t)(stacks[want[k].stack][f] - prev));
			prev = stacks[want[k].stack][f];
		}
	}
	probe_frame_end(&w, at);
	return w.ok ? w.len : 0;
}

static int write_file(const char *path, int level)
{
	struct recfile f;
	static uint8_t b[PROBE_FRAME_MAX];
	unlink(path);
	if (recfile_open(&f, path) < 0)
		return -1;
	recfile_level(&f, level);
	recfile_frame(&f, b, put_hello(b));
	for (int i = 0; i < NSAMPLES; i += BATCH)
		recfile_frame(&f, b, put_samples(b, sizeof(b), i,
						 NSAMPLES - i < BATCH ? NSAMPLES - i : BATCH));
	return recfile_close(&f);
}

/* What came back: each sample checked against the one of the same time. */
struct got {
	int n, wrong, in_order;
	uint64_t last_time;
	int at;                 /* index into want, moving forward */
};

static void take(void *arg, struct probe_msg *m)
{
	struct got *g = arg;
	struct probe_sample s;
	while (probe_samples_next(m, &s)) {
		while (g->at < NSAMPLES && want[g->at].time < s.time_ns)
			g->at++;
		if (g->at >= NSAMPLES || want[g->at].time != s.time_ns) {
			g->wrong++;
			continue;
		}
		const struct want *w = &want[g->at];
		int same = s.tid == w->tid && s.event == w->event && s.weight == w->weight &&
			   s.nframes == depth[w->stack];
		for (uint32_t f = 0; same && f < s.nframes; f++)
			same = s.frames[f] == stacks[w->stack][f];
		g->wrong += !same;
		g->in_order &= s.time_ns > g->last_time;
		g->last_time = s.time_ns;
		g->n++;
	}
}

static struct got read_file(const char *path)
{
	struct got g = { 0, 0, 1, 0, 0 };
	FILE *fp = fopen(path, "rb");
	if (fp) {
		recfile_read(path, fileno(fp), take, &g);
		fclose(fp);
	}
	return g;
}

static long file_size(const char *path)
{
	FILE *fp = fopen(path, "rb");
	long n = -1;
	if (fp && fseek(fp, 0, SEEK_END) == 0)
		n = ftell(fp);
	if (fp)
		fclose(fp);
	return n;
}

static void damage(const char *from, const char *to, long at)
{
	FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
	int c;
	long i = 0;
	while (a && b && (c = fgetc(a)) != EOF) {
		if (i >= at && i < at + 12)
			c = 0xff;
		fputc(c, b);
		i++;
	}
	if (a)
		fclose(a);
	if (b)
		fclose(b);
}

static void test_decoder_bounds(void)
{
	uint8_t b[256];
	struct probe_wbuf w;
	struct probe_scratch sc;
	struct probe_msg m;
	char err[PROBE_ERR_MAX];
	probe_scratch_init(&sc);

	probe_wbuf_init(&w, b, sizeof(b));
	size_t at = probe_frame_begin(&w, PROBE_F_STACK, 1);
	probe_put_uv(&w, 0);
	probe_put_uv(&w, PROBE_STACK_IDS);
	probe_put_uv(&w, 1);
	probe_put_uv(&w, 0);
	probe_put_uv(&w, 0);
	probe_put_sv(&w, 5);
	probe_frame_end(&w, at);
	ok(probe_decode_frame(b, w.len, &m, &sc, err) < 0 && strstr(err, "STACK"),
	   "a STACK id out of bounds is refused: %s", err);

	probe_wbuf_init(&w, b, sizeof(b));
	at = probe_frame_begin(&w, PROBE_F_STACKED, 1);
	probe_put_u64(&w, 1);
	probe_put_uv(&w, 0);
	probe_put_uv(&w, 1);
	probe_put_uv(&w, 1);
	probe_put_sv(&w, 0);
	probe_put_uv(&w, 1);
	probe_put_uv(&w, 0);
	probe_put_sv(&w, (int64_t)PROBE_STACK_IDS + 1);
	probe_frame_end(&w, at);
	ok(probe_decode_frame(b, w.len, &m, &sc, err) < 0,
	   "a STACKED sample naming an id out of bounds is refused: %s", err);

	probe_wbuf_init(&w, b, sizeof(b));
	at = probe_frame_begin(&w, PROBE_F_ZSTD, 0);
	probe_put_uv(&w, (uint64_t)PROBE_ZSTD_RAW_MAX + 1);
	probe_put_u8(&w, 0);
	probe_frame_end(&w, at);
	ok(probe_decode_frame(b, w.len, &m, &sc, err) < 0 && strstr(err, "ZSTD"),
	   "a ZSTD frame holding more than a block is refused: %s", err);

	/* SYMTAB: a function whose range wraps. */
	probe_wbuf_init(&w, b, sizeof(b));
	at = probe_frame_begin(&w, PROBE_F_SYMTAB, 1);
	probe_put_u8(&w, 2);
	probe_put_u16(&w, 0xabcd);
	probe_put_str(&w, "/x");
	probe_put_uv(&w, 1);
	probe_put_uv(&w, UINT64_MAX - 4);
	probe_put_uv(&w, 16);
	probe_put_u8(&w, PROBE_SYM_FUNC);
	probe_put_str(&w, "f");
	probe_put_uv(&w, 0);
	probe_frame_end(&w, at);
	ok(probe_decode_frame(b, w.len, &m, &sc, err) < 0,
	   "a SYMTAB function whose range wraps is refused: %s", err);

	/* SYMTAB, good: walked as written. */
	probe_wbuf_init(&w, b, sizeof(b));
	at = probe_frame_begin(&w, PROBE_F_SYMTAB, 1);
	probe_put_u8(&w, 2);
	probe_put_u16(&w, 0xabcd);
	probe_put_str(&w, "/x");
	probe_put_uv(&w, 2);
	probe_put_uv(&w, 0x1000);
	probe_put_uv(&w, 0x40);
	probe_put_u8(&w, PROBE_SYM_FUNC);
	probe_put_str(&w, "main");
	probe_put_uv(&w, 0x100);
	probe_put_uv(&w, 0x20);
	probe_put_u8(&w, PROBE_SYM_FDE);
	probe_put_str(&w, "");
	probe_put_uv(&w, 1);
	probe_put_uv(&w, 0x1010);
	probe_put_u8(&w, 2);
	probe_put_str(&w, "inl");
	probe_put_str(&w, "a.c");
	probe_put_uv(&w, 7);
	probe_put_u8(&w, 1);
	probe_put_str(&w, "main");
	probe_put_str(&w, "a.c");
	probe_put_uv(&w, 12);
	probe_put_u8(&w, 0);
	probe_frame_end(&w, at);
	int dec = probe_decode_frame(b, w.len, &m, &sc, err) == 0;
	struct probe_symtab_walk wk;
	struct probe_symfunc f1, f2;
	struct probe_symaddr ad;
	probe_symtab_funcs(&m, &wk);
	int nf = dec && probe_symtab_next_func(&wk, &f1) && probe_symtab_next_func(&wk, &f2) &&
		 !probe_symtab_next_func(&wk, &f1);
	probe_symtab_funcs(&m, &wk);
	probe_symtab_next_func(&wk, &f1);
	probe_symtab_addrs(&m, &wk);
	int na = dec && probe_symtab_next_addr(&wk, &ad) && !probe_symtab_next_addr(&wk, &ad);
	ok(nf && na && f1.start == 0x1000 && f1.size == 0x40 && f2.start == 0x1100 &&
	   f2.kind == PROBE_SYM_FDE && !f2.name && ad.vaddr == 0x1010 && ad.nsrc == 2 &&
	   ad.src[0].inlined && ad.src[1].line == 12 && ad.src[0].name_len == 3,
	   "a SYMTAB is walked as written (functions, then addresses with their frames)");
	probe_scratch_free(&sc);
}

static void count_take(void *arg, struct probe_msg *m)
{
	(void)m;
	(*(int *)arg)++;
}

/*
 * A forged recording of ZSTD frames that each unpack into 1 MiB of zeros
 * (about 50 bytes apiece): read no further once they gave 1024 times what
 * was read, with a warning.
 */
static void test_bomb(const char *path)
{
	static uint8_t zero[PROBE_ZSTD_RAW_MAX], z[4096], b[8192];
	size_t zn = ZSTD_compress(z, sizeof(z), zero, sizeof(zero), 19);
	FILE *fp = fopen(path, "wb");
	struct probe_wbuf w;
	probe_wbuf_init(&w, b, sizeof(b));
	probe_put_file_header(&w, PROBE_FILE_VERSION);
	fwrite(b, 1, w.len, fp);
	for (int i = 0; i < 4000 && !ZSTD_isError(zn); i++) {
		probe_wbuf_init(&w, b, sizeof(b));
		size_t at = probe_frame_begin(&w, PROBE_F_ZSTD, 0);
		probe_put_uv(&w, sizeof(zero));
		probe_put_bytes(&w, z, zn);
		probe_frame_end(&w, at);
		uLong c = crc32(0L, b, (uInt)w.len);
		for (int k = 0; k < 4; k++)
			probe_put_u8(&w, (uint8_t)(c >> (8 * k)));
		fwrite(b, 1, w.len, fp);
	}
	fclose(fp);
	char errpath[128];
	snprintf(errpath, sizeof(errpath), "%s.err", path);
	fflush(stderr);
	int saved = dup(2), efd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(efd, 2);
	int taken = 0;
	fp = fopen(path, "rb");
	int rc = recfile_read(path, fileno(fp), count_take, &taken);
	fclose(fp);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(efd);
	char msg[1024] = "";
	fp = fopen(errpath, "r");
	size_t got = fp ? fread(msg, 1, sizeof(msg) - 1, fp) : 0;
	msg[got] = '\0';
	if (fp)
		fclose(fp);
	unlink(errpath);
	ok(rc == 0 && strstr(msg, "read no further") && strstr(msg, "1024 times"),
	   "ZSTD frames of %zu bytes unpacking into 1 MiB each: stopped, said: %.*s", zn,
	   (int)strcspn(msg, "\n"), msg);
}

int main(void)
{
	plan(14);
	make_stacks();
	char z[] = "/tmp/test_recpack.XXXXXX";
	int fd = mkstemp(z);
	if (fd >= 0)
		close(fd);
	char raw[64], bad[64];
	snprintf(raw, sizeof(raw), "%s.raw", z);
	snprintf(bad, sizeof(bad), "%s.bad", z);

	ok(write_file(z, RECPACK_ZSTD_LEVEL) == 0 && write_file(raw, 0) == 0,
	   "%d samples of %d stacks written, compressed and not", NSAMPLES, NSTACKS);
	long zs = file_size(z), rs = file_size(raw);
	/* A sample: a few bytes of tid, time delta, weight, event, id. */
	ok(rs > 0 && (double)rs / NSAMPLES < 14,
	   "uncompressed: %.1f bytes a sample (each stack written once an epoch)",
	   (double)rs / NSAMPLES);
	/* Random weights and times: compressing pays less than on real samples. */
	ok(zs > 0 && zs < rs * 4 / 5, "compressed: %.1f bytes a sample", (double)zs / NSAMPLES);

	struct got g = read_file(z);
	ok(g.n == NSAMPLES && !g.wrong && g.in_order,
	   "compressed: all %d samples back, %d wrong, in order: %d", g.n, g.wrong, g.in_order);
	g = read_file(raw);
	ok(g.n == NSAMPLES && !g.wrong && g.in_order,
	   "uncompressed: all %d samples back, %d wrong, in order: %d", g.n, g.wrong, g.in_order);

	/*
	 * Damage in a third of the file and in two thirds: a block's samples
	 * (16 KiB of frames, 5 bytes a sample at least: 3,277) and those of
	 * the stacks it wrote until the next epoch are lost; none comes back
	 * with another's stack.
	 */
	for (int k = 1; k <= 2; k++) {
		damage(z, bad, zs * k / 3);
		g = read_file(bad);
		ok(!g.wrong && g.n < NSAMPLES && g.n > NSAMPLES / 2,
		   "damaged at %d/3: %d of %d samples back, %d wrong", k, g.n, NSAMPLES,
		   g.wrong);
	}
	/* Uncompressed: a batch or two, or one stack's samples to the epoch's end. */
	damage(raw, bad, rs / 2);
	g = read_file(bad);
	ok(!g.wrong && g.n < NSAMPLES && g.n >= NSAMPLES * 9 / 10,
	   "uncompressed, damaged: %d of %d back, %d wrong", g.n, NSAMPLES, g.wrong);

	test_decoder_bounds();
	test_bomb(bad);
	unlink(z);
	unlink(raw);
	unlink(bad);
	return done();
}
