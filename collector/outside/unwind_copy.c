/*
 * unwind_copy.c - walking a copied user stack: unwind_copy.h says what.
 * The steps are preload/cfi.c's (rule_step, fp_step), over the copy
 * instead of the live stack: every read goes through word(), which knows
 * where the copy ends.
 */
#include "outside/unwind_copy.h"

#include <string.h>

#include "probe/arena.h"

struct walk {
	const uint8_t *copy;
	uint64_t lo, hi;                /* the copy's addresses: [SP, SP + len) */
	int past;                       /* a read went past the copy */
	uint64_t rip, rsp, rbp;
	int rbp_lost;
};

/* The word at address a, from the copy; 0 and w->past when outside it. */
static int word(struct walk *w, uint64_t a, uint64_t *v)
{
	if (a < w->lo || a > w->hi || w->hi - a < 8) {
		if (a >= w->hi)
			w->past = 1;
		return -1;
	}
	memcpy(v, w->copy + (a - w->lo), 8);
	return 0;
}

static int fp_step(struct walk *w)
{
	uint64_t rbp, ra;
	if (w->rbp_lost || w->rbp < w->rsp || (w->rbp & 7) ||
	    word(w, w->rbp, &rbp) < 0 || word(w, w->rbp + 8, &ra) < 0)
		return -1;
	w->rsp = w->rbp + 16;
	w->rip = ra;
	w->rbp = rbp;
	return 0;
}

static int rule_step(struct walk *w, uint64_t rule)
{
	unsigned kind = rule & 15;
	uint64_t ra;
	if (kind == PROBE_RULE_RBP && w->rbp_lost)
		return -1;
	uint64_t cfa = (kind == PROBE_RULE_RSP ? w->rsp : w->rbp) +
		       (uint64_t)(int64_t)(int32_t)(rule >> 32);
	if (cfa < w->rsp + 8 || (cfa & 7) || word(w, cfa - 8, &ra) < 0)
		return -1;
	if (rule & 16) {
		uint64_t at = cfa + (uint64_t)(int64_t)(int16_t)(rule >> 16);
		/*
		 * Below rsp: popped in an epilogue whose CFI keeps rbp's rule
		 * (GCC's): rbp holds the caller's value again (preload/cfi.c).
		 */
		if (at >= w->rsp) {
			if (word(w, at, &w->rbp) < 0)
				return -1;
			w->rbp_lost = 0;
		}
	}
	w->rsp = cfa;
	w->rip = ra;
	return 0;
}

int unwind_copy(const struct perfring_rec *r, uint32_t copy_size, unwind_rule_fn rule,
		void *ctx, uint64_t *out, int max, int *cut, int *complete)
{
	const uint64_t *regs = r->u.sample.regs;
	struct walk w = { r->u.sample.stack, regs[PERFRING_REG_SP],
			  regs[PERFRING_REG_SP] + r->u.sample.stack_len, 0,
			  regs[PERFRING_REG_IP], regs[PERFRING_REG_SP], regs[PERFRING_REG_BP], 0 };
	int n = 0;
	*cut = *complete = 0;
	if (!r->u.sample.have_regs || !w.copy || w.hi < w.lo)
		return 0;
	while (n < max) {
		/* A return address: the call is the instruction before it. */
		uint64_t key = n ? w.rip - 1 : w.rip;
		out[n++] = w.rip;
		uint64_t ru = rule(ctx, key);
		unsigned kind = ru & 15;
		int st;
		if (kind == PROBE_RULE_LAST) {
			*complete = 1;
			break;
		}
		if (kind == PROBE_RULE_NONE)
			st = fp_step(&w);
		else if (kind == PROBE_RULE_RSP || kind == PROBE_RULE_RBP)
			st = rule_step(&w, ru);
		else
			break;
		if (st < 0)
			break;
		if (w.rip == 0) {
			*complete = 1;
			break;
		}
	}
	*cut = w.past && r->u.sample.stack_len >= copy_size;
	return n;
}
