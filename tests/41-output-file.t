#!/bin/sh
# probe record -o FILE never writes through what it finds at FILE: a
# symbolic link (planted by another user in a shared directory) goes aside
# to FILE.old with what it points to untouched; a FIFO or a device is
# refused at once (opening a FIFO would hang, a device is not a recording);
# the command does not run then.
. "$(dirname "$0")/lib.sh"
plan 9

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
done_testing
