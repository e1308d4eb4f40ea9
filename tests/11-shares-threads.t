#!/bin/sh
# Four threads doing 1:2:3:4 units of work: every thread is seen, and the
# per-thread shares are 10/20/30/40 %, within a bound derived from the
# sample count (binom_tol: 3.66 binomial standard deviations, so that one
# of the four checks fails by chance in fewer than 1 run of 1,000): about
# 0.9/1.2/1.4/1.5 points at 14,500 samples (800 rounds).  At 300 rounds
# (5,500 samples) the 1.5 points were 2.2 standard deviations for w4.
. "$(dirname "$0")/lib.sh"
plan 6

"$PROBE" record -q -F 4999 -o "$T/thr.probe" -- "$GT/gt_threads" 800 >"$T/out" 2>"$T/err"
is "$?" 0 "probe record exits with the program's status"
"$PROBE" report --sort comm "$T/thr.probe" >"$T/report" 2>"$T/rerr"
is "$?" 0 "probe report --sort comm succeeds"
samples=$(awk '/^# event:/ { for (i = 1; i <= NF; i++) if ($(i+1) ~ /^samples/) { print $i; exit } }' "$T/report")
for pair in w1:10 w2:20 w3:30 w4:40; do
	name=${pair%:*} want=${pair#*:}
	got=$(self_share "$T/report" "$name")
	tol=$(binom_tol "$samples" "$(awk -v w="$want" 'BEGIN { print w / 100 }')" 4)
	within "$got" "$want" "$tol"
	ok $? "thread $name: $got % of $samples samples (want $want +-$tol)"
done
[ "$_tap_fail" -eq 0 ] || { diag "report:"; sed 's/^/#   /' "$T/report" | head -20; sed 's/^/#   /' "$T/err" "$T/rerr"; }
done_testing
