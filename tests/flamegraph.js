// flamegraph.js - drive a flame graph (probe report --format svg or html)
// in headless Chromium, as a person would, and print what it shows, one
// line per step, for tests/83-flamegraph.t to read.
//
//   node tests/flamegraph.js MODULES_DIR STEP...
//
// MODULES_DIR holds node_modules/puppeteer-core (scripts/install-deps).
// Steps, in order, on the page loaded last:
//   load FILE        open it: "load FILE errors N painted_ms MS frames N"
//                    (errors: uncaught exceptions, console errors and
//                    dialogs no step opened;
//                    painted: from navigation start to the second animation
//                    frame after the load event, i.e. drawn once)
//   shares           "share NAME PCT" for every function name: the width its
//                    frames cover (one inside another counted once) over the
//                    root's width, from the frames' geometry in the page
//   groups           "group NAME PCT" for the process and thread frames
//   search TEXT      Ctrl-F, TEXT typed into the prompt: "search TEXT SHOWN"
//                    with what the page then says ("Matched: 49.90%")
//   zoom NAME        a click on the widest frame called NAME:
//                    "zoom NAME WIDTH FULL DIMMED HIDDEN BEFORE" (its width
//                    after, the plot's width, ancestors dimmed, frames
//                    hidden, its width before)
//   reset            a click on "Reset Zoom": "reset WIDTH_OF_LAST_ZOOMED HIDDEN"
//   lines NAME       a click on the widest frame called NAME (HTML page), then
//                    its source lines panel: "lines NAME SHOWN HEAD" (SHOWN 1
//                    when the panel is open; HEAD its name and module line),
//                    "sum NAME TEXT", a "line NAME AT SELF TOTAL SAMPLES TEXT"
//                    per row (AT file.c:LINE), "note NAME TEXT" (spaces in
//                    HEAD as _, the rest as the page has them)
//   errors           "errors N": the errors (as load counts them) since the
//                    last load, each on a line "# error: ..." after it
//   key KEY          KEY pressed (puppeteer's name: Escape): "key KEY panel
//                    SHOWN hidden N" (N frames hidden: zoomed when above 0)
//   rows NAME        "rows ROOT_Y NAME_Y": where the root and NAME are drawn
//   hover NAME       the mouse over the widest frame called NAME:
//                    "hover NAME DETAILS" (the page's details line)
//   click ID         a click on the element ID (a button): "click ID TEXT
//                    LEGEND" (its text and the legend's after; spaces as _)
//   screenshot PNG   the whole picture into PNG: "screenshot PNG"
//   viewport W H     the window's size from now on (before a load: 1280 900)
//   screen           what the window shows right after a load: "screen W H
//                    scroll Y root R levels N head H foot F": R 1 when the
//                    root is in the window and not covered (the element at
//                    its middle is its own), N the levels from the root up
//                    (at most 10) whose widest frame is so, H and F 1 when
//                    the Search button and the details line (#foot) are in it
//   contrast         "contrast MIN N NAME": the least contrast ratio (WCAG 2)
//                    of a label's colour on its frame's, as the browser
//                    paints them, over the N labels shown; NAME its frame's
'use strict';
const path = require('path');

const [modules, ...steps] = process.argv.slice(2);
const puppeteer = require(path.join(path.resolve(modules), 'node_modules', 'puppeteer-core'));

// Every frame as the page has it: name, kind, geometry in CSS pixels.
// Works for both pictures: the SVG's <g> elements, or the HTML page's
// frame list (window.F with its drawn geometry, window.geom()).
function frames() {
	if (window.geom)
		return window.geom();
	return Array.from(document.querySelectorAll('#frames > g')).map((g) => {
		const r = g.querySelector('rect').getBBox();
		const t = g.querySelector('title').textContent.split('\n');
		const cls = g.getAttribute('class').split(' ');
		return { name: t[0], kind: cls[0], dim: cls.includes('dim'),
			 shown: g.style.display != 'none', x: r.x, y: r.y, w: r.width };
	});
}

// What the window shows (the step "screen"), in the page.
function screen() {
	const fs = frames();
	const sy = window.scrollY, sx = window.scrollX, h = window.innerHeight, w = window.innerWidth;
	// Is (page x, y) in the window, and the element there frame f's own?
	const seen = (f) => {
		const x = f.x + Math.min(f.w / 2, 50) - sx, y = f.y + 7 - sy;
		if (x < 0 || x >= w || y < 0 || y >= h)
			return false;
		const e = document.elementFromPoint(x, y);
		if (!e)
			return false;
		if (window.geom)
			return e.id == 'flame';
		const g = e.closest('g');
		return !!g && !!g.f && g.f.name == f.name && Math.abs(g.getBoundingClientRect().top + sy - f.y) < 1;
	};
	const inView = (id) => {
		const e = document.getElementById(id);
		if (!e)
			return false;
		const r = e.getBoundingClientRect();
		return r.top >= 0 && r.bottom <= h && r.height > 0;
	};
	const root = fs.find((f) => f.kind == 'r');
	const byDepth = new Map();
	for (const f of fs) {
		const d = Math.round(Math.abs(f.y - root.y) / 16);
		if (!byDepth.has(d) || byDepth.get(d).w < f.w)
			byDepth.set(d, f);
	}
	let levels = 0;
	while (levels < 10 && byDepth.has(levels) && seen(byDepth.get(levels)))
		levels++;
	return [w, h, 'scroll', Math.round(sy), 'root', seen(root) ? 1 : 0, 'levels', levels,
		'head', inView('search') ? 1 : 0, 'foot', inView('foot') ? 1 : 0];
}

// The least contrast of a label on its frame (the step "contrast").
function contrast() {
	const rgb = (c) => {
		if (c[0] == '#')
			return [1, 3, 5].map((i) => parseInt(c.substr(i, 2), 16));
		return c.match(/[0-9.]+/g).slice(0, 3).map(Number);
	};
	const lum = (c) => rgb(c).map((v) => {
		v /= 255;
		return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
	}).reduce((l, v, i) => l + [0.2126, 0.7152, 0.0722][i] * v, 0);
	const ratio = (a, b) => {
		const x = lum(a) + 0.05, y = lum(b) + 0.05;
		return Math.max(x, y) / Math.min(x, y);
	};
	let min = Infinity, n = 0, worst = '-';
	const pairs = [];
	if (window.geom) {
		for (const f of window.geom())
			if (f.shown && f.ink)
				pairs.push([f.fill, f.ink, f.name]);
	} else {
		for (const g of document.querySelectorAll('#frames > g')) {
			const t = g.querySelector('text');
			if (g.style.display == 'none' || !t || !t.textContent)
				continue;
			pairs.push([getComputedStyle(g.querySelector('rect')).fill, getComputedStyle(t).fill,
				    g.querySelector('title').textContent.split('\n')[0]]);
		}
	}
	for (const [bg, fg, name] of pairs) {
		const r = ratio(bg, fg);
		n++;
		if (r < min) {
			min = r;
			worst = name.replace(/ /g, '_');
		}
	}
	return [n ? min.toFixed(2) : '-', n, worst];
}

// Width covered by frames, one inside another counted once.
function covered(fs) {
	fs.sort((a, b) => a.x - b.x || b.w - a.w);
	let sum = 0, end = -Infinity;
	for (const f of fs)
		if (f.x >= end - 1e-6) {
			sum += f.w;
			end = f.x + f.w;
		}
	return sum;
}

async function main() {
	const browser = await puppeteer.launch({
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		args: ['--no-sandbox', '--headless=new', '--disable-gpu'],
	});
	const page = await browser.newPage();
	await page.setViewport({ width: 1280, height: 900 });
	let errors = [];
	page.on('pageerror', (e) => errors.push(String(e)));
	page.on('console', (m) => { if (m.type() == 'error') errors.push(m.text()); });
	let answer = null;
	// A dialog no step asked for (alert() from a name or a line of source
	// that got out of its string) is an error.
	page.on('dialog', (d) => {
		if (answer === null) {
			errors.push('dialog: ' + d.message());
			return d.dismiss();
		}
		return d.accept(answer);
	});
	let lastZoom = null;
	const out = (...a) => console.log(a.join(' '));
	const all = () => page.evaluate(frames);
	const root = (fs) => fs.find((f) => f.kind == 'r');

	for (let i = 0; i < steps.length; i++) {
		const step = steps[i];
		const arg = steps[i + 1];
		if (step == 'load') {
			i++;
			errors = [];
			await page.goto('file://' + path.resolve(arg), { waitUntil: 'load' });
			const ms = await page.evaluate(() => new Promise((r) =>
				requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now())))));
			const fs = await all();
			out('load', arg, 'errors', errors.length, 'painted_ms', ms.toFixed(0), 'frames', fs.length);
			for (const e of errors)
				out('#', 'error:', e.split('\n')[0]);
		} else if (step == 'shares' || step == 'groups') {
			const fs = await all();
			const total = root(fs).w;
			const names = new Map();
			for (const f of fs)
				if ((step == 'groups') == (f.kind == 'g') && f.kind != 'r')
					names.set(f.name, (names.get(f.name) || []).concat([f]));
			for (const [name, list] of names)
				out(step.slice(0, -1), name.replace(/ /g, '_'),
				    (100 * covered(list) / total).toFixed(2));
		} else if (step == 'search') {
			i++;
			answer = arg;
			await page.keyboard.down('Control');
			await page.keyboard.press('f');
			await page.keyboard.up('Control');
			answer = null;
			const shown = await page.evaluate(() => {
				const m = document.getElementById('matched');
				return m ? m.textContent : '';
			});
			out('search', arg, shown.replace(/ /g, '') || '-');
		} else if (step == 'zoom') {
			i++;
			let fs = await all();
			const full = root(fs).w;
			const f = fs.filter((g) => g.name == arg).sort((a, b) => b.w - a.w)[0];
			if (!f) {
				out('zoom', arg, 'none');
				continue;
			}
			await page.mouse.click(f.x + f.w / 2, f.y + 5);
			fs = await all();
			const z = fs.filter((g) => g.name == arg && g.shown).sort((a, b) => b.w - a.w)[0];
			lastZoom = arg;
			out('zoom', arg, z.w.toFixed(2), full.toFixed(2),
			    fs.filter((g) => g.dim && g.shown).length, fs.filter((g) => !g.shown).length,
			    f.w.toFixed(2));
		} else if (step == 'reset') {
			const b = await page.evaluate(() => {
				const r = document.getElementById('reset').getBoundingClientRect();
				return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
			});
			await page.mouse.click(b.x, b.y);
			const fs = await all();
			const z = fs.filter((g) => g.name == lastZoom).sort((a, b) => b.w - a.w)[0];
			out('reset', z ? z.w.toFixed(2) : '-', fs.filter((g) => !g.shown).length);
		} else if (step == 'lines') {
			i++;
			const f = (await all()).filter((g) => g.name == arg && g.shown).sort((a, b) => b.w - a.w)[0];
			if (!f) {
				out('lines', arg, 'none');
				continue;
			}
			// Into the window first (a tall flame opens scrolled to its root).
			const sc = await page.evaluate((y) => {
				window.scrollTo(0, Math.max(0, y - window.innerHeight / 2));
				return [window.scrollX, window.scrollY];
			}, f.y);
			await page.mouse.click(f.x + f.w / 2 - sc[0], f.y + 5 - sc[1]);
			const p = await page.evaluate(() => {
				const t = (id) => document.getElementById(id).textContent;
				const rows = Array.from(document.querySelectorAll('#plines tr'))
					.filter((r) => r.querySelector('td'))
					.map((r) => Array.from(r.querySelectorAll('td')).map((c) => c.textContent));
				return { shown: !document.getElementById('panel').hidden,
					 head: t('pname') + ' ' + t('pmod'), sum: t('psum'), note: t('pnote'), rows };
			});
			out('lines', arg, p.shown ? 1 : 0, p.head.replace(/ /g, '_'));
			out('sum', arg, p.sum);
			for (const r of p.rows)
				out('line', arg, ...r);
			out('note', arg, p.note);
		} else if (step == 'errors') {
			out('errors', errors.length);
			for (const e of errors)
				out('#', 'error:', e.split('\n')[0]);
		} else if (step == 'key') {
			i++;
			await page.keyboard.press(arg);
			const shown = await page.evaluate(() => !document.getElementById('panel').hidden);
			out('key', arg, 'panel', shown ? 1 : 0, 'hidden', (await all()).filter((g) => !g.shown).length);
		} else if (step == 'hover') {
			i++;
			const f = (await all()).filter((g) => g.name == arg && g.shown).sort((a, b) => b.w - a.w)[0];
			if (f)
				await page.mouse.move(f.x + f.w / 2, f.y + 5);
			const d = await page.evaluate(() => document.getElementById('details').textContent);
			out('hover', arg, f ? d : '-');
		} else if (step == 'click') {
			i++;
			const b = await page.evaluate((id) => {
				const r = document.getElementById(id).getBoundingClientRect();
				return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
			}, arg);
			await page.mouse.click(b.x, b.y);
			const t = await page.evaluate((id) => [document.getElementById(id).textContent,
				document.getElementById('legend').textContent], arg);
			out('click', arg, t[0].replace(/ /g, '_') || '-', t[1].replace(/ /g, '_') || '-');
		} else if (step == 'rows') {
			i++;
			const fs = await all();
			const f = fs.find((g) => g.name == arg);
			out('rows', root(fs).y.toFixed(0), f ? f.y.toFixed(0) : '-');
		} else if (step == 'viewport') {
			await page.setViewport({ width: +arg, height: +steps[i + 2] });
			i += 2;
		} else if (step == 'screen') {
			out('screen', ...(await page.evaluate(`(() => { ${frames}; return (${screen})(); })()`)));
		} else if (step == 'contrast') {
			out('contrast', ...(await page.evaluate(`(${contrast})()`)));
		} else if (step == 'screenshot') {
			i++;
			await page.screenshot({ path: arg, fullPage: true });
			out('screenshot', arg);
		} else {
			throw new Error('unknown step ' + step);
		}
	}
	await browser.close();
}

main().catch((e) => {
	console.log('# flamegraph.js: ' + String(e.stack || e).split('\n').slice(0, 3).join(' | '));
	process.exit(1);
});
