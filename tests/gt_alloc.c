/*
 * gt_alloc - ground truth for --alloc: three sites allocate known shares
 * of the bytes, in blocks of mixed sizes, and free them at once:
 *   site_a 50 %, site_b 30 %, site_c 20 %
 *   gt_alloc [MIB [LEAK_KIB [sigfree|hold]]]   (default 256 MiB in all; no leak)
 * LEAK_KIB: keep_leak allocates that many KiB in 1 KiB blocks and never
 * frees them (live at exit); with sigfree a signal handler (SIGUSR1, the
 * program sends it itself) frees them all before the end; with hold it
 * prints, then waits (60 s at most) until killed.  Prints the bytes each
 * site allocated and the blocks allocated in all.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gt_work.h"

static size_t nblocks;                  /* allocations made, in all */
/* Each block escapes here, so that the compiler keeps every malloc/free. */
static char *volatile escape;
static size_t rnd_state = 88172645463325252ull;

static size_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* bytes in blocks of 16 B to 64 KiB (log-uniform-ish), each freed at once */
#define SITE(name)                                                        \
	GT_KEEP static size_t name(size_t bytes)                          \
	{                                                                 \
		size_t done = 0;                                          \
		while (done < bytes) {                                    \
			size_t n = (size_t)16 << (rnd() % 13);            \
			n += rnd() % n;                                   \
			if (n > bytes - done)                             \
				n = bytes - done;                         \
			char *p = malloc(n);                              \
			if (!p)                                           \
				exit(1);                                  \
			nblocks++;                                        \
			p[0] = 1;                                         \
			escape = p;                                       \
			free(escape);                                     \
			done += n;                                        \
		}                                                         \
		return done;                                              \
	}

SITE(site_a)
SITE(site_b)
SITE(site_c)

static char **kept;
static size_t nkept;

/* Its blocks' list is a static array's, so that it allocates nothing else. */
#define KEEP_MAX (1u << 20)
static char *kept_blocks[KEEP_MAX];

GT_KEEP static size_t keep_leak(size_t kib)
{
	kept = kept_blocks;
	for (size_t i = 0; i < kib && i < KEEP_MAX; i++) {
		char *p = malloc(1024);
		if (!p)
			exit(1);
		nblocks++;
		memset(p, 1, 1024);
		kept[nkept++] = escape = p;
	}
	return nkept * 1024;
}

/* SIGUSR1 (sigfree): keep_leak's blocks freed in a signal handler. */
static void free_kept(int sig)
{
	(void)sig;
	for (size_t i = 0; i < nkept; i++)
		free(kept[i]);
	nkept = 0;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
	size_t leak = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
	size_t total = mib << 20, a = 0, b = 0, c = 0;

	/* interleaved in 1 MiB rounds, so that each site sees every phase */
	for (size_t r = 0; r < mib; r++) {
		a += site_a((total / 2) / mib);
		b += site_b((total * 3 / 10) / mib);
		c += site_c((total / 5) / mib);
	}
	size_t l = keep_leak(leak);
	if (argc > 3 && strcmp(argv[3], "sigfree") == 0) {
		signal(SIGUSR1, free_kept);
		raise(SIGUSR1);
	}
	printf("site_a %zu site_b %zu site_c %zu leak %zu blocks %zu\n", a, b, c, l,
	       nblocks);
	if (argc > 3 && strcmp(argv[3], "hold") == 0) {
		fflush(stdout);
		sleep(60);
	}
	return 0;
}
