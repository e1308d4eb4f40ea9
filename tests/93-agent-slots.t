#!/bin/sh
# probe agent --http among clients who do not trust each other (issue 22):
# the pull slots and connections of root's agent are shared fairly.
#   (b) one uid's pulls past its 4 get 503, while another uid still gets
#       its profile (the client is the uid owning the other end of a
#       loopback connection);
#   (a) 16 pulls of an hour from four uids fill every slot; their curls
#       killed, the slots are free again at once (before: 503 for an hour);
#   (c) 70 slow clients (a byte every 20 s) do not stall GET / (before: it
#       waited behind them), they are closed after 10 s without a whole
#       request, while a pull waiting its 12 s is not; connections that
#       send nothing are closed too, and not taken for slow clients.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "not root: the test runs clients as several users"
command -v curl >/dev/null 2>&1 || skip_all "no curl command (Debian curl)"
command -v perl >/dev/null 2>&1 || skip_all "no perl (the slow clients are perl)"
command -v setpriv >/dev/null 2>&1 || skip_all "no setpriv (util-linux)"

# as UID CMD...: run a command as that uid (no passwd entry needed)
as() {
	u=$1; shift
	setpriv --reuid="$u" --regid="$u" --clear-groups --reset-env -- \
		env PATH=/usr/bin:/bin HOME=/nonexistent "$@"
}
# pull UID SECONDS OUT: a pull as UID, its status into OUT (the body: OUT.body)
pull() {
	as "$1" curl -s -o "$3.body" -w '%{http_code}' \
		"$URL/debug/pprof/profile?seconds=$2" >"$3" 2>/dev/null
}
# pull_bg UID SECONDS OUT: the same in the background, $! being curl's pid
pull_bg() {
	(exec setpriv --reuid="$1" --regid="$1" --clear-groups --reset-env -- \
		env PATH=/usr/bin:/bin HOME=/nonexistent curl -s -o "$3.body" \
		-w '%{http_code}' "$URL/debug/pprof/profile?seconds=$2" >"$3" 2>/dev/null) &
}
# page: the index page's text (tags removed) into $T/page
page() { curl -s --max-time 5 "$URL/" | sed 's/<[^>]*>//g' >"$T/page"; }
# taken N: wait (5 s at most) until the index page says N pulls are being taken
taken() {
	for i in $(seq 50); do
		page
		grep -q "^Pulls: $1 being taken" "$T/page" && return
		sleep 0.1
	done
}

"$PROBE" agent --socket "$T/agent.sock" --http 127.0.0.1:0 </dev/null >/dev/null \
	2>"$T/agent.log" &
APID=$!
for i in $(seq 100); do grep -qs 'profiles at' "$T/agent.log" && break; sleep 0.05; done
URL=$(sed -n 's|.*profiles at \(http://[^/]*\)/.*|\1|p' "$T/agent.log")
PORT=${URL##*:}
diag "agent at $URL"
curl -s -o /dev/null "$URL/"
if grep -q 'did not say which user owns' "$T/agent.log"; then
	kill -TERM "$APID"; wait "$APID"
	skip_all "the kernel does not say who owns a loopback socket (no inet_diag)"
fi
plan 19

# --- (b) one uid's share -------------------------------------------------------
pids=
for i in 1 2 3 4; do
	pull_bg 0 30 "$T/b.$i"
	pids="$pids $!"
done
taken 4
pull 0 1 "$T/b.5"
is "$(cat "$T/b.5")" 503 "(b) root's 5th pull at once: 503"
grep -q 'uid 0) are taking 4 profiles already' "$T/b.5.body"
ok $? "saying it is this client's share: $(cat "$T/b.5.body")"
pull 65534 1 "$T/b.nobody"
is "$(cat "$T/b.nobody")" 200 "(b) nobody's pull meanwhile: 200"
kill -KILL $pids 2>/dev/null
wait $pids 2>/dev/null

# --- (a) killed pulls free their slots -------------------------------------------
pids=
for u in 0 65534 4001 4002; do
	for i in 1 2 3 4; do
		pull_bg "$u" 3600 "$T/a.$u.$i"
		pids="$pids $!"
	done
done
taken 16
pull 4003 1 "$T/a.17"
is "$(cat "$T/a.17")" 503 "(a) 16 pulls of an hour from 4 uids: a 17th gets 503"
grep -q '16 profiles are being taken already' "$T/a.17.body"
ok $? "every slot taken: $(cat "$T/a.17.body")"
kill -KILL $pids 2>/dev/null
wait $pids 2>/dev/null
t0=$(date +%s.%N)
c=000
for i in $(seq 10); do
	pull 4003 1 "$T/a.new"
	c=$(cat "$T/a.new")
	[ "$c" = 200 ] && break
	sleep 0.3
done
t=$(echo "$(date +%s.%N) $t0" | awk '{ printf "%.2f", $1 - $2 }')
is "$c" 200 "(a) the curls killed, a new pull (seconds=1) gets 200 ($t s after the kill)"
awk -v t="$t" 'BEGIN { exit !(t < 3) }'
ok $? "within 3 s of the kill: $t s (1 s of it the pull's own)"
page
grep -q '[0-9]* answered, 20 dropped as their client went away' "$T/page"
ok $? "the index page counts the pulls dropped: $(grep -o '[0-9]* answered, [0-9]* dropped' "$T/page")"

# --- (c) slow clients ----------------------------------------------------------------
# slow PORT N PERIOD LIFE [idle]: N connections sending "GET / HTTP/1.1\r\n"
# one byte every PERIOD s (idle: nothing); after LIFE s, prints how many
# the server closed.
cat >"$T/slow.pl" <<'EOF'
use strict; use IO::Socket::INET; use Socket; use Time::HiRes qw(time sleep);
my ($port, $n, $period, $life, $idle) = @ARGV;
$SIG{PIPE} = 'IGNORE';
my $t0 = time; my @s;
for (1 .. $n) {
	my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port) or last;
	syswrite $s, 'G' unless $idle; push @s, $s;
}
print scalar(@s), " open\n"; STDOUT->flush;
my $req = "GET / HTTP/1.1\r\n"; my $k = 1;
while (time - $t0 < $life) {
	my $left = $life - (time - $t0);
	sleep($left < $period ? $left : $period);
	last if time - $t0 >= $life;
	my $b = substr($req, $k++ % length($req), 1);
	syswrite $_, $b for $idle ? () : @s;
}
my $closed = 0;
for my $s (@s) {
	my $buf; my $r = recv($s, $buf, 4096, MSG_DONTWAIT);
	$closed++ if defined $r && length($buf) == 0;
	$closed++ if !defined $r && !$!{EAGAIN};
}
print "$closed closed\n";
EOF
pull_bg 4005 12 "$T/c.pull"
CPULL=$!
as 65534 perl "$T/slow.pl" "$PORT" 70 20 12.5 >"$T/slow.out" 2>"$T/slow.err" &
SPID=$!
as 4006 perl "$T/slow.pl" "$PORT" 3 20 12.5 idle >"$T/idle.out" 2>&1 &
IPID=$!
for i in $(seq 100); do grep -qs open "$T/slow.out" && break; sleep 0.05; done
sleep 0.5
r=$(curl -s -o "$T/c.body" --max-time 5 -w '%{http_code} %{time_total}' "$URL/")
diag "slow clients: $(head -1 "$T/slow.out"); root's GET /: $r"
is "${r% *}" 200 "(c) 70 slow clients of nobody: root's GET / gets 200"
awk -v t="${r#* }" 'BEGIN { exit !(t < 2) }'
ok $? "within 2 s (${r#* } s)"
r=$(as 65534 curl -s -o /dev/null --max-time 5 -w '%{http_code} %{time_total}' "$URL/")
is "${r% *}" 200 "nobody's own GET / meanwhile: 200, in ${r#* } s"
awk -v t="${r#* }" 'BEGIN { exit !(t < 2) }'
ok $? "also within 2 s (${r#* } s)"
wait $SPID
closed=$(sed -n 's/ closed$//p' "$T/slow.out")
is "$closed" 70 "12.5 s on, the server had closed all 70 slow connections"
wait $IPID
is "$(sed -n 's/ closed$//p' "$T/idle.out")" 3 "and the 3 idle ones of another uid"
wait $CPULL
is "$(cat "$T/c.pull")" 200 "a pull waiting its 12 s meanwhile is not cut: 200"
page
diag "$(grep '^Pulls\|^Connections' "$T/page")"
grep -q 'closed: [1-9][0-9]* beyond a client.s 32, 0 beyond 256 in all, [1-9][0-9]* with part of a request and no whole one in 10 s, 3 idle for 10 s' "$T/page"
ok $? "the index page counts them: beyond a client's share, too slow, idle"
grep -q '^probe: warning: http: a connection of uid 65534 closed: part of a request and no whole one within 10 s' "$T/agent.log"
ok $? "the agent's log says the slow ones were closed"
n=$(grep -c 'no whole one within' "$T/agent.log")
is "$n" 1 "once (a minute), not once per connection"

kill -TERM "$APID"; wait "$APID"
is "$?" 0 "the agent exits 0 on SIGTERM"
[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/agent.log" | tail -20
done_testing
