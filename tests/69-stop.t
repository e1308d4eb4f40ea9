#!/bin/sh
# probe record stops when asked, as perf record does (issue 23, point 1):
# SIGINT, SIGTERM or SIGHUP is passed on to the command, and within a second
# the recording is written and probe exits, whatever the command does; a
# command that ignored the signal is left running and named (pid), and the
# exit status is the signal's (128 + N).  A second signal stops at once.
# And the end-of-run summary (point 6): many processes keep to a screen
# (the busiest few, the unprofiled, a count and where to see them all), and
# -q never hides that nothing was profiled.
. "$(dirname "$0")/lib.sh"
plan 29

# start_rec OUT ERR CMD...: probe record in the background; sets $rec (its
# pid) and $cmd (the command's, once it runs), $dog (a watchdog that ends
# probe after 6 s, so that a probe that does not stop fails, not hangs).
start_rec() {
	out=$1 err=$2
	shift 2
	"$PROBE" record -o "$out" -- "$@" >/dev/null 2>"$err" &
	rec=$!
	(sleep 6; kill -KILL $rec) >/dev/null 2>&1 &
	dog=$!
	cmd=
	i=0
	while [ $i -lt 100 ] && [ -z "$cmd" ]; do
		cmd=$(pgrep -P $rec | head -1)
		[ -n "$cmd" ] || sleep 0.05
		i=$((i + 1))
	done
	sleep 0.4       # some samples first
}

# stop_rec SIG...: send each signal (0.1 s apart), wait for probe; sets
# $rc and $ms (milliseconds from the first signal to probe's exit).
stop_rec() {
	t0=$(date +%s%N)
	first=1
	for s in "$@"; do
		[ $first = 1 ] || sleep 0.1
		first=0
		kill -$s $rec
	done
	wait $rec
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	kill $dog 2>/dev/null
	wait $dog 2>/dev/null
}

# The command ignores all three: only probe's own deadline can stop it.
IGNORING='trap "" INT TERM HUP; exec "$0" 3000'
for signum in INT:2 TERM:15 HUP:1; do
	sig=${signum%:*} num=${signum#*:}
	start_rec "$T/$sig.data" "$T/$sig.err" sh -c "$IGNORING" "$GT/gt_leaf"
	stop_rec $sig
	# 1 s deadline, then the file and the summary: 0.5 s of margin for a
	# loaded machine (it takes about 5 ms).
	[ "$ms" -lt 1500 ]
	ok $? "SIG$sig, command ignores it: probe exits ${ms} ms after it (want < 1500)"
	is "$rc" $((128 + num)) "SIG$sig: probe's exit status is 128 + $num"
	grep -q "probe: the command did not end on SIG$sig and is still running as pid $cmd; probe stopped recording and leaves it running (kill -KILL $cmd ends it)" "$T/$sig.err"
	ok $? "SIG$sig: probe says the command is still running, and its pid"
	kill -0 "$cmd" 2>/dev/null
	ok $? "SIG$sig: the command (pid $cmd) is indeed still running"
	"$PROBE" report "$T/$sig.data" >"$T/$sig.rep" 2>&1
	grep -q ' leaf_five ' "$T/$sig.rep"
	ok $? "SIG$sig: the recording reads, with the command's samples (leaf_five)"
	[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/$sig.err"
	kill -KILL "$cmd" 2>/dev/null
done

# A second signal does not wait for the deadline.
start_rec "$T/two.data" "$T/two.err" sh -c "$IGNORING" "$GT/gt_leaf"
stop_rec INT INT
[ "$ms" -lt 900 ]
ok $? "two SIGINTs 0.1 s apart: probe exits ${ms} ms after the first (want < 900)"
grep -q "still running as pid $cmd" "$T/two.err"
ok $? "two SIGINTs: probe says the command is still running"
kill -KILL "$cmd" 2>/dev/null

# A command that SIGTERM ends (a background job of this script ignores
# SIGINT from its start): its end is said, its status kept.
start_rec "$T/end.data" "$T/end.err" "$GT/gt_leaf" 3000
stop_rec TERM
[ "$ms" -lt 1000 ]
ok $? "SIGTERM, command ends on it: probe exits ${ms} ms after it (want < 1000)"
is "$rc" 143 "the command's status (killed by SIGTERM: 143)"
grep -q "probe: stopped on SIGTERM: the command was killed by SIGTERM" "$T/end.err"
ok $? "probe says the command was killed by SIGTERM"
[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/two.err" "$T/end.err"

# ---- the summary -------------------------------------------------------
printf 'int main(void) { return 3; }\n' >"$T/st.c"
if gcc -static -O1 -o "$T/static_prog" "$T/st.c" 2>/dev/null; then
	# 20 short processes, a static one, then the busiest: 23 in all.
	"$PROBE" record -o "$T/many.data" -- sh -c "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do '$GT/gt_leaf' 1; done; '$T/static_prog'; '$GT/gt_leaf' 100" >/dev/null 2>"$T/many.err"
	nl=$(grep -c '^probe:   ' "$T/many.err")
	[ "$nl" -le 10 ]
	ok $? "23 processes: the summary takes $nl lines for them (want <= 10)"
	grep '^probe:   pid ' "$T/many.err" | head -1 | grep -q "gt_leaf 100: "
	ok $? "the busiest process (gt_leaf 100) comes first"
	"$PROBE" report --header-only "$T/many.data" 2>&1 | grep -q "^# *[0-9]* *[0-9]* *[0-9]* .*static_prog"
	ok $? "the static program, sampled from outside, is in the recording's list of processes"
	# The count line: the processes not shown, and their samples exactly.
	awk -v f="$T/many.data" '
		/^probe: [0-9]+ samples/ { total = $2 }
		/^probe:   pid / { shown++; if (match($0, /: [0-9]+ samples,/)) s += substr($0, RSTART + 2, RLENGTH - 11) + 0 }
		/^probe:   \.\.\. and / { more = $4; ms = $7; sub(/^\(/, "", ms); line = $0 }
		END { want = sprintf("probe report --header-only %s lists every profiled one", f)
		      exit !(shown + more == 23 && ms == total - s && index(line, want)) }' "$T/many.err"
	st=$?
	ok $st "then '... and N more processes (S samples)', adding up to 23 and to the total, and the command that lists them all"
	[ "$st" = 0 ] || sed 's/^/#   /' "$T/many.err"
	[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/many.err"

	# Pids wrapped: the shell that runs probe has a higher pid than probe
	# and its command.  It is probe's parent, not the command's child, and
	# is not named as run without probe (the scan once marked probe's own
	# parents as the command's, and named them when it came to them).
	# Root only: ns_last_pid sets the next pid.
	if [ "$(id -u)" -eq 0 ] && [ -w /proc/sys/kernel/ns_last_pid ]; then
		echo 20000 >/proc/sys/kernel/ns_last_pid
		sh -c 'echo $$ >"$1.sh"; echo 300 >/proc/sys/kernel/ns_last_pid; shift
		       "$@"; exit $?' sh "$T/wrap" "$PROBE" record -o "$T/wrap.data" -- \
			sh -c 'echo $PPID >"$1"; exec "$2" 300' sh "$T/wrap.probe" "$GT/gt_leaf" \
			>/dev/null 2>"$T/wrap.err"
		shpid=$(cat "$T/wrap.sh") ppid=$(cat "$T/wrap.probe")
		if [ "$ppid" -lt "$shpid" ]; then
			! grep -q 'not profiled' "$T/wrap.err"
			ok $? "pids wrapped (probe $ppid, its shell $shpid): probe's own shell is not named as the command's: $(grep 'not profiled' "$T/wrap.err" | head -c 200)"
		else
			skip "probe's pid ($ppid) came after its shell's ($shpid): pids did not wrap"
		fi
	else
		skip "not root: ns_last_pid cannot be set to make pids wrap"
	fi

	# -q: a program LD_PRELOAD cannot reach is sampled from outside, quietly;
	# the status is the command's.
	"$PROBE" record -q -o "$T/st.data" -- "$T/static_prog" 2>"$T/q.err"
	is "$?" 3 "-q, a static program: probe exits with the program's status (3)"
	[ ! -s "$T/q.err" ] && "$PROBE" report --header-only "$T/st.data" 2>&1 | grep -q "static_prog"
	ok $? "-q, a static program: nothing said, and it is in the recording: $(head -n 1 "$T/q.err")"
else
	for i in 1 2 3 4 5 6 7; do skip "no static libc to build a static program"; done
fi
"$PROBE" record -q -o "$T/q2.data" -- "$GT/gt_leaf" 10 >/dev/null 2>"$T/q2.err"
is "$?" 0 "-q, a profiled program: exit 0"
[ ! -s "$T/q2.err" ]
ok $? "-q, a profiled program: nothing on stderr"
done_testing
