#!/bin/sh
# probe diff BASE NEW: gt_leaf (5:3:2) against the same program rebuilt
# 2:3:5.  Rows are matched by function and module, with both self shares
# and the change in points, largest first; the shares are probe report's;
# --format folded gives both counts per stack (difffolded.pl's layout);
# with no files, probe.data.old and probe.data (record moves the old one
# aside); --format svg draws the differential flame graph, read back in
# headless Chromium (tests/flamegraph.js): NEW's widths, leaf_two red,
# leaf_five blue; bad arguments are said.
. "$(dirname "$0")/lib.sh"
plan 15

mkdir -p "$T/new"
sed 's/GT_SPIN(5, 1.0)/GT_SPIN(2, 1.0)/; s/GT_SPIN(2, 3.0)/GT_SPIN(5, 3.0)/' \
	"$ROOT/tests/gt_leaf.c" >"$T/new/gt_leaf.c"
cc -O2 -g -fomit-frame-pointer -I"$ROOT/tests" -o "$T/new/gt_leaf" "$T/new/gt_leaf.c" -lm
"$PROBE" record -q -F 1999 -o "$T/base.probe" -- "$GT/gt_leaf" 200 >/dev/null 2>&1
"$PROBE" record -q -F 1999 -o "$T/new.probe" -- "$T/new/gt_leaf" 200 >/dev/null 2>&1
"$PROBE" diff "$T/base.probe" "$T/new.probe" >"$T/diff" 2>"$T/err"
is "$?" 0 "probe diff exits 0"
"$PROBE" report "$T/base.probe" >"$T/rb" 2>/dev/null
"$PROBE" report "$T/new.probe" >"$T/rn" 2>/dev/null
"$PROBE" report --children "$T/new.probe" >"$T/rnc" 2>/dev/null

# Row of NAME: base %, new %, delta.
row() { awk -v f="$2" '!/^#/ && $4 == f { print $1, $2, $3; exit }' "$1"; }
for f in leaf_five leaf_three leaf_two; do
	set -- $(row "$T/diff" $f)
	b=$(self_share "$T/rb" $f) n=$(self_share "$T/rn" $f)
	awk -v b="$1" -v n="$2" -v d="$3" -v rb="$b" -v rn="$n" 'BEGIN {
		e = b - rb; if (e < 0) e = -e; g = n - rn; if (g < 0) g = -g
		h = d - (n - b); if (h < 0) h = -h
		exit !(e < 0.01 && g < 0.01 && h < 0.011) }'
	ok $? "$f: base $1 %, new $2 %, delta $3: probe report says $b % and $n %"
done
set -- $(row "$T/diff" leaf_five); d5=$3
set -- $(row "$T/diff" leaf_two); d2=$3
set -- $(row "$T/diff" leaf_three); d3=$3
awk -v a="$d5" -v b="$d2" -v c="$d3" 'BEGIN { exit !(a < -20 && a > -40 && b > 20 && b < 40 && c > -5 && c < 5) }'
ok $? "leaf_five lost about 30 points ($d5), leaf_two gained about 30 ($d2), leaf_three about 0 ($d3)"
# Kernel rows (kernel time is recorded by default) may have changes as
# small as leaf_three's, so only the two large ones have a fixed place;
# the whole column must be ordered by the size of the change.
top2=$(awk '!/^#/ { n++; print $4; if (n == 2) exit }' "$T/diff" | sort | tr '\n' ' ')
awk '!/^#/ { d = $3 < 0 ? -$3 : $3; if (n++ && d > last + 0.001) bad++; last = d }
	END { exit bad + 0 }' "$T/diff"
r=$?
[ "$top2" = "leaf_five leaf_two " ] && [ $r = 0 ]
ok $? "sorted by the largest change: ${top2}first, every change no larger than the one above"

"$PROBE" diff --format folded "$T/base.probe" "$T/new.probe" >"$T/fold" 2>>"$T/err"
sb=$(awk '/^# event:/ { for (i = 1; i <= NF; i++) if ($(i+1) ~ /^samples/) { print $i; exit } }' "$T/rb")
sn=$(awk '/^# event:/ { for (i = 1; i <= NF; i++) if ($(i+1) ~ /^samples/) { print $i; exit } }' "$T/rn")
set -- $(awk '{ if (NF < 3 || $(NF-1) !~ /^[0-9]+$/ || $NF !~ /^[0-9]+$/) bad++; a += $(NF-1); b += $NF }
	END { print a + 0, b + 0, bad + 0 }' "$T/fold")
[ "$1" = "$sb" ] && [ "$2" = "$sn" ] && [ "$3" = 0 ]
ok $? "folded: 'stack BASE NEW' on every line, columns add up to $sb and $sn samples (got $1, $2)"
grep -q "^gt_leaf;.*;main;leaf_two [0-9][0-9]* [0-9][0-9]*$" "$T/fold"
ok $? "folded: one stack with both counts: $(grep ';leaf_two ' "$T/fold" | head -1)"

# The differential flame graph, as Chromium shows it.
"$PROBE" diff --format svg -o "$T/diff.svg" "$T/base.probe" "$T/new.probe" 2>>"$T/err"
# fill COLOUR of the frame named NAME in the SVG
fill() { perl -0ne 'print "$1\n" if /<title>\Q'"$2"'\E\n.*?fill="(#[0-9a-f]{6})"/s' "$1"; }
f2=$(fill "$T/diff.svg" leaf_two) f5=$(fill "$T/diff.svg" leaf_five) f3=$(fill "$T/diff.svg" leaf_three)
case "$f2.$f5" in \#ff*.\#*ff) r=0 ;; *) r=1 ;; esac
ok $r "svg: leaf_two red ($f2: more in new), leaf_five blue ($f5: less), leaf_three $f3"
NPM=$BUILD/npm
[ -d "$NPM/node_modules/puppeteer-core" ] || NPM=$ROOT/build/npm
if command -v node >/dev/null 2>&1 && [ -x "${CHROMIUM:-/usr/bin/chromium}" ] &&
   [ -d "$NPM/node_modules/puppeteer-core" ] &&
   node "$ROOT/tests/flamegraph.js" "$NPM" load "$T/diff.svg" shares hover leaf_two \
	screenshot "$T/diff.png" >"$T/fg" 2>&1; then
	set -- $(awk '$1 == "load" { print $3, $4 }' "$T/fg")
	[ "$1" = errors ] && [ "$2" = 0 ]
	ok $? "svg: loads in Chromium without an error ($(head -n1 "$T/fg"))"
	fail=0
	for f in leaf_five leaf_three leaf_two; do
		got=$(awk -v f=$f '$1 == "share" && $2 == f { print $3 }' "$T/fg")
		# A frame is as wide as the samples with it on their stack: its
		# Total (--children puts it first), which holds the kernel frames
		# under it (preemption under load: Self was 0.5-0.6 points less).
		want=$(self_share "$T/rnc" $f)
		within "$got" "$want" 0.5 || { fail=1; diag "$f: $got % wide, new has $want % (Total)"; }
	done
	ok $fail "svg: widths are NEW's shares (leaf_two $(awk '$1 == "share" && $2 == "leaf_two" { print $3 }' "$T/fg") %)"
	grep -q "^hover leaf_two .*base [0-9.]*%, +[0-9.]* points" "$T/fg"
	ok $? "svg: the details line gives both shares: $(grep '^hover' "$T/fg")"
	cp "$T/diff.png" "$BUILD/tests/84-diff.png" 2>/dev/null && diag "screenshot: $BUILD/tests/84-diff.png"
else
	why="headless Chromium with puppeteer-core is not there: run scripts/install-deps"
	skip "$why"; skip "$why"; skip "$why"
fi

# No files: probe.data.old (the earlier recording) and probe.data.
(cd "$T" && "$PROBE" record -q -- "$GT/gt_leaf" 100 >/dev/null 2>&1 &&
	"$PROBE" record -q -- "$T/new/gt_leaf" 100 >/dev/null 2>&1 &&
	"$PROBE" diff >"$T/diff2" 2>>"$T/err")
grep -q "^# probe diff: probe.data.old (base) -> probe.data (new)" "$T/diff2" &&
	[ "$(awk '!/^#/' "$T/diff2" | wc -l)" -ge 3 ]
ok $? "no files: probe.data.old against probe.data"

"$PROBE" diff "$T/base.probe" >/dev/null 2>"$T/e1"
st=$?
[ $st -eq 2 ] && grep -q "^probe: diff: give two recordings" "$T/e1"
ok $? "one file: usage error (exit $st): $(cat "$T/e1")"
"$PROBE" diff "$T/base.probe" "$T/nothing.probe" >/dev/null 2>"$T/e2"
st=$?
[ $st -eq 1 ] && grep -q "^probe: .*nothing.probe: cannot open" "$T/e2"
ok $? "a missing recording is said (exit $st): $(cat "$T/e2")"
[ "$_tap_fail" -eq 0 ] || { sed 's/^/#   /' "$T/diff" "$T/err" | head -30; }
done_testing
