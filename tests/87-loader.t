#!/bin/sh
# Time in the dynamic loader has callers: a program that dlopens and
# dlcloses libraries in a loop spends its time inside ld.so (relocation,
# symbol lookup, mapping).  Samples taken there are walked with the cached
# frame rules alone (libunwind could deadlock in the loader), which now
# survive dlclose for the objects loaded at start; a frame without a rule
# is stepped over by finding its return address on the stack; dlopen's
# return gadget is stepped over as its ret does: most samples with ld.so on
# their stack reach main, with kernel time (the default as root) and
# without (PROBE_KERNEL=0).  The same when the code calling dlopen was
# itself loaded with dlopen (as Python's _ctypes): a dlclose forgets only
# the rules of what it unloaded (before: 2 of 718 reached main).  And in
# short processes started one after another (an interpreter run in a loop):
# each starts with the rules learned for the same files in the earlier ones
# (before: 0 of 239).
. "$(dirname "$0")/lib.sh"
plan 10

LIBS="libdw.so.1 libncursesw.so.6 libprotobuf-c.so.1"
"$PROBE" record -q -F 999 -o "$T/dl.probe" -- "$GT/gt_dlloop" 1500 $LIBS >"$T/out" 2>"$T/err"
is "$?" 0 "gt_dlloop 1500 rounds of $LIBS: recorded"
grep -q '^rounds 1500$' "$T/out"; ok $? "and ran to its end"
# One perf-script block per sample: frames leaf first, "ADDR SYM (DSO)".
count() {
	"$PROBE" report --format perf-script "$1" >"$T/ps" 2>&1
	awk 'BEGIN { RS = "" } /ld-linux/ { n++; if (/[ \t]main\+/) m++ } END { print n + 0, m + 0 }' "$T/ps"
}
# reach LABEL LD MAIN MIN_LD PERCENT
reach() {
	[ "$2" -ge "$4" ]; ok $? "$1: samples with ld.so on the stack: $2 (want >= $4)"
	awk -v a="$3" -v b="$2" -v p="$5" 'BEGIN { exit !(b > 0 && a * 100 >= b * p) }'
	ok $? "$1: of those, $3 reach main ($(awk -v a="$3" -v b="$2" 'BEGIN { if (b) printf "%.0f", 100 * a / b }') %, want >= $5 %)"
}
set -- $(count "$T/dl.probe")
reach "default" "$1" "$2" 100 60
# Without kernel time fewer samples fall at system-call boundaries, where
# the loader's frames are easiest to walk: 52 to 61 % reached main over six
# runs here, 48 % once in CI (about 140 samples, so one run varies by +-4
# points), so the bound is 40 %.
PROBE_KERNEL=0 "$PROBE" record -q -F 999 -o "$T/u.probe" -- "$GT/gt_dlloop" 1500 $LIBS >/dev/null 2>>"$T/err"
set -- $(count "$T/u.probe")
reach "PROBE_KERNEL=0" "$1" "$2" 50 40
VIA=$BUILD/tests/libgt_dlvia.so
"$PROBE" record -q -F 999 -o "$T/via.probe" -- "$GT/gt_dlloop" --via "$VIA" 1500 $LIBS >/dev/null 2>>"$T/err"
set -- $(count "$T/via.probe")
reach "dlopen called from a dlopen'ed object" "$1" "$2" 100 60
"$PROBE" record -q -F 999 -o "$T/fresh.probe" -- \
	sh -c "for i in \$(seq 40); do '$GT/gt_dlloop' 10 $LIBS >/dev/null; done" 2>>"$T/err"
set -- $(count "$T/fresh.probe")
reach "40 short processes" "$1" "$2" 60 30
[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/err" | head -20
done_testing
