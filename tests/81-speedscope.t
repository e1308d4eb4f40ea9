#!/bin/sh
# --format speedscope, read by speedscope itself (npm package speedscope,
# installed into the build tree by scripts/install-deps):
#   (a) the file validates against the JSON schema speedscope ships (ajv);
#   (b) speedscope's own importer takes it: its app, in headless chromium,
#       loaded the way the `speedscope FILE` command loads a file, says which
#       importer it used, and its own export (Ctrl+S) gives back what it read;
#   (c) per-function shares from the file's weights, and from what speedscope
#       read, are probe report's within 0.5 points (gt_leaf; gt_threads: one
#       profile per thread, thread shares as probe report --sort comm);
#   (d) each thread's samples are in time order: the same sequence as the
#       thread's samples in --format perf-script, whose times never go back,
#       and speedscope's own timeline of them never goes back either;
#   (e) --alloc: weights in bytes, sites' shares as probe report's, live
#       bytes over time (the peak and the end against gt_alloc's truth),
#       and --event inuse's samples as the report counts them.
# Names from hostile files (quotes, backslashes, control bytes, invalid
# UTF-8) still make valid JSON that speedscope reads.
. "$(dirname "$0")/lib.sh"

NPM=$BUILD/npm
[ -d "$NPM/node_modules/speedscope" ] || NPM=$ROOT/build/npm
for m in speedscope ajv puppeteer-core; do
	[ -d "$NPM/node_modules/$m" ] ||
		skip_all "no npm $m in $NPM (scripts/install-deps installs it; the npm registry was not reachable then?)"
done
command -v node >/dev/null 2>&1 || skip_all "no node (Debian nodejs): run scripts/install-deps"
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || skip_all "no Chromium (Debian chromium): run scripts/install-deps"
plan 29
export NM="$NPM/node_modules" ROOT

# The reader's side, in node: speedscope's schema, its app, and sums over
# what a speedscope file (ours, or speedscope's export) holds.
cat >"$T/speedscope.cjs" <<'JS'
const fs = require('fs'), path = require('path');
const NM = process.env.NM, APP = NM + '/speedscope/dist/release';
const [cmd, ...args] = process.argv.slice(2);
const load = f => JSON.parse(fs.readFileSync(f, 'utf8'));

// A profile's samples as [stack (frame indices, root first), weight, at]:
// ours are "sampled", speedscope's export is "evented" (open/close at).
function walk(p) {
	const out = [];
	if (p.type === 'sampled') {
		let at = p.startValue;
		p.samples.forEach((s, i) => { out.push([s, p.weights[i], at]); at += p.weights[i]; });
		return out;
	}
	const stack = [];
	let last = p.startValue;
	out.ordered = true;
	for (const e of p.events) {
		if (e.at < last) out.ordered = false;
		if (e.at > last && stack.length) out.push([stack.slice(), e.at - last, last]);
		last = Math.max(last, e.at);
		if (e.type === 'O') stack.push(e.frame); else stack.pop();
	}
	return out;
}
const leafOf = (doc, s) => s.length ? doc.shared.frames[s[s.length - 1]].name : '(none)';

const cmds = {
	// schema FILE: valid against speedscope's own file-format-schema.json
	schema([file]) {
		const Ajv = require(NM + '/ajv');
		const ajv = new Ajv({strict: false, allErrors: true});
		const ok = ajv.validate(load(APP + '/file-format-schema.json'), load(file));
		console.log(ok ? 'valid' : 'invalid: ' + ajv.errorsText(ajv.errors).slice(0, 400));
		process.exit(ok ? 0 : 1);
	},
	// shares FILE: "self NAME PCT" (all profiles but "in use over time"),
	// "profile NAME PCT N ORDERED"
	shares([file]) {
		const doc = load(file), self = new Map(), prof = [];
		let total = 0;
		for (const p of doc.profiles) {
			if (p.name.startsWith('in use over time: ')) continue;
			const w = walk(p);
			let pw = 0;
			for (const [s, wt] of w) {
				self.set(leafOf(doc, s), (self.get(leafOf(doc, s)) || 0) + wt);
				pw += wt;
			}
			total += pw;
			prof.push([p.name, pw, w.length, w.ordered === false ? 0 : 1]);
		}
		for (const [n, w] of self) console.log(`self\t${n}\t${(100 * w / total).toFixed(2)}`);
		for (const [n, w, c, o] of prof)
			console.log(`profile\t${n}\t${(100 * w / total).toFixed(2)}\t${c}\t${o}`);
	},
	// leaves FILE: "PROFILE<TAB>leaf,leaf,..." in order, a run of one leaf once
	leaves([file]) {
		const doc = load(file);
		for (const p of doc.profiles) {
			const seq = [];
			for (const [s] of walk(p))
				if (seq[seq.length - 1] !== leafOf(doc, s)) seq.push(leafOf(doc, s));
			console.log(`${p.name}\t${seq.join(',')}`);
		}
	},
	// names FILE: the profiles' names and the frames' files, JSON-quoted
	names([file]) {
		const doc = load(file);
		for (const p of doc.profiles) console.log('profile ' + JSON.stringify(p.name));
		for (const f of doc.shared.frames) if (f.file) console.log('file ' + JSON.stringify(f.file));
	},
	// moments FILE: "in use over time" profiles' moments, in order: "NAME<TAB>
	// BYTES<TAB>LEAVES" (the root frame's name, the weight under it, the
	// leaves under it, sorted, comma-separated)
	moments([file]) {
		const doc = load(file);
		for (const p of doc.profiles) {
			if (!p.name.startsWith('in use over time: ')) continue;
			let cur = null;
			const flush = () => cur && console.log(`${cur.name}\t${cur.w}\t${[...cur.leaves].sort().join(',')}`);
			for (const [s, w] of walk(p)) {
				const name = doc.shared.frames[s[0]].name;
				if (!cur || cur.name !== name) { flush(); cur = {name, w: 0, leaves: new Set()}; }
				cur.w += w;
				cur.leaves.add(leafOf(doc, s));
			}
			flush();
		}
	},
	// units FILE: each profile's unit, space-separated
	units([file]) {
		console.log(load(file).profiles.map(p => p.unit).join(' '));
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
js() { node "$T/speedscope.cjs" "$@"; }

# field FILE KIND NAME COL: column COL of the tab-separated line KIND NAME
field() { awk -F '\t' -v k="$2" -v n="$3" -v c="$4" '$1 == k && $2 == n { print $c; exit }' "$1"; }

# A program whose name is hostile: a quote, a backslash, a control byte, a
# byte that is not UTF-8.
bad=$(printf '%s/gt"q\\\001\377x' "$T")
cp "$GT/gt_leaf" "$bad"

"$PROBE" record -q -F 4999 -o "$T/leaf.probe" -- "$GT/gt_leaf" 300 >/dev/null 2>"$T/err" &&
"$PROBE" record -q -F 4999 -o "$T/thr.probe" -- "$GT/gt_threads" 200 >/dev/null 2>>"$T/err" &&
"$PROBE" record -q -F 999 -o "$T/bad.probe" -- "$bad" 20 >/dev/null 2>>"$T/err"
ok $? "three recordings: gt_leaf, gt_threads, a program with a hostile name"
fail=0
for r in leaf thr bad; do
	"$PROBE" report --format speedscope -o "$T/$r.json" "$T/$r.probe" 2>>"$T/err" &&
	"$PROBE" report --format perf-script -o "$T/$r.txt" "$T/$r.probe" 2>>"$T/err" || fail=1
done
ok $fail "probe report --format speedscope and --format perf-script -o FILE"
"$PROBE" report "$T/leaf.probe" >"$T/leaf.report" 2>>"$T/err" &&
"$PROBE" report "$T/thr.probe" >"$T/thr.report" 2>>"$T/err" &&
"$PROBE" report --sort comm "$T/thr.probe" >"$T/thr.comm" 2>>"$T/err"
ok $? "probe report, for the shares to compare with"

# (a) the schema
for r in leaf thr bad; do
	out=$(js schema "$T/$r.json" 2>&1)
	ok $? "$r: validates against speedscope's file-format-schema.json ($out)"
done

# (b) speedscope's importer
js import "$T/leaf.json" "$T/leaf.in.json" "$T/thr.json" "$T/thr.in.json" \
	"$T/bad.json" "$T/bad.in.json" >"$T/import" 2>&1
ok $? "speedscope's app imported all three and exported what it read"
sed 's/^/#   /' "$T/import"
n=$(grep -c ': Importing as speedscope json file$' "$T/import")
is "$n" 3 "each one by its speedscope JSON importer"

# (c) shares: from our weights, and from what speedscope read
js shares "$T/leaf.json" >"$T/leaf.shares" && js shares "$T/leaf.in.json" >"$T/leaf.in.shares"
diag "function      report  json    speedscope"
for f in leaf_five leaf_three leaf_two; do
	want=$(self_share "$T/leaf.report" "$f")
	got=$(field "$T/leaf.shares" self "$f" 3)
	imp=$(field "$T/leaf.in.shares" self "$f" 3)
	diag "$(printf '%-12s  %-6s  %-6s  %s' "$f" "$want" "$got" "$imp")"
	within "$got" "$want" 0.5 && within "$imp" "$want" 0.5
	ok $? "gt_leaf $f: $got % in the file, $imp % as speedscope read it, $want % in probe report"
done
js shares "$T/thr.json" >"$T/thr.shares" && js shares "$T/thr.in.json" >"$T/thr.in.shares"
want=$(self_share "$T/thr.report" work)
got=$(field "$T/thr.shares" self work 3)
imp=$(field "$T/thr.in.shares" self work 3)
within "$got" "$want" 0.5 && within "$imp" "$want" 0.5
ok $? "gt_threads work: $got % in the file, $imp % as speedscope read it, $want % in probe report"
pid=$(awk '/^[^\t]/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\/[0-9]+$/) { split($i, a, "/"); print a[1]; exit } }' "$T/thr.txt")
# (The main thread only waits: a profile of its own if it was ever sampled.)
names=$(awk -F '\t' '$1 == "profile" { print $2 }' "$T/thr.in.shares" | sed "s| $pid/[0-9]*$||" |
	grep -v '^gt_threads$' | sort | tr '\n' ' ')
is "$names" "w1 w2 w3 w4 " "gt_threads: one profile per thread, named 'COMM PID/TID' (pid $pid)"
fail=0
for w in w1 w2 w3 w4; do
	want=$(self_share "$T/thr.comm" "$w")
	p=$(awk -F '\t' -v w="$w" '$1 == "profile" && index($2, w " ") == 1 { print $2 }' "$T/thr.shares")
	got=$(field "$T/thr.shares" profile "$p" 3)
	imp=$(field "$T/thr.in.shares" profile "$p" 3)
	diag "$(printf 'thread %-5s  %-6s  %-6s  %s' "$w" "$want" "$got" "$imp")"
	within "$got" "$want" 0.5 && within "$imp" "$want" 0.5 || fail=1
done
ok $fail "gt_threads: each thread's weight is its share in probe report --sort comm, within 0.5"

# (d) time order, per thread
# perf-script's samples per thread: "PROFILE<TAB>leaf,..." as `leaves` says,
# and whether the thread's times ever go back.
perf_leaves() {
	awk '/^[^\t]/ && NF { n = split($0, h, " "); pt = h[n - 3]; sub(":", "", h[n - 2])
			key = $0; sub(/ +[0-9]+\/[0-9]+ .*/, "", key)
			split(pt, id, "/"); tid = id[2]; t = h[n - 2] + 0
			if (tid in last && t < last[tid]) back[tid] = 1
			last[tid] = t; name[tid] = key " " pt; getline fr
			inl = fr ~ / \(inlined\)$/
			split(fr, w, " "); mod = fr; sub(/.* \(/, "", mod); sub(/\)$/, "", mod); sub(/.*\//, "", mod)
			sub(/^\t *[0-9a-f]+ /, "", fr); sub(/\+0x[0-9a-f]+ \(.*$/, "", fr); sub(/ \(.*$/, "", fr)
			# as probe names it: NAME [inlined], module+0xADDR, [kernel]
			if (inl) fr = fr " [inlined]"
			else if (fr == "") fr = "(none)"  # a sample with no frames
			else if (fr == "[unknown]") fr = mod == "kernel.kallsyms" ? "[kernel]" : mod "+0x" w[1]
			if (seq[tid] == "" || fr != prev[tid]) seq[tid] = seq[tid] (seq[tid] == "" ? "" : ",") fr
			prev[tid] = fr }
		END { for (t in seq) print name[t] "\t" seq[t] "\t" (t in back ? "back" : "ordered") }' "$1" | sort
}
for r in leaf thr; do
	perf_leaves "$T/$r.txt" >"$T/$r.perf.seq"
	js leaves "$T/$r.json" | sort >"$T/$r.json.seq"
	js leaves "$T/$r.in.json" | sort >"$T/$r.in.seq"
done
! grep -q 'back$' "$T/leaf.perf.seq" "$T/thr.perf.seq"
ok $? "perf-script: each thread's sample times never go back"
cut -f1,2 "$T/leaf.perf.seq" >"$T/leaf.perf.cut"; cut -f1,2 "$T/thr.perf.seq" >"$T/thr.perf.cut"
cmp -s "$T/leaf.perf.cut" "$T/leaf.json.seq" && cmp -s "$T/thr.perf.cut" "$T/thr.json.seq"
ok $? "each profile's samples are its thread's samples in time order (as perf-script's)" ||
	for f in leaf thr; do
		tr ',' '\n' <"$T/$f.perf.cut" >"$T/$f.a"; tr ',' '\n' <"$T/$f.json.seq" >"$T/$f.b"
		diff "$T/$f.a" "$T/$f.b" | head -10 | sed 's/^/#   /'
		[ -n "$PROBE_TEST_KEEP" ] && cp -r "$T" "$PROBE_TEST_KEEP"
	done
[ "$_tap_fail" -eq 0 ] || for r in leaf thr; do
	diff "$T/$r.perf.cut" "$T/$r.json.seq" | cut -c1-400 | sed "s/^/#   $r: /"
done
cmp -s "$T/leaf.json.seq" "$T/leaf.in.seq" && cmp -s "$T/thr.json.seq" "$T/thr.in.seq"
ok $? "speedscope's timeline of each profile has the same order"
! grep -q '	0$' "$T/leaf.in.shares" "$T/thr.in.shares"
ok $? "and never goes back"

# Hostile names: valid JSON (above), and speedscope shows them as they are
# but for what is not printable UTF-8 (util.h: the control byte and the
# invalid one each become U+FFFD).
js names "$T/bad.in.json" >"$T/bad.names"
grep -q '^profile "gt\\"q\\\\��x [0-9]*/[0-9]*"$' "$T/bad.names"
ok $? "a hostile program name reaches speedscope as gt\"q\\<U+FFFD><U+FFFD>x: $(head -n1 "$T/bad.names")"
grep -q '^file ".*/gt\\"q\\\\��x' "$T/bad.names"
ok $? "and so does its path, as the file of its frames"

# No samples: still a file speedscope's schema takes.
"$PROBE" record -q -o "$T/none.probe" -- true >/dev/null 2>&1
"$PROBE" report --format speedscope "$T/none.probe" >"$T/none.json" 2>"$T/none.err"
out=$(js schema "$T/none.json" 2>&1)
ok $? "a recording with no samples: valid too ($out; $(head -n1 "$T/none.err"))"

# Allocations (--alloc): weights in bytes (the unit "bytes"), which
# speedscope's importer reads as such: each site's share of the bytes in
# the file and as speedscope read it is probe report's, within 0.5 points
# (the same samples: only rounding differs).
"$PROBE" record -q --alloc=64K -o "$T/al.probe" -- "$GT/gt_alloc" 256 >/dev/null 2>>"$T/err" &&
"$PROBE" report --format speedscope -o "$T/al.json" "$T/al.probe" 2>>"$T/err" &&
"$PROBE" report "$T/al.probe" >"$T/al.report" 2>>"$T/err"
out=$(js schema "$T/al.json" 2>&1)
ok $? "allocations (--alloc): valid against the schema too ($out)"
js import "$T/al.json" "$T/al.in.json" >"$T/al.import" 2>&1 &&
	grep -q ': Importing as speedscope json file$' "$T/al.import" &&
	[ "$(js units "$T/al.json" | tr ' ' '\n' | sort -u)" = bytes ] &&
	[ "$(js units "$T/al.in.json" | tr ' ' '\n' | sort -u)" = bytes ]
ok $? "speedscope's app imported it, its unit bytes in the file ($(js units "$T/al.json")) and in speedscope's export ($(js units "$T/al.in.json" 2>&1))"
js shares "$T/al.json" >"$T/al.shares" && js shares "$T/al.in.json" >"$T/al.in.shares"
fail=0
for f in site_a site_b site_c; do
	want=$(self_share "$T/al.report" "$f")
	got=$(field "$T/al.shares" self "$f" 3)
	imp=$(field "$T/al.in.shares" self "$f" 3)
	diag "$(printf '%-12s  %-6s  %-6s  %s' "$f" "$want" "$got" "$imp")"
	within "$got" "$want" 0.5 && within "$imp" "$want" 0.5 || fail=1
done
ok $fail "gt_alloc: each site's share of the bytes in the file and as speedscope read it is probe report's"

# Live bytes over time: gt_alloc keeps 16 MiB in 1 KiB blocks, then frees
# them all in a signal handler.  At a 16 KiB interval a 1 KiB block is
# sampled with p = 1 - exp(-1/16) = 0.0606: about 993 of the 16,384, sd
# 30.5 (3.07 %); the peak moment (the most in use, a moment of its own) is
# 16 MiB within 15 % (4.9 sd: a false failure about once in 10^6 runs).
# The last moment holds no keep_leak block (all were freed, every free
# seen).  speedscope's import keeps the moments, in order, and their bytes
# (those with nothing in use, weight 0 in the file, it leaves out).
"$PROBE" record -q --alloc=16K -o "$T/ot.probe" -- "$GT/gt_alloc" 32 16384 sigfree \
	>/dev/null 2>>"$T/err" &&
"$PROBE" report --format speedscope -o "$T/ot.json" "$T/ot.probe" 2>/dev/null &&
js moments "$T/ot.json" >"$T/ot.m" && js import "$T/ot.json" "$T/ot.in.json" >/dev/null 2>&1 &&
js moments "$T/ot.in.json" >"$T/ot.in.m"
ok $? "in use over time: recorded, written, read back from speedscope's export ($(wc -l <"$T/ot.m") moments)"
peak=$(awk -F '\t' '$2 > m { m = $2 } END { print m + 0 }' "$T/ot.m")
last=$(tail -n 1 "$T/ot.m")
diag "peak moment: $peak bytes (16777216 kept); last: $last"
awk -F '\t' '$2 > 0' "$T/ot.m" >"$T/ot.m0"
{ cmp -s "$T/ot.m0" "$T/ot.in.m" ||
  { diag "speedscope's export differs:"; diff "$T/ot.m0" "$T/ot.in.m" | head -5 | sed 's/^/#   /'; false; }; } &&
	awk -v p="$peak" 'BEGIN { exit !(p > 16777216 * 0.85 && p < 16777216 * 1.15) }' &&
	! printf '%s\n' "$last" | grep -q keep_leak &&
	awk -F '\t' '{ sub(/^in use at /, "", $1); sub(/ s:.*/, "", $1) }
		NR > 1 && $1 + 0 < t { bad = 1 } { t = $1 + 0 } END { exit bad }' "$T/ot.m"
ok $? "in use over time: the peak moment holds 16 MiB within 15 % ($peak), the last none of keep_leak's, times in order, speedscope's export the same"

# --event inuse: each thread's profile holds the allocations in use at the
# end alone (leak 4 MiB, never freed): the bytes are the text report's, and
# perf-script shows as many samples as it counts.
"$PROBE" record -q --alloc=16K -o "$T/iu.probe" -- "$GT/gt_alloc" 32 4096 >/dev/null 2>>"$T/err" &&
"$PROBE" report --event inuse --format speedscope -o "$T/iu.json" "$T/iu.probe" 2>>"$T/err" &&
"$PROBE" report --event inuse --format perf-script -o "$T/iu.txt" "$T/iu.probe" 2>>"$T/err" &&
"$PROBE" report --event inuse "$T/iu.probe" >"$T/iu.report" 2>>"$T/err"
want=$(sed -n 's/^# in use at the end: .*(\([0-9]*\) bytes, estimated) in \([0-9]*\) samples.*/\1 \2/p' "$T/iu.report")
got=$(node -e 'const d = JSON.parse(require("fs").readFileSync(process.argv[1]));
	let w = 0, n = 0;
	for (const p of d.profiles) if (!p.name.startsWith("in use over time: "))
		{ p.weights.forEach(x => w += x); n += p.samples.length; }
	console.log(w + " " + n)' "$T/iu.json")
ps=$(grep -c ' inuse:u: $' "$T/iu.txt")
[ -n "$want" ] && [ "$got" = "$want" ] && [ "$ps" = "${want#* }" ] && [ "$(js schema "$T/iu.json")" = valid ]
ok $? "--event inuse: speedscope's threads hold what the report says is in use at the end ($got; report: $want; perf-script: $ps samples)"
# The same perf-script text read by a reader nobody here wrote:
# speedscope's linux perf importer, the leak's function named there.
js import "$T/iu.txt" "$T/iu.txt.json" >"$T/iu.import" 2>&1 &&
	grep -q 'iu\.txt: Importing from linux perf script output$' "$T/iu.import" &&
	grep -q '"name":"keep_leak"' "$T/iu.txt.json"
ok $? "--event inuse --format perf-script: speedscope's app imports it as perf script output, keep_leak in what it read"

# A process that allocates, then execs another program that does: two
# images of one pid, each its own "in use over time" profile, once.
"$PROBE" record -q --alloc=16K -o "$T/ex.probe" -- perl -e \
	'my @a = map { "x" x 1000 } 1..10000; exec $ARGV[0], 8, 2048' "$GT/gt_alloc" \
	>/dev/null 2>>"$T/err" &&
"$PROBE" report --format speedscope -o "$T/ex.json" "$T/ex.probe" 2>/dev/null
js names "$T/ex.json" | sed -n 's/^profile "in use over time: \(.*\)"$/\1/p' >"$T/ex.names"
set -- $(cat "$T/ex.names") - - - -     # (padded: set -u)
[ "$(wc -l <"$T/ex.names")" = 2 ] && [ "$1" = perl ] && [ "$3" = gt_alloc ] && [ "$2" = "$4" ]
ok $? "an exec: one profile over time for each image of the pid ($(tr '\n' ';' <"$T/ex.names"))"

[ "$_tap_fail" -eq 0 ] || { diag "stderr:"; sed 's/^/#   /' "$T/err" | head -20; }
done_testing
