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
 *     recfile_msg() the same for a frame its caller decoded already (m:
 *     its samples not walked yet), which it is not decoded again for;
 *     the first write error is kept, reported once
 *     by recfile_close(), and later writes are dropped.
 *   - recfile_close() writes the names of what was sampled (recnames.h:
 *     SYMTAB frames, from the files on disk now), flushes and closes; 0,
 *     or -1 after a message (the file size limit, ulimit -f, is said as
 *     such: the collector ignores SIGXFSZ).  Frames go through recpack.h:
 *     each distinct stack written once, blocks compressed.
 *   - recfile_read() reads a recording back through the one decoder
 *     (wire_decode.h), a buffer at a time, and hands each frame that
 *     decodes to take() in file order.  Damage (a flipped byte, a short
 *     write on a full disk and later appends) is read as a log is: what
 *     does not decode is skipped a byte at a time until a frame decodes
 *     again (while skipping, only a plausible frame is taken for one), and
 *     one warning at the end says how much was skipped; a last frame cut
 *     short is one warning too.  Time is linear in the file's size however
 *     it is damaged (wire_decode.h says how); a file whose frames check out
 *     but fail to decode over and over, decoding and checking the CRCs of
 *     more than RECFILE_WASTE_PER_BYTE times what was read (forged: never
 *     met by damage), is read no further, with a warning.  0, or -1 after one
 *     message (not a recording, unreadable, not one frame intact).
 */
#ifndef PROBE_RECFILE_H
#define PROBE_RECFILE_H

#include <stddef.h>
#include <stdint.h>

#include "data/wire_decode.h"

struct probe_msg;

struct recpack;
struct recnames;

struct recfile {
	int fd;
	struct recpack *pack;   /* stacks once, blocks compressed (recpack.h) */
	struct recnames *names; /* what its names need (recnames.h) */
	struct probe_scratch sc;        /* recfile_frame's decoding */
	size_t named;           /* objects whose names it carries (at close) */
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
void recfile_msg(struct recfile *f, const void *frame, size_t n, const struct probe_msg *m);
/* -z: how hard frames are compressed (recpack.h), before the first frame. */
void recfile_level(struct recfile *f, int level);
/* While recording, often: work ahead for the end (recnames_idle). */
void recfile_idle(struct recfile *f, uint64_t now);
/* Write out what is buffered (so a crash of probe loses little). */
void recfile_flush(struct recfile *f);
int recfile_close(struct recfile *f);
/* "probe: see it with: probe report PATH; as a flame graph: ... -o NAME.svg"
 * (NAME: PATH less a .probe or .data ending) */
void recfile_hint(const char *path);
/* Close and remove the file when nothing was recorded (regular files only). */
void recfile_discard(struct recfile *f);

/* Frames that checked out but failed to decode may have taken this many
 * bytes (decoded, and run through CRC-32) per byte read, and 64 MiB more,
 * before a recording is given up as forged. */
#define RECFILE_WASTE_PER_BYTE 8
/* Compressed blocks may unpack into this many bytes per byte read (and 64
   MiB more); past it the file is read no further, with a warning. */
#define RECFILE_UNPACK_PER_BYTE 1024

/* The recording at fd (file: its name, for messages), frame by frame. */
int recfile_read(const char *file, int fd,
		 void (*take)(void *arg, struct probe_msg *m), void *arg);

#endif
