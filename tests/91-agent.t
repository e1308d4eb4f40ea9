#!/bin/sh
# probe agent: a long-lived collector that programs started with
# LD_PRELOAD alone find by themselves (nobody's DIR/agent.sock, no
# PROBE_SOCKET), read by clients nobody here wrote.
#   Pull: go tool pprof -top http://.../debug/pprof/profile?seconds=3
#   while gt_leaf (5:3:2) runs shows its shares within 3 points; ?pid=
#   takes one process; errors are text/plain with their codes; the index
#   lists the processes.
#   Push: a stand-in for Pyroscope's ingest (tests/pyro_recv.py) gets
#   POST /ingest?name=SERVICE{labels}&from=&until=&format=pprof with a body
#   go tool pprof reads; with the backend answering 500, or not answering,
#   the programs and pulls carry on, SIGTERM still ends the agent promptly,
#   and what could not be sent is counted.
#   libcurl and libmicrohttpd: loaded by the agent, not linked.
. "$(dirname "$0")/lib.sh"
command -v go >/dev/null 2>&1 ||
	skip_all "no go command (Debian golang-go): go tool pprof is the client checked"
command -v curl >/dev/null 2>&1 || skip_all "no curl command (Debian curl)"
export HOME="$T" GOCACHE="$T/gocache" GOPATH="$T/gopath" PPROF_TMPDIR="$T" \
	PPROF_BINARY_PATH="$T/nobin" GOFLAGS= GOTOOLCHAIN=local
plan 52

# libcurl and libmicrohttpd are loaded by the agent when it needs them, not
# by every probe command (agent/netlib.h): the pushes and pulls below use them.
ldd "$PROBE" | grep -Eq 'libcurl|libmicrohttpd'
is "$?" 1 "probe does not link libcurl or libmicrohttpd (the agent loads them)"

pprof() { go tool pprof "$@" 2>>"$T/pprof.err"; }
# flat TOP NAME: flat % of the go tool pprof -top row named exactly NAME
flat() {
	awk -v name="$2" 'go { n = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, "", n)
		if (n == name) { sub("%", "", $2); print $2 + 0; exit } }
		/ flat%/ { go = 1 }' "$1"
}
# start_agent LOG ARGS...: as root; sets APID and URL (from its log)
start_agent() {
	log=$1; shift
	"$PROBE" agent --socket "$T/agent.sock" "$@" </dev/null >/dev/null 2>"$log" &
	APID=$!
	for i in $(seq 100); do grep -qs 'profiles at\|pushing to' "$log" && break; sleep 0.05; done
	URL=$(sed -n 's|.*profiles at \(http://[^/]*\)/.*|\1|p' "$log")
}
stop_agent() { kill -TERM "$APID"; wait "$APID"; }
# code URL: the HTTP status, the body into $T/body, headers into $T/hdr
code() { curl -s -o "$T/body" -D "$T/hdr" -w '%{http_code}' "$@"; }

# --- usage --------------------------------------------------------------------
"$PROBE" agent >/dev/null 2>"$T/err"
is "$?" 2 "no --http and no --push: a usage error"
grep -q '^probe: agent: nothing to serve: give --http' "$T/err"; ok $? "and it says what to give"
"$PROBE" agent --push http://127.0.0.1:1 --interval 0 >/dev/null 2>"$T/err"
is "$?" 2 "--interval 0 is refused"
"$PROBE" agent --push http://127.0.0.1:1 --label 'a b=c' >/dev/null 2>"$T/err"
is "$?" 2 "a label name with a space is refused"
is "$("$PROBE" agent --version)" "$("$PROBE" --version)" "--version"

# --- pull, as nobody, found without PROBE_SOCKET ---------------------------------
setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env -- \
	env PATH=/usr/bin:/bin HOME=/nonexistent "$PROBE" agent --http 127.0.0.1:0 \
	</dev/null >/dev/null 2>"$T/nb.log" &
NPID=$!
for i in $(seq 100); do grep -q 'profiles at' "$T/nb.log" && break; sleep 0.05; done
NURL=$(sed -n 's|.*profiles at \(http://[^/]*\)/.*|\1|p' "$T/nb.log")
grep -q "connect to /tmp/probe-65534/agent.sock" "$T/nb.log"
ok $? "nobody's agent listens at nobody's own socket"
setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env -- \
	env PATH=/usr/bin:/bin HOME=/nonexistent LD_PRELOAD="$LIBPROBE" PROBE_FREQ=2999 "$GT/gt_leaf" 2000 \
	>"$T/leaf.out" 2>"$T/leaf.err" &
LPID=$!
sleep 0.7
pprof -top -nodefraction=0 "$NURL/debug/pprof/profile?seconds=3" >"$T/pull.top"
ok $? "go tool pprof -top $NURL/debug/pprof/profile?seconds=3"
# Bounds from the sample count (lib.sh's share_ok, three checks: < 1/1000
# false failures; the window is inside the run: no start-up bias): at 2999
# Hz, about 9,000 samples in 3 s (1.9 points for 50 %; fewer, and wider,
# if the machine is busy).  Before: 999 Hz, 3,000 samples at best, 3
# points: 3.3 standard deviations, three checks 1 run in 400.
n=$(sed -n 's/.*Total samples = \([0-9.]*\)\(m*s\).*/\1 \2/p' "$T/pull.top" |
	awk '{ printf "%.0f", ($2 == "ms" ? $1 / 1000 : $1) * 2999 }')
for f in leaf_five:50 leaf_three:30 leaf_two:20; do
	g=$(flat "$T/pull.top" "${f%:*}")
	share_ok "$g" "${f#*:}" "${n:-0}" 3
	ok $? "pulled: ${f%:*} $g % of $n samples (want ${f#*:}, +-$(binom_tol "${n:-1}" "0.${f#*:}" 3))"
done
grep -q '^Duration: 3s' "$T/pull.top"; ok $? "the profile spans the 3 s asked for"
c=$(code "$NURL/")
is "$c" 200 "the index page: 200"
grep -q "<td>$LPID</td><td>gt_leaf</td>" "$T/body"; ok $? "it lists gt_leaf (pid $LPID)"
c=$(code "$NURL/debug/pprof/profile?seconds=1&pid=$LPID")
is "$c" 200 "?seconds=1&pid=$LPID: 200"
grep -qi '^content-type: application/octet-stream' "$T/hdr"; ok $? "as application/octet-stream"
gzip -t "$T/body" 2>/dev/null; ok $? "gzipped"
pprof -top "$NURL/debug/pprof/profile?seconds=1&comm=gt_leaf" >"$T/comm.top"
grep -q leaf_five "$T/comm.top"; ok $? "?comm=gt_leaf takes the processes of that name"
pprof -top "$NURL/debug/pprof/profile?seconds=1&comm=nosuch" >"$T/none.top"
grep -q 'Total samples = 0' "$T/none.top" && ! grep -q leaf_five "$T/none.top"
ok $? "?comm=nosuch takes none of them (an empty profile)"
c=$(code "$NURL/debug/pprof/profile?seconds=abc")
is "$c" 400 "seconds=abc: 400"
grep -qi '^content-type: text/plain' "$T/hdr" && grep -q 'seconds' "$T/body"
ok $? "as text/plain, saying what is wrong"
is "$(code "$NURL/debug/pprof/profile?seconds=1&pid=999999999")" 404 "an unknown pid: 404"
is "$(code "$NURL/nowhere")" 404 "an unknown path: 404"
is "$(code -X POST "$NURL/debug/pprof/profile")" 405 "POST: 405"
wait "$LPID"
is "$?" 0 "gt_leaf exits 0 under the agent"
[ ! -e probe.data ] && ! grep -q 'writing profile' "$T/leaf.err"
ok $? "and wrote no probe.data of its own"
as_nobody env LD_PRELOAD="$LIBPROBE" "$GT/gt_leaf" 1000 >/dev/null 2>"$T/quiet.err" &
QPID=$!
sleep 0.3
curl -s -o "$T/last.pb.gz" -w '%{http_code}' "$NURL/debug/pprof/profile?seconds=60" >"$T/last.code" &
CPID=$!
sleep 1.2
kill -TERM "$NPID"; wait "$NPID"
is "$?" 0 "SIGTERM: nobody's agent exits 0"
wait "$CPID"
is "$(cat "$T/last.code")" 200 "a pull still waiting gets its answer at SIGTERM"
pprof -top "$T/last.pb.gz" >"$T/last.top"
grep -q leaf_five "$T/last.top"; ok $? "with what was sampled until then"
wait "$QPID"
is "$?" 0 "a program whose agent stopped under it runs on and exits 0"
is "$(cat "$T/quiet.err")" "" "and says nothing of it on its stderr"
grep -q '^probe: agent stopped: .* served [1-9]' "$T/nb.log"; ok $? "saying what it did"

# --- root's agent for the host: another user's program finds it -------------------
if [ "$(id -u)" -ne 0 ]; then
	for i in 1 2 3; do skip "not root: the host's agent is root's"; done
elif "$PROBE" agent --http 127.0.0.1:0 </dev/null >/dev/null 2>"$T/host.log" & HPID=$!
	for i in $(seq 100); do grep -q 'profiles at\|already listens' "$T/host.log" && break; sleep 0.05; done
	grep -q 'already listens' "$T/host.log"; then
	wait "$HPID"
	for i in 1 2 3; do skip "an agent already serves this host ($(cat "$T/host.log"))"; done
else
	HURL=$(sed -n 's|.*profiles at \(http://[^/]*\)/.*|\1|p' "$T/host.log")
	grep -q 'connect to /run/probe/agent.sock (every user.s)' "$T/host.log"
	ok $? "root's agent listens at /run/probe/agent.sock for every user"
	setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env -- \
		env PATH=/usr/bin:/bin HOME=/nonexistent LD_PRELOAD="$LIBPROBE" "$GT/gt_leaf" 600 \
		>/dev/null 2>"$T/hleaf.err" &
	LPID=$!
	sleep 0.5
	code "$HURL/" >/dev/null
	grep -q "<td>$LPID</td><td>gt_leaf</td>" "$T/body"
	ok $? "nobody's gt_leaf (pid $LPID), started with LD_PRELOAD alone, streams to it"
	wait "$LPID"
	kill -TERM "$HPID"; wait "$HPID"
	is "$?" 0 "root's agent exits 0 on SIGTERM"
fi

# --- push -----------------------------------------------------------------------
recv() {        # recv DIR MODE: sets RPID and RPORT
	mkdir -p "$1"
	python3 "$ROOT/tests/pyro_recv.py" "$1" "$2" </dev/null >"$1.port" &
	RPID=$!
	for i in $(seq 100); do [ -s "$1.port" ] && break; sleep 0.05; done
	RPORT=$(head -1 "$1.port")
}
recv "$T/ok" ok
start_agent "$T/push.log" --push "http://127.0.0.1:$RPORT" --interval 1 --label env=test
PROBE_SOCKET="$T/agent.sock" LD_PRELOAD="$LIBPROBE" "$GT/gt_leaf" 600 >/dev/null 2>>"$T/err"
PROBE_SOCKET="$T/agent.sock" LD_PRELOAD="$LIBPROBE" "$GT/gt_leaf" 300 >/dev/null 2>>"$T/err" &
LPID=$!
wait "$LPID"
stop_agent
is "$?" 0 "push: the agent exits 0 on SIGTERM"
kill "$RPID"
n=$(ls "$T/ok" | grep -c '\.url$')
[ "$n" -ge 2 ]; ok $? "push: $n profiles received"
u=$(head -1 "$T/ok/1.url")
diag "the first request: POST $u"
echo "$u" | grep -Eq '^/ingest\?name=gt_leaf%7Bhost%3D[^&]*%2Cpid%3D[0-9]+%2Cuid%3D[0-9]+%2Ccomm%3Dgt_leaf%2Cexe%3D[^&]*%2Cenv%3Dtest%7D&from=[0-9]{10}&until=[0-9]{10}&format=pprof'
ok $? "the query carries name=SERVICE{host,pid,comm,exe,env}, from, until, format=pprof"
echo "$u" | awk -F'[=&]' '{ for (i = 1; i < NF; i++) { if ($i == "from") f = $(i + 1); if ($i == "until") u = $(i + 1) } exit !(u >= f && f > 0) }'
ok $? "until >= from"
sed -n 2p "$T/ok/1.url" | grep -q '^application/octet-stream'; ok $? "Content-Type: application/octet-stream"
bad=0 seen=0
for b in "$T"/ok/*.pb.gz; do
	pprof -top "$b" >"$T/b.top" || bad=$((bad + 1))
	grep -q 'leaf_five' "$T/b.top" && seen=$((seen + 1))
done
is "$bad" 0 "go tool pprof reads every body"
grep -q "pid%3D$LPID%2C" "$T"/ok/*.url; ok $? "the second process has its own profile (pid $LPID)"
[ "$seen" -ge 2 ]; ok $? "leaf_five in $seen of them"

# A process sampling allocations beside CPU time (libprobe-alloc.so with
# PROBE_ALLOC, not alone): two profiles a window, its CPU's and Go's heap
# profile of its allocations (go tool pprof reads alloc_space there).
recv "$T/heap" ok
start_agent "$T/heap.log" --push "http://127.0.0.1:$RPORT" --interval 1
# (16 GiB in blocks it frees at once: about 100 ms of CPU, 4,096
# allocation samples at 4 MiB.)
PROBE_SOCKET="$T/agent.sock" LD_PRELOAD="${LIBPROBE%/*}/libprobe-alloc.so" PROBE_ALLOC=4194304 \
	"$GT/gt_alloc" 16384 >/dev/null 2>>"$T/err"
stop_agent
kill "$RPID"
cpu=0 heap=0
for b in "$T"/heap/*.pb.gz; do
	[ -e "$b" ] || continue
	pprof -raw "$b" >"$T/b.raw" 2>/dev/null
	# (-raw: every location, where -top drops those of little self)
	if grep -q '^PeriodType: space bytes' "$T/b.raw"; then
		pprof -top -sample_index=alloc_space "$b" 2>/dev/null | grep -q ' site_a$' && heap=$((heap + 1))
	elif grep -q '^PeriodType: cpu nanoseconds' "$T/b.raw" && grep -q ' site_[abc] ' "$T/b.raw"; then
		cpu=$((cpu + 1))
	fi
done
[ "$cpu" -ge 1 ] && [ "$heap" -ge 1 ]
ok $? "allocations beside CPU: $cpu CPU profile(s) and $heap heap profile(s) naming site_a pushed"

# --- the backend failing, or hanging --------------------------------------------
recv "$T/fail" fail
start_agent "$T/fail.log" --http 127.0.0.1:0 --push "http://127.0.0.1:$RPORT" --interval 1
PROBE_SOCKET="$T/agent.sock" LD_PRELOAD="$LIBPROBE" "$GT/gt_leaf" 900 >"$T/o1" 2>>"$T/err"
is "$?" 0 "backend answering 500: the program runs and exits 0"
t0=$(date +%s)
stop_agent
is "$?" 0 "and the agent still ends on SIGTERM ($(( $(date +%s) - t0 )) s)"
kill "$RPID"
[ "$(grep -c 'push: .*HTTP 500; trying again' "$T/fail.log")" -eq 1 ]
ok $? "one line says pushing fails, not one per request"
grep -q 'agent stopped: .*pushed 0 of [1-9][0-9]* profiles.*not sent: [1-9]' "$T/fail.log"
ok $? "what could not be sent is counted: $(sed -n 's/.*agent stopped: //p' "$T/fail.log")"

recv "$T/slow" slow
start_agent "$T/slow.log" --http 127.0.0.1:0 --push "http://127.0.0.1:$RPORT" --interval 1
PROBE_SOCKET="$T/agent.sock" LD_PRELOAD="$LIBPROBE" "$GT/gt_leaf" 1000 >/dev/null 2>>"$T/err" &
LPID=$!
sleep 1.5
pprof -top "$URL/debug/pprof/profile?seconds=1" >"$T/slow.top"
grep -q leaf_five "$T/slow.top"
ok $? "a backend that does not answer: pulls are still served"
wait "$LPID"
t0=$(date +%s)
stop_agent
t=$(( $(date +%s) - t0 ))
[ "$t" -le 13 ]; ok $? "and SIGTERM ends the agent in $t s (it waits 10 s at most for the backend)"
diag "$(sed -n 's/.*agent stopped: /agent stopped: /p' "$T/slow.log")"
kill "$RPID"

# Without the library an option needs: one line saying which package, exit 1.
# (As root, in a mount namespace where the library is an empty file.)
lib_gone() {	# lib_gone SONAME ARGS...: the agent's stderr and status
	so=$1; shift
	path=$(ldconfig -p | awk -v s="$so" '$1 == s && /x86-64/ { print $NF; exit }')
	: >"$T/empty.so"
	unshare -m sh -c 'mount --bind "$1" "$2" && shift 2 && exec timeout 10 "$@"' \
		sh "$T/empty.so" "$path" "$PROBE" agent "$@" >"$T/gone.out" 2>&1
	echo "$? $(grep -c '^probe: ' "$T/gone.out") $(grep -c "needs $so" "$T/gone.out")"
}
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null 2>&1 &&
   unshare -m true 2>/dev/null; then
	is "$(lib_gone libcurl.so.4 --push http://127.0.0.1:9/)" "1 1 1" \
		"no libcurl: --push says once that it needs libcurl.so.4, exit 1"
	is "$(lib_gone libmicrohttpd.so.12 --http 127.0.0.1:0)" "1 1 1" \
		"no libmicrohttpd: --http says once that it needs libmicrohttpd.so.12, exit 1"
else
	skip "not root, or no mount namespace: the libraries cannot be hidden"
	skip "not root, or no mount namespace: the libraries cannot be hidden"
fi
[ "$_tap_fail" -eq 0 ] || { tail -5 "$T"/*.log "$T/err" "$T/pprof.err" | sed 's/^/#   /'; }
done_testing
