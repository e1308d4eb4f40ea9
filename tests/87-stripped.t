#!/bin/sh
# Stripped code reads as functions (issue 13): an address no symbol names is
# grouped into the function .eh_frame says contains it, named
# module+0xSTART.  A library of four hidden functions (weights 4:3:2:1,
# not in .dynsym) stripped with strip --strip-all: one row per function,
# their starts what nm reads from the unstripped copy, perf's top addresses
# inside them; without .eh_frame, addresses as before; without section
# headers, the same rows; a damaged or absurd
# .eh_frame neither crashes nor stalls the report.  xz (liblzma is
# stripped): rows before and after, as a comment.  And libprobe's own frames
# (its wrappers of close, sigprocmask) never show: at the leaf their caller
# stands for them, in the middle they are left out, alone they are [probe]
# (a recording made here).
. "$(dirname "$0")/lib.sh"
command -v gcc >/dev/null 2>&1 || skip_all "no gcc to build the test library"
command -v strip >/dev/null 2>&1 && command -v nm >/dev/null 2>&1 ||
	skip_all "no strip or nm (binutils)"
plan 19

# hex() for awk programs (mawk has no strtonum)
HEX='function hex(s,  i, v) { s = tolower(s); sub(/^0x/, "", s); v = 0
	for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v }'

cat >"$T/libx.c" <<'EOF'
/* Four hidden functions of weights 4:3:2:1, reached through one export. */
#define HID __attribute__((visibility("hidden"), noinline))
volatile double sink;
#define WORK(name, k) HID double name(long n) \
	{ double x = k; for (long i = 0; i < n; i++) x = x * 1.0000001 + 0.5; return x; }
WORK(work_a, 1) WORK(work_b, 2) WORK(work_c, 3) WORK(work_d, 4)
void libx_run(long n)
{
	sink = work_a(4 * n);
	sink = work_b(3 * n);
	sink = work_c(2 * n);
	sink = work_d(1 * n);
}
EOF
cat >"$T/prog.c" <<'EOF'
#include <stdlib.h>
void libx_run(long n);
int main(int argc, char **argv)
{
	long reps = argc > 1 ? atol(argv[1]) : 60;
	for (long r = 0; r < reps; r++)
		libx_run(1000000);
	return 0;
}
EOF
gcc -std=gnu11 -O2 -fomit-frame-pointer -fPIC -shared -o "$T/libx.so" "$T/libx.c" &&
	cp "$T/libx.so" "$T/libx.full.so" && strip --strip-all "$T/libx.so" &&
	gcc -std=gnu11 -O2 -o "$T/prog" "$T/prog.c" -L"$T" -lx -Wl,-rpath,"$T"
ok $? "a library of four hidden functions, stripped, and a program calling it"
readelf -SW "$T/libx.so" >"$T/sections"
! grep -q ' \.symtab ' "$T/sections" && grep -q ' \.eh_frame ' "$T/sections" &&
	! nm -D "$T/libx.so" | grep -q work_
ok $? "libx.so: no .symtab, work_* not in .dynsym, .eh_frame kept"

# The truth: each function's [start, end) from the unstripped copy.
nm -S "$T/libx.full.so" | awk "$HEX"' $4 ~ /^work_/ { printf "%d %d %s\n", hex($1),
	hex($1) + hex($2), $4 }' >"$T/truth"
[ "$(wc -l <"$T/truth")" -eq 4 ]; ok $? "nm: the four functions' starts and sizes"

"$PROBE" record -q -F 2999 -o "$T/x.probe" -- "$T/prog" >/dev/null 2>"$T/rec.err"
ok $? "recorded"
"$PROBE" report --sort sym "$T/x.probe" >"$T/r" 2>"$T/rerr"
# rows: START SELF% of each libx.so row of 0.5 % or more.  A sample or two
# may land in the library's crt code, which has no FDE (the exit path's
# __do_global_dtors_aux, once: libx.so+0x10b4 0.03 %): such rows are
# module+0xOFFSET, rightly, and far under 0.5 % (15 samples of ~3,000).
awk "$HEX"' !/^#/ && $4 ~ /^libx\.so\+0x/ { sub(/^libx\.so\+0x/, "", $4); sub("%", "", $1);
	if ($1 + 0 >= 0.5) printf "%d %s\n", hex($4), $1 }' "$T/r" >"$T/rows"
n=$(wc -l <"$T/rows")
is "$n" 4 "one row per function (0.5 % or more): $(awk '!/^#/ && /libx\.so/ { printf "%s %s; ", $4, $1 }' "$T/r")"
# Every row's start is a function's start, and each function has its row.
awk 'NR == FNR { start[$1] = $3; next } !($1 in start) { bad++ } { seen[$1]++ }
	END { for (s in start) if (!(s in seen)) bad++; exit !(NR > 4 && bad == 0) }' "$T/truth" "$T/rows"
ok $? "the rows' starts are the functions' real starts (nm on the unstripped copy)"
# Weights 4:3:2:1: the row at work_a's start has about 40 %, and so on.
awk 'NR == FNR { name[$1] = $3; next }
	{ w = name[$1] == "work_a" ? 40 : name[$1] == "work_b" ? 30 : name[$1] == "work_c" ? 20 : 10;
	  d = $2 - w; if (d < 0) d = -d; if (d > 3) bad++; n++ }
	END { exit !(n == 4 && bad == 0) }' "$T/truth" "$T/rows"
ok $? "their shares are the functions' (40/30/20/10 +-3)"
"$PROBE" report --format folded "$T/x.probe" >"$T/f" 2>>"$T/rerr"
a=$(awk '$3 == "work_a" { printf "0x%x", $1 }' "$T/truth")
grep -q ";libx_run;libx.so+$a [0-9]*\$" "$T/f"
ok $? "folded: libx_run;libx.so+$a, the callee under its caller"

# perf on the same program: its top addresses lie in our rows' functions.
if command -v perf >/dev/null 2>&1 &&
	perf record -q -F 999 -g -o "$T/perf.data" -- "$T/prog" >/dev/null 2>"$T/perf.err"; then
	perf report -i "$T/perf.data" --stdio --no-children --sort dso,sym 2>/dev/null |
		awk '$2 == "libx.so" && $3 == "[.]" && $4 ~ /^0x/ { sub("%", "", $1); print $4, $1 }' |
		head -n 8 >"$T/perf_top"
	# each of perf's rows: inside [start, end) of one of our rows
	awk "$HEX"' NR == FNR { lo[NR] = $1; hi[NR] = $2; k = NR; next }
		FILENAME == ARGV[2] { ours[$1] = 1; next }
		{ a = hex($1); hit = 0
		  for (i = 1; i <= k; i++) if (a >= lo[i] && a < hi[i] && (lo[i] in ours)) hit = 1
		  if (!hit) bad++; n++ }
		END { exit !(n >= 4 && bad == 0) }' "$T/truth" "$T/rows" "$T/perf_top"
	ok $? "perf's top $(wc -l <"$T/perf_top") addresses in libx.so each lie in one of our rows' functions: $(tr '\n' ' ' <"$T/perf_top")"
else
	skip "perf cannot record here: $(head -n1 "$T/perf.err" 2>/dev/null)"
fi

# Without .eh_frame nothing says where functions begin: addresses as before.
objcopy --remove-section .eh_frame --remove-section .eh_frame_hdr "$T/libx.so" "$T/libx.nofde"
cp "$T/libx.so" "$T/libx.keep"
cp "$T/libx.nofde" "$T/libx.so"
"$PROBE" record -q -F 2999 -o "$T/nofde.probe" -- "$T/prog" 20 >/dev/null 2>>"$T/rec.err"
"$PROBE" report --sort sym "$T/nofde.probe" >"$T/r2" 2>>"$T/rerr"
k=$(awk '!/^#/ && $3 + 0 > 0 && $4 ~ /^libx\.so\+0x/' "$T/r2" | wc -l)
[ "$k" -gt 4 ]; ok $? "without .eh_frame: one row per address ($k rows), module+0xOFFSET as before"
cp "$T/libx.keep" "$T/libx.so"

# No section headers at all (as sstrip leaves a file): .eh_frame is found
# through PT_GNU_EH_FRAME, the rows are the same functions.
perl -e 'open(my $f, "+<", $ARGV[0]) or die; binmode $f;
	seek($f, 0x28, 0); print $f pack("Q<", 0);          # e_shoff
	seek($f, 0x3c, 0); print $f pack("vv", 0, 0);       # e_shnum, e_shstrndx
	close $f' "$T/libx.so"
"$PROBE" record -q -F 2999 -o "$T/ss.probe" -- "$T/prog" 20 >/dev/null 2>>"$T/rec.err"
"$PROBE" report --sort sym "$T/ss.probe" >"$T/r4" 2>>"$T/rerr"
# (libx_run, the loop that calls them, is named by .dynsym when there are
# section headers; here it is libx.so+0xSTART too, in the rare run where
# it has a sample of its own: left out)
run0=$(nm -D "$T/libx.full.so" | awk "$HEX"' $3 == "libx_run" { print hex($1) }')
awk "$HEX"' !/^#/ && $3 + 0 > 0 && $4 ~ /^libx\.so\+0x/ { sub(/^libx\.so\+0x/, "", $4); print hex($4) }' \
	"$T/r4" | grep -vx "$run0" | sort -n >"$T/ss.rows"
awk '{ print $1 }' "$T/truth" | sort -n | cmp -s - "$T/ss.rows"
ok $? "no section headers (sstrip): the same four rows, through PT_GNU_EH_FRAME ($(tr '\n' ' ' <"$T/ss.rows"))"
cp "$T/libx.keep" "$T/libx.so"

# Damaged .eh_frame bytes (the recording's build-id kept): never a crash or
# a stall.  The section's offset and size, from its header.
set -- $(readelf -SW "$T/libx.so" | awk "$HEX"'
	{ for (i = 1; i < NF; i++) if ($i == ".eh_frame") print hex($(i + 3)), hex($(i + 4)) }')
off=$1 size=$2 bad=0 i=0
while [ $i -lt 25 ]; do
	perl -e '
		my ($f, $off, $size, $seed) = @ARGV; srand($seed);
		open(my $h, "+<", $f) or die; binmode $h;
		for (1 .. 1 + int(rand(8))) {
			seek($h, $off + int(rand($size)), 0);
			print $h pack("C", $_ % 3 ? int(rand(256)) : (0, 0xff, 0x80)[int(rand(3))]);
		}
		close $h;' "$T/libx.so" "$off" "$size" "$i"
	sh -c "ulimit -t 2; exec '$PROBE' report --sort sym '$T/x.probe'" >/dev/null 2>"$T/dmg.err" ||
		{ bad=$((bad + 1)); diag "damaged copy $i: $(head -c 200 "$T/dmg.err")"; }
	cp "$T/libx.keep" "$T/libx.so"
	i=$((i + 1))
done
is "$bad" 0 "25 damaged .eh_frame sections: probe report exits 0 each time, within 2 s of CPU"

# An .eh_frame claiming 384 GiB of a sparse file: refused in one line.
perl -e '
	open(my $f, "+<", $ARGV[0]) or die; binmode $f; local $/; my $d = <$f>;
	my $shoff = unpack("Q<", substr($d, 0x28, 8));
	my ($ent, $num, $strndx) = unpack("vvv", substr($d, 0x3a, 6));
	my $stroff = unpack("Q<", substr($d, $shoff + $strndx * $ent + 0x18, 8));
	for my $i (0 .. $num - 1) {
		my $o = $shoff + $i * $ent;
		my $name = unpack("Z*", substr($d, $stroff + unpack("V", substr($d, $o, 4))));
		substr($d, $o + 0x20, 8) = pack("Q<", 384 << 30) if $name eq ".eh_frame";
	}
	seek($f, 0, 0); print $f $d; close $f;
' "$T/libx.so"
if truncate -s 400G "$T/libx.so" 2>/dev/null; then
	vlim="ulimit -v 4000000;"
	[ -n "${PROBE_SANITIZE:-}" ] && vlim=
	sh -c "ulimit -t 2; $vlim exec '$PROBE' report --sort sym '$T/x.probe'" >"$T/r3" 2>"$T/huge.err"
	st=$?
	[ "$st" -eq 0 ] && [ "$(grep -c 'its .eh_frame is 412316860416 bytes, more than any real one' "$T/huge.err")" -eq 1 ]
	ok $? "a 384 GiB .eh_frame is refused in one line (exit $st): $(head -c 200 "$T/huge.err")"
else
	skip "no sparse files here"
fi
rm -f "$T/libx.so"
cp "$T/libx.keep" "$T/libx.so"

# --- xz: liblzma is stripped -------------------------------------------------
xz=$(command -v xz)
if [ -n "$xz" ] && ldd "$xz" 2>/dev/null | grep -q liblzma; then
	"$PROBE" record -q -o "$T/xz.probe" -- sh -c "timeout 3 '$xz' -9 -c /usr/bin/* >/dev/null 2>&1" \
		>/dev/null 2>>"$T/rec.err"
	"$PROBE" report --sort sym "$T/xz.probe" >"$T/xz.r" 2>>"$T/rerr"
	after=$(awk '!/^#/ && $3 + 0 > 0 && $4 ~ /^liblzma\.so[.0-9]*\+0x/' "$T/xz.r" | wc -l)
	# Before: one row per distinct sampled address (perf-script's leaf ELF addresses).
	"$PROBE" report --format perf-script "$T/xz.probe" 2>/dev/null |
		awk '/^[^\t]/ { leaf = 1; next } /^\t/ { if (leaf && $NF ~ /liblzma/) print $1; leaf = 0 }' |
		sort -u >"$T/xz.addrs"
	before=$(wc -l <"$T/xz.addrs")
	diag "xz: liblzma leaf rows $before (one per address, before) -> $after (one per function)"
	[ "$after" -ge 1 ] && [ $((after * 4)) -le "$before" ]
	ok $? "xz: liblzma's leaf rows $before -> $after"
else
	skip "no xz linked with liblzma"
fi

# --- libprobe's own frames ------------------------------------------------------
cat >"$T/wrapped.c" <<'EOF'
#include <signal.h>
#include <time.h>
#include <unistd.h>
/* close and sigprocmask are libprobe's wrappers: much time in its code. */
__attribute__((noinline)) static void churn(void)
{
	sigset_t s;
	for (int i = 0; i < 200; i++) {
		close(-1);
		sigprocmask(SIG_BLOCK, NULL, &s);
	}
}
int main(void)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		churn();
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 1000000000L);
	return 0;
}
EOF
gcc -std=gnu11 -O2 -fomit-frame-pointer -o "$T/wrapped" "$T/wrapped.c" &&
	"$PROBE" record -q -F 2999 -o "$T/w.probe" -- "$T/wrapped" >/dev/null 2>>"$T/rec.err"
ok $? "a program calling libprobe's wrappers in a loop: recorded"
for f in text tree folded; do
	case $f in text) args="--sort sym,dso" ;; tree) args=--tree ;; *) args="--format folded" ;; esac
	"$PROBE" report $args "$T/w.probe" >"$T/w.$f" 2>>"$T/rerr"
done
! grep -q 'libprobe' "$T/w.text" "$T/w.tree" "$T/w.folded"
ok $? "no libprobe frame in the text, tree or folded report"
c=$(awk '!/^#/ && $4 == "churn" { sub("%", "", $2); print $2; exit }' "$T/w.text")
awk -v c="$c" 'BEGIN { exit !(c + 0 >= 90) }'
ok $? "the time in libprobe's wrappers counts for their caller: churn's total $c %"

# A recording made here: libx.so and a library named libprobe.so (a copy of
# libx.so), samples with libprobe at the leaf, in the middle, and alone.
mkdir -p "$T/fake" && cp "$T/libx.so" "$T/fake/libprobe.so"
run=$(nm -D "$T/libx.full.so" | awk "$HEX"' $3 == "libx_run" { print hex($1) }')
wa=$(awk '$3 == "work_a" { print $1 }' "$T/truth")
perl -e '
	my ($x, $p, $run, $wa) = @ARGV;
	sub frame { my ($t, $b) = @_; pack("VvvV", 12 + length($b), $t, 0, 7) . $b }
	sub str { pack("v", length($_[0])) . $_[0] }
	sub uv { my $v = shift; my $o = ""; do { my $c = $v & 0x7f; $v >>= 7; $o .= chr($c | ($v ? 0x80 : 0)) } while ($v); $o }
	sub sv { my $d = shift; uv($d < 0 ? -2 * $d - 1 : 2 * $d) }
	my ($bx, $bp) = (0x7f0000000000, 0x7f1000000000);
	print "PROBEREC" . pack("VV", 1, 16);
	print frame(1, pack("VVVQ<CQ<Q<", 1, 1, 1, 0, 1, 999, 1) . str("cpu-clock") .
		str("/bin/x") . str("x") . pack("v", 0));
	print frame(2, pack("Q<Q<Q<Q<C", $bx + 0x1000, $bx + 0x2000, $bx, 0x1000, 0) . str($x));
	print frame(2, pack("Q<Q<Q<Q<C", $bp + 0x1000, $bp + 0x2000, $bp, 0x1000, 0) . str($p));
	my @stacks = ([10, $bp + $wa + 0x10],                                  # libprobe alone
		      [20, $bp + $wa + 0x10, $bx + $run + 0x10],               # its leaf
		      [30, $bx + $wa + 0x10, $bp + $run + 0x10, $bx + $run + 0x10]); # in the middle
	my ($s, $n) = ("", 0);
	for my $st (@stacks) {
		my ($k, @f) = @$st;
		for my $i (1 .. $k) {
			$s .= uv(7) . uv($n++) . uv(1000) . uv(0) . uv(scalar @f);
			my $prev = 0;
			for my $a (@f) { $s .= sv($a - $prev); $prev = $a }
		}
	}
	print frame(4, pack("Q<", 1) . uv($n) . $s);
' "$T/libx.so" "$T/fake/libprobe.so" "$run" "$wa" >"$T/fake.probe"
"$PROBE" report --sort sym "$T/fake.probe" >"$T/fk.text" 2>"$T/fk.err"
"$PROBE" report --tree "$T/fake.probe" >"$T/fk.tree" 2>>"$T/fk.err"
"$PROBE" report --format folded "$T/fake.probe" >"$T/fk.folded" 2>>"$T/fk.err"
p=$(awk '!/^#/ && $4 == "[probe]" { print $1 }' "$T/fk.text")
r=$(awk '!/^#/ && $4 == "libx_run" { print $1 }' "$T/fk.text")
w=$(awk -v n="libx.so+$(printf 0x%x "$wa")" '!/^#/ && $4 == n { print $1 }' "$T/fk.text")
[ "$p" = 16.67% ] && [ "$r" = 33.33% ] && [ "$w" = 50.00% ] &&
	grep -q ";libx_run;libx.so+$(printf 0x%x "$wa") 30\$" "$T/fk.folded"
ok $? "libprobe alone: [probe] $p; at the leaf: its caller libx_run $r; in the middle: left out ($w, libx_run;libx.so+$(printf 0x%x "$wa") in folded)"
"$PROBE" report --format perf-script "$T/fake.probe" >"$T/fk.ps" 2>>"$T/fk.err"
! grep -q libprobe "$T/fk.text" "$T/fk.tree" "$T/fk.folded" "$T/fk.ps" &&
	[ "$(grep -c ' \[probe\] (\[probe\])$' "$T/fk.ps")" = 10 ]
ok $? "and libprobe.so is named in none of text, tree, folded, perf-script (there: 10 samples [probe] ([probe]))"

[ "$_tap_fail" -eq 0 ] || { sed 's/^/#   /' "$T/rec.err" "$T/rerr" | head -20; sed 's/^/#   /' "$T/r" | head -20; }
done_testing
