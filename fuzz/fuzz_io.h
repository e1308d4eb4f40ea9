/*
 * fuzz_io.h - what both fuzz targets need around one input: a file of its
 * own to hold it (probe reads files), and stderr silenced while it runs
 * (our messages; libFuzzer's own output stays).
 */
#ifndef PROBE_FUZZ_IO_H
#define PROBE_FUZZ_IO_H

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static char fuzz_path[64];
static int fuzz_nul = -1;

/* Once: the input's file is /tmp/fuzz-NAME-PID.SUFFIX. */
static void fuzz_init(const char *name, const char *suffix)
{
	snprintf(fuzz_path, sizeof(fuzz_path), "/tmp/fuzz-%s-%ld.%s", name,
		 (long)getpid(), suffix);
	fuzz_nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
}

/* The input into its file; 0, or -1 when it cannot be written. */
static int fuzz_write(const uint8_t *data, size_t size)
{
	FILE *f = fopen(fuzz_path, "wb");
	if (!f)
		return -1;
	fwrite(data, 1, size, f);
	fclose(f);
	return 0;
}

static int fuzz_quiet(void)
{
	fflush(stderr);
	int saved = dup(2);
	if (fuzz_nul >= 0)
		dup2(fuzz_nul, 2);
	return saved;
}

static void fuzz_loud(int saved)
{
	fflush(stderr);
	if (saved >= 0) {
		dup2(saved, 2);
		close(saved);
	}
}

#endif
