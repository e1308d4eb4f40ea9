/*
 * ingest.h - the collector's side of the socket: accepting the processes'
 * connections and turning their bytes into validated frames (probe record
 * and probe top share it).
 *
 * Contract:
 *   - The owner fills ep (an epoll fd), lfd (a listening socket, usock.h),
 *     spare_fd (an fd kept for EMFILE, or -1), uid (the only peer uid
 *     accepted), what ("recorded"/"watched", for a message), the callbacks
 *     and ctx, and inits sc; it closes those fds and frees sc itself.
 *   - ingest_accept_all() takes every pending connection: a peer of another
 *     uid (SO_PEERCRED) is refused; each one accepted is added to ep with
 *     data.ptr = its struct ingest_conn, then opened() is called.
 *   - ingest_read() does at most INGEST_READS bounded non-blocking reads of
 *     one connection (call it when ep reports it) and hands each frame that
 *     decodes, names the peer's pid and (the first) is a HELLO to frame();
 *     the message lives in sc until the next decode.  Bad data, a read error
 *     or the end closes the connection.  frame() may call ingest_read() on
 *     other connections.
 *   - ingest_close() closes c (closed() is called; with warn_partial, a
 *     frame cut short is noted); c stays allocated, marked dead, until
 *     ingest_free_dead(), to be called after each epoll batch.
 *   - note() gets every message, already formatted, with its kind: the
 *     owner decides where it goes, or drops it.
 *   - ingest_raise_nofile() lifts RLIMIT_NOFILE to its hard limit: many
 *     processes may connect at once (call it after forking the command).
 */
#ifndef PROBE_INGEST_H
#define PROBE_INGEST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "wire_decode.h"

/* Reads per connection per wakeup, so one busy process cannot starve others. */
#define INGEST_READS 16

enum ingest_note {
	INGEST_BAD_DATA,        /* a bad frame or stream: the connection is dropped */
	INGEST_READ_ERROR,      /* read() failed (not ECONNRESET) */
	INGEST_PARTIAL,         /* the connection ended inside a frame */
	INGEST_REFUSED,         /* a peer of another uid, or one not identified */
	INGEST_NOFILE,          /* out of fds: a connection was dropped */
	INGEST_UNWATCHED,       /* epoll_ctl failed for a new connection */
};

struct ingest_conn {
	int fd;
	pid_t pid;              /* the peer's, from SO_PEERCRED */
	int hello;              /* its first frame (a HELLO) arrived */
	int dead;               /* closed; freed by ingest_free_dead */
	struct probe_stream s;
	struct ingest_conn *prev, *next;
};

struct ingest {
	int ep, lfd, spare_fd;
	uid_t uid;
	const char *what;
	struct probe_scratch sc;
	struct ingest_conn *conns, *dead;
	unsigned nconns;
	void *ctx;
	void (*frame)(void *ctx, struct ingest_conn *c, struct probe_msg *m,
		      const uint8_t *f, size_t len);
	void (*note)(void *ctx, enum ingest_note kind, const char *msg);
	void (*opened)(void *ctx, struct ingest_conn *c);       /* may be NULL */
	void (*closed)(void *ctx, struct ingest_conn *c);       /* may be NULL */
};

void ingest_accept_all(struct ingest *in);
void ingest_read(struct ingest *in, struct ingest_conn *c);
void ingest_close(struct ingest *in, struct ingest_conn *c, int warn_partial);
void ingest_close_all(struct ingest *in);
void ingest_free_dead(struct ingest *in);
void ingest_raise_nofile(void);

#endif
