#!/bin/sh
# probe agent --http among clients who do not trust each other (issue 22):
# root's agent shares its pull slots and connections fairly, and shows a
# local user only what that user could read anyway.
#   (3) a local client (the uid owning the other end of a loopback
#       connection, the kernel's sock_diag says) that is neither root nor
#       the agent's user sees its own processes only: nobody's ?pid= of a
#       root process gets the 404 of an unknown pid, its pulls of all and
#       of ?comm= hold nobody's process alone (go tool pprof -traces, pid
#       labels), its index page lists no root process; root sees both;
#       where the kernel does not say who a local client is (sock_diag
#       failing, as without inet_diag), no local client, root included, is
#       shown any process: 403 for a pull, an empty index page;
#   (9) connections of nobody closed before the agent accepts them (their
#       sockets orphaned: no inode) are not counted as root's;
#   (b) one uid's pulls past its 4 get 503, while another uid still gets
#       its profile;
#   (a) 16 pulls of an hour from four uids fill every slot; their curls
#       killed, the slots are free again at once (before: 503 for an hour);
#   (c) 70 slow clients (a byte every 20 s) do not stall GET / (before: it
#       waited behind them), they are closed after 10 s without a whole
#       request, while a pull waiting its 12 s is not; connections that
#       send nothing are closed too, and not taken for slow clients;
#   (8) answered pulls that their client reads slowly still count against
#       its 4 slots (a 5th gets 503), and are dropped 30 s after they were
#       answered, the slots free again.  A second agent, in a network
#       namespace whose TCP send buffers are at most 64 KiB, runs this
#       meanwhile: with the default 4 MiB, the kernel takes any body that a
#       test can make quickly, and libmicrohttpd holds nothing.
. "$(dirname "$0")/own_run_probe.sh"
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "not root: the test runs clients as several users"
[ -n "${PROBE_OWN_RUN:-}" ] || skip_all "cannot make a mount namespace (unshare -m)"
command -v curl >/dev/null 2>&1 || skip_all "no curl command (Debian curl)"
command -v perl >/dev/null 2>&1 || skip_all "no perl (the slow clients are perl)"
command -v setpriv >/dev/null 2>&1 || skip_all "no setpriv (util-linux)"
command -v nsenter >/dev/null 2>&1 || skip_all "no nsenter (util-linux)"
command -v ip >/dev/null 2>&1 || skip_all "no ip command (iproute2)"
unshare -n true 2>/dev/null || skip_all "cannot make a network namespace (unshare -n)"
export HOME="$T" GOCACHE="$T/gocache" GOPATH="$T/gopath" PPROF_TMPDIR="$T" \
	PPROF_BINARY_PATH="$T/nobin" GOFLAGS= GOTOOLCHAIN=local
HAVE_GO=0
command -v go >/dev/null 2>&1 && HAVE_GO=1
HC=$T/hostile_client
cc -std=gnu11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -I"$ROOT/include" -o "$HC" \
	"$ROOT/tests/hostile_client.c" || skip_all "cannot build tests/hostile_client.c"
chmod 755 "$HC"

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
# labels FILE: the pid labels of a pprof's samples (go tool pprof -traces), sorted
labels() {
	go tool pprof -traces "$1" 2>>"$T/pprof.err" | awk '$1 == "pid:" { print $2 }' |
		sort -un | tr '\n' ' '
}
# txt FILE: its start, printable characters only (an answer in a test's name)
txt() { head -c 300 "$1" | tr -cd '[:print:]'; }
# rows FILE: the pids the index page FILE lists as live processes
rows() { sed -n 's|.*<tr><td>\([0-9]*\)</td><td>.*30 s</a>.*|\1|p' "$1" | sort -n | tr '\n' ' '; }

# Root's agent for the host: every user's processes stream to it.
"$PROBE" agent --http 127.0.0.1:0 </dev/null >/dev/null 2>"$T/agent.log" &
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
plan 44

# --- (8) answers read slowly: started now, looked at on the way and at the end --------
# slowread PORT N PATH CHUNK PERIOD LIFE: N connections with a small receive
# buffer, each asking for PATH, CHUNK bytes read from each every PERIOD s
# for LIFE s (or until the server closed them all); then one line each:
# status, Content-Length, body bytes read, and when the server closed it
# (s after its first byte came) or "open".
cat >"$T/slowread.pl" <<'EOF'
use strict; use Socket; use Time::HiRes qw(time sleep);
my ($port, $n, $path, $chunk, $period, $life) = @ARGV;
$SIG{PIPE} = 'IGNORE';
my @c;
for (1 .. $n) {
	socket(my $s, PF_INET, SOCK_STREAM, 0) or die "socket: $!";
	setsockopt($s, SOL_SOCKET, SO_RCVBUF, pack('i', 2048)) or die "SO_RCVBUF: $!";
	connect($s, sockaddr_in($port, inet_aton('127.0.0.1'))) or die "connect: $!";
	syswrite $s, "GET $path HTTP/1.1\r\nHost: probe\r\n\r\n";
	push @c, { s => $s, head => '', got => 0 };
}
my $t0 = time;
while (time - $t0 < $life && grep { !defined $_->{end} } @c) {
	sleep $period;
	for my $c (@c) {
		next if defined $c->{end};
		my $buf = '';
		my $r = recv($c->{s}, $buf, $chunk, MSG_DONTWAIT);
		next if !defined $r && $!{EAGAIN};
		if (!defined $r || $buf eq '') { $c->{end} = time; next; }
		$c->{first} //= time;
		if (defined $c->{len}) { $c->{got} += length($buf); next; }
		$c->{head} .= $buf;
		my $i = index($c->{head}, "\r\n\r\n");
		next if $i < 0;
		($c->{code}) = $c->{head} =~ m{^HTTP/1\.[01] (\d+)};
		($c->{len}) = $c->{head} =~ m{\r\ncontent-length: *(\d+)}i;
		$c->{len} //= -1;
		$c->{got} = length($c->{head}) - $i - 4;
	}
}
for my $c (@c) {
	printf "%s %s %d %s\n", $c->{code} // '-', $c->{len} // '-', $c->{got},
		defined $c->{end} ? sprintf('%.1f', $c->{end} - ($c->{first} // $t0)) : 'open';
}
EOF
# The second agent, root's too, in namespaces of its own: TCP send buffers
# of 64 KiB at most there, and its own /run/probe.
unshare -m -n --propagation private sh -c 'ip link set lo up &&
	echo "4096 16384 65536" >/proc/sys/net/ipv4/tcp_wmem &&
	mount -t tmpfs -o mode=0755 probe /run/probe && exec "$0" agent --http 127.0.0.1:0' \
	"$PROBE" </dev/null >/dev/null 2>"$T/b.log" &
BPID=$!
for i in $(seq 100); do grep -qs 'profiles at' "$T/b.log" && break; sleep 0.05; done
BURL=$(sed -n 's|.*profiles at \(http://[^/]*\)/.*|\1|p' "$T/b.log")
# inb CMD...: CMD where the second agent is (its network and /run/probe)
inb() { nsenter -t "$BPID" -m -n -- "$@"; }
# pageb: the second agent's index page's text into $T/page
pageb() { inb curl -s --max-time 5 "$BURL/" | sed 's/<[^>]*>//g' >"$T/page"; }
# uid 4007's process floods it with distinct stacks for 3 s (so each pprof
# is hundreds of KiB); meanwhile uid 4007 asks for 4 profiles of 1 s and
# reads their answers at 4 KiB/s, for 42 s.
(inb setpriv --reuid=4007 --regid=4007 --clear-groups -- "$HC" flood \
	/run/probe/agent.sock 1 3 32 >/dev/null 2>&1 &)
# The pulls start once the flood is connected: a local client's pull takes
# its own processes as they are when it starts, and one started before
# the HELLO came was an empty profile, sent whole at once (seen under load).
for i in $(seq 100); do
	pageb
	grep -q 'Processes ([1-9][0-9]* live' "$T/page" && break
	sleep 0.05
done
inb setpriv --reuid=4007 --regid=4007 --clear-groups -- perl "$T/slowread.pl" \
	"${BURL##*:}" 4 '/debug/pprof/profile?seconds=1' 2048 0.5 42 >"$T/slow8.out" \
	2>"$T/slow8.err" &
SRPID=$!

# --- (9) connections closed before they are accepted ------------------------------
# 40 connections of nobody, each with a request, closed while the agent is
# stopped: accepted later, their sockets at nobody's end have no inode.
cat >"$T/orphans.pl" <<'EOF'
use strict; use IO::Socket::INET;
my ($port, $n) = @ARGV;
my @s;
for (1 .. $n) {
	my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port) or last;
	syswrite $s, "GET / HTTP/1.1\r\nHost: probe\r\n\r\n";
	push @s, $s;
}
close $_ for @s;
print scalar(@s), "\n";
EOF
kill -STOP "$APID"
n=$(as 65534 perl "$T/orphans.pl" "$PORT" 40)
kill -CONT "$APID"
for i in $(seq 50); do
	grep -q 'it had 32 open' "$T/agent.log" && break
	sleep 0.1
done
diag "(9) $n connections of nobody closed before the agent accepted them: $(grep 'it had 32 open' "$T/agent.log")"
! grep -q 'a connection of uid 0 closed' "$T/agent.log"
ok $? "(9) nobody's connections closed before they were accepted are not counted as root's"
grep -q 'a connection of \(uid 65534\|127\.0\.0\.1\) closed: it had 32 open' "$T/agent.log"
ok $? "but as nobody's (its uid where the kernel keeps it for an orphan), or as unknown"

# --- (8), on the way: answered, not yet read ---------------------------------------
for i in $(seq 50); do
	pageb
	grep -q '^Pulls: 0 being taken' "$T/page" && break
	sleep 0.1
done
diag "(8) $(grep '^Pulls' "$T/page")"
c=$(inb setpriv --reuid=4007 --regid=4007 --clear-groups -- curl -s -o "$T/b5.body" \
	-w '%{http_code}' "$BURL/debug/pprof/profile?seconds=1")
is "$c" 503 "(8) 4 answers that uid 4007 reads slowly: its 5th pull gets 503"
grep -q '^you (uid 4007) have 4 profiles being taken or not yet read whole' "$T/b5.body"
ok $? "saying so: $(txt "$T/b5.body")"
c=$(inb setpriv --reuid=4008 --regid=4008 --clear-groups -- curl -s -o /dev/null \
	-w '%{http_code}' "$BURL/debug/pprof/profile?seconds=1")
is "$c" 200 "another uid's pull meanwhile: 200"

# --- (3) a user sees its own processes ---------------------------------------------
# gt_leaf of root's and of nobody's, streaming to root's agent
PROBE_SOCKET=/run/probe/agent.sock LD_PRELOAD="$LIBPROBE" "$GT/gt_leaf" 100000 \
	>/dev/null 2>"$T/rleaf.err" &
RLEAF=$!
# (nobody's finds root's agent by itself, LD_PRELOAD alone: a private
# XDG_RUNTIME_DIR of its own, empty, so that no agent of nobody's is taken)
mkdir -m 0700 "$T/xdg" && chown 65534 "$T/xdg"
(exec setpriv --reuid=65534 --regid=65534 --clear-groups --reset-env -- env \
	XDG_RUNTIME_DIR="$T/xdg" LD_PRELOAD="$LIBPROBE" "$GT/gt_leaf" 100000 \
	>/dev/null 2>"$T/nleaf.err") &
NLEAF=$!
for i in $(seq 50); do
	curl -s -o "$T/root.html" "$URL/"
	[ "$(rows "$T/root.html")" = "$(echo "$RLEAF $NLEAF" | tr ' ' '\n' | sort -n |
		tr '\n' ' ')" ] && break
	sleep 0.1
done
diag "(3) root's gt_leaf: pid $RLEAF; nobody's: pid $NLEAF"
c=$(as 65534 curl -s -o "$T/r404" -w '%{http_code}' \
	"$URL/debug/pprof/profile?seconds=1&pid=$RLEAF")
is "$c" 404 "(3) nobody's ?pid= of root's process: 404"
c=$(as 65534 curl -s -o "$T/u404" -w '%{http_code}' \
	"$URL/debug/pprof/profile?seconds=1&pid=999999999")
is "$(sed "s/$RLEAF/P/" "$T/r404")" "$(sed 's/999999999/P/' "$T/u404")" \
	"the very answer an unknown pid gets: $(txt "$T/r404")"
c=$(as 65534 curl -s -o /dev/null -w '%{http_code}' \
	"$URL/debug/pprof/profile?seconds=1&pid=$NLEAF")
is "$c" 200 "nobody's ?pid= of its own process: 200"
as 65534 curl -s -o "$T/nobody.html" "$URL/"
is "$(rows "$T/nobody.html")" "$NLEAF " "nobody's index page lists its own process alone"
! grep -q "<td>$RLEAF</td>" "$T/nobody.html" && grep -q 'Your processes' "$T/nobody.html"
ok $? "not root's, anywhere on the page"
! grep -q 'Ended lately\|<th>uid</th>' "$T/nobody.html"
ok $? "nor the processes ended lately, nor the other users' figures"
is "$(rows "$T/root.html")" "$(echo "$RLEAF $NLEAF" | tr ' ' '\n' | sort -n | tr '\n' ' ')" \
	"root's index page lists both"
if [ "$HAVE_GO" -eq 1 ]; then
	as 65534 curl -s -o "$T/n.pb.gz" "$URL/debug/pprof/profile?seconds=2" &
	N1=$!
	as 65534 curl -s -o "$T/nc.pb.gz" "$URL/debug/pprof/profile?seconds=2&comm=gt_leaf" &
	N2=$!
	curl -s -o "$T/r.pb.gz" "$URL/debug/pprof/profile?seconds=2"
	wait $N1 $N2
	is "$(labels "$T/n.pb.gz")" "$NLEAF " "nobody's pull of all: nobody's process alone (pid labels)"
	is "$(labels "$T/nc.pb.gz")" "$NLEAF " "nobody's ?comm=gt_leaf: nobody's gt_leaf alone"
	is "$(labels "$T/r.pb.gz")" "$(echo "$RLEAF $NLEAF" | tr ' ' '\n' | sort -n | tr '\n' ' ')" \
		"root's pull of all: both"
else
	for i in 1 2 3; do skip "no go command (Debian golang-go): go tool pprof reads the pulls"; done
fi
kill "$RLEAF" "$NLEAF"
wait "$RLEAF" "$NLEAF" 2>/dev/null

# --- (3) where the kernel does not say who a local client is ------------------------
# A third agent whose socket(AF_NETLINK, ..., NETLINK_SOCK_DIAG) fails, as
# without inet_diag: it cannot tell root from nobody, and shows neither
# anything.  (An agent of its own socket: root's gt_leaf streams to it.)
cat >"$T/nodiag.c" <<'EOF'
#include <dlfcn.h>
#include <errno.h>
#include <linux/netlink.h>
#include <sys/socket.h>
int socket(int domain, int type, int protocol)
{
	int (*real)(int, int, int) = (int (*)(int, int, int))dlsym(RTLD_NEXT, "socket");
	if (domain == AF_NETLINK && protocol == NETLINK_SOCK_DIAG) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	return real(domain, type, protocol);
}
EOF
cc -std=gnu11 -D_GNU_SOURCE -shared -fPIC -o "$T/nodiag.so" "$T/nodiag.c" -ldl
# (Under make sanitize the agent carries ASan, which wants its runtime
# first among the preloaded: it is told this one is fine.)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
	LD_PRELOAD="$T/nodiag.so" "$PROBE" agent --socket "$T/c.sock" --http 127.0.0.1:0 \
	</dev/null >/dev/null 2>"$T/c.log" &
CPID=$!
for i in $(seq 100); do grep -qs 'profiles at' "$T/c.log" && break; sleep 0.05; done
CURL=$(sed -n 's|.*profiles at \(http://[^/]*\)/.*|\1|p' "$T/c.log")
PROBE_SOCKET="$T/c.sock" LD_PRELOAD="$LIBPROBE" "$GT/gt_leaf" 100000 >/dev/null 2>&1 &
CLEAF=$!
sleep 0.5
grep -q '^probe: warning: http: no sock_diag netlink socket (.*): local clients are shown no process (403 for a profile)' "$T/c.log"
ok $? "(3) no sock_diag: the agent says local clients are shown no process"
curl -s -o "$T/c.html" "$CURL/"
[ -z "$(rows "$T/c.html")" ] && grep -q 'did not say which user you are' "$T/c.html"
ok $? "root's index page lists no process, and says why"
c=$(curl -s -o "$T/c403" -w '%{http_code}' "$CURL/debug/pprof/profile?seconds=1&pid=$CLEAF")
is "$c" 403 "root's ?pid= of its own process: 403 ($(txt "$T/c403"))"
c=$(as 65534 curl -s -o /dev/null -w '%{http_code}' "$CURL/debug/pprof/profile?seconds=1")
is "$c" 403 "nobody's pull of all: 403"
kill "$CLEAF"
wait "$CLEAF" 2>/dev/null
kill -TERM "$CPID"; wait "$CPID"
grep -q 'agent stopped: 1 processes' "$T/c.log"
ok $? "while root's gt_leaf did stream to that agent"

# --- (b) one uid's share -------------------------------------------------------
pids=
for i in 1 2 3 4; do
	pull_bg 0 30 "$T/b.$i"
	pids="$pids $!"
done
taken 4
pull 0 1 "$T/b.5"
is "$(cat "$T/b.5")" 503 "(b) root's 5th pull at once: 503"
grep -q 'uid 0) have 4 profiles being taken or not yet read whole' "$T/b.5.body"
ok $? "saying it is this client's share: $(txt "$T/b.5.body")"
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
grep -q '16 profiles are being taken or sent already' "$T/a.17.body"
ok $? "every slot taken: $(txt "$T/a.17.body")"
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


# --- (8), at the end: the answers not read in time were dropped -------------------------
wait "$SRPID"
diag "(8) uid 4007's 4 slow readers (status, length, read, closed after): $(tr '\n' ';' <"$T/slow8.out")"
n=$(awk '$1 == 200 && $3 < $2 && $4 != "open" && $4 >= 27 && $4 <= 38' "$T/slow8.out" | wc -l)
is "$n" 4 "(8) the 4 answers, not read whole, were dropped 30 s after they came (27-38 s)"
pageb
diag "$(grep '^Pulls' "$T/page")"
grep -q '^Pulls: 0 being taken, 0 being sent .* 4 not read whole in time' "$T/page"
ok $? "the index page counts them, none is being sent any more"
grep -q '^probe: warning: http: a profile for uid 4007 dropped: not read whole within 30 s' \
	"$T/b.log"
ok $? "the agent's log says so"
c=$(inb setpriv --reuid=4007 --regid=4007 --clear-groups -- curl -s -o /dev/null \
	-w '%{http_code}' "$BURL/debug/pprof/profile?seconds=1")
is "$c" 200 "uid 4007's slots are free again: a pull gets 200"
kill -TERM "$BPID"; wait "$BPID"
is "$?" 0 "the second agent exits 0 on SIGTERM"

kill -TERM "$APID"; wait "$APID"
is "$?" 0 "the agent exits 0 on SIGTERM"
[ "$_tap_fail" -eq 0 ] || { sed 's/^/#   /' "$T/agent.log" | tail -20
	sed 's/^/#   B: /' "$T/b.log" | tail -10; cat "$T/nleaf.err" "$T/rleaf.err" | sed 's/^/#   /'; }
done_testing
