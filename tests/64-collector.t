#!/bin/sh
# The collector is absent, is killed halfway, or stops reading: the program
# runs to its end at full speed with the same output, and probe counts
# what it could not deliver (one probe: line).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault.sh"
n=0
for u in $USERS; do n=$((n + 12)); done
plan $n

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
# wait_gone PIDFILE: until the process named in PIDFILE has ended (10 s at
# most); a zombie has ended (its parent, probe record, may be stopped).
wait_gone() {
	for _i in $(seq 1 400); do
		if [ -s "$1" ]; then
			_st=$(ps -o stat= -p "$(cat "$1")" 2>/dev/null)
			case $_st in ""|Z*) return 0 ;; esac
		fi
		sleep 0.025
	done
	return 1
}

# start_rec USER FILE [ROUNDS]: probe record of gt_leaf in the background; $rec is
# its pid, $T/pid the program's.
start_rec() {
	rm -f "$T/pid" "$T/recpid"
	run_as "$1" sh -c 'echo $$ >"$0"; exec "$@"' "$T/recpid" \
		"$PROBE" record -F 10000 -o "$2" -- \
		sh -c "echo \$\$ >'$T/pid'; exec '$GT/gt_leaf' ${3:-$ROUNDS}" >"$T/out" 2>"$T/err" &
	while [ ! -s "$T/recpid" ]; do sleep 0.01; done
	rec=$(cat "$T/recpid")
	# The program itself running (a slow collector, under ASan, may take
	# a while to start it): what follows is timed from there.
	for _i in $(seq 1 1000); do
		[ -s "$T/pid" ] && break
		sleep 0.01
	done
}

ROUNDS=200
"$GT/gt_leaf" $ROUNDS >"$T/bare.out" 2>"$T/bare.err"
# The stalled case runs longer: what is sampled after the stop (~1 s at
# 10 kHz, ~370 KB) must overflow the socket's buffer (~200 KB), or nothing
# is dropped and there is nothing to count.
SROUNDS=400
"$GT/gt_leaf" $SROUNDS >"$T/sbare.out" 2>"$T/sbare.err"
for u in $USERS; do
	# Full speed: not held up by the collector.  A program that blocked on
	# a dead or stalled collector would hang for good; the bound below
	# (2x + 1.5 s: the final flush may wait 1 s) only catches that, since
	# speed itself is measured by scripts/bench, not by timed tests, and
	# this 2-core VM's timings vary by tens of percent under load.
	start_rec "$u" "$T/n-$u.probe"
	t0=$(now)
	wait_gone "$T/pid"
	bare=$(secs "$t0" "$(now)")
	wait
	start_rec "$u" "$T/n-$u.probe" $SROUNDS
	t0=$(now)
	wait_gone "$T/pid"
	sbare=$(secs "$t0" "$(now)")
	wait

	# Absent: PROBE_SOCKET names no collector.  No file takes over: it
	# could replace the user's recording (a background descendant of a
	# probe record that has ended would have rotated it away).
	rm -f "$T/abs-$u.probe" "$T/probe.data"
	(cd "$T" && run_as "$u" env LD_PRELOAD="$LIBPROBE" PROBE_SOCKET="$T/nobody-listens.sock" \
		PROBE_OUTPUT="$T/abs-$u.probe" "$GT/gt_leaf" $ROUNDS >"$T/out" 2>"$T/err")
	is "$?" 0 "absent ($u): exit status 0"
	cmp -s "$T/bare.out" "$T/out"; ok $? "absent ($u): same output"
	is "$(grep -c "^probe: cannot connect to the collector at .*nobody-listens.sock (No such file or directory); not profiling" "$T/err")" 1 \
		"absent ($u): one probe: line says why it is not profiled"
	[ ! -e "$T/abs-$u.probe" ] && [ ! -e "$T/probe.data" ] && [ "$(grep -vc '^probe: ' "$T/err")" -eq 0 ]
	ok $? "absent ($u): no file written instead, nothing else said"

	# Killed halfway.
	start_rec "$u" "$T/k-$u.probe"
	t0=$(now)
	sleep 0.4
	kill -KILL $rec
	wait 2>/dev/null
	wait_gone "$T/pid"
	took=$(secs "$t0" "$(now)")
	cmp -s "$T/bare.out" "$T/out"; ok $? "killed ($u): same output"
	awk -v a="$took" -v b="$bare" 'BEGIN { exit !(a <= 2 * b + 1.5) }'
	ok $? "killed ($u): ran at full speed (${took} s, ${bare} s with a working collector)"
	grep -q '^probe: [1-9][0-9]* samples of process [0-9]* could not be delivered: the collector went away' "$T/err"
	ok $? "killed ($u): counted what it dropped: $(grep '^probe:' "$T/err" | head -1)"

	# Stops reading (stopped), and reads again after the program ended.
	start_rec "$u" "$T/s-$u.probe" $SROUNDS
	t0=$(now)
	sleep 0.3
	kill -STOP $rec
	wait_gone "$T/pid"
	took=$(secs "$t0" "$(now)")
	kill -CONT $rec
	wait
	is "$?" 0 "stalled ($u): probe record exits 0 once it reads again"
	cmp -s "$T/sbare.out" "$T/out"; ok $? "stalled ($u): same output"
	awk -v a="$took" -v b="$sbare" 'BEGIN { exit !(a <= 2 * b + 1.5) }'
	ok $? "stalled ($u): ran at full speed (${took} s, ${sbare} s with a working collector)"
	"$PROBE" report "$T/s-$u.probe" >"$T/rep" 2>&1
	a=$(samples_of "$T/rep" leaf_five)
	grep -q '^probe: [1-9][0-9]* samples of process [0-9]* could not be delivered: the collector stopped reading' "$T/err"
	r=$?
	[ "$a" -gt 200 ] && [ $r -eq 0 ]
	ok $? "stalled ($u): what fitted arrived ($a samples of leaf_five), the rest was counted: $(grep '^probe: [0-9]* samples of' "$T/err")"
	grep -q '^probe: [0-9]* samples (lost: [1-9][0-9]* ([0-9]* collector behind' "$T/err"
	ok $? "stalled ($u): the recording counts them as lost: $(grep '^probe: [0-9]* samples (' "$T/err")"
	[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/err"
done
done_testing
