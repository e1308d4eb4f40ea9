/*
 * top.c - `probe top`: one epoll loop over the listening socket, every
 * process's connection, a signalfd and (on a terminal) the keyboard; frames
 * are validated by the one decoder, fed to the aggregator as they arrive
 * (and saved verbatim with -o); every interval the rows are recomputed from
 * the interned stacks through one long-lived resolver, whose caches make
 * each distinct address symbolized once.
 *
 * Why this shape: the same as record.c (whose connection handling is
 * duplicated here in small: accept with SO_PEERCRED, bounded non-blocking
 * reads per wakeup so one busy process cannot starve the others); the view
 * is redrawn from a snapshot taken at each tick (agg_finish), so keys that
 * change grouping, sorting or focus recompute from the same snapshot.
 *
 * Interval figures: each count entry (image, generation, thread, stack)
 * remembers its amount at the previous tick and at the last 'z'; the
 * interval view shows the difference since the previous tick, the
 * cumulative view the difference since 'z' (or the start).
 *
 * Call tree (Enter, c on a function): from the same interned stacks, the
 * selected function with its callees as a tree below it, then its callers
 * as an inverted tree towards main/_start (struct ctree); it is flattened
 * into lines (pruned under 0.5 %) which the arrows scroll.
 */
#include "top.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "aggregate.h"
#include "child.h"
#include "cmdopt.h"
#include "events.h"
#include "hashtab.h"
#include "ingest.h"
#include "lost.h"
#include "recfile.h"
#include "resolve.h"
#include "spawn.h"
#include "symbols.h"
#include "usock.h"
#include "util.h"
#include "wire_decode.h"

/* How long to wait for connections to close after the command exited. */
#define DRAIN_NS 2000000000ull
#define FILTER_MAX 128

enum group { G_FUNC, G_MODULE, G_THREAD, G_PROC, G_COUNT };
enum sortk { S_SELF, S_TOTAL, S_NAME, S_COUNT };

static const char *const group_names[G_COUNT] = { "function", "module", "thread", "process" };
static const char *const sort_names[S_COUNT] = { "self", "total", "name" };

struct top_opts {
	double delay;
	long nrows;
	const char *output;
	struct sampling smp;    /* -e, -F, -c */
	int exit_at_end;
	char **argv;            /* NULL: watch DIR/top.sock */
};

struct pent {                   /* one process seen */
	uint32_t pid;
	unsigned order;
	char *name;
	int connected;          /* open connections */
	int exited;
	int32_t status;
	UT_hash_handle hh;
};

struct ckey {
	uint32_t image, gen, tid, stack;
};
struct cent {                   /* per count entry: amounts at 'z' and last tick */
	struct ckey key;
	uint64_t base_a, base_s, prev_a, prev_s;
	uint64_t cum_a, cum_s, int_a, int_s;    /* as of the last tick */
	UT_hash_handle hh;
};

struct row {
	uint64_t key;
	const char *name, *module;
	char *owned;            /* name when built here (thread/process rows) */
	uint32_t pid, tid, loc;
	uint64_t self, total, samples;
};

struct rent {
	uint64_t key;
	size_t idx;
	UT_hash_handle hh;
};

struct rowset {
	struct row *v;
	size_t n, cap;
	struct rent *index;
};

/*
 * The call tree of the selected function (Enter, c): node 0 is the function
 * itself; in the callees tree a child is a function it calls, in the
 * callers tree one that calls its parent.  Siblings of the same function are
 * one node; a stack is one path in each tree (under recursion: callees
 * from the outermost frame of the function, callers from the innermost),
 * and adds to a node once (stamp).  A callees node's self is where it is the leaf; a callers
 * node's, the selected function's self through it.
 */
struct cnode {
	uint32_t loc, first_child, next_sibling, stamp;
	uint64_t total, self;
};

struct ctree {
	struct cnode *v;
	size_t n, cap;
};

struct tline {                  /* one line of the call tree view */
	const struct ctree *ct; /* NULL: the "Callers:" heading */
	uint32_t node;
	int depth;
};

/*
 * On a terminal, our own stderr (the symbol loader's warnings, say) would
 * scribble over the view: it goes to a pipe while the view is up; the last
 * line shows on the status line, and everything is written to the real
 * stderr when the view ends.
 */
struct errpipe {
	int rfd, saved;
	char log[4096];
	size_t len;
	int cut;
};

struct top {
	/*
	 * Where plain-text snapshots go off a terminal: stdout, or stderr when
	 * a command runs: its stdout is its own (probe top -- xz -c in >out).
	 */
	FILE *snap;
	const struct top_opts *o;
	int sfd;
	struct ingest in;       /* the connections (ingest.h); in.ep is the loop's */
	char *sock;
	struct agg *agg;
	struct symcache *syms;
	struct resolver *res;
	struct recfile out;
	int saving;
	/* the command */
	pid_t child;
	int child_done, status, finished, interrupted;
	uint64_t t_start, t_exit;
	struct pent *procs;
	/* figures */
	uint64_t samples, lost[PROBE_LOST_REASON_MAX];
	uint64_t tick_samples, tick_lost[PROBE_LOST_REASON_MAX], last_tick;
	double rate;
	uint64_t int_lost[PROBE_LOST_REASON_MAX];
	/* snapshot */
	struct cent *cents;
	struct cent **cvec;     /* parallel to agg_counts() */
	size_t ncvec;
	struct rframe *frames;
	uint32_t *stamp;
	size_t stamp_cap;
	uint32_t stamp_gen;
	struct rowset rows;
	struct ctree down, up;  /* callees and callers of tree_loc */
	struct tline *tl;
	size_t ntl, tlcap;
	uint32_t cstamp;
	uint64_t total;
	/* view */
	int tty, quit;
	enum group group;
	enum sortk sort;
	int interval, paused, help;
	int focus;              /* 0, G_THREAD or G_PROC */
	uint32_t focus_pid, focus_tid;
	char *focus_name;
	char filter[FILTER_MAX];
	int editing;
	char edit[FILTER_MAX];
	size_t edit_len;
	int tree;
	uint32_t tree_loc;
	uint64_t tree_self, tree_total;
	int tscroll;            /* first line of the call tree shown */
	int sel, scroll;
	int keep_pos;           /* the selection moved by key: keep its position */
	struct errpipe ep2;
};

static char tag_listen, tag_signal, tag_keys, tag_stderr;


void top_usage(FILE *out)
{
	fprintf(out,
		"usage: probe top [-d SECS] [-n N] [-o FILE] [-e EVENT] [-F HZ | -c PERIOD]\n"
		"                 [--exit] [-- CMD [ARG...]]\n"
		"\n"
		"Watch where a running program spends its time, updated every interval.\n"
		"With CMD, run it with libprobe.so preloaded.  Without, watch every program\n"
		"the same user starts with the line probe top prints first:\n"
		"  PROBE_SOCKET=DIR/top.sock LD_PRELOAD=.../libprobe.so PROGRAM\n"
		"\n"
		"  -d, --delay SECS    redraw every SECS seconds (default 1)\n"
		"  -n, --rows N        rows per snapshot when not on a terminal (default 20)\n"
		"  -o, --output FILE   also save the recording (as probe record does)\n"
		"  -e, --event EVENT   what to sample (default cpu-clock): %s\n"
		"  -F, --freq HZ       samples per second per thread (default %d)\n"
		"  -c, --count PERIOD  one sample every PERIOD events instead\n"
		"      --exit          end as soon as CMD has exited (default: keep the\n"
		"                      last view until q)\n"
		"  -h, --help          this help\n"
		"\n"
		"Keys: q quit, ? help, s sort (self/total/name), g group (function/module/\n"
		"thread/process), f focus the selected thread or process, F clear focus,\n"
		"/ filter by name, Enter or c call tree of the selected function,\n"
		"z zero, p pause, i interval or cumulative, arrows/PgUp/PgDn scroll.\n"
		"Not on a terminal, a plain-text snapshot is printed every interval: on\n"
		"stdout, or on stderr when probe top runs a command (its stdout is its own).\n",
		event_list(), PROBE_DEFAULT_FREQ);
}

#define usage_error(...) cmd_usage_error("top", __VA_ARGS__)

/* ---- processes ------------------------------------------------------ */

static struct pent *proc_get(struct top *t, uint32_t pid)
{
	struct pent *p;
	HASH_FIND(hh, t->procs, &pid, sizeof(pid), p);
	if (p)
		return p;
	p = xcalloc(1, sizeof(*p));
	p->pid = pid;
	p->order = HASH_COUNT(t->procs);
	p->status = -1;
	p->name = xasprintf("[pid %u]", pid);
	HASH_ADD(hh, t->procs, pid, sizeof(p->pid), p);
	return p;
}

/* Warnings go to the status line on a terminal, else to stderr. */
static char status_msg[256];

static void top_warn(struct top *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void top_warn(struct top *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(status_msg, sizeof(status_msg), fmt, ap);
	va_end(ap);
	if (!t->tty)
		fprintf(stderr, "probe: %s\n", status_msg);
}

/* ---- connections (ingest.h) ------------------------------------------ */

static void on_opened(void *ctx, struct ingest_conn *c)
{
	struct top *t = ctx;
	proc_get(t, (uint32_t)c->pid)->connected++;
}

static void on_closed(void *ctx, struct ingest_conn *c)
{
	struct top *t = ctx;
	struct pent *p = proc_get(t, (uint32_t)c->pid);
	if (p->connected > 0)
		p->connected--;
}

/* Messages from ingest.c: bad data and refusals are shown, the rest (a
 * process that went away mid-frame, say) is not worth the status line. */
static void on_note(void *ctx, enum ingest_note kind, const char *msg)
{
	struct top *t = ctx;
	switch (kind) {
	case INGEST_BAD_DATA:
	case INGEST_REFUSED:
	case INGEST_NOFILE:
		top_warn(t, "%s", msg);
		break;
	default:
		break;
	}
}

/* Count one valid frame, save it (-o), add it to the profile. */
static void on_frame(void *ctx, struct ingest_conn *c, struct probe_msg *m,
		     const uint8_t *f, size_t len)
{
	struct top *t = ctx;
	struct pent *p = proc_get(t, m->pid);
	switch (m->type) {
	case PROBE_F_HELLO: {
		const char *n = m->u.hello.exe && *m->u.hello.exe ? path_basename(m->u.hello.exe)
								: m->u.hello.comm;
		if (n && *n) {
			free(p->name);
			p->name = printable_dup(n);
		}
		break;
	}
	case PROBE_F_SAMPLES:
		t->samples += m->u.samples.count;
		break;
	case PROBE_F_LOST: {
		unsigned why = m->u.lost.reason < PROBE_LOST_REASON_MAX ? m->u.lost.reason : 0;
		t->lost[why] = sat_add(t->lost[why], m->u.lost.count);
		break;
	}
	case PROBE_F_EXIT:
		p->exited = 1;
		p->status = m->u.exit.status;
		break;
	default:
		break;
	}
	if (t->saving)
		recfile_write(&t->out, f, len);
	agg_add(t->agg, m);
}

/* ---- signals and the command ---------------------------------------- */

static void child_reap(struct top *t)
{
	if (t->child > 0 && !t->child_done && child_wait(t->child, &t->status)) {
		t->child_done = 1;
		t->t_exit = now_ns();
	}
}

static void on_signal(struct top *t)
{
	struct signalfd_siginfo si;
	while (read(t->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			child_reap(t);
			continue;
		}
		/* Ctrl-C, SIGTERM: leave (the command, if any, got it too from the
		 * terminal; one sent to probe alone is passed on). */
		if (t->child > 0 && !t->child_done && si.ssi_code != SI_KERNEL)
			kill(t->child, (int)si.ssi_signo);
		t->interrupted = 1;
		t->quit = 1;
	}
}

/* ---- the snapshot and the rows -------------------------------------- */

static void rows_clear(struct rowset *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		free(rs->v[i].owned);
	rs->n = 0;
	struct rent *e, *tmp;
	HASH_ITER(hh, rs->index, e, tmp) {
		HASH_DEL(rs->index, e);
		free(e);
	}
}

static struct row *rows_get(struct rowset *rs, uint64_t key, int *fresh)
{
	struct rent *e;
	HASH_FIND(hh, rs->index, &key, sizeof(key), e);
	if (e) {
		*fresh = 0;
		return &rs->v[e->idx];
	}
	rs->v = xgrow(rs->v, &rs->cap, rs->n + 1, sizeof(*rs->v));
	struct row *r = &rs->v[rs->n];
	memset(r, 0, sizeof(*r));
	r->key = key;
	e = xcalloc(1, sizeof(*e));
	e->key = key;
	e->idx = rs->n++;
	HASH_ADD(hh, rs->index, key, sizeof(e->key), e);
	*fresh = 1;
	return r;
}

/* Take a snapshot: agg_finish, and each count's cumulative and interval amounts. */
static void take_snapshot(struct top *t)
{
	agg_finish(t->agg);
	const struct agg_totals *tot = agg_totals(t->agg);
	/* A saturated total is no total (weights are untrusted): count samples. */
	int by_samples = tot->weight == 0 || tot->weight == UINT64_MAX;
	size_t n = agg_ncounts(t->agg);
	const struct agg_count *k = agg_counts(t->agg);
	free(t->cvec);
	t->cvec = xcalloc(n ? n : 1, sizeof(*t->cvec));
	t->ncvec = n;
	/* Entries not in this snapshot had nothing new: their interval is 0. */
	for (struct cent *c = t->cents; c; c = c->hh.next)
		c->int_a = c->int_s = 0;
	for (size_t i = 0; i < n; i++) {
		struct ckey key = { k[i].image, k[i].gen, k[i].tid, k[i].stack };
		struct cent *c;
		HASH_FIND(hh, t->cents, &key, sizeof(key), c);
		if (!c) {
			c = xcalloc(1, sizeof(*c));
			c->key = key;
			HASH_ADD(hh, t->cents, key, sizeof(c->key), c);
		}
		uint64_t a = by_samples ? k[i].samples : k[i].weight;
		c->int_a = a - c->prev_a;
		c->int_s = k[i].samples - c->prev_s;
		c->prev_a = a;
		c->prev_s = k[i].samples;
		c->cum_a = a - c->base_a;
		c->cum_s = k[i].samples - c->base_s;
		t->cvec[i] = c;
	}
	uint64_t now = now_ns();
	double dt = (double)(now - t->last_tick) / 1e9;
	t->rate = dt > 0 ? (double)(t->samples - t->tick_samples) / dt : 0;
	t->tick_samples = t->samples;
	for (unsigned r = 0; r < PROBE_LOST_REASON_MAX; r++) {
		t->int_lost[r] = t->lost[r] - t->tick_lost[r];
		t->tick_lost[r] = t->lost[r];
	}
	t->last_tick = now;
}

static void zero_counts(struct top *t)
{
	for (struct cent *c = t->cents; c; c = c->hh.next) {
		c->base_a = c->prev_a;
		c->base_s = c->prev_s;
		c->cum_a = c->cum_s = c->int_a = c->int_s = 0;
	}
}

static int count_wanted(const struct top *t, const struct agg_count *k)
{
	if (!t->focus)
		return 1;
	const struct agg_image *im = agg_image(t->agg, k->image);
	if (!im || im->pid != t->focus_pid)
		return 0;
	return t->focus != G_THREAD || k->tid == t->focus_tid;
}

static int fresh_stamp(struct top *t)
{
	size_t need = resolver_nlocs(t->res) + 1;
	if (need > t->stamp_cap) {
		size_t old = t->stamp_cap;
		t->stamp = xgrow(t->stamp, &t->stamp_cap, need, sizeof(*t->stamp));
		memset(t->stamp + old, 0, (t->stamp_cap - old) * sizeof(*t->stamp));
	}
	if (++t->stamp_gen == 0) {
		memset(t->stamp, 0, t->stamp_cap * sizeof(*t->stamp));
		t->stamp_gen = 1;
	}
	return 0;
}

/* Mark loc seen in this round; 1 if it was not yet. */
static int stamp_once(struct top *t, uint32_t loc)
{
	if (loc >= t->stamp_cap) {
		size_t old = t->stamp_cap;
		t->stamp = xgrow(t->stamp, &t->stamp_cap, (size_t)loc + 1, sizeof(*t->stamp));
		memset(t->stamp + old, 0, (t->stamp_cap - old) * sizeof(*t->stamp));
	}
	if (t->stamp[loc] == t->stamp_gen)
		return 0;
	t->stamp[loc] = t->stamp_gen;
	return 1;
}

static int cmp_rows_self(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int cmp_rows_total(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int cmp_rows_name(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	int c = strcmp(a->name, b->name);
	if (c)
		return c;
	return cmp_rows_self(x, y);
}

static void sort_rows(struct rowset *rs, enum sortk s)
{
	if (!rs->n)
		return;
	qsort(rs->v, rs->n, sizeof(*rs->v),
	      s == S_TOTAL ? cmp_rows_total : s == S_NAME ? cmp_rows_name : cmp_rows_self);
	/* The index is stale after sorting; it is only used while building. */
	struct rent *e, *tmp;
	HASH_ITER(hh, rs->index, e, tmp) {
		HASH_DEL(rs->index, e);
		free(e);
	}
}

static int name_matches(const struct top *t, const char *name)
{
	return !t->filter[0] || strcasestr(name, t->filter) != NULL;
}

/* Rows of the current grouping, from the snapshot. */
static void compute_rows(struct top *t)
{
	const struct agg_count *k = agg_counts(t->agg);
	struct rowset *rs = &t->rows;
	/* The selection follows its row, not its position. */
	int had_sel = t->sel >= 0 && t->sel < (int)rs->n;
	uint64_t sel_key = had_sel ? rs->v[t->sel].key : 0;
	rows_clear(rs);
	t->total = 0;
	for (size_t i = 0; i < t->ncvec; i++) {
		if (!count_wanted(t, &k[i]))
			continue;
		const struct cent *c = t->cvec[i];
		uint64_t amount = t->interval ? c->int_a : c->cum_a;
		uint64_t samples = t->interval ? c->int_s : c->cum_s;
		if (!amount && !samples)
			continue;
		t->total = sat_add(t->total, amount);
		const struct agg_image *im = agg_image(t->agg, k[i].image);
		int fresh;
		struct row *r;
		if (t->group == G_THREAD || t->group == G_PROC) {
			uint64_t key = t->group == G_THREAD ? (uint64_t)im->pid << 32 | k[i].tid
							    : im->pid;
			r = rows_get(rs, key, &fresh);
			if (fresh) {
				r->pid = im->pid;
				r->tid = k[i].tid;
				if (t->group == G_THREAD) {
					const char *tn = agg_thread_name(t->agg, k[i].image, k[i].tid);
					r->owned = tn && *tn ? xstrdup(tn)
							     : xasprintf("[tid %u]", k[i].tid);
					r->module = resolver_intern(t->res, im->name);
				} else {
					r->owned = xstrdup(im->name);
					r->module = "";
				}
				r->name = r->owned;
			}
			r->self = sat_add(r->self, amount);
			r->total = sat_add(r->total, amount);
			r->samples += samples;
			continue;
		}
		uint32_t nf = resolve_stack(t->res, &k[i], t->frames);
		if (!nf)
			continue;
		fresh_stamp(t);
		for (uint32_t f = 0; f < nf; f++) {
			const struct loc *l = resolver_loc(t->res, t->frames[f].loc);
			uint64_t key;
			uint32_t mark;
			if (t->group == G_FUNC) {
				key = t->frames[f].loc;
				mark = t->frames[f].loc;
			} else {
				key = (uint64_t)(uintptr_t)l->dso;
				/* Modules: mark by the first loc of that module seen;
				 * find it through the row itself. */
				mark = UINT32_MAX;
			}
			r = rows_get(rs, key, &fresh);
			if (fresh) {
				r->name = t->group == G_FUNC ? l->sym : l->dso;
				r->module = t->group == G_FUNC ? l->dso : "";
				r->loc = t->frames[f].loc;
			}
			if (f == 0) {
				r->self = sat_add(r->self, amount);
				r->samples += samples;
			}
			if (mark == UINT32_MAX) {
				/* A module row is counted once per stack: its first loc's stamp. */
				if (stamp_once(t, r->loc))
					r->total = sat_add(r->total, amount);
			} else if (stamp_once(t, mark)) {
				r->total = sat_add(r->total, amount);
			}
		}
	}
	/* Filter by name, then sort. */
	size_t w = 0;
	for (size_t i = 0; i < rs->n; i++) {
		if (name_matches(t, rs->v[i].name))
			rs->v[w++] = rs->v[i];
		else
			free(rs->v[i].owned);
	}
	rs->n = w;
	sort_rows(rs, t->sort);
	if (had_sel && !t->keep_pos)
		for (size_t i = 0; i < rs->n; i++)
			if (rs->v[i].key == sel_key) {
				t->sel = (int)i;
				break;
			}
	t->keep_pos = 0;
	if (t->sel >= (int)rs->n)
		t->sel = rs->n ? (int)rs->n - 1 : 0;
}

static double pct(const struct top *t, uint64_t amount);

/* The child of parent for loc, made if new. */
static uint32_t ct_child(struct ctree *ct, uint32_t parent, uint32_t loc)
{
	for (uint32_t c = ct->v[parent].first_child; c; c = ct->v[c].next_sibling)
		if (ct->v[c].loc == loc)
			return c;
	ct->v = xgrow(ct->v, &ct->cap, ct->n + 1, sizeof(*ct->v));
	uint32_t c = (uint32_t)ct->n++;
	memset(&ct->v[c], 0, sizeof(ct->v[c]));
	ct->v[c].loc = loc;
	ct->v[c].next_sibling = ct->v[parent].first_child;
	ct->v[parent].first_child = c;
	return c;
}

/* Add one stack's amount to node, once per stack (t->cstamp). */
static void ct_visit(struct ctree *ct, uint32_t node, uint32_t stamp, uint64_t amount,
		     int self)
{
	struct cnode *n = &ct->v[node];
	if (n->stamp == stamp)
		return;
	n->stamp = stamp;
	n->total = sat_add(n->total, amount);
	if (self)
		n->self = sat_add(n->self, amount);
}

static void ct_reset(struct ctree *ct, uint32_t loc)
{
	ct->v = xgrow(ct->v, &ct->cap, 1, sizeof(*ct->v));
	memset(&ct->v[0], 0, sizeof(ct->v[0]));
	ct->v[0].loc = loc;
	ct->n = 1;
}

struct csort {
	uint64_t total;
	const char *name;
	uint32_t node;
};

static int cmp_csort(const void *x, const void *y)
{
	const struct csort *a = x, *b = y;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return strcmp(a->name, b->name);
}

static void tl_add(struct top *t, const struct ctree *ct, uint32_t node, int depth)
{
	t->tl = xgrow(t->tl, &t->tlcap, t->ntl + 1, sizeof(*t->tl));
	t->tl[t->ntl++] = (struct tline){ ct, node, depth };
}

/* Lines for node's children, by total, pruned under 0.5 % of all. */
static void tl_children(struct top *t, const struct ctree *ct, uint32_t node, int depth)
{
	size_t n = 0;
	for (uint32_t c = ct->v[node].first_child; c; c = ct->v[c].next_sibling)
		n++;
	if (!n)
		return;
	struct csort *v = xcalloc(n, sizeof(*v));
	n = 0;
	for (uint32_t c = ct->v[node].first_child; c; c = ct->v[c].next_sibling) {
		if (pct(t, ct->v[c].total) < 0.5)
			continue;
		v[n++] = (struct csort){ ct->v[c].total, resolver_loc(t->res, ct->v[c].loc)->sym, c };
	}
	qsort(v, n, sizeof(*v), cmp_csort);
	for (size_t i = 0; i < n; i++) {
		tl_add(t, ct, v[i].node, depth);
		tl_children(t, ct, v[i].node, depth + 1);
	}
	free(v);
}

/* The call tree of t->tree_loc: its callees below it, then its callers. */
static void compute_tree(struct top *t)
{
	const struct agg_count *k = agg_counts(t->agg);
	ct_reset(&t->down, t->tree_loc);
	ct_reset(&t->up, t->tree_loc);
	t->cstamp = 0;
	uint64_t self = 0, total = 0;
	for (size_t i = 0; i < t->ncvec; i++) {
		if (!count_wanted(t, &k[i]))
			continue;
		const struct cent *c = t->cvec[i];
		uint64_t amount = t->interval ? c->int_a : c->cum_a;
		if (!amount)
			continue;
		uint32_t nf = resolve_stack(t->res, &k[i], t->frames);
		int in = 0;
		for (uint32_t f = 0; f < nf && !in; f++)
			in = t->frames[f].loc == t->tree_loc;
		if (!in)
			continue;
		total = sat_add(total, amount);
		int leaf = t->frames[0].loc == t->tree_loc;
		if (leaf)
			self = sat_add(self, amount);
		uint32_t stamp = ++t->cstamp;
		/* Under recursion, callees from its outermost frame and callers
		 * from its innermost: one path per stack in each tree, which
		 * keeps the recursion (f under f under f) and never counts a
		 * stack twice. */
		uint32_t inner = nf, outer = 0;
		for (uint32_t f = 0; f < nf; f++)
			if (t->frames[f].loc == t->tree_loc) {
				if (inner == nf)
					inner = f;
				outer = f;
			}
		uint32_t node = 0;
		for (uint32_t g = outer; g-- > 0;) {
			node = ct_child(&t->down, node, t->frames[g].loc);
			ct_visit(&t->down, node, stamp, amount, g == 0);
		}
		node = 0;
		for (uint32_t g = inner + 1; g < nf; g++) {
			node = ct_child(&t->up, node, t->frames[g].loc);
			ct_visit(&t->up, node, stamp, amount, leaf);
		}
	}
	t->tree_self = self;
	t->tree_total = total;
	t->down.v[0].total = t->up.v[0].total = total;
	t->down.v[0].self = t->up.v[0].self = self;
	t->ntl = 0;
	tl_add(t, &t->down, 0, 0);
	tl_children(t, &t->down, 0, 1);
	tl_add(t, NULL, 0, 0);
	tl_children(t, &t->up, 0, 1);
}

static void recompute(struct top *t)
{
	compute_rows(t);
	if (t->tree)
		compute_tree(t);
}

/* ---- what both views print ------------------------------------------ */

static double pct(const struct top *t, uint64_t amount)
{
	return t->total ? 100.0 * (double)amount / (double)t->total : 0.0;
}

static int cmp_pent(const void *x, const void *y)
{
	const struct pent *a = *(struct pent *const *)x, *b = *(struct pent *const *)y;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* Header lines into lines[] (malloc'd); returns how many. */
static int header_lines(struct top *t, char **lines, int max)
{
	int n = 0;
	const struct agg_totals *tot = agg_totals(t->agg);
	unsigned nprocs = HASH_COUNT(t->procs), live = 0;
	struct pent **pv = xcalloc(nprocs ? nprocs : 1, sizeof(*pv));
	unsigned i = 0;
	for (struct pent *p = t->procs; p; p = p->hh.next)
		pv[i++] = p;
	qsort(pv, nprocs, sizeof(*pv), cmp_pent);
	size_t cap = 64 + (size_t)nprocs * 40, len = 0;
	char *list = xmalloc(cap);
	list[0] = 0;
	for (i = 0; i < nprocs; i++) {
		live += pv[i]->connected > 0;
		int k = snprintf(list + len, cap - len, "%s%s[%u]%s", i ? " " : "", pv[i]->name,
				 pv[i]->pid, pv[i]->connected > 0 ? "" : "-");
		if (k > 0 && (size_t)k < cap - len)
			len += (size_t)k;
	}
	/* Event and rate, from the first image that said. */
	char ev[96] = "?";
	for (size_t j = 0; j < agg_nimages(t->agg); j++) {
		const struct agg_image *im = agg_image(t->agg, (uint32_t)j);
		if (!im->have_hello)
			continue;
		if (im->freq)
			snprintf(ev, sizeof(ev), "%s%s, %" PRIu64 " Hz",
				 im->event_name[0] ? im->event_name : "?",
				 im->event_type == PROBE_EVENT_TIMER ? " (CPU-time timer)" : "",
				 im->value);
		else
			snprintf(ev, sizeof(ev), "%s, period %" PRIu64,
				 im->event_name[0] ? im->event_name : "?", im->value);
		break;
	}
	double el = (double)((t->finished ? t->t_exit : now_ns()) - t->t_start) / 1e9;
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	char hms[16];
	strftime(hms, sizeof(hms), "%H:%M:%S", &tm);
	if (n < max)
		lines[n++] = xasprintf("probe top: %s, %.1f s elapsed; %s; %s, by %s, sorted by %s%s",
				       hms, el, ev, t->interval ? "last interval" : "cumulative",
				       group_names[t->group], sort_names[t->sort],
				       t->paused ? " [paused]" : "");
	if (n < max)
		lines[n++] = xasprintf("processes: %u seen, %u connected: %s", nprocs, live,
				       nprocs ? list : "(none yet)");
	char lost[512];
	lost_text(t->lost, lost, sizeof(lost));
	if (n < max)
		lines[n++] = xasprintf("threads: %u; samples: %" PRIu64 " (%.0f/s); %s",
				       tot->threads, t->samples, t->rate, lost);
	uint64_t behind = t->int_lost[PROBE_LOST_KERNEL] + t->int_lost[PROBE_LOST_QUEUE] +
			  t->int_lost[PROBE_LOST_SOCKET];
	if (behind && n < max)
		lines[n++] = xasprintf("!! falling behind: %" PRIu64 " samples lost in the last "
				       "interval (lower -F, or fewer threads)", behind);
	if (t->int_lost[PROBE_LOST_THROTTLE] && n < max)
		lines[n++] = xasprintf("!! the kernel throttled the event: %" PRIu64 " samples "
				       "lost (lower -F, or raise kernel.perf_event_max_sample_rate)",
				       t->int_lost[PROBE_LOST_THROTTLE]);
	if (t->focus && n < max)
		lines[n++] = xasprintf("focus: %s %s (F clears)",
				       t->focus == G_THREAD ? "thread" : "process", t->focus_name);
	if (t->filter[0] && n < max)
		lines[n++] = xasprintf("filter: \"%s\" (/ then Esc clears)", t->filter);
	for (i = 0; i < nprocs && n < max; i++) {
		if (!pv[i]->exited)
			continue;
		char how[64];
		int32_t s = pv[i]->status;
		if (s > 128 && s < 128 + 65) {
			const char *ab = sigabbrev_np(s - 128);
			snprintf(how, sizeof(how), "killed by SIG%s", ab ? ab : "?");
		} else if (s < 0) {
			snprintf(how, sizeof(how), "exited");
		} else {
			snprintf(how, sizeof(how), "exit %d", (int)s);
		}
		if (t->o->argv && pv[i]->pid == (uint32_t)t->child && t->child_done)
			lines[n++] = xasprintf("program exited: %s[%u] %s%s", pv[i]->name,
					       pv[i]->pid, how, t->tty ? "; q to quit" : "");
		else if (nprocs <= 8)
			lines[n++] = xasprintf("exited: %s[%u] %s", pv[i]->name, pv[i]->pid, how);
	}
	if (t->o->argv && t->child_done && n < max) {
		int seen = 0;
		for (i = 0; i < nprocs; i++)
			seen |= pv[i]->pid == (uint32_t)t->child && pv[i]->exited;
		if (!seen)
			lines[n++] = xasprintf("program exited: status %d%s", t->status,
					       t->tty ? "; q to quit" : "");
	}
	free(list);
	free(pv);
	return n;
}

static const char *row_head(const struct top *t)
{
	switch (t->group) {
	case G_MODULE: return "Module";
	case G_THREAD: return "Thread";
	case G_PROC: return "Process";
	default: return "Function";
	}
}

/* ---- plain-text snapshots ------------------------------------------- */

static void print_snapshot(struct top *t, FILE *out)
{
	char *lines[16];
	int n = header_lines(t, lines, 16);
	for (int i = 0; i < n; i++) {
		fprintf(out, "# %s\n", lines[i]);
		free(lines[i]);
	}
	fprintf(out, "%7s %7s %9s  %-40s %s\n", "Self%", "Total%", "Samples", row_head(t),
		t->group == G_FUNC ? "Module" : t->group == G_THREAD ? "Process" : "");
	for (size_t i = 0; i < t->rows.n && (long)i < t->o->nrows; i++) {
		const struct row *r = &t->rows.v[i];
		char extra[64] = "";
		if (t->group == G_THREAD)
			snprintf(extra, sizeof(extra), " %u/%u", r->pid, r->tid);
		fprintf(out, "%6.2f%% %6.2f%% %9" PRIu64 "  %-40s %s%s\n", pct(t, r->self),
			pct(t, r->total), r->samples, r->name, r->module, extra);
	}
	fputc('\n', out);
	fflush(out);
}

/* ---- the terminal view ---------------------------------------------- */

static int page_rows(void)
{
	return LINES > 12 ? LINES - 10 : 2;
}

static void put_line(int y, const char *s, int attr)
{
	if (y >= LINES)
		return;
	if (attr)
		attron(attr);
	mvaddnstr(y, 0, s, COLS);
	if (attr)
		attroff(attr);
}

static void draw_rows(struct top *t, int y, const struct rowset *rs, int selectable,
		      int show_self)
{
	int fn = COLS - 30 - 24;
	if (fn < 16)
		fn = 16;
	char buf[1024];
	int avail = LINES - y - 1;
	if (avail < 1)
		return;
	if (selectable) {
		if (t->sel < t->scroll)
			t->scroll = t->sel;
		if (t->sel >= t->scroll + avail)
			t->scroll = t->sel - avail + 1;
		if (t->scroll < 0)
			t->scroll = 0;
	}
	int start = selectable ? t->scroll : 0;
	for (int i = start; i < (int)rs->n && y < LINES - 1; i++, y++) {
		const struct row *r = &rs->v[i];
		char extra[64] = "";
		if (t->group == G_THREAD && selectable)
			snprintf(extra, sizeof(extra), " %u/%u", r->pid, r->tid);
		if (show_self)
			snprintf(buf, sizeof(buf), "%6.2f%% %6.2f%% %9" PRIu64 "  %-*.*s %s%s",
				 pct(t, r->self), pct(t, r->total), r->samples, fn, fn, r->name,
				 r->module, extra);
		else
			snprintf(buf, sizeof(buf), "        %6.2f%%            %-*.*s %s",
				 pct(t, r->total), fn, fn, r->name, r->module);
		put_line(y, buf, selectable && i == t->sel ? A_REVERSE : 0);
	}
}

static void draw_help(void)
{
	static const char *const h[] = {
		"probe top - keys",
		"",
		"  q          quit",
		"  ?          this help (any key leaves it)",
		"  s          sort by self, total or name",
		"  g          group by function, module, thread or process",
		"  f          focus the selected thread or process (grouped by thread/process)",
		"  F          clear the focus",
		"  /          filter by name substring: Enter applies, Esc clears",
		"  Enter, c   call tree of the selected function: callees, callers (Esc back)",
		"  z          zero the counts",
		"  p          pause the display (sampling goes on)",
		"  i          last interval or cumulative percentages",
		"  arrows, PgUp, PgDn, Home, End   move the selection",
		"",
		"In the header, NAME[PID] is a connected process, NAME[PID]- one that has gone.",
		NULL,
	};
	for (int i = 0; h[i]; i++)
		put_line(i, h[i], i == 0 ? A_BOLD : 0);
}

static void draw(struct top *t)
{
	erase();
	if (t->help) {
		draw_help();
		refresh();
		return;
	}
	char *lines[16];
	int n = header_lines(t, lines, 16), y = 0;
	for (int i = 0; i < n; i++, y++) {
		put_line(y, lines[i], lines[i][0] == '!' ? A_BOLD : 0);
		free(lines[i]);
	}
	if (status_msg[0])
		put_line(y++, status_msg, 0);
	if (t->editing) {
		char buf[FILTER_MAX + 32];
		snprintf(buf, sizeof(buf), "filter: %.*s_  (Enter applies, Esc clears)",
			 (int)t->edit_len, t->edit);
		put_line(y++, buf, A_BOLD);
	} else {
		put_line(y++, "? help, q quit", A_DIM);
	}
	y++;
	char buf[512];
	int fn = COLS - 30 - 24;
	if (fn < 16)
		fn = 16;
	if (t->tree) {
		const struct loc *l = resolver_loc(t->res, t->tree_loc);
		snprintf(buf, sizeof(buf), "Callers and callees of %s (%s): %.2f%% total, "
			 "%.2f%% self  [Esc back, arrows/PgUp/PgDn scroll]", l->sym, l->dso,
			 pct(t, t->tree_total), pct(t, t->tree_self));
		put_line(y++, buf, A_BOLD);
		snprintf(buf, sizeof(buf), "%7s %7s  %s", "Total%", "Self%", "Call tree");
		put_line(y++, buf, A_BOLD);
		int avail = LINES - y - 1;
		if (avail < 1)
			avail = 1;
		if (t->tscroll > (int)t->ntl - avail)
			t->tscroll = (int)t->ntl - avail;
		if (t->tscroll < 0)
			t->tscroll = 0;
		for (int i = t->tscroll; i < (int)t->ntl && y < LINES - 1; i++, y++) {
			const struct tline *tl = &t->tl[i];
			if (!tl->ct) {
				put_line(y, "Callers:", A_BOLD);
				continue;
			}
			const struct cnode *nd = &tl->ct->v[tl->node];
			const struct loc *nl = resolver_loc(t->res, nd->loc);
			/* Two spaces a level, up to half the name column; deeper
			 * nodes stay there and say their level. */
			int ind = 2 * tl->depth, cap = fn / 2;
			char lvl[16] = "";
			if (ind > cap) {
				ind = cap;
				snprintf(lvl, sizeof(lvl), "[%d] ", tl->depth);
			}
			int w = fn + 6 - ind - (int)strlen(lvl);
			snprintf(buf, sizeof(buf), "%6.2f%% %6.2f%%  %*s%s%-*.*s %s",
				 pct(t, nd->total), pct(t, nd->self), ind, "", lvl, w, w,
				 nl->sym, nl->dso);
			put_line(y, buf, tl->depth == 0 ? A_BOLD : 0);
		}
		refresh();
		return;
	}
	snprintf(buf, sizeof(buf), "%7s %7s %9s  %-*s %s", "Self%", "Total%", "Samples", fn,
		 row_head(t), t->group == G_FUNC ? "Module" : t->group == G_THREAD ? "Process pid/tid" : "");
	put_line(y++, buf, A_BOLD);
	draw_rows(t, y, &t->rows, 1, 1);
	refresh();
}

static void on_key(struct top *t, int ch)
{
	if (t->help) {
		t->help = 0;
		return;
	}
	if (t->editing) {
		if (ch == 27) {
			t->editing = 0;
			t->filter[0] = 0;
			t->edit_len = 0;
		} else if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
			t->editing = 0;
			memcpy(t->filter, t->edit, t->edit_len);
			t->filter[t->edit_len] = 0;
			t->sel = t->scroll = 0;
		} else if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
			if (t->edit_len)
				t->edit_len--;
		} else if (ch >= 0x20 && ch < 0x7f && t->edit_len < FILTER_MAX - 1) {
			t->edit[t->edit_len++] = (char)ch;
		}
		compute_rows(t);
		return;
	}
	int page = page_rows();
	if (t->tree) {
		/* The call tree scrolls; the rows' selection stays. */
		int moved = 1;
		switch (ch) {
		case KEY_UP:
		case 'k':
			t->tscroll--;
			break;
		case KEY_DOWN:
		case 'j':
			t->tscroll++;
			break;
		case KEY_PPAGE:
			t->tscroll -= page;
			break;
		case KEY_NPAGE:
			t->tscroll += page;
			break;
		case KEY_HOME:
			t->tscroll = 0;
			break;
		case KEY_END:
			t->tscroll = (int)t->ntl;
			break;
		default:
			moved = 0;
		}
		if (moved) {
			if (t->tscroll >= (int)t->ntl)
				t->tscroll = (int)t->ntl - 1;
			if (t->tscroll < 0)
				t->tscroll = 0;
			return;
		}
	}
	switch (ch) {
	case 'q':
	case 'Q':
		t->quit = 1;
		return;
	case '?':
	case 'h':
		t->help = 1;
		return;
	case 27:
		if (t->tree)
			t->tree = 0;
		return;
	case 's':
		t->sort = (t->sort + 1) % S_COUNT;
		break;
	case 'g':
		t->group = (t->group + 1) % G_COUNT;
		t->sel = t->scroll = 0;
		t->tree = 0;
		break;
	case 'f':
		if ((t->group == G_THREAD || t->group == G_PROC) && t->sel < (int)t->rows.n) {
			const struct row *r = &t->rows.v[t->sel];
			t->focus = t->group;
			t->focus_pid = r->pid;
			t->focus_tid = r->tid;
			free(t->focus_name);
			t->focus_name = t->group == G_THREAD
				? xasprintf("%s (%u/%u)", r->name, r->pid, r->tid)
				: xasprintf("%s[%u]", r->name, r->pid);
			t->group = G_FUNC;
			t->sel = t->scroll = 0;
		} else {
			snprintf(status_msg, sizeof(status_msg),
				 "f focuses a thread or process: group by thread or process first (g)");
		}
		break;
	case 'F':
		t->focus = 0;
		break;
	case '/':
		t->editing = 1;
		t->edit_len = strlen(t->filter);
		memcpy(t->edit, t->filter, t->edit_len);
		return;
	case '\n':
	case '\r':
	case KEY_ENTER:
	case 'c':
		if (t->group == G_FUNC && t->sel < (int)t->rows.n) {
			t->tree = 1;
			t->tree_loc = t->rows.v[t->sel].loc;
			t->tscroll = 0;
		}
		break;
	case 'z':
		zero_counts(t);
		break;
	case 'p':
		t->paused = !t->paused;
		break;
	case 'i':
		t->interval = !t->interval;
		break;
	case KEY_UP:
	case 'k':
		t->sel--;
		break;
	case KEY_DOWN:
	case 'j':
		t->sel++;
		break;
	case KEY_PPAGE:
		t->sel -= page;
		break;
	case KEY_NPAGE:
		t->sel += page;
		break;
	case KEY_HOME:
		t->sel = 0;
		break;
	case KEY_END:
		t->sel = (int)t->rows.n - 1;
		break;
	case KEY_RESIZE:
		break;
	default:
		return;
	}
	if (t->sel >= (int)t->rows.n)
		t->sel = (int)t->rows.n - 1;
	if (t->sel < 0)
		t->sel = 0;
	t->keep_pos = 1;
	recompute(t);
}

static int read_keys(struct top *t)
{
	int any = 0, ch;
	while ((ch = getch()) != ERR) {
		on_key(t, ch);
		any = 1;
		if (t->quit)
			break;
	}
	return any;
}

static void errpipe_start(struct top *t)
{
	int p[2];
	t->ep2.rfd = t->ep2.saved = -1;
	if (pipe2(p, O_NONBLOCK | O_CLOEXEC) < 0)
		return;
	t->ep2.saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (t->ep2.saved < 0 || dup2(p[1], STDERR_FILENO) < 0) {
		close(p[0]);
		close(p[1]);
		if (t->ep2.saved >= 0)
			close(t->ep2.saved);
		t->ep2.saved = -1;
		return;
	}
	close(p[1]);
	t->ep2.rfd = p[0];
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &tag_stderr };
	epoll_ctl(t->in.ep, EPOLL_CTL_ADD, p[0], &ev);
}

static void errpipe_read(struct top *t)
{
	struct errpipe *e = &t->ep2;
	char buf[1024];
	ssize_t n;
	while (e->rfd >= 0 && (n = read(e->rfd, buf, sizeof(buf))) > 0) {
		size_t k = (size_t)n;
		if (k > sizeof(e->log) - e->len) {
			k = sizeof(e->log) - e->len;
			e->cut = 1;
		}
		memcpy(e->log + e->len, buf, k);
		e->len += k;
		/* The last whole line read goes to the status line. */
		size_t end = (size_t)n;
		while (end > 0 && buf[end - 1] == '\n')
			end--;
		size_t start = end;
		while (start > 0 && buf[start - 1] != '\n')
			start--;
		if (end > start) {
			size_t m = end - start < sizeof(status_msg) - 1 ? end - start
								   : sizeof(status_msg) - 1;
			memcpy(status_msg, buf + start, m);
			status_msg[m] = 0;
			for (size_t i = 0; i < m; i++)
				if ((unsigned char)status_msg[i] < 0x20)
					status_msg[i] = '?';
		}
	}
}

static void errpipe_stop(struct top *t)
{
	struct errpipe *e = &t->ep2;
	if (e->saved < 0)
		return;
	errpipe_read(t);
	dup2(e->saved, STDERR_FILENO);
	close(e->saved);
	e->saved = -1;
	if (e->rfd >= 0)
		close(e->rfd);
	e->rfd = -1;
	if (e->len && write(STDERR_FILENO, e->log, e->len) < 0)
		return;
	if (e->cut)
		fputs("probe: (more messages were dropped)\n", stderr);
}

/* ---- the loop ------------------------------------------------------- */

static void tick(struct top *t)
{
	take_snapshot(t);
	if (!t->paused)
		recompute(t);
	if (t->tty)
		draw(t);
	else
		print_snapshot(t, t->snap);
}

static void run_loop(struct top *t)
{
	struct epoll_event evs[64];
	uint64_t period = (uint64_t)(t->o->delay * 1e9);
	uint64_t next = now_ns() + period;
	for (;;) {
		uint64_t now = now_ns();
		if (t->quit)
			break;
		if (t->o->argv && t->child_done && !t->finished) {
			ingest_accept_all(&t->in);
			if (t->in.nconns == 0 || now >= t->t_exit + DRAIN_NS) {
				t->finished = 1;
				tick(t);
				if (!t->tty || t->o->exit_at_end)
					break;
				if (t->saving)
					recfile_flush(&t->out);
			}
		}
		if (now >= next) {
			if (!t->finished)
				tick(t);
			if (t->saving)
				recfile_flush(&t->out);
			next = now + period;
		}
		uint64_t wait = next > now ? next - now : 0;
		if (t->o->argv && t->child_done && !t->finished)
			wait = wait > 50000000 ? 50000000 : wait;
		int ms = (int)(wait / 1000000) + 1, due = ingest_timeout(&t->in);
		if (due >= 0 && due < ms)
			ms = due;
		int n = epoll_wait(t->in.ep, evs, (int)(sizeof(evs) / sizeof(evs[0])), ms);
		if (n < 0) {
			if (errno == EINTR) {
				if (t->tty && read_keys(t))
					draw(t);
				continue;
			}
			top_warn(t, "epoll_wait: %s", strerror(errno));
			break;
		}
		int sig = 0, lis = 0, keys = 0;
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;
			if (p == &tag_stderr)
				errpipe_read(t);
			else if (p == &tag_listen)
				lis = 1;
			else if (p == &tag_signal)
				sig = 1;
			else if (p == &tag_keys)
				keys = 1;
		}
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;
			if (p == &tag_listen || p == &tag_signal || p == &tag_keys ||
			    p == &tag_stderr)
				continue;
			struct ingest_conn *c = p;
			if (!c->dead)
				ingest_read(&t->in, c);
		}
		ingest_free_dead(&t->in);
		if (lis)
			ingest_accept_all(&t->in);
		if (sig)
			on_signal(t);
		if (keys && t->tty && read_keys(t))
			draw(t);
		if (ingest_timeout(&t->in) == 0)
			ingest_poll(&t->in);
	}
}

/* ---- set-up --------------------------------------------------------- */

static int parse_args(int argc, char **argv, struct top_opts *o)
{
	static const struct option longopts[] = {
		{ "delay", required_argument, NULL, 'd' },
		{ "rows", required_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "event", required_argument, NULL, 'e' },
		{ "freq", required_argument, NULL, 'F' },
		{ "count", required_argument, NULL, 'c' },
		{ "exit", no_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	o->delay = 1.0;
	o->nrows = 20;
	sampling_init(&o->smp);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:d:n:o:e:F:c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': {
			char *end;
			errno = 0;
			o->delay = strtod(optarg, &end);
			if (errno || end == optarg || *end || !isfinite(o->delay) ||
			    o->delay < 0.05 || o->delay > 3600)
				return usage_error("-d %s: the interval must be a number of seconds "
						   "from 0.05 to 3600", optarg);
			break;
		}
		case 'n': {
			uint64_t v;
			if (parse_u64(optarg, &v) < 0 || v < 1 || v > 100000)
				return usage_error("-n %s: the row count must be a whole number from "
						   "1 to 100000", optarg);
			o->nrows = (long)v;
			break;
		}
		case 'o':
			if (!*optarg)
				return usage_error("-o needs a file name");
			o->output = optarg;
			break;
		case 'e':
		case 'F':
		case 'c':
			if (sampling_option("top", c, optarg, &o->smp) == 2)
				return 2;
			break;
		case 'x':
			o->exit_at_end = 1;
			break;
		case 'h':
			top_usage(stdout);
			return 0;
		default:
			return cmd_bad_option("top", c, argv);
		}
	}
	if (sampling_check("top", &o->smp) >= 0)
		return 2;
	o->argv = optind < argc ? argv + optind : NULL;
	if (!o->argv && (o->smp.have_freq || o->smp.have_period ||
			   strcmp(o->smp.event, "cpu-clock") != 0))
		return usage_error("-e, -F and -c apply to a command probe top runs; without "
				   "one, set PROBE_EVENT/PROBE_FREQ for the programs you start");
	return -1;
}

/* 1 if something already listens at path (another probe top). */
static int socket_live(const char *path)
{
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path))
		return 0;
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	int live = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return live;
}

/* Start the command with its stdio away from the terminal view. */
static pid_t start_command(struct top *t, char **env, const sigset_t *old, int *rc)
{
	int saved[3] = { -1, -1, -1 };
	if (t->tty) {
		int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
		for (int i = 0; i < 3 && nul >= 0; i++) {
			saved[i] = fcntl(i, F_DUPFD_CLOEXEC, 3);
			dup2(nul, i);
		}
		if (nul >= 0)
			close(nul);
	}
	pid_t p = spawn(t->o->argv, env, old, rc);
	for (int i = 0; i < 3; i++)
		if (saved[i] >= 0) {
			dup2(saved[i], i);
			close(saved[i]);
		}
	return p;
}

int cmd_top(int argc, char **argv)
{
	struct top_opts o = { 0 };
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;

	struct top t = { .o = &o, .sfd = -1, .ep2 = { .rfd = -1, .saved = -1 } };
	t.in = (struct ingest){ .ep = -1, .lfd = -1, .spare_fd = -1, .uid = geteuid(),
				.what = "watched", .ctx = &t, .frame = on_frame,
				.note = on_note, .opened = on_opened, .closed = on_closed };
	t.tty = isatty(STDOUT_FILENO) && isatty(STDIN_FILENO);
	t.snap = o.argv ? stderr : stdout;
	char *lib = NULL, *dir = NULL;
	char **env = NULL;
	int curses = 0;
	sigset_t mask, old;
	sigemptyset(&old);
	rc = 1;

	lib = find_libprobe();
	if (!lib) {
		rc = 2;
		goto out;
	}
	dir = usock_dir();
	if (!dir)
		goto out;
	if (o.argv) {
		t.sock = xasprintf("%s/top-%ld.sock", dir, (long)getpid());
	} else {
		t.sock = xasprintf("%s/top.sock", dir);
		if (socket_live(t.sock)) {
			probe_err("another probe top is already watching %s; quit it first, or "
				  "give a command to run (probe top -- CMD)", t.sock);
			free(t.sock);
			t.sock = NULL;
			goto out;
		}
	}
	t.in.lfd = usock_listen(t.sock);
	if (t.in.lfd < 0) {
		free(t.sock);
		t.sock = NULL;
		goto out;
	}
	if (o.output) {
		if (recfile_open(&t.out, o.output) < 0)
			goto out;
		t.saving = 1;
	}
	if (probe_scratch_init(&t.in.sc) < 0)
		probe_oom();
	t.agg = agg_new();
	t.syms = symcache_new();
	struct resolve_opts ro = { .demangle = 1, .inline_frames = 1 };
	t.res = resolver_new(t.agg, t.syms, &ro);
	t.frames = xmalloc(RESOLVE_MAX_FRAMES * sizeof(*t.frames));
	t.in.spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigprocmask(SIG_BLOCK, &mask, &old);
	t.sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	t.in.ep = epoll_create1(EPOLL_CLOEXEC);
	if (t.sfd < 0 || t.in.ep < 0) {
		probe_err("cannot set up the event loop: %s", strerror(errno));
		goto out_mask;
	}
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &tag_listen };
	struct epoll_event sev = { .events = EPOLLIN, .data.ptr = &tag_signal };
	if (epoll_ctl(t.in.ep, EPOLL_CTL_ADD, t.in.lfd, &ev) < 0 ||
	    epoll_ctl(t.in.ep, EPOLL_CTL_ADD, t.sfd, &sev) < 0) {
		probe_err("cannot set up the event loop: %s", strerror(errno));
		goto out_mask;
	}

	t.t_start = t.last_tick = now_ns();
	if (o.argv) {
		struct child_settings cs = { lib, t.sock, o.smp.event, o.smp.use_period, o.smp.value };
		env = child_environ(&cs);
		t.child = start_command(&t, env, &old, &rc);
		if (t.child < 0) {
			if (t.saving)
				recfile_discard(&t.out);
			t.saving = 0;
			goto out_mask;
		}
	} else {
		char *line = xasprintf("start programs to watch with:  PROBE_SOCKET=%s "
				       "LD_PRELOAD=%s PROGRAM [ARG...]", t.sock, lib);
		if (t.tty)
			snprintf(status_msg, sizeof(status_msg), "%s", line);
		/* Printed as is, before the view, so it can be copied. */
		printf("%s\n", line);
		fflush(stdout);
		free(line);
	}
	ingest_raise_nofile();

	if (t.tty) {
		set_escdelay(25);
		if (!initscr()) {
			probe_err("cannot start the terminal view (TERM=%s); run probe top "
				  "with its output piped for plain-text snapshots",
				  getenv("TERM") ? getenv("TERM") : "");
			goto out_mask;
		}
		curses = 1;
		errpipe_start(&t);
		cbreak();
		noecho();
		keypad(stdscr, TRUE);
		nodelay(stdscr, TRUE);
		curs_set(0);
		struct epoll_event kev = { .events = EPOLLIN, .data.ptr = &tag_keys };
		epoll_ctl(t.in.ep, EPOLL_CTL_ADD, STDIN_FILENO, &kev);
		take_snapshot(&t);
		recompute(&t);
		draw(&t);
	}
	run_loop(&t);
	if (curses) {
		endwin();
		curses = 0;
		errpipe_stop(&t);
	}
	if (o.argv && !t.child_done) {
		/* Quit while the command runs: stop it (SIGKILL if it lingers 2 s). */
		if (!t.interrupted)
			kill(t.child, SIGTERM);
		int st = 0;
		uint64_t t_kill = now_ns() + DRAIN_NS;
		pid_t w;
		while ((w = waitpid(t.child, &st, WNOHANG)) == 0 ||
		       (w < 0 && errno == EINTR)) {
			if (w == 0 && now_ns() >= t_kill) {
				kill(t.child, SIGKILL);
				t_kill = UINT64_MAX;
			}
			usleep(10000);
		}
		t.status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
		t.child_done = 1;
	}
	if (!t.tty && !t.finished) {
		/* Interrupted: a last snapshot. */
		t.finished = 1;
		t.t_exit = now_ns();
		take_snapshot(&t);
		recompute(&t);
		print_snapshot(&t, t.snap);
	}
	ingest_close_all(&t.in);
	rc = o.argv ? t.status : 0;
	if (t.saving && recfile_close(&t.out) < 0 && rc == 0)
		rc = 1;
	t.saving = 0;

out_mask:
	if (curses) {
		endwin();
		errpipe_stop(&t);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
out:
	if (t.saving)
		recfile_close(&t.out);
	if (t.in.ep >= 0)
		close(t.in.ep);
	if (t.sfd >= 0)
		close(t.sfd);
	if (t.in.lfd >= 0)
		close(t.in.lfd);
	if (t.in.spare_fd >= 0)
		close(t.in.spare_fd);
	if (t.sock)
		unlink(t.sock);
	free(t.sock);
	if (t.in.sc.mem)
		probe_scratch_free(&t.in.sc);
	rows_clear(&t.rows);
	free(t.rows.v);
	free(t.down.v);
	free(t.up.v);
	free(t.tl);
	struct cent *c, *ct;
	HASH_ITER(hh, t.cents, c, ct) {
		HASH_DEL(t.cents, c);
		free(c);
	}
	struct pent *p, *pt;
	HASH_ITER(hh, t.procs, p, pt) {
		HASH_DEL(t.procs, p);
		free(p->name);
		free(p);
	}
	free(t.cvec);
	free(t.frames);
	free(t.stamp);
	free(t.focus_name);
	resolver_free(t.res);
	if (t.syms)
		symcache_free(t.syms);
	if (t.agg)
		agg_free(t.agg);
	free_environ(env);
	free(dir);
	free(lib);
	return rc;
}
