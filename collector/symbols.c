/* symbols.c - see symbols.h. */
#include "symbols.h"

#include <dlfcn.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hashtab.h"
#include "util.h"

struct sym {
	uint64_t addr, end;
	const char *name;       /* in the object's arena */
	int rank;               /* 0 GLOBAL, 1 WEAK, 2 LOCAL, 3 other */
};

struct symobj {
	UT_hash_handle hh;
	unsigned char *key;     /* path, NUL, build-id length, build-id */
	size_t keylen;
	struct sym *syms;
	uint64_t *maxend;       /* maxend[i] = max(end of syms[0..i]) */
	size_t nsyms, cap;
	char **arena;           /* blocks holding the names */
	size_t narena, arena_cap;
	char *cur;              /* free space in the last block */
	size_t cur_left;
};

struct symcache {
	struct symobj *objs;
	int elf_ready;
};

struct symcache *symcache_new(void)
{
	struct symcache *c = xcalloc(1, sizeof(*c));
	c->elf_ready = elf_version(EV_CURRENT) != EV_NONE;
	return c;
}

static void obj_free(struct symobj *o)
{
	for (size_t i = 0; i < o->narena; i++)
		free(o->arena[i]);
	free(o->arena);
	free(o->syms);
	free(o->maxend);
	free(o->key);
	free(o);
}

void symcache_free(struct symcache *c)
{
	if (!c)
		return;
	struct symobj *o, *t;
	HASH_ITER(hh, c->objs, o, t) {
		HASH_DEL(c->objs, o);
		obj_free(o);
	}
	free(c);
}

#define ARENA_BLOCK 65536

/* Names are copied in blocks: one malloc per name is slow for big tables. */
static const char *arena_dup(struct symobj *o, const char *s)
{
	/* "memcpy@@GLIBC_2.14" (a versioned alias in .symtab) is memcpy. */
	size_t n = strcspn(s, "@");
	if (n == 0)
		n = strlen(s);
	n++;
	if (n > o->cur_left) {
		size_t bs = n > ARENA_BLOCK ? n : ARENA_BLOCK;
		o->arena = xgrow(o->arena, &o->arena_cap, o->narena + 1, sizeof(*o->arena));
		o->cur = o->arena[o->narena++] = xmalloc(bs);
		o->cur_left = bs;
	}
	char *d = memcpy(o->cur, s, n - 1);
	d[n - 1] = '\0';
	o->cur += n;
	o->cur_left -= n;
	return d;
}

static int bind_rank(unsigned bind)
{
	switch (bind) {
	case STB_GLOBAL:
		return 0;
	case STB_WEAK:
		return 1;
	case STB_LOCAL:
		return 2;
	default:
		return 3;
	}
}

/* Function symbols of every section of this type; returns how many. */
static size_t read_syms(struct symobj *o, Elf *e, unsigned type)
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
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		size_t n = d->d_size / symsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)i, &s))
				break;
			unsigned t = GELF_ST_TYPE(s.st_info);
			if ((t != STT_FUNC && t != STT_GNU_IFUNC) || s.st_size == 0 ||
			    s.st_shndx == SHN_UNDEF || s.st_value + s.st_size < s.st_value)
				continue;
			const char *name = elf_strptr(e, sh.sh_link, s.st_name);
			if (!name || !*name)
				continue;
			o->syms = xgrow(o->syms, &o->cap, o->nsyms + 1, sizeof(*o->syms));
			struct sym *y = &o->syms[o->nsyms++];
			y->addr = s.st_value;
			y->end = s.st_value + s.st_size;
			y->name = arena_dup(o, name);
			y->rank = bind_rank(GELF_ST_BIND(s.st_info));
		}
	}
	return o->nsyms - before;
}

/*
 * Among aliases at one address, the most public-looking name: glibc's
 * internal "__GI_" aliases last, then fewer leading underscores, then the
 * shorter name (aliases tend to add prefixes and suffixes).
 */
static int alias_penalty(const char *n)
{
	int p = strncmp(n, "__GI_", 5) == 0 ? 100 : 0;
	while (*n == '_') {
		p++;
		n++;
	}
	return p;
}

static int cmp_sym(const void *x, const void *y)
{
	const struct sym *a = x, *b = y;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank - b->rank;
	int pa = alias_penalty(a->name), pb = alias_penalty(b->name);
	if (pa != pb)
		return pa - pb;
	size_t la = strlen(a->name), lb = strlen(b->name);
	if (la != lb)
		return la < lb ? -1 : 1;
	return strcmp(a->name, b->name);
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
	o->maxend = xmalloc(o->nsyms * sizeof(*o->maxend));
	uint64_t mx = 0;
	for (size_t i = 0; i < o->nsyms; i++) {
		if (o->syms[i].end > mx)
			mx = o->syms[i].end;
		o->maxend[i] = mx;
	}
}

/* Open a regular file only: a recording may name a FIFO or a device. */
static int open_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

/* .symtab of a separate debug file, if it matches build_id. */
static size_t read_debug_file(struct symobj *o, const char *path,
			      const uint8_t *bid, size_t bidlen)
{
	int fd = open_regular(path);
	if (fd < 0)
		return 0;
	size_t got = 0;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF) {
		const void *dbid = NULL;
		ssize_t n = dwelf_elf_gnu_build_id(e, &dbid);
		if (bidlen == 0 || (n == (ssize_t)bidlen && memcmp(dbid, bid, bidlen) == 0))
			got = read_syms(o, e, SHT_SYMTAB);
	}
	if (e)
		elf_end(e);
	close(fd);
	return got;
}

static size_t read_separate_debug(struct symobj *o, Elf *e, const char *path,
				  const uint8_t *bid, size_t bidlen)
{
	size_t got = 0;
	if (bidlen >= 2) {
		size_t hl = 2 * bidlen + 1;
		char *hex = xmalloc(hl);
		for (size_t i = 0; i < bidlen; i++)
			snprintf(hex + 2 * i, 3, "%02x", bid[i]);
		char *p = xasprintf("/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
		got = read_debug_file(o, p, bid, bidlen);
		free(p);
		free(hex);
	}
	if (got)
		return got;
	GElf_Word crc;
	const char *link = dwelf_elf_gnu_debuglink(e, &crc);
	if (!link || !*link || strchr(link, '/'))
		return 0;
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	const char *fmts[] = { "%s/%s", "%s/.debug/%s", "/usr/lib/debug%s/%s" };
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]) && !got; i++) {
		char *p = xasprintf(fmts[i], dir, link);
		if (strcmp(p, path) != 0)
			got = read_debug_file(o, p, bid, bidlen);
		free(p);
	}
	free(dir);
	return got;
}

/*
 * Check the build-id and read the symbols of one ELF image (path: printable,
 * for warnings and for finding separate debug files).
 */
static void load_elf(struct symobj *o, Elf *e, const char *path,
		     const uint8_t *bid, size_t bidlen)
{
	if (elf_kind(e) != ELF_K_ELF) {
		probe_warn("%s is not an ELF file; its addresses are shown as %s+0xOFFSET",
			   path, path_basename(path));
		return;
	}
	const void *dbid = NULL;
	ssize_t n = dwelf_elf_gnu_build_id(e, &dbid);
	if (bidlen > 0 && (n != (ssize_t)bidlen || memcmp(dbid, bid, bidlen) != 0)) {
		probe_warn("%s changed since the recording (its build-id differs); "
			   "its addresses are shown as %s+0xOFFSET", path, path_basename(path));
		return;
	}
	const uint8_t *use_bid = bid;
	size_t use_len = bidlen;
	if (use_len == 0 && n > 0) {
		use_bid = dbid;
		use_len = (size_t)n;
	}
	if (read_syms(o, e, SHT_SYMTAB))
		return;
	if (read_separate_debug(o, e, path, use_bid, use_len))
		return;
	read_syms(o, e, SHT_DYNSYM);
}

/* The collector's own vDSO: the same kernel made the recording's, probably. */
static void load_vdso(struct symobj *o, const uint8_t *bid, size_t bidlen)
{
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return;
	char *line = NULL;
	size_t cap = 0;
	unsigned long lo = 0, hi = 0;
	int found = 0;
	while (getline(&line, &cap, f) > 0) {
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo < hi) {
			found = 1;
			break;
		}
	}
	free(line);
	fclose(f);
	if (!found)
		return;
	Elf *e = elf_memory((char *)lo, hi - lo);
	if (!e)
		return;
	const void *dbid = NULL;
	ssize_t n = dwelf_elf_gnu_build_id(e, &dbid);
	/* Silently nameless if it is another kernel's: nothing to fix. */
	if (elf_kind(e) == ELF_K_ELF &&
	    (bidlen == 0 || (n == (ssize_t)bidlen && memcmp(dbid, bid, bidlen) == 0))) {
		if (!read_syms(o, e, SHT_SYMTAB))
			read_syms(o, e, SHT_DYNSYM);
	}
	elf_end(e);
}

static void load(struct symcache *c, struct symobj *o, const char *path,
		 const uint8_t *bid, size_t bidlen)
{
	if (!c->elf_ready)
		return;
	if (strcmp(path, "[vdso]") == 0) {
		load_vdso(o, bid, bidlen);
		return;
	}
	if (path[0] != '/')
		return;         /* anonymous or special: no file to read */
	int fd = open_regular(path);
	if (fd < 0) {
		char *p = printable_dup(path);
		probe_warn("cannot read %s (%s); its addresses are shown as %s+0xOFFSET",
			   p, errno == EINVAL ? "not a regular file" : strerror(errno),
			   path_basename(p));
		free(p);
		return;
	}
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e) {
		char *p = printable_dup(path);
		load_elf(o, e, p, bid, bidlen);
		free(p);
		elf_end(e);
	}
	close(fd);
}

struct symobj *symcache_get(struct symcache *c, const char *path,
			    const uint8_t *build_id, size_t build_id_len)
{
	if (build_id_len > 255)
		build_id_len = 255;
	size_t pl = strlen(path);
	size_t kl = pl + 2 + build_id_len;
	unsigned char *key = xmalloc(kl);
	memcpy(key, path, pl);
	key[pl] = 0;
	key[pl + 1] = (unsigned char)build_id_len;
	memcpy(key + pl + 2, build_id, build_id_len);
	struct symobj *o;
	HASH_FIND(hh, c->objs, key, kl, o);
	if (o) {
		free(key);
		return o;
	}
	o = xcalloc(1, sizeof(*o));
	o->key = key;
	o->keylen = kl;
	load(c, o, path, build_id, build_id_len);
	finish_table(o);
	HASH_ADD_KEYPTR(hh, c->objs, o->key, o->keylen, o);
	return o;
}

/* How far back to look past symbols that start below vaddr but end before. */
#define SYM_WALK_MAX 64

const char *symobj_lookup(const struct symobj *o, uint64_t vaddr)
{
	if (!o->nsyms)
		return NULL;
	size_t lo = 0, hi = o->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* The closest start that still covers vaddr: the innermost symbol. */
	for (size_t i = lo, steps = 0; i-- > 0 && steps < SYM_WALK_MAX; steps++) {
		if (o->maxend[i] <= vaddr)
			break;
		if (vaddr < o->syms[i].end)
			return o->syms[i].name;
	}
	return NULL;
}

size_t symobj_count(const struct symobj *o)
{
	return o->nsyms;
}

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

char *probe_demangle(const char *name)
{
	static int tried;
	static cxa_demangle_fn demangle;
	if (name[0] != '_' || name[1] != 'Z')
		return NULL;
	if (!tried) {
		tried = 1;
		/* C-callable (extern "C"); loaded lazily so C programs never pay. */
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		if (h)
			demangle = (cxa_demangle_fn)dlsym(h, "__cxa_demangle");
	}
	if (!demangle)
		return NULL;
	int status = -1;
	char *out = demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}
