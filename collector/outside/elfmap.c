/*
 * elfmap.c - a mapping's load bias from the file's program headers:
 * elfmap.h says what.  The kernel maps a PT_LOAD segment from the page
 * that holds its p_offset, at the page that holds its p_vaddr + bias; so
 * pgoff lies in [p_offset rounded down to a page, p_offset + p_filesz),
 * and start is the runtime address of file offset pgoff.
 */
#include "elfmap.h"

#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

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

int elfmap_bias(const char *path, uint64_t start, uint64_t pgoff, uint64_t *bias)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	int rc = -1;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Phdr ph;
	if (e && elf_kind(e) == ELF_K_ELF && load_of(e, pgoff, &ph) == 0) {
		/* file offset pgoff is vaddr p_vaddr + (pgoff - p_offset) */
		*bias = start - (ph.p_vaddr + pgoff - ph.p_offset);
		rc = 0;
	}
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}

int elfmap_is_static(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
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
