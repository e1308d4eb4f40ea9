#!/bin/sh
# Object files that are absurd (issue 11, case 1) do not crash or stall
# probe report: debug info nesting 100,000 namespaces (it overflowed the
# stack), 5,000 namespaces around a lexical block (scope_walk's arrays per
# level overflowed it), 20,000 levels (quadratic, 3 s here: bounded by a
# CPU limit, ulimit -t 1, far above the ~0.01 s it takes now; not a speed
# target), a sparse .symtab of 384 GiB
# (72 s, 22 GB, then libelf crashed).  One line says what is refused; the
# rest of the file's names are used.  Fixtures are built here, small.
. "$(dirname "$0")/lib.sh"
command -v gcc >/dev/null 2>&1 || skip_all "no gcc to build the fixtures"
plan 8

# rec SO: a recording with SO mapped at one place and 10 samples in deepfn.
rec() {
	perl -e '
		my ($so) = @ARGV;
		sub frame { my ($t, $b) = @_; pack("VvvV", 12 + length($b), $t, 0, 7) . $b }
		sub str { pack("v", length($_[0])) . $_[0] }
		sub uv { my $v = shift; my $o = ""; do { my $c = $v & 0x7f; $v >>= 7; $o .= chr($c | ($v ? 0x80 : 0)) } while ($v); $o }
		my $bias = 0x7f0000000000;
		print "PROBEREC" . pack("VV", 1, 16);
		print frame(1, pack("VVVQ<CQ<Q<", 1, 1, 1, 0, 1, 999, 1) . str("cpu-clock") .
			str("/bin/x") . str("x") . pack("v", 0));
		print frame(2, pack("Q<Q<Q<Q<C", $bias + 0x1000, $bias + 0x2000, $bias, 0x1000, 0) . str($so));
		my $s = "";
		for my $i (0 .. 9) { $s .= uv(7) . uv($i) . uv(1000) . uv(0) . uv(1) . uv(($bias + 0x1001) * 2) }
		print frame(4, pack("Q<", 1) . uv(10) . $s);
	' "$1"
}

# fixture NAME DEPTH [MODE]
fixture() {
	perl "$ROOT/tests/gen_deep_dwarf.pl" "$2" "${3:-}" >"$T/$1.s" &&
		gcc -shared -nostdlib -o "$T/$1.so" "$T/$1.s" && rec "$T/$1.so" >"$T/$1.probe"
}

check() {      # check NAME WHAT
	sh -c "ulimit -t 1; exec '$PROBE' report '$T/$1.probe'" >"$T/$1.out" 2>"$T/$1.err"
	st=$?
	is "$st" 0 "$2: probe report exits 0 (within 1 s of CPU)"
	grep -q '100\.00%.*deepfn' "$T/$1.out"
	ok $? "$2: the function is still named"
}

fixture deep 100000 && check deep "100,000 nested namespaces"
grep -q "nests namespaces or classes more than 64 deep" "$T/deep.err"
ok $? "100,000 nested namespaces: one line says what is not looked into"
fixture block 5000 topblock && check block "5,000 namespaces around a lexical block"
fixture wide 20000 && check wide "20,000 nested namespaces"

# A .symtab claiming 384 GiB of a sparse file.
cp "$T/block.so" "$T/hole.so"
perl -e '
	open(my $f, "+<", $ARGV[0]) or die; binmode $f; local $/; my $d = <$f>;
	my $shoff = unpack("Q<", substr($d, 0x28, 8));
	my ($ent, $num) = unpack("vv", substr($d, 0x3a, 4));
	for my $i (0 .. $num - 1) {
		my $o = $shoff + $i * $ent;
		next unless unpack("V", substr($d, $o + 4, 4)) == 2;        # SHT_SYMTAB
		substr($d, $o + 0x18, 16) = pack("Q<Q<", 4096, 384 << 30);
	}
	seek($f, 0, 0); print $f $d; close $f;
' "$T/hole.so"
truncate -s 400G "$T/hole.so" 2>/dev/null || skip_all "no sparse files here"
rec "$T/hole.so" >"$T/hole.probe"
# (A memory limit too, but not under ASan, which reserves terabytes.)
vlim="ulimit -v 4000000;"
[ -n "${PROBE_SANITIZE:-}" ] && vlim=
sh -c "ulimit -t 1; $vlim exec '$PROBE' report '$T/hole.probe'" >"$T/hole.out" 2>"$T/hole.err"
st=$?
[ "$st" -eq 0 ] && grep -q "hole.so: its .symtab is 412316860416 bytes, more than any real one" "$T/hole.err"
ok $? "a 384 GiB .symtab is refused in one line (exit $st): $(head -c 200 "$T/hole.err")"
rm -f "$T/hole.so"
[ "$_tap_fail" -eq 0 ] || cat "$T"/*.err | sed 's/^/#   /' | head
done_testing
