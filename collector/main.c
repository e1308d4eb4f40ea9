/*
 * main.c - the probe command: dispatch to its subcommands.
 *
 *   probe record ...   (record.h)     probe report ...   (report.h)
 *   probe top ...      (top.h)        probe diff ...     (diff.h)
 *   probe list ...     (list.h)        probe agent ...    (agent.h)
 *   probe -h | --help | --version
 * Usage errors exit 2 with one "probe:" line.
 */
#include <stdio.h>
#include <string.h>

#include "agent.h"
#include "diff.h"
#include "list.h"
#include "record.h"
#include "report.h"
#include "top.h"
#include "spawn.h"
#include "util.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: probe record [-o FILE] [-e EVENT] [-F HZ | -c PERIOD] [-D MSECS] [-m PAGES]\n"
		"                    [--no-inherit] [-g] [-q] -- CMD [ARG...]\n"
		"       probe report [-i] FILE [--format FORMAT] [-o OUT] [--tree] [--sort KEYS]\n"
		"                    [--lines] [--percent-limit PCT] [--no-demangle] [--no-inline]\n"
		"       probe top [-d SECS] [-n N] [-o FILE] [--exit] [-- CMD [ARG...]]\n"
		"       probe diff [BASE NEW] [--format text|folded] [-o OUT]\n"
		"       probe list [sw|hw|cache|pmu|tracepoint]\n"
		"       probe agent [--http ADDR:PORT] [--push URL] [--interval SECS] [--label K=V]\n"
		"       probe -h | --help | --version\n"
		"\n"
		"A sampling profiler: probe record runs a program with libprobe.so\n"
		"preloaded and saves where its threads spend their time; probe report\n"
		"shows it (flat profile, call tree, or folded stacks for flame graphs);\n"
		"probe top watches a running program's profile live; probe diff shows\n"
		"what changed between two recordings; probe list shows the events\n"
		"this machine can sample; probe agent profiles every program started\n"
		"with LD_PRELOAD=libprobe.so, for Pyroscope, Parca or go tool pprof.\n"
		"'probe record -h', 'probe report -h', 'probe top -h', 'probe diff -h' and 'probe agent -h'\n"
		"tell more.\n");
}

int main(int argc, char **argv)
{
	/*
	 * A file size limit (ulimit -f) must be a write error we report, not
	 * SIGXFSZ killing us with the program's status and the summary lost.
	 * The command gets the disposition it would have had (spawn.c).
	 */
	spawn_ignore_xfsz();
	if (argc < 2) {
		probe_err("no command given: use probe record, report, top, diff, list or agent; "
			  "try 'probe --help'");
		return 2;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-v") == 0) {
		printf("probe %s\n", PROBE_VERSION);
		return 0;
	}
	if (strcmp(cmd, "record") == 0)
		return cmd_record(argc - 1, argv + 1);
	if (strcmp(cmd, "report") == 0)
		return cmd_report(argc - 1, argv + 1);
	if (strcmp(cmd, "top") == 0)
		return cmd_top(argc - 1, argv + 1);
	if (strcmp(cmd, "diff") == 0)
		return cmd_diff(argc - 1, argv + 1);
	if (strcmp(cmd, "list") == 0)
		return cmd_list(argc - 1, argv + 1);
	if (strcmp(cmd, "agent") == 0)
		return cmd_agent(argc - 1, argv + 1);
	probe_err("unknown command '%s'; try 'probe --help'", cmd);
	return 2;
}
