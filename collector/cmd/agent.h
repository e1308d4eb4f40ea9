/*
 * agent.h - the `probe agent` command: a long-lived collector for every
 * program one user (or, run by root, anyone on the host) starts with
 * LD_PRELOAD=libprobe.so, serving profiles for scrapers (--http) and
 * pushing them to a continuous-profiling backend (--push).
 *
 * Contract: cmd_agent(argc, argv) gets the arguments after "probe" (argv[0]
 * is "agent"); it runs until SIGTERM or SIGINT, sends its last window, and
 * returns 0; 2 for a usage error, 1 when it could not start.
 */
#ifndef PROBE_AGENT_H
#define PROBE_AGENT_H

struct cmd_spec;

int cmd_agent(int argc, char **argv);
/* Its options and help (cmdopt.h): -h prints them, probe help shows them. */
extern const struct cmd_spec agent_spec;

#endif
