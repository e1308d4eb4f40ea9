/* recfile.c - see recfile.h. */
#include "recfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "probe/wire.h"
#include "util.h"

#define RECFILE_BUF (1u << 20)

/* What lstat found at the path, for a message. */
static const char *kind_of(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISCHR(m) || S_ISBLK(m) ? "a device" :
	       S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/*
 * What is at path now (a file, a symbolic link: whatever it points to, and
 * whoever made it) goes aside to path.old, as perf does; a device, FIFO,
 * socket or directory is refused.  The new file is created with O_EXCL and
 * O_NOFOLLOW: nothing planted at the path between the two is written
 * through.
 */
int recfile_open(struct recfile *f, const char *path)
{
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
			probe_err("%s is %s, not a file a recording can go to; give -o a "
				  "file name", path, kind_of(st.st_mode));
			return -1;
		}
		char *old = xasprintf("%s.old", path);
		if (rename(path, old) < 0) {
			probe_err("cannot rename %s to %s: %s", path, old, strerror(errno));
			free(old);
			return -1;
		}
		free(old);
	}
	f->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
		     0600);
	if (f->fd < 0) {
		probe_err("cannot create %s: %s%s", path, strerror(errno),
			  errno == EEXIST || errno == ELOOP ?
			  " (something was put there meanwhile; not written through)" : "");
		return -1;
	}
	f->path = xstrdup(path);
	f->regular = fstat(f->fd, &st) == 0 && S_ISREG(st.st_mode);
	f->cap = RECFILE_BUF;
	f->buf = xmalloc(f->cap);
	struct probe_wbuf w;
	probe_wbuf_init(&w, f->buf, f->cap);
	probe_put_file_header(&w, PROBE_FILE_VERSION);
	f->len = w.len;
	f->bytes = w.len;
	return 0;
}

static void write_all(struct recfile *f, const uint8_t *p, size_t n)
{
	while (n && !f->err) {
		ssize_t r = write(f->fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			f->err = r < 0 ? errno : EIO;
			return;
		}
		p += r;
		n -= (size_t)r;
		f->written += (uint64_t)r;
	}
}

static void flush(struct recfile *f)
{
	write_all(f, f->buf, f->len);
	f->len = 0;
}

void recfile_flush(struct recfile *f)
{
	if (f->fd >= 0 && f->len)
		flush(f);
}

static void recfile_write(struct recfile *f, const void *data, size_t n)
{
	if (f->err || f->fd < 0)
		return;
	if (n > f->cap - f->len)
		flush(f);
	if (n >= f->cap)
		write_all(f, data, n);
	else {
		memcpy(f->buf + f->len, data, n);
		f->len += n;
	}
	if (!f->err)
		f->bytes += n;
}

void recfile_frame(struct recfile *f, const void *frame, size_t n)
{
	uint8_t crc[PROBE_FILE_CRC];
	uLong c = crc32(0L, frame, (uInt)n);
	for (unsigned i = 0; i < PROBE_FILE_CRC; i++)
		crc[i] = (uint8_t)(c >> (8 * i));
	recfile_write(f, frame, n);
	recfile_write(f, crc, sizeof(crc));
}


int recfile_close(struct recfile *f)
{
	if (f->fd < 0)
		return -1;
	flush(f);
	if (close(f->fd) < 0 && !f->err)
		f->err = errno;
	f->fd = -1;
	free(f->buf);
	f->buf = NULL;
	int rc = 0;
	/* What the summary reports: what is in the file, not what was meant to be. */
	f->bytes = f->written;
	if (f->err == EFBIG) {
		probe_err("writing %s stopped at the file size limit (ulimit -f) after %llu "
			  "bytes; the recording holds what was written before (raise the "
			  "limit, or lower -F)", f->path, (unsigned long long)f->written);
		rc = -1;
	} else if (f->err) {
		probe_err("writing %s failed: %s; the recording is incomplete",
			  f->path, strerror(f->err));
		rc = -1;
	}
	free(f->path);
	f->path = NULL;
	return rc;
}

void recfile_discard(struct recfile *f)
{
	if (f->fd < 0)
		return;
	close(f->fd);
	f->fd = -1;
	if (f->regular)
		unlink(f->path);
	free(f->buf);
	f->buf = NULL;
	free(f->path);
	f->path = NULL;
}

/* path as the shell would take it back: bare when it is plain, else quoted. */
static char *shell_word(const char *path)
{
	size_t n = strlen(path), plain = strspn(path, "abcdefghijklmnopqrstuvwxyz"
		"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-+=:,@%");
	if (n && plain == n)
		return xstrdup(path);
	char *q = xmalloc(4 * n + 3), *o = q;
	*o++ = '\'';
	for (const char *p = path; *p; p++) {
		if (*p == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else
			*o++ = *p;
	}
	*o++ = '\'';
	*o = '\0';
	return q;
}

void recfile_hint(const char *path)
{
	char *w = shell_word(path);
	char *p = printable_dup(w);
	probe_err("see it with: probe report %s; as a flame graph: probe report "
		  "--format svg -o %s.svg %s", p, p, p);
	free(p);
	free(w);
}
