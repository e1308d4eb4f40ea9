#!/bin/sh
# Four threads doing 1:2:3:4 units of work: every thread is seen, and the
# per-thread shares are 10/20/30/40 % within 1.5 points.
. "$(dirname "$0")/lib.sh"
plan 6

"$PROBE" record -q -F 4999 -o "$T/thr.probe" -- "$GT/gt_threads" 300 >"$T/out" 2>"$T/err"
is "$?" 0 "probe record exits with the program's status"
"$PROBE" report --sort comm "$T/thr.probe" >"$T/report" 2>"$T/rerr"
is "$?" 0 "probe report --sort comm succeeds"
for pair in w1:10 w2:20 w3:30 w4:40; do
	name=${pair%:*} want=${pair#*:}
	got=$(self_share "$T/report" "$name")
	within "$got" "$want" 1.5
	ok $? "thread $name: $got % of samples (want $want +-1.5)"
done
[ "$_tap_fail" -eq 0 ] || { diag "report:"; sed 's/^/#   /' "$T/report" | head -20; sed 's/^/#   /' "$T/err" "$T/rerr"; }
done_testing
