/*
 * buildid.h - the GNU build-id of a loaded object, read from its PT_NOTE
 * segments in memory.  libprobe sends it in MAP frames (preload/maps.c);
 * the synthetic senders and recordings of the bench and tests send the same.
 */
#ifndef PROBE_BUILDID_H
#define PROBE_BUILDID_H

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "probe/wire.h"

/* Its length (at most PROBE_BUILD_ID_MAX bytes, copied to out), or 0. */
static inline unsigned probe_build_id(const struct dl_phdr_info *info,
				      uint8_t *out)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			size_t name = (n->n_namesz + 3u) & ~3u;
			size_t desc = (n->n_descsz + 3u) & ~3u;
			const uint8_t *np = p + sizeof *n;

			if (name > (size_t)(end - np) ||
			    desc > (size_t)(end - np) - name)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(np, "GNU", 4) == 0 && n->n_descsz > 0 &&
			    n->n_descsz <= PROBE_BUILD_ID_MAX) {
				memcpy(out, np + name, n->n_descsz);
				return n->n_descsz;
			}
			p = np + name + desc;
		}
	}
	return 0;
}

#endif
