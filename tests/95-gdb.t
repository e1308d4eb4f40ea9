#!/bin/sh
# A program profiled under gdb runs as it does under gdb alone: gdb stops
# a program at every signal but a few it passes on quietly (SIGPROF among
# them), so libprobe, started under a tracer, samples with SIGPROF
# (F_SETSIG): no "Program received signal", the same output and exit
# status.  Each case runs `gdb -batch -ex run --args PROG` bare and with
# probe and compares gdb's whole output (pids and addresses aside), for:
#   - probe record -- gdb ... (gdb, its shell and the program preloaded)
#   - LD_PRELOAD given to gdb's inferior alone (set environment)
#   - the CPU-time timers (PROBE_TIMER=1, and perf_event_open refused)
#   - threads (gt_threads), and a fork child (gt_proc fork)
#   - a program that uses SIGPROF itself: its handler gets its sigqueue'd
#     and setitimer signals, and probe says once that they share it; and
#     one that leaves SIGPROF at SIG_DFL still dies of its ITIMER_PROF
# and checks that the recording holds the program's functions, as root
# and as nobody (skipped, with why, where ptrace is refused).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault.sh"
command -v gdb >/dev/null 2>&1 ||
	skip_all "gdb is not installed (scripts/install-deps installs it)"

# A program with SIGPROF of its own.
cat >"$T/sigprof.c" <<'EOF'
/*
 * sigprof share: a SA_SIGINFO handler for SIGPROF gets ten sigqueue'd
 *                SIGPROFs (values 1..10) and ITIMER_PROF's; exits 5
 * sigprof dfl:   ITIMER_PROF with SIGPROF at SIG_DFL: dies of it
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t queued, sum, ticks, other;
static volatile double x;

__attribute__((noinline)) static void spin(long k)
{
	for (long i = 0; i < k * 10000; i++)
		x = x * 1.0000001 + 0.25;
}

static void on_prof(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_code == SI_QUEUE) {
		queued++;
		sum += si->si_value.sival_int;
	} else if (si->si_code == SI_KERNEL) {
		ticks++;
	} else {
		other++;
	}
}

int main(int argc, char **argv)
{
	struct itimerval it = { { 0, 5000 }, { 0, 5000 } };
	struct sigaction sa;

	if (argc > 1 && !strcmp(argv[1], "dfl")) {
		printf("until SIGPROF\n");
		fflush(stdout);
		setitimer(ITIMER_PROF, &it, NULL);
		while (clock() < 2 * CLOCKS_PER_SEC)
			spin(1);
		printf("survived SIGPROF\n");
		return 0;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	for (int i = 1; i <= 10; i++) {
		union sigval v = { .sival_int = i };
		sigqueue(getpid(), SIGPROF, v);
		spin(20);
	}
	setitimer(ITIMER_PROF, &it, NULL);
	while (ticks < 20)
		spin(1);
	memset(&it, 0, sizeof it);
	setitimer(ITIMER_PROF, &it, NULL);
	printf("queued %d, sum %d; timer at least 20; other %d\n", (int)queued,
	       (int)sum, (int)other);
	spin(4000);
	return 5;
}
EOF
cc -O2 -g -o "$T/sigprof" "$T/sigprof.c" || { plan 1; ok 1 "cc builds sigprof.c"; exit 1; }
chmod 0755 "$T/sigprof"

PER_USER=31
n=0
for u in $USERS; do n=$((n + PER_USER)); done
plan $n

# gdb_run OUT CMD...: CMD (gdb, or probe record -- gdb) as user $u, its
# whole output (stdout and stderr) into OUT, normalized: pids, LWPs and
# addresses as N; gdb's thread lines left out (their order is the
# scheduler's), pieces of them too.  SHELL: gdb starts the program
# through it, and nobody's is nologin.
gdb_run() {
	_out=$1
	shift
	run_as "$u" env SHELL=/bin/sh "$@" >"$_out.raw" 2>&1
	_rc=$?
	# gdb writes "[Thread ... (LWP N)" and " exited]" apart, and the
	# program's own line can land between them (seen under load).
	sed -E 's/(process|LWP) [0-9]+/\1 N/g; s/0x[0-9a-f]+/0xN/g' "$_out.raw" |
		grep -Ev '^\[(New Thread|Thread) .*\]$' |
		sed -E 's/\[(New Thread|Thread) 0xN \(LWP N\)( exited)?\]?//' |
		grep -Ev '^ exited\]$|^$' >"$_out"
	return $_rc
}
# No debuginfod server asked about the programs' libraries.
unset DEBUGINFOD_URLS
# gdb's "[New Thread ...]" and "[Thread ... exited]" lines come when the
# scheduler says, and gdb writes them in pieces: the program's own line
# once landed inside one ("[threads done" / "Thread ... exited]", seen
# under load).  gdb is told not to print them; gdb_run's filter stays
# for a gdb that prints them anyway.
printf 'set print thread-events off\n' >"$T/quiet.gdb"
chmod 0644 "$T/quiet.gdb"
GDB="gdb -nx -batch -x $T/quiet.gdb"

# same NAME BARE PROBED RC_BARE RC_PROBED: one TAP line, the outputs and
# gdb's exit status equal, no signal stop.
same() {
	if [ "$4" = "$5" ] && cmp -s "$2" "$3" && ! grep -q 'received signal' "$3"; then
		ok 0 "$1 ($u): gdb's output and exit status ($5) as without probe, no stop"
	else
		ok 1 "$1 ($u): gdb's output and exit status as without probe, no stop"
		# On stderr too, which prove shows without -v: a failure that
		# comes only in a whole run under load must say why in its log.
		{ echo "# $1 ($u): gdb's exit status: bare $4, with probe $5"
		  diff "$2" "$3" | head -12 | sed 's/^/#   /'; } | tee /dev/stderr
	fi
}

# ended REC COMM: how the recording says the process COMM ended.
ended() {
	"$PROBE" report --header-only "$1" 2>/dev/null |
		awk -v c="$2:" '$1 == "#" && $2 ~ /^[0-9]+$/ {
			for (i = 5; i <= NF; i++) if ($i == c) {
				s = $5; for (j = 6; j < i; j++) s = s " " $j
				print s; exit
			} }'
}

# At least this many samples in each function checked: gt_leaf 200 is
# 0.7 s of CPU here, about 700 samples (175 on the CPU-time timers, which
# also stand in where perf_event_paranoid refuses nobody).
MIN=10

# order REPORT A B C: each of the three has at least MIN samples, and A
# (called 5:3:2) more than C: at 200 rounds of gt_leaf, about 700 samples
# (175 with the timers), 6.7 standard deviations apart at 350 (4.7 at the
# timers' 175).
order() {
	_a=$(samples_of "$1" "$2") _b=$(samples_of "$1" "$3") _c=$(samples_of "$1" "$4")
	[ "$_a" -gt "$_c" ] && [ "$_b" -ge "$MIN" ] && [ "$_c" -ge "$MIN" ]
}

for u in $USERS; do
	# Can this user debug at all?  (ptrace: yama ptrace_scope, seccomp.)
	gdb_run "$T/bare.leaf" $GDB -ex run --args "$GT/gt_leaf" 200 3
	b=$?
	if ! grep -q 'exited with code 03' "$T/bare.leaf"; then
		why=$(grep -im1 'ptrace\|permission\|not permitted' "$T/bare.leaf.raw" ||
		      head -c 200 "$T/bare.leaf.raw")
		why=$(echo "$why" | tr '\n#' '  ')
		for i in $(seq $PER_USER); do
			skip "gdb cannot run a program as $u: $why"
		done
		continue
	fi
	rm -f "$T"/*.probe

	# probe record -- gdb: gdb, its shell and the program all preloaded.
	gdb_run "$T/rec.leaf" "$PROBE" record -q -o "$T/rec.probe" -- $GDB -ex run --args "$GT/gt_leaf" 200 3
	p=$?
	same "probe record -- gdb gt_leaf" "$T/bare.leaf" "$T/rec.leaf" $b $p
	grep -q '^\[Inferior 1 (process N) exited with code 03\]$' "$T/rec.leaf"
	ok $? "probe record -- gdb gt_leaf ($u): gdb says the program exited with 3"
	is "$(ended "$T/rec.probe" gt_leaf)" "exit 3" \
		"probe record -- gdb gt_leaf ($u): the recording says gt_leaf exited with 3"
	"$PROBE" report "$T/rec.probe" >"$T/rep" 2>&1
	order "$T/rep" leaf_five leaf_three leaf_two
	ok $? "probe record -- gdb gt_leaf ($u): leaf_five, leaf_three, leaf_two: $_a, $_b, $_c samples (five > two, each >= $MIN)"

	# LD_PRELOAD into gdb's inferior only; its samples go to a file.
	gdb_run "$T/pre.leaf" $GDB -ex "set environment LD_PRELOAD=$LIBPROBE" -ex "set environment PROBE_OUTPUT=$T/pre.probe" -ex run --args "$GT/gt_leaf" 200 3
	p=$?
	# Without a collector it says where the samples go, once per process:
	# the shell gdb starts it with, and the program.
	grep '^probe: ' "$T/pre.leaf" | sort -u >"$T/said"
	grep -v '^probe: ' "$T/pre.leaf" >"$T/pre.leaf2"
	same "LD_PRELOAD in gdb's inferior, gt_leaf" "$T/bare.leaf" "$T/pre.leaf2" $b $p
	is "$(cat "$T/said")" "probe: writing profile to $T/pre.probe (no collector: PROBE_SOCKET is not set)" \
		"LD_PRELOAD in gdb's inferior ($u): probe says only where the samples go"
	is "$(ended "$T/pre.probe" gt_leaf)" "exit 3" \
		"LD_PRELOAD in gdb's inferior ($u): the recording says gt_leaf exited with 3"
	"$PROBE" report "$T/pre.probe" >"$T/rep" 2>&1
	order "$T/rep" leaf_five leaf_three leaf_two
	ok $? "LD_PRELOAD in gdb's inferior ($u): leaf_five, leaf_three, leaf_two: $_a, $_b, $_c samples (five > two, each >= $MIN)"
	# F_SETSIG's signal would break system calls: no kernel samples, and
	# the report says why (HELLO's flags: PROBE_HELLO_KWHY_SETSIG).
	grep -q '^# kernel: not sampled: .*PROBE_KERNEL=1' "$T/rep"
	ok $? "LD_PRELOAD in gdb's inferior ($u): kernel time not sampled, and why: $(grep '^# kernel' "$T/rep")"

	# The CPU-time timers (perf events refused) signal with SIGPROF too.
	gdb_run "$T/tim.leaf" env PROBE_TIMER=1 "$PROBE" record -q -o "$T/tim.probe" -- $GDB -ex run --args "$GT/gt_leaf" 200 3
	p=$?
	same "PROBE_TIMER=1, gt_leaf" "$T/bare.leaf" "$T/tim.leaf" $b $p
	"$PROBE" report "$T/tim.probe" >"$T/rep" 2>&1
	order "$T/rep" leaf_five leaf_three leaf_two
	ok $? "PROBE_TIMER=1 ($u): leaf_five, leaf_three, leaf_two: $_a, $_b, $_c samples (five > two, each >= $MIN)"
	grep -q '^# event: cpu-clock (CPU-time timer)' "$T/rep"
	ok $? "PROBE_TIMER=1 ($u): the recording says CPU-time timers"

	# perf_event_open refused (seccomp, gt_noperf): the timers' fallback,
	# said once, signals with SIGPROF as well.
	gdb_run "$T/bare.np" $GDB -ex run --args "$GT/gt_noperf" EPERM "$GT/gt_leaf" 200 3
	b=$?
	gdb_run "$T/rec.np" "$PROBE" record -q -o "$T/rec.probe" -- $GDB -ex run --args "$GT/gt_noperf" EPERM "$GT/gt_leaf" 200 3
	p=$?
	grep '^probe: ' "$T/rec.np" >"$T/said"
	grep -v '^probe: ' "$T/rec.np" >"$T/rec.np2"
	same "perf_event_open refused, gt_leaf" "$T/bare.np" "$T/rec.np2" $b $p
	[ "$(wc -l <"$T/said")" = 1 ] && grep -q '^probe: perf_event_open is refused' "$T/said"
	ok $? "perf_event_open refused ($u): probe says so once: $(head -c 120 "$T/said")"
	"$PROBE" report "$T/rec.probe" >"$T/rep" 2>&1
	order "$T/rep" leaf_five leaf_three leaf_two
	ok $? "perf_event_open refused ($u): leaf_five, leaf_three, leaf_two: $_a, $_b, $_c samples (five > two, each >= $MIN)"

	# Threads, each signalled on its own (F_SETOWN_EX).
	gdb_run "$T/bare.thr" $GDB -ex run --args "$GT/gt_threads"
	b=$?
	gdb_run "$T/rec.thr" "$PROBE" record -q -o "$T/rec.probe" -- $GDB -ex run --args "$GT/gt_threads"
	p=$?
	same "gt_threads" "$T/bare.thr" "$T/rec.thr" $b $p
	"$PROBE" report --sort comm "$T/rec.probe" >"$T/rep" 2>&1
	[ "$(samples_of "$T/rep" w4)" -gt "$(samples_of "$T/rep" w1)" ] &&
		[ "$(samples_of "$T/rep" w1)" -ge 1 ]
	ok $? "gt_threads ($u): w4 > w1 > 0 samples ($(samples_of "$T/rep" w4), $(samples_of "$T/rep" w1))"

	# A fork child (gdb detaches it) keeps SIGPROF.
	gdb_run "$T/bare.fork" $GDB -ex run --args "$GT/gt_proc" fork 100
	b=$?
	gdb_run "$T/rec.fork" "$PROBE" record -q -o "$T/rec.probe" -- $GDB -ex run --args "$GT/gt_proc" fork 100
	p=$?
	same "gt_proc fork" "$T/bare.fork" "$T/rec.fork" $b $p
	"$PROBE" report "$T/rec.probe" >"$T/rep" 2>&1
	for f in parent_work child_work child_thread_work; do
		[ "$(samples_of "$T/rep" $f)" -ge 1 ]
		ok $? "gt_proc fork ($u): $f is sampled ($(samples_of "$T/rep" $f) samples)"
	done

	# The program's own SIGPROF: its handler gets every one of them.
	gdb_run "$T/bare.sp" $GDB -ex run --args "$T/sigprof" share
	b=$?
	gdb_run "$T/rec.sp" "$PROBE" record -q -o "$T/rec.probe" -- $GDB -ex run --args "$T/sigprof" share
	p=$?
	grep '^probe: ' "$T/rec.sp" >"$T/said"
	grep -v '^probe: ' "$T/rec.sp" >"$T/rec.sp2"
	same "sigprof share" "$T/bare.sp" "$T/rec.sp2" $b $p
	grep -q '^queued 10, sum 55; timer at least 20; other 0$' "$T/rec.sp2"
	ok $? "sigprof share ($u): the program's handler got its 10 sigqueue'd SIGPROFs and its timer's"
	grep -q 'exited with code 05' "$T/rec.sp2"
	ok $? "sigprof share ($u): and it exited with 5"
	[ "$(grep -c 'installed its own handler for signal 27.*handle SIG40 nostop noprint' "$T/said")" = 1 ] &&
		[ "$(wc -l <"$T/said")" = 1 ]
	ok $? "sigprof share ($u): probe says once that the program shares its signal, and how to move it under gdb: $(cat "$T/said")"
	"$PROBE" report "$T/rec.probe" >"$T/rep" 2>&1
	[ "$(samples_of "$T/rep" spin)" -ge $MIN ]
	ok $? "sigprof share ($u): probe sampled it all the same ($(samples_of "$T/rep" spin) samples in spin)"

	# SIGPROF at SIG_DFL: the program's ITIMER_PROF still ends it.
	gdb_run "$T/bare.dfl" $GDB -ex run --args "$T/sigprof" dfl
	b=$?
	gdb_run "$T/rec.dfl" "$PROBE" record -q -o "$T/rec.probe" -- $GDB -ex run --args "$T/sigprof" dfl
	p=$?
	grep -v '^probe: ' "$T/rec.dfl" >"$T/rec.dfl2"
	same "sigprof dfl" "$T/bare.dfl" "$T/rec.dfl2" $b $p
	grep -q '^Program terminated with signal SIGPROF' "$T/rec.dfl2"
	ok $? "sigprof dfl ($u): the program died of its SIGPROF"

	# PROBE_SIGNAL=PROF, asked for: no gdb needed to pick it.
	gdb_run "$T/sig.leaf" env PROBE_SIGNAL=PROF "$PROBE" record -q -o "$T/sig.probe" -- "$GT/gt_leaf" 200 3
	is "$?" 3 "PROBE_SIGNAL=PROF ($u): gt_leaf exits with 3"
	"$PROBE" report "$T/sig.probe" >"$T/rep" 2>&1
	order "$T/rep" leaf_five leaf_three leaf_two
	ok $? "PROBE_SIGNAL=PROF ($u): leaf_five, leaf_three, leaf_two: $_a, $_b, $_c samples (five > two, each >= $MIN)"
	! grep -q '^probe: ' "$T/sig.leaf"
	ok $? "PROBE_SIGNAL=PROF ($u): probe says nothing: $(grep '^probe: ' "$T/sig.leaf" | head -c 300)"
done
[ "$_tap_fail" -eq 0 ] || { diag "last report:"; head -12 "$T/rep" | sed 's/^/#   /'; }
done_testing
