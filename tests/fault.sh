# fault.sh - helpers for the fault-matrix tests (tests/6x-*.t), sourced
# after lib.sh.
#
# USERS is "me", and "me nobody" when running as root on a machine with a
# user nobody: each test runs its cases once per user.  run_as USER CMD...
# runs a command as that user.  compare NAME USER CMD... runs CMD bare and
# under `probe record -q $PR_OPTS` and checks, in one TAP line, that
# stdout, stderr (apart from probe's own "probe:" lines) and the exit
# status are the same; the recording is left in $T/rec.probe (readable by
# the caller) and the two runs' output in $T/{bare,probe}.{out,err}.

USERS=me
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
	USERS="me nobody"
fi
PR_OPTS=${PR_OPTS:-}

run_as() {
	_u=$1
	shift
	if [ "$_u" = nobody ]; then as_nobody "$@"; else "$@"; fi
}

compare() {
	_name=$1 _u=$2
	shift 2
	rm -f "$T/rec.probe" "$T/rec.probe.old"
	# A shell in between reports a death by signal ("Segmentation fault")
	# the same way for both runs.
	run_as "$_u" sh -c '"$@"; exit $?' sh "$@" >"$T/bare.out" 2>"$T/bare.err"
	_b=$?
	run_as "$_u" "$PROBE" record -q $PR_OPTS -o "$T/rec.probe" -- \
		sh -c '"$@"; exit $?' sh "$@" >"$T/probe.out" 2>"$T/probe.err"
	_p=$?
	grep -v '^probe: ' "$T/probe.err" >"$T/probe.err2"
	grep -v '^probe: ' "$T/bare.err" >"$T/bare.err2"
	if [ "$_b" = "$_p" ] && cmp -s "$T/bare.out" "$T/probe.out" &&
	   cmp -s "$T/bare.err2" "$T/probe.err2"; then
		ok 0 "$_name ($_u): same stdout, stderr and exit status ($_p)"
	else
		ok 1 "$_name ($_u): same stdout, stderr and exit status"
		diag "  exit status: bare $_b, under probe $_p"
		diff "$T/bare.out" "$T/probe.out" | head -10 | sed 's/^/#   out: /'
		diff "$T/bare.err2" "$T/probe.err2" | head -10 | sed 's/^/#   err: /'
	fi
}

# nested USER MODE STATUS FUNCTION MIN [VAR=VALUE...]: gt_signals MODE
# (nested_exit, nested_jump) under probe record at 10 kHz, with the
# variables given: a SIGALRM handler of the program's that came while
# probe's handler ran leaves it for good (exit, siglongjmp) and works on in
# FUNCTION.  One ok: the exit status, "nested: yes", and at least MIN
# samples in FUNCTION.
nested() {
	_u=$1 _m=$2 _st=$3 _fn=$4 _min=$5
	shift 5
	rm -f "$T/rec.probe"
	run_as "$_u" env "$@" "$PROBE" record -q -F 10000 -o "$T/rec.probe" -- \
		"$GT/gt_signals" "$_m" >"$T/probe.out" 2>"$T/probe.err"
	_p=$?
	"$PROBE" report "$T/rec.probe" >"$T/rep" 2>&1
	_a=$(samples_of "$T/rep" "$_fn")
	[ "$_p" = "$_st" ] && grep -q '^nested: yes$' "$T/probe.out" && [ "$_a" -ge "$_min" ]
	ok $? "$_m${1:+ $*} ($_u): exit $_p (want $_st), $(cat "$T/probe.out"), $_a samples in $_fn (want >= $_min)"
}

# samples_of REPORT NAME: the Samples column of the row for NAME (or 0).
samples_of() {
	awk -v name="$2" '/^#/ { next }
		{ for (i = 4; i <= NF; i++) if ($i == name) { print $3; found = 1; exit } }
		END { if (!found) print 0 }' "$1"
}

# proc_lines ERRFILE: the per-process lines of a probe record summary.
proc_lines() {
	grep '^probe:   pid ' "$1"
}
