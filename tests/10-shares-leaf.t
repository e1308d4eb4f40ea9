#!/bin/sh
# Three leaf functions called 5:3:2 must get 50/30/20 % of the samples,
# within 1.5 points, with the program built -O2 -fomit-frame-pointer.
. "$(dirname "$0")/lib.sh"
plan 6

"$PROBE" record -q -F 4999 -o "$T/leaf.probe" -- "$GT/gt_leaf" 600 >"$T/out" 2>"$T/err"
is "$?" 0 "probe record exits with the program's status"
"$PROBE" report "$T/leaf.probe" >"$T/report" 2>"$T/rerr"
is "$?" 0 "probe report succeeds"
samples=$(awk '/^# event:/ { for (i = 1; i <= NF; i++) if ($(i+1) ~ /^samples/) { print $i; exit } }' "$T/report")
diag "samples: $samples"
for pair in leaf_five:50 leaf_three:30 leaf_two:20; do
	name=${pair%:*} want=${pair#*:}
	got=$(self_share "$T/report" "$name")
	within "$got" "$want" 1.5
	ok $? "$name: $got % of samples (want $want +-1.5)"
done
awk -v n="$samples" 'BEGIN { exit !(n + 0 >= 8000) }'
ok $? "at least 8000 samples at 4999 Hz over ~2 s (got $samples)"
[ "$_tap_fail" -eq 0 ] || { diag "report:"; sed 's/^/#   /' "$T/report" | head -20; sed 's/^/#   /' "$T/err" "$T/rerr"; }
done_testing
