#!/bin/sh
# A recording stands on its own: it carries the names of what it sampled
# (SYMTAB frames, keyed by build-id), so that a program rebuilt in place
# after its recording, or deleted, is still named in report and diff, with
# its functions' offsets and source lines; recordings of the older formats
# (1 and 2, which carry no names) are still read, and give the same report.
. "$(dirname "$0")/lib.sh"
command -v gcc >/dev/null 2>&1 || skip_all "no gcc to build the test program"
plan 19

# app: two hot functions; -g for lines.  Rebuilt below with other code in
# them (another build-id), in place.
app_src() {
	cat <<EOF
#include <stdlib.h>
static volatile double sink;
__attribute__((noinline)) static void hot_one(long n)
{
	double x = 0;
	for (long i = 0; i < n; i++)
		x += i * $1;
	sink = x;
}
__attribute__((noinline)) static void hot_two(long n)
{
	double x = 1;
	for (long i = 0; i < n; i++)
		x *= 1.0000001;
	sink = x;
}
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000000;
	hot_one(n);
	hot_two(n);
	return 0;
}
EOF
}
app_src 0.5 >"$T/app.c"
gcc -std=gnu11 -O1 -g -o "$T/app" "$T/app.c"
ok $? "the test program builds"
bid() { readelf -n "$1" 2>/dev/null | awk '/Build ID/ { print $3 }'; }
id1=$(bid "$T/app")

"$PROBE" record -o "$T/v1.probe" -- "$T/app" 150000000 >/dev/null 2>"$T/rec.err"
grep -q "names of [1-9][0-9]* objects" "$T/rec.err"
ok $? "the summary says whose names the recording carries: $(head -n1 "$T/rec.err")"
"$PROBE" report "$T/v1.probe" >"$T/before" 2>/dev/null
b1=$(self_share "$T/before" hot_one)
b2=$(self_share "$T/before" hot_two)
[ -n "$b1" ] && [ -n "$b2" ]
ok $? "named while the file is there: hot_one $b1 %, hot_two $b2 %"

# Rebuilt in place: another build-id, the same path.
app_src 0.25 >"$T/app.c"
printf '/* rebuilt */\n' >>"$T/app.c"
gcc -std=gnu11 -O1 -g -o "$T/app" "$T/app.c"
id2=$(bid "$T/app")
[ -n "$id1" ] && [ "$id1" != "$id2" ]
ok $? "the rebuilt program has another build-id ($id1 -> $id2)"
"$PROBE" report "$T/v1.probe" >"$T/after" 2>"$T/err"
is "$(sed 1d "$T/after")" "$(sed 1d "$T/before")" \
	"rebuilt: the report of the first recording is as it was before"
grep -q "^probe: .*app changed since the recording (its build-id differs); its sampled functions are named from the recording" "$T/err"
ok $? "rebuilt: one line says where the names come from: $(head -n1 "$T/err")"
"$PROBE" report --format tree "$T/v1.probe" 2>/dev/null | grep -q "hot_one  app\.c:[0-9]*  \[app\]"
ok $? "rebuilt: the tree gives hot_one's source line, from the recording"

"$PROBE" record -o "$T/v2.probe" -- "$T/app" 150000000 >/dev/null 2>&1
"$PROBE" diff "$T/v1.probe" "$T/v2.probe" >"$T/diff" 2>"$T/err"
is "$?" 0 "diff of the two builds exits 0"
awk '$4 == "hot_one" && $1 > 10 && $2 > 10 { f = 1 } END { exit !f }' "$T/diff"
ok $? "diff names hot_one on both sides: $(awk '$4 == "hot_one"' "$T/diff")"
awk '$4 == "hot_two" && $1 > 10 && $2 > 10 { f = 1 } END { exit !f }' "$T/diff"
ok $? "diff names hot_two on both sides: $(awk '$4 == "hot_two"' "$T/diff")"
! grep -q "app+0x" "$T/diff"
ok $? "diff shows no address of app"

# Deleted: both recordings still name it, with offsets (perf script).
rm -f "$T/app"
"$PROBE" report "$T/v2.probe" >"$T/gone" 2>"$T/err"
g1=$(self_share "$T/gone" hot_one)
[ -n "$g1" ] && ! grep -q "app+0x" "$T/gone"
ok $? "deleted: hot_one still named ($g1 %), no address of app"
grep -q "^probe: cannot read .*app (No such file or directory); its sampled functions are named from the recording" "$T/err"
ok $? "deleted: one line says so: $(head -n1 "$T/err")"
"$PROBE" report --format perf-script "$T/v1.probe" 2>/dev/null | grep -q " hot_one+0x[0-9a-f]* (.*/app)"
ok $? "deleted: perf script's layout gives hot_one+0xOFFSET"

# Older formats: the same recording as version 1 (no CRCs) and 2 (CRCs),
# and as probe writes it now; each from a copy of gen_recording that is
# then deleted: the old ones, which carry no names, show its addresses.
for v in old v2 new; do
	cp "$GT/gen_recording" "$T/gen_$v"
	opt=--$v
	[ $v = new ] && opt=
	"$T/gen_$v" $opt "$T/$v.probe" 20000 500 7 2>>"$T/err"
	rm -f "$T/gen_$v"
	"$PROBE" report "$T/$v.probe" >"$T/$v.rep" 2>"$T/$v.err"
done
v=$(od -An -tu4 -j8 -N4 "$T/old.probe" | tr -d ' ')$(od -An -tu4 -j8 -N4 "$T/v2.probe" | tr -d ' ')$(od -An -tu4 -j8 -N4 "$T/new.probe" | tr -d ' ')
is "$v" 123 "the three recordings are of versions 1, 2 and 3"
# Rows of libc and libm only: gen_* is gone (named in version 3 alone).
for w in old v2; do
	a=$(grep -v "gen_$w" "$T/$w.rep" | sed 1d | grep -v '^#' | md5sum)
	b=$(grep -v "gen_new" "$T/new.rep" | sed 1d | grep -v '^#' | md5sum)
	n=2
	[ $w = old ] && n=1
	is "$a" "$b" "version $n read: its libc and libm rows are version 3's"
done
grep -q "gen_old+0x" "$T/old.rep" && ! grep -q "gen_new+0x" "$T/new.rep" &&
	grep -q "spin_frame" "$T/new.rep"
ok $? "deleted, version 1 shows gen_old+0x...; version 3 names spin_frame"
# A report of version 3's own: its header as version 2's.
is "$(sed -n 2p "$T/new.rep")" "$(sed -n 2p "$T/v2.rep")" "version 3's header line is version 2's"
[ "$_tap_fail" -eq 0 ] || { sed 's/^/#   /' "$T/err" | head; sed 's/^/#   /' "$T/new.rep" | head -20; }
done_testing
