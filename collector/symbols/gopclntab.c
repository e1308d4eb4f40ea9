/*
 * gopclntab.c - reading Go's function table: gopclntab.h says what.
 * The layout is the runtime's (runtime/symtab.go, cmd/link's pcln.go):
 * a pcHeader, the function names, the pc-value tables, then functab:
 * nfunc + 1 pairs (entry offset from textStart, _func offset from
 * functab), sorted, the last one the end of the text.
 */
#include "symbols/gopclntab.h"

#include <elf.h>
#include <string.h>

#include "probe/bytes.h"

static int in(const struct gopcln *g, const uint8_t *q, size_t n)
{
	return q >= g->p && q <= g->end && (size_t)(g->end - q) >= n;
}

static uint32_t u32(const uint8_t *q)
{
	uint32_t v;
	memcpy(&v, q, 4);
	return v;
}

static uint64_t u64(const uint8_t *q)
{
	uint64_t v;
	memcpy(&v, q, 8);
	return v;
}

/* The .gopclntab section of an ELF file in memory: 0, or -1. */
static int section(const uint8_t *img, size_t size, const uint8_t **p, size_t *n,
		   uint64_t *addr)
{
	Elf64_Ehdr eh;
	if (size < sizeof eh)
		return -1;
	memcpy(&eh, img, sizeof eh);
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > size ||
	    eh.e_shnum > (size - eh.e_shoff) / sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum)
		return -1;
	Elf64_Shdr str, sh;
	memcpy(&str, img + eh.e_shoff + (size_t)eh.e_shstrndx * sizeof str, sizeof str);
	if (str.sh_offset > size || str.sh_size > size - str.sh_offset)
		return -1;
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		memcpy(&sh, img + eh.e_shoff + (size_t)i * sizeof sh, sizeof sh);
		if (str.sh_size < 11 || sh.sh_name > str.sh_size - 11 ||
		    memcmp(img + str.sh_offset + sh.sh_name, ".gopclntab", 11) ||
		    sh.sh_type == SHT_NOBITS || sh.sh_offset > size ||
		    sh.sh_size > size - sh.sh_offset)
			continue;
		*p = img + sh.sh_offset;
		*n = sh.sh_size;
		*addr = sh.sh_addr;
		return 0;
	}
	return -1;
}

int gopcln_open(struct gopcln *g, const uint8_t *img, size_t size)
{
	const uint8_t *p;
	size_t n;
	memset(g, 0, sizeof *g);
	if (section(img, size, &p, &n, &g->addr) < 0 || n < 8 + 8 * 8)
		return -1;
	g->img = img;
	g->size = size;
	g->p = p;
	g->end = p + n;
	uint32_t magic = u32(p);
	if ((magic != 0xfffffff0u && magic != 0xfffffff1u) || p[4] || p[5] || p[7] != 8 ||
	    (p[6] != 1 && p[6] != 2 && p[6] != 4))
		return -1;
	g->version = magic == 0xfffffff0u ? 118 : 120;
	g->quantum = p[6];
	g->nfunc = u64(p + 8);
	g->text = u64(p + 24);
	uint64_t names = u64(p + 32), cu = u64(p + 40), files = u64(p + 48);
	uint64_t pctab = u64(p + 56), functab = u64(p + 64);
	/* functab: nfunc + 1 entries of 8 bytes, within the section. */
	if (names >= n || pctab >= n || functab >= n || g->nfunc == 0 ||
	    g->nfunc >= (n - functab) / 8)
		return -1;
	g->names = p + names;
	g->cutab = cu < n ? p + cu : NULL;
	g->filetab = files < n ? p + files : NULL;
	g->pctab = p + pctab;
	g->functab = p + functab;
	return 0;
}

/* The name at off in funcnametab, NUL-terminated in the table; "" if not. */
static const char *name_at(const struct gopcln *g, int32_t off)
{
	const uint8_t *s = g->names + off;
	return off >= 0 && in(g, s, 1) && memchr(s, 0, (size_t)(g->end - s)) ? (const char *)s
									       : "";
}

/* Function i of functab (i < nfunc): 0, or -1 when its record is bad. */
int gopcln_at(const struct gopcln *g, uint64_t i, struct gofunc *f)
{
	if (!g->p || i >= g->nfunc)
		return -1;
	const uint8_t *fn = g->functab + u32(g->functab + 8 * i + 4);
	if (!in(g, fn, 40))
		return -1;
	f->raw = fn;
	f->entry = g->text + u32(fn);
	f->end = g->text + u32(g->functab + 8 * i + 8);
	f->pcsp = u32(fn + 16);
	f->name = name_at(g, (int32_t)u32(fn + 4));
	return f->end > f->entry ? 0 : -1;
}

int gopcln_find(const struct gopcln *g, uint64_t vaddr, struct gofunc *f)
{
	if (!g->p || vaddr < g->text || vaddr - g->text > UINT32_MAX)
		return -1;
	uint32_t off = (uint32_t)(vaddr - g->text);
	uint64_t lo = 0, hi = g->nfunc;         /* functab[nfunc] ends the text */
	if (off >= u32(g->functab + 8 * g->nfunc))
		return -1;
	while (hi - lo > 1) {
		uint64_t mid = (lo + hi) / 2;
		if (u32(g->functab + 8 * mid) <= off)
			lo = mid;
		else
			hi = mid;
	}
	if (u32(g->functab + 8 * lo) > off)
		return -1;
	return gopcln_at(g, lo, f);
}

/*
 * The value of the pc-value table at off (in pctab) for vaddr in f: the
 * runtime's pcvalue (its values start at -1, each step a zig-zag delta and
 * a pc delta in quanta).  0, or -1 past the table or not covering vaddr.
 */
static int pcvalue(const struct gopcln *g, const struct gofunc *f, uint32_t off,
		   uint64_t vaddr, int32_t *v)
{
	struct probe_rd r = { .p = g->pctab + off, .end = g->end };
	uint64_t pc = f->entry;
	int32_t val = -1;
	if (!off || vaddr < f->entry || vaddr >= f->end || !in(g, r.p, 1))
		return -1;
	for (int first = 1; ; first = 0) {
		uint64_t uv = probe_rd_uleb(&r), pcd = probe_rd_uleb(&r);
		if (r.bad || uv > UINT32_MAX || pcd > UINT32_MAX || (uv == 0 && !first))
			return -1;
		val += (int32_t)(-((uint32_t)uv & 1) ^ ((uint32_t)uv >> 1));
		pc += (uint64_t)pcd * g->quantum;
		if (vaddr < pc) {
			*v = val;
			return 0;
		}
		if (pc >= f->end)
			return -1;
	}
}

int gopcln_sp(const struct gopcln *g, const struct gofunc *f, uint64_t vaddr, int32_t *sp)
{
	return pcvalue(g, f, f->pcsp, vaddr, sp) == 0 && *sp >= 0 ? 0 : -1;
}

int gopcln_outermost(const struct gofunc *f)
{
	static const char *const top[] = { "runtime.goexit", "runtime.mstart",
					   "runtime.rt0_go", "runtime.morestack" };
	for (size_t i = 0; i < sizeof top / sizeof top[0]; i++) {
		size_t n = strlen(top[i]);
		if (!strncmp(f->name, top[i], n) && (!f->name[n] || f->name[n] == '.'))
			return 1;
	}
	return 0;
}

/* ---- inlined calls: FUNCDATA_InlTree, PCDATA_InlTreeIndex ---------------- */

#define PCDATA_INLTREE 2
#define FUNCDATA_INLTREE 3
#define MODULEDATA_WORDS 41     /* up to gofunc, Go 1.20 on */

/* _func's fixed part: Go 1.20 added startLine (runtime2.go). */
static size_t func_hdr(const struct gopcln *g)
{
	return g->version >= 120 ? 44 : 40;
}

/* n bytes at file address va, within a PT_LOAD's file part; NULL if not. */
static const uint8_t *at_vaddr(const struct gopcln *g, uint64_t va, size_t n)
{
	Elf64_Ehdr eh;
	memcpy(&eh, g->img, sizeof eh);
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > g->size ||
	    eh.e_phnum > (g->size - eh.e_phoff) / sizeof(Elf64_Phdr))
		return NULL;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, g->img + eh.e_phoff + (size_t)i * sizeof ph, sizeof ph);
		if (ph.p_type != PT_LOAD || va < ph.p_vaddr || va - ph.p_vaddr > ph.p_filesz ||
		    ph.p_filesz - (va - ph.p_vaddr) < n || ph.p_offset > g->size ||
		    ph.p_filesz > g->size - ph.p_offset)
			continue;
		return g->img + ph.p_offset + (va - ph.p_vaddr);
	}
	return NULL;
}

/*
 * moduledata.gofunc, the base of funcdata's offsets: moduledata is not in
 * .gopclntab, but in the writable data, found as the word that holds the
 * pcHeader's address, followed by funcnametab's and, 22 words on, text
 * equal to textStart (runtime/symtab.go's layout; gofunc is word 38, or
 * 40 from Go 1.20, which added covctrs).  A PIE binary's words are
 * relocated at load time (0 in the file): none found, no inline frames.
 */
static void find_gofunc(struct gopcln *g)
{
	Elf64_Ehdr eh;
	g->gofunc_tried = 1;
	memcpy(&eh, g->img, sizeof eh);
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > g->size ||
	    eh.e_phnum > (g->size - eh.e_phoff) / sizeof(Elf64_Phdr))
		return;
	uint64_t names = g->addr + (uint64_t)(g->names - g->p);
	unsigned at = g->version >= 120 ? 40 : 38;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, g->img + eh.e_phoff + (size_t)i * sizeof ph, sizeof ph);
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_W) || ph.p_offset > g->size ||
		    ph.p_filesz > g->size - ph.p_offset || ph.p_filesz < 8 * MODULEDATA_WORDS)
			continue;
		const uint8_t *q = g->img + ph.p_offset, *end = q + ph.p_filesz - 8 * MODULEDATA_WORDS;
		for (; q <= end; q += 8)
			if (u64(q) == g->addr && u64(q + 8) == names && u64(q + 8 * 22) == g->text) {
				g->gofunc = u64(q + 8 * at);
				return;
			}
	}
}

/* pcdata table i's value at pc in f: 0, or -1 (none). */
static int pcdata(const struct gopcln *g, const struct gofunc *f, uint32_t i, uint64_t pc,
		  int32_t *v)
{
	size_t hdr = func_hdr(g);
	if (!in(g, f->raw, hdr) || i >= u32(f->raw + 28) || !in(g, f->raw + hdr + 4 * i, 4))
		return -1;
	return pcvalue(g, f, u32(f->raw + hdr + 4 * i), pc, v);
}

/* f's inline tree, NULL when it has none (or gofunc is not known). */
static uint64_t inltree(struct gopcln *g, const struct gofunc *f)
{
	size_t hdr = func_hdr(g);
	if (!in(g, f->raw, hdr))
		return 0;
	uint32_t npc = u32(f->raw + 28), nfd = f->raw[hdr - 1];
	const uint8_t *fd = f->raw + hdr + 4 * (size_t)npc + 4 * FUNCDATA_INLTREE;
	if (FUNCDATA_INLTREE >= nfd || npc > 1024 || !in(g, fd, 4) || u32(fd) == UINT32_MAX)
		return 0;
	if (!g->gofunc_tried)
		find_gofunc(g);
	return g->gofunc ? g->gofunc + u32(fd) : 0;
}

/* The source position at pc in f (its pcfile and pcln tables, cutab). */
static void position(const struct gopcln *g, const struct gofunc *f, uint64_t pc,
		     struct gopcln_frame *fr)
{
	int32_t line, file;
	fr->line = pcvalue(g, f, u32(f->raw + 24), pc, &line) == 0 && line > 0 ?
		   (unsigned)line : 0;
	fr->file = NULL;
	if (!g->cutab || !g->filetab || pcvalue(g, f, u32(f->raw + 20), pc, &file) < 0 ||
	    file < 0)
		return;
	const uint8_t *cu = g->cutab + 4 * ((uint64_t)u32(f->raw + 32) + (uint32_t)file);
	if (!in(g, cu, 4))
		return;
	const uint8_t *s = g->filetab + u32(cu);
	if (in(g, s, 1) && memchr(s, 0, (size_t)(g->end - s)))
		fr->file = (const char *)s;
}

size_t gopcln_frames(struct gopcln *g, uint64_t vaddr, struct gopcln_frame *out, size_t max)
{
	struct gofunc f;
	if (max == 0 || gopcln_find(g, vaddr, &f) < 0)
		return 0;
	uint64_t tree = inltree(g, &f), pc = vaddr;
	size_t k = 0, csize = g->version >= 120 ? 16 : 20;
	int32_t ix;
	/* Innermost first: each inlined call at pc, then its call site's. */
	while (tree && k + 1 < max && pcdata(g, &f, PCDATA_INLTREE, pc, &ix) == 0 && ix >= 0) {
		const uint8_t *c = at_vaddr(g, tree + (uint64_t)ix * csize, csize);
		if (!c)
			break;
		int32_t name = (int32_t)u32(c + (g->version >= 120 ? 4 : 12));
		int32_t parent = (int32_t)u32(c + (g->version >= 120 ? 8 : 16));
		out[k].name = name_at(g, name);
		out[k].inlined = 1;
		position(g, &f, pc, &out[k]);
		if (!out[k].name[0] || parent < 0 || (uint64_t)parent >= f.end - f.entry)
			break;
		k++;
		pc = f.entry + (uint64_t)parent;
	}
	out[k].name = f.name;
	out[k].inlined = 0;
	position(g, &f, pc, &out[k]);
	return k + 1;
}
