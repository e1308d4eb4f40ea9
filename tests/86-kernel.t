#!/bin/sh
# Kernel time (as root): sampled by default, each sample's kernel stack
# from the kernel (named from /proc/kallsyms) on top of its user stack.  A
# system-call-heavy program (dd bs=512 from /dev/zero to /dev/null)
# recorded by probe and by perf on the same run shape: the kernel's share
# within 3 points of perf's, the top kernel functions named the same.  The
# header says whether kernel time was included, and why not.  No system call
# fails with EINTR because a sample was taken in the kernel.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "kernel samples are compared as root (perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null))"
plan 12

# About 1.8 s at 1999 Hz: ~3,600 samples each, so that the sampling error
# is under a point (one sigma).  But dd's own kernel share moves from run
# to run more than that: under probe 56.4 to 64.8 % over 16 runs (sd 2.1),
# under perf 58.8 to 64.5 % (sd 1.6); a run of each differed by more than
# 3 points about once in ten.  So three runs of each, and their means within
# 5 points: the difference of the means has an sd of sqrt((2.1^2 + 1.6^2)
# / 3) = 1.52, and 5 points are 3.29 of it, a false failure in 1 run of
# 1,000 (with two runs each, 2.7 sd: 1 run in 150).
DD="dd if=/dev/zero of=/dev/null bs=512 count=2500000"

# kernel_rows REPORT: its rows in a kernel module ([kernel.kallsyms],
# [kernel], a module's [name]): not [unknown], [vdso], [JIT], nor [probe]
# (a sample taken in libprobe's handler, preempted there under load).
kernel_rows() {
	awk '/^#/ { next } $NF ~ /^\[.*\]$/ && $NF !~ /^\[(unknown|vdso|JIT|probe)\]$/' "$1"
}
# kernel_share REPORT: the Self% of those rows.
kernel_share() {
	kernel_rows "$1" | awk '{ s += $1 } END { printf "%.1f\n", s }'
}

"$PROBE" record -q -F 1999 -o "$T/dd.probe" -- $DD >/dev/null 2>"$T/dd.err"
is "$?" 0 "probe record dd (no PROBE_KERNEL) exits 0"
"$PROBE" report "$T/dd.probe" >"$T/dd.rep" 2>&1
grep -q '^# kernel: included$' "$T/dd.rep"; ok $? "the header says kernel time is included"
p=$(kernel_share "$T/dd.rep")
# Kernel frames lie on top of the user stack that made the system call.
"$PROBE" report --format folded "$T/dd.probe" >"$T/dd.folded" 2>&1
awk '{ n = split($1, f, ";"); if (f[n] ~ /^(read_zero|do_syscall_64|vfs_read|vfs_write)$/ && $1 ~ /__libc_start_main/) s += $2 }
	END { exit !(s > 0) }' "$T/dd.folded"
ok $? "kernel frames sit on their callers (read/write, main)"

if ! command -v perf >/dev/null 2>&1; then
	skip "no perf here to compare with"; skip "no perf"; skip "no perf"
elif ! perf record -q -F 1999 -g -o "$T/perf.data" -- $DD >/dev/null 2>"$T/perf.err"; then
	skip "perf cannot record here: $(head -n1 "$T/perf.err")"; skip "no perf"; skip "no perf"
else
	perf report -i "$T/perf.data" --stdio --no-children --sort dso -g none 2>/dev/null |
		awk '/^#/ || !/%/ { next } $2 ~ /^\[/ && $2 != "[unknown]" && $2 != "[vdso]" { sub("%", "", $1); s += $1 }
			END { printf "%.1f\n", s }' >"$T/perf.k"
	f=$(cat "$T/perf.k")
	# The second run of each, alternating.
	"$PROBE" record -q -F 1999 -o "$T/dd2.probe" -- $DD >/dev/null 2>&1
	"$PROBE" report "$T/dd2.probe" >"$T/dd2.rep" 2>&1
	p2=$(kernel_share "$T/dd2.rep")
	perf record -q -F 1999 -g -o "$T/perf2.data" -- $DD >/dev/null 2>&1
	f2=$(perf report -i "$T/perf2.data" --stdio --no-children --sort dso -g none 2>/dev/null |
		awk '/^#/ || !/%/ { next } $2 ~ /^\[/ && $2 != "[unknown]" && $2 != "[vdso]" { sub("%", "", $1); s += $1 }
			END { printf "%.1f\n", s }')
	"$PROBE" record -q -F 1999 -o "$T/dd3.probe" -- $DD >/dev/null 2>&1
	"$PROBE" report "$T/dd3.probe" >"$T/dd3.rep" 2>&1
	p3=$(kernel_share "$T/dd3.rep")
	perf record -q -F 1999 -g -o "$T/perf3.data" -- $DD >/dev/null 2>&1
	f3=$(perf report -i "$T/perf3.data" --stdio --no-children --sort dso -g none 2>/dev/null |
		awk '/^#/ || !/%/ { next } $2 ~ /^\[/ && $2 != "[unknown]" && $2 != "[vdso]" { sub("%", "", $1); s += $1 }
			END { printf "%.1f\n", s }')
	pm=$(awk -v a="$p" -v b="$p2" -v c="$p3" 'BEGIN { printf "%.1f", (a + b + c) / 3 }')
	fm=$(awk -v a="$f" -v b="$f2" -v c="$f3" 'BEGIN { printf "%.1f", (a + b + c) / 3 }')
	within "$pm" "$fm" 5
	ok $? "kernel share, three runs each: probe $p, $p2 and $p3 % (mean $pm), perf $f, $f2 and $f3 % (mean $fm), within 5 points"
	# perf's three hottest kernel functions are among probe's eight (the
	# third and the next five, vfs_read, rw_verify_area, fdget_pos,
	# vfs_write, a retpoline thunk, are a point or so apart: perf's own
	# third changes from run to run, and sanitize once had it seventh).
	perf report -i "$T/perf.data" --stdio --no-children --sort sym -g none 2>/dev/null |
		awk '$2 == "[k]" { print $3 }' | head -n 3 >"$T/perf.top"
	awk '/^#/ { next } $NF ~ /^\[/ && $NF != "[unknown]" { print $4 }' "$T/dd.rep" | head -n 8 >"$T/probe.top"
	miss=$(grep -vxF -f "$T/probe.top" "$T/perf.top" | tr '\n' ' ')
	[ -s "$T/perf.top" ] && [ -z "$miss" ]
	ok $? "perf's top kernel functions ($(tr '\n' ' ' <"$T/perf.top")) are in probe's top eight ($(tr '\n' ' ' <"$T/probe.top"))${miss:+; missing: $miss}"
	grep -qx 'read_zero' "$T/probe.top"; ok $? "read_zero is named"
fi

# PROBE_KERNEL=0: user space only, and the header says why.
PROBE_KERNEL=0 "$PROBE" record -q -o "$T/k0.probe" -- $DD >/dev/null 2>&1
"$PROBE" report "$T/k0.probe" >"$T/k0.rep" 2>&1
grep -q '^# kernel: not sampled: turned off (PROBE_KERNEL=0)$' "$T/k0.rep"
ok $? "PROBE_KERNEL=0: the header says kernel time was turned off"
[ -z "$(kernel_rows "$T/k0.rep")" ]
ok $? "PROBE_KERNEL=0: no kernel rows$(kernel_rows "$T/k0.rep" | head -n 3 | tr -s ' ' | tr '\n' ';' | sed 's/^./: &/')"

# Not allowed (nobody at perf_event_paranoid >= 2): silently user space.
par=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 2)
if [ "$par" -ge 2 ] && id nobody >/dev/null 2>&1; then
	as_nobody "$PROBE" record -q -o "$T/nb.probe" -- $DD >/dev/null 2>"$T/nb.err"
	is "$(grep -c '^probe: ' "$T/nb.err")" 0 "as nobody (paranoid $par): nothing said"
	as_nobody "$PROBE" report "$T/nb.probe" >"$T/nb.rep" 2>&1
	grep -q '^# kernel: not sampled: not allowed for this user' "$T/nb.rep"
	ok $? "as nobody: the header says kernel time was not allowed"
else
	skip "perf_event_paranoid $par lets nobody sample the kernel"
	skip "perf_event_paranoid $par"
fi

# Where kallsyms shows no addresses (kptr_restrict), the kernel is [kernel].
awk '{ $1 = "0000000000000000"; print }' /proc/kallsyms >"$T/kallsyms0" 2>/dev/null
PROBE_KALLSYMS=$T/kallsyms0 "$PROBE" report "$T/dd.probe" >"$T/dd0.rep" 2>&1
self_share "$T/dd0.rep" '[kernel]' >"$T/k"
within "$(cat "$T/k")" "$p" 0.2; ok $? "without kallsyms addresses: [kernel] $(cat "$T/k") % (as the named rows, $p %)"

# Samples in system calls break none of them: sigtrap arrives on the way
# back to user space.  16,700 rounds: 100,200 calls of six kinds.
"$PROBE" record -q -F 4999 -o "$T/ei.probe" -- "$GT/gt_signals" eintr 16700 >"$T/ei.out" 2>"$T/ei.err"
grep -q 'EINTR: nanosleep 0, poll 0, epoll_wait 0, select 0, read 0, sigtimedwait 0' "$T/ei.out"
ok $? "kernel sampled by default, 4999 Hz: no call failed with EINTR ($(cat "$T/ei.out"))"
[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/dd.err" "$T/ei.err" "$T/perf.err" 2>/dev/null | head -20
done_testing
