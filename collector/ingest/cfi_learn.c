/*
 * cfi_learn.c - learning frame rules for libprobe's handler (see
 * cfi_learn.h).
 *
 * This is the work libprobe's sender thread did in the process before it
 * had no thread: the same DWARF CFI reading (CIE and FDE programs, the
 * .eh_frame_hdr search table), now over the object's file, mapped here,
 * instead of its image in the process.  Pointers in .eh_frame are
 * pc-relative, so they are computed in the file's mapping as they were in
 * memory, and the address looked up is moved into the same space: vaddr +
 * (mapping - (p_vaddr - p_offset of the segment holding .eh_frame_hdr)).
 * Absolute pointers (absptr) get the same adjustment.  Every read is
 * bounded by the mapping: the file is untrusted.
 */
#include "cfi_learn.h"

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#define CFI_FILES_MAX 64

/* A bounded reader over mapped .eh_frame bytes. */
struct rd {
	const uint8_t *p, *end;
	int bad;
	int64_t abs_adj;                /* absolute pointers: vaddr -> image */
};

static uint64_t uleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (r->p < r->end) {
		uint8_t b = *r->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
	r->bad = 1;
	return 0;
}

static int64_t sleb(struct rd *r)
{
	int64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0;

	while (r->p < r->end) {
		b = *r->p++;
		if (shift < 64)
			v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= -((int64_t)1 << shift);
			return v;
		}
	}
	r->bad = 1;
	return 0;
}

static uint64_t fixed(struct rd *r, unsigned n)
{
	uint64_t v = 0;

	if ((size_t)(r->end - r->p) < n) {
		r->bad = 1;
		return 0;
	}
	memcpy(&v, r->p, n);            /* little endian */
	r->p += n;
	return v;
}

/* A DW_EH_PE-encoded pointer (absptr, udata/sdata 2/4/8, (s)uleb; pcrel). */
static uint64_t encoded(struct rd *r, uint8_t enc)
{
	const uint8_t *at = r->p;
	uint64_t v;

	if (enc == 0xff)
		return 0;
	switch (enc & 0x0f) {
	case 0x00: v = fixed(r, 8); break;
	case 0x01: v = uleb(r); break;
	case 0x02: v = fixed(r, 2); break;
	case 0x03: v = fixed(r, 4); break;
	case 0x04: v = fixed(r, 8); break;
	case 0x09: v = (uint64_t)sleb(r); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)fixed(r, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)fixed(r, 4); break;
	case 0x0c: v = fixed(r, 8); break;
	default: r->bad = 1; return 0;
	}
	switch (enc & 0x70) {
	case 0x00: v += (uint64_t)r->abs_adj; break;
	case 0x10: v += (uint64_t)(uintptr_t)at; break;
	default: r->bad = 1; return 0;  /* textrel, datarel, funcrel: not in eh_frame CIEs we use */
	}
	if (enc & 0x80)
		r->bad = 1;             /* indirect: only personality pointers, which we skip otherwise */
	return v;
}

/* Register rules we track: rbp (6) and the return address (16). */
enum { R_SAME, R_OFFSET, R_UNDEF, R_OTHER };
struct regs {
	int cfa_reg;
	int64_t cfa_off;
	int cfa_expr;
	int rbp, ra;
	int64_t rbp_off, ra_off;
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	int signal_frame, has_z;
	const uint8_t *insns, *insns_end;
};

static void set_reg(struct regs *s, uint64_t reg, int how, int64_t off)
{
	if (reg == 6) {
		s->rbp = how;
		s->rbp_off = off;
	} else if (reg == 16) {
		s->ra = how;
		s->ra_off = off;
	}
}

/* DW_CFA_restore: the rule the CIE's initial instructions left. */
static void restore_reg(struct regs *s, const struct regs *init, uint64_t reg)
{
	if (reg == 6)
		set_reg(s, reg, init->rbp, init->rbp_off);
	else if (reg == 16)
		set_reg(s, reg, init->ra, init->ra_off);
}

/*
 * Run a CFA program.  Stops when the location passes pc (FDE programs;
 * pc = UINT64_MAX for a CIE's initial instructions).  0, or -1 when it
 * holds something we do not follow.
 */
static int run(struct rd *r, const struct cie *c, struct regs *s,
	       const struct regs *init, uint64_t loc, uint64_t pc)
{
	struct regs stack[8];
	int depth = 0;

	while (r->p < r->end && !r->bad) {
		uint8_t op = *r->p++;
		uint64_t reg, delta = 0;
		int64_t off;

		switch (op & 0xc0) {
		case 0x40:
			delta = (uint64_t)(op & 0x3f) * c->code_align;
			goto advance;
		case 0x80:
			off = (int64_t)uleb(r) * c->data_align;
			set_reg(s, op & 0x3f, R_OFFSET, off);
			continue;
		case 0xc0:
			restore_reg(s, init, op & 0x3f);
			continue;
		}
		switch (op) {
		case 0x00:              /* nop */
			continue;
		case 0x01:              /* set_loc */
			{
				uint64_t to = encoded(r, c->fde_enc);
				if (to > pc)
					return 0;
				loc = to;
			}
			continue;
		case 0x02: delta = fixed(r, 1) * c->code_align; goto advance;
		case 0x03: delta = fixed(r, 2) * c->code_align; goto advance;
		case 0x04: delta = fixed(r, 4) * c->code_align; goto advance;
		case 0x05:              /* offset_extended */
			reg = uleb(r);
			off = (int64_t)uleb(r) * c->data_align;
			set_reg(s, reg, R_OFFSET, off);
			continue;
		case 0x06:              /* restore_extended */
			restore_reg(s, init, uleb(r));
			continue;
		case 0x07:              /* undefined */
			set_reg(s, uleb(r), R_UNDEF, 0);
			continue;
		case 0x08:              /* same_value */
			set_reg(s, uleb(r), R_SAME, 0);
			continue;
		case 0x09:              /* register: reg, reg2 */
		case 0x14:              /* val_offset: reg, offset (the same shape) */
			reg = uleb(r);
			uleb(r);
			set_reg(s, reg, R_OTHER, 0);
			continue;
		case 0x0a:              /* remember_state */
			if (depth == 8)
				return -1;
			stack[depth++] = *s;
			continue;
		case 0x0b:              /* restore_state: the whole row */
			if (depth == 0)
				return -1;
			{
				*s = stack[--depth];
			}
			continue;
		case 0x0c:              /* def_cfa */
			s->cfa_reg = (int)uleb(r);
			s->cfa_off = (int64_t)uleb(r);
			s->cfa_expr = 0;
			continue;
		case 0x0d:              /* def_cfa_register */
			s->cfa_reg = (int)uleb(r);
			s->cfa_expr = 0;
			continue;
		case 0x0e:              /* def_cfa_offset */
			s->cfa_off = (int64_t)uleb(r);
			continue;
		case 0x0f:              /* def_cfa_expression */
			off = (int64_t)uleb(r);
			if (off < 0 || off > r->end - r->p)
				return -1;
			r->p += off;
			s->cfa_expr = 1;
			continue;
		case 0x10:              /* expression */
		case 0x16:              /* val_expression */
			reg = uleb(r);
			off = (int64_t)uleb(r);
			if (off < 0 || off > r->end - r->p)
				return -1;
			r->p += off;
			set_reg(s, reg, R_OTHER, 0);
			continue;
		case 0x11:              /* offset_extended_sf */
			reg = uleb(r);
			off = sleb(r) * c->data_align;
			set_reg(s, reg, R_OFFSET, off);
			continue;
		case 0x12:              /* def_cfa_sf */
			s->cfa_reg = (int)uleb(r);
			s->cfa_off = sleb(r) * c->data_align;
			s->cfa_expr = 0;
			continue;
		case 0x13:              /* def_cfa_offset_sf */
			s->cfa_off = sleb(r) * c->data_align;
			continue;
		case 0x15:              /* val_offset_sf */
			reg = uleb(r);
			sleb(r);
			set_reg(s, reg, R_OTHER, 0);
			continue;
		case 0x2e:              /* GNU_args_size */
			uleb(r);
			continue;
		case 0x2f:              /* GNU_negative_offset_extended */
			reg = uleb(r);
			off = -(int64_t)uleb(r) * c->data_align;
			set_reg(s, reg, R_OFFSET, off);
			continue;
		default:
			return -1;
		}
advance:
		if (loc + delta > pc)
			return 0;
		loc += delta;
	}
	return r->bad ? -1 : 0;
}

static int parse_cie(const uint8_t *p, const uint8_t *end, int64_t adj, struct cie *c)
{
	struct rd r = { p, end, 0, adj };
	uint64_t len = fixed(&r, 4);
	const char *aug;
	uint8_t version;

	if (len == 0xffffffffu || len == 0 || len > (uint64_t)(end - r.p))
		return -1;
	r.end = r.p + len;
	if (fixed(&r, 4) != 0)          /* CIE id */
		return -1;
	version = (uint8_t)fixed(&r, 1);
	if (version != 1 && version != 3)
		return -1;
	aug = (const char *)r.p;
	while (r.p < r.end && *r.p)
		r.p++;
	if (r.p >= r.end)
		return -1;
	r.p++;
	memset(c, 0, sizeof *c);
	if (aug[0] && aug[0] != 'z')
		return -1;              /* "eh" and other old forms */
	c->code_align = uleb(&r);
	c->data_align = sleb(&r);
	c->ra_reg = version == 1 ? fixed(&r, 1) : uleb(&r);
	c->fde_enc = 0;             /* absptr */
	if (aug[0] == 'z') {
		uint64_t alen = uleb(&r);
		const uint8_t *aend;

		if (alen > (uint64_t)(r.end - r.p))
			return -1;
		aend = r.p + alen;
		c->has_z = 1;
		for (const char *a = aug + 1; *a && !r.bad; a++) {
			if (*a == 'R') {
				c->fde_enc = (uint8_t)fixed(&r, 1);
			} else if (*a == 'L') {
				fixed(&r, 1);
			} else if (*a == 'P') {
				uint8_t enc = (uint8_t)fixed(&r, 1);
				struct rd skip = r;
				/* skip the pointer; its value does not matter */
				encoded(&skip, (uint8_t)(enc & 0x7f));
				if (skip.bad)
					return -1;
				r.p = skip.p;
			} else if (*a == 'S') {
				c->signal_frame = 1;
			} else if (*a == 'B' || *a == 'G') {
				/* no data */
			} else {
				return -1;
			}
		}
		r.p = aend;
	}
	if (r.bad || c->ra_reg != 16)
		return -1;
	c->insns = r.p;
	c->insns_end = r.end;
	return 0;
}

/* The rule at pc from the FDE at fde (an .eh_frame record). */
static uint64_t rule_from_fde(const uint8_t *lo, const uint8_t *fde,
			      const uint8_t *end, int64_t adj, uint64_t pc)
{
	struct rd r = { fde, end, 0, adj };
	struct cie c;
	struct regs init, s;
	uint64_t len = fixed(&r, 4), cie_off, begin, range;
	const uint8_t *id_at;

	if (len == 0 || len == 0xffffffffu || len > (uint64_t)(end - r.p))
		return probe_rule_pack(PROBE_RULE_UNSUP, 0, 0, 0);
	r.end = r.p + len;
	id_at = r.p;
	cie_off = fixed(&r, 4);
	if (cie_off == 0 || cie_off > (uint64_t)(id_at - lo))
		return probe_rule_pack(PROBE_RULE_UNSUP, 0, 0, 0);
	if (parse_cie(id_at - cie_off, end, adj, &c) < 0 || c.signal_frame)
		return probe_rule_pack(PROBE_RULE_UNSUP, 0, 0, 0);
	begin = encoded(&r, c.fde_enc);
	r.abs_adj = 0;          /* a length, not a pointer */
	range = encoded(&r, (uint8_t)(c.fde_enc & 0x0f));
	r.abs_adj = adj;
	if (r.bad || pc < begin || pc - begin >= range)
		return probe_rule_pack(PROBE_RULE_NONE, 0, 0, 0);
	if (c.has_z) {
		uint64_t alen = uleb(&r);
		if (alen > (uint64_t)(r.end - r.p))
			return probe_rule_pack(PROBE_RULE_UNSUP, 0, 0, 0);
		r.p += alen;
	}
	memset(&init, 0, sizeof init);
	init.cfa_reg = -1;
	init.rbp = R_SAME;
	init.ra = R_OTHER;
	struct rd ci = { c.insns, c.insns_end, 0, adj };
	if (run(&ci, &c, &init, &init, 0, UINT64_MAX) < 0)
		return probe_rule_pack(PROBE_RULE_UNSUP, 0, 0, 0);
	s = init;
	if (run(&r, &c, &s, &init, begin, pc) < 0)
		return probe_rule_pack(PROBE_RULE_UNSUP, 0, 0, 0);
	if (s.ra == R_UNDEF)
		return probe_rule_pack(PROBE_RULE_LAST, 0, 0, 0);
	if (s.cfa_expr || (s.cfa_reg != 7 && s.cfa_reg != 6) ||
	    s.ra != R_OFFSET || s.ra_off != -8 ||
	    s.cfa_off < 8 || s.cfa_off > INT32_MAX ||
	    (s.rbp != R_SAME && s.rbp != R_OFFSET) ||
	    (s.rbp == R_OFFSET && (s.rbp_off < INT16_MIN || s.rbp_off > INT16_MAX)))
		return probe_rule_pack(PROBE_RULE_UNSUP, 0, 0, 0);
	return probe_rule_pack(s.cfa_reg == 7 ? PROBE_RULE_RSP : PROBE_RULE_RBP, s.rbp == R_OFFSET,
		    (int)s.rbp_off, (int32_t)s.cfa_off);
}

/* ---- an ELF image: where .eh_frame_hdr is ----------------------------------- */

struct image {
	const uint8_t *p;
	size_t size;
	const uint8_t *hdr, *hend;      /* .eh_frame_hdr */
	int64_t adj;                    /* vaddr -> address in p */
	uint8_t build_id[PROBE_BUILD_ID_MAX];
	unsigned build_id_len;
};

static int in_image(const struct image *im, const void *q, size_t n)
{
	const uint8_t *b = q;
	return b >= im->p && n <= im->size && b <= im->p + im->size - n;
}

static void read_build_id(struct image *im, const Elf64_Phdr *ph)
{
	const uint8_t *n = im->p + ph->p_offset, *end = n + ph->p_filesz;
	while (end - n >= 12) {
		uint32_t namesz, descsz, type;
		memcpy(&namesz, n, 4);
		memcpy(&descsz, n + 4, 4);
		memcpy(&type, n + 8, 4);
		size_t nsz = (namesz + 3u) & ~3u, dsz = (descsz + 3u) & ~3u;
		if (nsz > (size_t)(end - n - 12) || dsz > (size_t)(end - n - 12 - nsz))
			return;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(n + 12, "GNU", 4) &&
		    descsz <= PROBE_BUILD_ID_MAX) {
			memcpy(im->build_id, n + 12 + nsz, descsz);
			im->build_id_len = descsz;
			return;
		}
		n += 12 + nsz + dsz;
	}
}

/* Program header i, copied out: a damaged file may misalign them. */
static Elf64_Phdr phdr(const uint8_t *img, const Elf64_Ehdr *eh, unsigned i)
{
	Elf64_Phdr ph;
	memcpy(&ph, img + eh->e_phoff + (size_t)i * sizeof(ph), sizeof(ph));
	return ph;
}

/* 0 when img is a 64-bit x86-64 ELF file with an .eh_frame_hdr we can use. */
static int image_open(struct image *im, const uint8_t *img, size_t size)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ehf = { .p_type = PT_NULL };
	memset(im, 0, sizeof(*im));
	im->p = img;
	im->size = size;
	if (size < sizeof(eh))
		return -1;
	memcpy(&eh, img, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64 || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    eh.e_phoff > size || eh.e_phnum > (size - eh.e_phoff) / sizeof(Elf64_Phdr))
		return -1;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph = phdr(img, &eh, i);
		if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset)
			continue;
		if (ph.p_type == PT_GNU_EH_FRAME)
			ehf = ph;
		else if (ph.p_type == PT_NOTE)
			read_build_id(im, &ph);
	}
	if (ehf.p_type != PT_GNU_EH_FRAME)
		return -1;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph = phdr(img, &eh, i);
		if (ph.p_type == PT_LOAD && ehf.p_vaddr >= ph.p_vaddr &&
		    ehf.p_vaddr - ph.p_vaddr < ph.p_filesz) {
			int64_t delta = (int64_t)(ph.p_vaddr - ph.p_offset);
			im->adj = (int64_t)(uintptr_t)img - delta;
			im->hdr = img + ehf.p_offset;
			im->hend = im->hdr + ehf.p_filesz;
			return 0;
		}
	}
	return -1;
}

static uint64_t image_rule(const struct image *im, uint64_t vaddr)
{
	struct rd r = { im->hdr, im->hend, 0, 0 };      /* count: not a pointer */
	uint64_t pc = vaddr + (uint64_t)im->adj;
	uint64_t unsup = probe_rule_pack(PROBE_RULE_UNSUP, 0, 0, 0);

	if (fixed(&r, 1) != 1)
		return unsup;
	uint8_t ptr_enc = (uint8_t)fixed(&r, 1);
	uint8_t cnt_enc = (uint8_t)fixed(&r, 1);
	uint8_t tab_enc = (uint8_t)fixed(&r, 1);
	encoded(&r, ptr_enc);
	uint64_t n = encoded(&r, cnt_enc);
	const uint8_t *tab = r.p;
	if (r.bad || tab_enc != 0x3b || n == 0 || n > (uint64_t)(im->hend - r.p) / 8)
		return unsup;
	/* The last entry whose initial location (hdr-relative) is <= pc. */
	int64_t want = (int64_t)(pc - (uint64_t)(uintptr_t)im->hdr);
	uint64_t lo = 0, hi = n;
	int32_t v;
	while (hi - lo > 1) {
		uint64_t mid = (lo + hi) / 2;
		memcpy(&v, tab + 8 * mid, 4);
		if ((int64_t)v <= want)
			lo = mid;
		else
			hi = mid;
	}
	memcpy(&v, tab + 8 * lo, 4);
	if ((int64_t)v > want)
		return probe_rule_pack(PROBE_RULE_NONE, 0, 0, 0);
	memcpy(&v, tab + 8 * lo + 4, 4);
	const uint8_t *fde = im->hdr + v;
	if (!in_image(im, fde, 8))
		return unsup;
	return rule_from_fde(im->p, fde, im->p + im->size, im->adj, pc);
}

uint64_t cfi_rule_in_image(const uint8_t *img, size_t size, uint64_t vaddr)
{
	struct image im;
	if (image_open(&im, img, size) < 0)
		return probe_rule_pack(PROBE_RULE_UNSUP, 0, 0, 0);
	return image_rule(&im, vaddr);
}

/* ---- the files, mapped once ---------------------------------------------------- */

struct file {
	char *path;                     /* as the MAP names it */
	uint8_t build_id[PROBE_BUILD_ID_MAX];
	unsigned build_id_len;
	void *map;
	size_t size;
	struct image im;
	int ok;
	uint64_t used;
	/*
	 * The rules learned from it so far, by file address (vaddr + 1; 0:
	 * empty), for the next process that maps it (cfi_seed): each process
	 * has its own table, and a short one (an interpreter started in a
	 * loop) would otherwise walk its first samples with none.
	 */
	uint64_t *mem_key, *mem_rule;
	size_t mem_n;
};

#define MEM_CAP 4096u                   /* a power of two; at most half full */

static void remember(struct file *f, uint64_t vaddr, uint64_t rule)
{
	if (!f->mem_key) {
		f->mem_key = calloc(MEM_CAP, sizeof(*f->mem_key));
		f->mem_rule = calloc(MEM_CAP, sizeof(*f->mem_rule));
		if (!f->mem_key || !f->mem_rule) {
			free(f->mem_key);
			free(f->mem_rule);
			f->mem_key = f->mem_rule = NULL;
			return;
		}
	}
	size_t at = (size_t)probe_rule_hash(vaddr) & (MEM_CAP - 1);
	for (; f->mem_key[at]; at = (at + 1) & (MEM_CAP - 1))
		if (f->mem_key[at] == vaddr + 1) {
			f->mem_rule[at] = rule;
			return;
		}
	if (f->mem_n >= MEM_CAP / 2)
		return;
	f->mem_key[at] = vaddr + 1;
	f->mem_rule[at] = rule;
	f->mem_n++;
}

static struct file files[CFI_FILES_MAX];
static uint64_t clock_;

/*
 * A regular file only, resolved once with O_PATH (which opens nothing: a
 * path a process names may lead to a device, and opening some does
 * things), then opened through that very file.
 */
static int open_image(struct file *f, const char *path)
{
	struct stat st;
	char self[64];
	int pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -1;
	if (fstat(pfd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(pfd);
		return -1;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	int fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	close(pfd);
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	f->map = p;
	f->size = (size_t)st.st_size;
	if (image_open(&f->im, p, f->size) < 0) {
		munmap(p, f->size);
		f->map = NULL;
		return -1;
	}
	return 0;
}

static void file_drop(struct file *f)
{
	if (f->map)
		munmap(f->map, f->size);
	free(f->path);
	free(f->mem_key);
	free(f->mem_rule);
	memset(f, 0, sizeof(*f));
}

/*
 * The object of m as the process sees it: through /proc/PID/root first
 * (another mount namespace), then the path itself; its build-id must be
 * the MAP's when the MAP has one.  NULL when it cannot be read.
 */
static int same_file(const struct file *f, const struct cfi_map *m)
{
	return f->path && !strcmp(f->path, m->path) && f->build_id_len == m->build_id_len &&
	       !memcmp(f->build_id, m->build_id, m->build_id_len);
}

static struct file *file_get(const struct cfi_map *m, pid_t pid)
{
	struct file *f, *victim = &files[0];
	for (int i = 0; i < CFI_FILES_MAX; i++) {
		f = &files[i];
		if (same_file(f, m)) {
			f->used = ++clock_;
			return f->ok ? f : NULL;
		}
		if (f->used < victim->used)
			victim = f;
	}
	f = victim;
	file_drop(f);
	f->path = xstrdup(m->path);
	f->build_id_len = m->build_id_len;
	memcpy(f->build_id, m->build_id, m->build_id_len);
	f->used = ++clock_;
	char root[64 + 4096];
	snprintf(root, sizeof(root), "/proc/%ld/root%s", (long)pid, m->path);
	const char *tries[] = { root, m->path };
	for (int i = 0; i < 2 && !f->ok; i++) {
		if (m->path[0] != '/' || open_image(f, tries[i]) < 0)
			continue;
		if (m->build_id_len && (f->im.build_id_len != m->build_id_len ||
		    memcmp(f->im.build_id, m->build_id, m->build_id_len))) {
			munmap(f->map, f->size);
			f->map = NULL;
			continue;
		}
		f->ok = 1;
	}
	return f->ok ? f : NULL;
}

void cfi_files_free(void)
{
	for (int i = 0; i < CFI_FILES_MAX; i++)
		file_drop(&files[i]);
}

/* ---- the process's maps -------------------------------------------------------- */

void cfi_maps_add(struct cfi_maps *m, uint64_t start, uint64_t end, uint64_t bias,
		  const uint8_t *build_id, size_t build_id_len, const char *path)
{
	/* A new object over an old one's addresses replaces it. */
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].start < end && start < m->v[i].end) {
			free(m->v[i].path);
			m->v[i] = m->v[--m->n];
			i--;
		}
	m->v = xgrow(m->v, &m->cap, m->n + 1, sizeof(*m->v));
	struct cfi_map *e = &m->v[m->n++];
	e->start = start;
	e->end = end;
	e->bias = bias;
	e->build_id_len = (uint8_t)(build_id_len <= PROBE_BUILD_ID_MAX ? build_id_len : 0);
	memcpy(e->build_id, build_id, e->build_id_len);
	e->path = xstrdup(path);
}

void cfi_maps_clear(struct cfi_maps *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

static const struct cfi_map *map_of(const struct cfi_maps *m, uint64_t a)
{
	for (size_t i = 0; i < m->n; i++)
		if (a >= m->v[i].start && a < m->v[i].end)
			return &m->v[i];
	return NULL;
}

/* ---- publishing ------------------------------------------------------------------ */

void cfi_publish(struct probe_arena *a, struct cfi_learner *l, uint64_t key,
		 uint64_t rule)
{
	unsigned i = (unsigned)(probe_rule_hash(key) & (PROBE_RULE_SETS - 1)), w;
	struct probe_rule_slot *s;

	for (w = 0; w < PROBE_RULE_WAYS; w++) {
		uint64_t k = __atomic_load_n(&a->rules[i][w].key, __ATOMIC_RELAXED);
		if (k == key || k == 0)
			break;
	}
	if (w == PROBE_RULE_WAYS)
		w = l->victim[i]++ % PROBE_RULE_WAYS;
	s = &a->rules[i][w];
	__atomic_store_n(&s->key, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&s->rule, rule, __ATOMIC_RELAXED);
	__atomic_store_n(&s->key, key, __ATOMIC_RELEASE);
}

unsigned cfi_learn(struct probe_arena *a, struct cfi_learner *l,
		   const struct cfi_maps *maps, pid_t pid, struct cfi_unmapped *um)
{
	unsigned asked = 0;
	um->n = 0;
	if (!__atomic_exchange_n(&a->want_pending, 0, __ATOMIC_ACQUIRE))
		return 0;
	uint64_t epoch = __atomic_load_n(&a->rules_epoch, __ATOMIC_ACQUIRE);
	for (unsigned i = 0; i < PROBE_ARENA_WANT; i++) {
		uint64_t key = __atomic_exchange_n(&a->want[i], 0, __ATOMIC_RELAXED);
		if (!key)
			continue;
		asked++;
		const struct cfi_map *m = map_of(maps, key);
		if (!m) {
			/* JIT code (jit.h), or its MAP comes later: asked again then */
			um->key[um->n++] = key;
			continue;
		}
		struct file *f = file_get(m, pid);
		uint64_t rule = f ? image_rule(&f->im, key - m->bias)
				  : probe_rule_pack(PROBE_RULE_UNSUP, 0, 0, 0);
		if (f)
			remember(f, key - m->bias, rule);
		if (__atomic_load_n(&a->rules_epoch, __ATOMIC_ACQUIRE) != epoch)
			return asked;   /* flushed (dlclose) meanwhile */
		cfi_publish(a, l, key, rule);
	}
	return asked;
}

void cfi_forget(struct probe_arena *a, uint64_t lo, uint64_t hi)
{
	for (unsigned i = 0; i < PROBE_RULE_SETS; i++)
		for (unsigned w = 0; w < PROBE_RULE_WAYS; w++) {
			uint64_t k = __atomic_load_n(&a->rules[i][w].key, __ATOMIC_RELAXED);
			if (k >= lo && k < hi)
				__atomic_store_n(&a->rules[i][w].key, 0, __ATOMIC_RELEASE);
		}
}

void cfi_forget_key(struct probe_arena *a, uint64_t key)
{
	struct probe_rule_slot *set = a->rules[probe_rule_hash(key) & (PROBE_RULE_SETS - 1)];

	for (unsigned w = 0; w < PROBE_RULE_WAYS; w++)
		if (__atomic_load_n(&set[w].key, __ATOMIC_RELAXED) == key)
			__atomic_store_n(&set[w].key, 0, __ATOMIC_RELEASE);
}

unsigned cfi_seed(struct probe_arena *a, struct cfi_learner *l, const struct cfi_map *m)
{
	unsigned n = 0;
	/* Only while nothing was ever unloaded: m is mapped now (see the header). */
	if (__atomic_load_n(&a->rules_epoch, __ATOMIC_ACQUIRE) != 0)
		return 0;
	for (int i = 0; i < CFI_FILES_MAX; i++) {
		struct file *f = &files[i];
		if (!same_file(f, m) || !f->ok || !f->mem_key)
			continue;
		for (size_t j = 0; j < MEM_CAP; j++) {
			uint64_t key = f->mem_key[j] ? f->mem_key[j] - 1 + m->bias : 0;
			if (!key || key < m->start || key >= m->end)
				continue;
			if (__atomic_load_n(&a->rules_epoch, __ATOMIC_ACQUIRE) != 0)
				return n;
			cfi_publish(a, l, key, f->mem_rule[j]);
			n++;
		}
		break;
	}
	return n;
}
