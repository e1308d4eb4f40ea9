/*
 * fuzz_report - libFuzzer target: a recording, whole, through probe report
 * (the decoder, the damaged-recording reader, aggregation, symbolization of
 * whatever the MAPs name, and every output format, written to /dev/null).
 *
 * Built and run by `make fuzz` (clang, -fsanitize=fuzzer,address,undefined);
 * the seed corpus is real recordings (scripts/fuzz-corpus).  The report
 * goes to /dev/null, and our messages too.
 *
 * Separate debug files are not read (PROBE_DEBUG_ROOT names no directory):
 * libc's, zlib-compressed (libc6-dbg), took three quarters of each run,
 * 24 runs a second in all.  The objects themselves still are, and
 * fuzz_elf feeds hostile ones to the same symbolizer.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_io.h"
#include "cmd/report.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("PROBE_DEBUG_ROOT", "/nonexistent/probe-fuzz-debug", 0);
	fuzz_init("report", "probe");
	dup2(fuzz_nul, 1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *formats[] = { "text", "tree", "folded", "pprof", "svg",
					 "html", "speedscope", "perf-script" };
	if (fuzz_write(data, size) < 0)
		return 0;
	const char *fmt = formats[size % (sizeof(formats) / sizeof(formats[0]))];
	/* perf's options too, in turn: the header, --time, the filters, -g callee,
	 * an event of several, each event apart (--sort event). */
	static char *extra[][4] = {
		{ NULL },
		{ "--header-only", NULL },
		{ "--time", "0.001,", "--children", NULL },
		{ "--comms", "a,b", "--no-children", NULL },
		{ "--dsos", "libc.so.6", "-G", NULL },
		{ "--symbols", "main", "--pid", "1,2" },
		{ "--event", "page-faults", NULL },
		{ "--sort", "event,pid", NULL },
	};
	unsigned v = (unsigned)(size / 8 % (sizeof(extra) / sizeof(extra[0])));
	char *argv[16] = { "report", "--format", (char *)fmt, "-o", "/dev/null" };
	int argc = 5;
	for (unsigned i = 0; i < 4 && extra[v][i]; i++)
		argv[argc++] = extra[v][i];
	argv[argc++] = fuzz_path;
	argv[argc] = NULL;
	int saved = fuzz_quiet();
	cmd_report(argc, argv);
	fflush(stdout);
	fuzz_loud(saved);
	unlink(fuzz_path);
	return 0;
}
