/*
 * agg_symtab.c - a recording's SYMTAB frames (the names it carries,
 * include/probe/wire.h), held by the aggregate for the resolver
 * (symbols/symrec.h): each as its decoded message, pointing into a copy
 * of its bytes the aggregate owns.  Counted in the bound; one that does
 * not fit is a frame dropped.
 */
#include "data/agg_int.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

void aggi_add_symtab(struct agg *a, const struct probe_msg *m)
{
	size_t len = (size_t)(m->u.symtab.end - m->u.symtab.funcs);
	size_t plen = strlen(m->u.symtab.path) + 1;
	if (!aggi_room(a, len + plen + sizeof(struct probe_msg) + 64)) {
		a->t.frames_dropped++;
		return;
	}
	uint8_t *b = xmalloc(len + plen);
	memcpy(b, m->u.symtab.funcs, len);
	memcpy(b + len, m->u.symtab.path, plen);
	struct probe_msg c = *m;
	c.u.symtab.funcs = b;
	c.u.symtab.addrs = b + (m->u.symtab.addrs - m->u.symtab.funcs);
	c.u.symtab.end = b + len;
	c.u.symtab.path = (const char *)b + len;
	a->symtabs = xgrow(a->symtabs, &a->symtabs_cap, a->nsymtabs + 1, sizeof(*a->symtabs));
	a->symtabs[a->nsymtabs++] = c;
}

void aggi_free_symtabs(struct agg *a)
{
	for (size_t i = 0; i < a->nsymtabs; i++)
		free((void *)a->symtabs[i].u.symtab.funcs);
	free(a->symtabs);
}

size_t agg_nsymtabs(const struct agg *a)
{
	return a->nsymtabs;
}

const struct probe_msg *agg_symtab(const struct agg *a, size_t i)
{
	return i < a->nsymtabs ? &a->symtabs[i] : NULL;
}
