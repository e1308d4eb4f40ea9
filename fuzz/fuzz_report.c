/*
 * fuzz_report - libFuzzer target: a recording, whole, through probe report
 * (the decoder, the damaged-recording reader, aggregation, symbolization of
 * whatever the MAPs name, and the text, tree and folded writers).
 *
 * Built and run by `make fuzz` (clang, -fsanitize=fuzzer,address,undefined);
 * the seed corpus is real recordings (scripts/fuzz-corpus).  Output goes to
 * /dev/null; messages too.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "report.h"

static char path[64];
static int nul = -1;

/* Our messages go away while the input runs; libFuzzer's own stay. */
static int quiet(void)
{
	fflush(stderr);
	int saved = dup(2);
	if (nul >= 0)
		dup2(nul, 2);
	return saved;
}

static void loud(int saved)
{
	fflush(stderr);
	if (saved >= 0) {
		dup2(saved, 2);
		close(saved);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(path, sizeof(path), "/tmp/fuzz-report-%ld.probe", (long)getpid());
	nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
	dup2(nul, 1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *formats[] = { "text", "tree", "folded" };
	FILE *f = fopen(path, "wb");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	char *argv[] = { "report", "--format", (char *)formats[size % 3], path, NULL };
	int saved = quiet();
	cmd_report(4, argv);
	fflush(stdout);
	loud(saved);
	unlink(path);
	return 0;
}
