/*
 * srcfile.h - the text of source lines, for annotations.
 *
 * Contract:
 *   - srcfile_line() gives line n (1-based) of the file DWARF names, as the
 *     file is now, without its newline, or NULL (no such file or line; the
 *     file is not a regular one, or over SRCFILE_MAX).  Each file is read
 *     once per cache; the text lives as long as the cache.  The text is
 *     as the file has it: writers make it printable (util.h).
 *   - A file newer than the recording may no longer match its lines:
 *     srcfile_newer() says so (its mtime after `when`, seconds since the
 *     epoch), for the one warning the caller gives.
 */
#ifndef PROBE_SRCFILE_H
#define PROBE_SRCFILE_H

#include <stdint.h>

#define SRCFILE_MAX (64u << 20)

struct srcfiles;

struct srcfiles *srcfiles_new(void);
void srcfiles_free(struct srcfiles *s);
const char *srcfile_line(struct srcfiles *s, const char *path, unsigned n);
int srcfile_newer(struct srcfiles *s, const char *path, int64_t when);

#endif
