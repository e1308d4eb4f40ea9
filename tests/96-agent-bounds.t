#!/bin/sh
# Root's probe agent among users who do not trust each other (issue 22):
# what one user's processes make it hold is bounded, counted, and given
# back when they end; what they claim to be labels nothing.  The hostile
# processes are nobody's, built here from tests/hostile_client.c: they
# speak the wire protocol and write their arena themselves.
#   flood: 2 processes keep 32 rings each full of samples of random
#     256-frame stacks, every one distinct, while a pull of all runs (the
#     issue's 64 rings; before: 5.4 GB in 20 s, 24 GB writing the pprof,
#     killed): the agent's VmHWM stays under 320 MiB (what the bounds of
#     sink.h and processes.h let one user take, and the agent's own), the pull answers, its pprof and the index page count what
#     was dropped, root's gt_leaf pulled meanwhile keeps its 5:3:2, and
#     once the flood ends the RSS comes back down;
#   bloat: 10 processes with 200 KiB HELLOs, 2,048 true MAPs at 4,000-byte
#     paths and 4,096 THREAD names of 4,000 bytes each, while a pull runs
#     (the issue's 40 with 8,192 MAPs: 3.3 GB, kept after they ended):
#     under the bound, and back down after they end;
#   spoof: a HELLO claiming comm postgres and postgres's executable: a
#     ?comm=postgres pull takes none of its samples, ?comm=hostile_client
#     does; its pushed profile is named and labelled by the kernel's comm
#     and exe, the claims beside them as claimed_comm, claimed_exe;
#   report: a recording of random deep stacks, every one distinct (before:
#     11.5 GB for 100 MB), read with --max-memory 64: under 200 MiB, and
#     the report says how many samples it dropped.
# Each agent runs in a mount namespace of its own with its own
# /run/probe, so that it is root's host agent (every user's processes may
# connect) without touching the host's.
. "$(dirname "$0")/lib.sh"
# rss_ok STATUS NAME: a check of the agent's memory; under make sanitize
# the RSS is ASan's (shadow memory, freed blocks held in quarantine, no
# malloc_trim), not what the agent keeps: skipped, saying so.
rss_ok() {
	if [ -n "${PROBE_SANITIZE:-}" ]; then skip "$2: under ASan the RSS is the sanitizer's"
	else ok "$1" "$2"; fi
}
[ "$(id -u)" -eq 0 ] || skip_all "not root: the hostile processes run as nobody"
command -v curl >/dev/null 2>&1 || skip_all "no curl command (Debian curl)"
command -v setpriv >/dev/null 2>&1 || skip_all "no setpriv (util-linux)"
command -v nsenter >/dev/null 2>&1 || skip_all "no nsenter (util-linux)"
unshare -m true 2>/dev/null || skip_all "cannot make a mount namespace (unshare -m)"
export HOME="$T" GOCACHE="$T/gocache" GOPATH="$T/gopath" PPROF_TMPDIR="$T" \
	PPROF_BINARY_PATH="$T/nobin" GOFLAGS= GOTOOLCHAIN=local
HC=$T/hostile_client
cc -std=gnu11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -I"$ROOT/include" -o "$HC" \
	"$ROOT/tests/hostile_client.c" || skip_all "cannot build tests/hostile_client.c"
chmod 755 "$HC"
plan 34

HAVE_GO=0
command -v go >/dev/null 2>&1 && HAVE_GO=1
pprof() { go tool pprof "$@" 2>>"$T/pprof.err"; }
# flat TOP NAME: flat % of the go tool pprof -top row named exactly NAME
flat() {
	awk -v name="$2" 'go { n = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, "", n)
		if (n == name) { sub("%", "", $2); print $2 + 0; exit } }
		/ flat%/ { go = 1 }' "$1"
}
kib() { awk -v k="$2" '$1 == k":" { print $2 }' "/proc/$1/status" 2>/dev/null; }
mib() { echo $((${1:-0} / 1024)); }
# start_agent LOG ARGS...: root's host agent in a mount namespace of its
# own; sets APID and URL
start_agent() {
	log=$1; shift
	mkdir -p /run/probe
	unshare -m --propagation private sh -c 'mount -t tmpfs -o mode=0755 probe \
		/run/probe && exec "$0" agent "$@"' "$PROBE" "$@" </dev/null >/dev/null 2>"$log" &
	APID=$!
	for i in $(seq 100); do grep -qs 'profiles at\|pushing to' "$log" && break; sleep 0.05; done
	URL=$(sed -n 's|.*profiles at \(http://[^/]*\)/.*|\1|p' "$log")
}
stop_agent() { kill -TERM "$APID" 2>/dev/null; wait "$APID"; }
# in_ns CMD...: CMD where the agent's /run/probe/agent.sock is
in_ns() { exec nsenter -t "$APID" -m -- "$@"; }
# hostile MODE ARGS...: as nobody, at the agent (run it in a subshell: it execs)
hostile() {
	m=$1; shift
	in_ns setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$HC" "$m" \
		/run/probe/agent.sock "$@"
}
# watch: kill the agent if its RSS passes 1.5 GiB (the code before the
# bounds ate the machine); its VmHWM says the peak
watch_rss() {
	while kill -0 "$APID" 2>/dev/null; do
		r=$(kib "$APID" VmRSS)
		[ "${r:-0}" -gt 1572864 ] && { kill -KILL "$APID"; echo killed >"$T/watch.$APID"; }
		sleep 0.1
	done
}
# down BASE_KIB: within 6 s, the agent's RSS back under BASE + 32 MiB
down() {
	for i in $(seq 60); do
		r=$(kib "$APID" VmRSS)
		[ -n "$r" ] && [ "$r" -lt $(($1 + 32768)) ] && { echo "$r"; return 0; }
		sleep 0.1
	done
	echo "${r:-gone}"
	return 1
}
# KiB: one uid's part of the profiles being taken (SINK_UID_BYTES, 96 MiB:
# their cost counts what writing a pprof takes, so it bounds the one being
# written too) twice, what is kept of its processes (APROC_UID_BYTES, 64
# MiB), and the agent's own (its symbol cache, connections: 64 MiB)
BOUND=$(((96 * 2 + 64 + 64) * 1024))

# --- flood: distinct deep stacks --------------------------------------------------
start_agent "$T/a.log" --http 127.0.0.1:0
watch_rss & WPID=$!
# 3 kHz: 4 s of it are thousands of samples even on a busy machine (its
# shares within 4 points: several standard deviations)
(in_ns env LD_PRELOAD="$LIBPROBE" PROBE_SOCKET=/run/probe/agent.sock PROBE_FREQ=2999 \
	"$GT/gt_leaf" 100000 >/dev/null 2>"$T/leaf.err") &
LPID=$!
sleep 0.3
# Its symbols read once (the symbol cache stays): RSS from here on.
curl -s -o /dev/null "$URL/debug/pprof/profile?seconds=1&pid=$LPID"
base=$(kib "$APID" VmRSS)
(hostile flood 32 7 2>"$T/flood1.err") & F1=$!
(hostile flood 32 7 2>"$T/flood2.err") & F2=$!
sleep 1
t0=$(date +%s.%N)
curl -s -o "$T/all.pb.gz" -w '%{http_code}' "$URL/debug/pprof/profile?seconds=4" \
	>"$T/all.code" 2>/dev/null &
CPID=$!
curl -s -o "$T/leaf.pb.gz" "$URL/debug/pprof/profile?seconds=4&pid=$LPID"
wait "$CPID"
t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
is "$(cat "$T/all.code")" 200 "flood: the pull of all answers, in $t s (4 s asked)"
code=$(curl -s -o "$T/index.html" -w '%{http_code}' --max-time 5 "$URL/")
is "$code" 200 "flood: the index page answers meanwhile"
wait "$F1" "$F2"
diag "$(cat "$T/flood1.err" "$T/flood2.err" | tr '\n' ' ')"
hwm=$(kib "$APID" VmHWM)
[ -n "$hwm" ] && [ "$hwm" -lt "$BOUND" ] && [ ! -e "$T/watch.$APID" ]
rss_ok $? "flood: the agent's VmHWM $(mib "$hwm") MiB < $(mib $BOUND) MiB"
r=$(down "$base")
rss_ok $? "flood: once it ends, RSS back to $(mib "$r") MiB (it was $(mib "$base") MiB before)"
sed 's/<[^>]*>/ /g' "$T/index.html" >"$T/index.txt" 2>/dev/null
n=$(sed -n 's/.*Dropped at these bounds: \([0-9]*\) samples.*/\1/p' "$T/index.txt")
[ "${n:-0}" -gt 0 ]; ok $? "flood: the index page counts the samples dropped ($n)"
grep -Eq '^ *65534 +[0-9.]+ +[0-9.]+ +[1-9][0-9]* ' "$T/index.txt"
ok $? "flood: and whose: nobody's (uid 65534)"
# A pprof's strings (its comments, names, labels) are in its string table
# (each after a tag and a length byte, which may be printable)
strings_of() { gzip -dc "$1" 2>/dev/null | tr -c '[:print:]' '\n'; }
c=$(strings_of "$T/all.pb.gz" | grep -oE 'dropped: [1-9][0-9]* samples .* over the memory bound')
[ -n "$c" ]; ok $? "flood: the pprof says what it dropped (a comment): $c"
if [ "$HAVE_GO" -eq 1 ]; then
	pprof -top -nodefraction=0 "$T/leaf.pb.gz" >"$T/leaf.top"
	# The bound's margin: at n samples a share's standard deviation is
	# 50/sqrt(n) points at most, so +-4 is 3.5 of them from n = 1,920 on
	# (all three checks by chance under 1 in 1,000).
	# Measured here: 3.24 s of CPU at 2999 Hz, about 9,700 samples.
	diag "root's gt_leaf pulled during the flood: $(grep -o 'Total samples = [^ ]*' "$T/leaf.top") of CPU at 2999 Hz"
	for f in leaf_five:50 leaf_three:30 leaf_two:20; do
		g=$(flat "$T/leaf.top" "${f%:*}")
		within "$g" "${f#*:}" 4
		ok $? "flood: root's gt_leaf pulled meanwhile: ${f%:*} $g % (want ${f#*:} +-4)"
	done
	pprof -top -nodefraction=0 "$T/all.pb.gz" >"$T/all.top"
	a5=$(flat "$T/all.top" leaf_five) a2=$(flat "$T/all.top" leaf_two)
	awk -v a="$a5" -v b="$a2" 'BEGIN { exit !(b > 0 && a / b > 2.5 * 0.8 && a / b < 2.5 * 1.25) }'
	ok $? "flood: in the pull of all too, none of gt_leaf's dropped: leaf_five/leaf_two $a5/$a2 (want 2.5)"
else
	for i in 1 2 3 4; do skip "no go command: go tool pprof reads the pulls"; done
fi
kill "$LPID" 2>/dev/null; wait "$LPID" 2>/dev/null
stop_agent
is "$?" 0 "flood: the agent exits 0 on SIGTERM"
kill "$WPID" 2>/dev/null; wait "$WPID" 2>/dev/null

# --- bloat: per-process state ---------------------------------------------------------
start_agent "$T/b.log" --http 127.0.0.1:0
watch_rss & WPID=$!
base=$(kib "$APID" VmRSS)
mkdir -p "$T/maps" && chmod 777 "$T/maps"
curl -s -o "$T/b.pb.gz" -w '%{http_code}' "$URL/debug/pprof/profile?seconds=3" \
	>"$T/b.code" 2>/dev/null &
CPID=$!
pids=
for i in 1 2 3 4 5 6 7 8 9 10; do
	mkdir -p "$T/maps/$i" && chmod 777 "$T/maps/$i"
	(hostile bloat 200 2048 4000 4096 2 "$T/maps/$i" 2>>"$T/bloat.err") &
	pids="$pids $!"
done
wait $pids
is "$?" 0 "bloat: the 10 processes ran (each 2,048 MAPs, 4,096 names)"
wait "$CPID"
is "$(cat "$T/b.code")" 200 "bloat: the pull meanwhile answers"
hwm=$(kib "$APID" VmHWM)
[ -n "$hwm" ] && [ "$hwm" -lt "$BOUND" ] && [ ! -e "$T/watch.$APID" ]
rss_ok $? "bloat: VmHWM $(mib "$hwm") MiB < $(mib $BOUND) MiB"
r=$(down "$base")
rss_ok $? "bloat: after they ended, RSS back to $(mib "$r") MiB (it was $(mib "$base") MiB)"
curl -s --max-time 5 "$URL/" | sed 's/<[^>]*>/ /g' >"$T/index2.txt"
grep -Eq '^ *65534 +[0-9.]+ +[0-9.]+ +[0-9]+ +[1-9][0-9]* ' "$T/index2.txt"
ok $? "bloat: the index page counts nobody's frames not kept"
stop_agent
is "$?" 0 "bloat: the agent exits 0 on SIGTERM"
kill "$WPID" 2>/dev/null; wait "$WPID" 2>/dev/null

# --- spoof: names from the kernel ------------------------------------------------------
mkdir -p "$T/recv"
python3 "$ROOT/tests/pyro_recv.py" "$T/recv" ok </dev/null >"$T/recv.port" &
RPID=$!
for i in $(seq 100); do [ -s "$T/recv.port" ] && break; sleep 0.05; done
start_agent "$T/c.log" --http 127.0.0.1:0 --push "http://127.0.0.1:$(head -1 "$T/recv.port")" \
	--interval 1
(hostile spoof postgres /usr/lib/postgresql/15/bin/postgres 4 2>"$T/spoof.err") & SP=$!
sleep 0.5
curl -s -o "$T/pg.pb.gz" "$URL/debug/pprof/profile?seconds=2&comm=postgres" &
C1=$!
curl -s -o "$T/hc.pb.gz" "$URL/debug/pprof/profile?seconds=2&comm=hostile_client" &
C2=$!
wait "$C1" "$C2"
strings_of "$T/pg.pb.gz" >"$T/pg.str"
[ -s "$T/pg.str" ] && ! grep -q '5ca1ab1e\|hostile' "$T/pg.str"
ok $? "spoof: ?comm=postgres takes none of the process that claims it"
strings_of "$T/hc.pb.gz" >"$T/hc.str"
grep -q '\[unknown\]+0x5ca1ab1e000' "$T/hc.str"
ok $? "spoof: ?comm=hostile_client (the kernel's comm) takes it"
grep -q comm "$T/hc.str" && grep -q hostile_client "$T/hc.str" && ! grep -q postgres "$T/hc.str"
ok $? "spoof: its labels are the kernel's, nothing says postgres"
wait "$SP"
stop_agent
is "$?" 0 "spoof: the pushing agent exits 0 on SIGTERM"
kill "$RPID"; wait "$RPID" 2>/dev/null
u=$(grep -l '5ca1ab1e\|hostile' "$T"/recv/*.url 2>/dev/null | head -1)
u=$(head -1 "${u:-/dev/null}")
diag "pushed: $u"
echo "$u" | grep -q '^/ingest?name=hostile_client%7B'
ok $? "spoof: the pushed service is named after the kernel's exe"
echo "$u" | grep -q '%2Ccomm%3Dhostile_client%2Cexe%3D[^&]*hostile_client%2C'
ok $? "spoof: its comm and exe labels are the kernel's"
echo "$u" | grep -q '%2Cclaimed_comm%3Dpostgres%2Cclaimed_exe%3D%2Fusr%2Flib%2Fpostgresql%2F15%2Fbin%2Fpostgres'
ok $? "spoof: the claims are labels of their own"
! grep -q '%2Ccomm%3Dpostgres\|name=postgres' "$T"/recv/*.url
ok $? "spoof: no pushed profile says comm=postgres or is named postgres"

# --- report: a recording of distinct deep stacks ------------------------------------------
"$HC" record "$T/deep.probe" 4
is "$?" 0 "report: a 4 MiB recording of random 256-frame stacks"
TIME=/usr/bin/time
[ -x "$TIME" ] || TIME=
${TIME:+$TIME -f '%M %e' -o "$T/time"} "$PROBE" report --max-memory 64 "$T/deep.probe" \
	>"$T/deep.txt" 2>"$T/deep.err"
is "$?" 0 "report --max-memory 64: exit 0"
if [ -n "$TIME" ]; then
	set -- $(tail -1 "$T/time")
	case ${1:-x} in *[!0-9]*|'') set -- 999999 "?" ;; esac
	[ "$1" -lt 204800 ]; ok $? "report: its RSS $(mib "$1") MiB < 200 MiB, in $2 s"
else
	skip "no /usr/bin/time (Debian time): the report's RSS is not measured"
fi
grep -q '^# dropped: [1-9][0-9]* samples' "$T/deep.txt"
ok $? "report: its header says what it dropped: $(grep '^# dropped' "$T/deep.txt")"
grep -q '^probe: warning: .*dropped: [1-9][0-9]* samples .*--max-memory' "$T/deep.err"
ok $? "report: and stderr, once, with what to do"
"$PROBE" report --header-only "$T/deep.probe" >"$T/deep2.txt" 2>"$T/deep2.err"
! grep -q dropped "$T/deep2.err" && ! grep -q 'not kept' "$T/deep2.txt"
ok $? "report: under the default bound (1 GiB) the same recording is whole"

# --- a wake socket that is no wake ---------------------------------------------------
# The HELLO's second descriptor (the arena's wake socket) shut down for
# reading, ready for ever, or fed zero-length datagrams: the agent gives it
# up (its 10 ms poll reads the arena) rather than spin on it.  Before: a
# core's worth of CPU for as long as the process lives.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null; }
for kind in shut zero; do
	start_agent "$T/wake-$kind.log" --http 127.0.0.1:0
	(hostile wake 3 "$kind" >/dev/null 2>&1 &)
	sleep 0.5
	t0=$(ticks "$APID"); sleep 2; t1=$(ticks "$APID")
	stop_agent
	# 2 s of a core is 200 ticks; the agent idles at a few.
	[ $((${t1:-999} - ${t0:-0})) -lt 50 ]
	ok $? "wake socket ($kind): the agent used $((${t1:-999} - ${t0:-0})) ticks of CPU in 2 s (< 50)"
done
[ "$_tap_fail" -eq 0 ] || { tail -5 "$T"/*.log "$T/pprof.err" 2>/dev/null | sed 's/^/#   /'; }
done_testing
