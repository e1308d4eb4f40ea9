#!/bin/sh
# probe annotate: a function's instructions with the samples that fell on
# each, its source lines between them, inline frames named.
#   - gt_inline's work() holds two inlined loops of 3:1 units (HOT3 in
#     inline_three, HOT1 in inline_one, one source line each): its hottest
#     lines are those two at 75/25 % (each within binom_tol of the
#     function's samples for two checks: a false failure in fewer than 1
#     run of 1,000), named as inlined where they were inlined, with their
#     source text; nearly all samples on the two loops' instructions; the
#     instructions' shares sum to 100 and their counts to the function's.
#   - Beside perf annotate on the same program: the same instructions
#     carry 5 % or more of the function, and each such instruction's share
#     agrees within the bound of two independent recordings (sqrt 2 times
#     binom_tol of the smaller count, four checks).
#   - An inlined callee asked for by name shows the function it is in;
#     --percent-limit hides the cold instructions and says how many.
#   - A stripped program: functions named by their .eh_frame start
#     (nm's start on the unstripped copy), instructions and no source.
#   - A program changed after the recording: the sampled addresses with
#     the recording's names and lines, and a line saying why no code; the
#     code of the build that ran where perf's build-id cache has it.
#   - Kernel code from a kcore file (PROBE_KCORE: this VM has no
#     /proc/kcore), else a line saying why not.
#   - As nobody; an unknown name exits 1 and lists the hottest;
#     probe report --format annotate is the same view.
. "$(dirname "$0")/lib.sh"
plan 25

SRC=$ROOT/tests/gt_inline.c
HOT3=$(grep -n 'HOT3 \*/' "$SRC" | cut -d: -f1)
HOT1=$(grep -n 'HOT1 \*/' "$SRC" | cut -d: -f1)
OUTER=$(grep -n 'return inline_three(x)' "$SRC" | cut -d: -f1)

"$PROBE" record -q -F 999 -o "$T/inl.probe" -- "$GT/gt_inline" 1000 >/dev/null 2>"$T/rec.err"
"$PROBE" annotate -i "$T/inl.probe" work >"$T/work.txt" 2>"$T/ann.err"
rc=$?
grep -q '^ Percent  Samples : Source code & disassembly of work in gt_inline$' "$T/work.txt"
ok $((rc + $?)) "probe annotate work: exit $rc, work's annotation"

# Instruction rows: "  PCT  SAMPLES :  ADDR:   TEXT"; source rows ":  file.c:N  text".
awk '/^ +[0-9.]+ +[0-9]+ : +[0-9a-f]+:   / { print }' "$T/work.txt" >"$T/rows"
nrows=$(wc -l <"$T/rows")
sum=$(awk '{ s += $1 } END { printf "%.2f", s }' "$T/rows")
within "$sum" 100 "$(awk -v n="$nrows" 'BEGIN { print 0.005 * n + 0.01 }')"
ok $? "the $nrows instructions' shares sum to $sum % (100, rounding aside)"

n=$(sed -n 's/^ *: \([0-9]*\) samples\{0,1\}, .*/\1/p' "$T/work.txt" | head -1)
cnt=$(awk '{ s += $2 } END { print s + 0 }' "$T/rows")
"$PROBE" report -q --no-inline --sort sym "$T/inl.probe" >"$T/rep.txt" 2>/dev/null
self=$(awk '$4 == "work" { print $3; exit }' "$T/rep.txt")
[ -n "$n" ] && [ "$cnt" = "$n" ] && [ "$n" = "$self" ]
ok $? "their counts sum to the function's $n samples (probe report's Self: $self)"

# The summary of hottest lines: HOT3 then HOT1.
awk '/hottest source lines/ { go = 1; next } go && NF >= 4 { print }' "$T/work.txt" >"$T/hot"
l1=$(awk 'NR == 1 { print $4 }' "$T/hot") p1=$(awk 'NR == 1 { print $1 }' "$T/hot")
l2=$(awk 'NR == 2 { print $4 }' "$T/hot") p2=$(awk 'NR == 2 { print $1 }' "$T/hot")
[ "$l1" = "gt_inline.c:$HOT3" ] && share_ok "$p1" 75 "$n" 2
ok $? "hottest line $l1 (HOT3, inline_three's loop): $p1 % of $n (want 75)"
[ "$l2" = "gt_inline.c:$HOT1" ] && share_ok "$p2" 25 "$n" 2
ok $? "next $l2 (HOT1, inline_one's loop): $p2 % (want 25)"

grep -q "^ *:  gt_inline.c:$HOT3   for .*/\* HOT3 \*/   \[inline_three inlined at gt_inline.c:$OUTER\]$" "$T/work.txt"
ok $? "HOT3's source row: its text, inline_three named, inlined at gt_inline.c:$OUTER"

# Each instruction under the source row before it: the loops' share.
awk -v h3="gt_inline.c:$HOT3" -v h1="gt_inline.c:$HOT1" '
	/^ +: +[^ ]+:[0-9]+/ { src = $2; next }
	/^ +[0-9.]+ +[0-9]+ : +[0-9a-f]+:   / { all += $2; if (src == h3 || src == h1) in_loops += $2
		if ($2 > best) { best = $2; bsrc = src; baddr = $4 } }
	END { printf "%d %d %s %s\n", in_loops, all, bsrc, baddr }' "$T/work.txt" >"$T/loops"
read -r inl all bsrc baddr <"$T/loops"
[ "$all" -gt 0 ] && [ $((inl * 100)) -ge $((all * 98)) ]
ok $? "$inl of $all samples on the two loops' instructions (at least 98 %)"
[ "$bsrc" = "gt_inline.c:$HOT3" ]
ok $? "the hottest instruction ($baddr) is in HOT3's loop"

# Beside perf annotate.
if perf record -q -e cpu-clock -F 999 -o "$T/inl.perf" -- "$GT/gt_inline" 1000 \
	>/dev/null 2>"$T/perf.err" && perf annotate -i "$T/inl.perf" --stdio -s work \
	>"$T/perf.txt" 2>>"$T/perf.err" && grep -q '^ *[0-9.]* : *[0-9a-f]*:' "$T/perf.txt"; then
	pn=$(sed -n 's/.*(\([0-9]*\) samples, .*/\1/p' "$T/perf.txt" | head -1)
	# hot: 5 % or more on one side; it must be at least 2 % on the other
	# (an instruction whose share lies near 5 % may fall either side).
	awk '/^ +[0-9.]+ : +[0-9a-f]+:/ { a = $3; sub(":", "", a); print a, $1 }' \
		"$T/perf.txt" | sort >"$T/perf.sh"
	awk '{ a = $4; sub(":", "", a); print a, $1 }' "$T/rows" | sort >"$T/probe.sh"
	join -a1 -a2 -e 0 -o 0,1.2,2.2 "$T/probe.sh" "$T/perf.sh" >"$T/both"
	hot=$(awk '$2 >= 5 || $3 >= 5 { printf "%s ", $1 }' "$T/both")
	[ -n "$hot" ] && awk '($2 >= 5 && $3 < 2) || ($3 >= 5 && $2 < 2) { exit 1 }' "$T/both"
	ok $? "the instructions at 5 % or more, in probe's and perf annotate's: the same, $hot"
	m=$(( pn < n ? pn : n ))
	bad=$(awk -v m="$m" -v pf="$T/perf.txt" '
		BEGIN { while ((getline l < pf) > 0) { split(l, f, " ")
			if (l ~ /^ +[0-9.]+ : +[0-9a-f]+:/) { a = f[3]; sub(":", "", a); pp[a] = f[1] } } }
		{ a = $4; sub(":", "", a); if (!(a in pp) || $1 < 5) next
		  q = $1 / 100; tol = 1.4142 * 3.66 * 100 * sqrt(q * (1 - q) / m); d = $1 - pp[a]
		  if (d < 0) d = -d; printf "%s probe %.2f perf %.2f (+-%.2f)%s; ", a, $1, pp[a], tol, (d > tol ? " FAR" : "") }' "$T/rows")
	case $bad in *FAR*) false ;; "") false ;; *) true ;; esac
	ok $? "each such instruction's share beside perf's: $bad"
else
	skip "perf cannot record here: $(head -1 "$T/perf.err")"
	skip "perf cannot record here"
fi

"$PROBE" annotate -i "$T/inl.probe" inline_three >"$T/byinl.txt" 2>"$T/byinl.err"
rc=$?
grep -q 'inline_three has no code of its own that was sampled: it is inlined' "$T/byinl.err" &&
	grep -q 'disassembly of work in gt_inline$' "$T/byinl.txt"
ok $((rc + $?)) "inline_three, an inlined callee, by name: work's annotation, and why (exit $rc)"

"$PROBE" annotate -i "$T/inl.probe" --percent-limit 10 work >"$T/lim.txt" 2>&1
shown=$(awk '/^ +[0-9.]+ +[0-9]+ : +[0-9a-f]+:   / { n++; if ($1 < 10) low++ } END { print n + 0, low + 0 }' "$T/lim.txt")
hidden=$(sed -n 's/.*(\([0-9]*\) instructions under 10% not shown)/\1/p' "$T/lim.txt")
[ "${shown% *}" -gt 0 ] && [ "${shown#* }" = 0 ] && [ $((${shown% *} + ${hidden:-0})) = "$nrows" ]
ok $? "--percent-limit 10: ${shown% *} instructions shown, none under 10 %, ${hidden:-no} said hidden"

"$PROBE" annotate -i "$T/inl.probe" -M intel --asm-raw work >"$T/intel.txt" 2>&1
grep -Eq '^ +[0-9.]+ +[0-9]+ : +[0-9a-f]+:   ([0-9a-f]{2} )+ +mulsd +xmm[0-9]+, xmm[0-9]+$' "$T/intel.txt"
ok $? "-M intel --asm-raw: bytes, then Intel syntax (mulsd xmm0, xmm1)"

# A stripped program.
cp "$GT/gt_leaf" "$T/leaf_full" && cp "$GT/gt_leaf" "$T/leaf_s" && strip --strip-all "$T/leaf_s"
"$PROBE" record -q -F 999 -o "$T/s.probe" -- "$T/leaf_s" >/dev/null 2>&1
"$PROBE" annotate -i "$T/s.probe" --functions 1 >"$T/s.txt" 2>&1
start=$(nm "$T/leaf_full" | awk '$3 == "leaf_five" { sub(/^0+/, "", $1); print $1 }')
grep -q "^ Percent  Samples : Source code & disassembly of leaf_s+0x$start in leaf_s$" "$T/s.txt" &&
	grep -q "(\.eh_frame)$" "$T/s.txt"
ok $? "stripped: the hottest is leaf_s+0x$start (leaf_five's start, by nm), bounds from .eh_frame"
srows=$(grep -Ec '^ +[0-9.]+ +[0-9]+ : +[0-9a-f]+:   [a-z]' "$T/s.txt")
[ "$srows" -gt 5 ] && ! grep -Eq '^ +:  [^ ]+\.c:[0-9]+' "$T/s.txt"
ok $? "stripped: $srows instructions, no source lines"

# A program changed after its recording.
cp "$GT/gt_leaf" "$T/prog"
"$PROBE" record -q -F 999 -o "$T/c.probe" -- "$T/prog" >/dev/null 2>&1
cp "$GT/gt_inline" "$T/prog"
# HOME: no perf build-id cache (perf record above may have filled root's)
HOME=$T/home "$PROBE" annotate -i "$T/c.probe" leaf_five >"$T/c.txt" 2>"$T/c.err"
rc=$?
grep -q 'no instructions: .*/prog changed since the recording (its build-id differs)' "$T/c.txt" &&
	grep -q '(sampled address: no instruction read)' "$T/c.txt" &&
	awk '/hottest source lines/ { getline; exit !($4 == "gt_leaf.c:13") }' "$T/c.txt"
ok $((rc + $?)) "changed since the recording: leaf_five named, its sampled addresses and line gt_leaf.c:13, and why no code"
# ... and with the build that ran in perf's build-id cache: its code from there
bid=$(readelf -n "$GT/gt_leaf" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
bdir=$T/home/.debug/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-)
mkdir -p "$bdir" && cp "$GT/gt_leaf" "$bdir/elf"
HOME=$T/home "$PROBE" annotate -i "$T/c.probe" leaf_five >"$T/c2.txt" 2>&1
grep -q "code from $bdir/elf" "$T/c2.txt" &&
	grep -Eq '^ +[0-9.]+ +[1-9][0-9]* : +[0-9a-f]+:   (addsd|subq|mulsd)' "$T/c2.txt"
ok $? "changed, but perf's ~/.debug cache has the build that ran: its instructions from there"

# Kernel code: this machine's /proc/kcore, or a made one.
"$PROBE" record -q -F 999 -o "$T/k.probe" -- dd if=/dev/zero of=/dev/null bs=64k count=60000 >/dev/null 2>&1
"$PROBE" annotate -i "$T/k.probe" -d '[kernel.kallsyms]' --functions 1 >"$T/k.txt" 2>&1
range=$(sed -n 's/.*; \(ffff[0-9a-f]*\)\.\.\(ffff[0-9a-f]*\) (kallsyms)$/\1 \2/p' "$T/k.txt" | head -1)
if [ -z "$range" ]; then
	skip "no kernel function sampled with a name (kallsyms): $(head -3 "$T/k.txt" | tr '\n' ' ')"
	skip "no kernel function sampled"
else
	if [ -r /proc/kcore ]; then
		grep -Eq '^ +[0-9.]+ +[0-9]+ : +ffff[0-9a-f]+:   [a-z]' "$T/k.txt"
		ok $? "kernel function $range: instructions from /proc/kcore"
	else
		grep -q 'no instructions: this kernel has no /proc/kcore' "$T/k.txt"
		ok $? "kernel function $range: a line says this kernel has no /proc/kcore"
	fi
	python3 - "$T/kcore" $range <<'EOF'
import struct, sys
path, lo, hi = sys.argv[1], int(sys.argv[2], 16), int(sys.argv[3], 16)
n = hi - lo
eh = b'\x7fELF' + bytes([2, 1, 1]) + bytes(9) + struct.pack('<HHIQQQIHHHHHH', 4, 62, 1, 0, 64, 0, 0, 64, 56, 1, 0, 0, 0)
ph = struct.pack('<IIQQQQQQ', 1, 5, 4096, lo, 0, n, n, 4096)
with open(path, 'wb') as f:
    f.write(eh + ph + bytes(4096 - 120) + b'\x90' * n)
EOF
	PROBE_KCORE=$T/kcore "$PROBE" annotate -i "$T/k.probe" -d '[kernel.kallsyms]' --functions 1 \
		>"$T/k2.txt" 2>&1
	kn=$(awk '/^ +[0-9.]+ +[0-9]+ : +ffff[0-9a-f]+:   nop$/ { n++ } END { print n + 0 }' "$T/k2.txt")
	want=$(python3 -c 'import sys; print(int(sys.argv[2], 16) - int(sys.argv[1], 16))' $range)
	[ "$kn" = "$want" ] && grep -q "code from $T/kcore" "$T/k2.txt"
	ok $? "kernel code from a kcore file: $kn one-byte nops of $want bytes, with their samples"
fi

# As nobody, on their own recording.
as_nobody "$PROBE" record -q -F 999 -o "$T/nb.probe" -- "$GT/gt_leaf" >/dev/null 2>&1
as_nobody "$PROBE" annotate -i "$T/nb.probe" leaf_five >"$T/nb.txt" 2>"$T/nb.err"
rc=$?
grep -q 'disassembly of leaf_five in gt_leaf$' "$T/nb.txt" && grep -q 'gt_leaf.c:13' "$T/nb.txt"
ok $((rc + $?)) "as nobody: leaf_five annotated (exit $rc)"

"$PROBE" annotate -i "$T/inl.probe" no_such_function >"$T/none.txt" 2>"$T/none.err"
rc=$?
[ $rc = 1 ] && grep -q "^probe: no sampled function is named 'no_such_function'; the hottest are: work" "$T/none.err"
ok $? "an unknown name: exit $rc, and the hottest named"

"$PROBE" annotate -i "$T/missing.probe" >/dev/null 2>"$T/miss.err"
rc=$?
[ $rc = 1 ] && grep -q '^probe: ' "$T/miss.err"
ok $? "no recording: exit $rc, $(head -1 "$T/miss.err")"

"$PROBE" annotate --percent-limit 200 >/dev/null 2>"$T/use.err"
rc=$?
[ $rc = 2 ] && grep -q "^probe: annotate: bad --percent-limit '200'" "$T/use.err"
ok $? "a bad --percent-limit: exit $rc, $(head -1 "$T/use.err")"

# The default: the hottest few functions, hottest first.
"$PROBE" annotate -i "$T/inl.probe" --functions 2 >"$T/two.txt" 2>/dev/null
heads=$(grep -c '^ Percent  Samples : Source code' "$T/two.txt")
first=$(sed -n 's/^ Percent  Samples : Source code & disassembly of \(.*\) in .*/\1/p' "$T/two.txt" | head -1)
[ "$heads" -le 2 ] && [ "$heads" -ge 1 ] && [ "$first" = work ]
ok $? "--functions 2: $heads functions, the hottest (work) first"

# probe report --format annotate: the same view, with the report's options.
"$PROBE" report --format annotate -o "$T/fmt.txt" "$T/inl.probe" 2>/dev/null
"$PROBE" annotate -i "$T/inl.probe" >"$T/cmd.txt" 2>/dev/null
tail -n +2 "$T/fmt.txt" >"$T/fmt.body" && tail -n +2 "$T/cmd.txt" >"$T/cmd.body"
cmp -s "$T/fmt.body" "$T/cmd.body" && [ "$(grep -c 'Source code' "$T/fmt.txt")" -ge 1 ]
ok $? "probe report --format annotate shows what probe annotate shows"

done_testing
