#!/bin/sh
# What LD_PRELOAD cannot reach, sampled from outside with perf events
# (issue 25; collector/outside/):
#   - a statically linked C program built -fomit-frame-pointer (gt_leaf's
#     5:3:2 leaves): its shares (lib.sh's leaf_checks: a false failure in
#     fewer than 1 run of 1,000), its stacks reaching main (the kernel's
#     stack copy walked with .eh_frame: a frame-pointer walk reaches none);
#   - a stack deeper than the copy: marked [truncated], the header's share;
#   - a Go program (go_hot: hotA 75 %, hotB 25 %, under main.main; a
#     stripped build still named from .gopclntab, inlined calls and lines
#     too), skipped without Go;
#   - probe record -p on a running program (gt_waiters): the spinning
#     threads' shares, the target untouched (its read() and nanosleep()
#     threads see no EINTR and no early return, its thread count is its
#     own, it runs on), stopped by -- sleep, by SIGINT, by the target's end;
#     -t; probe top -p;
#   - probe agent -p: the running process's pprof profile (go tool pprof);
#   - refusals, said with what would allow them; probe record -a as root.
. "$(dirname "$0")/lib.sh"
plan 34
W=
trap '[ -n "$W" ] && kill "$W" 2>/dev/null; rm -rf "$T"' EXIT

# The kernel must give perf events to this user at all.
if ! "$PROBE" record -q -o "$T/probe.probe" -- "$GT/gt_leaf_static" 1 >/dev/null 2>"$T/err"; then
	skip_all "perf events are refused here: $(head -n 1 "$T/err")"
fi

# ---- a static C program without frame pointers --------------------------
"$PROBE" record -F 4999 -o "$T/st.probe" -- "$GT/gt_leaf_static" 1000 >"$T/out" 2>"$T/err"
is "$?" 0 "a static program: probe record exits with its status"
grep -q "^probe: .*gt_leaf_static is statically linked: libprobe cannot load into it, so it is sampled from outside" "$T/err"
ok $? "the summary says it is sampled from outside, and why"
"$PROBE" report "$T/st.probe" >"$T/rep" 2>"$T/rerr"
leaf_checks "$T/rep" "static: "
"$PROBE" report --format folded "$T/st.probe" >"$T/folded" 2>>"$T/rerr"
# Stacks through main: at least binom_min of them, if 99 % truly do (the
# start and the exit are well under 1 % of 3.5 s): fails by chance < 1/1,000.
set -- $(awk '{ n += $NF } /;main;/ { m += $NF } END { print n + 0, m + 0 }' "$T/folded")
want=$(binom_min "$1" 0.99)
[ "$1" -gt 10000 ] && [ "$2" -ge "$want" ]
ok $? "static: $2 of $1 stacks reach main (want >= $want, 95 % is $(($1 * 95 / 100)))"

# gold types a static executable's .eh_frame SHT_X86_64_UNWIND, not
# PROGBITS (and gives it no .eh_frame_hdr): its stacks reach main too.
if command -v ld.gold >/dev/null 2>&1 &&
	cc -O2 -g -static -fomit-frame-pointer -fuse-ld=gold -I"$ROOT/tests" \
		"$ROOT/tests/gt_leaf.c" -o "$T/leaf_gold" -lm 2>"$T/ccerr"; then
	"$PROBE" record -q -F 4999 -o "$T/gold.probe" -- "$T/leaf_gold" 300 >/dev/null 2>&1
	"$PROBE" report --format folded "$T/gold.probe" >"$T/folded" 2>&1
	set -- $(awk '{ n += $NF } /;main;/ { m += $NF } END { print n + 0, m + 0 }' "$T/folded")
	want=$(binom_min "$1" 0.99)
	[ "$1" -gt 1000 ] && [ "$2" -ge "$want" ]
	ok $? "static, linked by gold (.eh_frame of type X86_64_UNWIND): $2 of $1 stacks reach main (want >= $want)"
else
	skip "no gold linker (binutils-gold) to link a static program with"
fi

# ---- a stack deeper than the copy: [truncated], the header's share -------
printf '#include <stdlib.h>\nstatic volatile unsigned long s;\n__attribute__((noinline)) void leaf(void) { for (int i = 0; i < 1000000; i++) s += i; }\n__attribute__((noinline)) int rec(int d) { volatile char pad[200]; pad[0] = d; if (!d) { for (int k = 0; k < 300; k++) leaf(); return pad[0]; } return rec(d - 1) + pad[0]; }\nint main(int c, char **v) { return rec(atoi(v[1])) & 1; }\n' >"$T/deep.c"
if gcc -O2 -static -fomit-frame-pointer -o "$T/deep" "$T/deep.c" 2>/dev/null; then
	"$PROBE" record -q -o "$T/deep.probe" -- "$T/deep" 100 >/dev/null 2>&1
	"$PROBE" report "$T/deep.probe" >"$T/rep" 2>&1
	grep -Eq "^# stacks cut short \(\[truncated\]\): [0-9]+ samples, (9[0-9]|100)\." "$T/rep"
	ok $? "100 frames of 224 bytes, past the 8 KiB copy: $(grep 'cut short' "$T/rep")"
	"$PROBE" record -q --call-graph dwarf,32768 -o "$T/deep2.probe" -- "$T/deep" 100 >/dev/null 2>&1
	"$PROBE" report --format folded "$T/deep2.probe" >"$T/folded" 2>&1
	set -- $(awk '{ n += $NF } /;main;/ && !/truncated/ { m += $NF } END { print n + 0, m + 0 }' "$T/folded")
	[ "$1" -gt 0 ] && [ "$2" -ge "$(binom_min "$1" 0.99)" ]
	ok $? "--call-graph dwarf,32768: $2 of $1 stacks whole, to main"
else
	skip "no static libc"
	skip "no static libc"
fi

# ---- Go ------------------------------------------------------------------
if command -v go >/dev/null 2>&1; then
	mkdir -p "$T/gocache"
	for b in go_hot:"" go_hot_s:"-s -w"; do
		(cd "$ROOT/tests/go_hot" && HOME=$T GOCACHE=$T/gocache GOFLAGS=-mod=mod \
			go build -ldflags="${b#*:}" -o "$T/${b%%:*}" . ) 2>"$T/goerr"
	done
	if [ -x "$T/go_hot" ] && [ -x "$T/go_hot_s" ]; then
		"$PROBE" record -q -o "$T/go.probe" -- "$T/go_hot" 400 >/dev/null 2>"$T/err"
		"$PROBE" report --format folded "$T/go.probe" >"$T/folded" 2>&1
		# Of the two functions' samples, step inlined in them included (the
		# runtime's, ~0.5 %, would bias a share of all): binom_tol for one
		# check (hotB's is its complement), a false failure in fewer than 1
		# run of 1,000.
		set -- $(awk '/;main\.hotA(;| )/ { a += $NF } /;main\.hotB(;| )/ { b += $NF }
			END { print a + 0, b + 0 }' "$T/folded")
		n=$(($1 + $2))
		a=$(awk -v x="$1" -v n="$n" 'BEGIN { if (n) printf "%.2f", 100 * x / n }')
		share_ok "${a:-x}" 75 "$n"
		ok $? "Go: main.hotA ${a:-none} % of the two functions' $n samples (want 75 +-$(binom_tol "${n:-1}" 0.75))"
		set -- $(awk '{ n += $NF } /;main\.main;main\.hot[AB]/ { m += $NF } END { print n + 0, m + 0 }' "$T/folded")
		[ "$1" -gt 0 ] && [ "$2" -ge "$(binom_min "$1" 0.97)" ]
		ok $? "Go: $2 of $1 stacks run main.main -> main.hotA/B (frameless leaves walked by .gopclntab)"
		"$PROBE" record -q -o "$T/gos.probe" -- "$T/go_hot_s" 200 >/dev/null 2>&1
		"$PROBE" report --format folded "$T/gos.probe" >"$T/folded" 2>&1
		grep -q ";runtime\.main;main\.main;main\.hotA " "$T/folded"
		ok $? "Go stripped (-s -w): named from .gopclntab: $(sort -t' ' -k2 -nr "$T/folded" | head -n 1)"
		# main.step, inlined in both (no DWARF): .gopclntab's inline tree
		# names it, its pcln table gives its line (main.go:22) and the call
		# sites' (28, in hotA; 35, in hotB).
		"$PROBE" report --sort srcline "$T/gos.probe" >"$T/rep" 2>&1
		grep -q ";main\.main;main\.hotA;main\.step \[inlined\] " "$T/folded" &&
			grep -q ";main\.main;main\.hotB;main\.step \[inlined\] " "$T/folded" &&
			[ "$(awk '!/^#/ && NF { print $4; exit }' "$T/rep")" = main.go:22 ] &&
			grep -Eq " main\.go:28$" "$T/rep" && grep -Eq " main\.go:35$" "$T/rep"
		ok $? "Go stripped: an inlined function named, with its lines, from .gopclntab: $(grep -c 'main\.step \[inlined\]' "$T/folded") stacks; $(awk '!/^#/ && NF { printf "%s ", $4 }' "$T/rep" | cut -c1-60)"
	else
		for i in 1 2 3 4; do skip "go build failed: $(head -n 1 "$T/goerr")"; done
	fi
else
	for i in 1 2 3 4; do skip "no Go toolchain (golang-go): the Go checks need one"; done
fi

# ---- probe record -p on a running program --------------------------------
start_waiters() {
	"$GT/gt_waiters" >"$T/w.out" &
	W=$!
	for i in $(seq 50); do grep -q ready "$T/w.out" && break; sleep 0.1; done
}
start_waiters
before=$(ls "/proc/$W/task" | wc -l)
"$PROBE" record -p "$W" -o "$T/p.probe" -- sleep 2 >/dev/null 2>"$T/err"
is "$?" 0 "-p PID -- sleep 2: exit 0 (sleep's status)"
"$PROBE" report "$T/p.probe" >"$T/rep" 2>&1
n=$(samples_in "$T/rep")
a=$(self_share "$T/rep" spin_a) b=$(self_share "$T/rep" spin_b)
sum=$(awk -v a="${a:-0}" -v b="${b:-0}" 'BEGIN { print a + b }')
# Two spinners, 999 Hz x 2 s each where each has a CPU (3,996): at least
# 500 even on a loaded machine; their split is what is checked.
[ "${n:-0}" -ge 500 ] && share_ok "$(awk -v a="${a:-0}" -v s="$sum" 'BEGIN { if (s) printf "%.2f", 100 * a / s }')" 50 "$n"
ok $? "-p: spin_a ${a:-none} %, spin_b ${b:-none} % of $n samples (want 50/50 of theirs)"
grep -q "^probe:   pid $W (parent [0-9]*) gt_waiters: .*still running when probe stopped" "$T/err"
ok $? "the summary: still running: $(grep "pid $W" "$T/err")"
kill -0 "$W" 2>/dev/null && [ "$(ls "/proc/$W/task" | wc -l)" = "$before" ]
ok $? "the target runs on, its threads its own ($before)"
! grep -v '^ready$' "$T/w.out" | grep -q .
ok $? "its read() and nanosleep() threads saw no EINTR, no early return: $(grep -v '^ready$' "$T/w.out" | head -n 2 | tr '\n' ' ')"
grep -q "kernel: \(included\|not sampled\)" "$T/rep"
ok $? "the header says whether kernel time was sampled: $(grep '^# kernel' "$T/rep")"

# -t: one thread of it.
tid=$(for t in /proc/$W/task/*; do [ "$(cat "$t/stat" | awk '{ print $3 }')" = R ] && { basename "$t"; break; }; done)
"$PROBE" record -t "$tid" -o "$T/t.probe" -- sleep 1 >/dev/null 2>&1
"$PROBE" report --sort tid "$T/t.probe" >"$T/rep" 2>&1
[ "$(awk '!/^#/ && NF' "$T/rep" | wc -l)" = 1 ] && grep -q ":gt_waiters" "$T/rep"
ok $? "-t $tid: that thread's samples alone: $(awk '!/^#/ && NF' "$T/rep" | head -n 2 | tr '\n' ' ')"

# No command: Ctrl-C stops it.
"$PROBE" record -p "$W" -o "$T/p2.probe" >/dev/null 2>"$T/err" &
P=$!
sleep 1
kill -INT "$P"
wait "$P"
st=$?
[ "$st" = 0 ] && grep -q "^probe: stopped on SIGINT" "$T/err" && [ "$("$PROBE" report "$T/p2.probe" 2>/dev/null | samples_in /dev/stdin)" -gt 0 ]
ok $? "-p PID alone: SIGINT stops it, exit $st, a recording with samples"
kill -0 "$W" 2>/dev/null && ! grep -v '^ready$' "$T/w.out" | grep -q .
ok $? "the target still runs, undisturbed"

# probe top -p: plain-text snapshots; the target's end ends the view.
"$PROBE" top -p "$W" -d 0.5 -n 5 >"$T/top" 2>&1 &
P=$!
sleep 1.5
kill "$W"
wait "$W" 2>/dev/null
for i in $(seq 50); do kill -0 "$P" 2>/dev/null || break; sleep 0.1; done
! kill -0 "$P" 2>/dev/null && grep -q "the processes watched ended" "$T/top" &&
	grep -Eq "^ *[0-9.]+% +[0-9.]+% +[0-9]+ +spin_a " "$T/top"
ok $? "probe top -p: spin_a's row, and it ends with the target: $(grep -c '^# probe top' "$T/top") snapshots"

# The target's end ends the recording.
start_waiters
( sleep 1; kill "$W" ) &
"$PROBE" record -p "$W" -o "$T/p3.probe" >/dev/null 2>"$T/err"
st=$?
wait "$W" 2>/dev/null
wait
[ "$st" = 0 ] && grep -q "stopped: the processes asked for ended" "$T/err"
ok $? "-p PID alone: it ends when the process does (exit $st): $(tail -n 1 "$T/err")"

# ---- probe agent -p: a running process's profile, read by go tool pprof ---
if command -v go >/dev/null 2>&1 && command -v curl >/dev/null 2>&1; then
	start_waiters
	"$PROBE" agent --socket "$T/agent.sock" --http 127.0.0.1:0 -p "$W" </dev/null >/dev/null 2>"$T/ag.log" &
	A=$!
	for i in $(seq 100); do grep -qs 'profiles at' "$T/ag.log" && break; sleep 0.05; done
	URL=$(sed -n 's|.*profiles at \(http://[^/]*\)/.*|\1|p' "$T/ag.log")
	curl -s -o "$T/ag.pb.gz" "$URL/debug/pprof/profile?seconds=1"
	HOME=$T GOCACHE=$T/gocache PPROF_TMPDIR=$T GOFLAGS= GOTOOLCHAIN=local \
		go tool pprof -top "$T/ag.pb.gz" >"$T/ag.top" 2>&1
	grep -Eq "% +spin_a$" "$T/ag.top" && grep -Eq "% +spin_b$" "$T/ag.top"
	ok $? "probe agent -p: its pprof profile has spin_a and spin_b (go tool pprof): $(grep -E 'spin_[ab]$' "$T/ag.top" | tr -s ' ' | tr '\n' ';')"
	kill "$W"
	wait "$W" 2>/dev/null
	W=
	sleep 0.5
	curl -s "$URL/" >"$T/ag.html"
	kill -TERM "$A"
	wait "$A"
	grep -q "<tr><td>[0-9]*</td><td>gt_waiters</td><td>[1-9][0-9]*</td><td>?</td></tr>" "$T/ag.html" &&
		grep -q "^probe: agent stopped: 1 processes" "$T/ag.log"
	ok $? "the agent's index: gt_waiters ended, its exit status not known from outside: $(tail -n 1 "$T/ag.log")"
else
	skip "no go tool pprof or curl to read the agent's profile"
	skip "no go tool pprof or curl to read the agent's profile"
fi

# ---- refusals -------------------------------------------------------------
"$PROBE" record -p 12x -o "$T/x.probe" >/dev/null 2>"$T/err"
st=$?
[ "$st" = 2 ] && grep -q "^probe: record: -p 12x: give process ids" "$T/err"
ok $? "-p 12x: refused, exit $st: $(head -n 1 "$T/err")"
"$PROBE" record -p 4194303 -o "$T/x.probe" >/dev/null 2>"$T/err"
grep -q "^probe: -p 4194303: no such process" "$T/err" && [ ! -e "$T/x.probe" ]
ok $? "-p of no process: said, no recording: $(head -n 1 "$T/err")"
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
	as_nobody "$PROBE" record -p 1 -o "$T/x.probe" >/dev/null 2>"$T/err"
	st=$?
	[ "$st" != 0 ] && grep -q "^probe: the kernel refused to sample process 1 from outside (Permission denied): it belongs to another user; run as root or with CAP_PERFMON" "$T/err"
	ok $? "as nobody, -p 1: refused, exit $st: $(head -n 1 "$T/err")"
	par=$(cat /proc/sys/kernel/perf_event_paranoid)
	as_nobody "$PROBE" record -a -o "$T/x.probe" >/dev/null 2>"$T/err"
	st=$?
	if [ "$par" -le 0 ]; then
		skip "perf_event_paranoid is $par: -a is allowed to every user here"
	else
		[ "$st" != 0 ] && grep -q "^probe: the kernel refused to sample the whole system from outside (Permission denied; kernel.perf_event_paranoid is $par): run as root or with CAP_PERFMON, or lower it (sysctl kernel.perf_event_paranoid=0)" "$T/err"
		ok $? "as nobody, -a: refused, exit $st: $(head -n 1 "$T/err")"
	fi
	# nobody's own process, from outside: allowed at paranoid <= 2.
	as_nobody "$GT/gt_waiters" >/dev/null &
	sleep 0.3
	NW=$(pgrep -n -u nobody -x gt_waiters)
	as_nobody "$PROBE" record -p "$NW" -o "$T/n.probe" -- sleep 1 >/dev/null 2>"$T/err"
	st=$?
	kill "$NW" 2>/dev/null
	if [ "$par" -le 2 ]; then
		n=$("$PROBE" report "$T/n.probe" 2>/dev/null | samples_in /dev/stdin)
		[ "$st" = 0 ] && [ "${n:-0}" -gt 200 ]
		ok $? "as nobody, -p of its own process: $n samples, exit $st"
	else
		grep -q "perf_event_paranoid is $par" "$T/err"
		ok $? "as nobody at paranoid $par, -p: refused with why: $(head -n 1 "$T/err")"
	fi
else
	for i in 1 2 3; do skip "not root, or no user nobody"; done
fi

# ---- -a, as root ----------------------------------------------------------
if [ "$(id -u)" -eq 0 ]; then
	start_waiters
	# gt_waiters' CPU time over the window, from the kernel (utime + stime,
	# in ticks): at 999 Hz, its samples in the -a recording, whatever else
	# runs.  The window is the record's (events open before the CPU time is
	# read, closed after): a tick of 10 ms at each end, and 5 %.
	cpu() { awk '{ print $14 + $15 }' "/proc/$W/stat"; }
	# Short processes, forked by a shell that was there before the
	# recording: each ends before its records are read, so only the names
	# taken at the start (perf's synthesized COMMs) can name it.
	sh -c 'while :; do /bin/true; sleep 0.005; done' &
	F=$!
	c0=$(cpu)
	"$PROBE" record -a -o "$T/a.probe" -- sleep 1.5 >/dev/null 2>"$T/err"
	st=$?
	c1=$(cpu)
	kill "$F"
	wait "$F" 2>/dev/null
	kill "$W"
	wait "$W" 2>/dev/null
	"$PROBE" report --sort pid "$T/a.probe" >"$T/rep" 2>&1
	n=$(samples_in "$T/rep")
	s=$(awk -v w="$W" '!/^#/ && $4 == w ":gt_waiters" { print $3 }' "$T/rep")
	want=$(awk -v d=$((c1 - c0)) -v t="$(getconf CLK_TCK)" 'BEGIN { printf "%d", d / t * 999 }')
	tol=$(awk -v w="$want" -v t="$(getconf CLK_TCK)" 'BEGIN { printf "%d", w * 0.05 + 2 * 999 / t * 2 }')
	[ "$st" = 0 ] && [ "${want:-0}" -gt 100 ] && within "${s:-0}" "$want" "$tol"
	ok $? "-a -- sleep 1.5: gt_waiters has ${s:-no} of $n samples; its CPU time says $want (+-$tol)"
	"$PROBE" report --pid "$W" "$T/a.probe" >"$T/rep" 2>&1
	set -- $(sed -n "s/^# filter: pid $W: \([0-9]*\) of \([0-9]*\) samples.*/\1 \2/p" "$T/rep") 0 0
	grep -Eq "^ *[0-9.]+% .* spin_[ab] " "$T/rep" && [ "$1" -gt 0 ] && [ "$1" -lt "$2" ]
	ok $? "report --pid $W of the -a recording: its $1 samples of $2"
	"$PROBE" report --header-only "$T/a.probe" >"$T/hdr" 2>&1
	! grep -q "\[pid [0-9]*\]" "$T/hdr"
	ok $? "every process of the -a recording is named (none is a nameless [pid N])"
else
	skip "-a needs root here"
	skip "-a needs root here"
fi
done_testing
