#!/bin/sh
# Children probe cannot profile are said, with why (issue 11, case 7): a
# statically linked program a script starts, a program exec'd without
# LD_PRELOAD in its environment, a program run after dropping privileges
# (setpriv: the collector takes connections from its own user only); and
# none of them leaves a stray ./probe.data.  The exec'ing process tells the
# collector before it execs.
. "$(dirname "$0")/lib.sh"
command -v bash >/dev/null 2>&1 || skip_all "no bash (its fork+exec is what is tested)"
plan 8

printf 'int main(void) { volatile double x = 1; for (long i = 0; i < 1000000; i++) x = x * 1.0000001 + 0.25; return 0; }\n' >"$T/st.c"
if gcc -static -O1 -o "$T/static_prog" "$T/st.c" 2>/dev/null; then
	(cd "$T" && "$PROBE" record -o "$T/st.probe" -- bash -c "./static_prog; /bin/true" >/dev/null 2>"$T/err")
	grep -q "^probe:   pid [0-9]* then ran \./static_prog, not profiled: it is statically linked" "$T/err"
	ok $? "a static program a script runs is named, with why: $(grep 'then ran' "$T/err")"
	grep -q "^probe: 1 program ran without being profiled" "$T/err"
	ok $? "and counted in the summary"
	# sh (dash) runs it from a vfork child; posix_spawn from glibc's own.
	(cd "$T" && "$PROBE" record -o "$T/st2.probe" -- sh -c "./static_prog; /bin/true" >/dev/null 2>"$T/err")
	grep -q "^probe:   pid [0-9]* (parent [0-9]*) ran \./static_prog, not profiled: it is statically linked" "$T/err"
	ok $? "sh -c './static_prog' (a vfork child) is named: $(grep 'static_prog, not' "$T/err")"
	printf '#include <spawn.h>\n#include <sys/wait.h>\nextern char **environ;\nint main(void) { pid_t p; char *a[] = { "static_prog", 0 }; if (posix_spawn(&p, "./static_prog", 0, 0, a, environ)) return 1; waitpid(p, 0, 0); return 0; }\n' >"$T/spawner.c"
	gcc -o "$T/spawner" "$T/spawner.c" &&
		(cd "$T" && "$PROBE" record -o "$T/st3.probe" -- ./spawner >/dev/null 2>"$T/err")
	grep -q "^probe:   pid [0-9]* (parent [0-9]*) ran \./static_prog, not profiled: it is statically linked" "$T/err"
	ok $? "a posix_spawn'ed static program is named: $(grep 'static_prog, not' "$T/err")"
else
	skip "no static libc to build a static program"
	skip "no static libc to build a static program"
	skip "no static libc to build a static program"
	skip "no static libc to build a static program"
fi

"$PROBE" record -o "$T/np.probe" -- bash -c "env -u LD_PRELOAD /bin/true; /bin/true" >/dev/null 2>"$T/err"
grep -q "^probe:   pid [0-9]* then ran /bin/true, not profiled: its environment has no LD_PRELOAD" "$T/err"
ok $? "a program exec'd without LD_PRELOAD is named: $(grep 'then ran' "$T/err")"

if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
	(cd "$T" && "$PROBE" record -o "$T/sp.probe" -- setpriv --reuid=nobody --regid=nogroup \
		--clear-groups /bin/echo hi >"$T/out" 2>"$T/err")
	is "$(cat "$T/out")" hi "setpriv: the program runs"
	grep -q "^probe:   pid [0-9]* then ran /bin/echo, not profiled: it runs as another user" "$T/err"
	ok $? "setpriv: the program run as nobody is named, with why"
	[ ! -e "$T/probe.data" ]
	ok $? "setpriv: no stray ./probe.data"
else
	skip "setpriv: needs root and a user nobody"
	skip "setpriv: needs root and a user nobody"
	skip "setpriv: needs root and a user nobody"
fi
[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/err"
done_testing
