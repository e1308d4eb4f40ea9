/*
 * httpd.h - `probe agent --http`: profiles for scrapers, in Go's
 * net/http/pprof convention (what Parca and Grafana Alloy fetch), served by
 * libmicrohttpd from the agent's own event loop (one thread: no locks).
 *
 * Contract:
 *   - httpd_start() binds ADDR:PORT (a port alone, or ":PORT": loopback),
 *     port 0 for any free one; it says where it listens (httpd_where).
 *     NULL after one "probe:" message.
 *   - GET /debug/pprof/profile?seconds=N (1..3600, default 30) answers,
 *     N seconds later, the gzipped pprof of what the processes the client
 *     may see (below) sampled in those seconds (application/octet-stream);
 *     ?pid=P or ?comm=NAME takes one process, or the processes of that
 *     name (comm or executable), among them.  GET / and /debug/pprof/
 *     list those processes (HTML), and what the bounds below refused.
 *     Errors are text/plain: 400 for a bad argument, 403 for a client
 *     shown no process, 404 for an unknown path or pid, 405 for a method
 *     other than GET or HEAD, 503 when a bound on pulls is reached.
 *   - A client is the uid owning the other end when that end is a socket
 *     of this host (loopback, or one of the host's own addresses, in the
 *     agent's network namespace: the kernel's sock_diag tells), else its
 *     address (an IPv6 one by its /64).  What it may see, "through probe,
 *     a user learns nothing they could not read themselves":
 *       . root, and the agent's own uid: every process;
 *       . any other uid: the processes whose connection was of that uid
 *         (aproc.uid) alone: the index lists no other, a pull of all or of
 *         ?comm= takes no other's samples, and ?pid= of another's process
 *         is answered 404 as an unknown pid is (it is not told it exists);
 *         the index shows its own figures of the bounds, not the other
 *         users', nor the processes ended lately (kept with no uid);
 *       . a client of this host whose uid the kernel did not say (no
 *         inet_diag module; a socket closed already that the kernel
 *         reports as uid 0 with no inode): no process, 403 for a pull (the
 *         most restricted: it may be anyone), said once on stderr; to the
 *         bounds it is its address, with every other such client;
 *       . a remote client (an address not of this host, which includes a
 *         container in a network namespace of its own): every process, as
 *         the operator chose by binding a non-loopback address; the agent
 *         cannot tell its users apart.
 *   - Clients who do not trust each other share the server.  Bounds:
 *       . HTTPD_CAPTURES pulls at once, HTTPD_CAPTURES_EACH for one
 *         client, a pull counting from its request until its answer is
 *         sent whole (the pprof is held in memory until then) (503 beyond
 *         either);
 *       . a pull whose client closed its connection (or shut its sending
 *         half) is dropped as soon as the close arrives, its slot freed;
 *       . an answer not read whole within HTTPD_SEND_S s of its profile
 *         being written is dropped: the connection reset, the pprof freed;
 *       . HTTPD_CONNECTIONS connections open, HTTPD_CONNECTIONS_EACH for
 *         one client: past either, the oldest connection (of that client,
 *         or of anyone when all are taken) still short of a whole request
 *         is closed to make room, or the new one when none is;
 *       . a whole request within HTTPD_REQUEST_S seconds of the connection
 *         opening, or of the previous answer on it, else it is closed (a
 *         pull waiting its N seconds has its whole request: not concerned);
 *         an answer that makes no progress for HTTPD_IDLE_S s is dropped.
 *     Each bound reached is counted on the index page, and said on stderr
 *     ("probe: warning: http: ...") at most once a minute for each kind;
 *     libmicrohttpd's own messages at most once a minute each.
 *   - httpd_frame() gives every frame to the profiles being taken;
 *     httpd_tick() answers those that are due (now, or all with final:
 *     shutting down, with what they have).  Call httpd_run() when the fd
 *     is readable and at least every httpd_timeout() ms.
 */
#ifndef PROBE_AGENT_HTTPD_H
#define PROBE_AGENT_HTTPD_H

#include <stdint.h>

#include "agent/processes.h"
#include "symbols/symbols.h"

#define HTTPD_CAPTURES 16
#define HTTPD_CAPTURES_EACH 4
#define HTTPD_CONNECTIONS 256
#define HTTPD_CONNECTIONS_EACH 32
#define HTTPD_REQUEST_S 10
#define HTTPD_IDLE_S 30
#define HTTPD_SEND_S 30
#define HTTPD_MAX_SECONDS 3600

struct httpd;

struct httpd *httpd_start(const char *spec, struct aprocs *procs,
			  struct symcache **syms);
const char *httpd_where(const struct httpd *h);        /* "127.0.0.1:4040" */
int httpd_fd(const struct httpd *h);
void httpd_run(struct httpd *h);
int httpd_timeout(struct httpd *h);     /* ms, -1: none */
void httpd_frame(struct httpd *h, struct aproc *p, const struct probe_msg *m);
void httpd_tick(struct httpd *h, int final);
/* Profiles being taken now, connections open, and profiles answered so far. */
unsigned httpd_pending(const struct httpd *h);
unsigned httpd_connections(const struct httpd *h);
uint64_t httpd_served(const struct httpd *h);
void httpd_stop(struct httpd *h);

#endif
