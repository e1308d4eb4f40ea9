#!/bin/sh
# Recursion 60 deep, no frame pointers: at least 99 % of the samples carry
# the whole chain, 60 descend() frames down to main.  PROBE_HANDLER_STATS=1
# (what scripts/bench reads) counts every signal and the frames it unwound.
# PROBE_UNWIND=check walks every stack both ways, libprobe's cached frame
# rules (cfi.c) and libunwind: they must agree on every frame, and the fast
# path must take nearly all of the samples once its rules are learned.
. "$(dirname "$0")/lib.sh"
plan 10

"$PROBE" record -q -F 2999 -o "$T/rec.probe" -- "$GT/gt_recurse" 3000 60 >"$T/out" 2>"$T/err"
is "$?" 0 "probe record exits with the program's status"
"$PROBE" report --format folded "$T/rec.probe" >"$T/folded" 2>"$T/rerr"
is "$?" 0 "probe report --format folded succeeds"
# Folded lines: exe;outermost;...;leaf COUNT
awk '{ n = $NF; total += n; line = $0; sub(/ [0-9]+$/, "", line)
       k = split(line, f, ";"); d = 0; m = 0
       for (i = 1; i <= k; i++) { if (f[i] == "descend") d++; if (f[i] == "main") m = 1 }
       if (d >= 60 && m) full += n }
     END { printf "%d %d\n", full, total }' "$T/folded" >"$T/counts"
read full total <"$T/counts"
diag "$full of $total samples carry 60 x descend down to main"
awk -v f="$full" -v t="$total" 'BEGIN { exit !(t >= 1000 && f >= 0.99 * t) }'
ok $? "at least 99 % of samples have the full chain ($full / $total)"
grep -q 'main;descend;descend' "$T/folded"
ok $? "folded stacks run from main (caller) towards descend (callee)"

# 60 descend + bottom + main + libc's three start frames = 65 per stack.
PROBE_HANDLER_STATS=1 "$PROBE" record -q -F 999 -o "$T/h.probe" -- "$GT/gt_recurse" 300 60 >"$T/out" 2>"$T/err"
line=$(grep '^probe: handler: ' "$T/err")
diag "$line"
n=$("$PROBE" report "$T/h.probe" 2>/dev/null | sed -n 's/^# event: .*; \([0-9]*\) samples.*/\1/p')
sig=$(echo "$line" | sed -n 's/^probe: handler: \([0-9]*\) signals.*/\1/p')
[ -n "$sig" ] && [ "$sig" -gt 50 ] && [ "$sig" -le "${n:-0}" ] && [ "$sig" -ge $(( ${n:-0} * 95 / 100 )) ]
ok $? "PROBE_HANDLER_STATS: one line, a signal per sample ($sig signals, $n samples)"
echo "$line" | grep -Eq ' 6[45]\.[0-9] frames per unwound stack; mean [0-9]+ ns, p50 < [0-9]+ ns, p99 < [0-9]+ ns, max [0-9]+ ns$'
ok $? "PROBE_HANDLER_STATS: about 65 frames per stack, mean, p50, p99, max"

for p in "gt_recurse 1500 60" "gt_cxx 1500" "gt_threads 100" "gt_leaf 300"; do
	PROBE_UNWIND=check "$PROBE" record -q -F 2999 -o "$T/c.probe" -- $(echo "$GT/$p") >"$T/out" 2>"$T/err"
	line=$(grep '^probe: unwind check: ' "$T/err" | head -n1)
	n=$("$PROBE" report "$T/c.probe" 2>/dev/null | sed -n 's/^# event: .*; \([0-9]*\) samples.*/\1/p')
	w=$(echo "$line" | sed -n 's/^probe: unwind check: \([0-9]*\) stacks walked both ways, \([0-9]*\) differ.*/\1 \2/p')
	set -- $w
	[ -n "$w" ] && [ "$2" -eq 0 ] && [ "$1" -ge $(( ${n:-0} * 80 / 100 )) ] && [ "$1" -gt 200 ]
	ok $? "PROBE_UNWIND=check, ${p%% *}: ${1:-?} of ${n:-?} stacks by the fast path, ${2:-?} differ from libunwind"
	[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/err" | head -5
done
[ "$_tap_fail" -eq 0 ] || { sort -k2 -n -t' ' "$T/folded" | tail -5 | cut -c1-300 | sed 's/^/#   /'; sed 's/^/#   /' "$T/err" "$T/rerr"; }
done_testing
