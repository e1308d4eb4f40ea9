/*
 * loop.c - one turn of the shared event loop (loop.h).
 *
 * Why one: record, top and agent each had this turn written out, and
 * they had drifted (which descriptor was read first, how a connection
 * closed within a batch was skipped); the order matters, so it is kept in
 * one place.
 */
#include "session/loop.h"

#include <string.h>
#include <sys/epoll.h>

#include "outside/sampler.h"

char loop_tag_listen, loop_tag_signal, loop_tag_ring;

#define BATCH 64

int loop_add(struct ingest *in, int fd, void *tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = tag };
	return epoll_ctl(in->ep, EPOLL_CTL_ADD, fd, &ev);
}

int loop_open(struct ingest *in, int sfd)
{
	in->ep = epoll_create1(EPOLL_CLOEXEC);
	if (in->ep < 0 || (in->lfd >= 0 && !in->accept_polled &&
			   loop_add(in, in->lfd, &loop_tag_listen) < 0) ||
	    (sfd >= 0 && loop_add(in, sfd, &loop_tag_signal) < 0))
		return -1;
	return 0;
}

int loop_ms(struct ingest *in, int ms, int outside)
{
	int due = ingest_timeout(in);
	if (due >= 0 && (ms < 0 || due < ms))
		ms = due;
	if (outside && (ms < 0 || ms > SAMPLER_READ_MS))
		ms = SAMPLER_READ_MS;
	if (in->accept_polled && in->lfd >= 0 && (ms < 0 || ms > INGEST_POLL_MS))
		ms = INGEST_POLL_MS;
	return ms;
}

int loop_turn(struct ingest *in, int ms, loop_own_fn own, void *ctx, struct loop_ready *ready)
{
	struct epoll_event evs[BATCH];
	struct ingest_conn *conns[BATCH];
	int lis = 0, nconns = 0, n = epoll_wait(in->ep, evs, BATCH, ms);

	memset(ready, 0, sizeof *ready);
	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		void *p = evs[i].data.ptr;
		if (p == &loop_tag_listen)
			lis = 1;
		else if (p == &loop_tag_signal)
			ready->signal = 1;
		else if (p == &loop_tag_ring)
			ready->ring = 1;
		else if (!own || !own(ctx, p))
			conns[nconns++] = p;
	}
	for (int i = 0; i < nconns; i++)
		if (!conns[i]->dead)
			ingest_read(in, conns[i]);
	ingest_free_dead(in);
	if (lis || (in->accept_polled && !in->paused_until))
		ingest_accept_all(in);
	if (ingest_timeout(in) == 0)
		ingest_poll(in);
	return n;
}
