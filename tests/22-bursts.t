#!/bin/sh
# Bursts of samples survive (issue 23, point 3).  gt_burst touches 51,200
# fresh pages on one thread, recorded with -e page-faults -c 1: a sample per
# fault, as fast as the handler lets it run (90,000 to 170,000 a second
# here; the base build lost 8,400 to 11,700 of them to its 32 KiB ring, read
# every 10 ms).  Now a ring past half full wakes the collector (a byte on
# the arena's wake socket) and grows to 256 KiB: at most 1 % may be lost.
# Paced at 20,000 faults a second, none.  The profiler's own faults
# (libunwind's first walks, a ring's new pages, liblzma's .fini at exit)
# are [probe]'s, never a libunwind or liblzma row.
#
# Under load: what the bounds need is that the collector runs within the
# time half a ring takes to fill once it is woken: 3,800 samples of ~34
# bytes, 22 ms at 170,000 a second (a loaded machine also slows the
# program, which makes it longer) for the burst, 190 ms at 20,000 a second.
# The burst's 1 % is 512 samples: a collector kept off both CPUs for 25 ms
# past its wakeup loses about that many; nothing random is counted here.
. "$(dirname "$0")/lib.sh"
plan 9

B=$GT/gt_burst
[ -x "$B" ] || B=$ROOT/build/tests/gt_burst     # PROBE_BUILD=an older build

# $1: recording; prints "SAMPLES LOST" from its header.
counts() {
	"$PROBE" report --header-only "$1" 2>/dev/null |
		awk -F'[:;]' '/^# samples *:/ { s = $2 + 0; l = $4 + 0; print s, l; exit }'
}

"$PROBE" record -e page-faults -c 1 -o "$T/burst.data" -- "$B" 51200 >"$T/burst.out" 2>"$T/burst.err"
is "$?" 0 "probe record -e page-faults -c 1 gt_burst 51200 exits 0"
diag "$(cat "$T/burst.out")"
set -- $(counts "$T/burst.data")
s=${1:-0} l=${2:-99999}
diag "burst: $s samples, $l lost"
[ "$((s + l))" -ge 51200 ]
ok $? "every fault is a sample or counted as lost ($s + $l >= 51200)"
[ "$((l * 100))" -le "$((s + l))" ]
ok $? "the burst lost $l of $((s + l)) (at most 1 %)"

"$PROBE" report "$T/burst.data" >"$T/burst.rep" 2>/dev/null
n=$(awk '$4 == "touch_pages" { print $3; exit }' "$T/burst.rep")
[ "${n:-0}" -ge "$((51200 - l))" ]
ok $? "touch_pages has its faults: ${n:-0} samples (>= $((51200 - l)))"
rows=$(awk '!/^#/ && ($NF ~ /^libunwind/ || $NF ~ /^liblzma/) && $3 > 0' "$T/burst.rep")
is "$rows" "" "no sample is a libunwind or liblzma row (the profiler's own faults)"
p=$(awk '$4 == "[probe]" { print $3; exit }' "$T/burst.rep")
[ "${p:-0}" -ge 1 ]
ok $? "the profiler's own faults are [probe]'s: ${p:-0} samples"

"$PROBE" record -e page-faults -c 1 -o "$T/paced.data" -- "$B" 20000 20000 >"$T/paced.out" 2>"$T/paced.err"
is "$?" 0 "probe record gt_burst 20000 20000 (20,000 faults a second) exits 0"
diag "$(cat "$T/paced.out")"
set -- $(counts "$T/paced.data")
diag "paced: ${1:-?} samples, ${2:-?} lost"
is "${2:-none}" 0 "none lost at 20,000 a second"
[ "${1:-0}" -ge 20000 ]
ok $? "every fault is a sample (${1:-0} >= 20000)"

done_testing
