#!/usr/bin/env python3
"""The bench's mock LLM: a minimal OpenAI Chat Completions server, stateless and scripted by the
request itself (see answer()). Used by scripts/bench.sh and scripts/hot-text.sh.

    bench_mock.py PORT_FILE [LAST_REQUEST_LOG]

Writes the port it listens on (127.0.0.1) to PORT_FILE once it is ready. With BENCH_MOCK_PAUSE=s
in its environment it stops for s seconds halfway through every reply: time to read a client's
/proc/PID/smaps at its peak."""
import json, os, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

def chunk(delta, finish=None, usage=None):
    obj = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0,
           "model": "mock-model",
           "choices": [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage:
        obj["usage"] = usage
    return b"data: " + json.dumps(obj).encode() + b"\n\n"

USAGE = chunk(None, usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})

def text_stream(parts):
    return b"".join([chunk({"role": "assistant", "content": ""})]
                    + [chunk({"content": t}) for t in parts]
                    + [chunk({}, "stop"), USAGE, b"data: [DONE]\n\n"])

GREETING = text_stream(["Hello from ", "the bench mock."])
DONE = text_stream(["done"])

def tool_stream(name, arguments, piece=None):
    """One tool call; with `piece`, its argument JSON arrives in fragments of that many chars."""
    text = json.dumps(arguments)
    parts = [text] if piece is None else [text[i:i + piece] for i in range(0, len(text), piece)]
    first = {"index": 0, "id": "call_bench", "type": "function",
             "function": {"name": name, "arguments": ""}}
    rest = [chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in parts]
    return b"".join([chunk({"role": "assistant", "content": None, "tool_calls": [first]})]
                    + rest + [chunk({}, "tool_calls"), USAGE, b"data: [DONE]\n\n"])

def text_of(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content
                       if isinstance(p, dict) and p.get("type") == "text")
    return ""

LOG = sys.argv[2] if len(sys.argv) > 2 else None

TASK = [("write", {"path": "task.txt", "content": "hello from the task\n"}),
        ("bash", {"command": "echo task"}),
        ("edit", {"path": "task.txt", "edits": [{"oldText": "hello", "newText": "goodbye"}]}),
        ("read", {"path": "task.txt"})]

def answer(raw):
    try:
        msgs = json.loads(raw or b"{}").get("messages") or []
    except ValueError:
        return GREETING
    if LOG:  # the size of the latest request, for the session rows to report
        with open(LOG + ".tmp", "w") as f:
            f.write(f"{len(msgs)} {len(raw or b'')}")
        os.replace(LOG + ".tmp", LOG)
    last = msgs[-1] if msgs and isinstance(msgs[-1], dict) else {}
    # BENCH_TASK: a four-tool task, one call per turn (write, bash, edit, read), then `done`;
    # the step is the number of tool results since the user's message.
    users = [i for i, m in enumerate(msgs) if isinstance(m, dict) and m.get("role") == "user"]
    if users and "BENCH_TASK" in text_of(msgs[users[-1]].get("content")):
        step = sum(1 for m in msgs[users[-1]:] if isinstance(m, dict) and m.get("role") == "tool")
        if step < len(TASK):
            name, arguments = TASK[step]
            return tool_stream(name, arguments)
        return DONE
    if last.get("role") == "tool":
        return DONE
    if last.get("role") == "user":
        text = text_of(last.get("content"))
        # BENCH_CHARS n: n characters in 4-character deltas; BENCH_WRITE n: a `write` whose
        # n-character content streams in 4-character argument fragments.
        for key in ("BENCH_CHARS ", "BENCH_WRITE "):
            at = text.find(key)
            if at >= 0:
                n = int(text[at + len(key):].split()[0])
                if key == "BENCH_CHARS ":
                    return text_stream(["abcd"] * (n // 4))
                return tool_stream("write", {"path": "streamed.txt", "content": "abcd" * (n // 4)}, 4)
        st = text.find("BENCH_STREAM ")
        if st >= 0:
            n = int(text[st + len("BENCH_STREAM "):].split()[0])
            return text_stream(["x"] * n)
        at = text.find("BENCH_TOOL ")
        if at >= 0:
            rest = text[at + len("BENCH_TOOL "):].lstrip()
            try:
                spec, _ = json.JSONDecoder().raw_decode(rest)
                return tool_stream(spec["name"], spec.get("arguments") or {})
            except (ValueError, KeyError, TypeError):
                pass
    return GREETING

PAUSE = float(os.environ.get("BENCH_MOCK_PAUSE") or 0)

class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def do_POST(self):
        body = answer(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        if PAUSE:
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            time.sleep(PAUSE)
            body = body[len(body) // 2:]
        self.wfile.write(body)
        self.wfile.flush()
        self.close_connection = True

srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
srv.daemon_threads = True
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
srv.serve_forever()
