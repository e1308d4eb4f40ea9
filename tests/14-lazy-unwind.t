#!/bin/sh
# libunwind is loaded when first needed, not at every process's start
# (preload/unwind.c): a process whose stacks probe's own walk takes (every
# object loaded at start: its rules read from its .eh_frame in memory)
# never maps it, and its stacks are whole; one that dlopens code maps it
# after the dlopen, for code whose rules the collector has not learned.
. "$(dirname "$0")/lib.sh"
command -v gcc >/dev/null 2>&1 || skip_all "no gcc to build the test program"
plan 7
cat >"$T/lz.c" <<'EOF2'
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
static volatile double sink;
static int mapped(const char *what)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof line, f))
		n += strstr(line, what) != NULL;
	if (f)
		fclose(f);
	return n;
}
/* Deep stacks, calls into libm through the PLT. */
__attribute__((noinline)) static void descend(int d, double t)
{
	if (d > 0) {
		descend(d - 1, t);
		sink += 1;
		return;
	}
	for (double x = 0; x < t; x += 1)
		sink += sin(x) * cos(x);
}
int main(int argc, char **argv)
{
	struct timespec a, b;
	(void)argv;
	/* 0.4 s of its own CPU time (cpu-clock counts that), however loaded. */
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	do {
		descend(24, 20000);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 400000000L);
	printf("probe %d unwind %d", mapped("libprobe"), mapped("libunwind"));
	if (argc > 1 && dlopen("libz.so.1", RTLD_NOW))
		printf(" after-dlopen %d", mapped("libunwind"));
	printf("\n");
	return 0;
}
EOF2
gcc -O2 -g -o "$T/lz" "$T/lz.c" -lm -ldl || { skip_all "cannot build the test program"; }

"$PROBE" record -q -F 999 -o "$T/lz.probe" -- "$T/lz" >"$T/out" 2>"$T/err"
read -r _ p _ u <"$T/out"
diag "$(cat "$T/out")"
[ "${p:-0}" -gt 0 ]; ok $? "the process was profiled (libprobe.so in its maps)"
is "${u:-x}" 0 "libunwind was not loaded: probe's own walk took every stack"
"$PROBE" report --header-only "$T/lz.probe" >"$T/hdr" 2>&1
n=$(awk '/^# samples +:/ { sub(/;.*/, ""); print $NF; exit }' "$T/hdr")
# 0.4 s of CPU at 999 Hz: about 400 (a sanitize run under load had 184 when
# the loop counted wall time).
[ "${n:-0}" -ge 200 ]; ok $? "at least 200 samples (${n:-none})"
grep -q "truncated" "$T/hdr"; is "$?" 1 "no stack truncated (none went to libunwind, none was cut)"
# Every sample under main, with the 25 frames of descend: whole stacks.
"$PROBE" report --format folded "$T/lz.probe" 2>/dev/null >"$T/folded"
deep=$(awk '{ c = $NF; s = $0; k = gsub(/descend/, "", s); if (s ~ /main/ && k >= 25) d += c; t += c } END { printf "%d %d", d, t }' "$T/folded")
set -- $deep
# Outside descend: the loop's clock_gettime and exit, a few samples at most.
[ "${2:-0}" -gt 0 ] && [ $(( $1 * 100 )) -ge $(( $2 * 97 )) ]
ok $? "samples under main with 25 frames of descend: $1 of $2 (at least 97 %)"

# The vDSO's rules: the collector learns them from its own vDSO (it is no
# file).  It published them as unsupported, and a sample in clock_gettime's
# system call (from the vDSO: a process's CPU time) then had no user stack
# until libunwind came (this test failed 1 run in 5).  At 20 kHz: about 10
# such samples, each under main.
"$PROBE" record -q -F 19999 -o "$T/fast.probe" -- "$T/lz" >/dev/null 2>&1
"$PROBE" report --format perf-script "$T/fast.probe" 2>/dev/null >"$T/fast.txt"
set -- $(awk 'BEGIN { RS = "" } /__x64_sys_clock_gettime/ { n++; if (!/ main\+/) bad++ }
	END { print n + 0, bad + 0 }' "$T/fast.txt")
[ "$1" -gt 0 ] && [ "$2" = 0 ]
ok $? "samples in clock_gettime's system call, from the vDSO: $2 of $1 without their user stack (want 0)"

"$PROBE" record -q -F 999 -o "$T/lz2.probe" -- "$T/lz" dlopen >"$T/out2" 2>"$T/err2"
diag "$(cat "$T/out2")"
a=$(sed -n 's/.*after-dlopen \([0-9]*\).*/\1/p' "$T/out2")
[ "${a:-0}" -gt 0 ]; ok $? "after a dlopen that loaded code, libunwind is loaded (${a:-none} mappings)"
done_testing
