// Stand-in for pi-coding-agent (`@mariozechner/pi-coding-agent`, `@earendil-works/pi-coding-agent`)
// for extensions run by pi's Node.js bridge: the built-in tool factories (`createReadTool`, …,
// whose tools run pi's own built-in tools, or the extension's `operations` when it gives
// them), the utilities extensions import (getAgentDir, formatSize, truncation, frontmatter,
// conversation helpers), and the UI pieces (CustomEditor, DynamicBorder, BorderedLoader,
// themes, key hints). Written by the pi binary into its cache.
import { spawn } from "node:child_process";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve as resolvePath } from "node:path";

import { Container, Editor, Loader, Text, matchesKey, truncateToWidth, visibleWidth } from "./tui.mjs";
import { Type } from "./typebox.mjs";
import { makeTheme } from "./ui.mjs";

export { Type };
export { StringEnum } from "./typebox.mjs";

const rt = () => globalThis[Symbol.for("pi.bridge")];
const current = () => {
  const ext = rt()?.current();
  if (!ext) throw new Error("this pi API is only available inside an extension");
  return ext;
};

export const CONFIG_DIR_NAME = ".pi";
export const APP_NAME = "pi";
export const ENV_AGENT_DIR = "PI_CODING_AGENT_DIR";
export const VERSION = process.env.PI_VERSION || "1.6.0";

export function getAgentDir() {
  const fromHello = rt()?.current()?.hello?.agentDir;
  if (fromHello) return fromHello;
  const env = process.env.PI_CODING_AGENT_DIR;
  if (env) return env.startsWith("~") ? join(homedir(), env.slice(1)) : env;
  return join(homedir(), CONFIG_DIR_NAME, "agent");
}
export const getSessionsDir = () => join(getAgentDir(), "sessions");
export const getSettingsPath = () => join(getAgentDir(), "settings.json");
export const getModelsPath = () => join(getAgentDir(), "models.json");
export const getAuthPath = () => join(getAgentDir(), "auth.json");
export const getToolsDir = () => join(getAgentDir(), "tools");
export const getPromptsDir = () => join(getAgentDir(), "prompts");
export const getCustomThemesDir = () => join(getAgentDir(), "themes");
export const getDebugLogPath = () => join(getAgentDir(), "pi-debug.log");

// ---- truncation ------------------------------------------------------------------------------

export const DEFAULT_MAX_LINES = 2000;
export const DEFAULT_MAX_BYTES = 50 * 1024;
export const GREP_MAX_LINE_LENGTH = 500;

export function formatSize(bytes) {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}

const byteLength = (s) => Buffer.byteLength(s, "utf8");

function result(content, truncated, truncatedBy, lines, totalBytes, outputLines, maxLines, maxBytes, extra = {}) {
  return {
    content,
    truncated,
    truncatedBy,
    totalLines: lines.length,
    totalBytes,
    outputLines,
    outputBytes: byteLength(content),
    lastLinePartial: false,
    firstLineExceedsLimit: false,
    maxLines,
    maxBytes,
    ...extra,
  };
}

export function truncateHead(content, options = {}) {
  const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const totalBytes = byteLength(content);
  const lines = content.split("\n");
  if (lines.length <= maxLines && totalBytes <= maxBytes) {
    return result(content, false, null, lines, totalBytes, lines.length, maxLines, maxBytes);
  }
  if (byteLength(lines[0]) > maxBytes) {
    return result("", true, "bytes", lines, totalBytes, 0, maxLines, maxBytes, { firstLineExceedsLimit: true });
  }
  const out = [];
  let bytes = 0;
  let by = "lines";
  for (const line of lines) {
    if (out.length >= maxLines) break;
    const add = byteLength(line) + (out.length ? 1 : 0);
    if (bytes + add > maxBytes) {
      by = "bytes";
      break;
    }
    out.push(line);
    bytes += add;
  }
  return result(out.join("\n"), true, by, lines, totalBytes, out.length, maxLines, maxBytes);
}

export function truncateTail(content, options = {}) {
  const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const totalBytes = byteLength(content);
  const lines = content.split("\n");
  if (lines.length <= maxLines && totalBytes <= maxBytes) {
    return result(content, false, null, lines, totalBytes, lines.length, maxLines, maxBytes);
  }
  const out = [];
  let bytes = 0;
  let by = "lines";
  let partial = false;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (out.length >= maxLines) break;
    const line = lines[i];
    const add = byteLength(line) + (out.length ? 1 : 0);
    if (bytes + add > maxBytes) {
      by = "bytes";
      if (out.length === 0) {
        const buf = Buffer.from(line, "utf8");
        out.unshift(buf.subarray(buf.length - maxBytes).toString("utf8"));
        partial = true;
      }
      break;
    }
    out.unshift(line);
    bytes += add;
  }
  return result(out.join("\n"), true, by, lines, totalBytes, out.length, maxLines, maxBytes, { lastLinePartial: partial });
}

export function truncateLine(line, maxChars = GREP_MAX_LINE_LENGTH) {
  if (line.length <= maxChars) return { text: line, wasTruncated: false };
  return { text: `${line.slice(0, maxChars)}... [truncated]`, wasTruncated: true };
}

export function formatReadLineRange(offset, limit, totalLines) {
  const start = Math.max(1, offset ?? 1);
  const end = limit ? Math.min(totalLines ?? start + limit - 1, start + limit - 1) : totalLines;
  return end !== undefined ? `${start}-${end}` : `${start}`;
}

// ---- built-in tools --------------------------------------------------------------------------

const TOOL_LABELS = { read: "read", bash: "bash", edit: "edit", write: "write", grep: "grep", find: "find", ls: "ls" };

/** pi's own description and schema of a built-in tool (sent by pi when the bridge starts). */
function builtinSpec(name) {
  const spec = rt()?.builtins?.find((t) => t.name === name);
  return {
    name,
    label: spec?.label ?? TOOL_LABELS[name],
    description: spec?.description ?? `The built-in ${name} tool`,
    parameters: spec?.parameters ?? Type.Object({}),
    promptSnippet: spec?.promptSnippet,
    promptGuidelines: spec?.promptGuidelines,
  };
}

const absolute = (cwd, p) => {
  const path = String(p ?? "").replace(/^@/, "");
  if (path === "~" || path.startsWith("~/")) return join(homedir(), path.slice(1));
  return isAbsolute(path) ? path : resolvePath(cwd, path);
};

const text = (t) => [{ type: "text", text: t }];

/** A built-in tool whose `execute` runs pi's own implementation (through `tools.run`). */
function builtinTool(name, cwd, options, local) {
  const custom = options && (options.operations || options.spawnHook || options.commandPrefix);
  return {
    ...builtinSpec(name),
    async execute(toolCallId, params, signal, onUpdate) {
      if (custom && local) return local(cwd, options, params, signal, onUpdate);
      return current().call(
        "tools.run",
        { name, cwd: cwd ?? process.cwd(), toolCallId, params },
        { signal, onUpdate: (partial) => onUpdate?.(partial) },
      );
    },
  };
}

async function readWithOps(cwd, options, params) {
  const ops = options.operations;
  const path = absolute(cwd, params.path);
  await ops.access(path);
  const mime = ops.detectImageMimeType ? await ops.detectImageMimeType(path) : null;
  const data = await ops.readFile(path);
  if (mime) {
    return {
      content: [
        { type: "text", text: `Read image file [${mime}]` },
        { type: "image", data: Buffer.from(data).toString("base64"), mimeType: mime },
      ],
      details: undefined,
    };
  }
  const all = Buffer.from(data).toString("utf8").split("\n");
  const start = Math.max(0, (params.offset ?? 1) - 1);
  if (start >= all.length && all.length > 0) throw new Error(`Offset ${params.offset} is beyond end of file (${all.length} lines total)`);
  const slice = params.limit ? all.slice(start, start + params.limit) : all.slice(start);
  const t = truncateHead(slice.join("\n"));
  let out = t.content;
  const end = start + t.outputLines;
  if (t.truncated) out += `\n\n[Showing lines ${start + 1}-${end} of ${all.length}. Use offset=${end + 1} to continue.]`;
  else if (params.limit && start + slice.length < all.length) {
    out += `\n\n[${all.length - (start + slice.length)} more lines in file. Use offset=${start + slice.length + 1} to continue.]`;
  }
  return { content: text(out), details: t.truncated ? { truncation: t } : undefined };
}

async function writeWithOps(cwd, options, params) {
  const ops = options.operations;
  const path = absolute(cwd, params.path);
  await ops.mkdir(dirname(path));
  await ops.writeFile(path, params.content);
  return { content: text(`Successfully wrote ${byteLength(params.content)} bytes to ${params.path}`), details: undefined };
}

async function editWithOps(cwd, options, params) {
  const ops = options.operations;
  const path = absolute(cwd, params.path);
  await ops.access(path);
  let content = Buffer.from(await ops.readFile(path)).toString("utf8");
  const edits = Array.isArray(params.edits) ? params.edits : [{ oldText: params.oldText, newText: params.newText }];
  edits.forEach((e, i) => {
    const what = edits.length > 1 ? `edits[${i}]` : "the text";
    const count = content.split(e.oldText).length - 1;
    if (count === 0) throw new Error(`Could not find ${edits.length > 1 ? `edits[${i}]` : "the exact text"} in ${params.path}. The old text must match exactly including all whitespace and newlines.`);
    if (count > 1) throw new Error(`Found ${count} occurrences of ${what} in ${params.path}. The text must be unique. Please provide more context to make it unique.`);
    content = content.replace(e.oldText, () => e.newText);
  });
  await ops.writeFile(path, content);
  return { content: text(`Successfully replaced ${edits.length} block(s) in ${params.path}.`), details: undefined };
}

export function createLocalBashOperations(options = {}) {
  return {
    exec: (command, cwd, { onData, signal, timeout, env }) =>
      new Promise((resolveExec, reject) => {
        const child = spawn(options.shellPath ?? "bash", ["-c", command], {
          cwd,
          env: env ?? process.env,
          detached: true,
          stdio: ["ignore", "pipe", "pipe"],
        });
        let timedOut = false;
        const kill = () => {
          try {
            process.kill(-child.pid, "SIGKILL");
          } catch {}
        };
        const timer = timeout ? setTimeout(() => ((timedOut = true), kill()), timeout * 1000) : undefined;
        child.stdout.on("data", onData);
        child.stderr.on("data", onData);
        signal?.addEventListener("abort", kill, { once: true });
        child.on("error", reject);
        child.on("close", (code) => {
          if (timer) clearTimeout(timer);
          if (signal?.aborted) reject(new Error("aborted"));
          else if (timedOut) reject(new Error(`timeout:${timeout}`));
          else resolveExec({ exitCode: code });
        });
      }),
  };
}

async function bashWithOps(cwd, options, params, signal, onUpdate) {
  const ops = options.operations ?? createLocalBashOperations({ shellPath: options.shellPath });
  let ctx = { command: options.commandPrefix ? `${options.commandPrefix}\n${params.command}` : params.command, cwd, env: { ...process.env } };
  if (options.spawnHook) ctx = options.spawnHook(ctx) ?? ctx;
  const chunks = [];
  const onData = (data) => {
    chunks.push(Buffer.from(data));
    onUpdate?.({ content: text(truncateTail(Buffer.concat(chunks).toString("utf8")).content), details: undefined });
  };
  let exitCode;
  try {
    ({ exitCode } = await ops.exec(ctx.command, ctx.cwd, { onData, signal, timeout: params.timeout, env: ctx.env }));
  } catch (err) {
    const output = Buffer.concat(chunks).toString("utf8");
    const msg = String(err?.message ?? err);
    if (msg === "aborted") throw new Error(`${output ? output + "\n\n" : ""}Command aborted`);
    if (msg.startsWith("timeout:")) throw new Error(`${output ? output + "\n\n" : ""}Command timed out after ${params.timeout} seconds`);
    throw err;
  }
  const t = truncateTail(Buffer.concat(chunks).toString("utf8"));
  let out = t.content || "(no output)";
  if (t.truncated) out += `\n\n[Showing lines ${t.totalLines - t.outputLines + 1}-${t.totalLines} of ${t.totalLines}.]`;
  if (exitCode !== 0 && exitCode !== null) throw new Error(`${out}\n\nCommand exited with code ${exitCode}`);
  return { content: text(out), details: t.truncated ? { truncation: t } : undefined };
}

export const createReadTool = (cwd, options) => builtinTool("read", cwd, options, readWithOps);
export const createWriteTool = (cwd, options) => builtinTool("write", cwd, options, writeWithOps);
export const createEditTool = (cwd, options) => builtinTool("edit", cwd, options, editWithOps);
export const createBashTool = (cwd, options) => builtinTool("bash", cwd, options, bashWithOps);
export const createGrepTool = (cwd, options) => builtinTool("grep", cwd, options);
export const createFindTool = (cwd, options) => builtinTool("find", cwd, options);
export const createLsTool = (cwd, options) => builtinTool("ls", cwd, options);
export const createReadToolDefinition = createReadTool;
export const createWriteToolDefinition = createWriteTool;
export const createEditToolDefinition = createEditTool;
export const createBashToolDefinition = createBashTool;
export const createGrepToolDefinition = createGrepTool;
export const createFindToolDefinition = createFindTool;
export const createLsToolDefinition = createLsTool;
export const createCodingTools = (cwd, o) => [createReadTool(cwd, o), createBashTool(cwd, o), createEditTool(cwd, o), createWriteTool(cwd, o)];
export const createReadOnlyTools = (cwd, o) => [createReadTool(cwd, o), createGrepTool(cwd, o), createFindTool(cwd, o), createLsTool(cwd, o)];
export const createAllTools = (cwd, o) => ({
  read: createReadTool(cwd, o), bash: createBashTool(cwd, o), edit: createEditTool(cwd, o), write: createWriteTool(cwd, o),
  grep: createGrepTool(cwd, o), find: createFindTool(cwd, o), ls: createLsTool(cwd, o),
});
export const createCodingToolDefinitions = createCodingTools;
export const createReadOnlyToolDefinitions = createReadOnlyTools;
export const createAllToolDefinitions = createAllTools;
export const defineTool = (tool) => tool;
export const allTools = {};

// One mutation at a time per file, as pi's write/edit tools do.
const fileQueues = new Map();
export function withFileMutationQueue(path, fn) {
  const key = resolvePath(String(path));
  const previous = fileQueues.get(key) ?? Promise.resolve();
  const next = previous.catch(() => {}).then(fn);
  fileQueues.set(key, next);
  next.finally(() => {
    if (fileQueues.get(key) === next) fileQueues.delete(key);
  }).catch(() => {});
  return next;
}

// ---- event helpers ---------------------------------------------------------------------------

export const isToolCallEventType = (toolName, event) => event?.toolName === toolName;
export const isBashToolResult = (e) => e?.toolName === "bash";
export const isReadToolResult = (e) => e?.toolName === "read";
export const isEditToolResult = (e) => e?.toolName === "edit";
export const isWriteToolResult = (e) => e?.toolName === "write";
export const isGrepToolResult = (e) => e?.toolName === "grep";
export const isFindToolResult = (e) => e?.toolName === "find";
export const isLsToolResult = (e) => e?.toolName === "ls";

// ---- frontmatter and conversations -----------------------------------------------------------

function parseYamlish(block) {
  const out = {};
  let key = null;
  for (const raw of block.split("\n")) {
    const item = /^\s+-\s+(.*)$/.exec(raw);
    if (item && key) {
      if (!Array.isArray(out[key])) out[key] = [];
      out[key].push(scalar(item[1]));
      continue;
    }
    const m = /^([A-Za-z0-9_-]+):\s*(.*)$/.exec(raw);
    if (!m) continue;
    key = m[1];
    out[key] = m[2] === "" ? "" : scalar(m[2]);
  }
  return out;
}

function scalar(v) {
  const s = v.trim();
  if (/^".*"$|^'.*'$/.test(s)) return s.slice(1, -1);
  if (s === "true" || s === "false") return s === "true";
  if (/^-?\d+(\.\d+)?$/.test(s)) return Number(s);
  if (/^\[.*\]$/.test(s)) return s.slice(1, -1).split(",").map((x) => scalar(x)).filter((x) => x !== "");
  return s;
}

export function parseFrontmatter(content) {
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(String(content ?? ""));
  if (!m) return { frontmatter: {}, body: String(content ?? "") };
  return { frontmatter: parseYamlish(m[1]), body: content.slice(m[0].length) };
}
export const stripFrontmatter = (content) => parseFrontmatter(content).body;

const blocksText = (content) =>
  typeof content === "string"
    ? content
    : (content ?? []).filter((b) => b?.type === "text").map((b) => b.text).join("\n");

/** pi's messages as the model sees them: custom and bash messages become user messages. */
export function convertToLlm(messages) {
  const out = [];
  for (const m of messages ?? []) {
    switch (m?.role) {
      case "user":
      case "assistant":
      case "toolResult":
        out.push(m);
        break;
      case "custom":
        out.push({ role: "user", content: typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content, timestamp: m.timestamp });
        break;
      case "bashExecution":
        if (!m.excludeFromContext) {
          out.push({ role: "user", content: [{ type: "text", text: `Ran \`${m.command}\`\n\`\`\`\n${m.output ?? ""}\n\`\`\`` }], timestamp: m.timestamp });
        }
        break;
      case "branchSummary":
      case "compactionSummary":
        out.push({ role: "user", content: [{ type: "text", text: m.summary ?? "" }], timestamp: m.timestamp });
        break;
    }
  }
  return out;
}

export function serializeConversation(messages) {
  const parts = [];
  for (const m of messages ?? []) {
    if (m.role === "user") parts.push(`[User]: ${blocksText(m.content)}`);
    else if (m.role === "assistant") {
      for (const b of m.content ?? []) {
        if (b.type === "text") parts.push(`[Assistant]: ${b.text}`);
        else if (b.type === "toolCall") parts.push(`[Assistant tool calls]: ${b.name}(${JSON.stringify(b.arguments)})`);
      }
    } else if (m.role === "toolResult") parts.push(`[Tool result]: ${blocksText(m.content)}`);
  }
  return parts.join("\n\n");
}

export const estimateTokens = (message) => Math.ceil(JSON.stringify(message ?? "").length / 4);

// ---- UI pieces -------------------------------------------------------------------------------

const theme = () => makeTheme(rt());

/** A horizontal rule as wide as the space it gets. */
export class DynamicBorder {
  constructor(color = (s) => theme().fg("border", s)) {
    this.color = color;
  }
  invalidate() {}
  render(width) {
    return [this.color("─".repeat(Math.max(1, width)))];
  }
}

/** A spinner with a message between two borders; Escape cancels (`onAbort`, `signal`). */
export class BorderedLoader extends Container {
  constructor(tui, t, message, options = {}) {
    super();
    const th = t ?? theme();
    this.controller = new AbortController();
    this.onAbort = undefined;
    this.cancellable = options.cancellable !== false;
    this.addChild(new DynamicBorder((s) => th.fg("border", s)));
    this.loader = new Loader(tui, (s) => th.fg("accent", s), (s) => th.fg("muted", s), message);
    this.addChild(this.loader);
    if (this.cancellable) this.addChild(new Text(th.fg("dim", "esc cancel"), 1, 0));
    this.addChild(new DynamicBorder((s) => th.fg("border", s)));
  }
  get signal() {
    return this.controller.signal;
  }
  handleInput(data) {
    if (this.cancellable && (matchesKey(data, "escape") || matchesKey(data, "ctrl+c"))) {
      this.controller.abort();
      this.onAbort?.();
    }
  }
  dispose() {
    this.loader.stop();
  }
}

// Keys a custom editor leaves to pi: interrupt, clear, exit, model and thinking switches, …
const APP_KEYS = ["escape", "ctrl+c", "ctrl+d", "ctrl+z", "shift+tab", "ctrl+p", "shift+ctrl+p", "ctrl+l", "ctrl+o", "ctrl+t", "ctrl+g", "alt+enter", "alt+up", "ctrl+v"];

/** pi's editor for extensions to extend: typing and submitting stay here, pi's keys go to pi. */
export class CustomEditor extends Editor {
  constructor(tui, t, keybindings, options) {
    super(tui, { borderColor: (s) => (t ?? theme()).fg?.("border", s) ?? s, ...(t?.editor ?? {}) }, options);
    this.keybindings = keybindings;
    this.actionHandlers = new Map();
    this.onEscape = undefined;
    this.onCtrlD = undefined;
    this.onPasteImage = undefined;
    this.onExtensionShortcut = undefined;
  }
  onAction(action, handler) {
    this.actionHandlers.set(action, handler);
  }
  handleInput(data) {
    const key = APP_KEYS.find((k) => matchesKey(data, k));
    if (key && !(key === "ctrl+d" && this.getText())) {
      if (this.__piForward) return this.__piForward(data);
      if (key === "escape") return this.onEscape?.();
      if (key === "ctrl+d") return this.onCtrlD?.();
      return;
    }
    super.handleInput(data);
  }
}

export function getMarkdownTheme() {
  const t = theme();
  return {
    heading: (s) => t.bold(t.fg("mdHeading", s)),
    link: (s) => t.fg("mdLink", s),
    linkUrl: (s) => t.fg("mdLinkUrl", s),
    code: (s) => t.fg("mdCode", s),
    codeBlock: (s) => t.fg("mdCodeBlock", s),
    codeBlockBorder: (s) => t.fg("mdCodeBlockBorder", s),
    quote: (s) => t.fg("mdQuote", s),
    quoteBorder: (s) => t.fg("mdQuoteBorder", s),
    hr: (s) => t.fg("mdHr", s),
    listBullet: (s) => t.fg("mdListBullet", s),
    bold: (s) => t.bold(s),
    italic: (s) => t.italic(s),
    strikethrough: (s) => t.strikethrough(s),
    underline: (s) => t.underline(s),
  };
}

export function getSelectListTheme() {
  const t = theme();
  return {
    selectedPrefix: (s) => t.fg("accent", s),
    selectedText: (s) => t.fg("accent", s),
    description: (s) => t.fg("muted", s),
    scrollInfo: (s) => t.fg("dim", s),
    noMatch: (s) => t.fg("dim", s),
  };
}

export function getSettingsListTheme() {
  const t = theme();
  return {
    label: (s, selected) => (selected ? t.fg("accent", s) : s),
    value: (s, selected) => (selected ? t.fg("accent", s) : t.fg("muted", s)),
    description: (s) => t.fg("dim", s),
    cursor: t.fg("accent", "→ "),
    hint: (s) => t.fg("dim", s),
  };
}

export const getEditorTheme = () => ({ borderColor: (s) => theme().fg("border", s), selectList: getSelectListTheme() });

const KEY_NAMES = {
  "app.interrupt": "esc", interrupt: "esc", "app.clear": "ctrl+c", clear: "ctrl+c", "app.exit": "ctrl+d", exit: "ctrl+d",
  "tui.select.confirm": "enter", selectConfirm: "enter", "tui.select.cancel": "esc", selectCancel: "esc",
  "tui.select.up": "↑", selectUp: "↑", "tui.select.down": "↓", selectDown: "↓", expandTools: "ctrl+o",
  "app.tools.expand": "ctrl+o", cycleThinkingLevel: "shift+tab", selectModel: "ctrl+l",
};
export const keyText = (action) => KEY_NAMES[action] ?? String(action);
export const keyHint = (action, description) => theme().fg("dim", `${keyText(action)} ${description ?? ""}`.trim());
export const rawKeyHint = (key, description) => theme().fg("dim", `${key} ${description ?? ""}`.trim());

export class Theme {
  constructor() {
    Object.assign(this, theme());
  }
}
export const initTheme = () => {};
export const getThemeByName = () => undefined;
export const getAvailableThemes = () => [];

export function highlightCode(code) {
  return String(code ?? "").split("\n");
}
const LANGS = { ts: "typescript", tsx: "tsx", js: "javascript", mjs: "javascript", py: "python", rs: "rust", go: "go", sh: "bash", md: "markdown", json: "json", yml: "yaml", yaml: "yaml", c: "c", cpp: "cpp", h: "c", java: "java", rb: "ruby" };
export const getLanguageFromPath = (p) => LANGS[String(p).split(".").pop()?.toLowerCase()] ?? undefined;

export async function copyToClipboard(value) {
  const ext = current();
  await ext.call("ui.copyToClipboard", { text: String(value) });
}

export const resizeImage = async (img) => img;
export const convertToPng = async (data) => data;

export function parseArgs(argv) {
  const out = { _: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith("--")) {
      const [k, v] = a.slice(2).split("=");
      out[k] = v ?? (argv[i + 1] && !argv[i + 1].startsWith("-") ? argv[++i] : true);
    } else out._.push(a);
  }
  return out;
}

/** Sessions are pi's: an extension sees the current one through `ctx.sessionManager`. */
export class SessionManager {
  static inMemory() {
    return new SessionManager();
  }
  static create() {
    return new SessionManager();
  }
  static open() {
    return new SessionManager();
  }
  static list() {
    return [];
  }
  getEntries() {
    return [];
  }
  getBranch() {
    return [];
  }
}
export class SettingsManager {
  static create() {
    return new SettingsManager();
  }
  get(key) {
    return rt()?.view?.settings?.[key];
  }
}
export class AuthStorage {
  static create() {
    return new AuthStorage();
  }
}
export class ModelRegistry {}
export function createAgentSession() {
  throw new Error("createAgentSession (pi's SDK) is not available to extensions run by pi's Node.js bridge");
}
export const createExtensionRuntime = createAgentSession;

export function createEventBus() {
  const map = new Map();
  return {
    on(name, fn) {
      if (!map.has(name)) map.set(name, new Set());
      map.get(name).add(fn);
      return () => map.get(name)?.delete(fn);
    },
    emit(name, data) {
      for (const fn of map.get(name) ?? []) fn(data);
    },
  };
}

export { truncateToWidth, visibleWidth };
