/*
 * annotate.h - the `probe annotate` command.
 *
 * Contract: cmd_annotate(argc, argv) gets the arguments after "annotate"
 * (argv[0] is "annotate") and returns the exit status: 0 shown, 1 the
 * recording could not be read or holds no function asked for (one
 * "probe:" line says which are sampled), 2 usage error.
 */
#ifndef PROBE_CMD_ANNOTATE_H
#define PROBE_CMD_ANNOTATE_H

struct cmd_spec;

int cmd_annotate(int argc, char **argv);
extern const struct cmd_spec annotate_spec;

#endif
