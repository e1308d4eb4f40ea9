/*
 * gt_exit - every way out of a process, right after a known last burst of
 * work: what was sampled up to the end must reach the collector.
 *   gt_exit MODE [UNITS]
 * main_work for UNITS (default 200) units, then final_burst for UNITS/4,
 * then:
 *   exit      exit(3)
 *   _exit     _exit(4)
 *   _Exit     _Exit(5)
 *   return    return 6 from main
 *   pthread_exit   main calls pthread_exit; a thread does final_burst and
 *                  returns; the process ends (status 0) with the last thread
 *   handler   a SIGALRM handler calls exit(7)
 *   handler_exit   a SIGALRM handler calls _exit(8)
 *   segv      a NULL store: dies of SIGSEGV
 *   abort     abort(): dies of SIGABRT
 *   term      raise(SIGTERM) with the default action
 *   kill      SIGKILL to itself (nothing can flush: only what was sent)
 * Prints "start" first and "end" just before leaving (where it can).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "gt_work.h"

GT_KEEP static void main_work(long u) { GT_SPIN(u, 1.0); }
GT_KEEP static void final_burst(long u) { GT_SPIN(u, 2.0); }

static long units = 200;
static int *volatile nowhere;

static void *last_thread(void *arg)
{
	(void)arg;
	final_burst(units / 4);
	printf("end\n");
	return NULL;
}

static void on_alarm(int sig)
{
	(void)sig;
	final_burst(units / 4);
	printf("end\n");
	exit(7);
}

static void on_alarm_quick(int sig)
{
	(void)sig;
	final_burst(units / 4);
	printf("end\n");
	fflush(stdout);
	_exit(8);
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "exit";

	if (argc > 2)
		units = atol(argv[2]);
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("start\n");
	main_work(units);
	if (!strcmp(m, "pthread_exit")) {
		pthread_t t;
		pthread_create(&t, NULL, last_thread, NULL);
		pthread_exit(NULL);
	}
	if (!strcmp(m, "handler") || !strcmp(m, "handler_exit")) {
		struct itimerval it = { { 0, 0 }, { 0, 1000 } };
		signal(SIGALRM, !strcmp(m, "handler") ? on_alarm : on_alarm_quick);
		setitimer(ITIMER_REAL, &it, NULL);
		for (;;)
			main_work(1);
	}
	final_burst(units / 4);
	printf("end\n");
	if (!strcmp(m, "exit"))
		exit(3);
	if (!strcmp(m, "_exit"))
		_exit(4);
	if (!strcmp(m, "_Exit"))
		_Exit(5);
	if (!strcmp(m, "return"))
		return 6;
	if (!strcmp(m, "segv"))
		*nowhere = 1;
	if (!strcmp(m, "abort"))
		abort();
	if (!strcmp(m, "term"))
		raise(SIGTERM);
	if (!strcmp(m, "kill"))
		raise(SIGKILL);
	return 99;
}
