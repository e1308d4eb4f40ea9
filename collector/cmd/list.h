/*
 * list.h - the `probe list` command.
 *
 * Contract: cmd_list(argc, argv) gets the arguments after "list" (argv[0]
 * is "list"); it prints the events on stdout, each marked available or
 * not and why, and returns 0, or 2 after a usage message.
 */
#ifndef PROBE_LIST_H
#define PROBE_LIST_H

#include <stdio.h>

int cmd_list(int argc, char **argv);
void list_usage(FILE *out);

#endif
