/*
 * ingest.c - accepting the processes' connections and reading their frames,
 * for probe record and probe top (see ingest.h).
 */
#include "ingest/ingest.h"

#include "ingest/arena_read.h"
#include "ingest/scrub.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ingest/usock.h"
#include "util.h"

void ingest_note(struct ingest *in, enum ingest_note kind, const char *fmt, ...)
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
		ingest_note(in, INGEST_PARTIAL, "process %ld: its connection ended inside a frame "
		     "(%zu bytes dropped)", (long)c->pid, pending);
	/* What it sampled up to its end (a SIGKILL too) is still in its arena. */
	if (c->ar) {
		arena_read(in, c, UINT64_MAX, 1);
		if (arena_wake_fd(c->ar) >= 0)
			epoll_ctl(in->ep, EPOLL_CTL_DEL, arena_wake_fd(c->ar), NULL);
		arena_detach(c->ar);
		c->ar = NULL;
		in->narenas--;
	}
	if (c->arena_fd >= 0) {
		close(c->arena_fd);
		c->arena_fd = -1;
	}
	if (c->wake_fd >= 0) {
		close(c->wake_fd);
		c->wake_fd = -1;
	}
	if (in->closed)
		in->closed(in->ctx, c);
	if (c->fd >= 0) {
		epoll_ctl(in->ep, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
	}
	if (c->pidfd >= 0) {
		if (c->orphan)
			epoll_ctl(in->ep, EPOLL_CTL_DEL, c->pidfd, NULL);
		close(c->pidfd);
	}
	cfi_maps_clear(&c->maps);
	peer_free(&c->peer);
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
	peer_budgets_free(&in->budgets);
}

void ingest_free_dead(struct ingest *in)
{
	while (in->dead) {
		struct ingest_conn *c = in->dead;
		in->dead = c->next;
		free(c);
	}
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* The parent of pid as we see it (its PPid), or 0. */
static uint32_t real_ppid(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	FILE *f = fopen(path, "re");
	uint32_t ppid = 0;
	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "PPid: %" SCNu32, &ppid) == 1)
			break;
	fclose(f);
	return ppid;
}

/*
 * A process in another PID namespace: its frames are rewritten to the pid
 * we know it by (ingest.h); its HELLO's parent too, when we can see it.
 */
static void to_our_pid(struct ingest_conn *c, uint8_t *f, struct probe_msg *m)
{
	if (c->wire_pid == (uint32_t)c->pid)
		return;
	put_le32(f + 8, (uint32_t)c->pid);
	m->pid = (uint32_t)c->pid;
	if (m->type == PROBE_F_HELLO) {
		m->u.hello.ppid = real_ppid(c->pid);
		put_le32(f + PROBE_FRAME_HDR + 4, m->u.hello.ppid);
	}
}

uint32_t ingest_our_tid(const struct ingest_conn *c, uint32_t tid)
{
	return tid == c->wire_pid ? (uint32_t)c->pid : tid;
}

void ingest_deliver(struct ingest *in, struct ingest_conn *c, uint8_t *f, size_t len)
{
	char err[PROBE_ERR_MAX];
	struct probe_msg m;
	const uint8_t *out = f;
	if (probe_decode_frame(f, len, &m, &in->sc, err) < 0) {
		ingest_note(in, INGEST_ARENA, "process %ld: a frame made from its arena does "
		     "not decode (%s); dropped", (long)c->pid, err);
		return;
	}
	int scrubbed = m.type == PROBE_F_SAMPLES ? scrub_samples(in, c, &m, &out, &len) : 0;
	if (scrubbed < 0) {
		in->scrub_dropped++;
		return;
	}
	in->frame(in->ctx, c, &m, out, len);
	if (scrubbed)
		free((void *)out);
}

static int process_alive(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };
	return pidfd >= 0 && poll(&p, 1, 0) == 0;
}

/* to (a new connection of from's process) reads from's arena; from goes. */
static void hand_over(struct ingest *in, struct ingest_conn *from, struct ingest_conn *to)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = to };
	to->ar = from->ar;
	from->ar = NULL;
	if (arena_wake_fd(to->ar) >= 0)
		epoll_ctl(in->ep, EPOLL_CTL_MOD, arena_wake_fd(to->ar), &ev);
	ingest_close(in, from, 0);
}

/*
 * Another connection of c's process: one whose socket ended (orphan), or
 * one that is open and has said HELLO.  NULL when there is none.
 */
static struct ingest_conn *sibling(struct ingest *in, struct ingest_conn *c, int orphan)
{
	for (struct ingest_conn *o = in->conns; o; o = o->next)
		if (o != c && !o->dead && o->pid == c->pid && o->orphan == orphan &&
		    (orphan || o->hello))
			return o;
	return NULL;
}

/*
 * The socket ended.  If the process lives on with an arena and said no
 * EXIT, keep reading the arena until it ends (ingest.h); else close.
 */
static void conn_ended(struct ingest *in, struct ingest_conn *c)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
	struct ingest_conn *n = sibling(in, c, 0);
	if (n && c->ar && !n->ar && n->arena_fd < 0 && !n->noarena) {
		/* Its new connection came first, without the arena: hand it over. */
		hand_over(in, c, n);
		return;
	}
	/* A new image of that pid (exec) has begun: this one is over. */
	if (n || !c->ar || c->exit_seen || !process_alive(c->pidfd) ||
	    epoll_ctl(in->ep, EPOLL_CTL_ADD, c->pidfd, &ev) < 0) {
		ingest_close(in, c, 1);
		return;
	}
	epoll_ctl(in->ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	c->orphan = 1;
}

/*
 * The wake socket that came with the arena, watched: a datagram socket
 * only (anything else could be ready for ever, or block a read).  Without
 * one (it failed, or an older libprobe), the poll alone reads the arena.
 */
static void watch_wake(struct ingest *in, struct ingest_conn *c)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
	int fd = c->wake_fd, type = 0;
	socklen_t tl = sizeof(type);
	struct stat st;

	c->wake_fd = -1;
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode) ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_DGRAM ||
	    epoll_ctl(in->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
		close(fd);
		return;
	}
	arena_set_wake(c->ar, fd);
}

/* The HELLO's arena, if one came with it; else the one its process had. */
static void attach_arena(struct ingest *in, struct ingest_conn *c)
{
	char err[256];
	struct ingest_conn *o = sibling(in, c, 1);
	if (o && c->arena_fd < 0 && !c->ar && !c->noarena) {
		/* Its descriptor was lost with the socket: the same arena. */
		hand_over(in, o, c);
		return;
	}
	if (o)
		ingest_close(in, o, 1);         /* a new image: the old one's last */
	if (c->arena_fd < 0 || c->ar)
		return;
	c->ar = arena_attach(c->arena_fd, err, sizeof(err));
	close(c->arena_fd);
	c->arena_fd = -1;
	if (!c->ar) {
		ingest_note(in, INGEST_ARENA, "process %ld: its shared memory cannot be read "
		     "(%s); its samples are lost", (long)c->pid, err);
		return;
	}
	in->narenas++;
	watch_wake(in, c);
}

/*
 * Quiet from now on: its frames are read on the poll (ingest.h).  Once its
 * first MAPs are in: the rules given to a new process (cfi_seed) are given
 * when they are read, and only while it has unloaded nothing, so they must
 * not wait for the poll (40 short gt_dlloop runs: 0 of 176 loader samples
 * reached main when they did).
 */
static void go_quiet(struct ingest *in, struct ingest_conn *c)
{
	struct epoll_event ev = { .events = EPOLLRDHUP, .data.ptr = c };
	if (in->quiet && !c->quiet && c->ar && c->maps.n && c->fd >= 0 && !c->dead &&
	    epoll_ctl(in->ep, EPOLL_CTL_MOD, c->fd, &ev) == 0)
		c->quiet = 1;
}

/* Check one frame and hand it on; -1 (after a message) rejects the connection. */
static int conn_frame(struct ingest *in, struct ingest_conn *c, uint8_t *f, size_t len)
{
	char err[PROBE_ERR_MAX];
	struct probe_msg m;
	if (probe_decode_frame(f, len, &m, &in->sc, err) < 0) {
		ingest_note(in, INGEST_BAD_DATA, "process %ld sent a bad frame (%s); ignoring the "
		     "rest of its data", (long)c->pid, err);
		return -1;
	}
	if (!c->hello) {
		if (m.type != PROBE_F_HELLO) {
			ingest_note(in, INGEST_BAD_DATA, "process %ld began with a %s frame, not HELLO; "
			     "ignoring its data", (long)c->pid, probe_frame_type_name(m.type));
			return -1;
		}
		/* A process of our own uid gone too soon to tell is believed. */
		int pid_ok = peer_pid_ok(&c->peer, m.pid);
		if (pid_ok == 0 || (pid_ok < 0 && c->peer.untrusted)) {
			in->bad_pid++;
			ingest_note(in, INGEST_BAD_DATA, "process %ld (uid %ld) calls itself process %"
				    PRIu32 ", which it is not; ignoring its data", (long)c->pid,
				    (long)c->uid, m.pid);
			return -1;
		}
		c->hello = 1;
		c->wire_pid = m.pid;
		c->hide_kernel = c->peer.untrusted && !peer_kallsyms_ok(&c->peer);
	}
	if (m.type == PROBE_F_INFO || m.type == PROBE_F_JIT ||
	    (m.type >= PROBE_F_STACK && m.type < PROBE_F_TYPE_MAX) ||
	    (m.type == PROBE_F_SAMPLES && m.u.samples.stacked)) {
		/* The recording's header, JIT names, stacks, compressed blocks
		   and names are the collector's to write. */
		ingest_note(in, INGEST_BAD_DATA, "process %ld sent a %s frame, which only "
		     "the collector writes; ignoring the rest of its data", (long)c->pid,
		     m.type == PROBE_F_SAMPLES ? "STACKED" : probe_frame_type_name(m.type));
		return -1;
	}
	if (m.pid != c->wire_pid) {
		ingest_note(in, INGEST_BAD_DATA, "process %ld sent a frame for process %" PRIu32
		     "; ignoring the rest of its data", (long)c->pid, m.pid);
		return -1;
	}
	to_our_pid(c, f, &m);
	if (m.type == PROBE_F_SYNC) {
		/* Its samples up to then first; the frame itself goes no further. */
		if (c->ar)
			arena_read(in, c, m.u.sync.time_ns, 0);
		return 0;
	}
	const uint8_t *out = f;
	int scrubbed = 0;
	if (m.type == PROBE_F_MAP)
		scrubbed = scrub_map(in, c, &m, &out, &len);
	else if (m.type == PROBE_F_SAMPLES)
		scrubbed = scrub_samples(in, c, &m, &out, &len);
	if (scrubbed < 0) {
		in->scrub_dropped++;
		return 0;       /* cannot be rewritten: dropped */
	}
	if (m.type == PROBE_F_HELLO) {
		cfi_maps_clear(&c->maps);
		c->noarena = (m.u.hello.flags & PROBE_HELLO_NOARENA) != 0;
		attach_arena(in, c);
		/*
		 * Closing the image before an exec delivered its last samples,
		 * decoded into the same scratch as m's strings: decode the HELLO
		 * again, or the new image is named by whatever was decoded last
		 * (probe top showed "klmno" for head).  It decoded once; it does
		 * again (to_our_pid rewrote f as it rewrote m).
		 */
		if (probe_decode_frame(f, len, &m, &in->sc, err) < 0)
			return -1;
	} else if (m.type == PROBE_F_MAP && !(scrubbed && m.u.map.path[0] == '[') &&
		   (!c->peer.untrusted || c->maps.n < INGEST_UNTRUSTED_MAPS)) {
		/* Rules are learned only from a file the kernel confirmed. */
		cfi_maps_add(&c->maps, m.u.map.start, m.u.map.end, m.u.map.bias,
			     m.u.map.build_id, m.u.map.build_id_len, m.u.map.path);
		arena_seed_rules(c);
	}
	in->frame(in->ctx, c, &m, out, len);
	if (scrubbed)
		free((void *)out);
	if (m.type == PROBE_F_EXIT && !c->dead) {
		c->exit_seen = 1;
		(void)send(c->fd, "A", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	}
	/* A static exec waits for this: frame() followed it from outside, or not. */
	if (m.type == PROBE_F_UNPROFILED && m.u.unprof.reason == PROBE_UNPROF_STATIC && !c->dead)
		(void)send(c->fd, "U", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	return 0;
}

/* Descriptors that came with a record: the first one is the arena, then its wake socket. */
static void take_fds(struct ingest_conn *c, struct msghdr *mh)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int first = -1;
		for (size_t i = 0; i < n; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (c->arena_fd < 0 && !c->ar && !c->hello)
				c->arena_fd = fd;
			else if (i == 1 && c->arena_fd == first && c->wake_fd < 0)
				c->wake_fd = fd;        /* the arena's wake socket */
			else
				close(fd);
			if (i == 0)
				first = fd;
		}
	}
}

/* The largest record a process may send (libprobe sends 32 KiB at most). */
#define RECORD_MAX (256u * 1024)

/* Up to INGEST_READS records of c; 1 when it stopped there (more may wait). */
static int read_some(struct ingest *in, struct ingest_conn *c)
{
	char err[PROBE_ERR_MAX];
	if (c->orphan) {
		/* Its pidfd: the process has ended. */
		ingest_close(in, c, 0);
		return 0;
	}
	for (int round = 0; round < INGEST_READS; round++) {
		union {
			char buf[CMSG_SPACE(4 * sizeof(int))];
			struct cmsghdr align;
		} ctl;
		size_t avail;
		uint8_t *space = probe_stream_space(&c->s, &avail);
		/* Records hold whole frames: only a stray sender leaves a part. */
		if (avail < RECORD_MAX) {
			ingest_note(in, INGEST_BAD_DATA, "process %ld sent records that end inside "
			     "a frame; ignoring the rest of its data", (long)c->pid);
			ingest_close(in, c, 0);
			return 0;
		}
		struct iovec iov = { space, RECORD_MAX };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
		ssize_t n = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno != ECONNRESET)
				ingest_note(in, INGEST_READ_ERROR, "reading from process %ld: %s",
				     (long)c->pid, strerror(errno));
			conn_ended(in, c);
			return 0;
		}
		take_fds(c, &mh);
		if (n == 0) {
			conn_ended(in, c);
			return 0;
		}
		if (mh.msg_flags & MSG_TRUNC) {
			ingest_note(in, INGEST_BAD_DATA, "process %ld sent a record of more than %u "
			     "bytes; ignoring the rest of its data", (long)c->pid, RECORD_MAX);
			ingest_close(in, c, 0);
			return 0;
		}
		probe_stream_commit(&c->s, (size_t)n);
		const uint8_t *f;
		size_t len;
		int k;
		while ((k = probe_stream_next(&c->s, &f, &len, err)) == 1)
			if (conn_frame(in, c, (uint8_t *)f, len) < 0 || c->dead) {
				if (!c->dead)
					ingest_close(in, c, 0);
				return 0;
			}
		if (k < 0) {
			ingest_note(in, INGEST_BAD_DATA, "process %ld sent a bad stream (%s); "
			     "ignoring the rest of its data", (long)c->pid, err);
			ingest_close(in, c, 0);
			return 0;
		}
	}
	return 1;
}

/*
 * A thread's ring passed half full: what the process sent before it (its
 * SYNCs), then its arena, now.  An orphan has no socket left to read.
 */
static void woken(struct ingest *in, struct ingest_conn *c)
{
	/*
	 * A few rounds: a process that keeps its socket full must not hold
	 * us.  Its arena only once what it sent before is read (a sample is
	 * never taken before its object's MAP); else the next round does it.
	 */
	int more = 0;
	for (int i = 0; i < 4 && !c->dead && !c->orphan && c->fd >= 0; i++)
		if (!(more = read_some(in, c)))
			break;
	if (c->ar && !c->dead && !more)
		arena_read(in, c, UINT64_MAX, 0);
}

/*
 * Its socket, its pidfd (an orphan) or its wake socket is ready.  A wake
 * that is not ready is not what woke us: the others are level-triggered,
 * so when both were, the second call of the batch (or the next batch)
 * does what they need.
 */
void ingest_read(struct ingest *in, struct ingest_conn *c)
{
	int w = c->ar ? arena_woken(c->ar) : 0;
	if (w < 0) {
		/* Ready for ever or broken: not libprobe's; the poll reads the arena. */
		epoll_ctl(in->ep, EPOLL_CTL_DEL, arena_wake_fd(c->ar), NULL);
		arena_set_wake(c->ar, -1);
		return;
	}
	if (w > 0) {
		woken(in, c);
		if (!c->dead)
			go_quiet(in, c);
		return;
	}
	read_some(in, c);
	go_quiet(in, c);
}

static void resume_accepting(struct ingest *in);
static void say_lost(struct ingest *in);

/*
 * Another user's connection whose process has ended while its socket
 * lives on (a child kept it): closed, its arena read one last time.  Its
 * pid could be taken by another process, which the frames would then be
 * believed to come from.  Checked once a second.
 */
static int gone_behind_socket(struct ingest *in, struct ingest_conn *c)
{
	if (!c->peer.untrusted || c->dead || c->orphan || in->last_poll < c->alive_checked)
		return 0;
	c->alive_checked = in->last_poll + 1000000000ull;
	if (c->pidfd < 0 || process_alive(c->pidfd))
		return 0;       /* (without a pidfd we cannot tell) */
	ingest_close(in, c, 1);
	return 1;
}

void ingest_poll(struct ingest *in)
{
	unsigned asked = 0;
	resume_accepting(in);
	say_lost(in);
	in->last_poll = now_ns();
	for (struct ingest_conn *c = in->conns; c; c = c->next) {
		if (gone_behind_socket(in, c))
			continue;
		/* What it sent before its samples, all of it (its SYNCs). */
		while (c->quiet && !c->dead && !c->orphan && c->fd >= 0 && read_some(in, c))
			;
		if (c->ar && !c->dead)
			asked += arena_read(in, c, UINT64_MAX, 0);
	}
	in->learning = asked > 0;
}

int ingest_timeout(struct ingest *in)
{
	uint64_t now = now_ns(), due = UINT64_MAX;
	if (in->narenas) {
		uint64_t ms = in->learning ? INGEST_POLL_LEARN_MS : INGEST_POLL_MS;
		due = in->last_poll + ms * 1000000ull;
	}
	if (in->paused_until && in->paused_until < due)
		due = in->paused_until;
	if (due == UINT64_MAX)
		return -1;
	return now >= due ? 0 : (int)((due - now) / 1000000u) + 1;
}

int ingest_say_due(uint64_t *said_at)
{
	uint64_t now = now_ns();
	if (*said_at && now - *said_at < INGEST_SAY_NS)
		return 0;
	*said_at = now;
	return 1;
}

/* Say once a minute at most how often we ran out of descriptors. */
static void say_lost(struct ingest *in)
{
	if (in->nofile > in->nofile_said && ingest_say_due(&in->nofile_said_at)) {
		ingest_note(in, INGEST_NOFILE, "too many open files: new processes wait to be %s "
			    "until others end (%" PRIu64 " time%s so far; raise the limit: ulimit -n, "
			    "or LimitNOFILE= for the service)", in->what, in->nofile,
			    in->nofile == 1 ? "" : "s");
		in->nofile_said = in->nofile;
	}
}

/*
 * Out of fds: stop accepting for a while; the connections wait in the
 * listening socket's queue (their processes' arenas keep their samples
 * meanwhile, up to each ring's size).  accept4 fails with EMFILE whether
 * or not a connection is pending, so retrying at once would spin
 * (ingest.h), and so would an epoll that still reports lfd.
 */
static void out_of_fds(struct ingest *in)
{
	in->nofile++;
	say_lost(in);
	if (!in->lfd_tag)
		return;
	in->pause_ms = in->pause_ms ? in->pause_ms * 2 : INGEST_PAUSE_MIN_MS;
	if (in->pause_ms > INGEST_PAUSE_MAX_MS)
		in->pause_ms = INGEST_PAUSE_MAX_MS;
	if (!in->paused_until && !in->accept_polled)
		epoll_ctl(in->ep, EPOLL_CTL_DEL, in->lfd, NULL);
	in->paused_until = now_ns() + in->pause_ms * 1000000ull;
}

/* Accepting again after a pause (ingest_poll). */
static void resume_accepting(struct ingest *in)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = in->lfd_tag };
	if (!in->paused_until || now_ns() < in->paused_until)
		return;
	in->paused_until = 0;
	if (!in->accept_polled)
		epoll_ctl(in->ep, EPOLL_CTL_ADD, in->lfd, &ev);
	ingest_accept_all(in);
}

/* Is c over its user's or its process's share of root's agent?  Why, or NULL. */
static const char *over_share(struct ingest *in, pid_t pid, uid_t uid)
{
	unsigned by_uid = 0, by_pid = 0, others = 0;
	if (!in->any_uid || uid == in->uid)
		return NULL;
	for (struct ingest_conn *o = in->conns; o; o = o->next) {
		by_uid += o->uid == uid;
		by_pid += o->pid == pid;
		others += o->uid != in->uid;
	}
	if (by_pid >= INGEST_PID_CONNS)
		return "connections of one process";
	if (by_uid >= INGEST_UID_CONNS)
		return "connections of one user";
	if (others >= INGEST_OTHERS_CONNS)
		return "connections of other users than the agent's";
	return NULL;
}

static void refuse_over_share(struct ingest *in, int fd, pid_t pid, uid_t uid, const char *what)
{
	close(fd);
	in->limited++;
	if (!ingest_say_due(&in->limited_said_at))
		return;
	/* (Shares hold with any_uid alone: root's agent.) */
	ingest_note(in, INGEST_LIMIT, "refused process %ld of uid %ld: over the %s the agent "
		    "may hold (%u per process, %u per user, %u in all; %" PRIu64 " refused so far)",
		    (long)pid, (long)uid, what, INGEST_PID_CONNS, INGEST_UID_CONNS,
		    INGEST_OTHERS_CONNS, in->limited);
}

static struct ingest_conn *conn_new(struct ingest *in, int fd, pid_t pid, uid_t uid)
{
	struct ingest_conn *c = xcalloc(1, sizeof(*c));
	c->fd = fd;
	c->seq = ++in->accepted;
	c->pid = pid;
	c->uid = uid;
	c->arena_fd = -1;
	c->wake_fd = -1;
	c->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (probe_stream_init(&c->s) < 0)
		probe_oom();
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP, .data.ptr = c };
	if (peer_init(&c->peer, fd, pid, uid) < 0 ||
	    epoll_ctl(in->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
		ingest_note(in, INGEST_UNWATCHED, "cannot watch process %ld's connection: %s",
		     (long)pid, strerror(errno));
		probe_stream_free(&c->s);
		if (c->pidfd >= 0)
			close(c->pidfd);
		close(fd);
		free(c);
		return NULL;
	}
	return c;
}

void ingest_accept_all(struct ingest *in)
{
	while (!in->paused_until) {
		int fd = accept4(in->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE)
				out_of_fds(in);
			return;         /* EAGAIN, or nothing we can do now */
		}
		in->pause_ms = 0;
		pid_t pid = -1;
		uid_t uid = (uid_t)-1;
		if (usock_peer(fd, &pid, &uid) < 0) {
			ingest_note(in, INGEST_REFUSED, "refused a connection whose sender cannot be "
			     "identified (SO_PEERCRED: %s)", strerror(errno));
			close(fd);
			continue;
		}
		if (uid != in->uid && !in->any_uid) {
			ingest_note(in, INGEST_REFUSED, "refused a connection from process %ld of uid "
			     "%ld: only uid %ld may connect", (long)pid, (long)uid, (long)in->uid);
			close(fd);
			continue;
		}
		const char *over = over_share(in, pid, uid);
		if (over) {
			refuse_over_share(in, fd, pid, uid, over);
			continue;
		}
		struct ingest_conn *c = conn_new(in, fd, pid, uid);
		if (!c)
			continue;
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
