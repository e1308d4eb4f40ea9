/*
 * ehframe.h - the address ranges of an object's functions from its
 * .eh_frame (one FDE per function, or per part of one: "foo.cold" has its
 * own), for naming code that no symbol names (stripped libraries).
 *
 * Contract:
 *   - ehframe_ranges() reads the .eh_frame section's bytes (buf, len: the
 *     section as it is in the file; vaddr: its sh_addr; ptrsize: 4 or 8, the
 *     ELF class) record by record, once: each FDE's [pc_begin,
 *     pc_begin + pc_range) as ELF addresses.  Pointers may be absolute or
 *     pc-relative (DW_EH_PE_absptr, _pcrel; any of the integer formats);
 *     FDEs of CIEs using anything else (textrel, datarel, indirect) are left
 *     out.  Little-endian only.
 *   - The file is untrusted: every read is bounded by buf + len, a CIE is
 *     parsed in bounded time (its augmentation string and LEB128 numbers
 *     have caps) and kept in a small cache, so the walk is linear in len
 *     and the sort n log n.  Reading stops at a zero length (the
 *     terminator, or a sparse hole) or at the first record that does not
 *     fit.  Empty ranges and ranges that wrap around are left out.
 *   - The result is sorted by start, one range per start (the longest),
 *     and no two overlap: a range that runs into the next is cut where the
 *     next begins.  *out is malloc'd (NULL when the count is 0).
 *   - ehframe_find(): the range containing vaddr, or NULL (binary search).
 *   - ehframe_hdr_target(): where .eh_frame is (an ELF address), from the
 *     .eh_frame_hdr at hdr (len bytes, at ELF address hdr_vaddr): for files
 *     without section headers (sstrip), found through PT_GNU_EH_FRAME.  1,
 *     or 0 when the header is not one we read.
 *
 * The collector's frame-rule learner (collector/ingest/cfi_learn.c) reads
 * the same records for another purpose (CFA programs, through
 * .eh_frame_hdr's table, in the image's address space); the two readers
 * are kept apart so that neither's bounds checks depend on the other.
 */
#ifndef PROBE_EHFRAME_H
#define PROBE_EHFRAME_H

#include <stddef.h>
#include <stdint.h>

struct ehf_range {
	uint64_t start, end;
};

size_t ehframe_ranges(const uint8_t *buf, size_t len, uint64_t vaddr, unsigned ptrsize,
		      struct ehf_range **out);
const struct ehf_range *ehframe_find(const struct ehf_range *r, size_t n, uint64_t vaddr);
int ehframe_hdr_target(const uint8_t *hdr, size_t len, uint64_t hdr_vaddr, unsigned ptrsize,
		       uint64_t *eh_frame_vaddr);

#endif
