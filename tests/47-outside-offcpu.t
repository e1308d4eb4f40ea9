#!/bin/sh
# Off-CPU time sampled from outside (issue 25; collector/outside/): probe
# record -p --off-cpu on a running gt_waiters (two spinning threads, one
# blocked in read() for good, one sleeping 20 ms at a time, and main in
# pause()), nothing loaded into it:
#   - each thread's wall time is accounted in full, CPU samples plus waits
#     (the kernel's switch records time them): five threads, a fifth each;
#   - the sleeper's waits are under its stack (sleeper, nanosleep: the
#     context-switches event's stack copy, walked with .eh_frame), and the
#     threads blocked since before the recording are [stack unknown];
#   - the target sees nothing: no EINTR, no early return, its own threads;
#   - as nobody, where the kernel refuses kernel sampling (paranoid 2), the
#     waits are still timed, said to have no stack, and why;
#   - probe top -p --off-cpu shows the waits.
# The bounds: a thread's share of wall time is its time, measured, not
# sampled (cpu-clock fires every 1.001 ms of its CPU time; waits are timed
# to the ns), so the error is the edges of a 2 s window: a sample or two
# and a few ms of start-up, 0.3 points at most of 20; 1.5 points is five
# times that, on a loaded machine too.
. "$(dirname "$0")/lib.sh"
plan 12
W=
trap '[ -n "$W" ] && kill "$W" 2>/dev/null; rm -rf "$T"' EXIT

if ! "$PROBE" record -q -o "$T/probe.probe" -- "$GT/gt_leaf_static" 1 >/dev/null 2>"$T/err"; then
	skip_all "perf events are refused here: $(head -n 1 "$T/err")"
fi

start_waiters() {
	"$GT/gt_waiters" >"$T/w.out" &
	W=$!
	for i in $(seq 50); do grep -q ready "$T/w.out" && break; sleep 0.1; done
	main_asleep
}
# gt_waiters says "ready" once its reader sleeps in read(); main prints it
# just before pause(): a recording that starts before main is in pause()
# sees it switch off the CPU, a stack, not a wait since before.
main_asleep() {
	for i in $(seq 100); do
		[ "$(sed 's/.*) //' "/proc/$W/task/$W/stat" 2>/dev/null | cut -c1)" = S ] && return
		sleep 0.05
	done
}
start_waiters_nobody() {       # as_nobody is a function: $! would be a subshell
	as_nobody "$GT/gt_waiters" >"$T/w.out" &
	for i in $(seq 50); do grep -q ready "$T/w.out" && break; sleep 0.1; done
	W=$(pgrep -n -u nobody -x gt_waiters)
	main_asleep
}
# The share of "Tid:Command" rows: one line per thread, "tid share".
tid_shares() { awk '!/^#/ && NF && $4 ~ /:gt_waiters$/ { sub("%", "", $2); print $4, $2 }' "$1"; }
# Every thread's share within 1.5 points of a fifth: 0, else 1.
fifths() {
	tid_shares "$1" | awk '{ n++; d = $2 - 20; if (d < 0) d = -d; if (d > 1.5) bad = 1 }
		END { exit bad || n != 5 }'
}
total_share() {
	awk -v name="$2" '/^#/ { next }
		{ for (i = 4; i <= NF; i++) if ($i == name) { sub("%", "", $2); print $2; exit } }' "$1"
}
# The share of "[stack unknown]" (a name of two words).
unknown_share() { awk '!/^#/ && $4 == "[stack" && $5 == "unknown]" { sub("%", "", $2); print $2; exit }' "$1"; }

# ---- as this user (root here: stacks) -------------------------------------
start_waiters
before=$(ls "/proc/$W/task" | wc -l)
"$PROBE" record --off-cpu -p "$W" -o "$T/o.probe" -- sleep 2 >/dev/null 2>"$T/err"
is "$?" 0 "-p PID --off-cpu -- sleep 2: exit 0"
"$PROBE" report --sort tid "$T/o.probe" >"$T/tid" 2>&1
fifths "$T/tid"
ok $? "each thread's wall time in full, CPU plus waits: $(tid_shares "$T/tid" | tr '\n' ' ')"
"$PROBE" report "$T/o.probe" >"$T/rep" 2>&1
if [ "$(id -u)" -eq 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 1 ]; then
	sl=$(total_share "$T/rep" sleeper) ns=$(total_share "$T/rep" clock_nanosleep)
	within "${sl:-0}" 20 1.5 && within "${ns:-0}" 20 1.5
	ok $? "the sleeper's waits under its stack: sleeper ${sl:-none} %, clock_nanosleep ${ns:-none} % (want 20)"
	un=$(unknown_share "$T/rep")
	within "${un:-0}" 40 1.5
	ok $? "read() and pause(), blocked since before the recording: [stack unknown] ${un:-none} % (want 40)"
	grep -q "^# off-cpu: every switch of a thread sampled from outside off the CPU and back on, timed by the kernel's switch records, each under the stack" "$T/rep" &&
		grep -Eq "^probe: off-cpu from outside: [0-9]+ of those are waits .*, [0-9.]+% of them under the stack" "$T/err"
	ok $? "the header and the summary say how waits were seen: $(grep '^probe: off-cpu' "$T/err")"
else
	for i in 1 2 3; do skip "kernel sampling refused to this user: no stacks at switches"; done
fi
kill -0 "$W" 2>/dev/null && [ "$(ls "/proc/$W/task" | wc -l)" = "$before" ] && ! grep -v '^ready$' "$T/w.out" | grep -q .
ok $? "the target runs on undisturbed, its $before threads its own: $(grep -v '^ready$' "$T/w.out" | head -n 2 | tr '\n' ' ')"

# probe top -p --off-cpu: the waits in the live view.
"$PROBE" top --off-cpu -p "$W" -d 0.5 >"$T/top" 2>&1 &
P=$!
sleep 1.5
kill -INT "$P"
wait "$P"
grep -Eq "^ *[0-9.]+% +[0-9.]+% +[0-9]+ +\[off-cpu\]" "$T/top" && grep -Eq " spin_a " "$T/top"
ok $? "probe top -p --off-cpu: [off-cpu] and spin_a rows: $(grep -c '^# probe top' "$T/top") snapshots"
kill "$W"
wait "$W" 2>/dev/null
W=

# ---- as nobody, kernel sampling refused: timed, no stacks, said -----------
par=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1 && [ "$par" -ge 2 ]; then
	rm -f "$T/w.out"
	chmod 777 "$T"
	start_waiters_nobody
	as_nobody "$PROBE" record --off-cpu -p "$W" -o "$T/n.probe" -- sleep 2 >/dev/null 2>"$T/err"
	is "$?" 0 "as nobody: -p PID --off-cpu -- sleep 2: exit 0"
	grep -q "^probe: warning: --off-cpu from outside: the kernel times each switch off the CPU for any user, but its stack needs kernel sampling, which it refuses here (kernel.perf_event_paranoid is $par)" "$T/err"
	ok $? "the refusal of stacks is said, with what would allow them: $(grep -- '--off-cpu' "$T/err" | head -n 1)"
	as_nobody "$PROBE" report --sort tid "$T/n.probe" >"$T/tid" 2>&1
	fifths "$T/tid"
	ok $? "as nobody: each thread's wall time in full still: $(tid_shares "$T/tid" | tr '\n' ' ')"
	as_nobody "$PROBE" report "$T/n.probe" >"$T/rep" 2>&1
	# Every wait without its stack: three threads' whole wall time, and
	# the spinners' time preempted (more on a loaded machine).
	un=$(unknown_share "$T/rep") off=$(total_share "$T/rep" "[off-cpu]")
	within "${un:-0}" "${off:-x}" 0.02 && [ "$(awk -v u="${un:-0}" 'BEGIN { print (u >= 58.5) }')" = 1 ] &&
		grep -q "^# off-cpu: .*with no stack" "$T/rep"
	ok $? "as nobody: every wait without a stack: [stack unknown] ${un:-none} % of [off-cpu]'s ${off:-none} % (three blocked threads: >= 58.5)"
	kill "$W"
	wait "$W" 2>/dev/null
	W=
else
	for i in 1 2 3 4; do skip "not root, no user nobody, or perf_event_paranoid $par lets users sample the kernel"; done
fi

# ---- the option's own checks ----------------------------------------------
"$PROBE" record -p 1 --alloc -o "$T/x.probe" >/dev/null 2>"$T/err"
[ "$?" = 2 ] && grep -q "^probe: record: -p samples from outside (perf events) and --alloc is not supported there" "$T/err"
ok $? "-p with --alloc: still refused, said why: $(head -n 1 "$T/err")"
done_testing
