#!/bin/sh
# probe top without a command sees a program started with just LD_PRELOAD
# (no PROBE_SOCKET): libprobe finds the per-user top.sock by itself, streams
# there and writes no probe.data (issue 5), and says so once on stderr, since
# a program run with LD_PRELOAD alone otherwise writes ./probe.data (issue 23);
# a program run by probe record while that top runs says nothing.
. "$(dirname "$0")/lib.sh"
plan 9

export XDG_RUNTIME_DIR=$T/xdg
mkdir -m 0700 "$XDG_RUNTIME_DIR"
unset PROBE_SOCKET PROBE_OUTPUT PROBE_APPEND
"$PROBE" top -d 0.5 >"$T/out" 2>"$T/err" &
top=$!
trap 'kill $top 2>/dev/null; rm -rf "$T"' EXIT
i=0
while [ $i -lt 100 ] && ! [ -S "$XDG_RUNTIME_DIR/probe/top.sock" ]; do sleep 0.1; i=$((i + 1)); done
[ -S "$XDG_RUNTIME_DIR/probe/top.sock" ]
ok $? "probe top listens on \$XDG_RUNTIME_DIR/probe/top.sock"

mkdir "$T/cwd"
(cd "$T/cwd" && LD_PRELOAD=$LIBPROBE "$GT/gt_leaf" 200 >"$T/prog.out" 2>"$T/prog.err")
is "$?" 0 "LD_PRELOAD=libprobe.so gt_leaf 200 (no PROBE_SOCKET) exits 0"
is "$(cat "$T/prog.err")" "probe: sending samples to \`probe top\` (pid $top) at $XDG_RUNTIME_DIR/probe/top.sock; ./probe.data is not written (PROBE_OUTPUT=FILE records to a file instead)" \
	"libprobe says once on stderr that the samples go to probe top, and which"
[ -z "$(ls -A "$T/cwd")" ]
ok $? "no probe.data was written in its directory"

# A shell that forks and execs profiled children: still one line in all.
(cd "$T/cwd" && LD_PRELOAD=$LIBPROBE sh -c "$GT/gt_leaf 50; $GT/gt_leaf 50" 2>"$T/prog2.err")
is "$(grep -c 'sending samples to .probe top' "$T/prog2.err")" 1 \
	"a shell running two profiled programs: the line comes once, not per process"
# Under probe record the program's samples go to the recording: not a word.
(cd "$T/cwd" && "$PROBE" record -q -o "$T/rec.data" -- "$GT/gt_leaf" 50 2>"$T/rec.err")
is "$?" 0 "probe record -q -- gt_leaf 50 while probe top runs exits 0"
[ ! -s "$T/rec.err" ]
ok $? "under probe record, nothing on stderr (no word of probe top)"
rm -f "$T/rec.data"

# Wait for a snapshot that has seen the program end.
i=0
while [ $i -lt 50 ] && ! grep -q '^# processes: 1 seen, 0 connected' "$T/out"; do
	sleep 0.2; i=$((i + 1))
done
kill -TERM $top
wait $top
is "$?" 0 "probe top ends with 0 on SIGTERM"
grep -q 'leaf_five' "$T/out"
ok $? "probe top's snapshot shows leaf_five"

[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/err" "$T/prog.err" "$T/out" | head -40
done_testing
