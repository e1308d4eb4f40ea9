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
 * scan.  Only objects not sent before get a MAP frame.  Called by the
 * sender before it drains the queues, so a sample in a new object always
 * follows that object's MAP in the stream.
 *
 * The periodic rescan alone misses objects that come and go within one
 * sender tick, and could send the MAP of an object loaded where an unloaded
 * one was before samples of the old one still queued.  So the interposed
 * dlopen and dlclose (loader.c) ask the sender for a pass when they changed
 * the counts (probe_maps_counts), and wait for it, bounded: after dlopen the
 * new objects' MAPs are out before any sample taken in them, after dlclose
 * every sample queued so far is out before a later MAP.  And a pass that
 * sees the unload count changed (probe_maps_unloaded: a dlclose that timed
 * out, or one we do not interpose) drains the queues before rescanning.
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

static struct seg *segs;
static size_t nsegs, capsegs;
static unsigned long long last_adds = ~0ull, last_subs = ~0ull;
static int scanned_once;

struct scan {
	uint32_t pid;
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

static struct seg *find_seg(uint64_t start, uint64_t end, uint64_t bias,
			    uint64_t h)
{
	for (size_t i = 0; i < nsegs; i++)
		if (segs[i].start == start && segs[i].end == end &&
		    segs[i].bias == bias && segs[i].name_hash == h)
			return &segs[i];
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
	segs[nsegs++] = (struct seg){ start, end, bias, h, 1 };
	return 0;
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
		if (w.ok && probe_output_append(w.p, w.len, 0) == 0 &&
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

int probe_maps_unloaded(void)
{
	unsigned long long adds, subs;

	if (!scanned_once || probe_maps_counts(&adds, &subs) < 0)
		return 0;
	return subs != last_subs;
}

int probe_maps_scan(uint32_t pid)
{
	struct scan s = { .pid = pid };
	size_t i, j;

	dl_iterate_phdr(counts_cb, &s);
	if (scanned_once && s.have_counts && s.adds == last_adds &&
	    s.subs == last_subs)
		return 0;
	for (i = 0; i < nsegs; i++)
		segs[i].seen = 0;
	s.index = 0;
	dl_iterate_phdr(object_cb, &s);
	/* Forget unloaded objects, so that a reload is announced again. */
	for (i = j = 0; i < nsegs; i++)
		if (segs[i].seen)
			segs[j++] = segs[i];
	nsegs = j;
	scanned_once = s.have_counts;
	last_adds = s.adds;
	last_subs = s.subs;
	return s.added;
}

void probe_maps_reset(void)
{
	nsegs = 0;
	scanned_once = 0;
	last_adds = last_subs = ~0ull;
}
