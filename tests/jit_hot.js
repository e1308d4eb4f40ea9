// jit_hot.js - JavaScript for tests/92-jit.t, run by node.
//   node jit_hot.js js SECONDS          hotA and hotB, called 3:1
//   node jit_hot.js addon FILE SECONDS [CALLS]  callNative, calling C (FILE: jit_addon.c
//                                       built); CALLS: that many calls (a fixed amount of work)
//   node jit_hot.js loops N             as js, N rounds (a fixed amount of work: scripts/bench)
function hotA(n) { let s = 0; for (let i = 0; i < n; i++) s = (s + i * 7) % 1000003; return s; }
function hotB(n) { let s = 0; for (let i = 0; i < n; i++) s = (s + i * 7) % 1000003; return s; }
function callNative(addon, n) { return addon.work(n) + 1; }

const mode = process.argv[2];
const secs = Number(process.argv[mode === 'addon' ? 4 : 3] || 2);
const end = Date.now() + secs * 1000;
const loops = mode === 'loops' ? Number(process.argv[3]) : Infinity;
let x = 0;
if (mode === 'addon') {
	const addon = require(process.argv[3]);
	const calls = Number(process.argv[5] || Infinity);
	for (let i = 0; calls !== Infinity ? i < calls : Date.now() < end; i++)
		x += callNative(addon, 2000000);
} else {
	for (let i = 0; mode === 'loops' ? i < loops : Date.now() < end; i++) {
		x += hotA(300000); x += hotA(300000); x += hotA(300000);
		x += hotB(300000);
	}
}
console.log(x > 0 ? 'done' : 'zero');
