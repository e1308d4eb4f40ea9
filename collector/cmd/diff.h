/*
 * diff.h - the `probe diff` command.
 *
 * Contract: cmd_diff(argc, argv) gets the arguments after "diff" (argv[0]
 * is "diff") and returns the exit status: 0 done, 1 a recording could not
 * be read or the output written (one "probe:" line says why), 2 usage.
 */
#ifndef PROBE_DIFF_H
#define PROBE_DIFF_H

struct cmd_spec;

int cmd_diff(int argc, char **argv);
/* Its options and help (cmdopt.h): -h prints them, probe help shows them. */
extern const struct cmd_spec diff_spec;

#endif
