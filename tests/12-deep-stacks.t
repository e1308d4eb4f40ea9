#!/bin/sh
# Recursion 60 deep, no frame pointers: at least 99 % of the samples carry
# the whole chain, 60 descend() frames down to main.
. "$(dirname "$0")/lib.sh"
plan 4

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
[ "$_tap_fail" -eq 0 ] || { sort -k2 -n -t' ' "$T/folded" | tail -5 | cut -c1-300 | sed 's/^/#   /'; sed 's/^/#   /' "$T/err" "$T/rerr"; }
done_testing
