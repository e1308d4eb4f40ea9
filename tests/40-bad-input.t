#!/bin/sh
# probe report rejects what is not a good recording with one clear
# "probe:" line and a non-zero exit, and never crashes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault.sh"
plan 19

# check NAME FILE: exit 1, one probe: line, not killed by a signal
check() {
	"$PROBE" report "$2" >"$T/out" 2>"$T/err"
	rc=$?
	is "$rc" 1 "$1: exit status 1"
	first=$(head -n1 "$T/err")
	case $first in
	probe:*) ok 0 "$1: says '$first'" ;;
	*) ok 1 "$1: no probe: message"; sed 's/^/#   /' "$T/err" | head -5 ;;
	esac
}

check "missing file" "$T/nope.probe"
: >"$T/empty"; check "empty file" "$T/empty"
head -c 65536 /dev/urandom >"$T/garbage"; check "random bytes" "$T/garbage"
# A real header followed by a frame claiming 2 GiB.
printf 'PROBEREC\001\000\000\000\020\000\000\000\000\000\000\200\001\000\000\000\001\000\000\000' >"$T/huge"
check "oversized frame" "$T/huge"
# A real header followed by a well-sized frame with a bad body.
printf 'PROBEREC\001\000\000\000\020\000\000\000\020\000\000\000\004\000\000\000\001\000\000\000\377\377\377\377' >"$T/badbody"
check "SAMPLES frame with a short body" "$T/badbody"

# A truncated recording still reports what it has, with a warning.
"$PROBE" record -q -o "$T/good.probe" -- "$GT/gt_leaf" 100 >/dev/null 2>&1
size=$(stat -c %s "$T/good.probe")
head -c $((size - 7)) "$T/good.probe" >"$T/trunc.probe"
"$PROBE" report "$T/trunc.probe" >"$T/out" 2>"$T/err"
is "$?" 0 "truncated recording: still reported"
grep -q '^probe: .*trunc' "$T/err"; ok $? "truncated recording: warned ($(head -n1 "$T/err"))"
grep -q leaf_five "$T/out"; ok $? "truncated recording: samples before the cut are shown"

# Damage in the middle: overwritten bytes, or a short write (a full disk)
# followed by later appends.  Read as a log: skip to the next frame that
# decodes, say so once, report the rest.
"$PROBE" record -q -o "$T/big.probe" -- "$GT/gt_leaf" 300 >/dev/null 2>&1
"$PROBE" report "$T/big.probe" >"$T/out" 2>/dev/null
all=$(samples_of "$T/out" leaf_five)
size=$(stat -c %s "$T/big.probe")
half=$((size / 2))
# (12 bytes of 0xff: no varint is that long, so the frame cannot decode.)
{ head -c $half "$T/big.probe"; printf '\377\377\377\377\377\377\377\377\377\377\377\377'
  tail -c +$((half + 13)) "$T/big.probe"; } >"$T/flip.probe"
{ head -c $((size / 3)) "$T/big.probe"; tail -c +$((size / 3 + 38)) "$T/big.probe"; } >"$T/short.probe"
# One bit flipped in the last byte of a SAMPLES frame past the middle: the
# frame still decodes (a return address changes), so only its checksum
# (recordings of version 2) tells; without it the report was silently wrong.
perl -e '
	local $/; open(my $f, "<", $ARGV[0]) or die; binmode $f; my $d = <$f>;
	my $o = 16;
	while ($o + 12 <= length $d) {
		my ($size, $type) = unpack("V v", substr($d, $o, 6));
		if ($type == 4 && $o > length($d) / 2) {
			substr($d, $o + $size - 1, 1) ^= "\x01"; last;
		}
		$o += $size + 4;
	}
	print $d' "$T/big.probe" >"$T/bit.probe"
cmp -s "$T/big.probe" "$T/bit.probe" && echo "# no SAMPLES frame found to flip"
for d in flip short bit; do
	"$PROBE" report "$T/$d.probe" >"$T/out" 2>"$T/err"
	st=$?
	a=$(samples_of "$T/out" leaf_five)
	[ "$st" -eq 0 ] && [ "$a" -ge $((all * 9 / 10)) ]
	ok $? "$d: reported anyway (exit $st), $a of $all samples of leaf_five"
	grep -q "^probe: warning: .*$d.probe: 1 damaged part of the recording (.* bytes in all, the first at byte [0-9]*) could not be read; skipped" "$T/err"
	ok $? "$d: one line says what was skipped: $(head -n1 "$T/err")"
done
[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/out" | head
done_testing
