// Markup for the session viewer: HTML escaping, syntax highlighting and Markdown, all
// pure functions from text to escaped HTML. Concatenated before session.js and viewer.js
// into one script (viewer.html).

// ---------- Escaping ----------
const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = s => String(s == null ? '' : s).replace(/[&<>"']/g, c => ESC[c]);

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
