#!/bin/sh
# The fault matrix under --alloc, as root and as nobody: the program never
# notices that its allocator is interposed and sampled.  Each case runs
# bare and under probe record --alloc=4K (a sample about every 4 KiB: the
# sampled path taken often, where the default 512 KiB would take it
# rarely) and compares stdout, stderr and the exit status (fault.sh):
# children that fork, exec, vfork, posix_spawn and system(); a pipeline of
# the shell's; signal handlers (alarms, EINTR, a handler that exits, a
# SIGSEGV that recovers, blocked masks); the ways out (exit, exit in a
# handler, a crash, the last thread's pthread_exit); frees in a signal
# handler; C++ new and delete on threads; dlopen and dlclose in a loop
# (the loader allocates); a program that preloads jemalloc.  Then, for
# each user, that what was recorded holds allocation samples: no case
# went unprofiled without a word.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault.sh"
n=0
for u in $USERS; do n=$((n + 19)); done
plan $n

PR_OPTS="--alloc=4K"
P=$GT/gt_proc
S=$GT/gt_signals
JE=$(ls /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 2>/dev/null)
for u in $USERS; do
	compare "fork" "$u" "$P" fork 60
	compare "exec" "$u" "$P" exec 60 "$GT/gt_alloc" 8
	compare "vfork" "$u" "$P" vfork 30 "$GT/gt_alloc" 8
	compare "spawn" "$u" "$P" spawn 30 "$GT/gt_alloc" 8
	compare "system" "$u" "$P" system 30 "$GT/gt_alloc 8 | cat"
	compare "pipeline" "$u" sh -c "'$GT/gt_alloc' 8 | sort | '$GT/gt_alloc' 4 >/dev/null; yes | head -n 3"
	for m in alarm eintr segv mask; do
		compare "signals $m" "$u" "$S" $m
	done
	for m in exit handler segv pthread_exit; do
		compare "exit $m" "$u" "$GT/gt_exit" $m 60
	done
	compare "frees in a signal handler" "$u" "$GT/gt_alloc" 16 64 sigfree
	compare "C++ new and delete on 2 threads" "$u" "$GT/gt_newdel" 16
	compare "dlopen and dlclose" "$u" "$GT/gt_dlloop" 200 libdw.so.1 libncursesw.so.6
	if [ -n "$JE" ]; then
		# After probe's library, as a program that preloads it does
		# under probe record (probe's goes first; tests/23).
		compare "jemalloc preloaded" "$u" sh -c \
			"LD_PRELOAD=\"\${LD_PRELOAD:+\$LD_PRELOAD }$JE\" exec '$GT/gt_alloc' 16 64"
	else
		skip "libjemalloc2 is not installed"
	fi
	# The last case's recording: allocations sampled (not a silent pass).
	"$PROBE" report "$T/rec.probe" >"$T/hdr" 2>&1
	a=$(sed -n 's/^# events recorded: alloc (\([0-9]*\) samples).*/\1/p' "$T/hdr" | head -n 1)
	[ "${a:-0}" -gt 100 ]
	ok $? "the last case ($u) recorded ${a:-no} allocation samples (want > 100)"
done
done_testing
