/*
 * view.c - what probe top shows: the header lines, plain-text snapshots
 * off a terminal, and the curses view with its keys.
 */
#include <curses.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include "format/format.h"
#include "data/lost.h"
#include "top/annot.h"
#include "top/top_state.h"
#include "util.h"

char status_msg[256];

static const char *const group_names[G_COUNT] = { "function", "module", "thread", "process" };
static const char *const sort_names[S_COUNT] = { "self", "total", "name" };

/* ---- what both views print ------------------------------------------ */

double pct(const struct top *t, uint64_t amount)
{
	return t->total ? 100.0 * (double)amount / (double)t->total : 0.0;
}

static int cmp_pent(const void *x, const void *y)
{
	const struct pent *a = *(struct pent *const *)x, *b = *(struct pent *const *)y;
	return a->order < b->order ? -1 : a->order > b->order;
}

/*
 * "cpu-clock, 999 Hz" for im's event; for a clock whose rate achieved is
 * off the one asked by 5 % or more, that rate first ("cpu-clock (CPU-time
 * timer), 212 Hz (999 asked)"), as the report's header says it.
 */
static void event_brief(const struct agg *a, const struct agg_image *im, char *buf,
			size_t cap)
{
	const char *name = im->event_name[0] ? im->event_name : "?";
	const char *timer = im->event_type == PROBE_EVENT_TIMER ? " (CPU-time timer)" : "";
	double hz = report_achieved_hz(a, im);

	if (im->alloc >= 0 && im->shown == im->alloc) {
		char every[32];

		human_size(im->alloc_every, every, sizeof every);
		snprintf(buf, cap, "alloc, bytes allocated (%s%s)", im->alloc_every > 1 ?
			 "a sample about every " : "every allocation", im->alloc_every > 1 ? every : "");
	} else if (!im->freq)
		snprintf(buf, cap, "%s%s, period %" PRIu64, name, timer, im->value);
	else if (hz > 0 && fabs(hz - (double)im->value) >= 0.05 * (double)im->value)
		snprintf(buf, cap, "%s%s, %.0f Hz (%" PRIu64 " asked)", name, timer, hz,
			 im->value);
	else
		snprintf(buf, cap, "%s%s, %" PRIu64 " Hz", name, timer, im->value);
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
	char ev[128] = "?";
	for (size_t j = 0; j < agg_nimages(t->agg); j++) {
		const struct agg_image *im = agg_image(t->agg, (uint32_t)j);
		if (im->have_hello) {
			event_brief(t->agg, im, ev, sizeof(ev));
			break;
		}
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
		lines[n++] = xasprintf("processes: %u seen, %u connected: %s%s", nprocs, live,
				       nprocs ? list : "(none yet)",
				       live < nprocs ? " (-: no longer connected)" : "");
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
	if (t->focus && n < max) {
		char *fl = focus_label(t);
		lines[n++] = xasprintf("focus: %s %s (F clears)",
				       t->focus == G_THREAD ? "thread" : "process", fl);
		free(fl);
	}
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
	if (t->smp && t->child_done && n < max)
		lines[n++] = xasprintf("the %s watched ended%s", t->o->smp.tids ? "threads" :
				       "processes", t->tty ? "; q to quit" : "");
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

/* Columns a character takes on the terminal (1 where the locale cannot tell). */
static int columns_of(uint32_t cp)
{
	int w = wcwidth((wchar_t)cp);
	return w < 0 ? 1 : w;
}

/*
 * What marks a cut: the last column of a name or line that did not fit
 * (as top(1) marks a cut field), so that "head+" is never taken for a
 * whole name.  ASCII: snapshots go to logs and pipes in any locale.
 */
#define CUT_MARK '+'

/*
 * s made printable (util.h) and fitted to width columns: one too long
 * keeps its start and ends in CUT_MARK, never cut inside a character
 * (what "%-*.*s" does in bytes cuts UTF-8 apart, and pads multibyte names
 * short; a line wider than the screen wraps); then padded with spaces to
 * pad_to columns.  Into buf (cap bytes, a cut too); returns buf.
 */
static const char *fit(char *buf, size_t cap, const char *s, int width, int pad_to)
{
	int all = 0;
	for (const char *p = s; *p;) {
		uint32_t cp;
		p += printable_next(p, &cp);
		all += columns_of(cp);
	}
	int cut = all > width;
	int room = cut ? width - 1 : width;
	size_t len = 0;
	int used = 0;
	for (const char *p = s; *p;) {
		uint32_t cp;
		char enc[4];
		size_t in = printable_next(p, &cp), k = utf8_encode(cp, enc);
		int w = columns_of(cp);
		if (used + w > room)
			break;
		if (len + k + 1 >= cap) {       /* one byte kept for the mark */
			cut = 1;
			break;
		}
		memcpy(buf + len, enc, k);
		len += k;
		used += w;
		p += in;
	}
	if (cut && width > 0) {
		buf[len++] = CUT_MARK;
		used++;
	}
	for (; used < pad_to && len + 1 < cap; used++)
		buf[len++] = ' ';
	buf[len] = '\0';
	return buf;
}

/* Room for a line of a screen however wide: its names take 4 bytes a column. */
#define LINE_MAX_BYTES 8192

/*
 * The name column's width on a screen cols wide (both views): what the
 * figures (30 columns) and a module or process name (24) leave, at least
 * 16.
 */
static int name_cols(int cols)
{
	return cols - 30 - 24 < 16 ? 16 : cols - 30 - 24;
}

/*
 * The width of a plain-text snapshot's rows: COLUMNS when it is set (as
 * top -b takes it), else none (-1): names whole, in a column of 40.
 */
static int text_cols(void)
{
	const char *c = getenv("COLUMNS");
	uint64_t v;
	if (!c || parse_u64(c, &v) < 0 || v < 1 || v > 100000)
		return -1;
	return (int)v;
}

/* One line of a snapshot, fitted to cols columns (-1: as it is). */
static void put_text(FILE *out, const char *s, int cols)
{
	char line[2 * LINE_MAX_BYTES];
	fprintf(out, "%s\n", fit(line, sizeof(line), s, cols < 0 ? INT_MAX : cols, 0));
}

/* The pid or pid/tid beside a thread or process row. */
static void row_ids(const struct top *t, const struct row *r, char *buf, size_t cap)
{
	buf[0] = 0;
	if (t->group == G_THREAD)
		snprintf(buf, cap, " %u/%u", r->pid, r->tid);
	else if (t->group == G_PROC)
		snprintf(buf, cap, "%u", r->pid);      /* a process row has no module */
}

static const char *row_tail_head(const struct top *t)
{
	switch (t->group) {
	case G_FUNC: return "Module";
	case G_THREAD: return "Process pid/tid";
	case G_PROC: return "pid";
	default: return "";
	}
}

/*
 * The rows' columns: Self%, Total%, Samples, and with --alloc Live (the
 * bytes the row's allocations, as leaf, hold now: not freed yet, estimated
 * as the allocated are), then the name.
 */
static int show_live(const struct top *t)
{
	return t->o && t->o->smp.alloc != 0;
}

static void head_line(const struct top *t, char *buf, size_t cap, int fn)
{
	snprintf(buf, cap, "%7s %7s %9s%s  %-*s %s", "Self%", "Total%", "Samples",
		 show_live(t) ? "       Live" : "", fn, row_head(t), row_tail_head(t));
}

static void row_line(const struct top *t, const struct row *r, const char *name,
		     const char *extra, char *buf, size_t cap)
{
	char live[32] = "";

	if (show_live(t)) {
		char h[24];

		human_size(r->live, h, sizeof h);
		snprintf(live, sizeof live, " %10s", h);
	}
	snprintf(buf, cap, "%6.2f%% %6.2f%% %9" PRIu64 "%s  %s %s%s", pct(t, r->self),
		 pct(t, r->total), r->samples, live, name, r->module, extra);
}

/* ---- plain-text snapshots ------------------------------------------- */

void print_snapshot(struct top *t, FILE *out)
{
	char *lines[16];
	int n = header_lines(t, lines, 16), cols = text_cols();
	int fn = cols < 0 ? 40 : name_cols(cols);
	char buf[2 * LINE_MAX_BYTES], name[LINE_MAX_BYTES], extra[64];
	for (int i = 0; i < n; i++) {
		/* Whole, however wide: they carry the figures (lost, falling
		 * behind) a reader of a log looks for, and name each process.
		 * A line made with snprintf may end inside a character: made whole. */
		char *p = printable_dup(lines[i]);
		fprintf(out, "# %s\n", p);
		free(p);
		free(lines[i]);
	}
	head_line(t, buf, sizeof(buf), fn);
	put_text(out, buf, cols);
	for (size_t i = 0; i < t->rows.n && (long)i < t->o->nrows; i++) {
		const struct row *r = &t->rows.v[i];
		row_ids(t, r, extra, sizeof(extra));
		fit(name, sizeof(name), r->name, cols < 0 ? INT_MAX : fn, fn);
		row_line(t, r, name, extra, buf, sizeof(buf));
		put_text(out, buf, cols);
	}
	fputc('\n', out);
	fflush(out);
}

/* ---- the terminal view ---------------------------------------------- */

static int page_rows(void)
{
	return LINES > 12 ? LINES - 10 : 2;
}

/*
 * Line y of the screen: s fitted to the screen's width (a name from a
 * hostile program is printable already; this is the last gate before the
 * terminal, for every line).
 */
static void put_line(int y, const char *s, int attr)
{
	if (y >= LINES || COLS <= 0)
		return;
	char line[LINE_MAX_BYTES];
	fit(line, sizeof(line), s, COLS, 0);
	if (attr)
		attron(attr);
	mvaddstr(y, 0, line);
	if (attr)
		attroff(attr);
}


static void draw_rows(struct top *t, int y, const struct rowset *rs, int selectable,
		      int show_self)
{
	int fn = name_cols(COLS);
	char buf[2 * LINE_MAX_BYTES], name[LINE_MAX_BYTES];
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
		if (selectable)
			row_ids(t, r, extra, sizeof(extra));
		fit(name, sizeof(name), r->name, fn, fn);
		if (show_self)
			row_line(t, r, name, extra, buf, sizeof(buf));
		else
			snprintf(buf, sizeof(buf), "        %6.2f%%           %s %s %s",
				 pct(t, r->total), show_live(t) ? "           " : "", name,
				 r->module);
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
		"  a          the selected function's instructions and source lines, with the",
		"             share of its samples on each (as probe annotate; Esc back)",
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

/* 'a': the selected function's annotation from line y, remade from the samples so far. */
static void draw_annot(struct top *t, int y)
{
	char buf[2 * LINE_MAX_BYTES];
	annot_refresh(t);
	const struct loc *l = resolver_loc(t->res, t->annot_loc);
	snprintf(buf, sizeof(buf), "Annotation of %s (%s), every sample since the start  "
		 "[Esc back, arrows/PgUp/PgDn scroll]", l->sym, l->dso);
	put_line(y++, buf, A_BOLD);
	if (t->ascroll >= (int)t->annot_n)
		t->ascroll = t->annot_n ? (int)t->annot_n - 1 : 0;
	for (int i = t->ascroll; i < (int)t->annot_n && y < LINES - 1; i++, y++)
		put_line(y, t->annot_lines[i], 0);
	refresh();
}

void draw(struct top *t)
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
	char buf[2 * LINE_MAX_BYTES], name[LINE_MAX_BYTES];
	int fn = name_cols(COLS);
	if (t->annot) {
		draw_annot(t, y);
		return;
	}
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
			snprintf(buf, sizeof(buf), "%6.2f%% %6.2f%%  %*s%s%s %s",
				 pct(t, nd->total), pct(t, nd->self), ind, "", lvl,
				 fit(name, sizeof(name), nl->sym, w, w), nl->dso);
			put_line(y, buf, tl->depth == 0 ? A_BOLD : 0);
		}
		refresh();
		return;
	}
	head_line(t, buf, sizeof(buf), fn);
	put_line(y++, buf, A_BOLD);
	draw_rows(t, y, &t->rows, 1, 1);
	refresh();
}

/* A key while the filter is edited (/): the text, Enter sets it, Esc drops it. */
static void key_edit(struct top *t, int ch)
{
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
}

int scroll_key(int ch, int page, int *pos, int n)
{
	switch (ch) {
	case KEY_UP:
	case 'k':
		(*pos)--;
		break;
	case KEY_DOWN:
	case 'j':
		(*pos)++;
		break;
	case KEY_PPAGE:
		*pos -= page;
		break;
	case KEY_NPAGE:
		*pos += page;
		break;
	case KEY_HOME:
		*pos = 0;
		break;
	case KEY_END:
		*pos = n;
		break;
	default:
		return 0;
	}
	if (*pos >= n)
		*pos = n - 1;
	if (*pos < 0)
		*pos = 0;
	return 1;
}

/* f: the selected thread or process alone, by function. */
static void key_focus(struct top *t)
{
	if ((t->group == G_THREAD || t->group == G_PROC) && t->sel < (int)t->rows.n) {
		const struct row *r = &t->rows.v[t->sel];
		t->focus = t->group;
		t->focus_pid = r->pid;
		t->focus_tid = r->tid;
		t->focus_image = r->image;
		t->group = G_FUNC;
		t->sel = t->scroll = 0;
	} else {
		snprintf(status_msg, sizeof(status_msg),
			 "f focuses a thread or process: group by thread or process first (g)");
	}
}

static void on_key(struct top *t, int ch)
{
	if (t->help) {
		t->help = 0;
		return;
	}
	if (t->editing) {
		key_edit(t, ch);
		return;
	}
	int page = page_rows();
	/* The call tree and the annotation scroll; the rows' selection stays. */
	if (t->annot && annot_key(t, ch, page))
		return;
	if (t->tree && !t->annot && scroll_key(ch, page, &t->tscroll, (int)t->ntl))
		return;
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
		annot_close(t);
		break;
	case 'f':
		key_focus(t);
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
	case 'a':
		if (t->tree)
			annot_open(t, t->tree_loc);
		else if (t->group == G_FUNC && t->sel < (int)t->rows.n)
			annot_open(t, t->rows.v[t->sel].loc);
		else
			snprintf(status_msg, sizeof(status_msg),
				 "a annotates a function: group by function first (g)");
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

int read_keys(struct top *t)
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

