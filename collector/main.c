/*
 * main.c - the probe command: dispatch to its subcommands.
 *
 *   probe record ...   (record.h)     probe report ...   (report.h)
 *   probe top ...      (top.h)        probe diff ...     (diff.h)
 *   probe list ...     (list.h)        probe agent ...    (agent.h)
 *   probe annotate ... (annotate.h)
 *   probe -h | --help | help [CMD] | --version
 * Usage errors exit 2 with one "probe:" line.
 *
 * The general usage is made of each command's own synopsis (the lines of
 * its -h up to the first blank one), so that the two cannot disagree;
 * probe help CMD shows CMD's man page on a terminal (made from its -h by
 * scripts/gen-man), as perf help does; elsewhere, or with no page or no
 * man, it prints what probe CMD -h prints.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/agent.h"
#include "cmd/annotate.h"
#include "cmd/diff.h"
#include "cmd/list.h"
#include "cmd/record.h"
#include "cmd/report.h"
#include "cmd/top.h"
#include "cmdopt.h"
#include "session/spawn.h"
#include "util.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const struct cmd_spec *spec;    /* its options and help (cmdopt.h) */
};

static const struct command commands[] = {
	{ "record", cmd_record, &record_spec },
	{ "report", cmd_report, &report_spec },
	{ "annotate", cmd_annotate, &annotate_spec },
	{ "top", cmd_top, &top_spec },
	{ "diff", cmd_diff, &diff_spec },
	{ "list", cmd_list, &list_spec },
	{ "agent", cmd_agent, &agent_spec },
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
	cmdopt_usage(m, c->spec);
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
		"probe annotate shows the instructions and source lines of its hottest\n"
		"functions, each with its share; probe top watches a running program's\n"
		"profile live; probe diff shows what changed between two recordings;\n"
		"probe list shows the events this machine can sample; probe agent\n"
		"profiles every program started with LD_PRELOAD=libprobe.so, for\n"
		"Pyroscope, Parca or go tool pprof.  'probe help CMD' shows CMD's manual\n"
		"page (probe-CMD(1)); 'probe CMD -h' says what each of its options does.\n");
}

/*
 * page's man page (probe-record.1), shown by man -l: 0, or -1 when stdout
 * is not a terminal, no page is found beside the binary (the build tree's
 * man/, or ../share/man/man1 where installed), or man cannot run.
 */
static int show_man(const char *page)
{
	char exe[PATH_MAX], path[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (!isatty(STDOUT_FILENO) || n <= 0)
		return -1;
	exe[n] = 0;
	*strrchr(exe, '/') = 0;
	static const char *const dirs[] = { "man", "../share/man/man1" };
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		snprintf(path, sizeof path, "%s/%s/%s.1", exe, dirs[i], page);
		if (access(path, R_OK) != 0)
			continue;
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			execlp("man", "man", "-l", path, (char *)NULL);
			_exit(127);
		}
		int st;
		if (pid < 0 || waitpid(pid, &st, 0) < 0)
			return -1;
		return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
	}
	return -1;
}

/* probe help [CMD]: CMD's own help, or the general one. */
static int help(int argc, char **argv)
{
	if (argc < 3) {
		if (show_man("probe") < 0)
			usage(stdout);
		return 0;
	}
	const struct command *c = command_named(argv[2]);
	if (!c) {
		probe_err("help: unknown command '%s'; the commands are record, report, "
			  "top, diff, list and agent", argv[2]);
		return 2;
	}
	char page[64];
	snprintf(page, sizeof page, "probe-%s", c->name);
	if (show_man(page) < 0)
		cmdopt_usage(stdout, c->spec);
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
