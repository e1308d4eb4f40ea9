/*
 * elfmap.h - where a mapped file's code sits: the load bias of a mapping
 * the kernel reports (perf's MMAP2, /proc/PID/maps), which libprobe reads
 * from the loader (dl_iterate_phdr) and a sampler from outside must find
 * in the file itself.
 *
 * Contract:
 *   - elfmap_bias(): the file at path mapped at start from file offset
 *     pgoff: *bias such that runtime address = ELF vaddr + bias, read from
 *     the PT_LOAD segment whose file range holds pgoff.  0, or -1 when the
 *     file cannot be read as ELF or no PT_LOAD holds pgoff (nothing said:
 *     the caller knows what the mapping was for).
 *   - What a file says is remembered (256 segments, by device, inode,
 *     size, mtime and pgoff): a build's processes map the same files.
 *   - The file is read through path as the collector sees it; the caller
 *     opens what it may (/proc/PID/map_files, /proc/PID/root) and passes
 *     that path.
 */
#ifndef PROBE_ELFMAP_H
#define PROBE_ELFMAP_H

#include <stdint.h>

int elfmap_bias(const char *path, uint64_t start, uint64_t pgoff, uint64_t *bias);
/* 1 when path is an ELF executable with no PT_INTERP (statically linked:
 * no loader, so no LD_PRELOAD), else 0. */
int elfmap_is_static(const char *path);

#endif
