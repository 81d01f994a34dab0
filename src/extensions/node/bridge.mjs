// pi's Node.js bridge: one Node process that loads every TypeScript/JavaScript extension of a
// pi session (`export default function (pi) { ... }`) and speaks pi's extension protocol 2 for
// all of them over stdin/stdout, each line tagged with its extension's `ext` number (see
// docs/extensions.md). Written by the pi binary into a cache directory and started as
//   node [--experimental-strip-types] bridge.mjs
// Imports of pi's packages (`@mariozechner/*`, `@earendil-works/*`) and of TypeBox resolve to
// the stand-ins beside this file. TypeScript runs through Node's type stripping, or through
// jiti where Node lacks it (found, or installed once into the cache directory with npm).
import { AsyncLocalStorage } from "node:async_hooks";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire, register } from "node:module";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";

import { Extension, handleMessage } from "./api.mjs";
import * as agentCore from "./agent_core.mjs";
import * as ai from "./ai.mjs";
import * as codingAgent from "./coding_agent.mjs";
import * as tui from "./tui.mjs";
import * as typebox from "./typebox.mjs";

const here = dirname(fileURLToPath(import.meta.url));

// Everything an extension prints goes to stderr: stdout belongs to the protocol. A line is
// tagged `@<ext> ` so pi can say which extension wrote it. That includes raw
// `process.stdout.write`s (a terminal notification's escape sequence, say): written to the
// protocol stream they would break it.
const writeProtocol = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, encoding, callback) => {
  const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString(typeof encoding === "string" ? encoding : "utf8");
  log(text.endsWith("\n") ? text.slice(0, -1) : text);
  const done = typeof encoding === "function" ? encoding : callback;
  if (typeof done === "function") queueMicrotask(() => done());
  return true;
};
const als = new AsyncLocalStorage();
function log(...args) {
  const ext = als.getStore();
  const text = args.map((a) => (typeof a === "string" ? a : a instanceof Error ? a.stack ?? a.message : inspectValue(a))).join(" ");
  const prefix = ext ? `@${ext.id} ` : "";
  process.stderr.write(text.split("\n").map((l) => prefix + l).join("\n") + "\n");
}
function inspectValue(v) {
  try {
    return typeof v === "object" ? JSON.stringify(v) : String(v);
  } catch {
    return String(v);
  }
}
console.log = log;
console.info = log;
console.warn = log;
console.error = log;
console.debug = log;

function send(msg) {
  writeProtocol(JSON.stringify(msg) + "\n");
}

// ---- module aliases --------------------------------------------------------------------------

const SHIMS = [
  [/^@(mariozechner|earendil-works)\/pi-coding-agent(\/.*)?$/, "coding_agent.mjs", codingAgent],
  [/^@(mariozechner|earendil-works)\/pi-ai(\/.*)?$/, "ai.mjs", ai],
  [/^@(mariozechner|earendil-works)\/pi-agent-core(\/.*)?$/, "agent_core.mjs", agentCore],
  [/^@(mariozechner|earendil-works)\/pi-tui(\/.*)?$/, "tui.mjs", tui],
  [/^(typebox|@sinclair\/typebox)(\/.*)?$/, "typebox.mjs", typebox],
];
const VIRTUAL_NAMES = [
  "@mariozechner/pi-coding-agent", "@earendil-works/pi-coding-agent",
  "@mariozechner/pi-ai", "@earendil-works/pi-ai", "@mariozechner/pi-ai/compat", "@earendil-works/pi-ai/compat",
  "@mariozechner/pi-ai/oauth", "@earendil-works/pi-ai/oauth", "@earendil-works/pi-ai/models",
  "@earendil-works/pi-ai/providers/all",
  "@mariozechner/pi-agent-core", "@earendil-works/pi-agent-core",
  "@mariozechner/pi-tui", "@earendil-works/pi-tui",
  "typebox", "typebox/compile", "typebox/value", "@sinclair/typebox", "@sinclair/typebox/compiler",
  "@sinclair/typebox/value",
];

function shimFor(specifier) {
  return SHIMS.find(([re]) => re.test(specifier));
}

// Native loading (Node's own import, with type stripping for .ts): a resolve hook maps pi's
// packages to the stand-ins, and lets TypeScript sources import `./x.js` for `./x.ts` and
// `./x` for `./x.ts` or `./x/index.ts`, as TypeScript's own resolution does.
let hooksRegistered = false;
function registerHooks() {
  if (hooksRegistered || typeof register !== "function") return;
  hooksRegistered = true;
  const table = SHIMS.map(([re, file]) => [re.source, pathToFileURL(join(here, file)).href]);
  const hooks = `
    import { readFileSync, statSync } from "node:fs";
    import * as nodeModule from "node:module";
    import { fileURLToPath } from "node:url";
    const table = ${JSON.stringify(table)}.map(([s, url]) => [new RegExp(s), url]);
    function isFile(url) {
      try { return statSync(fileURLToPath(url)).isFile(); } catch { return false; }
    }
    export async function resolve(specifier, context, next) {
      for (const [re, url] of table) if (re.test(specifier)) return { url, shortCircuit: true };
      try {
        return await next(specifier, context);
      } catch (err) {
        const relative = specifier.startsWith("./") || specifier.startsWith("../") || specifier.startsWith("/");
        if (!relative || !context.parentURL) throw err;
        const base = new URL(specifier, context.parentURL).href;
        const tries = base.endsWith(".js") ? [base.slice(0, -3) + ".ts", base.slice(0, -3) + ".tsx"]
          : base.endsWith(".mjs") ? [base.slice(0, -4) + ".mts"]
          : [base + ".ts", base + ".js", base + ".mjs", base + "/index.ts", base + "/index.js"];
        for (const url of tries) if (isFile(url)) return { url, shortCircuit: true };
        throw err;
      }
    }
    // Node will not strip types inside node_modules (where installed pi packages live); where it
    // can strip them at all, do it here for TypeScript sources there.
    export async function load(url, context, next) {
      if (/\\/node_modules\\/.*\\.(ts|mts)$/.test(url) && typeof nodeModule.stripTypeScriptTypes === "function") {
        const source = nodeModule.stripTypeScriptTypes(readFileSync(fileURLToPath(url), "utf8"));
        return { format: "module", source, shortCircuit: true };
      }
      return next(url, context);
    }`;
  register("data:text/javascript," + encodeURIComponent(hooks));
}

function stripsTypes() {
  return Boolean(process.features?.typescript) || process.execArgv.includes("--experimental-strip-types");
}

// ---- jiti (TypeScript on Node without type stripping) ----------------------------------------

const cacheDir = join(here, "..");
let jitiPromise = null;

function findJiti(fromFile) {
  const candidates = [];
  if (process.env.PI_JITI) candidates.push(process.env.PI_JITI);
  try {
    candidates.push(dirname(createRequire(fromFile).resolve("jiti/package.json")));
  } catch {}
  candidates.push(join(cacheDir, "jiti", "node_modules", "jiti"));
  const prefix = dirname(dirname(process.execPath));
  for (const root of [join(prefix, "lib", "node_modules"), "/usr/local/lib/node_modules", "/usr/lib/node_modules"]) {
    candidates.push(join(root, "jiti"));
    for (const scope of ["@mariozechner", "@earendil-works"]) {
      candidates.push(join(root, scope, "pi-coding-agent", "node_modules", "jiti"));
    }
  }
  return candidates.find((c) => existsSync(join(c, "lib", "jiti.mjs")));
}

/** Installs jiti into `<cache>/jiti` with npm (once per cache), saying so on stderr. */
function installJiti() {
  const target = join(cacheDir, "jiti");
  const npm = process.env.PI_NPM || "npm";
  // Offline, npm would only wait on a registry it may not use (a minute or more): say so now.
  if (/^(1|true|yes)$/i.test(process.env.PI_OFFLINE ?? "")) {
    throw new Error(
      `TypeScript extensions need Node.js >= 22.6 or the jiti package (Node.js ${process.version} here), ` +
        `and pi is offline (PI_OFFLINE or --offline), so it does not install jiti with ${npm}. ` +
        `Install it once while online (npm install -g jiti), set PI_JITI to a jiti directory, or use Node.js >= 22.6.`,
    );
  }
  mkdirSync(target, { recursive: true });
  log(`pi: loading TypeScript here needs jiti (Node.js ${process.version}); installing it into ${target} (once)...`);
  // pi's handshake waits while this runs.
  const ext = als.getStore();
  if (ext) send({ type: "call", ext: ext.id, method: "loading", params: { ms: 200_000, reason: "installing jiti" } });
  try {
    execFileSync(npm, ["install", "--prefix", target, "--no-audit", "--no-fund", "--no-save", "--loglevel=error", "jiti@^2.4.0"], {
      stdio: ["ignore", "ignore", "pipe"],
      timeout: 180_000,
    });
  } catch (err) {
    // npm's last words say why; the rest is its stack.
    const text = err?.stderr?.toString().trim() || err?.message || String(err);
    const detail = text.split("\n").filter((l) => l.trim()).slice(-2).join(" ").trim();
    throw new Error(
      `TypeScript extensions need Node.js >= 22.6 or the jiti package, and installing jiti with ${npm} failed: ${detail}. ` +
        `Install it yourself (npm install -g jiti) or set PI_JITI to its directory.`,
    );
  }
  return join(target, "node_modules", "jiti");
}

async function getJiti(fromFile) {
  if (!jitiPromise) {
    jitiPromise = (async () => {
      const dir = findJiti(fromFile) ?? installJiti();
      const { createJiti } = await import(pathToFileURL(join(dir, "lib", "jiti.mjs")).href);
      const virtualModules = {};
      for (const name of VIRTUAL_NAMES) virtualModules[name] = shimFor(name)[2];
      return createJiti(import.meta.url, { moduleCache: false, virtualModules });
    })();
    // A failed install is not retried for every extension of this session.
    jitiPromise.catch(() => {});
  }
  return jitiPromise;
}

// Node refuses to strip types inside node_modules and for non-erasable syntax (enum,
// namespaces, parameter properties); jiti handles both.
const NEEDS_JITI = new Set([
  "ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING",
  "ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX",
  "ERR_UNKNOWN_FILE_EXTENSION",
  "ERR_INVALID_TYPESCRIPT_SYNTAX",
]);

let generation = 0;
async function importModule(path, fresh) {
  const isTs = /\.(ts|mts|cts|tsx)$/.test(path);
  if (!isTs || stripsTypes()) {
    registerHooks();
    try {
      const url = pathToFileURL(path).href + (fresh ? `?pi-restart=${++generation}` : "");
      const mod = await import(url);
      return mod.default ?? mod;
    } catch (err) {
      const viaJiti = isTs && (NEEDS_JITI.has(err?.code) || (err instanceof SyntaxError && /TypeScript|type|strip/i.test(err.message)));
      if (!viaJiti) throw err;
      if (process.env.PI_EXTENSION_DEBUG) log(`${path}: Node cannot load it (${err?.code ?? err?.message}); trying jiti`);
    }
  }
  const jiti = await getJiti(path);
  return jiti.import(path, { default: true });
}

// ---- runtime shared with the stand-in modules ------------------------------------------------

const extensions = new Map(); // ext number -> Extension
const runtime = {
  als,
  extensions,
  send,
  log,
  importModule,
  /** The extension whose code is running now (factories, handlers, tools, timers they set). */
  current() {
    return als.getStore();
  },
  columns: 80,
  theme: null,
  models: { all: [], available: [] },
};
globalThis[Symbol.for("pi.bridge")] = runtime;

/**
 * The session's models (`all`, `available`) from pi's `models` message, built the first time an
 * extension asks: `entries` lists them in order, each a whole model or a `[start, end]` range of
 * the built-in catalog, which pi wrote once as JSON to the file `catalog`; `auth` names the
 * providers whose models are available.
 */
function sessionModels({ catalog, entries = [], auth = [], nonChat, baseUrls = {} }) {
  let all, available, others;
  const builtins = () => {
    if (!catalog || !entries.some(Array.isArray)) return [];
    try {
      return JSON.parse(readFileSync(catalog, "utf8"));
    } catch (err) {
      log(`pi: could not read the model catalog ${catalog}: ${err?.message ?? err}`);
      return [];
    }
  };
  return {
    get all() {
      if (!all) {
        const catalogModels = builtins();
        all = entries.flatMap((e) => (Array.isArray(e) ? catalogModels.slice(e[0], e[1]) : [e]));
      }
      return all;
    },
    get available() {
      if (!available) {
        const keyed = new Set(auth);
        available = this.all.filter((m) => keyed.has(m.provider));
      }
      return available;
    },
    /** Image and classifier models (pi 1.6.0), with models.json base URLs, without headers. */
    get nonChat() {
      if (!others) {
        try {
          others = nonChat ? JSON.parse(readFileSync(nonChat, "utf8")) : [];
        } catch (err) {
          log(`pi: could not read the model catalog ${nonChat}: ${err?.message ?? err}`);
          others = [];
        }
        others = others.map(({ headers: _headers, ...m }) => (baseUrls[m.provider] ? { ...m, baseUrl: baseUrls[m.provider] } : m));
      }
      return others;
    },
    hasAuth: (provider) => auth.includes(provider),
  };
}

// ---- the protocol loop -----------------------------------------------------------------------

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  if (!line.trim()) return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  // Messages for the whole process.
  switch (msg.type) {
    case "resize":
      runtime.columns = msg.columns ?? runtime.columns;
      for (const ext of extensions.values()) ext.onResize();
      return;
    case "theme":
      runtime.theme = msg;
      for (const ext of extensions.values()) ext.onResize();
      return;
    case "view":
      runtime.view = { ...(runtime.view ?? {}), ...(msg.view ?? {}) };
      return;
    case "builtins":
      runtime.builtins = msg.tools ?? [];
      return;
    case "models":
      runtime.models = sessionModels(msg);
      return;
  }
  let ext = extensions.get(msg.ext);
  if (msg.type === "hello") {
    ext = new Extension(runtime, msg);
    extensions.set(msg.ext, ext);
    als.run(ext, () => ext.load());
    return;
  }
  if (!ext) return;
  als.run(ext, () => handleMessage(ext, msg));
});
lines.on("close", () => process.exit(0));
process.on("unhandledRejection", (err) => log(`Unhandled rejection: ${err?.stack ?? err}`));
process.on("uncaughtException", (err) => log(`Uncaught exception: ${err?.stack ?? err}`));
