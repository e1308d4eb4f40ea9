/*
 * main.c - the probe command: dispatch to its subcommands.
 *
 *   probe record ...   (record.h)     probe report ...   (report.h)
 *   probe top ...      (top.h)        probe diff ...     (diff.h)
 *   probe list ...     (list.h)        probe agent ...    (agent.h)
 *   probe -h | --help | help [CMD] | --version
 * Usage errors exit 2 with one "probe:" line.
 *
 * The general usage is made of each command's own synopsis (the lines of
 * its -h up to the first blank one), so that the two cannot disagree;
 * probe help CMD prints what probe CMD -h prints.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "diff.h"
#include "list.h"
#include "record.h"
#include "report.h"
#include "top.h"
#include "spawn.h"
#include "util.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	void (*usage)(FILE *out);
};

static const struct command commands[] = {
	{ "record", cmd_record, record_usage },
	{ "report", cmd_report, report_usage },
	{ "top", cmd_top, top_usage },
	{ "diff", cmd_diff, diff_usage },
	{ "list", cmd_list, list_usage },
	{ "agent", cmd_agent, agent_usage },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct command *command_named(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/*
 * The synopsis of one command, from its own help: every line before the
 * first blank one, the first's "usage: " made "       " unless first.
 */
static void synopsis(FILE *out, const struct command *c, int first)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	if (!m) {
		fprintf(out, "       probe %s ...\n", c->name);
		return;
	}
	c->usage(m);
	fclose(m);
	char *end = strstr(text, "\n\n");
	if (end)
		end[1] = '\0';
	if (!first && strncmp(text, "usage: ", 7) == 0)
		memcpy(text, "       ", 7);
	fputs(text, out);
	free(text);
}

static void usage(FILE *out)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		synopsis(out, &commands[i], i == 0);
	fprintf(out,
		"       probe help [CMD] | -h | --help | --version\n"
		"\n"
		"A sampling profiler: probe record runs a program with libprobe.so\n"
		"preloaded and saves where its threads spend their time; probe report\n"
		"shows it (flat profile, call tree, or folded stacks for flame graphs);\n"
		"probe top watches a running program's profile live; probe diff shows\n"
		"what changed between two recordings; probe list shows the events\n"
		"this machine can sample; probe agent profiles every program started\n"
		"with LD_PRELOAD=libprobe.so, for Pyroscope, Parca or go tool pprof.\n"
		"'probe help CMD' (the same as 'probe CMD -h') says what each option does.\n");
}

/* probe help [CMD]: CMD's own help, or the general one. */
static int help(int argc, char **argv)
{
	if (argc < 3) {
		usage(stdout);
		return 0;
	}
	const struct command *c = command_named(argv[2]);
	if (!c) {
		probe_err("help: unknown command '%s'; the commands are record, report, "
			  "top, diff, list and agent", argv[2]);
		return 2;
	}
	c->usage(stdout);
	return 0;
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
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(cmd, "help") == 0)
		return help(argc, argv);
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-v") == 0) {
		printf("probe %s\n", PROBE_VERSION);
		return 0;
	}
	const struct command *c = command_named(cmd);
	if (c)
		return c->run(argc - 1, argv + 1);
	probe_err("unknown command '%s'; try 'probe --help'", cmd);
	return 2;
}
