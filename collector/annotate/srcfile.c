/* srcfile.c - see srcfile.h. */
#include "annotate/srcfile.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hashtab.h"
#include "util.h"

struct srcfile {
	char *path;
	char *text;             /* the file, its newlines made NULs */
	char **lines;           /* lines[i]: line i + 1 */
	size_t nlines;
	int64_t mtime;
	UT_hash_handle hh;
};

struct srcfiles {
	struct srcfile *files;
};

struct srcfiles *srcfiles_new(void)
{
	return xcalloc(1, sizeof(struct srcfiles));
}

void srcfiles_free(struct srcfiles *s)
{
	if (!s)
		return;
	struct srcfile *f, *t;
	HASH_ITER(hh, s->files, f, t) {
		HASH_DEL(s->files, f);
		free(f->path);
		free(f->text);
		free(f->lines);
		free(f);
	}
	free(s);
}

/* The whole file, or NULL. */
static char *slurp(const char *path, size_t *n, int64_t *mtime)
{
	int fd = open_regular(path);
	struct stat st;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || st.st_size > (off_t)SRCFILE_MAX) {
		close(fd);
		return NULL;
	}
	*mtime = st.st_mtime;
	char *b = xmalloc((size_t)st.st_size + 1);
	size_t got = 0;
	for (;;) {
		ssize_t r = read(fd, b + got, (size_t)st.st_size - got);
		if (r <= 0)
			break;
		got += (size_t)r;
		if (got == (size_t)st.st_size)
			break;
	}
	close(fd);
	b[got] = 0;
	*n = got;
	return b;
}

static struct srcfile *get(struct srcfiles *s, const char *path)
{
	struct srcfile *f;
	HASH_FIND_STR(s->files, path, f);
	if (f)
		return f;
	f = xcalloc(1, sizeof(*f));
	f->path = xstrdup(path);
	size_t n = 0, cap = 0;
	f->text = slurp(path, &n, &f->mtime);
	for (size_t i = 0; f->text && i < n;) {
		char *nl = memchr(f->text + i, '\n', n - i);
		size_t end = nl ? (size_t)(nl - f->text) : n;
		f->text[end] = 0;
		if (end > i && f->text[end - 1] == '\r')
			f->text[end - 1] = 0;
		f->lines = xgrow(f->lines, &cap, f->nlines + 1, sizeof(*f->lines));
		f->lines[f->nlines++] = f->text + i;
		i = end + 1;
	}
	HASH_ADD_KEYPTR(hh, s->files, f->path, strlen(f->path), f);
	return f;
}

const char *srcfile_line(struct srcfiles *s, const char *path, unsigned n)
{
	if (!path || n == 0)
		return NULL;
	struct srcfile *f = get(s, path);
	return n <= f->nlines ? f->lines[n - 1] : NULL;
}

int srcfile_newer(struct srcfiles *s, const char *path, int64_t when)
{
	struct srcfile *f = path ? get(s, path) : NULL;
	return f && f->text && when && f->mtime > when;
}
