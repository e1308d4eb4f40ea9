/* recnames.c - see recnames.h. */
#include "session/recnames.h"

#include <stdlib.h>
#include <unistd.h>

#include "util.h"
#include "data/aggregate.h"
#include "data/wire_decode.h"
#include "symbols/symbols.h"
#include "symbols/symrec.h"

struct recnames {
	struct agg *a;
};

struct recnames *recnames_new(void)
{
	struct recnames *n = xcalloc(1, sizeof(*n));
	n->a = agg_new();
	agg_set_limit(n->a, (size_t)RECNAMES_MIB << 20);
	return n;
}

void recnames_msg(struct recnames *n, const struct probe_msg *m)
{
	struct probe_msg walk = *m;     /* agg_add walks the samples */
	agg_add(n->a, &walk);
}

size_t recnames_write(struct recnames *n, void (*emit)(void *arg, const uint8_t *f, size_t len),
		      void *arg)
{
	agg_finish(n->a);
	struct symcache *c = symcache_new();
	size_t named = symrec_write(n->a, c, (uint32_t)getpid(), emit, arg);
	symcache_free(c);
	char dropped[256];
	if (agg_dropped_text(n->a, dropped, sizeof(dropped)))
		probe_warn("the recording names what fit in %u MiB: %s", RECNAMES_MIB,
			   dropped);
	return named;
}

void recnames_free(struct recnames *n)
{
	if (!n)
		return;
	agg_free(n->a);
	free(n);
}
