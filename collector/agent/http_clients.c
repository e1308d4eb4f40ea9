/*
 * http_clients.c - who is at the other end of an HTTP connection
 * (httpd.h's contract, httpd_int.h): a socket of this host is its owner's
 * uid, which the kernel's sock_diag says, and that uid's sight; any other
 * client is its address (an IPv6 one by its /64), seeing every process.
 */
#include "agent/httpd_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util.h"

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
void httpi_client_of(struct httpd *h, struct conn *cn)
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

/* sock_diag tells the local clients apart by user; without it they are
 * all 127.0.0.1 (or ::1) to the bounds. */
void httpi_diag_start(struct httpd *h)
{
	h->nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (h->nl < 0 && !h->diag_said++)
		probe_warn("http: no sock_diag netlink socket (%s): local clients are shown "
			   "no process (403 for a profile), and the bounds of one client take "
			   "them all as one (their address); load the inet_diag module to tell "
			   "them apart", strerror(errno));
}
