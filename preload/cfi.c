/*
 * cfi.c - the fast path in front of libunwind: a small, process-wide cache
 * of x86-64 frame rules read from .eh_frame, and the stack walk that uses
 * it from the signal handler.  The cache is in the arena: the collector
 * learns the rules (collector/ingest/cfi_learn.c) and writes them there.
 *
 * Why: at 1 kHz the handler runs with cold caches and TLB, and libunwind's
 * unw_backtrace then costs 0.5 us typically and ~3 us at the 99th
 * percentile for a 20-frame stack (its per-thread trace cache is 256 KiB,
 * one random line and page per return address, and its code path is long);
 * a walk touching as many lines of a small table and the stack words costs
 * ~0.15 us at the 99th percentile (measured in the handler on the
 * development VM).  The table: 1024 sets of 4 {key, rule} slots, a set per
 * 64-byte line, so a lookup costs one line.
 *
 * A rule says, for one code address, where the frame's CFA is (rsp, rbp or
 * rbx plus an offset), that the return address is at CFA-8, and whether
 * rbp and rbx were saved (at CFA+off) or are unchanged.  That is what DWARF
 * CFI says for nearly all x86-64 code (the PLT's CFA expression too:
 * cfa.h); anything else (other CFA expressions, return addresses in
 * registers) is cached as "unsupported" and its stacks go to libunwind.  A
 * frame whose rule is not cached yet is read by the handler itself from
 * the in-memory .eh_frame of its object when that object was loaded at
 * start (local_rule), and only else goes to libunwind: so libunwind is
 * needed only for code loaded later, before the collector learned its
 * rules (unwind.c loads it then, not at start).  A signal frame (the
 * kernel's return to __restore_rt, whose rule is an expression) is stepped
 * here, from the ucontext it holds (is_sigreturn): checked
 * against libunwind (PROBE_UNWIND=check), 0 of 402 stacks through it
 * differed.
 *
 * Handler side (SIGNAL CONTEXT): probe_cfi_walk() reads the cache and the
 * thread's own stack only, every read bounded by the thread's stack
 * [rsp, stack_hi); a miss is noted in the arena's want[] for the
 * collector, which finds each noted address's object among the process's
 * MAPs, reads its .eh_frame from the file, and publishes the rule.
 * A dlclose that unloaded something empties the cache of the code no
 * longer loaded (probe_cfi_flush) while its thread still counts as in the
 * loader.  A frame whose rule is not cached is read from the in-memory
 * .eh_frame of its object, when that object was loaded at start (mapped
 * for good: local_rule, with probe/cfa.h, the collector's own reader);
 * inside the loader, where libunwind must not run, a frame that has none
 * there is found by scanning the stack (scan_return).
 *
 * Publishing (include/probe/arena.h): a slot is {key, rule}.  The writer
 * (only the collector) stores key 0, the rule, then the key (release); a
 * reader loads the key (acquire), the rule, and the key again: the rule is
 * used only if the key did not change.
 */
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "probe.h"
#include "probe/cfa.h"

#define WAYS PROBE_RULE_WAYS            /* one 64-byte line per set */
#define SETS PROBE_RULE_SETS            /* 64 KiB in all */

/*
 * The code of the objects loaded before us (the program and its
 * dependencies, LD_PRELOADs, the loader): dlclose never unloads them
 * (probe_cfi_keep_init, in the constructor; read-only afterwards).
 */
#define KEEP_MAX 256
static struct {
	uint64_t lo, hi;                /* an executable segment */
	const uint8_t *ehf;             /* its object's .eh_frame_hdr, or NULL */
	const uint8_t *eh_lo, *eh_hi;   /* the loaded segment holding ehf */
	uint64_t bias;                  /* the object's load bias */
} keep[KEEP_MAX];
static int nkeep;

/* ---- SIGNAL CONTEXT ------------------------------------------------------ */

/* Is key in the code of an object loaded at start (mapped for good)? */
static int kept(uint64_t key)
{
	for (int i = 0; i < nkeep; i++)
		if (key >= keep[i].lo && key < keep[i].hi)
			return 1;
	return 0;
}

/* The entry of keep[] whose code holds pc, or -1. */
static int kept_at(uint64_t pc)
{
	for (int i = 0; i < nkeep; i++)
		if (pc >= keep[i].lo && pc < keep[i].hi)
			return i;
	return -1;
}

/*
 * The start of the function containing pc, from the .eh_frame_hdr search
 * table of its object (keep[k], k = kept_at(pc): found once by the caller,
 * in the handler), or 0; *fde its FDE (unchecked).  Only the usual
 * encoding (a table of datarel sdata4 pairs) is read.
 */
static uint64_t function_start_fde(int k, uint64_t pc, const uint8_t **fde)
{
	const uint8_t *h = k < 0 ? NULL : keep[k].ehf;

	*fde = NULL;
	/* Its 12-byte header and its table inside the segment that holds it. */
	if (!h || (keep[k].eh_hi && keep[k].eh_hi - h < 12))
		return 0;
	if (h[0] != 1 || h[1] != 0x1b || h[2] != 0x03 || h[3] != 0x3b)
		return 0;
	uint32_t count;
	memcpy(&count, h + 8, sizeof count);
	const uint8_t *tab = h + 12;
	if (keep[k].eh_hi && (uint64_t)(keep[k].eh_hi - tab) / 8 < count)
		return 0;               /* a table past its segment */
	uint64_t lo = 0, hi = count, start = 0;
	while (lo < hi) {               /* the last entry at or below pc */
		uint64_t mid = lo + (hi - lo) / 2;
		int32_t loc, at_fde;

		memcpy(&loc, tab + 8 * mid, sizeof loc);
		uint64_t at = (uint64_t)(uintptr_t)h + (uint64_t)(int64_t)loc;
		if (at <= pc) {
			start = at;
			memcpy(&at_fde, tab + 8 * mid + 4, sizeof at_fde);
			*fde = h + at_fde;
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return start;
}

static uint64_t function_start(uint64_t pc)
{
	const uint8_t *fde;

	return function_start_fde(kept_at(pc), pc, &fde);
}

/*
 * For a frame whose rule is not cached: the rule read here, from the
 * in-memory .eh_frame of its object when that object was loaded at start
 * (ld.so, libc, the program, its libraries: mapped for good, so no lock is
 * needed to read them), by the same reader as the collector's
 * (probe/cfa.h), every read bounded by the segment holding the object's
 * .eh_frame_hdr.  Why: a dlopen runs the loader's code at thousands of
 * distinct addresses, more than the collector learns before a short
 * process (an interpreter importing its C extensions) ends, and libunwind
 * cannot run there (python3 importing C extensions: 79 % of such samples
 * reached main before); and elsewhere, so that libunwind need not be
 * loaded at every process's start (unwind.c).  NONE where the object's
 * table says no FDE covers pc (V8's builtins in node's text), as the
 * collector would.  0 when no rule can be had here.
 */
static int local_rule(uint64_t pc, uint64_t *rule)
{
	const uint8_t *fde;
	int k = kept_at(pc);

	if (k < 0 || !keep[k].eh_lo || !function_start_fde(k, pc, &fde))
		return 0;
	if (fde < keep[k].eh_lo || fde >= keep[k].eh_hi)
		return 0;
	*rule = cfa_rule_from_fde(keep[k].eh_lo, fde, keep[k].eh_hi,
				  (int64_t)keep[k].bias, pc);
	unsigned kind = *rule & 15;
	/* NONE: no FDE covers pc (V8's builtins in node): by frame pointer. */
	return kind == PROBE_RULE_RSP || kind == PROBE_RULE_RBP ||
	       kind == PROBE_RULE_RBX || kind == PROBE_RULE_LAST ||
	       kind == PROBE_RULE_NONE;
}

/*
 * In the loader only, for a frame whose rule is not cached (libunwind must
 * not run there, and the loader's hot loops have more distinct addresses
 * than the collector learns in a short run): find its return address on
 * the stack, up from rsp.  Only where rip is in an object loaded at start: the first
 * word w that follows a direct call (e8 rel32) in the code of such an
 * object (mapped for good: its bytes can be read here) whose target is the
 * start of rip's function (its .eh_frame_hdr says where): the call that
 * entered it.  A stale return address of an earlier call to the same
 * function could pass (rare: it would have to lie in the frame itself).
 * Returns the word's address, or 0.
 */
#define SCAN_BYTES 1024
#define SCANS_MAX 4                     /* frames found this way, a walk */

static uint64_t scan_return(uint64_t rip, uint64_t rsp, uint64_t hi)
{
	uint64_t start = function_start(rip);

	if (!start)
		return 0;
	for (uint64_t at = rsp; at + 8 <= hi && at < rsp + SCAN_BYTES; at += 8) {
		uint64_t w = *(const uint64_t *)at;
		int32_t rel;

		if (w < 5 || !kept(w - 5) || !kept(w - 1))
			continue;
		const uint8_t *c = (const uint8_t *)(uintptr_t)(w - 5);
		if (c[0] != 0xe8)
			continue;
		memcpy(&rel, c + 1, sizeof rel);
		uint64_t target = w + (uint64_t)(int64_t)rel;
		if (target == start)
			return at;
	}
	return 0;
}

static int lookup(uint64_t key, uint64_t *rule)
{
	struct probe_rule_slot *set = probe_arena->rules[probe_rule_hash(key) & (SETS - 1)];

	for (unsigned w = 0; w < WAYS; w++) {
		struct probe_rule_slot *s = &set[w];

		if (__atomic_load_n(&s->key, __ATOMIC_ACQUIRE) != key)
			continue;
		*rule = __atomic_load_n(&s->rule, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		return __atomic_load_n(&s->key, __ATOMIC_RELAXED) == key;
	}
	return 0;
}

static void want(uint64_t key)
{
	struct probe_arena *a = probe_arena;

	__atomic_store_n(&a->want[probe_rule_hash(key) & (PROBE_ARENA_WANT - 1)],
			 key, __ATOMIC_RELAXED);
	if (!__atomic_load_n(&a->want_pending, __ATOMIC_RELAXED))
		__atomic_store_n(&a->want_pending, 1, __ATOMIC_RELEASE);
}

/*
 * A stack libunwind walked: note the rules we lack, all at once.  frames[0]
 * is the interrupted pc when leaf, else a return address as the rest.
 */
void probe_cfi_note(const uint64_t *frames, int n, int leaf)
{
	uint64_t rule;

	if (!probe_arena)
		return;
	for (int i = 0; i < n && i < 64; i++) {
		uint64_t key = i || !leaf ? frames[i] - 1 : frames[i];

		if (!lookup(key, &rule))
			want(key);
	}
}

/* Is ra a return address the real dlopen was entered with (loader.c)? */
static int is_gadget(uint64_t ra)
{
	for (int i = 0; i < PROBE_GADGETS; i++)
		if (probe_gadgets[i] && probe_gadgets[i] == ra)
			return 1;
	return 0;
}

/*
 * Is pc in executable memory no object maps (JIT code), as the collector
 * last published it?  A torn read (the collector writing) says no.
 */
static int in_jit(uint64_t pc)
{
	const struct probe_arena *a = probe_arena;
	uint32_t n = __atomic_load_n(&a->njit, __ATOMIC_RELAXED), seq;
	int hit = 0;

	if (!n)
		return 0;               /* no JIT: one load, the fast path's cost */
	seq = __atomic_load_n(&a->jit_seq, __ATOMIC_ACQUIRE);
	if (seq & 1)
		return 0;
	for (uint32_t i = 0; i < n && i < PROBE_JIT_RANGES; i++)
		if (pc >= __atomic_load_n(&a->jit[i].lo, __ATOMIC_RELAXED) &&
		    pc < __atomic_load_n(&a->jit[i].hi, __ATOMIC_RELAXED))
			hit = 1;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return hit && __atomic_load_n(&a->jit_seq, __ATOMIC_RELAXED) == seq;
}

/* The registers the walk tracks, one frame at a time. */
struct regs {
	uint64_t rip, rsp, rbp, rbx;
	int rbp_lost;                   /* rbp unknown (a frame found by scanning) */
	int rbx_lost;                   /* rbx unknown (so, or a rule not followed) */
};

/*
 * One frame by its frame pointer (code with no CFI: JIT code, V8's
 * builtins): rbp points at {caller's rbp, return address}.  The same
 * checks as a rule's step: strictly up the stack, inside it, aligned.
 * In a frame interrupted before its prologue ran, rbp is still the
 * caller's: that caller is skipped, as perf's frame-pointer walk does.
 */
static int fp_step(struct regs *r, uint64_t hi)
{
	if (r->rbp_lost || r->rbp < r->rsp || r->rbp > hi - 16 || (r->rbp & 7))
		return -1;
	const uint64_t *fp = (const uint64_t *)(uintptr_t)r->rbp;
	r->rsp = r->rbp + 16;
	r->rip = fp[1];
	r->rbp = fp[0];
	r->rbx_lost = 1;                /* code without CFI may have used it */
	return 0;
}

/*
 * A callee-saved register's value in the caller: read where the frame saved
 * it, or, below rsp, popped already in an epilogue whose CFI moves the CFA
 * but leaves the register's rule (GCC's): the register holds the caller's
 * value again (such leaf samples went to libunwind before).
 */
static int restore(uint64_t at, const struct regs *r, uint64_t hi, uint64_t *reg,
		   int *lost)
{
	if (at + 8 > hi || at + 8 < at)
		return -1;
	if (at >= r->rsp) {
		*reg = *(const uint64_t *)at;
		*lost = 0;
	}
	return 0;
}

/* One frame by its CFI rule (PROBE_RULE_RSP, _RBP or _RBX). */
static int rule_step(struct regs *r, uint64_t rule, uint64_t hi)
{
	unsigned kind = rule & 15;

	if ((kind == PROBE_RULE_RBP && r->rbp_lost) ||
	    (kind == PROBE_RULE_RBX && r->rbx_lost))
		return -1;
	uint64_t cfa = (kind == PROBE_RULE_RSP ? r->rsp :
			kind == PROBE_RULE_RBP ? r->rbp : r->rbx) +
		       (uint64_t)(int64_t)(int32_t)(rule >> 32);
	/* Callers' frames are above: strictly up the stack, in it. */
	if (cfa < r->rsp + 8 || cfa > hi || (cfa & 7))
		return -1;
	uint64_t ra = *(const uint64_t *)(cfa - 8);
	if ((rule & 16) &&
	    restore(cfa + (uint64_t)(int64_t)(int16_t)(rule >> 16), r, hi,
		    &r->rbp, &r->rbp_lost) < 0)
		return -1;
	if (rule & PROBE_RULE_RBX_LOST)
		r->rbx_lost = 1;
	else if ((rule & PROBE_RULE_RBX_SAVED) &&
		 restore(cfa + (uint64_t)probe_rule_rbx_off(rule), r, hi,
			 &r->rbx, &r->rbx_lost) < 0)
		return -1;
	r->rsp = cfa;
	r->rip = ra;
	return 0;
}

/*
 * x86-64 Linux's signal return, where the kernel returns a handler to:
 * glibc's __restore_rt, "mov $15, %rax; syscall" (rt_sigreturn), as
 * libunwind and gdb recognise it.  Its .eh_frame rule is a CFA expression
 * (not cached), so without this a walk from inside a signal handler
 * stopped there whenever libunwind was not loaded.  pc must lie in an
 * object mapped for good (its bytes are read).
 */
static int is_sigreturn(uint64_t pc)
{
	static const uint8_t code[9] = { 0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05 };

	return kept(pc) && kept(pc + sizeof code - 1) &&
	       memcmp((const void *)(uintptr_t)pc, code, sizeof code) == 0;
}

/*
 * Through a signal frame: the handler returned to __restore_rt with rsp at
 * the kernel's ucontext (right after the return address the kernel pushed),
 * which holds the interrupted registers.  -1 when it does not lie in the
 * stack, or the interrupted rsp is not in it.
 */
static int sig_step(struct regs *r, const struct probe_thread *t, uint64_t hi)
{
	const size_t end = offsetof(ucontext_t, uc_mcontext.gregs) + NGREG * sizeof(greg_t);

	if (r->rsp < t->stack_lo || r->rsp > hi || hi - r->rsp < end || (r->rsp & 7))
		return -1;
	const ucontext_t *uc = (const ucontext_t *)(uintptr_t)r->rsp;
	uint64_t rsp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
	if (rsp < t->stack_lo || rsp >= hi)
		return -1;
	r->rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	r->rbp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
	r->rbx = (uint64_t)uc->uc_mcontext.gregs[REG_RBX];
	r->rsp = rsp;
	r->rbp_lost = r->rbx_lost = 0;
	return 0;
}

/*
 * The walk, from r (the registers of frame n: buf[0..n) are filled, r.rip
 * is the next to go there).  mixed: the walk started in the middle of a
 * stack (after libunwind), so any stop says where in *at.
 */
static int walk(const struct probe_thread *t, struct regs r, uint64_t *buf, int n,
		int max, int *partial, struct probe_walk_at *at, int mixed)
{
	uint64_t hi = t->stack_hi, rule;
	int scans = 0, fp_frames = 0, exact = 0;

	if (at)
		at->n = 0;
	if (!probe_arena || !hi || r.rsp < t->stack_lo || r.rsp >= hi)
		return 0;               /* another stack (sigaltstack, fibers) */
	while (n < max) {
		if (partial && n && is_gadget(r.rip)) {
			/* dlopen's return to a "ret" (loader.c): pop as it does. */
			if (r.rsp + 8 > hi)
				goto stop;
			r.rip = *(const uint64_t *)r.rsp;
			r.rsp += 8;
			continue;
		}
		/* A return address: the call is the instruction before it. */
		uint64_t key = n && !exact ? r.rip - 1 : r.rip;

		exact = 0;
		buf[n++] = r.rip;
		rule = 0;
		int have = lookup(key, &rule);
		unsigned kind = rule & 15;
		/* __restore_rt has no rule a walk follows: only then look at its code. */
		if ((!have || (kind != PROBE_RULE_RSP && kind != PROBE_RULE_RBP &&
			       kind != PROBE_RULE_RBX && kind != PROBE_RULE_NONE &&
			       kind != PROBE_RULE_LAST)) &&
		    n > 1 && is_sigreturn(r.rip)) {
			/* The interrupted instruction next, not a return address. */
			if (sig_step(&r, t, hi) < 0)
				goto stop;
			exact = 1;
			continue;
		}
		if (!have) {
			want(key);
			/* JIT code: by frame pointer, while the collector reads its prologue. */
			if (in_jit(key)) {
				rule = PROBE_RULE_NONE;
			} else if (local_rule(key, &rule)) {
				/* read from the object's own .eh_frame, in memory */
			} else {
				if (!partial || scans++ >= SCANS_MAX)
					goto stop;
				/* In the loader: find the frame's return address. */
				uint64_t a = scan_return(r.rip, r.rsp, hi);
				if (!a)
					goto stop;
				r.rip = *(const uint64_t *)a;
				r.rsp = a + 8;
				r.rbp_lost = r.rbx_lost = 1;   /* the frame may have used them */
				continue;
			}
			kind = rule & 15;
		}
		if (kind == PROBE_RULE_LAST)
			return n;
		if (kind == PROBE_RULE_NONE) {
			if (fp_step(&r, hi) < 0)
				goto stop;
			fp_frames++;
		} else if (kind != PROBE_RULE_RSP && kind != PROBE_RULE_RBP &&
			   kind != PROBE_RULE_RBX) {
			goto stop;
		} else if (rule_step(&r, rule, hi) < 0) {
			goto stop;
		}
		if (r.rip == 0)
			return n;
	}
	return n;
stop:
	/* The walk ends here: the frames so far stand only where allowed. */
	if (partial) {
		*partial = 1;
		return n;
	}
	if (at && (fp_frames || mixed)) {
		/* Mixed code: libunwind goes on from here (it cannot walk JIT code). */
		at->n = n;
		at->rip = r.rip;
		at->rsp = r.rsp;
		at->rbp = r.rbp;
	}
	return 0;
}

int probe_cfi_walk(const struct probe_thread *t, const void *ucv,
		   uint64_t *buf, int max, int *partial, struct probe_walk_at *at)
{
	const ucontext_t *uc = ucv;
	struct regs r = {
		(uint64_t)uc->uc_mcontext.gregs[REG_RIP],
		(uint64_t)uc->uc_mcontext.gregs[REG_RSP],
		(uint64_t)uc->uc_mcontext.gregs[REG_RBP],
		(uint64_t)uc->uc_mcontext.gregs[REG_RBX], 0, 0
	};

	return walk(t, r, buf, 0, max, partial, at, 0);
}

int probe_cfi_walk_from(const struct probe_thread *t, const struct probe_walk_at *from,
			uint64_t *buf, int max, struct probe_walk_at *at)
{
	/* From where libunwind stopped: rbx is not known there. */
	struct regs r = { from->rip, from->rsp, from->rbp, 0, 0, 1 };

	return walk(t, r, buf, from->n - 1, max, NULL, at, 1);
}

int probe_cfi_in_jit(uint64_t pc)
{
	return probe_arena && in_jit(pc);
}

/* ---- normal context ------------------------------------------------------ */

/*
 * The code of the objects loaded before us (the program and its
 * dependencies, LD_PRELOADs, the loader): dlclose never unloads them, so
 * their rules stay (a program that dlopens and dlcloses in a loop would
 * otherwise lose the loader's and libc's rules at every dlclose, and its
 * samples in the loader their callers).
 */

static int keep_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	const uint8_t *ehf = NULL, *eh_lo = NULL, *eh_hi = NULL;

	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			ehf = (const uint8_t *)(uintptr_t)(info->dlpi_addr +
							   info->dlpi_phdr[i].p_vaddr);
	/* The readable segment holding it: local_rule's reads stay inside. */
	for (int i = 0; ehf && i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *lo = (const uint8_t *)(uintptr_t)(info->dlpi_addr +
								 ph->p_vaddr);

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) &&
		    ehf >= lo && ehf < lo + ph->p_memsz) {
			eh_lo = lo;
			eh_hi = lo + ph->p_memsz;
		}
	}
	for (int i = 0; i < info->dlpi_phnum && nkeep < KEEP_MAX; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		/* Readable too: scan_return reads the code's bytes. */
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		    (ph->p_flags & PF_R)) {
			keep[nkeep].lo = info->dlpi_addr + ph->p_vaddr;
			keep[nkeep].hi = keep[nkeep].lo + ph->p_memsz;
			keep[nkeep].ehf = ehf;
			keep[nkeep].eh_lo = eh_lo;
			keep[nkeep].eh_hi = eh_hi;
			keep[nkeep].bias = info->dlpi_addr;
			nkeep++;
		}
	}
	return 0;
}

void probe_cfi_keep_init(void)
{
	if (nkeep == 0)
		dl_iterate_phdr(keep_one, NULL);
}


/* The executable segments loaded now, sorted, for probe_cfi_flush. */
struct live {
	struct { uint64_t lo, hi; } *v;
	size_t n, cap;
	int failed;
};

static int live_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct live *l = arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum && !l->failed; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (l->n == l->cap) {
			size_t cap = l->cap ? 2 * l->cap : 64;
			void *v = realloc(l->v, cap * sizeof l->v[0]);

			if (!v) {
				l->failed = 1;
				return 1;
			}
			l->v = v;
			l->cap = cap;
		}
		l->v[l->n].lo = info->dlpi_addr + ph->p_vaddr;
		l->v[l->n].hi = l->v[l->n].lo + ph->p_memsz;
		l->n++;
	}
	return 0;
}

static int cmp_lo(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int is_live(const struct live *l, uint64_t key)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {               /* the last segment starting at or below key */
		size_t mid = lo + (hi - lo) / 2;

		if (l->v[mid].lo <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && key < l->v[lo - 1].hi;
}

/*
 * dlclose: code may be gone, and other code come to its addresses.  The
 * epoch first, so that the collector does not write back a rule it learned
 * for the old code (it checks the epoch before it publishes).  Rules of
 * code still loaded stay: a program that loads and unloads a plugin in a
 * loop keeps the rules of the objects that call it, so that its samples in
 * the loader keep their callers.
 */
void probe_cfi_flush(int loaded_only)
{
	struct probe_arena *a = probe_arena;
	struct live l = { NULL, 0, 0, 0 };

	if (!a)
		return;
	__atomic_add_fetch(&a->rules_epoch, 1, __ATOMIC_SEQ_CST);
	if (loaded_only) {
		dl_iterate_phdr(live_one, &l);
		if (!l.failed)
			qsort(l.v, l.n, sizeof l.v[0], cmp_lo);
	}
	loaded_only = loaded_only && !l.failed && l.n;
	for (unsigned i = 0; i < PROBE_RULE_SETS; i++)
		for (unsigned w = 0; w < PROBE_RULE_WAYS; w++) {
			uint64_t k = __atomic_load_n(&a->rules[i][w].key,
						     __ATOMIC_ACQUIRE);

			if (k && !(loaded_only ? is_live(&l, k) : kept(k)))
				__atomic_store_n(&a->rules[i][w].key, 0,
						 __ATOMIC_RELEASE);
		}
	free(l.v);
}
