#!/bin/sh
# probe report rejects what is not a good recording with one clear
# "probe:" line and a non-zero exit, and never crashes.
. "$(dirname "$0")/lib.sh"
plan 13

# check NAME FILE: exit 1, one probe: line, not killed by a signal
check() {
	"$PROBE" report "$2" >"$T/out" 2>"$T/err"
	rc=$?
	is "$rc" 1 "$1: exit status 1"
	first=$(head -n1 "$T/err")
	case $first in
	probe:*) ok 0 "$1: says '$first'" ;;
	*) ok 1 "$1: no probe: message"; sed 's/^/#   /' "$T/err" | head -5 ;;
	esac
}

check "missing file" "$T/nope.probe"
: >"$T/empty"; check "empty file" "$T/empty"
head -c 65536 /dev/urandom >"$T/garbage"; check "random bytes" "$T/garbage"
# A real header followed by a frame claiming 2 GiB.
printf 'PROBEREC\001\000\000\000\020\000\000\000\000\000\000\200\001\000\000\000\001\000\000\000' >"$T/huge"
check "oversized frame" "$T/huge"
# A real header followed by a well-sized frame with a bad body.
printf 'PROBEREC\001\000\000\000\020\000\000\000\020\000\000\000\004\000\000\000\001\000\000\000\377\377\377\377' >"$T/badbody"
check "SAMPLES frame with a short body" "$T/badbody"

# A truncated recording still reports what it has, with a warning.
"$PROBE" record -q -o "$T/good.probe" -- "$GT/gt_leaf" 100 >/dev/null 2>&1
size=$(stat -c %s "$T/good.probe")
head -c $((size - 7)) "$T/good.probe" >"$T/trunc.probe"
"$PROBE" report "$T/trunc.probe" >"$T/out" 2>"$T/err"
is "$?" 0 "truncated recording: still reported"
grep -q '^probe: .*trunc' "$T/err"; ok $? "truncated recording: warned ($(head -n1 "$T/err"))"
grep -q leaf_five "$T/out"; ok $? "truncated recording: samples before the cut are shown"
[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/out" | head
done_testing
