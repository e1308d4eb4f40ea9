/*
 * top.h - the `probe top` command: a live view of a running program's
 * profile (ncurses on a terminal, plain-text snapshots otherwise).
 *
 * Contract: cmd_top(argc, argv) gets the arguments after "probe" (argv[0] is
 * "top").  With "-- CMD [ARG...]" it runs CMD under libprobe.so (as probe
 * record does) and returns CMD's exit status once the view is left (127/126
 * if CMD could not be started); without CMD it listens on the per-user
 * socket DIR/top.sock (usock.h) for any program started with
 * PROBE_SOCKET=DIR/top.sock LD_PRELOAD=libprobe.so and returns 0 when the
 * user quits (q, Ctrl-C, SIGTERM).  2 for a usage error, 1 when probe itself
 * failed.
 */
#ifndef PROBE_TOP_H
#define PROBE_TOP_H

struct cmd_spec;

int cmd_top(int argc, char **argv);
/* Its options and help (cmdopt.h): -h prints them, probe help shows them. */
extern const struct cmd_spec top_spec;

#endif
