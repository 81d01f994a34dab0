// An editor that offers terminals (clientCapabilities.terminal), driving `pi acp` with the
// official TypeScript ACP SDK (issue 32): it runs the commands pi asks it to (terminal/create,
// output, wait_for_exit, kill, release) and checks the tool call shows that terminal. First a
// command that prints and exits 3, then one that never ends, cancelled.
// Usage: node acp_terminal_client.mjs SDK_DIR SPEC.json. Prints "ok" and what it saw as JSON.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const [sdkDir, specPath] = process.argv.slice(2);
const { client, ndJsonStream } = await import(
  pathToFileURL(`${sdkDir}/node_modules/@agentclientprotocol/sdk/dist/v1/stable/acp.js`).href
);
const spec = JSON.parse(readFileSync(specPath, "utf8"));

function check(cond, what) {
  if (!cond) {
    console.log(`FAILED: ${what} (seen: ${JSON.stringify(seen)})`);
    process.exit(1);
  }
}

const seen = { created: [], killed: [], released: [] };
const terminals = new Map();
let onCreated = () => {};
let next = 0;

const child = spawn(spec.program, spec.args, { cwd: spec.cwd, env: spec.env, stdio: ["pipe", "pipe", "inherit"] });
const updates = [];
const app = client()
  .onNotification("session/update", (ctx) => updates.push(ctx.params.update))
  .onRequest("terminal/create", (ctx) => {
    const p = ctx.params;
    const env = { ...process.env };
    for (const v of p.env ?? []) env[v.name] = v.value;
    const proc = spawn(p.command, p.args ?? [], { cwd: p.cwd ?? spec.cwd, env });
    const t = { output: "", exit: null };
    proc.stdout.on("data", (d) => (t.output += d));
    proc.stderr.on("data", (d) => (t.output += d));
    t.exited = new Promise((resolve) =>
      proc.on("exit", (code, signal) => {
        t.exit = { exitCode: code, signal };
        resolve(t.exit);
      }),
    );
    t.proc = proc;
    const terminalId = `term-${++next}`;
    terminals.set(terminalId, t);
    seen.created.push({ terminalId, command: p.command, args: p.args, cwd: p.cwd, env: p.env });
    onCreated(terminalId);
    return { terminalId };
  })
  .onRequest("terminal/output", (ctx) => {
    const t = terminals.get(ctx.params.terminalId);
    return { output: t.output, truncated: false, exitStatus: t.exit };
  })
  .onRequest("terminal/wait_for_exit", async (ctx) => terminals.get(ctx.params.terminalId).exited)
  .onRequest("terminal/kill", (ctx) => {
    seen.killed.push(ctx.params.terminalId);
    terminals.get(ctx.params.terminalId).proc.kill("SIGKILL");
    return {};
  })
  .onRequest("terminal/release", (ctx) => {
    seen.released.push(ctx.params.terminalId);
    return {};
  });
const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: { terminal: true } });
  check(init.protocolVersion === 1, "initialize");
  const { sessionId } = await ctx.request("session/new", { cwd: spec.cwd, mcpServers: [] });
  const prompt = (text) => ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });

  let r = await prompt("run it");
  check(r.stopReason === "end_turn", `the prompt ends its turn: ${r.stopReason}`);
  check(seen.created.length === 1, `one terminal: ${JSON.stringify(seen.created)}`);
  const id = seen.created[0].terminalId;
  const shown = updates
    .filter((u) => u.sessionUpdate === "tool_call_update")
    .flatMap((u) => u.content ?? [])
    .filter((c) => c.type === "terminal");
  check(shown.length > 0 && shown.every((c) => c.terminalId === id), `the call shows the terminal: ${JSON.stringify(updates)}`);
  const end = updates.filter((u) => u.sessionUpdate === "tool_call_update").pop();
  check(end.status === "failed", `exit code 3 fails the call: ${JSON.stringify(end)}`);
  check(seen.released.includes(id), "the terminal is released");

  const created = new Promise((resolve) => (onCreated = resolve));
  const running = prompt("run forever");
  await created;
  await ctx.notify("session/cancel", { sessionId });
  r = await running;
  check(r.stopReason === "cancelled", `cancel answers cancelled: ${r.stopReason}`);
  // pi does not wait long for the editor's answers after a cancel: the kill and release
  // requests may be handled here just after the prompt's answer.
  for (let i = 0; i < 100 && !seen.released.includes(seen.created[1].terminalId); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  check(seen.killed.includes(seen.created[1].terminalId), "the cancelled command is killed");
  check(seen.released.includes(seen.created[1].terminalId), "and its terminal released");
});
child.stdin.end();
await new Promise((r) => child.on("exit", r));
console.log("ok");
console.log(JSON.stringify(seen));
