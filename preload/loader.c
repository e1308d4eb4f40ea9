/*
 * loader.c - interposed dlopen, dlclose and dl_iterate_phdr: the "inside
 * the loader" guard.
 *
 * libunwind looks frames up with dl_iterate_phdr, which takes the loader's
 * dl_load_write_lock, while holding a lock of its own.  A sample landing
 * while the same thread is inside dlopen/dlclose could find the loader's
 * lists half updated or deadlock on its lock; one landing while the thread
 * is inside dl_iterate_phdr (C++ exception unwinding calls it too) holds
 * dl_load_write_lock, and its handler waiting for libunwind's lock while
 * another thread's handler holds that one and waits for dl_load_write_lock
 * is a deadlock (seen: gt_throw at 999 Hz, 1 run in 5).  So while a thread
 * is inside any of them, probe_in_loader is non-zero and its handler
 * walks the stack with cached frame rules only (cfi.c: no lock, no
 * dl_iterate_phdr), never with libunwind.
 *
 * Keeping dlopen's behaviour: glibc's dlopen looks at its return address to
 * find the calling object, whose RUNPATH, $ORIGIN and namespace it uses.
 * Called from here, the caller would be libprobe.so and an application
 * that dlopens "libplugin.so" through its RUNPATH would fail.  So the real
 * dlopen is entered with a return address inside the caller's own code: a
 * byte 0xc3 ("ret") found on the page of the caller's return address.
 * When dlopen returns there, that ret returns to us (a sample's walk steps
 * over that return address as the ret will: probe_gadgets).  Where a shadow stack
 * is enabled (it would reject this), or no such byte is found, the plain
 * call is used.
 *
 * Objects that come and go (maps.c, conn_frames.c): when the outermost dlopen
 * loaded something (the loader's adds counter moved), it sends the new
 * objects' MAP frames itself before it returns, so they reach the
 * collector before any sample taken in them could be read from the arena -
 * a plugin loaded, sampled and unloaded at once is named.  When the
 * outermost dlclose unloaded something (subs moved), it sends a SYNC: the
 * collector takes every sample taken so far before the MAP of whatever a
 * later dlopen puts at the same addresses.  Nothing waits for the
 * collector.  This happens with no loader lock held by us (the real call
 * has returned, and nested calls - from constructors, destructors or
 * dl_iterate_phdr callbacks - do not send), only in the process libprobe
 * set up, never in signal context (dlopen is not async-signal-safe anyway).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "probe.h"

__thread int probe_in_loader;
__thread uintptr_t probe_gadgets[PROBE_GADGETS];

typedef void *(*dlopen_fn)(const char *, int);
typedef int (*dlclose_fn)(void *);
typedef int (*phdr_cb)(struct dl_phdr_info *, size_t, void *);
typedef int (*iterate_fn)(phdr_cb, void *);

static dlopen_fn real_dlopen;
static dlclose_fn real_dlclose;
static iterate_fn real_iterate;
static int gadget_ok;

/*
 * fn(file, mode) entered with `gadget` as its return address; the gadget's
 * own ret pops the address of label 1.  The stack is kept 16-byte aligned
 * as at any call; the CFI describes the frame through %rbp.
 */
void *probe_call_via_ret(dlopen_fn fn, const char *file, int mode,
			 const void *gadget);
__asm__(
	".text\n"
	".p2align 4\n"
	".globl probe_call_via_ret\n"
	".hidden probe_call_via_ret\n"
	".type probe_call_via_ret, @function\n"
	"probe_call_via_ret:\n"
	".cfi_startproc\n"
	"	pushq %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"	movq %rsp, %rbp\n"
	".cfi_def_cfa_register %rbp\n"
	"	subq $8, %rsp\n"
	"	movq %rdi, %rax\n"
	"	movq %rsi, %rdi\n"
	"	movl %edx, %esi\n"
	"	leaq 1f(%rip), %rdx\n"
	"	pushq %rdx\n"
	"	pushq %rcx\n"
	"	jmp *%rax\n"
	"1:\n"
	"	leave\n"
	".cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size probe_call_via_ret, .-probe_call_via_ret\n");

static void resolve(void)
{
	if (!real_dlopen)
		real_dlopen = (dlopen_fn)dlsym(RTLD_NEXT, "dlopen");
	if (!real_dlclose)
		real_dlclose = (dlclose_fn)dlsym(RTLD_NEXT, "dlclose");
	if (!real_iterate)
		real_iterate = (iterate_fn)dlsym(RTLD_NEXT, "dl_iterate_phdr");
}

/* Is a user-space shadow stack on?  Then a mismatched return would fault. */
static int shadow_stack_on(void)
{
	const char *p = probe_status_field("x86_Thread_features"), *q;

	if (!probe_status_field("Pid"))
		return 1;               /* unreadable: assume the worst */
	if (!p)
		return 0;
	q = strstr(p, " shstk");
	return strncmp(p, "shstk", 5) == 0 || (q && q < strchrnul(p, '\n'));
}

void probe_loader_init(void)
{
	resolve();
	gadget_ok = !shadow_stack_on();
	probe_cfi_keep_init();
}

void *probe_real_dlopen(const char *file, int mode)
{
	resolve();
	return real_dlopen ? real_dlopen(file, mode) : NULL;
}

/* A 0xc3 byte on the page of ret (mapped and executable, like ret). */
static const void *find_ret_gadget(const uint8_t *ret)
{
	uintptr_t page = (uintptr_t)ret & ~(uintptr_t)4095;
	const uint8_t *p;

	for (p = ret; (uintptr_t)p < page + 4096; p++)
		if (*p == 0xc3)
			return p;
	for (p = ret; (uintptr_t)p > page;)
		if (*--p == 0xc3)
			return p;
	return NULL;
}

/* Should this (outermost) dlopen/dlclose tell the collector? */
static int want_sync(void)
{
	return probe_in_loader == 0 && probe_active && !probe_stopping &&
	       probe_is_ours();
}

/* The loader's counters now; ok = 0 when they cannot be had. */
static void counts(unsigned long long *adds, unsigned long long *subs, int *ok)
{
	*ok = probe_maps_counts(adds, subs) == 0;
}

/* SYNC and the new objects' MAPs (see the header). */
static void sync_collector(void)
{
	int saved = errno;      /* dlerror() is separate; errno is kept too */

	probe_announce_maps();
	errno = saved;
}

__attribute__((visibility("default")))
void *dlopen(const char *file, int mode)
{
	const void *gadget = NULL;
	unsigned long long adds0 = 0, subs0 = 0, adds1 = 0, subs1 = 0;
	int sync = 0, ok0 = 0, ok1 = 0;
	void *h;

	resolve();
	if (!real_dlopen)
		return NULL;
	if (gadget_ok)
		gadget = find_ret_gadget(__builtin_return_address(0));
	if (want_sync()) {
		sync = 1;
		counts(&adds0, &subs0, &ok0);
	}
	int depth = probe_in_loader;

	if (gadget && depth < PROBE_GADGETS)
		probe_gadgets[depth] = (uintptr_t)gadget;
	probe_in_loader++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (gadget)
		h = probe_call_via_ret(real_dlopen, file, mode, gadget);
	else
		h = real_dlopen(file, mode);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	probe_in_loader--;
	if (depth < PROBE_GADGETS)
		probe_gadgets[depth] = 0;
	if (sync && h) {
		counts(&adds1, &subs1, &ok1);
		if (!ok0 || !ok1 || adds1 != adds0) {
			sync_collector();
			/* Code cfi.c cannot read in memory: libunwind walks it. */
			probe_unwind_lazy(1);
		}
	}
	return h;
}

__attribute__((visibility("default")))
int dlclose(void *handle)
{
	unsigned long long adds0 = 0, subs0 = 0, adds1 = 0, subs1 = 0;
	int ok0 = 0, ok1 = 0, outer = probe_in_loader == 0, gone = 0, sync, r;

	resolve();
	if (!real_dlclose)
		return -1;
	sync = want_sync();
	if (outer)
		counts(&adds0, &subs0, &ok0);
	probe_in_loader++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	r = real_dlclose(handle);
	if (r == 0) {
		/*
		 * Code may be gone, and other code come to its addresses: the
		 * rules learned for it cannot be trusted (cfi.c).  Nothing
		 * was unloaded when the loader's subs did not move (a
		 * reference dropped); at the outermost level, only the rules
		 * of what is no longer loaded go.
		 */
		if (outer)
			counts(&adds1, &subs1, &ok1);
		gone = !outer || !ok0 || !ok1 || subs1 != subs0;
		if (gone)
			probe_cfi_flush(outer);
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	probe_in_loader--;
	if (sync && gone)
		sync_collector();
	return r;
}

/* SIGNAL CONTEXT safe (libunwind calls it from our handler). */
__attribute__((visibility("default")))
int dl_iterate_phdr(phdr_cb cb, void *data)
{
	int r;

	if (!real_iterate)
		resolve();
	if (!real_iterate)
		return 0;
	probe_in_loader++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	r = real_iterate(cb, data);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	probe_in_loader--;
	return r;
}
