/*
 * ingest.c - accepting the processes' connections and reading their frames,
 * for probe record and probe top (see ingest.h).
 */
#include "ingest.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "usock.h"
#include "util.h"

static void note(struct ingest *in, enum ingest_note kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void note(struct ingest *in, enum ingest_note kind, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	in->note(in->ctx, kind, msg);
}

void ingest_close(struct ingest *in, struct ingest_conn *c, int warn_partial)
{
	size_t pending = probe_stream_pending(&c->s);
	if (warn_partial && pending)
		note(in, INGEST_PARTIAL, "process %ld: its connection ended inside a frame "
		     "(%zu bytes dropped)", (long)c->pid, pending);
	if (in->closed)
		in->closed(in->ctx, c);
	epoll_ctl(in->ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	probe_stream_free(&c->s);
	if (c->prev)
		c->prev->next = c->next;
	else
		in->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	in->nconns--;
	/* Later events of this epoll batch may still point at it. */
	c->dead = 1;
	c->next = in->dead;
	in->dead = c;
}

void ingest_close_all(struct ingest *in)
{
	while (in->conns)
		ingest_close(in, in->conns, 1);
	ingest_free_dead(in);
}

void ingest_free_dead(struct ingest *in)
{
	while (in->dead) {
		struct ingest_conn *c = in->dead;
		in->dead = c->next;
		free(c);
	}
}

/* Check one frame and hand it on; -1 (after a message) rejects the connection. */
static int conn_frame(struct ingest *in, struct ingest_conn *c, const uint8_t *f, size_t len)
{
	char err[PROBE_ERR_MAX];
	struct probe_msg m;
	if (probe_decode_frame(f, len, &m, &in->sc, err) < 0) {
		note(in, INGEST_BAD_DATA, "process %ld sent a bad frame (%s); ignoring the "
		     "rest of its data", (long)c->pid, err);
		return -1;
	}
	if (m.pid != (uint32_t)c->pid) {
		note(in, INGEST_BAD_DATA, "process %ld sent a frame for process %" PRIu32
		     "; ignoring the rest of its data", (long)c->pid, m.pid);
		return -1;
	}
	if (!c->hello) {
		if (m.type != PROBE_F_HELLO) {
			note(in, INGEST_BAD_DATA, "process %ld began with a %s frame, not HELLO; "
			     "ignoring its data", (long)c->pid, probe_frame_type_name(m.type));
			return -1;
		}
		c->hello = 1;
	}
	in->frame(in->ctx, c, &m, f, len);
	return 0;
}

void ingest_read(struct ingest *in, struct ingest_conn *c)
{
	char err[PROBE_ERR_MAX];
	for (int round = 0; round < INGEST_READS; round++) {
		size_t avail;
		uint8_t *space = probe_stream_space(&c->s, &avail);
		ssize_t n = read(c->fd, space, avail);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			if (errno != ECONNRESET)
				note(in, INGEST_READ_ERROR, "reading from process %ld: %s",
				     (long)c->pid, strerror(errno));
			ingest_close(in, c, 1);
			return;
		}
		if (n == 0) {
			ingest_close(in, c, 1);
			return;
		}
		probe_stream_commit(&c->s, (size_t)n);
		const uint8_t *f;
		size_t len;
		int k;
		while ((k = probe_stream_next(&c->s, &f, &len, err)) == 1)
			if (conn_frame(in, c, f, len) < 0) {
				ingest_close(in, c, 0);
				return;
			}
		if (k < 0) {
			note(in, INGEST_BAD_DATA, "process %ld sent a bad stream (%s); ignoring "
			     "the rest of its data", (long)c->pid, err);
			ingest_close(in, c, 0);
			return;
		}
		if ((size_t)n < avail)
			return;         /* drained for now */
	}
}

void ingest_accept_all(struct ingest *in)
{
	for (;;) {
		int fd = accept4(in->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if ((errno == EMFILE || errno == ENFILE) && in->spare_fd >= 0) {
				/* Out of fds: take the connection with the spare and drop it,
				 * or it would wake us forever; its process counts it lost. */
				close(in->spare_fd);
				int x = accept4(in->lfd, NULL, NULL, SOCK_CLOEXEC);
				if (x >= 0)
					close(x);
				in->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
				note(in, INGEST_NOFILE, "too many open files: a process could not "
				     "be %s", in->what);
				continue;
			}
			return;         /* EAGAIN, or nothing we can do now */
		}
		pid_t pid = -1;
		uid_t uid = (uid_t)-1;
		if (usock_peer(fd, &pid, &uid) < 0) {
			note(in, INGEST_REFUSED, "refused a connection whose sender cannot be "
			     "identified (SO_PEERCRED: %s)", strerror(errno));
			close(fd);
			continue;
		}
		if (uid != in->uid) {
			note(in, INGEST_REFUSED, "refused a connection from process %ld of uid "
			     "%ld: only uid %ld may connect", (long)pid, (long)uid, (long)in->uid);
			close(fd);
			continue;
		}
		struct ingest_conn *c = xcalloc(1, sizeof(*c));
		c->fd = fd;
		c->pid = pid;
		if (probe_stream_init(&c->s) < 0)
			probe_oom();
		struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP, .data.ptr = c };
		if (epoll_ctl(in->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
			note(in, INGEST_UNWATCHED, "cannot watch process %ld's connection: %s",
			     (long)pid, strerror(errno));
			probe_stream_free(&c->s);
			close(fd);
			free(c);
			continue;
		}
		c->next = in->conns;
		if (in->conns)
			in->conns->prev = c;
		in->conns = c;
		in->nconns++;
		if (in->opened)
			in->opened(in->ctx, c);
	}
}

/* Many processes may connect at once: use every fd we are allowed. */
void ingest_raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}
