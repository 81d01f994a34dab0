// Stand-in for pi-tui (`@mariozechner/pi-tui`, `@earendil-works/pi-tui`) for extensions run by
// pi's Node.js bridge: the text helpers (visibleWidth, truncateToWidth, wrapTextWithAnsi), key
// matching on raw terminal input (matchesKey, parseKey, Key), and the components extensions
// build their UI from (Text, Box, Container, Spacer, Markdown, SelectList, SettingsList, Input,
// Editor, Loader, …). A component renders to lines of text; pi draws those lines and forwards
// keys to `handleInput`. Written by the pi binary into its cache.

export const CURSOR_MARKER = "\x1b_pi:c\x07";

// ---- width and wrapping ---------------------------------------------------------------------

const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b_[^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

export function stripAnsi(text) {
  return String(text ?? "").replace(ANSI, "");
}

function isWide(cp) {
  return (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0x303e) ||
    (cp >= 0x3041 && cp <= 0x33ff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0xa000 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1f64f) ||
    (cp >= 0x1f900 && cp <= 0x1f9ff) ||
    (cp >= 0x1f680 && cp <= 0x1f6ff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  );
}

function charWidth(ch) {
  const cp = ch.codePointAt(0);
  if (cp === undefined) return 0;
  if (cp < 32 || (cp >= 0x7f && cp < 0xa0)) return 0;
  if (cp === 0x200b || cp === 0x200d || (cp >= 0x300 && cp <= 0x36f) || (cp >= 0xfe00 && cp <= 0xfe0f)) return 0;
  return isWide(cp) ? 2 : 1;
}

export function visibleWidth(text) {
  let w = 0;
  for (const ch of stripAnsi(text)) w += ch === "\t" ? 3 : charWidth(ch);
  return w;
}

/** Splits text into [isEscape, piece] tokens. */
function tokens(text) {
  const out = [];
  let last = 0;
  for (const m of String(text).matchAll(ANSI)) {
    if (m.index > last) out.push([false, text.slice(last, m.index)]);
    out.push([true, m[0]]);
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push([false, text.slice(last)]);
  return out;
}

export function truncateToWidth(text, maxWidth, ellipsis = "...", pad = false) {
  text = String(text ?? "");
  const width = visibleWidth(text);
  if (width <= maxWidth) return pad ? text + " ".repeat(Math.max(0, maxWidth - width)) : text;
  const ellWidth = visibleWidth(ellipsis);
  const budget = Math.max(0, maxWidth - ellWidth);
  let out = "";
  let used = 0;
  let hadEscape = false;
  outer: for (const [esc, piece] of tokens(text)) {
    if (esc) {
      out += piece;
      hadEscape = true;
      continue;
    }
    for (const ch of piece) {
      const cw = charWidth(ch);
      if (used + cw > budget) break outer;
      out += ch;
      used += cw;
    }
  }
  out += (hadEscape ? "\x1b[0m" : "") + (maxWidth >= ellWidth ? ellipsis : "");
  const total = used + (maxWidth >= ellWidth ? ellWidth : 0);
  return pad ? out + " ".repeat(Math.max(0, maxWidth - total)) : out;
}

/** Word-wraps text (keeping ANSI styles across breaks) to lines of at most `width` columns. */
export function wrapTextWithAnsi(text, width) {
  const result = [];
  width = Math.max(1, Math.floor(width));
  for (const rawLine of String(text ?? "").split("\n")) {
    if (visibleWidth(rawLine) <= width) {
      result.push(rawLine);
      continue;
    }
    let line = "";
    let lineWidth = 0;
    let active = "";
    const flush = () => {
      result.push(line + (active ? "\x1b[0m" : ""));
      line = active;
      lineWidth = 0;
    };
    // Words keep their trailing spaces; a word wider than the line is split by characters.
    const words = rawLine.match(/\S+\s*|\s+/g) ?? [];
    for (const word of words) {
      const ww = visibleWidth(word.trimEnd());
      if (lineWidth > 0 && lineWidth + ww > width) flush();
      for (const [esc, piece] of tokens(word)) {
        if (esc) {
          line += piece;
          active = piece === "\x1b[0m" || piece === "\x1b[m" ? "" : active + piece;
          continue;
        }
        for (const ch of piece) {
          const cw = charWidth(ch);
          if (lineWidth + cw > width) {
            if (ch === " ") continue;
            flush();
          }
          if (lineWidth === 0 && ch === " " && line === active) continue;
          line += ch;
          lineWidth += cw;
        }
      }
    }
    if (line !== active || result.length === 0) result.push(line);
  }
  return result.map((l) => l.replace(/\s+$/, (s) => (s.includes("\x1b") ? s : "")));
}

export function hyperlink(text, url) {
  return `\x1b]8;;${url}\x07${text}\x1b]8;;\x07`;
}

// ---- keys -----------------------------------------------------------------------------------

const SPECIAL = [
  "escape", "enter", "tab", "space", "backspace", "delete", "insert", "clear", "home", "end",
  "pageUp", "pageDown", "up", "down", "left", "right",
  "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10", "f11", "f12",
];
const SYMBOL_NAMES = {
  backtick: "`", hyphen: "-", equals: "=", leftbracket: "[", rightbracket: "]", backslash: "\\",
  semicolon: ";", quote: "'", comma: ",", period: ".", slash: "/", exclamation: "!", at: "@",
  hash: "#", dollar: "$", percent: "%", caret: "^", ampersand: "&", asterisk: "*", leftparen: "(",
  rightparen: ")", underscore: "_", plus: "+", pipe: "|", tilde: "~", leftbrace: "{",
  rightbrace: "}", colon: ":", lessthan: "<", greaterthan: ">", question: "?",
};
const mod = (...mods) => (k) => `${mods.join("+")}+${k}`;
export const Key = {
  ...Object.fromEntries(SPECIAL.map((k) => [k, k])),
  esc: "esc",
  return: "return",
  ...SYMBOL_NAMES,
  ctrl: mod("ctrl"),
  shift: mod("shift"),
  alt: mod("alt"),
  super: mod("super"),
  ctrlShift: mod("ctrl", "shift"),
  shiftCtrl: mod("shift", "ctrl"),
  ctrlAlt: mod("ctrl", "alt"),
  altCtrl: mod("alt", "ctrl"),
  shiftAlt: mod("shift", "alt"),
  altShift: mod("alt", "shift"),
  ctrlSuper: mod("ctrl", "super"),
  superCtrl: mod("super", "ctrl"),
  shiftSuper: mod("shift", "super"),
  superShift: mod("super", "shift"),
  altSuper: mod("alt", "super"),
  superAlt: mod("super", "alt"),
  ctrlShiftAlt: mod("ctrl", "shift", "alt"),
  ctrlShiftSuper: mod("ctrl", "shift", "super"),
};

const LEGACY = {
  "\x1b": "escape", "\r": "enter", "\n": "enter", "\t": "tab", " ": "space", "\x7f": "backspace",
  "\x08": "ctrl+backspace", "\x1b[A": "up", "\x1b[B": "down", "\x1b[C": "right", "\x1b[D": "left",
  "\x1bOA": "up", "\x1bOB": "down", "\x1bOC": "right", "\x1bOD": "left", "\x1b[H": "home",
  "\x1b[F": "end", "\x1bOH": "home", "\x1bOF": "end", "\x1b[1~": "home", "\x1b[4~": "end",
  "\x1b[7~": "home", "\x1b[8~": "end", "\x1b[2~": "insert", "\x1b[3~": "delete", "\x1b[5~": "pageUp",
  "\x1b[6~": "pageDown", "\x1b[Z": "shift+tab", "\x1bOP": "f1", "\x1bOQ": "f2", "\x1bOR": "f3",
  "\x1bOS": "f4", "\x1b[15~": "f5", "\x1b[17~": "f6", "\x1b[18~": "f7", "\x1b[19~": "f8",
  "\x1b[20~": "f9", "\x1b[21~": "f10", "\x1b[23~": "f11", "\x1b[24~": "f12", "\x1b\r": "alt+enter",
  "\x1b\x7f": "alt+backspace", "\x1b[E": "clear", "\x00": "ctrl+space",
};
const CSI_FINAL = { A: "up", B: "down", C: "right", D: "left", H: "home", F: "end", P: "f1", Q: "f2", R: "f3", S: "f4", E: "clear" };
const TILDE = { 1: "home", 2: "insert", 3: "delete", 4: "end", 5: "pageUp", 6: "pageDown", 7: "home", 8: "end", 15: "f5", 17: "f6", 18: "f7", 19: "f8", 20: "f9", 21: "f10", 23: "f11", 24: "f12" };
const CODEPOINT = { 27: "escape", 13: "enter", 9: "tab", 32: "space", 127: "backspace", 8: "backspace" };

function withMods(base, param) {
  const bits = Math.max(0, (Number(param) || 1) - 1);
  const mods = [];
  if (bits & 4) mods.push("ctrl");
  if (bits & 1) mods.push("shift");
  if (bits & 2) mods.push("alt");
  if (bits & 8) mods.push("super");
  return mods.length ? `${mods.join("+")}+${base}` : base;
}

const KITTY = /^\x1b\[(\d+)(?::\d*)*(?:;(\d+)(?::(\d+))?)?(?:;[\d:]*)?u$/;

export function isKeyRelease(data) {
  const m = /^\x1b\[[\d:;]*:3[u~A-Z]$/.exec(String(data));
  return Boolean(m) || /;\d+:3[u~A-Z]$/.test(String(data));
}

export function isKeyRepeat(data) {
  return /;\d+:2[u~A-Z]$/.test(String(data));
}

let kittyActive = false;
export function setKittyProtocolActive(active) {
  kittyActive = Boolean(active);
}
export function isKittyProtocolActive() {
  return kittyActive;
}

/** The key id (`ctrl+c`, `shift+tab`, `a`, `up`) of one raw input sequence, if known. */
export function parseKey(data) {
  data = String(data ?? "");
  if (LEGACY[data]) return LEGACY[data];
  let m = KITTY.exec(data);
  if (m) {
    const cp = Number(m[1]);
    const base = CODEPOINT[cp] ?? String.fromCodePoint(cp).toLowerCase();
    return withMods(base, m[2]);
  }
  m = /^\x1b\[1;(\d+)(?::\d+)?([A-HPQRS])$/.exec(data);
  if (m) return withMods(CSI_FINAL[m[2]], m[1]);
  m = /^\x1b\[(\d+);(\d+)(?::\d+)?~$/.exec(data);
  if (m && TILDE[m[1]]) return withMods(TILDE[m[1]], m[2]);
  m = /^\x1b\[27;(\d+);(\d+)~$/.exec(data);
  if (m) return withMods(CODEPOINT[Number(m[2])] ?? String.fromCodePoint(Number(m[2])).toLowerCase(), m[1]);
  if (data.length === 1) {
    const c = data.charCodeAt(0);
    if (c >= 1 && c <= 26) return `ctrl+${String.fromCharCode(c + 96)}`;
    if (c === 28) return "ctrl+\\";
    if (c === 29) return "ctrl+]";
    if (c === 31) return "ctrl+-";
    if (data >= "A" && data <= "Z") return `shift+${data.toLowerCase()}`;
    return data;
  }
  if (data.length === 2 && data[0] === "\x1b") {
    const inner = parseKey(data[1]);
    if (inner) return `alt+${inner}`;
  }
  if ([...data].length === 1) return data;
  return undefined;
}

function normalizeId(id) {
  const parts = String(id).toLowerCase().split("+");
  let base = parts.pop();
  if (base === "" && parts.length && parts[parts.length - 1] === "") {
    parts.pop();
    base = "+";
  }
  const aliases = { esc: "escape", return: "enter", pageup: "pageup", pagedown: "pagedown" };
  base = aliases[base] ?? base;
  const order = ["ctrl", "shift", "alt", "super"];
  const mods = order.filter((m) => parts.includes(m));
  return [...mods, base].join("+");
}

export function matchesKey(data, keyId) {
  const parsed = parseKey(data);
  if (!parsed) return false;
  const want = normalizeId(keyId);
  const got = normalizeId(parsed);
  if (got === want) return true;
  // A shifted letter arrives as its capital: "shift+a" matches "A".
  if (/^[A-Z]$/.test(String(data)) && want === `shift+${String(data).toLowerCase()}`) return true;
  // Ctrl+H and Backspace share a byte in legacy terminals.
  if (data === "\x08" && (want === "ctrl+h" || want === "backspace")) return true;
  if (data === "\n" && want === "ctrl+j") return true;
  if (data === "\t" && want === "ctrl+i") return true;
  if (data === "\r" && want === "ctrl+m") return true;
  return false;
}

export function decodeKittyPrintable(data) {
  const m = KITTY.exec(String(data));
  if (!m) return undefined;
  const bits = Math.max(0, (Number(m[2]) || 1) - 1);
  if (bits & ~1) return undefined;
  const cp = Number(m[3] ?? m[1]);
  return cp >= 32 && cp !== 127 ? String.fromCodePoint(cp) : undefined;
}
export const decodePrintableKey = (data) => {
  const s = String(data);
  if ([...s].length === 1 && s >= " " && s !== "\x7f") return s;
  return decodeKittyPrintable(s);
};

// ---- fuzzy ----------------------------------------------------------------------------------

export function fuzzyMatch(query, text) {
  const q = String(query).toLowerCase();
  const t = String(text).toLowerCase();
  if (!q) return { matches: true, score: 0 };
  let ti = 0;
  let score = 0;
  let last = -1;
  for (const ch of q) {
    const found = t.indexOf(ch, ti);
    if (found < 0) return { matches: false, score: 0 };
    score += found === last + 1 ? 2 : 1;
    if (found === 0 || /[\s/_.-]/.test(t[found - 1] ?? "")) score += 2;
    last = found;
    ti = found + 1;
  }
  return { matches: true, score: score - t.length * 0.01 };
}

export function fuzzyFilter(items, query, getText = (x) => String(x)) {
  const words = String(query ?? "").trim().split(/\s+/).filter(Boolean);
  if (!words.length) return [...items];
  return items
    .map((item) => {
      let score = 0;
      for (const w of words) {
        const r = fuzzyMatch(w, getText(item));
        if (!r.matches) return null;
        score += r.score;
      }
      return { item, score };
    })
    .filter(Boolean)
    .sort((a, b) => b.score - a.score)
    .map((x) => x.item);
}

// ---- components -----------------------------------------------------------------------------

const pad = (line, width) => line + " ".repeat(Math.max(0, width - visibleWidth(line)));

export class Container {
  constructor() {
    this.children = [];
  }
  addChild(c) {
    this.children.push(c);
  }
  removeChild(c) {
    this.children = this.children.filter((x) => x !== c);
  }
  clear() {
    this.children = [];
  }
  invalidate() {
    for (const c of this.children) c.invalidate?.();
  }
  render(width) {
    return this.children.flatMap((c) => c.render(width) ?? []);
  }
}

export class Text {
  constructor(text = "", paddingX = 1, paddingY = 1, customBgFn) {
    this.text = text;
    this.paddingX = paddingX;
    this.paddingY = paddingY;
    this.customBgFn = customBgFn;
  }
  setText(text) {
    this.text = text;
  }
  setCustomBgFn(fn) {
    this.customBgFn = fn;
  }
  invalidate() {}
  render(width) {
    if (!this.text || !String(this.text).trim()) return [];
    const inner = Math.max(1, width - this.paddingX * 2);
    const margin = " ".repeat(this.paddingX);
    const body = wrapTextWithAnsi(String(this.text).replace(/\t/g, "   "), inner).map((l) => pad(margin + l + margin, width));
    const blank = Array(this.paddingY).fill(" ".repeat(width));
    const lines = [...blank, ...body, ...blank];
    return this.customBgFn ? lines.map((l) => this.customBgFn(l)) : lines;
  }
}

export class TruncatedText {
  constructor(text = "", paddingX = 0, paddingY = 0) {
    this.text = text;
    this.paddingX = paddingX;
    this.paddingY = paddingY;
  }
  setText(text) {
    this.text = text;
  }
  invalidate() {}
  render(width) {
    const margin = " ".repeat(this.paddingX);
    const first = String(this.text).split("\n")[0];
    const line = margin + truncateToWidth(first, Math.max(1, width - this.paddingX * 2)) + margin;
    const blank = Array(this.paddingY).fill("");
    return [...blank, line, ...blank];
  }
}

export class Spacer {
  constructor(lines = 1) {
    this.lines = lines;
  }
  setLines(n) {
    this.lines = n;
  }
  invalidate() {}
  render() {
    return Array(this.lines).fill("");
  }
}

export class Box extends Container {
  constructor(paddingX = 1, paddingY = 1, bgFn) {
    super();
    this.paddingX = paddingX;
    this.paddingY = paddingY;
    this.bgFn = bgFn;
  }
  setBgFn(fn) {
    this.bgFn = fn;
  }
  render(width) {
    const inner = Math.max(1, width - this.paddingX * 2);
    const margin = " ".repeat(this.paddingX);
    const body = super.render(inner).map((l) => pad(margin + l + margin, width));
    if (!body.length) return [];
    const blank = Array(this.paddingY).fill(" ".repeat(width));
    const lines = [...blank, ...body, ...blank];
    return this.bgFn ? lines.map((l) => this.bgFn(l)) : lines;
  }
}

const identity = (s) => s;

/** A small Markdown renderer: headings, lists, quotes, code fences, rules and inline styles. */
export class Markdown {
  constructor(text = "", paddingX = 0, paddingY = 0, theme = {}, defaultTextStyle) {
    this.text = text;
    this.paddingX = paddingX;
    this.paddingY = paddingY;
    this.theme = theme ?? {};
    this.defaultTextStyle = defaultTextStyle;
  }
  setText(text) {
    this.text = text;
  }
  invalidate() {}
  inline(text) {
    const t = this.theme;
    return text
      .replace(/`([^`]+)`/g, (_, c) => (t.code ?? identity)(c))
      .replace(/\*\*([^*]+)\*\*/g, (_, c) => (t.bold ?? identity)(c))
      .replace(/(^|[^*])\*([^*]+)\*/g, (_, p, c) => p + (t.italic ?? identity)(c))
      .replace(/\[([^\]]+)\]\(([^)]+)\)/g, (_, label, url) => (t.link ?? identity)(label) + " " + (t.linkUrl ?? identity)(`(${url})`));
  }
  render(width) {
    const t = this.theme;
    const inner = Math.max(1, width - this.paddingX * 2);
    const margin = " ".repeat(this.paddingX);
    const out = [];
    let fence = null;
    for (const raw of String(this.text ?? "").split("\n")) {
      const fenceMatch = /^\s*```(.*)$/.exec(raw);
      if (fenceMatch) {
        if (fence === null) {
          fence = fenceMatch[1].trim();
          out.push((t.codeBlockBorder ?? identity)("```" + fence));
        } else {
          fence = null;
          out.push((t.codeBlockBorder ?? identity)("```"));
        }
        continue;
      }
      if (fence !== null) {
        out.push((t.codeBlockIndent ?? "  ") + (t.codeBlock ?? identity)(raw));
        continue;
      }
      let m;
      if ((m = /^(#{1,6})\s+(.*)$/.exec(raw))) {
        out.push(...wrapTextWithAnsi((t.heading ?? identity)(this.inline(m[2])), inner));
      } else if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(raw)) {
        out.push((t.hr ?? identity)("─".repeat(Math.min(inner, 80))));
      } else if ((m = /^(\s*)([-*+]|\d+\.)\s+(.*)$/.exec(raw))) {
        const bullet = (t.listBullet ?? identity)(/\d/.test(m[2]) ? m[2] : "•");
        const lines = wrapTextWithAnsi(this.inline(m[3]), Math.max(1, inner - m[1].length - 2));
        lines.forEach((l, i) => out.push(m[1] + (i === 0 ? bullet + " " : "  ") + l));
      } else if ((m = /^>\s?(.*)$/.exec(raw))) {
        for (const l of wrapTextWithAnsi(this.inline(m[1]), Math.max(1, inner - 2))) {
          out.push((t.quoteBorder ?? identity)("│ ") + (t.quote ?? identity)(l));
        }
      } else {
        out.push(...wrapTextWithAnsi(this.inline(raw), inner));
      }
    }
    while (out.length && out[out.length - 1] === "") out.pop();
    const blank = Array(this.paddingY).fill("");
    return [...blank, ...out.map((l) => margin + l), ...blank];
  }
}

export class Loader {
  constructor(tui, spinnerColorFn = identity, messageColorFn = identity, message = "Loading...") {
    this.tui = tui;
    this.spinnerColorFn = spinnerColorFn;
    this.messageColorFn = messageColorFn;
    this.message = message;
    this.frame = 0;
    this.frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
    this.timer = null;
    this.start();
  }
  start() {
    this.stop();
    this.timer = setInterval(() => {
      this.frame = (this.frame + 1) % this.frames.length;
      this.tui?.requestRender?.();
    }, 80);
    this.timer.unref?.();
  }
  stop() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
  setMessage(message) {
    this.message = message;
    this.tui?.requestRender?.();
  }
  setIndicator() {}
  invalidate() {}
  dispose() {
    this.stop();
  }
  render(width) {
    return ["", truncateToWidth(`${this.spinnerColorFn(this.frames[this.frame])} ${this.messageColorFn(this.message)}`, width)];
  }
}

export class CancellableLoader extends Loader {
  constructor(...args) {
    super(...args);
    this.abortController = new AbortController();
    this.onAbort = undefined;
  }
  get signal() {
    return this.abortController.signal;
  }
  get aborted() {
    return this.abortController.signal.aborted;
  }
  handleInput(data) {
    if (matchesKey(data, "escape") || matchesKey(data, "ctrl+c")) {
      this.abortController.abort();
      this.onAbort?.();
    }
  }
}

const defaultSelectTheme = {
  selectedPrefix: identity,
  selectedText: identity,
  description: identity,
  scrollInfo: identity,
  noMatch: identity,
};

export class SelectList {
  constructor(items, maxVisible = 10, theme = defaultSelectTheme, layout = {}) {
    this.items = items ?? [];
    this.filteredItems = this.items;
    this.selectedIndex = 0;
    this.maxVisible = maxVisible;
    this.theme = { ...defaultSelectTheme, ...(theme ?? {}) };
    this.layout = layout ?? {};
  }
  setFilter(filter) {
    this.filteredItems = fuzzyFilter(this.items, filter, (i) => `${i.label ?? i.value} ${i.value}`);
    this.selectedIndex = 0;
  }
  setSelectedIndex(i) {
    this.selectedIndex = Math.max(0, Math.min(i, this.filteredItems.length - 1));
  }
  invalidate() {}
  getSelectedItem() {
    return this.filteredItems[this.selectedIndex] ?? null;
  }
  render(width) {
    const t = this.theme;
    if (!this.filteredItems.length) return [t.noMatch("  No matching items")];
    const start = Math.max(0, Math.min(this.selectedIndex - Math.floor(this.maxVisible / 2), this.filteredItems.length - this.maxVisible));
    const visible = this.filteredItems.slice(start, start + this.maxVisible);
    const primary = Math.min(
      this.layout.maxPrimaryColumnWidth ?? 32,
      Math.max(this.layout.minPrimaryColumnWidth ?? 0, ...visible.map((i) => visibleWidth(i.label ?? i.value) + 2)),
    );
    const lines = visible.map((item, i) => {
      const selected = start + i === this.selectedIndex;
      const label = item.label ?? item.value;
      const prefix = selected ? t.selectedPrefix("→ ") : "  ";
      let text = item.description ? pad(truncateToWidth(label, primary), primary) + " " + t.description(item.description) : label;
      text = truncateToWidth(text, Math.max(1, width - 2));
      return prefix + (selected ? t.selectedText(text) : text);
    });
    if (this.filteredItems.length > this.maxVisible) {
      lines.push(t.scrollInfo(`  (${this.selectedIndex + 1}/${this.filteredItems.length})`));
    }
    return lines;
  }
  handleInput(data) {
    const n = this.filteredItems.length;
    if (matchesKey(data, "up") || matchesKey(data, "ctrl+p")) {
      if (n) this.selectedIndex = (this.selectedIndex - 1 + n) % n;
      this.onSelectionChange?.(this.getSelectedItem());
    } else if (matchesKey(data, "down") || matchesKey(data, "ctrl+n")) {
      if (n) this.selectedIndex = (this.selectedIndex + 1) % n;
      this.onSelectionChange?.(this.getSelectedItem());
    } else if (matchesKey(data, "enter")) {
      const item = this.getSelectedItem();
      if (item) this.onSelect?.(item);
    } else if (matchesKey(data, "escape") || matchesKey(data, "ctrl+c")) {
      this.onCancel?.();
    }
  }
}

export class Input {
  constructor() {
    this.value = "";
    this.cursor = 0;
    this.focused = false;
  }
  getValue() {
    return this.value;
  }
  setValue(v) {
    this.value = String(v ?? "");
    this.cursor = this.value.length;
  }
  invalidate() {}
  handleInput(data) {
    if (matchesKey(data, "enter")) return this.onSubmit?.(this.value);
    if (matchesKey(data, "escape")) return this.onEscape?.();
    if (matchesKey(data, "backspace")) {
      if (this.cursor > 0) {
        this.value = this.value.slice(0, this.cursor - 1) + this.value.slice(this.cursor);
        this.cursor--;
      }
    } else if (matchesKey(data, "delete")) {
      this.value = this.value.slice(0, this.cursor) + this.value.slice(this.cursor + 1);
    } else if (matchesKey(data, "left")) this.cursor = Math.max(0, this.cursor - 1);
    else if (matchesKey(data, "right")) this.cursor = Math.min(this.value.length, this.cursor + 1);
    else if (matchesKey(data, "home") || matchesKey(data, "ctrl+a")) this.cursor = 0;
    else if (matchesKey(data, "end") || matchesKey(data, "ctrl+e")) this.cursor = this.value.length;
    else if (matchesKey(data, "ctrl+u")) {
      this.value = this.value.slice(this.cursor);
      this.cursor = 0;
    } else {
      const text = printable(data);
      if (text) {
        this.value = this.value.slice(0, this.cursor) + text + this.value.slice(this.cursor);
        this.cursor += text.length;
      }
    }
    this.onChange?.(this.value);
  }
  render(width) {
    const before = this.value.slice(0, this.cursor);
    const at = this.value[this.cursor] ?? " ";
    const after = this.value.slice(this.cursor + 1);
    const cursor = this.focused ? CURSOR_MARKER + `\x1b[7m${at}\x1b[27m` : at;
    return [truncateToWidth("> " + before + cursor + after, width)];
  }
}

/** Text a key press types: printable input or a bracketed paste; nothing for control keys. */
function printable(data) {
  const s = String(data ?? "");
  if (s.startsWith("\x1b[200~")) return s.slice(6).replace(/\x1b\[201~$/, "").replace(/\r\n?/g, "\n");
  const kitty = decodeKittyPrintable(s);
  if (kitty) return kitty;
  if (s.startsWith("\x1b")) return "";
  return [...s].filter((c) => c >= " " && c !== "\x7f").join("");
}

export const renderFakeCursor = (ch = " ") => `\x1b[7m${ch}\x1b[27m`;

/** pi-tui's multi-line editor: typing, cursor movement, history, submit on Enter. */
export class Editor {
  constructor(tui, theme = {}, options = {}) {
    this.tui = tui;
    this.theme = theme ?? {};
    this.borderColor = this.theme.borderColor ?? identity;
    this.paddingX = options?.paddingX ?? 0;
    this.autocompleteMaxVisible = options?.autocompleteMaxVisible ?? 5;
    this.lines = [""];
    this.row = 0;
    this.col = 0;
    this.focused = true;
    this.disableSubmit = false;
    this.history = [];
    this.historyIndex = -1;
    this.onSubmit = undefined;
    this.onChange = undefined;
  }
  getPaddingX() {
    return this.paddingX;
  }
  setPaddingX(p) {
    this.paddingX = p;
  }
  getAutocompleteMaxVisible() {
    return this.autocompleteMaxVisible;
  }
  setAutocompleteMaxVisible(n) {
    this.autocompleteMaxVisible = n;
  }
  setAutocompleteProvider(p) {
    this.autocompleteProvider = p;
  }
  addToHistory(text) {
    if (text && text.trim()) this.history.unshift(text);
  }
  invalidate() {}
  getText() {
    return this.lines.join("\n");
  }
  getExpandedText() {
    return this.getText();
  }
  getLines() {
    return [...this.lines];
  }
  getCursor() {
    return { line: this.row, col: this.col };
  }
  setText(text) {
    this.lines = String(text ?? "").split("\n");
    this.row = this.lines.length - 1;
    this.col = this.lines[this.row].length;
    this.changed();
  }
  insertTextAtCursor(text) {
    const line = this.lines[this.row];
    const merged = line.slice(0, this.col) + text + line.slice(this.col);
    const parts = merged.split("\n");
    const tail = line.slice(this.col);
    this.lines.splice(this.row, 1, ...parts);
    this.row += parts.length - 1;
    this.col = this.lines[this.row].length - tail.length;
    this.changed();
  }
  isShowingAutocomplete() {
    return false;
  }
  changed() {
    this.onChange?.(this.getText());
    this.tui?.requestRender?.();
  }
  submit() {
    if (this.disableSubmit) return;
    const text = this.getText();
    this.historyIndex = -1;
    this.lines = [""];
    this.row = 0;
    this.col = 0;
    this.onSubmit?.(text);
    this.changed();
  }
  handleInput(data) {
    const line = this.lines[this.row];
    if (matchesKey(data, "enter")) return this.submit();
    if (matchesKey(data, "shift+enter") || matchesKey(data, "alt+enter") || data === "\n") return this.insertTextAtCursor("\n");
    if (matchesKey(data, "backspace")) {
      if (this.col > 0) {
        this.lines[this.row] = line.slice(0, this.col - 1) + line.slice(this.col);
        this.col--;
      } else if (this.row > 0) {
        const prev = this.lines[this.row - 1];
        this.lines.splice(this.row - 1, 2, prev + line);
        this.row--;
        this.col = prev.length;
      }
      return this.changed();
    }
    if (matchesKey(data, "delete")) {
      if (this.col < line.length) this.lines[this.row] = line.slice(0, this.col) + line.slice(this.col + 1);
      else if (this.row < this.lines.length - 1) this.lines.splice(this.row, 2, line + this.lines[this.row + 1]);
      return this.changed();
    }
    if (matchesKey(data, "left")) {
      if (this.col > 0) this.col--;
      else if (this.row > 0) {
        this.row--;
        this.col = this.lines[this.row].length;
      }
      return this.tui?.requestRender?.();
    }
    if (matchesKey(data, "right")) {
      if (this.col < line.length) this.col++;
      else if (this.row < this.lines.length - 1) {
        this.row++;
        this.col = 0;
      }
      return this.tui?.requestRender?.();
    }
    if (matchesKey(data, "up")) {
      if (this.row > 0) {
        this.row--;
        this.col = Math.min(this.col, this.lines[this.row].length);
      } else if (this.history.length && this.historyIndex < this.history.length - 1) {
        this.historyIndex++;
        this.setText(this.history[this.historyIndex]);
      }
      return this.tui?.requestRender?.();
    }
    if (matchesKey(data, "down")) {
      if (this.row < this.lines.length - 1) {
        this.row++;
        this.col = Math.min(this.col, this.lines[this.row].length);
      } else if (this.historyIndex > 0) {
        this.historyIndex--;
        this.setText(this.history[this.historyIndex]);
      } else if (this.historyIndex === 0) {
        this.historyIndex = -1;
        this.setText("");
      }
      return this.tui?.requestRender?.();
    }
    if (matchesKey(data, "home") || matchesKey(data, "ctrl+a")) {
      this.col = 0;
      return this.tui?.requestRender?.();
    }
    if (matchesKey(data, "end") || matchesKey(data, "ctrl+e")) {
      this.col = line.length;
      return this.tui?.requestRender?.();
    }
    if (matchesKey(data, "ctrl+u")) {
      this.lines[this.row] = line.slice(this.col);
      this.col = 0;
      return this.changed();
    }
    if (matchesKey(data, "ctrl+k")) {
      this.lines[this.row] = line.slice(0, this.col);
      return this.changed();
    }
    if (matchesKey(data, "ctrl+w") || matchesKey(data, "alt+backspace")) {
      const before = line.slice(0, this.col).replace(/\S*\s*$/, "");
      this.lines[this.row] = before + line.slice(this.col);
      this.col = before.length;
      return this.changed();
    }
    const text = printable(data);
    if (text) this.insertTextAtCursor(text);
  }
  render(width) {
    const border = this.borderColor("─".repeat(Math.max(1, width)));
    const inner = Math.max(1, width - this.paddingX * 2);
    const margin = " ".repeat(this.paddingX);
    const out = [border];
    this.lines.forEach((line, r) => {
      let shown = line;
      if (r === this.row && this.focused) {
        const at = line[this.col] ?? " ";
        shown = line.slice(0, this.col) + CURSOR_MARKER + `\x1b[7m${at}\x1b[27m` + line.slice(this.col + 1);
      }
      for (const l of wrapTextWithAnsi(shown, inner)) out.push(margin + l);
    });
    out.push(border);
    return out;
  }
}

const defaultSettingsTheme = {
  label: (t) => t,
  value: (t) => t,
  description: (t) => t,
  cursor: "→ ",
  hint: (t) => t,
};

export class SettingsList {
  constructor(items, maxVisible, theme, onChange, onCancel, options = {}) {
    this.items = items ?? [];
    this.maxVisible = maxVisible ?? 10;
    this.theme = { ...defaultSettingsTheme, ...(theme ?? {}) };
    this.onChange = onChange;
    this.onCancel = onCancel;
    this.selectedIndex = 0;
    this.options = options ?? {};
    this.submenu = null;
  }
  updateValue(id, value) {
    const item = this.items.find((i) => i.id === id);
    if (item) item.currentValue = value;
  }
  invalidate() {}
  render(width) {
    if (this.submenu) return this.submenu.render(width);
    const t = this.theme;
    const start = Math.max(0, Math.min(this.selectedIndex - Math.floor(this.maxVisible / 2), this.items.length - this.maxVisible));
    const lines = this.items.slice(start, start + this.maxVisible).map((item, i) => {
      const selected = start + i === this.selectedIndex;
      const prefix = selected ? t.cursor : " ".repeat(visibleWidth(t.cursor));
      return truncateToWidth(prefix + t.label(item.label, selected) + "  " + t.value(item.currentValue ?? "", selected), width);
    });
    const current = this.items[this.selectedIndex];
    if (current?.description) lines.push("", ...wrapTextWithAnsi(t.description(current.description), width));
    lines.push("", t.hint("  Enter/Space to change · Esc to close"));
    return lines;
  }
  handleInput(data) {
    if (this.submenu) return this.submenu.handleInput?.(data);
    const n = this.items.length;
    if (matchesKey(data, "up")) this.selectedIndex = (this.selectedIndex - 1 + n) % Math.max(1, n);
    else if (matchesKey(data, "down")) this.selectedIndex = (this.selectedIndex + 1) % Math.max(1, n);
    else if (matchesKey(data, "escape") || matchesKey(data, "ctrl+c")) this.onCancel?.();
    else if (matchesKey(data, "enter") || matchesKey(data, "space")) {
      const item = this.items[this.selectedIndex];
      if (!item) return;
      if (item.submenu) {
        this.submenu = item.submenu(item.currentValue, (value) => {
          this.submenu = null;
          if (value !== undefined) {
            item.currentValue = value;
            this.onChange?.(item.id, value);
          }
        });
      } else if (item.values?.length) {
        const next = item.values[(item.values.indexOf(item.currentValue) + 1) % item.values.length];
        item.currentValue = next;
        this.onChange?.(item.id, next);
      }
    }
  }
}

export class Image {
  constructor(base64Data, mimeType, theme = {}, options = {}) {
    this.mimeType = mimeType;
    this.theme = theme;
    this.options = options;
  }
  invalidate() {}
  render(width) {
    const label = `[image ${this.mimeType ?? ""}]`;
    return [truncateToWidth((this.theme.fallbackColor ?? identity)(label), width)];
  }
}

export function isFocusable(c) {
  return c !== null && typeof c === "object" && "focused" in c;
}

/** What `tui` is inside a component factory: asks pi to draw again. */
export class TUI extends Container {
  constructor(requestRender = () => {}) {
    super();
    this._requestRender = requestRender;
    this.terminal = { columns: 80, rows: 24, write() {} };
  }
  requestRender() {
    this._requestRender();
  }
  setFocus() {}
  showOverlay() {
    return { hide() {}, setHidden() {}, isHidden: () => false };
  }
  hideOverlay() {}
  hasOverlay() {
    return false;
  }
  start() {}
  stop() {}
}

export const getCapabilities = () => ({ images: null, trueColor: true, hyperlinks: true });
export const detectCapabilities = getCapabilities;
export const setCapabilities = () => {};
export const resetCapabilitiesCache = () => {};
export const getCellDimensions = () => ({ widthPx: 9, heightPx: 18 });
export const setCellDimensions = () => {};
let imageIds = 1;
export const allocateImageId = () => imageIds++;
export const deleteKittyImage = () => "";
export const deleteAllKittyImages = () => "";
export const imageFallback = (mimeType) => `[image ${mimeType ?? ""}]`;
export const renderImage = () => null;
export const calculateImageRows = () => 1;
export const encodeKitty = () => "";
export const encodeITerm2 = () => "";
export const getImageDimensions = () => null;
export const getPngDimensions = () => null;
export const getJpegDimensions = () => null;
export const getGifDimensions = () => null;
export const getWebpDimensions = () => null;

export class CombinedAutocompleteProvider {
  constructor(commands = [], basePath = process.cwd()) {
    this.commands = commands;
    this.basePath = basePath;
  }
  getSuggestions() {
    return null;
  }
  applyCompletion(lines, cursorLine, cursorCol, item, prefix) {
    const line = lines[cursorLine] ?? "";
    const start = cursorCol - (prefix?.length ?? 0);
    const next = [...lines];
    next[cursorLine] = line.slice(0, start) + item.value + line.slice(cursorCol);
    return { lines: next, cursorLine, cursorCol: start + item.value.length };
  }
}

export class KeybindingsManager {
  constructor(definitions = {}, config = {}) {
    this.definitions = definitions;
    this.config = config;
  }
  matches(data, action) {
    const keys = this.getKeys(action);
    return keys.some((k) => matchesKey(data, k));
  }
  getKeys(action) {
    const c = this.config[action] ?? this.definitions[action]?.defaultKeys ?? this.definitions[action];
    return Array.isArray(c) ? c : c ? [c] : [];
  }
  getDefinition(action) {
    return this.definitions[action];
  }
  getConflicts() {
    return [];
  }
  setUserBindings() {}
  getUserBindings() {
    return {};
  }
  getResolvedBindings() {
    return {};
  }
}
export const TUI_KEYBINDINGS = {};
let globalKeybindings = new KeybindingsManager();
export const getKeybindings = () => globalKeybindings;
export const setKeybindings = (k) => {
  globalKeybindings = k;
};

export class StdinBuffer {
  on() {}
  process() {}
  destroy() {}
}
export class ProcessTerminal {
  get columns() {
    return process.stdout.columns ?? 80;
  }
  get rows() {
    return process.stdout.rows ?? 24;
  }
  write() {}
}
