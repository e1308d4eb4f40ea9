#!/bin/sh
# Help (issue 23, point 9).  probe help CMD prints what probe CMD -h (and
# --help) prints; probe help of an unknown command is a usage error.
# probe --help's synopsis names every option that each command's -h
# explains (its entries "  -x, --long ARG  text", "      --long"; -h/--help and --version
# are the general line's), so the two cannot drift apart: main.c builds
# the synopsis from each command's own -h, and this checks the option
# lists against it.  No line of any help is wider than 79 columns.  The
# pages of docs/ that show a command's -h show it as it is.
. "$(dirname "$0")/lib.sh"
CMDS="record report annotate top diff list agent"
plan 20

"$PROBE" --help >"$T/general" 2>&1
is "$?" 0 "probe --help exits 0"
for c in $CMDS; do
	"$PROBE" "$c" -h >"$T/$c.h" 2>&1
	s1=$?
	"$PROBE" "$c" --help >"$T/$c.help" 2>&1
	"$PROBE" help "$c" >"$T/$c.cmd" 2>&1
	s2=$?
	[ $s1 = 0 ] && [ $s2 = 0 ] && [ -s "$T/$c.h" ] &&
		cmp -s "$T/$c.h" "$T/$c.cmd" && cmp -s "$T/$c.h" "$T/$c.help"
	ok $? "probe help $c prints probe $c -h and --help ($(wc -l <"$T/$c.h") lines, exit $s2): $(head -n1 "$T/$c.cmd")"
done
"$PROBE" help frobnicate >"$T/out" 2>"$T/err"
st=$?
[ $st = 2 ] && [ ! -s "$T/out" ] && [ "$(wc -l <"$T/err")" = 1 ] &&
	grep -q "^probe: help: unknown command 'frobnicate'" "$T/err"
ok $? "probe help frobnicate: exit $st, $(cat "$T/err")"
"$PROBE" help >"$T/help0" 2>&1
cmp -s "$T/help0" "$T/general"
ok $? "probe help alone is probe --help"

# syn CMD: the lines of probe --help from "probe CMD " to the next command.
syn() {
	awk -v c="$1" '/^(usage:|      ) probe [a-z]/ { on = ($2 == c || $3 == c) }
		on' "$T/general"
}
# opts FILE: each option entry's names, one entry a line ("-o --output").
opts() {
	awk '/^  -|^      -/ { line = ""
		n = split($0, w, /[ ,]+/)
		for (i = 2; i <= n; i++) {
			if (w[i] ~ /^--?[A-Za-z]/) line = line " " w[i]
			else if (w[i] !~ /^[A-Z][A-Z0-9=:_.]*$/) break
		}
		print substr(line, 2) }' "$1"
}
for c in $CMDS; do
	syn "$c" >"$T/$c.syn"
	missing="" n=0
	opts "$T/$c.h" >"$T/$c.opts"
	while read -r names; do
		case " $names " in *" -h "*|*" --help "*|*" --version "*) continue ;; esac
		n=$((n + 1))
		found=0
		for o in $names; do
			# The option as a word of the synopsis: "[-g", " --off-cpu]", "| --tid".
			awk -v o="$o" '{ $0 = " " $0 " "; if (index($0, " " o " ") || index($0, "[" o " ") ||
				index($0, "[" o "]") || index($0, " " o "]") || index($0, "|" o)) f = 1 }
				END { exit !f }' "$T/$c.syn" && found=1
		done
		[ $found = 1 ] || missing="$missing [$names]"
	done <"$T/$c.opts"
	# list has no options; every other command has some to find.
	[ -s "$T/$c.syn" ] && [ -z "$missing" ] && { [ $n -gt 0 ] || [ $c = list ]; }
	ok $? "probe --help's synopsis of $c names all $n options of probe $c -h${missing:+; missing:$missing}"
done

# Help lines fit a terminal.
wide=""
for f in "$T/general" "$T"/*.h; do
	w=$(awk 'length > 79 { n++ } END { print n + 0 }' "$f")
	[ "$w" = 0 ] || wide="$wide $(basename "$f"):$w"
done
[ -z "$wide" ]
ok $? "no help line is wider than 79 columns${wide:+ (lines over:$wide)}"
awk 'length > m { m = length } END { exit !(m > 0 && m <= 79) }' "$T/top.h"
ok $? "probe top -h: its widest line $(awk 'length > m { m = length } END { print m }' "$T/top.h") columns, the -e event list wrapped"
# docs/CMD.md shows probe CMD -h as it is (scripts/docs-help puts it there).
"$ROOT/scripts/docs-help" "$PROBE" --check 2>"$T/docs"
ok $? "docs/CMD.md shows each command's -h as it is: $(head -c 300 "$T/docs")"
[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/general"
done_testing
