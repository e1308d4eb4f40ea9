#!/bin/sh
# Every way out flushes what was sampled: exit, _exit, _Exit, return from
# main, pthread_exit from the main thread, exit and _exit from a signal
# handler, and the crashes (SIGSEGV, abort, SIGTERM's default action):
# the program ends the same way (same output, same status or signal), the
# samples of its last burst of work reach the collector, and the EXIT
# record says how it ended.  SIGKILL cannot be caught: what was sent
# before it is kept.  (gt_exit: main_work 120 units, then final_burst 30.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault.sh"
MODES="exit:exit_3 _exit:exit_4 _Exit:exit_5 return:exit_6 pthread_exit:exit_0
handler:exit_7 handler_exit:exit_8 segv:killed_by_SIGSEGV abort:killed_by_SIGABRT
term:killed_by_SIGTERM kill:killed_by_SIGKILL"
n=0
for u in $USERS; do n=$((n + 33)); done
plan $n

PR_OPTS="-F 4999"
for u in $USERS; do
	for mm in $MODES; do
		m=${mm%%:*}
		want=$(echo "${mm#*:}" | tr _ ' ')
		compare "$m" "$u" "$GT/gt_exit" "$m" 120
		rm -f "$T/rec2.probe"
		run_as "$u" "$PROBE" record -F 4999 -o "$T/rec2.probe" -- "$GT/gt_exit" "$m" 120 \
			>/dev/null 2>"$T/sum"
		line=$(proc_lines "$T/sum" | head -1)
		case $line in
		*", $want"*) ok 0 "$m ($u): the summary says '$want'" ;;
		*) ok 1 "$m ($u): the summary says '$want'"; diag "  $line" ;;
		esac
		"$PROBE" report "$T/rec2.probe" >"$T/rep" 2>&1
		a=$(samples_of "$T/rep" main_work)
		b=$(samples_of "$T/rep" final_burst)
		if [ "$m" = kill ]; then
			awk -v a="$a" 'BEGIN { exit !(a > 0) }'
			ok $? "$m ($u): what was sent before SIGKILL is kept ($a samples of main_work)"
		else
			# final_burst is a quarter of main_work: most of it must arrive.
			awk -v a="$a" -v b="$b" 'BEGIN { exit !(a > 100 && b >= 0.15 * a) }'
			r=$?
			ok $r "$m ($u): the last burst arrived: final_burst $b samples for main_work $a (want >= 15 %)"
			[ $r -eq 0 ] || sed 's/^/#   /' "$T/sum"
		fi
	done
done
done_testing
