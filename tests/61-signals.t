#!/bin/sh
# The program never notices, signals-wise: its own handlers, masks and
# timers (SIGALRM, SIGPROF, SIGCHLD) work as before; slow calls do not
# fail with EINTR; threads that block every signal still run (and are
# still sampled); a program that uses probe's own signal (handler,
# sigqueue, timer, blocking it, sysv_signal and sigset) gets its signals,
# sees what it set, and probe says so once; a thread that blocks every
# signal with a raw system call runs (unsampled), and probe says so, but
# not of a thread that ran less than a sampling period so (glibc's own
# windows); a
# signal sent from outside with the default action
# still kills; a SIGSEGV handler that recovers still does; a kernel sample
# in a system call does not make it restart where the program's handler
# wants EINTR; a handler of the program's that leaves probe's (exit,
# siglongjmp) does not stop the sampling.  Each case runs
# bare and under probe record at 10 kHz and compares stdout, stderr and
# the exit status.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault.sh"
n=0
for u in $USERS; do n=$((n + 30)); done
plan $n

PR_OPTS="-F 10000"
S=$GT/gt_signals
for u in $USERS; do
	for m in alarm prof chld eintr; do
		compare "$m" "$u" "$S" $m
	done
	grep -q 'EINTR: nanosleep 0, poll 0, epoll_wait 0, select 0, read 0, sigtimedwait 0' "$T/probe.out"
	ok $? "eintr ($u): no call failed with EINTR under probe: $(cat "$T/probe.out")"
	# A read an alarm must end with EINTR (handler without SA_RESTART),
	# after kernel time in the call (readv of 1024 iovecs) where a kernel
	# sample may land: 300 of 300 EINTR (195 were restarted before).
	compare "interrupt" "$u" "$S" interrupt 300
	# A handler of the program's that runs nested in probe's (an alarm
	# every 100 us finds probe's handler running within milliseconds at
	# 10 kHz) and leaves it: the work it does before exit(7) is drained
	# at the exit, the work after a siglongjmp is sampled.  Before: 0
	# samples in both (the thread stayed marked as inside probe's
	# handler); now about 80 and 800.  The counts follow the CPU time
	# (cpu-clock), not chance: the bounds are a quarter of them.
	nested "$u" nested_exit 7 after_nested 20
	nested "$u" nested_jump 0 after_jump 200

	compare "mask" "$u" "$S" mask
	"$PROBE" report "$T/rec.probe" >"$T/rep" 2>&1
	a=$(samples_of "$T/rep" masked_work)
	[ "$a" -gt 200 ]
	ok $? "mask ($u): threads that block every signal are sampled ($a samples, want > 200)"

	# Probe's signal: SIGTRAP by default (perf's sigtrap), SIGRTMIN+6
	# with PROBE_SIGNAL (F_SETSIG): the program may use either.
	for how in TRAP RTMIN+6; do
		if [ $how = TRAP ]; then unset PROBE_SIGNAL; else export PROBE_SIGNAL=$how; fi
		export GT_SIG=$how
		compare "ours, $how" "$u" "$S" ours
		grep -q "^probe: the program installed its own handler for signal" "$T/probe.err"
		ok $? "ours, $how ($u): probe says the program shares its signal: $(grep -c '^probe: ' "$T/probe.err") probe: lines"
		"$PROBE" report "$T/rec.probe" >"$T/rep" 2>&1
		a=$(samples_of "$T/rep" busy)
		[ "$a" -gt 20 ]
		ok $? "ours, $how ($u): and keeps sampling ($a samples in busy)"
		compare "sysv, $how" "$u" "$S" sysv
	done
	unset PROBE_SIGNAL GT_SIG
	# SIGTRAP of the program's own: breakpoints it handles, and the
	# default action (also when blocked, which the kernel forces through).
	compare "int3 and raise(SIGTRAP) handled" "$u" "$S" trap
	grep -q '^int3 breakpoints 20, raised 20$' "$T/probe.out"
	ok $? "trap ($u): the program's handler saw every trap: $(cat "$T/probe.out")"
	compare "int3 at SIG_DFL" "$u" "$S" int3
	compare "int3 with SIGTRAP blocked" "$u" "$S" int3blocked
	compare "kill -TRAP from outside" "$u" sh -c 'sh -c "kill -TRAP \$\$; sleep 1"; echo "status $?"'
	compare "rawmask" "$u" "$S" rawmask
	grep -q "^probe: 1 thread blocked signal .* by a means probe cannot see" "$T/probe.err"
	ok $? "rawmask ($u): probe says a thread blocked its signal behind its back"
	# glibc blocks every signal for a moment in posix_spawn and
	# pthread_create; a sample's signal held then, and the thread asleep
	# at exit (a vfork child slow to exec), is no thread blocked for good.
	export GT_HELD="$T/held"
	compare "window" "$u" "$S" window
	unset GT_HELD
	[ "$(cat "$T/held")" = held ] && ! grep -q "cannot see" "$T/probe.err"
	ok $? "window ($u): a sample's signal $(cat "$T/held") in a short window with every signal blocked: no warning"
	compare "segv" "$u" "$S" segv
	# The shell reports how its child died, bare and profiled alike.
	compare "kill -40 from outside" "$u" sh -c 'sh -c "kill -40 \$\$; sleep 1"; echo "status $?"'
	compare "kill -IO from outside" "$u" sh -c 'sh -c "kill -IO \$\$; sleep 1"; echo "status $?"'
done
done_testing
