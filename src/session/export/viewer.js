// Session viewer: reads the session embedded in #session-data (base64 of the JSON
// {header, entries, leafId, systemPrompt?, tools?}) and shows the session tree beside the
// conversation of the selected branch. Everything is rendered here, from escaped text; the
// page loads nothing from the network.
(() => {
'use strict';

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
const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = s => String(s == null ? '' : s).replace(/[&<>"']/g, c => ESC[c]);
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

// ---------- Syntax highlighting ----------
const words = s => new Set(s.split(' '));
const C_LIKE = 'break case catch class const continue default do else enum extends finally for goto if import in instanceof new return static super switch this throw try void while';
const LANGS = {
  js: { kw: words(C_LIKE + ' async await debugger delete export from function get let of set typeof var with yield as interface type implements private public protected readonly declare namespace abstract keyof satisfies'), lit: words('true false null undefined NaN Infinity'), line: '//', block: true, tmpl: true },
  py: { kw: words('and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case self'), lit: words('True False None'), line: '#', triple: true },
  rs: { kw: words('as break const continue crate dyn else enum extern fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait type unsafe use where while async await'), lit: words('true false None Some Ok Err'), line: '//', block: true, types: words('i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 bool char str String Vec Option Result Box'), macro: true },
  go: { kw: words('break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var'), lit: words('true false nil iota'), line: '//', block: true, tmpl: true },
  c: { kw: words(C_LIKE + ' auto extern inline register sizeof struct typedef union unsigned signed volatile namespace template typename using virtual public private protected operator friend delete nullptr constexpr override final abstract implements interface package throws var val fun when object is as in out where let func guard self'), lit: words('true false null NULL nil'), line: '//', block: true, types: words('int long short char float double bool void size_t string String'), pre: true },
  sh: { kw: words('if then else elif fi for while until do done case esac function in return local export readonly declare unset shift exit set source alias echo cd'), lit: words('true false'), line: '#', vars: true },
  json: { kw: words(''), lit: words('true false null'), keys: true },
  yaml: { kw: words(''), lit: words('true false null yes no on off'), line: '#', keys: true },
  sql: { kw: words('select from where and or not insert into values update set delete create table drop alter add index on join left right inner outer full group by order having limit offset as distinct union all case when then else end is null like in between exists primary key foreign references default unique begin commit rollback with returning'), lit: words('true false null'), line: '--', block: true, nocase: true },
  css: { kw: words(''), lit: words('important'), block: true, css: true },
  xml: { xml: true },
  diff: { diff: true },
  text: null,
};
const ALIASES = { javascript: 'js', jsx: 'js', ts: 'js', tsx: 'js', typescript: 'js', mjs: 'js', cjs: 'js', python: 'py', rust: 'rs', golang: 'go', cpp: 'c', 'c++': 'c', h: 'c', hpp: 'c', cc: 'c', java: 'c', cs: 'c', csharp: 'c', kotlin: 'c', kt: 'c', swift: 'c', php: 'c', scala: 'c', dart: 'c', bash: 'sh', shell: 'sh', zsh: 'sh', console: 'sh', fish: 'sh', yml: 'yaml', toml: 'yaml', ini: 'yaml', html: 'xml', svg: 'xml', vue: 'xml', scss: 'css', less: 'css', patch: 'diff', plaintext: 'text', txt: 'text', rb: 'py', ruby: 'py', jsonl: 'json', jsonc: 'json', dockerfile: 'sh', makefile: 'sh', md: 'text', markdown: 'text' };
const GENERIC = { kw: words(C_LIKE + ' def fn func function let var val import from export return async await pub impl struct trait use mod elif not and or pass self package type interface'), lit: words('true false null nil None True False undefined'), line: '//', hash: true, block: true };
const EXT_LANG = { ts: 'js', tsx: 'js', js: 'js', jsx: 'js', mjs: 'js', cjs: 'js', py: 'py', rb: 'py', rs: 'rs', go: 'go', java: 'c', c: 'c', cpp: 'c', h: 'c', hpp: 'c', cs: 'c', php: 'c', kt: 'c', swift: 'c', sh: 'sh', bash: 'sh', zsh: 'sh', sql: 'sql', html: 'xml', xml: 'xml', svg: 'xml', css: 'css', scss: 'css', json: 'json', yaml: 'yaml', yml: 'yaml', toml: 'yaml', diff: 'diff', patch: 'diff' };
function langOf(name) {
  if (!name) return GENERIC;
  const k = String(name).toLowerCase();
  const id = ALIASES[k] || k;
  return id in LANGS ? LANGS[id] : GENERIC;
}
const langOfPath = p => { const m = /\.([^./]+)$/.exec(p || ''); const k = m && EXT_LANG[m[1].toLowerCase()]; return k ? LANGS[k] : undefined; };
const span = (cls, s) => '<span class="' + cls + '">' + esc(s) + '</span>';
// One regex per language; the capture group that matched names the token's kind.
const RX_CACHE = new Map();
function tokenRx(L) {
  let rx = RX_CACHE.get(L);
  if (rx) return rx;
  const parts = [];
  const add = (kind, re) => parts.push([kind, re]);
  if (L.block) add('hc', '/\\*[\\s\\S]*?(?:\\*/|$)');
  if (L.line) add('hc', L.line.replace(/[/]/g, '\\/') + '.*');
  if (L.hash) add('hc', '#(?![\\[!{])(?=[\\s#!]|$).*');
  if (L.pre) add('hk', '^[ \\t]*#[ \\t]*[a-z]+');
  if (L.triple) add('hs', '"""[\\s\\S]*?(?:"""|$)|\'\'\'[\\s\\S]*?(?:\'\'\'|$)');
  add('str', '"(?:[^"\\\\\\n]|\\\\.)*"?|\'(?:[^\'\\\\\\n]|\\\\.)*\'?');
  if (L.tmpl) add('hs', '`(?:[^`\\\\]|\\\\[\\s\\S])*`?');
  if (L.vars) add('hv', '\\$\\{[^}\\n]*\\}?|\\$[A-Za-z_0-9@#?*!$-]+');
  if (L.css) add('hn', '#[0-9a-fA-F]{3,8}\\b');
  add('hn', '\\b(?:0x[0-9a-fA-F_]+|0b[01_]+|\\d[\\d_]*(?:\\.\\d+)?(?:[eE][+-]?\\d+)?)[a-zA-Z%]*');
  add('word', '[A-Za-z_$][\\w$]*' + (L.css ? '(?:-[\\w$]+)*' : '') + '!?');
  rx = { re: new RegExp(parts.map(p => '(' + p[1] + ')').join('|'), 'gm'), kinds: parts.map(p => p[0]) };
  RX_CACHE.set(L, rx);
  return rx;
}
const KEY_AFTER = /\s*:(?!:)/y;
const followedByColon = (code, at) => { KEY_AFTER.lastIndex = at; return KEY_AFTER.test(code); };
function highlight(code, L) {
  if (L === undefined) L = GENERIC;
  if (!L) return esc(code);
  if (L.diff) return code.split('\n').map(l => /^[+>]/.test(l) ? span('d-add', l) : /^[-<]/.test(l) ? span('d-del', l) : /^@@/.test(l) ? span('hk', l) : esc(l)).join('\n');
  if (L.xml) return highlightXml(code);
  const { re, kinds } = tokenRx(L);
  re.lastIndex = 0;
  let out = '', last = 0, m;
  while ((m = re.exec(code))) {
    const t = m[0];
    if (!t) { re.lastIndex++; continue; }
    let k = 1;
    while (m[k] === undefined) k++;
    const kind = kinds[k - 1];
    out += esc(code.slice(last, m.index));
    last = m.index + t.length;
    if (kind === 'word') out += word(t, L, code, last);
    else if (kind === 'str') out += span(L.keys && followedByColon(code, last) ? 'hv' : 'hs', t);
    else out += span(kind, t);
  }
  return out + esc(code.slice(last));
}
function word(t, L, code, end) {
  if (L.macro && t.endsWith('!')) return span('hf', t);
  const w = t.endsWith('!') ? t.slice(0, -1) : t;
  const tail = t.length > w.length ? esc('!') : '';
  const key = L.nocase ? w.toLowerCase() : w;
  if (L.kw && L.kw.has(key)) return span('hk', w) + tail;
  if (L.lit && L.lit.has(key)) return span('hn', w) + tail;
  if (L.types && L.types.has(w)) return span('ht', w) + tail;
  const next = code.slice(end, end + 40);
  if (L.keys && followedByColon(code, end)) return span('hv', w) + tail;
  if (L.css && /^\s*:[^:]/.test(next)) return span('hv', w) + tail;
  if (/^\s*\(/.test(next) && !tail) return span('hf', w);
  if (/^[A-Z][a-z0-9]/.test(w) && !L.css) return span('ht', w) + tail;
  return esc(w) + tail;
}
function highlightXml(code) {
  const rx = /(<[!]--[\s\S]*?(?:-->|$))|(<\/?[A-Za-z][\w:.-]*)|("[^"]*"|'[^']*')|([A-Za-z_:][\w:.-]*)(?==)|(\/?>)/g;
  let out = '', last = 0, m, inTag = false;
  while ((m = rx.exec(code))) {
    out += esc(code.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[1]) out += span('hc', m[1]);
    else if (m[2]) { inTag = true; out += esc(m[2][1] === '/' ? '</' : '<') + span('hf', m[2].replace(/^<\/?/, '')); }
    else if (m[3]) out += inTag ? span('hs', m[3]) : esc(m[3]);
    else if (m[4]) out += inTag ? span('hv', m[4]) : esc(m[4]);
    else { inTag = false; out += esc(m[5]); }
  }
  return out + esc(code.slice(last));
}

// ---------- Markdown ----------
// GFM as the terminal shows it: raw HTML stays text, single newlines break lines, links only
// to web and mail addresses, and remote images become links (the page loads nothing).
const SAFE_URL = /^(?:(?:https?|mailto|tel|ftp):|[^:]*$)/i;
function safeUrl(u) {
  const v = String(u || '').trim().replace(/[\x00-\x1f\x7f]/g, '');
  return SAFE_URL.test(v) ? v : null;
}
const LI = /^( {0,3})([-*+]|\d{1,9}[.)])(?:([ \t]+)(.*)|$)/;
const FENCE = /^( {0,3})(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*$/;
const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const HEAD = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const TABLE_SEP = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;
const indentOf = l => /^ */.exec(l)[0].length;
const isBlank = l => !l.trim();
function md(src) {
  const lines = String(src).replace(/\r\n?/g, '\n').split('\n').map(l => l.replace(/^[ \t]+/, ws => ws.replace(/\t/g, '    ')));
  return blocks(lines, false);
}
function startsBlock(l) {
  return FENCE.test(l) || HEAD.test(l) || HR.test(l) || /^ {0,3}>/.test(l) || LI.test(l);
}
function blocks(lines, tight) {
  let out = '', para = [], i = 0;
  const flush = () => {
    if (!para.length) return;
    const html = inline(para.join('\n'));
    out += tight ? html : '<p>' + html + '</p>';
    para = [];
  };
  while (i < lines.length) {
    const l = lines[i];
    let m;
    if (isBlank(l)) { flush(); i++; continue; }
    if ((m = FENCE.exec(l))) {
      flush();
      const close = new RegExp('^ {0,3}' + m[2][0] + '{' + m[2].length + ',}[ \\t]*$');
      const body = [];
      for (i++; i < lines.length && !close.test(lines[i]); i++) body.push(lines[i].slice(Math.min(m[1].length, indentOf(lines[i]))));
      i++;
      out += '<pre><code>' + highlight(body.join('\n'), langOf(m[3])) + '</code></pre>';
      continue;
    }
    if ((m = HEAD.exec(l))) { flush(); out += '<h' + m[1].length + '>' + inline(m[2] || '') + '</h' + m[1].length + '>'; i++; continue; }
    if (para.length && /^ {0,3}(=+|-+)[ \t]*$/.test(l)) {
      const n = l.trim()[0] === '=' ? 1 : 2;
      out += '<h' + n + '>' + inline(para.join('\n')) + '</h' + n + '>';
      para = []; i++; continue;
    }
    if (HR.test(l)) { flush(); out += '<hr>'; i++; continue; }
    if (/^ {0,3}>/.test(l)) {
      flush();
      const inner = [];
      while (i < lines.length && (/^ {0,3}>/.test(lines[i]) || (!isBlank(lines[i]) && inner.length && !isBlank(inner[inner.length - 1]) && !startsBlock(lines[i])))) {
        inner.push(lines[i].replace(/^ {0,3}> ?/, ''));
        i++;
      }
      out += '<blockquote>' + blocks(inner, false) + '</blockquote>';
      continue;
    }
    if ((m = LI.exec(l)) && !(para.length && (!m[4] || (/\d/.test(m[2]) && parseInt(m[2], 10) !== 1)))) {
      flush();
      const r = list(lines, i);
      out += r.html; i = r.next; continue;
    }
    if (l.includes('|') && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1]) && lines[i + 1].includes('-')) {
      const head = cells(l), sep = cells(lines[i + 1]);
      if (head.length === sep.length) {
        flush();
        const r = table(lines, i, head, sep);
        out += r.html; i = r.next; continue;
      }
    }
    if (!para.length && indentOf(l) >= 4) {
      const body = [];
      while (i < lines.length && (isBlank(lines[i]) || indentOf(lines[i]) >= 4)) body.push(lines[i++].slice(4));
      while (body.length && isBlank(body[body.length - 1])) body.pop();
      out += '<pre><code>' + esc(body.join('\n')) + '</code></pre>';
      continue;
    }
    para.push(l.replace(/^ +/, ''));
    i++;
  }
  flush();
  return out;
}
function list(lines, i) {
  const first = LI.exec(lines[i]);
  const ordered = /\d/.test(first[2]);
  const mark = ordered ? first[2].slice(-1) : first[2];
  const sameKind = m => m && (ordered ? /\d/.test(m[2]) && m[2].slice(-1) === mark : m[2] === mark);
  const items = [];
  let loose = false;
  while (i < lines.length) {
    const m = LI.exec(lines[i]);
    if (!sameKind(m) || indentOf(lines[i]) > 3) break;
    const gap = m[3] ? m[3].length : 1;
    const width = m[1].length + m[2].length + (gap > 4 ? 1 : gap);
    const body = [m[3] && gap > 4 ? ' '.repeat(gap - 1) + m[4] : (m[4] || '')];
    i++;
    while (i < lines.length) {
      const l = lines[i];
      if (isBlank(l)) {
        let j = i + 1;
        while (j < lines.length && isBlank(lines[j])) j++;
        if (j < lines.length && indentOf(lines[j]) >= width) { for (; i < j; i++) body.push(''); continue; }
        break;
      }
      if (indentOf(l) >= width) { body.push(l.slice(width)); i++; continue; }
      if (!isBlank(body[body.length - 1]) && !startsBlock(l)) { body.push(l.trim()); i++; continue; }
      break;
    }
    // A blank line between the item's blocks, or before the next item, makes the list loose.
    let j = i;
    while (j < lines.length && isBlank(lines[j])) j++;
    if (body.slice(1).some((l, k) => isBlank(l) && k + 2 < body.length)) loose = true;
    if (j > i && j < lines.length && sameKind(LI.exec(lines[j])) && indentOf(lines[j]) <= 3) { loose = true; i = j; }
    items.push(body);
  }
  const start = ordered ? parseInt(first[2], 10) : 1;
  let html = ordered ? '<ol' + (start !== 1 ? ' start="' + start + '"' : '') + '>' : '<ul>';
  for (const body of items) {
    let box = '';
    const t = /^\[([ xX])\][ \t]+/.exec(body[0]);
    if (t) { box = '<input type="checkbox" disabled' + (t[1] !== ' ' ? ' checked' : '') + '>'; body[0] = body[0].slice(t[0].length); }
    html += '<li>' + box + blocks(body, !loose) + '</li>';
  }
  return { html: html + (ordered ? '</ol>' : '</ul>'), next: i };
}
function cells(line) {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  return s.split(/(?<!\\)\|/).map(c => c.trim().replace(/\\\|/g, '|'));
}
function table(lines, i, head, sep) {
  const align = sep.map(c => c.startsWith(':') && c.endsWith(':') ? 'center' : c.endsWith(':') ? 'right' : c.startsWith(':') ? 'left' : '');
  const row = (cs, tag) => '<tr>' + align.map((a, k) => '<' + tag + (a ? ' style="text-align:' + a + '"' : '') + '>' + inline(cs[k] || '') + '</' + tag + '>').join('') + '</tr>';
  let html = '<table><thead>' + row(head, 'th') + '</thead><tbody>';
  for (i += 2; i < lines.length && !isBlank(lines[i]) && !startsBlock(lines[i]); i++) html += row(cells(lines[i]), 'td');
  return { html: html + '</tbody></table>', next: i };
}
// Inline Markdown: code spans, links and escapes become finished HTML; runs of * _ ~ are
// matched as emphasis by the CommonMark delimiter rules; all other text is escaped.
const PUNCT = /[!-/:-@[-`{-~\p{P}\p{S}]/u;
function inline(src) {
  const toks = [];
  let text = '';
  const flushText = () => { if (text) { toks.push({ html: esc(text) }); text = ''; } };
  const push = html => { flushText(); toks.push({ html }); };
  const n = src.length;
  let i = 0;
  while (i < n) {
    const c = src[i];
    if (c === '\\' && i + 1 < n && /[!-/:-@[-`{-~]/.test(src[i + 1])) { text += src[i + 1]; i += 2; continue; }
    if (c === '\\' && src[i + 1] === '\n') { push('<br>'); i += 2; continue; }
    if (c === '\n') { text = text.replace(/ +$/, ''); push('<br>'); i++; while (src[i] === ' ') i++; continue; }
    if (c === '`') {
      let k = i; while (src[k] === '`') k++;
      const run = k - i;
      let j = k, close = -1;
      while ((j = src.indexOf('`', j)) !== -1) {
        let e = j; while (src[e] === '`') e++;
        if (e - j === run) { close = j; break; }
        j = e;
      }
      if (close === -1) { text += src.slice(i, k); i = k; continue; }
      let code = src.slice(k, close).replace(/\n/g, ' ');
      if (/^ .*[^ ].* $/.test(code)) code = code.slice(1, -1);
      push('<code>' + esc(code) + '</code>');
      i = close + run; continue;
    }
    if (c === '<') {
      const m = /^<((?:https?|mailto|ftp):[^\s<>]*|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)>/i.exec(src.slice(i, i + 2048));
      if (m) {
        const url = m[1].includes(':') ? m[1] : 'mailto:' + m[1];
        push('<a href="' + esc(url) + '">' + esc(m[1]) + '</a>');
        i += m[0].length; continue;
      }
    }
    if (c === '[' || (c === '!' && src[i + 1] === '[')) {
      const r = link(src, c === '!' ? i + 1 : i);
      if (r) {
        const url = safeUrl(r.url);
        const title = r.title ? ' title="' + esc(r.title) + '"' : '';
        if (c === '!') push(url ? '<a href="' + esc(url) + '"' + title + '>[image: ' + esc(r.text || url) + ']</a>' : esc(r.text));
        else push(url !== null ? '<a href="' + esc(url) + '"' + title + '>' + inline(r.text) + '</a>' : inline(r.text));
        i = r.end; continue;
      }
    }
    if ((c === 'h' || c === 'w') && (i === 0 || /[\s*_~(]/.test(src[i - 1]))) {
      const m = /^(?:https?:\/\/|www\.)[^\s<]+/.exec(src.slice(i, i + 2048));
      if (m) {
        let url = m[0].replace(/[?!.,:*_~'"]+$/, '');
        while (url.endsWith(')') && (url.match(/\(/g) || []).length < (url.match(/\)/g) || []).length) url = url.slice(0, -1);
        push('<a href="' + esc(url.startsWith('www.') ? 'http://' + url : url) + '">' + esc(url) + '</a>');
        i += url.length; continue;
      }
    }
    if (c === '*' || c === '_' || c === '~') {
      let k = i; while (src[k] === c) k++;
      const before = i ? src[i - 1] : ' ', after = k < n ? src[k] : ' ';
      const ws = ch => /\s/.test(ch), pu = ch => PUNCT.test(ch);
      const left = !ws(after) && (!pu(after) || ws(before) || pu(before));
      const right = !ws(before) && (!pu(before) || ws(after) || pu(after));
      flushText();
      const open = c === '_' ? left && (!right || pu(before)) : left;
      const close = c === '_' ? right && (!left || pu(after)) : right;
      toks.push({ ch: c, n: k - i, open, close, pre: '', post: '' });
      i = k; continue;
    }
    text += c; i++;
  }
  flushText();
  emphasis(toks);
  let out = '';
  for (const t of toks) out += t.ch ? t.pre + esc(t.ch.repeat(t.n)) + t.post : t.html;
  return out;
}
function emphasis(toks) {
  const bottom = { '*': 0, _: 0, '~': 0 };
  for (let c = 0; c < toks.length; c++) {
    const cl = toks[c];
    if (!cl.ch || !cl.close) continue;
    while (cl.n > 0) {
      let found = -1;
      for (let o = c - 1; o >= bottom[cl.ch]; o--) {
        const op = toks[o];
        if (!op.ch || !op.open || op.ch !== cl.ch || op.n === 0) continue;
        if (cl.ch === '~' && (op.n !== 2 || cl.n !== 2)) continue;
        if ((op.close || cl.open) && (op.n + cl.n) % 3 === 0 && (op.n % 3 || cl.n % 3)) continue;
        found = o; break;
      }
      if (found < 0) { if (!cl.open) bottom[cl.ch] = c; break; }
      const op = toks[found];
      const use = cl.ch === '~' ? 2 : op.n >= 2 && cl.n >= 2 ? 2 : 1;
      const tag = cl.ch === '~' ? 'del' : use === 2 ? 'strong' : 'em';
      op.n -= use; cl.n -= use;
      op.post = '<' + tag + '>' + op.post;
      cl.pre += '</' + tag + '>';
      for (let k = found + 1; k < c; k++) if (toks[k].ch) { toks[k].open = false; toks[k].close = false; }
    }
  }
}
function link(src, i) {
  let depth = 0, j = i;
  const limit = Math.min(src.length, i + 4096);
  for (; j < limit; j++) {
    const ch = src[j];
    if (ch === '\\') { j++; continue; }
    if (ch === '`') { const e = src.indexOf('`', j + 1); if (e > 0) j = e; continue; }
    if (ch === '[') depth++;
    else if (ch === ']' && --depth === 0) break;
  }
  if (j >= limit || src[j + 1] !== '(') return null;
  const m = /^\(\s*(<[^<>\n]*>|(?:[^\s()\\]|\\.|\((?:[^\s()\\]|\\.)*\))*)(?:\s+("[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/.exec(src.slice(j + 1, j + 4096));
  if (!m) return null;
  const url = m[1].startsWith('<') ? m[1].slice(1, -1) : m[1].replace(/\\(.)/g, '$1');
  return { text: src.slice(i + 1, j), url, title: m[2] ? m[2].slice(1, -1) : '', end: j + 1 + m[0].length };
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
// For scripts driving the page: whether the branch on screen is fully rendered.
window.piViewer = { done: () => pending === null };
})();
