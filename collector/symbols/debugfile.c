/*
 * debugfile.c - where an object's names are when the file lacks them: a
 * separate debug file (ROOT/.build-id/xx/rest.debug, .gnu_debuglink next
 * to the file, in its .debug/, under ROOT/DIR), perf's build-id cache, and
 * MiniDebugInfo (.gnu_debugdata, xz-compressed; liblzma loaded when first
 * needed).  symbols.h's contract says which is tried when.
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
/* ---- MiniDebugInfo (.gnu_debugdata: an xz-compressed ELF) ------------ */

typedef lzma_ret (*lzma_stream_decoder_fn)(lzma_stream *, uint64_t, uint32_t);
typedef lzma_ret (*lzma_code_fn)(lzma_stream *, lzma_action);
typedef void (*lzma_end_fn)(lzma_stream *);

static struct {
	int tried;
	lzma_stream_decoder_fn decoder;
	lzma_code_fn code;
	lzma_end_fn end;
} xz;

/* liblzma is loaded on first need: most runs never need it. */
static int xz_ready(void)
{
	if (!xz.tried) {
		xz.tried = 1;
		void *h = dlopen("liblzma.so.5", RTLD_LAZY | RTLD_LOCAL);
		if (h) {
			xz.decoder = (lzma_stream_decoder_fn)dlsym(h, "lzma_stream_decoder");
			xz.code = (lzma_code_fn)dlsym(h, "lzma_code");
			xz.end = (lzma_end_fn)dlsym(h, "lzma_end");
		}
		if (!xz.decoder || !xz.code || !xz.end) {
			xz.decoder = NULL;
			probe_warn("liblzma.so.5 is not available: MiniDebugInfo "
				   "(.gnu_debugdata) symbols are not read");
		}
	}
	return xz.decoder != NULL;
}

#define XZ_OUT_MAX (256u << 20)

/* Decompress an .xz buffer; malloc'd, or NULL. */
static uint8_t *xz_decode(const uint8_t *in, size_t n, size_t *outlen)
{
	if (!xz_ready())
		return NULL;
	lzma_stream s = LZMA_STREAM_INIT;
	if (xz.decoder(&s, 1ull << 30, 0) != LZMA_OK)
		return NULL;
	size_t cap = n * 4 + 4096, len = 0;
	uint8_t *out = xmalloc(cap);
	s.next_in = in;
	s.avail_in = n;
	lzma_ret r;
	for (;;) {
		if (len == cap) {
			if (cap >= XZ_OUT_MAX) {
				r = LZMA_MEMLIMIT_ERROR;
				break;
			}
			cap *= 2;
			out = xrealloc(out, cap);
		}
		s.next_out = out + len;
		s.avail_out = cap - len;
		r = xz.code(&s, LZMA_FINISH);
		len = cap - s.avail_out;
		if (r != LZMA_OK)
			break;
	}
	xz.end(&s);
	if (r != LZMA_STREAM_END) {
		free(out);
		return NULL;
	}
	*outlen = len;
	return out;
}

/* Function symbols of the embedded ELF's .symtab; returns how many. */
size_t sym_read_minidebuginfo(struct symobj *o, Elf *e)
{
	GElf_Shdr sh;
	Elf_Scn *scn = sym_find_section(e, ".gnu_debugdata", &sh);
	if (!scn || sh.sh_type == SHT_NOBITS)
		return 0;
	Elf_Data *d = elf_rawdata(scn, NULL);
	if (!d || !d->d_buf || !d->d_size)
		return 0;
	size_t len = 0;
	uint8_t *img = xz_decode(d->d_buf, d->d_size, &len);
	if (!img)
		return 0;
	size_t got = 0;
	Elf *m = elf_memory((char *)img, len);
	if (m && elf_kind(m) == ELF_K_ELF)
		got = sym_read_table(o, m, SHT_SYMTAB);
	if (m)
		elf_end(m);
	free(img);      /* names were copied into the arena */
	if (got)
		o->sources |= SYMSRC_MINIDEBUG;
	return got;
}

/* ---- separate debug files --------------------------------------------- */

/* Does the file at path have this build-id (any, when bidlen is 0)? */
int sym_debug_file_matches(const char *path, const uint8_t *bid, size_t bidlen,
			      int *fdp, Elf **ep)
{
	int fd = open_regular(path);
	if (fd < 0)
		return 0;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF) {
		const void *dbid = NULL;
		ssize_t n = dwelf_elf_gnu_build_id(e, &dbid);
		if (bidlen == 0 || (n == (ssize_t)bidlen && memcmp(dbid, bid, bidlen) == 0)) {
			*fdp = fd;
			*ep = e;
			return 1;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return 0;
}

/*
 * The separate debug file of an object, by build-id under
 * ROOT/.build-id/xx/yyyy.debug, else by .gnu_debuglink next to the file, in
 * .debug/ there, or under ROOT/DIR.  Returns its path (malloc'd) with fd and
 * Elf open, or NULL.
 */
char *sym_find_separate_debug(const struct symcache *c, Elf *e, const char *path,
				 const uint8_t *bid, size_t bidlen, int *fdp, Elf **ep)
{
	if (bidlen >= 2) {
		size_t hl = 2 * bidlen + 1;
		char *hex = xmalloc(hl);
		for (size_t i = 0; i < bidlen; i++)
			snprintf(hex + 2 * i, 3, "%02x", bid[i]);
		char *p = xasprintf("%s/.build-id/%.2s/%s.debug", c->debug_root, hex, hex + 2);
		free(hex);
		if (sym_debug_file_matches(p, bid, bidlen, fdp, ep))
			return p;
		free(p);
	}
	GElf_Word crc;
	const char *link = dwelf_elf_gnu_debuglink(e, &crc);
	if (!link || !*link || strchr(link, '/'))
		return NULL;
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	char *found = NULL;
	char *cands[3] = {
		xasprintf("%s/%s", dir, link),
		xasprintf("%s/.debug/%s", dir, link),
		xasprintf("%s%s/%s", c->debug_root, dir, link),
	};
	for (size_t i = 0; i < 3; i++) {
		if (!found && strcmp(cands[i], path) != 0 &&
		    sym_debug_file_matches(cands[i], bid, bidlen, fdp, ep))
			found = cands[i];
		else
			free(cands[i]);
	}
	free(dir);
	return found;
}

/*
 * A file with exactly the recorded build-id, when the recorded path no
 * longer has it: ROOT/.build-id/xx/rest.debug (a debug package), or perf's
 * build-id cache, ~/.debug/.build-id/xx/rest/{elf,debug} (perf record keeps
 * a copy of every object it saw there).  Its path (malloc'd), fd and Elf
 * open; or NULL.
 */
char *sym_find_by_build_id(const struct symcache *c, const uint8_t *bid, size_t bidlen,
			      int *fdp, Elf **ep)
{
	if (bidlen < 2)
		return NULL;
	char *hex = xmalloc(2 * bidlen + 1);
	for (size_t i = 0; i < bidlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	const char *home = getenv("HOME");
	char *cands[3] = {
		xasprintf("%s/.build-id/%.2s/%s.debug", c->debug_root, hex, hex + 2),
		home && home[0] == '/' ? xasprintf("%s/.debug/.build-id/%.2s/%s/elf", home, hex, hex + 2) : NULL,
		home && home[0] == '/' ? xasprintf("%s/.debug/.build-id/%.2s/%s/debug", home, hex, hex + 2) : NULL,
	};
	free(hex);
	char *found = NULL;
	for (size_t i = 0; i < 3; i++) {
		if (cands[i] && !found && sym_debug_file_matches(cands[i], bid, bidlen, fdp, ep))
			found = cands[i];
		else
			free(cands[i]);
	}
	return found;
}

