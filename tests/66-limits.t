#!/bin/sh
# Ordinary users, real limits.
#  - 1,000 threads at once, as an ordinary user (nobody when run as root)
#    with RLIMIT_NOFILE 1024 and the default perf_event_mlock_kb: every
#    thread that runs is sampled (threads hold no descriptor; rings fit the
#    locked-memory budget), or probe says exactly how many were not and
#    why.  Again with RLIMIT_MEMLOCK at 64 KiB: rings shrink to what may be
#    locked (metadata page only, then none) and every thread is still
#    sampled.
#  - The realtime signal queue exhausted (RLIMIT_SIGPENDING 0 and 4, 16
#    threads at 10 kHz): with PROBE_SIGNAL the kernel's fallback SIGIO never
#    kills the program; its output is the same, every thread is sampled, and
#    probe says so once (with room for 4, when the queue filled at all).  With the default SIGTRAP the limit does not apply:
#    the same, and nothing said.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault.sh"
command -v prlimit >/dev/null || skip_all "prlimit (util-linux) is not installed"
plan 16

u=me
[ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1 && u=nobody

# threads_sampled REPORT: how many of the threads t0..tN have samples
threads_sampled() {
	"$PROBE" report --sort comm "$1" 2>/dev/null |
		awk '!/^#/ && $3 > 0 && $4 ~ /^t[0-9]+$/' | wc -l
}

for lim in default 64; do
	if [ $lim = default ]; then extra=""; what="default limits"
	else extra="--memlock=65536:65536"; what="RLIMIT_MEMLOCK 64 KiB"; fi
	rm -f "$T/m-$lim.probe"
	run_as $u prlimit --nofile=1024:1024 $extra "$PROBE" record -F 4999 \
		-o "$T/m-$lim.probe" -- "$GT/gt_many" 1000 5 >"$T/out" 2>"$T/err"
	is "$?" 0 "1000 threads, $what ($u): exit 0"
	k=$(threads_sampled "$T/m-$lim.probe")
	missing=$(sed -n 's/^probe: \([0-9]*\) of [0-9]* threads were not profiled.*/\1/p' "$T/err")
	[ "$k" = 1000 ] || [ "$((k + ${missing:-0}))" = 1000 ]
	ok $? "1000 threads, $what ($u): $k sampled${missing:+, $missing said not to be}"
	[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/err" | head -5
done

PR_OPTS="-F 10000"
# With PROBE_SIGNAL (F_SETSIG) the kernel falls back to SIGIO and probe
# says so; its default SIGTRAP (perf sigtrap) is not queued against the
# limit at all, and there is nothing to say.
for how in RTMIN+6 TRAP; do
	if [ $how = TRAP ]; then unset PROBE_SIGNAL; said=0; else export PROBE_SIGNAL=$how; said=1; fi
	for q in 0 4; do
		compare "signal queue $q, $how" "$u" prlimit --sigpending=$q "$GT/gt_many" 16 100
		k=$(threads_sampled "$T/rec.probe")
		is "$k" 16 "signal queue $q, $how ($u): all 16 threads sampled"
		n=$(grep -c '^probe: the realtime signal queue was full' "$T/probe.err")
		if [ $q = 4 ] && [ $said = 1 ]; then
			# Room for 4: the queue fills only when 5 signals wait at
			# once (threads preempted with one pending); in 1 run of 15
			# it never did.  Said once if it did, never twice.
			[ "$n" -le 1 ]; ok $? "signal queue $q, $how ($u): said at most once ($n)"
		else
			is "$n" $said "signal queue $q, $how ($u): said $said times"
		fi
	done
done
unset PROBE_SIGNAL
done_testing
