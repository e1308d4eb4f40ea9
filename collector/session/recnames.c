/* recnames.c - see recnames.h. */
#include "session/recnames.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hashtab.h"

#include "util.h"
#include "data/aggregate.h"
#include "data/wire_decode.h"
#include "symbols/symbols.h"
#include "symbols/symrec.h"

/* A process that has samples: its objects are worth loading early. */
struct sampled {
	uint32_t pid;
	UT_hash_handle hh;
};

struct recnames {
	struct agg *a;
	struct symcache *c;             /* loaded while recording, used at the end */
	struct sampled *pids;
	size_t *warmed, nwarmed;        /* per image: its MAPs loaded so far */
	uint64_t next_ns;               /* recnames_idle's next turn */
	unsigned looked;                /* MAPs it looked at (IDLE_MAPS_MAX) */
};

struct recnames *recnames_new(void)
{
	struct recnames *n = xcalloc(1, sizeof(*n));
	n->a = agg_new();
	agg_set_limit(n->a, (size_t)RECNAMES_MIB << 20);
	n->c = symcache_new();
	return n;
}

void recnames_msg(struct recnames *n, const struct probe_msg *m)
{
	struct probe_msg walk = *m;     /* agg_add walks the samples */
	struct sampled *s;

	if (m->type == PROBE_F_SAMPLES) {
		HASH_FIND(hh, n->pids, &m->pid, sizeof m->pid, s);
		if (!s) {
			s = xcalloc(1, sizeof(*s));
			s->pid = m->pid;
			HASH_ADD(hh, n->pids, pid, sizeof s->pid, s);
		}
	}
	agg_add(n->a, &walk);
}

/*
 * Load the objects of sampled processes into the cache the end will use,
 * a few at a time (IDLE_BUDGET_NS every IDLE_EVERY_NS): the collector has
 * a core of its own while the program runs, and the names pass at the end
 * (5.5 ms for sqlite3, 16 ms for a make -j2) was on the program's wall
 * time.  An object mapped but never sampled is loaded for nothing; one
 * whose file changes later is loaded again at the end (symcache_get keys
 * by path and build-id).  Ahead of the end only: an image's MAPs may be
 * reordered as they come (aggregate.c), so one looked at twice costs a
 * lookup, and one passed over is loaded at the end as before.
 */
#define IDLE_EVERY_NS 10000000ull
#define IDLE_BUDGET_NS 2000000ull
/*
 * At most this many MAPs looked at, a recording: processes that map many
 * files (or a hostile one) leave the rest to the end, which loads only
 * what was sampled.
 */
#define IDLE_MAPS_MAX 512

void recnames_idle(struct recnames *n, uint64_t now)
{
	size_t ni = agg_nimages(n->a);
	uint64_t end = now + IDLE_BUDGET_NS;

	if (now < n->next_ns || n->looked >= IDLE_MAPS_MAX)
		return;
	n->next_ns = now + IDLE_EVERY_NS;
	if (ni > n->nwarmed) {
		n->warmed = xrealloc(n->warmed, ni * sizeof(*n->warmed));
		memset(n->warmed + n->nwarmed, 0, (ni - n->nwarmed) * sizeof(*n->warmed));
		n->nwarmed = ni;
	}
	for (size_t i = 0; i < ni; i++) {
		const struct agg_image *im = agg_image(n->a, (uint32_t)i);
		struct sampled *s;

		HASH_FIND(hh, n->pids, &im->pid, sizeof im->pid, s);
		if (!s)
			continue;
		for (; n->warmed[i] < im->nmaps; n->warmed[i]++) {
			const struct agg_map *m = &im->maps[n->warmed[i]];

			if (m->jit || !m->build_id_len || !m->path || m->path[0] != '/')
				continue;
			symcache_get(n->c, m->path, m->build_id, m->build_id_len);
			if (++n->looked >= IDLE_MAPS_MAX || now_ns() >= end) {
				n->warmed[i]++;
				return;
			}
		}
	}
}

size_t recnames_write(struct recnames *n, void (*emit)(void *arg, const uint8_t *f, size_t len),
		      void *arg)
{
	agg_finish(n->a);
	size_t named = symrec_write(n->a, n->c, (uint32_t)getpid(), emit, arg);
	char dropped[256];
	if (agg_dropped_text(n->a, dropped, sizeof(dropped)))
		probe_warn("the recording names what fit in %u MiB: %s", RECNAMES_MIB,
			   dropped);
	return named;
}

void recnames_free(struct recnames *n)
{
	struct sampled *s, *t;

	if (!n)
		return;
	HASH_ITER(hh, n->pids, s, t) {
		HASH_DEL(n->pids, s);
		free(s);
	}
	symcache_free(n->c);
	free(n->warmed);
	agg_free(n->a);
	free(n);
}
