#!/bin/sh
# probe top on a terminal (inside tmux): header, shares of the top rows,
# grouping by thread, focus, filtering, the call tree (callees, callers),
# scrolling it, the last view kept
# after the program exits, q.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null 2>&1 || skip_all "tmux is not installed"
plan 22

export TMUX_TMPDIR=$T/tmux
mkdir -p "$TMUX_TMPDIR"
S=probetop$$
trap 'tmux kill-server 2>/dev/null; rm -rf "$T"' EXIT

pane() { tmux capture-pane -p -t "$S"; }
# wait_for PATTERN [SECS]: poll the pane until it shows PATTERN (ERE).
wait_for() {
	_n=$(( ${2:-20} * 5 ))
	while [ "$_n" -gt 0 ]; do
		pane | grep -Eq -- "$1" && return 0
		sleep 0.2
		_n=$((_n - 1))
	done
	diag "timed out waiting for '$1'; the screen:"
	pane | sed 's/^/#   /' | head -30
	return 1
}
# share NAME: Self% of the row whose 4th column is NAME.
share() { pane | awk -v n="$1" '$4 == n { sub("%", "", $1); print $1; exit }'; }

start() {
	tmux new-session -d -s "$S" -x 160 -y 50 \
		"cd '$T' && PROBE_KERNEL=0 '$PROBE' top -d 0.5 -- $*; echo \"EXITED \$?\"; sleep 60"
}

# ---- threads: the last view after the program exited ----
start "$GT/gt_threads" 1100
wait_for 'program exited: gt_threads.* exit 0; q to quit' 60
ok $? "the view says the program exited and stays"
pane | grep -q '^probe top: .*cpu-clock, 999 Hz; cumulative, by function'
ok $? "header: event, rate, cumulative, grouping"
pane | grep -Eq '^threads: 5; samples: [0-9]+ .*lost: 0'
ok $? "header: threads and samples"
tmux send-keys -t "$S" g g
wait_for 'by thread, sorted by self' 10
ok $? "g g groups by thread"
# Bounds from the sample count (binom_tol, four checks: < 1/1000 false
# failures): gt_threads 1100, about 4,000 samples, 0.9 to 2.8 points.
# Before: 600 rounds, 2,200 samples, 3 points: 2.9 standard deviations of
# w4's 40 %, the four checks failing by chance about 1 run in 70.
n=$(pane | sed -n 's/^threads: [0-9]*; samples: \([0-9]*\).*/\1/p')
fail=0
for w in 1 2 3 4; do
	v=$(share w$w)
	tol=$(binom_tol "${n:-1}" "0.$w" 4)
	within "$v" $((w * 10)) "$tol" || { fail=1; diag "w$w: $v%, want $((w * 10)) +-$tol ($n samples)"; }
done
ok $fail "thread shares 10/20/30/40 % (bounds from the $n samples)"
tmux send-keys -t "$S" f
wait_for 'focus: thread w4' 10
ok $? "f focuses the selected thread (w4, the top row)"
tmux send-keys -t "$S" F q
wait_for '^EXITED 0' 10
ok $? "q quits with the program's status"
tmux kill-session -t "$S" 2>/dev/null

# ---- leaf functions: shares, filter, callers/callees ----
start "$GT/gt_leaf" 3000
# 6,000 samples before the shares are read: lib.sh's leaf_checks, bounds
# from the leaves' count (about 2.3/2.1/1.8 points, < 1/1000 false
# failures).  Before: from 2,000 samples, 3 points of all: 2.2 standard
# deviations of leaf_five's 50 % once its 0.6-point bias is counted (its
# start and exit), about 1 run in 70.
wait_for 'samples: ([6-9][0-9]{3}|[0-9]{5,}) ' 60 && wait_for ' leaf_two ' 10
ok $? "rows appear while the program runs"
pane >"$T/pane"
leaf_checks "$T/pane" "leaf shares: "
tmux send-keys -t "$S" / t h r e e Enter
wait_for 'filter: "three"' 10
ok $? "/ sets a filter"
sleep 1
n=$(pane | grep -c ' leaf_')
v=$(pane | grep -c ' leaf_three ')
is "$n/$v" "1/1" "the filter leaves only leaf_three"
tmux send-keys -t "$S" / Escape
sleep 1
wait_for ' leaf_five ' 10
ok $? "Esc clears the filter"
tmux send-keys -t "$S" / f i v e Enter
wait_for 'filter: "five"' 10 && tmux send-keys -t "$S" Enter
wait_for 'Callers and callees of leaf_five \(gt_leaf\)' 10
ok $? "Enter shows callers and callees of the selected function"
pane | grep -A1 '^Callers:' | grep -q ' main '
ok $? "main is leaf_five's caller"
# the callers tree: main, and one level further (indented deeper) its caller
pane | awk '/^Callers:/ { c = 1; next }
	c == 1 { m = $3 == "main"; i1 = index($0, " " $3 " "); c = 2; next }
	c == 2 { l = $3 == "__libc_start_call_main"; i2 = index($0, " " $3 " "); exit }
	END { exit !(m && l && i2 == i1 + 2) }'
ok $? "two levels of callers: main, then __libc_start_call_main under it"
tmux send-keys -t "$S" Escape
wait_for '^ *Self% +Total%' 10
# the callees tree of main: select it (filter, sort by name, the last row;
# user space only, above: no kernel function such as *_domain matches)
tmux send-keys -t "$S" / Escape
sleep 0.5
tmux send-keys -t "$S" / m a i n Enter
wait_for 'filter: "main"' 10 && tmux send-keys -t "$S" s s
wait_for 'sorted by name' 10 && tmux send-keys -t "$S" End
sleep 1
tmux send-keys -t "$S" Enter
wait_for 'Callers and callees of main \(gt_leaf\)' 10
ok $? "Enter shows the call tree of main"
sleep 1
fail=0
for f in leaf_five:50 leaf_three:30 leaf_two:20; do
	# Total% of the node one level under main, above "Callers:"
	v=$(pane | awk -v n="${f%:*}" '/^Callers:/ { exit }
		$3 == "main" && !i { i = index($0, " main ") }
		i && $3 == n && index($0, " " n " ") == i + 2 { sub("%", "", $1); print $1; exit }')
	within "$v" "${f#*:}" 3 || { fail=1; diag "${f%:*} under main: $v%, want ${f#*:}"; }
done
# (Read after more than 6,000 samples: 3 points less the 0.6-point bias
# are 3.7 standard deviations of leaf_five's share, the three checks
# failing by chance in fewer than 1 run of 1,000.)
ok $fail "main's callees tree: leaf_five/leaf_three/leaf_two under it, 50/30/20 % (+-3)"
# a window too short for the tree: Down scrolls it by a line
tmux resize-window -t "$S" -y 14
sleep 1
tmux send-keys -t "$S" Down
sleep 1
pane | grep -A1 'Call tree$' | tail -1 | grep -q ' leaf_five '
ok $? "the call tree scrolls (Down)"
tmux resize-window -t "$S" -y 50
tmux send-keys -t "$S" Escape
wait_for '^ *Self% +Total%' 10
# a: the selected function's instructions, the hottest in view
tmux send-keys -t "$S" / Escape
sleep 0.5
tmux send-keys -t "$S" / f i v e Enter
wait_for 'filter: "five"' 10 && tmux send-keys -t "$S" Home a
wait_for 'Annotation of leaf_five \(gt_leaf\)' 10 &&
	wait_for '^ +[0-9.]+ +[0-9]+ : +[0-9a-f]+:   (addsd|subq|mulsd|jne)' 10 &&
	pane | awk '/^ +[0-9.]+ +[0-9]+ : +[0-9a-f]+:   / && $1 >= 20 { n++ } END { exit !n }'
ok $? "a annotates leaf_five: its loop's instructions, one with 20 % or more of its samples"
tmux send-keys -t "$S" Escape
wait_for '^ *Self% +Total%' 10
tmux send-keys -t "$S" q
wait_for '^EXITED' 10
ok $? "Esc goes back, q quits while the program runs"
done_testing
