#!/bin/sh
# probe record -o FILE never writes through what it finds at FILE: a
# symbolic link (planted by another user in a shared directory) goes aside
# to FILE.old with what it points to untouched; a FIFO or a device is
# refused at once (opening a FIFO would hang, a device is not a recording);
# the command does not run then.  A file size limit (ulimit -f) is a write
# error said as such: the collector is not killed by SIGXFSZ, keeps what
# was written and the summary, and the program runs as it would.
. "$(dirname "$0")/lib.sh"
plan 14

D=$T/out
mkdir -m 0777 "$D"
echo SECRET >"$D/secret"
chmod 0600 "$D/secret"
ln -s "$D/secret" "$D/rec.probe"
"$PROBE" record -q -o "$D/rec.probe" -- "$GT/gt_leaf" 20 >/dev/null 2>"$T/err"
is "$?" 0 "symlink at -o: probe record runs"
is "$(cat "$D/secret")" "SECRET" "the file the link pointed to is untouched"
[ -L "$D/rec.probe.old" ] && [ -f "$D/rec.probe" ] && [ ! -L "$D/rec.probe" ]
ok $? "the link went aside to rec.probe.old, the recording is a new file"
"$PROBE" report "$D/rec.probe" >/dev/null 2>&1
ok $? "and it is a recording"

mkfifo "$D/fifo"
timeout 10 "$PROBE" record -q -o "$D/fifo" -- sh -c "echo ran >'$D/ran'" 2>"$T/err"
st=$?
[ "$st" -eq 1 ] && grep -q "^probe: .*fifo is a FIFO, not a file a recording can go to" "$T/err"
ok $? "a FIFO at -o is refused at once (exit $st): $(cat "$T/err")"
[ ! -e "$D/ran" ] && [ -p "$D/fifo" ]
ok $? "the command did not run, the FIFO is still there"

timeout 10 "$PROBE" record -q -o /dev/null -- true 2>"$T/err"
st=$?
[ "$st" -eq 1 ] && grep -q "^probe: /dev/null is a device" "$T/err"
ok $? "a device at -o is refused (exit $st)"

: >"$D/empty.probe"
"$PROBE" record -q -o "$D/empty.probe" -- true 2>/dev/null
[ -f "$D/empty.probe.old" ] && [ ! -s "$D/empty.probe.old" ] && [ -s "$D/empty.probe" ]
ok $? "an existing (empty) file goes aside too"

mkdir "$D/dir.probe"
"$PROBE" record -q -o "$D/dir.probe" -- true 2>"$T/err"
[ $? -eq 1 ] && grep -q "is a directory" "$T/err"
ok $? "a directory at -o is refused"
# ulimit -f: soft only (the program's libprobe may lift it for its own
# shared memory), then soft and hard (it cannot: it says so, no profile).
"$GT/gt_leaf" 200 >"$T/bare.out"
sh -c "ulimit -S -f 16; exec '$PROBE' record -F 4999 -o '$D/fz.probe' -- '$GT/gt_leaf' 200" \
	>"$T/stdout" 2>"$T/err"
st=$?
is "$st" 1 "ulimit -f: probe record exits 1 for the failed write (the program exited 0), not 153 (SIGXFSZ)"
grep -q "^probe: writing .*fz.probe stopped at the file size limit (ulimit -f)" "$T/err" &&
	grep -q '^probe:   pid .* gt_leaf: .*exit 0' "$T/err"
ok $? "ulimit -f: one line says so, and the summary is there"
cmp -s "$T/bare.out" "$T/stdout"
ok $? "ulimit -f: the program's output is whole"
"$PROBE" report "$D/fz.probe" >"$T/rep" 2>&1
grep -q 'leaf_five' "$T/rep"
ok $? "ulimit -f: what was written is a readable recording"
sh -c "ulimit -f 16; exec '$PROBE' record -o '$D/fz2.probe' -- '$GT/gt_leaf' 200" \
	>"$T/stdout" 2>"$T/err"
st=$?
[ "$st" -eq 0 ] && cmp -s "$T/bare.out" "$T/stdout" &&
	grep -q "^probe: cannot size the memory shared with the collector .*ulimit -Hf" "$T/err"
ok $? "hard ulimit -f below probe's shared memory: the program runs as bare (exit $st), and libprobe says why it is not profiled"
[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/err"
done_testing
