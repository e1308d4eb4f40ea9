#!/bin/sh
# Man pages and shell completion (issue 26):
#   - a page per command, and probe(1), made by scripts/gen-man from each
#     -h: groff reads each without a warning, man -l renders it, and every
#     option its -h lists is on it (by its long name, else its short one);
#   - probe help CMD on a terminal shows the page (on a pipe: -h, 07-help);
#   - make install puts the pages where man finds them, and the completion;
#   - the completion, in bash -i: commands, options, events, formats.
. "$(dirname "$0")/lib.sh"
CMDS="record report annotate top diff list agent"
plan 19

if ! command -v man >/dev/null 2>&1 || ! command -v groff >/dev/null 2>&1; then
	skip_all "man and groff are needed to render the pages (apt-get install man-db groff-base)"
fi

for c in "" $CMDS; do
	page=$BUILD/man/probe${c:+-$c}.1
	up=$(echo "probe${c:+-$c}" | tr a-z A-Z)
	warn=$(groff -man -ww -z "$page" 2>&1)
	MANWIDTH=80 man -l "$page" >"$T/page" 2>"$T/err"
	st=$?
	missing=""
	if [ -n "$c" ]; then
		# Every option of -h, by its long name (or short, where it has none).
		for o in $("$PROBE" "$c" -h | awk '/^  +-/ { n = split($0, w, /[ ,]+/); l = ""
				for (i = 2; i <= n && w[i] ~ /^-/; i++) { l = w[i]; if (w[i] ~ /^--/) break }
				sub(/\[?=.*/, "", l); if (l != "") print l }'); do
			grep -q -- "$o" "$T/page" || missing="$missing $o"
		done
	fi
	[ -f "$page" ] && [ -z "$warn" ] && [ "$st" = 0 ] && [ ! -s "$T/err" ] &&
		grep -q "^$up(1)" "$T/page" && [ -z "$missing" ]
	ok $? "probe${c:+-$c}(1): renders clean${c:+, every option of probe $c -h on it}${warn:+; groff: $warn}${missing:+; missing:$missing}"
done

# probe help CMD on a terminal: the page (through util-linux's script).
if command -v script >/dev/null 2>&1; then
	MANPAGER=cat MANWIDTH=80 script -qc "'$PROBE' help record" /dev/null 2>&1 | col -bx >"$T/tty"
	grep -q "PROBE-RECORD(1)" "$T/tty" && grep -q "EXAMPLES" "$T/tty"
	ok $? "probe help record on a terminal shows probe-record(1): $(head -n 1 "$T/tty" | tr -d '\r')"
	MANPAGER=cat MANWIDTH=80 script -qc "'$PROBE' help" /dev/null 2>&1 | col -bx >"$T/tty"
	grep -q "PROBE(1)" "$T/tty" && grep -q "COMMANDS" "$T/tty"
	ok $? "probe help alone on a terminal shows probe(1)"
else
	skip "no script(1) to give probe a terminal"
	skip "no script(1) to give probe a terminal"
fi

# make install: the pages where man finds them, the completion where bash does.
make -s -C "$ROOT" install BUILD="$BUILD" DESTDIR="$T/inst" PREFIX=/usr >"$T/mk" 2>&1
st=$?
MANWIDTH=80 man -M "$T/inst/usr/share/man" probe-report >"$T/page" 2>&1
[ "$st" = 0 ] && grep -q "^PROBE-REPORT(1)" "$T/page" && [ -s "$T/inst/usr/share/bash-completion/completions/probe" ] &&
	[ "$(ls "$T/inst/usr/share/man/man1" | wc -l)" = 8 ]
ok $? "make install DESTDIR: 8 pages man finds, and the completion (exit $st): $(tail -n 1 "$T/mk")"

# The completion, as bash -i loads it; COMPREPLY for a command line.
comp() {
	PATH=$BUILD:$PATH bash -i -c '. "$1/scripts/probe.bash-completion"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _probe; echo "${COMPREPLY[*]}"' \
		comp "$ROOT" "$@" 2>/dev/null </dev/null
}
got=$(comp probe re)
[ "$got" = "record report" ]
ok $? "completion: probe re<TAB> -> $got"
got=$(comp probe record --of)
[ "$got" = "--off-cpu" ]
ok $? "completion: probe record --of<TAB> -> $got"
got=$(comp probe record -e cpu-c)
[ "$got" = "cpu-clock" ]
ok $? "completion: probe record -e cpu-c<TAB> -> $got (probe list's available events)"
got=$(comp probe report --format s)
[ "$got" = "stdio svg speedscope" ]
ok $? "completion: probe report --format s<TAB> -> $got"
# --format=VALUE, as bash splits it: "--format" "=" "VALUE".
got=$(comp probe report --format = s)
[ "$got" = "stdio svg speedscope" ]
ok $? "completion: probe report --format=s<TAB> -> $got"
got=$(comp probe report --sort sym,d)
[ "$got" = "sym,dso" ]
ok $? "completion: probe report --sort sym,d<TAB> -> $got"
got=$(comp probe top --a)
[ "$got" = "--all-cpus --alloc" ]
ok $? "completion: probe top --a<TAB> -> $got"
got=$(comp probe help a)
[ "$got" = "agent annotate" ]
ok $? "completion: probe help a<TAB> -> $got"
done_testing
