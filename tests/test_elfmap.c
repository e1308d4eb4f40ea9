/*
 * test_elfmap - a mapping's load bias read from the file
 * (collector/outside/elfmap.c; tests/09-elfmap.t): for every executable
 * file mapping of this process (/proc/self/maps), elfmap_bias() gives what
 * the loader says (dl_iterate_phdr's dlpi_addr) for that object; a file
 * that is not ELF, and an offset no PT_LOAD holds, are refused.
 */
#include <link.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "outside/elfmap.h"
#include "tap.h"

struct obj {
	char path[PATH_MAX];
	uint64_t addr;
};
static struct obj objs[64];
static int nobjs;

static int each(struct dl_phdr_info *i, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (nobjs == 64)
		return 1;
	const char *n = i->dlpi_name;
	if (!n || !*n) {        /* the executable */
		ssize_t k = readlink("/proc/self/exe", objs[nobjs].path, PATH_MAX - 1);
		objs[nobjs].path[k > 0 ? k : 0] = 0;
	} else if (!realpath(n, objs[nobjs].path)) {
		return 0;
	}
	objs[nobjs++].addr = i->dlpi_addr;
	return 0;
}

int main(void)
{
	plan(3);
	dl_iterate_phdr(each, NULL);
	FILE *f = fopen("/proc/self/maps", "re");
	char line[PATH_MAX + 128];
	int seen = 0, right = 0;
	while (f && fgets(line, sizeof line, f)) {
		unsigned long long lo, hi, off;
		char perms[8], path[PATH_MAX] = "";
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &lo, &hi, perms, &off, path) < 4 ||
		    perms[2] != 'x' || path[0] != '/')
			continue;
		for (int i = 0; i < nobjs; i++) {
			if (strcmp(objs[i].path, path) != 0)
				continue;
			uint64_t bias = 0;
			int rc = elfmap_bias(path, lo, off, &bias);
			seen++;
			right += rc == 0 && bias == objs[i].addr;
			if (rc != 0 || bias != objs[i].addr)
				diag("%s at %llx+%llx: %d, bias %llx, loader %llx", path, lo, off, rc,
				     (unsigned long long)bias, (unsigned long long)objs[i].addr);
		}
	}
	if (f)
		fclose(f);
	ok(seen >= 2 && right == seen,
	   "%d of %d executable mappings (this program, libc, ...) have the loader's bias",
	   right, seen);
	uint64_t b;
	ok(elfmap_bias("/proc/self/maps", 0x1000, 0, &b) == -1, "a file that is not ELF: refused");
	ok(elfmap_bias("/proc/self/exe", 0x1000, 1ull << 40, &b) == -1,
	   "an offset past every PT_LOAD: refused");
	return done();
}
