// The HTML page: frames are drawn on a canvas from D, the list html.c
// wrote before this script: D.f holds 8 numbers a frame: depth, x, width (in amounts), name,
// module, kind and colour (indexes into D.names, D.kinds and D.kindNames,
// D.cols), samples.
var cv, ctx, rows = [];

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
			kindName: D.kindNames[a[i + 5]], s: a[i + 7], vis: 1 };
		f.vx = f.x;
		f.vw = f.w;
		f.n = f.s + (f.s == 1 ? " sample, " : " samples, ") +
			(C.bytes ? size(f.w * C.bytes) + ", " : "") + pct(f);
		F.push(f);
		(rows[f.d] = rows[f.d] || []).push(f);
	}
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
	cv.addEventListener("click", function (e) { var f = at(e); if (f) zoom(f); });
	cv.addEventListener("mousemove", function (e) {
		var f = at(e);
		details(f);
		cv.title = f ? f.name + (f.mod ? "\nin " + f.mod + " (" + f.kindName + ")" : "") + "\n" + f.n : "";
	});
	cv.addEventListener("mouseout", function () { details(null); });
	$("reset").addEventListener("click", function () { zoom(null); });
	$("search").addEventListener("click", askSearch);
	$("colour").addEventListener("click", function () { colourBy(!byModule); });
	document.addEventListener("keydown", keys);
	// A flame taller than the window opens on its root, at the bottom.
	if (C.dy < 0)
		window.scrollTo(window.scrollX, document.documentElement.scrollHeight);
	searchFromAddress();
}
init();
