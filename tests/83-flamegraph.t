#!/bin/sh
# probe report --format svg (and html, the same drawn on a canvas), read
# as a person reads it: in headless Chromium (tests/flamegraph.js,
# puppeteer-core from scripts/install-deps).
# The frames' widths in the page give the text report's shares (gt_leaf's
# leaves, gt_threads' threads with --sort tid) within 0.5 points; Ctrl-F
# finds a function and says its Total; a click zooms, Reset Zoom undoes it;
# --inverted puts the leaves on top; hostile names are escaped (test_flame
# writes them); a recording of 100,000 distinct stacks opens, and the time
# it takes to be painted is printed (measured, not asserted: scripts/bench
# --flame).  Screenshots are kept in $BUILD/tests/83-flamegraph-*.png.
. "$(dirname "$0")/lib.sh"
plan 44

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
	while [ $i -lt 44 ]; do skip "$why"; i=$((i + 1)); done
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
