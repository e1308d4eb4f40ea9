// The flame graph's behaviour, shared by the SVG and the HTML page.
// F[i]: one frame: x, w (fractions of the whole), d (depth), name, mod
// (module, "" for the root and groups), kind (class letter), fill (its
// colour by kind), n (samples and share, as the tooltip says them).
// The picture defines draw(), say(id, text) and legend(items).
"use strict";
var F = [], zoomed = null, term = "", byModule = false, hues = {}, EPS = 1e-9;

// b lies within a's span
function inside(a, b) {
	return b.x >= a.x - EPS && b.x + b.w <= a.x + a.w + EPS;
}

// z the full width, what is under it scaled, its ancestors dimmed, the
// rest hidden; null (or the root): everything as it was.
function zoom(z) {
	zoomed = z && z.d > 0 ? z : null;
	var s = zoomed ? 1 / z.w : 1, x0 = zoomed ? z.x : 0;
	for (var i = 0; i < F.length; i++) {
		var f = F[i];
		if (!zoomed) {
			f.vis = 1; f.vx = f.x; f.vw = f.w;
		} else if (f.d < z.d && inside(f, z)) {
			f.vis = 2; f.vx = 0; f.vw = 1;
		} else if (f.d >= z.d && inside(z, f)) {
			f.vis = 1; f.vx = (f.x - x0) * s; f.vw = f.w * s;
		} else {
			f.vis = 0;
		}
	}
	say("reset", zoomed ? "Reset Zoom" : "");
	draw();
}

// Highlight the frames whose name matches t (a regular expression, or
// plain text if it is none); returns the share they cover, counting a
// match inside another match once (as flamegraph.pl does).
function search(t) {
	var re = null, m = [], i, f;
	term = t || "";
	if (term)
		try { re = new RegExp(term); } catch (e) { re = null; }
	for (i = 0; i < F.length; i++) {
		f = F[i];
		f.hit = !!term && (re ? re.test(f.name) : f.name.indexOf(term) >= 0);
		if (f.hit)
			m.push(f);
	}
	m.sort(function (a, b) { return a.x - b.x || b.w - a.w; });
	var sum = 0, end = -1;
	for (i = 0; i < m.length; i++)
		if (m[i].x >= end - EPS) {
			sum += m[i].w;
			end = m[i].x + m[i].w;
		}
	say("matched", term ? "Matched: " + (100 * sum).toFixed(2) + "%" +
		(C.merged > 0 ? " of what is drawn" : "") : "");
	say("search", term ? "Reset Search" : "Search");
	draw();
	return 100 * sum;
}

function askSearch() {
	if (term)
		return search("");
	var t = prompt("Search for a function (regular expression, or plain text):", "");
	if (t !== null)
		search(t);
}

function hash(s) {
	var h = 2166136261;
	for (var i = 0; i < s.length; i++)
		h = Math.imul(h ^ s.charCodeAt(i), 16777619);
	return h >>> 0;
}

// "#rrggbb" of hue h (degrees), saturation s and lightness l (0..1).
function hsl(h, s, l) {
	function f(n) {
		var k = (n + h / 30) % 12, a = s * Math.min(l, 1 - l);
		var v = l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
		return ("0" + Math.round(255 * v).toString(16)).slice(-2);
	}
	return "#" + f(0) + f(8) + f(4);
}

// Modules take hues a golden angle apart, the widest first: neighbours
// in the legend never look alike; the name moves the lightness a little.
function modColour(mod, name) {
	return hsl(hues[mod], 0.6, (62 + hash(name) % 12) / 100);
}

// WCAG 2's relative luminance of "#rrggbb".
function lum(c) {
	var l = 0, w = [0.2126, 0.7152, 0.0722];
	for (var i = 0; i < 3; i++) {
		var v = parseInt(c.substr(1 + 2 * i, 2), 16) / 255;
		l += w[i] * (v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4));
	}
	return l;
}

// The label's colour on c: black or white, whichever contrasts more
// (at least 4.58:1 either way; flame.c's flame_ink does the same).
function ink(c) {
	var l = lum(c) + 0.05;
	return l * l >= 0.0525 ? "#000000" : "#ffffff";
}

// A dimmed frame (an ancestor of the zoomed one): its colour 45 % over
// the background's #eeeeee, opaque, so that its label's contrast is known.
function dim(c) {
	var o = "#";
	for (var i = 0; i < 3; i++) {
		var v = parseInt(c.substr(1 + 2 * i, 2), 16);
		o += ("0" + Math.round(0.45 * v + 0.55 * 238).toString(16)).slice(-2);
	}
	return o;
}

// What a frame is painted with: [fill, label colour].
function paint(f) {
	var c = colour(f);
	if (f.vis == 2)
		c = dim(c);
	return [c, ink(c)];
}

function colour(f) {
	if (f.hit)
		return "#e600e6";
	if (!byModule || !f.mod)
		return f.fill;
	return modColour(f.mod, f.name);
}

// Colour by kind, or by module (its legend: the modules of the widest frames).
function colourBy(module) {
	byModule = module;
	say("colour", "Colour: " + (module ? "module" : C.colours || "kind"));
	var items = KINDS;
	if (module) {
		var wide = {}, names = [];
		for (var i = 0; i < F.length; i++) {
			var f = F[i];
			if (f.mod && !(f.mod in wide))
				names.push(f.mod);
			if (f.mod && (wide[f.mod] || 0) < f.w)
				wide[f.mod] = f.w;
		}
		names.sort(function (a, b) { return wide[b] - wide[a] || (a < b ? -1 : 1); });
		names.forEach(function (m, j) { hues[m] = (20 + 137.508 * j) % 360; });
		items = names.slice(0, 8).map(function (m) { return [modColour(m, ""), m]; });
	}
	legend(items);
	draw();
}

function details(f) {
	say("details", f ? f.name + (f.mod ? " in " + f.mod : "") + ": " + f.n : " ");
}

function keys(e) {
	if ((e.ctrlKey || e.metaKey) && (e.key == "f" || e.key == "F") || e.key == "F3") {
		e.preventDefault();
		askSearch();
	} else if (e.key == "Escape") {
		zoom(null);
		search("");
	}
}

// ?s=TEXT in the address: search for it at once.
function searchFromAddress() {
	try {
		var s = new URLSearchParams(location.search).get("s");
		if (s)
			search(s);
	} catch (e) { }
}
