#!/bin/sh
# probe report --format svg (and html, the same drawn on a canvas), read
# as a person reads it: in headless Chromium (tests/flamegraph.js,
# puppeteer-core from scripts/install-deps).
# The frames' widths in the page give the text report's shares (gt_leaf's
# leaves, gt_threads' threads with --sort tid) within 0.5 points; Ctrl-F
# finds a function and says its Total; a click zooms, Reset Zoom undoes it;
# --inverted puts the leaves on top; hostile names are escaped (test_flame
# writes them); in the HTML page a click also shows the function's hottest
# source lines (gt_leaf's leaves on their lines 5:3:2, main's calls), and
# hostile source text and file names stay text; a recording of 100,000 distinct stacks opens, and the time
# it takes to be painted is printed (measured, not asserted: scripts/bench
# --flame).  Screenshots are kept in $BUILD/tests/83-flamegraph-*.png.
. "$(dirname "$0")/lib.sh"
plan 58

# The unit part runs without a browser.
"$GT/test_flame" "$T/hostile.svg" >"$T/unit" 2>&1
ok $? "test_flame: escaping and layout ($(grep -c '^ok' "$T/unit") checks)"
grep '^not ok' "$T/unit" | sed 's/^/#   /'

NPM=$BUILD/npm
[ -d "$NPM/node_modules/puppeteer-core" ] || NPM=$ROOT/build/npm
why=""
if ! command -v node >/dev/null 2>&1; then
	why="no node (Debian nodejs): run scripts/install-deps"
elif [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
	why="no Chromium at ${CHROMIUM:-/usr/bin/chromium} (Debian chromium): run scripts/install-deps"
elif [ ! -d "$NPM/node_modules/puppeteer-core" ]; then
	why="no puppeteer-core in $NPM: run scripts/install-deps"
elif ! node "$(dirname "$0")/flamegraph.js" "$NPM" >"$T/probe-run" 2>&1; then
	why="Chromium does not start here: $(grep -v '^$' "$T/probe-run" | head -n1)"
fi
if [ -n "$why" ]; then
	i=1
	while [ $i -lt 58 ]; do skip "$why"; i=$((i + 1)); done
	exit 0
fi

fg() { node "$(dirname "$0")/flamegraph.js" "$NPM" "$@"; }
# field FILE KEY WORD N: field N of the line of FILE starting "KEY WORD"
field() { awk -v k="$2" -v w="$3" -v n="$4" '$1 == k && $2 == w { print $n; exit }' "$1"; }
# total_share REPORT NAME: Total% of the first text-report row named NAME
total_share() {
	awk -v name="$2" '/^#/ { next }
		{ for (i = 4; i <= NF; i++) if ($i == name) { sub("%", "", $2); print $2; exit } }' "$1"
}
keep() { cp "$T/$1" "$GT/83-flamegraph-$1" && diag "screenshot: $GT/83-flamegraph-$1 (and $T/$1 while the test runs)"; }

# ---- gt_leaf: three leaves 5:3:2 ---------------------------------------
# User space only: the details line is checked against the leaf's own
# samples, which kernel frames on top of it would take (its Total would not).
PROBE_KERNEL=0 "$PROBE" record -q -F 4999 -o "$T/leaf.probe" -- "$GT/gt_leaf" 300 >/dev/null 2>"$T/err"
"$PROBE" report "$T/leaf.probe" >"$T/leaf.txt" 2>>"$T/err"
"$PROBE" report --format svg -o "$T/leaf.svg" "$T/leaf.probe" 2>>"$T/err"
ok $? "probe report --format svg -o FILE"
"$PROBE" report --format svg --inverted --title 'leaf <&> "up"' --width 900 \
	-o "$T/leaf-inv.svg" "$T/leaf.probe" 2>>"$T/err"
ok $? "probe report --format svg --inverted --title --width"
python3 -c 'import sys, xml.dom.minidom
for f in sys.argv[1:]: xml.dom.minidom.parse(f)' "$T/leaf.svg" "$T/leaf-inv.svg" "$T/hostile.svg" 2>"$T/xml"
ok $? "the SVGs are well-formed XML (hostile names included)"
sed 's/^/#   /' "$T/xml"

fg load "$T/leaf.svg" shares hover leaf_five search leaf_five zoom leaf_three \
	screenshot "$T/zoom.png" reset screenshot "$T/leaf.png" rows leaf_five \
	click colour screenshot "$T/module.png" \
	load "$T/leaf-inv.svg" rows leaf_five screenshot "$T/inverted.png" >"$T/leaf.out" 2>&1
is "$(awk '$1 == "load" { print $4 }' "$T/leaf.out" | tr '\n' ' ')" "0 0 " "the SVGs load without a JavaScript error"
for name in leaf_five leaf_three leaf_two; do
	want=$(self_share "$T/leaf.txt" "$name")
	got=$(field "$T/leaf.out" share "$name" 3)
	within "$got" "$want" 0.5
	ok $? "$name: $got % wide in Chromium, $want % in probe report (+-0.5)"
done
want=$(total_share "$T/leaf.txt" leaf_five)
got=$(field "$T/leaf.out" search leaf_five 3 | sed 's/Matched://; s/%.*//')
within "$got" "$want" 0.5
ok $? "Ctrl-F leaf_five: Matched $got %, its Total in probe report $want %"
set -- $(awk '$1 == "zoom" { print $3, $4, $5 }' "$T/leaf.out")
within "${1:-}" "${2:-x}" 0.05
ok $? "a click on leaf_three zooms it to the full width (${1:-?} of ${2:-?} px)"
[ "${3:-0}" -ge 3 ]
ok $? "its ancestors stay, dimmed (${3:-0} dimmed)"
set -- $(awk '$1 == "reset" { print $2, $3 }' "$T/leaf.out")
want=$(awk '$1 == "zoom" { print $7 }' "$T/leaf.out")
within "${1:-}" "${want:-x}" 0.011
ok $? "Reset Zoom: leaf_three back to ${1:-?} px (${want:-?} before), ${2:-?} hidden"
set -- $(awk '$1 == "rows" { print $2, $3 }' "$T/leaf.out")
[ "${1:-0}" -gt "${2:-0}" ]
ok $? "flame: the root (y ${1:-?}) below the leaf (y ${2:-?})"
[ "${3:-0}" -lt "${4:-0}" ]
ok $? "--inverted: the root (y ${3:-?}) above the leaf (y ${4:-?})"
want="leaf_five in gt_leaf: $(awk '$4 == "leaf_five" { print $3; exit }' "$T/leaf.txt") samples, $(self_share "$T/leaf.txt" leaf_five)%"
is "$(awk '$1 == "hover" { $1 = $2 = ""; sub(/^  /, ""); print }' "$T/leaf.out")" "$want" \
	"the mouse over leaf_five: the details line says function, module, samples, share"
awk '$1 == "click" && $2 == "colour" && $3 == "Colour:_module" && $4 ~ /gt_leaf/ { f = 1 } END { exit !f }' "$T/leaf.out"
ok $? "Colour: kind -> module, with a legend of modules ($(awk '$1 == "click" { print $4 }' "$T/leaf.out"))"
grep -q '<title>leaf &lt;&amp;&gt; &quot;up&quot;' "$T/leaf-inv.svg" ||
	grep -q '>leaf &lt;&amp;&gt; &quot;up&quot;</text>' "$T/leaf-inv.svg"
ok $? "--title is escaped"
grep -q 'width="900"' "$T/leaf-inv.svg"
ok $? "--width 900"
keep leaf.png
keep zoom.png
keep inverted.png
keep module.png

# ---- the same as an HTML page with a canvas -----------------------------
"$PROBE" report --format html -o "$T/leaf.html" "$T/leaf.probe" 2>>"$T/err"
ok $? "probe report --format html -o FILE"
fg load "$T/leaf.html" shares search leaf_five zoom leaf_three reset screenshot "$T/leaf-html.png" \
	>"$T/html.out" 2>&1
is "$(field "$T/html.out" load "$T/leaf.html" 4)" 0 "html: loads without a JavaScript error"
good=0
for name in leaf_five leaf_three leaf_two; do
	want=$(self_share "$T/leaf.txt" "$name")
	got=$(field "$T/html.out" share "$name" 3)
	within "$got" "$want" 0.5 || { good=1; diag "html: $name $got % wide, $want % in probe report"; }
done
ok $good "html: the three leaves are as wide as their shares in probe report (+-0.5)"
want=$(total_share "$T/leaf.txt" leaf_five)
got=$(field "$T/html.out" search leaf_five 3 | sed 's/Matched://; s/%.*//')
within "$got" "$want" 0.5
ok $? "html: Ctrl-F leaf_five: Matched $got %, Total $want %"
set -- $(awk '$1 == "zoom" { print $3, $4 }' "$T/html.out")
within "${1:-}" "${2:-x}" 0.05
ok $? "html: a click zooms leaf_three to the full width (${1:-?} of ${2:-?} px)"
set -- $(awk '$1 == "reset" { print $2 }' "$T/html.out")
want=$(awk '$1 == "zoom" { print $7 }' "$T/html.out")
within "${1:-}" "${want:-x}" 0.011
ok $? "html: Reset Zoom puts it back (${1:-?} px, ${want:-?} before)"
keep leaf-html.png

# ---- html: a click shows the function's hottest source lines ------------
# gt_leaf's leaves are one line each (13, 14, 15: every sample of leaf_five
# is on line 13), main calls them on the lines that say so.
fg load "$T/leaf.html" lines leaf_five screenshot "$T/lines.png" key Escape key Escape \
	lines leaf_three key Escape key Escape lines leaf_two key Escape key Escape lines main errors >"$T/lines.out" 2>&1
# row NAME N FIELD: field FIELD of the Nth "line NAME ..." row (3: file:line,
# 4: Self, 5: Total, 6: samples, 7 on: the source text)
row() { awk -v n="$1" -v k="$2" -v f="$3" '$1 == "line" && $2 == n && ++i == k {
	if (f < 7) { v = $f; sub("%", "", v); print v; exit }
	for (j = 7; j <= NF; j++) printf "%s%s", $j, j < NF ? " " : "\n"; exit }' "$T/lines.out"; }
src_line() { grep -n "$1" "$ROOT/tests/gt_leaf.c" | head -n1 | cut -d: -f1; }
text_of() { sed -n "$1p" "$ROOT/tests/gt_leaf.c" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//'; }
l5=$(src_line 'static void leaf_five'); l3=$(src_line 'static void leaf_three'); l2=$(src_line 'static void leaf_two')
is "$(row leaf_five 1 3) $(row leaf_five 1 7)" "gt_leaf.c:$l5 $(text_of "$l5")" \
	"html: a click on leaf_five shows its hottest line, gt_leaf.c:$l5, with its text"
is "$(row leaf_five 1 4) $(row leaf_five 1 6)" \
	"$(self_share "$T/leaf.txt" leaf_five) $(awk '$4 == "leaf_five" { print $3; exit }' "$T/leaf.txt")" \
	"html: its Self% and samples are leaf_five's in probe report"
# The lines' samples against the program's 5:3:2, of the three lines' samples
# (start and exit left out, as leaf_checks does): binom_tol for 3 checks,
# a false failure in fewer than 1 run of 1,000.
c5=$(row leaf_five 1 6); c3=$(row leaf_three 1 6); c2=$(row leaf_two 1 6)
n=$(( ${c5:-0} + ${c3:-0} + ${c2:-0} ))
for p in "$l5:50:${c5:-0}" "$l3:30:${c3:-0}" "$l2:20:${c2:-0}"; do
	IFS=: read -r ln want c <<EOF_P
$p
EOF_P
	got=$(awk -v c="$c" -v n="$n" 'BEGIN { if (n > 0) printf "%.2f", 100 * c / n }')
	share_ok "$got" "$want" "$n" 3
	ok $? "html: gt_leaf.c:$ln has $got % of the three lines' $n samples (want $want +-$(binom_tol "$n" "0.$want" 3))"
done
want="gt_leaf.c:$(src_line 'leaf_five();') 0.00 leaf_five(); gt_leaf.c:$(src_line 'leaf_three();') 0.00 leaf_three(); gt_leaf.c:$(src_line 'leaf_two();') 0.00 leaf_two();"
is "$(for k in 1 2 3; do printf '%s %s %s ' "$(row main $k 3)" "$(row main $k 4)" "$(row main $k 7)"; done | sed 's/ $//')" \
	"$want" "html: main's lines are its three calls, hottest first, none its own samples"
within "$(row main 1 5)" "$(row leaf_five 1 5)" 0.5
ok $? "html: main's call of leaf_five has leaf_five's Total ($(row main 1 5) %, $(row leaf_five 1 5) %, +-0.5)"
set -- $(awk '$1 == "key" { print $4, $6 }' "$T/lines.out")
[ "${1:-x}" = 0 ] && [ "${2:-0}" -gt 0 ]
ok $? "html: Escape closes the panel and keeps the zoom (panel ${1:-?}, ${2:-?} frames hidden)"
[ "${3:-x}" = 0 ] && [ "${4:-x}" = 0 ]
ok $? "html: a second Escape resets the zoom (${4:-?} frames hidden)"
is "$(awk '$1 == "errors" { print $2 }' "$T/lines.out")" 0 "html: no JavaScript error while clicking"
keep lines.png

# Without -g: the panel says there are no lines, and why.
objcopy --strip-debug "$GT/gt_leaf" "$T/gt_leaf_nog"
PROBE_KERNEL=0 "$PROBE" record -q -F 999 -o "$T/nog.probe" -- "$T/gt_leaf_nog" 50 >/dev/null 2>>"$T/err"
"$PROBE" report --format html -o "$T/nog.html" "$T/nog.probe" 2>>"$T/err"
fg load "$T/nog.html" lines leaf_five >"$T/nog.out" 2>&1
note=$(awk '$1 == "note" && $2 == "leaf_five" { $1 = $2 = ""; sub(/^  /, ""); print }' "$T/nog.out")
echo "$note" | grep -q '^No source lines: .*built without -g' &&
	! grep -q '^line ' "$T/nog.out"
ok $? "html, built without -g: no lines, and the panel says so ($note)"

# Hostile source: a line and a file name that are markup, quotes, a
# backslash, invalid UTF-8 (shown as U+FFFD); the page keeps them text.
hsrc="$T/h<i>&'x.c"
cat >"$hsrc" <<'EOF_C'
#include <stdio.h>
static volatile double sink;
__attribute__((noinline)) static void hot(void)
{
	double x = 1;
	for (long i = 0; i < 150000000L; i++) x = x * 1.0000001 + 0.25; /* </script><!-- & "q" \ BAD */
	sink = x;
}
int main(void) { hot(); printf("%g\n", sink > 0 ? 1.0 : 0.0); return 0; }
EOF_C
sed -i 's/BAD/\xff/' "$hsrc"
cc -g -O1 -o "$T/hostile" "$hsrc" 2>>"$T/err"
PROBE_KERNEL=0 "$PROBE" record -q -F 999 -o "$T/hs.probe" -- "$T/hostile" >/dev/null 2>>"$T/err"
"$PROBE" report --format html -o "$T/hs.html" "$T/hs.probe" 2>>"$T/err"
fg load "$T/hs.html" lines hot errors >"$T/hs.out" 2>&1
is "$(awk '$1 == "load" { print $4 } $1 == "errors" { print $2 }' "$T/hs.out" | tr '\n' ' ')" "0 0 " \
	"html, hostile source: loads and shows it without a JavaScript error or dialog"
grep -qF "line hot h<i>&'x.c:6 " "$T/hs.out" &&
	grep -qF '/* </script><!-- & "q" \ '"$(printf '\357\277\275')"' */' "$T/hs.out"
ok $? "html, hostile source: its file name and line shown as text, invalid UTF-8 as U+FFFD"
[ "$(grep -c '</script>' "$T/hs.html")" -eq 1 ] && ! grep -q '<!--' "$T/hs.html"
ok $? "html, hostile source: no </script> or <!-- in the page's data"
diag "html: gt_leaf's page $(stat -c %s "$T/leaf.html") bytes, of which D.src and D.files" \
	"$(awk '/^src: \[/ { on = 1 } on { n += length($0) + 1 } on && /\]};$/ { exit } END { print n + 0 }' "$T/leaf.html")"

# ---- gt_threads: a frame per thread with --sort tid --------------------
"$PROBE" record -q -F 4999 -o "$T/thr.probe" -- "$GT/gt_threads" 300 >/dev/null 2>>"$T/err"
"$PROBE" report --sort tid "$T/thr.probe" >"$T/thr.txt" 2>>"$T/err"
"$PROBE" report --format svg --sort tid -o "$T/thr.svg" "$T/thr.probe" 2>>"$T/err"
ok $? "probe report --format svg --sort tid"
"$PROBE" report --format svg --sort pid,tid -o "$T/thr2.svg" "$T/thr.probe" 2>>"$T/err"
fg load "$T/thr.svg" groups screenshot "$T/threads.png" load "$T/thr2.svg" groups >"$T/thr.out" 2>&1
is "$(awk '$1 == "load" { print $4 }' "$T/thr.out" | tr '\n' ' ')" "0 0 " "the thread SVGs load without a JavaScript error"
for w in w1 w2 w3 w4; do
	name=$(awk -v w="$w" '$1 == "group" && $2 ~ ":" w "$" { print $2; exit }' "$T/thr.out")
	want=$(self_share "$T/thr.txt" "${name:-none}")
	got=$(field "$T/thr.out" group "${name:-none}" 3)
	within "$got" "$want" 0.5
	ok $? "thread ${name:-$w}: a frame $got % wide, $want % in probe report --sort tid (+-0.5)"
done
pid=$(awk '$1 == "group" && $2 ~ ":gt_threads$" { print $2; exit }' "$T/thr.out")
# the last "group PID:gt_threads" line: thr2.svg's, where the process's frame holds its main thread's
is "$(awk -v p="${pid:-none}" '$1 == "group" && $2 == p { v = $3 } END { print v }' "$T/thr.out")" "100.00" \
	"--sort pid,tid: the process's frame (${pid:-none}) holds all"
keep threads.png

# ---- hostile names (test_flame) ----------------------------------------
fg load "$T/hostile.svg" shares >"$T/hostile.out" 2>&1
is "$(field "$T/hostile.out" load "$T/hostile.svg" 4)" 0 "hostile names: the SVG loads without a JavaScript error"
grep -qxF 'share <script>alert(1)</script> 40.00' "$T/hostile.out"
ok $? "a name that is markup is shown as text"
grep -q "^share ���café 30.00" "$T/hostile.out"
ok $? "invalid UTF-8 is shown as U+FFFD"

# ---- 100,000 distinct stacks -------------------------------------------
"$GT/gen_recording" --every "$T/big.probe" 1000000 100000 2>>"$T/err"
distinct=$("$PROBE" report --format folded "$T/big.probe" 2>>"$T/err" | wc -l)
is "$distinct" 100000 "the synthetic recording has 100,000 distinct stacks"
t0=$(date +%s%N)
"$PROBE" report --format svg -o "$T/big.svg" "$T/big.probe" 2>>"$T/err"
ok $? "probe report --format svg on it"
t1=$(date +%s%N)
"$PROBE" report --format html -o "$T/big.html" "$T/big.probe" 2>>"$T/err"
fg load "$T/big.svg" search malloc zoom main screenshot "$T/big.png" \
	load "$T/big.html" >"$T/big.out" 2>&1
set -- $(awk '$1 == "load" && $2 ~ /html$/ { print $4, $6, $8 }' "$T/big.out")
is "${1:-}" 0 "100,000 stacks: the HTML page loads without a JavaScript error"
diag "100,000 stacks: HTML $(( $(stat -c %s "$T/big.html") / 1024 )) KiB, ${3:-?} frames;" \
	"painted in Chromium ${2:-?} ms after navigation start"
set -- $(awk '$1 == "load" && $2 ~ /svg$/ { print $4, $6, $8 }' "$T/big.out")
is "${1:-}" 0 "100,000 stacks: the SVG loads without a JavaScript error"
diag "100,000 stacks: probe report --format svg $(( (t1 - t0) / 1000000 )) ms;" \
	"SVG $(( $(stat -c %s "$T/big.svg") / 1024 )) KiB, ${3:-?} frames drawn;" \
	"painted in Chromium ${2:-?} ms after navigation start"
[ -n "${3:-}" ] && [ "${3:-0}" -gt 100 ] && [ "${3:-0}" -lt 200000 ]
ok $? "narrow frames are merged: ${3:-?} frames drawn"
grep -q '^search malloc Matched:[0-9.]*%' "$T/big.out"
ok $? "Ctrl-F works on it ($(field "$T/big.out" search malloc 3))"
set -- $(awk '$1 == "zoom" { print $3, $4 }' "$T/big.out")
within "${1:-}" "${2:-x}" 0.05
ok $? "a click zooms on it"
keep big.png

# ---- allocations (--alloc): each frame as wide as its share of the bytes,
# the details line in bytes; the HTML page of the same loads
"$PROBE" record -q --alloc=64K -o "$T/al.probe" -- "$GT/gt_alloc" 256 >/dev/null 2>>"$T/err"
"$PROBE" report "$T/al.probe" >"$T/al.txt" 2>>"$T/err"
"$PROBE" report --format svg -o "$T/al.svg" "$T/al.probe" 2>>"$T/err" &&
	"$PROBE" report --format html -o "$T/al.html" "$T/al.probe" 2>>"$T/err"
fg load "$T/al.svg" shares hover site_a load "$T/al.html" >"$T/al.out" 2>&1
is "$(awk '$1 == "load" { print $4 }' "$T/al.out" | tr '\n' ' ')" "0 0 " \
	"--alloc: the SVG and the HTML page load without a JavaScript error"
fail=0
for name in site_a site_b site_c; do
	want=$(self_share "$T/al.txt" "$name")
	got=$(field "$T/al.out" share "$name" 3)
	diag "$name: $got % wide in Chromium, $want % of the bytes in probe report"
	within "$got" "$want" 0.5 || fail=1
done
ok $fail "--alloc: site_a, site_b, site_c as wide in Chromium as their shares of the bytes (+-0.5)"
d=$(awk '$1 == "hover" { $1 = $2 = ""; sub(/^  /, ""); print }' "$T/al.out")
echo "$d" | grep -Eq '^site_a in gt_alloc: [0-9]+ samples, [0-9.]+ (KiB|MiB|GiB), [0-9.]+%$'
ok $? "the mouse over site_a: the details line gives its bytes ($d)"

[ -s "$T/err" ] && { diag "stderr:"; sed 's/^/#   /' "$T/err" | head -20; }
[ "$_tap_fail" -eq 0 ] || for f in "$T"/*.out; do diag "$f:"; sed 's/^/#   /' "$f"; done
done_testing
