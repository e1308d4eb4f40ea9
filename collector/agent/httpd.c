/*
 * httpd.c - see httpd.h.
 *
 * A request for a profile is parked (MHD_suspend_connection) with a sink
 * of its own that every frame reaches until its time is up; then the
 * profile is written and the connection resumed to send it.  So N seconds
 * of profile cost the agent nothing while nobody asks, and two scrapers
 * asking at once each get exactly their own window.
 *
 * Clients share the server without trusting each other (httpd.h): a
 * local user is shown its own processes only (struct conn's sight, from
 * the uid sock_diag gives), and bounds keep one client from taking the
 * server.  libmicrohttpd does not look at a parked connection's socket,
 * so a scraper killed mid-pull would hold its slot for up to an hour: the
 * parked sockets sit in an epoll set of ours (with libmicrohttpd's epoll
 * fd, so the agent waits on one fd) for EPOLLRDHUP, and a close drops the
 * pull at once.  libmicrohttpd's timeout counts idleness, which a client
 * sending (or reading) a byte now and then never reaches, and its per-IP
 * limit lumps every local user together as 127.0.0.1: so each connection
 * is tracked here (struct conn) with its client, since when it waits for
 * a whole request, and by when its pull's answer must be sent, and closed
 * with shutdown(2) when a bound says so; libmicrohttpd then reads the end
 * of it and cleans up as for any client that hangs up.
 */
#include "agent/httpd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <microhttpd.h>
#include <netdb.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "flame/flame.h"
#include "format/pprof_merge.h"
#include "agent/sink.h"
#include "util.h"

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

/* ---- said once a minute ------------------------------------------------- */

/* Count one more; true when it may be said now (not said for a minute). */
static int say_now(struct said *s, uint64_t now)
{
	s->n++;
	if (s->at && now - s->at < MINUTE_NS)
		return 0;
	s->at = now;
	return 1;
}

/* A bound reached by client who: counted, and said once a minute. */
static void hit(struct httpd *h, enum limit k, const char *who)
{
	struct said *s = &h->limit[k];
	if (!say_now(s, now_ns()))
		return;
	char what[256];
	switch (k) {
	case L_BUSY:
		snprintf(what, sizeof(what), "a pull from %s refused (503): %d profiles were "
			 "being taken, the most at once", who, HTTPD_CAPTURES);
		break;
	case L_EACH:
		snprintf(what, sizeof(what), "a pull from %s refused (503): it was taking %d "
			 "profiles, the most one client may", who, HTTPD_CAPTURES_EACH);
		break;
	case L_CONNS:
		snprintf(what, sizeof(what), "a connection of %s closed: it had %d open, the "
			 "most one client may", who, HTTPD_CONNECTIONS_EACH);
		break;
	case L_TOTAL:
		snprintf(what, sizeof(what), "a connection of %s closed: %d were open, the most "
			 "in all", who, HTTPD_CONNECTIONS);
		break;
	case L_SEND:
		snprintf(what, sizeof(what), "a profile for %s dropped: not read whole within "
			 "%d s of its answer", who, HTTPD_SEND_S);
		break;
	default:
		snprintf(what, sizeof(what), "a connection of %s closed: part of a request and "
			 "no whole one within %d s", who, HTTPD_REQUEST_S);
		break;
	}
	probe_warn("http: %s; %" PRIu64 " so far (counted on the index page; said once a "
		   "minute at most)", what, s->n);
}

/* ---- binding ---------------------------------------------------------- */

/* "PORT", ":PORT", "HOST:PORT", "[V6]:PORT" into host (loopback when
 * none) and port. */
static int split_spec(const char *spec, char *host, size_t hcap, char *port, size_t pcap)
{
	const char *colon = strrchr(spec, ':');
	const char *p = colon ? colon + 1 : spec;
	size_t hl = colon ? (size_t)(colon - spec) : 0;
	const char *h = spec;
	if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
		h++;
		hl -= 2;
	}
	if (!*p || strlen(p) >= pcap || hl >= hcap || strspn(p, "0123456789") != strlen(p))
		return -1;
	if (hl == 0)
		snprintf(host, hcap, "127.0.0.1");
	else
		snprintf(host, hcap, "%.*s", (int)hl, h);
	snprintf(port, pcap, "%s", p);
	return atol(port) <= 65535 ? 0 : -1;
}

static int bind_spec(const char *spec, char *where, size_t wcap)
{
	char host[256], port[16];
	if (split_spec(spec, host, sizeof(host), port, sizeof(port)) < 0) {
		probe_err("--http %s: give ADDR:PORT (127.0.0.1:4040), :PORT or PORT", spec);
		return -1;
	}
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV | AI_PASSIVE }, *ai = NULL;
	int r = getaddrinfo(host, port, &hints, &ai);
	if (r != 0) {
		probe_err("--http %s: cannot resolve %s: %s", spec, host, gai_strerror(r));
		return -1;
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 64) < 0) {
		probe_err("--http %s: cannot listen there: %s", spec, strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char h[128] = "?", s[16] = "?";
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		getnameinfo((struct sockaddr *)&ss, sl, h, sizeof(h), s, sizeof(s),
			    NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(where, wcap, strchr(h, ':') ? "[%s]:%s" : "%s:%s", h, s);
	return fd;
}

/* ---- clients: who is at the other end ---------------------------------- */

/* One end of a TCP connection: an IPv4-mapped IPv6 address as IPv4. */
struct endpoint {
	int family;
	uint16_t port;          /* network order */
	uint32_t a[4];          /* network order; IPv4 in a[0], the rest 0 */
};

static int endpoint_of(int family, const void *addr, uint16_t port, struct endpoint *e)
{
	memset(e, 0, sizeof(*e));
	e->port = port;
	if (family == AF_INET) {
		e->family = AF_INET;
		memcpy(e->a, addr, 4);
	} else if (family == AF_INET6 && IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)addr)) {
		e->family = AF_INET;
		memcpy(e->a, (const uint8_t *)addr + 12, 4);
	} else if (family == AF_INET6) {
		e->family = AF_INET6;
		memcpy(e->a, addr, 16);
	} else {
		return -1;
	}
	return 0;
}

static int endpoint_sa(const struct sockaddr_storage *ss, struct endpoint *e)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)ss;
		return endpoint_of(AF_INET, &s->sin_addr, s->sin_port, e);
	}
	const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)ss;
	return endpoint_of(ss->ss_family, &s->sin6_addr, s->sin6_port, e);
}

static int same_endpoint(const struct endpoint *x, const struct endpoint *y)
{
	return x->family == y->family && x->port == y->port && memcmp(x->a, y->a, 16) == 0;
}

/* sock_diag's answer m (whole in what was read): the uid of the socket
 * it found when that is the client's own end (src peer, dst me: an exact
 * lookup falls back on a listener of the peer's port), else -1.  A socket
 * with no inode is one its owner closed already (an orphan: FIN-WAIT,
 * TIME-WAIT); a kernel that keeps no owner for it (older ones; any, for
 * TIME-WAIT) says uid 0, which is then no one's: not known.  A newer
 * kernel's uid for it is its owner's, believed. */
static long diag_uid(const struct nlmsghdr *m, const struct endpoint *peer,
		     const struct endpoint *me)
{
	if (m->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
	    m->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
		return -1;              /* NLMSG_ERROR: ENOENT, not a socket of this host */
	const struct inet_diag_msg *d = NLMSG_DATA(m);
	struct endpoint src, dst;
	if (endpoint_of(d->idiag_family, d->id.idiag_src, d->id.idiag_sport, &src) < 0 ||
	    endpoint_of(d->idiag_family, d->id.idiag_dst, d->id.idiag_dport, &dst) < 0 ||
	    d->idiag_state == STATE_LISTEN || !same_endpoint(&src, peer) ||
	    !same_endpoint(&dst, me) || (d->idiag_inode == 0 && d->idiag_uid == 0))
		return -1;
	return d->idiag_uid;
}

/* The uid owning the client's end of the connection peer -> me when that
 * end is a socket of this host (in this network namespace): an exact
 * sock_diag lookup, which the kernel answers before send() returns.  -1:
 * a remote client, or no answer. */
static long local_uid(struct httpd *h, const struct endpoint *peer, const struct endpoint *me)
{
	if (h->nl < 0 || peer->family != me->family)
		return -1;
	struct {
		struct nlmsghdr nh;
		struct inet_diag_req_v2 r;
	} q;
	memset(&q, 0, sizeof(q));
	q.nh.nlmsg_len = sizeof(q);
	q.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	q.nh.nlmsg_flags = NLM_F_REQUEST;
	q.nh.nlmsg_seq = ++h->nlseq;
	q.r.sdiag_family = (uint8_t)peer->family;
	q.r.sdiag_protocol = IPPROTO_TCP;
	q.r.idiag_states = ~0u;
	q.r.id.idiag_sport = peer->port;
	q.r.id.idiag_dport = me->port;
	memcpy(q.r.id.idiag_src, peer->a, sizeof(peer->a));
	memcpy(q.r.id.idiag_dst, me->a, sizeof(me->a));
	q.r.id.idiag_cookie[0] = q.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	if (send(h->nl, &q, sizeof(q), 0) != (ssize_t)sizeof(q))
		return -1;
	for (;;) {
		union {
			struct nlmsghdr nh;
			char b[2048];
		} a;
		ssize_t n = recv(h->nl, &a, sizeof(a), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		for (size_t off = 0; off + sizeof(struct nlmsghdr) <= (size_t)n;) {
			const struct nlmsghdr *m = (const struct nlmsghdr *)(a.b + off);
			if (m->nlmsg_len < sizeof(*m) || m->nlmsg_len > (size_t)n - off)
				return -1;
			if (m->nlmsg_seq == q.nh.nlmsg_seq)
				return diag_uid(m, peer, me);
			off += NLMSG_ALIGN(m->nlmsg_len);
		}
	}
}

static int is_loopback(const struct endpoint *e)
{
	if (e->family == AF_INET)
		return ((const uint8_t *)e->a)[0] == 127;
	return e->family == AF_INET6 && memcmp(e->a, &in6addr_loopback, 16) == 0;
}

/* e is one of this host's addresses (in this network namespace): a
 * client there is a local user, even when the kernel did not say which. */
static int is_host_addr(const struct endpoint *e)
{
	struct ifaddrs *all, *i;
	int found = 0;
	if (is_loopback(e))
		return 1;
	if (getifaddrs(&all) < 0)
		return 1;       /* not known: the restricted case (client_of) */
	for (i = all; i && !found; i = i->ifa_next) {
		struct endpoint a;
		const struct sockaddr *sa = i->ifa_addr;
		if (!sa || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6) ||
		    endpoint_sa((const struct sockaddr_storage *)sa, &a) < 0)
			continue;
		found = a.family == e->family && memcmp(a.a, e->a, 16) == 0;
	}
	freeifaddrs(all);
	return found;
}

/* A client of this host whose user the kernel did not say: sock_diag
 * cannot (no inet_diag in the kernel), or the client had closed its
 * socket already.  Said once. */
static void local_unknown(struct httpd *h)
{
	if (h->diag_said++)
		return;
	probe_warn("http: the kernel did not say which user owns a local client's socket "
		   "(no inet_diag module, or the client had closed it already): such a "
		   "client is shown no process (403 for a profile) and is bounded as its "
		   "address, with every other user there (modprobe inet_diag tells them "
		   "apart; said once)");
}

/* Which processes a client of uid sees: all for root and the agent's own
 * user (who may read them all anyway), else its own. */
static void sight_of_uid(const struct httpd *h, struct conn *cn, uint32_t uid)
{
	cn->uid = uid;
	cn->sees = uid == 0 || uid == h->self ? SEE_ALL : SEE_UID;
}

/* Who is at the other end of cn's socket, into cn->who and what it sees:
 * "uid N" for a socket of this host, else its address (an IPv6 one by its
 * /64, which one host may hold whole), "?" when even that is not known.
 * A remote client sees every process (the operator opened the port to
 * it); a local one whose user is not known, none. */
static void client_of(struct httpd *h, struct conn *cn)
{
	struct sockaddr_storage ps, ms;
	socklen_t pl = sizeof(ps), ml = sizeof(ms);
	struct endpoint peer, me;
	snprintf(cn->who, sizeof(cn->who), "?");
	cn->sees = SEE_NONE;
	if (cn->fd < 0 || getpeername(cn->fd, (struct sockaddr *)&ps, &pl) < 0 ||
	    endpoint_sa(&ps, &peer) < 0)
		return;
	long uid = getsockname(cn->fd, (struct sockaddr *)&ms, &ml) == 0 &&
		   endpoint_sa(&ms, &me) == 0 ? local_uid(h, &peer, &me) : -1;
	if (uid >= 0) {
		snprintf(cn->who, sizeof(cn->who), "uid %ld", uid);
		sight_of_uid(h, cn, (uint32_t)uid);
		return;
	}
	if (is_host_addr(&peer))
		local_unknown(h);
	else
		cn->sees = SEE_ALL;
	char s[INET6_ADDRSTRLEN];
	if (peer.family == AF_INET) {
		if (inet_ntop(AF_INET, peer.a, s, sizeof(s)))
			snprintf(cn->who, sizeof(cn->who), "%s", s);
	} else {
		memset(&peer.a[2], 0, 8);
		if (inet_ntop(AF_INET6, peer.a, s, sizeof(s)))
			snprintf(cn->who, sizeof(cn->who), "%s/64", s);
	}
}

/* ---- connections -------------------------------------------------------- */

/* Close cn: libmicrohttpd reads the end of it and cleans up as for a
 * client that hung up (it has no call to close a connection itself). */
static void shut(struct httpd *h, struct conn *cn)
{
	if (cn->shut)
		return;
	if (cn->fd >= 0)
		shutdown(cn->fd, SHUT_RDWR);
	cn->shut = 1;
	h->nopen--;
}

/* Connections open of client who (any when NULL). */
static unsigned open_of(const struct httpd *h, const char *who)
{
	unsigned n = 0;
	for (const struct conn *cn = h->conns; cn; cn = cn->next)
		n += !cn->shut && (!who || strcmp(cn->who, who) == 0);
	return n;
}

/* The oldest open connection of who (anyone's when NULL) still short of a
 * whole request; the list is newest first. */
static struct conn *oldest_waiting(struct httpd *h, const char *who)
{
	struct conn *o = NULL;
	for (struct conn *cn = h->conns; cn; cn = cn->next)
		if (!cn->shut && !cn->busy && (!who || strcmp(cn->who, who) == 0) &&
		    (!o || cn->since <= o->since))
			o = cn;
	return o;
}

/* Room for cn, a connection just opened: past its client's share, or past
 * the total, the oldest connection still short of a whole request (its
 * client's; anyone's for the total) is closed, cn itself when that is the
 * one.  So a slow client only ever pushes out its own connections, or,
 * when the server is full, the slowest. */
static void admit(struct httpd *h, struct conn *cn)
{
	if (open_of(h, cn->who) > HTTPD_CONNECTIONS_EACH) {
		hit(h, L_CONNS, cn->who);
		shut(h, oldest_waiting(h, cn->who));    /* cn at least */
	}
	if (!cn->shut && h->nopen > HTTPD_CONNECTIONS) {
		struct conn *o = oldest_waiting(h, NULL);
		hit(h, L_TOTAL, o->who);
		shut(h, o);
	}
}

/* Bytes the kernel received on fd so far; UINT64_MAX when it does not say
 * (before Linux 4.1).  libmicrohttpd reads eagerly: this, not what waits
 * in the socket, tells whether a client sent anything. */
static uint64_t bytes_in(int fd)
{
	struct tcp_info ti;
	socklen_t l = sizeof(ti);
	memset(&ti, 0, sizeof(ti));
	if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &l) < 0 ||
	    l < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(ti.tcpi_bytes_received))
		return UINT64_MAX;
	return ti.tcpi_bytes_received;
}

/* A new request is awaited on cn from now: whole within HTTPD_REQUEST_S.
 * rx: the bytes received before it (0 on a new connection, whatever came
 * with it being part of the request). */
static void awaiting(struct httpd *h, struct conn *cn, uint64_t now, uint64_t rx)
{
	cn->busy = 0;
	cn->since = now;
	cn->rx = rx;
	if (now + HTTPD_REQUEST_S * NS < h->next_sweep)
		h->next_sweep = now + HTTPD_REQUEST_S * NS;
}

/* A connection opened: whose, and room for it. */
static void conn_open(struct httpd *h, struct MHD_Connection *c, void **ctx)
{
	const union MHD_ConnectionInfo *i = MHD_get_connection_info(c,
					MHD_CONNECTION_INFO_CONNECTION_FD);
	struct conn *cn = xcalloc(1, sizeof(*cn));
	cn->fd = i ? i->connect_fd : -1;
	client_of(h, cn);
	awaiting(h, cn, now_ns(), bytes_in(cn->fd) == UINT64_MAX ? UINT64_MAX : 0);
	cn->next = h->conns;
	if (h->conns)
		h->conns->prev = cn;
	h->conns = cn;
	h->nopen++;
	*ctx = cn;
	admit(h, cn);
}

static void conn_closed(struct httpd *h, struct conn *cn)
{
	if (cn->prev)
		cn->prev->next = cn->next;
	else
		h->conns = cn->next;
	if (cn->next)
		cn->next->prev = cn->prev;
	if (!cn->shut)
		h->nopen--;
	free(cn);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **ctx,
			  enum MHD_ConnectionNotificationCode code)
{
	struct httpd *h = cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		conn_open(h, c, ctx);
	} else if (*ctx) {
		conn_closed(h, *ctx);
		*ctx = NULL;
	}
}

/* cn had HTTPD_REQUEST_S s for a whole request: closed, and said when it
 * sent part of one (a slow client), quietly when it sent nothing (a
 * keep-alive connection left idle, a browser's preconnection). */
static void expire(struct httpd *h, struct conn *cn)
{
	if (cn->rx != UINT64_MAX && bytes_in(cn->fd) == cn->rx)
		h->idle++;
	else
		hit(h, L_SLOW, cn->who);
	shut(h, cn);
}

/* cn did not take its pull's answer whole in HTTPD_SEND_S s: closed, and
 * libmicrohttpd frees the answer.  Reset, not a FIN behind what the
 * kernel still holds for it (up to its send buffer, 4 MiB by default):
 * that is given back at once too. */
static void late(struct httpd *h, struct conn *cn)
{
	struct linger now = { .l_onoff = 1, .l_linger = 0 };
	hit(h, L_SEND, cn->who);
	if (cn->fd >= 0)
		setsockopt(cn->fd, SOL_SOCKET, SO_LINGER, &now, sizeof(now));
	shut(h, cn);
}

/* cn's pull answer must be sent whole by due (HTTPD_SEND_S): a client
 * reading a byte now and then would hold the profile, and its slot, for
 * as long as it liked. */
static void sending(struct httpd *h, struct conn *cn, uint64_t due)
{
	cn->send_due = due;
	if (due < h->next_sweep)
		h->next_sweep = due;
}

/* Close the connections that had HTTPD_REQUEST_S s for a whole request,
 * or HTTPD_SEND_S s to take a pull's answer. */
static void sweep(struct httpd *h, uint64_t now)
{
	if (now < h->next_sweep)
		return;
	uint64_t next = UINT64_MAX;
	for (struct conn *cn = h->conns; cn; cn = cn->next) {
		uint64_t due = cn->send_due ? cn->send_due : cn->since + HTTPD_REQUEST_S * NS;
		if (cn->shut || (cn->busy && !cn->send_due))
			continue;
		if (due > now) {
			next = due < next ? due : next;
		} else if (cn->send_due) {
			late(h, cn);
		} else {
			expire(h, cn);
		}
	}
	h->next_sweep = next;
}

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i = MHD_get_connection_info(c,
						MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return i ? i->socket_context : NULL;
}

/* ---- answers ---------------------------------------------------------- */

static enum MHD_Result answer(struct MHD_Connection *c, unsigned code, const char *type,
			      void *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (strcmp(type, "application/octet-stream") == 0)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION,
					"attachment; filename=\"profile\"");
	enum MHD_Result ok = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ok;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static enum MHD_Result text(struct MHD_Connection *c, unsigned code, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return MHD_NO;
	return answer(c, code, "text/plain; charset=utf-8", s, (size_t)n, MHD_RESPMEM_MUST_FREE);
}

static uint64_t hits(const struct httpd *h, enum limit k)
{
	return h->limit[k].n;
}

static unsigned count(const struct req *r)
{
	unsigned n = 0;
	for (; r; r = r->next)
		n++;
	return n;
}

/* What the bounds allow and what they refused, for whoever looks. */
static void put_bounds(const struct httpd *h, FILE *f)
{
	fprintf(f, "<h2>Server</h2>\n<p>Pulls: %u being taken, %u being sent (at most %d at "
		"once, %d for one client; an answer read whole within %d s), %" PRIu64
		" answered, %" PRIu64 " dropped as their client went away, %" PRIu64 " not read "
		"whole in time; refused (503): %" PRIu64 " with every slot taken, %" PRIu64
		" beyond a client's %d.</p>\n", httpd_pending(h), count(h->sending),
		HTTPD_CAPTURES, HTTPD_CAPTURES_EACH, HTTPD_SEND_S, h->served, h->cancelled,
		hits(h, L_SEND), hits(h, L_BUSY), hits(h, L_EACH), HTTPD_CAPTURES_EACH);
	fprintf(f, "<p>Connections: %u open (at most %d, %d for one client; a whole request "
		"within %d s); closed: %" PRIu64 " beyond a client's %d, %" PRIu64 " beyond %d "
		"in all, %" PRIu64 " with part of a request and no whole one in %d s, %" PRIu64
		" idle for %d s.</p>\n", h->nopen, HTTPD_CONNECTIONS, HTTPD_CONNECTIONS_EACH,
		HTTPD_REQUEST_S, hits(h, L_CONNS), HTTPD_CONNECTIONS_EACH, hits(h, L_TOTAL),
		HTTPD_CONNECTIONS, hits(h, L_SLOW), HTTPD_REQUEST_S, h->idle, HTTPD_REQUEST_S);
}

/* The client of cn (NULL: not known, SEE_NONE) may see p. */
static int may_see(const struct conn *cn, const struct aproc *p)
{
	enum sight v = cn ? cn->sees : SEE_NONE;
	return v == SEE_ALL || (v == SEE_UID && p->uid == cn->uid);
}

/* A client who sees only its own: its share of the bounds (processes.h,
 * sink.h), not the other users'. */
static void put_own_bounds(const struct httpd *h, const struct conn *cn, FILE *f)
{
	struct auser *u = NULL;
	if (cn && cn->sees == SEE_UID)
		HASH_FIND(hh, h->procs->users, &cn->uid, sizeof(cn->uid), u);
	fprintf(f, "<h2>Bounds</h2>\n<p>Kept of your processes: %.1f of %u MiB (%u MiB a "
		"process). Your part of the profiles being taken: %.1f of %u MiB (%u MiB a "
		"profile). Dropped at these bounds: %" PRIu64 " samples, %" PRIu64 " frames."
		"</p>\n", u ? u->kept / 1048576.0 : 0.0, APROC_UID_BYTES >> 20,
		APROC_PROC_BYTES >> 20, u ? u->profiles / 1048576.0 : 0.0, SINK_UID_BYTES >> 20,
		SINK_BYTES >> 20, u ? u->dropped : 0, u ? u->frames_dropped : 0);
}

/* Whom the page shows: all, or why only some (none). */
static void put_sight(const struct httpd *h, const struct conn *cn, FILE *f)
{
	if (cn && cn->sees == SEE_UID && h->self == 0)
		fprintf(f, "<p>You (uid %" PRIu32 ") are shown your own processes; root is "
			"shown every user's.</p>\n", cn->uid);
	else if (cn && cn->sees == SEE_UID)
		fprintf(f, "<p>You (uid %" PRIu32 ") are shown your own processes; root and "
			"uid %" PRIu32 " (the agent's) are shown every user's.</p>\n", cn->uid,
			h->self);
	else if (!cn || cn->sees == SEE_NONE)
		fputs("<p>The kernel did not say which user you are (sock_diag: no inet_diag "
		      "module): you are shown no process.</p>\n", f);
}

/* The table of processes cn's client may see. */
static void put_procs(struct httpd *h, const struct conn *cn, FILE *f)
{
	struct aproc *p, *tmp;
	HASH_ITER(hh, h->procs->byid, p, tmp) {
		if (p->gone || !may_see(cn, p))
			continue;
		fprintf(f, "<tr><td>%u</td><td>", p->pid);
		flame_put_xml(f, p->name, 0);
		fprintf(f, "</td><td>%" PRIu64 "</td><td>", p->samples);
		flame_put_xml(f, p->exe, 0);
		fprintf(f, "</td><td><a href=\"/debug/pprof/profile?seconds=30&amp;pid=%u\">"
			"30 s</a></td></tr>\n", p->pid);
	}
	fputs("</table>\n", f);
}

/* The processes ended lately: every user's, for those who see all (the
 * ring keeps no uid). */
static void put_recent(const struct httpd *h, FILE *f)
{
	fputs("<h2>Ended lately</h2>\n<table>\n<tr><th>pid</th><th>name</th>"
	      "<th>samples</th><th>exit</th></tr>\n", f);
	size_t k = h->procs->nrecent < APROC_RECENT ? h->procs->nrecent : APROC_RECENT;
	for (size_t i = 0; i < k; i++) {
		const struct arecent *r = &h->procs->recent[(h->procs->nrecent - 1 - i) %
							    APROC_RECENT];
		fprintf(f, "<tr><td>%u</td><td>", r->pid);
		flame_put_xml(f, r->name, 0);
		fprintf(f, "</td><td>%" PRIu64 "</td><td>", r->samples);
		if (r->have_exit && r->status >= 0)     /* -1: sampled from outside */
			fprintf(f, "%d", r->status);
		else
			fputs("?", f);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* The index page, of what cn's client may see (httpd.h). */
static enum MHD_Result index_page(struct httpd *h, struct MHD_Connection *c,
				  const struct conn *cn)
{
	char *buf = NULL;
	size_t n = 0;
	int all = cn && cn->sees == SEE_ALL;
	FILE *f = open_memstream(&buf, &n);
	if (!f)
		return text(c, 500, "out of memory\n");
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>probe agent"
	      "</title></head><body>\n<h1>probe agent</h1>\n<p>CPU profiles in pprof "
	      "format: <a href=\"/debug/pprof/profile?seconds=30\">/debug/pprof/profile?"
	      "seconds=30</a> (the processes listed here; <code>&amp;pid=P</code> or "
	      "<code>&amp;comm=NAME</code> for some).</p>\n", f);
	put_sight(h, cn, f);
	if (all)
		fprintf(f, "<h2>Processes (%zu live, %" PRIu64 " seen)</h2>\n", h->procs->nlive,
			h->procs->seen);
	else
		fputs("<h2>Your processes</h2>\n", f);
	fputs("<table>\n<tr><th>pid</th><th>name</th><th>samples</th><th>executable</th>"
	      "<th>profile</th></tr>\n", f);
	put_procs(h, cn, f);
	if (all)
		put_recent(h, f);
	put_bounds(h, f);
	if (all)
		aprocs_bounds_html(h->procs, f);        /* what is kept, profiles: processes.h */
	else
		put_own_bounds(h, cn, f);
	fputs("</body></html>\n", f);
	if (fclose(f) != 0) {
		free(buf);
		return text(c, 500, "out of memory\n");
	}
	return answer(c, 200, "text/html; charset=utf-8", buf, n, MHD_RESPMEM_MUST_FREE);
}

/* A whole decimal number in [lo, hi], or -1. */
static long number(const char *s, long lo, long hi)
{
	char *end;
	if (!s || !*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 9)
		return -1;
	long v = strtol(s, &end, 10);
	return v >= lo && v <= hi ? v : -1;
}

/* Pulls of client who: being taken, or answered and not yet sent whole
 * (the pprof is held in memory until it is). */
static unsigned pulls_of(const struct httpd *h, const char *who)
{
	unsigned n = 0;
	for (const struct req *r = h->waiting; r; r = r->next)
		n += strcmp(r->cn ? r->cn->who : "?", who) == 0;
	for (const struct req *r = h->sending; r; r = r->next)
		n += strcmp(r->cn ? r->cn->who : "?", who) == 0;
	return n;
}

static void link_req(struct req **head, struct req *r)
{
	r->prev = NULL;
	r->next = *head;
	if (*head)
		(*head)->prev = r;
	*head = r;
}

static void unlink_req(struct req **head, struct req *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else if (*head == r)
		*head = r->next;
	if (r->next)
		r->next->prev = r->prev;
	r->prev = r->next = NULL;
}

/* r waits for its profile: libmicrohttpd leaves its connection alone, and
 * its socket is watched here for the client hanging up. */
static void park(struct httpd *h, struct req *r)
{
	r->state = R_WAITING;
	link_req(&h->waiting, r);
	MHD_suspend_connection(r->conn);
	struct epoll_event ev = { .events = EPOLLRDHUP, .data.ptr = r };
	r->fd = r->cn ? r->cn->fd : -1;
	if (r->fd >= 0 && epoll_ctl(h->pfd, EPOLL_CTL_ADD, r->fd, &ev) < 0)
		r->fd = -1;     /* not watched: it waits its N seconds */
}

/* r waits no more: out of the list and of the watch (before libmicrohttpd
 * takes its socket back, or closes it). */
static void unpark(struct httpd *h, struct req *r)
{
	if (r->fd >= 0)
		epoll_ctl(h->pfd, EPOLL_CTL_DEL, r->fd, NULL);
	r->fd = -1;
	unlink_req(&h->waiting, r);
}

/* ?pid=V for r's client: r->pid set and *answered 0, or an answer.  A
 * process the client may not see is answered as one that does not exist:
 * the 404 says nothing of another user's processes. */
static enum MHD_Result pick_pid(struct httpd *h, struct MHD_Connection *c, struct req *r,
				const char *pid, int *answered)
{
	long v = number(pid, 1, 0x7fffffff);
	*answered = 1;
	if (v < 0)
		return text(c, 400, "pid: give a process id\n");
	struct aproc *p = aproc_find(h->procs, (uint32_t)v);
	if (!p || p->gone || !may_see(r->cn, p))
		return text(c, 404, "no process %ld streams to this agent; see /\n", v);
	r->pid = (uint32_t)v;
	*answered = 0;
	return MHD_YES;
}

/* Room for one more pull of who, or an answer (503) saying why not. */
static enum MHD_Result room(struct httpd *h, struct MHD_Connection *c, const char *who,
			    int *answered)
{
	unsigned all = httpd_pending(h) + count(h->sending);
	*answered = 1;
	if (pulls_of(h, who) >= HTTPD_CAPTURES_EACH) {
		hit(h, L_EACH, who);
		return text(c, 503, "you (%s) have %d profiles being taken or not yet read "
			    "whole, the most one client may; try again when one is answered\n",
			    who, HTTPD_CAPTURES_EACH);
	}
	if (all >= HTTPD_CAPTURES) {
		hit(h, L_BUSY, who);
		return text(c, 503, "%u profiles are being taken or sent already; try again "
			    "later\n", all);
	}
	*answered = 0;
	return MHD_YES;
}

/* r takes p's frames: one it asked for, of a user its client may see. */
static int wants(const struct req *r, const struct aproc *p)
{
	if (r->sees == SEE_NONE || (r->sees == SEE_UID && p->uid != r->uid))
		return 0;
	if (r->pid && r->pid != p->pid)
		return 0;
	if (r->comm && strcmp(r->comm, p->comm) != 0 && strcmp(r->comm, p->name) != 0)
		return 0;
	return 1;
}

/*
 * /heap or /allocs without seconds, as Go answers them: at once, the
 * allocations of a process since it connected (agent.c keeps them,
 * processes.h's heap), in use at this moment and allocated in all.  The
 * processes: the one pid= or comm= names, else all the client may see
 * that sample allocations, their profiles merged into one (pprof_merge.h:
 * each sample's pid label says whose).
 */
static enum MHD_Result heap_now(struct httpd *h, struct MHD_Connection *c, struct req *r,
				int allocs)
{
	struct aproc *p, *tmp;
	unsigned n = 0;
	HASH_ITER(hh, h->procs->byid, p, tmp)
		n += p->heap && !p->gone && wants(r, p);
	if (n == 0)
		return text(c, 404, "no process of yours streams allocations to this agent "
			    "(a program started with LD_PRELOAD=libprobe-alloc.so and "
			    "PROBE_ALLOC=BYTES does); see /\n");
	uint64_t now = now_ns();
	uint8_t **bodies = xcalloc(n, sizeof(*bodies));
	size_t *lens = xcalloc(n, sizeof(*lens)), k = 0;
	int rc = 0;
	HASH_ITER(hh, h->procs->byid, p, tmp) {
		if (rc < 0 || k == n || !p->heap || p->gone || !wants(r, p))
			continue;
		rc = sink_pprof_now(p->heap, *h->syms, now, allocs, &bodies[k], &lens[k]);
		k++;
	}
	/* Several: one profile of them all, each sample labelled with its pid. */
	if (rc == 0 && n > 1 && pprof_merge(bodies, lens, n, &r->body, &r->len) < 0)
		rc = -1;
	else if (rc == 0 && n == 1) {
		r->body = bodies[0];
		r->len = lens[0];
		bodies[0] = NULL;
	}
	for (size_t i = 0; i < n; i++)
		free(bodies[i]);
	free(bodies);
	free(lens);
	if (rc < 0)
		return text(c, 500, "the profile could not be written; see the agent's log\n");
	r->state = R_READY;
	link_req(&h->sending, r);
	if (r->cn)
		sending(h, r->cn, now + HTTPD_SEND_S * NS);
	h->served++;
	uint8_t *b = r->body;
	r->body = NULL;
	return answer(c, 200, "application/octet-stream", b, r->len, MHD_RESPMEM_MUST_FREE);
}

/*
 * Start taking a profile for r, or answer why not.  kind: PROF_CPU
 * (/profile), PROF_HEAP or PROF_ALLOCS (the allocations of --alloc, as
 * Go's heap profile: in use by default, or allocated; without seconds,
 * since they connected, at once: heap_now).
 */
enum { PROF_CPU, PROF_HEAP, PROF_ALLOCS };
static enum MHD_Result start_profile(struct httpd *h, struct MHD_Connection *c, struct req *r,
				     int kind)
{
	const char *sec = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "seconds");
	const char *pid = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "pid");
	const char *comm = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "comm");
	long secs = sec ? number(sec, 1, HTTPD_MAX_SECONDS) : 30;
	int answered;
	enum MHD_Result a;
	if (secs < 0)
		return text(c, 400, "seconds: give a whole number from 1 to %d\n",
			    HTTPD_MAX_SECONDS);
	if (!r->cn || r->cn->sees == SEE_NONE)
		return text(c, 403, "the kernel did not say which user you are (sock_diag: no "
			    "inet_diag module), so no process is shown to you; root can load "
			    "it (modprobe inet_diag)\n");
	if (pid && (a = pick_pid(h, c, r, pid, &answered), answered))
		return a;
	if (comm) {
		if (!*comm)
			return text(c, 400, "comm: give a process name\n");
		r->comm = xstrdup(comm);
	}
	const char *who = r->cn->who;
	if ((a = room(h, c, who, &answered), answered))
		return a;
	r->sees = r->cn->sees;
	r->uid = r->cn->uid;
	if (kind != PROF_CPU && !sec)
		return heap_now(h, c, r, kind == PROF_ALLOCS);
	r->sink = sink_new(h->procs, kind == PROF_CPU ? NULL : "alloc", kind == PROF_ALLOCS);
	r->due = r->sink->start_mono + (uint64_t)secs * NS;
	r->conn = c;
	park(h, r);
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload, size_t *upload_len, void **con_cls)
{
	struct httpd *h = cls;
	struct req *r = *con_cls;
	if (!r) {
		r = xcalloc(1, sizeof(struct req));
		r->cn = conn_of(c);
		r->fd = -1;
		*con_cls = r;
		return MHD_YES;
	}
	if (*upload_len) {
		*upload_len = 0;        /* a body we do not read */
		return MHD_YES;
	}
	if (r->cn)
		r->cn->busy = 1;        /* whole: HTTPD_REQUEST_S is met */
	if (r->state == R_GONE) {
		h->hush = 1;            /* not the "internal error" it says next */
		return MHD_NO;          /* its client hung up: close */
	}
	if (r->state == R_READY) {
		h->served++;
		if (r->failed)
			return text(c, 500, "the profile could not be written; see the agent's "
				    "log\n");
		uint8_t *b = r->body;
		r->body = NULL;
		return answer(c, 200, "application/octet-stream", b, r->len,
			      MHD_RESPMEM_MUST_FREE);
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return text(c, 405, "only GET is served here\n");
	if (strcmp(url, "/debug/pprof/profile") == 0)
		return start_profile(h, c, r, PROF_CPU);
	if (strcmp(url, "/debug/pprof/heap") == 0)
		return start_profile(h, c, r, PROF_HEAP);
	if (strcmp(url, "/debug/pprof/allocs") == 0)
		return start_profile(h, c, r, PROF_ALLOCS);
	if (strcmp(url, "/") == 0 || strcmp(url, "/debug/pprof/") == 0 ||
	    strcmp(url, "/debug/pprof") == 0)
		return index_page(h, c, r->cn);
	return text(c, 404, "%s: not here; profiles are at /debug/pprof/profile?seconds=N "
		    "(allocations: /debug/pprof/heap and /debug/pprof/allocs), the processes "
		    "at /\n", url);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode why)
{
	struct httpd *h = cls;
	struct req *r = *con_cls;
	struct conn *cn = conn_of(c);
	if (cn) {       /* keep-alive: the next request */
		cn->send_due = 0;
		awaiting(h, cn, now_ns(), bytes_in(cn->fd));
	}
	if (!r)
		return;
	if (r->state == R_WAITING)
		unpark(h, r);
	else if (r->state == R_READY)
		unlink_req(&h->sending, r);     /* sent, or dropped: its slot is free */
	sink_free(r->sink);
	free(r->comm);
	free(r->body);
	free(r);
	*con_cls = NULL;
}

/* A client can make libmicrohttpd complain at will (a request cut short
 * by hanging up): each of its messages at most once a minute. */
static void on_log(void *cls, const char *fmt, va_list ap)
{
	struct httpd *h = cls;
	if (h->hush) {
		h->hush = 0;
		return;
	}
	struct said *s = &h->mhd[MHD_SAID - 1];
	for (int i = 0; i < MHD_SAID - 1; i++)
		if (!h->mhd[i].key || h->mhd[i].key == fmt) {
			s = &h->mhd[i];
			s->key = fmt;
			break;
		}
	if (!say_now(s, now_ns()))
		return;
	char msg[512];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = 0;
	if (s->n > 1)
		probe_warn("http: %s (seen %" PRIu64 " times; said once a minute at most)",
			   msg, s->n);
	else
		probe_warn("http: %s", msg);
}

/* ---- the agent's side -------------------------------------------------- */

/* The fd the agent waits on: libmicrohttpd's epoll fd, and the parked
 * pulls' sockets beside it. */
static int watch_start(struct httpd *h, int efd)
{
	h->efd = efd;
	h->pfd = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = h };
	return h->pfd < 0 || epoll_ctl(h->pfd, EPOLL_CTL_ADD, efd, &ev) < 0 ? -1 : 0;
}

/* sock_diag tells the local clients apart by user; without it they are
 * all 127.0.0.1 (or ::1) to the bounds. */
static void diag_start(struct httpd *h)
{
	h->nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (h->nl < 0 && !h->diag_said++)
		probe_warn("http: no sock_diag netlink socket (%s): local clients are shown "
			   "no process (403 for a profile), and the bounds of one client take "
			   "them all as one (their address); load the inet_diag module to tell "
			   "them apart", strerror(errno));
}

struct httpd *httpd_start(const char *spec, struct aprocs *procs, struct symcache **syms)
{
	struct httpd *h = xcalloc(1, sizeof(*h));
	h->procs = procs;
	h->syms = syms;
	h->pfd = h->nl = -1;
	h->self = (uint32_t)geteuid();
	h->next_sweep = UINT64_MAX;
	h->lfd = bind_spec(spec, h->where, sizeof(h->where));
	if (h->lfd < 0) {
		free(h);
		return NULL;
	}
	h->d = MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG,
				0, NULL, NULL, on_request, h,
				MHD_OPTION_EXTERNAL_LOGGER, on_log, h,
				MHD_OPTION_LISTEN_SOCKET, h->lfd,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
				/* Ours is HTTPD_CONNECTIONS (admit); room above it
				 * for those shut and not yet cleaned up. */
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)(HTTPD_CONNECTIONS + 64),
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTPD_IDLE_S,
				MHD_OPTION_END);
	const union MHD_DaemonInfo *i = h->d ? MHD_get_daemon_info(h->d,
						MHD_DAEMON_INFO_EPOLL_FD) : NULL;
	if (!i || watch_start(h, i->epoll_fd) < 0) {
		probe_err("--http %s: the HTTP server (libmicrohttpd) could not start", spec);
		if (h->d)
			MHD_stop_daemon(h->d);  /* closes lfd */
		else
			close(h->lfd);
		if (h->pfd >= 0)
			close(h->pfd);
		free(h);
		return NULL;
	}
	diag_start(h);
	return h;
}

const char *httpd_where(const struct httpd *h)
{
	return h->where;
}

int httpd_fd(const struct httpd *h)
{
	return h->pfd;
}

/* A pull whose client hung up: its slot is free now; libmicrohttpd,
 * given the connection back, closes it (on_request says no). */
static void cancel(struct httpd *h, struct req *r)
{
	unpark(h, r);
	sink_free(r->sink);
	r->sink = NULL;
	r->state = R_GONE;
	h->cancelled++;
	MHD_resume_connection(r->conn);
}

void httpd_run(struct httpd *h)
{
	struct epoll_event evs[HTTPD_CAPTURES];
	int n = epoll_wait(h->pfd, evs, HTTPD_CAPTURES, 0);
	for (int i = 0; i < n; i++)
		if (evs[i].data.ptr != h)
			cancel(h, evs[i].data.ptr);
	sweep(h, now_ns());
	MHD_run(h->d);
	h->hush = 0;
}

int httpd_timeout(struct httpd *h)
{
	MHD_UNSIGNED_LONG_LONG t;
	uint64_t now = now_ns();
	long ms = -1;
	if (MHD_get_timeout(h->d, &t) == MHD_YES)
		ms = t > 60000 ? 60000 : (long)t;
	for (struct req *r = h->waiting; r; r = r->next) {
		long d = r->due > now ? (long)((r->due - now) / 1000000 + 1) : 0;
		if (ms < 0 || d < ms)
			ms = d;
	}
	if (h->next_sweep != UINT64_MAX) {
		long d = h->next_sweep > now ? (long)((h->next_sweep - now) / 1000000 + 1) : 0;
		if (ms < 0 || d < ms)
			ms = d;
	}
	return (int)ms;
}

void httpd_frame(struct httpd *h, struct aproc *p, const struct probe_msg *m)
{
	for (struct req *r = h->waiting; r; r = r->next)
		if (wants(r, p))
			sink_add(r->sink, p, m);
}

void httpd_tick(struct httpd *h, int final)
{
	uint64_t now = now_ns();
	struct req *r = h->waiting, *next;
	for (; r; r = next) {
		next = r->next;
		if (!final && r->due > now)
			continue;
		unpark(h, r);
		r->failed = sink_pprof(r->sink, *h->syms, now, &r->body, &r->len) < 0;
		sink_free(r->sink);
		r->sink = NULL;
		r->state = R_READY;
		link_req(&h->sending, r);
		if (r->cn)      /* from now: writing the others took time */
			sending(h, r->cn, now_ns() + HTTPD_SEND_S * NS);
		MHD_resume_connection(r->conn);
	}
}

unsigned httpd_connections(const struct httpd *h)
{
	const union MHD_DaemonInfo *i = MHD_get_daemon_info(h->d,
						MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
	return i ? i->num_connections : 0;
}

unsigned httpd_pending(const struct httpd *h)
{
	return count(h->waiting);
}

uint64_t httpd_served(const struct httpd *h)
{
	return h->served;
}

void httpd_stop(struct httpd *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);          /* closes lfd too */
	close(h->pfd);
	if (h->nl >= 0)
		close(h->nl);
	free(h);
}
