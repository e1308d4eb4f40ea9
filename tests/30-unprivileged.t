#!/bin/sh
# The same profiles as an ordinary user (nobody): perf_event_paranoid 2,
# the default mlock limit, no privileges.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root to switch to user nobody"
id nobody >/dev/null 2>&1 || skip_all "no user nobody on this machine"
plan 8

as_nobody "$PROBE" record -q -F 4999 -o "$T/leaf.probe" -- "$GT/gt_leaf" 1000 >"$T/out" 2>"$T/err"
is "$?" 0 "probe record as nobody exits 0"
is "$(stat -c %U "$T/leaf.probe")" nobody "the recording belongs to nobody"
as_nobody "$PROBE" report "$T/leaf.probe" >"$T/report" 2>&1
# Bounds from the sample count: see lib.sh's leaf_checks (1000 rounds, as
# tests/10: about 1.3/1.2/1.0 points; at 600 rounds the 1.5 points of all
# samples gave a false failure in about 1 run of 35, the bias counted).
leaf_checks "$T/report" "as nobody, "
as_nobody "$PROBE" record -q -F 4999 -o "$T/thr.probe" -- "$GT/gt_threads" 200 >"$T/out" 2>"$T/err"
is "$?" 0 "threaded program as nobody exits 0"
"$PROBE" report --sort comm "$T/thr.probe" >"$T/treport" 2>&1
n=$(awk '!/^#/ && ($4 ~ /^w[1-4]$/ || $5 ~ /^w[1-4]$/)' "$T/treport" | wc -l)
is "$n" 4 "all four worker threads sampled as nobody"
(cd "$T" && as_nobody env LD_PRELOAD="$LIBPROBE" "$GT/gt_leaf" 100 >/dev/null 2>"$T/pre.err")
is "$?" 0 "bare LD_PRELOAD as nobody exits 0"
[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/err" "$T/report" "$T/treport" "$T/pre.err" | head -40
done_testing
