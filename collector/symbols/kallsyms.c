/* kallsyms.c - see kallsyms.h. */
#include "symbols/kallsyms.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct ksym {
	uint64_t addr;
	char *name;
	const char *module;     /* NULL: the kernel; else an entry of mods */
};

struct kallsyms {
	struct ksym *syms;
	size_t n;
	char **mods;
	size_t nmods;
};

/* Far past the last symbol is no symbol's (the end of the kernel's text). */
#define KSYM_LAST_SPAN (1u << 20)

static int by_addr(const void *x, const void *y)
{
	const struct ksym *a = x, *b = y;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static const char *module_of(struct kallsyms *k, const char *m)
{
	for (size_t i = k->nmods; i > 0; i--)     /* the same as the last, mostly */
		if (strcmp(k->mods[i - 1], m) == 0)
			return k->mods[i - 1];
	k->mods = xrealloc(k->mods, (k->nmods + 1) * sizeof(*k->mods));
	k->mods[k->nmods] = xstrdup(m);
	return k->mods[k->nmods++];
}

struct kallsyms *kallsyms_load(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	struct kallsyms *k = xcalloc(1, sizeof(*k));
	size_t cap = 0;
	int nonzero = 0;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		char *end, *name, *mod;
		uint64_t addr = strtoull(line, &end, 16);
		if (end == line || end[0] != ' ' || !strchr("tTwW", end[1]) || end[2] != ' ')
			continue;
		name = end + 3;
		name[strcspn(name, "\n")] = 0;
		mod = strchr(name, '\t');
		if (mod) {
			*mod++ = 0;
			if (*mod == '[')
				mod++;
			mod[strcspn(mod, "]")] = 0;
		}
		if (!*name)
			continue;
		nonzero |= addr != 0;
		if (k->n == cap) {
			cap = cap ? 2 * cap : 65536;
			k->syms = xrealloc(k->syms, cap * sizeof(*k->syms));
		}
		k->syms[k->n++] = (struct ksym){ addr, xstrdup(name),
						 mod && *mod ? module_of(k, mod) : NULL };
	}
	fclose(f);
	if (!nonzero) {         /* kptr_restrict: every address reads 0 */
		kallsyms_free(k);
		return NULL;
	}
	qsort(k->syms, k->n, sizeof(*k->syms), by_addr);
	return k;
}

const char *kallsyms_lookup(const struct kallsyms *k, uint64_t addr,
			    const char **module)
{
	uint64_t start, end;
	return kallsyms_lookup_range(k, addr, module, &start, &end);
}

const char *kallsyms_lookup_range(const struct kallsyms *k, uint64_t addr,
				  const char **module, uint64_t *start, uint64_t *end)
{
	size_t lo = 0, hi = k ? k->n : 0;
	*module = NULL;
	/* The last symbol at or below addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct ksym *s = &k->syms[lo - 1];
	if (s->addr == 0 || (lo == k->n && addr - s->addr > KSYM_LAST_SPAN))
		return NULL;
	*module = s->module;
	*start = s->addr;
	/* Up to the next symbol at a higher address (aliases share one). */
	*end = s->addr + KSYM_LAST_SPAN;
	for (size_t i = lo; i < k->n; i++)
		if (k->syms[i].addr > s->addr) {
			*end = k->syms[i].addr;
			break;
		}
	return s->name;
}

void kallsyms_free(struct kallsyms *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n; i++)
		free(k->syms[i].name);
	for (size_t i = 0; i < k->nmods; i++)
		free(k->mods[i]);
	free(k->syms);
	free(k->mods);
	free(k);
}
