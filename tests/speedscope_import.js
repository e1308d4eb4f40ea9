// speedscope_import.js - speedscope's own importer, as `speedscope FILE`
// runs it, in headless Chromium (puppeteer-core): for tests/81 and 82.
//
//   require(ROOT + '/tests/speedscope_import.js').importAll(NM, pairs)
//
// NM holds node_modules (speedscope, puppeteer-core: scripts/install-deps);
// pairs is [IN, OUT, IN, OUT...]: the app reads each IN, and what it read
// is written to OUT through the app's own export (Ctrl+S).  Prints what the
// app logged (which importer it chose) and resolves to the failures.
'use strict';
const fs = require('fs'), path = require('path');

// As `speedscope FILE` does: a script handing the file to the app, named in
// the page's #localProfilePath.  The app logs the importer it chose; its
// export is caught where it makes the download's blob.
async function importOne(browser, APP, file, out) {
	const js = path.resolve(out + '.load.js');
	fs.writeFileSync(js, `speedscope.loadFileFromBase64(${JSON.stringify(path.basename(file))}, ` +
		`${JSON.stringify(fs.readFileSync(file).toString('base64'))})`);
	const page = await browser.newPage();
	const log = [];
	page.on('console', m => log.push(m.text()));
	page.on('pageerror', e => log.push('page error: ' + e.message));
	page.on('dialog', d => { log.push('dialog: ' + d.message()); d.dismiss(); });
	await page.evaluateOnNewDocument(() => {
		const make = URL.createObjectURL;
		URL.createObjectURL = b => { b.text().then(t => { window.__saved = t; }); return make.call(URL, b); };
	});
	await page.goto('file://' + path.resolve(APP, 'index.html') + '#localProfilePath=' + js);
	let ok = await page.waitForFunction(() => document.title.endsWith(' - speedscope') ||
		document.body.innerText.includes('went wrong'), {timeout: 15000}).then(() => true, () => false);
	ok = ok && !(await page.evaluate(() => document.body.innerText.includes('went wrong')));
	if (ok) {
		await new Promise(r => setTimeout(r, 300));     /* the app takes the group after the title */
		await page.keyboard.down('Control');
		await page.keyboard.press('s');
		await page.keyboard.up('Control');
		ok = await page.waitForFunction(() => window.__saved !== undefined, {timeout: 10000})
			.then(() => true, () => false);
	}
	if (ok) fs.writeFileSync(out, await page.evaluate(() => window.__saved));
	for (const l of log) if (!/^(speedscope v|WebGL initialized)/.test(l)) console.log(`${file}: ${l}`);
	console.log(`${file}: ${ok ? 'imported, exported to ' + out : 'NOT imported'}`);
	await page.close();
	return ok;
}

async function importAll(NM, pairs) {
	const APP = NM + '/speedscope/dist/release';
	const puppeteer = require(NM + '/puppeteer-core');
	const browser = await puppeteer.launch({
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
		args: ['--no-sandbox', '--allow-file-access-from-files',
		       '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
	});
	let failed = 0;
	try {
		for (let i = 0; i + 1 < pairs.length; i += 2)
			failed += !(await importOne(browser, APP, pairs[i], pairs[i + 1]));
	} finally {
		await browser.close();
	}
	return failed;
}

module.exports = { importAll };
