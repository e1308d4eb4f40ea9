#!/bin/sh
# Issue 22, points 10 and 11.
#
# A damaged recording is read in time linear in its size: megabytes of
# frame headers that claim a megabyte each (the CRC of each was run over
# its claimed size, a byte at a time: 3 MiB took 85 s), of plausible ones,
# and of forged frames that check out but fail to decode at their end, are
# read in seconds, and what is intact after the damage is still reported.
#
# Names are printable in every output: function names, thread names,
# program names, argv and the recording's header, made by a generator
# written here (and, live, by a program whose symbols objcopy renames and
# whose thread renames itself) with ESC sequences, other C0 controls, raw
# C1 bytes (0x80-0x9f), C1 as UTF-8 (C2 80..C2 9F) and invalid UTF-8, come
# out of the text report, the tree, folded, perf-script, speedscope, the
# SVG and HTML flame graphs, the header, probe record's summary and probe
# top (text and terminal) as valid UTF-8 with none of them (each replaced
# by U+FFFD), while valid UTF-8 names (Japanese, C++) survive byte for byte.
. "$(dirname "$0")/lib.sh"
plan 47

command -v cc >/dev/null 2>&1 || { skip_all "no C compiler"; }

# ---- a recording generator with hostile names (wire.h, CRCs: version 2) ----
cat >"$T/gen_names.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "probe/wire.h"

static FILE *out;
static uint8_t fb[1 << 16];

/* A frame and its CRC-32, as probe record writes it. */
static void emit(struct probe_wbuf *w)
{
	uLong c = crc32(0L, w->p, (uInt)w->len);
	uint8_t cb[4] = { (uint8_t)c, (uint8_t)(c >> 8), (uint8_t)(c >> 16), (uint8_t)(c >> 24) };
	if (!w->ok || fwrite(w->p, 1, w->len, out) != w->len || fwrite(cb, 1, 4, out) != 4)
		exit(1);
}

/* Function names (JIT code's, as a perf map names it): hostile, then good. */
static const char *const fn[] = {
	"esc\x1b[31mRED\x1b]2;PWNED\x07",
	"c0\x01\x08\ttab\nnl\rcr\x7f" "del",
	"rawc1\x9b" "31m\x85\x9f",
	"utf8c1\xc2\x9b" "31m\xc2\x80\xc2\x9f",
	"inv\xff\xfe\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\xe3\x81",
	"関数_日本語",
	"ns::Foo<int>::bar(int) const",
};
#define NFN (sizeof(fn) / sizeof(fn[0]))
#define PID 4242

int main(int argc, char **argv)
{
	int batches = argc > 2 ? atoi(argv[2]) : 1;
	struct probe_wbuf w;
	size_t at;
	out = fopen(argv[1], "wb");
	if (!out)
		return 1;
	probe_wbuf_init(&w, fb, sizeof(fb));
	probe_put_file_header(&w, PROBE_FILE_VERSION);
	fwrite(w.p, 1, w.len, out);

	probe_wbuf_init(&w, fb, sizeof(fb));
	at = probe_frame_begin(&w, PROBE_F_INFO, 1);
	probe_put_u64(&w, 1000000000ull);
	probe_put_u64(&w, 1700000000000000000ull);
	probe_put_str(&w, "host\x1b[1m\x9b\xc2\x90");
	probe_put_str(&w, "Linux");
	probe_put_str(&w, "6.0\x1b[2J");
	probe_put_str(&w, "#1 \xff");
	probe_put_str(&w, "x86_64\xc2\x85");
	probe_put_u16(&w, 4);
	probe_put_str(&w, "probe");
	probe_put_str(&w, "record");
	probe_put_str(&w, "\x1b]2;PWNED\x07");
	probe_put_str(&w, "引数");
	probe_frame_end(&w, at);
	emit(&w);

	probe_wbuf_init(&w, fb, sizeof(fb));
	at = probe_frame_begin(&w, PROBE_F_HELLO, PID);
	probe_put_u32(&w, PROBE_WIRE_VERSION);
	probe_put_u32(&w, 1);
	probe_put_u32(&w, 1);                   /* PERF_TYPE_SOFTWARE */
	probe_put_u64(&w, 0);                   /* cpu-clock */
	probe_put_u8(&w, 1);
	probe_put_u64(&w, 999);
	probe_put_u64(&w, 1000000000ull);
	probe_put_str(&w, "cpu-clock\x1b[5m\xc2\x9b");
	probe_put_str(&w, "/tmp/ex\x1b[2J\x9b" "E\xc2\x85");
	probe_put_str(&w, "co\x1b]2;X\x07\x9b");
	probe_put_u16(&w, 2);
	probe_put_str(&w, "arg\x1b[1m\xff");
	probe_put_str(&w, "引数");
	probe_frame_end(&w, at);
	emit(&w);

	const char *threads[2] = { "t\x1b]2;PWNED\x07\x9b\xc2\x9b\xff", "ワーカー" };
	for (int t = 0; t < 2; t++) {
		probe_wbuf_init(&w, fb, sizeof(fb));
		at = probe_frame_begin(&w, PROBE_F_THREAD, PID);
		probe_put_u32(&w, PID + t);
		probe_put_str(&w, threads[t]);
		probe_frame_end(&w, at);
		emit(&w);
	}
	for (unsigned i = 0; i < NFN; i++) {
		probe_wbuf_init(&w, fb, sizeof(fb));
		at = probe_frame_begin(&w, PROBE_F_JIT, PID);
		probe_put_u64(&w, 0x10000000ull + 0x1000ull * i);
		probe_put_u64(&w, 0x100);
		probe_put_u8(&w, PROBE_JIT_PERFMAP);
		probe_put_str(&w, fn[i]);
		probe_frame_end(&w, at);
		emit(&w);
	}
	/* Each function the leaf of 10 samples of the hostile thread, called
	 * by the next; the good thread in 関数_日本語 alone. */
	uint64_t t0 = 1000000000ull;
	for (int b = 0; b < batches; b++) {
		probe_wbuf_init(&w, fb, sizeof(fb));
		at = probe_frame_begin(&w, PROBE_F_SAMPLES, PID);
		probe_put_u64(&w, t0);
		probe_put_uv(&w, 10 * (NFN + 1));
		for (unsigned i = 0; i <= NFN; i++)
			for (int k = 0; k < 10; k++) {
				uint64_t leaf = 0x10000000ull + 0x1000ull * (i < NFN ? i : 5) + 0x10;
				uint64_t caller = 0x10000000ull + 0x1000ull * ((i + 1) % NFN) + 0x20;
				probe_put_uv(&w, i < NFN ? PID : PID + 1);
				probe_put_uv(&w, (uint64_t)(i * 10 + k) * 1001001);
				probe_put_uv(&w, 1001001);
				probe_put_uv(&w, 0);
				probe_put_uv(&w, i < NFN ? 2 : 1);
				probe_put_sv(&w, (int64_t)leaf);
				if (i < NFN)
					probe_put_sv(&w, (int64_t)(caller - leaf));
			}
		probe_frame_end(&w, at);
		emit(&w);
		t0 += 10 * (NFN + 1) * 1001001ull;
	}
	probe_wbuf_init(&w, fb, sizeof(fb));
	at = probe_frame_begin(&w, PROBE_F_EXIT, PID);
	probe_put_u32(&w, 0);
	probe_put_u64(&w, (uint64_t)batches * 10 * (NFN + 1));
	probe_put_u32(&w, 2);
	probe_frame_end(&w, at);
	emit(&w);
	return fclose(out) == 0 ? 0 : 1;
}
EOF
cc -O1 -I"$ROOT/include" -o "$T/gen_names" "$T/gen_names.c" -lz 2>"$T/cc.err"
ok $? "the generator builds"
[ -x "$T/gen_names" ] || sed 's/^/#   /' "$T/cc.err"

# clean FILE...: every file valid UTF-8 with no control character but tab
# and newline, no C1 (U+0080-U+009F) and no U+FFFE/U+FFFF.
clean() {
	perl -e '
		use Encode qw(decode FB_CROAK);
		my $bad = 0;
		for my $f (@ARGV) {
			open(my $h, "<:raw", $f) or die "$f: $!";
			local $/; my $d = <$h>;
			if ($d =~ /([\x00-\x08\x0b-\x1f\x7f])/) {
				printf "# %s: control byte 0x%02x at byte %d\n", $f, ord($1), $-[0];
				$bad++; next;
			}
			my $s = eval { decode("UTF-8", $d, FB_CROAK) };
			if (!defined $s) { print "# $f: not valid UTF-8: $@"; $bad++; next; }
			if ($s =~ /([\x{80}-\x{9f}\x{fffe}\x{ffff}])/) {
				printf "# %s: U+%04X at character %d\n", $f, ord($1), $-[0];
				$bad++;
			}
		}
		exit($bad ? 1 : 0)' "$@"
}
# has FILE TEXT: FILE holds TEXT, byte for byte.
has() { grep -qF -- "$2" "$1"; }

# elapsed CMD...: run it (at most 60 s), its seconds in $secs, status in $st.
elapsed() {
	_t0=$(date +%s.%N)
	timeout 60 "$@"
	st=$?
	secs=$(echo "$(date +%s.%N) $_t0" | awk '{ printf "%.2f", $1 - $2 }')
}

# ---- point 10: damaged recordings in linear time ----------------------------
hdr2='PROBEREC\002\000\000\000\020\000\000\000'
hdr1='PROBEREC\001\000\000\000\020\000\000\000'
# junk PATTERN MIB: the 8-byte pattern over MIB MiB (perl, fast)
junk() { perl -e 'print pack("H*", $ARGV[0]) x ($ARGV[1] * 131072)' "$1" "$2"; }

# The issue's file: frame sizes of 1 MiB (00 00 10 00) and nothing else.
{ printf "$hdr2"; junk 0000100000001000 8; } >"$T/sizes.probe"
elapsed "$PROBE" report "$T/sizes.probe" >/dev/null 2>"$T/err"
[ "$st" -eq 1 ] && grep -q '^probe: .*not one frame of it can be read' "$T/err" &&
	awk -v s="$secs" 'BEGIN { exit !(s < 10) }'
ok $? "8 MiB of frame headers: refused in $secs s (exit $st; under 10 s; was 85 s for 3 MiB)"

# Plausible ones: a 1 MiB HELLO header every 8 bytes (the CRC, or the
# decoder in version 1, at every 8th byte).
for v in 1 2; do
	eval "h=\$hdr$v"
	{ printf "$h"; junk 0000100001000000 16; } >"$T/hello$v.probe"
	elapsed "$PROBE" report "$T/hello$v.probe" >/dev/null 2>"$T/err"
	[ "$st" -eq 1 ] && awk -v s="$secs" 'BEGIN { exit !(s < 10) }'
	ok $? "16 MiB of plausible 1 MiB HELLO headers (version $v): read in $secs s (exit $st)"
done

# A forgery: 1 MiB SAMPLES frames every 28 bytes whose bodies are valid
# samples up to their end (each decode reads a megabyte, then fails).
perl -e 'my $per = pack("H*", "ffff0f0004000000" . "00" x 12 . "ffff0f" . "0100000013");
	print $per x int($ARGV[0] * 1048576 / 28)' 16 >"$T/forged.body"
{ printf "$hdr1"; cat "$T/forged.body"; } >"$T/forged.probe"
elapsed "$PROBE" report "$T/forged.probe" >/dev/null 2>"$T/err"
[ "$st" -eq 1 ] && grep -q '^probe: .*forged' "$T/err" && awk -v s="$secs" 'BEGIN { exit !(s < 10) }'
ok $? "16 MiB of forged SAMPLES frames: given up in $secs s, saying so: $(head -c 200 "$T/err")"

# Recovery kept: 8 MiB of plausible headers in the middle of a good
# recording; every sample around them is still reported, and one warning
# says what was skipped.
"$T/gen_names" "$T/good.probe" 400
ok $? "a recording of 400 batches of samples"
"$PROBE" report "$T/good.probe" >"$T/good.txt" 2>"$T/err"
all=$(sed -n 's/^# event: .* \([0-9][0-9]*\) samples, .*/\1/p' "$T/good.txt")
[ "${all:-0}" -eq 32000 ]
ok $? "it reports all its 32000 samples (${all:-none})"
perl -e '
	local $/; open(my $f, "<:raw", $ARGV[0]) or die; my $d = <$f>;
	my ($o, $mid) = (16, length($d) / 2);
	$o += unpack("V", substr($d, $o, 4)) + 4 while $o < $mid;
	print substr($d, 0, $o), pack("H*", "0000100001000000") x (8 * 131072), substr($d, $o)' \
	"$T/good.probe" >"$T/middle.probe"
elapsed "$PROBE" report "$T/middle.probe" >"$T/out" 2>"$T/err"
n=$(sed -n 's/^# event: .* \([0-9][0-9]*\) samples, .*/\1/p' "$T/out")
[ "$st" -eq 0 ] && [ "${n:-0}" -eq 32000 ] && awk -v s="$secs" 'BEGIN { exit !(s < 10) }'
ok $? "8 MiB of damage in the middle: all ${n:-no} samples around it reported in $secs s (exit $st)"
grep -q "^probe: warning: .*middle.probe: 1 damaged part of the recording (8388608 bytes in all, the first at byte [0-9]*) could not be read; skipped" "$T/err"
ok $? "one warning says what was skipped: $(head -n1 "$T/err")"

# ---- point 11: names printable in every output ------------------------------
"$T/gen_names" "$T/names.probe" 1
ok $? "a recording with hostile and good names"
P="$PROBE report -q"
fail=0
for f in text tree folded perf-script speedscope svg html; do
	$P --format $f -o "$T/names.$f" "$T/names.probe" 2>>"$T/err" || fail=1
done
"$PROBE" report --sort comm,pid,tid,exe,sym -o "$T/names.cols" "$T/names.probe" 2>>"$T/err" || fail=1
"$PROBE" report --header -o "$T/names.header" "$T/names.probe" 2>>"$T/err" || fail=1
"$PROBE" report --header-only -o "$T/names.hdronly" "$T/names.probe" 2>>"$T/err" || fail=1
"$PROBE" report -g caller --children -o "$T/names.children" "$T/names.probe" 2>>"$T/err" || fail=1
"$PROBE" report -G -o "$T/names.callee" "$T/names.probe" 2>>"$T/err" || fail=1
"$PROBE" report --format svg --sort comm --title "$(printf 'ti\033[1m\302\233tle')" \
	-o "$T/names.svgcomm" "$T/names.probe" 2>>"$T/err" || fail=1
"$PROBE" report --format html --sort comm -o "$T/names.htmlcomm" "$T/names.probe" 2>>"$T/err" || fail=1
"$PROBE" report --format speedscope --sort comm -o "$T/names.sscomm" "$T/names.probe" 2>>"$T/err" || fail=1
ok $fail "every format written"
[ $fail -eq 0 ] || sed 's/^/#   /' "$T/err" | head -5

for o in text tree folded perf-script speedscope svg html cols header hdronly children \
	 callee svgcomm htmlcomm sscomm; do
	clean "$T/names.$o"
	ok $? "$o: valid UTF-8, no control character, no C1"
done
clean "$T/err"
ok $? "and the warnings on stderr"

# Valid names survive byte for byte; the hostile ones are there, replaced.
fail=0
for o in text tree folded perf-script speedscope svg html; do
	has "$T/names.$o" '関数_日本語' || { fail=1; diag "$o lacks 関数_日本語"; }
done
ok $fail "関数_日本語 (a Japanese function name) survives in every format"
has "$T/names.text" 'ns::Foo<int>::bar(int) const' && has "$T/names.folded" 'ns::Foo<int>::bar(int) const' &&
	has "$T/names.svg" 'ns::Foo&lt;int&gt;::bar(int) const'
ok $? "so does a C++ name (escaped as XML in the SVG)"
has "$T/names.cols" 'ワーカー' && has "$T/names.perf-script" 'ワーカー' && has "$T/names.sscomm" 'ワーカー' &&
	has "$T/names.svgcomm" 'ワーカー'
ok $? "and a Japanese thread name (text --sort comm, perf-script, speedscope, SVG)"
R=$(printf '\357\277\275')      # U+FFFD
has "$T/names.text" "esc${R}[31mRED${R}]2;PWNED${R}" && has "$T/names.text" "rawc1${R}31m${R}${R}" &&
	has "$T/names.text" "utf8c1${R}31m${R}${R}" && has "$T/names.cols" "t${R}]2;PWNED${R}${R}${R}${R}"
ok $? "the hostile names are shown with U+FFFD for each control character and bad byte"
has "$T/names.hdronly" "host${R}[1m${R}${R}" && has "$T/names.hdronly" "引数" &&
	has "$T/names.hdronly" "co${R}]2;X${R}${R}"
ok $? "the header: host, argv and comm, replaced and kept alike"

# ---- live: a program whose symbols and thread have hostile names ------------
cat >"$T/gt_names.c" <<'EOF'
#include <pthread.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile double sink;
static double secs;

__attribute__((noinline)) void spin_bad(double until)
{
	while (now() < until)
		for (int i = 0; i < 1000; i++)
			sink += i;
}

__attribute__((noinline)) void spin_good(double until)
{
	while (now() < until)
		for (int i = 0; i < 1000; i++)
			sink += i;
}

static void *worker(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "t\x1b]2;PWNED\x07\x9b\xc2\x9b\xff");
	double end = now() + secs;
	while (now() < end) {
		spin_bad(now() + 0.01);
		spin_good(now() + 0.01);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	secs = argc > 1 ? atof(argv[1]) : 1;
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	return 0;
}
EOF
BAD=$(printf 'gt\033]2;PWNED\007\302\233\233x')
cc -O1 -g0 -o "$T/gt_names" "$T/gt_names.c" -lpthread &&
objcopy --redefine-sym "spin_bad=$(printf 'bad\033[31m\302\233\233\377X')" \
	--redefine-sym "spin_good=関数_日本語" "$T/gt_names" "$T/$BAD"
ok $? "a program with hostile symbol, thread and file names (cc, objcopy)"

"$PROBE" record -o "$T/live.probe" -- "$T/$BAD" 0.6 >/dev/null 2>"$T/rec.err"
ok $? "probe record runs it"
clean "$T/rec.err"
ok $? "probe record's summary: valid UTF-8, no control character, no C1"
"$PROBE" report -q -o "$T/live.txt" "$T/live.probe" &&
"$PROBE" report -q --sort comm,sym -o "$T/live.cols" "$T/live.probe" &&
"$PROBE" report --header-only -o "$T/live.hdr" "$T/live.probe" &&
"$PROBE" report --format perf-script -o "$T/live.ps" "$T/live.probe" &&
clean "$T/live.txt" "$T/live.cols" "$T/live.hdr" "$T/live.ps"
ok $? "its report, columns, header and perf-script: clean"
has "$T/live.txt" "bad${R}[31m${R}${R}${R}X" && has "$T/live.txt" '関数_日本語' &&
	has "$T/live.cols" "t${R}]2;PWNED${R}${R}${R}${R}"
ok $? "the symbols and the thread's name are there, replaced or kept"

"$PROBE" top -d 0.3 --exit -- "$T/$BAD" 1 >"$T/top.out" 2>"$T/top.err"
ok $? "probe top (text mode, its snapshots on stderr) runs it"
clean "$T/top.out" "$T/top.err"
ok $? "probe top's snapshots and messages: clean"
has "$T/top.err" '関数_日本語' && has "$T/top.err" "bad${R}[31m${R}${R}${R}X"
ok $? "and show 関数_日本語, and the hostile name replaced"

# The terminal view, in tmux: what probe top writes to the terminal
# (pipe-pane: the raw bytes, curses' own escapes and all) carries none of
# the names' sequences.
if command -v tmux >/dev/null 2>&1; then
	export TMUX_TMPDIR=$T/tmux
	mkdir -p "$TMUX_TMPDIR"
	S=probe94$$
	tmux -u new-session -d -s "$S" -x 150 -y 40 \
		"cd '$T' && LANG=C.UTF-8 LC_ALL=C.UTF-8 '$PROBE' top -d 0.3 -- '$T/$BAD' 3; sleep 30"
	tmux pipe-pane -t "$S" -o "cat >>'$T/raw'"
	n=50
	while [ $n -gt 0 ] && ! tmux capture-pane -p -t "$S" | grep -q 'program exited'; do
		sleep 0.2; n=$((n - 1))
	done
	tmux capture-pane -p -t "$S" >"$T/screen"
	tmux kill-session -t "$S" 2>/dev/null
	tmux kill-server 2>/dev/null
	grep -q '関数_日本語' "$T/screen"
	ok $? "probe top's screen shows 関数_日本語 as it is"
	perl -e '
		use Encode qw(decode FB_CROAK);
		local $/; open(my $h, "<:raw", $ARGV[0]) or die; my $d = <$h>;
		exit 1 if $d =~ /\x1b\]2;PWNED|\x1b\[31m|\x9b31m/;
		my $s = eval { decode("UTF-8", $d, FB_CROAK) } // exit 2;
		exit($s =~ /[\x{80}-\x{9f}]/ ? 3 : 0)' "$T/raw"
	ok $? "and writes none of the names' sequences, no C1, only UTF-8 ($(wc -c <"$T/raw") bytes)"
else
	skip "tmux is not installed"
	skip "tmux is not installed"
fi

# ---- point 10, again: frames that check out but do not decode ---------------
# Frames nested in one another whose CRCs all match but which do not decode:
# the CRC was run over each (1 MiB every 8 bytes: 6 s a MiB, 100 MiB in 10
# minutes), since the CRCs kept while skipping began only at one that did
# not match; and a HELLO right after damage was skipped (flags not 0: every
# HELLO has PROBE_HELLO_KSTATE), its process shown as [pid N].
cat >"$T/gen_dmg.c" <<'EOF'
/*
 * gen_dmg OUT nest8|thread MIB: a recording (version 2) of MIB blocks of
 * 1 MiB of MAP frames nested in one another, whose CRCs all match but which
 * do not decode (start >= end): one every 8 bytes (nest8), or each with a
 * small THREAD frame that decodes at the start of its body (thread).
 * gen_dmg OUT hello: process 100's HELLO and 30 samples, 37 bytes of damage,
 * then process 200's HELLO (flags PROBE_HELLO_KSTATE, as every HELLO has),
 * 50 samples and its EXIT.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "probe/wire.h"

static FILE *out;

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void hdr(uint8_t *p, uint32_t size, unsigned type)
{
	put32(p, size);
	p[4] = (uint8_t)type;
	p[5] = p[6] = p[7] = 0;
	put32(p + 8, 0);
}

/* A frame and its CRC, as probe record writes them. */
static void emit(struct probe_wbuf *w)
{
	uint8_t c[4];
	put32(c, (uint32_t)crc32(0L, w->p, (uInt)w->len));
	if (!w->ok || fwrite(w->p, 1, w->len, out) != w->len || fwrite(c, 1, 4, out) != 4)
		exit(1);
}

static void process(uint32_t pid, unsigned flags, const char *comm, int samples)
{
	static uint8_t fb[1 << 16];
	struct probe_wbuf w;
	probe_wbuf_init(&w, fb, sizeof(fb));
	size_t at = probe_frame_begin(&w, PROBE_F_HELLO, pid);
	probe_put_u32(&w, PROBE_WIRE_VERSION);
	probe_put_u32(&w, 1);
	probe_put_u32(&w, 1);                   /* PERF_TYPE_SOFTWARE */
	probe_put_u64(&w, 0);                   /* cpu-clock */
	probe_put_u8(&w, 1);
	probe_put_u64(&w, 999);
	probe_put_u64(&w, 1000000000ull);
	probe_put_str(&w, "cpu-clock");
	probe_put_str(&w, comm);
	probe_put_str(&w, comm);
	probe_put_u16(&w, 1);
	probe_put_str(&w, comm);
	probe_frame_end(&w, at);
	fb[at + 6] = (uint8_t)flags;
	emit(&w);
	probe_wbuf_init(&w, fb, sizeof(fb));
	at = probe_frame_begin(&w, PROBE_F_SAMPLES, pid);
	probe_put_u64(&w, 1000000000ull);
	probe_put_uv(&w, (uint64_t)samples);
	for (int k = 0; k < samples; k++) {
		probe_put_uv(&w, pid);
		probe_put_uv(&w, 1001001);
		probe_put_uv(&w, 1001001);
		probe_put_uv(&w, 0);
		probe_put_uv(&w, 1);
		probe_put_sv(&w, 0x400000 + 16 * pid);
	}
	probe_frame_end(&w, at);
	emit(&w);
}

static int hello(void)
{
	uint8_t fh[PROBE_FILE_HDR], junk[37];
	struct probe_wbuf w;
	probe_wbuf_init(&w, fh, sizeof(fh));
	probe_put_file_header(&w, PROBE_FILE_VERSION);
	fwrite(fh, 1, sizeof(fh), out);
	process(100, PROBE_HELLO_KSTATE | PROBE_HELLO_KERNEL, "before", 30);
	memset(junk, 0x55, sizeof(junk));
	fwrite(junk, 1, sizeof(junk), out);
	process(200, PROBE_HELLO_KSTATE | PROBE_HELLO_KERNEL, "afterdamage", 50);
	return 0;
}

int main(int argc, char **argv)
{
	out = fopen(argv[1], "wb");
	if (!out || argc < 3)
		return 1;
	if (strcmp(argv[2], "hello") == 0)
		return hello() || fclose(out) != 0;
	int thread = strcmp(argv[2], "thread") == 0;
	int mib = argc > 3 ? atoi(argv[3]) : 1;
	const uint32_t blk = 1u << 20, s0 = blk - 64, th = 18;  /* THREAD: tid, "" */
	const uint32_t step = thread ? PROBE_FRAME_HDR + th + PROBE_FILE_CRC : 8;
	const uint32_t tail = thread ? PROBE_FILE_CRC : 8;      /* after the inner frame */
	const uint32_t shrink = step + tail;
	uint8_t *b = calloc(1, blk);
	if (!b)
		return 1;
	uint32_t n = 0;
	while ((n + 1) * shrink + PROBE_FRAME_HDR + th + 8 < s0 - n * step)
		n++;
	for (uint32_t i = 0; i < n; i++) {
		hdr(b + step * i, s0 - shrink * i, PROBE_F_MAP);
		if (thread) {
			uint8_t *t = b + step * i + PROBE_FRAME_HDR;
			hdr(t, th, PROBE_F_THREAD);     /* tid 0, empty name */
			put32(t + th, (uint32_t)crc32(0L, t, th));
		}
	}
	/* The innermost CRC first: a frame is its first step bytes, the frame
	 * in it and tail bytes (its CRC's), CRC-32 of which is combined. */
	uLong c = crc32(0L, b + step * (n - 1), s0 - shrink * (n - 1));
	put32(b + step * (n - 1) + s0 - shrink * (n - 1), (uint32_t)c);
	for (uint32_t i = n - 1; i-- > 0;) {
		size_t end = step * i + s0 - shrink * i;
		c = crc32_combine(crc32(0L, b + step * i, step), c, s0 - shrink * (i + 1));
		c = crc32_combine(c, crc32(0L, b + end - tail, tail), tail);
		put32(b + end, (uint32_t)c);
	}
	uint8_t fh[PROBE_FILE_HDR];
	struct probe_wbuf w;
	probe_wbuf_init(&w, fh, sizeof(fh));
	probe_put_file_header(&w, PROBE_FILE_VERSION);
	fwrite(fh, 1, sizeof(fh), out);
	for (int k = 0; k < mib; k++)
		fwrite(b, 1, blk, out);
	return fclose(out) == 0 ? 0 : 1;
}
EOF
cc -O1 -I"$ROOT/include" -o "$T/gen_dmg" "$T/gen_dmg.c" -lz 2>"$T/cc.err" &&
	"$T/gen_dmg" "$T/nest8.probe" nest8 16 && "$T/gen_dmg" "$T/nestth.probe" thread 16 &&
	"$T/gen_dmg" "$T/hello.probe" hello
ok $? "the generator of nested frames and of damage before a HELLO builds and runs"
[ -x "$T/gen_dmg" ] || sed 's/^/#   /' "$T/cc.err"

# Read through (damage, not given up as forged): the frames after them are
# reported.
{ cat "$T/nest8.probe"; tail -c +17 "$T/hello.probe"; } >"$T/nest8good.probe"
elapsed "$PROBE" report --sort pid,comm "$T/nest8good.probe" >"$T/out" 2>"$T/err"
[ "$st" -eq 0 ] && grep -Eq ' 50 +200:afterdamage  afterdamage$' "$T/out" &&
	grep -Eq ' 30 +100:before  +before$' "$T/out" && ! grep -q forged "$T/err" &&
	awk -v s="$secs" 'BEGIN { exit !(s < 10) }'
ok $? "16 MiB of nested frames 8 bytes apart whose CRCs match, then frames: read in $secs s (exit $st; under 10 s; was 6 s a MiB), all 80 samples after them reported"
[ "$st" -eq 0 ] || sed 's/^/#   /' "$T/err"

# Each nested frame after a small one that decodes: checked whole, as a
# frame after one that decodes is; the CRCs count as what it cost.
elapsed "$PROBE" report "$T/nestth.probe" >/dev/null 2>"$T/err"
grep -q '^probe: warning: .*read up to byte [0-9]* only: .*forged' "$T/err" &&
	awk -v s="$secs" 'BEGIN { exit !(s < 10) }'
ok $? "16 MiB of them each after a THREAD frame: given up in $secs s (exit $st), saying so: $(grep forged "$T/err" | head -c 200)"

elapsed "$PROBE" report --sort pid,comm "$T/hello.probe" >"$T/out" 2>"$T/err"
[ "$st" -eq 0 ] && grep -Eq '^ +[0-9.]+% +[0-9.]+% +50 +200:afterdamage  afterdamage$' "$T/out" &&
	grep -Eq '^ +[0-9.]+% +[0-9.]+% +30 +100:before  +before$' "$T/out"
ok $? "damage right before a HELLO (flags KSTATE, KERNEL): its process's 50 samples reported under its name"
[ "$st" -eq 0 ] || sed 's/^/#   /' "$T/out" "$T/err"
grep -q 'damaged part of the recording (37 bytes in all, the first at byte 521)' "$T/err" &&
	! grep -q 'before its HELLO' "$T/err"
ok $? "only the 37 bytes of damage skipped, no process without its HELLO: $(tail -n1 "$T/err")"
done_testing
