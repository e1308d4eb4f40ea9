#!/bin/sh
# The terminal's reports (issue 23, points 6 and 7):
# - C++ names as perf shows them, without parameter lists, in text, tree
#   and top (gt::mix, gt::Box<int>::get, main::{lambda(long)#1}::operator());
#   overloads are one row; --signatures shows the full ones, apart; the
#   formats other tools read keep them (folded here);
# - --percent-limit hides rows by the column they sort by (Self; Total
#   with --children), on a terminal too;
# - the tree's modules in brackets once ([vdso], not [[vdso]]), its lines
#   cut to COLUMNS or the terminal's width, with "..";
# - one file under two names (hard links) is one module under --sort dso;
# - --sort pid,tid: perf's Pid:Command columns, ids right-aligned.
# Every check but the presence of rows reads one recording, so none is
# statistical: the shares below are each over 18 % of several hundred
# samples, where "more than 0" cannot fail by chance.
. "$(dirname "$0")/lib.sh"
unset COLUMNS
[ -x "$GT/gt_cxxnames" ] || skip_all "gt_cxxnames not built (needs a C++ compiler)"
plan 22

# samples_named FILE NAME: the Samples column of the first row whose first
# key column (Function) is exactly NAME; empty when there is none.  Columns
# are two or more spaces apart; names hold single spaces ("mix(long, int)").
samples_named() {
	awk -v n="$2" '/^#/ { next } {
		line = $0; sub(/^ *[0-9.]+% +([0-9.]+% +)?[0-9]+  +/, "", line)
		split(line, c, /  +/); if (c[1] == n) { print $3; exit } }' "$1"
}
# widest FILE: the longest line of the tree's nodes (not the "#" header
# lines), in characters, carriage returns left out.
widest() { tr -d '\r' <"$1" | awk '!/^#/ { if (length($0) > m) m = length($0) } END { print m + 0 }'; }

R=$T/cxx.probe
"$PROBE" record -q -o "$R" -- "$GT/gt_cxxnames" 150 >/dev/null 2>"$T/err"
ok $? "gt_cxxnames recorded"
"$PROBE" report "$R" >"$T/text" 2>>"$T/err"
"$PROBE" report --signatures "$R" >"$T/sig" 2>>"$T/err"

# ---- C++ names ----------------------------------------------------------
fail=0
for n in 'gt::mix' 'gt::Box<int>::get' 'main::{lambda(long)#1}::operator()'; do
	v=$(samples_named "$T/text" "$n")
	[ "${v:-0}" -gt 0 ] || { fail=1; diag "no row '$n' with samples"; }
done
! grep -q 'gt::mix(\|get(long)\|) const' "$T/text" || fail=1
ok $fail "text: C++ names without parameter lists, as perf shows them (gt::mix, gt::Box<int>::get, main::{lambda(long)#1}::operator())"
[ $fail -eq 0 ] || sed -n '6,12s/^/#   /p' "$T/text"

a=$(samples_named "$T/sig" 'gt::mix(long, int)')
b=$(samples_named "$T/sig" 'gt::mix(long, double)')
m=$(samples_named "$T/text" 'gt::mix')
[ "${a:-0}" -gt 0 ] && [ "${b:-0}" -gt 0 ] && [ "${m:-0}" -eq $((a + b)) ]
ok $? "the two overloads are one row, gt::mix: $m samples = $a (long, int) + $b (long, double) under --signatures"
[ -n "$(samples_named "$T/sig" 'gt::Box<int>::get(long) const')" ] &&
	[ -n "$(samples_named "$T/sig" 'main::{lambda(long)#1}::operator()(long) const')" ]
ok $? "--signatures: the full signatures (gt::Box<int>::get(long) const, the lambda's operator()(long) const)"

"$PROBE" report --tree "$R" >"$T/tree" 2>>"$T/err"
"$PROBE" report --tree --full-names "$R" >"$T/treesig" 2>>"$T/err"
grep -q '^ .*%  *gt::Box<int>::get  ' "$T/tree" && ! grep -q 'gt::mix(' "$T/tree" &&
	grep -q '%  *gt::mix(long, int)  ' "$T/treesig"
ok $? "tree: the same names, and the full ones with --full-names"
"$PROBE" report --format folded "$R" >"$T/folded" 2>>"$T/err"
grep -q 'gt::mix(long, int)' "$T/folded" && grep -q 'gt::Box<int>::get(long) const' "$T/folded"
ok $? "folded (for other tools) keeps the full signatures"

"$PROBE" top -d 0.5 --exit -- "$GT/gt_cxxnames" 60 >/dev/null 2>"$T/top"
awk '/^# probe top:/ { buf = "" } { buf = buf $0 "\n" } END { printf "%s", buf }' \
	"$T/top" >"$T/toplast"
grep -q '  gt::Box<int>::get  ' "$T/toplast" && ! grep -q 'gt::mix(\|) const' "$T/toplast"
ok $? "top: the same names"
[ "$_tap_fail" -eq 0 ] || sed -n '5,10s/^/#   /p' "$T/toplast"
"$PROBE" top --signatures -d 0.5 --exit -- "$GT/gt_cxxnames" 30 >/dev/null 2>"$T/top2"
grep -q '  gt::Box<int>::get(long) const  ' "$T/top2"
ok $? "top --signatures: the full ones"

# ---- --percent-limit on the column rows sort by -------------------------
"$PROBE" report --percent-limit 1 "$R" >"$T/lim" 2>>"$T/err"
awk '!/^#/ { s = $1; sub("%", "", s); if (s + 0 < 1) bad = 1; n++ } END { exit bad || !n }' "$T/lim"
ok $? "--percent-limit 1: every row has Self >= 1 % (was: rows at 0.00 % Self kept by Total)"
! grep -q '  main  ' "$T/lim"
ok $? "main (Self ~0, Total 100 %) is not among them"
"$PROBE" report --children --percent-limit 1 "$R" >"$T/limc" 2>>"$T/err"
# main's Total is all but the samples before and after it (the loader's,
# exit's: a few under load), so at least 50 % rather than exactly 100 %.
awk '!/^#/ && / main  / { t = $1; sub("%", "", t); if (t + 0 >= 50) f = 1 } END { exit !f }' "$T/limc" &&
	awk '!/^#/ { s = $1; sub("%", "", s); if (s + 0 < 1) bad = 1 } END { exit bad }' "$T/limc"
ok $? "--children --percent-limit 1: rows by Total, main among them"
script -qc "$PROBE report $R" /dev/null >"$T/tty" 2>&1
tr -d '\r' <"$T/tty" | awk '!/^#/ { s = $1; sub("%", "", s); if (s + 0 < 0.5) bad = 1 } END { exit bad }' &&
	grep -q '^# [0-9]* rows* under 0.5 % hidden (Self, on a terminal' "$T/tty"
ok $? "on a terminal: rows over 0.5 % Self, and it says so: $(grep hidden "$T/tty" | tr -d '\r')"

# ---- the tree: brackets, width ------------------------------------------
grep -q '  \[vdso\]$\|  \[kernel.kallsyms\]$' "$T/tree" && ! grep -q '\[\[' "$T/tree"
ok $? "tree: [vdso] and [kernel.kallsyms] in one pair of brackets, as perf writes them"
[ "$(widest "$T/tree")" -gt 60 ]
ok $? "off a terminal, COLUMNS unset: whole lines ($(widest "$T/tree") characters)"
COLUMNS=60 "$PROBE" report --tree "$R" >"$T/tree60" 2>>"$T/err"
[ "$(widest "$T/tree60")" -le 60 ] && grep -q '\.\.$' "$T/tree60" &&
	[ "$(grep -c '%' "$T/tree60")" -eq "$(grep -c '%' "$T/tree")" ]
ok $? "COLUMNS=60: every line cut to 60 characters ($(widest "$T/tree60")), '..' where cut, no line lost"
COLUMNS=60 "$PROBE" report --tree -o "$T/tree60o" "$R" 2>>"$T/err"
cmp -s "$T/tree" "$T/tree60o"
ok $? "-o FILE: whole lines (a file is no terminal)"
script -qc "stty cols 70; $PROBE report --tree $R" /dev/null >"$T/treetty" 2>&1
[ "$(widest "$T/treetty")" -le 70 ] && grep -q 'gt::mix' "$T/treetty"
ok $? "a 70-column terminal: lines of at most 70 characters ($(widest "$T/treetty"))"

# ---- one file, two names (hard links), and copies ----------------------
# hl_b is a hard link of hl_a, c/hl_a a copy under the same basename (one
# build-id: a row named hl_a could not tell them apart), hl_z a copy under
# another name (a program of its own to whoever named it so).
mkdir "$T/c" && cp "$GT/gt_leaf" "$T/hl_a" && ln "$T/hl_a" "$T/hl_b" 2>/dev/null &&
	cp "$T/hl_a" "$T/c/hl_a" && cp "$T/hl_a" "$T/hl_z"
if [ "$(stat -c %h "$T/hl_a" 2>/dev/null)" = 2 ]; then
	H=$T/hl.probe
	"$PROBE" record -q -o "$H" -- sh -c "for p in hl_a hl_b c/hl_a hl_z; do $T/\$p 30 >/dev/null; done" 2>>"$T/err"
	"$PROBE" report --sort dso "$H" >"$T/hldso" 2>>"$T/err"
	[ "$(grep -c '  hl_[ab]$' "$T/hldso")" = 1 ] && [ "$(grep -c '  hl_z$' "$T/hldso")" = 1 ]
	ok $? "--sort dso: hl_a, its hard link hl_b and its copy c/hl_a are one row, the copy hl_z another"
	[ "$_tap_fail" -eq 0 ] || sed -n '5,$s/^/#   /p' "$T/hldso"
	"$PROBE" report "$H" >"$T/hlsym" 2>>"$T/err"
	is "$(grep -c '  leaf_five  *hl_a$' "$T/hlsym")" 1 "and leaf_five of hl_a one row, not one per name"
	"$PROBE" report --sort pid,tid "$H" >"$T/ids" 2>>"$T/err"
	awk '/^#.*Pid:Command/ { hp = index($0, "Pid:") + 3; ht = index($0, "Tid:") + 3; next }
		/^#/ { next }
		{ n++; r = $0; p = index(r, ":"); rest = substr(r, p + 1); t = p + index(rest, ":")
		  if (p != hp || t != ht) bad = 1 }
		END { exit bad || !n || !hp || !ht }' "$T/ids"
	ok $? "--sort pid,tid: perf's Pid:Command and Tid:Command columns, each colon under the header's"
	[ "$_tap_fail" -eq 0 ] || sed -n '5,$s/^/#   /p' "$T/ids"
else
	skip "no hard link in $T"; skip "no hard link in $T"; skip "no hard link in $T"
fi

# ---- the help says it ---------------------------------------------------
"$PROBE" report -h >"$T/help" 2>&1
grep -q -- '--signatures' "$T/help"
ok $? "report -h lists --signatures"
[ "$(grep -vc '^probe: warning: .*no samples' "$T/err")" -eq 0 ]
ok $? "no message on stderr"
[ -s "$T/err" ] && sed 's/^/#   /' "$T/err" | head -5
done_testing
