"""Extensions: pi's TypeScript extension API as seen from outside, through what the model is
sent, what is stored and what the extension itself records (pi-mono extensions-*.test.ts,
docs/extensions.md of the 0.73.1 package)."""
from cases.common import call
from harness import Case

E = "extensions."
CMP = ("exit", "stdout", "stderr", "requests", "sessions")


def ext(body, head='import * as fs from "node:fs";\n'):
    return head + "export default function (pi) {\n" + body + "\n}\n"


def ecase(id, body, argv=("-p", "hi"), turns=("ok",), compare=CMP, where="cwd/ext.ts", load=True, **kw):
    files = dict(kw.pop("files", {}))
    files[where] = ext(body)
    a = (["-e", "./ext.ts"] if load and where == "cwd/ext.ts" else []) + list(argv)
    return Case(id, argv=a, files=files, turns=list(turns), compare=compare, **kw)


CASES = [
    ecase(E + "register-tool", """
  pi.registerTool({
    name: "greet", label: "Greet", description: "Greets someone by name.",
    parameters: { type: "object", properties: { name: { type: "string", description: "Who" } }, required: ["name"] },
    async execute(toolCallId, params) {
      return { content: [{ type: "text", text: "Hello, " + params.name + "!" }], details: { greeted: params.name } };
    },
  });""", turns=[{"content": [call("greet", {"name": "Ada"})]}, "greeted"]),
    ecase(E + "tool-throws", """
  pi.registerTool({
    name: "boom", label: "Boom", description: "Always fails.",
    parameters: { type: "object", properties: {} },
    async execute() { throw new Error("kaboom from the tool"); },
  });""", turns=[{"content": [call("boom", {})]}, "it failed"]),
    ecase(E + "tool-invalid-args", """
  pi.registerTool({
    name: "typed", label: "Typed", description: "Needs a number.",
    parameters: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
    async execute(id, p) { return { content: [{ type: "text", text: "n=" + p.n }] }; },
  });""", turns=[{"content": [call("typed", {"n": "seven"})]}, "done"]),
    ecase(E + "command", """
  pi.registerCommand("hello", {
    description: "Say hello",
    handler: async (args, ctx) => { pi.sendUserMessage("Hello " + args); },
  });""", argv=("-p", "/hello world")),
    ecase(E + "before-agent-start-system-prompt", """
  pi.on("before_agent_start", async (event) => ({ systemPrompt: event.systemPrompt + "\\n\\nEXTENSION RULE" }));"""),
    ecase(E + "before-agent-start-message", """
  pi.on("before_agent_start", async () => ({ message: { customType: "ctx", content: "injected context", display: true } }));"""),
    ecase(E + "tool-call-block", """
  pi.on("tool_call", async (event) => event.toolName === "bash" ? { block: true, reason: "bash is not allowed" } : undefined);""",
          turns=[{"content": [call("bash", {"command": "echo hi"})]}, "blocked"]),
    ecase(E + "tool-call-mutate-input", """
  pi.on("tool_call", async (event) => { if (event.toolName === "bash") event.input.command = "echo rewritten"; });""",
          turns=[{"content": [call("bash", {"command": "echo original"})]}, "done"]),
    ecase(E + "tool-result-patch", """
  pi.on("tool_result", async (event) => ({ content: [{ type: "text", text: "patched: " + event.content[0].text }] }));""",
          turns=[{"content": [call("bash", {"command": "echo raw"})]}, "done"]),
    ecase(E + "input-transform", """
  pi.on("input", async (event) => ({ action: "transform", text: event.text.toUpperCase() }));""", argv=("-p", "make me loud")),
    ecase(E + "input-handled", """
  pi.on("input", async (event) => ({ action: "handled" }));""", argv=("-p", "swallowed")),
    ecase(E + "context-filter", """
  pi.on("context", async (event) => ({ messages: event.messages.filter((m) => m.role !== "assistant") }));""",
          turns=[{"content": [call("bash", {"command": "echo x"})]}, "done"]),
    ecase(E + "before-provider-request", """
  pi.on("before_provider_request", (event) => ({ ...event.payload, temperature: 0.25 }));"""),
    ecase(E + "append-entry", """
  pi.on("session_start", async () => { pi.appendEntry("my-state", { count: 1 }); });"""),
    ecase(E + "send-message", """
  pi.on("session_start", async () => { pi.sendMessage({ customType: "note", content: "a note", display: true }); });"""),
    ecase(E + "session-name-and-label", """
  pi.on("agent_end", async (event, ctx) => {
    pi.setSessionName("named by extension");
    const leaf = ctx.sessionManager.getLeafEntry();
    if (leaf) pi.setLabel(leaf.id, "labelled");
  });"""),
    ecase(E + "flag", """
  pi.registerFlag("plan", { description: "Plan mode", type: "boolean", default: false });
  pi.on("before_agent_start", async (event) => pi.getFlag("plan") ? ({ systemPrompt: event.systemPrompt + "\\nPLAN MODE" }) : undefined);""",
          argv=("--plan", "-p", "hi")),
    ecase(E + "flag-string", """
  pi.registerFlag("persona", { description: "Persona", type: "string", default: "none" });
  pi.on("before_agent_start", async (event) => ({ systemPrompt: event.systemPrompt + "\\nPERSONA=" + pi.getFlag("persona") }));""",
          argv=("--persona", "pirate", "-p", "hi")),
    ecase(E + "set-active-tools", """
  pi.on("session_start", async () => { pi.setActiveTools(["read"]); });"""),
    ecase(E + "get-tools", """
  pi.on("session_start", async () => {
    fs.writeFileSync("tools.json", JSON.stringify({ active: pi.getActiveTools(), all: pi.getAllTools().map((t) => t.name ?? t) }));
  });""", compare=CMP + ("files",)),
    ecase(E + "register-provider", """
  pi.registerProvider("extprov", {
    baseUrl: "http://127.0.0.1:" + process.env.MOCK_PORT + "/v1", api: "openai-completions", apiKey: "ext-key",
    models: [{ id: "ext-model", name: "Ext Model", reasoning: false, input: ["text"],
               cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 8000, maxTokens: 1000 }],
  });""", model="extprov/ext-model", env={"MOCK_PORT": "{port}"}),
    ecase(E + "event-order", """
  const log = (name, extra) => fs.appendFileSync("events.log", JSON.stringify({ name, ...extra }) + "\\n");
  for (const name of ["session_start", "before_agent_start", "agent_start", "turn_start", "message_start", "message_end",
                      "tool_call", "tool_execution_start", "tool_execution_end", "tool_result", "turn_end", "agent_end",
                      "session_shutdown", "context", "input", "model_select"]) {
    pi.on(name, async (event) => log(name, { role: event.message?.role, tool: event.toolName }));
  }""", turns=[{"content": [call("bash", {"command": "echo x"})]}, "done"], compare=CMP + ("files",)),
    ecase(E + "exec", """
  pi.registerCommand("run", { description: "run", handler: async () => {
    const r = await pi.exec("sh", ["-c", "echo out; echo err >&2; exit 4"]);
    pi.sendUserMessage("exec: " + JSON.stringify({ stdout: r.stdout, stderr: r.stderr, code: r.code }));
  } });""", argv=("-p", "/run")),
    ecase(E + "notify-print-mode", """
  pi.on("session_start", async (event, ctx) => { ctx.ui.notify("hello from notify", "info"); });"""),
    ecase(E + "has-ui-print", """
  pi.on("session_start", async (event, ctx) => {
    fs.writeFileSync("ctx.json", JSON.stringify({ hasUI: ctx.hasUI, cwd: ctx.cwd, model: ctx.model?.id }));
  });""", compare=CMP + ("files",)),
    ecase(E + "throws-on-load", """
  throw new Error("broken at load time");"""),
    Case(E + "syntax-error", argv=["-e", "./ext.ts", "-p", "hi"], files={"cwd/ext.ts": "export default function (pi) {\n  this is not code\n"},
         turns=["ok"], compare=CMP),
    Case(E + "no-default-export", argv=["-e", "./ext.ts", "-p", "hi"], files={"cwd/ext.ts": "export const x = 1;\n"},
         turns=["ok"], compare=CMP),
    ecase(E + "typescript-syntax", """
  interface Greeting { text: string }
  const g: Greeting = { text: "typed" };
  pi.on("before_agent_start", async (event: any) => ({ systemPrompt: event.systemPrompt + "\\n" + g.text }));"""),
    ecase(E + "typescript-without-jiti", """
  pi.on("before_agent_start", async (event) => ({ systemPrompt: event.systemPrompt + "\\nLOADED" }));""",
          env={"PI_JITI": None}, note="no jiti to borrow: ours needs Node >= 22.6 for .ts extensions, pi runs them on Node 20"),
    ecase(E + "discovered-global", """
  pi.on("before_agent_start", async (event) => ({ systemPrompt: event.systemPrompt + "\\nGLOBAL EXT" }));""",
          where="agent/extensions/global.ts"),
    ecase(E + "discovered-project", """
  pi.on("before_agent_start", async (event) => ({ systemPrompt: event.systemPrompt + "\\nPROJECT EXT" }));""",
          where="cwd/.pi/extensions/project.ts", follows="1.x",
          note="1.x: .pi/extensions load only when the folder is trusted"),
    ecase(E + "no-extensions-flag", """
  pi.on("before_agent_start", async (event) => ({ systemPrompt: event.systemPrompt + "\\nSHOULD NOT APPEAR" }));""",
          where="agent/extensions/global.ts", argv=("--no-extensions", "-p", "hi")),
    ecase(E + "settings-extensions-path", """
  pi.on("before_agent_start", async (event) => ({ systemPrompt: event.systemPrompt + "\\nFROM SETTINGS" }));""",
          where="root/exts/s.ts", settings={"extensions": ["{root}/exts/s.ts"]}),
    ecase(E + "commands-in-rpc", """
  pi.registerCommand("hello", { description: "Say hello", handler: async () => {} });""", argv=(),
          rpc={"script": [{"send": {"id": "c", "type": "get_commands"}}, {"wait": {"type": "response", "id": "c"}}],
               "argv": ["-e", "./ext.ts"]}, compare=("rpc", "exit")),
    ecase(E + "custom-message-renderer-type", """
  pi.registerCommand("note", { description: "note", handler: async () => {
    pi.sendMessage({ customType: "note", content: "from command", display: true, details: { a: 1 } }, { triggerTurn: true });
  } });""", argv=("-p", "/note")),
]

# ecase with an rpc script must not also run argv.
for _c in CASES:
    if _c.rpc is not None:
        _c.runs = []
