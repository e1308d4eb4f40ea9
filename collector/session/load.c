/*
 * load.c - a recording read back (recfile.h's reader, damage skipped and
 * said) into a finished aggregation (aggregate.h): load.h says what.
 */
#include "session/load.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session/recfile.h"
#include "util.h"

/* One frame of the recording into the tables. */
static void add_frame(void *a, struct probe_msg *m)
{
	agg_add(a, m);
}

/*
 * The whole stream of one file into a; 0, or -1 after a message.  Damage
 * is skipped and said once (recfile.h), in time linear in the file's size.
 */
static int read_frames(const char *file, int fd, struct agg *a)
{
	return recfile_read(file, fd, add_frame, a);
}

/* Once: what the memory bound left out, and how to see it. */
static void warn_dropped(const struct agg *a, const char *file, uint64_t memory_mib)
{
	static int said;
	char text[256];
	if (said || !agg_dropped_text(a, text, sizeof(text)))
		return;
	said = 1;
	char *f = printable_dup(file);
	probe_warn("%s: %s of %" PRIu64 " MiB (distinct stacks past it are not kept; "
		   "--max-memory MIB to change it)", f, text, memory_mib);
	free(f);
}

struct agg *recording_load(const char *file, int keep_samples, const char *event,
			   uint64_t memory_mib)
{
	int fd;
	if (strcmp(file, "-") == 0) {
		fd = 0;
	} else {
		/* O_NONBLOCK: a FIFO named by mistake must not hang the open. */
		fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0) {
			probe_err("%s: cannot open: %s", file, strerror(errno));
			return NULL;
		}
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
			probe_err("%s: is a directory, not a probe recording", file);
			close(fd);
			return NULL;
		}
		int fl = fcntl(fd, F_GETFL);
		if (fl >= 0)
			fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	}
	struct agg *a = agg_new();
	if (keep_samples)
		agg_keep_samples(a);
	agg_select_event(a, event);
	agg_set_limit(a, (size_t)(memory_mib << 20));
	int rc = read_frames(file, fd, a);
	if (fd != 0)
		close(fd);
	if (rc < 0) {
		agg_free(a);
		return NULL;
	}
	agg_finish(a);
	const struct agg_totals *t = agg_totals(a);
	if (t->frames_orphan)
		probe_warn("%s: %" PRIu64 " process%s sent frames before its HELLO; "
			   "shown as [pid N]", file, t->frames_orphan,
			   t->frames_orphan == 1 ? "" : "es");
	warn_dropped(a, file, memory_mib);
	return a;
}

