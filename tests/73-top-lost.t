#!/bin/sh
# probe top's header on LOST frames: lost by reason, a "falling behind" line
# and a "throttled" line for the interval they came in; a connection from a
# process that sends garbage is dropped with one message, the rest goes on.
. "$(dirname "$0")/lib.sh"
command -v perl >/dev/null 2>&1 || skip_all "perl is not installed"
plan 5

export XDG_RUNTIME_DIR=$T/xdg
mkdir -m 0700 "$XDG_RUNTIME_DIR"
"$PROBE" top -d 0.3 >"$T/out" 2>"$T/err" &
top=$!
trap 'kill $top 2>/dev/null; rm -rf "$T"' EXIT
sock=$XDG_RUNTIME_DIR/probe/top.sock
i=0
while [ $i -lt 100 ] && ! [ -S "$sock" ]; do sleep 0.1; i=$((i + 1)); done

# A fake libprobe: HELLO, then LOST frames (QUEUE 500, THROTTLE 7), then it
# stays connected a while; with "bad", a frame of an unknown size instead.
cat >"$T/fake.pl" <<'PL'
use strict; use IO::Socket::UNIX;
my ($path, $mode) = @ARGV;
my $s = IO::Socket::UNIX->new(Type => SOCK_SEQPACKET, Peer => $path) or die "connect: $!";
sub frame { my ($type, $body) = @_; pack("VvvV", 12 + length($body), $type, 0, $$) . $body }
sub str { pack("v", length($_[0])) . $_[0] }
my $hello = pack("VVVQ<CQ<Q<", 1, getppid(), 1, 0, 1, 999, 1) .
	str("cpu-clock") . str("/usr/bin/fakeprog") . str("fakeprog") . pack("v", 0);
# One record per send: SOCK_SEQPACKET, as libprobe.
$s->send(frame(1, $hello));
if (($mode // "") eq "bad") { $s->send(pack("VvvV", 5, 4, 0, $$)); sleep 1; exit 0 }
$s->send(frame(5, pack("VVQ<", 0, 3, 500)));
$s->send(frame(5, pack("VVQ<", 0, 2, 7)));
sleep 2;
PL
perl "$T/fake.pl" "$sock"
ok $? "the fake program sent its frames"
i=0
while [ $i -lt 50 ] && ! grep -q '^# threads: .*lost: 507' "$T/out"; do sleep 0.1; i=$((i + 1)); done
grep -q '^# threads: .*lost: 507 (7 kernel throttling, 500 collector behind (thread.s ring full))$' "$T/out"
ok $? "header: lost by reason"
grep -q '^# !! falling behind: 500 samples lost in the last interval' "$T/out"
ok $? "a falling-behind line"
grep -q '^# !! the kernel throttled the event: 7 samples lost' "$T/out"
ok $? "a throttled line"
perl "$T/fake.pl" "$sock" bad
sleep 0.5
kill -TERM $top
wait $top
grep -q "^probe: process [0-9]* sent a bad stream" "$T/err"
ok $? "a bad stream is refused with one message ($(head -c 200 "$T/err"))"
done_testing
