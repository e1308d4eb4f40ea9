/*
 * list.h - the `probe list` command.
 *
 * Contract: cmd_list(argc, argv) gets the arguments after "list" (argv[0]
 * is "list"); it prints the events on stdout, each marked available or
 * not and why, and returns 0, or 2 after a usage message.
 */
#ifndef PROBE_LIST_H
#define PROBE_LIST_H

struct cmd_spec;

int cmd_list(int argc, char **argv);
/* Its options and help (cmdopt.h): -h prints them, probe help shows them. */
extern const struct cmd_spec list_spec;

#endif
