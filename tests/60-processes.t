#!/bin/sh
# Every process of the program is profiled: fork without exec (the child
# samples its own threads, with its own HELLO and parent pid), exec (what
# was sampled before is flushed; the new image is profiled and named),
# execlp, vfork, posix_spawn, system(), a failed exec (sampling goes on),
# shell pipelines (a writer killed by SIGPIPE included); one collector gets
# them all, and the record summary gives per-process totals.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault.sh"
n=0
for u in $USERS; do n=$((n + 20)); done
plan $n

PR_OPTS="-F 4999"
P=$GT/gt_proc
for u in $USERS; do
	# fork without exec: three functions, a third each, in two processes.
	compare "fork" "$u" "$P" fork 150
	"$PROBE" report --sort pid "$T/rec.probe" >"$T/bypid" 2>&1
	np=$(awk '!/^#/ && $3 > 0 && $4 ~ /:gt_proc$/' "$T/bypid" | wc -l)
	is "$np" 2 "fork ($u): parent and child both sampled"
	"$PROBE" report --sort pid,tid,comm "$T/rec.probe" >"$T/bytid" 2>&1
	nt=$(awk '!/^#/ && $3 > 0 && $4 ~ /:gt_proc$/' "$T/bytid" | wc -l)
	is "$nt" 3 "fork ($u): --sort pid,tid,comm splits them into 3 threads"
	"$PROBE" report "$T/rec.probe" >"$T/rep" 2>&1
	pw=$(samples_of "$T/rep" parent_work)
	cw=$(samples_of "$T/rep" child_work)
	tw=$(samples_of "$T/rep" child_thread_work)
	awk -v a="$pw" -v b="$cw" -v c="$tw" 'BEGIN { m = (a + b + c) / 3
		exit !(m > 50 && a > 0.7 * m && b > 0.7 * m && c > 0.7 * m) }'
	ok $? "fork ($u): parent_work $pw, child_work $cw, child's thread $tw samples (about equal)"
	run_as "$u" "$PROBE" record -F 4999 -o "$T/rec2.probe" -- "$P" fork 20 >/dev/null 2>"$T/sum"
	ppid=$(proc_lines "$T/sum" | head -1 | sed 's/.* pid \([0-9]*\) .*/\1/')
	child=$(proc_lines "$T/sum" | sed -n 2p)
	case $child in
	*"(parent $ppid) gt_proc:"*"2 threads, exit 0") ok 0 "fork ($u): summary names the child, its parent, 2 threads, exit 0" ;;
	*) ok 1 "fork ($u): summary names the child"; sed 's/^/#   /' "$T/sum" ;;
	esac

	# exec: the samples before it arrive, the new image is named.
	compare "exec" "$u" "$P" exec 100 "$GT/gt_leaf" 30
	"$PROBE" report "$T/rec.probe" >"$T/rep" 2>&1
	pre=$(self_share "$T/rep" pre_exec_work)
	within "$pre" 25 6
	ok $? "exec ($u): pre_exec_work $pre % (want 25 +-6): flushed before exec"
	run_as "$u" "$PROBE" record -o "$T/rec2.probe" -- "$P" exec 30 "$GT/gt_leaf" 10 >/dev/null 2>"$T/sum"
	proc_lines "$T/sum" | grep -q "gt_leaf: $GT/gt_leaf 10 \[exec'd from gt_proc\]: .*exit 0"
	ok $? "exec ($u): summary shows gt_leaf with its argv, exec'd from gt_proc"
	compare "execlp" "$u" env PATH="$GT:/usr/bin:/bin" "$P" execlp 30 gt_leaf 10

	# vfork, posix_spawn, system(): both sides profiled.
	for m in vfork spawn; do
		compare "$m" "$u" "$P" $m 60 "$GT/gt_leaf" 20
		"$PROBE" report "$T/rec.probe" >"$T/rep" 2>&1
		a=$(samples_of "$T/rep" parent_work)
		b=$(samples_of "$T/rep" leaf_five)
		[ "$a" -gt 0 ] && [ "$b" -gt 0 ]
		ok $? "$m ($u): the parent ($a in parent_work) and the child ($b in leaf_five) sampled"
	done
	compare "system" "$u" "$P" system 60 "$GT/gt_leaf 20 | cat"
	"$PROBE" report --sort pid "$T/rec.probe" >"$T/bypid" 2>&1
	np=$(awk '/^# event:/ { for (i = 1; i <= NF; i++) if ($(i+1) ~ /^process/) print $i }' "$T/bypid")
	is "$np" 5 "system ($u): the wrapping sh, gt_proc, sh, gt_leaf and cat all connected"

	# exec fails: the thread samples again afterwards.
	compare "failed exec" "$u" "$P" badexec 100
	"$PROBE" report "$T/rec.probe" >"$T/rep" 2>&1
	a=$(samples_of "$T/rep" parent_work)
	b=$(samples_of "$T/rep" pre_exec_work)
	awk -v a="$a" -v b="$b" 'BEGIN { exit !(b > 50 && a > 0.7 * b) }'
	ok $? "failed exec ($u): $a samples in parent_work after it, $b before (about equal)"

	# Pipelines, with a writer that dies of SIGPIPE.
	compare "pipeline" "$u" sh -c "'$GT/gt_leaf' 60 | '$GT/gt_leaf' 30 >/dev/null; yes | head -n 3; '$GT/gt_leaf' 10 | cat"
	run_as "$u" "$PROBE" record -o "$T/rec2.probe" -- sh -c "'$GT/gt_leaf' 40 | cat; yes | head -n 1" >/dev/null 2>"$T/sum"
	total=$(sed -n 's/^probe: \([0-9]*\) samples.*/\1/p' "$T/sum")
	sum=$(proc_lines "$T/sum" | sed 's/.*: \([0-9]*\) samples, .*/\1/' | awk '{ s += $1 } END { print s + 0 }')
	np=$(proc_lines "$T/sum" | wc -l)
	[ "$np" -ge 5 ] && [ "$total" = "$sum" ]
	ok $? "pipeline ($u): $np processes in the summary, their samples add up ($sum of $total)"
	proc_lines "$T/sum" | grep -Eq 'yes: yes[ :].*killed by SIGPIPE'
	r=$?
	ok $r "pipeline ($u): yes is reported killed by SIGPIPE"
	[ $r -eq 0 ] || sed 's/^/#   /' "$T/sum"
done
done_testing
