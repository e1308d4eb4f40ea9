/*
 * record_loop.c - probe record's loops, each turn session/loop.h's, over
 * the listening socket, every process's connection (ingest.c), a signalfd,
 * and the rings of what is sampled from outside.  record_int.h has the
 * recorder; record.c the order of things (record.c's header says why this
 * shape).
 */
#include "cmd/record_int.h"

#include "cmd/record.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session/child.h"
#include "cmdopt.h"
#include "outside/elfmap.h"
#include "session/events.h"
#include "hashtab.h"
#include "ingest/ingest.h"
#include "data/lost.h"
#include "session/recfile.h"
#include "outside/sampler.h"
#include "session/spawn.h"
#include "session/unconnected.h"
#include "ingest/usock.h"
#include "util.h"
#include "data/wire_decode.h"

/* ---- connections ---------------------------------------------------- */

void on_note(void *ctx, enum ingest_note kind, const char *msg)
{
	struct recorder *r = ctx;
	switch (kind) {
	case INGEST_BAD_DATA:
	case INGEST_REFUSED:
		probe_err("%s", msg);
		break;
	case INGEST_PARTIAL:
		if (!r->o->quiet)
			probe_warn("%s", msg);
		break;
	default:
		probe_warn("%s", msg);
		break;
	}
}

void on_opened(void *ctx, struct ingest_conn *c)
{
	struct recorder *r = ctx;
	(void)c;
	r->nconnected++;
}

/* --serve: a process has ended (maybe killed): its samples are on disk now. */
void on_closed(void *ctx, struct ingest_conn *c)
{
	struct recorder *r = ctx;
	(void)c;
	if (r->o->serve)
		recfile_flush(&r->out);
}

/*
 * A HELLO for pid arrived on c: read every older connection of that pid to
 * its end first (the image before an exec, a connection the program
 * closed), so that their frames are saved before the new image's.  Only
 * older ones: a newer one is the image after this one.
 */
static void drain_others(struct recorder *r, struct ingest_conn *c)
{
	struct ingest_conn *olds[64];
	unsigned n = 0;

	if (r->draining || !c)
		return;
	r->draining = 1;
	for (struct ingest_conn *o = r->in.conns; o && n < 64; o = o->next)
		if (o != c && o->pid == c->pid && !o->dead && o->seq < c->seq)
			olds[n++] = o;
	/* Closed ones stay allocated until ingest_free_dead, after this batch. */
	for (unsigned i = 0; i < n; i++) {
		struct ingest_conn *o = olds[i];
		for (int k = 0; k < 4096 && !o->dead; k++) {
			int avail = 0;
			ingest_read(&r->in, o);
			if (o->dead || ioctl(o->fd, FIONREAD, &avail) < 0 || avail == 0)
				break;
		}
	}
	r->draining = 0;
}


/* Save one valid frame and count it (ingest.h checked it). */
void on_frame(void *ctx, struct ingest_conn *c, struct probe_msg *m,
		     const uint8_t *f, size_t len)
{
	struct recorder *r = ctx;
	struct proc_ent *p = rec_proc_get(r, m->pid);
	if (m->type == PROBE_F_HELLO) {
		/* The decoded message lives in r->in.sc: take what we need first. */
		char *desc = rec_image_desc(m);
		uint32_t ppid = m->u.hello.ppid;
		int timer = m->u.hello.event_type == PROBE_EVENT_TIMER;
		uint64_t asked = m->u.hello.freq ? m->u.hello.value : 0;
		drain_others(r, c);
		p = rec_proc_get(r, m->pid);
		if (!p->ran) {
			p->ran = desc;
		} else if (strcmp(desc, p->ran) != 0) {
			/* A new image (exec): remember what ran before, by name. */
			const char *colon = strchr(p->ran, ':');
			int clen = colon ? (int)(colon - p->ran) : (int)strlen(p->ran);
			char *b = p->before ? xasprintf("%s, %.*s", p->before, clen, p->ran)
					    : xasprintf("%.*s", clen, p->ran);
			free(p->before);
			p->before = b;
			free(p->ran);
			p->ran = desc;
		} else {
			free(desc);
		}
		p->ppid = ppid;
		p->timer |= timer;
		p->asked = asked;
		p->inside |= c != NULL;
	}
	/* A HELLO's strings were in the scratch drain_others decoded into. */
	if (m->type == PROBE_F_HELLO)
		recfile_frame(&r->out, f, len);
	else
		recfile_msg(&r->out, f, len, m);
	switch (m->type) {
	case PROBE_F_HELLO:
		r->npids += rec_set_add(&r->pids, m->pid);
		if (rec_set_add(&r->tids, (uint64_t)m->pid << 32 | m->pid)) {
			r->ntids++;
			p->threads++;
		}
		break;
	case PROBE_F_THREAD:
		if (rec_set_add(&r->tids, (uint64_t)m->pid << 32 | m->u.thread.tid)) {
			r->ntids++;
			p->threads++;
		}
		break;
	case PROBE_F_SAMPLES: {
		struct probe_sample_raw s;
		while (probe_samples_next_raw(m, &s)) {
			/* A free (--alloc) is no sample: counted by the aggregator. */
			if (probe_sample_is_free(&s))
				continue;
			r->samples++;
			p->samples++;
			/* The timers' rate is of CPU samples alone (not --off-cpu's). */
			if (s.event == 0) {
				p->cpu_samples++;
				p->weight = sat_add(p->weight, s.weight);
			}
			if (rec_set_add(&r->tids, (uint64_t)m->pid << 32 | s.tid)) {
				r->ntids++;
				p->threads++;
			}
		}
		break;
	}
	case PROBE_F_LOST: {
		unsigned why = m->u.lost.reason < PROBE_LOST_REASON_MAX ? m->u.lost.reason : 0;
		r->lost[why] = sat_add(r->lost[why], m->u.lost.count);
		if (why != PROBE_LOST_UNWIND)
			p->lost = sat_add(p->lost, m->u.lost.count);
		break;
	}
	case PROBE_F_UNPROFILED: {
		/* The process that runs it: the sender, or a child it spawned. */
		uint32_t who = m->u.unprof.pid && m->u.unprof.pid != c->wire_pid ?
			       m->u.unprof.pid : m->pid;
		struct proc_ent *q = who == m->pid ? p : rec_proc_get(r, who);
		if (m->u.unprof.reason == PROBE_UNPROF_STATIC &&
		    (r->tree_outside || rec_follow_static(r, who) == 0)) {
			/* Its events start at the exec (inherited ones sample it already). */
			q->outside = 1;
			q->inside = 0;
			free(q->outside_path);
			q->outside_path = printable_dup(m->u.unprof.path);
			if (!q->ppid && who != m->pid)
				q->ppid = m->pid;
			break;
		}
		r->nunprof += !q->unprof;
		q->unprof = m->u.unprof.reason;
		q->unprof_parent = m->pid;
		free(q->unprof_path);
		q->unprof_path = printable_dup(m->u.unprof.path);
		break;
	}
	case PROBE_F_EXIT:
		p->exited = 1;
		p->status = m->u.exit.status;
		/* The process waits for our word that its samples are saved. */
		if (r->o->serve)
			recfile_flush(&r->out);
		break;
	default:
		break;
	}
}

/* ---- signals -------------------------------------------------------- */

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

/* How a process we waited for ended, for one whose EXIT never came. */
void rec_reaped(struct recorder *r, uint32_t pid, int st)
{
	struct proc_ent *p;
	HASH_FIND(hh, r->procs, &pid, sizeof(pid), p);
	if (!p || p->exited)
		return;
	p->reaped = 1;
	p->status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
	/*
	 * It sent no EXIT (SIGKILL, or it died before libprobe could say):
	 * the recording gets one from the wait status, so that the report's
	 * header can say how it ended (flag PROBE_EXIT_WAITED).
	 */
	uint8_t buf[64];
	struct probe_wbuf w;
	probe_wbuf_init(&w, buf, sizeof(buf));
	size_t at = probe_frame_begin(&w, PROBE_F_EXIT, pid);
	probe_put_u32(&w, (uint32_t)p->status);
	probe_put_u64(&w, p->samples);
	probe_put_u32(&w, p->threads);
	probe_frame_end(&w, at);
	if (w.ok) {
		buf[at + 6] = PROBE_EXIT_WAITED;
		recfile_frame(&r->out, buf, w.len);
	}
}

/*
 * We are the subreaper of everything the command starts: its orphans (a
 * background `./app &` of a shell that exits) become our children, and
 * the recording stays open until the last of them has ended, as perf
 * follows inherited children.  Reap them all; the command's own status is
 * the one we exit with.
 */
void rec_child_reap(struct recorder *r)
{
	int st;
	pid_t p;
	while ((p = waitpid(-1, &st, WNOHANG)) != 0) {
		if (p < 0) {
			if (errno == EINTR)
				continue;
			if (r->child_done && !r->all_gone) {
				r->all_gone = 1;
				r->t_gone = now_ns();
			}
			return;         /* ECHILD: nobody left */
		}
		if (!(WIFEXITED(st) || WIFSIGNALED(st)))
			continue;
		rec_reaped(r, (uint32_t)p, st);
		if (p != r->child || r->child_done)
			continue;
		r->status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
		r->killed_by = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
		r->child_done = 1;
		r->t_exit = now_ns();
	}
	if (r->child_done && !r->said_waiting && !r->o->quiet && !r->stop_sig) {
		r->said_waiting = 1;
		probe_err("the command exited; still recording the processes it left "
			  "running (Ctrl-C stops)");
	}
}

/*
 * Before reaping: every connection waiting to be accepted, and what every
 * connection holds.  A process that ended at once (a raw exit_group) sent
 * its HELLO first, but it may still sit in the backlog: rec_reaped() needs its
 * entry to keep the status wait() gives.
 */
void rec_read_all(struct recorder *r)
{
	ingest_accept_all(&r->in);
	for (struct ingest_conn *c = r->in.conns; c; c = c->next)
		if (!c->dead && !c->orphan)
			ingest_read(&r->in, c);
	ingest_free_dead(&r->in);
}

static int is_stop_signal(int sig)
{
	return sig == SIGINT || sig == SIGTERM || sig == SIGHUP;
}

/*
 * The user wants the recording now, as perf record gives it: the command
 * has STOP_NS to end on the signal passed on to it (its last samples are
 * then saved too), a second signal cuts that short.  A command that
 * ignores the signal must not keep probe (and the recording) hostage.
 */
static void stop_asked(struct recorder *r, int sig)
{
	if (r->stop_sig) {
		r->stop_now = 1;
		return;
	}
	r->stop_sig = sig;
	r->stop_by = now_ns() + STOP_NS;
}

/* Asked to stop, and the command had its time to end. */
static int stop_due(const struct recorder *r, uint64_t now)
{
	return r->stop_sig && (r->stop_now || now >= r->stop_by);
}

static void on_signal(struct recorder *r)
{
	struct signalfd_siginfo si;
	while (read(r->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			rec_read_all(r);
			rec_child_reap(r);
			continue;
		}
		if (r->child_done) {
			r->interrupted = 1;     /* stop waiting for stragglers */
			if (is_stop_signal((int)si.ssi_signo) && !r->stop_sig)
				r->stop_sig = (int)si.ssi_signo;        /* to say so */
			continue;
		}
		/*
		 * A signal from the terminal (Ctrl-C: SI_KERNEL) reached the
		 * command too, being in our process group: forwarding it would
		 * deliver it twice.  Only a signal sent to probe alone is passed on.
		 */
		if (si.ssi_code != SI_KERNEL)
			kill(r->child, (int)si.ssi_signo);
		if (is_stop_signal((int)si.ssi_signo))
			stop_asked(r, (int)si.ssi_signo);
	}
}

/*
 * SIGCHLD and the signals passed on to the command, blocked (before a
 * fork, so none is lost: the child unblocks) and read from a signalfd,
 * returned (-1 when it could not be made).
 */
int rec_signals_block(sigset_t *mask, sigset_t *old)
{
	sigemptyset(mask);
	sigaddset(mask, SIGCHLD);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(mask, forwarded[i]);
	sigprocmask(SIG_BLOCK, mask, old);
	return signalfd(-1, mask, SFD_NONBLOCK | SFD_CLOEXEC);
}

/* ---- descendants that never connected (unconnected.h) -------------------- */

enum unconn_state rec_unconn_state(void *ctx, pid_t pid)
{
	struct recorder *r = ctx;
	uint32_t id = (uint32_t)pid;
	struct proc_ent *p;
	HASH_FIND(hh, r->procs, &id, sizeof(id), p);
	if (!p || (!p->ran && !p->unprof))
		return UNCONN_NEW;
	if (p->unprof || p->exited || p->outside)
		return UNCONN_KNOWN;
	for (struct ingest_conn *c = r->in.conns; c; c = c->next)
		if (c->pid == pid && !c->dead && !c->orphan)
			return UNCONN_KNOWN;
	return UNCONN_GONE;     /* its connection ended, and it lives on */
}

void rec_unconn_found(void *ctx, pid_t pid, pid_t ppid, unsigned reason,
			 const char *path)
{
	struct recorder *r = ctx;
	struct proc_ent *p = rec_proc_get(r, (uint32_t)pid), *pp;
	uint32_t parent = (uint32_t)ppid;
	HASH_FIND(hh, r->procs, &parent, sizeof(parent), pp);
	/*
	 * Its parent sampled from outside: inherited events sample it already
	 * (a setuid program excepted); or a static program: followed now.
	 */
	if ((pp && pp->outside && reason != PROBE_UNPROF_SECURE) ||
	    (reason == PROBE_UNPROF_STATIC && rec_follow_static(r, (uint32_t)pid) == 0)) {
		p->outside = 1;
		p->inside = 0;
		free(p->outside_path);
		p->outside_path = printable_dup(path);
		if (!p->ppid)
			p->ppid = parent;
		return;
	}
	r->nunprof += !p->unprof;
	p->unprof = reason;
	p->unprof_parent = (uint32_t)ppid;
	free(p->unprof_path);
	p->unprof_path = printable_dup(path);
}

/* ---- the loop ------------------------------------------------------- */

/*
 * One turn of the loop (loop.h), then the rings of what is sampled from
 * outside when they woke or are due.  1 if the signalfd is ready, 0 if
 * not, -1 as epoll_wait.
 */
int rec_turn(struct recorder *r, int ms)
{
	struct loop_ready ready;
	if (loop_turn(&r->in, ms, NULL, NULL, &ready) < 0)
		return -1;
	/* After the connections: see outside_frame. */
	if (ready.ring || (r->nsmps && now_ns() - r->smp_read_at >= SAMPLER_READ_MS * 1000000ull))
		rec_samplers_read(r);
	return ready.signal;
}

void rec_run_loop(struct recorder *r)
{
	uint64_t last_flush = now_ns();
	for (;;) {
		uint64_t now = now_ns();
		if (now - last_flush >= FLUSH_NS) {
			recfile_flush(&r->out);
			last_flush = now;
		}
		recfile_idle(&r->out, now);
		if ((r->child_done && r->interrupted) || stop_due(r, now))
			break;
		if (r->all_gone) {
			/* Connections still queued in the backlog count too. */
			ingest_accept_all(&r->in);
			/* Out of fds a moment ago: the queue is taken when the pause ends. */
			if (r->in.nconns == 0 && !r->in.paused_until)
				break;
			/* (A pause ends within INGEST_PAUSE_MAX_MS: its queue first.) */
			if (now_ns() >= r->t_gone + DRAIN_NS + (r->in.paused_until ?
				INGEST_PAUSE_MAX_MS * 1000000ull : 0)) {
				if (!r->o->quiet)
					probe_warn("stopped waiting for %u process%s 2 s after the "
						   "last one exited; their last samples may be missing",
						   r->in.nconns, r->in.nconns == 1 ? "" : "es");
				break;
			}
		}
		if (r->unconn.root && !r->all_gone && unconnected_due(&r->unconn, now))
			unconnected_scan(&r->unconn, now);
		int timeout = -1;
		if (r->unconn.root && !r->all_gone) {
			uint64_t t = now_ns(), due = r->unconn.next_ns;
			int left = due <= t ? 0 : (int)((due - t) / 1000000 + 1);
			if (timeout < 0 || left < timeout)
				timeout = left;
		}
		if (r->all_gone || r->stop_sig) {
			uint64_t t = now_ns(), end = r->t_gone + DRAIN_NS;
			if (r->stop_sig && (!r->all_gone || r->stop_by < end))
				end = r->stop_by;
			int left = t >= end ? 0 : (int)((end - t) / 1000000 + 1);
			if (timeout < 0 || left < timeout)
				timeout = left;
		}
		int ready = rec_turn(r, loop_ms(&r->in, timeout, r->nsmps));
		if (ready < 0) {
			if (errno == EINTR)
				continue;
			probe_err("epoll_wait: %s", strerror(errno));
			break;
		}
		if (ready)
			on_signal(r);
	}
}

/*
 * -p, -t or -a with no command: read the rings until a stop signal (one
 * is enough: there is no command to wait for), or until every process
 * asked for has ended.
 */
void rec_nocmd_loop(struct recorder *r)
{
	uint64_t last_flush = now_ns();
	while (!r->stop_sig) {
		uint64_t now = now_ns();
		if (now - last_flush >= FLUSH_NS) {
			recfile_flush(&r->out);
			last_flush = now;
		}
		recfile_idle(&r->out, now);
		int alive = 0;
		for (unsigned i = 0; i < r->nsmps; i++)
			alive |= sampler_alive(r->smps[i]);
		if (!alive) {
			r->all_gone = 1;
			r->t_gone = now;
			break;
		}
		int ready = rec_turn(r, loop_ms(&r->in, SAMPLER_READ_MS, 1));
		if (ready < 0 && errno != EINTR) {
			probe_err("epoll_wait: %s", strerror(errno));
			break;
		}
		if (ready <= 0)
			continue;
		struct signalfd_siginfo si;
		while (read(r->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			if (is_stop_signal((int)si.ssi_signo))
				r->stop_sig = (int)si.ssi_signo;
	}
	rec_samplers_finish(r);
}


/* Everything a recording holds, given back (its file closed if still open). */
void rec_close(struct recorder *r)
{
	if (r->out.fd >= 0 && r->out.path)
		recfile_close(&r->out);
	if (r->in.ep >= 0)
		close(r->in.ep);
	if (r->sfd >= 0)
		close(r->sfd);
	if (r->in.lfd >= 0)
		close(r->in.lfd);
	for (unsigned i = 0; i < r->nsmps; i++)
		sampler_close(r->smps[i]);
	if (r->in.sc.mem)
		probe_scratch_free(&r->in.sc);
	rec_set_free(&r->pids);
	rec_set_free(&r->tids);
	rec_procs_free(r);
}
