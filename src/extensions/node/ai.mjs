// Stand-in for pi-ai (`@mariozechner/pi-ai`, `@earendil-works/pi-ai` and its `/compat`,
// `/models`, `/oauth` subpaths) for extensions run by pi's Node.js bridge. Model calls
// (`complete`, `stream`, `streamSimple`, the per-API stream functions) are made by pi itself,
// with pi's providers and credentials, and streamed back; `registerApiProvider` lets an
// extension implement an API that `registerProvider` models then use. Written by the pi binary
// into its cache.
import { randomBytes } from "node:crypto";

export { Type, StringEnum } from "./typebox.mjs";

const rt = () => globalThis[Symbol.for("pi.bridge")];
const current = () => {
  const ext = rt()?.current();
  if (!ext) throw new Error("model calls are only available inside an extension");
  return ext;
};

/** An async-iterable stream of events with a final result (pi-ai's EventStream). */
export class EventStream {
  constructor(isComplete = (e) => e?.type === "done" || e?.type === "error", extractResult = (e) => (e?.type === "done" ? e.message : e?.error)) {
    this.isComplete = isComplete;
    this.extractResult = extractResult;
    this.queue = [];
    this.waiting = [];
    this.done = false;
    this.finalResult = new Promise((resolve) => (this.resolveFinal = resolve));
  }
  push(event) {
    if (this.done) return;
    if (this.isComplete(event)) {
      this.done = true;
      this.resolveFinal(this.extractResult(event));
    }
    const waiter = this.waiting.shift();
    if (waiter) waiter({ value: event, done: false });
    else this.queue.push(event);
  }
  end(result) {
    this.done = true;
    if (result !== undefined) this.resolveFinal(result);
    for (const w of this.waiting.splice(0)) w({ value: undefined, done: true });
  }
  async *[Symbol.asyncIterator]() {
    while (true) {
      if (this.queue.length) {
        yield this.queue.shift();
        continue;
      }
      if (this.done) return;
      const next = await new Promise((resolve) => this.waiting.push(resolve));
      if (next.done) return;
      yield next.value;
    }
  }
  result() {
    return this.finalResult;
  }
}

export class AssistantMessageEventStream extends EventStream {}
export const createAssistantMessageEventStream = () => new AssistantMessageEventStream();

function plainContext(context) {
  const c = context ?? {};
  return JSON.parse(
    JSON.stringify({
      systemPrompt: c.systemPrompt ?? c.messages?.__pi?.systemPrompt,
      messages: (c.messages ?? []).filter((m) => m?.role !== "system"),
      tools: (c.tools ?? c.messages?.__pi?.tools ?? []).map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
    }),
  );
}

/** Streams a reply from `model` through pi's own providers. */
export function stream(model, context, options = {}) {
  const s = new AssistantMessageEventStream();
  const ext = current();
  const params = {
    model: JSON.parse(JSON.stringify(model ?? {})),
    context: plainContext(context),
    options: {
      apiKey: options.apiKey,
      headers: options.headers,
      maxTokens: options.maxTokens,
      temperature: options.temperature,
      reasoning: options.reasoning ?? options.thinkingLevel,
      sessionId: options.sessionId,
    },
  };
  ext.call("ai.stream", params, { signal: options.signal, onUpdate: (event) => s.push(event) }).then(
    (message) => {
      if (!s.done && message) s.push(message.stopReason === "error" || message.stopReason === "aborted" ? { type: "error", reason: message.stopReason, error: message } : { type: "done", reason: message.stopReason, message });
      s.end(message);
    },
    (err) => {
      const message = {
        role: "assistant",
        content: [],
        api: model?.api,
        provider: model?.provider,
        model: model?.id,
        usage: emptyUsage(),
        stopReason: options.signal?.aborted ? "aborted" : "error",
        errorMessage: err?.message ?? String(err),
        timestamp: Date.now(),
      };
      s.push({ type: "error", reason: message.stopReason, error: message });
      s.end(message);
    },
  );
  return s;
}
export const streamSimple = stream;

export async function complete(model, context, options) {
  return stream(model, context, options).result();
}
export const completeSimple = complete;

const viaApi = (api) => (model, context, options) => stream({ ...model, api }, context, options);
export const streamAnthropic = viaApi("anthropic-messages");
export const streamSimpleAnthropic = streamAnthropic;
export const streamOpenAICompletions = viaApi("openai-completions");
export const streamSimpleOpenAICompletions = streamOpenAICompletions;
export const streamOpenAIResponses = viaApi("openai-responses");
export const streamSimpleOpenAIResponses = streamOpenAIResponses;
export const streamGoogle = viaApi("google-generative-ai");
export const streamSimpleGoogle = streamGoogle;
export const anthropicMessagesApi = { api: "anthropic-messages", stream: streamAnthropic, streamSimple: streamAnthropic };
export const openAIResponsesApi = { api: "openai-responses", stream: streamOpenAIResponses, streamSimple: streamOpenAIResponses };
export const openAICompletionsApi = { api: "openai-completions", stream: streamOpenAICompletions, streamSimple: streamOpenAICompletions };
export const googleGenerativeAiApi = { api: "google-generative-ai", stream: streamGoogle, streamSimple: streamGoogle };

/** An API implemented by the extension, usable by the models its providers register. */
export function registerApiProvider(provider) {
  const ext = current();
  ext.apis.set(provider.api, provider);
  ext.registrationChanged();
}
export function unregisterApiProviders() {
  const ext = rt()?.current();
  if (ext) ext.apis.clear();
}
export const getApiProvider = (api) => rt()?.current()?.apis.get(api);
export const getApiProviders = () => [...(rt()?.current()?.apis.values() ?? [])];

export function getModel(provider, id) {
  return rt()?.models?.all?.find((m) => m.provider === provider && m.id === id);
}
export const getModels = (provider) => (rt()?.models?.all ?? []).filter((m) => m.provider === provider);
export const getProviders = () => [...new Set((rt()?.models?.all ?? []).map((m) => m.provider))];
export const modelsAreEqual = (a, b) => Boolean(a && b && a.provider === b.provider && a.id === b.id);
export const supportsXhigh = (model) => Boolean(model?.thinkingLevelMap?.xhigh);

const LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];
// xhigh and max exist only where the model maps them; a null mapping removes any level.
export const getSupportedThinkingLevels = (model) => {
  if (!model?.reasoning) return ["off"];
  const map = model.thinkingLevelMap ?? {};
  return LEVELS.filter((l) => map[l] !== null && (map[l] !== undefined || (l !== "xhigh" && l !== "max")));
};
export function clampThinkingLevel(model, level) {
  const supported = getSupportedThinkingLevels(model);
  if (supported.includes(level)) return level;
  const at = LEVELS.indexOf(level);
  if (at < 0) return supported[0] ?? "off";
  const up = LEVELS.slice(at).find((l) => supported.includes(l));
  return up ?? [...LEVELS.slice(0, at)].reverse().find((l) => supported.includes(l)) ?? supported[0] ?? "off";
}

export function emptyUsage() {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
}

export function calculateCost(model, usage) {
  const c = model?.cost ?? {};
  const cost = {
    input: ((c.input ?? 0) / 1e6) * (usage.input ?? 0),
    output: ((c.output ?? 0) / 1e6) * (usage.output ?? 0),
    cacheRead: ((c.cacheRead ?? 0) / 1e6) * (usage.cacheRead ?? 0),
    cacheWrite: ((c.cacheWrite ?? 0) / 1e6) * (usage.cacheWrite ?? 0),
  };
  cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
  usage.cost = cost;
  return cost;
}

export function uuidv7() {
  const bytes = randomBytes(16);
  const ts = BigInt(Date.now());
  for (let i = 0; i < 6; i++) bytes[i] = Number((ts >> BigInt(8 * (5 - i))) & 0xffn);
  bytes[6] = (bytes[6] & 0x0f) | 0x70;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// 1.x transcripts carry the system prompt and tools in system messages; pi hands providers
// the 0.x shape with both attached, so these read either.
export const collapseSystemMessages = (context) => context;
export function getCurrentSystemPrompt(messages) {
  if (messages?.__pi) return messages.__pi.systemPrompt;
  const sys = (messages ?? []).filter((m) => m?.role === "system");
  return sys.length ? sys.map((m) => (typeof m.content === "string" ? m.content : (m.content ?? []).map((b) => b.text ?? "").join(""))).join("\n\n") : undefined;
}
export function getCurrentTools(messages) {
  if (messages?.__pi) return messages.__pi.tools ?? [];
  const sys = (messages ?? []).filter((m) => m?.role === "system" && Array.isArray(m.tools));
  return sys.length ? sys[sys.length - 1].tools : [];
}

export function parseStreamingJson(text) {
  if (!text) return {};
  try {
    return JSON.parse(text);
  } catch {
    for (const suffix of ['"}', "}", '"]}', "]}", '""}']) {
      try {
        return JSON.parse(text + suffix);
      } catch {}
    }
    return {};
  }
}

export function validateToolArguments(tool, toolCall) {
  return toolCall?.arguments ?? {};
}
export const validateToolCall = (tools, toolCall) => validateToolArguments(tools?.find?.((t) => t.name === toolCall?.name), toolCall);

export const isContextOverflow = (message) => /context|too long|maximum.*tokens/i.test(message?.errorMessage ?? "");

const ENV_KEYS = {
  anthropic: "ANTHROPIC_API_KEY", openai: "OPENAI_API_KEY", google: "GEMINI_API_KEY", groq: "GROQ_API_KEY",
  xai: "XAI_API_KEY", openrouter: "OPENROUTER_API_KEY", mistral: "MISTRAL_API_KEY", cerebras: "CEREBRAS_API_KEY",
};
export const getEnvApiKey = (provider) => process.env[ENV_KEYS[provider] ?? `${String(provider).toUpperCase().replace(/-/g, "_")}_API_KEY`];

// OAuth is pi's (`/login`); extensions see no providers of their own here.
export const getOAuthProviders = () => [];
export const getOAuthProvider = () => undefined;
export const getOAuthApiKey = async () => undefined;
export const registerOAuthProvider = () => {};
