/*
 * elfmap.c - a mapping's load bias from the file's program headers:
 * elfmap.h says what.  The kernel maps a PT_LOAD segment from the page
 * that holds its p_offset, at the page that holds its p_vaddr + bias; so
 * pgoff lies in [p_offset rounded down to a page, p_offset + p_filesz),
 * and start is the runtime address of file offset pgoff.
 */
#include "outside/elfmap.h"

#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#define PAGE 4096u

/* The PT_LOAD of e whose file range holds pgoff: its header in *ph. */
static int load_of(Elf *e, uint64_t pgoff, GElf_Phdr *ph)
{
	size_t n;
	if (elf_getphdrnum(e, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(e, (int)i, ph) || ph->p_type != PT_LOAD)
			continue;
		uint64_t lo = ph->p_offset & ~(uint64_t)(PAGE - 1);
		if (pgoff >= lo && pgoff < ph->p_offset + ph->p_filesz)
			return 0;
	}
	return -1;
}

/*
 * What a file's segment says, remembered: every process of a build maps
 * the same libc and cc1, and the sampler meets each process's mappings
 * (elf_begin and a header walk, each time) at its first sample.  Keyed by
 * the file's identity (device, inode, size, mtime) and pgoff.
 */
#define CACHE_N 256u

struct seg {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	uint64_t pgoff, delta;          /* delta: p_vaddr - p_offset */
	int ok, used;
};

static struct seg cache[CACHE_N];
static unsigned cache_next;

static struct seg *cache_find(const struct stat *st, uint64_t pgoff)
{
	for (unsigned i = 0; i < CACHE_N; i++) {
		struct seg *c = &cache[i];
		if (c->used && c->dev == st->st_dev && c->ino == st->st_ino &&
		    c->size == st->st_size && c->pgoff == pgoff &&
		    c->mtime.tv_sec == st->st_mtim.tv_sec &&
		    c->mtime.tv_nsec == st->st_mtim.tv_nsec)
			return c;
	}
	return NULL;
}

int elfmap_bias(const char *path, uint64_t start, uint64_t pgoff, uint64_t *bias)
{
	int fd = open_regular(path);    /* a process named it: no device, no FIFO */
	struct stat st;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	struct seg *c = cache_find(&st, pgoff);
	if (!c) {
		c = &cache[cache_next++ % CACHE_N];
		*c = (struct seg){ st.st_dev, st.st_ino, st.st_size, st.st_mtim, pgoff, 0, 0, 1 };
		elf_version(EV_CURRENT);
		Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		GElf_Phdr ph;
		if (e && elf_kind(e) == ELF_K_ELF && load_of(e, pgoff, &ph) == 0) {
			/* file offset pgoff is vaddr p_vaddr + (pgoff - p_offset) */
			c->delta = ph.p_vaddr - ph.p_offset;
			c->ok = 1;
		}
		if (e)
			elf_end(e);
	}
	close(fd);
	if (!c->ok)
		return -1;
	*bias = start - (c->delta + pgoff);
	return 0;
}

int elfmap_is_static(const char *path)
{
	int fd = open_regular(path);
	if (fd < 0)
		return 0;
	int st = 0;
	size_t n;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF && elf_getphdrnum(e, &n) == 0) {
		st = 1;
		for (size_t i = 0; i < n && st; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type == PT_INTERP)
				st = 0;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return st;
}
