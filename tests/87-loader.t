#!/bin/sh
# Time in the dynamic loader has callers: a program that dlopens and
# dlcloses libraries in a loop spends its time inside ld.so (relocation,
# symbol lookup, mapping).  Samples taken there are walked with the cached
# frame rules alone (libunwind could deadlock in the loader), which now
# survive dlclose for the objects loaded at start, and step over dlopen's
# return gadget: most samples with ld.so on their stack reach main.
. "$(dirname "$0")/lib.sh"
plan 4

LIBS="libdw.so.1 libncursesw.so.6 libprotobuf-c.so.1"
"$PROBE" record -q -F 999 -o "$T/dl.probe" -- "$GT/gt_dlloop" 1500 $LIBS >"$T/out" 2>"$T/err"
is "$?" 0 "gt_dlloop 1500 rounds of $LIBS: recorded"
grep -q '^rounds 1500$' "$T/out"; ok $? "and ran to its end"
"$PROBE" report --format perf-script "$T/dl.probe" >"$T/ps" 2>&1
# One perf-script block per sample: frames leaf first, "ADDR SYM (DSO)".
set -- $(awk 'BEGIN { RS = "" } /ld-linux/ { n++; if (/\tmain\+|[ \t]main\+/) m++ } END { print n + 0, m + 0 }' "$T/ps")
ld=$1 main=$2
[ "$ld" -ge 200 ]; ok $? "samples with ld.so on the stack: $ld (want >= 200)"
awk -v a="$main" -v b="$ld" 'BEGIN { exit !(b > 0 && a * 100 >= b * 60) }'
ok $? "of those, $main reach main ($(awk -v a="$main" -v b="$ld" 'BEGIN { if (b) printf "%.0f", 100 * a / b }') %, want >= 60 %)"
[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/err" | head -20
done_testing
