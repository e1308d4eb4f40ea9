/*
 * maps.c - the loaded objects, as MAP frames.
 *
 * dl_iterate_phdr gives every loaded object with its load bias and program
 * headers; each executable PT_LOAD segment becomes one MAP frame
 *   start = bias + p_vaddr, end = start + p_memsz, pgoff = p_offset,
 * with the object's GNU build-id (read from its PT_NOTE, in memory) so that
 * the collector can find the right file and debug info after the process
 * is gone.  The main program's name is empty in dl_iterate_phdr: we use
 * /proc/self/exe; the vDSO is "[vdso]".
 *
 * Rescanning is cheap when nothing changed: dlpi_adds/dlpi_subs of the
 * first object tell whether objects were loaded or unloaded since the last
 * scan.  Only objects not sent before get a MAP frame.  The frames of one
 * scan go out in records of at most BATCH bytes, the first one led by a
 * SYNC frame when asked (conn_frames.c says why).  Callers are in normal
 * context (the constructor, dlopen/dlclose, pthread_create, exit); scans
 * are serialized by a lock.
 *
 * A scan that finds only unloads (dlclose) sends nothing: its SYNC, with
 * the time of that scan, waits for the next scan that sends MAPs and leads
 * them.  Its only job is to make the collector take the samples of the
 * unloaded code before the MAPs of what comes to the same addresses, and
 * without such MAPs nothing needs it (EXIT sends a SYNC of its own).  So
 * a dlopen/dlclose loop costs one message per round, not two: each wakes
 * the collector, and in a VM that wakeup is most of the cost (python3
 * loading and unloading a library in a loop: 10.7 % of its samples were
 * in sendmsg's wakeup).
 */
#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "probe.h"
#include "probe/buildid.h"

struct seg {
	uint64_t start, end, bias;
	uint64_t name_hash;
	int seen;
};

#define BATCH (32u * 1024)

static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t batch[BATCH];
static struct probe_wbuf bw;
static struct seg *segs;
static size_t nsegs, capsegs;
static unsigned long long last_adds = ~0ull, last_subs = ~0ull;
static int scanned_once;
static uint64_t sync_pending;           /* a SYNC's time not sent yet; 0: none */
static int holding;                     /* a hold scan: the batch is not sent */
static int hold_full;                   /* ... and did not fit it */
static size_t held;                     /* bytes held in batch for lazy.c */

struct scan {
	uint32_t pid;
	int sync;
	uint64_t sync_ns;               /* the SYNC's time */
	int added;
	unsigned long long adds, subs;
	int have_counts;
	int index;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;   /* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ull;
	return h;
}

static int counts_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan *s = arg;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
		s->adds = info->dlpi_adds;
		s->subs = info->dlpi_subs;
		s->have_counts = 1;
	}
	return 1;   /* one object is enough */
}

static int is_vdso(const struct dl_phdr_info *info)
{
	uintptr_t ehdr = (uintptr_t)getauxval(AT_SYSINFO_EHDR);

	if (info->dlpi_name && strcmp(info->dlpi_name, "linux-vdso.so.1") == 0)
		return 1;
	return ehdr && (uintptr_t)info->dlpi_phdr >= ehdr &&
	       (uintptr_t)info->dlpi_phdr < ehdr + 4096;
}

/*
 * segs[] indexed by a hash of the segment (open addressing, index + 1; 0
 * empty; at most half full): a scan looks every loaded object up, and a
 * program that dlopens thousands of objects rescans after each dlopen, so
 * a linear search would make the scans cubic (3,000 dlopens: 2.6 s).
 */
static uint32_t *idx;
static size_t idx_cap;

static size_t seg_hash(uint64_t start, uint64_t bias, uint64_t h)
{
	uint64_t x = (start ^ (bias * 0x9e3779b97f4a7c15ull) ^ h) * 0xff51afd7ed558ccdull;

	return (size_t)(x >> 32);
}

static void idx_put(size_t i)
{
	size_t m = idx_cap - 1, at = seg_hash(segs[i].start, segs[i].bias,
					      segs[i].name_hash) & m;

	while (idx[at])
		at = (at + 1) & m;
	idx[at] = (uint32_t)(i + 1);
}

/* Index segs[0..nsegs) again, in the table there is. */
static void idx_reindex(void)
{
	memset(idx, 0, idx_cap * sizeof *idx);
	for (size_t i = 0; i < nsegs; i++)
		idx_put(i);
}

/* A table for cap segments (at most half full), indexed; -1: no memory. */
static int idx_grow(size_t cap)
{
	size_t n = 64;
	uint32_t *t;

	while (n < 2 * cap + 2)
		n *= 2;
	if (n <= idx_cap)
		return 0;
	if (!(t = malloc(n * sizeof *t)))
		return -1;
	free(idx);
	idx = t;
	idx_cap = n;
	idx_reindex();
	return 0;
}

static struct seg *find_seg(uint64_t start, uint64_t end, uint64_t bias,
			    uint64_t h)
{
	size_t m = idx_cap - 1, at;

	if (!idx)
		return NULL;
	for (at = seg_hash(start, bias, h) & m; idx[at]; at = (at + 1) & m) {
		struct seg *g = &segs[idx[at] - 1];

		if (g->start == start && g->end == end && g->bias == bias &&
		    g->name_hash == h)
			return g;
	}
	return NULL;
}

static int add_seg(uint64_t start, uint64_t end, uint64_t bias, uint64_t h)
{
	if (nsegs == capsegs) {
		size_t cap = capsegs ? capsegs * 2 : 64;
		struct seg *n = realloc(segs, cap * sizeof *n);

		if (!n)
			return -1;
		segs = n;
		capsegs = cap;
	}
	if (idx_grow(capsegs) < 0)
		return -1;
	segs[nsegs++] = (struct seg){ start, end, bias, h, 1 };
	idx_put(nsegs - 1);
	return 0;
}

static int flush(void)
{
	int r = 0;

	if (holding) {
		hold_full = 1;
		return -1;
	}
	if (bw.len)
		r = probe_conn_send(bw.p, bw.len);
	probe_wbuf_init(&bw, batch, sizeof batch);
	return r;
}

/* Queue one frame in the batch (SYNC first when asked); send when full. */
static int emit(struct scan *s, const void *f, size_t n)
{
	if (bw.len + n > bw.cap && flush() < 0)
		return -1;
	if (s->sync) {
		s->sync = 0;
		probe_put_sync_at(&bw, s->sync_ns);
		sync_pending = 0;
	}
	probe_put_bytes(&bw, f, n);
	return bw.ok ? 0 : -1;
}

static int object_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan *s = arg;
	const char *path = info->dlpi_name;
	char abs[PATH_MAX];
	uint8_t bid[PROBE_BUILD_ID_MAX];
	unsigned bid_len = 0;
	int have_bid = 0;
	uint64_t h;

	(void)size;
	if (s->index++ == 0 && (!path || !*path))
		path = probe_proc.exe;
	else if (is_vdso(info))
		path = "[vdso]";
	else if (!path || !*path)
		return 0;   /* nameless and not the main program: nothing to say */
	else if (path[0] != '/' && realpath(path, abs))
		path = abs;
	h = hash_str(path);

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t start, end;
		struct seg *sg;
		uint8_t frame[PROBE_FRAME_HDR + 64 + PROBE_BUILD_ID_MAX + PROBE_STR_MAX];
		struct probe_wbuf w;
		size_t at;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) ||
		    ph->p_memsz == 0)
			continue;
		start = info->dlpi_addr + ph->p_vaddr;
		end = start + ph->p_memsz;
		sg = find_seg(start, end, info->dlpi_addr, h);
		if (sg) {
			sg->seen = 1;
			continue;
		}
		if (!have_bid) {
			bid_len = probe_build_id(info, bid);
			have_bid = 1;
		}
		probe_wbuf_init(&w, frame, sizeof frame);
		at = probe_frame_begin(&w, PROBE_F_MAP, s->pid);
		probe_put_u64(&w, start);
		probe_put_u64(&w, end);
		probe_put_u64(&w, info->dlpi_addr);
		probe_put_u64(&w, ph->p_offset);
		probe_put_u8(&w, bid_len);
		probe_put_bytes(&w, bid, bid_len);
		probe_put_str(&w, path);
		probe_frame_end(&w, at);
		if (w.ok && emit(s, w.p, w.len) == 0 &&
		    add_seg(start, end, info->dlpi_addr, h) == 0)
			s->added++;
	}
	return 0;
}

int probe_maps_counts(unsigned long long *adds, unsigned long long *subs)
{
	struct scan s = { 0 };

	dl_iterate_phdr(counts_cb, &s);
	*adds = s.adds;
	*subs = s.subs;
	return s.have_counts ? 0 : -1;
}

static void reset(void)
{
	nsegs = 0;
	sync_pending = 0;
	if (idx)
		memset(idx, 0, idx_cap * sizeof *idx);
	scanned_once = 0;
	last_adds = last_subs = ~0ull;
}

int probe_maps_scan(uint32_t pid, unsigned how)
{
	struct scan s = { .pid = pid, .sync = (how & PROBE_MAPS_SYNC) != 0 };
	size_t i, j;

	pthread_mutex_lock(&maps_lock);
	if (held && !holding)
		probe_maps_send_held();         /* they go first (lazy.c started) */
	if (how & PROBE_MAPS_ALL)
		reset();
	dl_iterate_phdr(counts_cb, &s);
	if (scanned_once && s.have_counts && s.adds == last_adds &&
	    s.subs == last_subs) {
		pthread_mutex_unlock(&maps_lock);
		return 0;
	}
	probe_wbuf_init(&bw, batch, sizeof batch);
	/* The SYNC's time: an earlier one still waiting, else now (after the
	 * dlclose or dlopen that called us returned). */
	s.sync_ns = sync_pending ? sync_pending : probe_now_ns();
	s.sync |= sync_pending != 0;
	for (i = 0; i < nsegs; i++)
		segs[i].seen = 0;
	s.index = 0;
	dl_iterate_phdr(object_cb, &s);
	/* Forget unloaded objects, so that a reload is announced again. */
	for (i = j = 0; i < nsegs; i++)
		if (segs[i].seen)
			segs[j++] = segs[i];
	if (j != nsegs) {
		nsegs = j;
		idx_reindex();
	}
	/* A scan that found only unloads: its SYNC waits (see the header). */
	if (s.sync && j != i)
		sync_pending = s.sync_ns;
	if (holding)
		held = bw.len;
	else
		flush();
	scanned_once = s.have_counts;
	last_adds = s.adds;
	last_subs = s.subs;
	pthread_mutex_unlock(&maps_lock);
	return s.added;
}

/*
 * Every object now, into the batch, not sent: the MAPs of a start that
 * waits (lazy.c).  Normal context (dl_iterate_phdr takes the loader's lock,
 * which our handler may find held); sending them later is a system call.
 */
int probe_maps_hold(uint32_t pid)
{
	holding = 1;
	hold_full = 0;
	held = 0;
	probe_maps_scan(pid, PROBE_MAPS_ALL);
	holding = 0;
	if (hold_full) {
		held = 0;
		reset();
		return -1;
	}
	return 0;
}

/* Async-signal-safe: the MAPs held, on their way (once). */
int probe_maps_send_held(void)
{
	size_t n = __atomic_exchange_n(&held, 0, __ATOMIC_ACQ_REL);

	return n ? probe_conn_send(batch, n) : 0;
}

/* Fork child: the lock may have been held by a thread that is not here. */
void probe_maps_after_fork_child(void)
{
	pthread_mutex_init(&maps_lock, NULL);
	held = 0;
	reset();
}
