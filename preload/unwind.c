/*
 * unwind.c - stack walking with libunwind, loaded privately.
 *
 * Why dlopen and not -lunwind: Debian's libunwind.a is not PIC, and
 * libunwind.so.8 exports _Unwind_* and a weak backtrace() which, if the
 * library were linked in (and so in the global scope), could take over the
 * application's C++ exception handling.  dlopen(RTLD_LOCAL) keeps every
 * symbol of it out of the global scope; we only dlsym what we call.
 *
 * cfi.c's walk comes first; libunwind takes the stacks it cannot walk.
 *
 * unw_backtrace() is libunwind's fast path (a per-thread cache of frame
 * layouts, ~1 us for tens of frames): it walks from its own frame, through
 * our handler and the kernel's signal frame, into the interrupted code.  We
 * keep the part that starts at the interrupted instruction pointer (the
 * ucontext's RIP), i.e. exactly the application's stack.
 *
 * Its first use on a thread allocates (the per-thread cache, an address
 * validation pipe): probe_unwind_prime() runs it once on every thread
 * before that thread's event is enabled.
 */
#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <ucontext.h>

#include "probe.h"

typedef int (*unw_backtrace_fn)(void **buf, int size);

static unw_backtrace_fn unw_bt;
static uintptr_t unw_lo, unw_hi;        /* libunwind's code */

/* The code segment holding unw_backtrace: libunwind's own. */
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

int probe_unwind_load(void)
{
	void *h = probe_real_dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		const char *e = dlerror();
		probe_msg("cannot load libunwind.so.8 (%s); stacks will hold "
			  "only the sampled address (install libunwind8)",
			  e ? e : "not found");
		return -1;
	}
	unw_bt = (unw_backtrace_fn)dlsym(h, "unw_backtrace");
	if (!unw_bt) {
		probe_msg("libunwind.so.8 has no unw_backtrace; stacks will "
			  "hold only the sampled address (libunwind too old?)");
		return -1;
	}
	dl_iterate_phdr(find_text, (void *)(uintptr_t)unw_bt);
	return 0;
}

void probe_unwind_prime(void)
{
	void *buf[8];

	if (unw_bt) {
		probe_in_probe++;
		unw_bt(buf, 8);
		probe_in_probe--;
	}
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

static int unw(void *ucv, uint64_t *buf, int *first);

int probe_unwind(const struct probe_thread *t, void *uc, uint64_t *buf,
		 int *first)
{
	int n, nu, fu = 0;
	uint64_t other[PROBE_UNWIND_BUF];

	if (probe_cfg.unwind == PROBE_UNWIND_LIBUNWIND)
		return unw(uc, buf, first);
	n = probe_cfi_walk(t, uc, buf, (int)PROBE_MAX_FRAMES);
	if (n <= 0) {
		n = unw(uc, buf, first);
		if (n > 0)
			probe_cfi_note(buf + *first, n);
		return n;
	}
	*first = 0;
	if (probe_cfg.unwind == PROBE_UNWIND_CHECK) {
		nu = unw(uc, other, &fu);
		if (nu > 0)
			check(buf, n, other + fu, nu);
		else
			__atomic_add_fetch(&fast_only, 1, __ATOMIC_RELAXED);
	}
	return n;
}

static int unw(void *ucv, uint64_t *buf, int *first)
{
	ucontext_t *uc = ucv;
	uint64_t rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	int n, i;

	if (!unw_bt)
		return 0;
	/* void * and uint64_t are the same 8 bytes on x86-64. */
	probe_in_probe++;
	n = unw_bt((void **)buf, PROBE_UNWIND_BUF);
	probe_in_probe--;
	/*
	 * Our handler's frames come first, then the signal frame, whose IP is
	 * the interrupted RIP: the first match is the start of the app's stack.
	 */
	for (i = 0; i < n; i++) {
		if (buf[i] == rip) {
			*first = i;
			n -= i;
			return n > (int)PROBE_MAX_FRAMES ? (int)PROBE_MAX_FRAMES : n;
		}
	}
	return 0;
}
