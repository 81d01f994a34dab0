// pi's Node.js bridge: loads one pi TypeScript/JavaScript extension
// (`export default function (pi) { ... }`) and speaks pi's extension protocol v1 for it over
// stdin/stdout (see docs/extensions.md). Written by the pi binary into a cache directory and
// started as: node [--experimental-strip-types] bridge.mjs <extension file>
import { createRequire, register } from "node:module";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";

const extensionPath = process.argv[2];
const shimUrl = new URL("./pi-shim.mjs", import.meta.url).href;
const ALIASES = [
  "@mariozechner/pi-coding-agent",
  "@mariozechner/pi-ai",
  "@mariozechner/pi-agent-core",
  "@sinclair/typebox",
  "typebox",
];

// Everything printed by the extension goes to stderr: stdout belongs to the protocol.
const protocolOut = process.stdout;
console.log = (...a) => console.error(...a);
console.info = (...a) => console.error(...a);

function send(msg) {
  protocolOut.write(JSON.stringify(msg) + "\n");
}

function errorText(err) {
  return err instanceof Error ? err.message : String(err);
}

// ---- state -------------------------------------------------------------------------------
const handlers = new Map(); // event -> [handler]
const tools = new Map();
const commands = new Map();
const flags = new Map();
const shortcuts = new Map();
let flagValues = {};
let hello = {};
let thinkingLevel = "off";
let systemPrompt = "";
let nextCallId = 1;
const pendingCalls = new Map(); // call id -> {resolve, reject}
const running = new Map(); // request id -> AbortController
const bus = new Map();

function callPi(method, params, signal) {
  const id = `c${nextCallId++}`;
  return new Promise((resolve, reject) => {
    pendingCalls.set(id, { resolve, reject });
    send({ type: "call", id, method, params: params ?? {} });
    // pi stops the call (an `exec` kills its command) and still replies.
    if (signal?.aborted) send({ type: "cancel", id });
    else signal?.addEventListener("abort", () => send({ type: "cancel", id }), { once: true });
  });
}

function notifyPi(method, params) {
  send({ type: "call", method, params: params ?? {} });
}

const identity = (_c, text) => text;
const theme = new Proxy({}, { get: () => (...a) => a[a.length - 1] ?? "" });
theme.fg = identity;
theme.bg = identity;

const ui = {
  select: (title, options, opts) => callPi("ui.select", { title, options, timeout: opts?.timeout }).then((v) => v ?? undefined),
  confirm: (title, message, opts) => callPi("ui.confirm", { title, message, timeout: opts?.timeout }),
  input: (title, placeholder, opts) => callPi("ui.input", { title, placeholder, timeout: opts?.timeout }).then((v) => v ?? undefined),
  editor: (title, prefill) => callPi("ui.editor", { title, prefill }).then((v) => v ?? undefined),
  notify: (message, type) => notifyPi("ui.notify", { message, type }),
  setStatus: (key, text) => notifyPi("ui.setStatus", { key, text }),
  setWidget: (key, lines, opts) =>
    notifyPi("ui.setWidget", { key, lines: Array.isArray(lines) ? lines : undefined, placement: opts?.placement }),
  setTitle: (title) => notifyPi("ui.setTitle", { title }),
  setEditorText: (text) => notifyPi("ui.setEditorText", { text }),
  pasteToEditor: (text) => notifyPi("ui.setEditorText", { text }),
  getEditorText: () => "",
  setFooter() {},
  setHeader() {},
  setWorkingMessage() {},
  setWorkingVisible() {},
  setWorkingIndicator() {},
  setHiddenThinkingLabel() {},
  setEditorComponent() {},
  addAutocompleteProvider() {},
  onTerminalInput() {},
  setToolsExpanded() {},
  getToolsExpanded: () => false,
  custom: async () => undefined,
  getAllThemes: () => [],
  getTheme: () => undefined,
  setTheme: () => ({ success: false, error: "themes are not available to bridged extensions" }),
  theme,
};

function makeContext(signal) {
  return {
    ui,
    get hasUI() {
      return Boolean(hello.hasUI);
    },
    get cwd() {
      return hello.cwd;
    },
    model: undefined,
    signal,
    isIdle: () => true,
    abort: () => notifyPi("abort"),
    hasPendingMessages: () => false,
    shutdown: () => {},
    getContextUsage: () => undefined,
    compact: (opts) => notifyPi("compact", { customInstructions: opts?.customInstructions }),
    getSystemPrompt: () => systemPrompt,
    waitForIdle: async () => {},
  };
}

const pi = {
  on(event, handler) {
    if (!handlers.has(event)) handlers.set(event, []);
    handlers.get(event).push(handler);
  },
  registerTool(def) {
    tools.set(def.name, def);
  },
  registerCommand(name, options) {
    commands.set(name, options);
  },
  registerShortcut(key, options) {
    shortcuts.set(key, options);
  },
  registerFlag(name, options) {
    flags.set(name, options ?? {});
  },
  getFlag: (name) => flagValues[name],
  registerMessageRenderer() {},
  sendMessage: (message, options) => callPi("sendMessage", { message, options }),
  sendUserMessage: (content, options) => callPi("sendUserMessage", { content, options }),
  appendEntry: (customType, data) => callPi("appendEntry", { customType, data }),
  setSessionName: (name) => callPi("setSessionName", { name }),
  getSessionName: () => undefined,
  setLabel() {},
  exec: (command, args, options) =>
    callPi("exec", { command, args: args ?? [], cwd: options?.cwd, timeout: options?.timeout }, options?.signal),
  getActiveTools: () => [...activeToolsCache],
  getAllTools: () => [...tools.values()].map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
  setActiveTools: (names) => {
    activeToolsCache = [...names];
    return callPi("setActiveTools", { names });
  },
  getCommands: () => [...commands.keys()].map((name) => ({ name, source: "extension" })),
  setModel: (model) => callPi("setModel", { provider: model?.provider, modelId: model?.id }),
  getThinkingLevel: () => thinkingLevel,
  setThinkingLevel: (level) => {
    thinkingLevel = level;
    return callPi("setThinkingLevel", { level });
  },
  registerProvider() {
    throw new Error("registerProvider is not supported by pi's Node.js bridge");
  },
  unregisterProvider() {},
  events: {
    on(name, fn) {
      if (!bus.has(name)) bus.set(name, []);
      bus.get(name).push(fn);
    },
    emit(name, data) {
      for (const fn of bus.get(name) ?? []) fn(data);
    },
  },
};
let activeToolsCache = [];

// ---- loading -----------------------------------------------------------------------------
function nodeHasStripTypes() {
  return process.execArgv.includes("--experimental-strip-types") || process.features?.typescript;
}

function findJiti() {
  const candidates = [];
  if (process.env.PI_JITI) candidates.push(process.env.PI_JITI);
  try {
    candidates.push(dirname(createRequire(extensionPath).resolve("jiti/package.json")));
  } catch {}
  const prefix = dirname(dirname(process.execPath));
  for (const root of [join(prefix, "lib", "node_modules"), "/usr/local/lib/node_modules", "/usr/lib/node_modules"]) {
    candidates.push(join(root, "jiti"));
    candidates.push(join(root, "@mariozechner", "pi-coding-agent", "node_modules", "jiti"));
  }
  return candidates.find((c) => existsSync(join(c, "lib", "jiti.mjs")));
}

async function loadExtension() {
  const isTs = /\.(ts|mts|cts)$/.test(extensionPath);
  if (isTs && !nodeHasStripTypes()) {
    const jitiDir = findJiti();
    if (!jitiDir) {
      throw new Error(
        `TypeScript extensions need Node.js >= 22.6 (type stripping) or the jiti package (set PI_JITI); this is Node ${process.version}`,
      );
    }
    const { createJiti } = await import(pathToFileURL(join(jitiDir, "lib", "jiti.mjs")).href);
    const alias = Object.fromEntries(ALIASES.map((a) => [a, new URL(shimUrl).pathname]));
    const jiti = createJiti(import.meta.url, { alias, moduleCache: false });
    return jiti.import(extensionPath, { default: true });
  }
  if (typeof register === "function") {
    const hooks = `
      const aliases = ${JSON.stringify(ALIASES)};
      export async function resolve(specifier, context, next) {
        if (aliases.includes(specifier)) return { url: ${JSON.stringify(shimUrl)}, shortCircuit: true };
        return next(specifier, context);
      }`;
    register("data:text/javascript," + encodeURIComponent(hooks));
  }
  const mod = await import(pathToFileURL(extensionPath).href);
  return mod.default;
}

// ---- protocol ----------------------------------------------------------------------------
function registration() {
  return {
    type: "register",
    protocol: 1,
    tools: [...tools.values()].map((t) => ({
      name: t.name,
      label: t.label,
      description: t.description ?? "",
      parameters: t.parameters ? JSON.parse(JSON.stringify(t.parameters)) : undefined,
      executionMode: t.executionMode,
      promptSnippet: t.promptSnippet,
      promptGuidelines: t.promptGuidelines,
    })),
    commands: [...commands.entries()].map(([name, c]) => ({ name, description: c?.description })),
    flags: [...flags.entries()].map(([name, f]) => ({
      name,
      type: f.type ?? "boolean",
      default: f.default,
      description: f.description,
    })),
    shortcuts: [...shortcuts.entries()].map(([key, s]) => ({ key, description: s?.description })),
    events: [...handlers.keys()],
  };
}

async function runEvent(name, data) {
  const list = handlers.get(name) ?? [];
  const controller = new AbortController();
  const ctx = makeContext(controller.signal);
  const event = { type: name, ...data };
  if (name === "thinking_level_select") thinkingLevel = data.level;
  if (name === "before_agent_start") systemPrompt = data.systemPrompt;
  let result;
  for (const handler of list) {
    let r;
    try {
      r = await handler(event, ctx);
    } catch (err) {
      if (name === "tool_call") throw err;
      send({ type: "error", event: name, error: errorText(err) });
      continue;
    }
    if (r === undefined || r === null) continue;
    switch (name) {
      case "input":
        if (r.action === "handled") return r;
        if (r.action === "transform") {
          event.text = r.text;
          if (r.images) event.images = r.images;
          result = { action: "transform", text: event.text, images: event.images };
        }
        break;
      case "before_agent_start":
        result = result ?? {};
        if (r.message) result.message = r.message;
        if (r.systemPrompt !== undefined) {
          event.systemPrompt = r.systemPrompt;
          systemPrompt = r.systemPrompt;
          result.systemPrompt = r.systemPrompt;
        }
        break;
      case "context":
        if (r.messages) {
          event.messages = r.messages;
          result = { messages: r.messages };
        }
        break;
      case "tool_call":
        result = r;
        if (r.block) return { ...r, input: event.input };
        break;
      case "tool_result":
        result = { ...(result ?? {}), ...r };
        Object.assign(event, r);
        break;
      default:
        result = r;
        if (name.startsWith("session_before") && r.cancel) return r;
    }
  }
  if (name === "tool_call") return { ...(result ?? {}), input: event.input };
  return result ?? null;
}

async function runTool(msg) {
  const tool = tools.get(msg.tool);
  if (!tool) throw new Error(`Unknown tool: ${msg.tool}`);
  const controller = new AbortController();
  running.set(msg.id, controller);
  try {
    const onUpdate = (partial) => send({ type: "tool_update", id: msg.id, content: partial?.content, details: partial?.details });
    const params = tool.prepareArguments ? tool.prepareArguments(msg.params) : msg.params;
    const r = await tool.execute(msg.toolCallId, params, controller.signal, onUpdate, makeContext(controller.signal));
    return { content: r?.content ?? [], details: r?.details, terminate: r?.terminate };
  } finally {
    running.delete(msg.id);
  }
}

async function runCommand(msg) {
  const command = commands.get(msg.command);
  if (!command) throw new Error(`Unknown command: ${msg.command}`);
  const controller = new AbortController();
  running.set(msg.id, controller);
  try {
    await command.handler(msg.args ?? "", makeContext(controller.signal));
    return null;
  } finally {
    running.delete(msg.id);
  }
}

async function runShortcut(msg) {
  const shortcut = shortcuts.get(msg.key);
  if (!shortcut) throw new Error(`Unknown shortcut: ${msg.key}`);
  await shortcut.handler(makeContext(new AbortController().signal));
  return null;
}

function answer(id, work) {
  work.then(
    (result) => send({ type: "reply", id, result: result ?? null }),
    (err) => send({ type: "reply", id, error: errorText(err) }),
  );
}

const lines = createInterface({ input: process.stdin });
lines.on("line", async (line) => {
  if (!line.trim()) return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  switch (msg.type) {
    case "hello":
      hello = msg;
      try {
        const factory = await loadExtension();
        if (typeof factory !== "function") throw new Error("the module has no default export function");
        await factory(pi);
        send(registration());
      } catch (err) {
        console.error(`Failed to load extension ${extensionPath}: ${err?.stack ?? err}`);
        process.exit(1);
      }
      break;
    case "flags":
      flagValues = msg.values ?? {};
      break;
    case "event":
      if (msg.wait) answer(msg.id, runEvent(msg.event, msg.data ?? {}));
      else runEvent(msg.event, msg.data ?? {}).catch((err) => send({ type: "error", event: msg.event, error: errorText(err) }));
      break;
    case "tool":
      answer(msg.id, runTool(msg));
      break;
    case "command":
      answer(msg.id, runCommand(msg));
      break;
    case "shortcut":
      answer(msg.id, runShortcut(msg));
      break;
    case "cancel":
      running.get(msg.id)?.abort();
      break;
    case "reply": {
      const waiter = pendingCalls.get(msg.id);
      pendingCalls.delete(msg.id);
      if (!waiter) break;
      if (msg.error !== undefined) waiter.reject(new Error(msg.error));
      else waiter.resolve(msg.result);
      break;
    }
  }
});
lines.on("close", () => process.exit(0));
