#!/bin/sh
# Every mapping the program ever had: plugin a is loaded, worked in and
# unloaded, then plugin b is loaded at the same address (the loader reuses
# the hole) and worked in, then unloaded.  Samples taken in a must be named
# from a, samples taken in b from b, in their 3:2 proportion, although by
# the end of the run neither is mapped and the two overlapped.  gt_plugin
# calls each plugin from its own caller (run_first, run_second, run_third),
# so the stacks tell which plugin really ran.
. "$(dirname "$0")/lib.sh"
plan 8

A=$GT/libgt_plugin_a.so B=$GT/libgt_plugin_b.so C=$GT/libgt_plugin_c.so
"$PROBE" record -q -F 4999 -o "$T/p.probe" -- "$GT/gt_plugin" 50 "$A:1800" "$B:1200" \
	>"$T/out" 2>"$T/err"
is "$?" 0 "gt_plugin a, b (50 ms apart): recorded"
sed 's/^/# /' "$T/out"
grep -q 'libgt_plugin_b.so at .* reused' "$T/out"
ok $? "b was loaded where a had been (so their mappings overlap)"

# The truth: the CPU time gt_plugin measured in each plugin (3:2 in work,
# but the machine's speed may drift from one to the next).
ta=$(awk '/libgt_plugin_a.so at/ { print $5 }' "$T/out") tb=$(awk '/libgt_plugin_b.so at/ { print $5 }' "$T/out")
wa=$(awk -v a="$ta" -v b="$tb" 'BEGIN { printf "%.2f", 100 * a / (a + b) }')
wb=$(awk -v a="$ta" -v b="$tb" 'BEGIN { printf "%.2f", 100 * b / (a + b) }')
# Usually within 0.2 points (six runs here); once in CI the program's own
# clocks said 58.03 % where the samples said 59.88 % (the 3:2 of the work
# is 60 %): the VM's clocks drift apart now and then, hence 2.5.
"$PROBE" report --sort sym,dso "$T/p.probe" >"$T/r" 2>"$T/rerr"
a=$(self_share "$T/r" hot_a) b=$(self_share "$T/r" hot_b)
within "$a" "$wa" 2.5 && within "$b" "$wb" 2.5
ok $? "samples named from the plugin that was mapped then: hot_a $a %, hot_b $b % (CPU time: $wa/$wb +-2.5)"
awk '!/^#/ && (($4 == "hot_a" && $5 == "libgt_plugin_a.so") || ($4 == "hot_b" && $5 == "libgt_plugin_b.so")) { n++ } END { exit n != 2 }' "$T/r"
ok $? "each in its own module"

"$PROBE" report --format folded "$T/p.probe" >"$T/f" 2>>"$T/rerr"
wrong=$(awk '/run_first;.*hot_b [0-9]+$/ || /run_second;.*hot_a [0-9]+$/ { n += $NF } END { print n + 0 }' "$T/f")
is "$wrong" 0 "no sample named from the other plugin (by the caller that ran it)"
"$PROBE" report --tree "$T/p.probe" >"$T/t" 2>>"$T/rerr"
grep -q 'hot_a  libgt_plugin.c:[0-9]*  \[libgt_plugin_a.so\]' "$T/t"
ok $? "after exit, the unloaded plugin's DWARF still gives lines: $(grep 'hot_a' "$T/t" | head -n1 | sed 's/^ *//')"

# What needs libprobe's help (issue 4): a plugin that lives less than the
# sender's 10 ms tick must still be announced (dlopen has its MAP sent before
# returning), and samples still queued when the next plugin is loaded at the
# same address must not resolve against it (dlclose has them sent first).
"$PROBE" record -q -F 4999 -o "$T/q.probe" -- "$GT/gt_plugin" 0 "$A:900" "$B:600" "$C:10" \
	>"$T/out2" 2>>"$T/err"
"$PROBE" report --format folded "$T/q.probe" >"$T/f2" 2>>"$T/rerr"
# Named: no frame under run_third left as an address or [unknown], and
# hot_c among them.  (Not "every sample in hot_c or plugin_run": under
# load a sample also lands in dlopen's or dlclose's own work, or in the
# kernel, 1 of 19 once, and those are named too.)
awk '/run_third;/ { t += $NF; s = $0; sub(/.*run_third;/, "", s)
		if (s ~ /\+0x[0-9a-f]+|\[unknown\]/) u += $NF
		if (s ~ /(^|;)hot_c [0-9]+$/) c += $NF }
	END { printf "%d %d %d\n", u, c, t }' "$T/f2" >"$T/c"
read unnamed hot total <"$T/c"
[ "$total" -gt 0 ] && [ "$unnamed" -eq 0 ] && [ "$hot" -gt 0 ]
ok $? "a plugin loaded, sampled and unloaded within 10 ms is named ($unnamed of $total samples unnamed, $hot in hot_c)"
[ "$unnamed" -eq 0 ] || grep 'run_third;' "$T/f2" | grep -E '\+0x|\[unknown\]' | head -3 | sed 's/^/#   /'
wrong=$(awk '/run_first;.*hot_b [0-9]+$/ || /run_second;.*hot_[ac] [0-9]+$/ { n += $NF } END { print n + 0 }' "$T/f2")
[ "$wrong" -eq 0 ]
ok $? "back to back (no gap): no sample named from the next plugin ($wrong misnamed)"

[ "$_tap_fail" -eq 0 ] || sed 's/^/#   /' "$T/err" "$T/rerr" "$T/r" | head -30
done_testing
