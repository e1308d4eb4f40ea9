/*
 * wire.h - the probe wire protocol, shared by libprobe.so (writer) and the
 * probe collector (reader).
 *
 * Contract:
 *   - A stream is a sequence of frames.  A live socket carries frames only; a
 *     recording on disk is a 16-byte file header followed by the same frames
 *     (from any number of processes, interleaved frame by frame), each
 *     followed by its u32 CRC-32 (zlib's crc32 of the frame's bytes), so
 *     that a reader can find frames again after damage.  Files of version 1
 *     have no CRCs; readers still read them.  Version 3 adds the frames
 *     only recordings hold (STACK, STACKED, ZSTD, SYMTAB): stacks written
 *     once, compressed, and named; version 2 files are still read.
 *   - Every integer is little-endian.  A frame is a 12-byte header
 *       u32 size   total frame size in bytes, header included,
 *                  PROBE_FRAME_HDR <= size <= PROBE_FRAME_MAX
 *       u16 type   enum probe_frame_type; unknown types are skipped by size
 *       u16 flags  0, except in HELLO (PROBE_HELLO_*) and EXIT
 *                  (PROBE_EXIT_*); readers ignore flags they do not know
 *       u32 pid    the process the frame describes
 *     followed by (size - 12) bytes of body laid out as documented per type.
 *   - Strings in bodies are u16 length + bytes, no NUL, at most PROBE_STR_MAX.
 *   - "uv" is an unsigned LEB128 varint (at most 10 bytes; a writer may pad
 *     one with continuation bytes to patch it in later); "sv" is a zig-zag
 *     signed varint.
 *   - The first frame a process sends is HELLO.  A HELLO for a pid that was
 *     seen before starts a new process image (exec): its mappings are reset.
 *   - Readers trust nothing: every length, count and address is checked and a
 *     frame that does not decode exactly to its size is an error.
 *
 * Only encoding helpers live here (static inline, async-signal-safe: they
 * touch nothing but the buffer they are given).  The one decoder is
 * collector/data/wire_decode.[ch].
 */
#ifndef PROBE_WIRE_H
#define PROBE_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PROBE_WIRE_VERSION 1u

#define PROBE_FILE_MAGIC "PROBEREC"     /* 8 bytes, no NUL on disk */
#define PROBE_FILE_HDR 16u              /* magic, u32 version, u32 hdr size */
#define PROBE_FILE_VERSION 3u           /* v2, with STACK, STACKED, ZSTD, SYMTAB */
#define PROBE_FILE_V2 2u                /* frames with a CRC-32 after each */
#define PROBE_FILE_V1 1u                /* frames alone */
#define PROBE_FILE_CRC 4u               /* bytes of CRC after a frame (v2) */

/*
 * Root's `probe agent` listens here for every user's processes; a process
 * started with LD_PRELOAD alone connects when no collector of its own
 * user is watching (preload/conn.c).
 */
#define PROBE_HOST_SOCKET "/run/probe/agent.sock"

#define PROBE_FRAME_HDR 12u
#define PROBE_FRAME_MAX (1u << 20)      /* 1 MiB, header included */
#define PROBE_STR_MAX 4096u
#define PROBE_MAX_FRAMES 256u           /* call-stack depth cap */
#define PROBE_MAX_ARGS 256u             /* argv entries carried in HELLO */
#define PROBE_BUILD_ID_MAX 64u
#define PROBE_EVENTS_MAX 8u             /* events sampled in one run (-e a,b) */
#define PROBE_STACK_IDS (1u << 22)      /* STACK ids are below it */
#define PROBE_ZSTD_RAW_MAX (1u << 20)   /* what one ZSTD frame holds */
#define PROBE_SYM_SRC_MAX 16u           /* SYMTAB: source frames of an address */
#define PROBE_SYM_FUNC 0u               /* SYMTAB: a symbol-table function */
#define PROBE_SYM_FDE 1u                /* SYMTAB: a function .eh_frame bounds */

enum probe_frame_type {
	/*
	 * HELLO body:
	 *   u32 version (PROBE_WIRE_VERSION), u32 ppid,
	 *   u32 event_type (perf_event_attr.type, or PROBE_EVENT_TIMER for the
	 *       CPU-time timer fallback), u64 event_config,
	 *   u8 freq (1: value is Hz, 0: value is a period), u64 value,
	 *   u64 start_ns (CLOCK_MONOTONIC; sample times use the same clock),
	 *   str event_name ("cpu-clock"), str exe (absolute path), str comm,
	 *   u16 argc (<= PROBE_MAX_ARGS), argc x str argv,
	 *   then, only when events were sampled beside the first (-e a,b;
	 *   absent in older recordings): u8 nextra (< PROBE_EVENTS_MAX),
	 *   nextra x (u32 type, u64 config, str name): the events of index
	 *   1.. in SAMPLES, at the same frequency or period as the first; with
	 *   --off-cpu the last is of type PROBE_EVENT_OFFCPU (below), whose
	 *   samples are waits weighted in ns (the timer fallback then has
	 *   it alone: nextra 1).
	 * HELLO's frame flags (older recordings: 0, nothing said):
	 *   PROBE_HELLO_KSTATE: the next bits say whether kernel time was
	 *   sampled: PROBE_HELLO_KERNEL set (attr.exclude_kernel = 0), or
	 *   the reason it was not in PROBE_HELLO_KWHY (a PROBE_HELLO_KWHY_*);
	 *   PROBE_HELLO_NOARENA: no arena comes (the process had no sample).
	 */
	PROBE_F_HELLO = 1,
	/*
	 * MAP body: one executable segment of a loaded object.
	 *   u64 start, u64 end (start < end, runtime addresses),
	 *   u64 bias (runtime address = file vaddr + bias),
	 *   u64 pgoff (file offset of the segment),
	 *   u8 build_id_len (<= PROBE_BUILD_ID_MAX), build_id bytes,
	 *   str path ("" never; "[vdso]" for the vDSO)
	 */
	PROBE_F_MAP = 2,
	/* THREAD body: u32 tid, str name (comm, at most 16 bytes usually) */
	PROBE_F_THREAD = 3,
	/*
	 * SAMPLES body: a batch of samples.
	 *   u64 base_ns, uv count (>= 1), then count x sample:
	 *     uv tid, uv dt (time = base_ns + dt), uv weight (event period,
	 *     nanoseconds for clock events), uv event (0: HELLO's first
	 *     event, i: its extra event i),
	 *     uv nframes (1..PROBE_MAX_FRAMES),
	 *     nframes x sv delta: frame[i] = frame[i-1] + delta (frame[-1] = 0).
	 *   frame[0] is the sampled instruction pointer; frame[i > 0] are
	 *   return addresses, caller after callee, down to the outermost frame.
	 *   A stack deeper than PROBE_MAX_FRAMES is cut: its last frame is then
	 *   PROBE_FRAME_TRUNCATED, standing for the callers not sent (readers
	 *   show "[truncated]"; recordings made before it have no such mark).
	 */
	PROBE_F_SAMPLES = 4,
	/*
	 * LOST body: u32 tid (0: the whole process), u32 reason, u64 count.
	 * Counts are deltas since the previous LOST of the same reason and tid.
	 */
	PROBE_F_LOST = 5,
	/*
	 * EXIT body: i32 status (exit code, or 128 + signal, or -1 unknown),
	 *   u64 samples (taken in this process), u32 threads (seen).
	 * Flags: PROBE_EXIT_WAITED when probe record wrote it from the wait
	 * status of a process that sent none (SIGKILL); samples and threads
	 * are then what had arrived.
	 */
	PROBE_F_EXIT = 6,
	/*
	 * SYNC body: u64 time_ns.  Live connections only (never in a
	 * recording): the collector first takes the process's samples taken
	 * before time_ns from its arena (include/probe/arena.h), then reads
	 * on.  Sent before the MAPs of objects loaded after others were
	 * unloaded, and before EXIT.
	 */
	PROBE_F_SYNC = 7,
	/*
	 * UNPROFILED body: u32 pid (the process that runs path, as it names
	 * itself: the sender, or a vfork or posix_spawn child of it), u32
	 * reason (enum probe_unprof_reason), str path.  path will not be
	 * profiled (the exec'ing image can tell): what it runs is missing from
	 * the recording.
	 */
	PROBE_F_UNPROFILED = 8,
	/*
	 * INFO body: the recording's header, written by the collector (probe
	 * record) as the first frame of a recording, never sent by a process
	 * (a connection that sends one is refused).  pid: the collector's.
	 *   u64 start_ns (CLOCK_MONOTONIC, the clock of sample times),
	 *   u64 start_real_ns (CLOCK_REALTIME, ns since the epoch),
	 *   str host (uname nodename), str sysname, str release, str version,
	 *   str machine (uname's), u16 argc (<= PROBE_MAX_ARGS), argc x str
	 *   argv (probe's own command line, as typed).
	 * Recordings made before it have none: readers say "not recorded".
	 */
	PROBE_F_INFO = 9,
	/*
	 * JIT body: the name of code generated at run time, as the process's
	 * runtime wrote it in its perf map (/tmp/perf-PID.map) or jitdump
	 * (jit-PID.dump), read there by the collector, never sent by a
	 * process (a connection that sends one is refused).
	 *   u64 start, u64 size (> 0; start + size does not wrap),
	 *   u8 source (PROBE_JIT_PERFMAP or PROBE_JIT_DUMP), str name.
	 * In stream order: a JIT frame names [start, start + size) for the
	 * samples after it, until another one over the same addresses
	 * (code replaced); samples before the first one over an address
	 * (the collector reads the map after the runtime wrote it) take it.
	 */
	PROBE_F_JIT = 10,
	/*
	 * The frames below are written by the collector into recordings
	 * (file version 3), never sent by a process (a connection that
	 * sends one is refused).
	 *
	 * STACK body: a call stack that STACKED frames after it name by id.
	 *   uv epoch, uv id (< PROBE_STACK_IDS), uv nframes
	 *   (1..PROBE_MAX_FRAMES), uv base (0, or 1 + the id of a STACK of
	 *   the same epoch before it), uv shared (0 without a base; at most
	 *   nframes and the base's frames): the outermost shared frames are
	 *   the base's outermost; then the (nframes - shared) others,
	 *   outermost first, as sv deltas, each from the frame outside it
	 *   (the first from the innermost shared frame, or from 0 without a
	 *   base).  Stacks mostly differ in their innermost frames, near
	 *   their callers: sqlite3's took 34 bytes a stack rather than 75.
	 *   pid:
	 *   the process it was first seen in (ids are the recording's, not a
	 *   process's).  Ids are given afresh in each epoch (the writer
	 *   starts its table again when full, and every so often, so that a
	 *   STACK lost to damage costs its samples until then): a STACK of a
	 *   later epoch than the reader's ends the earlier one's stacks.
	 */
	PROBE_F_STACK = 11,
	/*
	 * STACKED body: SAMPLES whose stacks are named by STACK ids.
	 *   u64 base_ns, uv epoch (of the ids it names), uv count (>= 1),
	 *   then count x sample:
	 *     uv tid, sv dt (time = the previous sample's time + dt; the
	 *     first's previous is base_ns), uv weight, uv event,
	 *     sv stack: its ref less the previous sample's ref in the frame
	 *     (the first's: less 0), a ref being 1 + the id of a STACK before
	 *     it, or 0: the stack follows, uv nframes, nframes x sv delta (a
	 *     free's record of --alloc, whose frames never repeat).  New
	 *     stacks come in order: their refs differ by 1.
	 * Readers present it as SAMPLES.  A sample whose STACK they do not
	 * have (lost to damage, or of another epoch) is left out, and
	 * counted.
	 */
	PROBE_F_STACKED = 12,
	/*
	 * ZSTD body: frames compressed together.
	 *   uv size (1..PROBE_ZSTD_RAW_MAX), then one zstd frame whose
	 *   content is exactly size bytes: whole frames, back to back,
	 *   without CRCs (this frame's CRC covers them), none of them ZSTD.
	 */
	PROBE_F_ZSTD = 13,
	/*
	 * SYMTAB body: the names of one object's sampled addresses, written
	 * at the end of a recording, so that a report names them without
	 * the file (gone, rebuilt, on another machine).
	 *   u8 build_id_len (1..PROBE_BUILD_ID_MAX), build_id, str path,
	 *   uv nfuncs, nfuncs x function containing a sampled address:
	 *     uv start (delta from the previous function's start; the
	 *     first's from 0; ascending), uv size (> 0), u8 kind
	 *     (PROBE_SYM_*), str name (as the binary spells it; "" for
	 *     PROBE_SYM_FDE),
	 *   uv naddrs, naddrs x sampled address with source information:
	 *     uv vaddr (delta from the previous, ascending; ELF addresses,
	 *     return addresses less 1), u8 nsrc (1..PROBE_SYM_SRC_MAX),
	 *     nsrc x (str name ("": none), str file ("": none), uv line,
	 *     u8 inlined): the inline frames innermost first, then the
	 *     containing function.
	 * An object's names may take several SYMTAB frames; a reader merges
	 * them.
	 */
	PROBE_F_SYMTAB = 14,
	PROBE_F_TYPE_MAX
};

enum probe_lost_reason {
	PROBE_LOST_KERNEL = 1,   /* PERF_RECORD_LOST: the mmap ring overflowed */
	PROBE_LOST_THROTTLE = 2, /* PERF_RECORD_THROTTLE: kernel throttled us */
	PROBE_LOST_QUEUE = 3,    /* thread's arena ring full: collector behind */
	PROBE_LOST_SOCKET = 4,   /* collector slow, gone, or file write failed */
	PROBE_LOST_UNWIND = 5,   /* not lost: kept with its leaf only (truncated) */
	PROBE_LOST_THREAD = 6,   /* a thread could not be profiled at all */
	PROBE_LOST_REASON_MAX
};

enum probe_unprof_reason {
	PROBE_UNPROF_STATIC = 1,        /* statically linked: no loader, no preload */
	PROBE_UNPROF_SECURE = 2,        /* setuid/setgid: the loader drops LD_PRELOAD */
	PROBE_UNPROF_NOPRELOAD = 3,     /* its environment has no LD_PRELOAD of ours */
	PROBE_UNPROF_OTHERUSER = 4,     /* it runs as another user: the collector
					   takes no connection from it */
	PROBE_UNPROF_NOTLOADED = 5,     /* the loader did not load libprobe.so
					   (the collector finds these, in /proc) */
	PROBE_UNPROF_REASON_MAX
};

#define PROBE_EVENT_TIMER 0xffffu  /* event_type of the timer fallback */
/*
 * The type of HELLO's last extra event with --off-cpu: the time threads
 * spent off the CPU, weighted in nanoseconds.  Its config: how it was
 * seen (PROBE_OFFCPU_*).  A sample of it whose only frame is
 * PROBE_FRAME_UNSEEN is off-CPU time no wrapper saw (preempted, or blocked
 * in a call probe does not interpose): its stack is not known.
 */
#define PROBE_EVENT_OFFCPU 0xfffeu
#define PROBE_OFFCPU_WRAPPERS 0x1u  /* libc's blocking calls, interposed */
#define PROBE_OFFCPU_CLOCKS 0x2u    /* the rest: wall minus CPU time */
#define PROBE_OFFCPU_WAKES 0x4u     /* calls that wake a waiter (unlock, signal) */
/*
 * Sampled from outside (probe record -p --off-cpu): every switch off the
 * CPU and back, timed by the kernel's switch records; with _STACKS each
 * under the stack where the thread left the CPU (a context-switches
 * event), else PROBE_FRAME_UNSEEN.
 */
#define PROBE_OFFCPU_SWITCHES 0x8u
#define PROBE_OFFCPU_SWITCH_STACKS 0x10u
/*
 * The type of HELLO's last extra event with --alloc (after off-cpu's):
 * allocations sampled by bytes, each sample weighted with the size in
 * bytes that its allocation asked for, its stack where it was allocated.
 * Its config: the mean sampling interval in bytes (a Poisson process:
 * an allocation of n bytes is sampled with chance 1 - exp(-n / config)),
 * 1 when every allocation is recorded.  A reader unbiases each sample's
 * weight by that chance.
 */
#define PROBE_EVENT_ALLOC 0xfffdu
#define PROBE_FRAME_UNSEEN 0x1u
/* The outermost frame of a stack cut at PROBE_MAX_FRAMES (SAMPLES). */
#define PROBE_FRAME_TRUNCATED 0x3u
/*
 * Allocations (PROBE_EVENT_ALLOC) and their frees, for what stays in use:
 *   - an allocation sample's frames end in two words that are not frames:
 *     PROBE_FRAME_ALLOC_ID, then the allocation's id (a number the
 *     process gives each sampled allocation, from 1; 0: not followed,
 *     its free will not be seen);
 *   - the free of a sampled allocation is a sample of the same event whose
 *     frames are PROBE_FRAME_FREED and that id alone, weighted with its
 *     bytes; the thread that frees is not always the one that allocated,
 *     so a free may come before its allocation.
 * Readers split the two words off before they look at the stack.
 */
#define PROBE_FRAME_ALLOC_ID 0x5u
#define PROBE_FRAME_FREED 0x7u

#define PROBE_JIT_PERFMAP 1u        /* JIT's source: /tmp/perf-PID.map */
#define PROBE_JIT_DUMP 2u           /* JIT's source: a jitdump file */

#define PROBE_EXIT_WAITED 0x1u     /* EXIT's flags: see PROBE_F_EXIT */

/* HELLO's frame flags: was kernel time sampled, and if not why. */
#define PROBE_HELLO_KSTATE 0x1u    /* the kernel bits below are meaningful */
#define PROBE_HELLO_KERNEL 0x2u    /* kernel time sampled (exclude_kernel 0) */
#define PROBE_HELLO_KWHY_SHIFT 2
#define PROBE_HELLO_KWHY_MASK 0x1cu
#define PROBE_HELLO_NOUSER 0x20u   /* user space not sampled (-e EVENT:k) */
/*
 * No arena, and none to come: a process that ended before its first
 * sample says only who it was and how it ended (preload/lazy.c).  Not a
 * connection made again, which comes without the arena it already sent.
 */
#define PROBE_HELLO_NOARENA 0x40u
enum probe_hello_kwhy {
	PROBE_HELLO_KWHY_NONE = 0,      /* included, or not said */
	PROBE_HELLO_KWHY_OFF = 1,       /* PROBE_KERNEL=0 */
	PROBE_HELLO_KWHY_DENIED = 2,    /* the kernel refused (EACCES/EPERM):
					   not root, no CAP_PERFMON,
					   perf_event_paranoid >= 2 */
	PROBE_HELLO_KWHY_TIMER = 3,     /* CPU-time timers: user space only */
	PROBE_HELLO_KWHY_SETSIG = 4,    /* F_SETSIG signal: it would break system
					   calls (EINTR); PROBE_KERNEL=1 forces */
	PROBE_HELLO_KWHY_USER = 5,      /* -e EVENT:u asked for user space only */
	PROBE_HELLO_KWHY_MAX
};

/* ---- encoding helpers (async-signal-safe) ------------------------------ */

/* A bounded output buffer.  Writers check ok once at the end. */
struct probe_wbuf {
	uint8_t *p;
	size_t len, cap;
	int ok;
};

static inline void probe_wbuf_init(struct probe_wbuf *w, void *mem, size_t cap)
{
	w->p = (uint8_t *)mem;
	w->len = 0;
	w->cap = cap;
	w->ok = 1;
}

static inline void probe_put_bytes(struct probe_wbuf *w, const void *b, size_t n)
{
	if (!w->ok || n > w->cap - w->len) {
		w->ok = 0;
		return;
	}
	memcpy(w->p + w->len, b, n);
	w->len += n;
}

static inline void probe_put_le(struct probe_wbuf *w, uint64_t v, unsigned n)
{
	uint8_t b[8];
	for (unsigned i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	probe_put_bytes(w, b, n);
}

#define probe_put_u8(w, v)  probe_put_le((w), (uint8_t)(v), 1)
#define probe_put_u16(w, v) probe_put_le((w), (uint16_t)(v), 2)
#define probe_put_u32(w, v) probe_put_le((w), (uint32_t)(v), 4)
#define probe_put_u64(w, v) probe_put_le((w), (uint64_t)(v), 8)

static inline void probe_put_uv(struct probe_wbuf *w, uint64_t v)
{
	uint8_t b[10];
	unsigned n = 0;
	do {
		uint8_t c = v & 0x7f;
		v >>= 7;
		b[n++] = (uint8_t)(c | (v ? 0x80 : 0));
	} while (v);
	probe_put_bytes(w, b, n);
}

static inline void probe_put_sv(struct probe_wbuf *w, int64_t v)
{
	probe_put_uv(w, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

/* Strings longer than PROBE_STR_MAX are cut, never rejected. */
static inline void probe_put_str(struct probe_wbuf *w, const char *s)
{
	size_t n = 0;
	while (s && s[n] && n < PROBE_STR_MAX)
		n++;
	probe_put_u16(w, n);
	probe_put_bytes(w, s, n);
}

/* Start a frame; returns the offset to pass to probe_frame_end. */
static inline size_t probe_frame_begin(struct probe_wbuf *w, unsigned type,
				       uint32_t pid)
{
	size_t at = w->len;
	probe_put_u32(w, 0);
	probe_put_u16(w, type);
	probe_put_u16(w, 0);
	probe_put_u32(w, pid);
	return at;
}

/* Patch the frame's size; a frame over PROBE_FRAME_MAX marks w not ok. */
static inline void probe_frame_end(struct probe_wbuf *w, size_t at)
{
	size_t size = w->len - at;
	if (!w->ok)
		return;
	if (size > PROBE_FRAME_MAX) {
		w->ok = 0;
		return;
	}
	for (unsigned i = 0; i < 4; i++)
		w->p[at + i] = (uint8_t)(size >> (8 * i));
}

/* The 16-byte recording file header. */
/* version: PROBE_FILE_VERSION (frames then CRCs), or PROBE_FILE_V1. */
static inline void probe_put_file_header(struct probe_wbuf *w, uint32_t version)
{
	probe_put_bytes(w, PROBE_FILE_MAGIC, 8);
	probe_put_u32(w, version);
	probe_put_u32(w, PROBE_FILE_HDR);
}

#endif /* PROBE_WIRE_H */
