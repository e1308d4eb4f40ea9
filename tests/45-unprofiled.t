#!/bin/sh
# Children libprobe cannot profile (issue 11, case 7): a statically linked
# program a script starts is sampled from outside instead (issue 25: perf
# events on it from its exec, inherited by what it starts); a program
# exec'd without LD_PRELOAD in its environment, a program run after
# dropping privileges (setpriv: the collector takes connections from its
# own user only) are said, with why; and none of them leaves a stray
# ./probe.data.  The exec'ing process tells the collector before it execs.
# What libprobe cannot see (a raw execve or fork system call, the children
# of a static program run with env -i) the collector finds in /proc, if it
# lives for two of its scans (0.2 s).
. "$(dirname "$0")/lib.sh"
command -v bash >/dev/null 2>&1 || skip_all "no bash (its fork+exec is what is tested)"
plan 13

printf 'int main(void) { volatile double x = 1; for (long i = 0; i < 100000000; i++) x = x * 1.0000001 + 0.25; return 0; }\n' >"$T/st.c"
if gcc -static -O1 -o "$T/static_prog" "$T/st.c" 2>/dev/null; then
	# static_prog spins 1e8 multiplications: about 0.3 s of CPU, 300 samples.
	(cd "$T" && "$PROBE" record -o "$T/st.probe" -- bash -c "./static_prog; /bin/true" >/dev/null 2>"$T/err")
	grep -q "^probe:   pid [0-9]* (parent [0-9]*) static_prog: \./static_prog \[exec'd from bash\]: [1-9][0-9]* samples" "$T/err"
	ok $? "a static program a script runs is sampled from outside: $(grep 'static_prog' "$T/err")"
	"$PROBE" report "$T/st.probe" >"$T/rep" 2>&1
	set -- $(awk '$NF == "static_prog" && $4 == "main" { sub("%", "", $2); print $2; exit }' "$T/rep") x
	! grep -q "without being profiled" "$T/err" && within "$1" 100 1
	ok $? "and not counted unprofiled; its report: main ${1} % of the samples, under it"
	# sh (dash) runs it from a vfork child; posix_spawn from glibc's own.
	# A vfork child of a shell that has not sampled yet (preload/lazy.c)
	# says so on a connection of its own: "[exec'd from sh]".
	(cd "$T" && "$PROBE" record -o "$T/st2.probe" -- sh -c "./static_prog; /bin/true" >/dev/null 2>"$T/err")
	grep -Eq "^probe:   pid [0-9]* \(parent [0-9]*\) static_prog: \./static_prog( \[exec'd from sh\])?: [1-9][0-9]* samples" "$T/err"
	ok $? "sh -c './static_prog' (a vfork child) is sampled from outside: $(grep 'static_prog' "$T/err")"
	printf '#include <spawn.h>\n#include <sys/wait.h>\nextern char **environ;\nint main(void) { pid_t p; char *a[] = { "static_prog", 0 }; if (posix_spawn(&p, "./static_prog", 0, 0, a, environ)) return 1; waitpid(p, 0, 0); return 0; }\n' >"$T/spawner.c"
	gcc -o "$T/spawner" "$T/spawner.c" &&
		(cd "$T" && "$PROBE" record -o "$T/st3.probe" -- ./spawner >/dev/null 2>"$T/err")
	grep -q "^probe:   pid [0-9]* (parent [0-9]*) static_prog: static_prog: [1-9][0-9]* samples" "$T/err"
	ok $? "a posix_spawn'ed static program is sampled from outside: $(grep 'static_prog' "$T/err")"
	# A static program's children: with LD_PRELOAD libprobe profiles them
	# (the static program's inherited events give way to it); without
	# (env -i), those events sample them from outside.  env -i's own exec
	# of st_spawn is static before it is without LD_PRELOAD: followed too.
	printf '#include <unistd.h>\n#include <sys/wait.h>\nint main(int c, char **v) { pid_t p = fork(); int st; if (!p) { execv(v[1], v + 1); _exit(127); } waitpid(p, &st, 0); return WEXITSTATUS(st); }\n' >"$T/stsp.c"
	gcc -static -O1 -o "$T/st_spawn" "$T/stsp.c" &&
		"$PROBE" record -o "$T/st4.probe" -- sh -c "$T/st_spawn /bin/sleep 1.5; env -i $T/st_spawn /bin/sleep 1.5" >/dev/null 2>"$T/err"
	# sleep may get a sample or two of its start (loaded: 1 ms of CPU, 999 Hz).
	grep -q "^probe:   pid [0-9]* (parent [0-9]*) sleep: /bin/sleep 1.5: [0-9]* samples, 1 thread, exit 0" "$T/err" &&
		[ "$(grep -c "^probe:   pid [0-9]* (parent [0-9]*) st_spawn: $T/st_spawn /bin/sleep 1.5" "$T/err")" = 2 ]
	ok $? "a static program's child with LD_PRELOAD is profiled (exit 0), both static ones sampled from outside"
	[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/err"
	[ "$(grep -c "^probe:   pid [0-9]* (parent [0-9]*) sleep" "$T/err")" = 2 ] && ! grep -q "not profiled" "$T/err"
	ok $? "the child of a static program run with env -i is sampled from outside (inherited events)"
	! grep -q "without being profiled" "$T/err"
	ok $? "nothing counted unprofiled: $(grep 'without being' "$T/err")"
else
	for i in 1 2 3 4 5 6 7; do skip "no static libc to build a static program"; done
fi

# Raw system calls libprobe cannot interpose: the collector sees them.
printf '#define _GNU_SOURCE\n#include <unistd.h>\n#include <sys/syscall.h>\n#include <sys/wait.h>\nstatic void go(char **av) { char *env[] = { "PATH=/usr/bin:/bin", 0 }; syscall(SYS_execve, av[0], av, env); _exit(127); }\nint main(int c, char **v) { if (c < 3) return 2; if (v[1][0] == 0x73) go(v + 2); pid_t p = syscall(SYS_fork); if (p == 0) go(v + 2); int st; waitpid(p, &st, 0); return WEXITSTATUS(st); }\n' >"$T/rawexec.c"
gcc -O1 -o "$T/rawexec" "$T/rawexec.c"
# A process that execs before its first sample never spoke (preload/lazy.c):
# the collector finds the program in /proc and says it ran it.
"$PROBE" record -o "$T/raw1.probe" -- "$T/rawexec" self /bin/sleep 1.5 >/dev/null 2>"$T/err"
grep -Eq "^probe:   pid [0-9]* (then ran|\(parent [0-9]*\) ran) /usr/bin/sleep, not profiled: its environment has no LD_PRELOAD" "$T/err" &&
	! grep -q "no process connected" "$T/err"
ok $? "a raw execve system call into an unprofiled program is named: $(grep 'then ran' "$T/err")"
"$PROBE" record -o "$T/raw2.probe" -- "$T/rawexec" child /bin/sleep 1.5 >/dev/null 2>"$T/err"
grep -q "^probe:   pid [0-9]* (parent [0-9]*) ran /usr/bin/sleep, not profiled: its environment has no LD_PRELOAD" "$T/err"
ok $? "a raw fork's child that execs an unprofiled program is named: $(grep 'ran /usr/bin/sleep' "$T/err")"

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
