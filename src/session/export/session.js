// The session for the viewer: the embedded data decoded and indexed (entries by id, children,
// tool calls and results, labels), and each entry and the header rendered to HTML.

// ---------- Data ----------
const data = (() => {
  try {
    const bin = atob(document.getElementById('session-data').textContent.trim());
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return JSON.parse(new TextDecoder('utf-8').decode(bytes));
  } catch (e) {
    document.getElementById('messages').textContent = 'This file holds no readable session: ' + e;
    return null;
  }
})();
if (!data) return;
const header = data.header || {};
const entries = Array.isArray(data.entries) ? data.entries.filter(e => e && typeof e.id === 'string') : [];
const byId = new Map();
const kids = new Map();
const roots = [];
const calls = new Map();
const results = new Map();
const labels = new Map();
let sessionName = '';
let hasSystem = false;
for (const e of entries) byId.set(e.id, e);
for (const e of entries) {
  const p = e.parentId;
  if (p == null || p === e.id || !byId.has(p)) roots.push(e);
  else (kids.get(p) || kids.set(p, []).get(p)).push(e);
  const m = e.type === 'message' ? e.message : null;
  if (m && m.role === 'assistant' && Array.isArray(m.content)) {
    for (const b of m.content) if (b && b.type === 'toolCall' && !calls.has(b.id)) calls.set(b.id, b);
  } else if (m && m.role === 'toolResult' && !results.has(m.toolCallId)) {
    results.set(m.toolCallId, m);
  } else if (m && m.role === 'system') {
    hasSystem = true;
  } else if (e.type === 'label' && typeof e.targetId === 'string') {
    if (e.label) labels.set(e.targetId, String(e.label)); else labels.delete(e.targetId);
  } else if (e.type === 'session_info') {
    sessionName = typeof e.name === 'string' ? e.name.trim() : '';
  }
}
const time = e => { const t = Date.parse(e.timestamp); return isNaN(t) ? 0 : t; };
for (const list of kids.values()) list.sort((a, b) => time(a) - time(b));

function parentOf(e) {
  const p = e.parentId;
  return p == null || p === e.id ? undefined : byId.get(p);
}
// Root-to-entry path (guarded against parent cycles in damaged files).
function pathTo(id) {
  const path = [];
  const seen = new Set();
  for (let e = byId.get(id); e && !seen.has(e.id); e = parentOf(e)) { seen.add(e.id); path.push(e); }
  return path.reverse();
}
// Clicking any entry shows the newest branch through it.
function newestLeaf(id) {
  let e = byId.get(id);
  const seen = new Set();
  while (e && !seen.has(e.id)) {
    seen.add(e.id);
    const k = kids.get(e.id);
    if (!k || !k.length) break;
    e = k[k.length - 1];
  }
  return e ? e.id : id;
}


// ---------- Text helpers ----------
const oneLine = s => s.replace(/[\n\t]/g, ' ').trim();
const cut = (s, n = 100) => s.length > n ? s.slice(0, n) + '...' : s;
const tabs = s => s.replace(/\t/g, '   ');
const str = v => typeof v === 'string' ? v : v == null ? '' : null;
function textOf(content, sep = '') {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.filter(c => c && c.type === 'text' && typeof c.text === 'string').map(c => c.text).join(sep);
}
const imagesOf = content => Array.isArray(content) ? content.filter(c => c && c.type === 'image') : [];
function shortPath(p) {
  if (typeof p !== 'string') return '';
  const m = /^\/(?:Users|home)\/[^/]+/.exec(p);
  return m ? '~' + p.slice(m[0].length) : p;
}
function img(c) {
  const mime = typeof c.mimeType === 'string' && /^image\/[\w.+-]+$/.test(c.mimeType) ? c.mimeType : null;
  const b64 = typeof c.data === 'string' && /^[A-Za-z0-9+/=\s]+$/.test(c.data) ? c.data.replace(/\s/g, '') : null;
  if (!mime || !b64) return '<div class="note">[image: not displayable]</div>';
  return '<img class="att" alt="image" src="data:' + mime + ';base64,' + b64 + '">';
}
const imgs = list => list.length ? '<div class="imgs">' + list.map(img).join('') + '</div>' : '';
function fmtTokens(n) {
  if (n < 1000) return String(n);
  if (n < 10000) return (n / 1000).toFixed(1) + 'k';
  if (n < 1000000) return Math.round(n / 1000) + 'k';
  return (n / 1000000).toFixed(1) + 'M';
}
const CLOCK = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
function clock(ts) {
  const d = new Date(ts);
  return ts && !isNaN(d) ? CLOCK.format(d) : '';
}
// A user message that invoked a skill: `<skill name location>body</skill>` then the user's text.
function skillOf(text) {
  const m = /^<skill name="([^"]+)" location="([^"]+)">\n([\s\S]*?)\n<\/skill>(?:\n\n([\s\S]+))?$/.exec(text);
  return m && { name: m[1], body: m[3], rest: m[4] ? m[4].trim() : '' };
}
function readRange(offset, limit) {
  const num = v => { if (typeof v === 'string' && v.trim()) v = Number(v); return typeof v === 'number' && isFinite(v) ? v : undefined; };
  if (offset == null && limit == null) return '';
  const start = offset == null ? 1 : num(offset);
  if (start === undefined) return '';
  if (limit == null) return ':' + start;
  const n = num(limit);
  if (n === undefined) return '';
  const end = start + n - 1;
  return ':' + start + (end ? '-' + end : '');
}

// ---------- Lazy output ----------
// Long outputs show a preview; the full text is rendered the first time it is opened.
const lazy = [];
function expandable(lines, max, render, cls) {
  const rest = lines.length - max;
  if (rest <= 0) return '<div class="out ' + (cls || '') + '">' + render(lines.join('\n')) + '</div>';
  lazy.push(() => render(lines.join('\n')));
  return '<div class="out xp ' + (cls || '') + '" data-lazy="' + (lazy.length - 1) + '"><div class="prev">' + render(lines.slice(0, max).join('\n')) +
    '<div class="more">... (' + rest + ' more lines)</div></div><div class="full"></div></div>';
}
const plain = s => '<pre>' + esc(s) + '</pre>';
const code = L => s => '<pre><code>' + highlight(s, L) + '</code></pre>';
function output(text, max, L) {
  return expandable(tabs(text).split('\n'), max, L === undefined ? plain : code(L));
}
function fillLazy(el) {
  const full = el.querySelector(':scope > .full');
  if (full && !full.firstChild && el.dataset.lazy) full.innerHTML = lazy[+el.dataset.lazy]();
}

// ---------- Entries ----------
const LINK_ICON = '<svg width="14" height="14" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round"><path d="M9 15l6-6"/><path d="M11 6l2-2a4.2 4.2 0 0 1 6 6l-2 2"/><path d="M13 18l-2 2a4.2 4.2 0 0 1-6-6l2-2"/></svg>';
const linkBtn = id => '<button type="button" class="link" data-id="' + esc(id) + '" title="Copy a link to this message">' + LINK_ICON + '</button>';
const stamp = e => { const t = clock(e.timestamp); return t ? '<div class="ts">' + t + '</div>' : ''; };
const domId = e => 'entry-' + esc(e.id);

function toolHtml(call) {
  const res = results.get(call.id);
  const state = !res ? '' : res.isError ? ' bad' : ' ok';
  const args = call.arguments && typeof call.arguments === 'object' ? call.arguments : {};
  const name = String(call.name || '');
  const text = res ? textOf(res.content, '\n') : '';
  const bad = '<span class="bad-arg">[invalid arg]</span>';
  const path = str(args.file_path != null ? args.file_path : args.path);
  const pathHtml = path === null ? bad : esc(shortPath(path));
  let h = '<div class="tool' + state + '" id="tool-call-' + esc(call.id) + '">';
  switch (name) {
    case 'bash': {
      const cmd = str(args.command);
      h += '<div class="tool-cmd">$ ' + (cmd === null ? bad : esc(cmd || '...')) + '</div>';
      if (text.trim()) h += output(text.trim(), 5);
      break;
    }
    case 'read': {
      const range = path === null ? '' : readRange(args.offset, args.limit);
      h += '<div class="tool-head">read <span class="tool-path">' + pathHtml + (range ? '<span class="lines">' + esc(range) + '</span>' : '') + '</span></div>';
      if (res) h += imgs(imagesOf(res.content));
      if (text) h += output(text, 10, path ? langOfPath(path) || null : null);
      break;
    }
    case 'write': {
      const content = str(args.content);
      const n = content ? content.split('\n').length : 0;
      h += '<div class="tool-head">write <span class="tool-path">' + pathHtml + '</span>' + (n > 10 ? ' <span class="count">(' + n + ' lines)</span>' : '') + '</div>';
      if (content === null) h += '<div class="bad-arg">[invalid content arg - expected string]</div>';
      else if (content) h += output(content, 10, path ? langOfPath(path) || null : null);
      if (text.trim()) h += '<div class="out">' + plain(text.trim()) + '</div>';
      break;
    }
    case 'edit': {
      h += '<div class="tool-head">edit <span class="tool-path">' + pathHtml + '</span></div>';
      const diff = res && res.details && typeof res.details.diff === 'string' ? res.details.diff : null;
      if (diff !== null && !res.isError) {
        h += '<div class="diff">' + diff.split('\n').map(l => '<div class="' + (l[0] === '+' ? 'd-add' : l[0] === '-' ? 'd-del' : 'd-ctx') + '">' + (esc(tabs(l)) || ' ') + '</div>').join('') + '</div>';
      } else if (text.trim()) h += '<div class="out">' + plain(text.trim()) + '</div>';
      break;
    }
    case 'ls': {
      const dir = str(args.path);
      h += '<div class="tool-head">ls <span class="tool-path">' + (dir === null ? bad : esc(shortPath(dir || '.'))) + '</span>' +
        (args.limit !== undefined ? ' <span class="count">(limit ' + esc(args.limit) + ')</span>' : '') + '</div>';
      if (text.trim()) h += output(text.trim(), 20);
      break;
    }
    case 'grep':
    case 'find': {
      const pat = str(args.pattern);
      h += '<div class="tool-head">' + name + ' <span class="tool-path">' + (pat === null ? bad : esc(name === 'grep' ? '/' + pat + '/' : pat)) +
        '</span> <span class="count">in ' + esc(shortPath(str(args.path) || '.')) + '</span></div>';
      if (text.trim()) h += output(text.trim(), 10);
      break;
    }
    default:
      h += '<div class="tool-head">' + esc(name) + '</div>';
      h += '<div class="out">' + plain(JSON.stringify(args, null, 2)) + '</div>';
      if (res) h += imgs(imagesOf(res.content));
      if (text) h += output(text, 10);
  }
  const nested = res && res.nestedCalls;
  if (nested && Array.isArray(nested.calls) && nested.calls.length) {
    const icon = { ok: '✓', error: '✗', unfinished: '…' };
    const rows = nested.calls.map(c => (icon[c.status] || '?') + ' ' + c.name + ' ' +
      (c.arguments ? JSON.stringify(c.arguments) : '[arguments omitted, ' + c.argumentsBytes + ' bytes]') +
      (c.durationMs !== undefined ? ' ' + c.durationMs + 'ms' : '') + (c.error ? '\n    ' + String(c.error).split('\n').join('\n    ') : ''));
    h += output(['Nested calls: ' + nested.calls.length + (nested.complete ? '' : ' (incomplete record)')].concat(rows).join('\n'), 1);
  }
  return h + '</div>';
}

function systemText(c) { return textOf(c, '\n'); }
function carriesSystem(e) { return (e.type === 'message' && e.message && e.message.role === 'system') || (e.type === 'compaction' && e.systemMessage); }
// The first system message on a branch is the prompt; later ones patch it.
function leadingSystem(e) {
  const seen = new Set();
  for (let p = parentOf(e); p && !seen.has(p.id); p = parentOf(p)) { seen.add(p.id); if (carriesSystem(p)) return false; }
  return true;
}
function fullSystemText(m) {
  return [systemText(m.content)].concat(Object.values(m.sections || {}).filter(v => v !== null)).filter(s => s && s.length).join('\n\n');
}
function systemUpdateText(m) {
  const parts = [];
  const t = systemText(m.content);
  if (t) parts.push(t);
  for (const [k, v] of Object.entries(m.sections || {})) parts.push(v === null ? 'Removed system prompt section "' + k + '".' : 'Updated system prompt section "' + k + '":\n\n' + v);
  return parts.join('\n\n');
}
function systemChanges(m) {
  const parts = [];
  if (systemText(m.content)) parts.push('instructions');
  for (const [k, v] of Object.entries(m.sections || {})) parts.push(v === null ? '-' + k : k);
  const tools = (m.toolsAdded || []).map(t => '+' + t.name).concat((m.toolsRemoved || []).map(t => '-' + t.name));
  if (tools.length) parts.push('tools ' + tools.join(' '));
  return parts.join(', ');
}
function promptBox(title, text) {
  const lines = text.split('\n');
  if (lines.length <= 10) return '<div class="box"><div class="box-title">' + esc(title) + '</div><div class="pre">' + esc(text) + '</div></div>';
  lazy.push(() => '<div class="pre">' + esc(text) + '</div>');
  return '<div class="box xp" data-lazy="' + (lazy.length - 1) + '"><div class="box-title">' + esc(title) + '</div><div class="prev"><div class="pre">' +
    esc(lines.slice(0, 10).join('\n')) + '</div><div class="hint">... (' + (lines.length - 10) + ' more lines, click to expand)</div></div><div class="full"></div></div>';
}
function toolList(title, tools) {
  if (!Array.isArray(tools) || !tools.length) return '';
  return '<div class="box"><div class="box-title">' + esc(title) + '</div><div class="pre">' + tools.map(t => {
    const props = t.parameters && t.parameters.properties && typeof t.parameters.properties === 'object' ? t.parameters.properties : {};
    const req = Array.isArray(t.parameters && t.parameters.required) ? t.parameters.required : [];
    const names = Object.keys(props);
    const head = '<span class="name">' + esc(t.name) + '</span>' + (t.description ? ' - <span class="desc">' + esc(t.description) + '</span>' : '');
    if (!names.length) return '<div class="tl">' + head + '</div>';
    return '<div class="tl has">' + head + ' <span class="toggle"></span><div class="params">' + names.map(k => {
      const p = props[k] || {};
      return '<div><span class="name">' + esc(k) + '</span> <span class="ty">' + esc(p.type || 'any') + '</span> ' +
        (req.includes(k) ? '<span class="req">required</span>' : '<span class="opt">optional</span>') +
        (p.description ? '<div class="desc">' + esc(p.description) + '</div>' : '') + '</div>';
    }).join('') + '</div></div>';
  }).join('') + '</div></div>';
}

function entryHtml(e) {
  const id = domId(e);
  const m = e.type === 'message' ? e.message || {} : null;
  if (m && m.role === 'user') {
    const text = textOf(m.content, '\n');
    const pics = imgs(imagesOf(m.content));
    const skill = skillOf(text);
    if (skill) {
      lazy.push(() => '<div class="md">' + md(skill.body) + '</div>');
      let h = '<div class="msg" id="' + id + '">' + linkBtn(e.id) + stamp(e) +
        '<div class="box xp" data-lazy="' + (lazy.length - 1) + '"><div class="box-title">[skill] ' + esc(skill.name) + '</div><div class="prev">' +
        esc(skill.name) + ' (click to expand)</div><div class="full"></div></div>';
      if (skill.rest || pics) h += '<div class="user" style="margin-top:var(--lh)">' + pics + (skill.rest ? '<div class="md">' + md(skill.rest) + '</div>' : '') + '</div>';
      return h + '</div>';
    }
    return '<div class="msg user" id="' + id + '">' + linkBtn(e.id) + stamp(e) + pics + (text.trim() ? '<div class="md">' + md(text) + '</div>' : '') + '</div>';
  }
  if (m && m.role === 'assistant') {
    const content = Array.isArray(m.content) ? m.content : [];
    let h = '<div class="msg asst" id="' + id + '">' + linkBtn(e.id) + stamp(e);
    for (const b of content) {
      if (!b) continue;
      if (b.type === 'text' && typeof b.text === 'string' && b.text.trim()) h += '<div class="asst-text md">' + md(b.text) + '</div>';
      else if (b.type === 'thinking' && typeof b.thinking === 'string' && b.thinking.trim()) {
        h += '<div class="think"><div class="think-text">' + esc(b.thinking) + '</div><div class="think-fold">Thinking ...</div></div>';
      } else if (b.type === 'image') h += imgs([b]);
    }
    for (const b of content) if (b && b.type === 'toolCall') h += toolHtml(b);
    if (m.stopReason === 'aborted') h += '<div class="err-text">' + esc(m.errorMessage && m.errorMessage !== 'Request was aborted' ? m.errorMessage : 'Aborted') + '</div>';
    else if (m.stopReason === 'error') h += '<div class="err-text">Error: ' + esc(m.errorMessage || 'Unknown error') + '</div>';
    return h + '</div>';
  }
  if (m && m.role === 'bashExecution') {
    const failed = m.cancelled || (m.exitCode !== 0 && m.exitCode != null);
    let h = '<div class="msg tool ' + (failed ? 'bad' : 'ok') + '" id="' + id + '">' + stamp(e) + '<div class="tool-cmd">$ ' + esc(m.command) + '</div>';
    if (m.output) h += output(String(m.output), 10);
    if (m.cancelled) h += '<div style="color:var(--warning)">(cancelled)</div>';
    else if (m.exitCode !== 0 && m.exitCode != null) h += '<div style="color:var(--error)">(exit ' + esc(m.exitCode) + ')</div>';
    if (m.excludeFromContext) h += '<div class="count">(not sent to the model)</div>';
    return h + '</div>';
  }
  if (m && m.role === 'system') {
    let h = '';
    if (leadingSystem(e)) {
      const t = fullSystemText(m);
      if (t) h += promptBox('System Prompt', t);
      h += toolList('Available Tools', m.toolsAdded);
    } else {
      const t = systemUpdateText(m), ch = systemChanges(m);
      if (t) h += promptBox('System Prompt Update' + (ch ? ': ' + ch : ''), t);
      h += toolList('Tools Added', m.toolsAdded);
      if (Array.isArray(m.toolsRemoved) && m.toolsRemoved.length) h += toolList('Tools Removed', m.toolsRemoved.map(t => ({ name: t.name })));
    }
    return h ? '<div class="sys" id="' + id + '">' + stamp(e) + h + '</div>' : '';
  }
  if (m) return '';
  switch (e.type) {
    case 'model_change':
      return '<div class="note" id="' + id + '">' + stamp(e) + 'Switched to model: <b>' + esc(e.provider) + '/' + esc(e.modelId) + '</b></div>';
    case 'compaction': {
      const tokens = Number(e.tokensBefore || 0).toLocaleString();
      lazy.push(() => '<b>Compacted from ' + tokens + ' tokens</b><div class="md">' + md(String(e.summary || '')) + '</div>');
      return '<div class="box xp" id="' + id + '" data-lazy="' + (lazy.length - 1) + '"><div class="box-title">[compaction]</div><div class="prev">Compacted from ' +
        tokens + ' tokens</div><div class="full"></div></div>';
    }
    case 'branch_summary':
      return '<div class="box" id="' + id + '">' + stamp(e) + '<div class="box-title accent">Branch Summary</div><div class="md">' + md(String(e.summary || '')) + '</div></div>';
    case 'custom_message': {
      const hidden = e.display === false;
      const body = typeof e.content === 'string' ? md(e.content) : imgs(imagesOf(e.content)) + md(textOf(e.content, '\n'));
      return '<div class="box' + (hidden ? ' hidden-msg' : '') + '" id="' + id + '">' + stamp(e) + '<div class="box-title">[' + esc(e.customType) + ']' +
        (hidden ? ' · Hidden in terminal' : '') + '</div><div class="md">' + body + '</div></div>';
    }
    default:
      return '';
  }
}

// ---------- Header ----------
function stats() {
  const s = { user: 0, asst: 0, results: 0, custom: 0, compactions: 0, summaries: 0, calls: 0, input: 0, output: 0, read: 0, write: 0, cost: 0, models: [] };
  for (const e of entries) {
    const m = e.type === 'message' ? e.message || {} : null;
    if (m && m.role === 'user') s.user++;
    else if (m && m.role === 'toolResult') s.results++;
    else if (m && m.role === 'assistant') {
      s.asst++;
      if (m.model) { const name = m.provider ? m.provider + '/' + m.model : m.model; if (!s.models.includes(name)) s.models.push(name); }
      const u = m.usage || {};
      s.input += u.input || 0; s.output += u.output || 0; s.read += u.cacheRead || 0; s.write += u.cacheWrite || 0;
      const c = u.cost || {};
      s.cost += typeof c.total === 'number' ? c.total : (c.input || 0) + (c.output || 0) + (c.cacheRead || 0) + (c.cacheWrite || 0);
      if (Array.isArray(m.content)) s.calls += m.content.filter(b => b && b.type === 'toolCall').length;
    } else if (e.type === 'compaction') s.compactions++;
    else if (e.type === 'branch_summary') s.summaries++;
    else if (e.type === 'custom_message') s.custom++;
  }
  return s;
}
function headerHtml() {
  const s = stats();
  const tok = [];
  if (s.input) tok.push('↑' + fmtTokens(s.input));
  if (s.output) tok.push('↓' + fmtTokens(s.output));
  if (s.read) tok.push('R' + fmtTokens(s.read));
  if (s.write) tok.push('W' + fmtTokens(s.write));
  const msgs = [];
  const add = (n, what) => { if (n) msgs.push(n + ' ' + what); };
  add(s.user, 'user'); add(s.asst, 'assistant'); add(s.results, 'tool results'); add(s.custom, 'custom');
  add(s.compactions, 'compactions'); add(s.summaries, 'branch summaries');
  const d = new Date(header.timestamp);
  const row = (k, v) => '<div><b>' + k + ':</b><span>' + esc(v) + '</span></div>';
  let h = '<div class="card"><h1>Session: ' + esc(header.id || 'unknown') + '</h1>' +
    '<div class="help"><span>T toggle thinking · O toggle tools · H toggle hidden messages</span><div class="acts">' +
    '<button type="button" data-act="thinking" title="Toggle thinking (T)">Toggle thinking</button>' +
    '<button type="button" data-act="tools" title="Toggle tools (O)">Toggle tools</button>' +
    '<button type="button" data-act="hidden" title="Show custom messages marked as hidden in the terminal (H)">Show hidden messages</button>' +
    '<button type="button" data-act="jsonl" title="Download the session as JSONL">↓ JSONL</button></div></div><div class="info">' +
    (sessionName ? row('Name', sessionName) : '') +
    row('Date', header.timestamp && !isNaN(d) ? d.toLocaleString() : 'unknown') +
    row('Models', s.models.join(', ') || 'unknown') +
    row('Messages', msgs.join(', ') || '0') +
    row('Tool Calls', String(s.calls)) +
    row('Tokens', tok.join(' ') || '0') +
    row('Cost', '$' + s.cost.toFixed(3)) + '</div></div>';
  // Sessions that record their system prompt show it where it happened; others show the
  // exporting agent's.
  if (!hasSystem) {
    if (typeof data.systemPrompt === 'string' && data.systemPrompt) h += promptBox('System Prompt', data.systemPrompt);
    h += toolList('Available Tools', data.tools);
  }
  return h;
}
