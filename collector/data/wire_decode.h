/*
 * wire_decode.h - the one decoder of the probe wire protocol (include/probe/
 * wire.h), for live sockets, recorded files and fuzzers' bytes alike.
 *
 * Two layers:
 *   - struct probe_stream splits a byte stream into whole frames, checking
 *     the frame header's size bounds before buffering a body;
 *   - probe_decode_frame() turns one frame into a struct probe_msg, checking
 *     every field; samples are then walked with probe_samples_next().
 * Errors are returned as -1 with a human-readable message in err (no
 * "probe:" prefix: the caller adds context).  Nothing here allocates
 * after init but the stream: its buffer, bounded by PROBE_STREAM_CAP (twice
 * that while skipping damage), and once damage is met, the running CRCs of
 * its bytes (4 bytes a byte of buffer, about 8 MiB).
 */
#ifndef PROBE_WIRE_DECODE_H
#define PROBE_WIRE_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "probe/wire.h"

#define PROBE_ERR_MAX 256

/* A frame and its CRC (a recording of version 2) fit in the stream. */
#define PROBE_STREAM_CAP (PROBE_FRAME_MAX + PROBE_FILE_CRC)

struct probe_crcidx;    /* wire_decode.c: CRCs of damaged bytes, for resync */

/*
 * A reader of a recording skips damage a byte at a time (recfile.h), and
 * that stays linear in the bytes skipped: while resync is set, the bytes
 * where no frame can start (an impossible size, or a header that is not
 * probe_frame_plausible) are passed over (counted in skipped) before a
 * body is waited for or checked, the buffer grows to twice its room so
 * that it moves once per PROBE_STREAM_CAP bytes rather than once per byte,
 * and from the first frame checked while resync is set (or whose CRC does
 * not match), the stream keeps the CRC of every byte from there, so that
 * each later frame there is checked in constant time, not over its size,
 * whether its CRC matches or not.  crc_bytes and moved count that work
 * (tests assert it).  A frame right after one that was taken (resync not
 * set) is checked directly, over its size, once.
 */
struct probe_stream {
	uint8_t *buf;       /* holds at most cap bytes */
	size_t cap;         /* PROBE_STREAM_CAP; twice that once resync was set */
	unsigned crc;       /* each frame is followed by its CRC-32 (file v2) */
	unsigned resync;    /* skipping damage: only a plausible header is one */
	unsigned eof;       /* no more bytes come: a frame wanting more is none */
	size_t len;         /* bytes buffered */
	size_t off;         /* start of the next unread frame */
	size_t last;        /* bytes of the frame last returned (for unget) */
	uint64_t consumed;  /* bytes handed out as frames or skipped so far */
	uint64_t skipped;   /* bytes passed over: probe_stream_skip, resync */
	uint64_t crc_bytes; /* bytes run through CRC-32 in all */
	uint64_t moved;     /* bytes moved to the buffer's front in all */
	struct probe_crcidx *ci;        /* NULL until damage is met */
};

int probe_stream_init(struct probe_stream *s);
void probe_stream_free(struct probe_stream *s);
/* Append up to n bytes; returns how many were taken (less when full). */
size_t probe_stream_feed(struct probe_stream *s, const void *data, size_t n);
/* Space to read into directly, and commit after a read(2). */
uint8_t *probe_stream_space(struct probe_stream *s, size_t *avail);
void probe_stream_commit(struct probe_stream *s, size_t n);
/*
 * Next whole frame: 1 and *frame, *len set (valid until the next call), 0 when
 * more bytes are needed, -1 on a bad header or CRC, or (eof) a frame cut
 * short (err says why).
 */
int probe_stream_next(struct probe_stream *s, const uint8_t **frame,
		      size_t *len, char err[PROBE_ERR_MAX]);
/* Bytes of an incomplete frame left over at end of stream (0 = clean). */
size_t probe_stream_pending(const struct probe_stream *s);
/* Put back the frame probe_stream_next last returned (it did not decode). */
void probe_stream_unget(struct probe_stream *s);
/* Pass over n of the pending bytes (damage). */
void probe_stream_skip(struct probe_stream *s, size_t n);
/*
 * Whether a frame header (PROBE_FRAME_HDR bytes) can start a frame met
 * while skipping damage: a known type other than SYNC, with no flag but
 * those of its type (HELLO: PROBE_HELLO_*, EXIT: PROBE_EXIT_*; others 0).
 */
int probe_frame_plausible(const uint8_t *hdr);

/*
 * Check a recording's 16-byte header; -1 with err if it is not one.  Its
 * version in *version: PROBE_FILE_VERSION or V2 (set the stream's crc), or
 * V1.
 */
int probe_file_header_check(const uint8_t *p, size_t n, uint32_t *version,
			    char err[PROBE_ERR_MAX]);

struct probe_sample {
	uint32_t tid;
	uint32_t event;
	uint64_t time_ns;
	uint64_t weight;
	uint32_t nframes;
	uint64_t frames[PROBE_MAX_FRAMES];
};

struct probe_msg {
	unsigned type;          /* enum probe_frame_type, or other: skip */
	uint32_t pid;
	union {
		struct {
			uint32_t version, ppid, event_type;
			uint64_t event_config;
			uint8_t freq;
			uint64_t value, start_ns;
			const char *event_name, *exe, *comm;
			uint16_t argc;
			const char **argv;      /* argc entries */
			uint16_t flags;         /* the frame's: PROBE_HELLO_* */
			uint8_t nextra;         /* events sampled beside the first */
			struct {
				uint32_t type;
				uint64_t config;
				const char *name;
			} extra[PROBE_EVENTS_MAX - 1];
		} hello;
		struct {
			uint64_t start, end, bias, pgoff;
			uint8_t build_id_len;
			uint8_t build_id[PROBE_BUILD_ID_MAX];
			const char *path;
		} map;
		struct {
			uint32_t tid;
			const char *name;
		} thread;
		struct {
			uint64_t base_ns;
			uint64_t count;
			/* private cursor for probe_samples_next */
			const uint8_t *p, *end;
			uint64_t left;
			/* a STACKED frame (file v3), read as SAMPLES: the
			   reader sets stacks (NULL: every sample left out) */
			int stacked;
			uint64_t epoch, prev_ns, prev_ref;
			struct probe_stacks *stacks;
		} samples;
		struct {
			uint64_t epoch;
			uint32_t id, nframes;
			uint32_t base;          /* 0, or 1 + the id it shares with */
			uint32_t shared;        /* outermost frames, the base's */
			const uint8_t *frames;  /* nframes - shared zig-zag deltas */
			size_t frames_len;
		} stack;
		struct {
			uint64_t size;          /* of the frames it holds */
			const uint8_t *data;    /* one zstd frame */
			size_t len;
		} zstd;
		struct {
			uint8_t build_id_len;
			uint8_t build_id[PROBE_BUILD_ID_MAX];
			const char *path;
			uint64_t nfuncs, naddrs;
			/* what probe_symtab_next_* walk: validated */
			const uint8_t *funcs, *addrs, *end;
		} symtab;
		struct {
			uint32_t tid, reason;
			uint64_t count;
		} lost;
		struct {
			int32_t status;
			uint64_t samples;
			uint32_t threads;
		} exit;
		struct {
			uint64_t time_ns;
		} sync;
		struct {
			uint32_t pid, reason;
			const char *path;
		} unprof;
		struct {
			uint64_t start_ns, start_real_ns;
			const char *host, *sysname, *release, *version, *machine;
			uint16_t argc;
			const char **argv;      /* argc entries */
		} info;
		struct {
			uint64_t start, size;
			uint8_t source;         /* PROBE_JIT_* */
			const char *name;
		} jit;
	} u;
};

/*
 * Scratch memory for decoded strings: valid until the next decode with the
 * same scratch.  One per reader.
 */
struct probe_scratch {
	char *mem;
	size_t cap, len;
	size_t examined;        /* bytes the last decode read: what it cost */
	const char *argv[PROBE_MAX_ARGS];
};

int probe_scratch_init(struct probe_scratch *sc);
void probe_scratch_free(struct probe_scratch *sc);

/*
 * Decode one whole frame (as returned by probe_stream_next).  For SAMPLES the
 * whole body is validated here, so probe_samples_next cannot fail afterwards.
 * Returns 0, or -1 with err.
 */
int probe_decode_frame(const uint8_t *frame, size_t len, struct probe_msg *m,
		       struct probe_scratch *sc, char err[PROBE_ERR_MAX]);

/*
 * Next sample of a decoded SAMPLES message: 1 and *out filled, 0 at end.
 * A STACKED frame (file v3, decoded as SAMPLES with stacked set) names its
 * stacks by id: its samples whose STACK the reader's table (samples.stacks,
 * set by the reader; NULL: none) does not hold are skipped, and counted in
 * that table's unknown.
 */
int probe_samples_next(struct probe_msg *m, struct probe_sample *out);

/*
 * The same walk without decoding the frames: the sample's fields and where
 * its nframes zig-zag deltas lie in the (validated) frame, so that a reader
 * can intern a stack by its encoded bytes and decode only the stacks it has
 * not seen (probe_sample_frames: returns nframes, frames into out, which
 * must hold PROBE_MAX_FRAMES).  The pointers are valid as long as the frame.
 */
struct probe_sample_raw {
	uint32_t tid;
	uint32_t event;
	uint32_t nframes;
	uint64_t time_ns;
	uint64_t weight;
	const uint8_t *frames;
	size_t frames_len;
	/* A STACKED sample's stack: its id, and the serial of the STACK that
	   defined it (0: the stack came inline, or from SAMPLES), so that a
	   reader can cache what it made of it. */
	uint32_t stack_id;
	uint64_t stack_serial;
};

/*
 * The STACKs of a recording read so far, by id (file v3): what a STACKED
 * frame's samples are expanded with.  Bounded: definitions past
 * PROBE_STACKS_BYTES of stacks held are refused (counted), and so are
 * the samples that name them.
 */
#define PROBE_STACKS_BYTES (256u << 20)

struct probe_stack_def {
	uint64_t serial;        /* 0: not defined */
	uint8_t *frames;        /* zig-zag deltas, as in SAMPLES */
	uint32_t len, nframes;
};

struct probe_stacks {
	struct probe_stack_def *v;      /* by id; cap entries */
	size_t cap;
	uint64_t epoch;         /* of the definitions held */
	uint64_t serial;        /* definitions taken so far */
	uint64_t bytes;         /* held */
	uint64_t unknown;       /* samples left out: their STACK is not here */
	uint64_t refused;       /* definitions over the bound */
};

/* Take a decoded STACK (one of a later epoch first forgets those held);
   0, or -1 (over the bound: counted; of an earlier epoch, or whose base
   is not held: not held, so that the samples naming it are left out). */
int probe_stacks_define(struct probe_stacks *t, const struct probe_msg *m);
void probe_stacks_free(struct probe_stacks *t);

int probe_samples_next_raw(struct probe_msg *m, struct probe_sample_raw *out);
uint32_t probe_sample_frames(const struct probe_sample_raw *s, uint64_t *out);
/* Is it a free's record (--alloc: PROBE_FRAME_FREED, id), not a sample? */
int probe_sample_is_free(const struct probe_sample_raw *s);

/*
 * A SYMTAB's entries (validated by the decoder), in order: 1 and *out
 * filled, 0 at the end.  Strings point into the frame (len bytes, not
 * NUL-terminated), valid as long as it.
 */
struct probe_symfunc {
	uint64_t start, size;
	uint8_t kind;           /* PROBE_SYM_* */
	const char *name;
	size_t name_len;
};
struct probe_symsrc {
	const char *name, *file;        /* NULL when "" */
	size_t name_len, file_len;
	uint64_t line;
	uint8_t inlined;
};
struct probe_symaddr {
	uint64_t vaddr;
	uint8_t nsrc;
	struct probe_symsrc src[PROBE_SYM_SRC_MAX];
};
struct probe_symtab_walk {
	const uint8_t *p, *end;
	uint64_t left, prev;
};
void probe_symtab_funcs(const struct probe_msg *m, struct probe_symtab_walk *w);
int probe_symtab_next_func(struct probe_symtab_walk *w, struct probe_symfunc *out);
void probe_symtab_addrs(const struct probe_msg *m, struct probe_symtab_walk *w);
int probe_symtab_next_addr(struct probe_symtab_walk *w, struct probe_symaddr *out);

/* "HELLO", "MAP", ... or "type N" (static or thread-unsafe buffer). */
const char *probe_frame_type_name(unsigned type);
const char *probe_lost_reason_name(unsigned reason);
const char *probe_unprof_reason_name(unsigned reason);

#endif /* PROBE_WIRE_DECODE_H */
