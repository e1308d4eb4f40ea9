#!/bin/sh
# C++ exceptions in hot loops, thrown from a linked shared object and from
# one that two threads dlopen and dlclose in a loop, while another walks
# the loaded objects with dl_iterate_phdr: under probe at 999 Hz and at
# 10 kHz the program prints exactly what it prints bare (which objects
# define _Unwind_RaiseException, _Unwind_Backtrace and backtrace included:
# libprobe must not change what the program resolves), and never hangs on
# the dynamic loader's locks (each run has 60 s).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault.sh"
[ -x "$GT/gt_throw" ] || skip_all "gt_throw not built (needs a C++ compiler)"
RUNS=2
n=0
for u in $USERS; do n=$((n + 4 * RUNS + 1)); done
plan $n

ITERS=30000
"$GT/gt_throw" $ITERS >"$T/bare.out" 2>"$T/bare.err"
for u in $USERS; do
	run_as "$u" "$GT/gt_throw" $ITERS >"$T/bare-$u.out" 2>&1
	cmp -s "$T/bare.out" "$T/bare-$u.out"
	ok $? "bare run as $u: $(grep _Unwind_RaiseException "$T/bare-$u.out")"
	for f in 999 10000; do
		for r in $(seq 1 $RUNS); do
			rm -f "$T/x-$u.probe"
			run_as "$u" timeout 60 "$PROBE" record -q -F $f -o "$T/x-$u.probe" -- \
				"$GT/gt_throw" $ITERS >"$T/out" 2>"$T/err"
			rc=$?
			is "$rc" 0 "$f Hz run $r ($u): exits 0 (124: hung)"
			cmp -s "$T/bare.out" "$T/out" && [ "$(grep -vc '^probe: ' "$T/err")" = 0 ]
			ok $? "$f Hz run $r ($u): same output"
			[ "$_tap_fail" -eq 0 ] || { diff "$T/bare.out" "$T/out" | sed 's/^/#   /'; sed 's/^/#   /' "$T/err"; }
		done
	done
done
"$PROBE" report "$T/x-$u.probe" >"$T/rep" 2>&1
diag "$(grep '^# event' "$T/rep")"
done_testing
