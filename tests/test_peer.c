/*
 * test_peer - peer_pid_ok(), the check that a HELLO's pid is its sender's
 * (collector/ingest/peer.c), against the kernel as it is:
 *   - this process, under its own pid and under another's;
 *   - a child gone and reaped, under its pid and under another's;
 *   - children read while they are being reaped: the kernel prints
 *     "NSpid: 0" for a task it is releasing, which must not read as a lie
 *     (a HELLO from gdb's short-lived fork child was refused so once,
 *     tests/95).  A reaper thread waits for each child while this thread
 *     asks about it in a loop; before the mend, about 1 child in 6 read 0.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ingest/peer.h"
#include "tap.h"

#define CHILDREN 2000

static pid_t child;
static int reaped;

static void *reaper(void *arg)
{
	(void)arg;
	for (int i = 0; i < CHILDREN; i++) {
		while (!__atomic_load_n(&child, __ATOMIC_ACQUIRE))
			;
		waitpid(child, NULL, 0);
		__atomic_store_n(&child, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&reaped, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static int ask(pid_t pid, uint32_t wire)
{
	struct peer p;

	memset(&p, 0, sizeof p);
	p.pid = pid;
	return peer_pid_ok(&p, wire);
}

/* Children asked about while they die: how many read as liars. */
static int dying_children(int *asked)
{
	pthread_t t;
	int lies = 0;

	*asked = 0;
	if (pthread_create(&t, NULL, reaper, NULL))
		return -1;
	for (int i = 0; i < CHILDREN; i++) {
		pid_t c = fork();
		if (c == 0)
			_exit(0);
		__atomic_store_n(&reaped, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&child, c, __ATOMIC_RELEASE);
		while (!__atomic_load_n(&reaped, __ATOMIC_ACQUIRE)) {
			lies += ask(c, (uint32_t)c) == 0;
			++*asked;
		}
	}
	pthread_join(t, NULL);
	return lies;
}

int main(void)
{
	pid_t me = getpid(), gone;
	int asked, lies;

	plan(5);
	is_int(ask(me, (uint32_t)me), 1, "this process under its own pid: believed");
	is_int(ask(me, (uint32_t)me + 1), 0, "this process claiming another pid: refused");
	gone = fork();
	if (gone == 0)
		_exit(0);
	waitpid(gone, NULL, 0);
	is_int(ask(gone, (uint32_t)gone), 1, "a child gone and reaped, under its own pid: believed");
	is_int(ask(gone, (uint32_t)gone + 1), -1, "a child gone and reaped, under another pid: cannot be told");
	lies = dying_children(&asked);
	ok(lies == 0, "%d children asked about %d times while they were reaped: %d read as "
	   "another process (want 0)", CHILDREN, asked, lies);
	return done();
}
