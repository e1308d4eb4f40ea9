#!/bin/sh
# The program never notices: same stdout, same stderr, same exit status with
# and without probe, through `probe record` and through a bare LD_PRELOAD
# (which, with no collector, leaves probe.data like perf record does).
. "$(dirname "$0")/lib.sh"
plan 13

"$GT/gt_leaf" 200 3 >"$T/bare.out" 2>"$T/bare.err"
bare=$?
"$PROBE" record -q -o "$T/a.probe" -- "$GT/gt_leaf" 200 3 >"$T/rec.out" 2>"$T/rec.err"
rec=$?
is "$bare" 3 "bare run exits 3"
is "$rec" "$bare" "probe record exits with the program's status"
cmp -s "$T/bare.out" "$T/rec.out"; ok $? "stdout identical under probe record"
cmp -s "$T/bare.err" "$T/rec.err"; ok $? "stderr identical under probe record -q"

bare=$(sh -c 'kill -TERM $$' 2>/dev/null; echo $?)
"$PROBE" record -q -o "$T/k.probe" -- sh -c 'kill -TERM $$'; rec=$?
is "$rec" "$bare" "a program killed by SIGTERM: probe exits $bare as a shell would"

"$PROBE" record -q -o "$T/t.probe" -- "$GT/gt_threads" 20 >"$T/thr.out" 2>&1
is "$?" 0 "threaded program exits 0 under probe"
is "$(cat "$T/thr.out")" "threads done" "threaded program's output unchanged"

# No collector: libprobe writes ./probe.data and says so once.
(cd "$T" && LD_PRELOAD="$LIBPROBE" "$GT/gt_leaf" 200 3 >"$T/pre.out" 2>"$T/pre.err")
is "$?" 3 "LD_PRELOAD run exits with the program's status"
cmp -s "$T/bare.out" "$T/pre.out"; ok $? "stdout identical under LD_PRELOAD"
is "$(grep -c '^probe: .*probe\.data' "$T/pre.err")" 1 "one probe: line names the output file"
is "$(grep -vc '^probe: ' "$T/pre.err")" 0 "nothing else on stderr"
"$PROBE" report "$T/probe.data" >"$T/pre.report" 2>&1
is "$?" 0 "probe report reads the file libprobe wrote"
grep -q 'leaf_five' "$T/pre.report"; ok $? "and names leaf_five"
[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/pre.err" "$T/rec.err" "$T/pre.report" | head -30
done_testing
