// Session viewer: the session tree beside the conversation of the selected branch, the
// toggles, the sidebar and the start. Uses markup.js and session.js (same script).

// ---------- Tree ----------
const SETTINGS = new Set(['label', 'custom', 'context_edit', 'model_change', 'thinking_level_change']);
let filter = 'default';
let query = '';
const searchCache = new Map();
function searchText(e) {
  let s = searchCache.get(e.id);
  if (s !== undefined) return s;
  const parts = [labels.get(e.id) || ''];
  const m = e.type === 'message' ? e.message || {} : null;
  if (m) {
    if (m.role === 'system') {
      parts.push(leadingSystem(e) ? 'system prompt' : 'system update', fullSystemText(m), Object.keys(m.sections || {}).join(' '),
        (m.toolsAdded || []).concat(m.toolsRemoved || []).map(t => t.name).join(' '));
    } else {
      parts.push(m.role || '', textOf(m.content));
      if (m.role === 'bashExecution') parts.push(m.command || '');
    }
  } else if (e.type === 'custom_message') parts.push(e.customType || '', textOf(e.content));
  else if (e.type === 'compaction') parts.push('compaction');
  else if (e.type === 'branch_summary') parts.push('branch summary', e.summary || '');
  else if (e.type === 'model_change') parts.push('model', e.modelId || '');
  else if (e.type === 'thinking_level_change') parts.push('thinking', e.thinkingLevel || '');
  else if (e.type === 'context_edit') parts.push('context edit', e.replacement === null ? 'omit' : 'replace', e.targetId || '');
  s = parts.join(' ').toLowerCase();
  searchCache.set(e.id, s);
  return s;
}
function shown(e, leaf, tokens) {
  if (e.id === leaf) return true;
  const m = e.type === 'message' ? e.message || {} : null;
  if (m && m.role === 'assistant') {
    const err = m.stopReason && m.stopReason !== 'stop' && m.stopReason !== 'toolUse';
    if (!textOf(m.content).trim() && !err) return false;
  }
  let ok;
  switch (filter) {
    case 'user-only': ok = !!m && m.role === 'user'; break;
    case 'no-tools': ok = !SETTINGS.has(e.type) && !(m && m.role === 'toolResult'); break;
    case 'labeled-only': ok = labels.has(e.id); break;
    case 'all': ok = true; break;
    default: ok = !SETTINGS.has(e.type);
  }
  if (!ok) return false;
  if (tokens.length) { const t = searchText(e); return tokens.every(k => t.includes(k)); }
  return true;
}
function callLabel(name, a) {
  const p = v => shortPath(String(v || ''));
  switch (name) {
    case 'read': return '[read: ' + p(a.path || a.file_path) + readRange(a.offset, a.limit) + ']';
    case 'write': return '[write: ' + p(a.path || a.file_path) + ']';
    case 'edit': return '[edit: ' + p(a.path || a.file_path) + ']';
    case 'bash': { const c = String(a.command || ''); return '[bash: ' + oneLine(c).slice(0, 50) + (c.length > 50 ? '...' : '') + ']'; }
    case 'grep': return '[grep: /' + (a.pattern || '') + '/ in ' + p(a.path || '.') + ']';
    case 'find': return '[find: ' + (a.pattern || '') + ' in ' + p(a.path || '.') + ']';
    case 'ls': return '[ls: ' + p(a.path || '.') + ']';
    default: { const j = JSON.stringify(a) || ''; return '[' + name + ': ' + j.slice(0, 40) + (j.length > 40 ? '...' : '') + ']'; }
  }
}
const tspan = (cls, html) => '<span class="' + cls + '">' + html + '</span>';
function rowText(e) {
  const label = labels.get(e.id);
  const pre = label ? tspan('t-label', '[' + esc(label) + ']') + ' ' : '';
  const m = e.type === 'message' ? e.message || {} : null;
  if (m) {
    if (m.role === 'user') {
      const raw = textOf(m.content);
      const skill = skillOf(raw);
      if (skill) return pre + tspan('t-skill', 'skill:') + ' ' + esc(skill.name) + (skill.rest ? ' · ' + tspan('t-user', 'user:') + ' ' + esc(cut(oneLine(skill.rest))) : '');
      return pre + tspan('t-user', 'user:') + ' ' + esc(cut(oneLine(raw)));
    }
    if (m.role === 'assistant') {
      const t = cut(oneLine(textOf(m.content)));
      const who = tspan('t-asst', 'assistant:') + ' ';
      if (t) return pre + who + esc(t);
      if (m.stopReason === 'aborted') return pre + who + tspan('t-dim', '(aborted)');
      if (m.errorMessage) return pre + who + tspan('t-err', esc(cut(String(m.errorMessage))));
      return pre + who + tspan('t-dim', '(no text)');
    }
    if (m.role === 'toolResult') {
      const c = calls.get(m.toolCallId);
      return pre + tspan('t-tool', esc(c ? callLabel(String(c.name), c.arguments || {}) : '[' + (m.toolName || 'tool') + ']'));
    }
    if (m.role === 'bashExecution') return pre + tspan('t-tool', '[bash]:') + ' ' + esc(cut(oneLine(String(m.command || ''))));
    if (m.role === 'system') {
      if (leadingSystem(e)) return pre + tspan('t-dim', '[system prompt]');
      const ch = systemChanges(m);
      return pre + tspan('t-dim', '[system update' + (ch ? ': ' + esc(cut(ch)) : '') + ']');
    }
    return pre + tspan('t-dim', '[' + esc(m.role) + ']');
  }
  switch (e.type) {
    case 'compaction': return pre + tspan('t-comp', '[compaction: ' + Math.round((e.tokensBefore || 0) / 1000) + 'k tokens]');
    case 'branch_summary': return pre + tspan('t-branch', '[branch summary]:') + ' ' + esc(cut(oneLine(String(e.summary || ''))));
    case 'custom_message': return pre + tspan('t-custom', '[' + esc(e.customType) + ']:') + ' ' + esc(cut(oneLine(textOf(e.content))));
    case 'model_change': return pre + tspan('t-dim', '[model: ' + esc(e.modelId) + ']');
    case 'thinking_level_change': return pre + tspan('t-dim', '[thinking: ' + esc(e.thinkingLevel) + ']');
    case 'context_edit': return pre + tspan('t-dim', '[context ' + (e.replacement === null ? 'omit' : 'replace') + ': ' + esc(e.targetId) + ']');
    default: return pre + tspan('t-dim', '[' + esc(e.type) + ']');
  }
}
// The visible rows: a depth-first walk (the branch holding the leaf first), filtered, each
// shown entry hung under its nearest shown ancestor. Indentation grows only where the tree
// forks, with ├─/└─ connectors and │ gutters as in the terminal's tree view.
let rows = [];
function buildRows(leaf) {
  const onPath = new Set(pathTo(leaf).map(e => e.id));
  const tokens = query.toLowerCase().split(/\s+/).filter(Boolean);
  const first = list => list.some(e => onPath.has(e.id)) ? [...list].sort((a, b) => onPath.has(b.id) - onPath.has(a.id)) : list;
  const vis = [];
  const visKids = new Map([[null, []]]);
  const stack = first(roots).map(e => [e, null]).reverse();
  const seen = new Set();
  while (stack.length) {
    const [e, anc] = stack.pop();
    if (seen.has(e.id)) continue;
    seen.add(e.id);
    let next = anc;
    if (shown(e, leaf, tokens)) {
      vis.push(e);
      visKids.get(anc).push(e);
      visKids.set(e.id, []);
      next = e.id;
    }
    const k = kids.get(e.id);
    if (k) for (const c of first(k).reverse()) stack.push([c, next]);
  }
  const top = visKids.get(null);
  const multi = top.length > 1;
  const out = [];
  const walk = [];
  for (let i = top.length - 1; i >= 0; i--) walk.push({ e: top[i], indent: multi ? 1 : 0, branched: multi, conn: multi, last: i === top.length - 1, gut: [], vroot: multi });
  while (walk.length) {
    const r = walk.pop();
    out.push(r);
    const ch = visKids.get(r.e.id);
    const many = ch.length > 1;
    const indent = many || (r.branched && r.indent > 0) ? r.indent + 1 : r.indent;
    const shownIndent = multi ? Math.max(0, r.indent - 1) : r.indent;
    const gut = r.conn && !r.vroot ? r.gut.concat([{ at: Math.max(0, shownIndent - 1), bar: !r.last }]) : r.gut;
    for (let i = ch.length - 1; i >= 0; i--) walk.push({ e: ch[i], indent, branched: many, conn: many, last: i === ch.length - 1, gut, vroot: false });
  }
  for (const r of out) r.multi = multi;
  rows = out;
  return entries.length;
}
function prefix(r) {
  const indent = r.multi ? Math.max(0, r.indent - 1) : r.indent;
  const conn = r.conn && !r.vroot;
  let s = '';
  for (let level = 0; level < indent; level++) {
    const g = r.gut.find(x => x.at === level);
    if (g) s += g.bar ? '│  ' : '   ';
    else if (conn && level === indent - 1) s += r.last ? '└─ ' : '├─ ';
    else s += '   ';
  }
  return s;
}

const ROW = 13;
const treeEl = document.getElementById('tree');
const rowsEl = document.getElementById('tree-rows');
let leafId = null;
let targetId = null;
let pathIds = new Set();
const rowHtml = new Map();
// Only the rows near the visible part of the tree are in the page.
function drawTree() {
  const from = Math.max(0, Math.floor(treeEl.scrollTop / ROW) - 20);
  const to = Math.min(rows.length, from + Math.ceil(treeEl.clientHeight / ROW) + 40);
  rowsEl.style.height = rows.length * ROW + 'px';
  rowsEl.style.paddingTop = from * ROW + 'px';
  let h = '';
  for (let i = from; i < to; i++) {
    const r = rows[i];
    const on = pathIds.has(r.e.id);
    let text = rowHtml.get(r.e.id);
    if (text === undefined) rowHtml.set(r.e.id, (text = rowText(r.e)));
    h += '<div class="tn' + (on ? ' on' : '') + (r.e.id === targetId ? ' cur' : '') + '" data-i="' + i + '"><span class="tp">' +
      prefix(r) + '</span><span class="tm">' + (on ? '•' : '') + '</span><span class="tc">' + text + '</span></div>';
  }
  rowsEl.innerHTML = h;
}
function refilter() {
  const total = buildRows(leafId);
  document.getElementById('tree-status').textContent = rows.length + ' / ' + total + ' entries';
  drawTree();
}
function revealTarget() {
  const i = rows.findIndex(r => r.e.id === targetId);
  if (i < 0) return;
  const top = i * ROW, view = treeEl.clientHeight;
  if (top < treeEl.scrollTop || top + ROW > treeEl.scrollTop + view) treeEl.scrollTop = Math.max(0, top - view / 2);
}
let scrollQueued = false;
treeEl.addEventListener('scroll', () => {
  if (scrollQueued) return;
  scrollQueued = true;
  requestAnimationFrame(() => { scrollQueued = false; drawTree(); });
});
window.addEventListener('resize', () => drawTree());
rowsEl.addEventListener('click', ev => {
  const n = ev.target.closest('.tn');
  if (!n || String(window.getSelection())) return;
  const e = rows[+n.dataset.i].e;
  navigate(newestLeaf(e.id), e.id, 'target');
  closeSidebar();
});

// ---------- Conversation ----------
const messagesEl = document.getElementById('messages');
const content = document.getElementById('content');
const nodes = new Map();
let shownPath = [];
let placed = 0;
let pending = null;
// The elements of `list` (null for entries that show nothing), each built once; the new
// ones are parsed together, one element per entry.
function nodesOf(list) {
  const fresh = list.filter(e => !nodes.has(e.id));
  const html = fresh.map(entryHtml);
  const t = document.createElement('template');
  t.innerHTML = html.join('');
  let el = t.content.firstElementChild;
  fresh.forEach((e, i) => {
    if (!html[i]) { nodes.set(e.id, null); return; }
    nodes.set(e.id, el);
    el = el.nextElementSibling;
  });
  return list.map(e => nodes.get(e.id));
}
// Shows the branch ending at `leaf`: the part shared with the branch on screen stays, the
// rest is rendered in slices so a long session paints its first screen at once.
function navigate(leaf, target, scroll) {
  leafId = leaf;
  targetId = target || leaf;
  const path = pathTo(leaf);
  pathIds = new Set(path.map(e => e.id));
  let keep = 0;
  while (keep < path.length && keep < placed && path[keep] === shownPath[keep]) keep++;
  for (let i = placed - 1; i >= keep; i--) { const el = nodes.get(shownPath[i].id); if (el && el.parentNode) el.remove(); }
  shownPath = path;
  placed = keep;
  if (targetId && byId.get(targetId) && byId.get(targetId).type === 'custom_message' && byId.get(targetId).display === false) setHidden(true);
  const job = { at: keep };
  pending = job;
  const stop = target && scroll === 'target' ? Math.max(keep, path.findIndex(e => e.id === targetId) + 1) : 0;
  const slice = limit => {
    if (pending !== job) return;
    const frag = document.createDocumentFragment();
    const t0 = performance.now();
    while (job.at < path.length && (job.at < limit || performance.now() - t0 < 12)) {
      const batch = path.slice(job.at, Math.max(limit, job.at + 50));
      job.at += batch.length;
      for (const el of nodesOf(batch)) if (el) { if (tools) openAll(el); frag.appendChild(el); }
    }
    placed = job.at;
    messagesEl.appendChild(frag);
    if (job.at < path.length) setTimeout(() => slice(0), 0);
    else pending = null;
  };
  slice(scroll === 'bottom' ? path.length : stop);
  drawTree();
  revealTarget();
  if (scroll === 'bottom') requestAnimationFrame(() => { window.scrollTo(0, document.body.scrollHeight); });
  else if (scroll === 'target') {
    const t = byId.get(targetId);
    let to = t && t.type === 'message' && t.message && t.message.role === 'toolResult'
      ? document.getElementById('tool-call-' + t.message.toolCallId) : null;
    // An entry that shows nothing (a label, a setting) scrolls to the nearest one above it.
    for (let i = path.indexOf(t); !to && i >= 0; i--) to = nodes.get(path[i].id) || null;
    if (to) {
      to.scrollIntoView({ block: 'center' });
      if (target) { to.classList.remove('flash'); void to.offsetWidth; to.classList.add('flash'); setTimeout(() => to.classList.remove('flash'), 2000); }
    }
  }
}

// ---------- Toggles ----------
let tools = false, thinking = true, hidden = false;
const press = (act, on, label) => {
  const b = document.querySelector('[data-act="' + act + '"]');
  if (!b) return;
  b.setAttribute('aria-pressed', String(on));
  if (label) b.textContent = label;
};
// Blocks opened or closed by a click, against the global T/O state; a global toggle resets
// them, on screen or not.
const flipped = new Set();
function flip(el) { el.classList.toggle('flip'); if (el.classList.contains('flip')) flipped.add(el); else flipped.delete(el); }
function clearFlips(cls) { for (const el of flipped) if (el.classList.contains(cls)) { el.classList.remove('flip'); flipped.delete(el); } }
function setThinking(on) { thinking = on; document.body.classList.toggle('hide-thinking', !on); clearFlips('think'); press('thinking', on); }
function setTools(on) {
  tools = on;
  document.body.classList.toggle('tools-open', on);
  clearFlips('xp');
  if (on) openAll(messagesEl);
  press('tools', on);
}
function openAll(root) {
  if (root.classList.contains('xp')) fillLazy(root);
  for (const el of root.querySelectorAll('.xp')) fillLazy(el);
}
function setHidden(on) { hidden = on; document.body.classList.toggle('show-hidden', on); press('hidden', on, on ? 'Hide hidden messages' : 'Show hidden messages'); }
document.addEventListener('click', ev => {
  if (String(window.getSelection())) return;
  const t = ev.target;
  const link = t.closest('.link');
  if (link) { copy(shareUrl(link.dataset.id), link); return; }
  const act = t.closest('[data-act]');
  if (act) {
    const a = act.dataset.act;
    if (a === 'thinking') setThinking(!thinking);
    else if (a === 'tools') setTools(!tools);
    else if (a === 'hidden') setHidden(!hidden);
    else if (a === 'jsonl') downloadJsonl();
    return;
  }
  if (t.closest('a')) return;
  const tl = t.closest('.tl.has');
  if (tl) { tl.classList.toggle('open'); return; }
  const xp = t.closest('.xp');
  if (xp) { fillLazy(xp); flip(xp); return; }
  const th = t.closest('.think');
  if (th) flip(th);
});
function downloadJsonl() {
  const lines = [JSON.stringify(header)].concat(entries.map(e => JSON.stringify(e)));
  const url = URL.createObjectURL(new Blob([lines.join('\n') + '\n'], { type: 'application/x-ndjson' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = (header.id || 'session') + '.jsonl';
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
// A link to one message: `?leafId=…&targetId=…`, kept after a gist id (`?<id>&…`) or on
// the base URL the share page injects.
function shareUrl(id) {
  const params = new URLSearchParams({ leafId, targetId: id }).toString();
  const base = document.querySelector('meta[name="pi-share-base-url"]');
  if (base) return base.content + '&' + params;
  const url = new URL(location.href);
  const gist = [...url.searchParams.keys()].find(k => !url.searchParams.get(k));
  url.search = gist ? '?' + gist + '&' + params : '?' + params;
  return url.toString();
}
async function copy(text, button) {
  let ok = false;
  try { await navigator.clipboard.writeText(text); ok = true; } catch (_) {
    const ta = document.createElement('textarea');
    ta.value = text;
    ta.style.cssText = 'position:fixed;opacity:0';
    document.body.appendChild(ta);
    ta.select();
    try { ok = document.execCommand('copy'); } catch (_) { ok = false; }
    ta.remove();
  }
  if (ok) { button.classList.add('done'); setTimeout(() => button.classList.remove('done'), 1500); }
}

// ---------- Sidebar ----------
const sidebar = document.getElementById('sidebar');
const shade = document.getElementById('shade');
const search = document.getElementById('search');
let searchQueued = false;
search.addEventListener('input', () => {
  query = search.value;
  if (searchQueued) return;
  searchQueued = true;
  requestAnimationFrame(() => { searchQueued = false; refilter(); });
});
for (const b of document.querySelectorAll('.filter')) {
  b.addEventListener('click', () => {
    for (const o of document.querySelectorAll('.filter')) o.classList.toggle('on', o === b);
    filter = b.dataset.filter;
    refilter();
  });
}
const menu = document.getElementById('menu');
function closeSidebar() { sidebar.classList.remove('open'); shade.classList.remove('open'); menu.style.display = ''; }
menu.addEventListener('click', () => { sidebar.classList.add('open'); shade.classList.add('open'); menu.style.display = 'none'; });
shade.addEventListener('click', closeSidebar);
document.getElementById('side-close').addEventListener('click', closeSidebar);
const WIDTH_KEY = 'pi-share:v1:sidebar-width';
const narrow = () => matchMedia('(max-width: 900px)').matches;
function setWidth(w) {
  const css = getComputedStyle(document.documentElement);
  const min = parseFloat(css.getPropertyValue('--side-min')) || 240;
  const max = Math.max(min, Math.min(parseFloat(css.getPropertyValue('--side-max')) || 840, innerWidth - 320));
  const v = Math.round(Math.max(min, Math.min(max, w)));
  document.documentElement.style.setProperty('--side-w', v + 'px');
  return v;
}
try { const w = Number(localStorage.getItem(WIDTH_KEY)); if (w) setWidth(w); } catch (_) { /* storage may be off */ }
const resizer = document.getElementById('resizer');
resizer.addEventListener('pointerdown', ev => {
  if (narrow()) return;
  ev.preventDefault();
  const x0 = ev.clientX, w0 = sidebar.getBoundingClientRect().width;
  document.body.classList.add('resizing');
  const move = e => setWidth(w0 + e.clientX - x0);
  const up = () => {
    document.body.classList.remove('resizing');
    removeEventListener('pointermove', move);
    removeEventListener('pointerup', up);
    try { localStorage.setItem(WIDTH_KEY, String(setWidth(sidebar.getBoundingClientRect().width))); } catch (_) { /* ignore */ }
    drawTree();
  };
  addEventListener('pointermove', move);
  addEventListener('pointerup', up);
});
resizer.addEventListener('dblclick', () => { try { localStorage.setItem(WIDTH_KEY, String(setWidth(400))); } catch (_) { /* ignore */ } });

document.addEventListener('keydown', ev => {
  if (ev.key === 'Escape') {
    search.value = '';
    query = '';
    refilter();
    if (defaultLeaf) navigate(defaultLeaf, null, 'bottom');
    return;
  }
  const t = document.activeElement;
  if (ev.ctrlKey || ev.metaKey || ev.altKey || (t && (/^(INPUT|TEXTAREA|SELECT|BUTTON)$/.test(t.tagName) || t.isContentEditable))) return;
  const k = ev.key.toLowerCase();
  if (k === 't') { ev.preventDefault(); setThinking(!thinking); }
  else if (k === 'o') { ev.preventDefault(); setTools(!tools); }
  else if (k === 'h') { ev.preventDefault(); setHidden(!hidden); }
});

// ---------- Start ----------
document.getElementById('header').innerHTML = headerHtml();
press('thinking', true); press('tools', false); press('hidden', false);
const injected = document.querySelector('meta[name="pi-url-params"]');
const params = new URLSearchParams(injected ? injected.content : location.search.slice(1));
const urlLeaf = params.get('leafId'), urlTarget = params.get('targetId');
const defaultLeaf = byId.has(data.leafId) ? data.leafId : entries.length ? entries[entries.length - 1].id : null;
leafId = urlLeaf && byId.has(urlLeaf) ? urlLeaf : defaultLeaf;
if (leafId) {
  targetId = urlTarget && byId.has(urlTarget) ? urlTarget : leafId;
  refilter();
  navigate(leafId, urlTarget && byId.has(urlTarget) ? urlTarget : null, urlTarget && byId.has(urlTarget) ? 'target' : 'none');
} else {
  refilter();
  messagesEl.innerHTML = '<div class="note">(no entries)</div>';
}
