#!/bin/sh
# --alloc: allocations sampled by bytes (preload/alloc.c), against the
# ground truth of gt_alloc: site_a, site_b and site_c allocate 50, 30 and
# 20 % of the bytes in blocks of 16 B to 128 KiB, keep_leak 1 KiB blocks
# it never frees; it prints the bytes of each and the blocks in all.
#   - The shares and the total, sampled about every 64 KiB, within bounds
#     derived from the interval (below); --alloc=1 exact, to the byte and
#     the count, per site.
#   - What stays in use (--event inuse): keep_leak's blocks, exactly with
#     --alloc=1, within a bound sampled; none when a signal handler frees
#     them; pprof's four heap sample types through go tool pprof.
#   - C++ (operator new's caller is the row) on two threads, children,
#     a program that preloads jemalloc: exact with --alloc=1.
#   - Alone, --alloc samples allocations only; beside -e, both events.
#   - Values refused before the command runs; PROBE_ALLOC with the plain
#     libprobe.so, and a program whose own malloc (or jemalloc's, preloaded
#     first) comes first, said once; --event inuse with --time, refused.
#   - probe agent's /allocs and /heap, of a window and since the start, of
#     one process and of two merged into one profile (their pid labels).
. "$(dirname "$0")/lib.sh"
plan 32

F="$GT/gt_alloc"
# 1 GiB in all, sampled about every 64 KiB: about 16,000 samples.
"$PROBE" record --alloc=64K -o "$T/a.probe" -- "$F" 1024 >"$T/a.out" 2>"$T/a.err"
is "$?" 0 "probe record --alloc=64K exits 0"
"$PROBE" report "$T/a.probe" >"$T/a.rep" 2>&1
grep -q '^# event: alloc (bytes allocated: one sample about every 64 KiB allocated, unbiased); ' "$T/a.rep" &&
	grep -q '^# events recorded: alloc ([0-9]* samples), inuse ([0-9]* samples);' "$T/a.rep"
ok $? "alone, allocations only: $(sed -n 2p "$T/a.rep" | cut -c1-90)"

# The shares.  A Poisson process over bytes at interval R samples a block
# of n bytes with chance p = 1 - exp(-n/R) and weighs it n/p: a site's
# estimate has variance sum n^2 (1 - p)/p <= R x its bytes, so a share s
# of B bytes has a standard deviation of at most sqrt(s (1 - s) R / B):
# 0.39 points for 50 % at R = 64 KiB, B = 1 GiB.  3.9 of them (1.5
# points) fail by chance once in 10,000 runs for each of the three sites.
set -- $(cat "$T/a.out")
total=$(($2 + $4 + $6))
bad=""
for site in site_a site_b site_c; do
	case $site in site_a) b=$2 ;; site_b) b=$4 ;; site_c) b=$6 ;; esac
	got=$(self_share "$T/a.rep" "$site")
	want=$(awk -v b="$b" -v t="$total" 'BEGIN { printf "%.2f", 100 * b / t }')
	tol=$(awk -v s="$want" -v t="$total" 'BEGIN { s /= 100; printf "%.2f", 100 * 3.9 * sqrt(s * (1 - s) * 65536 / t) }')
	within "$got" "$want" "$tol" || bad="$bad $site $got % (want $want +- $tol)"
	diag "$site: $got % of the bytes, the truth $want % (bound +- $tol)"
done
is "$bad" "" "the sites' shares of the bytes within their bounds"

# The total, estimated: its standard deviation is at most sqrt(R x B),
# 0.78 % of 1 GiB at 64 KiB; 4 of them (3.1 %) fail once in 15,000 runs.
est=$(sed -n 's/^# allocated: .*(\([0-9]*\) bytes, estimated) in [0-9]* samples$/\1/p' "$T/a.rep")
tol=$(awk -v t="$total" 'BEGIN { printf "%.0f", 4 * sqrt(65536 * t) }')
within "${est:-0}" "$total" "$tol"
ok $? "bytes allocated: ${est:-none} estimated, $total by the program (within $tol)"

# --alloc=1: every allocation, to the byte and the count.  stdout is a
# file, so stdio's buffer is one more allocation, of st_blksize bytes.
"$PROBE" record -q --alloc=1 -o "$T/e.probe" -- "$F" 64 8 >"$T/e.out" 2>"$T/e.err"
is "$?" 0 "probe record --alloc=1 exits 0"
set -- $(cat "$T/e.out")
"$PROBE" report --format folded "$T/e.probe" 2>/dev/null |
	awk '{ k = "other"; if ($0 ~ /;site_a$|;site_a /) k = "site_a"; else if ($0 ~ /;site_b /) k = "site_b";
	       else if ($0 ~ /;site_c /) k = "site_c"; else if ($0 ~ /;keep_leak /) k = "keep_leak"
	       s[k] += $NF } END { printf "%d %d %d %d\n", s["site_a"], s["site_b"], s["site_c"], s["keep_leak"] }' >"$T/e.sites"
is "$(cat "$T/e.sites")" "$2 $4 $6 $8" "--alloc=1, folded: site_a, site_b, site_c and keep_leak's bytes exactly ($(cat "$T/e.sites"))"
"$PROBE" report "$T/e.probe" >"$T/e.rep" 2>&1
n=$(sed -n 's/^# event: alloc (bytes allocated: every allocation); \([0-9]*\) samples.*/\1/p' "$T/e.rep")
is "$n" "$((${10} + 1))" "--alloc=1: a sample per allocation: ${10} blocks and stdio's buffer"

# What stays in use: keep_leak's blocks, never freed, and stdio's buffer
# (libc keeps it to the end).  --alloc=1: exactly its 8 blocks of 1 KiB.
"$PROBE" report --event inuse --format folded "$T/e.probe" 2>/dev/null |
	awk '{ k = $0 ~ /;keep_leak / ? "keep_leak" : $0 ~ /;_IO_file_doallocate/ ? "stdio" : "other"; s[k] += $NF }
	     END { printf "%d %d %d\n", s["keep_leak"], (s["stdio"] > 0), s["other"] }' >"$T/e.live"
is "$(cat "$T/e.live")" "8192 1 0" "--alloc=1 --event inuse: keep_leak's 8192 bytes and stdio's buffer, nothing else"
# Sampled about every 16 KiB, 128 MiB in use at the end (and 256 MiB
# allocated and freed): the estimate's standard deviation is at most
# sqrt(16 KiB x 128 MiB) = 1.1 %; 4 of them (4.4 %) fail once in 15,000
# runs.
"$PROBE" record -q --alloc=16K -o "$T/l.probe" -- "$F" 256 131072 >"$T/l.out" 2>&1
"$PROBE" report --event inuse "$T/l.probe" >"$T/l.inuse" 2>&1
est=$(sed -n 's/^# in use at the end: .*(\([0-9]*\) bytes, estimated) in [0-9]* samples$/\1/p' "$T/l.inuse")
within "${est:-0}" 134217728 "$(awk 'BEGIN { printf "%.0f", 4 * sqrt(16384 * 134217728) }')" &&
	[ "$(awk '!/^#/ { print $4; exit }' "$T/l.inuse")" = keep_leak ]
ok $? "--alloc=16K --event inuse: ${est:-none} bytes estimated of keep_leak's 134217728 (within 4.4 %)"

# pprof: Go's heap profile's four sample types, read by go tool pprof.
if command -v go >/dev/null 2>&1; then
	"$PROBE" report --format pprof -o "$T/l.pb.gz" "$T/l.probe" 2>"$T/l.pp.err"
	go tool pprof -raw "$T/l.pb.gz" >"$T/l.raw" 2>&1
	grep -q '^PeriodType: space bytes$' "$T/l.raw" && grep -q '^Period: 16384$' "$T/l.raw" &&
		grep -q 'alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes\[dflt\]' "$T/l.raw" &&
		[ ! -s "$T/l.pp.err" ]
	ok $? "pprof: alloc_objects, alloc_space, inuse_objects, inuse_space (the default), period 16 KiB of space"
	go tool pprof -top -sample_index=inuse_space "$T/l.pb.gz" >"$T/l.in" 2>&1
	go tool pprof -top -sample_index=alloc_space "$T/l.pb.gz" >"$T/l.al" 2>&1
	inuse=$(awk '$NF == "keep_leak" { print $2; exit }' "$T/l.in")
	sites=$(awk '$NF ~ /^(site_[abc]|keep_leak)$/ { print $NF }' "$T/l.al" | sort | tr '\n' ' ')
	[ "$inuse" = "100%" ] && [ "$sites" = "keep_leak site_a site_b site_c " ]
	ok $? "go tool pprof: inuse_space all keep_leak's ($inuse), alloc_space: $sites"
else
	skip "no go: pprof not checked"
	skip "no go: pprof not checked"
fi

# A signal handler that frees: keep_leak's blocks freed in one (sigfree),
# none of them in use at the end.
"$PROBE" record -q --alloc=1 -o "$T/s.probe" -- "$F" 8 64 sigfree >/dev/null 2>&1
"$PROBE" report --event inuse --format folded "$T/s.probe" >"$T/s.live" 2>/dev/null
! grep -q 'keep_leak' "$T/s.live" && grep -q '_IO_file_doallocate' "$T/s.live"
ok $? "frees in a signal handler: none of keep_leak's 64 blocks in use at the end"

# C++: operator new and std::vector on two threads; the rows are the
# program's functions (operator new's caller), exactly, both threads.
"$PROBE" record -q --alloc=1 -o "$T/c.probe" -- "$GT/gt_newdel" 16 >"$T/c.out" 2>&1
set -- $(cat "$T/c.out")
"$PROBE" report --format folded "$T/c.probe" 2>/dev/null |
	awk '{ k = "other"; if ($0 ~ /;cxx_new[( ]/) k = "cxx_new"; else if ($0 ~ /;cxx_vector[(; ]/) k = "cxx_vector"
	       s[k] += $NF } END { printf "cxx_new %d cxx_vector %d\n", s["cxx_new"], s["cxx_vector"] }' >"$T/c.sites"
"$PROBE" report --sort tid "$T/c.probe" >"$T/c.tid" 2>&1
[ "$(cat "$T/c.sites")" = "$*" ] && [ "$(grep -c ':gt_newdel$' "$T/c.tid")" -ge 3 ]
ok $? "C++, two threads, --alloc=1: $(cat "$T/c.sites") (the program: $*), $(grep -c ':gt_newdel$' "$T/c.tid") threads"

# Children, forked and exec'd: each process its own, exactly.
"$PROBE" record -q --alloc=1 -o "$T/k.probe" -- sh -c "$F 8 1 & $F 4 2; wait" >"$T/k.out" 2>&1
"$PROBE" report --format folded --sort pid "$T/k.probe" >/dev/null 2>&1
"$PROBE" report --event inuse --format folded "$T/k.probe" 2>/dev/null |
	awk '/;keep_leak / { s += $NF } END { print s + 0 }' >"$T/k.leak"
is "$(cat "$T/k.leak")" 3072 "children (sh, a background one): keep_leak's 1 + 2 KiB in use at the end of each"

# A program that preloads jemalloc keeps it, and is profiled: probe goes
# first in LD_PRELOAD, its wrappers call jemalloc's (jemalloc's own stats
# at exit say it served them), exactly.  jemalloc first: it is the malloc
# the program calls, and probe says so.
J=$(ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -n 1)
if [ -n "${PROBE_SANITIZE:-}" ]; then
	# LD_PRELOAD reaches probe too: ASan's runtime must come first there.
	skip "make sanitize: the ASan-built probe cannot start with jemalloc preloaded"
	skip "make sanitize: the ASan-built probe cannot start with jemalloc preloaded"
elif [ -n "$J" ]; then
	LD_PRELOAD=$J MALLOC_CONF=stats_print:true "$PROBE" record -q --alloc=1 -o "$T/j.probe" -- \
		"$F" 8 8 >"$T/j.out" 2>"$T/j.err"
	set -- $(cat "$T/j.out")
	got=$("$PROBE" report --format folded "$T/j.probe" 2>/dev/null |
		awk '/;site_a / { a += $NF } /;keep_leak / { k += $NF } END { print a + 0, k + 0 }')
	[ "$got" = "$2 $8" ] && grep -q 'Begin jemalloc statistics' "$T/j.err"
	ok $? "jemalloc preloaded: its allocations, exactly (site_a and keep_leak: $got; the program: $2 $8)"
	env LD_PRELOAD="$J $BUILD/libprobe-alloc.so" PROBE_ALLOC=65536 PROBE_OUTPUT="$T/j2.probe" \
		"$F" 8 >/dev/null 2>"$T/j2.err"
	[ "$(grep -c "calls the malloc of $J, which comes before libprobe's" "$T/j2.err")" = 1 ]
	ok $? "jemalloc before libprobe in LD_PRELOAD: said once: $(head -n1 "$T/j2.err" | cut -c1-90)"
else
	skip "libjemalloc2 is not installed (scripts/install-deps installs it)"
	skip "libjemalloc2 is not installed"
fi

# probe top --alloc: live, the same shares (its last snapshot, on stderr
# when not on a terminal); the bound as above.
"$PROBE" top --alloc=64K -d 0.3 -n 6 --exit -- "$F" 1024 >/dev/null 2>"$T/top" </dev/null
got=$(awk '/^# probe top:/ { s = "" } NF > 2 && $(NF - 1) == "site_a" { sub("%", "", $1); s = $1 } END { print s }' "$T/top")
grep -q '^# probe top: .*; alloc, bytes allocated (a sample about every 64 KiB);' "$T/top" &&
	within "${got:-0}" 50 "$(awk 'BEGIN { printf "%.2f", 100 * 3.9 * sqrt(0.25 * 65536 / 1073741824) }')"
ok $? "probe top --alloc=64K: site_a $got % of the bytes (50 +- 1.52), its header says alloc"
# Its Live column: what each site holds at the last snapshot, exact with
# --alloc=1: keep_leak's 1 MiB, none of site_a's (all freed).
"$PROBE" top --alloc=1 -d 0.3 -n 6 --exit -- "$F" 16 1024 >/dev/null 2>"$T/top1" </dev/null
live() { awk -v f="$1" '/^# probe top:/ { s = "" } NF > 2 && $(NF - 1) == f { s = $4 " " $5 } END { print s }' "$T/top1"; }
grep -q '^  Self%  Total%   Samples       Live  Function' "$T/top1" &&
	[ "$(live keep_leak)" = "1.0 MiB" ] && [ "$(live site_a)" = "0 B" ]
ok $? "probe top --alloc=1: Live $(live keep_leak) in keep_leak (1.0 MiB leaked), $(live site_a) in site_a (all freed)"

# Flame graphs of allocations: a frame's tooltip says its bytes.
"$PROBE" report --format svg -o "$T/a.svg" "$T/a.probe" 2>/dev/null
grep -A2 '<title>site_a$' "$T/a.svg" | grep -Eq '^[0-9]+ samples, [0-9.]+ MiB, [0-9.]+%</title>'
ok $? "svg: site_a's tooltip says its bytes: $(grep -A2 '<title>site_a$' "$T/a.svg" | sed -n '3s/<\/title>.*//p')"

# probe agent serves Go's /debug/pprof/allocs and /heap: the allocations
# of a window, alloc_space or inuse_space by default (as nobody, an agent
# of nobody's own, a program preloaded with PROBE_ALLOC).
if command -v curl >/dev/null 2>&1 && command -v go >/dev/null 2>&1; then
	# setpriv itself in the background (as_nobody's function would be a
	# subshell, and $! not the agent's pid).
	NB="setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env -- env PATH=/usr/bin:/bin HOME=/nonexistent"
	# agent LOG: an agent of nobody's on a port of its own; APID, URL.
	agent() {
		$NB "$PROBE" agent --http 127.0.0.1:0 </dev/null >/dev/null 2>"$1" &
		APID=$!
		for i in $(seq 100); do grep -q 'profiles at' "$1" && break; sleep 0.05; done
		URL=$(sed -n 's|.*profiles at \(http://[^/]*\)/.*|\1|p' "$1")
	}
	agent "$T/ag.log"
	$NB LD_PRELOAD="$BUILD/libprobe-alloc.so" PROBE_ALLOC=65536 PROBE_ALLOC_ONLY=1 \
		"$F" 400000 >/dev/null 2>"$T/ag.err" &
	GPID=$!
	sleep 0.5
	c1=$(curl -s -o "$T/allocs.pb.gz" -w '%{http_code}' "$URL/debug/pprof/allocs?seconds=1")
	c2=$(curl -s -o "$T/heap.pb.gz" -w '%{http_code}' "$URL/debug/pprof/heap?seconds=1")
	kill "$GPID" "$APID" 2>/dev/null
	wait "$GPID" "$APID" 2>/dev/null
	go tool pprof -top "$T/allocs.pb.gz" >"$T/allocs.top" 2>&1
	go tool pprof -raw "$T/heap.pb.gz" >"$T/heap.raw" 2>&1
	# gt_alloc allocates gigabytes a second even under load: over 16,000
	# samples at 64 KiB in the window, 0.4 points of standard deviation
	# for site_a's 50 %; 5 points are more than 12 of them.
	got=$(awk '$NF == "site_a" { sub("%", "", $2); print $2; exit }' "$T/allocs.top")
	[ "$c1" = 200 ] && [ "$c2" = 200 ] && grep -q '^Type: alloc_space' "$T/allocs.top" &&
		grep -q 'inuse_space/bytes\[dflt\]' "$T/heap.raw" && within "${got:-0}" 50 5
	ok $? "agent: /debug/pprof/allocs ($c1, alloc_space, site_a $got %) and /heap ($c2, inuse_space by default)"

	# Without seconds, as Go: at once, one process's allocations since it
	# started.  gt_alloc allocates 64 MiB, leaks 4 MiB and waits (hold):
	# sampled every 4 KiB, the leak's estimate has a standard deviation of
	# sqrt(4 KiB x 4 MiB) = 3.1 %; 5 of them (15.6 %) fail once in 1.7
	# million runs.  site_a's share of the allocated: 0.39 points of
	# standard deviation at 68 MiB; 2 points are 5 of them.
	agent "$T/ag2.log"
	$NB LD_PRELOAD="$BUILD/libprobe-alloc.so" PROBE_ALLOC=4096 PROBE_ALLOC_ONLY=1 \
		"$F" 64 4096 hold >"$T/hold.out" 2>"$T/hold.err" &
	GPID=$!
	for i in $(seq 200); do [ -s "$T/hold.out" ] && break; sleep 0.05; done
	sleep 0.5
	t0=$(date +%s%N)
	c3=$(curl -s -o "$T/heap0.pb.gz" -w '%{http_code}' "$URL/debug/pprof/heap")
	t1=$(date +%s%N)
	c4=$(curl -s -o "$T/allocs0.pb.gz" -w '%{http_code}' "$URL/debug/pprof/allocs")
	kill "$GPID" "$APID" 2>/dev/null
	wait "$GPID" "$APID" 2>/dev/null
	go tool pprof -top -unit=B "$T/heap0.pb.gz" >"$T/heap0.top" 2>&1
	go tool pprof -top "$T/allocs0.pb.gz" >"$T/allocs0.top" 2>&1
	lk=$(awk '$NF == "keep_leak" { sub("B", "", $1); print $1; exit }' "$T/heap0.top")
	got=$(awk '$NF == "site_a" { sub("%", "", $2); print $2; exit }' "$T/allocs0.top")
	ms=$(( (t1 - t0) / 1000000 ))
	# site_a's share of all it allocated, the leak included (hold.out)
	set -- $(cat "$T/hold.out")
	want=$(awk -v a="$2" -v b="$4" -v c="$6" -v l="$8" 'BEGIN { printf "%.2f", 100 * a / (a + b + c + l) }')
	[ "$c3" = 200 ] && [ "$c4" = 200 ] && [ "$ms" -lt 3000 ] &&
		grep -q '^Type: inuse_space' "$T/heap0.top" && grep -q '^Type: alloc_space' "$T/allocs0.top" &&
		within "${lk:-0}" 4194304 655360 && within "${got:-0}" "$want" 2
	ok $? "agent: /heap and /allocs without seconds: at once ($c3 in $ms ms, $c4), keep_leak ${lk:-no} bytes in use (4194304 leaked, +-655360), site_a $got % allocated ($want +- 2)"

	# Two processes stream allocations, none named: one profile of both,
	# each sample labelled with its pid (pprof_merge.h).  Leaks of 4 and 2
	# MiB, sampled every 4 KiB: standard deviations 3.1 % and 4.4 %; 5 of
	# them (640 and 453 KiB) fail once in 1.7 million runs.
	agent "$T/ag3.log"
	$NB LD_PRELOAD="$BUILD/libprobe-alloc.so" PROBE_ALLOC=4096 PROBE_ALLOC_ONLY=1 \
		"$F" 32 4096 hold >"$T/h1.out" 2>"$T/h1.err" &
	P1=$!
	$NB LD_PRELOAD="$BUILD/libprobe-alloc.so" PROBE_ALLOC=4096 PROBE_ALLOC_ONLY=1 \
		"$F" 32 2048 hold >"$T/h2.out" 2>"$T/h2.err" &
	P2=$!
	for i in $(seq 200); do [ -s "$T/h1.out" ] && [ -s "$T/h2.out" ] && break; sleep 0.05; done
	sleep 0.5
	c5=$(curl -s -o "$T/heapm.pb.gz" -w '%{http_code}' "$URL/debug/pprof/heap")
	kill "$P1" "$P2" "$APID" 2>/dev/null
	wait "$P1" "$P2" "$APID" 2>/dev/null
	# -raw: "VALUES: LOCATIONS" lines, then their labels; inuse_space is the
	# fourth value.
	go tool pprof -raw "$T/heapm.pb.gz" 2>&1 | awk '
		/^ *[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+:/ { v = $4 + 0 }
		match($0, /pid:\[[0-9]+\]/) { p = substr($0, RSTART + 5, RLENGTH - 6); s[p] += v; v = 0 }
		END { for (p in s) print p, s[p] }' >"$T/heapm.pids"
	b1=$(awk -v p="$P1" '$1 == p { print $2 }' "$T/heapm.pids")
	b2=$(awk -v p="$P2" '$1 == p { print $2 }' "$T/heapm.pids")
	[ "$c5" = 200 ] && within "${b1:-0}" 4194304 655360 && within "${b2:-0}" 2097152 463360
	ok $? "agent: /heap without seconds, two processes: one profile ($c5), pid $P1 ${b1:-no} bytes in use (4194304 +- 655360), pid $P2 ${b2:-no} (2097152 +- 463360)"
else
	skip "no curl or go: the agent's heap profiles not checked"
	skip "no curl or go: the agent's heap profiles not checked"
	skip "no curl or go: the agent's heap profiles not checked"
fi

# probe diff of two heap recordings: the same program, a leak of 64 MiB
# added (a fifth of the bytes: keep_leak +20 points, the sites' shares
# down by a fifth), both --alloc=1, so exact.
"$PROBE" record -q --alloc=1 -o "$T/d1.probe" -- "$F" 256 >/dev/null 2>&1
"$PROBE" record -q --alloc=1 -o "$T/d2.probe" -- "$F" 256 65536 >/dev/null 2>&1
"$PROBE" diff "$T/d1.probe" "$T/d2.probe" >"$T/diff" 2>&1
leak=$(awk '$4 == "keep_leak" { print $3; exit }' "$T/diff")
within "${leak:-0}" 20 0.1
ok $? "probe diff of two heap recordings: keep_leak ${leak:-missing} points (+20)"

# Beside -e cpu-clock: both events, each with its own section.
"$PROBE" record -q --alloc -e cpu-clock -o "$T/b.probe" -- "$F" 256 >/dev/null 2>&1
"$PROBE" report "$T/b.probe" >"$T/b.rep" 2>&1
grep -q '^# events recorded: cpu-clock ([0-9]* samples), alloc ([1-9][0-9]* samples)' "$T/b.rep"
ok $? "--alloc beside -e cpu-clock: $(sed -n "s/^# events recorded: //p" "$T/b.rep" | head -n1 | cut -c1-60)"
"$PROBE" report --event alloc "$T/b.probe" >"$T/b.alloc" 2>&1
grep -q '^# event: alloc (bytes allocated: one sample about every 512 KiB allocated, unbiased)' "$T/b.alloc" &&
	[ "$(awk '!/^#/ { print $4; exit }' "$T/b.alloc")" = site_a ]
ok $? "--event alloc: 512 KiB by default, site_a on top"

# Refused before the command runs.
for v in 0 12Q -5 2T; do
	"$PROBE" record -o "$T/bad.probe" --alloc=$v -- true >/dev/null 2>"$T/bad.err"
	echo "$? $(cat "$T/bad.err")"
done >"$T/bads"
[ "$(grep -c '^2 probe: record: --alloc=.*: the interval must be a number of bytes from 1 to 1T' "$T/bads")" = 4 ] &&
	[ ! -e "$T/bad.probe" ]
ok $? "--alloc=0, 12Q, -5, 2T: exit 2, nothing written: $(head -n1 "$T/bads")"

# PROBE_ALLOC with the plain libprobe.so: said, once.
env LD_PRELOAD="$LIBPROBE" PROBE_ALLOC=65536 PROBE_OUTPUT="$T/plain.probe" "$F" 4 >/dev/null 2>"$T/plain.err"
st=$?
[ "$st" = 0 ] && [ "$(grep -c 'PROBE_ALLOC needs libprobe-alloc.so' "$T/plain.err")" = 1 ]
ok $? "PROBE_ALLOC with libprobe.so: exit $st, said once: $(grep PROBE_ALLOC "$T/plain.err")"

# A program whose own malloc comes first: said, and its output unchanged.
cat >"$T/own.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static char heap[1 << 20];
static size_t used;
void *malloc(size_t n) { void *p = heap + used; used += (n + 15) & ~(size_t)15; return used <= sizeof heap ? p : NULL; }
void free(void *p) { (void)p; }
void *calloc(size_t m, size_t n) { void *p = malloc(m * n); if (p) memset(p, 0, m * n); return p; }
void *realloc(void *o, size_t n) { void *p = malloc(n); if (p && o) memcpy(p, o, n); return p; }
int main(void) { char *s = malloc(32); strcpy(s, "own malloc"); puts(s); return 0; }
EOF
if cc -O1 -o "$T/own" "$T/own.c" 2>"$T/own.cc"; then
	"$PROBE" record -o "$T/own.probe" --alloc -- "$T/own" >"$T/own.out" 2>"$T/own.err"
	st=$?
	[ "$st" = 0 ] && [ "$(cat "$T/own.out")" = "own malloc" ] &&
		[ "$(grep -c "probe: --alloc: this program calls the malloc of $T/own, which comes before libprobe's" "$T/own.err")" = 1 ]
	ok $? "an executable with its own malloc: exit $st, said once: $(grep 'calls the malloc' "$T/own.err" | cut -c1-100)"
else
	skip "no C compiler: $(head -n1 "$T/own.cc")"
fi

# As nobody: the same shares, from a recording of its own.
as_nobody "$PROBE" record -q --alloc=64K -o "$T/n.probe" -- "$F" 1024 >"$T/n.out" 2>"$T/n.err"
st=$?
"$PROBE" report "$T/n.probe" >"$T/n.rep" 2>&1
got=$(self_share "$T/n.rep" site_a)
tol=$(awk 'BEGIN { printf "%.2f", 100 * 3.9 * sqrt(0.25 * 65536 / 1073741824) }')
[ "$st" = 0 ] && within "$got" 50 "$tol"
ok $? "as nobody: exit $st, site_a $got % (50 +- $tol)"

# The program's output and exit status are its own.
"$F" 64 8 >"$T/bare.out"
cmp -s "$T/bare.out" "$T/e.out"
ok $? "the program's output under --alloc=1 is its own"
"$PROBE" record -q --alloc=1 -o "$T/x.probe" -- sh -c 'exit 7' >/dev/null 2>&1
is "$?" 7 "the command's exit status (7) is probe record's"

# --event inuse is what the whole recording left: a time window of it is
# refused, once, saying where the timeline is.
"$PROBE" report --event inuse --time 0,1 "$T/l.probe" >"$T/tw.out" 2>"$T/tw.err"
st=$?
[ "$st" != 0 ] && [ ! -s "$T/tw.out" ] && [ "$(wc -l <"$T/tw.err")" = 1 ] &&
	grep -q '^probe: --event inuse: .*not with --time (the speedscope format shows it over time)$' "$T/tw.err"
ok $? "--event inuse --time: refused (exit $st): $(cat "$T/tw.err")"
