/*
 * httpd_int.h - what the HTTP server's files share (httpd.h is its
 * contract): the server, its connections and its parked pulls.
 *
 *   httpd.c         binding, connections and their bounds, requests, pulls,
 *                   and the agent's side (httpd_*)
 *   http_clients.c  who is at the other end: the uid the kernel gives a
 *                   local client (sock_diag), what it may see (httpi_client_of)
 *   http_index.c    the index page (httpi_index_page), and which processes
 *                   a client may see (httpi_may_see)
 * The httpi_ prefix marks these cross-file internals.
 */
#ifndef PROBE_AGENT_HTTPD_INT_H
#define PROBE_AGENT_HTTPD_INT_H

#include <microhttpd.h>
#include <stdint.h>
#include <stdio.h>

#include "agent/httpd.h"
#include "agent/processes.h"

#define NS 1000000000ull
#define MINUTE_NS (60 * NS)
#define STATE_LISTEN 10         /* TCP_LISTEN of the kernel's tcp_states.h */

/* R_READY: its answer is being sent (in h->sending until done). */
enum req_state { R_NEW, R_WAITING, R_READY, R_GONE };

/* Which processes a client may see (httpd.h): none (a local client whose
 * user the kernel did not say; 0, what a fresh struct holds), those of its
 * uid, or every one (root, the agent's own user, a remote client). */
enum sight { SEE_NONE, SEE_UID, SEE_ALL };

/* One connection, from libmicrohttpd's notice of its start to that of its
 * end. */
struct conn {
	int fd;
	char who[64];           /* its client: "uid 1000", "192.0.2.7", "2001:db8::/64" */
	enum sight sees;
	uint32_t uid;           /* SEE_UID: its client's */
	uint64_t since;         /* CLOCK_MONOTONIC ns: waiting for a request since */
	uint64_t rx;            /* bytes received by then; UINT64_MAX: not known */
	int busy;               /* its request is whole: being answered, or a pull */
	uint64_t send_due;      /* its pull's answer sent whole by then; 0: none */
	int shut;               /* closed by us; libmicrohttpd has yet to see it */
	struct conn *prev, *next;
};

struct req {
	enum req_state state;
	struct MHD_Connection *conn;
	struct conn *cn;        /* its connection (NULL: none known, client "?") */
	int fd;                 /* in h->pfd while parked, else -1 */
	struct sink *sink;
	uint64_t due;           /* CLOCK_MONOTONIC ns */
	enum sight sees;        /* its client's (SEE_NONE when not known) */
	uint32_t uid;
	uint32_t pid;           /* 0: any */
	char *comm;             /* NULL: any */
	uint8_t *body;
	size_t len;
	int failed;
	struct req *prev, *next;
};

/* The bounds reached, by kind: each counted, and said once a minute. */
enum limit { L_BUSY, L_EACH, L_CONNS, L_TOTAL, L_SLOW, L_SEND, L_KINDS };

/* A line said at most once a minute: when last, and how often asked. */
struct said {
	const void *key;
	uint64_t at, n;
};

#define MHD_SAID 16

struct httpd {
	struct MHD_Daemon *d;
	int lfd, efd;           /* listener, libmicrohttpd's epoll fd */
	int pfd;                /* epoll: efd, and the parked pulls' sockets */
	int nl;                 /* sock_diag netlink socket, -1: none */
	unsigned diag_said;     /* local_unknown said its line */
	uint32_t self;          /* the agent's uid: its clients see every process */
	uint32_t nlseq;
	char where[128];
	struct aprocs *procs;
	struct symcache **syms;
	struct req *waiting;    /* list of R_WAITING */
	struct req *sending;    /* list of R_READY: answered, not yet sent whole */
	struct conn *conns;     /* newest first */
	unsigned nopen;         /* conns not shut */
	uint64_t next_sweep;    /* when the next request or send deadline falls */
	uint64_t served, cancelled, idle;
	struct said limit[L_KINDS];
	struct said mhd[MHD_SAID];      /* libmicrohttpd's messages; the last for any other */
	int hush;               /* its next message is about a pull we dropped */
};

/* http_clients.c: cn's client (its who and sight), from its socket; the
 * sock_diag socket that tells local clients apart, opened (h->nl). */
void httpi_client_of(struct httpd *h, struct conn *cn);
void httpi_diag_start(struct httpd *h);

/* http_index.c */
enum MHD_Result httpi_index_page(struct httpd *h, struct MHD_Connection *c,
				 const struct conn *cn);
int httpi_may_see(const struct conn *cn, const struct aproc *p);
unsigned httpi_count(const struct req *r);

/* httpd.c: an answer queued on c (body freed as mode says), a text/plain one. */
enum MHD_Result httpi_answer(struct MHD_Connection *c, unsigned code, const char *type,
			     void *body, size_t len, enum MHD_ResponseMemoryMode mode);
enum MHD_Result httpi_text(struct MHD_Connection *c, unsigned code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
