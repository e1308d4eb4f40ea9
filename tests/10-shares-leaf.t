#!/bin/sh
# Three leaf functions called 5:3:2 must get 50/30/20 % of their samples,
# with the program built -O2 -fomit-frame-pointer.  The bound is derived
# from the count (binom_tol: 3.59 binomial standard deviations, so that one
# of the three checks fails by chance in fewer than 1 run of 1,000): about
# 1.3/1.2/1.0 points at 18,000 samples.  Shares are of the three leaves'
# samples: the program's start and exit take about 1 % of all, which moved
# leaf_five's share of all samples 0.6 points below 50 (a bias, not noise).
. "$(dirname "$0")/lib.sh"
plan 6

"$PROBE" record -q -F 4999 -o "$T/leaf.probe" -- "$GT/gt_leaf" 1000 >"$T/out" 2>"$T/err"
is "$?" 0 "probe record exits with the program's status"
"$PROBE" report "$T/leaf.probe" >"$T/report" 2>"$T/rerr"
is "$?" 0 "probe report succeeds"
samples=$(awk '/^# event:/ { for (i = 1; i <= NF; i++) if ($(i+1) ~ /^samples/) { print $i; exit } }' "$T/report")
diag "samples: $samples"
leaves=0
for name in leaf_five leaf_three leaf_two; do
	leaves=$(awk -v a="$leaves" -v b="$(self_share "$T/report" "$name")" 'BEGIN { print a + b }')
done
# Samples in the three leaves, from their share of all.
nleaf=$(awk -v n="$samples" -v s="$leaves" 'BEGIN { printf "%.0f", n * s / 100 }')
for pair in leaf_five:50 leaf_three:30 leaf_two:20; do
	name=${pair%:*} want=${pair#*:}
	got=$(awk -v s="$(self_share "$T/report" "$name")" -v t="$leaves" 'BEGIN { if (t > 0) printf "%.2f", 100 * s / t }')
	tol=$(binom_tol "$nleaf" "$(awk -v w="$want" 'BEGIN { print w / 100 }')" 3)
	within "$got" "$want" "$tol"
	ok $? "$name: $got % of the leaves' $nleaf samples (want $want +-$tol)"
done
awk -v n="$samples" 'BEGIN { exit !(n + 0 >= 14000) }'
ok $? "at least 14000 samples at 4999 Hz over ~3.5 s (got $samples)"
[ "$_tap_fail" -eq 0 ] || { diag "report:"; sed 's/^/#   /' "$T/report" | head -20; sed 's/^/#   /' "$T/err" "$T/rerr"; }
done_testing
