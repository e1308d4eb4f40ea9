#!/bin/sh
# --format pprof read by the real reader, go tool pprof: for ground-truth
# programs the same total samples as probe report, each named function's
# flat share within 0.5 points of its Self %, inline frames as functions of
# their own (Lines of one Location, innermost first), demangled C++ names,
# build-ids and module names, pid/tid/thread labels with the thread shares,
# weights as cpu nanoseconds; a gzip file from -o, none on a terminal.
# go tool pprof -list and -disasm run from a directory outside the source
# tree, with nothing in PPROF_BINARY_PATH: -list shows gt_leaf's leaf_five
# and gt_inline's inlined inline_three by their files' full paths, the hot
# line holding the function's samples; -disasm shows leaf_five (gt_leaf, a
# PIE) and hot_a (a plugin .so) as instructions at addresses inside the
# function, their samples adding up to the function's.  Those compare counts
# (-sample_index=samples) with probe report's for the same samples: equal,
# no statistical bound; the hot line must hold 90 % of them (every
# instruction of both functions is on it with gcc and clang).
. "$(dirname "$0")/lib.sh"
command -v go >/dev/null 2>&1 ||
	skip_all "no go command (Debian golang-go): go tool pprof is the reader checked"
# Nothing of go's outside $T: its caches, pprof's downloads and binaries.
export HOME="$T" GOCACHE="$T/gocache" GOPATH="$T/gopath" PPROF_TMPDIR="$T" \
	PPROF_BINARY_PATH="$T/nobin" GOFLAGS= GOTOOLCHAIN=local
mkdir -p "$T/nobin"
plan 36

pprof() { go tool pprof "$@" 2>>"$T/pprof.err"; }
# run NAME CMD...: record at 999 Hz, then a text report by function
# ($T/NAME.txt) and the pprof profile ($T/NAME.pb.gz)
run() {
	name=$1; shift
	"$PROBE" record -q -F 999 -o "$T/$name.probe" -- "$@" >/dev/null 2>>"$T/rec.err" &&
	# --signatures: the text rows named as pprof names them (C++ whole)
	"$PROBE" report --signatures --sort sym "$T/$name.probe" >"$T/$name.txt" 2>>"$T/rep.err" &&
	"$PROBE" report --format pprof -o "$T/$name.pb.gz" "$T/$name.probe" 2>>"$T/rep.err"
}
# share REPORT NAME: Self % of the text row whose Function is exactly NAME
share() {
	awk -v name="$2" '/^#/ { next } substr($0, 32) == name { print substr($0, 1, 8) + 0; exit }' "$1"
}
# flat TOP NAME: flat % of the go tool pprof -top row named exactly NAME
flat() {
	awk -v name="$2" 'go { n = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, "", n)
		if (n == name) { sub("%", "", $2); print $2 + 0; exit } }
		/ flat%/ { go = 1 }' "$1"
}
# total TOP: the "of N total" of a -top output
total() { sed -n 's/.* of \([0-9.]*\)[a-z]* total.*/\1/p' "$1"; }
# samples REPORT: "N samples" of probe report's header
samples() { sed -n 's/^# event: .*; \([0-9]*\) samples,.*/\1/p' "$1"; }
# compare NAME PROBE-NAME PPROF-NAME: both shares within 0.5 points
compare() {
	p=$(share "$T/$1.txt" "$2") g=$(flat "$T/$1.top" "$3")
	diag "$1: $2 probe $p %, go tool pprof $g %"
	within "$g" "$p" 0.5
	ok $? "$1: $3 flat $g % against probe's $p % (+-0.5)"
}
# top NAME [ARGS]: go tool pprof -top into $T/NAME.top
top() { n=$1; shift; pprof -top -nodefraction=0 "$@" "$T/$n.pb.gz" >"$T/$n.top"; }

# --- gt_leaf: three leaves 5:3:2 ---------------------------------------------
run leaf "$GT/gt_leaf" 300
ok $? "gt_leaf: recorded, reported as text and as pprof"
gzip -t "$T/leaf.pb.gz" 2>/dev/null
ok $? "-o writes a file gzip -t accepts"
top leaf -sample_index=samples
is "$(total "$T/leaf.top")" "$(samples "$T/leaf.txt")" "gt_leaf: same total samples"
top leaf
for f in leaf_five leaf_three leaf_two; do compare leaf $f $f; done
# Weights: the cpu total is the sum of the samples' weights, 1e9/999 ns each.
pprof -raw "$T/leaf.pb.gz" >"$T/leaf.raw"
w=$(awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
	s && /^ +[0-9]+ +[0-9]+:/ { w += $2 } END { printf "%.0f", w }' "$T/leaf.raw")
top leaf -sample_index=cpu -unit=ns
is "$(total "$T/leaf.top")" "$w" "-sample_index=cpu total is the weights' sum ($w ns)"
n=$(samples "$T/leaf.txt")
within "$w" "$(awk -v n="$n" 'BEGIN { printf "%.0f", n * 1001001 }')" "$((n * 10000))"
ok $? "... which is $n samples of ~1001001 ns (cpu-clock at 999 Hz)"
grep -q '^PeriodType: cpu nanoseconds' "$T/leaf.raw" && grep -q '^Period: 1001001$' "$T/leaf.raw"
ok $? "period_type cpu/nanoseconds, period 1001001 ns"
grep -q '^samples/count cpu/nanoseconds$' "$T/leaf.raw"
ok $? "sample types samples/count, cpu/nanoseconds"
bid=$(readelf -nW "$GT/gt_leaf" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
grep -q " $GT/gt_leaf $bid " "$T/leaf.raw"
ok $? "a mapping of gt_leaf with its build-id ($bid)"
libc=$(awk '/^Mappings/ { m = 1 } m && / [^ ]*\/libc\.so\.6 [0-9a-f][0-9a-f]* / { print; exit }' "$T/leaf.raw")
[ -n "$libc" ]; ok $? "a mapping of libc.so.6 with a build-id"
grep -q " $GT/gt_leaf $bid \[FN\]\[FL\]\[LN\]\[IN\]$" "$T/leaf.raw" &&
	awk '/^Mappings/ { m = 1; next } m && NF && !/\[FN\]/ { bad = 1 } END { exit bad }' "$T/leaf.raw"
ok $? "gt_leaf's mapping has functions, file names, lines, inline frames; every one functions"
pprof -tags "$T/leaf.pb.gz" >"$T/leaf.tags"
for k in pid tid thread comm exe; do
	grep -q "^ *$k: Total" "$T/leaf.tags"; ok $? "label $k"
done
pid=$(awk '/^ *pid: Total/ { getline; sub(/.*: /, ""); print; exit }' "$T/leaf.tags")
tid=$(awk '/^ *tid: Total/ { getline; sub(/.*: /, ""); print; exit }' "$T/leaf.tags")
[ -n "$pid" ] && [ "$pid" = "$tid" ]
ok $? "pid and tid are numbers, the main thread's tid its pid ($pid, $tid)"

# --- gt_threads: four threads 1:2:3:4 -----------------------------------------
run thr "$GT/gt_threads" 100
ok $? "gt_threads: recorded and reported"
top thr
compare thr work work
"$PROBE" report --sort comm "$T/thr.probe" >"$T/thr.comm" 2>>"$T/rep.err"
pprof -tags "$T/thr.pb.gz" >"$T/thr.tags"
bad=
for w in w1 w2 w3 w4; do
	p=$(self_share "$T/thr.comm" $w)
	g=$(awk -v w="$w" '/^ *thread:/ { t = 1; next } /^ *[a-z]+: Total/ { t = 0 }
		t && $NF == w { sub(/.*\(/, ""); sub(/%.*/, ""); print $0 + 0; exit }' "$T/thr.tags")
	diag "thread $w: probe $p %, go tool pprof $g %"
	within "$g" "$p" 0.5 || bad="$bad $w"
done
[ -z "$bad" ]; ok $? "thread labels w1..w4 with probe's --sort comm shares (+-0.5)${bad:+; off:$bad}"

# --- gt_cxx: demangled names ---------------------------------------------------
run cxx "$GT/gt_cxx" 2000
ok $? "gt_cxx: recorded and reported"
top cxx
compare cxx 'gt::Acc<double>::spin(long)' 'gt::Acc<double>::spin(long)'

# --- gt_inline: inline frames ---------------------------------------------------
run inl "$GT/gt_inline" 600
ok $? "gt_inline: recorded and reported"
top inl
compare inl 'inline_three [inlined]' 'inline_three (inline)'
compare inl 'inline_one [inlined]' 'inline_one (inline)'
pprof -raw "$T/inl.pb.gz" >"$T/inl.raw"
# -raw: a location's first line after its address, its other Lines below it.
awk '/^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ inline_three / { getline n; getline w
		if (n ~ /^ +inline_outer / && w ~ /^ +work /) ok = 1 }
	END { exit !ok }' "$T/inl.raw"
ok $? "one Location holds inline_three, inline_outer, work, innermost first"
top inl -sample_index=samples
is "$(total "$T/inl.top")" "$(samples "$T/inl.txt")" "gt_inline: same total samples"

# --- -list and -disasm, from elsewhere ----------------------------------------
mkdir -p "$T/away"
# away ARGS...: go tool pprof -sample_index=samples ARGS, run in $T/away
away() { (cd "$T/away" && pprof -sample_index=samples "$@"); }
# nself REPORT NAME: the Samples (self) of the text row whose Function is NAME
nself() { awk -v name="$2" '/^#/ { next } substr($0, 32) == name { print $3; exit }' "$1"; }
# routine OUT: the flat count of the first ROUTINE of a -list or -disasm
routine() { awk '/^ROUTINE/ { getline; print $1 == "." ? 0 : $1; exit }' "$1"; }
# listed OUT LINE: the flat count of the first routine's row for source line LINE
listed() {
	awk -v l="$2" '/^ROUTINE/ { r++ } r == 1 && $3 ~ "^" l ":" { print $1 == "." ? 0 : $1; exit }' "$1"
}
# list_ok NAME REGEXP FUNCTION SOURCE PATTERN: -list REGEXP of NAME.pb.gz;
# its first routine is FUNCTION in .../SOURCE (a full path), with probe's
# Self samples, and the line of SOURCE that matches PATTERN has >= 90 % of them
list_ok() {
	line=$(grep -n "$5" "$ROOT/$4" | sed 's/:.*//;q')
	away -list "$2" "$T/$1.pb.gz" >"$T/$1.list"
	n=$(nself "$T/$1.txt" "$3") f=$(routine "$T/$1.list") r=$(listed "$T/$1.list" "$line")
	diag "$1: -list $2: $(sed -n 2p "$T/$1.list"); probe $n samples, pprof $f, line $line ${r:-none}"
	grep -q "^ROUTINE =* ${3%% *} in /.*/$4\$" "$T/$1.list" && [ "${n:-0}" -gt 0 ] &&
		[ "$f" = "$n" ] && [ "${r:-0}" -ge $((n * 9 / 10)) ]
}
# disasm_ok NAME OBJECT SYMBOL: -disasm SYMBOL of NAME.pb.gz shows SYMBOL's
# instructions, each at an address inside it (OBJECT's symbol table), their
# flat counts adding up to the routine's, which is probe's Self samples
disasm_ok() {
	what="$3 in $(basename "$2")"
	set -- "$1" "$2" "$3" $(readelf -sW "$2" | awk -v s="$3" '$4 == "FUNC" && $8 == s { print $2, $3; exit }')
	away -disasm "$3" "$T/$1.pb.gz" >"$T/$1.dis"
	n=$(nself "$T/$1.txt" "$3")
	set -- $(awk -v lo="$((0x${4:-0}))" -v size="${5:-0}" '
		function hex(s,   i, v) { v = 0
			for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v }
		/^ROUTINE/ { r++; getline; if (r == 1) f = $1 == "." ? 0 : $1; next }
		r == 1 && $3 ~ /^[0-9a-f]+:$/ { a = hex(substr($3, 1, length($3) - 1)); k++
			if (a < lo || a >= lo + size) bad++
			s += $1 == "." ? 0 : $1 }
		END { print k + 0, bad + 0, s + 0, f + 0 }' "$T/$1.dis")
	diag "-disasm $what: $1 instructions ($2 outside the symbol), flat $3, routine $4, probe $n samples"
	[ "$1" -gt 0 ] && [ "$2" = 0 ] && [ "${n:-0}" -gt 0 ] && [ "$3" = "$n" ] && [ "$4" = "$n" ]
}
pie=$(readelf -hW "$GT/gt_leaf" | sed -n 's/^ *Type: *\([A-Z]*\).*/\1/p')
list_ok leaf '^leaf_five$' leaf_five tests/gt_leaf.c 'void leaf_five(void)'
ok $? "-list leaf_five from another directory: gt_leaf.c by its full path, its line ${line:-?} with ${r:-no} of ${n:-no} samples"
list_ok inl '^inline_three$' 'inline_three [inlined]' tests/gt_inline.c 'HOT3 \*/'
ok $? "-list inline_three (inlined in work): gt_inline.c's line ${line:-?} with ${r:-no} of ${n:-no} samples"
disasm_ok leaf "$GT/gt_leaf" leaf_five
ok $? "-disasm leaf_five (gt_leaf, ELF type $pie): its instructions at its own addresses, ${n:-no} samples, as probe's"
run plug "$GT/gt_plugin" 10 "$GT/libgt_plugin_a.so:300"
ok $? "gt_plugin with libgt_plugin_a.so: recorded and reported"
disasm_ok plug "$GT/libgt_plugin_a.so" hot_a
ok $? "-disasm hot_a (in libgt_plugin_a.so, dlopened): its instructions at its own addresses, ${n:-no} samples, as probe's"

# --- standard output -----------------------------------------------------------
"$PROBE" report --format pprof "$T/leaf.probe" 2>"$T/err" | gzip -t 2>/dev/null
ok $? "to a pipe: a gzip stream"
script -qec "$PROBE report --format pprof $T/leaf.probe" /dev/null >"$T/tty" 2>&1
grep -q 'probe: .*binary: give -o FILE, or pipe it' "$T/tty"
ok $? "refused on a terminal, saying what to do"

[ "$_tap_fail" -eq 0 ] || { diag "errors:"; cat "$T"/*.err 2>/dev/null | sed 's/^/#   /' | head -20; }
done_testing
