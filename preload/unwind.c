/*
 * unwind.c - stack walking with libunwind, loaded privately.
 *
 * Why dlopen and not -lunwind: Debian's libunwind.a is not PIC, and
 * libunwind.so.8 exports _Unwind_* and a weak backtrace() which, if the
 * library were linked in (and so in the global scope), could take over the
 * application's C++ exception handling.  dlopen(RTLD_LOCAL) keeps every
 * symbol of it out of the global scope; we only dlsym what we call.
 *
 * cfi.c's walk comes first; libunwind takes the stacks it cannot walk:
 * code loaded after the start whose rules the collector has not learned
 * yet, and frames cfi.c does not follow (CFA expressions but the PLT's,
 * other stacks).  So it is loaded only when first needed
 * (probe_unwind_lazy: after a dlopen that loaded code, or at the next
 * pthread_create or posix_spawn once a walk wanted it), not in the
 * constructor, where it cost 230 us of every process's start;
 * PROBE_UNWIND=libunwind and check load it at start.  Never
 * while the thread is inside the dynamic loader (loader.c): libunwind's
 * dl_iterate_phdr and its own lock could deadlock there, so such a sample
 * keeps what cfi.c's walk reached (with rules it reads from the loaded
 * .eh_frame of the objects loaded at start: ld.so, libc, the program).
 *
 * We use libunwind's cursor, started from the signal's ucontext
 * (unw_init_local2 with UNW_INIT_SIGNAL_FRAME) and stepped to the end, not
 * unw_backtrace: that one's fast path keeps a 256 KiB cache per thread,
 * which is 256 MB more for a program of 1,000 threads, and the cache is
 * allocated on the thread's first walk, which would have to be primed on
 * every thread before its event is enabled.  The cursor keeps no state per
 * thread (libunwind's 16 bytes of TLS sit in glibc's static TLS, so
 * touching them allocates nothing), and its global caches are set up once
 * here, in normal context, before it is used.  It is slower: about 0.5 us
 * a frame here (its global cache takes a lock with the signals masked, 4
 * sigprocmask calls a frame; without the cache it was 3 times slower
 * still), which is paid only for the stacks cfi.c cannot walk.
 */
#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <ucontext.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "probe.h"

typedef int (*init2_fn)(unw_cursor_t *, unw_context_t *, int);
typedef int (*step_fn)(unw_cursor_t *);
typedef int (*get_reg_fn)(unw_cursor_t *, unw_regnum_t, unw_word_t *);

static init2_fn unw_init2;
static step_fn unw_step_;
static get_reg_fn unw_get_reg_;
static uintptr_t unw_lo, unw_hi;        /* libunwind's code */

/*
 * The code of the objects our dlopen of libunwind brought in (libunwind,
 * liblzma, ...: those the program had not loaded itself), for
 * probe_unwind_ours(): a page fault at exit in liblzma's .fini belongs to
 * the profiler, not to a program that never used liblzma.
 */
#define OWN_RANGES 16
static uintptr_t had[64];               /* objects loaded before (base) */
static unsigned nhad;
static struct { uintptr_t lo, hi; } own[OWN_RANGES];
static unsigned nown;

static int note_had(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (nhad < sizeof had / sizeof had[0])
		had[nhad++] = info->dlpi_addr;
	return 0;
}

static int note_new(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	for (unsigned i = 0; i < nhad; i++)
		if (had[i] == info->dlpi_addr)
			return 0;
	for (int i = 0; i < info->dlpi_phnum && nown < OWN_RANGES; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			own[nown].lo = info->dlpi_addr + ph->p_vaddr;
			own[nown].hi = own[nown].lo + ph->p_memsz;
			/* Loaded while handlers run: the range before the count. */
			__atomic_store_n(&nown, nown + 1, __ATOMIC_RELEASE);
		}
	}
	return 0;
}

/* Async-signal-safe: is pc in code that only our libunwind brought in? */
int probe_unwind_ours(uint64_t pc)
{
	unsigned n = __atomic_load_n(&nown, __ATOMIC_ACQUIRE);

	for (unsigned i = 0; i < n; i++)
		if (pc >= own[i].lo && pc < own[i].hi)
			return 1;
	return 0;
}

/* The code segment holding unw_step: libunwind's own. */
static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t pc = (uintptr_t)arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && pc >= lo && pc < lo + ph->p_memsz) {
			unw_lo = lo;
			unw_hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

/*
 * Is pc in libunwind?  Its calls to sigprocmask (its locks, its per-thread
 * cache's destructor at thread exit) are not the program's.
 */
int probe_unwind_owns(const void *pc)
{
	return (uintptr_t)pc >= unw_lo && (uintptr_t)pc < unw_hi;
}

/*
 * One walk of our own stack, in normal context: libunwind's one-time set-up
 * (its locks, its global caches, its address-validation pipe) happens here
 * and not in a signal handler.
 */
static void prime(init2_fn init)
{
	ucontext_t uc;
	unw_cursor_t cur;

	if (getcontext(&uc) < 0)
		return;
	probe_in_probe++;
	if (init(&cur, (unw_context_t *)&uc, 0) == 0)
		for (int i = 0; i < 4 && unw_step_(&cur) > 0; i++)
			;
	probe_in_probe--;
}

/*
 * Load, find, prime, then publish unw_init2 (release): a handler on
 * another thread uses libunwind only once it sees unw_init2, by then
 * set up.  Inside the loader for this thread (probe_in_loader): a sample
 * taken meanwhile is walked by cfi.c alone.
 */
static int load(void)
{
	init2_fn init;
	void *h;

	/* More objects than had[] holds: none is taken for ours (nown stays 0). */
	nhad = 0;
	dl_iterate_phdr(note_had, NULL);
	probe_in_loader++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	h = probe_real_dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	probe_in_loader--;
	if (h && nhad < sizeof had / sizeof had[0])
		dl_iterate_phdr(note_new, NULL);
	if (!h) {
		const char *e = dlerror();
		probe_msg("cannot load libunwind.so.8 (%s); stacks will hold "
			  "only what probe's own walk finds (install libunwind8)",
			  e ? e : "not found");
		return -1;
	}
	init = (init2_fn)dlsym(h, "_ULx86_64_init_local2");
	unw_step_ = (step_fn)dlsym(h, "_ULx86_64_step");
	unw_get_reg_ = (get_reg_fn)dlsym(h, "_ULx86_64_get_reg");
	if (!init || !unw_step_ || !unw_get_reg_) {
		probe_msg("libunwind.so.8 has no unw_init_local2; stacks will "
			  "hold only what probe's own walk finds (libunwind "
			  "older than 1.3?)");
		return -1;
	}
	dl_iterate_phdr(find_text, (void *)(uintptr_t)unw_step_);
	prime(init);
	__atomic_store_n(&unw_init2, init, __ATOMIC_RELEASE);
	return 0;
}

/*
 * libunwind is loaded when first needed, not at start (230 us of every
 * process's start, most of what probe cost a short one): cfi.c's walk
 * reads the rules of every object loaded at start from its .eh_frame in
 * memory, so only code loaded later, before the collector learned its
 * rules, and the rare frame cfi.c does not follow need it.  Normal context.
 */
static int tried;                       /* libunwind loaded, or failed to */
static int missed;                      /* a walk wanted libunwind (handler) */

int probe_unwind_load(void)
{
	if (probe_cfg.unwind == PROBE_UNWIND_FAST)
		return 0;               /* when first needed: probe_unwind_lazy */
	tried = 1;
	return load();
}

void probe_unwind_lazy(int loaded_code)
{
	if (__atomic_load_n(&tried, __ATOMIC_ACQUIRE) ||
	    !(loaded_code || __atomic_load_n(&missed, __ATOMIC_RELAXED)))
		return;
	/* Two threads at it (pthread_create on both): one loads. */
	if (__atomic_exchange_n(&tried, 1, __ATOMIC_ACQ_REL))
		return;
	load();
}

/* SIGNAL CONTEXT. */
/* PROBE_UNWIND=check: walks compared, walks that disagreed, the first. */
static uint64_t checked, differ, fast_only;
static uint64_t diff_fast[8], diff_unw[8];
static int diff_nfast, diff_nunw, diff_at = -1;

static void check(const uint64_t *fast, int nf, const uint64_t *unw, int nu)
{
	int at = -1;

	__atomic_add_fetch(&checked, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < nf && i < nu; i++)
		if (fast[i] != unw[i]) {
			at = i;
			break;
		}
	if (at < 0 && nf == nu)
		return;
	if (at < 0)
		at = nf < nu ? nf : nu;
	if (__atomic_add_fetch(&differ, 1, __ATOMIC_RELAXED) == 1) {
		diff_at = at;
		diff_nfast = nf;
		diff_nunw = nu;
		for (int i = 0; i < 8; i++) {
			diff_fast[i] = at + i < nf ? fast[at + i] : 0;
			diff_unw[i] = at + i < nu ? unw[at + i] : 0;
		}
	}
}

void probe_unwind_check_report(void)
{
	if (probe_cfg.unwind != PROBE_UNWIND_CHECK)
		return;
	probe_msg("unwind check: %llu stacks walked both ways, %llu differ, "
		  "%llu libunwind could not walk",
		  (unsigned long long)checked, (unsigned long long)differ,
		  (unsigned long long)fast_only);
	if (differ)
		probe_msg("unwind check: first at frame %d (%d vs %d frames): "
			  "%llx %llx %llx vs libunwind %llx %llx %llx", diff_at,
			  diff_nfast, diff_nunw,
			  (unsigned long long)diff_fast[0],
			  (unsigned long long)diff_fast[1],
			  (unsigned long long)diff_fast[2],
			  (unsigned long long)diff_unw[0],
			  (unsigned long long)diff_unw[1],
			  (unsigned long long)diff_unw[2]);
}

static int unw(void *ucv, uint64_t *buf, struct probe_walk_at *end);
static int unw_from(const void *ucv, const struct probe_walk_at *at,
		    uint64_t *out, int max, struct probe_walk_at *end);

/* libunwind from where our walk stopped (at), noting the rules it found missing. */
static int unw_on(void *uc, const struct probe_walk_at *at, uint64_t *out,
		  struct probe_walk_at *end)
{
	int n = unw_from(uc, at, out, (int)PROBE_WALK_MAX, end);

	if (n > at->n)
		probe_cfi_note(out + at->n, n - at->n, 0);
	return n;
}

/*
 * libunwind stopped at JIT code (end->n > 0): our walk from there, then
 * libunwind again where ours stops at code whose rule is not cached, and
 * so on (a native addon called from JS called from C++...).
 */
#define SWITCHES_MAX 8

static int mixed_on(const struct probe_thread *t, void *uc, uint64_t *out, int n,
		    struct probe_walk_at *end)
{
	for (int i = 0; i < SWITCHES_MAX && end->n > 0; i++) {
		struct probe_walk_at at;
		int m = probe_cfi_walk_from(t, end, out, (int)PROBE_WALK_MAX, &at);

		if (m > 0)
			return m;
		if (at.n <= 0)
			return n;
		n = unw_on(uc, &at, out, end);
	}
	return n;
}

/*
 * The frames go to buf + 1: buf[0] is left for the kernel's IP when the
 * sample was taken in the kernel (handler.c puts it on top).
 */
int probe_unwind(const struct probe_thread *t, void *uc, uint64_t *buf,
		 int *first, int in_loader, int *partial)
{
	uint64_t *out = buf + 1, other[PROBE_UNWIND_BUF];
	struct probe_walk_at at, end;
	int n, nu;

	*first = 1;
	if (in_loader)          /* the rule cache alone: it takes no lock */
		return probe_cfi_walk(t, uc, out, (int)PROBE_WALK_MAX, partial,
				      NULL);
	if (probe_cfg.unwind == PROBE_UNWIND_LIBUNWIND)
		return unw(uc, out, NULL);
	n = probe_cfi_walk(t, uc, out, (int)PROBE_WALK_MAX, NULL, &at);
	if (n <= 0 && !__atomic_load_n(&unw_init2, __ATOMIC_ACQUIRE)) {
		/* libunwind not loaded yet: load it at the next chance. */
		__atomic_store_n(&missed, 1, __ATOMIC_RELAXED);
		if (at.n <= 0)
			return 0;
		*partial = 1;           /* the frames up to where ours stopped */
		return at.n;
	}
	if (n <= 0) {
		if (at.n > 0) {         /* mixed code: ours through the JIT frames */
			n = unw_on(uc, &at, out, &end);
		} else {
			n = unw(uc, out, &end);
			probe_cfi_note(out, n, 1);
		}
		return mixed_on(t, uc, out, n, &end);
	}
	if (probe_cfg.unwind == PROBE_UNWIND_CHECK) {
		nu = unw(uc, other, NULL);
		if (nu > 0)
			check(out, n, other, nu);
		else
			__atomic_add_fetch(&fast_only, 1, __ATOMIC_RELAXED);
	}
	return n;
}

/*
 * Frame n - 1 (ip, at a return address but for the first) is JIT code:
 * say where, from the cursor, for our walk to go on (end), and stop.
 */
static int at_jit(unw_cursor_t *cur, uint64_t ip, int n, struct probe_walk_at *end)
{
	unw_word_t sp, bp;

	if (!end || !probe_cfi_in_jit(n > 1 ? ip - 1 : ip) ||
	    unw_get_reg_(cur, UNW_REG_SP, &sp) < 0 ||
	    unw_get_reg_(cur, UNW_X86_64_RBP, &bp) < 0)
		return 0;
	end->n = n;
	end->rip = ip;
	end->rsp = sp;
	end->rbp = bp;
	return 1;
}

/*
 * The callers of frame at->n - 1, where our walk stopped (out[0..at->n)
 * holds the frames to it), from libunwind: the signal's context with that
 * frame's rip, rsp and rbp, stepped as an ordinary frame (its rip a return
 * address).  The other registers are the interrupted frame's: a caller
 * whose CFA depends on them (rare: stack realignment) may end the walk
 * early.  Returns the frames in out; *end as unw()'s.
 */
static int unw_from(const void *ucv, const struct probe_walk_at *at,
		    uint64_t *out, int max, struct probe_walk_at *end)
{
	ucontext_t uc;
	unw_cursor_t cur;
	unw_word_t ip;
	int n = at->n;

	init2_fn init = __atomic_load_n(&unw_init2, __ATOMIC_ACQUIRE);

	end->n = 0;
	if (!init || n >= max)
		return n;
	memcpy(&uc, ucv, sizeof uc);
	uc.uc_mcontext.gregs[REG_RIP] = (greg_t)at->rip;
	uc.uc_mcontext.gregs[REG_RSP] = (greg_t)at->rsp;
	uc.uc_mcontext.gregs[REG_RBP] = (greg_t)at->rbp;
	probe_in_probe++;
	if (init(&cur, (unw_context_t *)&uc, 0) == 0) {
		while (n < max && unw_step_(&cur) > 0) {
			if (unw_get_reg_(&cur, UNW_REG_IP, &ip) < 0 || ip == 0)
				break;
			out[n++] = ip;
			if (at_jit(&cur, ip, n, end))
				break;
		}
	}
	probe_in_probe--;
	return n;
}

/*
 * The interrupted context's stack: RIP, then the return addresses.  It
 * stops at a frame in JIT code (libunwind has no rule for it), saying
 * where in *end (end->n > 0), when end is not NULL.
 */
static int unw(void *ucv, uint64_t *buf, struct probe_walk_at *end)
{
	unw_cursor_t cur;
	unw_word_t ip;
	int n = 0;

	init2_fn init = __atomic_load_n(&unw_init2, __ATOMIC_ACQUIRE);

	if (end)
		end->n = 0;
	if (!init)
		return 0;
	probe_in_probe++;
	if (init(&cur, (unw_context_t *)ucv, UNW_INIT_SIGNAL_FRAME) == 0) {
		do {
			if (unw_get_reg_(&cur, UNW_REG_IP, &ip) < 0 || ip == 0)
				break;
			buf[n++] = ip;
			if (at_jit(&cur, ip, n, end))
				break;
		} while (n < (int)PROBE_WALK_MAX && unw_step_(&cur) > 0);
	}
	probe_in_probe--;
	return n;
}
