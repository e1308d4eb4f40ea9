#!/bin/sh
# probe top with its output not on a terminal: plain-text snapshots every
# interval (on stderr when it runs a command: the program's stdout stays
# the program's), a final one when the program exits, its exit status, -o,
# usage.
. "$(dirname "$0")/lib.sh"
plan 16

# gt_leaf 2000: about 6,600 samples (6.6 s of CPU at 999 Hz).  The final
# snapshot's shares: lib.sh's leaf_checks, bounds from the leaves' count
# (about 2.2/2.0/1.7 points, < 1/1000 false failures; before: +-3 points,
# said to be 2.7 standard deviations, with 600 rounds 2 points: 53.18 %
# came out once, under make sanitize).
"$PROBE" top -d 0.5 --exit -o "$T/top.probe" -- "$GT/gt_leaf" 2000 >"$T/stdout" 2>"$T/out"
is "$?" 0 "exits with the program's status (0)"
"$GT/gt_leaf" 2000 >"$T/bare"
cmp -s "$T/bare" "$T/stdout"
ok $? "the program's stdout is its own: nothing of probe top's in it"
n=$(grep -c '^# probe top: [0-9][0-9]:[0-9][0-9]:[0-9][0-9], ' "$T/out")
[ "$n" -ge 2 ]
ok $? "a snapshot every interval ($n)"
grep -q "$(printf '\033')" "$T/out"
ok $((! $?)) "no escape codes"
# The final snapshot: after the last '# probe top:' line.
awk '/^# probe top:/ { buf = "" } { buf = buf $0 "\n" } END { printf "%s", buf }' \
	"$T/out" >"$T/last"
grep -q '^# program exited: gt_leaf\[[0-9]*\] exit 0$' "$T/last"
ok $? "the final snapshot says the program exited"
leaf_checks "$T/last" "final snapshot: "
"$PROBE" report "$T/top.probe" >"$T/rep" 2>&1
ok $? "-o saves a recording probe report reads"
leaf_checks "$T/rep" "the saved recording: "

"$PROBE" top -d 0.5 -n 2 --exit -- "$GT/gt_leaf" 100 3 >"$T/out2" 2>&1
is "$?" 3 "exits with the program's status (3)"
# A compressor writing to stdout: its output must stay a valid stream.
head -c 3000000 /dev/urandom >"$T/in"
"$PROBE" top -d 0.2 --exit -- xz -c "$T/in" >"$T/in.xz" 2>/dev/null &&
	xz -t "$T/in.xz" 2>/dev/null && xz -dc "$T/in.xz" | cmp -s - "$T/in"
ok $? "probe top -- xz -c in > out.xz: out.xz is the compressed input, whole"
n=$(awk '/^# probe top:/ { r = 0; next } /^ *Self%/ { s = 1; next } /%/ && s { r++ } /^$/ { if (r > m) m = r; s = 0 } END { print m + 0 }' "$T/out2")
is "$n" 2 "-n 2: two rows per snapshot"

"$PROBE" top -d 0 -- true >"$T/out3" 2>"$T/err3"
rc=$?
[ "$rc" -eq 2 ] && grep -q '^probe: top: -d 0: ' "$T/err3" && [ "$(wc -l <"$T/err3")" -eq 1 ]
ok $? "a bad -d is a one-line usage error (exit $rc)"
done_testing
