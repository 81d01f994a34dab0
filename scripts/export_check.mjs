#!/usr/bin/env node
// Side-by-side check of the HTML session export: ours and the TypeScript pi 0.73.1's, from
// the same branched session (tool calls, an image, a compaction, a branch summary), opened
// in headless Chromium, clicked through, screenshotted, and timed on a 10,000-entry session.
//
//   npm install --prefix /tmp/pw playwright-core        # never downloads a browser
//   cargo build && PW_DIR=/tmp/pw node scripts/export_check.mjs [--out DIR] [--big N]
//
// Environment: PI_BIN (ours, default target/debug/pi), PI_TS (pi 0.73.1, default
// /work/scratch/pi073/node_modules/.bin/pi), CHROMIUM (default /usr/bin/chromium), PW_DIR
// (a folder whose node_modules holds playwright-core). Exits non-zero when a check fails.
// Not part of `make test`: it needs Chromium and the TypeScript pi.

import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const out = path.resolve(opt('--out', path.join(os.tmpdir(), 'pi-export-check')));
const bigN = Number(opt('--big', '10000'));
const ours = process.env.PI_BIN || path.join(root, 'target/debug/pi');
const theirs = process.env.PI_TS || '/work/scratch/pi073/node_modules/.bin/pi';
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
const require = createRequire(import.meta.url);
const pwPath = require.resolve('playwright-core', { paths: [process.env.PW_DIR, process.cwd(), root].filter(Boolean).map(p => path.join(p, 'node_modules')) });
const { chromium } = require(pwPath);

fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });
const failures = [];
const check = (ok, what) => { console.log((ok ? 'ok   ' : 'FAIL ') + what); if (!ok) failures.push(what); };

// ---------- Export with both ----------
function exportWith(bin, session, html, extraEnv = {}) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'pi-export-home-'));
  const env = { ...process.env, HOME: home, PI_CODING_AGENT_DIR: path.join(home, 'agent'), PI_OFFLINE: '1', PI_SKIP_VERSION_CHECK: '1' };
  delete env.COLORFGBG;
  Object.assign(env, extraEnv);
  execFileSync(bin, ['--export', session, html], { env, stdio: ['ignore', 'pipe', 'pipe'], cwd: home });
  fs.rmSync(home, { recursive: true, force: true });
}
function embedded(html) {
  const m = /<script id="session-data" type="application\/json">([^<]*)<\/script>/.exec(fs.readFileSync(html, 'utf8'));
  return m && JSON.parse(Buffer.from(m[1].trim(), 'base64').toString('utf8'));
}

const fixture = path.join(root, 'fixtures/sessions/export-branched.jsonl');
const pages = { ours: path.join(out, 'ours.html'), pi: path.join(out, 'pi.html') };
exportWith(ours, fixture, pages.ours);
exportWith(theirs, fixture, pages.pi);
const dOurs = embedded(pages.ours), dPi = embedded(pages.pi);
check(!!dOurs && !!dPi, 'both pages embed base64 session data in <script id="session-data">');
check(JSON.stringify(dOurs.header) === JSON.stringify(dPi.header), 'embedded header is the same');
check(JSON.stringify(dOurs.entries) === JSON.stringify(dPi.entries), 'embedded entries are the same');
check(dOurs.leafId === dPi.leafId, 'embedded leafId is the same');
check(JSON.stringify(Object.keys(dOurs)) === JSON.stringify(Object.keys(dPi)), 'embedded keys are the same: ' + Object.keys(dOurs).join(','));
console.log(`sizes: ours ${fs.statSync(pages.ours).size} bytes, pi ${fs.statSync(pages.pi).size} bytes`);

// ---------- Drive both in Chromium ----------
const UI = {
  ours: { row: '.tn', status: '#tree-status', filter: f => `.filter[data-filter="${f}"]`, search: '#search' },
  pi: { row: '.tree-node', status: '#tree-status', filter: f => `.filter-btn[data-filter="${f}"]`, search: '#tree-search' },
};
const browser = await chromium.launch({
  executablePath: chromiumPath,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const requests = [];
async function open(which, file, viewport = { width: 1400, height: 900 }) {
  const page = await browser.newPage({ viewport });
  page.errors = [];
  page.on('pageerror', e => page.errors.push(String(e)));
  page.on('request', r => { if (!r.url().startsWith('file:') && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) requests.push(which + ': ' + r.url()); });
  await page.goto('file://' + file);
  await page.waitForTimeout(200);
  return page;
}
// The visible text of the conversation (ours skips painting off-screen messages, which
// innerText would leave out, so that is switched off while reading).
const text = page => page.evaluate(() => {
  const s = document.createElement('style');
  s.textContent = '#messages>*{content-visibility:visible!important}';
  document.head.appendChild(s);
  const t = document.getElementById('messages').innerText;
  s.remove();
  return t;
});
const rows = (page, ui) => page.$$eval(ui.row, els => els.map(e => e.innerText.replace(/•\s*/, '•')));
async function clickRow(page, ui, needle) {
  const handles = await page.$$(ui.row);
  for (const h of handles) if ((await h.innerText()).includes(needle)) { await h.click(); await page.waitForTimeout(250); return true; }
  return false;
}
async function shot(page, name) { await page.screenshot({ path: path.join(out, name + '.png') }); }

const steps = [];
const state = {};
for (const which of ['ours', 'pi']) {
  const ui = UI[which];
  const page = await open(which, pages[which]);
  const s = (state[which] = {});
  s.initial = await text(page);
  s.status = await page.$eval(ui.status, e => e.textContent);
  s.rowsDefault = await rows(page, ui);
  await shot(page, which + '-1-initial');
  s.clickedA = await clickRow(page, ui, 'Now add a test for the empty case.');
  s.branchA = await text(page);
  await shot(page, which + '-2-branch-a');
  await page.evaluate(() => window.scrollTo(0, 0));
  s.clickedB = await clickRow(page, ui, 'Actually, make');
  s.branchB = await text(page);
  await shot(page, which + '-3-branch-b');
  await page.keyboard.press('o');
  await page.waitForTimeout(100);
  s.toolsOpen = await text(page);
  await page.keyboard.press('t');
  await page.waitForTimeout(100);
  s.thinkingClosed = await text(page);
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, which + '-4-tools-open-thinking-closed');
  for (const f of ['no-tools', 'user-only', 'labeled-only', 'all']) {
    await page.click(ui.filter(f));
    await page.waitForTimeout(100);
    s['rows-' + f] = (await rows(page, ui)).length;
    s['status-' + f] = await page.$eval(ui.status, e => e.textContent);
  }
  await page.keyboard.press('Escape');
  await page.waitForTimeout(200);
  s.afterEscape = await text(page);
  await page.click(ui.filter('default'));
  await page.fill(ui.search, 'clippy');
  await page.waitForTimeout(200);
  s.searchRows = await rows(page, ui);
  await shot(page, which + '-5-search');
  s.errors = page.errors;
  // A deep link: ?leafId=…&targetId=… opens that branch at that entry.
  const deep = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await deep.goto('file://' + pages[which] + '?leafId=a0000020&targetId=a0000016');
  await deep.waitForTimeout(300);
  s.deep = await text(deep);
  if (which === 'ours') {
    s.hiddenBefore = s.deep.includes('Hidden reminder');
    await deep.keyboard.press('h');
    s.hiddenAfter = (await text(deep)).includes('Hidden reminder');
  }
  await deep.close();
  // The narrow layout: the tree hides behind a button.
  const narrow = await open(which, pages[which], { width: 700, height: 900 });
  await shot(narrow, which + '-6-narrow');
  await narrow.click(which === 'ours' ? '#menu' : '#hamburger');
  await narrow.waitForTimeout(400);
  await shot(narrow, which + '-6b-narrow-tree');
  s.narrowTree = await clickRow(narrow, ui, 'Now add a test for the empty case.') && (await text(narrow)).includes('Both cases are covered now.');
  await narrow.close();
  await page.close();
}
for (const which of ['ours', 'pi']) {
  const s = state[which];
  check(s.errors.length === 0, `${which}: no script errors ${s.errors.join(' | ')}`);
  check(s.initial.includes('Shall I go ahead?') && !s.initial.includes('Both cases are covered'), `${which}: opens on the file's last branch`);
  check(s.clickedA && s.branchA.includes('Both cases are covered now.') && s.branchA.includes('[compaction]') && !s.branchA.includes('Shall I go ahead?'), `${which}: clicking a tree entry shows its branch`);
  check(s.clickedB && s.branchB.includes('Shall I go ahead?') && s.branchB.includes('Branch Summary'), `${which}: clicking back shows the other branch`);
  check(!s.branchB.includes('test result: FAILED') && s.toolsOpen.includes('test result: FAILED'), `${which}: O expands collapsed tool output`);
  check(s.afterEscape.includes('Shall I go ahead?'), `${which}: Escape goes back to the session's leaf`);
  check(s.deep.includes('Both cases are covered now.') && !s.deep.includes('Shall I go ahead?'), `${which}: a ?leafId=&targetId= link opens that branch`);
  if (which === 'ours') check(!s.hiddenBefore && s.hiddenAfter, 'ours: H shows custom messages hidden in the terminal');
  check(s.narrowTree, `${which}: on a narrow screen the tree opens from its button and navigates`);
  check(s.toolsOpen.includes('Returning None') && !s.thinkingClosed.includes('Returning None') && s.thinkingClosed.includes('Thinking ...'), `${which}: T collapses thinking`);
}
const same = (what, f) => { const a = f(state.ours), b = f(state.pi); check(JSON.stringify(a) === JSON.stringify(b), `same ${what}: ours ${JSON.stringify(a)} / pi ${JSON.stringify(b)}`); };
same('tree status', s => s.status);
same('tree rows (default filter)', s => s.rowsDefault.map(r => r.replace(/\s+/g, ' ').trim()));
for (const f of ['no-tools', 'user-only', 'labeled-only', 'all']) same(`row count with filter ${f}`, s => s['rows-' + f]);
same('search rows for "clippy"', s => s.searchRows.map(r => r.replace(/\s+/g, ' ').trim()));
check(requests.length === 0, 'no network requests' + (requests.length ? ': ' + requests.join(', ') : ''));

// Side-by-side composites: ours left, pi right.
async function sideBySide(name) {
  const sbs = await browser.newPage({ viewport: { width: 2820, height: 920 } });
  const img = w => 'data:image/png;base64,' + fs.readFileSync(path.join(out, `${w}-${name}.png`)).toString('base64');
  await sbs.setContent(`<body style="margin:0;background:#888;display:flex;gap:20px;align-items:flex-start;font:14px sans-serif">
    <div><div>ours</div><img src="${img('ours')}"></div><div><div>pi 0.73.1</div><img src="${img('pi')}"></div></body>`);
  await sbs.screenshot({ path: path.join(out, `side-by-side-${name}.png`), fullPage: true });
  await sbs.close();
}
for (const name of ['1-initial', '2-branch-a', '3-branch-b', '4-tools-open-thinking-closed', '5-search', '6-narrow', '6b-narrow-tree']) await sideBySide(name);

// ---------- Markdown: the same structure as pi's (marked) ----------
const MD = [
  '# Title\n\nSome *em*, **strong**, ***both***, ~~gone~~, `code`, and a_snake_case_word.\nA second line.',
  '## Lists\n\n- one\n- two\n  - nested\n  - nested 2\n- three\n\n1. first\n2. second\n\n- [ ] todo\n- [x] done',
  '| a | b |\n|:--|--:|\n| 1 | **2** |\n| `x` | y |\n\n> quoted *text*\n> more\n\n---\n\n```python\ndef f(x):\n    return x + 1  # inc\n```',
  'Links: [site](https://example.com "t"), <https://auto.example>, https://bare.example/path. Escapes: \\*not em\\*.\n\n    indented code\n\nEnd.',
];
const mdSession = path.join(out, 'markdown.jsonl');
writeSession(mdSession, MD.map((t, i) => i % 2 ? { role: 'assistant', text: t } : { role: 'user', text: t }));
const mdPages = { ours: path.join(out, 'md-ours.html'), pi: path.join(out, 'md-pi.html') };
exportWith(ours, mdSession, mdPages.ours);
exportWith(theirs, mdSession, mdPages.pi);
const TAGS = ['h1', 'h2', 'p', 'em', 'strong', 'del', 'code', 'pre', 'ul', 'ol', 'li', 'input', 'table', 'th', 'td', 'blockquote', 'hr', 'a', 'br'];
const structure = {};
for (const which of ['ours', 'pi']) {
  const page = await open(which, mdPages[which]);
  structure[which] = await page.evaluate(tags => {
    const blocks = [...document.querySelectorAll('#messages .md, #messages .markdown-content')];
    return blocks.map(b => Object.fromEntries(tags.map(t => [t, b.querySelectorAll(t).length]).filter(([, n]) => n)));
  }, TAGS);
  await shot(page, which + '-7-markdown');
  await page.close();
}
for (let i = 0; i < MD.length; i++) {
  const a = structure.ours[i] || {}, b = structure.pi[i] || {};
  const diff = TAGS.filter(t => (a[t] || 0) !== (b[t] || 0)).map(t => `${t} ${a[t] || 0}/${b[t] || 0}`);
  check(!diff.length, `markdown block ${i + 1} has pi's structure` + (diff.length ? ' (ours/pi: ' + diff.join(', ') + ')' : ''));
}

// ---------- Hostile content stays text (ours) ----------
const xss = path.join(out, 'hostile.jsonl');
writeSession(xss, [
  { role: 'user', text: '<img src=x onerror="window.__pwned=1"> <script>window.__pwned=1</script> </script><b>x</b>' },
  { role: 'assistant', text: '[click](javascript:window.__pwned=1) [data](data:text/html,x) ![pixel](https://tracker.example/p.png) <iframe src="https://e.example"></iframe>\n\n```html\n</script><script>window.__pwned=1</script>\n```' },
]);
const xssPage = path.join(out, 'hostile-ours.html');
exportWith(ours, xss, xssPage);
{
  const page = await open('ours', xssPage);
  const r = await page.evaluate(() => ({
    pwned: !!window.__pwned,
    imgs: [...document.querySelectorAll('#messages img')].map(i => i.getAttribute('src')),
    hrefs: [...document.querySelectorAll('#messages a')].map(a => a.getAttribute('href')),
    frames: document.querySelectorAll('iframe, #messages script').length,
    text: document.getElementById('messages').textContent,
  }));
  check(!r.pwned && r.frames === 0 && r.imgs.length === 0, 'hostile content runs nothing and loads nothing');
  check(r.hrefs.every(h => /^https:/.test(h)), 'only web links are links: ' + JSON.stringify(r.hrefs));
  check(r.text.includes('<img src=x onerror') && r.text.includes('</script><script>'), 'hostile markup is shown as text');
  await page.close();
}

// ---------- pi 1.x entries (ours only: 0.73.1 predates them) ----------
{
  const page = await open('ours', (() => { const f = path.join(out, 'v087-ours.html'); exportWith(ours, path.join(root, 'fixtures/sessions/pi-0.87.1-rpc.jsonl'), f); return f; })());
  const t = await text(page);
  check(t.includes('System Prompt') && t.includes('Available Tools'), '1.x system message shows as the system prompt and tools');
  await page.click(UI.ours.filter('all'));
  const all = (await rows(page, UI.ours)).join('\n');
  check(all.includes('[system prompt]') && all.includes('[context replace: 0b261d79]') && all.includes('[context omit: 8926ece6]'), '1.x system and context_edit entries are in the tree');
  await shot(page, 'ours-8-pi1x');
  check(page.errors.length === 0, 'no script errors on a 1.x session');
  await page.close();
}

// ---------- Light theme (COLORFGBG says the terminal is light) ----------
{
  const light = { ours: path.join(out, 'light-ours.html'), pi: path.join(out, 'light-pi.html') };
  exportWith(ours, fixture, light.ours, { COLORFGBG: '0;15' });
  exportWith(theirs, fixture, light.pi, { COLORFGBG: '0;15' });
  for (const which of ['ours', 'pi']) {
    const page = await open(which, light[which]);
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    check(bg === 'rgb(248, 248, 248)', `${which}: light theme page background ${bg}`);
    await shot(page, which + '-9-light');
    await page.close();
  }
}
for (const name of ['7-markdown', '9-light']) await sideBySide(name);

// ---------- A long session ----------
if (bigN > 0) {
  const big = path.join(out, 'big.jsonl');
  writeBigSession(big, bigN);
  const bigPages = { ours: path.join(out, 'big-ours.html'), pi: path.join(out, 'big-pi.html') };
  exportWith(ours, big, bigPages.ours);
  exportWith(theirs, big, bigPages.pi);
  const timing = {};
  for (const which of ['ours', 'pi']) {
    const ui = UI[which];
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors = [];
    page.on('pageerror', e => errors.push(String(e)));
    const t0 = Date.now();
    await page.goto('file://' + bigPages[which], { waitUntil: 'load', timeout: 600000 });
    const shown = await page.waitForSelector('#messages > *', { timeout: 60000 }).then(() => true, () => false);
    if (!shown) {
      timing[which] = { size: fs.statSync(bigPages[which]).size, firstScreen: 'fails: ' + (errors[0] || 'nothing shown in 60 s') };
      await page.close();
      continue;
    }
    const firstScreen = Date.now() - t0;
    // Until every message of the branch is in the page (ours adds them in slices).
    await page.waitForFunction(() => !window.piViewer || window.piViewer.done(), null, { timeout: 600000, polling: 50 });
    const allRendered = Date.now() - t0;
    await page.screenshot({ path: path.join(out, `big-${which}.png`) });
    // Timed inside the page, up to the next frame: a click on a tree entry in the middle of
    // the sidebar, a search, the O toggle over every tool output of the branch.
    const frame = () => new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
    const click = await page.evaluate(async ([sel, frameSrc]) => {
      const frame = eval(frameSrc);
      const rows = document.querySelectorAll(sel);
      const t0 = performance.now();
      rows[Math.floor(rows.length / 2)].click();
      await frame();
      return Math.round(performance.now() - t0);
    }, [ui.row, frame.toString()]);
    await page.waitForFunction(() => !window.piViewer || window.piViewer.done(), null, { timeout: 600000, polling: 20 });
    const search = await page.evaluate(async ([sel, frameSrc]) => {
      const frame = eval(frameSrc);
      const input = document.querySelector(sel);
      const t0 = performance.now();
      input.value = 'needle-7';
      input.dispatchEvent(new Event('input'));
      await frame();
      await frame();
      return Math.round(performance.now() - t0);
    }, [ui.search, frame.toString()]);
    const toggle = await page.evaluate(async frameSrc => {
      const frame = eval(frameSrc);
      const t0 = performance.now();
      document.dispatchEvent(new KeyboardEvent('keydown', { key: 'o' }));
      await frame();
      return Math.round(performance.now() - t0);
    }, frame.toString());
    const heap = await page.evaluate(() => performance.memory ? Math.round(performance.memory.usedJSHeapSize / 1048576) : null);
    const nodes = await page.evaluate(() => document.getElementsByTagName('*').length);
    timing[which] = { size: fs.statSync(bigPages[which]).size, firstScreen, allRendered, click, search, toggle, heap, nodes };
    await page.close();
  }
  check(typeof timing.ours.allRendered === 'number', `ours: renders the ${bigN}-entry session`);
  console.log(`\n${bigN}-entry session      ours        pi 0.73.1`);
  for (const k of ['size', 'firstScreen', 'allRendered', 'click', 'search', 'toggle', 'heap', 'nodes']) {
    const unit = { size: ' B', heap: ' MB', nodes: '' }[k] ?? ' ms';
    const cell = v => v === undefined ? '-' : typeof v === 'number' ? v + unit : v;
    console.log(`${k.padEnd(22)}${String(cell(timing.ours[k])).padEnd(12)}${cell(timing.pi[k])}`);
  }
}
await browser.close();
console.log(`\nscreenshots in ${out}`);
if (failures.length) { console.log(`${failures.length} check(s) failed`); process.exit(1); }

// A linear session of user and assistant messages.
function writeSession(file, messages) {
  const base = Date.parse('2026-02-01T00:00:00.000Z');
  const lines = [JSON.stringify({ type: 'session', version: 3, id: 'check-session', timestamp: '2026-02-01T00:00:00.000Z', cwd: '/home/dev/x' })];
  messages.forEach((m, i) => {
    const msg = m.role === 'user'
      ? { role: 'user', content: [{ type: 'text', text: m.text }], timestamp: base + i }
      : { role: 'assistant', content: [{ type: 'text', text: m.text }], provider: 'p', model: 'm', usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: 'stop', timestamp: base + i };
    lines.push(JSON.stringify({ type: 'message', id: 'm' + i, parentId: i ? 'm' + (i - 1) : null, timestamp: new Date(base + i * 1000).toISOString(), message: msg }));
  });
  fs.writeFileSync(file, lines.join('\n') + '\n');
}

// A linear chat of `n` entries with tool calls, Markdown and a few branches.
function writeBigSession(file, n) {
  const lines = [JSON.stringify({ type: 'session', version: 3, id: 'big-session', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/home/dev/big' })];
  let parent = null;
  const base = Date.parse('2026-01-01T00:00:00.000Z');
  for (let i = 0; i < n; i++) {
    const id = 'e' + String(i).padStart(7, '0');
    const timestamp = new Date(base + i * 1000).toISOString();
    let e;
    const k = i % 4;
    if (k === 0) e = { type: 'message', message: { role: 'user', content: [{ type: 'text', text: `Question ${i}: why does **step ${i}** fail? needle-${i % 100}` }], timestamp: base + i * 1000 } };
    else if (k === 1) e = { type: 'message', message: { role: 'assistant', content: [{ type: 'thinking', thinking: 'Thinking about step ' + i }, { type: 'text', text: `Let me check:\n\n- item one\n- item \`two\`\n\n\`\`\`js\nconst x = ${i};\n\`\`\`` }, { type: 'toolCall', id: 'c' + i, name: 'bash', arguments: { command: 'ls -la step' + i } }], provider: 'p', model: 'm', usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.001 } }, stopReason: 'toolUse', timestamp: base + i * 1000 } };
    else if (k === 2) e = { type: 'message', message: { role: 'toolResult', toolCallId: 'c' + (i - 1), toolName: 'bash', content: [{ type: 'text', text: Array.from({ length: 12 }, (_, j) => `line ${j} of output ${i}`).join('\n') }], isError: false, timestamp: base + i * 1000 } };
    else e = { type: 'message', message: { role: 'assistant', content: [{ type: 'text', text: `Step ${i} is fine. See [docs](https://example.com/${i}).` }], provider: 'p', model: 'm', usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.001 } }, stopReason: 'stop', timestamp: base + i * 1000 } };
    // Every 1000 entries, a side branch: the chain goes on from 20 entries back.
    const p = i > 0 && i % 1000 === 0 ? 'e' + String(i - 20).padStart(7, '0') : parent;
    lines.push(JSON.stringify({ type: e.type, id, parentId: p, timestamp, ...(e.type === 'message' ? { message: e.message } : {}) }));
    parent = id;
  }
  fs.writeFileSync(file, lines.join('\n') + '\n');
}
