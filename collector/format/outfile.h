/*
 * outfile.h - where a report goes: standard output, or a file named by -o.
 *
 * Contract:
 *   - outfile_open(): NULL or "-" is standard output.  A regular file (or
 *     nothing) at path is written as path.XXXXXX beside it and renamed into
 *     place by outfile_close() when the report is whole: a report that
 *     fails leaves what was there, and a symbolic link planted at path is
 *     replaced, never followed.  A FIFO, a character device (/dev/null) or
 *     /dev/stdout is written as it is; a directory is refused.  -1 after
 *     one "probe:" message.
 *   - outfile_close(o, rc): rc is the format's result; flushes, renames (or
 *     removes the partial file when rc < 0 or a write failed) and returns
 *     0, or -1 after a message.
 */
#ifndef PROBE_OUTFILE_H
#define PROBE_OUTFILE_H

#include <stdio.h>

struct outfile {
	FILE *f;
	const char *path;       /* NULL: standard output */
	char *tmp;              /* the file being written, renamed at the end */
};

int outfile_open(struct outfile *o, const char *path);
int outfile_close(struct outfile *o, int rc);

#endif
