/*
 * record.h - the `probe record` command.
 *
 * Contract: cmd_record(argc, argv) gets the arguments after "probe"
 * (argv[0] is "record"), runs the command under libprobe.so, saves every
 * valid frame from its processes to the output file and returns the exit
 * status: the command's (128 + N if signal N killed it), 127/126 if it could
 * not be started, 2 for a usage error, 1 when probe itself failed before the
 * command ran (or the file could not be written and the command succeeded).
 */
#ifndef PROBE_RECORD_H
#define PROBE_RECORD_H

struct cmd_spec;

int cmd_record(int argc, char **argv);
/* Its options and help (cmdopt.h): -h prints them, probe help shows them. */
extern const struct cmd_spec record_spec;

#endif
