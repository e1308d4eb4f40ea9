# lib.sh - shared helpers for probe's shell tests (sourced; emits TAP).
#
# Sets BUILD, PROBE, LIBPROBE, GT (ground-truth programs) and a scratch
# directory T (removed at exit; world-writable so tests can switch to
# nobody).  Provides plan/ok/is/skip/diag/done and share helpers that read
# `probe report` output.

set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${PROBE_BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
PROBE=$BUILD/probe
LIBPROBE=$BUILD/libprobe.so
GT=$BUILD/tests
# The tree's lines are cut to $COLUMNS where it is set: tests read them whole.
unset COLUMNS
T=$(mktemp -d /tmp/probe-test.XXXXXX)
chmod 0777 "$T"
trap 'rm -rf "$T"' EXIT

# Under `make sanitize` the collector carries ASan; libprobe.so does not,
# but keep the sanitizer runtimes quiet about the programs we start.
if [ -n "${PROBE_SANITIZE:-}" ]; then
	export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
	export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi

_tap_n=0
_tap_fail=0
plan() { echo "1..$1"; }
diag() { echo "# $*"; }
ok() {	# ok CONDITION-EXIT-STATUS NAME
	_tap_n=$((_tap_n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $_tap_n - $2"
	else echo "not ok $_tap_n - $2"; _tap_fail=$((_tap_fail + 1)); fi
}
is() {	# is GOT WANT NAME
	if [ "$1" = "$2" ]; then ok 0 "$3"
	else ok 1 "$3"; diag "  got '$1', expected '$2'"; fi
}
skip() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n # skip $1"; }
skip_all() { echo "1..0 # SKIP $1"; exit 0; }
done_testing() { [ "$_tap_fail" -eq 0 ]; exit $?; }

# within VALUE WANT TOLERANCE: exit status 0 when |VALUE-WANT| <= TOLERANCE
within() { awk -v v="$1" -v w="$2" -v t="$3" 'BEGIN { d = v - w; if (d < 0) d = -d; exit !(v != "" && d <= t) }'; }

# Statistical bounds: a test must fail by chance less than once in 1,000
# runs.  A count of N samples, each in with chance P (at least), is
# Binomial(N, P).
# binom_min N P: the least m with P(count < m) <= 1/1000 (the exact lower
# tail, summed in logs): "count >= m" fails by chance < 1/1000 runs.
binom_min() {
	awk -v n="$1" -v p="$2" 'BEGIN {
		if (p >= 1) { print n; exit } if (p <= 0 || n <= 0) { print 0; exit }
		lc = 0; cdf = 0
		for (k = 0; k <= n; k++) {
			if (k) lc += log(n - k + 1) - log(k)
			cdf += exp(lc + k * log(p) + (n - k) * log(1 - p))
			if (cdf > 0.001) { print k; exit }
		}
		print n }'
}
# binom_tol N P [CHECKS]: the half-width, in percentage points, of a
# two-sided bound on a share of N samples whose expected share is P (0..1),
# outside which it falls by chance in 1 run of 1,000 however many of the
# test's CHECKS (default 1) share that chance: 3.29 binomial standard
# deviations for one check, 3.59 for three, 3.66 for four (normal
# approximation: N*P*(1-P) >= 10).
binom_tol() {
	awk -v n="$1" -v p="$2" -v k="${3:-1}" 'BEGIN {
		split("3.29 3.48 3.59 3.66 3.72 3.76 3.80 3.84 3.86 3.89", z, " ")
		printf "%.2f", z[k < 10 ? k : 10] * 100 * sqrt(p * (1 - p) / n) }'
}

# self_share REPORT NAME: the Self% of the first text-report row whose
# key columns contain the word NAME (empty when there is none).
self_share() {
	awk -v name="$2" '/^#/ { next }
		{ for (i = 4; i <= NF; i++) if ($i == name) { sub("%", "", $1); print $1; exit } }' "$1"
}

# as_nobody CMD...: run a command as the unprivileged user nobody, in a
# clean environment but for the PROBE_SIGNAL and GT_* settings of the test.
as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env -- \
		env PATH=/usr/bin:/bin HOME=/nonexistent \
		$(env | grep -E '^(PROBE_SIGNAL|GT_[A-Z_]*)=' | tr '\n' ' ') "$@"
}

# leaf_checks REPORT LABEL: three ok lines, gt_leaf's leaf_five, leaf_three
# and leaf_two at 50/30/20 % of the three leaves' samples (their calls are
# 5:3:2; the program's start and exit, about 1 % of all samples, are left
# out: they moved leaf_five's share of all 0.6 points below 50, a bias, not
# noise), each within binom_tol of the leaves' sample count for three
# checks (3.59 standard deviations: a false failure in fewer than 1 run of
# 1,000).  REPORT: rows "Self% Total% Samples NAME ..." (a `probe report`
# or `probe top` text snapshot of gt_leaf); the first row of each name.
leaf_checks() {
	set -- "$1" "$2" $(awk '!/^#/ && $4 ~ /^leaf_(five|three|two)$/ && !($4 in c) { c[$4] = $3 }
		END { print c["leaf_five"] + 0, c["leaf_three"] + 0, c["leaf_two"] + 0 }' "$1")
	_nl=$(($3 + $4 + $5))
	for _p in leaf_five:50:$3 leaf_three:30:$4 leaf_two:20:$5; do
		_f=${_p%%:*} _w=${_p#*:} _c=${_p##*:}
		_w=${_w%:*}
		_got=$(awk -v c="$_c" -v n="$_nl" 'BEGIN { if (n > 0) printf "%.2f", 100 * c / n }')
		_tol=$(binom_tol "$_nl" "$(awk -v w="$_w" 'BEGIN { print w / 100 }')" 3)
		[ "$_nl" -gt 0 ] && within "$_got" "$_w" "$_tol"
		ok $? "$2$_f: $_got % of the leaves' $_nl samples (want $_w +-$_tol)"
	done
}

# samples_in REPORT: the sample count a `probe report` header gives.
samples_in() {
	awk '/^# event:/ { for (i = 1; i <= NF; i++) if ($(i+1) ~ /^samples/) { print $i; exit } }' "$1"
}
# share_ok GOT WANT N [CHECKS]: exit 0 when the share GOT (%) of N samples
# is within binom_tol of WANT (%): a false failure in fewer than 1 run of
# 1,000 over the test's CHECKS such checks.
share_ok() {
	[ "${3:-0}" -gt 0 ] || return 1
	within "$1" "$2" "$(binom_tol "$3" "$(awk -v w="$2" 'BEGIN { print w / 100 }')" "${4:-1}")"
}
