// Drives `pi acp` through a whole session with the official TypeScript ACP SDK
// (@agentclientprotocol/sdk 2.x: client() … connectWith), as an editor would (issue 32).
// Usage: node acp_client.mjs SDK_DIR SPEC.json (the same spec as acp_client.py). Prints "ok"
// when every step saw what it should; the failed step otherwise, with exit 1.
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
    console.log(`FAILED: ${what}`);
    process.exit(1);
  }
}

async function withPi(op) {
  const child = spawn(spec.program, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    stdio: ["pipe", "pipe", "inherit"],
  });
  const updates = [];
  let onChunk = () => {};
  const app = client()
    .onNotification("session/update", (ctx) => {
      updates.push(ctx.params.update);
      if (ctx.params.update.sessionUpdate === "agent_message_chunk") onChunk();
    })
    .onRequest("session/request_permission", () => ({ outcome: { outcome: "cancelled" } }));
  const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const result = await app.connectWith(stream, (ctx) =>
    op(ctx, updates, (f) => {
      onChunk = f;
    }),
  );
  child.stdin.end();
  await new Promise((r) => child.on("exit", r));
  return result;
}

const kinds = (updates) => updates.map((u) => u.sessionUpdate);

const sid = await withPi(async (ctx, updates, setOnChunk) => {
  const init = await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  check(init.protocolVersion === 1, "initialize answers protocol version 1");
  check(init.agentCapabilities.loadSession === true, "initialize offers session/load");
  const mcp = { name: spec.mcp.name, command: spec.mcp.command, args: spec.mcp.args, env: [] };
  const created = await ctx.request("session/new", { cwd: spec.cwd, mcpServers: [mcp] });
  const sessionId = created.sessionId;
  const prompt = (text) =>
    ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });

  let r = await prompt("change beta");
  check(r.stopReason === "end_turn", `the edit prompt ends its turn: ${r.stopReason}`);
  const call = updates.find((u) => u.sessionUpdate === "tool_call");
  check(call && call.kind === "edit", `a tool call of kind edit: ${kinds(updates)}`);
  const diff = updates
    .filter((u) => u.sessionUpdate === "tool_call_update")
    .flatMap((u) => u.content ?? [])
    .find((c) => c.type === "diff");
  check(
    diff && diff.oldText === "alpha\nbeta\n" && diff.newText === "alpha\ngamma\n",
    `the edit shown as a diff: ${JSON.stringify(diff)}`,
  );
  const commands = updates.filter((u) => u.sessionUpdate === "available_commands_update").pop();
  check(
    commands && commands.availableCommands.some((c) => c.name === "hello"),
    "the prompt template is a slash command",
  );

  const firstChunk = new Promise((resolve) => setOnChunk(resolve));
  const running = prompt("talk");
  await firstChunk;
  await ctx.notify("session/cancel", { sessionId });
  r = await running;
  check(r.stopReason === "cancelled", `cancel answers cancelled: ${r.stopReason}`);
  r = await prompt("again");
  check(r.stopReason === "end_turn", "a prompt after cancel runs");

  await ctx.request("session/set_mode", { sessionId, modeId: "read-only" });
  await ctx.request("session/set_config_option", { sessionId, configId: "thought_level", value: "off" });
  const opts = await ctx.request("session/set_config_option", {
    sessionId,
    configId: "model",
    value: "mock/mock-model",
  });
  check(opts.configOptions[0].currentValue === "mock/mock-model", "the model option");
  r = await prompt("/hello world");
  check(r.stopReason === "end_turn", "the slash command runs");
  return sessionId;
});

await withPi(async (ctx, updates) => {
  await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  const listed = await ctx.request("session/list", { cwd: spec.cwd });
  check(listed.sessions.some((s) => s.sessionId === sid), "session/list has the session");
  await ctx.request("session/load", { sessionId: sid, cwd: spec.cwd, mcpServers: [] });
  const ks = kinds(updates);
  check(ks.filter((k) => k === "user_message_chunk").length === 4, `the whole conversation is replayed: ${ks}`);
  check(ks.includes("tool_call") && ks.includes("tool_call_update"), `tool calls are replayed: ${ks}`);
});
console.log("ok");
