/*
 * alloc.c - the allocator's entries, interposed for --alloc
 * (PROBE_ALLOC=BYTES): allocations sampled by bytes.  Built into
 * libprobe-alloc.so (and libprobe-offcpu-alloc.so) only, which --alloc
 * preloads instead of libprobe.so: a program profiled without it keeps
 * its allocator's entries untouched.
 *
 * Contract:
 *   - Sampling is a Poisson process over the bytes a thread allocates:
 *     each thread counts down a number of bytes drawn from an exponential
 *     distribution of mean PROBE_ALLOC; the allocation that takes it to 0
 *     or below is sampled, and a new countdown is drawn.  An allocation of
 *     n bytes is so sampled with chance 1 - exp(-n / PROBE_ALLOC),
 *     whatever came before it, which is what the reader unbiases by
 *     (wire.h: PROBE_EVENT_ALLOC).  PROBE_ALLOC=1 samples every one.
 *   - The fast path (not sampled): malloc subtracts in initial-exec TLS,
 *     branches and jumps to the real malloc (its bytes counted before the
 *     call: a failed malloc, rare, counts too); free reads one filter
 *     counter and jumps to the real free.  The other entries count after
 *     their real call, what they allocated.  A sampled allocation walks
 *     its caller's stack in place (the handler's frame rules, from the
 *     wrapper's frame) and writes one sample of the alloc event, weighted
 *     with its bytes, into the thread's arena ring, with the thread's
 *     handler kept out; a full ring is waited for (handler.c).
 *   - The next definitions are the real ones (dlsym RTLD_NEXT): a program
 *     that preloads jemalloc or tcmalloc after us keeps its allocator.
 *     dlsym may itself allocate before they are known: a static pool
 *     serves it (its blocks are never freed).
 *   - What stays in use: a sampled allocation gets an id (wire.h:
 *     PROBE_FRAME_ALLOC_ID) and its address goes into a lock-free table of
 *     sampled blocks; its free (or the realloc that moves or resizes it)
 *     takes it out and writes a PROBE_FRAME_FREED record with the id.  A
 *     free first reads one counter of a filter indexed by a hash of the
 *     address (nearly always 0: not sampled); only then the table.  Both
 *     are static (LIVE_SLOTS blocks, 4 MiB; a 2 MiB filter), pages that
 *     become memory as they are touched; a sampled block that finds no
 *     room is recorded with id 0 (its free unseen, counted).
 *   - Never recursive: what the sampled path allocates (libunwind, dlsym,
 *     pthread) goes straight to the real allocator (a TLS guard), and so
 *     do allocations from libprobe itself and before the constructor.
 *   - Our work in free keeps errno (the real free's is the program's).
 *   - Not seen: a free from a thread with no slot (not profiled), or from
 *     a signal handler that interrupted our own sampled path on its thread
 *     (counted as lost): that block stays in use in the collector's view.
 *     A child of fork frees its parent's sampled blocks unseen by the
 *     child's image (their ids are the parent's).
 */
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "probe.h"

/* main.c: this library has the wrappers (libprobe-alloc.so). */
extern const int probe_alloc_linked;
const int probe_alloc_linked = 1;

/* ---- the sampled blocks still in use --------------------------------------- */

#define LIVE_BITS 18
#define LIVE_SLOTS (1u << LIVE_BITS)            /* 262,144 blocks */
#define LIVE_PROBES 32u                         /* a lookup's longest walk */
#define FILTER_BITS 20
#define TOMB ((uint64_t)1)                      /* a slot freed (no block is at 1) */

struct live { uint64_t addr, id; };
static struct live live[LIVE_SLOTS];
static uint16_t filter[1u << FILTER_BITS];
static uint64_t next_id = 1;

static inline uint64_t mix(const void *p)
{
	return ((uint64_t)(uintptr_t)p >> 4) * 0x9e3779b97f4a7c15ull;
}

/*
 * The filter's counter of p: the address's bits 4 to 23, no hash (free's
 * fast path is two instructions shorter for it).  Blocks 16 MiB apart
 * share a counter: a free that meets another's count takes the rare path
 * and finds nothing in the table, which is all a collision costs.
 */
static inline uint16_t *filter_of(const void *p)
{
	return &filter[((uintptr_t)p >> 4) & ((1u << FILTER_BITS) - 1)];
}

/* p, just allocated and sampled: its id, 0 when the table has no room. */
static uint64_t track(const void *p)
{
	uint64_t h = mix(p) >> (64 - LIVE_BITS), a = (uint64_t)(uintptr_t)p;

	for (unsigned i = 0; i < LIVE_PROBES; i++) {
		struct live *e = &live[(h + i) & (LIVE_SLOTS - 1)];
		uint64_t k = __atomic_load_n(&e->addr, __ATOMIC_RELAXED);

		if ((k == 0 || k == TOMB) &&
		    __atomic_compare_exchange_n(&e->addr, &k, a, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			uint64_t id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);

			__atomic_store_n(&e->id, id, __ATOMIC_RELEASE);
			__atomic_add_fetch(filter_of(p), 1, __ATOMIC_RELEASE);
			return id;
		}
	}
	return 0;
}

/* p is being freed: its id if it was sampled (then no longer tracked), else 0. */
static uint64_t untrack(const void *p)
{
	uint64_t h = mix(p) >> (64 - LIVE_BITS), a = (uint64_t)(uintptr_t)p;

	for (unsigned i = 0; i < LIVE_PROBES; i++) {
		struct live *e = &live[(h + i) & (LIVE_SLOTS - 1)];
		uint64_t k = a;

		if (__atomic_load_n(&e->addr, __ATOMIC_ACQUIRE) == 0)
			return 0;
		if (__atomic_compare_exchange_n(&e->addr, &k, TOMB, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			uint64_t id = __atomic_load_n(&e->id, __ATOMIC_ACQUIRE);

			__atomic_sub_fetch(filter_of(p), 1, __ATOMIC_RELEASE);
			return id;
		}
	}
	return 0;
}

/* ---- the real allocator -------------------------------------------------- */

static void *(*real_malloc)(size_t);
static void (*real_free)(void *);
/*
 * What malloc's and free's fast paths jump to: the real ones once they
 * are known, until then functions of ours that find them (or use the pool).
 */
static void *boot_malloc(size_t n);
static void boot_free(void *p);
static void *(*next_malloc)(size_t) __attribute__((aligned(64))) = boot_malloc;
static void (*next_free)(void *) = boot_free;
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static void *(*real_valloc)(size_t);
static void *(*real_pvalloc)(size_t);

/* What dlsym allocates while the real functions are looked up. */
#define POOL_BYTES (64 * 1024)
static char pool[POOL_BYTES] __attribute__((aligned(16)));
static size_t pool_used;
static int resolving;

static int in_pool(const void *p)
{
	return (const char *)p >= pool && (const char *)p < pool + POOL_BYTES;
}

/*
 * 16-aligned, its size in the 16 bytes before it; NULL when full.  Marked
 * in the filter, so that its free takes free's rare path (never the real
 * allocator's).
 */
static void *pool_alloc(size_t n)
{
	size_t need = 16 + ((n + 15) & ~(size_t)15), at;

	if (n > POOL_BYTES)
		return NULL;
	at = __atomic_fetch_add(&pool_used, need, __ATOMIC_RELAXED);
	if (at + need > POOL_BYTES)
		return NULL;
	memcpy(pool + at, &n, sizeof n);
	__atomic_add_fetch(filter_of(pool + at + 16), 1, __ATOMIC_RELEASE);
	return pool + at + 16;
}

static size_t pool_size(const void *p)
{
	size_t n;

	memcpy(&n, (const char *)p - 16, sizeof n);
	return n;
}

static void resolve(void)
{
	if (__atomic_exchange_n(&resolving, 1, __ATOMIC_ACQ_REL))
		return;         /* dlsym's own allocation: the pool serves it */
	real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
	real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	real_posix_memalign = (int (*)(void **, size_t, size_t))dlsym(RTLD_NEXT,
								     "posix_memalign");
	real_aligned_alloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
	real_memalign = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
	real_valloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "valloc");
	real_pvalloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "pvalloc");
	__atomic_store_n(&real_malloc, (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc"),
			 __ATOMIC_RELEASE);
	if (real_malloc && real_free) {
		__atomic_store_n(&next_malloc, real_malloc, __ATOMIC_RELEASE);
		__atomic_store_n(&next_free, real_free, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&resolving, 0, __ATOMIC_RELEASE);
}

/* 1 when the real functions are known (else the pool is to serve). */
static inline int ready(void)
{
	if (__builtin_expect(__atomic_load_n(&real_malloc, __ATOMIC_ACQUIRE) != NULL, 1))
		return 1;
	resolve();
	return __atomic_load_n(&real_malloc, __ATOMIC_ACQUIRE) != NULL;
}

/* ---- the allocator's own functions ------------------------------------------ */

/*
 * C++'s operator new and new[] (libstdc++'s, or the program's own) call
 * malloc: a sample's stack starts at their caller, as tcmalloc's and
 * pprof's heap profiles do, so that the row is the program's function.
 * Their code's bounds, found once the constructor is done.
 */
static const char *const allocfn_names[] = {
	"_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t",
	"_ZnwmSt11align_val_t", "_ZnamSt11align_val_t",
	"_ZnwmSt11align_val_tRKSt9nothrow_t", "_ZnamSt11align_val_tRKSt9nothrow_t",
};
#define NALLOCFN (sizeof allocfn_names / sizeof allocfn_names[0])
static struct { uintptr_t lo, hi; } allocfn[NALLOCFN];
static unsigned nallocfn;

static void allocfn_find(void)
{
	for (unsigned i = 0; i < NALLOCFN; i++) {
		void *p = dlsym(RTLD_DEFAULT, allocfn_names[i]);
		const ElfW(Sym) *sym = NULL;
		Dl_info info;

		if (p && dladdr1(p, &info, (void **)&sym, RTLD_DL_SYMENT) && sym &&
		    sym->st_size) {
			allocfn[nallocfn].lo = (uintptr_t)p;
			allocfn[nallocfn].hi = (uintptr_t)p + sym->st_size;
			nallocfn++;
		}
	}
}

static int in_allocfn(uint64_t pc)
{
	for (unsigned i = 0; i < nallocfn; i++)
		if (pc >= allocfn[i].lo && pc < allocfn[i].hi)
			return 1;
	return 0;
}

/* ---- sampling -------------------------------------------------------------- */

/* Our own code's bounds: its allocations are not the program's. */
extern char __ehdr_start[], etext[];

static int sampling;                    /* the constructor is done: sample */
static int sampling_off;                /* not asked for, or stopped */
static __thread int64_t left;           /* bytes to the next sample */
static __thread uint64_t rng;           /* 0: this thread has not drawn yet */
static __thread int busy;               /* in the sampled path: no recursion */

/* ln(x) for x in (0, 1], within 1e-6: no libm in libprobe. */
static double ln(double x)
{
	union { double d; uint64_t u; } v = { .d = x };
	int e = (int)((v.u >> 52) & 0x7ff) - 1023;
	double s, s2;

	v.u = (v.u & 0x000fffffffffffffull) | 0x3ff0000000000000ull;   /* [1, 2) */
	if (v.d > 1.4142135623730951) {
		v.d /= 2;
		e++;
	}
	s = (v.d - 1) / (v.d + 1);      /* |s| <= 0.172 */
	s2 = s * s;
	return e * 0.6931471805599453 +
	       2 * s * (1 + s2 * (1.0 / 3 + s2 * (1.0 / 5 + s2 * (1.0 / 7 + s2 / 9))));
}

/* A countdown drawn from the exponential distribution of mean PROBE_ALLOC. */
static int64_t draw(void)
{
	double u, d;

	if (probe_cfg.alloc <= 1)
		return 0;               /* every allocation */
	rng ^= rng << 13;               /* xorshift64 */
	rng ^= rng >> 7;
	rng ^= rng << 17;
	u = (double)((rng >> 11) + 1) / 9007199254740992.0;    /* (0, 1] */
	d = -ln(u) * (double)probe_cfg.alloc;
	return d < 1 ? 1 : d > 4e18 ? (int64_t)4e18 : (int64_t)d;
}

/*
 * One sample of the block p of n bytes allocated from ret (the wrapper's
 * frame fp): its stack, then its id (wire.h), which its free will name.
 */
static void take(struct probe_thread *t, void *p, size_t n, void *ret, void *fp)
{
	uint64_t buf[PROBE_UNWIND_BUF], id;
	ucontext_t uc;
	int first = 0, partial = 0, k;

	memset(&uc, 0, sizeof uc);
	uc.uc_mcontext.gregs[REG_RIP] = (greg_t)ret;
	uc.uc_mcontext.gregs[REG_RSP] = (greg_t)((char *)fp + 16);
	uc.uc_mcontext.gregs[REG_RBP] = (greg_t)*(void **)fp;
	k = probe_unwind(t, &uc, buf, &first, probe_in_loader != 0, &partial);
	if (k <= 0 || partial)
		probe_lost(t, PROBE_LOST_UNWIND, 1);
	if (k <= 0) {
		first = 0;
		buf[0] = (uint64_t)(uintptr_t)ret;
		k = 1;
	}
	while (k > 1 && in_allocfn(buf[first])) {
		first++;        /* operator new: its caller is the allocation's */
		k--;
	}
	if (k > (int)PROBE_MAX_FRAMES - 2) {    /* the id's two words are kept */
		k = PROBE_MAX_FRAMES - 2;
		buf[first + k - 1] = PROBE_FRAME_TRUNCATED;
	}
	id = track(p);
	buf[first + k] = PROBE_FRAME_ALLOC_ID;
	buf[first + k + 1] = id;
	if (probe_sample_push_wait(t, probe_now_ns(), n, probe_alloc_ev(), buf + first,
				   k + 2) < 0 && id)
		untrack(p);     /* lost: its free is not to be said either */
}

/*
 * The sampled block p (its id) is freed: said from this thread's ring,
 * unless it cannot write there now (then its free is lost, counted).
 */
static __attribute__((noinline)) void freed(void *p)
{
	struct probe_thread *t = probe_self;
	uint64_t id = untrack(p), rec[2] = { PROBE_FRAME_FREED, id };

	if (!id)
		return;
	if (!t || t->closed || t->slot < 0 || t->in_handler || busy) {
		probe_lost(t && t->slot >= 0 ? t : NULL, PROBE_LOST_QUEUE, 1);
		return;
	}
	busy = 1;
	probe_hold(t, PROBE_SP());
	probe_sample_push_wait(t, probe_now_ns(), 0, probe_alloc_ev(), rec, 2);
	probe_unhold(t);
	busy = 0;
}

/* Before p goes back to the allocator: one load, nearly always 0. */
#define FORGET(p)                                                           \
	do {                                                                \
		if (__builtin_expect(__atomic_load_n(filter_of(p), __ATOMIC_ACQUIRE) != 0, 0)) \
			freed(p);                                           \
	} while (0)

/*
 * The countdown reached 0 or below on an allocation of n bytes from ret
 * (wrapper's frame fp): sample it if this thread may be, draw again.
 */
static __attribute__((noinline)) void crossed(void *p, size_t n, void *ret, void *fp)
{
	struct probe_thread *t;

	if (busy)
		return;
	if (!__atomic_load_n(&sampling, __ATOMIC_ACQUIRE)) {
		/*
		 * Before the constructor is done (a few allocations of the
		 * loader's and libc's): look again at the next one, so that
		 * the first after it counts.  Not asked for, or at the exit:
		 * never again.
		 */
		left = sampling_off ? INT64_MAX : 0;
		return;
	}
	if (!rng) {
		/* This thread's first: start its countdown (not a sample yet). */
		rng = ((uint64_t)gettid() << 32 ^ probe_now_ns()) | 1;
		left += draw();
		if (left > 0)
			return;
	}
	left = draw();
	t = probe_self;
	if (probe_stopping) {
		__atomic_store_n(&sampling_off, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&sampling, 0, __ATOMIC_RELEASE);
		return;
	}
	if (!t || t->closed || t->slot < 0 || t->in_handler ||
	    ((uintptr_t)ret >= (uintptr_t)__ehdr_start && (uintptr_t)ret < (uintptr_t)etext))
		return;
	busy = 1;
	probe_hold(t, PROBE_SP());
	take(t, p, n, ret, fp);
	probe_unhold(t);
	busy = 0;
}

/* After the real call: p, of n bytes, allocated from ret (frame fp). */
#define COUNT(p, n)                                                         \
	do {                                                                \
		if ((p) && __builtin_expect((left -= (int64_t)(n)) <= 0, 0))  \
			crossed((p), (n), __builtin_return_address(0),      \
				__builtin_frame_address(0));                \
	} while (0)

/* ---- the entries (exported: libprobe-alloc.map) --------------------------- */

#define EXPORT __attribute__((visibility("default")))

/*
 * malloc and free are the hot pair: their fast paths end in a tail call
 * of the real function (no second return), and malloc counts its bytes
 * before the call (a failed allocation, rare, is counted too).  malloc's
 * sampled path is tail-called as well, so that its return address and
 * frame are the program's call's.
 *
 * Each starts a cache line of its own, so that their two indirect jumps
 * never share one: on this VM's AMD EPYC, builds where they did cost the
 * malloc/free loop x1.23-1.26 under --alloc=1T against x1.10-1.17 where
 * they did not (paired medians of 21-41 runs; scripts/bench --alloc).
 */
#define ALIGNED_LINE __attribute__((aligned(64)))
static __attribute__((noinline)) void *malloc_crossed(size_t n)
{
	void *p;

	if (!ready())
		return pool_alloc(n);
	p = real_malloc(n);
	if (p)
		crossed(p, n, __builtin_return_address(0), __builtin_frame_address(0));
	return p;
}

static void *boot_malloc(size_t n)
{
	return ready() ? real_malloc(n) : pool_alloc(n);
}

EXPORT ALIGNED_LINE void *malloc(size_t n)
{
	if (__builtin_expect((left -= (int64_t)n) > 0, 1))
		return next_malloc(n);
	return malloc_crossed(n);
}

/*
 * A free that is not the common one: a sampled block, dlsym's (the pool's
 * are marked in the filter too), or one before the real free is known.
 */
static __attribute__((noinline)) void free_rare(void *p)
{
	int e = errno;

	if (p && !in_pool(p)) {
		FORGET(p);
		if (ready())
			real_free(p);
	}
	errno = e;
}

static void boot_free(void *p)
{
	free_rare(p);
}

EXPORT ALIGNED_LINE void free(void *p)
{
	if (__builtin_expect(__atomic_load_n(filter_of(p), __ATOMIC_RELAXED) != 0, 0)) {
		free_rare(p);
		return;
	}
	next_free(p);
}

EXPORT void *calloc(size_t m, size_t n)
{
	void *p;
	size_t b;

	if (__builtin_mul_overflow(m, n, &b)) {
		errno = ENOMEM;
		return NULL;
	}
	if (__builtin_expect(!ready(), 0))
		return pool_alloc(b);   /* static: zeroed */
	p = real_calloc(m, n);
	COUNT(p, b);
	return p;
}

/*
 * realloc's body, in a macro so that reallocarray's callers are the ones
 * its COUNT sees (a call from our own code would not be sampled).
 */
#define REALLOC_BODY(o, n)                                                  \
	void *p;                                                            \
									    \
	if ((o) && in_pool(o)) {                                            \
		/* A block of dlsym's, moved to the real heap. */           \
		p = ready() ? real_malloc(n) : pool_alloc(n);               \
		if (p)                                                      \
			memcpy(p, (o), pool_size(o) < (n) ? pool_size(o) : (n)); \
	} else if (__builtin_expect(!ready(), 0)) {                         \
		p = (o) ? NULL : pool_alloc(n);                             \
	} else {                                                            \
		if (o)                                                      \
			FORGET(o);      /* moved or resized: a new block */ \
		p = real_realloc((o), (n));                                 \
	}                                                                   \
	if (n)                                                              \
		COUNT(p, n);                                                \
	return p;

EXPORT void *realloc(void *o, size_t n)
{
	REALLOC_BODY(o, n)
}

EXPORT void *reallocarray(void *o, size_t m, size_t n)
{
	size_t b;

	if (__builtin_mul_overflow(m, n, &b)) {
		errno = ENOMEM;
		return NULL;
	}
	REALLOC_BODY(o, b)
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	int r;

	if (__builtin_expect(!ready(), 0))
		return ENOMEM;
	r = real_posix_memalign(out, align, n);
	if (r == 0)
		COUNT(*out, n);
	return r;
}

#define ALIGNED(name, params, args, n)                                      \
	EXPORT void *name params                                            \
	{                                                                   \
		void *p;                                                    \
									    \
		if (__builtin_expect(!ready(), 0)) {                        \
			errno = ENOMEM;                                     \
			return NULL;                                        \
		}                                                           \
		p = real_##name args;                                       \
		COUNT(p, n);                                                \
		return p;                                                   \
	}

ALIGNED(aligned_alloc, (size_t align, size_t n), (align, n), n)
ALIGNED(memalign, (size_t align, size_t n), (align, n), n)
ALIGNED(valloc, (size_t n), (n), n)
ALIGNED(pvalloc, (size_t n), (n), n)

/* ---- set-up -------------------------------------------------------------- */

unsigned probe_alloc_ev(void)
{
	if (probe_mode == PROBE_MODE_NONE)
		return 0;       /* --alloc alone: the first event */
	return probe_offcpu_ev() + (probe_cfg.offcpu != 0);
}

void probe_alloc_init(void)
{
	void *theirs;
	Dl_info where;

	if (!probe_cfg.alloc) {
		sampling_off = 1;
		return;
	}
	/*
	 * An executable (or a library preloaded before us) that defines malloc
	 * itself is the one the program calls: we would see none of it.
	 */
	theirs = dlsym(RTLD_DEFAULT, "malloc");
	if (theirs && ((uintptr_t)theirs < (uintptr_t)__ehdr_start ||
		       (uintptr_t)theirs >= (uintptr_t)etext)) {
		memset(&where, 0, sizeof where);
		dladdr(theirs, &where);
		probe_msg("--alloc: this program calls the malloc of %s, which comes before "
			  "libprobe's: its allocations cannot be seen (preload libprobe "
			  "first)", where.dli_fname ? where.dli_fname : "another object");
		probe_cfg.alloc = 0;
		sampling_off = 1;
		return;
	}
	ready();
	allocfn_find();
	__atomic_store_n(&sampling, 1, __ATOMIC_RELEASE);
}
