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
# the rules of what it unloaded (before: 2 of 718 reached main), and the
# collector learns that caller's rule though the loop dlcloses every few
# hundred microseconds (before, each pass that met a dlclose gave up: the
# first 45 ms of walks stopped at the caller, 92 to 98 % reached main and a
# CI run failed; now 97 to 99 %, 97 % with both cores busy).  And in
# short processes started one after another (an interpreter run in a loop):
# each starts with the rules learned for the same files in the earlier ones
# (before: 0 of 239).  Inside the loader, a frame of an object loaded at
# start (ld.so, libc, the program) whose rule the collector has not learned
# yet is read by the handler from the object's own .eh_frame (cfi.c's
# local_rule): before, 39 to 68 % of the samples reached main without
# kernel time (a CI run failed its 40 % bound), 68 % in short processes,
# 79 % of python3's importing C extensions; now 98 to 100 %.
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
# reach LABEL LD MAIN MIN_LD: at least MIN_LD samples with ld.so on the
# stack, and of those as many reaching main as a rate of 95 % gives but
# once in 1,000 runs (binom_min: the exact binomial lower tail at LD
# samples; 156 of 175, 780 of 843).  The walks reach main 97 to 100 % of
# the time here, with both cores busy too: the chance of a false failure
# is below 1/1000 (far below at 98 %).  Before the handler read the
# loader's rules itself, 68 to 91 %: each bound failed.
reach() {
	[ "$2" -ge "$4" ]; ok $? "$1: samples with ld.so on the stack: $2 (want >= $4)"
	min=$(binom_min "$2" 0.95)
	[ "$2" -gt 0 ] && [ "$3" -ge "$min" ]
	ok $? "$1: of those, $3 reach main ($(awk -v a="$3" -v b="$2" 'BEGIN { if (b) printf "%.1f", 100 * a / b }') %, want >= $min: 95 % less 1/1000 chance)"
}
set -- $(count "$T/dl.probe")
reach "default" "$1" "$2" 100
# Without kernel time fewer samples fall in the loader (175 here): more
# rounds than with it, for a count whose bound is tight enough.
PROBE_KERNEL=0 "$PROBE" record -q -F 999 -o "$T/u.probe" -- "$GT/gt_dlloop" 3000 $LIBS >/dev/null 2>>"$T/err"
set -- $(count "$T/u.probe")
reach "PROBE_KERNEL=0" "$1" "$2" 100
VIA=$BUILD/tests/libgt_dlvia.so
"$PROBE" record -q -F 999 -o "$T/via.probe" -- "$GT/gt_dlloop" --via "$VIA" 1500 $LIBS >/dev/null 2>>"$T/err"
set -- $(count "$T/via.probe")
reach "dlopen called from a dlopen'ed object" "$1" "$2" 100
"$PROBE" record -q -F 999 -o "$T/fresh.probe" -- \
	sh -c "for i in \$(seq 40); do '$GT/gt_dlloop' 10 $LIBS >/dev/null; done" 2>>"$T/err"
set -- $(count "$T/fresh.probe")
reach "40 short processes" "$1" "$2" 60
[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/err" | head -20
done_testing
