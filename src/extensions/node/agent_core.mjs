// Stand-in for pi-agent-core (`@mariozechner/pi-agent-core`, `@earendil-works/pi-agent-core`)
// for extensions run by pi's Node.js bridge. Extensions mostly import its types; the runtime
// names they touch are here: an `Agent` that runs model calls through pi (no tools of its own)
// and the small message helpers. Written by the pi binary into its cache.
import { complete } from "./ai.mjs";

export class Agent {
  constructor(options = {}) {
    this.state = {
      systemPrompt: options.initialState?.systemPrompt ?? "",
      model: options.initialState?.model,
      thinkingLevel: options.initialState?.thinkingLevel ?? "off",
      tools: options.initialState?.tools ?? [],
      messages: [...(options.initialState?.messages ?? [])],
      isStreaming: false,
    };
    this.listeners = new Set();
  }
  subscribe(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
  emit(event) {
    for (const fn of this.listeners) fn(event);
  }
  setSystemPrompt(p) {
    this.state.systemPrompt = p;
  }
  setModel(m) {
    this.state.model = m;
  }
  setThinkingLevel(l) {
    this.state.thinkingLevel = l;
  }
  setTools(t) {
    this.state.tools = t;
  }
  replaceMessages(m) {
    this.state.messages = [...m];
  }
  appendMessage(m) {
    this.state.messages.push(m);
  }
  abort() {
    this.controller?.abort();
  }
  async prompt(input) {
    const user = typeof input === "string" ? { role: "user", content: [{ type: "text", text: input }], timestamp: Date.now() } : input;
    this.state.messages.push(user);
    this.controller = new AbortController();
    this.state.isStreaming = true;
    this.emit({ type: "agent_start" });
    try {
      const reply = await complete(
        this.state.model,
        { systemPrompt: this.state.systemPrompt, messages: this.state.messages, tools: this.state.tools },
        { signal: this.controller.signal, reasoning: this.state.thinkingLevel },
      );
      this.state.messages.push(reply);
      this.emit({ type: "message_end", message: reply });
    } finally {
      this.state.isStreaming = false;
      this.emit({ type: "agent_end", messages: this.state.messages });
    }
  }
  async waitForIdle() {}
}

export const agentLoop = () => {
  throw new Error("agentLoop is not available to extensions run by pi's Node.js bridge");
};
export const agentLoopContinue = agentLoop;
