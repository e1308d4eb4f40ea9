/*
 * ingest.h - the collector's side of the socket: accepting the processes'
 * connections and turning their bytes into validated frames (probe record
 * and probe top share it).
 *
 * Contract:
 *   - The owner fills ep (an epoll fd), lfd (a listening socket, usock.h),
 *     lfd_tag (lfd's data.ptr in ep), uid (the only peer uid
 *     accepted), what ("recorded"/"watched", for a message), the callbacks
 *     and ctx, and inits sc; it closes those fds and frees sc itself.
 *     With accept_polled (probe record), lfd is not in ep: the loop
 *     accepts on every turn, at most INGEST_POLL_MS apart (session/loop.c),
 *     so that a connection wakes nobody (a process whose start waited
 *     connects only as it ends: preload/lazy.c).
 *   - A HELLO with PROBE_HELLO_NOARENA brings no arena and never will: it
 *     takes no arena over from a connection of its pid that ended.
 *   - ingest_accept_all() takes every pending connection: a peer of another
 *     uid (SO_PEERCRED) is refused, unless any_uid (root's host agent);
 *     each one accepted is added to ep with
 *     data.ptr = its struct ingest_conn, then opened() is called.
 *   - ingest_read() does at most INGEST_READS bounded non-blocking reads of
 *     one connection (call it when ep reports it) and hands each frame that
 *     decodes, names the process's pid and (the first) is a HELLO to
 *     frame(); the message lives in sc until the next decode.  Bad data, a
 *     read error or the end closes the connection.  frame() may call
 *     ingest_read() on other connections.
 *   - A process in another PID namespace names itself by its pid there: the
 *     connection's frames must all carry the pid its HELLO said, and frame()
 *     gets them rewritten to the peer's pid as we see it (SO_PEERCRED), so
 *     that pids stay unique in a recording; its main thread's tid too.
 *   - The process's samples are in its arena (include/probe/arena.h), whose
 *     descriptor comes with the HELLO: arena_read.c turns what it finds
 *     there into SAMPLES, THREAD and LOST frames for frame(), as if they had
 *     come over the socket.  ingest_poll() reads every arena; call it at
 *     least every ingest_timeout() ms.  A SYNC frame reads the arena up to
 *     its time first (it is not passed on); closing a connection reads the
 *     arena one last time: what a killed process sampled is not lost.
 *   - A connection that ends while its process lives on (the program
 *     closed our socket behind libprobe's back, or exec'd something
 *     libprobe does not follow) leaves its arena attached and read: the
 *     connection stays, without a socket, until the process ends (its
 *     pidfd) or a new connection of the same pid takes the arena over
 *     (a HELLO without a descriptor: libprobe lost its own too) or brings
 *     a new one (a new image: the old arena is read one last time first).
 *   - With quiet set (probe record and probe top, whose processes wait for
 *     nothing), a connection whose arena is attached is watched for its
 *     end only (EPOLLRDHUP), and ingest_poll() reads what it sent before
 *     its arena, as a SYNC would: a process's MAP or SYNC then costs it a
 *     send, not a wakeup of the collector, which in a VM is most of the
 *     cost (a dlopen/dlclose loop spent 8 % of its time there).  The
 *     order holds: what a process sends before it samples is read before
 *     its arena in the same poll.
 *   - The arena's wake socket (arena.h), when one came with it, is in ep
 *     with data.ptr = the connection that reads the arena: ingest_read()
 *     empties it and reads the socket's frames and the arena at once (a
 *     thread's ring passed half full), whatever the poll's time.
 *   - After an UNPROFILED frame for a static program has been handed on,
 *     the process gets one byte ("U"): it waits for it before its exec,
 *     so that frame() can open events that start at the exec (record.c).
 *   - After an EXIT frame has been handed on, the process gets one byte
 *     back: with a collector it started itself, libprobe waits for it.
 *   - ingest_close() closes c (closed() is called; with warn_partial, a
 *     frame cut short is noted); c stays allocated, marked dead, until
 *     ingest_free_dead(), to be called after each epoll batch.
 *   - note() gets every message, already formatted, with its kind: the
 *     owner decides where it goes, or drops it.
 *   - ingest_raise_nofile() lifts RLIMIT_NOFILE to its hard limit: many
 *     processes may connect at once (call it after forking the command).
 *   - Out of descriptors (EMFILE, ENFILE), ingest_accept_all() stops
 *     accepting: lfd leaves ep (lfd_tag is its data.ptr, to put it back)
 *     for INGEST_PAUSE_MIN_MS, doubling while it lasts up to
 *     INGEST_PAUSE_MAX_MS; the connections wait in lfd's queue meanwhile.
 *     ingest_timeout() counts the pause and ingest_poll() ends it.  It
 *     never spins; the times are counted (nofile) and said once a minute
 *     at most.  Without lfd_tag it only returns.
 *   - What a process says is believed as far as the kernel confirms it
 *     (peer.h, scrub.h): its HELLO must name its own pid in its own PID
 *     namespace; with any_uid, a peer of another uid gets its MAPs
 *     checked and, if it could not read kernel symbols itself, its kernel
 *     frames unnamed; it may hold INGEST_UID_CONNS connections per uid,
 *     INGEST_OTHERS_CONNS for all uids but ours, INGEST_PID_CONNS per
 *     process; its connection closes once its process has ended (checked
 *     every second), even if a child keeps the socket open.
 */
#ifndef PROBE_INGEST_H
#define PROBE_INGEST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ingest/cfi_learn.h"
#include "ingest/peer.h"
#include "data/wire_decode.h"

/* Reads per connection per wakeup, so one busy process cannot starve others. */
#define INGEST_READS 16

enum ingest_note {
	INGEST_BAD_DATA,        /* a bad frame or stream: the connection is dropped */
	INGEST_READ_ERROR,      /* read() failed (not ECONNRESET) */
	INGEST_PARTIAL,         /* the connection ended inside a frame */
	INGEST_REFUSED,         /* a peer of another uid, or one not identified */
	INGEST_NOFILE,          /* out of fds: a connection was dropped */
	INGEST_UNWATCHED,       /* epoll_ctl failed for a new connection */
	INGEST_ARENA,           /* an arena that cannot be read */
	INGEST_UNVERIFIED,      /* a MAP the kernel does not confirm (scrub.h) */
	INGEST_LIMIT,           /* a connection over its user's or process's share */
};

/*
 * Root's agent (any_uid) among users: what one uid other than ours, all
 * of them, and one process may hold of it at once (connections: each
 * costs up to about 1.3 MiB busy, its stream buffer and arena reader,
 * and maps its arena: address space, 1 GiB by default and up to 16 GiB
 * (-m 4M), of the process's memory).
 * More are refused, counted, and said at most once a minute.
 */
#define INGEST_UID_CONNS 64
#define INGEST_OTHERS_CONNS 512
#define INGEST_PID_CONNS 8
/* ... and the objects of one process it learns frame rules for. */
#define INGEST_UNTRUSTED_MAPS 8192
/* Out of descriptors: stop accepting for this long, doubling up to the max. */
#define INGEST_PAUSE_MIN_MS 50
#define INGEST_PAUSE_MAX_MS 2000
#define INGEST_SAY_NS (60ull * 1000000000)

/*
 * How often arenas are read (ms), while any is attached; every ms while
 * handlers ask for frame rules (until then libunwind walks their stacks,
 * at about 0.5 us a frame).
 */
#define INGEST_POLL_MS 10
#define INGEST_POLL_LEARN_MS 1

struct arena_reader;

struct ingest_conn {
	int fd;
	uint64_t seq;           /* order of acceptance */
	pid_t pid;              /* the peer's, from SO_PEERCRED */
	uid_t uid;              /* ... and its uid */
	uint32_t wire_pid;      /* the pid it names itself by (its namespace) */
	int hello;              /* its first frame (a HELLO) arrived */
	int noarena;            /* its HELLO said no arena comes (PROBE_HELLO_NOARENA) */
	int dead;               /* closed; freed by ingest_free_dead */
	int arena_fd;           /* received, not yet mapped; -1 */
	int wake_fd;            /* its wake socket, received with it; -1 */
	struct arena_reader *ar;        /* its arena, or NULL */
	int pidfd;              /* its process, or -1 */
	int orphan;             /* socket gone, process and arena still there */
	int exit_seen;          /* an EXIT frame came */
	int quiet;              /* ep wakes us for its end only (ingest.quiet) */
	struct cfi_maps maps;   /* its objects, for learning frame rules */
	struct peer peer;       /* what the kernel says of it (peer.h) */
	int hide_kernel;        /* may not read kernel symbols: scrub.h */
	uint64_t alive_checked; /* another user's: its process checked again then */
	struct probe_stream s;
	struct ingest_conn *prev, *next;
};

struct ingest {
	int ep, lfd;
	uid_t uid;
	const char *what;
	struct probe_scratch sc;
	struct ingest_conn *conns, *dead;
	unsigned nconns, narenas;
	uint64_t accepted;
	uint64_t last_poll;
	int learning;           /* rules were asked for at the last poll */
	uint64_t drop_before_ns;        /* record -D: samples before this (monotonic) */
	uint64_t dropped;               /* ... dropped so far */
	int quiet;                      /* read connections that have an arena on
					   the poll, not when data arrives */
	int any_uid;                    /* root's host agent: every uid may connect */
	int live_roots;                 /* MAPs of other mount namespaces: scrub.h */
	void *lfd_tag;                  /* lfd's epoll data.ptr (to pause accepting) */
	int accept_polled;              /* lfd not in ep: accepted on each turn,
					   which loop_ms() makes 10 ms at most */
	uint64_t paused_until;          /* out of fds: not accepting until then */
	unsigned pause_ms;
	uint64_t nofile, nofile_said;   /* times out of fds; ... said so far */
	uint64_t nofile_said_at;
	uint64_t limited, limited_said_at;      /* refused over a share (INGEST_LIMIT) */
	uint64_t unverified;            /* MAPs made "[unverified]" (scrub.h) */
	uint64_t unverified_said_at;
	struct peer_budgets budgets;    /* re-reading untrusted peers' maps (peer.h) */
	uint64_t kernel_hidden;         /* SAMPLES frames whose kernel frames were hidden */
	uint64_t scrub_dropped;         /* frames that could not be rewritten */
	uint64_t bad_pid;               /* HELLOs that claimed another pid */
	void *ctx;
	void (*frame)(void *ctx, struct ingest_conn *c, struct probe_msg *m,
		      const uint8_t *f, size_t len);
	void (*note)(void *ctx, enum ingest_note kind, const char *msg);
	void (*opened)(void *ctx, struct ingest_conn *c);       /* may be NULL */
	void (*closed)(void *ctx, struct ingest_conn *c);       /* may be NULL */
};

void ingest_accept_all(struct ingest *in);
void ingest_read(struct ingest *in, struct ingest_conn *c);
/* Read every arena now; ms until it is due again (-1: no arena). */
void ingest_poll(struct ingest *in);
int ingest_timeout(struct ingest *in);
/* A message, formatted, to note(). */
void ingest_note(struct ingest *in, enum ingest_note kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* 1 (and now noted in *said_at) when a message is due: once a minute at most. */
int ingest_say_due(uint64_t *said_at);
/* The tid we know a thread of c by (its main thread's is its pid). */
uint32_t ingest_our_tid(const struct ingest_conn *c, uint32_t tid);
/* Hand one frame built here (arena_read.c) on as if it had been read. */
void ingest_deliver(struct ingest *in, struct ingest_conn *c, uint8_t *f, size_t len);
void ingest_close(struct ingest *in, struct ingest_conn *c, int warn_partial);
void ingest_close_all(struct ingest *in);
void ingest_free_dead(struct ingest *in);
void ingest_raise_nofile(void);

#endif
