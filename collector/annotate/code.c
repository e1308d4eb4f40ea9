/* code.c - see code.h. */
#include "annotate/code.h"

#include <elf.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <gelf.h>
#include <glob.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* n bytes at off of fd, all of them: 0, or -1. */
static int pread_all(int fd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/*
 * [start, start + n) of an ELF file's loaded image, through the PT_LOAD
 * holding it; NULL when none holds all of it in file bytes.
 */
static uint8_t *elf_bytes(int fd, Elf *e, uint64_t start, size_t n, unsigned *machine)
{
	size_t nph;
	GElf_Ehdr eh;
	if (!gelf_getehdr(e, &eh) || elf_getphdrnum(e, &nph) != 0)
		return NULL;
	*machine = eh.e_machine;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (start < ph.p_vaddr || start - ph.p_vaddr > ph.p_filesz ||
		    n > ph.p_filesz - (start - ph.p_vaddr))
			continue;
		uint8_t *b = xmalloc(n ? n : 1);
		if (pread_all(fd, b, n, ph.p_offset + (start - ph.p_vaddr)) == 0)
			return b;
		free(b);
		return NULL;
	}
	return NULL;
}

/* Is path an ELF file with this build-id (any, with none recorded)?  Its bytes if so. */
static uint8_t *file_bytes(const char *path, const struct agg_map *m, uint64_t start,
			   size_t n, unsigned *machine, int *changed)
{
	int fd = open_regular(path);
	if (fd < 0)
		return NULL;
	uint8_t *b = NULL;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF) {
		const void *bid = NULL;
		ssize_t bl = dwelf_elf_gnu_build_id(e, &bid);
		if (m->build_id_len == 0 ||
		    (bl == m->build_id_len && memcmp(bid, m->build_id, (size_t)bl) == 0))
			b = elf_bytes(fd, e, start, n, machine);
		else
			*changed = 1;
	}
	if (e)
		elf_end(e);
	close(fd);
	return b;
}

static char *hex_id(const struct agg_map *m)
{
	char *h = xmalloc(2u * m->build_id_len + 1);
	h[0] = 0;
	for (size_t i = 0; i < m->build_id_len; i++)
		snprintf(h + 2 * i, 3, "%02x", m->build_id[i]);
	return h;
}

static uint8_t *elf_code(const struct ann_func *fn, size_t n, unsigned *machine,
			 char **from, char **why)
{
	const struct agg_map *m = fn->map;
	int changed = 0;
	uint8_t *b = file_bytes(m->path, m, fn->start, n, machine, &changed);
	if (b) {
		*from = printable_dup(m->path);
		return b;
	}
	const char *home = getenv("HOME");
	if (m->build_id_len >= 2 && home && home[0] == '/') {
		char *h = hex_id(m);
		char *p = xasprintf("%s/.debug/.build-id/%.2s/%s/elf", home, h, h + 2);
		int ignored = 0;
		b = file_bytes(p, m, fn->start, n, machine, &ignored);
		free(h);
		if (b) {
			*from = printable_dup(p);
			free(p);
			return b;
		}
		free(p);
	}
	char *path = printable_dup(m->path);
	if (changed)
		*why = xasprintf("%s changed since the recording (its build-id differs) and no "
				 "copy with the recorded one is in ~/.debug: the instructions "
				 "that ran cannot be read; shown are the sampled addresses, with "
				 "the lines the recording kept", path);
	else
		*why = xasprintf("cannot read the code of %s (%s): shown are the sampled "
				 "addresses, with the lines the recording kept", path,
				 access(m->path, R_OK) ? "it is gone" : "no loaded segment holds it");
	free(path);
	return NULL;
}

/* /proc/kcore (PROBE_KCORE: another file, for tests): its PT_LOAD holding the range. */
static uint8_t *kernel_code(const struct ann_func *fn, size_t n, unsigned *machine,
			    char **from, char **why)
{
	const char *kcore = getenv("PROBE_KCORE") ? getenv("PROBE_KCORE") : "/proc/kcore";
	int fd = open_regular(kcore);
	if (fd < 0) {
		int err = errno;
		if (err == ENOENT && !getenv("PROBE_KCORE"))
			*why = xstrdup("this kernel has no /proc/kcore (it was built without "
				       "CONFIG_PROC_KCORE): its code cannot be read");
		else if (err == EACCES || err == EPERM)
			*why = xasprintf("cannot read %s (%s): kernel code is readable by root "
					 "only; run probe annotate as root to see it", kcore,
					 strerror(err));
		else
			*why = xasprintf("cannot read %s (%s)", kcore, strerror(err));
		return NULL;
	}
	Elf64_Ehdr eh;
	uint8_t *b = NULL;
	if (pread_all(fd, &eh, sizeof(eh), 0) == 0 && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr)) {
		*machine = eh.e_machine;
		for (unsigned i = 0; i < eh.e_phnum && !b; i++) {
			Elf64_Phdr ph;
			if (pread_all(fd, &ph, sizeof(ph), eh.e_phoff + (uint64_t)i * sizeof(ph)))
				break;
			if (ph.p_type != PT_LOAD || fn->start < ph.p_vaddr ||
			    fn->start - ph.p_vaddr > ph.p_filesz ||
			    n > ph.p_filesz - (fn->start - ph.p_vaddr))
				continue;
			b = xmalloc(n ? n : 1);
			if (pread_all(fd, b, n, ph.p_offset + (fn->start - ph.p_vaddr))) {
				free(b);
				b = NULL;
				break;
			}
		}
	}
	close(fd);
	if (b)
		*from = xstrdup(kcore);
	else
		*why = xasprintf("%s does not hold this kernel code (the kernel may forbid it: "
				 "lockdown)", kcore);
	return b;
}

/* ---- jitdump ---------------------------------------------------------- */

#define JITDUMP_MAGIC 0x4A695444u
#define JITDUMP_MAX (256u << 20)
#define JIT_CODE_LOAD 0

/* The code of a JIT_CODE_LOAD record at vma with n bytes, in one jitdump file. */
static uint8_t *jitdump_code(const char *path, uint64_t vma, size_t n, unsigned *machine)
{
	int fd = open_regular(path);
	struct stat st;
	if (fd < 0)
		return NULL;
	uint8_t *b = NULL;
	uint32_t hdr[4];
	uint64_t size = fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
	if (size > JITDUMP_MAX)
		size = JITDUMP_MAX;
	if (pread_all(fd, hdr, sizeof(hdr), 0) || hdr[0] != JITDUMP_MAGIC || hdr[2] > size) {
		close(fd);
		return NULL;
	}
	*machine = hdr[3];
	for (uint64_t off = hdr[2]; off + 16 <= size && !b;) {
		uint32_t rec[2];
		if (pread_all(fd, rec, sizeof(rec), off) || rec[1] < 16 || rec[1] > size - off)
			break;
		/* JIT_CODE_LOAD: id, size, time; pid, tid, vma, code_addr, code_size, index, name. */
		uint64_t f[4];
		if (rec[0] == JIT_CODE_LOAD && rec[1] >= 56 &&
		    pread_all(fd, f, sizeof(f), off + 24) == 0 && f[0] == vma && f[2] == n) {
			uint64_t name_at = off + 56, left = rec[1] - 56;
			/* The name ends at its NUL; the code is the record's last n bytes. */
			if (left >= n && n > 0) {
				b = xmalloc(n);
				if (pread_all(fd, b, n, name_at + left - n)) {
					free(b);
					b = NULL;
				}
			}
		}
		off += rec[1];
	}
	close(fd);
	return b;
}

static int is_jitdump(const char *path)
{
	const char *base = path_basename(path);
	size_t l = strlen(base);
	return strncmp(base, "jit-", 4) == 0 && l > 9 && strcmp(base + l - 5, ".dump") == 0;
}

/* The code at fn in jit-PID.dump under dir, if that file holds it. */
static uint8_t *jit_in(const char *dir, uint32_t pid, const struct ann_func *fn, size_t n,
		       unsigned *machine, char **from)
{
	char *p = xasprintf("%s/jit-%u.dump", dir, pid);
	uint8_t *b = jitdump_code(p, fn->start, n, machine);
	if (b)
		*from = printable_dup(p);
	free(p);
	return b;
}

/*
 * libprobe announces loaded objects, not every mapping, so the recording
 * does not say where the jitdump was: it is looked for as perf inject
 * --jit would find it, by name, where runtimes write it: beside the
 * recording (node writes it in its working directory, where probe record
 * usually writes too), in the current directory, and under ~/.debug/jit
 * (Java's libperf-jvmti).  A file counts only if it holds a JIT_CODE_LOAD
 * of this very address and size.
 */
static uint8_t *jit_code(const struct report_ctx *c, const struct ann_func *fn, size_t n,
			 unsigned *machine, char **from, char **why)
{
	const struct agg_image *im = agg_image(c->agg, fn->image);
	uint32_t pid = im ? im->pid : 0;
	uint8_t *b = NULL;
	for (size_t i = 0; im && i < im->nmaps && !b; i++) {
		const struct agg_map *m = &im->maps[i];
		if (!m->jit && is_jitdump(m->path) && (b = jitdump_code(m->path, fn->start, n, machine)))
			*from = printable_dup(m->path);
	}
	char *dir = xstrdup(c->opts->file);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	if (!b && strcmp(c->opts->file, "-") != 0)
		b = jit_in(slash ? (*dir ? dir : "/") : ".", pid, fn, n, machine, from);
	free(dir);
	if (!b)
		b = jit_in(".", pid, fn, n, machine, from);
	const char *home = getenv("HOME");
	glob_t g;
	char *pat = home && home[0] == '/' ? xasprintf("%s/.debug/jit/*", home) : NULL;
	if (!b && pat && glob(pat, GLOB_ONLYDIR | GLOB_NOSORT, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc && !b; i++)
			b = jit_in(g.gl_pathv[i], pid, fn, n, machine, from);
		globfree(&g);
	}
	free(pat);
	if (!b)
		*why = xasprintf("JIT code: its bytes are kept only by a jitdump file (node "
				 "--perf-prof, Java's -agentpath:libperf-jvmti.so); no jit-%u.dump "
				 "beside the recording, in this directory or under ~/.debug/jit "
				 "holds this function", pid);
	return b;
}

uint8_t *code_read(const struct report_ctx *c, const struct ann_func *fn, size_t *len,
		   unsigned *machine, char **from, char **why)
{
	*from = *why = NULL;
	*len = 0;
	if (fn->end <= fn->start && fn->kind == ANN_KERNEL) {
		*why = xstrdup("/proc/kallsyms shows this user no kernel addresses "
			       "(kernel.kptr_restrict, or not root): the kernel's functions "
			       "cannot be told apart; run probe annotate as root");
		return NULL;
	}
	if (fn->end <= fn->start) {
		*why = xstrdup("neither a symbol nor .eh_frame says where this function "
			       "starts and ends: only its sampled addresses are shown");
		return NULL;
	}
	if (fn->end - fn->start > CODE_MAX) {
		*why = xasprintf("the function is %" PRIu64 " bytes long, over the %u MiB "
				 "probe annotate disassembles", fn->end - fn->start, CODE_MAX >> 20);
		return NULL;
	}
	size_t n = (size_t)(fn->end - fn->start);
	uint8_t *b = NULL;
	switch (fn->kind) {
	case ANN_ELF:
		b = elf_code(fn, n, machine, from, why);
		break;
	case ANN_KERNEL:
		b = kernel_code(fn, n, machine, from, why);
		break;
	case ANN_JIT:
		b = jit_code(c, fn, n, machine, from, why);
		break;
	case ANN_OTHER:
		*why = xstrdup("no mapping of the recording holds this address");
		break;
	}
	if (b)
		*len = n;
	return b;
}
