/*
 * jit.c - JIT code of a live process: its ranges for the handler, its
 * names for the reports (see jit.h).
 *
 * Why the collector and not libprobe: reading /proc/PID/maps and the
 * runtime's files costs system calls and memory a signal handler cannot
 * spend, and a perf map may be written at exit, when libprobe is gone.
 * Why ranges and not one rule per address: JIT code is many short-lived
 * functions whose addresses are reused; a range costs the handler a few
 * compares and never misses once published.
 */
#include "ingest/jit.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include "hashtab.h"

#include "ingest/ingest.h"
#include "ingest/jitrule.h"
#include "util.h"

#define REFRESH_MIN_NS (20ull * 1000000)
#define REFRESH_MAX_NS (1000ull * 1000000)
#define LOOK_EVERY_NS (1000ull * 1000000)
#define LINE_MAX_BYTES 4096
#define MAP_READ_MAX (256u * 1024)      /* perf map bytes read a poll, at most */
#define MAP_READ_FINAL (64u << 20)      /* ... and at the process's end */
#define DUMP_READS 4096                 /* jitdump records a poll, at most */
#define DUMP_NAMES_MAX (1u << 20)       /* code_index -> name kept for MOVE */
#define FUNCS_MAX (1u << 20)            /* named functions kept for rules */
/* Another user's process (root's agent): what it may make us keep. */
#define UNTRUSTED_NAMES_MAX (1u << 14)
#define UNTRUSTED_NAME_BYTES 256
#define UNTRUSTED_FUNCS_MAX (1u << 16)
#define CODE_READ 512                   /* bytes of a function read for its rule */
#define GUESSED 1024                    /* keys given NONE before a name covered them */

struct dump_name {
	uint64_t index;
	char *name;
	UT_hash_handle hh;
};

/* A named function: where rules are learned from (jitrule.h). */
struct func {
	uint64_t start, end;
	UT_hash_handle hh;
};

struct jit_watch {
	uint64_t next_refresh, backoff, next_look;
	int had_ranges;                 /* JIT ranges were found, once at least */
	struct probe_range *exec;             /* every executable mapping, last read */
	size_t nexec, exec_cap;
	int exec_fresh;                 /* read in this very poll */
	struct func *funcs;             /* by start */
	struct probe_range *sorted;           /* funcs by start, when !funcs_dirty */
	size_t nfuncs;
	int funcs_dirty;
	/* Keys given the frame pointer (NONE) while no name covered them: asked
	   again once one does (a map written late: jcmd Compiler.perfmap). */
	uint64_t guessed[GUESSED];
	unsigned nguessed;
	int mem_fd, mem_denied;         /* another user's memory (read_code) */
	unsigned funcs_max, names_max;  /* FUNCS_MAX..., less for another user's */
	size_t name_bytes;              /* a jitdump name kept, at most */
	/* perf map: the bytes of a line not ended yet */
	int map_fd;
	char line[LINE_MAX_BYTES + 1];
	size_t line_len;                /* a longer line is cut at the cap */
	/* jitdump */
	int dump_fd;
	char *dump_path;                /* as mapped, for opening */
	uint64_t dump_off;
	int dump_bad;
	struct dump_name *names;
	unsigned nnames;
};

/* ---- ranges ------------------------------------------------------------ */

/* Does any MAP (an object's code, with CFI) lie in [lo, hi)? */
static int maps_in(const struct cfi_maps *m, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].start < hi && m->v[i].end > lo)
			return 1;
	return 0;
}

/* Is path the file of a MAP (an object the process loaded)? */
static int maps_path(const struct cfi_maps *m, const char *path)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].path && !strcmp(m->v[i].path, path))
			return 1;
	return 0;
}

/*
 * Executable, and backed by no file: JIT code (or a memfd JIT's double
 * map).  Or an object's file mapped again where none of its MAPs is: node
 * copies V8's builtins out of its own text (no CFI there either), which
 * libunwind walked by frame pointer and libprobe's walk now does too.
 */
static int jit_like(const struct cfi_maps *m, const char *perms,
		    unsigned long inode, const char *path)
{
	if (perms[2] != 'x')
		return 0;
	if (!strncmp(path, "/memfd:", 7))
		return 1;
	if (inode)
		return path[0] == '/' && maps_path(m, path);
	return path[0] != '[' || !strncmp(path, "[anon:", 6);
}

/* Is path's basename jit-NSPID.dump (the file a jitdump runtime maps)? */
static int is_dump(const char *path, uint32_t nspid)
{
	char want[32];

	snprintf(want, sizeof want, "jit-%" PRIu32 ".dump", nspid);
	return !strcmp(path_basename(path), want);
}

static void publish(struct probe_arena *a, const struct probe_range *r, size_t n)
{
	if (n > PROBE_JIT_RANGES)
		n = PROBE_JIT_RANGES;   /* /proc lists them by address: the lowest */
	uint32_t seq = __atomic_load_n(&a->jit_seq, __ATOMIC_RELAXED);
	__atomic_store_n(&a->jit_seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (size_t i = 0; i < n; i++) {
		__atomic_store_n(&a->jit[i].lo, r[i].lo, __ATOMIC_RELAXED);
		__atomic_store_n(&a->jit[i].hi, r[i].hi, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&a->njit, (uint32_t)n, __ATOMIC_RELAXED);
	__atomic_store_n(&a->jit_seq, seq + 2, __ATOMIC_RELEASE);
}

/* The arena's ranges now (the collector is their only writer). */
static size_t njit(const struct probe_arena *a)
{
	return a->njit < PROBE_JIT_RANGES ? a->njit : PROBE_JIT_RANGES;
}

/* Has the arena these ranges already? */
static int published(const struct probe_arena *a, const struct probe_range *r, size_t n)
{
	if (n > PROBE_JIT_RANGES)
		n = PROBE_JIT_RANGES;
	return njit(a) == n && (!n || !memcmp(a->jit, r, n * sizeof *r));
}

/* Is all of r in a range the arena has now? */
static int was_published(const struct probe_arena *a, struct probe_range r)
{
	for (size_t i = 0; i < njit(a); i++)
		if (a->jit[i].lo <= r.lo && r.hi <= a->jit[i].hi)
			return 1;
	return 0;
}

/* Read /proc/PID/maps: publish the JIT ranges, note a jitdump's path. */
static int refresh(struct ingest_conn *c, struct probe_arena *a, struct jit_watch *jw)
{
	char *line = NULL;
	size_t cap = 0, n = 0, rcap = 0;
	struct probe_range *r = NULL;
	int barrier = 0;
	size_t lines = 0;

	FILE *f = peer_fopen_proc(&c->peer, "maps");     /* as its user could */
	if (!f)
		return 0;
	jw->nexec = 0;
	jw->exec_fresh = 1;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long lo, hi, off;
		unsigned long inode;
		char perms[5];
		int at = 0;

		if (sscanf(line, "%llx-%llx %4s %llx %*x:%*x %lu %n", &lo, &hi, perms,
			   &off, &inode, &at) < 5 || lo >= hi)
			continue;
		lines++;
		char *p = line + at;
		p[strcspn(p, "\n")] = 0;
		if (!jw->dump_path && *p == '/' && is_dump(p, c->wire_pid))
			jw->dump_path = xstrdup(p);
		if (perms[2] == 'x') {
			jw->exec = xgrow(jw->exec, &jw->exec_cap, jw->nexec + 1,
					 sizeof *jw->exec);
			jw->exec[jw->nexec].lo = lo;
			jw->exec[jw->nexec].hi = hi;
			jw->nexec++;
		}
		if (!jit_like(&c->maps, perms, inode, p) || maps_in(&c->maps, lo, hi)) {
			barrier |= perms[2] == 'x';     /* an object's code */
			continue;
		}
		if (n && !barrier) {
			/* Only data or nothing since the last one: one range. */
			r[n - 1].hi = hi;
			continue;
		}
		r = xgrow(r, &rcap, n + 1, sizeof *r);
		r[n].lo = lo;
		r[n].hi = hi;
		n++;
		barrier = 0;
	}
	free(line);
	fclose(f);
	if (!lines) {           /* an exiting process: its maps are gone */
		jw->exec_fresh = 0;
		free(r);
		return 0;
	}
	int changed = !published(a, r, n);
	if (changed) {
		/* New code where garbage addresses were called no code (UNSUP). */
		for (size_t i = 0; i < n && i < PROBE_JIT_RANGES; i++)
			if (!was_published(a, r[i]))
				cfi_forget(a, r[i].lo, r[i].hi);
		publish(a, r, n);
	}
	/* Sticky: an exiting process's maps read empty, and its map comes last. */
	jw->had_ranges |= n > 0;
	free(r);
	return changed;
}

/* ---- opening the runtime's files ---------------------------------------- */

/*
 * Open a file the runtime wrote, as its user would (peer.h): through the
 * process's root while it lives, else as we see it when it is in our PID
 * namespace; no symlink followed on the way; a regular file of the
 * process's own uid only (not root's: a user must not get root's files
 * named, nor another root process's map read by claiming its pid).
 */
static int open_owned(const struct ingest_conn *c, const char *path)
{
	return peer_open(&c->peer, (uint32_t)c->pid == c->wire_pid, path,
			 PEER_NOSYMLINKS | PEER_OWNED);
}

static void look(struct ingest_conn *c, struct jit_watch *jw)
{
	if (jw->map_fd < 0) {
		char path[48];

		snprintf(path, sizeof path, "/tmp/perf-%" PRIu32 ".map", c->wire_pid);
		jw->map_fd = open_owned(c, path);
	}
	if (jw->dump_fd < 0 && jw->dump_path)
		jw->dump_fd = open_owned(c, jw->dump_path);
}

/* ---- names, as JIT frames ----------------------------------------------- */

/*
 * Keep [start, end) as a function to learn rules from.  Named again at the
 * same start: the runtime put other code there, whose rules may differ.
 */
static void func_add(struct jit_watch *jw, struct probe_arena *a,
		     uint64_t start, uint64_t end)
{
	struct func *f;

	for (unsigned i = 0; i < GUESSED && i < jw->nguessed; i++)
		if (jw->guessed[i] >= start && jw->guessed[i] < end) {
			cfi_forget_key(a, jw->guessed[i]);
			jw->guessed[i] = 0;
		}
	HASH_FIND(hh, jw->funcs, &start, sizeof start, f);
	if (f) {
		cfi_forget(a, start, f->end > end ? f->end : end);
		f->end = end;
		jw->funcs_dirty = 1;
		return;
	}
	if (jw->nfuncs >= jw->funcs_max)
		return;
	f = xcalloc(1, sizeof *f);
	f->start = start;
	f->end = end;
	HASH_ADD(hh, jw->funcs, start, sizeof f->start, f);
	jw->nfuncs++;
	jw->funcs_dirty = 1;
}

struct out {
	struct ingest *in;
	struct ingest_conn *c;
	struct jit_watch *jw;
	struct probe_arena *a;
};

static void deliver(const struct out *o, uint64_t start, uint64_t size,
		    unsigned source, const char *name)
{
	uint8_t b[64 + PROBE_STR_MAX];
	struct probe_wbuf w;

	/* In an object's code (V8 names its builtins in node's text): its own names win. */
	if (!size || start + size < start || maps_in(&o->c->maps, start, start + size))
		return;
	func_add(o->jw, o->a, start, start + size);
	probe_wbuf_init(&w, b, sizeof b);
	size_t at = probe_frame_begin(&w, PROBE_F_JIT, (uint32_t)o->c->pid);
	probe_put_u64(&w, start);
	probe_put_u64(&w, size);
	probe_put_u8(&w, source);
	probe_put_str(&w, name);
	probe_frame_end(&w, at);
	if (w.ok)
		ingest_deliver(o->in, o->c, w.p, w.len);
}

/* One perf map line, "START SIZE NAME" (hex, 0x optional): 0, or -1. */
static int parse_line(char *line, uint64_t *start, uint64_t *size, char **name)
{
	char *end;

	errno = 0;
	*start = strtoull(line, &end, 16);
	if (end == line || *end != ' ' || errno)
		return -1;
	line = end + 1;
	*size = strtoull(line, &end, 16);
	if (end == line || *end != ' ' || errno || !*size)
		return -1;
	*name = end + 1;
	(*name)[strcspn(*name, "\r\n")] = 0;
	return **name ? 0 : -1;
}

static void map_line(const struct out *o, struct jit_watch *jw)
{
	uint64_t start, size;
	char *name;

	jw->line[jw->line_len] = 0;
	if (parse_line(jw->line, &start, &size, &name) == 0)
		deliver(o, start, size, PROBE_JIT_PERFMAP, name);
	jw->line_len = 0;
}

/*
 * The perf map's new lines (a line not ended yet waits for its end), at
 * most MAP_READ_MAX bytes a poll (MAP_READ_FINAL at the process's end,
 * when Java writes its map): the file's offset keeps our place, and a
 * huge or sparse map costs each poll that much, not the collector's loop
 * for as long as the file is.  Each read is cut at its newlines with
 * memchr: a map of zeros costs little more than reading it.
 */
static void read_map(const struct out *o, struct jit_watch *jw, int final)
{
	char buf[16384];
	ssize_t got;
	size_t left = peer_budget_bytes(&o->in->budgets, &o->c->peer,
					final ? MAP_READ_FINAL : MAP_READ_MAX);

	while (left && (got = read(jw->map_fd, buf, left < sizeof buf ? left : sizeof buf)) > 0) {
		const char *p = buf, *end = buf + got;
		left -= (size_t)got;
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			const char *stop = nl ? nl : end;
			size_t n = (size_t)(stop - p), room = LINE_MAX_BYTES - jw->line_len;
			memcpy(jw->line + jw->line_len, p, n < room ? n : room);
			jw->line_len += n < room ? n : room;
			if (nl)
				map_line(o, jw);
			p = stop + (nl != NULL);
		}
	}
}

/* ---- jitdump (the format of perf's tools/perf/util/jitdump.h) ---------- */

#define DUMP_MAGIC 0x4A695444u          /* "JiTD", in the writer's order */
enum { DUMP_CODE_LOAD = 0, DUMP_CODE_MOVE = 1 };

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static const char *dump_name(struct jit_watch *jw, uint64_t index)
{
	struct dump_name *d;

	HASH_FIND(hh, jw->names, &index, sizeof index, d);
	return d ? d->name : NULL;
}

/* A copy of name, cut at max bytes. */
static char *keep_name(const char *name, size_t max)
{
	char *k = strndup(name, max);
	if (!k)
		probe_oom();
	return k;
}

static void dump_keep(struct jit_watch *jw, uint64_t index, const char *name)
{
	struct dump_name *d;

	HASH_FIND(hh, jw->names, &index, sizeof index, d);
	if (d) {
		free(d->name);
		d->name = keep_name(name, jw->name_bytes);
		return;
	}
	if (jw->nnames >= jw->names_max)
		return;
	d = xcalloc(1, sizeof *d);
	d->index = index;
	d->name = keep_name(name, jw->name_bytes);
	HASH_ADD(hh, jw->names, index, sizeof d->index, d);
	jw->nnames++;
}

/* The header: 40 bytes, little-endian x86-64 only; then records. */
static int dump_header(struct jit_watch *jw)
{
	uint8_t h[40];

	if (pread(jw->dump_fd, h, sizeof h, 0) != (ssize_t)sizeof h)
		return 0;               /* not written yet */
	uint32_t size = (uint32_t)le(h + 8, 4);
	if (le(h, 4) != DUMP_MAGIC || size < sizeof h || size > 4096) {
		jw->dump_bad = 1;       /* another byte order, or not a jitdump */
		return 0;
	}
	jw->dump_off = size;
	return 1;
}

/* One record at dump_off: 1 read (and passed), 0 not whole yet (the file: size bytes). */
static int dump_record(const struct out *o, struct jit_watch *jw, uint64_t fsize)
{
	uint8_t r[64 + PROBE_STR_MAX + 1];
	ssize_t got = pread(jw->dump_fd, r, sizeof r - 1, (off_t)jw->dump_off);

	if (got < 16)
		return 0;
	uint32_t id = (uint32_t)le(r, 4), size = (uint32_t)le(r + 4, 4);
	if (size < 16) {
		jw->dump_bad = 1;
		return 0;
	}
	if (fsize < jw->dump_off + size)
		return 0;               /* the runtime is still writing it */
	if (id == DUMP_CODE_LOAD && got >= 56 && size >= 57) {
		/* pid, tid, vma, code_addr, code_size, code_index, name\0, code */
		size_t room = (size_t)got < size ? (size_t)got : size;
		r[room] = 0;
		const char *name = (const char *)r + 56;
		uint64_t addr = le(r + 32, 8), len = le(r + 40, 8), idx = le(r + 48, 8);
		if (*name) {
			deliver(o, addr, len, PROBE_JIT_DUMP, name);
			dump_keep(jw, idx, name);
		}
	} else if (id == DUMP_CODE_MOVE && got >= 72) {
		/* pid, tid, vma, old_code_addr, new_code_addr, code_size, code_index */
		const char *name = dump_name(jw, le(r + 64, 8));
		if (name)
			deliver(o, le(r + 48, 8), le(r + 56, 8), PROBE_JIT_DUMP, name);
	}
	jw->dump_off += size;
	return 1;
}

static void read_dump(const struct out *o, struct jit_watch *jw)
{
	struct stat st;

	if (jw->dump_bad || (!jw->dump_off && !dump_header(jw)) ||
	    fstat(jw->dump_fd, &st) < 0)
		return;
	for (int i = 0; i < DUMP_READS && !jw->dump_bad; i++)
		if (!dump_record(o, jw, (uint64_t)st.st_size))
			break;
}

/* ---- the poll ----------------------------------------------------------- */

/* ---- rules for the addresses asked about --------------------------------- */

static int cmp_range(const void *x, const void *y)
{
	const struct probe_range *a = x, *b = y;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* The named function containing key, or NULL. */
static const struct probe_range *func_of(struct jit_watch *jw, uint64_t key)
{
	if (jw->funcs_dirty) {
		struct func *f, *tmp;
		size_t i = 0;

		jw->sorted = xrealloc(jw->sorted, (jw->nfuncs + 1) * sizeof *jw->sorted);
		HASH_ITER(hh, jw->funcs, f, tmp) {
			jw->sorted[i].lo = f->start;
			jw->sorted[i++].hi = f->end;
		}
		qsort(jw->sorted, i, sizeof *jw->sorted, cmp_range);
		jw->funcs_dirty = 0;
	}
	size_t lo = 0, hi = jw->nfuncs;
	while (lo < hi) {               /* the last function starting at or below key */
		size_t mid = lo + (hi - lo) / 2;
		if (jw->sorted[mid].lo <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && key < jw->sorted[lo - 1].hi ? &jw->sorted[lo - 1] : NULL;
}

static int in_ranges(const struct probe_range *r, size_t n, uint64_t key)
{
	for (size_t i = 0; i < n; i++)
		if (key >= r[i].lo && key < r[i].hi)
			return 1;
	return 0;
}


/*
 * n bytes of the process's memory at addr.  Another user's through its
 * /proc/PID/mem opened with that user's rights (the kernel checks them at
 * the open, as it would the user's own: a pid that has since exec'd a
 * setuid program is not read); our own user's with process_vm_readv.
 */
static ssize_t read_code(const struct ingest_conn *c, struct jit_watch *jw, uint8_t *code,
			 size_t n, uint64_t addr)
{
	if (!c->peer.untrusted) {
		struct iovec local = { code, n }, remote = { (void *)(uintptr_t)addr, n };
		return process_vm_readv(c->pid, &local, 1, &remote, 1, 0);
	}
	if (jw->mem_fd < 0 && !jw->mem_denied) {
		jw->mem_fd = peer_open_proc(&c->peer, "mem");
		jw->mem_denied = jw->mem_fd < 0;
	}
	return jw->mem_fd < 0 ? -1 : pread(jw->mem_fd, code, n, (off_t)addr);
}

/* The rule of key, in JIT code: from its function's first bytes. */
static uint64_t learn_one(const struct ingest_conn *c, struct jit_watch *jw, uint64_t key)
{
	const struct probe_range *f = func_of(jw, key);
	uint8_t code[CODE_READ];

	if (!f) {
		jw->guessed[jw->nguessed++ % GUESSED] = key;
		return probe_rule_pack(PROBE_RULE_NONE, 0, 0, 0);
	}
	size_t n = f->hi - f->lo < sizeof code ? (size_t)(f->hi - f->lo) : sizeof code;
	ssize_t got = read_code(c, jw, code, n, f->lo);
	if (got <= 0)
		return probe_rule_pack(PROBE_RULE_NONE, 0, 0, 0);
	return jit_rule(code, (size_t)got, f->lo, key);
}

static void learn(struct ingest_conn *c, struct probe_arena *a, struct cfi_learner *l,
		  struct jit_watch *jw, const struct cfi_unmapped *um)
{
	for (unsigned i = 0; i < um->n; i++) {
		uint64_t key = um->key[i];

		if (in_ranges(a->jit, njit(a), key))
			cfi_publish(a, l, key, learn_one(c, jw, key));
		else if (jw->exec_fresh && !in_ranges(jw->exec, jw->nexec, key))
			cfi_publish(a, l, key, probe_rule_pack(PROBE_RULE_UNSUP, 0, 0, 0));
	}
}

/* ---- the poll ----------------------------------------------------------- */

void jit_poll(struct ingest *in, struct ingest_conn *c, struct probe_arena *a,
	      struct cfi_learner *l, struct jit_watch **jwp,
	      const struct cfi_unmapped *um, int final)
{
	struct jit_watch *jw = *jwp;
	uint64_t now = now_ns();

	if (!jw) {
		if (!um->n)
			return;         /* no sign of JIT code: nothing to do */
		jw = *jwp = xcalloc(1, sizeof *jw);
		jw->map_fd = jw->dump_fd = jw->mem_fd = -1;
		jw->funcs_max = c->peer.untrusted ? UNTRUSTED_FUNCS_MAX : FUNCS_MAX;
		jw->names_max = c->peer.untrusted ? UNTRUSTED_NAMES_MAX : DUMP_NAMES_MAX;
		jw->name_bytes = c->peer.untrusted ? UNTRUSTED_NAME_BYTES : SIZE_MAX;
		jw->backoff = REFRESH_MIN_NS;
	}
	jw->exec_fresh = 0;
	if (um->n && now >= jw->next_refresh) {
		if (refresh(c, a, jw))
			jw->backoff = REFRESH_MIN_NS;
		else if (jw->backoff < REFRESH_MAX_NS)
			jw->backoff *= 2;
		jw->next_refresh = now + jw->backoff;
	}
	if ((jw->map_fd < 0 || (jw->dump_path && jw->dump_fd < 0)) &&
	    jw->had_ranges && (final || now >= jw->next_look)) {
		look(c, jw);
		jw->next_look = now + LOOK_EVERY_NS;
	}
	struct out o = { in, c, jw, a };
	if (jw->map_fd >= 0)
		read_map(&o, jw, final);
	if (jw->dump_fd >= 0)
		read_dump(&o, jw);
	if (um->n && !final)
		learn(c, a, l, jw, um);
}

void jit_free(struct jit_watch *jw)
{
	struct dump_name *d, *tmp;

	if (!jw)
		return;
	if (jw->map_fd >= 0)
		close(jw->map_fd);
	if (jw->dump_fd >= 0)
		close(jw->dump_fd);
	if (jw->mem_fd >= 0)
		close(jw->mem_fd);
	HASH_ITER(hh, jw->names, d, tmp) {
		HASH_DEL(jw->names, d);
		free(d->name);
		free(d);
	}
	struct func *f, *ftmp;
	HASH_ITER(hh, jw->funcs, f, ftmp) {
		HASH_DEL(jw->funcs, f);
		free(f);
	}
	free(jw->sorted);
	free(jw->exec);
	free(jw->dump_path);
	free(jw);
}
