#!/bin/sh
# Three leaf functions called 5:3:2 must get 50/30/20 % of their samples,
# with the program built -O2 -fomit-frame-pointer.  The bound is derived
# from the count (lib.sh's leaf_checks: a false failure in fewer than 1 run
# of 1,000): about 1.3/1.2/1.0 points at 18,000 samples (1000 rounds; the
# 1.5 points of all samples at 600 rounds, 11,000 samples, were 3.2
# standard deviations of leaf_five's share, but only 1.9 below it once the
# 0.6-point bias is counted: a false failure in about 1 run of 35).
. "$(dirname "$0")/lib.sh"
plan 6

"$PROBE" record -q -F 4999 -o "$T/leaf.probe" -- "$GT/gt_leaf" 1000 >"$T/out" 2>"$T/err"
is "$?" 0 "probe record exits with the program's status"
"$PROBE" report "$T/leaf.probe" >"$T/report" 2>"$T/rerr"
is "$?" 0 "probe report succeeds"
samples=$(awk '/^# event:/ { for (i = 1; i <= NF; i++) if ($(i+1) ~ /^samples/) { print $i; exit } }' "$T/report")
diag "samples: $samples"
leaf_checks "$T/report" ""
awk -v n="$samples" 'BEGIN { exit !(n + 0 >= 14000) }'
ok $? "at least 14000 samples at 4999 Hz over ~3.5 s (got $samples)"
[ "$_tap_fail" -eq 0 ] || { diag "report:"; sed 's/^/#   /' "$T/report" | head -20; sed 's/^/#   /' "$T/err" "$T/rerr"; }
done_testing
