#!/bin/sh
# probe top without a command sees a program started with just LD_PRELOAD
# (no PROBE_SOCKET): libprobe finds the per-user top.sock by itself, streams
# there silently and writes no probe.data (issue 5).
. "$(dirname "$0")/lib.sh"
plan 6

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
[ ! -s "$T/prog.err" ]
ok $? "the program printed nothing on stderr"
[ -z "$(ls -A "$T/cwd")" ]
ok $? "no probe.data was written in its directory"

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
