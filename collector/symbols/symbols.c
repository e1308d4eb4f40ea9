/*
 * symbols.c - symbols.h's cache of objects, each loaded once: its function
 * symbols (.symtab, a debug file's, .dynsym with MiniDebugInfo, or Go's
 * .gopclntab), PLT stubs and .eh_frame ranges, and the lookup by address.
 * Debug files are found in debugfile.c; DWARF's inline frames and lines
 * are read in dwarf_lines.c; symobj.h is what the three share.
 */
#include "symbols/symobj.h"
#include "symbols/gopclntab.h"
#include "symbols/kallsyms.h"
#include "symbols/ehframe.h"
#include "interval.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hashtab.h"
#include "util.h"
struct symcache *symcache_new(void)
{
	struct symcache *c = xcalloc(1, sizeof(*c));
	c->elf_ready = elf_version(EV_CURRENT) != EV_NONE;
	/* For tests: where separate debug files live (default /usr/lib/debug). */
	const char *root = getenv("PROBE_DEBUG_ROOT");
	c->debug_root = root && root[0] == '/' ? root : "/usr/lib/debug";
	return c;
}

static void obj_free(struct symobj *o)
{
	for (size_t i = 0; i < o->narena; i++)
		free(o->arena[i]);
	free(o->arena);
	free(o->syms);
	free(o->maxend);
	free(o->fdes);
	free(o->key);
	free(o->dw_path);
	strpool_free(o->paths);
	if (o->dw)
		dwarf_end(o->dw);
	free(o->gp);
	if (o->dw_elf)
		elf_end(o->dw_elf);
	if (o->dw_fd >= 0)
		close(o->dw_fd);
	free(o->cus);
	free(o->cu_maxend);
	for (size_t i = 0; i < o->nunits; i++) {
		free(o->units[i].ents);
		free(o->units[i].maxend);
	}
	free(o->units);
	free(o->raddrs);
	free(o->rsrcs);
	free(o);
}

void symcache_free(struct symcache *c)
{
	if (!c)
		return;
	free(c->recs);
	struct symobj *o, *t;
	HASH_ITER(hh, c->objs, o, t) {
		HASH_DEL(c->objs, o);
		obj_free(o);
	}
	kallsyms_free(c->ksyms);
	free(c);
}

const struct kallsyms *symcache_kallsyms(struct symcache *c)
{
	if (!c->ksyms_tried) {
		const char *p = getenv("PROBE_KALLSYMS");
		c->ksyms_tried = 1;
		c->ksyms = kallsyms_load(p && *p ? p : "/proc/kallsyms");
	}
	return c->ksyms;
}

#define ARENA_BLOCK 65536

/* Names are copied in blocks: one malloc per name is slow for big tables. */
static const char *arena_add(struct symobj *o, const char *s, size_t n, const char *suffix)
{
	size_t sl = suffix ? strlen(suffix) : 0;
	size_t total = n + sl + 1;
	if (total > o->cur_left) {
		size_t bs = total > ARENA_BLOCK ? total : ARENA_BLOCK;
		o->arena = xgrow(o->arena, &o->arena_cap, o->narena + 1, sizeof(*o->arena));
		o->cur = o->arena[o->narena++] = xmalloc(bs);
		o->cur_left = bs;
	}
	char *d = o->cur;
	memcpy(d, s, n);
	if (sl)
		memcpy(d + n, suffix, sl);
	d[n + sl] = '\0';
	o->cur += total;
	o->cur_left -= total;
	return d;
}

static const char *arena_dup(struct symobj *o, const char *s)
{
	/* "memcpy@@GLIBC_2.14" (a versioned alias in .symtab) is memcpy. */
	size_t n = strcspn(s, "@");
	if (n == 0)
		n = strlen(s);
	return arena_add(o, s, n, NULL);
}

const char *sym_arena_dup(struct symobj *o, const char *s, size_t n)
{
	return arena_add(o, s, n, NULL);
}

static void add_sym(struct symobj *o, uint64_t addr, uint64_t size, const char *name,
		    unsigned bind)
{
	o->syms = xgrow(o->syms, &o->cap, o->nsyms + 1, sizeof(*o->syms));
	struct sym *y = &o->syms[o->nsyms++];
	y->addr = addr;
	y->end = addr + size;
	y->name = name;
	y->idx = o->next_idx++;
	y->weak = bind == STB_WEAK;
	y->global = bind == STB_GLOBAL;
	y->sized = size != 0;
}

void sym_add(struct symobj *o, uint64_t addr, uint64_t size, const char *name)
{
	add_sym(o, addr, size, name, STB_GLOBAL);
}

static int has_gopclntab(Elf *e)
{
	size_t size = 0;
	const char *img = elf_rawfile(e, &size);
	struct gopcln g;
	return img && gopcln_open(&g, (const uint8_t *)img, size) == 0;
}

/* The functions of a Go binary's .gopclntab (gopclntab.h); how many. */
static size_t read_gopclntab(struct symobj *o, Elf *e)
{
	size_t size = 0, n = 0;
	const char *img = elf_rawfile(e, &size);
	struct gopcln g;
	struct gofunc f;
	if (!img || gopcln_open(&g, (const uint8_t *)img, size) < 0)
		return 0;
	for (uint64_t i = 0; i < g.nfunc; i++)
		if (gopcln_at(&g, i, &f) == 0 && f.name[0]) {
			add_sym(o, f.entry, f.end - f.entry, arena_dup(o, f.name), STB_GLOBAL);
			n++;
		}
	return n;
}

/* Function symbols of every section of this type; returns how many. */
/*
 * The largest symbol table we read: 1 GiB, 44 million symbols (libxul's has
 * under a million).  A larger one is a forged or damaged file (a sparse
 * .symtab of 384 GiB took 72 s and 22 GB before libelf crashed on it).
 */
#define SYMTAB_MAX (1ull << 30)

size_t sym_read_table(struct symobj *o, Elf *e, unsigned type)
{
	size_t before = o->nsyms;
	Elf_Scn *scn = NULL;
	size_t symsize = gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
	if (!symsize)
		return 0;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type)
			continue;
		if (sh.sh_size > SYMTAB_MAX) {
			probe_warn("%s: its %s is %llu bytes, more than any real one (a "
				   "damaged or forged file?); not read", o->loading ?
				   o->loading : "an object", type == SHT_SYMTAB ? ".symtab" :
				   ".dynsym", (unsigned long long)sh.sh_size);
			continue;
		}
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		size_t n = d->d_size / symsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)i, &s))
				break;
			unsigned t = GELF_ST_TYPE(s.st_info);
			if ((t != STT_FUNC && t != STT_GNU_IFUNC) ||
			    s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE ||
			    s.st_value + s.st_size < s.st_value)
				continue;
			const char *name = elf_strptr(e, sh.sh_link, s.st_name);
			if (!name || !*name)
				continue;
			uint64_t size = s.st_size;
			if (size == 0) {
				/*
				 * No size (hand-written assembly): perf extends it to
				 * the next symbol; we do too (finish_table), but never
				 * past the end of its section.
				 */
				Elf_Scn *ss = elf_getscn(e, s.st_shndx);
				GElf_Shdr ssh;
				if (!ss || !gelf_getshdr(ss, &ssh) || s.st_value < ssh.sh_addr ||
				    s.st_value >= ssh.sh_addr + ssh.sh_size)
					continue;
				size = ssh.sh_addr + ssh.sh_size - s.st_value;
				add_sym(o, s.st_value, size, arena_dup(o, name), GELF_ST_BIND(s.st_info));
				o->syms[o->nsyms - 1].sized = 0;
				continue;
			}
			add_sym(o, s.st_value, size, arena_dup(o, name), GELF_ST_BIND(s.st_info));
		}
	}
	return o->nsyms - before;
}

Elf_Scn *sym_find_section(Elf *e, const char *want, GElf_Shdr *out)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return NULL;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *name = elf_strptr(e, shstrndx, sh.sh_name);
		if (name && strcmp(name, want) == 0) {
			if (out)
				*out = sh;
			return scn;
		}
	}
	return NULL;
}

/*
 * PLT entries as "name@plt", as perf and objdump name them (x86-64: 16-byte
 * entries, in .plt.sec when the object has one, else in .plt after its
 * first, resolver entry).  Which relocation an entry is for is read from
 * the entry, not assumed from the order of .rela.plt: a lazy .plt entry
 * pushes its relocation's index (push imm32 after its jmp, or after an
 * endbr64 with IBT), and the ith .plt.sec entry is the ith .plt entry's.
 * The orders differ where IRELATIVE slots come first (libc.so.6: its first
 * entry is for relocation 52), and by order libc's entries were named after
 * the wrong functions.  An IRELATIVE slot (an ifunc's) is named after the
 * symbol at its addend (the ifunc: __rawmemchr@plt), where objdump's *ABS*+ADDR
 * names it by address.
 */
#define PLT_ENTRY 16

/* Entry i's relocation index from the lazy .plt, or i when it says none. */
static size_t plt_reloc(const Elf_Data *plt, uint64_t off)
{
	const uint8_t *b = (const uint8_t *)plt->d_buf + off;
	size_t at;
	if (off + PLT_ENTRY > plt->d_size)
		return SIZE_MAX;
	if (b[0] == 0xff && b[1] == 0x25 && b[6] == 0x68)
		at = 7;                 /* jmp *GOT(%rip); push imm32 */
	else if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa && b[4] == 0x68)
		at = 5;                 /* endbr64; push imm32 */
	else
		return SIZE_MAX;
	return (size_t)b[at] | (size_t)b[at + 1] << 8 | (size_t)b[at + 2] << 16 |
	       (size_t)b[at + 3] << 24;
}

static int underscores(const char *n)
{
	int k = 0;
	while (n[k] == '_')
		k++;
	return k;
}

/* The name of the symbol read at addr, perf's choice among aliases; NULL: none. */
static const char *name_at(const struct symobj *o, uint64_t addr)
{
	const struct sym *best = NULL;
	for (size_t i = 0; i < o->nsyms; i++) {
		const struct sym *y = &o->syms[i];
		if (y->addr != addr)
			continue;
		int d = !best ? -1 : best->weak != y->weak ? (y->weak ? 1 : -1) :
			best->global != y->global ? (y->global ? -1 : 1) :
			underscores(y->name) - underscores(best->name);
		if (d < 0)
			best = y;
	}
	return best ? best->name : NULL;
}

static void read_plt(struct symobj *o, Elf *e)
{
	GElf_Ehdr eh;
	if (!gelf_getehdr(e, &eh) || eh.e_machine != EM_X86_64)
		return;
	GElf_Shdr rsh, lsh, psh, dsh;
	Elf_Scn *rscn = sym_find_section(e, ".rela.plt", &rsh);
	Elf_Scn *lscn = sym_find_section(e, ".plt", &lsh);
	if (!rscn || rsh.sh_type != SHT_RELA || rsh.sh_entsize == 0 || !lscn ||
	    lsh.sh_type != SHT_PROGBITS)
		return;
	/* The entries named: .plt.sec's, else .plt's after its first. */
	uint64_t first = lsh.sh_addr + PLT_ENTRY, end = lsh.sh_addr + lsh.sh_size;
	if (sym_find_section(e, ".plt.sec", &psh) && psh.sh_type == SHT_PROGBITS) {
		first = psh.sh_addr;
		end = psh.sh_addr + psh.sh_size;
	}
	Elf_Scn *dscn = elf_getscn(e, rsh.sh_link);
	if (!dscn || !gelf_getshdr(dscn, &dsh))
		return;
	Elf_Data *rd = elf_getdata(rscn, NULL), *dd = elf_getdata(dscn, NULL);
	Elf_Data *ld = elf_getdata(lscn, NULL);
	if (!rd || !dd || !ld || !rd->d_buf || !dd->d_buf || !ld->d_buf)
		return;
	size_t n = rd->d_size / rsh.sh_entsize;
	for (size_t i = 0; i < n; i++) {
		uint64_t at = first + PLT_ENTRY * i;
		if (at + PLT_ENTRY > end)
			break;
		size_t ri = plt_reloc(ld, PLT_ENTRY * (i + 1));
		GElf_Rela r;
		GElf_Sym s;
		if (!gelf_getrela(rd, (int)(ri < n ? ri : i), &r))
			continue;
		const char *name = NULL;
		size_t si = GELF_R_SYM(r.r_info);
		if (GELF_R_TYPE(r.r_info) == R_X86_64_IRELATIVE)
			name = name_at(o, (uint64_t)r.r_addend);
		else if (si != 0 && gelf_getsym(dd, (int)si, &s))
			name = elf_strptr(e, dsh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		size_t nl = strcspn(name, "@");
		add_sym(o, at, PLT_ENTRY, arena_add(o, name, nl ? nl : strlen(name), "@plt"),
			STB_GLOBAL);
	}
}

/*
 * Among aliases at one address, perf's choice (choose_best_symbol): one with
 * a size, then not WEAK, then GLOBAL, then fewer leading underscores, then the
 * longer name, then the one read first.
 */

static int cmp_sym(const void *x, const void *y)
{
	const struct sym *a = x, *b = y;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->sized != b->sized)
		return a->sized ? -1 : 1;
	if (a->weak != b->weak)
		return a->weak ? 1 : -1;
	if (a->global != b->global)
		return a->global ? -1 : 1;
	int ua = underscores(a->name), ub = underscores(b->name);
	if (ua != ub)
		return ua - ub;
	size_t la = strlen(a->name), lb = strlen(b->name);
	if (la != lb)
		return la > lb ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static void finish_table(struct symobj *o)
{
	if (!o->nsyms)
		return;
	qsort(o->syms, o->nsyms, sizeof(*o->syms), cmp_sym);
	/* One symbol per address: the best-ranked sorts first. */
	size_t w = 0;
	for (size_t r = 0; r < o->nsyms; r++)
		if (w == 0 || o->syms[w - 1].addr != o->syms[r].addr)
			o->syms[w++] = o->syms[r];
	o->nsyms = w;
	/* A symbol without a size ends where the next one starts. */
	for (size_t i = 0; i + 1 < o->nsyms; i++)
		if (!o->syms[i].sized && o->syms[i].end > o->syms[i + 1].addr)
			o->syms[i].end = o->syms[i + 1].addr;
	o->maxend = xmalloc(o->nsyms * sizeof(*o->maxend));
	interval_maxend(o->syms, o->nsyms, sizeof(*o->syms),
			offsetof(struct sym, end), o->maxend);
}

/*
 * The largest .eh_frame we read: 256 MiB (the biggest real ones, browsers',
 * are tens of MiB).  A larger one is a forged or damaged file.
 */
#define EHFRAME_MAX (256ull << 20)

/*
 * Without section headers (sstrip): .eh_frame through PT_GNU_EH_FRAME (the
 * .eh_frame_hdr, whose first pointer is .eh_frame's address), read from
 * the file's bytes, to the end of the segment holding it at most.
 */
static void fdes_by_phdrs(struct symobj *o, Elf *e, unsigned ptrsize)
{
	size_t nph, fsize = 0;
	const uint8_t *file = (const uint8_t *)elf_rawfile(e, &fsize);
	if (!file || elf_getphdrnum(e, &nph) != 0 || nph > 65535)
		return;
	GElf_Phdr hp = { .p_type = PT_NULL }, ph;
	for (size_t i = 0; i < nph; i++)
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_GNU_EH_FRAME)
			hp = ph;
	if (hp.p_type != PT_GNU_EH_FRAME || hp.p_offset > fsize ||
	    hp.p_filesz > fsize - hp.p_offset)
		return;
	uint64_t at;
	if (!ehframe_hdr_target(file + hp.p_offset, hp.p_filesz, hp.p_vaddr, ptrsize, &at))
		return;
	for (size_t i = 0; i < nph; i++) {
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    at < ph.p_vaddr || at - ph.p_vaddr >= ph.p_filesz ||
		    ph.p_offset > fsize || ph.p_filesz > fsize - ph.p_offset)
			continue;
		uint64_t off = ph.p_offset + (at - ph.p_vaddr);
		uint64_t len = ph.p_filesz - (at - ph.p_vaddr);
		if (len > EHFRAME_MAX)
			len = EHFRAME_MAX;
		o->nfdes = ehframe_ranges(file + off, len, at, ptrsize, &o->fdes);
		if (o->nfdes)
			o->sources |= SYMSRC_EHFRAME;
		return;
	}
}

/* The function ranges of .eh_frame (ehframe.h), for code no symbol names. */
static void read_fdes(struct symobj *o, Elf *e)
{
	GElf_Ehdr eh;
	GElf_Shdr sh;
	if (o->fdes || !gelf_getehdr(e, &eh) || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_type == ET_REL)
		return;
	unsigned ptrsize = eh.e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	Elf_Scn *scn = sym_find_section(e, ".eh_frame", &sh);
	size_t nsh;
	if (!scn && elf_getshdrnum(e, &nsh) == 0 && nsh == 0) {
		fdes_by_phdrs(o, e, ptrsize);   /* no section headers at all */
		return;
	}
	if (!scn)
		return;
	/* gold types it SHT_X86_64_UNWIND, ld.bfd SHT_PROGBITS. */
	if ((sh.sh_type != SHT_PROGBITS && sh.sh_type != SHT_X86_64_UNWIND) || sh.sh_size == 0)
		return;
	if (sh.sh_size > EHFRAME_MAX) {
		probe_warn("%s: its .eh_frame is %llu bytes, more than any real one (a "
			   "damaged or forged file?); not read", o->loading ? o->loading :
			   "an object", (unsigned long long)sh.sh_size);
		return;
	}
	Elf_Data *d = elf_rawdata(scn, NULL);
	if (!d || !d->d_buf || d->d_size == 0)
		return;
	o->nfdes = ehframe_ranges(d->d_buf, d->d_size, sh.sh_addr, ptrsize, &o->fdes);
	if (o->nfdes)
		o->sources |= SYMSRC_EHFRAME;
}

static int has_debug_info(Elf *e)
{
	GElf_Shdr sh;
	Elf_Scn *s = sym_find_section(e, ".debug_info", &sh);
	if (s && sh.sh_type != SHT_NOBITS && sh.sh_size > 0)
		return 1;
	s = sym_find_section(e, ".zdebug_info", &sh);
	return s && sh.sh_type != SHT_NOBITS && sh.sh_size > 0;
}

/*
 * Check the build-id and read the symbols of one ELF image (path: where it
 * is, for finding separate debug files).  -1 when it is not an ELF file, -2
 * when its build-id is not the recorded one (nothing read).
 */
static int load_elf(struct symcache *c, struct symobj *o, Elf *e, const char *path,
		    const uint8_t *bid, size_t bidlen)
{
	if (elf_kind(e) != ELF_K_ELF)
		return -1;
	const void *dbid = NULL;
	ssize_t n = dwelf_elf_gnu_build_id(e, &dbid);
	if (bidlen > 0 && (n != (ssize_t)bidlen || memcmp(dbid, bid, bidlen) != 0))
		return -2;
	const uint8_t *use_bid = bid;
	size_t use_len = bidlen;
	if (use_len == 0 && n > 0) {
		use_bid = dbid;
		use_len = (size_t)n;
	}
	int dfd = -1;
	Elf *de = NULL;
	char *dpath = sym_find_separate_debug(c, e, path, use_bid, use_len, &dfd, &de);
	if (sym_read_table(o, e, SHT_SYMTAB)) {
		o->sources |= SYMSRC_SYMTAB;
	} else if (de && sym_read_table(o, de, SHT_SYMTAB)) {
		o->sources |= SYMSRC_DEBUGFILE;
	} else {
		/* .dynsym, plus MiniDebugInfo: it holds only what .dynsym lacks. */
		if (sym_read_table(o, e, SHT_DYNSYM))
			o->sources |= SYMSRC_DYNSYM;
		sym_read_minidebuginfo(o, e);
		/* A stripped Go binary still has its own table (the runtime's). */
		if (!o->nsyms && read_gopclntab(o, e))
			o->sources |= SYMSRC_GOPCLN;
	}
	read_plt(o, e);
	read_fdes(o, e);
	/* DWARF: in the file itself, else in its debug file; else Go's table. */
	if (has_debug_info(e))
		o->dw_path = xstrdup(path);
	else if (de && has_debug_info(de))
		o->dw_path = xstrdup(dpath);
	else if (has_gopclntab(e))
		o->dw_path = xstrdup(path), o->go = 1;
	if (use_len <= sizeof(o->dw_bid)) {
		memcpy(o->dw_bid, use_bid, use_len);
		o->dw_bidlen = use_len;
	}
	if (de)
		elf_end(de);
	if (dfd >= 0)
		close(dfd);
	free(dpath);
	return 0;
}

/* The collector's own vDSO: the same kernel made the recording's, probably. */
static void load_vdso(struct symobj *o, const uint8_t *bid, size_t bidlen)
{
	const uint8_t *image;
	size_t len;
	if (own_vdso(&image, &len) < 0)
		return;
	Elf *e = elf_memory((char *)(uintptr_t)image, len);
	if (!e)
		return;
	const void *dbid = NULL;
	ssize_t n = dwelf_elf_gnu_build_id(e, &dbid);
	/* Silently nameless if it is another kernel's: nothing to fix. */
	if (elf_kind(e) == ELF_K_ELF &&
	    (bidlen == 0 || (n == (ssize_t)bidlen && memcmp(dbid, bid, bidlen) == 0))) {
		if (sym_read_table(o, e, SHT_SYMTAB))
			o->sources |= SYMSRC_SYMTAB;
		else if (sym_read_table(o, e, SHT_DYNSYM))
			o->sources |= SYMSRC_DYNSYM;
		read_fdes(o, e);
	}
	elf_end(e);
}

static void load(struct symcache *c, struct symobj *o, const char *path,
		 const uint8_t *bid, size_t bidlen)
{
	if (!c->elf_ready)
		return;
	o->loading = path;
	if (strcmp(path, "[vdso]") == 0) {
		load_vdso(o, bid, bidlen);
		return;
	}
	if (path[0] != '/')
		return;         /* anonymous or special: no file to read */
	char *p = printable_dup(path);
	char *why = NULL;
	int fd = open_regular(path);
	if (fd < 0) {
		why = xasprintf("cannot read %s (%s)", p,
				errno == EINVAL ? "not a regular file" : strerror(errno));
	} else {
		Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		int r = e ? load_elf(c, o, e, path, bid, bidlen) : -1;
		if (r == -1)
			why = xasprintf("%s is not an ELF file", p);
		else if (r == -2)
			why = xasprintf("%s changed since the recording (its build-id differs)", p);
		if (e)
			elf_end(e);
		close(fd);
	}
	if (!why) {
		free(p);
		return;
	}
	/*
	 * The file that ran is gone: one with its build-id may be elsewhere
	 * (its debug file, with the lines a recording does not carry for
	 * it), else the recording may name what was sampled.
	 */
	int afd = -1;
	Elf *ae = NULL;
	char *alt = sym_find_by_build_id(c, bid, bidlen, &afd, &ae);
	if (alt && load_elf(c, o, ae, alt, bid, bidlen) == 0 && o->nsyms) {
		char *pa = printable_dup(alt);
		probe_warn("%s; names from %s, which has the recorded build-id", why, pa);
		free(pa);
		o->sources |= SYMSRC_BYBUILDID;
	} else if (symrec_fill(c, o, bid, bidlen)) {
		probe_info("%s; its sampled functions are named from the recording", why);
		o->sources |= SYMSRC_RECORDED;
	} else {
		probe_warn("%s; its addresses are shown as %s+0xOFFSET", why, path_basename(p));
		o->sources |= SYMSRC_MISMATCH;
	}
	if (ae)
		elf_end(ae);
	if (afd >= 0)
		close(afd);
	free(alt);
	free(why);
	free(p);
}

/* The cached object under key, or a new one loaded from path. */
static struct symobj *get_keyed(struct symcache *c, unsigned char *key, size_t kl,
				const char *path, const uint8_t *build_id,
				size_t build_id_len)
{
	struct symobj *o;
	HASH_FIND(hh, c->objs, key, kl, o);
	if (o) {
		free(key);
		return o;
	}
	o = xcalloc(1, sizeof(*o));
	o->key = key;
	o->keylen = kl;
	o->dw_fd = -1;
	load(c, o, path, build_id, build_id_len);
	o->loading = NULL;
	finish_table(o);
	HASH_ADD_KEYPTR(hh, c->objs, o->key, o->keylen, o);
	return o;
}

/*
 * One object per file, not per name: a library named a thousand ways
 * (/usr/lib/./x.so, symbolic links...) is read once.  Its identity is its
 * build-id, or without one its device and inode; the name only when it
 * cannot be looked at.  A build-id whose first name gave no names (its file
 * is gone or changed) is tried again under each other name, by that name.
 */
struct symobj *symcache_get(struct symcache *c, const char *path,
			    const uint8_t *build_id, size_t build_id_len)
{
	struct stat st;
	if (build_id_len > 255)
		build_id_len = 255;
	if (build_id_len) {
		unsigned char *key = xmalloc(2 + build_id_len);
		key[0] = 'B';
		key[1] = (unsigned char)build_id_len;
		memcpy(key + 2, build_id, build_id_len);
		struct symobj *o = get_keyed(c, key, 2 + build_id_len, path, build_id,
					     build_id_len);
		if (!(o->sources & SYMSRC_MISMATCH))
			return o;
	} else if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		unsigned char *key = xmalloc(1 + sizeof(st.st_dev) + sizeof(st.st_ino));
		key[0] = 'I';
		memcpy(key + 1, &st.st_dev, sizeof(st.st_dev));
		memcpy(key + 1 + sizeof(st.st_dev), &st.st_ino, sizeof(st.st_ino));
		return get_keyed(c, key, 1 + sizeof(st.st_dev) + sizeof(st.st_ino), path,
				 build_id, build_id_len);
	}
	size_t pl = strlen(path);
	size_t kl = 1 + pl + 2 + build_id_len;
	unsigned char *key = xmalloc(kl);
	key[0] = 'P';
	memcpy(key + 1, path, pl);
	key[1 + pl] = 0;
	key[1 + pl + 1] = (unsigned char)build_id_len;
	if (build_id_len)
		memcpy(key + 1 + pl + 2, build_id, build_id_len);
	return get_keyed(c, key, kl, path, build_id, build_id_len);
}


const char *symobj_lookup(const struct symobj *o, uint64_t vaddr)
{
	uint64_t start, end;
	return symobj_lookup_range(o, vaddr, &start, &end);
}

const char *symobj_lookup_range(const struct symobj *o, uint64_t vaddr, uint64_t *start,
				uint64_t *end)
{
	if (!o->nsyms)
		return NULL;
	size_t lo = interval_upper(o->syms, o->nsyms, sizeof(o->syms[0]),
				   offsetof(struct sym, addr), vaddr);
	/* The closest start that still covers vaddr: the innermost symbol. */
	for (size_t i = lo, steps = 0; i-- > 0 && steps < SYM_WALK_MAX; steps++) {
		if (o->maxend[i] <= vaddr)
			break;
		if (vaddr < o->syms[i].end) {
			*start = o->syms[i].addr;
			*end = o->syms[i].end;
			return o->syms[i].name;
		}
	}
	return NULL;
}

int symobj_func_range(const struct symobj *o, uint64_t vaddr, uint64_t *start,
		      uint64_t *end)
{
	const struct ehf_range *r = ehframe_find(o->fdes, o->nfdes, vaddr);
	if (!r)
		return 0;
	*start = r->start;
	*end = r->end;
	return 1;
}

int symobj_func_start(const struct symobj *o, uint64_t vaddr, uint64_t *start)
{
	uint64_t end;
	return symobj_func_range(o, vaddr, start, &end);
}

size_t symobj_count(const struct symobj *o)
{
	return o->nsyms;
}

unsigned symobj_sources(const struct symobj *o)
{
	return o->sources | (o->dw_path ? SYMSRC_DWARF : 0);
}
