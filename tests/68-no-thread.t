#!/bin/sh
# libprobe adds no thread to the program, and what it samples reaches the
# recording whatever happens to the program:
#   - the program sees its own thread count and glibc's single-thread state
#     (probe record and LD_PRELOAD alone);
#   - a program that drops privileges (setpriv: glibc changes credentials
#     on every thread) runs as it does bare;
#   - a program that SIGKILLs itself keeps >= 95 % of its samples, with
#     probe record and with LD_PRELOAD alone;
#   - a background descendant (sh -c 'app &') is recorded whole, and no
#     stray ./probe.data appears;
#   - a program in its own PID namespace is profiled, nothing dropped.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault.sh"
n=0
for u in $USERS; do n=$((n + 10)); done
plan $((n + 5))

S=$GT/gt_self
# 1.5 s of CPU time at 999 Hz.
KILL_WANT=$((1500 * 999 * 95 / 100 / 1000))

for u in $USERS; do
	compare "one thread" "$u" "$S" threads
	grep -q '^Threads:[[:space:]]*1$' "$T/probe.out" && grep -q '^single_threaded 1$' "$T/probe.out"
	ok $? "one thread ($u): the program sees 1 thread and glibc's single-thread state: $(tr '\n' ' ' <"$T/probe.out")"

	rm -rf "$T/pre-$u"
	mkdir -m 0777 "$T/pre-$u"
	(cd "$T/pre-$u" && run_as "$u" env LD_PRELOAD="$LIBPROBE" "$S" threads >"$T/pre.out" 2>"$T/pre.err")
	cmp -s "$T/bare.out" "$T/pre.out"
	ok $? "one thread, LD_PRELOAD alone ($u): same output: $(tr '\n' ' ' <"$T/pre.out")"

	# SIGKILL: what was sampled is in the arena, which the collector reads.
	rm -f "$T/kill.probe"
	run_as "$u" "$PROBE" record -o "$T/kill.probe" -- "$S" kill 1500 >"$T/out" 2>"$T/err"
	is "$?" 137 "SIGKILL ($u): probe record exits as the program did (137)"
	"$PROBE" report "$T/kill.probe" >"$T/rep" 2>&1
	a=$(samples_of "$T/rep" spin_kill)
	[ "$a" -ge "$KILL_WANT" ]
	ok $? "SIGKILL ($u): $a samples of 1498 expected kept (want >= $KILL_WANT)"
	grep -q "^probe:   pid .* gt_self: .* killed by SIGKILL (it sent no exit record" "$T/err"
	ok $? "SIGKILL ($u): the summary says how it ended"

	rm -rf "$T/k-$u"
	mkdir -m 0777 "$T/k-$u"
	(cd "$T/k-$u" && run_as "$u" env LD_PRELOAD="$LIBPROBE" "$S" kill 1500 >/dev/null 2>&1)
	# The collector libprobe started writes the file as soon as the
	# connection ends; give it a moment to notice.
	for _i in $(seq 1 50); do
		"$PROBE" report "$T/k-$u/probe.data" >"$T/rep" 2>&1 &&
			[ "$(samples_of "$T/rep" spin_kill)" -ge "$KILL_WANT" ] && break
		sleep 0.1
	done
	a=$(samples_of "$T/rep" spin_kill)
	[ "$a" -ge "$KILL_WANT" ]
	ok $? "SIGKILL, LD_PRELOAD alone ($u): $a samples kept in ./probe.data (want >= $KILL_WANT)"

	# A background descendant outlives the command: the recording waits.
	rm -rf "$T/bg-$u"
	mkdir -m 0777 "$T/bg-$u"
	(cd "$T/bg-$u" && run_as "$u" "$PROBE" record -o "$T/bg-$u/bg.probe" -- \
		sh -c "'$GT/gt_leaf' 200 >/dev/null &" >"$T/out" 2>"$T/err")
	is "$?" 0 "background ($u): probe record exits with the command's status"
	"$PROBE" report "$T/bg-$u/bg.probe" >"$T/rep" 2>&1
	a=$(samples_of "$T/rep" leaf_five)
	[ "$a" -gt 250 ]
	ok $? "background ($u): the whole of the backgrounded program is recorded ($a samples of leaf_five, want > 250)"
	[ ! -e "$T/bg-$u/probe.data" ]
	ok $? "background ($u): no stray ./probe.data"
	[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/err" "$T/pre.err" | head -20
done

# Dropping privileges: glibc's setxid broadcast reaches the program's
# threads only (a thread of probe's without the capabilities made it abort).
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
	compare "setpriv" me setpriv --reuid=nobody --regid=nogroup --clear-groups /bin/echo hi
	is "$(cat "$T/probe.out")" "hi" "setpriv: prints hi under probe record"
	(cd "$T" && LD_PRELOAD="$LIBPROBE" setpriv --reuid=nobody --regid=nogroup \
		--clear-groups /bin/echo hi >"$T/pre.out" 2>"$T/pre.err")
	st=$?
	[ "$st" -eq 0 ] && [ "$(cat "$T/pre.out")" = hi ]
	ok $? "setpriv, LD_PRELOAD alone: prints hi, exit $st"
else
	skip "setpriv: needs root and a user nobody"
	skip "setpriv: needs root and a user nobody"
	skip "setpriv: needs root and a user nobody"
fi

# A PID namespace: the program calls itself pid 1.
if [ "$(id -u)" -eq 0 ] && unshare -pf --mount-proc true 2>/dev/null; then
	"$PROBE" record -o "$T/ns.probe" -- unshare -pf --mount-proc "$GT/gt_leaf" 200 \
		>/dev/null 2>"$T/err"
	"$PROBE" report "$T/ns.probe" >"$T/rep" 2>&1
	a=$(samples_of "$T/rep" leaf_five)
	grep -q '^probe: [0-9]* samples (lost: 0[;)]' "$T/err" && [ "$a" -gt 250 ] &&
		! grep -q 'sent a frame for process' "$T/err"
	ok $? "PID namespace: profiled ($a samples of leaf_five), nothing dropped: $(grep '^probe: [0-9]* samples' "$T/err")"
	grep -q '^probe:   pid [0-9]* (parent [0-9]*) gt_leaf: .*exit 0' "$T/err"
	ok $? "PID namespace: the program has its line, under its pid as we see it"
	[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/err" | head -10
else
	skip "PID namespace: needs root and unshare -p"
	skip "PID namespace: needs root and unshare -p"
fi
done_testing
