#!/bin/sh
# probe top names processes and threads as they are now: a process that
# exec's takes its new program's name, in the header, the exit lines, the
# thread and process rows and the recording -o writes (issue 23: a script
# running head | md5sum showed "dash klmno klmno"); and a name wider than
# its column keeps its start and ends in '+', in text snapshots narrowed
# by COLUMNS as on a narrow terminal.
. "$(dirname "$0")/lib.sh"
plan 12

# A script with a name longer than a comm (15 bytes): its shell runs a
# while (samples before its exec), three times a pipeline of two children
# that exec head and md5sum (7 MB of /dev/urandom: about 0.03 s of CPU
# each), then exec's gt_names, whose one function has a name wider than
# its column.  Seven processes: top lists each one's exit up to eight.
# (Before the fix a child was misnamed when its image before exec still
# had a thread's name unread as the new one said HELLO: about half of them,
# so six children make a failure all but certain there; now never.)
S=$T/abcdefghijklmnopqrst
F=names_a_function_whose_name_is_wider_than_the_column
cat >"$S" <<EOF
#!/bin/sh
i=0
while [ \$i -lt 60000 ]; do i=\$((i + 1)); done
for k in 1 2 3; do head -c 7000000 /dev/urandom | md5sum >/dev/null; done
exec "$GT/gt_names"
EOF
chmod 0755 "$S"

# The last snapshot of a text run: after its last '# probe top:' line.
last() {
	awk '/^# probe top:/ { buf = "" } { buf = buf $0 "\n" } END { printf "%s", buf }' "$1"
}
# NAME[PID] pairs of the last snapshot's processes line, one a line, by pid
# (NAME[PID]-: no longer connected, as the line's note says).
procs_of() {
	last "$1" | sed -n 's/^# processes: [0-9]* seen, [0-9]* connected: //p' |
		sed 's/ (-: no longer connected)$//' | tr ' ' '\n' | sed 's/-$//' | sort -t '[' -k2n
}

# ---- text snapshots: the names after exec ----
(cd "$T" && env -u COLUMNS "$PROBE" top -d 0.2 --exit -o "$T/s.probe" -- ./abcdefghijklmnopqrst \
	>"$T/s.stdout" 2>"$T/s.out")
is "$?" 0 "probe top -- ./abcdefghijklmnopqrst exits 0"
procs_of "$T/s.out" >"$T/procs"
names=$(sed 's/\[.*//' "$T/procs" | sort | tr '\n' ' ')
is "$names" "gt_names head head head md5sum md5sum md5sum " "the processes line names the programs they exec'd"
[ -s "$T/procs" ] || diag "no processes line; the output: $(tail -20 "$T/s.out")"
pid=$(sed -n '1s/.*\[\([0-9]*\)\]$/\1/p' "$T/procs")
last "$T/s.out" | grep -Eq "^# program exited: gt_names\\[$pid\\] exit 0\$"
ok $? "the program's exit line names what it exec'd (gt_names[$pid])"
n=$(last "$T/s.out" | grep -Ec '^# exited: (head|md5sum)\[[0-9]+\] exit 0$')
is "$n" 6 "the children's exit lines name head and md5sum"
# What top saved says the same: each pid's last image in the recording.
"$PROBE" report --header-only "$T/s.probe" >"$T/hdr" 2>&1
awk '/^# +[0-9]+ +[0-9]+ +[0-9]+ / && $5 != "exec'"'"'d" {
	c = $0; sub(/^# +[0-9]+ +[0-9]+ +[0-9]+ +[a-z0-9 ]*  +/, "", c); sub(/:.*/, "", c)
	print c "[" $2 "]" }' "$T/hdr" | sort -t '[' -k2n >"$T/rec"
cmp -s "$T/rec" "$T/procs"
ok $? "the names are those of the recording top wrote (-o)"
[ $? -eq 0 ] || diag "top: $(tr '\n' ' ' <"$T/procs"); recording: $(tr '\n' ' ' <"$T/rec")"

# ---- text snapshots 60 columns wide ----
COLUMNS=60 "$PROBE" top -d 0.2 --exit -- "$GT/gt_names" >/dev/null 2>"$T/n.out"
is "$?" 0 "COLUMNS=60 probe top -- gt_names exits 0"
# Rows and their heading; the '#' lines stay whole (they carry the figures).
wide=$(awk '!/^#/ && length($0) > 60' "$T/n.out" | wc -l)
rows=$(last "$T/n.out" | grep -c '%')
[ "$wide" -eq 0 ] && [ "$rows" -ge 1 ]
ok $? "no row of the snapshots is wider than COLUMNS (60): $wide wider, $rows rows"
# The name column is 16 wide: its first 15 characters, then the mark.
last "$T/n.out" | awk -v n="$(echo "$F" | cut -c1-15)+" '$4 == n { f = 1 } END { exit !f }'
ok $? "the long name keeps its start and ends in '+' ($(echo "$F" | cut -c1-15)+)"
last "$T/n.out" | grep -q 'wider_than_the_column'
ok $((! $?)) "its end is what was cut"

# ---- the terminal view, 72 columns: thread and process rows ----
if ! command -v tmux >/dev/null 2>&1; then
	for i in 1 2 3; do skip "tmux is not installed"; done
	done_testing
fi
export TMUX_TMPDIR=$T/tmux
mkdir -p "$TMUX_TMPDIR"
X=probenames$$
trap 'tmux kill-server 2>/dev/null; rm -rf "$T"' EXIT
pane() { tmux capture-pane -p -t "$X"; }
wait_for() {	# wait_for ERE [SECS]
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
# COLUMNS and LINES unset: the screen's own size, not the test's.
tmux new-session -d -s "$X" -x 72 -y 30 \
	"cd '$T' && env -u COLUMNS -u LINES '$PROBE' top -d 0.3 -- ./abcdefghijklmnopqrst; sleep 60"
wait_for 'program exited: gt_names\[[0-9]+\] exit 0; q to quit' 30
pid=$(pane | sed -n 's/.*program exited: gt_names\[\([0-9]*\)\].*/\1/p')
# 72 columns leave 18 for names: 17 characters of it, then the mark.
pane | awk -v n="$(echo "$F" | cut -c1-17)+" '$4 == n { f = 1 } END { exit !f }'
ok $? "the terminal view cuts the long name at its end: $(echo "$F" | cut -c1-17)+"
tmux send-keys -t "$X" g g
wait_for 'Process pid/tid' 10 >/dev/null
# The shell's main thread, sampled before and after its exec: one row.
row=$(pane | awk -v id="$pid/$pid" '$NF == id { print $4, $5 }')
is "$row" "gt_names gt_names" "thread row $pid/$pid: the thread and its process are named gt_names"
tmux send-keys -t "$X" g
wait_for 'by process' 10 >/dev/null
row=$(pane | awk -v id="$pid" '$NF == id && $5 == id { print $4 }')
is "$row" "gt_names" "process row $pid: gt_names"
tmux send-keys -t "$X" q
done_testing
