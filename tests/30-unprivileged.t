#!/bin/sh
# The same profiles as an ordinary user (nobody): perf_event_paranoid 2,
# the default mlock limit, no privileges.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root to switch to user nobody"
id nobody >/dev/null 2>&1 || skip_all "no user nobody on this machine"
plan 8

as_nobody "$PROBE" record -q -F 4999 -o "$T/leaf.probe" -- "$GT/gt_leaf" 600 >"$T/out" 2>"$T/err"
is "$?" 0 "probe record as nobody exits 0"
is "$(stat -c %U "$T/leaf.probe")" nobody "the recording belongs to nobody"
as_nobody "$PROBE" report "$T/leaf.probe" >"$T/report" 2>&1
for pair in leaf_five:50 leaf_three:30 leaf_two:20; do
	name=${pair%:*} want=${pair#*:}
	got=$(self_share "$T/report" "$name")
	within "$got" "$want" 1.5
	ok $? "as nobody, $name: $got % (want $want +-1.5)"
done
as_nobody "$PROBE" record -q -F 4999 -o "$T/thr.probe" -- "$GT/gt_threads" 200 >"$T/out" 2>"$T/err"
is "$?" 0 "threaded program as nobody exits 0"
"$PROBE" report --sort comm "$T/thr.probe" >"$T/treport" 2>&1
n=$(awk '!/^#/ && ($4 ~ /^w[1-4]$/ || $5 ~ /^w[1-4]$/)' "$T/treport" | wc -l)
is "$n" 4 "all four worker threads sampled as nobody"
(cd "$T" && as_nobody env LD_PRELOAD="$LIBPROBE" "$GT/gt_leaf" 100 >/dev/null 2>"$T/pre.err")
is "$?" 0 "bare LD_PRELOAD as nobody exits 0"
[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/err" "$T/report" "$T/treport" "$T/pre.err" | head -40
done_testing
