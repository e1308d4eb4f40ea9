#!/bin/sh
# probe diff of one program built twice under two names, app_old and
# app_new (issue 23, point 10): its own functions pair by name, as pprof
# pairs them, one row each, module "app_old->app_new", with a change near
# 0; a shared library's (libm's) rows pair by module as before; the
# folded stacks and the SVG pair them too; --by-module keeps the
# program's name in the key: every function of it twice, as before.
#
# The work is fixed chains of dependent floating-point operations (the
# program's own leaf_a 5 units, leaf_b 3; libm's sin in a dependent chain),
# so shares do not move with the machine's load; user time only
# (cpu-clock:u), as the kernel's share (preemption) does.
. "$(dirname "$0")/lib.sh"
plan 14

cat >"$T/p.c" <<'EOF'
#include <math.h>
#include <stdlib.h>
#include "gt_work.h"
GT_KEEP static void leaf_a(void) { GT_SPIN(5, 1.0); }
GT_KEEP static void leaf_b(void) { GT_SPIN(3, 2.0); }
GT_KEEP static void in_libm(long n)
{
	double x = gt_sink;
	for (long i = 0; i < n; i++)
		x = sin(x) * 0.5 + 1.0;
	gt_sink += x;
}
int main(int argc, char **argv)
{
	long rounds = atol(argv[1]), n = atol(argv[2]);
	for (long r = 0; r < rounds; r++) {
		leaf_a();
		leaf_b();
		in_libm(n);
	}
	return 0;
}
EOF
for a in app_old app_new; do
	cc -O2 -g -I"$ROOT/tests" -o "$T/$a" "$T/p.c" -lm || skip_all "no C compiler"
	"$PROBE" record -q -e cpu-clock:u -F 4999 -o "$T/$a.probe" -- "$T/$a" 300 20000 \
		>/dev/null 2>>"$T/err"
done
"$PROBE" diff --no-inline "$T/app_old.probe" "$T/app_new.probe" >"$T/diff" 2>>"$T/err"
st=$?
[ $st = 0 ] && grep -q "^# app_old->app_new: programs found in one recording only, their functions paired by name" "$T/diff"
ok $? "probe diff exits $st and says it paired app_old with app_new"

n0=$(awk '/^# base: / { print $3; exit }' "$T/diff")
n1=$(awk '/^# new : / { print $4; exit }' "$T/diff")
diag "samples: base $n0, new $n1"

# bound: does a change of D points in a share pooled at P % (its input
# "P D") stay within 3.89 binomial standard deviations of a
# difference of two shares of n0 and n1 samples?  Two-sided, a false
# failure once in 10,000 runs for each of the 3 bounds below (3 in
# 10,000 for the file).  The shares are of weight (cpu-clock periods, near
# equal at a fixed -F), so the sample counts are their binomial n.  Prints
# the bound in points.
bound() {
	awk -v n0="$n0" -v n1="$n1" '{ p = $1 / 100; d = $2 < 0 ? -$2 : $2
		sd = 100 * sqrt(p * (1 - p) * (1 / n0 + 1 / n1))
		printf "%.2f\n", 3.89 * sd; exit !(n0 > 0 && n1 > 0 && d <= 3.89 * sd) }'
}
for f in leaf_a leaf_b; do
	rows=$(awk -v f=$f '!/^#/ && $4 == f' "$T/diff")
	set -- $rows
	if [ "$(printf '%s\n' "$rows" | grep -c .)" = 1 ] && [ "$5" = "app_old->app_new" ]; then
		lim=$(awk -v b="$1" -v n="$2" -v n0="$n0" -v n1="$n1" -v d="$3" \
			'BEGIN { print (b * n0 + n * n1) / (n0 + n1), d }' | bound)
		r=$?
		awk -v b="$1" -v n="$2" -v d="$3" 'BEGIN { h = d - (n - b); exit !(h < 0.011 && h > -0.011) }' || r=1
		ok $r "$f: one row, app_old->app_new, base $1 %, new $2 %, delta $3 within $lim points"
	else
		ok 1 "$f: one row in app_old->app_new, not: $(printf '%s' "$rows" | tr '\n' '|')"
	fi
done
awk '!/^#/ && ($5 == "app_old" || $5 == "app_new") { bad++ } END { exit bad + 0 }' "$T/diff"
ok $? "no row left in app_old or app_new alone"

# libm: a shared library pairs as before: each of its functions once, in
# both, and its share (all its rows) unchanged within the bound.
set -- $(awk '!/^#/ && $5 == "libm.so.6" { n++; b += $1; w += $2; if (seen[$4]++) dup++ }
	END { print n + 0, b + 0, w + 0, dup + 0 }' "$T/diff")
nl=$1 lb=$2 ln=$3 dup=$4
lim=$(awk -v b="$lb" -v n="$ln" -v n0="$n0" -v n1="$n1" \
	'BEGIN { print (b * n0 + n * n1) / (n0 + n1), n - b }' | bound)
r=$?
[ "$nl" -ge 1 ] && [ "$dup" = 0 ] && awk -v b="$lb" -v n="$ln" 'BEGIN { exit !(b > 1 && n > 1) }' || r=1
ok $r "libm.so.6: $nl row(s), each once, $lb % then $ln %: within $lim points"

# The same for its folded stacks: one stack under app_old->app_new with
# both counts, none under app_old or app_new alone.
"$PROBE" diff --no-inline --format folded "$T/app_old.probe" "$T/app_new.probe" >"$T/fold" 2>>"$T/err"
line=$(grep "^app_old->app_new;.*;main;leaf_a [1-9][0-9]* [1-9][0-9]*$" "$T/fold" | head -n1)
[ -n "$line" ] && ! grep -q "^app_old;\|^app_new;" "$T/fold"
ok $? "folded: $line"

# The SVG: leaf_a one frame of the paired program, with both shares.
"$PROBE" diff --format svg -o "$T/d.svg" "$T/app_old.probe" "$T/app_new.probe" 2>>"$T/err"
t=$(grep -A2 "^<g class=\"p\"><title>leaf_a$" "$T/d.svg" | tr '\n' ' ')
set -- $(awk '!/^#/ && $4 == "leaf_a" { print $1; exit }' "$T/diff")
case "$t" in
*"in app_old-&gt;app_new (program) "*"(base $1%, "*) r=0 ;;
*) r=1 ;;
esac
[ "$(grep -c "^<g class=\"p\"><title>leaf_a$" "$T/d.svg")" = 1 ] || r=1
ok $r "svg: leaf_a once, paired, with its base share $1 %: $(echo "$t" | sed 's/<\/title>.*//')"

# --by-module: the program's name is in the key, every function of it
# twice (one side 0.00), libm's rows as they were.
"$PROBE" diff --no-inline --by-module "$T/app_old.probe" "$T/app_new.probe" >"$T/diffm" 2>>"$T/err"
is "$?" 0 "--by-module exits 0"
for f in leaf_a leaf_b; do
	got=$(awk -v f=$f '!/^#/ && $4 == f { print $5 ":" ($5 == "app_old" ? $2 : $1) }' "$T/diffm" |
		sort | tr '\n' ' ')
	is "$got" "app_new:0.00 app_old:0.00 " "--by-module: $f twice, in app_old (new 0.00) and app_new (base 0.00)"
done
a=$(awk '!/^#/ && $5 == "libm.so.6"' "$T/diff" | sort)
b=$(awk '!/^#/ && $5 == "libm.so.6"' "$T/diffm" | sort)
[ -n "$a" ] && [ "$a" = "$b" ]
ok $? "--by-module: libm's rows unchanged"
[ -s "$T/diffm" ] && ! grep -q "app_old->app_new" "$T/diffm"
ok $? "--by-module: nothing paired, no pairing line"
"$PROBE" diff --by-module --format folded "$T/app_old.probe" "$T/app_new.probe" >"$T/foldm" 2>>"$T/err"
grep -q "^app_old;.*;leaf_a [1-9][0-9]* 0$" "$T/foldm" && grep -q "^app_new;.*;leaf_a 0 [1-9][0-9]*$" "$T/foldm"
ok $? "--by-module: folded stacks apart, app_old's and app_new's"

# More than one program in one recording only (base through sh -c: dash
# and app_old, against app_new): which pairs with which would be a guess,
# and joining all would add dash's main into app_old's: left apart, said.
"$PROBE" record -q -e cpu-clock:u -o "$T/sh.probe" -- sh -c "$T/app_old 30 2000; $T/app_old 30 2000" \
	>/dev/null 2>>"$T/err"
"$PROBE" diff --no-inline "$T/sh.probe" "$T/app_new.probe" >"$T/diffs" 2>>"$T/err"
got=$(awk '!/^#/ && $4 == "leaf_a" { printf "%s ", $5 }' "$T/diffs")
grep -q '^# .*|app_new: programs found in one recording only, more than one on a side: not paired' "$T/diffs" &&
	{ [ "$got" = "app_new app_old " ] || [ "$got" = "app_old app_new " ]; }
ok $? "dash and app_old against app_new: not paired, said; leaf_a in each ($got)"
[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/diff" "$T/diffs" "$T/err" | head -40
done_testing
