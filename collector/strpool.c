/* strpool.c - see strpool.h. */
#include "strpool.h"

#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "util.h"

struct str_ent {
	UT_hash_handle hh;
	char s[];
};

struct strpool {
	struct str_ent *tab;
};

struct strpool *strpool_new(void)
{
	return xcalloc(1, sizeof(struct strpool));
}

void strpool_free(struct strpool *p)
{
	if (!p)
		return;
	struct str_ent *e, *t;
	HASH_ITER(hh, p->tab, e, t) {
		HASH_DEL(p->tab, e);
		free(e);
	}
	free(p);
}

const char *strpool_intern(struct strpool *p, const char *s)
{
	size_t n = strlen(s);
	struct str_ent *e;
	HASH_FIND(hh, p->tab, s, n, e);
	if (e)
		return e->s;
	e = xmalloc(sizeof(*e) + n + 1);
	memset(&e->hh, 0, sizeof(e->hh));
	memcpy(e->s, s, n + 1);
	HASH_ADD_KEYPTR(hh, p->tab, e->s, n, e);
	return e->s;
}
