#!/bin/sh
# --off-cpu: where threads wait, as shares of wall time.  gt_offcpu's main
# thread computes 5 ms and sleeps 15 ms in a loop for 2 s while three threads
# wait for the whole run (a condition variable, a read on a pipe, a poll);
# it measures what it did itself.  In the folded output (microseconds of
# wall time) each share must be within 3 points of that truth, as root and
# as nobody, with CPU time sampled by CPU-time timers (the default) and by
# perf's cpu-clock (-e), and the program sees no EINTR and no short sleep.
# Every output marks the waits: [off-cpu] leaves (folded, text, perf-script
# "off-cpu" samples), pprof's off-cpu sample type (read by go tool pprof),
# speedscope (its own importer); --sort event splits running from waiting.
# A real program: python3 reading a pipe fed every 20 ms and a thread
# napping, against the times python measured itself.  The slow calls of
# gt_signals (eintr, interrupt, alarm) behave as without probe.
. "$(dirname "$0")/lib.sh"
plan 37

O="$GT/gt_offcpu"
mkdir -p "$T/nb" && chmod 777 "$T/nb"

# shares FOLDED TRUTH: "got want" per kind, from folded lines and the
# program's own figures (4 threads of main_wall_ns each).
shares() {
	awk 'FNR == NR { v[$1] = $2; next }
	{ n = $NF; t += n }
	/;compute_here/ && !/\[off-cpu\] [0-9]+$/ { c += n }
	/;sleep_here;.*\[off-cpu\] [0-9]+$/ { s += n }
	/;wait_cond_here;.*\[off-cpu\] [0-9]+$/ { cv += n }
	/;wait_read_here;.*\[off-cpu\] [0-9]+$/ { rd += n }
	/;wait_poll_here;.*\[off-cpu\] [0-9]+$/ { pl += n }
	END {
		w = 4 * v["main_wall_ns"] / 1000
		printf "compute %.2f %.2f\n", 100 * c / t, 100 * v["compute_ns"] / 1000 / w
		printf "sleep %.2f %.2f\n", 100 * s / t, 100 * v["sleep_ns"] / 1000 / w
		printf "cond %.2f 25\nread %.2f 25\npoll %.2f 25\n", 100 * cv / t, 100 * rd / t, 100 * pl / t
		printf "total %.0f %.0f\n", t, w
	}' "$1" "$2"
}

# run LABEL WHO [record options]: record gt_offcpu 2 and check it (5 tests).
run() {
	label=$1 who=$2
	shift 2
	out=$T/nb/$label
	if [ "$who" = nobody ]; then
		as_nobody "$PROBE" record --off-cpu "$@" -q -o "$out.probe" -- "$O" 2 \
			>"$out.truth" 2>"$out.err"
	else
		"$PROBE" record --off-cpu "$@" -q -o "$out.probe" -- "$O" 2 >"$out.truth" 2>"$out.err"
	fi
	rc=$?
	set -- $(awk '$1 == "eintr" || $1 == "short" { printf "%s ", $2 }' "$out.truth")
	[ "$rc" = 0 ] && [ "$1" = 0 ] && [ "$2" = 0 ]
	ok $? "$label: exit $rc, the program saw EINTR ${1:-?} times and ${2:-?} short sleeps"
	"$PROBE" report --format folded -o "$out.folded" "$out.probe" 2>/dev/null
	shares "$out.truth" "$out.folded" >"$out.shares"
	for kind in compute sleep; do
		set -- $(grep "^$kind " "$out.shares")
		within "$2" "$3" 3
		ok $? "$label: $kind has $2 % of wall time, truth $3 % (within 3 points)"
	done
	awk '$1 == "cond" || $1 == "read" || $1 == "poll" { d = $2 - 25; if (d < -3 || d > 3) bad = 1 }
		END { exit bad }' "$out.shares"
	ok $? "$label: the cond, read and poll threads 25 % each (within 3 points):$(awk '$1 ~ /^(cond|read|poll)$/ { printf " %s %s", $1, $2 }' "$out.shares")"
	set -- $(grep '^total ' "$out.shares")
	awk -v g="$2" -v w="$3" 'BEGIN { exit !(g >= 0.95 * w && g <= 1.05 * w) }'
	ok $? "$label: $2 us of wall time accounted, 4 threads x $(awk "BEGIN { print $3 / 4 }") us (within 5 %)"
}

run timer root
run timer-nobody nobody
run perf root -e cpu-clock
run perf-nobody nobody -e cpu-clock

# Every output says which samples are waits.
P=$T/nb/timer.probe
"$PROBE" report "$P" >"$T/rep" 2>"$T/rep.err"
grep -q '^# event: cpu-clock (CPU-time timer), [0-9]* Hz of CPU time (999 Hz asked) + off-cpu: shares of wall time' "$T/rep" &&
	grep -q '^# off-cpu: the waits in libc' "$T/rep" && [ "$(grep -c '^# event:' "$T/rep")" = 1 ]
ok $? "report: one section, the header says running + off-cpu and what off-cpu cannot see"
"$PROBE" report --sort event "$P" >"$T/split" 2>&1
is "$(grep '^# event:' "$T/split" | cut -d' ' -f3 | tr '\n' ' ')" "cpu-clock off-cpu " \
	"report --sort event: cpu-clock, then off-cpu"
top=$(awk '/^# event: off-cpu/ { p = 1 } p && !/^#/ { print $4; exit }' "$T/split")
is "$top" "[off-cpu]" "--sort event: the off-cpu section's first row is [off-cpu]"
"$PROBE" report --format perf-script "$P" 2>/dev/null >"$T/script"
grep -A1 ' off-cpu: $' "$T/script" | grep -q '\[off-cpu\] (\[off-cpu\])'
ok $? "perf-script: off-cpu samples, their leaf frame [off-cpu]"
grep -q ' cpu-clock:u: $' "$T/script"
ok $? "perf-script: the CPU samples are cpu-clock's"

if command -v go >/dev/null 2>&1; then
	"$PROBE" report --format pprof -o "$T/p.pb.gz" "$P" 2>/dev/null
	go tool pprof -raw "$T/p.pb.gz" >"$T/raw" 2>&1
	grep -q '^PeriodType: wall nanoseconds' "$T/raw" &&
		grep -q 'samples/count wall/nanoseconds\[dflt\] cpu/nanoseconds off-cpu/nanoseconds' "$T/raw"
	ok $? "pprof: sample types samples, wall, cpu, off-cpu (go tool pprof -raw)"
	# Its Period is the one the timers achieved, as the header's rate (it
	# was the one asked: 1001001 ns for 999 Hz).
	hz=$("$PROBE" report "$P" 2>/dev/null | sed -n 's/^# event: .*, \([0-9]*\) Hz of CPU time (999 Hz asked).*/\1/p')
	per=$(sed -n 's/^Period: //p' "$T/raw")
	awk -v h="${hz:-0}" -v p="${per:-0}" 'BEGIN { d = 1e9 / (p > 0 ? p : 1) - h; exit !(h > 0 && d <= 0.5 && d >= -0.5) }'
	ok $? "pprof: Period $per ns, the header's $hz Hz achieved"
	go tool pprof -top -sample_index=off-cpu "$T/p.pb.gz" >"$T/off" 2>&1
	go tool pprof -top -sample_index=cpu "$T/p.pb.gz" >"$T/cpu" 2>&1
	grep -q ' pthread_cond_wait$' "$T/off" && grep -q ' compute_here$' "$T/cpu" &&
		! grep -q 'compute_here' "$T/off"
	ok $? "pprof: -sample_index=off-cpu has the waits, =cpu compute_here alone"
else
	skip "no go: pprof not checked"
	skip "no go: pprof not checked"
	skip "no go: pprof not checked"
fi
"$PROBE" report --format html -o "$T/f.html" "$P" 2>/dev/null
grep -q '\[off-cpu\]' "$T/f.html" && grep -q '"off-cpu"' "$T/f.html"
ok $? "flame graph: [off-cpu] frames, in a kind of their own (its legend: off-cpu)"

# speedscope's own importer (headless Chromium) reads it, waits and all.
NPM=$BUILD/npm
[ -d "$NPM/node_modules/speedscope" ] || NPM=$ROOT/build/npm
if command -v node >/dev/null 2>&1 && [ -d "$NPM/node_modules/speedscope" ] &&
   [ -d "$NPM/node_modules/puppeteer-core" ] && [ -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
	"$PROBE" report --format speedscope -o "$T/s.json" "$P" 2>/dev/null
	NM="$NPM/node_modules" ROOT="$ROOT" node -e '
		require(process.env.ROOT + "/tests/speedscope_import.js")
			.importAll(process.env.NM, [process.argv[1], process.argv[2]])
			.then(f => process.exit(f ? 1 : 0), e => { console.error(e); process.exit(1); });' \
		"$T/s.json" "$T/s.out" >"$T/s.log" 2>&1
	r=$?
	[ $r = 0 ] && grep -q '"name":"\[off-cpu\]"' "$T/s.out" && grep -q '"unit":"nanoseconds"' "$T/s.out"
	ok $? "speedscope imports it (exit $r): [off-cpu] frames, weights in nanoseconds"
else
	skip "no node, speedscope or Chromium (scripts/install-deps)"
fi

# top --off-cpu: the waits live (snapshots on stderr when not a terminal).
"$PROBE" top --off-cpu -d 0.5 -n 40 --exit -- "$O" 1.5 >/dev/null 2>"$T/top" </dev/null
grep -q '\[off-cpu\]' "$T/top" && grep -q ' wait_read_here ' "$T/top"
ok $? "top --off-cpu: [off-cpu] rows in its snapshots"
# Its header says the rate the CPU-time timers achieved, as the report's
# does (it said "999 Hz": the timers fire on the scheduler's tick).
hz=$(sed -n 's/^# probe top: .*, \([0-9]*\) Hz (999 asked);.*/\1/p' "$T/top" | tail -n 1)
[ -n "$hz" ] && [ "$hz" -gt 0 ] && [ "$hz" -lt 999 ]
ok $? "top --off-cpu: its header says the rate achieved: $(grep '^# probe top: ' "$T/top" | tail -n 1 | cut -d';' -f2)"

# The slow calls a program makes behave as without probe.
for m in "eintr 500" alarm; do
	bare=$("$GT/gt_signals" $m 2>&1)
	got=$("$PROBE" record --off-cpu -q -o "$T/s.probe" -- "$GT/gt_signals" $m 2>&1)
	is "$got" "$bare" "gt_signals $m under --off-cpu: $(echo "$got" | head -n1)"
done
# Every read an alarm interrupted fails with EINTR, none is restarted
# (gt_signals runs again a round whose alarm came before the read began).
got=$("$PROBE" record --off-cpu -q -o "$T/s.probe" -- "$GT/gt_signals" interrupt 300 2>&1)
echo "$got" | grep -Eq '^interrupt: 300 rounds, EINTR [0-9]+, restarted 0, other 0(, early [0-9]+)?$'
ok $? "gt_signals interrupt 300 under --off-cpu: $got"

# A real program: python3, its main thread reading a pipe another process
# feeds every 20 ms, a thread napping 5 ms at a time; python times both.
# The distribution's python3 (a pyenv shim is a shell script that execs it).
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
cat >"$T/nb/pipe.py" <<'EOF'
import os, threading, time
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    for i in range(50):
        time.sleep(0.02)
        os.write(w, b"x" * 100)
    os._exit(0)
os.close(w)
naps = [0.0]
def napper():
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 1.0:
        a = time.perf_counter(); time.sleep(0.005); naps[0] += time.perf_counter() - a
th = threading.Thread(target=napper); th.start()
inread = 0.0
while True:
    a = time.perf_counter(); b = os.read(r, 4096); inread += time.perf_counter() - a
    if not b: break
th.join(); os.waitpid(pid, 0)
print(os.getpid(), int(inread * 1e6), int(naps[0] * 1e6))
EOF
if [ -n "$PY" ] && [ -x "$PY" ]; then
	"$PROBE" record --off-cpu -q -o "$T/py.probe" -- "$PY" "$T/nb/pipe.py" >"$T/py.truth" 2>"$T/py.err"
	set -- $(cat "$T/py.truth")
	"$PROBE" report --pid "$1" --format folded "$T/py.probe" 2>/dev/null |
		awk '/;read;\[off-cpu\] [0-9]+$/ { r += $NF } /;clock_nanosleep;\[off-cpu\] [0-9]+$/ { s += $NF }
			END { print r + 0, s + 0 }' >"$T/py.got"
	read -r gr gs <"$T/py.got"
	awk -v g="$gr" -v w="$2" 'BEGIN { exit !(w > 0 && g >= 0.97 * w && g <= 1.03 * w) }'
	ok $? "python3: probe saw $gr us waiting in read, python timed $2 us (within 3 %)"
	awk -v g="$gs" -v w="$3" 'BEGIN { exit !(w > 0 && g >= 0.97 * w && g <= 1.03 * w) }'
	ok $? "python3: probe saw $gs us in time.sleep's clock_nanosleep, python timed $3 us (within 3 %)"
else
	skip "no python3"
	skip "no python3"
fi
done_testing
