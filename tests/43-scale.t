#!/bin/sh
# A report stays near-linear in its input (issue 11, case 2): a library
# named 1,500 ways (/usr/lib/./libc.so.6, /usr/lib/././libc.so.6, ...) and
# mapped 1,500 times is read once, not 1,500 times (counted: how often
# probe report opens the file, with strace); 160,000 MAP frames are not
# compared with each other (bounded, not timed: a CPU-time limit, ulimit -t,
# 30 times what it takes here, which the quadratic version ran past).
. "$(dirname "$0")/lib.sh"
command -v strace >/dev/null 2>&1 || skip_all "no strace"
LIBC=$(ldd "$GT/gt_leaf" | awk '/libc.so.6/ { print $3 }')
[ -f "$LIBC" ] || skip_all "no libc.so.6 found"
plan 5

dir=$(dirname "$LIBC")
bid=$(readelf -n "$LIBC" | awk '/Build ID/ { print $3 }')
set -- $(readelf -lW "$LIBC" | awk '$1 == "LOAD" && / R E / { print $2, $3, $6 }')
off=$1 vaddr=$2 memsz=$3
fn=$(nm -D "$LIBC" | awk '$2 == "T" && $3 ~ /^malloc(@|$)/ { print $1; exit }')
perl -e '
	my ($dir, $bid, $off, $vaddr, $memsz, $fn) = @ARGV;
	sub frame { my ($t, $b) = @_; pack("VvvV", 12 + length($b), $t, 0, 7) . $b }
	sub str { pack("v", length($_[0])) . $_[0] }
	sub uv { my $v = shift; my $o = ""; do { my $c = $v & 0x7f; $v >>= 7; $o .= chr($c | ($v ? 0x80 : 0)) } while ($v); $o }
	my $b = pack("H*", $bid);
	print "PROBEREC" . pack("VV", 1, 16);
	print frame(1, pack("VVVQ<CQ<Q<", 1, 1, 1, 0, 1, 999, 1) . str("cpu-clock") .
		str("/bin/x") . str("x") . pack("v", 0));
	my $s = "";
	for my $i (0 .. 1499) {
		my $bias = 0x7f0000000000 + $i * 0x1000000;
		my $path = $dir . ("/." x ($i + 1)) . "/libc.so.6";
		print frame(2, pack("Q<Q<Q<Q<C", $bias + hex($vaddr), $bias + hex($vaddr) + hex($memsz),
			$bias, hex($off), length($b)) . $b . str($path));
		my $pc = $bias + hex($fn) + 4;
		$s .= uv(7) . uv($i) . uv(1000) . uv(0) . uv(1) . uv($pc * 2);
	}
	print frame(4, pack("Q<", 1) . uv(1500) . $s);
' "$dir" "$bid" "$off" "$vaddr" "$memsz" "$fn" >"$T/alias.probe"

# (LeakSanitizer cannot run under ptrace: off for this one run under ASan.)
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	strace -f -e trace=openat -o "$T/trace" "$PROBE" report "$T/alias.probe" >"$T/rep" 2>"$T/err"
is "$?" 0 "probe report reads 1,500 aliases of libc"
opens=$(grep -c 'libc\.so\.6' "$T/trace")
[ "$opens" -le 5 ]
ok $? "libc is opened $opens time(s) for 1,500 names of it (want <= 5)"
named=$(awk '!/^#/ && $4 == "malloc" { n += $3 } END { print n + 0 }' "$T/rep")
is "$named" 1500 "and every sample is named malloc"

perl -e '
	sub frame { my ($t, $b) = @_; pack("VvvV", 12 + length($b), $t, 0, 7) . $b }
	sub str { pack("v", length($_[0])) . $_[0] }
	sub uv { my $v = shift; my $o = ""; do { my $c = $v & 0x7f; $v >>= 7; $o .= chr($c | ($v ? 0x80 : 0)) } while ($v); $o }
	print "PROBEREC" . pack("VV", 1, 16);
	print frame(1, pack("VVVQ<CQ<Q<", 1, 1, 1, 0, 1, 999, 1) . str("cpu-clock") .
		str("/bin/x") . str("x") . pack("v", 0));
	for my $i (0 .. 159999) {
		my $start = 0x10000000 + $i * 0x2000;
		print frame(2, pack("Q<Q<Q<Q<C", $start, $start + 0x1000, $start, 0, 0) .
			str("/nonexistent/lib$i.so"));
	}
	my $s = "";
	for my $i (0 .. 99) { $s .= uv(7) . uv($i) . uv(1000) . uv(0) . uv(1) . uv((0x10000000 + $i * 0x2000 * 1600 + 16) * 2) }
	print frame(4, pack("Q<", 1) . uv(100) . $s);
' >"$T/maps.probe"
sh -c "ulimit -t 10; exec '$PROBE' report '$T/maps.probe'" >"$T/rep" 2>/dev/null
is "$?" 0 "160,000 MAP frames: probe report ends within 10 s of CPU"
is "$(awk '!/^#/ && /lib[0-9]*\.so\+0x10 / { n += $3 } END { print n + 0 }' "$T/rep")" 100 \
	"and places every sample in its mapping"
done_testing
