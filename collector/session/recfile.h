/*
 * recfile.h - the recording file that `probe record` writes: the 16-byte
 * header, then frames exactly as they arrived.
 *
 * Contract:
 *   - recfile_open() renames whatever file or symbolic link is at path to
 *     path.old (as perf does; never following the link), refuses a device,
 *     FIFO, socket or directory, creates path with O_EXCL | O_NOFOLLOW (mode
 *     0600: a recording holds the command line) and buffers the header; -1
 *     after one message.
 *   - recfile_frame() buffers a frame and its CRC-32 (include/probe/wire.h);
 *     the first write error is kept, reported once
 *     by recfile_close(), and later writes are dropped.
 *   - recfile_close() flushes and closes; 0, or -1 after a message (the file
 *     size limit, ulimit -f, is said as such: the collector ignores
 *     SIGXFSZ).
 */
#ifndef PROBE_RECFILE_H
#define PROBE_RECFILE_H

#include <stddef.h>
#include <stdint.h>

struct recfile {
	int fd;
	char *path;
	uint8_t *buf;
	size_t len, cap;
	uint64_t bytes;         /* accepted so far, header included; after
				   recfile_close, what the file holds */
	uint64_t written;       /* bytes that reached the file */
	int err;                /* errno of the first failed write, or 0 */
	int regular;            /* path is a regular file (not /dev/null...) */
};

int recfile_open(struct recfile *f, const char *path);
void recfile_frame(struct recfile *f, const void *frame, size_t n);
/* Write out what is buffered (so a crash of probe loses little). */
void recfile_flush(struct recfile *f);
int recfile_close(struct recfile *f);
/* "probe: see it with: probe report PATH; as a flame graph: ..." */
void recfile_hint(const char *path);
/* Close and remove the file when nothing was recorded (regular files only). */
void recfile_discard(struct recfile *f);

#endif
