#!/bin/sh
# --format perf-script, read as `perf script` text is read.  FlameGraph's
# stackcollapse-perf.pl is not packaged in Debian, so the reader is
# speedscope's "linux perf" importer (npm package speedscope, its app in
# headless chromium; scripts/install-deps installs it):
#   - perf's layout: a header line per sample, then its frames leaf first,
#     "\t ADDR SYMBOL+0xOFF (MODULE)", then an empty line;
#   - speedscope imports it as perf script output, one profile per thread,
#     and the function each sample lands in, weighted by its period, gives
#     probe report's shares within 0.5 points (speedscope itself weighs a
#     sample by the wall time around it, shown too: time off the CPU moves
#     those shares by up to its own share of the span);
#   - the header and frame lines of a real `perf script` of the same program
#     match the same expressions (speedscope's and stackcollapse-perf.pl's)
#     with the same kind of fields, and speedscope reads both alike.
. "$(dirname "$0")/lib.sh"

NPM=$BUILD/npm
[ -d "$NPM/node_modules/speedscope" ] || NPM=$ROOT/build/npm
for m in speedscope ajv puppeteer-core; do
	[ -d "$NPM/node_modules/$m" ] ||
		skip_all "no npm $m in $NPM (scripts/install-deps installs it; the npm registry was not reachable then?)"
done
command -v node >/dev/null 2>&1 || skip_all "no node (Debian nodejs): run scripts/install-deps"
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || skip_all "no Chromium (Debian chromium): run scripts/install-deps"
plan 19
export NM="$NPM/node_modules" ROOT

cat >"$T/perfread.cjs" <<'JS'
const fs = require('fs'), path = require('path');
const NM = process.env.NM, APP = NM + '/speedscope/dist/release';
const [cmd, ...args] = process.argv.slice(2);
const load = f => JSON.parse(fs.readFileSync(f, 'utf8'));

// The readers' own expressions for `perf script` text, as they are in
// speedscope's src/import/linux-tools-perf.ts and FlameGraph's
// stackcollapse-perf.pl (header: comm, pid/tid; time; event; period).
const SS = {start: /^(\S.+?)\s+(\d+)(?:\/?(\d+))?\s+/, time: /\s+(\d+\.\d+):\s+/,
	    event: /(\S+):\s*$/, frame: /^\s*(\w+)\s*(.+) \((\S*)\)/};
const FG = {start: /^(\S.+?)\s+(\d+)\/*(\d+)*\s+/, period: /:\s*(\d+)*\s+(\S+):\s*$/,
	    frame: /^\s*(\w+)\s*(.+) \((.*)\)/};

// The samples of perf script text: header fields as speedscope takes them,
// the period as stackcollapse-perf.pl takes it, the frame lines.
function samples(file) {
	const out = [];
	for (const block of fs.readFileSync(file, 'utf8').split('\n\n')) {
		const lines = block.split('\n').filter(l => l !== '' && !/^\s*#/.test(l));
		if (!lines.length) continue;
		const h = lines[0], s = SS.start.exec(h), t = SS.time.exec(h), e = SS.event.exec(h),
		      f = FG.start.exec(h), p = FG.period.exec(h);
		const name = s ? [s[1], s[3] ? `pid: ${s[2]}` : null, `tid: ${s[3] || s[2]}`]
			.filter(x => x).join(' ') : null;
		out.push({header: h, name, comm: s && s[1], pid: s && s[3] ? +s[2] : null,
			  tid: s ? +(s[3] || s[2]) : null, time: t ? parseFloat(t[1]) : null,
			  event: e && e[1], period: p && p[1] ? +p[1] : 1, fg: !!(f && p),
			  fgComm: f && f[1], frames: lines.slice(1)});
	}
	return out;
}

// An exported (evented) profile as segments [at, weight, leaf name].
function segments(doc, p) {
	const out = [], stack = [];
	let last = p.startValue;
	for (const e of p.events) {
		if (e.at > last && stack.length)
			out.push([last, e.at - last, doc.shared.frames[stack[stack.length - 1]].name]);
		last = Math.max(last, e.at);
		if (e.type === 'O') stack.push(e.frame); else stack.pop();
	}
	return out;
}

const pct = (m, total) => [...m].map(([n, w]) => [n, (100 * w / total).toFixed(2)]);

const cmds = {
	// layout TEXT: how many headers and frame lines each reader's expressions
	// take, and the fields of the first header
	layout([file]) {
		const ss = samples(file);
		const n = ss.length, frames = ss.reduce((a, s) => a + s.frames.length, 0);
		const hs = ss.filter(s => s.name && s.time !== null && s.event).length;
		const hf = ss.filter(s => s.fg).length;
		const fs_ = ss.reduce((a, s) => a + s.frames.filter(l => SS.frame.test(l)).length, 0);
		const ff = ss.reduce((a, s) => a + s.frames.filter(l => FG.frame.test(l)).length, 0);
		console.log(`samples ${n} speedscope-headers ${hs} stackcollapse-headers ${hf}`);
		console.log(`frames ${frames} speedscope-frames ${fs_} stackcollapse-frames ${ff}`);
		const s = ss[0] || {};
		console.log(`first comm=${s.comm} pid=${s.pid} tid=${s.tid} time=${s.time} ` +
			    `period=${s.period} event=${s.event} fgcomm=${s.fgComm}`);
	},
	// attribute EXPORT TEXT: the leaf speedscope gave each sample (the
	// segment of its profile's timeline holding the sample's time), shares
	// weighted by the samples' periods; and speedscope's own shares (its
	// weights: wall time) with the span's time off the CPU
	attribute([exp, text]) {
		const doc = load(exp), byName = new Map(doc.profiles.map(p => [p.name, p]));
		const segs = new Map(), t0 = new Map();
		const self = new Map(), wall = new Map(), prof = new Map();
		let total = 0, lost = 0, wallTotal = 0;
		for (const s of samples(text)) {
			const p = byName.get(s.name);
			if (!p || s.time === null) { lost++; continue; }
			if (!segs.has(s.name)) { segs.set(s.name, segments(doc, p)); t0.set(s.name, s.time); }
			const sg = segs.get(s.name), x = s.time - t0.get(s.name);
			let lo = 0, hi = sg.length - 1;          /* the last segment starting at or before x */
			while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (sg[mid][0] <= x + 1e-9) lo = mid; else hi = mid - 1; }
			if (!sg.length) { lost++; continue; }
			self.set(sg[lo][2], (self.get(sg[lo][2]) || 0) + s.period);
			prof.set(s.name, (prof.get(s.name) || 0) + s.period);
			total += s.period;
		}
		for (const p of doc.profiles)
			for (const [, w, leaf] of segments(doc, p)) { wall.set(leaf, (wall.get(leaf) || 0) + w); wallTotal += w; }
		for (const [n, v] of pct(self, total)) console.log(`self\t${n}\t${v}`);
		for (const [n, v] of pct(wall, wallTotal)) console.log(`wall\t${n}\t${v}`);
		for (const [n, v] of pct(prof, total)) console.log(`profile\t${n}\t${v}`);
		/* periods are ns; speedscope's unit for perf text is seconds */
		console.log(`offcpu\t${Math.max(0, 100 * (1 - total / 1e9 / wallTotal)).toFixed(2)}`);
		console.log(`unattributed\t${lost}`);
	},
	// import IN OUT ...: speedscope's app reads each IN; its export to OUT
	async import(pairs) {
		const imp = require(process.env.ROOT + '/tests/speedscope_import.js');
		process.exit((await imp.importAll(NM, pairs)) ? 1 : 0);
	},
};

Promise.resolve(cmds[cmd] ? cmds[cmd](args) : (console.error('unknown command ' + cmd), process.exit(2)))
	.catch(e => { console.error(e.stack || String(e)); process.exit(1); });
JS
js() { node "$T/perfread.cjs" "$@"; }
# field FILE KIND NAME: the value of the tab-separated line KIND NAME VALUE
field() { awk -F '\t' -v k="$2" -v n="$3" '$1 == k && $2 == n { print $3; exit }' "$1"; }
# word FILE KEY: the word after KEY in `layout` output
word() { awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }' "$1"; }

"$PROBE" record -q -F 4999 -o "$T/leaf.probe" -- "$GT/gt_leaf" 300 >/dev/null 2>"$T/err" &&
"$PROBE" record -q -F 4999 -o "$T/thr.probe" -- "$GT/gt_threads" 200 >/dev/null 2>>"$T/err"
ok $? "recordings of gt_leaf and gt_threads"
"$PROBE" report --format perf-script "$T/leaf.probe" >"$T/leaf.txt" 2>>"$T/err" &&
"$PROBE" report --format perf-script -o "$T/thr.txt" "$T/thr.probe" 2>>"$T/err" &&
"$PROBE" report "$T/leaf.probe" >"$T/leaf.report" 2>>"$T/err" &&
"$PROBE" report "$T/thr.probe" >"$T/thr.report" 2>>"$T/err" &&
"$PROBE" report --sort comm "$T/thr.probe" >"$T/thr.comm" 2>>"$T/err"
ok $? "probe report --format perf-script, and the text reports to compare with"

# perf's layout, read directly
samples=$(awk '/^# event:/ { for (i = 1; i <= NF; i++) if ($(i+1) ~ /^samples/) { print $i; exit } }' "$T/leaf.report")
awk -v n="$samples" '
	/^$/ { if (prev == "" && NR > 1) bad = "two empty lines at line " NR; blanks++ }
	/^[^\t]/ { headers++; if (prev != "" && NR > 1) bad = "a header not after an empty line at line " NR }
	/^\t/ { if (prev == "") bad = "a frame with no header at line " NR }
	{ prev = $0 }
	END { if (prev != "") bad = "no empty line at the end"
	      if (headers != n || blanks != n) bad = headers " headers, " blanks " empty lines for " n " samples"
	      if (bad) { print bad; exit 1 } }' "$T/leaf.txt" >"$T/why"
ok $? "gt_leaf: $samples samples, each a header, its frames, an empty line $(cat "$T/why")"
fail=0
for f in leaf_five leaf_three leaf_two; do
	want=$(awk -v f="$f" '!/^#/ && $4 == f { print $3; exit }' "$T/leaf.report")
	got=$(awk -v f="$f" '/^[^\t]/ { getline fr; split(fr, w, " "); sub(/\+0x[0-9a-f]+$/, "", w[2]); if (w[2] == f) n++ }
		END { print n + 0 }' "$T/leaf.txt")
	diag "$f: first frame of $got samples; probe report: $want samples of self"
	[ "$got" = "$want" ] || fail=1
done
ok $fail "leaf first: each function is the first frame of as many samples as its self samples in probe report"
# Root last: as many samples end with _start as the folded stacks (root
# first) start with it, and nearly all do.  (Not "every sample": under load
# a sample in the loader before main, or one whose walk stopped short, has
# another root, the same in both outputs.)
"$PROBE" report --format folded "$T/leaf.probe" >"$T/leaf.fold" 2>>"$T/err"
ps_root=$(awk '/^[^\t]/ { if (last ~ / _start\+0x[0-9a-f]+ \(/) n++; last = "" }
	/^\t/ { last = $0 } END { if (last ~ / _start\+0x[0-9a-f]+ \(/) n++; print n + 0 }' "$T/leaf.txt")
fold_root=$(awk '{ split($1, f, ";"); if (f[2] == "_start") n += $NF } END { print n + 0 }' "$T/leaf.fold")
[ "$ps_root" -eq "$fold_root" ] && [ "$ps_root" -ge $((samples * 95 / 100)) ]
ok $? "... and root last: $ps_root samples end with _start, as $fold_root folded stacks start with it (of $samples)"
grep -v '^$' "$T/leaf.txt" | grep -v '^[^	]' | grep -Ev '^	 *[0-9a-f]+ [^ ].* \([^ ]+\)$' >"$T/odd"
[ ! -s "$T/odd" ]
ok $? "every frame line is '<TAB> ADDR SYMBOL (MODULE)' $(head -n2 "$T/odd")"
grep -q "^	 *[0-9a-f]* leaf_five+0x[0-9a-f]* ($GT/gt_leaf)\$" "$T/leaf.txt"
ok $? "a function's module is the full path of its object, in parentheses"
# cpu-clock:u where kernel time was not sampled, cpu-clock where it was.
head -n1 "$T/leaf.txt" | grep -Eq '^gt_leaf +[0-9]+/[0-9]+ +[0-9]+\.[0-9]{6}: +[0-9]+ cpu-clock(:u)?: $'
ok $? "header: comm pid/tid seconds.micros: period cpu-clock[:u]: ($(head -n1 "$T/leaf.txt"))"

# The readers' expressions take every line
js layout "$T/leaf.txt" >"$T/leaf.layout"
sed 's/^/#   probe: /' "$T/leaf.layout"
n=$(word "$T/leaf.layout" samples)
[ "$n" = "$samples" ] && [ "$(word "$T/leaf.layout" speedscope-headers)" = "$n" ] &&
[ "$(word "$T/leaf.layout" stackcollapse-headers)" = "$n" ] &&
[ "$(word "$T/leaf.layout" speedscope-frames)" = "$(word "$T/leaf.layout" frames)" ] &&
[ "$(word "$T/leaf.layout" stackcollapse-frames)" = "$(word "$T/leaf.layout" frames)" ]
ok $? "speedscope's and stackcollapse-perf.pl's expressions take every header and frame line"

# A real perf recording of the same program, for comparison
perf=0
if command -v perf >/dev/null &&
   perf record -q -F 999 --call-graph dwarf -o "$T/perf.data" -- "$GT/gt_leaf" 150 >/dev/null 2>"$T/perf.err" &&
   perf script -i "$T/perf.data" -F comm,pid,tid,time,period,event,ip,sym,symoff,dso \
	>"$T/perf.txt" 2>>"$T/perf.err" && [ -s "$T/perf.txt" ]; then
	perf=1
fi

js import "$T/leaf.txt" "$T/leaf.in.json" "$T/thr.txt" "$T/thr.in.json" \
	$([ $perf = 1 ] && echo "$T/perf.txt" "$T/perf.in.json") >"$T/import" 2>&1
ok $? "speedscope's app imported probe's perf-script text and exported what it read"
sed 's/^/#   /' "$T/import"
n=$(grep -c '\.txt: Importing from linux perf script output$' "$T/import")
is "$n" $((2 + perf)) "each one as linux perf script output"

# Shares: the leaf speedscope gave each sample, weighted by its period
js attribute "$T/leaf.in.json" "$T/leaf.txt" >"$T/leaf.attr"
js attribute "$T/thr.in.json" "$T/thr.txt" >"$T/thr.attr"
off=$(awk -F '\t' '$1 == "offcpu" { print $2 }' "$T/leaf.attr")
diag "function      report  speedscope(period)  speedscope(its wall time; $off % of the span off CPU)"
fail=0 failwall=0
for f in leaf_five leaf_three leaf_two; do
	want=$(self_share "$T/leaf.report" "$f")
	got=$(field "$T/leaf.attr" self "$f")
	wall=$(field "$T/leaf.attr" wall "$f")
	diag "$(printf '%-12s  %-6s  %-18s  %s' "$f" "$want" "$got" "$wall")"
	within "$got" "$want" 0.5 || fail=1
	within "$wall" "$want" "$(awk -v o="$off" 'BEGIN { print 0.5 + o }')" || failwall=1
done
ok $fail "gt_leaf: the functions speedscope found in the samples have probe report's shares, within 0.5"
ok $failwall "gt_leaf: speedscope's own (wall-time) shares within 0.5 + $off points (its time off CPU)"
is "$(awk -F '\t' '$1 == "unattributed" { print $2 }' "$T/leaf.attr" "$T/thr.attr" | tr '\n' ' ')" "0 0 " \
	"every sample is in a profile speedscope made"
want=$(self_share "$T/thr.report" work)
got=$(field "$T/thr.attr" self work)
diag "gt_threads work: report $want, speedscope(period) $got, speedscope(wall) $(field "$T/thr.attr" wall work)"
within "$got" "$want" 0.5
ok $? "gt_threads: work has probe report's share, within 0.5 ($got, $want)"
# (The main thread only waits: a profile of its own if it was ever sampled.)
names=$(awk -F '\t' '$1 == "profile" { print $2 }' "$T/thr.attr" | sed 's/ pid: [0-9]* tid: [0-9]*$//' |
	grep -v '^gt_threads$' | sort | tr '\n' ' ')
is "$names" "w1 w2 w3 w4 " "gt_threads: speedscope made one profile per thread ('COMM pid: P tid: T')"
for w in w1 w2 w3 w4; do
	p=$(awk -F '\t' -v w="$w" '$1 == "profile" && index($2, w " ") == 1 { print $2 }' "$T/thr.attr")
	diag "thread $w: report $(self_share "$T/thr.comm" "$w"), speedscope(period) $(field "$T/thr.attr" profile "$p")"
done

# The same program under perf: both texts parse the same way
if [ $perf = 1 ]; then
	js layout "$T/perf.txt" >"$T/perf.layout"
	sed 's/^/#   perf:  /' "$T/perf.layout"
	n=$(word "$T/perf.layout" samples)
	[ "$n" -gt 0 ] && [ "$(word "$T/perf.layout" speedscope-headers)" = "$n" ] &&
	[ "$(word "$T/perf.layout" stackcollapse-headers)" = "$n" ] &&
	[ "$(word "$T/perf.layout" speedscope-frames)" = "$(word "$T/perf.layout" frames)" ] &&
	[ "$(word "$T/perf.layout" stackcollapse-frames)" = "$(word "$T/perf.layout" frames)" ]
	ok $? "perf script's text: the same expressions take every header and frame line"
	# The same fields: comm gt_leaf, pid = tid, a time, a period, cpu-clock
	shape() { sed -n 's/^first //p' "$1" | sed -E 's/=[0-9]+(\.[0-9]+)?( |$)/=N\2/g; s/event=cpu-clock(:[a-zA-Z]+)?/event=cpu-clock/'; }
	is "$(shape "$T/perf.layout")" "$(shape "$T/leaf.layout")" "and take the same fields from both headers: $(shape "$T/leaf.layout")"
	js attribute "$T/perf.in.json" "$T/perf.txt" >"$T/perf.attr"
	leaves=$(awk -F '\t' '$1 == "self" && $3 >= 5 { print $2 }' "$T/perf.attr" | sort | tr '\n' ' ')
	is "$leaves" "leaf_five leaf_three leaf_two " "speedscope finds the same leaf functions in perf's text"
else
	for i in 1 2 3; do skip "perf cannot record here: $(tail -n1 "$T/perf.err")"; done
fi

[ "$_tap_fail" -eq 0 ] || { diag "stderr:"; sed 's/^/#   /' "$T/err" | head -20; }
done_testing
