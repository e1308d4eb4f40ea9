// The HTML page: frames are drawn on a canvas from D, the list html.c
// wrote before this script: D.f holds 8 numbers a frame: depth, x, width (in amounts), name,
// module, kind and colour (indexes into D.names, D.kinds and D.kindNames,
// D.cols), samples.  D.src: per function with source lines, [name, module,
// self, total, samples, lines not listed, then 6 a line: file (index into
// D.files), line, self, total, samples, text or null]; D.files: [path,
// 0 read, 1 changed after the recording, 2 not readable].
var cv, ctx, rows = [], SRC = {};

function $(id) { return document.getElementById(id); }
function say(id, t) { $(id).textContent = t; }

function pct(f) {
	var p = 100 * f.w;
	return p.toFixed(2) + "%";
}

// "1.2 MiB": bytes as the text report writes them (C.bytes: allocations).
function size(b) {
	var u = [" B", " KiB", " MiB", " GiB", " TiB"], i = 0;
	while (b >= 1024 && i < 4) { b /= 1024; i++; }
	return (i == 0 ? b.toFixed(0) : b < 10 ? b.toFixed(1) : b.toFixed(0)) + u[i];
}

function read() {
	var a = D.f, total = a[2];
	for (var i = 0; i + 7 < a.length; i += 8) {
		var f = { d: a[i], x: a[i + 1] / total, w: a[i + 2] / total, name: D.names[a[i + 3]],
			mod: D.names[a[i + 4]], kind: D.kinds[a[i + 5]], fill: D.cols[a[i + 6]],
			kindName: D.kindNames[a[i + 5]], s: a[i + 7], vis: 1, key: a[i + 3] + "," + a[i + 4] };
		f.vx = f.x;
		f.vw = f.w;
		f.n = f.s + (f.s == 1 ? " sample, " : " samples, ") +
			(C.bytes ? size(f.w * C.bytes) + ", " : "") + pct(f);
		F.push(f);
		(rows[f.d] = rows[f.d] || []).push(f);
	}
	for (i = 0; i < (D.src || []).length; i++)
		SRC[D.src[i][0] + "," + D.src[i][1]] = D.src[i];
}

// ---- the source lines panel: a click on a frame shows its function's ----

// Why a frame has no lines, by its kind (the program's and libraries' own: NOLINE).
var NOLINES = { k: "kernel code", o: "off-CPU time (waiting), not code",
	g: "a process or thread, not a function",
	u: "no symbol or debug information covers this code" };
var NOLINE = "no DWARF line information for its addresses (built without -g, " +
	"or its debug information is not installed)";

function share(a) {
	return (100 * a / D.f[2]).toFixed(2) + "%";
}

function row(tr, tag, cells) {
	for (var i = 0; i < cells.length; i++) {
		var c = document.createElement(tag);
		c.textContent = cells[i][0];
		if (cells[i][1])
			c.className = cells[i][1];
		if (cells[i][2])
			c.title = cells[i][2];
		tr.appendChild(c);
	}
	$("plines").appendChild(tr);
}

function showLines(f) {
	if (!f || f.d == 0)
		return closeLines();
	var s = SRC[f.key], notes = [], used = {};
	say("pname", f.name);
	say("pmod", f.mod ? "in " + f.mod : "");
	$("plines").textContent = "";
	if (!s) {
		say("psum", "");
		notes.push("No source lines: " + (NOLINES[f.kind] || NOLINE) + ".");
	} else {
		say("psum", "Total " + share(s[3]) + ", self " + share(s[2]) + ", " + s[4] +
			(s[4] == 1 ? " sample" : " samples") + "; its hottest source lines:");
		row(document.createElement("tr"), "th", [["Line", "at"], ["Self"], ["Total"],
			["Samples"], ["Source", "text"]]);
		for (var j = 6; j + 5 < s.length; j += 6) {
			var file = D.files[s[j]];
			used[s[j]] = 1;
			row(document.createElement("tr"), "td", [
				[file[0].replace(/^.*\//, "") + ":" + s[j + 1], "at", file[0]],
				[share(s[j + 2])], [share(s[j + 3])], [String(s[j + 4])],
				[s[j + 5] === null ? "" : s[j + 5], "text", s[j + 5] || ""]]);
		}
		if (s[5])
			notes.push(s[5] + " more line" + (s[5] == 1 ? "" : "s") + " not listed.");
		for (var k in used) {
			if (D.files[k][1] == 1)
				notes.push(D.files[k][0] + " changed after the recording: its lines may not be the ones that ran.");
			else if (D.files[k][1] == 2)
				notes.push(D.files[k][0] + ": not readable here, no text.");
		}
	}
	say("pnote", notes.join(" "));
	$("panel").hidden = false;
	// The frame clicked stays in view, above the panel.
	var b = box(f), y = cv.getBoundingClientRect().top + b.y + C.fh,
		dock = $("dock").getBoundingClientRect().top;
	if (y > dock)
		window.scrollBy(0, y - dock + 4);
	return true;
}

// Close the panel; false when it was not open.
function closeLines() {
	if ($("panel").hidden)
		return false;
	$("panel").hidden = true;
	return true;
}

// Where a frame is drawn, in the canvas's CSS pixels.
function box(f) {
	return { x: C.xpad + f.vx * C.plotw, y: C.y0 + C.dy * f.d, w: f.vw * C.plotw };
}

function draw() {
	var r = window.devicePixelRatio || 1;
	ctx.setTransform(r, 0, 0, r, 0, 0);
	ctx.clearRect(0, 0, cv.width, cv.height);
	ctx.font = "11px monospace";
	ctx.textBaseline = "alphabetic";
	for (var i = 0; i < F.length; i++) {
		var f = F[i];
		if (!f.vis)
			continue;
		var b = box(f);
		var p = paint(f);
		ctx.fillStyle = p[0];
		ctx.fillRect(b.x, b.y, b.w, C.fh - 1);
		var n = Math.floor((b.w - 6) / C.cw);
		f.drawn = n >= 3 ? p : [p[0], null];
		if (n >= 3) {
			ctx.fillStyle = p[1];
			ctx.fillText(f.name.length <= n ? f.name : f.name.slice(0, n - 2) + "..", b.x + 3, b.y + C.ty);
		}
	}
}

function at(e) {
	var rc = cv.getBoundingClientRect(), x = e.clientX - rc.left, y = e.clientY - rc.top;
	var d = C.dy > 0 ? Math.floor((y - C.y0) / C.fh) : Math.ceil((C.y0 - y) / C.fh);
	var row = rows[d] || [];
	for (var i = 0; i < row.length; i++) {
		var f = row[i], b = box(f);
		if (f.vis && x >= b.x && x < b.x + b.w)
			return f;
	}
	return null;
}

function legend(items) {
	var l = $("legend");
	l.textContent = "";
	for (var i = 0; i < items.length; i++) {
		var s = document.createElement("span"), b = document.createElement("b");
		b.style.background = items[i][0];
		s.appendChild(b);
		s.appendChild(document.createTextNode(items[i][1]));
		l.appendChild(s);
	}
}

// The frames as drawn, in page coordinates (tests/flamegraph.js reads them).
function geom() {
	var rc = cv.getBoundingClientRect();
	return F.map(function (f) {
		var b = box(f);
		return { name: f.name, kind: f.kind, dim: f.vis == 2, shown: !!f.vis,
			x: rc.left + window.scrollX + b.x, y: rc.top + window.scrollY + b.y, w: b.w,
			fill: f.drawn && f.drawn[0], ink: f.drawn && f.drawn[1], d: f.d };
	});
}

function init() {
	cv = $("flame");
	ctx = cv.getContext("2d");
	var r = window.devicePixelRatio || 1;
	cv.width = C.width * r;
	cv.height = C.height * r;
	cv.style.width = C.width + "px";
	cv.style.height = C.height + "px";
	read();
	legend(KINDS);
	draw();
	cv.addEventListener("click", function (e) {
		var f = at(e);
		if (f) {
			zoom(f);
			showLines(f);
		}
	});
	cv.addEventListener("mousemove", function (e) {
		var f = at(e);
		details(f);
		cv.title = f ? f.name + (f.mod ? "\nin " + f.mod + " (" + f.kindName + ")" : "") + "\n" + f.n : "";
	});
	cv.addEventListener("mouseout", function () { details(null); });
	$("reset").addEventListener("click", function () { zoom(null); });
	$("search").addEventListener("click", askSearch);
	$("colour").addEventListener("click", function () { colourBy(!byModule); });
	$("pclose").addEventListener("click", closeLines);
	// Escape closes the panel first; the next one resets zoom and search (keys()).
	document.addEventListener("keydown", function (e) {
		if (e.key == "Escape" && closeLines())
			e.stopImmediatePropagation();
	});
	document.addEventListener("keydown", keys);
	// A flame taller than the window opens on its root, at the bottom.
	if (C.dy < 0)
		window.scrollTo(window.scrollX, document.documentElement.scrollHeight);
	searchFromAddress();
}
init();
