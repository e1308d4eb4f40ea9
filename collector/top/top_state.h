/*
 * top_state.h - what the parts of `probe top` share (cmd/top.c: options,
 * connections and the loop; top/rows.c: the snapshot, rows and call tree;
 * top/view.c: the terminal view, plain-text snapshots and keys).  Private
 * to them.
 */
#ifndef PROBE_TOP_STATE_H
#define PROBE_TOP_STATE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "data/aggregate.h"
#include "cmdopt.h"
#include "hashtab.h"
#include "ingest/ingest.h"
#include "session/recfile.h"
#include "symbols/resolve.h"
#include "symbols/symbols.h"

#include "data/wire_decode.h"

/* How long to wait for connections to close after the command exited. */
#define DRAIN_NS 2000000000ull
#define FILTER_MAX 128

enum group { G_FUNC, G_MODULE, G_THREAD, G_PROC, G_COUNT };
enum sortk { S_SELF, S_TOTAL, S_NAME, S_COUNT };


struct top_opts {
	double delay;
	long nrows;
	const char *output;
	struct sampling smp;    /* -e, -F, -c */
	int exit_at_end;
	char **argv;            /* NULL: watch DIR/top.sock, or -p/-t/-a */
};

struct pent {                   /* one process seen */
	uint32_t pid;
	unsigned order;
	char *name;             /* of its latest HELLO: it follows exec */
	uint32_t image;         /* its latest image (agg_image), when have_image */
	int have_image;
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
	uint64_t live;          /* --alloc: its bytes not freed, at the last tick */
	UT_hash_handle hh;
};

struct row {
	uint64_t key;
	const char *name, *module;
	char *owned;            /* name when built here (thread/process rows) */
	uint32_t pid, tid, loc;
	uint32_t image;         /* thread, process rows: the latest image counted */
	uint64_t self, total, samples;
	uint64_t live;          /* --alloc: bytes its stacks (as leaf) hold now */
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
	struct sampler *smp;    /* -p, -t, -a (sampler.h) */
	uint64_t smp_read_at;
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
	int keys_ready;         /* the terminal has keys for us (this turn) */
	enum group group;
	enum sortk sort;
	int interval, paused, help;
	int focus;              /* 0, G_THREAD or G_PROC */
	uint32_t focus_pid, focus_tid;
	uint32_t focus_image;   /* the latest image its row had */
	char filter[FILTER_MAX];
	int editing;
	char edit[FILTER_MAX];
	size_t edit_len;
	int tree;
	uint32_t tree_loc;
	uint64_t tree_self, tree_total;
	int tscroll;            /* first line of the call tree shown */
	int annot;              /* 'a': the annotation of annot_loc shows (annot.h) */
	uint32_t annot_loc;
	char *annot_text;       /* its text; annot_lines point into it */
	char **annot_lines;
	size_t annot_n;
	int annot_hot;          /* the line of its hottest instruction */
	uint64_t annot_samples; /* the aggregate's samples when it was made */
	int ascroll;            /* its first line shown */
	int sel, scroll;
	int keep_pos;           /* the selection moved by key: keep its position */
	struct errpipe ep2;
};


/* ---- rows.c ---- */
void take_snapshot(struct top *t);
void zero_counts(struct top *t);
void recompute(struct top *t);
void rows_clear(struct rowset *rs);
void compute_rows(struct top *t);
double pct(const struct top *t, uint64_t amount);
/* Names that follow exec: a process's latest image's (image: the one to
 * ask if top has seen no HELLO of it); the focus's label (malloc'd). */
const char *proc_name(const struct top *t, uint32_t pid, uint32_t image);
char *focus_label(const struct top *t);

/* ---- view.c ---- */
/* The status line: the last warning or our own stderr's last line. */
extern char status_msg[256];
void print_snapshot(struct top *t, FILE *out);
void draw(struct top *t);
/* A key that scrolls a view of n lines (arrows, j/k, pages, Home, End): *pos moved, 1. */
int scroll_key(int ch, int page, int *pos, int n);
int read_keys(struct top *t);

#endif
