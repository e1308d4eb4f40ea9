#!/bin/sh
# probe report rejects what is not a good recording with one clear
# "probe:" line and a non-zero exit, and never crashes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault.sh"
plan 26

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

# A truncated recording still reports what it has, with a warning.  -z 0:
# frames as they are (stacks written once), each a unit of damage; the
# compressed blocks of -z's default are checked below.
"$PROBE" record -q -z 0 -o "$T/good.probe" -- "$GT/gt_leaf" 100 >/dev/null 2>&1
size=$(stat -c %s "$T/good.probe")
head -c $((size - 7)) "$T/good.probe" >"$T/trunc.probe"
"$PROBE" report "$T/trunc.probe" >"$T/out" 2>"$T/err"
is "$?" 0 "truncated recording: still reported"
grep -q '^probe: .*trunc' "$T/err"; ok $? "truncated recording: warned ($(head -n1 "$T/err"))"
grep -q leaf_five "$T/out"; ok $? "truncated recording: samples before the cut are shown"

# Damage in the middle: overwritten bytes, or a short write (a full disk)
# followed by later appends.  Read as a log: skip to the next frame that
# decodes, say so once, report the rest.
"$PROBE" record -q -z 0 -o "$T/big.probe" -- "$GT/gt_leaf" 300 >/dev/null 2>&1
"$PROBE" report "$T/big.probe" >"$T/out" 2>/dev/null
all=$(samples_of "$T/out" leaf_five)
size=$(stat -c %s "$T/big.probe")
half=$((size / 2))
# (12 bytes of 0xff: no varint is that long, so the frame cannot decode.)
{ head -c $half "$T/big.probe"; printf '\377\377\377\377\377\377\377\377\377\377\377\377'
  tail -c +$((half + 13)) "$T/big.probe"; } >"$T/flip.probe"
{ head -c $((size / 3)) "$T/big.probe"; tail -c +$((size / 3 + 38)) "$T/big.probe"; } >"$T/short.probe"
# One bit flipped in the last byte of a STACKED frame (samples naming their
# stacks) past the middle: the frame still decodes (a time or stack changes),
# so only its checksum (recordings of version 2 on) tells; without it the
# report was silently wrong.
perl -e '
	local $/; open(my $f, "<", $ARGV[0]) or die; binmode $f; my $d = <$f>;
	my $o = 16;
	while ($o + 12 <= length $d) {
		my ($size, $type) = unpack("V v", substr($d, $o, 6));
		if ($type == 12 && $o > length($d) / 2) {
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

# Compressed (the default): damage costs the 16 KiB block of frames it falls
# in, and the samples whose stacks that block wrote until the writer's table
# of stacks starts again (recpack.h).  Here every stack is written in the
# first block, which is left whole: a sample takes 5 bytes at least, so a
# damaged block (two, where the damage spans their border) held at most
# 3,277 samples each.
"$PROBE" record -q -F 4999 -o "$T/z.probe" -- "$GT/gt_leaf" 1500 >/dev/null 2>&1
"$PROBE" report "$T/z.probe" >"$T/out" 2>/dev/null
zall=$(awk '/^# event:/ { for (i = 1; i <= NF; i++) if ($i == "samples,") print $(i - 1) }' "$T/out")
blocks=$(perl -e 'local $/; open(my $f, "<", $ARGV[0]) or die; binmode $f; my $d = <$f>;
	my ($o, $n) = (16, 0);
	while ($o + 12 <= length $d) { my ($s, $t) = unpack("V v", substr($d, $o, 6));
		$n++ if $t == 13; $o += $s + 4 } print $n' "$T/z.probe")
[ "$blocks" -ge 8 ]
ok $? "compressed: $blocks blocks of $zall samples (8 at least, for the checks below)"
zsize=$(stat -c %s "$T/z.probe")
zhalf=$((zsize * 2 / 3))
{ head -c $zhalf "$T/z.probe"; printf '\377\377\377\377\377\377\377\377\377\377\377\377'
  tail -c +$((zhalf + 13)) "$T/z.probe"; } >"$T/zflip.probe"
head -c $((zsize * 2 / 3)) "$T/z.probe" >"$T/ztrunc.probe"
for d in zflip ztrunc; do
	"$PROBE" report "$T/$d.probe" >"$T/out" 2>"$T/err"
	st=$?
	n=$(awk '/^# event:/ { for (i = 1; i <= NF; i++) if ($i == "samples,") print $(i - 1) }' "$T/out")
	lost=$((zall - n))
	[ "$st" -eq 0 ] && [ "$n" -gt 0 ]
	ok $? "$d: reported anyway (exit $st), $n of $zall samples"
	grep -q "^probe: warning: .*$d.probe: .*\(damaged part\|truncated\)" "$T/err"
	ok $? "$d: one line says what was skipped: $(head -n1 "$T/err")"
	if [ $d = zflip ]; then
		[ "$lost" -le 6554 ]
		ok $? "zflip: $lost samples lost, two blocks' worth at most (6,554)"
	else
		# What the first two thirds of the file hold, less the block cut.
		[ "$n" -ge $((zall / 2 - 3277)) ]
		ok $? "ztrunc: $n samples before the cut (at least half of $zall, less a block)"
	fi
done
[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/out" | head
done_testing
