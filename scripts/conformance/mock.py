"""A small scripted LLM server for the conformance harness (Python standard library only).

It speaks the OpenAI Chat Completions streaming format (text, reasoning, tool calls, usage) and
the Anthropic Messages streaming format, answers each generation request with the next scripted
turn, and records every request body so the harness can compare what two clients sent.

A scenario is a list of turns. A turn is a string (one text reply) or an object:
    {"content": [{"type": "text", "text": "..."},
                 {"type": "thinking", "text": "..."},
                 {"type": "tool_call", "name": "read", "arguments": {...}, "id": "call_1"}],
     "usage": {"input": 100, "output": 20, "cached": 0},
     "match": "substring of the last user-side message",   # conditional turn
     "match_body": "substring of the raw body",             # conditional turn
     "http_status": 503, "error_message": "...",            # reply with an error instead
     "finish": "stop" | "length" | "tool_calls",
     "delay_ms": 25, "chunk_chars": 8,
     "stall_ms": 0}                                          # pause before the last chunk
Conditional turns are taken first (the first unused one that matches), then plain turns in order,
then the fallback reply "done". Usage is fixed (not estimated from the body), so both clients see
the same numbers even when their prompts differ.
"""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEFAULT_USAGE = {"input": 100, "output": 20, "cached": 0}
# The TypeScript pi serialises a streamed message snapshot some time after the provider mutated
# it; a short pause between stream events lets each event be printed before the next arrives.
DEFAULT_DELAY_MS = 25


def _norm_turn(raw):
    if isinstance(raw, str):
        raw = {"content": [{"type": "text", "text": raw}]}
    turn = dict(raw)
    content = turn.get("content", [])
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    turn["content"] = content
    return turn


def _probe(body):
    """Text of the last user-side message (user or tool result)."""
    msgs = body.get("messages") or []
    for m in reversed(msgs):
        if m.get("role") in ("user", "tool"):
            c = m.get("content")
            if isinstance(c, str):
                return c
            if isinstance(c, list):
                out = []
                for part in c:
                    if isinstance(part, dict):
                        if isinstance(part.get("text"), str):
                            out.append(part["text"])
                        elif part.get("type") == "tool_result":
                            out.append(json.dumps(part.get("content")))
                return "\n".join(out)
            return ""
    return ""


class Mock:
    """One scripted server: start() it, point a client at base_url, read .requests afterwards."""

    def __init__(self, turns=None):
        self.turns = [_norm_turn(t) for t in (turns or [])]
        self.used = [False] * len(self.turns)
        self.requests = []  # (path, body) in arrival order
        self.lock = threading.Lock()
        self.server = None

    def pick(self, body, raw):
        probe = _probe(body)
        with self.lock:
            for i, t in enumerate(self.turns):
                if self.used[i] or not ("match" in t or "match_body" in t):
                    continue
                if "match" in t and t["match"] not in probe:
                    continue
                if "match_body" in t and t["match_body"] not in raw:
                    continue
                self.used[i] = True
                return t
            for i, t in enumerate(self.turns):
                if not self.used[i] and not ("match" in t or "match_body" in t):
                    self.used[i] = True
                    return t
        return _norm_turn("done")

    def start(self):
        mock = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_GET(self):
                body = json.dumps({"object": "list", "data": []}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                n = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(n).decode("utf-8", "replace")
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"_unparsed": raw}
                path = self.path.split("?")[0]
                headers = {k: self.headers[k] for k in ("authorization", "x-api-key") if self.headers.get(k)}
                with mock.lock:
                    mock.requests.append({"path": path, "body": body, "headers": headers})
                turn = mock.pick(body if isinstance(body, dict) else {}, raw)
                try:
                    self.reply(path, body, turn)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def reply(self, path, body, turn):
                if turn.get("http_status"):
                    status = turn["http_status"]
                    msg = turn.get("error_message", "mock error %d" % status)
                    if path.endswith("/messages"):
                        err = {"type": "error", "error": {"type": "api_error", "message": msg}}
                    else:
                        err = {"error": {"message": msg, "type": "server_error", "code": None}}
                    data = json.dumps(err).encode()
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                if turn.get("latency_ms"):
                    time.sleep(turn["latency_ms"] / 1000)
                if path.endswith("/messages"):
                    events = anthropic_events(body, turn)
                else:
                    events = chat_events(body, turn)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                delay = turn.get("delay_ms", DEFAULT_DELAY_MS) / 1000
                for i, ev in enumerate(events):
                    if turn.get("stall_ms") and i == len(events) - 1:
                        time.sleep(turn["stall_ms"] / 1000)
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(ev), ev))
                    self.wfile.flush()
                    if delay:
                        time.sleep(delay)
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    @property
    def port(self):
        return self.server.server_address[1]

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()


def _pieces(s, n):
    if n <= 0 or len(s) <= n:
        return [s] if s else []
    return [s[i:i + n] for i in range(0, len(s), n)]


def _args_str(item):
    a = item.get("arguments", {})
    return a if isinstance(a, str) else json.dumps(a)


def _usage(turn):
    u = dict(DEFAULT_USAGE)
    u.update(turn.get("usage") or {})
    return u


def _finish(turn):
    if turn.get("finish"):
        return turn["finish"]
    return "tool_calls" if any(i["type"] == "tool_call" for i in turn["content"]) else "stop"


def _sse(obj, event=None):
    head = ("event: %s\n" % event) if event else ""
    return (head + "data: " + json.dumps(obj) + "\n\n").encode()


def chat_events(body, turn):
    n = turn.get("chunk_chars", 8)
    model = body.get("model", "mock")
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))

    def chunk(delta, finish=None):
        return _sse({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1700000000,
                     "model": model,
                     "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    out = [chunk({"role": "assistant", "content": ""})]
    tool_idx = 0
    for it in turn["content"]:
        if it["type"] == "text":
            out += [chunk({"content": p}) for p in _pieces(it["text"], n)]
        elif it["type"] == "thinking":
            out += [chunk({"reasoning_content": p}) for p in _pieces(it["text"], n)]
        elif it["type"] == "tool_call":
            cid = it.get("id") or "call_%d" % tool_idx
            out.append(chunk({"tool_calls": [{"index": tool_idx, "id": cid, "type": "function",
                                              "function": {"name": it["name"], "arguments": ""}}]}))
            out += [chunk({"tool_calls": [{"index": tool_idx, "function": {"arguments": p}}]})
                    for p in _pieces(_args_str(it), n)]
            tool_idx += 1
    out.append(chunk({}, _finish(turn)))
    u = _usage(turn)
    if include_usage:
        out.append(_sse({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1700000000,
                         "model": model, "choices": [],
                         "usage": {"prompt_tokens": u["input"], "completion_tokens": u["output"],
                                   "total_tokens": u["input"] + u["output"],
                                   "prompt_tokens_details": {"cached_tokens": u["cached"]},
                                   "completion_tokens_details": {"reasoning_tokens": u.get("reasoning", 0)}}}))
    out.append(b"data: [DONE]\n\n")
    return out


def anthropic_events(body, turn):
    n = turn.get("chunk_chars", 8)
    u = _usage(turn)
    stop = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}[_finish(turn)]
    out = [_sse({"type": "message_start", "message": {
        "id": "msg_mock", "type": "message", "role": "assistant", "model": body.get("model", "mock"),
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": u["input"] - u["cached"], "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": u["cached"], "output_tokens": 1}}}, "message_start")]
    for idx, it in enumerate(turn["content"]):
        if it["type"] == "text":
            block = {"type": "text", "text": ""}
        elif it["type"] == "thinking":
            block = {"type": "thinking", "thinking": "", "signature": ""}
        else:
            block = {"type": "tool_use", "id": it.get("id") or "toolu_%d" % idx, "name": it["name"], "input": {}}
        out.append(_sse({"type": "content_block_start", "index": idx, "content_block": block}, "content_block_start"))

        def delta(d):
            out.append(_sse({"type": "content_block_delta", "index": idx, "delta": d}, "content_block_delta"))
        if it["type"] == "text":
            for p in _pieces(it["text"], n):
                delta({"type": "text_delta", "text": p})
        elif it["type"] == "thinking":
            for p in _pieces(it["text"], n):
                delta({"type": "thinking_delta", "thinking": p})
            delta({"type": "signature_delta", "signature": it.get("signature", "sig")})
        else:
            for p in _pieces(_args_str(it), n):
                delta({"type": "input_json_delta", "partial_json": p})
        out.append(_sse({"type": "content_block_stop", "index": idx}, "content_block_stop"))
    out.append(_sse({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                     "usage": {"output_tokens": u["output"]}}, "message_delta"))
    out.append(_sse({"type": "message_stop"}, "message_stop"))
    return out
