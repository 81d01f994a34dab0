#!/usr/bin/env python3
"""make acp-check: drive our pi through a whole editor session with pi-acp, the ACP adapter
editors such as Zed use, and natively (`pi acp`, issue 32: no Node on the PATH pi sees), and
print a pass/fail table per step with a column for each.

    python3 scripts/acp_check.py [--pi target/debug/pi] [--ref 1.6.0] [--keep]

pi-acp (PI_ACP_VERSION, 0.0.34) is installed once with npm into the conformance cache folder
(scripts/conformance/install.py: ~/.cache/pi-conformance/pi-acp-<version>), so the first run
needs the npm registry; later runs are offline. A scripted mock LLM (scripts/conformance/mock.py)
answers; HOME and PI_CODING_AGENT_DIR are scratch folders. `--ref 1.6.0` also drives the
TypeScript pi 1.6.0 (installed the same way) and prints its column beside ours, so a failing
step can be told apart from a pi-acp limitation. Exits 1 if a step fails for ours.

Steps: initialize; session/new (model and thinking-mode lists, slash commands offered); a prompt
whose edit and write tool calls are shown as diffs; cancelling a streaming prompt; a prompt after
the cancel; a model switch (the next request goes to the new model); a mode (thinking level)
switch; the /session, /compact and /export commands; session/list; session/load in a fresh
pi-acp (the history replayed, the model restored).
"""
import argparse
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "conformance"))
sys.dont_write_bytecode = True  # keep the source tree clean

import install  # noqa: E402
from mock import Mock  # noqa: E402

PI_ACP_VERSION = os.environ.get("PI_ACP_VERSION", "0.0.34")
SUMMARY = "## Goal\nSUMMARY of the session"
TURNS = [
    {"match": "edit please", "content": [
        {"type": "text", "text": "Editing the file."},
        {"type": "tool_call", "name": "edit",
         "arguments": {"path": "notes.txt", "edits": [{"oldText": "apple", "newText": "banana"}]}}]},
    {"match": "Successfully replaced", "content": "Edited it."},
    {"match": "write please", "content": [
        {"type": "tool_call", "name": "write", "arguments": {"path": "new.txt", "content": "fresh\n"}}]},
    {"match": "Successfully wrote", "content": "Wrote it."},
    {"match": "long please", "content": "This reply is long and slow and will be cancelled before it ends.",
     "chunk_chars": 4, "stall_ms": 8000},
    {"match": "after cancel", "content": "Back after cancel."},
    {"match": "second model", "content": "Hello from model two."},
    {"match_body": "<conversation>", "content": SUMMARY},
]


def install_pi_acp():
    d = os.path.join(install.cache_dir(), "pi-acp-" + PI_ACP_VERSION)
    entry = os.path.join(d, "node_modules", "pi-acp", "dist", "index.js")
    manifest = os.path.join(d, "node_modules", "pi-acp", "package.json")
    version = None
    if os.path.exists(manifest):
        with open(manifest) as f:
            version = json.load(f).get("version")
    if version != PI_ACP_VERSION:
        print("installing pi-acp@%s into %s ..." % (PI_ACP_VERSION, d), file=sys.stderr, flush=True)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "package.json"), "w") as f:
            json.dump({"name": "pi-acp-check", "private": True}, f)
        subprocess.run(["npm", "install", "--prefix", d, "--no-audit", "--no-fund", "--loglevel=error",
                        "pi-acp@" + PI_ACP_VERSION], check=True)
    return entry


class Acp:
    """One pi-acp process speaking ACP (JSON-RPC, one message a line) on stdio."""

    def __init__(self, argv, cwd, env):
        self.p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.q = queue.Queue()
        self.updates = []
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self.p.stderr.read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            try:
                self.q.put(json.loads(line))
            except ValueError:
                pass
        self.q.put(None)

    def _send(self, obj):
        self.p.stdin.write((json.dumps(obj) + "\n").encode())
        self.p.stdin.flush()

    def notify(self, method, params):
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def start(self, method, params):
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def pump(self, until, timeout):
        """Reads messages (collecting session updates, answering agent requests) until
        `until(message)` is true; returns that message or None on timeout or exit."""
        deadline = time.time() + timeout
        while True:
            try:
                m = self.q.get(timeout=max(0.01, deadline - time.time()))
            except queue.Empty:
                return None
            if m is None:
                return None
            if m.get("method") == "session/update":
                self.updates.append(m["params"]["update"])
            elif "method" in m and "id" in m:
                self._send({"jsonrpc": "2.0", "id": m["id"], "result": None})
            if until(m):
                return m

    def request(self, method, params, timeout=30):
        i = self.start(method, params)
        return self.pump(lambda m: m.get("id") == i and ("result" in m or "error" in m), timeout)

    def settle(self, seconds):
        self.pump(lambda m: False, seconds)

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.p.kill()
            self.p.wait()


def chunks(updates, kind="agent_message_chunk"):
    return "".join(u.get("content", {}).get("text", "") for u in updates if u.get("sessionUpdate") == kind)


def diffs(updates):
    return [c for u in updates if u.get("sessionUpdate") in ("tool_call", "tool_call_update")
            for c in (u.get("content") or []) if c.get("type") == "diff"]


def drive(pi_command, path_prefix, node, entry, native=False):
    """Runs every step against one pi, through pi-acp or (`native`) as `pi acp` itself;
    returns [(step, ok, detail)]."""
    results = []

    def check(step, ok, detail=""):
        results.append((step, bool(ok), detail if not ok else ""))

    home = tempfile.mkdtemp(prefix="pi-acp-check-")
    mock = Mock(TURNS).start()
    try:
        agent = os.path.join(home, ".pi", "agent")
        work = os.path.join(home, "work")
        os.makedirs(agent)
        os.makedirs(work)
        with open(os.path.join(work, "notes.txt"), "w") as f:
            f.write("an apple a day\n")
        with open(os.path.join(agent, "models.json"), "w") as f:
            json.dump({"providers": {"mock": {
                "baseUrl": "http://127.0.0.1:%d/v1" % mock.port, "api": "openai-completions", "apiKey": "k",
                "models": [{"id": "mock-model", "reasoning": True}, {"id": "mock-two"}]}}}, f)
        with open(os.path.join(agent, "settings.json"), "w") as f:
            # a small kept tail, so /compact has something to summarize
            json.dump({"defaultProvider": "mock", "defaultModel": "mock-model", "quietStartup": True,
                       "compaction": {"keepRecentTokens": 40}}, f)
        argv = [node, entry]
        path = os.pathsep.join(path_prefix + [os.environ.get("PATH", "")])
        if native:
            # Ours alone: nothing else on the PATH pi sees, so no Node.
            argv = [pi_command, "acp"]
            path = os.path.join(home, "bin")
            os.makedirs(path)
        env = {"PATH": path, "HOME": home,
               "PI_CODING_AGENT_DIR": agent, "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1",
               "PI_TELEMETRY": "0", "PI_ACP_PI_COMMAND": pi_command}
        acp = Acp(argv, work, env)
        r = acp.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        check("initialize", r and r.get("result", {}).get("protocolVersion") == 1, json.dumps(r)[:200])

        r = acp.request("session/new", {"cwd": work, "mcpServers": []})
        res = (r or {}).get("result") or {}
        sid = res.get("sessionId")
        check("session/new", sid, json.dumps(r)[:200])
        if not sid:
            acp.close()
            return results
        models = res.get("models") or {}
        ids = [m.get("modelId") for m in models.get("availableModels", [])]
        check("new: model list", ids == ["mock/mock-model", "mock/mock-two"]
              and models.get("currentModelId") == "mock/mock-model", json.dumps(models)[:200])
        modes = res.get("modes") or {}
        mode_ids = [m.get("id") for m in modes.get("availableModes", [])]
        current = modes.get("currentModeId")
        if native:
            # Ours offers the thinking level as a config option; modes are the sandbox.
            level = [o for o in res.get("configOptions", []) if o.get("id") == "thought_level"][:1]
            modes = level[0] if level else {}
            mode_ids = [o.get("value") for o in modes.get("options", [])]
            current = modes.get("currentValue")
        check("new: thinking modes", mode_ids[:1] == ["off"] and "high" in mode_ids
              and current == "medium", json.dumps(modes)[:200])
        acp.pump(lambda m: m.get("params", {}).get("update", {}).get("sessionUpdate") == "available_commands_update", 10)
        offered = [c.get("name") for u in acp.updates if u.get("sessionUpdate") == "available_commands_update"
                   for c in u.get("availableCommands", [])]
        check("new: slash commands", "compact" in offered and "session" in offered, json.dumps(offered)[:200])

        def prompt(text, timeout=30):
            acp.updates.clear()
            return acp.request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}, timeout)

        def stop_reason(r):
            return ((r or {}).get("result") or {}).get("stopReason")

        r = prompt("edit please")
        d = diffs(acp.updates)
        with open(os.path.join(work, "notes.txt")) as f:
            edited = f.read()
        check("prompt: edit shown as diff", stop_reason(r) == "end_turn" and edited == "an banana a day\n"
              and any(x.get("path", "").endswith("notes.txt") and x.get("oldText") == "an apple a day\n"
                      and x.get("newText") == "an banana a day\n" for x in d),
              "stop=%s file=%r diffs=%s" % (stop_reason(r), edited, json.dumps(d)[:150]))
        r = prompt("write please")
        d = diffs(acp.updates)
        check("prompt: write shown as diff", stop_reason(r) == "end_turn"
              and any(x.get("path", "").endswith("new.txt") and x.get("newText") == "fresh\n" for x in d),
              "stop=%s diffs=%s" % (stop_reason(r), json.dumps(d)[:150]))

        acp.updates.clear()
        i = acp.start("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "long please"}]})
        first = acp.pump(lambda m: m.get("params", {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk", 20)
        t0 = time.time()
        acp.notify("session/cancel", {"sessionId": sid})
        r = acp.pump(lambda m: m.get("id") == i and ("result" in m or "error" in m), 20)
        check("cancel a streaming prompt", first and stop_reason(r) == "cancelled" and time.time() - t0 < 5,
              "first chunk=%s answer=%s" % (bool(first), json.dumps(r)[:150]))
        r = prompt("after cancel")
        check("prompt after cancel", stop_reason(r) == "end_turn" and "Back after cancel." in chunks(acp.updates),
              json.dumps(r)[:150])

        r = acp.request("session/set_config_option", {"sessionId": sid, "configId": "model", "value": "mock/mock-two"})
        opts = ((r or {}).get("result") or {}).get("configOptions") or []
        current = [o.get("currentValue") for o in opts if o.get("id") == "model"]
        before = len(mock.requests)
        r = prompt("second model")
        sent = [q["body"].get("model") for q in mock.requests[before:]]
        check("model switch", current == ["mock/mock-two"] and stop_reason(r) == "end_turn" and sent == ["mock-two"],
              "option=%s sent to %s" % (current, sent))
        acp.updates.clear()
        r = acp.request("session/set_mode", {"sessionId": sid, "modeId": "off"})
        acp.settle(0.5)
        mode = [u.get("currentModeId") for u in acp.updates if u.get("sessionUpdate") == "current_mode_update"]
        check("mode switch", r and "result" in r and mode[-1:] == ["off"], "answer=%s modes=%s" % (json.dumps(r)[:100], mode))

        r = prompt("/session")
        check("/session", stop_reason(r) == "end_turn" and sid in chunks(acp.updates), chunks(acp.updates)[:150])
        r = prompt("/compact", timeout=60)
        check("/compact", stop_reason(r) == "end_turn" and "Compaction completed" in chunks(acp.updates),
              "%s %s" % (json.dumps(r)[:150], chunks(acp.updates)[:100]))
        r = prompt("/export")
        check("/export", stop_reason(r) == "end_turn" and "exported" in chunks(acp.updates), json.dumps(r)[:150])
        r = acp.request("session/list", {"cwd": work})
        listed = [s.get("sessionId") for s in ((r or {}).get("result") or {}).get("sessions", [])]
        check("session/list", sid in listed, json.dumps(r)[:150])
        acp.close()

        acp = Acp(argv, work, env)
        acp.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        r = acp.request("session/load", {"sessionId": sid, "cwd": work, "mcpServers": []})
        acp.settle(1.5)
        users = [u["content"].get("text") for u in acp.updates if u.get("sessionUpdate") == "user_message_chunk"]
        said = chunks(acp.updates)
        opts = ((r or {}).get("result") or {}).get("configOptions") or []
        current = [o.get("currentValue") for o in opts if o.get("id") == "model"]
        # what the model still sees: the kept tail after the /compact above
        check("load: history replayed",
              r and "result" in r and users[-2:] == ["after cancel", "second model"]
              and said.endswith("Back after cancel.Hello from model two."),
              "answer=%s users=%s said=%r" % (json.dumps(r)[:100], users, said[-80:]))
        check("load: model restored", current == ["mock/mock-two"], "model=%s" % current)
        acp.close()
        return results
    finally:
        mock.stop()
        shutil.rmtree(home, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pi", default=os.path.join(ROOT, "target", "debug", "pi"), help="our pi binary")
    ap.add_argument("--ref", default="", help="also drive this TypeScript pi (1.6.0, the main reference) for comparison")
    args = ap.parse_args()
    if not os.access(args.pi, os.X_OK):
        raise SystemExit("error: %s is not an executable (run cargo build)" % args.pi)
    node = install.system_node()
    if node is None:
        raise SystemExit("error: pi-acp needs Node.js on PATH")
    entry = install_pi_acp()
    ours = os.path.abspath(args.pi)
    columns = [("ours", drive(ours, [], node, entry)), ("native", drive(ours, [], node, entry, native=True))]
    for v in [x for x in args.ref.split(",") if x]:
        ref = install.reference(v)
        columns.append((v, drive(ref.cli_js, ref.path_prefix, node, entry)))
    steps = [s for s, _, _ in columns[0][1]]
    print("pi-acp %s: %s" % (PI_ACP_VERSION, " vs ".join(name for name, _ in columns)))
    print("%-30s" % "step" + "".join("%-8s" % name for name, _ in columns))
    for i, step in enumerate(steps):
        row = "%-30s" % step
        for _, res in columns:
            row += "%-8s" % (("pass" if res[i][1] else "FAIL") if i < len(res) else "-")
        print(row)
    for name, res in columns:
        for step, ok, detail in res:
            if not ok:
                print("%s: %s: %s" % (name, step, detail))
    failed = [s for _, res in columns[:2] for s, ok, _ in res if not ok]
    print("%d/%d steps pass for ours through pi-acp, %d/%d natively" % (
        sum(ok for _, ok, _ in columns[0][1]), len(steps), sum(ok for _, ok, _ in columns[1][1]), len(steps)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
