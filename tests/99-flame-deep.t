#!/bin/sh
# Deep stacks and what a person sees of them (issue 23, points 5 and 7).
# - A stack deeper than the wire carries (256 frames) is cut: its outermost
#   frame is [truncated] in every output (folded, the text report, the
#   call tree, pprof, the flame graph), not a fake root in the middle of
#   the recursion.  gt_recurse 300 deep: nearly every sample is cut.
# - Its flame graph (4,214 px tall) opens on the root and its first ten
#   levels, with the title, Search and the details line in view, in the
#   SVG and in the HTML page, at 1400x900 and 800x500 (headless Chromium,
#   tests/flamegraph.js); --inverted still opens on its root at the top.
# - Every label is readable on its frame: contrast >= 4.5:1 (WCAG AA), read
#   from the SVGs' own fill colours (off-CPU frames, a differential graph's
#   red and blue) and from what Chromium paints after "Colour: module" and
#   a zoom (dimmed ancestors).
. "$(dirname "$0")/lib.sh"
plan 19

"$PROBE" record -q -F 999 -o "$T/deep.probe" -- "$GT/gt_recurse" 1000 300 >/dev/null 2>"$T/err"
"$PROBE" report --format folded -o "$T/deep.folded" "$T/deep.probe" 2>>"$T/err"
ok $? "probe record and report --format folded, gt_recurse 300 deep"
# Folded lines: exe;outermost;...;leaf COUNT.  Per line: cut (outermost is
# [truncated]), whole (it reaches main), or neither; the frames of a cut one.
# Neither is wrong only 250 frames deep or more: a sample before main or
# after it returned (the loader, exit handlers) is short and whole as it is.
awk '{ n = $NF; line = $0; sub(/ [0-9]+$/, "", line); k = split(line, f, ";")
       t += n; whole = 0
       for (i = 2; i <= k; i++) if (f[i] == "main") whole = 1
       if (f[2] == "[truncated]") { cut += n; if (k - 1 != 256) odd++ }
       else if (!whole && k - 1 >= 250) { bad += n; if (!ex) ex = f[2] " (" k - 1 " frames)" }
     }
     END { printf "%d %d %d %d %s\n", t, cut, bad, odd, ex ? ex : "-" }' "$T/deep.folded" >"$T/counts"
read total cut bad odd example <"$T/counts"
diag "gt_recurse 300 deep: $cut of $total samples cut at 256 frames, $bad neither cut nor whole"
[ "$cut" -gt 0 ] && [ "$odd" -eq 0 ]
ok $? "cut stacks end in [truncated] after 255 frames ($cut of $total samples; $odd otherwise)"
is "$bad" 0 "every other stack 250 frames deep reaches main: no fake root (first: $example)"

# The text report: a [truncated] row whose Total is the cut samples' share.
"$PROBE" report "$T/deep.probe" >"$T/deep.txt" 2>>"$T/err"
want=$(awk -v c="$cut" -v t="$total" 'BEGIN { printf "%.2f", t ? 100 * c / t : 0 }')
got=$(awk '/^#/ { next } { for (i = 4; i <= NF; i++) if ($i == "[truncated]") { sub("%", "", $2); print $2; exit } }' "$T/deep.txt")
within "${got:-}" "$want" 0.01
ok $? "probe report: [truncated] has Total ${got:-none} %, the cut samples $want %"
# The call tree, callers first: its widest root is [truncated].
"$PROBE" report -g caller "$T/deep.probe" >"$T/deep.tree" 2>>"$T/err"
first=$(grep -v '^#' "$T/deep.tree" | head -n1)
case "$first" in *"[truncated]"*) true ;; *) false ;; esac
ok $? "probe report -g caller: the first root is [truncated] ($(echo "$first" | cut -c1-60))"

# pprof, read by go tool pprof: the outermost frame of each trace 250
# frames deep or more (-traces: a line of dashes, the leaf with its
# value, its callers one a line).
"$PROBE" report --format pprof -o "$T/deep.pb.gz" "$T/deep.probe" 2>>"$T/err"
if command -v go >/dev/null 2>&1; then
	export GOCACHE="$T/go-cache" GOPATH="$T/go-path" GOTOOLCHAIN=local GOFLAGS=-mod=mod
	go tool pprof -traces "$T/deep.pb.gz" 2>>"$T/err" |
		awk '/^-+\+/ { if (in_trace && n >= 250) print last; in_trace = 1; n = 0; next }
		     in_trace && NF && $1 != "exe:" { last = $NF; n++ } END { if (n >= 250) print last }' |
		sort | uniq -c >"$T/deep.roots"
	grep -q ' \[truncated\]$' "$T/deep.roots" &&
		! grep -v -e ' \[truncated\]$' -e ' _start$' -e ' main$' "$T/deep.roots" >/dev/null
	ok $? "go tool pprof -traces: each deep trace's outermost frame is [truncated] or _start ($(tr -s ' \n' ' ' <"$T/deep.roots"))"
else
	skip "no go command (Debian golang-go): go tool pprof is the reader checked"
fi

# ---- the pictures --------------------------------------------------------
"$PROBE" report --format svg -o "$T/deep.svg" "$T/deep.probe" 2>>"$T/err"
"$PROBE" report --format html -o "$T/deep.html" "$T/deep.probe" 2>>"$T/err"
"$PROBE" report --format svg --inverted -o "$T/deep-inv.svg" "$T/deep.probe" 2>>"$T/err"
diag "deep.svg: $(sed -n 's/.*<svg [^>]*height="\([0-9]*\)".*/\1/p' "$T/deep.svg" | head -n1) px tall"

# Off-CPU frames (navy) and a differential graph (red and blue): the same
# program without and with --off-cpu, its compute shrinking, waits growing.
"$PROBE" record -q -o "$T/cpu.probe" -- "$GT/gt_offcpu" 0.3 >/dev/null 2>>"$T/err"
"$PROBE" record --off-cpu -q -o "$T/off.probe" -- "$GT/gt_offcpu" 0.3 >/dev/null 2>>"$T/err"
"$PROBE" report --format svg -o "$T/off.svg" "$T/off.probe" 2>>"$T/err"
"$PROBE" report --format html -o "$T/off.html" "$T/off.probe" 2>>"$T/err"
"$PROBE" diff "$T/cpu.probe" "$T/off.probe" --format svg -o "$T/diff.svg" 2>>"$T/err"

# contrast SVG: "MIN LABELS FILL/TEXT" from the file itself: each frame's
# rect fill and its label's fill (else what the style sheet's text rule
# says, else SVG's default, black), WCAG 2's contrast ratio.
contrast() {
	python3 - "$1" <<'EOF'
import re, sys
svg = open(sys.argv[1], encoding="utf-8").read()
rule = re.search(r"(?:^|\n)text \{[^}]*?fill: *(#[0-9a-fA-F]{3,6})", svg)
default = rule.group(1) if rule else "#000000"
def rgb(c):
    c = c.lstrip("#")
    if len(c) == 3:
        c = "".join(x * 2 for x in c)
    return [int(c[i:i + 2], 16) / 255 for i in (0, 2, 4)]
def lum(c):
    v = [x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4 for x in rgb(c)]
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]
worst, n = None, 0
for g in re.findall(r'<g class="[^"]*"><title>.*?</g>', svg, re.S):
    bg = re.search(r'<rect [^>]*fill="(#[0-9a-fA-F]+)"', g)
    t = re.search(r'<text ([^>]*)>', g)
    if not bg or not t:
        continue
    fg = re.search(r'fill="(#[0-9a-fA-F]+)"', t.group(1))
    fg = fg.group(1) if fg else default
    a, b = lum(bg.group(1)) + 0.05, lum(fg) + 0.05
    r = max(a, b) / min(a, b)
    n += 1
    if worst is None or r < worst[0]:
        worst = (r, bg.group(1) + "/" + fg)
print("%.2f %d %s" % (worst[0], n, worst[1]) if worst else "- 0 -")
EOF
}
for f in deep off diff; do
	set -- $(contrast "$T/$f.svg")
	awk -v m="${1:-}" -v n="${2:-0}" 'BEGIN { exit !(m != "-" && m + 0 >= 4.5 && n > 0) }'
	ok $? "$f.svg: every label's contrast on its frame >= 4.5:1 (least ${1:-?} of ${2:-?} labels: ${3:-?})"
done
perl -0ne 'exit !m{<g class="o"><title>[^<]*</title><rect [^>]*/><text}' "$T/off.svg" &&
	perl -0ne 'exit !m{<rect [^>]*fill="#([0-9a-e][0-9a-f])\1ff"/><text}' "$T/diff.svg"
ok $? "the contrast was read on labelled off-CPU frames and a differential graph's blue ones"

NPM=$BUILD/npm
[ -d "$NPM/node_modules/puppeteer-core" ] || NPM=$ROOT/build/npm
why=""
if ! command -v node >/dev/null 2>&1; then
	why="no node (Debian nodejs): run scripts/install-deps"
elif [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
	why="no Chromium at ${CHROMIUM:-/usr/bin/chromium} (Debian chromium): run scripts/install-deps"
elif [ ! -d "$NPM/node_modules/puppeteer-core" ]; then
	why="no puppeteer-core in $NPM: run scripts/install-deps"
fi
if [ -n "$why" ]; then
	i=$((_tap_n + 1))
	while [ $i -le 19 ]; do skip "$why"; i=$((i + 1)); done
	done_testing
fi
fg() { node "$(dirname "$0")/flamegraph.js" "$NPM" "$@"; }

# One browser for all: what the first screen shows (root and ten levels,
# controls, details), where [truncated] is drawn, and what is painted:
# labels on off-CPU frames, module colours, dimmed ancestors of a zoomed
# frame, the diff's red and blue.
fg viewport 1400 900 load "$T/deep.svg" screen load "$T/deep.html" screen \
	viewport 800 500 load "$T/deep.svg" screen load "$T/deep.html" screen \
	viewport 1400 900 load "$T/deep-inv.svg" screen load "$T/deep.svg" shares rows "[truncated]" \
	load "$T/off.svg" contrast click colour contrast zoom wait_cond_here contrast \
	load "$T/off.html" contrast click colour contrast zoom wait_cond_here contrast \
	load "$T/diff.svg" contrast >"$T/browser.out" 2>&1
# screen_of FILE W: the screen line of FILE loaded at width W
screen_of() {
	awk -v f="$1" -v w="$2" '$1 == "load" { p = ($2 == f) } p && $1 == "screen" && $2 == w' "$T/browser.out"
}
for size in "1400 900" "800 500"; do
	for f in svg html; do
		set -- $(screen_of "$T/deep.$f" "${size% *}")
		[ "${7:-}" = 1 ] && [ "${9:-}" = 10 ] && [ "${11:-}" = 1 ] && [ "${13:-}" = 1 ]
		ok $? "deep $f at ${size% *}x${size#* }: root shown ${7:-?}, levels from it ${9:-?} of 10, Search ${11:-?}, details ${13:-?} (scrolled ${5:-?} px)"
	done
done
set -- $(screen_of "$T/deep-inv.svg" 1400)
[ "${5:-}" = 0 ] && [ "${7:-}" = 1 ] && [ "${9:-}" = 10 ]
ok $? "--inverted: opens at the top on its root and ten levels (scroll ${5:-?}, root ${7:-?}, levels ${9:-?})"

set -- $(awk '$1 == "rows" { print $2, $3 }' "$T/browser.out")
[ -n "${2:-}" ] && [ "${2:-}" != - ] && [ "$(( ${1:-0} - ${2:-0} ))" -eq 16 ]
ok $? "the flame graph: [truncated] right on the root (y ${2:-?}, root ${1:-?})"
got=$(awk '$1 == "share" && $2 == "[truncated]" { print $3 }' "$T/browser.out")
within "${got:-}" "$want" 0.5
ok $? "the flame graph: [truncated] ${got:-?} % wide, the cut samples $want %"

awk '$1 == "contrast" { n++; if ($2 == "-" || $2 + 0 < 4.5 || $3 + 0 == 0) bad++ } $1 == "zoom" && $5 + 0 > 0 { dimmed++ }
     END { exit !(n == 7 && !bad && dimmed == 2) }' "$T/browser.out"
ok $? "Chromium paints every label >= 4.5:1: $(awk '$1 == "contrast" { printf "%s ", $2 }' "$T/browser.out")(kind, module, zoomed; svg, html; diff)"
[ "$(grep -c '^load .* errors 0 ' "$T/browser.out")" -eq 9 ]
ok $? "the 9 pages load without a JavaScript error ($(grep -c '^load .* errors 0 ' "$T/browser.out") did)"

[ -s "$T/err" ] && { diag "stderr:"; sed 's/^/#   /' "$T/err" | head -20; }
[ "$_tap_fail" -eq 0 ] || for f in "$T"/*.out; do diag "$f:"; sed 's/^/#   /' "$f"; done
done_testing
