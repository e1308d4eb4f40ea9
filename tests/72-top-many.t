#!/bin/sh
# probe top without a command: it prints how to start programs, watches the
# per-user top.sock, keeps updating every interval with 50 programs sending
# at once, and sees every one of them.
. "$(dirname "$0")/lib.sh"
plan 7

export XDG_RUNTIME_DIR=$T/xdg
mkdir -m 0700 "$XDG_RUNTIME_DIR"
"$PROBE" top -d 0.5 -n 5 >"$T/out" 2>"$T/err" &
top=$!
trap 'kill $top 2>/dev/null; rm -rf "$T"' EXIT
i=0
while [ $i -lt 100 ] && ! grep -q 'PROBE_SOCKET=' "$T/out"; do sleep 0.1; i=$((i + 1)); done
line=$(head -1 "$T/out")
sock=$(printf '%s\n' "$line" | sed -n 's/.*PROBE_SOCKET=\([^ ]*\) .*/\1/p')
is "$sock" "$XDG_RUNTIME_DIR/probe/top.sock" "prints the PROBE_SOCKET=... LD_PRELOAD=... line"
printf '%s\n' "$line" | grep -q "LD_PRELOAD=$LIBPROBE PROGRAM"
ok $? "the line names libprobe.so"

"$PROBE" top -d 0.5 >"$T/out2" 2>"$T/err2"
[ $? -eq 1 ] && grep -q '^probe: another probe top is already watching' "$T/err2"
ok $? "a second probe top without a command refuses, in one line"

t0=$(date +%s)
before=$(grep -c '^# probe top:' "$T/out")
pids=""
for n in $(seq 50); do
	PROBE_SOCKET=$sock LD_PRELOAD=$LIBPROBE "$GT/gt_leaf" 30 >/dev/null &
	pids="$pids $!"
done
fail=0
for p in $pids; do wait "$p" || fail=1; done
ok $fail "50 programs ran and exited 0"
# Wait for a snapshot that has seen all 50 (they may still be draining).
i=0
while [ $i -lt 50 ] && ! grep -q '^# processes: 50 seen, 0 connected' "$T/out"; do
	sleep 0.2; i=$((i + 1))
done
t1=$(date +%s)
after=$(grep -c '^# probe top:' "$T/out")
kill -TERM $top
wait $top
is "$?" 0 "probe top ends with 0 on SIGTERM"
last=$(grep '^# processes:' "$T/out" | tail -1)
seen=$(printf '%s\n' "$last" | tr ' ' '\n' | grep -c '^gt_leaf\[[0-9]*\]-$')
is "$seen" 50 "the last snapshot lists all 50 programs, exited"
# At least one snapshot a second while they ran (every 0.5 s asked).
want=$(( (t1 - t0) ))
[ $((after - before)) -ge "$want" ]
ok $? "kept updating: $((after - before)) snapshots in about $((t1 - t0)) s"
done_testing
