#!/bin/sh
# Root's agent among users who do not trust each other (issue 22): a
# process is believed only as far as the kernel confirms it.  nobody runs
# gt_liar, which speaks the wire protocol itself and claims what it likes;
# root's agent (/run/probe/agent.sock) serves it; pulls are read by
# go tool pprof.
#   - a MAP naming a root-only file: no names from it, no frame rules
#   - kernel addresses: "[kernel]" for nobody, named for root
#   - a pid that exec'd a setuid program, its child speaking for it: no
#     kernel names, its MAPs not checked against root's process
#   - a HELLO claiming a root process's pid: refused, its perf map unread
#   - a perf map bind-mounted over a root-only file (unshare -Urm): unread;
#     nobody's own perf map still names its code
#   - a program in its own pid and mount namespaces (a container) is named
#     from its own files; one of nobody's from nobody's own
#   - a sparse 20 GiB perf map: the agent stays responsive
#   - out of descriptors: no spin, SIGTERM still ends it, pulls answer
#     again; probe record the same with 80 children under ulimit -n 64
#   - MAPs that miss, in a process whose maps are long, cost the agent
#     little (a budget per user for re-reading /proc/PID/maps)
#   - one process cannot hold more than its share of connections
. "$(dirname "$0")/own_run_probe.sh"
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "not root: root's agent for the host is the subject"
[ -n "${PROBE_OWN_RUN:-}" ] || skip_all "cannot make a mount namespace (unshare -m)"
command -v go >/dev/null 2>&1 || skip_all "no go command (Debian golang-go): go tool pprof reads the pulls"
command -v curl >/dev/null 2>&1 || skip_all "no curl command (Debian curl)"
export HOME="$T" GOCACHE="$T/gocache" GOPATH="$T/gopath" PPROF_TMPDIR="$T" \
	PPROF_BINARY_PATH="$T/nobin" GOFLAGS= GOTOOLCHAIN=local
plan 37
SOCK=/run/probe/agent.sock
LIAR=$GT/gt_liar
# Run directly (not through a function) so that $! is the program's pid.
nobody="setpriv --reuid=nobody --regid=nogroup --clear-groups --"

# start_agent [PRLIMIT-ARGS]: root's host agent; sets APID and URL
start_agent() {
	${1:+prlimit "$@"} "$PROBE" agent --http 127.0.0.1:0 </dev/null >/dev/null 2>"$T/agent.log" &
	APID=$!
	for i in $(seq 100); do grep -qs 'profiles at' "$T/agent.log" && break; sleep 0.05; done
	URL=$(sed -n 's|.*profiles at \(http://[^/]*\)/.*|\1|p' "$T/agent.log")
}
stop_agent() { kill -TERM "$APID"; wait "$APID"; }
# pull SECONDS OUT: a profile of every process, as pprof -traces text
pull() {
	curl -s --max-time 30 -o "$T/pull.pb.gz" "$URL/debug/pprof/profile?seconds=$1"
	go tool pprof -traces "$T/pull.pb.gz" >"$2" 2>>"$T/pprof.err"
}
# okd STATUS NAME FILE...: ok, with the files as diagnostics when it fails
okd() {
	st=$1 name=$2; shift 2
	ok "$st" "$name"
	[ "$st" -eq 0 ] || sed 's/^/#   /' "$@"
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# --- a root-only file, and the kernel's names ---------------------------------
mkdir "$T/secret" && chmod 0700 "$T/secret"
printf 'int TOPSECRET_fn(int x) { return x * 3; }\nint main(int c, char **v) { return TOPSECRET_fn(c); }\n' >"$T/secret/s.c"
cc -g -O0 -o "$T/secret/bin" "$T/secret/s.c"
fn=$(nm "$T/secret/bin" | awk '$3 == "TOPSECRET_fn" { print $1 }')
text=$(readelf -lW "$T/secret/bin" | awk '$1 == "LOAD" && $7 == "R" && $8 == "E" { print $3, $6; exit }')
set -- $text
lo=$(printf '%x' $(( 0x100000000 + $1 ))); hi=$(printf '%x' $(( 0x100000000 + $1 + $2 )))
at=$(printf '%x' $(( 0x100000000 + 0x$fn + 4 )))
kaddr=$(awk '$3 == "netlink_unicast" && $1 !~ /^0+$/ { print $1; exit }' /proc/kallsyms)
start_agent
$nobody "$LIAR" $SOCK -m "$T/secret/bin,100000000,$lo,$hi" -a "${kaddr:-ffffffff81000000}" \
	-a "$at" -w "$at" -t 2.5 >"$T/liar.out" 2>&1 &
LIAR_PID=$!
"$LIAR" $SOCK -a "${kaddr:-ffffffff81000000}" -a 1000 -t 2.5 >/dev/null 2>&1 &
ROOT_PID=$!
sleep 0.3
pull 2 "$T/p1.txt"
wait $LIAR_PID $ROOT_PID
grep -q 'gt_liar' "$T/p1.txt"; ok $? "the pull holds nobody's lying process"
grep -q TOPSECRET "$T/p1.txt"; ok $((! $?)) "a MAP of a file nobody cannot open names nothing"
grep -q '\[unverified\]' "$T/p1.txt"; ok $? "its addresses are in [unverified]"
grep -q 'rules [0-9]* from-cfi 0$' "$T/liar.out"; ok $? "no frame rule learned from that file reaches the arena ($(tail -1 "$T/liar.out"))"
grep -q 'MAP of .*secret/bin: the process maps no file there' "$T/agent.log"
ok $? "the agent says once why the MAP was not believed"
if [ -z "$kaddr" ]; then
	skip "kallsyms shows root no addresses"; skip "kallsyms shows root no addresses"
else
	awk '/pid:/ { p = $2 } /netlink_unicast/ { print p }' "$T/p1.txt" >"$T/named"
	grep -qx "$LIAR_PID" "$T/named"; ok $((! $?)) "nobody's kernel address is not named (kptr_restrict/paranoid as the kernel rules)"
	grep -qx "$ROOT_PID" "$T/named"; ok $? "root's is (netlink_unicast)"
fi
awk -v p="$LIAR_PID" '/pid:/ { on = $2 == p } on && /\[kernel\]/ { f = 1 } END { exit !f }' "$T/p1.txt"
okd $? "nobody's kernel frame is [kernel]" "$T/p1.txt"

# --- a pid that runs a setuid program behind the socket its child keeps ------
# The capabilities /proc shows for the pid are root's then, and its maps
# are root's process's: neither may be believed for nobody's frames.
printf '#include <unistd.h>\nint main(void) { sleep(4); return 0; }\n' >"$T/sleeper.c"
cc -O0 -no-pie -o "$T/sleeper" "$T/sleeper.c" && chmod 4755 "$T/sleeper"
slo=$(readelf -lW "$T/sleeper" | awk '$1 == "LOAD" && $7 == "R" && $8 == "E" { print $3; exit }')
smain=$(nm "$T/sleeper" | awk '$3 == "main" { print $1 }')
if [ -u "$T/sleeper" ] && [ -n "$slo" ]; then
	$nobody "$LIAR" $SOCK -x "$T/sleeper" -m "$T/sleeper,0,${slo#0x},$(printf '%x' $((slo + 0x1000)))" \
		-a "${kaddr:-ffffffff81000000}" -a "$smain" -t 2 >/dev/null 2>&1 &
	SU=$!
	sleep 0.6
	pull 1 "$T/p6.txt"
	wait $SU
	awk -v p="$SU" '/pid:/ { on = $2 == p } on' "$T/p6.txt" >"$T/p6.mine"
	grep -q . "$T/p6.mine"; okd $? "the pid that exec'd a setuid program is in the pull" "$T/p6.txt"
	grep -q netlink_unicast "$T/p6.mine"; ok $((! $?)) "its kernel frames are not named though the pid has root's capabilities now"
	grep -q '\[unverified\]' "$T/p6.mine"; okd $? "its MAP is not checked against the setuid program's maps" "$T/p6.mine"
else
	skip "no setuid program here (nosuid)"; skip "no setuid program"; skip "no setuid program"
fi

# --- perf maps: a claimed pid, a bind mount, one's own ----------------------------
sleep 30 & VICTIM=$!
printf '3e0000000100 40 TOPSECRET_victim\n' >/tmp/perf-$VICTIM.map
chmod 0600 /tmp/perf-$VICTIM.map
mkdir "$T/vault" && chmod 0755 "$T/vault"
printf '3e0000000100 40 TOPSECRET_token\n' >"$T/vault/token.map" && chmod 0600 "$T/vault/token.map"
$nobody "$LIAR" $SOCK -p $VICTIM -j -t 2.5 >/dev/null 2>&1 &
L1=$!
if $nobody unshare -Urm true 2>/dev/null; then
	$nobody unshare -Urm sh -c 'touch /tmp/perf-$$.map && mount --bind "$1"/vault/token.map /tmp/perf-$$.map &&
		exec "$2" "$3" -j -t 2.5' sh "$T" "$LIAR" $SOCK >"$T/l2.out" 2>&1 &
	L2=$!
else
	L2=
fi
$nobody sh -c 'printf "3e0000000100 40 liar_own_jit\n" >/tmp/perf-$$.map && exec "$1" "$2" -j -t 2.5' \
	sh "$LIAR" $SOCK >/dev/null 2>&1 &
L3=$!
sleep 0.3
pull 2 "$T/p2.txt"
wait $L1 $L2 $L3
kill $VICTIM 2>/dev/null
rm -f /tmp/perf-$VICTIM.map /tmp/perf-$L2.map /tmp/perf-$L3.map
grep -q TOPSECRET_victim "$T/p2.txt"; ok $((! $?)) "a HELLO claiming root's pid $VICTIM does not get its perf map read"
grep -q "process $L1 (uid 65534) calls itself process $VICTIM, which it is not" "$T/agent.log"
okd $? "that connection is refused, and said" "$T/agent.log"
if [ -n "$L2" ]; then
	grep -q TOPSECRET_token "$T/p2.txt"; ok $((! $?)) "a root-only file bind-mounted over nobody's perf map is not read"
	grep -q "pid:  *$L2\$" "$T/p2.txt"
	okd $? "that process is profiled still" "$T/p2.txt" "$T/l2.out"
else
	skip "no user namespaces for nobody (unshare -Urm)"; skip "no user namespaces for nobody"
fi
grep -q liar_own_jit "$T/p2.txt"; ok $? "nobody's own perf map names nobody's JIT code"

# --- a real program of nobody's is named as before -----------------------------
$nobody env LD_PRELOAD="$LIBPROBE" "$GT/gt_leaf" 1500 >/dev/null 2>&1 &
L=$!
sleep 0.3
pull 1 "$T/p3.txt"
wait $L
grep -q 'leaf_five' "$T/p3.txt"; ok $? "nobody's gt_leaf is named from its own files (MAPs verified)"

# --- a container: its own pid and mount namespaces, a file of its own ---------
# Its program lies on a tmpfs mounted in its namespace alone: at that path
# the agent's namespace has nothing.
mkdir "$T/ctr" && chmod 0755 "$T/ctr"
unshare -pfm --mount-proc sh -c 'mount -t tmpfs -o mode=0755 none "$1" &&
	cp "$2" "$1/gt_leaf_in_ns" && exec env LD_PRELOAD="$3" \
	setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$1/gt_leaf_in_ns" 1500' \
	sh "$T/ctr" "$GT/gt_leaf" "$LIBPROBE" >/dev/null 2>&1 &
L=$!
sleep 0.5
pull 1 "$T/p5.txt"
wait $L
grep -q 'leaf_five' "$T/p5.txt"
okd $? "a program in its own pid and mount namespaces is named from its own files" "$T/p5.txt" "$T/agent.log"

# --- a sparse 20 GiB perf map -------------------------------------------------------
$nobody sh -c 'truncate -s 20G /tmp/perf-$$.map && exec "$1" "$2" -j -t 4' sh "$LIAR" $SOCK >/dev/null 2>&1 &
L=$!
sleep 0.5
t0=$(cpu_ticks "$APID")
worst=0
for i in 1 2 3; do
	t=$(curl -s -o /dev/null -w '%{time_total}' --max-time 20 "$URL/")
	worst=$(awk -v a="$worst" -v b="$t" 'BEGIN { print (b > a ? b : a) }')
	sleep 0.5
done
t1=$(cpu_ticks "$APID")
wait $L
rm -f /tmp/perf-$L.map
awk -v w="$worst" 'BEGIN { exit !(w < 2) }'; ok $? "GET / answers within 2 s while a 20 GiB sparse perf map is read (worst ${worst} s)"
# 1.5 s of wall time: the map read in 256 KiB a poll costs well under half a CPU.
[ $((t1 - t0)) -lt 75 ]; ok $? "and the agent spent $((t1 - t0)) ticks of CPU in 1.5 s (< 75)"

# --- MAPs that miss, in a process whose maps are long -----------------------------
# Each would make the agent read 30,000 lines of /proc/PID/maps again: at
# ~5 ms a read, 4,000 of them would be 20 s of CPU; the uid's budget is
# 50 ms a second.
t0=$(cpu_ticks "$APID")
$nobody "$LIAR" $SOCK -m "$T/nothing,0,1000,2000" -M 4000 -V 30000 -t 0.5 >/dev/null 2>&1
t1=$(cpu_ticks "$APID")
[ $((t1 - t0)) -lt 100 ]; ok $? "4,000 MAPs that miss in 30,000 mappings cost the agent $((t1 - t0)) ticks of CPU (< 100)"

# --- one process's share of connections -----------------------------------------------
$nobody "$LIAR" $SOCK -c 40 -t 1 >"$T/many.out" 2>&1
grep -q "over the connections of one process" "$T/agent.log"; ok $? "one process's 41 connections: those over its share are refused, and said"
stop_agent
grep -q 'agent: refused 1 HELLOs naming another pid and [1-9][0-9]* connections over a share; [1-9][0-9]* MAPs not confirmed by the kernel ([1-9][0-9]* for want of time to check); [1-9][0-9]* sample batches with kernel frames unnamed' "$T/agent.log"
okd $? "its exit summary counts what it did not believe" "$T/agent.log"

# --- out of descriptors ----------------------------------------------------------------
start_agent --nofile=64:64
"$LIAR" $SOCK -c 100 -t 2 >/dev/null 2>&1
t0=$(cpu_ticks "$APID")
sleep 1
t1=$(cpu_ticks "$APID")
[ $((t1 - t0)) -lt 20 ]; ok $? "after 100 connections over its 64 descriptors the agent idles ($((t1 - t0)) ticks in 1 s)"
$nobody env LD_PRELOAD="$LIBPROBE" "$GT/gt_leaf" 1500 >/dev/null 2>&1 &
L=$!
sleep 0.3
pull 1 "$T/p4.txt"
wait $L
grep -q leaf_five "$T/p4.txt"; ok $? "then a program is profiled and pulled"
lines=$(grep -c 'too many open files' "$T/agent.log")
[ "$lines" -eq 1 ]; ok $? "it said so once ($lines lines)"
grep -q 'new processes wait to be profiled until others end' "$T/agent.log"; ok $? "in words that say what happens"
kill -TERM "$APID"
for i in $(seq 40); do kill -0 "$APID" 2>/dev/null || break; sleep 0.05; done
kill -0 "$APID" 2>/dev/null; ok $((! $?)) "SIGTERM ends it within 2 s"
kill -KILL "$APID" 2>/dev/null; wait "$APID" 2>/dev/null

# probe record: 80 children under ulimit -n 64
out=$(timeout -s KILL 60 sh -c "ulimit -n 64; \"$PROBE\" record -o \"$T/r.probe\" -- sh -c 'for i in \$(seq 80); do sleep 1 & done; wait'" 2>&1)
is "$?" 0 "probe record with 80 children under ulimit -n 64 ends"
echo "$out" | grep -q ' from 82 processes'; ok $? "every process is recorded ($(echo "$out" | grep -o 'from [0-9]* processes'))"
n=$(echo "$out" | grep -c 'too many open files')
[ "$n" -le 1 ]; ok $? "and said so once at most ($n)"
# As nobody, processes that send their arena while the recorder waits for
# descriptors meet the kernel's bound on descriptors in flight (the
# sender's RLIMIT_NOFILE: ETOOMANYREFS): they are not profiled, and say so.
out=$(timeout -s KILL 60 $nobody sh -c "ulimit -n 64; \"$PROBE\" record -o \"$T/rn.probe\" -- sh -c 'for i in \$(seq 80); do sleep 1 & done; wait'" 2>&1)
is "$?" 0 "as nobody too"
rec=$(echo "$out" | sed -n 's/.* from \([0-9]*\) processes.*/\1/p')
said=$(echo "$out" | grep -c 'cannot reach the collector')
[ "${rec:-0}" -gt 0 ] && [ $(( ${rec:-0} + said )) -ge 82 ]
ok $? "each of its 82 processes is recorded ($rec) or says it is not ($said)"
n=$(echo "$out" | grep -c 'too many open files')
[ "$n" -le 1 ]; ok $? "and the recorder said so once at most ($n)"

# --- as nobody: nobody's own collector, the same lies --------------------------
printf '#!/bin/sh\nexec "%s" "$PROBE_SOCKET" -m "%s,100000000,%s,%s" -a %s -t 1\n' \
	"$LIAR" "$T/secret/bin" "$lo" "$hi" "$at" >"$T/liar.sh"
chmod 0755 "$T/liar.sh"
$nobody "$PROBE" record -q -o "$T/n.probe" -- "$T/liar.sh" >"$T/n.out" 2>&1
$nobody "$PROBE" report "$T/n.probe" >"$T/n.txt" 2>&1
grep -q '^# event: .* [1-9][0-9]* samples, 1 process' "$T/n.txt"
okd $? "nobody's probe record takes nobody's liar" "$T/n.out" "$T/n.txt"
grep -q TOPSECRET "$T/n.txt"; ok $((! $?)) "nobody's report of it names nothing of the root-only file"
$nobody "$LIAR" "/run/probe/agent.sock" -t 0 >/dev/null 2>&1
ok $((! $?)) "no agent is left listening"
done_testing
