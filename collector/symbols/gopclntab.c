/*
 * gopclntab.c - reading Go's function table: gopclntab.h says what.
 * The layout is the runtime's (runtime/symtab.go, cmd/link's pcln.go):
 * a pcHeader, the function names, the pc-value tables, then functab:
 * nfunc + 1 pairs (entry offset from textStart, _func offset from
 * functab), sorted, the last one the end of the text.
 */
#include "gopclntab.h"

#include <elf.h>
#include <string.h>

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
static int section(const uint8_t *img, size_t size, const uint8_t **p, size_t *n)
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
		return 0;
	}
	return -1;
}

int gopcln_open(struct gopcln *g, const uint8_t *img, size_t size)
{
	const uint8_t *p;
	size_t n;
	memset(g, 0, sizeof *g);
	if (section(img, size, &p, &n) < 0 || n < 8 + 8 * 8)
		return -1;
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
	uint64_t names = u64(p + 32), pctab = u64(p + 56), functab = u64(p + 64);
	/* functab: nfunc + 1 entries of 8 bytes, within the section. */
	if (names >= n || pctab >= n || functab >= n || g->nfunc == 0 ||
	    g->nfunc >= (n - functab) / 8)
		return -1;
	g->names = p + names;
	g->pctab = p + pctab;
	g->functab = p + functab;
	return 0;
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
	int32_t name;
	memcpy(&name, fn + 4, 4);
	const uint8_t *s = g->names + name;
	f->name = name >= 0 && in(g, s, 1) && memchr(s, 0, (size_t)(g->end - s))
		  ? (const char *)s : "";
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

/* A varint of the pc-value tables: 0, or -1 past the table. */
static int varint(const struct gopcln *g, const uint8_t **q, uint32_t *v)
{
	uint32_t r = 0;
	for (unsigned shift = 0; shift < 35; shift += 7) {
		if (!in(g, *q, 1))
			return -1;
		uint8_t b = *(*q)++;
		r |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -1;
}

int gopcln_sp(const struct gopcln *g, const struct gofunc *f, uint64_t vaddr, int32_t *sp)
{
	const uint8_t *q = g->pctab + f->pcsp;
	uint64_t pc = f->entry;
	int32_t val = -1;
	if (!f->pcsp || vaddr < f->entry || vaddr >= f->end)
		return -1;
	for (int first = 1; ; first = 0) {
		uint32_t uv, pcd;
		if (varint(g, &q, &uv) < 0 || (uv == 0 && !first) || varint(g, &q, &pcd) < 0)
			return -1;
		val += (int32_t)(-(uv & 1) ^ (uv >> 1));
		pc += (uint64_t)pcd * g->quantum;
		if (vaddr < pc) {
			*sp = val;
			return val >= 0 ? 0 : -1;
		}
		if (pc >= f->end)
			return -1;
	}
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
