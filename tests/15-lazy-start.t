#!/bin/sh
# A process starts talking to the collector at its first need, not at its
# start (preload/lazy.c): one that ends before its first sample makes no
# arena and sends no MAPs, yet is listed with its parent and status; one
# that samples starts in its handler, at its first sample, and its stacks
# are whole; a collector that is not there is said once either way.
. "$(dirname "$0")/lib.sh"
command -v strace >/dev/null 2>&1 || skip_all "no strace to see which system calls a process makes"
plan 14

# A process that never samples: no memfd_create (the arena), one connect
# (its last word), under probe record; with PROBE_LAZY=0, the arena.
calls() {       # calls FILE: memfd_create and connect calls strace saw, "M C"
	echo "$(grep -c 'memfd_create(' "$1") $(grep -c 'connect(' "$1")"
}
"$PROBE" record -q -o "$T/t.probe" -- strace -f -qq -e trace=memfd_create,connect \
	-o "$T/st" /bin/true 2>"$T/err"
is "$(calls "$T/st")" "0 1" "/bin/true under probe record: no arena made, one connection (memfd_create, connect: $(calls "$T/st"))"
PROBE_LAZY=0 "$PROBE" record -q -o "$T/t0.probe" -- strace -f -qq -e trace=memfd_create,connect \
	-o "$T/st0" /bin/true 2>"$T/err"
is "$(calls "$T/st0")" "1 1" "PROBE_LAZY=0: its arena at once (memfd_create, connect: $(calls "$T/st0"))"

# Listed all the same, each with its parent and how it ended.
script='/bin/true; (exit 4); sh -c "kill -SEGV \$\$"; exit 3'
"$PROBE" record -o "$T/s.probe" -- sh -c "$script" >/dev/null 2>"$T/err"
is "$?" 3 "sh -c '...; exit 3' under probe record: exit 3"
# Each process's summary line, less its pids and what it was exec'd
# from: a fork child that exec'd before its first sample never spoke.
lines() {       # lines FILE
	sed -n 's/^probe:   pid [0-9]* (parent [0-9]*) //p' "$1" |
		sed "s/ \[exec'd from [^]]*\]//" | sort
}
lines "$T/err" >"$T/lazy"
PROBE_LAZY=0 "$PROBE" record -o "$T/s0.probe" -- sh -c "$script" >/dev/null 2>"$T/err0"
lines "$T/err0" >"$T/eager"
diag "$(cat "$T/lazy")"
grep -q '^true: /bin/true: 0 samples, 1 thread, exit 0$' "$T/lazy" &&
	grep -q ': 0 samples, 1 thread, exit 4$' "$T/lazy" &&
	grep -q '^sh: sh -c kill -SEGV \$\$: 0 samples, 1 thread, killed by SIGSEGV$' "$T/lazy" &&
	[ "$(wc -l <"$T/lazy")" -eq 4 ]
ok $? "four processes that never sampled, listed with their status: exit 0, exit 4, SIGSEGV, exit 3"
cmp -s "$T/lazy" "$T/eager"
ok $? "the same list as with PROBE_LAZY=0"
# Their parents: every child's parent is the shell probe record ran.
top=$(sed -n 's/^probe:   pid \([0-9]*\) (parent [0-9]*) sh: sh -c \/bin\/true.*exit 3$/\1/p' "$T/err")
[ -n "$top" ] && [ "$(grep -c "^probe:   pid [0-9]* (parent $top) " "$T/err")" -eq 3 ]
ok $? "three children of the shell (pid ${top:-none}), each with its parent"
"$PROBE" report "$T/s.probe" >"$T/rep" 2>&1
grep -q '^# event: cpu-clock.* 0 samples, 4 processes, 4 threads' "$T/rep"
ok $? "the recording reads: $(grep '^# event:' "$T/rep")"

# A program that samples starts at its first sample: whole stacks, the
# leaves' shares as gt_leaf's calls make them.
"$PROBE" record -q -F 999 -o "$T/leaf.probe" -- "$GT/gt_leaf" 600 >/dev/null 2>"$T/err"
"$PROBE" report "$T/leaf.probe" >"$T/leaf" 2>&1
leaf_checks "$T/leaf" "started at the first sample: "
awk '!/^#/ && $4 == "main" && $2 == "100.00%" { f = 1 } END { exit !f }' "$T/leaf"
ok $? "every sample's stack reaches main: $(grep ' main ' "$T/leaf" | head -n 1)"

# A change of user starts it first (the collector takes its own user's
# connections); the program's errno is its own call's, not our start's.
if command -v gcc >/dev/null 2>&1; then
	cat >"$T/su.c" <<'EOF2'
#include <errno.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void)
{
	int st;
	if (fork() == 0) {
		errno = EDOM;
		int r = setresuid(-1, -1, -1);
		printf("%d %d\n", r, errno == EDOM);
		return 0;
	}
	return wait(&st) < 0;
}
EOF2
	gcc -O1 -o "$T/su" "$T/su.c" 2>"$T/gcc.err"
	"$PROBE" record -q -o "$T/su.probe" -- strace -f -qq -e trace=memfd_create -o "$T/st-su" "$T/su" >"$T/su.out" 2>"$T/err"
	is "$(cat "$T/su.out")" "0 1" "setresuid in a fork child that never sampled: succeeds, errno left as it was (EDOM)"
	# su (strace's child: strace is the command) never samples and
	# makes none; its fork child makes one, at its setresuid.
	is "$(grep -c 'memfd_create(' "$T/st-su")" 1 "the fork child made its arena at setresuid, before the change of user"
else
	skip "no gcc"; skip "no gcc"
fi

# PROBE_SOCKET that no collector listens on: said once, by a process that
# never samples too (at its end); its status is its own.
PROBE_SOCKET="$T/nobody.sock" LD_PRELOAD="$LIBPROBE" sh -c 'exit 5' 2>"$T/err"
st=$?
[ "$st" -eq 5 ] && [ "$(grep -c "^probe: cannot connect to the collector at $T/nobody.sock (No such file or directory); not profiling$" "$T/err")" -eq 1 ] &&
	[ "$(wc -l <"$T/err")" -eq 1 ]
ok $? "no collector, no sample: exit $st, one line: $(cat "$T/err")"
