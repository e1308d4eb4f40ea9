#!/bin/sh
# perf events on another process, read from outside: its samples with
# callchains, registers and stack copies, its exit (collector/outside/
# perfring.c; tests/test_perfring.c), translated into the wire's frames
# (translate.c) and written as a recording, which probe report reads as
# it reads libprobe's: spin_here holds at least 90 % of the child's
# samples, under main.
. "$(dirname "$0")/lib.sh"
"$GT/test_perfring" "$T/o.probe" >"$T/tap" 2>"$T/err"
st=$?
case $(head -n 1 "$T/tap") in
"1..0"*) cat "$T/tap"; exit 0 ;;
esac
n=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$T/tap")
sed "s/^1\.\.$n\$/1..$((n + 1))/" "$T/tap"
"$PROBE" report --children "$T/o.probe" >"$T/rep" 2>>"$T/err"
self=$(awk '$NF == "test_perfring" && $(NF-1) == "spin_here" { sub("%", "", $2); print $2; exit }' "$T/rep")
main=$(awk '$NF == "test_perfring" && $(NF-1) == "main" { sub("%", "", $1); print $1; exit }' "$T/rep")
awk -v s="${self:-0}" -v m="${main:-0}" 'BEGIN { exit !(s >= 90 && m >= 99) }'
r=$?
echo "$([ $r = 0 ] && echo ok || echo not ok) $((n + 1)) - probe report of the recording: spin_here ${self:-no} % self, main ${main:-no} % total"
[ $r = 0 ] || sed 's/^/#   /' "$T/rep" "$T/err" | head -30
[ "$st" = 0 ] && [ "$r" = 0 ]
