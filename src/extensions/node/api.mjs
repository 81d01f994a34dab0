// One extension inside pi's Node.js bridge: the `pi` object its factory receives (pi's
// ExtensionAPI), the `ctx` its handlers get, the chaining of its event handlers, and the
// requests pi sends it (events, tools, commands, shortcuts, completions, provider streams,
// renders, component input). Every line it sends carries its `ext` number.
import { readFileSync, statSync } from "node:fs";

import { complete as aiComplete, stream as aiStream } from "./ai.mjs";
import { makeUi } from "./ui.mjs";

export function errorText(err) {
  return err instanceof Error ? err.message : String(err);
}

const PROTOCOL = 2;

export class Extension {
  constructor(rt, hello) {
    this.rt = rt;
    this.id = hello.ext;
    this.hello = hello;
    this.path = hello.module ?? hello.extensionPath;
    this.generation = 0;
    this.reset();
  }

  reset() {
    this.handlers = new Map();
    this.tools = new Map();
    this.commands = new Map();
    this.flags = new Map();
    this.shortcuts = new Map();
    this.renderers = new Map();
    this.providers = new Map();
    this.apis = new Map();
    // MCP servers registered while the factory runs go to pi with the registration.
    this.loadMcpServers = new Map();
    forgetMcpServers(this);
    this.flagValues = this.flagValues ?? {};
    this.bus = new Map();
    this.running = new Map();
    this.pendingCalls = new Map();
    this.nextCall = 1;
    this.loaded = false;
    this.disabled = false;
    this.updateQueued = false;
    this.ui = makeUi(this);
    this.pi = makePi(this);
  }

  send(msg) {
    if (this.disabled && msg.type !== "reply") return;
    this.rt.send({ ...msg, ext: this.id });
  }

  /** Calls pi (`{"type":"call"}`) and resolves with its answer; `onUpdate` gets partial results. */
  call(method, params, { signal, onUpdate } = {}) {
    const id = `c${this.nextCall++}`;
    return new Promise((resolve, reject) => {
      this.pendingCalls.set(id, { resolve, reject, onUpdate });
      this.send({ type: "call", id, method, params: params ?? {} });
      if (signal?.aborted) this.send({ type: "cancel", id });
      else signal?.addEventListener("abort", () => this.send({ type: "cancel", id }), { once: true });
    });
  }

  /** A call pi answers with nothing. */
  notify(method, params) {
    this.send({ type: "call", method, params: params ?? {} });
  }

  get view() {
    return this.rt.view ?? {};
  }

  async load(fresh = false) {
    // Loading shares one Node process with every other extension (and may compile a large
    // package): pi's handshake waits while modules keep loading.
    this.send({ type: "call", method: "loading", params: { ms: 30_000 } });
    try {
      const factory = await this.rt.importModule(this.path, fresh);
      if (typeof factory !== "function") throw new Error("the module has no default export function");
      await factory(this.pi);
      this.loaded = true;
      this.send(this.registration());
    } catch (err) {
      // One line, as pi reports it; PI_EXTENSION_DEBUG=1 adds the stack on stderr.
      if (process.env.PI_EXTENSION_DEBUG) this.rt.log(`Failed to load extension ${this.path}: ${err?.stack ?? err}`);
      this.send({ type: "register", protocol: PROTOCOL, error: `Failed to load extension: ${errorText(err)}` });
    }
  }

  /** After load, a registration change (a tool registered at runtime, a new event) is sent again. */
  registrationChanged() {
    if (!this.loaded || this.updateQueued) return;
    this.updateQueued = true;
    queueMicrotask(() => {
      this.updateQueued = false;
      this.send({ ...this.registration(), update: true });
    });
  }

  registration() {
    return {
      type: "register",
      protocol: PROTOCOL,
      tools: [...this.tools.values()].map(toolRegistration),
      commands: [...this.commands.entries()].map(([name, c]) => ({
        name,
        description: c?.description,
        completions: typeof c?.getArgumentCompletions === "function",
      })),
      flags: [...this.flags.entries()].map(([name, f]) => ({
        name,
        type: f.type ?? "boolean",
        default: f.default,
        description: f.description,
      })),
      shortcuts: [...this.shortcuts.entries()].map(([key, s]) => ({ key, description: s?.description })),
      events: [...this.handlers.entries()].filter(([, list]) => list.length).map(([name]) => name),
      providers: [...this.providers.entries()].map(([name, config]) => providerRegistration(this, name, config)),
      messageRenderers: [...this.renderers.keys()],
      mcpServers: [...this.loadMcpServers.entries()].map(([name, config]) => ({ name, config })),
    };
  }

  onResize() {
    this.ui.rerenderAll?.();
  }
}

function plain(value) {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

function toolRegistration(t) {
  return {
    name: t.name,
    label: t.label,
    description: t.description ?? "",
    parameters: t.parameters ? plain(t.parameters) : undefined,
    executionMode: t.executionMode,
    promptSnippet: t.promptSnippet,
    promptGuidelines: t.promptGuidelines,
  };
}

function providerRegistration(ext, name, config) {
  const streams = typeof config.streamSimple === "function" || typeof config.stream === "function" || ext.apis.has(config.api);
  const models = (config.models ?? []).map((m) => plain({ ...m, api: m.api ?? config.api }));
  return {
    name,
    baseUrl: config.baseUrl,
    apiKey: config.apiKey,
    api: config.api,
    headers: config.headers,
    authHeader: config.authHeader,
    models,
    stream: streams,
    oauth: config.oauth ? { name: config.oauth.name ?? name } : undefined,
  };
}

// ---- the `pi` object -------------------------------------------------------------------------

function makePi(ext) {
  const rt = ext.rt;
  const pi = {
    on(event, handler) {
      if (!ext.handlers.has(event)) ext.handlers.set(event, []);
      const list = ext.handlers.get(event);
      const wasEmpty = list.length === 0;
      list.push(handler);
      if (wasEmpty) ext.registrationChanged();
      return () => {
        const i = list.indexOf(handler);
        if (i >= 0) list.splice(i, 1);
      };
    },
    registerTool(def) {
      if (!def?.name) throw new Error("registerTool: a tool needs a name");
      ext.tools.set(def.name, def);
      ext.registrationChanged();
    },
    registerCommand(name, options) {
      ext.commands.set(String(name).replace(/^\//, ""), options ?? {});
      ext.registrationChanged();
    },
    registerShortcut(key, options) {
      ext.shortcuts.set(key, options ?? {});
      ext.registrationChanged();
    },
    registerFlag(name, options) {
      ext.flags.set(String(name).replace(/^-+/, ""), options ?? {});
      if (options?.default !== undefined && !(name in ext.flagValues)) ext.flagValues[name] = options.default;
      ext.registrationChanged();
    },
    getFlag: (name) => ext.flagValues[String(name).replace(/^-+/, "")],
    registerMessageRenderer(customType, renderer) {
      ext.renderers.set(customType, renderer);
      ext.registrationChanged();
    },
    registerEntryRenderer() {},
    registerToolRenderer() {},
    registerMarkdownTransformer() {},
    registerProvider(nameOrProvider, maybeConfig) {
      const config = typeof nameOrProvider === "object" ? nameOrProvider : maybeConfig ?? {};
      const name = typeof nameOrProvider === "object" ? nameOrProvider.name ?? nameOrProvider.id : nameOrProvider;
      ext.providers.set(name, config);
      ext.registrationChanged();
    },
    unregisterProvider(name) {
      ext.providers.delete(name);
      ext.registrationChanged();
    },
    registerVirtualModel() {},
    unregisterVirtualModel() {},
    registerMcpServer: (name, config) => registerMcpServer(ext, name, config),
    unregisterMcpServer: (name) => unregisterMcpServer(ext, name),
    getMcpServers: () =>
      [...mcpServersOf(rt).entries()].map(([name, s]) => ({ name, config: plain(s.config), extensionPath: s.path })),
    // pi returns nothing from these: pi applies them when it can (a command's messages after
    // the command), so nobody may wait for that; a refusal is reported as the extension's error.
    sendMessage: (message, options) => fire(ext, "sendMessage", { message: plain(message), options }),
    sendUserMessage: (content, options) => fire(ext, "sendUserMessage", { content, options }),
    appendEntry: (customType, data) => fire(ext, "appendEntry", { customType, data }),
    setSessionName: (name) => fire(ext, "setSessionName", { name }),
    getSessionName: () => ext.view.sessionName ?? undefined,
    setLabel: (entryId, label) => ext.notify("setLabel", { entryId, label }),
    exec: (command, args, options) =>
      ext.call(
        "exec",
        { command, args: args ?? [], cwd: options?.cwd, timeout: options?.timeout, maxBuffer: options?.maxBuffer },
        { signal: options?.signal },
      ),
    getActiveTools: () => [...(ext.view.activeTools ?? [])],
    getAllTools: () =>
      (ext.view.allTools ?? []).map((t) => ({ ...t, sourceInfo: { path: ext.path, source: "extension" } })),
    setActiveTools: (names) => {
      if (ext.rt.view) ext.rt.view.activeTools = [...names];
      return ext.call("setActiveTools", { names: [...names] });
    },
    getCommands: () => ext.view.commands ?? [...ext.commands.keys()].map((name) => ({ name, source: "extension" })),
    getSettings: () => ext.view.settings ?? {},
    setModel: (model) => ext.call("setModel", { provider: model?.provider, modelId: model?.id }),
    getThinkingLevel: () => ext.view.thinkingLevel ?? "off",
    setThinkingLevel: (level) => {
      if (ext.rt.view) ext.rt.view.thinkingLevel = level;
      return ext.call("setThinkingLevel", { level });
    },
    events: {
      on(name, fn) {
        const bus = busFor(rt);
        if (!bus.has(name)) bus.set(name, new Set());
        bus.get(name).add(fn);
        return () => bus.get(name)?.delete(fn);
      },
      emit(name, data) {
        for (const fn of busFor(rt).get(name) ?? []) {
          try {
            fn(data);
          } catch (err) {
            rt.log(`event bus handler for ${name} failed: ${errorText(err)}`);
          }
        }
      },
    },
  };
  return pi;
}

function fire(ext, method, params) {
  ext.call(method, params).catch((err) => ext.send({ type: "error", event: method, error: errorText(err) }));
}

// ---- MCP servers (pi 1.x) --------------------------------------------------------------------
// pi throws at once for a bad name or config or a name another extension owns; what only pi can
// check (the full config rules) is reported as this extension's error.

function mcpServersOf(rt) {
  rt.mcpServers ??= new Map(); // name -> {ext, path, config}
  return rt.mcpServers;
}

function forgetMcpServers(ext) {
  const servers = mcpServersOf(ext.rt);
  for (const [name, s] of servers) if (s.ext === ext.id) servers.delete(name);
}

function registerMcpServer(ext, name, config) {
  if (typeof name !== "string" || !/^[A-Za-z0-9_-]+$/.test(name)) {
    throw new Error(`Invalid MCP server name "${name}" (use letters, digits, "_" and "-")`);
  }
  if (!config || typeof config !== "object" || Array.isArray(config)) {
    throw new Error(`Invalid MCP server "${name}": the config must be an object`);
  }
  if (typeof config.command !== "string" && typeof config.url !== "string") {
    throw new Error(`Invalid MCP server "${name}": it needs a "command" or a "url"`);
  }
  const servers = mcpServersOf(ext.rt);
  const owner = servers.get(name);
  if (owner && owner.ext !== ext.id) {
    throw new Error(`MCP server "${name}" is already registered by extension "${owner.path}"`);
  }
  const copy = plain(config);
  servers.set(name, { ext: ext.id, path: ext.path, config: copy });
  if (!ext.loaded) {
    ext.loadMcpServers.set(name, copy);
    return;
  }
  ext.call("registerMcpServer", { name, config: copy }).catch((err) => {
    servers.delete(name);
    ext.send({ type: "error", event: "registerMcpServer", error: errorText(err) });
  });
}

function unregisterMcpServer(ext, name) {
  const servers = mcpServersOf(ext.rt);
  if (servers.get(name)?.ext !== ext.id) return;
  servers.delete(name);
  if (!ext.loaded) ext.loadMcpServers.delete(name);
  else ext.notify("unregisterMcpServer", { name });
}

// pi's event bus is shared by every extension of a session.
function busFor(rt) {
  rt.bus ??= new Map();
  return rt.bus;
}

// ---- ctx -------------------------------------------------------------------------------------

const MODES = { interactive: "tui", rpc: "rpc", json: "json", print: "print" };

function readEntries(file) {
  if (!file) return [];
  try {
    const stat = statSync(file);
    const cached = readEntries.cache.get(file);
    if (cached && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size) return cached.entries;
    const entries = [];
    for (const line of readFileSync(file, "utf8").split("\n")) {
      if (!line.trim()) continue;
      try {
        const e = JSON.parse(line);
        if (e.type !== "session") entries.push(e);
      } catch {}
    }
    readEntries.cache.set(file, { mtimeMs: stat.mtimeMs, size: stat.size, entries });
    return entries;
  } catch {
    return [];
  }
}
readEntries.cache = new Map();

function sessionManager(ext) {
  const file = () => ext.view.sessionFile ?? ext.hello.sessionFile ?? undefined;
  const entries = () => readEntries(file());
  const leafId = () => ext.view.leafId ?? entries().at(-1)?.id ?? null;
  const byId = (id) => entries().find((e) => e.id === id);
  return {
    getSessionFile: () => file(),
    getSessionId: () => ext.view.sessionId ?? "",
    getSessionDir: () => (file() ? file().replace(/\/[^/]*$/, "") : ""),
    getCwd: () => ext.hello.cwd,
    getSessionName: () => ext.view.sessionName ?? undefined,
    getEntries: () => entries(),
    getEntry: (id) => byId(id),
    getLeafId: () => leafId(),
    getLeafEntry: () => byId(leafId()),
    getBranch: (from) => {
      const all = entries();
      const map = new Map(all.map((e) => [e.id, e]));
      const out = [];
      let cur = map.get(from ?? leafId());
      while (cur) {
        out.unshift(cur);
        cur = cur.parentId ? map.get(cur.parentId) : undefined;
      }
      return out;
    },
    getChildren: (id) => entries().filter((e) => e.parentId === id),
    getLabel: (id) => {
      let label;
      for (const e of entries()) if (e.type === "label" && e.targetId === id) label = e.label;
      return label;
    },
    getHeader: () => {
      try {
        return JSON.parse(readFileSync(file(), "utf8").split("\n")[0]);
      } catch {
        return undefined;
      }
    },
    getTree: () => entries(),
    isPersisted: () => Boolean(file()),
    buildContextEntries: () => entries(),
  };
}

function modelRegistry(ext) {
  const all = () => ext.rt.models.all ?? [];
  const ofType = (type, provider) =>
    (type === "chat" ? all() : (ext.rt.models.nonChat ?? []).filter((m) => m.type === type)).filter(
      (m) => provider === undefined || provider === null || m.provider === provider,
    );
  // Non-chat calls never reject (pi 1.6.0): a failure is a result with stopReason "error".
  const nonChatCall = async (method, model, context, options) => {
    try {
      return await ext.call(method, { provider: model?.provider, id: model?.id, context }, { signal: options?.signal });
    } catch (err) {
      return {
        api: model?.api,
        provider: model?.provider,
        model: model?.id,
        ...(method === "models.classify" ? { answers: {} } : { output: [] }),
        stopReason: options?.signal?.aborted ? "aborted" : "error",
        timestamp: Date.now(),
        errorMessage: errorText(err),
      };
    }
  };
  return {
    getAll: () => all(),
    getAvailable: () => ext.rt.models.available ?? [],
    find: (provider, id) => all().find((m) => m.provider === provider && m.id === id),
    findOfType: (type, provider, id) => ofType(type, provider).find((m) => m.id === id),
    getModelsOfType: (type, provider) => ofType(type, provider),
    getModelOfType: (type, provider, id) => ofType(type, provider).find((m) => m.id === id),
    getAvailableOfType: async (type, provider) => ofType(type, provider).filter((m) => ext.rt.models.hasAuth?.(m.provider)),
    classify: (model, context, options) => nonChatCall("models.classify", model, context, options),
    generateImages: (model, context, options) => nonChatCall("models.generateImages", model, context, options),
    hasConfiguredAuth: (model) =>
      (ext.rt.models.available ?? []).some((m) => m.provider === model?.provider && m.id === model?.id),
    getApiKey: async (model) => (await ext.call("models.auth", { provider: model?.provider, modelId: model?.id }))?.apiKey,
    getApiKeyAndHeaders: async (model) => {
      try {
        const r = await ext.call("models.auth", { provider: model?.provider, modelId: model?.id });
        return { ok: true, apiKey: r?.apiKey, headers: r?.headers ?? {} };
      } catch (err) {
        return { ok: false, error: errorText(err) };
      }
    },
    complete: (model, context, options) => aiComplete(model, context, options),
    stream: (model, context, options) => aiStream(model, context, options),
    streamSimple: (model, context, options) => aiStream(model, context, options),
    refresh: async () => {},
    getError: () => undefined,
  };
}

export function makeContext(ext, signal, { command = false } = {}) {
  const ctx = {
    ui: ext.ui.api,
    get mode() {
      return MODES[ext.hello.mode] ?? ext.hello.mode;
    },
    get hasUI() {
      return Boolean(ext.hello.hasUI);
    },
    get cwd() {
      return ext.hello.cwd;
    },
    sessionManager: sessionManager(ext),
    modelRegistry: modelRegistry(ext),
    get model() {
      const m = ext.view.model;
      if (!m) return undefined;
      return ext.rt.models.all?.find((x) => x.provider === m.provider && x.id === m.id) ?? m;
    },
    get scopedModels() {
      return ext.view.scopedModels ?? [];
    },
    get thinkingLevel() {
      return ext.view.thinkingLevel;
    },
    signal,
    isIdle: () => ext.view.idle ?? true,
    isProjectTrusted: () => Boolean(ext.hello.projectTrusted),
    abort: () => ext.notify("abort"),
    hasPendingMessages: () => Boolean(ext.view.pendingMessages),
    shutdown: () => ext.notify("shutdown"),
    getContextUsage: () => ext.view.contextUsage ?? undefined,
    compact: (opts) => {
      ext.call("compact", { customInstructions: opts?.customInstructions }).then(
        (r) => opts?.onComplete?.(r),
        (err) => opts?.onError?.(err instanceof Error ? err : new Error(String(err))),
      );
    },
    getSystemPrompt: () => ext.view.systemPrompt ?? "",
  };
  if (command) {
    Object.assign(ctx, {
      getSystemPromptOptions: () => ({ cwd: ext.hello.cwd }),
      waitForIdle: () => ext.call("waitForIdle"),
      newSession: (opts) => sessionSwitch(ext, "session.new", { parentSession: opts?.parentSession }, opts),
      fork: (entryId, opts) => sessionSwitch(ext, "session.fork", { entryId, position: opts?.position }, opts),
      navigateTree: (targetId, opts) =>
        ext.call("session.navigateTree", {
          targetId,
          summarize: opts?.summarize,
          customInstructions: opts?.customInstructions,
          label: opts?.label,
        }),
      switchSession: (sessionPath, opts) => sessionSwitch(ext, "session.switch", { sessionPath }, opts),
      reload: () => ext.call("session.reload"),
    });
  }
  return ctx;
}

async function sessionSwitch(ext, method, params, opts) {
  const r = (await ext.call(method, params)) ?? { cancelled: true };
  if (!r.cancelled && typeof opts?.withSession === "function") {
    // The extension has been restarted for the new session; the old instance's callback runs
    // against a fresh context.
    await opts.withSession(makeContext(ext, undefined, { command: true }));
  }
  return { cancelled: Boolean(r.cancelled) };
}

// ---- requests from pi --------------------------------------------------------------------------

function answer(ext, id, work) {
  Promise.resolve()
    .then(work)
    .then(
      (result) => ext.send({ type: "reply", id, result: result ?? null }),
      (err) => ext.send({ type: "reply", id, error: errorText(err) }),
    );
}

export function handleMessage(ext, msg) {
  switch (msg.type) {
    case "flags":
      ext.flagValues = { ...ext.flagValues, ...(msg.values ?? {}) };
      return;
    case "event":
      if (msg.wait) answer(ext, msg.id, () => runEvent(ext, msg.event, msg.data ?? {}));
      else runEvent(ext, msg.event, msg.data ?? {}).catch((err) => ext.send({ type: "error", event: msg.event, error: errorText(err) }));
      return;
    case "tool":
      return answer(ext, msg.id, () => runTool(ext, msg));
    case "command":
      return answer(ext, msg.id, () => runCommand(ext, msg));
    case "shortcut":
      return answer(ext, msg.id, () => runShortcut(ext, msg));
    case "complete":
      return answer(ext, msg.id, () => complete(ext, msg));
    case "provider_stream":
      return answer(ext, msg.id, () => providerStream(ext, msg));
    case "render":
      return answer(ext, msg.id, () => ext.ui.renderRequest(msg));
    case "component_input":
      return ext.ui.input(msg.component, msg.data);
    case "component_close":
      return ext.ui.closedByPi(msg.component);
    case "restart":
      return answer(ext, msg.id, () => restart(ext));
    case "disable":
      ext.disabled = true;
      for (const c of ext.running.values()) c.abort();
      return;
    case "cancel":
      ext.running.get(msg.id)?.abort();
      return;
    case "update": {
      const waiter = ext.pendingCalls.get(msg.id);
      waiter?.onUpdate?.(msg.result);
      return;
    }
    case "reply": {
      const waiter = ext.pendingCalls.get(msg.id);
      ext.pendingCalls.delete(msg.id);
      if (!waiter) return;
      if (msg.error !== undefined && msg.error !== null) waiter.reject(new Error(msg.error));
      else waiter.resolve(msg.result);
    }
  }
}

/** A fresh instance of the module and its factory (pi restarts extensions on session switch). */
async function restart(ext) {
  ext.ui.disposeAll();
  const flags = ext.flagValues;
  ext.generation++;
  ext.reset();
  ext.flagValues = flags;
  await ext.load(true);
  return null;
}

function withAbort(ext, id, fn) {
  const controller = new AbortController();
  if (id !== undefined) ext.running.set(id, controller);
  return Promise.resolve()
    .then(() => fn(controller.signal))
    .finally(() => {
      if (id !== undefined) ext.running.delete(id);
    });
}

/** Runs every handler of `name` in registration order, chaining results as pi does. */
export async function runEvent(ext, name, data) {
  const list = [...(ext.handlers.get(name) ?? [])];
  const controller = new AbortController();
  const ctx = makeContext(ext, controller.signal);
  const event = { type: name, ...data };
  if (name === "turn_end" || name === "agent_before_settle") {
    event.entries = [...(data.entries ?? [])];
    event.continue = Boolean(data.continue);
  }
  if (name === "user_bash") return userBash(list, event, ctx);
  let result;
  for (const handler of list) {
    let r;
    try {
      r = await handler(event, ctx);
    } catch (err) {
      if (name === "tool_call") throw err;
      ext.send({ type: "error", event: name, error: errorText(err) });
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
        if (r.message) (result.messages ??= []).push(plain(r.message));
        if (Array.isArray(r.messages)) (result.messages ??= []).push(...plain(r.messages));
        if (r.systemPrompt !== undefined) {
          event.systemPrompt = r.systemPrompt;
          result.systemPrompt = r.systemPrompt;
        }
        break;
      case "before_provider_request":
        event.payload = r;
        result = plain(r);
        break;
      case "context":
        if (r.messages) {
          event.messages = r.messages;
          result = { messages: plain(r.messages) };
        }
        break;
      case "tool_call":
        result = { ...(result ?? {}), ...r };
        if (r.block) return { ...result, input: event.input };
        break;
      case "tool_result":
        result = { ...(result ?? {}), ...plain(r) };
        Object.assign(event, r);
        // pi 1.6.0: structured content not replaced along with the content may no longer match.
        if (r.content !== undefined && r.structuredContent === undefined) {
          delete event.structuredContent;
          delete result.structuredContent;
        }
        break;
      case "turn_end":
      case "agent_before_settle":
        if (Array.isArray(r.entries)) event.entries = r.entries;
        if (r.continue !== undefined) event.continue = Boolean(r.continue);
        result = { entries: plain(event.entries), continue: event.continue };
        break;
      case "project_trust":
        if (r.trusted === "yes" || r.trusted === "no") return r;
        break;
      default:
        result = plain(r);
        if (name.startsWith("session_before") && r.cancel) return result;
    }
  }
  if (name === "tool_call") return { ...(result ?? {}), input: plain(event.input) };
  return result ?? null;
}

/**
 * `user_bash`: the first handler that answers decides. `{result}` is pi's answer as given;
 * `{operations}` runs the command through the extension's backend here and answers with what
 * it printed. A failing handler or an answer of the wrong shape throws: the command is not run.
 */
async function userBash(list, event, ctx) {
  for (const handler of list) {
    const r = await handler(event, ctx);
    if (r === undefined || r === null) continue;
    const hasOps = r.operations !== undefined;
    const hasResult = r.result !== undefined;
    if (hasOps === hasResult || (hasOps && typeof r.operations?.exec !== "function") || (hasResult && !validBashResult(r.result))) {
      throw new Error(
        "Invalid user_bash handler result: return undefined for local execution or exactly one valid { operations } or { result } object",
      );
    }
    if (hasResult) return { result: plain(r.result) };
    const chunks = [];
    const controller = new AbortController();
    const onData = (data) => chunks.push(typeof data === "string" ? data : Buffer.from(data).toString("utf8"));
    const outcome = await r.operations.exec(event.command, event.cwd, { onData, signal: controller.signal });
    return {
      result: { output: chunks.join(""), exitCode: outcome?.exitCode ?? undefined, cancelled: false, truncated: false },
    };
  }
  return null;
}

function validBashResult(r) {
  return (
    typeof r === "object" &&
    r !== null &&
    typeof r.output === "string" &&
    "exitCode" in r &&
    (r.exitCode === undefined || r.exitCode === null || typeof r.exitCode === "number") &&
    typeof r.cancelled === "boolean" &&
    typeof r.truncated === "boolean" &&
    (r.fullOutputPath === undefined || typeof r.fullOutputPath === "string")
  );
}

async function runTool(ext, msg) {
  const tool = ext.tools.get(msg.tool);
  if (!tool) throw new Error(`Unknown tool: ${msg.tool}`);
  return withAbort(ext, msg.id, async (signal) => {
    const onUpdate = (partial) =>
      ext.send({ type: "tool_update", id: msg.id, content: plain(partial?.content), details: plain(partial?.details) });
    const params = tool.prepareArguments ? tool.prepareArguments(msg.params) : msg.params;
    const r = await tool.execute(msg.toolCallId, params, signal, onUpdate, makeContext(ext, signal));
    return {
      content: plain(r?.content) ?? [],
      details: plain(r?.details),
      terminate: r?.terminate,
      isError: r?.isError,
    };
  });
}

async function runCommand(ext, msg) {
  const command = ext.commands.get(msg.command);
  if (!command) throw new Error(`Unknown command: ${msg.command}`);
  await withAbort(ext, msg.id, (signal) => command.handler(msg.args ?? "", makeContext(ext, signal, { command: true })));
  return null;
}

async function runShortcut(ext, msg) {
  const shortcut = ext.shortcuts.get(msg.key);
  if (!shortcut) throw new Error(`Unknown shortcut: ${msg.key}`);
  await withAbort(ext, msg.id, (signal) => shortcut.handler(makeContext(ext, signal, { command: true })));
  return null;
}

async function complete(ext, msg) {
  const command = ext.commands.get(msg.command);
  if (typeof command?.getArgumentCompletions !== "function") return null;
  const items = await command.getArgumentCompletions(msg.prefix ?? "");
  return Array.isArray(items) ? plain(items) : null;
}

/** Streams a model reply from a provider the extension registered (`streamSimple`). */
async function providerStream(ext, msg) {
  const model = msg.model ?? {};
  let fn;
  for (const [name, config] of ext.providers) {
    if (name === model.provider || (config.api && config.api === model.api)) {
      fn = config.streamSimple ?? config.stream;
      if (!fn && ext.apis.has(config.api)) fn = ext.apis.get(config.api).streamSimple ?? ext.apis.get(config.api).stream;
      if (fn) break;
    }
  }
  fn ??= ext.apis.get(model.api)?.streamSimple ?? ext.apis.get(model.api)?.stream;
  if (!fn) throw new Error(`No stream for ${model.provider}/${model.id} (api ${model.api})`);
  return withAbort(ext, msg.id, async (signal) => {
    const context = contextForProvider(msg.context ?? {});
    const options = { ...(msg.options ?? {}), signal };
    const stream = await fn(model, context, options);
    let final = null;
    for await (const event of stream) {
      if (event?.type === "done") final = event.message;
      else if (event?.type === "error") final = event.error;
      ext.send({ type: "stream_event", id: msg.id, event: plain(event) });
    }
    if (!final && typeof stream?.result === "function") final = await stream.result();
    return plain(final);
  });
}

/** pi 0.x passes `{systemPrompt, messages, tools}`; 1.x helpers read them from the messages. */
function contextForProvider(context) {
  const messages = [...(context.messages ?? [])];
  Object.defineProperty(messages, "__pi", {
    value: { systemPrompt: context.systemPrompt, tools: context.tools ?? [] },
    enumerable: false,
  });
  return { ...context, messages };
}
