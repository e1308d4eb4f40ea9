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
 *
 * Why not libdw's CFI (dwarf_getcfi_elf + dwarf_cfi_addrframe)?  Measured
 * with libdw 0.188 over 1.5M addresses of 10 objects (scripts/cfibench/
 * run.sh): the same rules (100% of packed rules equal, bar the padding
 * byte after a sigreturn FDE, where we say UNSUP and libdw finds no FDE),
 * but slower: an object's first 1000 rules take 2.2-3x as long (libc 0.54
 * vs 0.23 ms, libgtk-3 1.10 vs 0.36 ms), and on gold-linked objects
 * (.eh_frame_hdr after .eh_frame) libdw never uses the header and scans
 * .eh_frame: libLLVM-15, 20.6 ms and 7.5 MiB of heap against 0.70 ms and
 * 64 KiB.  It mallocs a frame per query and keeps every FDE it meets, so
 * the handler cannot use it, and the handler must read the same rules
 * with cfa.h in signal context: one interpreter for both.  The CFA
 * expressions, signal frames and registers libdw does describe do not fit
 * probe_rule_pack anyway.  (The comparison found that gold types a static
 * executable's .eh_frame SHT_X86_64_UNWIND: read since, tests/46.)
 */
#include "ingest/cfi_learn.h"

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/gopclntab.h"
#include "probe/cfa.h"
#include "util.h"

#define CFI_FILES_MAX 64

/* ---- an ELF image: where .eh_frame_hdr is ----------------------------------- */

struct image {
	const uint8_t *p;
	size_t size;
	const uint8_t *hdr, *hend;      /* .eh_frame_hdr */
	int64_t adj;                    /* vaddr -> address in p */
	uint8_t build_id[PROBE_BUILD_ID_MAX];
	unsigned build_id_len;
	/* No .eh_frame_hdr (a static executable): .eh_frame's FDEs, sorted. */
	struct fde_ent *tab;
	size_t ntab;
	struct gopcln go;               /* a Go binary's own table (go.p: there) */
};

struct fde_ent {
	uint64_t begin;                 /* where its code starts, image space */
	const uint8_t *fde;
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

static int by_begin(const void *a, const void *b)
{
	const struct fde_ent *x = a, *y = b;
	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* Section i's header, copied out (bounds checked by the caller). */
static Elf64_Shdr shdr(const uint8_t *img, const Elf64_Ehdr *eh, unsigned i)
{
	Elf64_Shdr sh;
	memcpy(&sh, img + eh->e_shoff + (size_t)i * sizeof(sh), sizeof(sh));
	return sh;
}

/*
 * The .eh_frame section's header, or one of type SHT_NULL.  gold types it
 * SHT_X86_64_UNWIND (the x86-64 ABI's), ld.bfd SHT_PROGBITS: either.
 */
static Elf64_Shdr eh_frame_section(const struct image *im, const Elf64_Ehdr *eh)
{
	Elf64_Shdr none = { .sh_type = SHT_NULL };
	if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > im->size ||
	    eh->e_shnum > (im->size - eh->e_shoff) / sizeof(Elf64_Shdr) ||
	    eh->e_shstrndx >= eh->e_shnum)
		return none;
	Elf64_Shdr str = shdr(im->p, eh, eh->e_shstrndx);
	if (str.sh_offset > im->size || str.sh_size > im->size - str.sh_offset)
		return none;
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		Elf64_Shdr sh = shdr(im->p, eh, i);
		if (str.sh_size >= 10 && sh.sh_name <= str.sh_size - 10 &&
		    (sh.sh_type == SHT_PROGBITS || sh.sh_type == SHT_X86_64_UNWIND) &&
		    !memcmp(im->p + str.sh_offset + sh.sh_name, ".eh_frame", 10) &&
		    sh.sh_offset <= im->size && sh.sh_size <= im->size - sh.sh_offset)
			return sh;
	}
	return none;
}

/*
 * No .eh_frame_hdr (gcc links static executables without one): a table
 * of .eh_frame's FDEs made here, walked as the header's would be.  0, or
 * -1 when there is no .eh_frame (nothing to unwind by).
 */
static int fde_table(struct image *im, const Elf64_Ehdr *eh)
{
	Elf64_Shdr sh = eh_frame_section(im, eh);
	if (sh.sh_type == SHT_NULL)
		return -1;
	im->adj = (int64_t)(uintptr_t)im->p - (int64_t)(sh.sh_addr - sh.sh_offset);
	const uint8_t *p = im->p + sh.sh_offset, *end = p + sh.sh_size;
	size_t cap = 0;
	while (end - p >= 8) {
		uint32_t len, id;
		memcpy(&len, p, 4);
		memcpy(&id, p + 4, 4);
		if (len == 0 || len == 0xffffffffu || len > (size_t)(end - p - 4))
			break;
		const uint8_t *next = p + 4 + len;
		struct cfa_cie c;
		if (id && id <= (size_t)(p + 4 - im->p) &&
		    cfa_parse_cie(p + 4 - id, end, im->adj, &c) == 0) {
			struct probe_rd r = { .p = p + 8, .end = next, .abs_adj = im->adj };
			uint64_t begin = probe_rd_eh_pointer(&r, c.fde_enc);
			if (!r.bad) {
				im->tab = xgrow(im->tab, &cap, im->ntab + 1, sizeof(*im->tab));
				im->tab[im->ntab++] = (struct fde_ent){ begin, p };
			}
		}
		p = next;
	}
	if (!im->ntab)
		return -1;
	qsort(im->tab, im->ntab, sizeof(*im->tab), by_begin);
	return 0;
}

/* The rule at pc (image space) from the FDE table fde_table() made. */
static uint64_t table_rule(const struct image *im, uint64_t pc)
{
	size_t lo = 0, hi = im->ntab;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (im->tab[mid].begin <= pc)
			lo = mid;
		else
			hi = mid;
	}
	if (im->tab[lo].begin > pc)
		return probe_rule_pack(PROBE_RULE_NONE, 0, 0, 0);
	return cfa_rule_from_fde(im->p, im->tab[lo].fde, im->p + im->size, im->adj, pc);
}

static void image_close(struct image *im)
{
	free(im->tab);
	im->tab = NULL;
	im->ntab = 0;
}

/*
 * 0 when img is a 64-bit x86-64 ELF file with an .eh_frame_hdr we can use,
 * or at least an .eh_frame (image_close() frees the table made of it).
 */
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
	int go = gopcln_open(&im->go, img, size) == 0;
	if (ehf.p_type != PT_GNU_EH_FRAME)
		return fde_table(im, &eh) == 0 || go ? 0 : -1;
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

static uint64_t cfi_image_rule(const struct image *im, uint64_t vaddr);

/*
 * A Go function's frame at vaddr, from its pcsp table: the return address
 * is just above the frame (CFA = SP + size + 8); rbp is left as it is
 * (Go's own frames are walked by SP alone).  Go's outermost frames end
 * the walk.
 */
static uint64_t go_rule(const struct image *im, uint64_t vaddr)
{
	struct gofunc f;
	int32_t sp;
	if (!im->go.p || gopcln_find(&im->go, vaddr, &f) < 0)
		return probe_rule_pack(PROBE_RULE_NONE, 0, 0, 0);
	if (gopcln_outermost(&f))
		return probe_rule_pack(PROBE_RULE_LAST, 0, 0, 0);
	if (gopcln_sp(&im->go, &f, vaddr, &sp) < 0 || sp > INT32_MAX - 8)
		return probe_rule_pack(PROBE_RULE_UNSUP, 0, 0, 0);
	return probe_rule_pack(PROBE_RULE_RSP, 0, 0, sp + 8);
}

static uint64_t image_rule(const struct image *im, uint64_t vaddr)
{
	uint64_t rule = cfi_image_rule(im, vaddr);
	return (rule & 15) == PROBE_RULE_NONE && im->go.p ? go_rule(im, vaddr) : rule;
}

static uint64_t cfi_image_rule(const struct image *im, uint64_t vaddr)
{
	struct probe_rd r = { .p = im->hdr, .end = im->hend };  /* count: not a pointer */
	uint64_t pc = vaddr + (uint64_t)im->adj;
	uint64_t unsup = probe_rule_pack(PROBE_RULE_UNSUP, 0, 0, 0);

	if (im->tab)
		return table_rule(im, pc);
	if (!im->hdr)
		return probe_rule_pack(PROBE_RULE_NONE, 0, 0, 0);     /* Go's table alone */

	if (probe_rd_le(&r, 1) != 1)
		return unsup;
	uint8_t ptr_enc = (uint8_t)probe_rd_le(&r, 1);
	uint8_t cnt_enc = (uint8_t)probe_rd_le(&r, 1);
	uint8_t tab_enc = (uint8_t)probe_rd_le(&r, 1);
	probe_rd_eh_pointer(&r, ptr_enc);
	uint64_t n = probe_rd_eh_pointer(&r, cnt_enc);
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
	return cfa_rule_from_fde(im->p, fde, im->p + im->size, im->adj, pc);
}

uint64_t cfi_rule_in_image(const uint8_t *img, size_t size, uint64_t vaddr)
{
	struct image im;
	if (image_open(&im, img, size) < 0)
		return probe_rule_pack(PROBE_RULE_UNSUP, 0, 0, 0);
	uint64_t rule = image_rule(&im, vaddr);
	image_close(&im);
	return rule;
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

/* The rule remembered for vaddr: 1, or 0 when none was. */
static int recall(const struct file *f, uint64_t vaddr, uint64_t *rule)
{
	if (!f->mem_key)
		return 0;
	size_t at = (size_t)probe_rule_hash(vaddr) & (MEM_CAP - 1);
	for (; f->mem_key[at]; at = (at + 1) & (MEM_CAP - 1))
		if (f->mem_key[at] == vaddr + 1) {
			*rule = f->mem_rule[at];
			return 1;
		}
	return 0;
}

static struct file files[CFI_FILES_MAX];
static uint64_t clock_;

/* A regular file only (util.h's open_regular), mapped whole. */
static int open_image(struct file *f, const char *path)
{
	struct stat st;
	int fd = open_regular(path);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size <= 0) {
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

/*
 * "[vdso]": not a file, but the kernel's own image, the same in every
 * process of this kernel: the collector's (util.h's own_vdso), read where
 * it is mapped.  The MAP's build-id must match, as a file's.  Without it
 * every rule the handler asked for in the vDSO was published UNSUP: a
 * sample in clock_gettime's system call then had no user stack at all
 * until libunwind was loaded (tests/14, 1 run in 5).
 */
static int open_vdso(struct file *f)
{
	const uint8_t *p;
	size_t n;
	return own_vdso(&p, &n) < 0 || image_open(&f->im, p, n) < 0 ? -1 : 0;
}

static void file_drop(struct file *f)
{
	if (f->map)
		munmap(f->map, f->size);
	image_close(&f->im);
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
	int vdso = strcmp(m->path, "[vdso]") == 0;
	for (int i = vdso ? 1 : 0; i < 2 && !f->ok; i++) {
		if (vdso ? open_vdso(f) < 0 : m->path[0] != '/' || open_image(f, tries[i]) < 0)
			continue;
		if (m->build_id_len && (f->im.build_id_len != m->build_id_len ||
		    memcmp(f->im.build_id, m->build_id, m->build_id_len))) {
			munmap(f->map, f->size);
			image_close(&f->im);
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

/*
 * Publish key's rule, learned while rules_epoch was epoch, and take it back
 * if a dlclose flushed the table meanwhile (the code at key may be another
 * object's now).  Published first, checked after: a flush bumps the epoch
 * before it empties the table, so a rule published before the bump is
 * emptied by that flush when its code is gone, and one published after it
 * is taken back here.  Per key: a program that dlcloses every few hundred
 * microseconds (a plugin loop) moves the epoch during most passes, and a
 * pass that gave up at the first move left the rest of its keys unlearned
 * until asked again (the walks of the first 45 ms of tests/87's "via" run
 * stopped at the dlopened caller of dlopen: 8 % of them).
 */
static void publish_checked(struct probe_arena *a, struct cfi_learner *l,
			    uint64_t key, uint64_t rule, uint64_t epoch)
{
	if (__atomic_load_n(&a->rules_epoch, __ATOMIC_ACQUIRE) != epoch)
		return;
	cfi_publish(a, l, key, rule);
	if (__atomic_load_n(&a->rules_epoch, __ATOMIC_SEQ_CST) != epoch)
		cfi_forget_key(a, key);
}

unsigned cfi_learn(struct probe_arena *a, struct cfi_learner *l,
		   const struct cfi_maps *maps, pid_t pid, struct cfi_unmapped *um)
{
	unsigned asked = 0;
	um->n = 0;
	if (!__atomic_exchange_n(&a->want_pending, 0, __ATOMIC_ACQUIRE))
		return 0;
	for (unsigned i = 0; i < PROBE_ARENA_WANT; i++) {
		uint64_t key = __atomic_exchange_n(&a->want[i], 0, __ATOMIC_RELAXED);
		if (!key)
			continue;
		asked++;
		uint64_t epoch = __atomic_load_n(&a->rules_epoch, __ATOMIC_ACQUIRE);
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
		publish_checked(a, l, key, rule, epoch);
	}
	return asked;
}

uint64_t cfi_rule_at(const struct cfi_map *m, pid_t pid, uint64_t addr)
{
	struct file *f = file_get(m, pid);
	uint64_t rule, vaddr = addr - m->bias;
	if (!f)
		return probe_rule_pack(PROBE_RULE_UNSUP, 0, 0, 0);
	if (recall(f, vaddr, &rule))
		return rule;
	rule = image_rule(&f->im, vaddr);
	remember(f, vaddr, rule);
	return rule;
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
