/*
 * report.h - the `probe report` command.
 *
 * Contract: cmd_report(argc, argv) gets the arguments after "report" (argv[0]
 * is "report") and returns the exit status: 0 done, 1 the recording could
 * not be read (one "probe: FILE: ..." line says why), 2 usage error.  A
 * recording cut short in its last frame is reported with a warning.
 */
#ifndef PROBE_REPORT_H
#define PROBE_REPORT_H

struct cmd_spec;

int cmd_report(int argc, char **argv);
/* Its options and help (cmdopt.h): -h prints them, probe help shows them. */
extern const struct cmd_spec report_spec;

#endif
