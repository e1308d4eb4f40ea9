// The SVG: every frame is a <g class=KIND> of <title>, <rect> and maybe
// <text>; C, written before this script, holds the geometry svg.c used.
var NS = "http://www.w3.org/2000/svg";

function $(id) { return document.getElementById(id); }
function say(id, t) { $(id).textContent = t; }

function read(g) {
	var r = g.getElementsByTagName("rect")[0], k = g.getAttribute("class");
	var t = g.firstChild.textContent.split("\n"), mod = "";
	if (k != "r" && k != "g")
		mod = t[1].slice(3, t[1].lastIndexOf(" ("));
	var f = { g: g, r: r, t: g.getElementsByTagName("text")[0] || null, kind: k,
		x: (+r.getAttribute("x") - C.xpad) / C.plotw, w: +r.getAttribute("width") / C.plotw,
		d: Math.round((+r.getAttribute("y") - C.y0) / C.dy), name: t[0], mod: mod,
		fill: r.getAttribute("fill"), n: t[t.length - 1], vis: 1 };
	f.vx = f.x;
	f.vw = f.w;
	g.f = f;
	return f;
}

function label(f, x, w, fg) {
	var n = Math.floor((w - 6) / C.cw), s = "";
	if (n >= 3)
		s = f.name.length <= n ? f.name : f.name.slice(0, n - 2) + "..";
	if (!f.t) {
		if (!s)
			return;
		f.t = document.createElementNS(NS, "text");
		f.t.setAttribute("y", (+f.r.getAttribute("y") + C.ty).toFixed(1));
		f.g.appendChild(f.t);
	}
	f.t.setAttribute("x", (x + 3).toFixed(2));
	f.t.setAttribute("fill", fg);
	f.t.textContent = s;
}

function draw() {
	for (var i = 0; i < F.length; i++) {
		var f = F[i];
		f.g.style.display = f.vis ? "" : "none";
		if (!f.vis)
			continue;
		f.g.setAttribute("class", f.vis == 2 ? f.kind + " dim" : f.kind);
		var x = C.xpad + f.vx * C.plotw, w = f.vw * C.plotw;
		f.r.setAttribute("x", x.toFixed(2));
		f.r.setAttribute("width", w.toFixed(2));
		var p = paint(f);
		f.r.setAttribute("fill", p[0]);
		label(f, x, w, p[1]);
	}
}

function legend(items) {
	var l = $("legend"), x = 0;
	while (l.firstChild)
		l.removeChild(l.firstChild);
	for (var i = 0; i < items.length; i++) {
		var r = document.createElementNS(NS, "rect"), t = document.createElementNS(NS, "text");
		r.setAttribute("x", x); r.setAttribute("y", -9);
		r.setAttribute("width", 10); r.setAttribute("height", 10);
		r.setAttribute("fill", items[i][0]);
		t.setAttribute("x", x + 14);
		t.textContent = items[i][1];
		l.appendChild(r);
		l.appendChild(t);
		x += 24 + C.cw * items[i][1].length;
	}
}

function frameOf(e) {
	for (var n = e.target; n && n.parentNode; n = n.parentNode)
		if (n.f)
			return n.f;
	return null;
}

// Title, buttons and details line stay in view as the picture scrolls.
function pin() {
	var y = window.scrollY, h = window.innerHeight;
	$("head").setAttribute("transform", "translate(0," + y + ")");
	$("foot").setAttribute("transform", "translate(0," + Math.min(0, y + h - C.h) + ")");
}

function init() {
	var gs = $("frames").children;
	for (var i = 0; i < gs.length; i++)
		F.push(read(gs[i]));
	var fr = $("frames");
	fr.addEventListener("click", function (e) { var f = frameOf(e); if (f) zoom(f); });
	fr.addEventListener("mouseover", function (e) { details(frameOf(e)); });
	fr.addEventListener("mouseout", function () { details(null); });
	$("reset").addEventListener("click", function () { zoom(null); });
	$("search").addEventListener("click", askSearch);
	$("colour").addEventListener("click", function () { colourBy(!byModule); });
	document.addEventListener("keydown", keys);
	window.addEventListener("scroll", pin);
	window.addEventListener("resize", pin);
	// A flame taller than the window opens on its root, at the bottom.
	if (C.dy < 0)
		window.scrollTo(window.scrollX, C.h);
	pin();
	searchFromAddress();
}
window.addEventListener("load", init);
