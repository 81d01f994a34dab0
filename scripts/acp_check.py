#!/usr/bin/env python3
"""make acp-check: one editor session, driven through pi-acp (the Node ACP adapter editors use
today) over the TypeScript pi 1.6.0 and through ours natively (`pi acp`, no Node on the PATH pi
sees), against the same scripted mock LLM; prints what the editor saw and what the model was
sent, step by step, in two columns, and the differences.

    python3 scripts/acp_check.py [--pi target/debug/pi] [--ref 1.6.0] [--via-pi-acp] [--all]

The scenario: initialize; session/new with an MCP server passed by the client; a prompt whose
tool calls edit a file (shown as a diff) and run a command; a write; cancelling a streaming
prompt; a prompt after the cancel; a model switch (config option) and the prompt after it; a
thinking-level switch; a mode switch; a slash command (a prompt template) and /compact;
session/list; session/load of the session in a fresh process (the history replayed).

Each step becomes a flat record (`answer.…`, `update.<kind>#<n>.…`, `tool#<n>.…`, `llm#<n>.…`),
normalized so that what may differ by nature does not show: ids (session, tool call, terminal),
timestamps, tool call titles, `_meta` (vendor extensions), the scratch folders, usage numbers,
and how replies are cut into chunks (consecutive chunks are joined). A difference is allowed when
docs/compat.md's ACP section lists it as `acp-check: <step> <path glob>` with its reason; any
other difference makes the exit status 1. `--all` prints every row, not only differing ones.
`--via-pi-acp` adds a third column: pi-acp over our pi (RPC mode), compared the same way.

pi-acp (PI_ACP_VERSION, 0.0.34) and the TypeScript pi are installed once into the conformance
cache (scripts/conformance/install.py), so the first run needs the npm registry; later runs are
offline. HOME and PI_CODING_AGENT_DIR are scratch folders.
"""
import argparse
import fnmatch
import json
import os
import queue
import re
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
MCP_SERVER = os.path.join(ROOT, "tests", "support", "mcp_fake_server.py")
COMPAT = os.path.join(ROOT, "docs", "compat.md")
SUMMARY = "## Goal\nSUMMARY of the session"
LONG = "This reply is long and slow and will be cancelled before it ends."
TURNS = [
    {"match": "edit please", "content": [
        {"type": "text", "text": "Editing the file."},
        {"type": "tool_call", "name": "edit",
         "arguments": {"path": "notes.txt", "edits": [{"oldText": "apple", "newText": "banana"}]},
         "id": "call_edit"}]},
    {"match": "Successfully replaced", "content": [
        {"type": "thinking", "text": "Now check it."},
        {"type": "tool_call", "name": "bash", "arguments": {"command": "cat notes.txt"}, "id": "call_bash"}]},
    {"match": "banana a day", "content": "Edited it."},
    {"match": "write please", "content": [
        {"type": "tool_call", "name": "write", "arguments": {"path": "new.txt", "content": "fresh\n"},
         "id": "call_write"}]},
    {"match": "Successfully wrote", "content": "Wrote it."},
    {"match": "long please", "content": LONG, "chunk_chars": 4, "stall_ms": 8000},
    {"match": "after cancel", "content": "Back after cancel."},
    {"match": "second model", "content": "Hello from model two."},
    {"match": "Say hello to", "content": "Hello, world."},
    # the two summary requests of a compaction that splits a turn (run in parallel by pi)
    {"match_body": "[User]: ", "content": SUMMARY},
    {"match_body": "[User]: ", "content": SUMMARY},
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
    """One agent process speaking ACP (JSON-RPC, one message a line) on stdio."""

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
                self._send({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32601, "message": "not offered"}})
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


# ---- normalization ------------------------------------------------------------------------------

TIME_KEYS = ("timestamp", "durationMs", "updatedAt", "wall_time_seconds")
CHUNKS = ("agent_message_chunk", "agent_thought_chunk", "user_message_chunk")
ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?")
UUIDISH = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")


class Normalizer:
    """Replaces what differs by nature (folders, ids, times) with placeholders."""

    def __init__(self, home, work):
        self.home, self.work = home, work
        self.ids = {}

    def text(self, s):
        s = s.replace(self.work, "$WORK").replace(self.home, "$HOME")
        s = ISO_TIME.sub("$TIME", s)
        for real, alias in self.ids.items():
            s = s.replace(real, alias)
        return UUIDISH.sub("$ID", s)

    def value(self, v):
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if isinstance(v, dict):
            # null and absent are the same to a client
            return {k: "$TIME" if k in TIME_KEYS else self.value(x)
                    for k, x in v.items() if k != "_meta" and x is not None}
        return v


def flatten(prefix, v, out):
    if isinstance(v, dict) and v:
        for k in sorted(v):
            flatten("%s.%s" % (prefix, k), v[k], out)
    elif isinstance(v, list) and v and not all(isinstance(x, str) for x in v):
        for i, x in enumerate(v):
            flatten("%s[%d]" % (prefix, i), x, out)
    else:
        out[prefix] = v


def record(norm, answer=None, updates=(), requests=(), partial=LONG):
    """One step as flat rows: the answer, the updates (chunks joined, tool calls merged, numbered
    per kind), the requests the model got."""
    rows = {}
    if answer is not None:
        a = answer.get("result", answer.get("error"))
        if "error" in answer:
            a = {"error": {"code": answer["error"].get("code")}}
        flatten("answer", norm.value(a), rows)
    merged, tools, order = [], {}, []
    for u in updates:
        kind = u.get("sessionUpdate")
        if kind in CHUNKS:
            text = (u.get("content") or {}).get("text")
            if text is None:
                merged.append({"sessionUpdate": kind, "content": u.get("content")})
            elif merged and merged[-1].get("sessionUpdate") == kind and "text" in merged[-1]:
                merged[-1]["text"] += text
            else:
                merged.append({"sessionUpdate": kind, "text": text})
        elif kind in ("tool_call", "tool_call_update"):
            cid = u.get("toolCallId")
            if cid not in tools:
                tools[cid] = {}
                order.append(cid)
                merged.append({"sessionUpdate": "tool", "id": cid})
            t = tools[cid]
            for k, v in u.items():
                if k in ("sessionUpdate", "toolCallId", "title"):
                    continue
                if k == "content" and not v:
                    continue
                t[k] = v
        elif kind == "usage_update":
            if not (merged and merged[-1].get("sessionUpdate") == kind):
                merged.append({"sessionUpdate": kind, "fields": sorted(k for k in u if k != "sessionUpdate")})
        elif kind == "available_commands_update":
            merged.append({"sessionUpdate": kind,
                           "names": sorted(c.get("name", "") for c in u.get("availableCommands", []))})
        else:
            merged.append(dict(u))
    counts = {}
    for u in merged:
        kind = u.pop("sessionUpdate")
        if kind == "tool":
            n = order.index(u["id"]) + 1
            t = norm.value(tools[u["id"]])
            for c in t.get("content") or []:
                if isinstance(c, dict) and "terminalId" in c:
                    c["terminalId"] = "$TERMINAL"
            flatten("tool#%d" % n, t, rows)
            continue
        counts[kind] = counts.get(kind, 0) + 1
        if partial and kind == "agent_message_chunk" and partial.startswith(u.get("text", "\0")) \
                and u["text"] != partial:
            u["text"] = "(a part of the reply, up to the cancel)"
        flatten("update.%s#%d" % (kind, counts[kind]), norm.value(u) if u else "(empty)", rows)
    for i, q in enumerate(requests):
        body = q["body"]
        msgs = body.get("messages") or []
        last = msgs[-1] if msgs else {}
        content = last.get("content")
        if isinstance(content, list):
            content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
        tools_offered = sorted((t.get("function") or {}).get("name", "") for t in body.get("tools") or [])
        flatten("llm#%d" % (i + 1), norm.value({
            "model": body.get("model"), "tools": tools_offered, "reasoning_effort": body.get("reasoning_effort"),
            "last": {"role": last.get("role"), "content": content if isinstance(content, str) else None},
            "messages": len(msgs)}), rows)
    return rows


# ---- the scenario -------------------------------------------------------------------------------

def scratch(home, mock):
    agent = os.path.join(home, ".pi", "agent")
    work = os.path.join(home, "work")
    os.makedirs(os.path.join(agent, "prompts"))
    os.makedirs(os.path.join(work))
    with open(os.path.join(work, "notes.txt"), "w") as f:
        f.write("an apple a day\n")
    with open(os.path.join(agent, "prompts", "hello.md"), "w") as f:
        f.write("---\ndescription: Greet someone\n---\nSay hello to $1\n")
    with open(os.path.join(agent, "models.json"), "w") as f:
        json.dump({"providers": {"mock": {
            "baseUrl": "http://127.0.0.1:%d/v1" % mock.port, "api": "openai-completions", "apiKey": "k",
            "models": [{"id": "mock-model", "reasoning": True}, {"id": "mock-two"}]}}}, f)
    with open(os.path.join(agent, "settings.json"), "w") as f:
        # a small kept tail, so /compact has something to summarize
        json.dump({"defaultProvider": "mock", "defaultModel": "mock-model", "quietStartup": True,
                   "compaction": {"keepRecentTokens": 40}}, f)
    return agent, work


def drive(side, pi_command, path_prefix, node, entry):
    """Runs the scenario against one agent: `side` is "native" (`pi acp`, nothing else on its
    PATH) or "pi-acp" (the adapter over `pi_command`). Returns [(step, rows)]."""
    steps = []
    home = tempfile.mkdtemp(prefix="pi-acp-check-")
    mock = Mock(TURNS).start()
    acp = None
    try:
        agent, work = scratch(home, mock)
        norm = Normalizer(home, work)
        if side == "native":
            bin_dir = os.path.join(home, "bin")
            os.makedirs(bin_dir)
            # No Node: the MCP server's python3 and what the model's command runs, nothing else.
            os.symlink(sys.executable, os.path.join(bin_dir, "python3"))
            os.symlink(shutil.which("cat"), os.path.join(bin_dir, "cat"))
            argv, path = [pi_command, "acp"], bin_dir
        else:
            argv, path = [node, entry], os.pathsep.join(path_prefix + [os.environ.get("PATH", "")])
        env = {"PATH": path, "HOME": home, "PI_CODING_AGENT_DIR": agent, "PI_OFFLINE": "1",
               "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0", "PI_ACP_PI_COMMAND": pi_command}
        mcp = [{"name": "acpfake", "command": "python3", "args": [MCP_SERVER], "env": []}]

        def step(name, answer=None, since=None):
            sent = mock.requests[since:] if since is not None else []
            steps.append((name, record(norm, answer, list(acp.updates), sent)))
            acp.updates.clear()

        acp = Acp(argv, work, env)
        step("initialize", acp.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}}))
        r = acp.request("session/new", {"cwd": work, "mcpServers": mcp})
        sid = ((r or {}).get("result") or {}).get("sessionId")
        if not sid:
            step("session/new", r)
            return steps
        norm.ids[sid] = "$SESSION"
        acp.pump(lambda m: m.get("params", {}).get("update", {}).get("sessionUpdate") == "available_commands_update", 10)
        acp.settle(0.3)
        step("session/new", r)

        def prompt(name, text, timeout=30):
            since = len(mock.requests)
            r = acp.request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}, timeout)
            acp.settle(0.2)
            step(name, r, since)

        prompt("prompt: edit and bash", "edit please")
        prompt("prompt: write", "write please")

        since = len(mock.requests)
        i = acp.start("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "long please"}]})
        acp.pump(lambda m: m.get("params", {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk", 20)
        acp.notify("session/cancel", {"sessionId": sid})
        r = acp.pump(lambda m: m.get("id") == i and ("result" in m or "error" in m), 20)
        acp.settle(0.2)
        step("cancel mid-stream", r, since)
        prompt("prompt after cancel", "after cancel")

        step("model switch", acp.request("session/set_config_option",
                                         {"sessionId": sid, "configId": "model", "value": "mock/mock-two"}))
        prompt("prompt on the new model", "second model")
        step("thinking level", acp.request("session/set_config_option",
                                           {"sessionId": sid, "configId": "thought_level", "value": "off"}))
        r = acp.request("session/set_mode", {"sessionId": sid, "modeId": "off"})
        acp.settle(0.3)
        step("mode switch", r)
        prompt("slash command: template", "/hello world")
        step("session/list", acp.request("session/list", {"cwd": work}))
        acp.close()

        acp = Acp(argv, work, env)
        acp.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        acp.updates.clear()
        r = acp.request("session/load", {"sessionId": sid, "cwd": work, "mcpServers": []})
        acp.settle(1.0)
        step("load in a fresh process", r)
        # pi-acp replays what the model still sees, so the load comes before the compaction;
        # the loaded session then compacts (its two summary requests may run in parallel).
        since = len(mock.requests)
        r = acp.request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "/compact"}]}, 60)
        acp.settle(0.2)
        steps.append(("loaded: /compact", record(norm, r, list(acp.updates), sorted(
            mock.requests[since:], key=lambda q: json.dumps(q["body"].get("messages"))))))
        return steps
    finally:
        if acp:
            acp.close()
        mock.stop()
        shutil.rmtree(home, ignore_errors=True)


# ---- comparison ---------------------------------------------------------------------------------

def allowed_differences():
    """The `acp-check: <step> <path glob>` entries of docs/compat.md."""
    with open(COMPAT) as f:
        return re.findall(r"`acp-check: ([^`]+)`", f.read())


def short(v, width):
    s = "-" if v is None and v is not False else json.dumps(v, ensure_ascii=False)
    if v is None:
        s = "·"
    return s if len(s) <= width else s[: width - 1] + "…"


MISSING = object()


def compare(ref, ours, allowed, show_all, width=40):
    """Prints the two columns step by step; returns the differences not allowed."""
    bad = []
    names = [n for n, _ in ref] + [n for n, _ in ours if n not in dict(ref)]
    ref_d, ours_d = dict(ref), dict(ours)
    for name in names:
        a, b = ref_d.get(name, {}), ours_d.get(name, {})
        keys = sorted(set(a) | set(b), key=lambda k: (k.split(".")[0] if "#" in k else k, k))
        lines = []
        for k in keys:
            x, y = a.get(k, MISSING), b.get(k, MISSING)
            same = x == y
            key = "%s %s" % (name, k)
            ok = any(fnmatch.fnmatchcase(key, pat) for pat in allowed)
            mark = " " if same else ("~" if ok else "!")
            if not same and not ok:
                bad.append(key)
            if show_all or not same:
                lines.append("%s %-60s %-*s %s" % (mark, k, width, "(none)" if x is MISSING else short(x, width),
                                                   "(none)" if y is MISSING else short(y, width)))
        same_rows = sum(1 for k in keys if a.get(k, MISSING) == b.get(k, MISSING))
        print("\n== %s: %d rows, %d the same" % (name, len(keys), same_rows))
        for line in lines:
            print(line)
    return bad


def edit_shown_as_diff(steps):
    return dict(steps).get("prompt: edit and bash", {}).get("tool#1.content[0].type") == "diff"


def reference_run(ref, node, entry, attempts=3):
    """pi-acp reads a file for its diff when the edit starts, racing the tool (compat.md): when
    it lost the race, its edit shows as text; the reference run is then tried again."""
    for i in range(attempts):
        steps = drive("pi-acp", ref.cli_js, ref.path_prefix, node, entry)
        if edit_shown_as_diff(steps):
            return steps
        print("note: pi-acp lost its race for the edit's diff (run %d); running it again" % (i + 1),
              file=sys.stderr)
    return steps


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pi", default=os.path.join(ROOT, "target", "debug", "pi"), help="our pi binary")
    ap.add_argument("--ref", default="1.6.0", help="the TypeScript pi pi-acp drives for the reference column")
    ap.add_argument("--via-pi-acp", action="store_true", help="also compare pi-acp over our pi (RPC mode)")
    ap.add_argument("--all", action="store_true", help="print every row, not only the differing ones")
    args = ap.parse_args()
    if not os.access(args.pi, os.X_OK):
        raise SystemExit("error: %s is not an executable (run cargo build)" % args.pi)
    node = install.system_node()
    if node is None:
        raise SystemExit("error: pi-acp needs Node.js on PATH")
    entry = install_pi_acp()
    ours = os.path.abspath(args.pi)
    ref = install.reference(args.ref)
    allowed = allowed_differences()
    columns = [("pi-acp %s + pi %s" % (PI_ACP_VERSION, args.ref), reference_run(ref, node, entry)),
               ("pi acp (ours)", drive("native", ours, [], node, entry))]
    if args.via_pi_acp:
        columns.append(("pi-acp + ours", drive("pi-acp", ours, [], node, entry)))
    status = 0
    for name, steps in columns[1:]:
        print("\n######## %s (left) vs %s (right); ! a difference, ~ one docs/compat.md lists"
              % (columns[0][0], name))
        bad = compare(columns[0][1], steps, allowed, args.all)
        if bad:
            status = 1
            print("\n%d difference(s) for %s not in docs/compat.md (list them as `acp-check: <step> <path>` "
                  "with the reason, or fix them):" % (len(bad), name))
            for k in bad:
                print("  " + k)
        else:
            print("\n%s: every difference is listed in docs/compat.md" % name)
    return status


if __name__ == "__main__":
    sys.exit(main())
