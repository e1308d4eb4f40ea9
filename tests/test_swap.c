/*
 * test_swap - a file named again after it was checked: the symbolizer
 * reads DWARF (symobj_srcframes) from the file it read names from, not
 * from whatever the path leads to by then (tests/04-swap.t).
 *
 *   test_swap MINE.so SECRET.so ADDR
 * MINE.so is copied to DIR/x and loaded with its build-id; then DIR/x is
 * made a symlink to SECRET.so (another build-id, another function at the
 * same place), as a user could do to a path of their own between the
 * check and the open; the source lines asked for at ADDR must not come
 * from SECRET.so.
 */
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/symbols.h"
#include "tap.h"

static size_t build_id(const char *path, uint8_t *out)
{
	const void *b = NULL;
	size_t n = 0;
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	ssize_t got = e ? dwelf_elf_gnu_build_id(e, &b) : -1;
	if (got > 0 && got <= 64) {
		memcpy(out, b, (size_t)got);
		n = (size_t)got;
	}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return n;
}

static int copy(const char *from, const char *to)
{
	char buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	close(in);
	close(out);
	return in >= 0 && out >= 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	char dir[] = "/tmp/probe-swap.XXXXXX", x[64], y[64];
	uint8_t bid[64];
	uint64_t addr = strtoull(argv[3], NULL, 16);
	plan(4);
	if (!mkdtemp(dir))
		return 1;
	snprintf(x, sizeof x, "%s/x", dir);
	snprintf(y, sizeof y, "%s/y", dir);
	ok(copy(argv[1], x) == 0, "MINE.so copied to %s", x);
	size_t n = build_id(x, bid);
	struct symcache *c = symcache_new();
	struct symobj *o = symcache_get(c, x, bid, n);
	const char *name = symobj_lookup(o, addr);
	ok(name && !strcmp(name, "my_fn"), "named from the file checked: %s", name ? name : "-");
	/* The path now leads elsewhere. */
	if (symlink(argv[2], y) < 0 || rename(y, x) < 0)
		return 1;
	struct src_frame f[8];
	size_t k = symobj_srcframes(o, addr, f, 8);
	int leaked = 0;
	for (size_t i = 0; i < k; i++) {
		diag("frame %zu: %s at %s:%u", i, f[i].name ? f[i].name : "-",
		     f[i].file ? f[i].file : "-", f[i].line);
		leaked |= (f[i].name && strstr(f[i].name, "TOPSECRET")) ||
			  (f[i].file && strstr(f[i].file, "secret"));
	}
	ok(!leaked, "no source line from the file the path leads to afterwards");
	ok(k == 0, "and none at all: the file read first is not there any more (%zu)", k);
	symcache_free(c);
	unlink(x);
	rmdir(dir);
	return done();
}
