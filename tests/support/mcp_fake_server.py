#!/usr/bin/env python3
"""A small, deliberately misbehaving MCP stdio server for pi's tests (stdlib only).

Tools (each named for what it does):
  echo {text}        text content
  image              an image block
  structured         only structuredContent
  fail               isError with a message
  progress {steps}   progress notifications, then text
  crash              exits in the middle of the call
  hang               never answers
  big {mb}           a result of that many megabytes on one line
  garbage            junk lines and a malformed reply carrying the request id
  flood {lines}      that many junk and notification lines, then the answer
  log {text}         a notifications/message, then text
  change             adds the tool `added` and sends notifications/tools/list_changed
Resources: note://a (text), blob://b.bin (binary).

Every message received is appended (one JSON line) to $FAKE_MCP_RECORD if set; the pid goes
to $FAKE_MCP_PIDFILE. `--pages N` splits tools/list into N pages; `--stderr TEXT` writes TEXT
to stderr at start; `--exit-at-start` exits before answering anything.
"""

import json
import os
import sys
import time

args = sys.argv[1:]
PAGES = int(args[args.index("--pages") + 1]) if "--pages" in args else 1
if "--stderr" in args:
    sys.stderr.write(args[args.index("--stderr") + 1] + "\n")
    sys.stderr.flush()
if os.environ.get("FAKE_MCP_PIDFILE"):
    with open(os.environ["FAKE_MCP_PIDFILE"], "a") as f:
        f.write(f"{os.getpid()}\n")
if "--exit-at-start" in args:
    sys.exit(3)

out = sys.stdout.buffer


def send(msg):
    out.write(json.dumps(msg).encode() + b"\n")
    out.flush()


def record(msg):
    path = os.environ.get("FAKE_MCP_RECORD")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(msg) + "\n")


def schema(props=None):
    return {"type": "object", "properties": props or {}}


TOOLS = [
    {"name": "echo", "description": "Echo the given text back.", "inputSchema": schema({"text": {"type": "string"}}),
     "annotations": {"readOnlyHint": True, "openWorldHint": False}},
    {"name": "image", "description": "Return a tiny image.", "inputSchema": schema()},
    {"name": "structured", "description": "Return structured content only.", "inputSchema": schema()},
    {"name": "fail", "description": "Always fails.", "inputSchema": schema()},
    {"name": "progress", "description": "Report progress.", "inputSchema": schema({"steps": {"type": "number"}})},
    {"name": "crash", "description": "Crash mid-call.", "inputSchema": schema()},
    {"name": "hang", "description": "Never answer.", "inputSchema": schema()},
    {"name": "big", "description": "A huge result.", "inputSchema": schema({"mb": {"type": "number"}})},
    {"name": "garbage", "description": "Answer with garbage.", "inputSchema": schema()},
    {"name": "flood", "description": "Flood stdout first.", "inputSchema": schema({"lines": {"type": "number"}})},
    {"name": "log", "description": "Log a message.", "inputSchema": schema({"text": {"type": "string"}})},
    {"name": "change", "description": "Add a tool.", "inputSchema": schema()},
]
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def result(rid, content, **extra):
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": content, **extra}})


def text(t):
    return [{"type": "text", "text": t}]


def call(rid, name, a):
    if name == "echo":
        return result(rid, text(a.get("text", "")))
    if name == "image":
        return result(rid, [{"type": "text", "text": "an image:"}, {"type": "image", "data": PNG, "mimeType": "image/png"}])
    if name == "structured":
        return send({"jsonrpc": "2.0", "id": rid, "result": {"structuredContent": {"answer": 42}}})
    if name == "fail":
        return result(rid, text("it broke"), isError=True)
    if name == "progress":
        for i in range(int(a.get("steps", 3))):
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": PROGRESS_TOKENS[rid], "progress": i + 1, "total": 3}})
            time.sleep(0.05)
        return result(rid, text("done"))
    if name == "crash":
        sys.stderr.write("fatal: the fake server crashed\n")
        sys.stderr.flush()
        os._exit(7)
    if name == "hang":
        return None
    if name == "big":
        size = int(float(a.get("mb", 50)) * 1024 * 1024)
        head = json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": ""}]}})
        cut = head.index('"text": ""') + len('"text": "')
        out.write(head[:cut].encode())
        chunk = b"x" * (1024 * 1024)
        for _ in range(size // len(chunk)):
            out.write(chunk)
        out.write(head[cut:].encode() + b"\n")
        out.flush()
        return None
    if name == "garbage":
        out.write(b"this is not json\n{\"half\": \n\x00\xff\xfe\n")
        out.flush()
        return send({"jsonrpc": "2.0", "id": rid, "bogus": True})
    if name == "flood":
        for i in range(int(a.get("lines", 10000))):
            if i % 2:
                out.write(b"junk junk junk junk junk junk junk junk junk junk junk junk\n")
            else:
                out.write(b'{"jsonrpc":"2.0","method":"notifications/whatever","params":{"i":%d}}\n' % i)
        out.flush()
        return result(rid, text("after the flood"))
    if name == "log":
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "warning", "logger": "fake", "data": a.get("text", "")}})
        return result(rid, text("logged"))
    if name == "change":
        TOOLS.append({"name": "added", "description": "A tool added later.", "inputSchema": schema()})
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        # Answer only once the client has fetched the new list, so tests need not race it.
        for line in sys.stdin.buffer:
            req = json.loads(line)
            record(req)
            if req.get("method") == "tools/list":
                send({"jsonrpc": "2.0", "id": req["id"], "result": {"tools": TOOLS}})
                break
        return result(rid, text("changed"))
    if name == "added":
        return result(rid, text("added works"))
    send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": f"Unknown tool: {name}"}})


PROGRESS_TOKENS = {}
for raw in sys.stdin.buffer:
    try:
        msg = json.loads(raw)
    except ValueError:
        continue
    record(msg)
    method, rid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": params.get("protocolVersion"),
            "capabilities": {"tools": {"listChanged": True}, "resources": {}, "logging": {}},
            "serverInfo": {"name": "fake", "version": "1.0"},
            "instructions": "Fake tools for pi's tests.\nSecond line.",
        }})
    elif method == "tools/list":
        cursor = int(params.get("cursor", "0"))
        per = -(-len(TOOLS) // PAGES)
        page = TOOLS[cursor * per:(cursor + 1) * per]
        res = {"tools": page}
        if cursor + 1 < PAGES:
            res["nextCursor"] = str(cursor + 1)
        send({"jsonrpc": "2.0", "id": rid, "result": res})
    elif method == "tools/call":
        PROGRESS_TOKENS[rid] = (params.get("_meta") or {}).get("progressToken")
        call(rid, params.get("name"), params.get("arguments") or {})
    elif method == "resources/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"resources": [
            {"uri": "note://a", "name": "a", "mimeType": "text/plain", "_meta": {"x": 1}},
            {"uri": "blob://b.bin", "name": "b", "mimeType": "application/octet-stream"},
            {"uri": "ui://app", "name": "app"},
        ]}})
    elif method == "resources/templates/list":
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})
    elif method == "resources/read":
        uri = params.get("uri")
        if uri == "note://a":
            contents = [{"uri": uri, "mimeType": "text/plain", "text": "the note text"}]
        else:
            contents = [{"uri": uri, "mimeType": "application/octet-stream", "blob": "AAECAw=="}]
        send({"jsonrpc": "2.0", "id": rid, "result": {"contents": contents}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    elif rid is not None and method is not None:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})
