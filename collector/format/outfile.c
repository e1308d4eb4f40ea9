/* outfile.c - see outfile.h. */
#include "format/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* The process's umask (mkostemp makes 0600; a report is as any new file). */
static mode_t umask_now(void)
{
	mode_t m = umask(022);
	umask(m);
	return m;
}

/* A file at path that is written in place: a FIFO, a device.  0 if none. */
static int in_place(const char *path, int *fd)
{
	struct stat st;
	if (stat(path, &st) < 0 || S_ISREG(st.st_mode))
		return 0;
	if (S_ISDIR(st.st_mode)) {
		probe_err("%s is a directory: give -o a file name", path);
		return -1;
	}
	*fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (*fd < 0) {
		probe_err("cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 1;
}

int outfile_open(struct outfile *o, const char *path)
{
	int fd = -1, r;
	memset(o, 0, sizeof(*o));
	if (!path || strcmp(path, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	o->path = path;
	if ((r = in_place(path, &fd)) < 0)
		return -1;
	if (r == 0) {
		o->tmp = xasprintf("%s.XXXXXX", path);
		fd = mkostemp(o->tmp, O_CLOEXEC);
		if (fd < 0) {
			probe_err("cannot create %s: %s", o->tmp, strerror(errno));
			free(o->tmp);
			o->tmp = NULL;
			return -1;
		}
		fchmod(fd, 0644 & ~umask_now());
	}
	if (!(o->f = fdopen(fd, "w"))) {
		probe_err("cannot write %s: %s", path, strerror(errno));
		close(fd);
		return outfile_close(o, -1);
	}
	return 0;
}

int outfile_close(struct outfile *o, int rc)
{
	const char *name = o->path ? o->path : "the report";
	int err = 0;
	if (o->f && (fflush(o->f) != 0 || ferror(o->f)))
		err = errno ? errno : EIO;
	if (o->f && o->f != stdout && fclose(o->f) != 0 && !err)
		err = errno;
	o->f = NULL;
	if (err)
		probe_err("cannot write %s: %s", name, strerror(err));
	if (o->tmp) {
		if (rc == 0 && !err && rename(o->tmp, o->path) < 0) {
			err = errno;
			probe_err("cannot rename %s to %s: %s", o->tmp, o->path,
				  strerror(err));
		}
		if (rc < 0 || err)
			unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
	return rc < 0 || err ? -1 : 0;
}
