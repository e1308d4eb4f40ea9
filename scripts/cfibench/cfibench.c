/*
 * cfibench - the frame rule for many code addresses of real ELF objects,
 * from libdw (dwarf_getcfi_elf + dwarf_cfi_addrframe) and from probe's
 * cfi_learn.c (cfi_rule_at, and its interpreter image_rule alone):
 * set-up time, time per lookup, memory, and where the two disagree.
 *
 *   ./cfibench [-n MIN_ADDRS] [-r REPS] [-x EXAMPLES] [-s SEED] FILE...
 *
 * Addresses, per object: every FDE's start, middle and end (one past its
 * last byte: the next FDE's start, or code without CFI) and K random
 * addresses inside it (K >= 3, more until there are MIN_ADDRS, default
 * 100000), shuffled; both sides get the same list, in the same order.
 * The FDEs are found by a small .eh_frame walker of this file's own (a
 * third reader, used only to pick addresses).
 *
 * Each (object, side) runs in its own child process (fork): REPS times
 * (default 3) { open + first query; a pass over all addresses on the fresh
 * handle ("cold": libdw interns FDEs and CIEs as it meets them); a second
 * pass ("warm") ; close }.  Medians are printed.  Columns: setup_us, the
 * open and the first query; first1k_us, the open and the first 1000
 * queries (what a collector asks of one object: a few hundred to a few
 * thousand distinct addresses, each once: cfi_learn remembers them);
 * cold_ns, warm_ns, per query, cfi_learn through cfi_rule_at (its file
 * cache and remember table included); raw_*: cfi_learn's image_rule
 * alone.  Memory: VmRSS and the malloc heap (mallinfo2) after the first
 * repetition's warm pass, the handle still open, minus before the open;
 * VmHWM likewise.  The hdr column: aftr when .eh_frame_hdr's section
 * header follows .eh_frame's (gold's layout), which libdw 0.188 ignores.
 *
 * Build and run: run.sh (make PROBE=/work/main; ./cfibench FILE...).
 *
 * libdw's answer is turned into probe's packed rule with the same
 * acceptance as cfa.h's cfa_rule_from_fde: no FDE -> NONE; signal frame
 * -> UNSUP; RA undefined -> LAST; CFA = rsp/rbp + off (8 <= off <=
 * INT32_MAX), RA at CFA-8, rbp same or at CFA+off (int16) -> RSP/RBP;
 * anything else -> UNSUP.
 */
#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cfi_side.h"
#include "probe/arena.h"
#include "symbols/ehframe.h"

static uint64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* ---- the addresses: each FDE's start, middle, end and a few inside ---------- */

struct fde { uint64_t begin, range; };
struct addr { uint64_t a, fde_begin; };

static struct fde *fdes_of(const uint8_t *img, size_t size, size_t *nout, int *has_hdr)
{
	const Elf64_Ehdr *eh = (const void *)img;
	struct fde *v = NULL;
	size_t n = 0;
	unsigned hdr_i = 0, eh_i = 0;
	*has_hdr = 0;
	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > size)
		return NULL;
	const Elf64_Shdr *sh = (const void *)(img + eh->e_shoff);
	const char *strs = (const char *)img + sh[eh->e_shstrndx].sh_offset;
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		const char *name = strs + sh[i].sh_name;
		if (!strcmp(name, ".eh_frame_hdr"))
			hdr_i = i;
		if (!strcmp(name, ".eh_frame"))
			eh_i = i;
		/* lld types it SHT_X86_64_UNWIND (0x70000001), GNU ld PROGBITS */
		if (strcmp(name, ".eh_frame") ||
		    (sh[i].sh_type != SHT_PROGBITS && sh[i].sh_type != 0x70000001))
			continue;
		/* Every FDE's range, as the collector reads them (ehframe.h). */
		struct ehf_range *r = NULL;
		size_t k = ehframe_ranges(img + sh[i].sh_offset, sh[i].sh_size, sh[i].sh_addr, 8, &r);
		v = realloc(v, (n + k + 1) * sizeof(*v));
		for (size_t j = 0; j < k; j++)
			v[n++] = (struct fde){ r[j].start, r[j].end - r[j].start };
		free(r);
	}
	/* 2: the header's section comes after .eh_frame's: libdw (0.188) does
	 * not see it (getcfi_shdr stops at .eh_frame) and scans .eh_frame. */
	*has_hdr = !hdr_i ? 0 : hdr_i < eh_i ? 1 : 2;
	*nout = n;
	return v;
}

/* ---- libdw's answer ---------------------------------------------------------- */

enum { R_SAME, R_UNDEF, R_OFF, R_VALOFF, R_REG, R_EXPR, R_ERR };
static const char *rk[] = { "same", "undef", "cfa", "val(cfa", "reg", "expr", "err" };

struct dwres {
	int8_t err;                     /* 0; 1: no FDE (DWARF_E_NO_MATCH); 2: another error */
	int8_t sig, cfa_kind;           /* cfa_kind: 0 reg+off, 1 expression, 2 undefined */
	int8_t ra, rbp;                 /* R_* */
	int16_t err_no;
	int32_t cfa_reg;
	int64_t cfa_off, ra_off, rbp_off;
};

static int reg_kind(int rc, Dwarf_Op *ops, size_t nops, int64_t *off)
{
	*off = 0;
	if (rc != 0)
		return R_ERR;
	if (ops == NULL && nops == 0)
		return R_SAME;
	if (nops == 0)
		return R_UNDEF;
	if (ops[0].atom == DW_OP_call_frame_cfa) {
		if (nops == 1)
			return R_OFF;
		if (nops == 2 && ops[1].atom == DW_OP_plus_uconst) {
			*off = (int64_t)ops[1].number;
			return R_OFF;
		}
		if (nops == 2 && ops[1].atom == DW_OP_stack_value)
			return R_VALOFF;
		if (nops == 3 && ops[1].atom == DW_OP_plus_uconst && ops[2].atom == DW_OP_stack_value) {
			*off = (int64_t)ops[1].number;
			return R_VALOFF;
		}
		return R_EXPR;
	}
	if (nops == 1 && ops[0].atom == DW_OP_regx) {
		*off = (int64_t)ops[0].number;
		return R_REG;
	}
	return R_EXPR;
}

static void dw_query(Dwarf_CFI *cfi, uint64_t a, struct dwres *o)
{
	Dwarf_Frame *fr = NULL;
	memset(o, 0, sizeof(*o));
	if (dwarf_cfi_addrframe(cfi, a, &fr) != 0) {
		int e = dwarf_errno();
		o->err_no = (int16_t)e;
		/* DWARF_E_NO_MATCH is libdw's private enum: its message is public. */
		o->err = !strcmp(dwarf_errmsg(e), "no matching address range") ? 1 : 2;
		return;
	}
	bool sig = false;
	dwarf_frame_info(fr, NULL, NULL, &sig);
	o->sig = sig;
	Dwarf_Op *ops, mem[3];
	size_t nops;
	if (dwarf_frame_cfa(fr, &ops, &nops) != 0) {
		o->cfa_kind = 3;
	} else if (nops == 0) {
		o->cfa_kind = 2;
	} else if (nops == 1 && ops[0].atom == DW_OP_bregx) {
		o->cfa_kind = 0;
		o->cfa_reg = (int32_t)ops[0].number;
		o->cfa_off = (int64_t)ops[0].number2;
	} else {
		o->cfa_kind = 1;
	}
	int rc = dwarf_frame_register(fr, 16, mem, &ops, &nops);
	o->ra = (int8_t)reg_kind(rc, ops, nops, &o->ra_off);
	rc = dwarf_frame_register(fr, 6, mem, &ops, &nops);
	o->rbp = (int8_t)reg_kind(rc, ops, nops, &o->rbp_off);
	free(fr);
}

/* libdw's answer as probe's packed rule (see the top), and why not. */
static uint64_t dw_pack(const struct dwres *d, const char **why)
{
	uint64_t unsup = probe_rule_pack(PROBE_RULE_UNSUP, 0, 0, 0);
	*why = "";
	if (d->err == 1)
		return probe_rule_pack(PROBE_RULE_NONE, 0, 0, 0);
	if (d->err) { *why = "libdw error"; return unsup; }
	if (d->sig) { *why = "signal frame (CIE 'S')"; return unsup; }
	if (d->ra == R_UNDEF)
		return probe_rule_pack(PROBE_RULE_LAST, 0, 0, 0);
	if (d->cfa_kind == 1) { *why = "CFA is an expression"; return unsup; }
	if (d->cfa_kind != 0) { *why = "CFA undefined/invalid"; return unsup; }
	if (d->cfa_reg != 7 && d->cfa_reg != 6) { *why = "CFA register not rsp/rbp"; return unsup; }
	if (d->ra != R_OFF || d->ra_off != -8) { *why = "RA not at CFA-8"; return unsup; }
	if (d->cfa_off < 8 || d->cfa_off > INT32_MAX) { *why = "CFA offset out of range"; return unsup; }
	if (d->rbp != R_SAME && d->rbp != R_OFF) { *why = "rbp rule not same/offset"; return unsup; }
	if (d->rbp == R_OFF && (d->rbp_off < INT16_MIN || d->rbp_off > INT16_MAX)) {
		*why = "rbp offset out of range";
		return unsup;
	}
	return probe_rule_pack(d->cfa_reg == 7 ? PROBE_RULE_RSP : PROBE_RULE_RBP,
			       d->rbp == R_OFF, (int)d->rbp_off, (int32_t)d->cfa_off);
}

static const char *kinds[] = { "NONE", "RSP", "RBP", "LAST", "UNSUP" };

static void rule_str(uint64_t r, char *buf, size_t n)
{
	unsigned k = r & 15;
	if (k == PROBE_RULE_RSP || k == PROBE_RULE_RBP)
		snprintf(buf, n, "CFA=%s%+d RA@CFA-8 rbp=%s%+d", k == PROBE_RULE_RSP ? "rsp" : "rbp",
			 (int32_t)(r >> 32), (r >> 4) & 1 ? "@CFA" : "same", (r >> 4) & 1 ? (int16_t)(r >> 16) : 0);
	else
		snprintf(buf, n, "%s", k < 5 ? kinds[k] : "?");
}

static void dw_str(const struct dwres *d, char *buf, size_t n)
{
	if (d->err) {
		snprintf(buf, n, "%s", d->err == 1 ? "no FDE" : dwarf_errmsg(d->err_no));
		return;
	}
	char cfa[48];
	if (d->cfa_kind == 0)
		snprintf(cfa, sizeof(cfa), "r%d%+" PRId64, d->cfa_reg, d->cfa_off);
	else
		snprintf(cfa, sizeof(cfa), "%s", d->cfa_kind == 1 ? "expr" : "undef/err");
	snprintf(buf, n, "CFA=%s RA=%s%+" PRId64 "%s rbp=%s%+" PRId64 "%s%s", cfa, rk[d->ra], d->ra_off,
		 d->ra == R_VALOFF ? ")" : "", rk[d->rbp], d->rbp_off, d->rbp == R_VALOFF ? ")" : "",
		 d->sig ? " signal" : "");
}

/* ---- the runs ---------------------------------------------------------------- */

struct timing {
	double setup_ns[8], cold_ns[8], warm_ns[8];     /* per lookup for passes */
	double first_ns[8];                             /* open + the first FIRST lookups */
	double raw_cold_ns[8], raw_warm_ns[8];          /* cfi_learn: image_rule alone */
	long rss_kb, hwm_kb, heap_kb;
	int ok;
};

static long status_kb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	size_t kl = strlen(key);
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl)) {
			v = atol(line + kl + 1);
			break;
		}
	if (f)
		fclose(f);
	return v;
}

static long heap_kb(void)
{
	struct mallinfo2 mi = mallinfo2();
	return (long)((mi.uordblks + mi.hblkhd) / 1024);
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	double t[8];
	memcpy(t, v, sizeof(double) * (size_t)n);
	qsort(t, (size_t)n, sizeof(double), cmpd);
	return t[n / 2];
}

static volatile uint64_t sink;
#define FIRST 1000              /* a collector's few asks per object */

static void run_libdw(const char *path, const struct addr *ad, size_t n, int reps,
		      struct dwres *out, struct timing *t)
{
	long rss0 = status_kb("VmRSS:"), hwm0 = status_kb("VmHWM:"), h0 = heap_kb();
	elf_version(EV_CURRENT);
	for (int r = 0; r < reps; r++) {
		struct dwres d;
		uint64_t t0 = now();
		int fd = open(path, O_RDONLY);
		Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		Dwarf_CFI *cfi = elf ? dwarf_getcfi_elf(elf) : NULL;
		if (!cfi) {
			fprintf(stderr, "%s: libdw: no CFI (%s)\n", path, dwarf_errmsg(-1));
			return;
		}
		dw_query(cfi, ad[0].a, &d);
		uint64_t t1 = now(), tf = 0;
		for (size_t i = 0; i < n; i++) {
			dw_query(cfi, ad[i].a, r == 0 ? &out[i] : &d);
			if (i == FIRST - 1)
				tf = now();
		}
		uint64_t t2 = now();
		t->first_ns[r] = (double)((tf ? tf : t2) - t0);
		for (size_t i = 0; i < n; i++) {
			dw_query(cfi, ad[i].a, &d);
			sink += (uint64_t)d.cfa_off;
		}
		uint64_t t3 = now();
		t->setup_ns[r] = (double)(t1 - t0);
		t->cold_ns[r] = (double)(t2 - t1) / (double)n;
		t->warm_ns[r] = (double)(t3 - t2) / (double)n;
		if (r == 0) {
			t->rss_kb = status_kb("VmRSS:") - rss0;
			t->heap_kb = heap_kb() - h0;
		}
		dwarf_cfi_end(cfi);
		elf_end(elf);
		close(fd);
	}
	t->hwm_kb = status_kb("VmHWM:") - hwm0;
	t->ok = 1;
}

static void run_cfi(const char *path, const struct addr *ad, size_t n, int reps,
		    uint64_t *out, struct timing *t)
{
	long rss0 = status_kb("VmRSS:"), hwm0 = status_kb("VmHWM:"), h0 = heap_kb();
	struct cfi_map m = { .start = 0, .end = UINT64_MAX, .bias = 0, .path = (char *)path };
	pid_t pid = getpid();
	for (int r = 0; r < reps; r++) {
		uint64_t t0 = now();
		uint64_t first = cfi_rule_at(&m, pid, ad[0].a);
		uint64_t t1 = now(), tf = 0;
		sink += first;
		for (size_t i = 0; i < n; i++) {
			uint64_t rule = cfi_rule_at(&m, pid, ad[i].a);
			if (r == 0)
				out[i] = rule;
			sink += rule;
			if (i == FIRST - 1)
				tf = now();
		}
		uint64_t t2 = now();
		t->first_ns[r] = (double)((tf ? tf : t2) - t0);
		for (size_t i = 0; i < n; i++)
			sink += cfi_rule_at(&m, pid, ad[i].a);
		uint64_t t3 = now();
		/* NULL: cfi_learn cannot read the object (every rule UNSUP) */
		const void *im = cb_image(&m, pid);
		if (!im && r == 0)
			fprintf(stderr, "%s: cfi_learn cannot read it: every rule UNSUP\n", path);
		for (size_t i = 0; im && i < n; i++)
			sink += cb_image_rule(im, ad[i].a);
		uint64_t t4 = now();
		for (size_t i = 0; im && i < n; i++)
			sink += cb_image_rule(im, ad[i].a);
		uint64_t t5 = now();
		t->setup_ns[r] = (double)(t1 - t0);
		t->cold_ns[r] = (double)(t2 - t1) / (double)n;
		t->warm_ns[r] = (double)(t3 - t2) / (double)n;
		t->raw_cold_ns[r] = (double)(t4 - t3) / (double)n;
		t->raw_warm_ns[r] = (double)(t5 - t4) / (double)n;
		if (r == 0) {
			t->rss_kb = status_kb("VmRSS:") - rss0;
			t->heap_kb = heap_kb() - h0;
		}
		cfi_files_free();
	}
	t->hwm_kb = status_kb("VmHWM:") - hwm0;
	t->ok = 1;
}

/* ---- comparing --------------------------------------------------------------- */

#define NCAT 64
#define NEX 8
struct cat {
	char key[160];
	size_t count;
	int nex;
	size_t ex[NEX];
};

static struct cat *cat_of(struct cat *c, int *nc, const char *key)
{
	for (int i = 0; i < *nc; i++)
		if (!strcmp(c[i].key, key))
			return &c[i];
	if (*nc == NCAT)
		return NULL;
	struct cat *e = &c[(*nc)++];
	memset(e, 0, sizeof(*e));
	snprintf(e->key, sizeof(e->key), "%s", key);
	return e;
}

static void cat_add(struct cat *c, int *nc, const char *key, size_t i, int nex)
{
	struct cat *e = cat_of(c, nc, key);
	if (!e)
		return;
	e->count++;
	/* examples spread out: the first ones, then every so often */
	if (e->nex < nex)
		e->ex[e->nex++] = i;
	else if ((e->count & (e->count - 1)) == 0)
		e->ex[nex - 1] = i;
}

static int by_count(const void *a, const void *b)
{
	const struct cat *x = a, *y = b;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

static void compare(const char *path, const struct addr *ad, size_t n, const uint64_t *cr,
		    const struct dwres *dw, int nex)
{
	size_t same_rule = 0, comp_n = 0, cfa_same = 0, ra_same = 0, rbp_same = 0;
	size_t mat[5][6] = { { 0 } };
	static struct cat dis[NCAT], uns[NCAT];
	int nd = 0, nu = 0;
	for (size_t i = 0; i < n; i++) {
		const char *why;
		uint64_t dr = dw_pack(&dw[i], &why);
		unsigned ck = cr[i] & 15, dk = dw[i].err == 2 ? 5 : dr & 15;
		if (ck < 5)
			mat[ck][dk]++;
		if (dr == cr[i])
			same_rule++;
		/* Components, where cfi_learn gave some. */
		const struct dwres *d = &dw[i];
		if (ck == PROBE_RULE_RSP || ck == PROBE_RULE_RBP) {
			comp_n++;
			int saved = (cr[i] >> 4) & 1;
			cfa_same += !d->err && d->cfa_kind == 0 &&
				    d->cfa_reg == (ck == PROBE_RULE_RSP ? 7 : 6) &&
				    d->cfa_off == (int32_t)(cr[i] >> 32);
			ra_same += !d->err && d->ra == R_OFF && d->ra_off == -8;
			rbp_same += !d->err && (saved ? d->rbp == R_OFF && d->rbp_off == (int16_t)(cr[i] >> 16)
						      : d->rbp == R_SAME);
		} else if (ck == PROBE_RULE_NONE || ck == PROBE_RULE_LAST) {
			comp_n++;
			int ok = ck == PROBE_RULE_NONE ? d->err == 1 : !d->err && d->ra == R_UNDEF;
			cfa_same += ok;
			ra_same += ok;
			rbp_same += ok;
		}
		char key[160];
		if (dr != cr[i]) {
			if (ck == dk && (ck == PROBE_RULE_RSP || ck == PROBE_RULE_RBP))
				snprintf(key, sizeof(key), "both %s, different numbers", kinds[ck]);
			else
				snprintf(key, sizeof(key), "cfi_learn %s, libdw %s%s%s", ck < 5 ? kinds[ck] : "?",
					 dk < 5 ? kinds[dk] : "ERROR", *why ? ": " : "", why);
			cat_add(dis, &nd, key, i, nex);
		} else if (ck == PROBE_RULE_UNSUP) {
			snprintf(key, sizeof(key), "%s", why);
			cat_add(uns, &nu, key, i, nex);
		}
	}
	printf("\n== agreement: %s (%zu addresses)\n", path, n);
	printf("  same packed rule:      %zu / %zu = %.4f%%\n", same_rule, n, 100.0 * (double)same_rule / (double)n);
	printf("  where cfi_learn gives a rule (RSP/RBP/LAST/NONE): %zu addresses (%.2f%%)\n", comp_n,
	       100.0 * (double)comp_n / (double)n);
	printf("    same CFA (reg+off):  %.4f%%\n", 100.0 * (double)cfa_same / (double)(comp_n ? comp_n : 1));
	printf("    same RA location:    %.4f%%\n", 100.0 * (double)ra_same / (double)(comp_n ? comp_n : 1));
	printf("    same RBP location:   %.4f%%\n", 100.0 * (double)rbp_same / (double)(comp_n ? comp_n : 1));
	printf("  matrix (rows cfi_learn, columns libdw as a packed rule):\n%14s", "");
	for (int j = 0; j < 6; j++)
		printf("%10s", j < 5 ? kinds[j] : "dw-ERROR");
	printf("\n");
	for (int k = 0; k < 5; k++) {
		printf("  %12s", kinds[k]);
		for (int j = 0; j < 6; j++)
			printf("%10zu", mat[k][j]);
		printf("\n");
	}
	qsort(dis, (size_t)nd, sizeof(*dis), by_count);
	qsort(uns, (size_t)nu, sizeof(*uns), by_count);
	printf("  disagreements: %d categories\n", nd);
	for (int c = 0; c < nd; c++) {
		printf("   [%zu] %s\n", dis[c].count, dis[c].key);
		for (int e = 0; e < dis[c].nex; e++) {
			size_t i = dis[c].ex[e];
			char a[96], b[160];
			rule_str(cr[i], a, sizeof(a));
			dw_str(&dw[i], b, sizeof(b));
			printf("      0x%" PRIx64 " (FDE 0x%" PRIx64 "+0x%" PRIx64 "): cfi_learn %s | libdw %s\n",
			       ad[i].a, ad[i].fde_begin, ad[i].a - ad[i].fde_begin, a, b);
		}
	}
	printf("  both UNSUP, by libdw's reason:\n");
	for (int c = 0; c < nu; c++) {
		printf("   [%zu] %s\n", uns[c].count, uns[c].key);
		for (int e = 0; e < uns[c].nex && e < 2; e++) {
			size_t i = uns[c].ex[e];
			char b[160];
			dw_str(&dw[i], b, sizeof(b));
			printf("      0x%" PRIx64 " (FDE 0x%" PRIx64 "+0x%" PRIx64 "): libdw %s\n", ad[i].a,
			       ad[i].fde_begin, ad[i].a - ad[i].fde_begin, b);
		}
	}
}

int main(int argc, char **argv)
{
	size_t want = 100000;
	int reps = 3, nex = 3, opt;
	while ((opt = getopt(argc, argv, "n:r:x:s:")) != -1) {
		switch (opt) {
		case 'n': want = strtoull(optarg, NULL, 0); break;
		case 'r': reps = atoi(optarg); break;
		case 'x': nex = atoi(optarg); break;
		case 's': rng = strtoull(optarg, NULL, 0) | 1; break;
		default:
			fprintf(stderr, "usage: %s [-n MIN_ADDRS] [-r REPS] [-x EXAMPLES] [-s SEED] FILE...\n", argv[0]);
			return 2;
		}
	}
	if (reps < 1 || reps > 8 || nex < 1 || nex > NEX || optind == argc) {
		fprintf(stderr, "usage: %s [-n MIN_ADDRS] [-r REPS 1-8] [-x EXAMPLES 1-%d] FILE...\n", argv[0], NEX);
		return 2;
	}
	printf("hdr: .eh_frame_hdr section (aftr: after .eh_frame's, which libdw does not use)\n");
	printf("%-40s %7s %4s %8s %10s %10s %10s %10s %10s %10s %10s %8s %8s %8s\n", "object", "FDEs", "hdr",
	       "addrs", "side", "setup_us", "first1k_us", "cold_ns", "warm_ns", "raw_cold", "raw_warm", "rss_KiB",
	       "hwm_KiB", "heap_KiB");
	for (int f = optind; f < argc; f++) {
		/* cfi_learn takes absolute paths only (a MAP's) */
		char *path = realpath(argv[f], NULL);
		if (!path) {
			perror(argv[f]);
			continue;
		}
		int fd = open(path, O_RDONLY);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0) {
			perror(path);
			free(path);
			continue;
		}
		uint8_t *img = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
		if (img == MAP_FAILED) {
			perror(path);
			free(path);
			continue;
		}
		size_t nf = 0;
		int has_hdr;
		struct fde *fv = fdes_of(img, (size_t)st.st_size, &nf, &has_hdr);
		munmap(img, (size_t)st.st_size);
		if (!nf) {
			fprintf(stderr, "%s: no FDEs\n", path);
			free(path);
			continue;
		}
		size_t k = 3;
		if ((3 + k) * nf < want)
			k = (want - 3 * nf + nf - 1) / nf;
		size_t n = nf * (3 + k);
		/* The results, shared with the children. */
		size_t sz = n * (sizeof(struct addr) + sizeof(uint64_t) + sizeof(struct dwres)) +
			    2 * sizeof(struct timing);
		uint8_t *sh = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (sh == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		struct addr *ad = (void *)sh;
		struct dwres *dw = (void *)(ad + n);
		uint64_t *cr = (void *)(dw + n);
		struct timing *tm = (void *)(cr + n);
		size_t j = 0;
		for (size_t i = 0; i < nf; i++) {
			ad[j++] = (struct addr){ fv[i].begin, fv[i].begin };
			ad[j++] = (struct addr){ fv[i].begin + fv[i].range / 2, fv[i].begin };
			/* one past its end: the next FDE's start, or code without one */
			ad[j++] = (struct addr){ fv[i].begin + fv[i].range, fv[i].begin };
			for (size_t x = 0; x < k; x++)
				ad[j++] = (struct addr){ fv[i].begin + rnd() % fv[i].range, fv[i].begin };
		}
		for (size_t i = n - 1; i > 0; i--) {
			size_t o = rnd() % (i + 1);
			struct addr t = ad[i];
			ad[i] = ad[o];
			ad[o] = t;
		}
		free(fv);
		for (int side = 0; side < 2; side++) {
			fflush(stdout);
			pid_t pid = fork();
			if (pid == 0) {
				/* Fault in the shared arrays first: their pages are not the
				 * side's memory. */
				for (size_t o = 0; o < sz; o += 4096)
					((volatile uint8_t *)sh)[o] = ((volatile uint8_t *)sh)[o];
				if (side == 0)
					run_libdw(path, ad, n, reps, dw, &tm[0]);
				else
					run_cfi(path, ad, n, reps, cr, &tm[1]);
				_exit(0);
			}
			int stw;
			waitpid(pid, &stw, 0);
			struct timing *t = &tm[side];
			if (!t->ok) {
				printf("%-40s %s failed\n", path, side ? "cfi_learn" : "libdw");
				continue;
			}
			printf("%-40s %7zu %4s %8zu %10s %10.1f %10.1f %10.1f %10.1f", path, nf, 
			       has_hdr == 1 ? "yes" : has_hdr == 2 ? "aftr" : "no", n,
			       side ? "cfi_learn" : "libdw", median(t->setup_ns, reps) / 1000.0,
			       median(t->first_ns, reps) / 1000.0,
			       median(t->cold_ns, reps), median(t->warm_ns, reps));
			if (side)
				printf(" %10.1f %10.1f", median(t->raw_cold_ns, reps), median(t->raw_warm_ns, reps));
			else
				printf(" %10s %10s", "-", "-");
			printf(" %8ld %8ld %8ld\n", t->rss_kb, t->hwm_kb, t->heap_kb);
		}
		if (tm[0].ok && tm[1].ok)
			compare(path, ad, n, cr, dw, nex);
		munmap(sh, sz);
		free(path);
	}
	return 0;
}
