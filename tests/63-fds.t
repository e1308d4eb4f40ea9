#!/bin/sh
# A program that closes every descriptor above 2 (a close() loop, one over
# /proc/self/fd, close_range, closefrom, the raw close_range system call,
# dup2 onto every number, a daemon that closes 0-2 too) keeps running with
# the same output, and probe recovers: the work after the closing, in a
# thread started after it, and in a child forked after it are all in the
# recording; at most one probe: line.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault.sh"
MODES="loop proc close_range closefrom raw dup2 daemon"
n=0
for u in $USERS; do n=$((n + 21)); done
plan $n

for u in $USERS; do
	for m in $MODES; do
		rm -f "$T/bare.file" "$T/probe.file" "$T/rec.probe"
		run_as "$u" "$GT/gt_fds" $m 60 "$T/bare.file" >"$T/bare.out" 2>"$T/bare.err"
		b=$?
		run_as "$u" "$PROBE" record -q -F 4999 -o "$T/rec.probe" -- \
			"$GT/gt_fds" $m 60 "$T/probe.file" >"$T/probe.out" 2>"$T/probe.err"
		p=$?
		[ "$b" = "$p" ] && cmp -s "$T/bare.file" "$T/probe.file" &&
			cmp -s "$T/bare.out" "$T/probe.out"
		ok $? "$m ($u): same output and exit status ($p)"
		"$PROBE" report "$T/rec.probe" >"$T/rep" 2>&1
		a=$(samples_of "$T/rep" after_close_work)
		t=$(samples_of "$T/rep" thread_work)
		c=$(samples_of "$T/rep" child_work)
		[ "$a" -gt 60 ] && [ "$t" -gt 60 ] && [ "$c" -gt 60 ]
		ok $? "$m ($u): sampled after the closing: $a after_close_work, $t in a new thread, $c in a new child (want > 60 each)"
		k=$(grep -c '^probe: ' "$T/probe.err")
		[ "$k" -le 1 ]
		ok $? "$m ($u): $k probe: line(s) (at most 1)"
		[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/probe.err" "$T/bare.file" "$T/probe.file" | head -10
	done
done
done_testing
