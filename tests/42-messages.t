#!/bin/sh
# Messages that must be true (issue 11, case 8): perf's own recording is
# named as such; a hardware event the machine lacks is said plainly; a
# process whose exit record never came is given the status wait() saw,
# not "killed by SIGKILL"; weights that add up past 2^64 do not make
# shares that add up past 100 %.
. "$(dirname "$0")/lib.sh"
plan 6

if command -v perf >/dev/null 2>&1 && perf record -q -o "$T/perf.data" -- true 2>/dev/null; then
	"$PROBE" report "$T/perf.data" >/dev/null 2>"$T/err"
	st=$?
	[ "$st" -eq 1 ] && grep -q "^probe: .*perf.data: a recording of perf's (perf record), not of probe's: open it with perf report" "$T/err"
	ok $? "probe report perf.data says it is perf's (exit $st): $(cat "$T/err")"
else
	skip "perf cannot record here"
fi

"$PROBE" record -q -e cycles -o "$T/cy.probe" -- "$GT/gt_leaf" 20 >/dev/null 2>"$T/err"
! grep -q "No such file or directory" "$T/err"
ok $? "-e cycles: no misleading errno in what it says: $(cat "$T/err")"

# exit_group(5) straight from the program: no exit() of ours runs.
if command -v perl >/dev/null 2>&1; then
	"$PROBE" record -o "$T/ex.probe" -- perl -e 'syscall(231, 5)' >/dev/null 2>"$T/err"
	is "$?" 5 "a raw exit_group(5): probe record exits 5"
	grep -q '^probe:   pid .* perl: .*exit 5 (it sent no exit record' "$T/err"
	ok $? "the summary gives exit 5 from wait, not a guess: $(grep '^probe:   pid' "$T/err")"
else
	skip "no perl"
	skip "no perl"
fi

# A forged recording: three samples of 2^63 ns each, one per function.
perl -e '
	sub frame { my ($t, $b) = @_; pack("VvvV", 12 + length($b), $t, 0, 7) . $b }
	sub str { pack("v", length($_[0])) . $_[0] }
	sub uv { my $v = shift; my $o = ""; do { my $c = $v & 0x7f; $v >>= 7; $o .= chr($c | ($v ? 0x80 : 0)) } while ($v); $o }
	my $hello = pack("VVVQ<CQ<Q<", 1, 1, 1, 0, 1, 999, 1) . str("cpu-clock") .
		str("/bin/x") . str("x") . pack("v", 0);
	my $s = pack("Q<", 1) . uv(3);
	for my $ip (0x1000, 0x2000, 0x3000) { $s .= uv(7) . uv(0) . uv(2**63) . uv(0) . uv(1) . uv($ip * 2) }
	print "PROBEREC" . pack("VV", 1, 16) . frame(1, $hello) . frame(4, $s);
' >"$T/sat.probe"
"$PROBE" report "$T/sat.probe" >"$T/rep" 2>&1
sum=$(awk '!/^#/ && /%/ { sub("%", "", $1); s += $1 } END { printf "%.1f", s }' "$T/rep")
within "$sum" 100 0.2
ok $? "saturated weights: the shares add up to 100 % ($sum)"
grep -q 'weights add up past 2^64' "$T/rep"
ok $? "and the header says why they are shares of samples"
[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/rep" | head
done_testing
