#!/usr/bin/env python3
"""The cases of `make local-check`, run by scripts/local-check.sh.

Makes a tiny GGUF (random weights, a vocabulary built from the text pi actually sends, so its
prompt fits a 4096-token window as a real model's would), starts llama.cpp's `llama-server`
with n_ctx 4096 behind a proxy that counts requests, runs our pi with no key the way a new user
would, and prints a table. Exit status 1 if a case fails.
"""

import argparse
import http.client
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import gguf

N_CTX = 4096


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pi_env(work, ports):
    env = {k: v for k, v in os.environ.items() if not re.search(r"_API_KEY$|_TOKEN$", k)}
    env.update(
        HOME=os.path.join(work, "home"),
        PI_CODING_AGENT_DIR=os.path.join(work, "home", ".pi", "agent"),
        PI_LOCAL_SERVER_PORTS=str(ports),
        PI_OFFLINE="1",
    )
    os.makedirs(env["PI_CODING_AGENT_DIR"], exist_ok=True)
    return env


def run_pi(args, work, ports, stdin=None, timeout=300):
    started = time.monotonic()
    p = subprocess.run(
        [ARGS.pi, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=pi_env(work, ports),
        cwd=os.path.join(work, "project"),
        timeout=timeout,
    )
    return p, time.monotonic() - started


# --- 1. What pi sends: captured from one run against a stub, to build the vocabulary. ---


def capture_request(work):
    captured = []

    class Stub(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            body = b'{"object":"list","data":[{"id":"capture","object":"model"}]}'
            if self.path != "/v1/models":
                self.send_response(404)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            n = int(self.headers.get("content-length", 0))
            captured.append(json.loads(self.rfile.read(n)))
            chunk = {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}
            body = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        run_pi(["-p", "hello"], work, srv.server_address[1])
    finally:
        srv.shutdown()
    if not captured:
        sys.exit("local-check: pi sent no request to the capture stub")
    return captured[0]


# --- 2. A tiny llama-architecture GGUF with a sentencepiece-style vocabulary. ---

CHATML = (
    "{% for message in messages %}<|im_start|>{{ message.role }}\n"
    "{{ message.content if message.content is string else '' }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def vocabulary(corpus):
    """Single characters, then every prefix of each short chunk of the corpus (spaces as ▁):
    llama.cpp's sentencepiece tokenizer merges neighbours whose join is a token, so a chunk
    seen here becomes one token."""
    text = corpus.replace(" ", "\u2581")
    chars = sorted(set(text) | set("\u2581abcdefghijklmnopqrstuvwxyz0123456789.,!?"))
    pieces = {}
    for line in text.split("\n"):
        for chunk in re.findall(r"\u2581?[^\u2581]*(?:\u2581[^\u2581]*){0,5}", line):
            chunk = chunk[:48]
            for i in range(2, len(chunk) + 1):
                pieces.setdefault(chunk[:i], len(chunk[:i]))
    words = sorted(pieces, key=lambda p: (pieces[p], p))[:60000]
    return chars, words


def make_gguf(path, corpus):
    chars, words = vocabulary(corpus)
    tokens, scores, types = [], [], []

    def add(tok, score, kind):
        tokens.append(tok)
        scores.append(score)
        types.append(kind)

    T = gguf.TokenType
    add("<unk>", 0.0, T.UNKNOWN)
    add("<s>", 0.0, T.CONTROL)
    add("</s>", 0.0, T.CONTROL)
    add("<|im_start|>", 0.0, T.CONTROL)
    add("<|im_end|>", 0.0, T.CONTROL)
    for b in range(256):
        add(f"<0x{b:02X}>", 0.0, T.BYTE)
    seen = set(tokens)
    for c in chars:
        if c not in seen:
            seen.add(c)
            add(c, -1.0, T.NORMAL)
    for w in words:
        if w not in seen:
            seen.add(w)
            # Longer pieces score higher: the tokenizer prefers the longest known join.
            add(w, float(len(w)), T.NORMAL)

    n_vocab, n_embd, n_ff, n_head = len(tokens), 64, 128, 4
    w = gguf.GGUFWriter(path, "llama")
    w.add_name("pi-local-check-tiny")
    w.add_context_length(2 * N_CTX)
    w.add_embedding_length(n_embd)
    w.add_block_count(1)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head)
    w.add_rope_dimension_count(n_embd // n_head)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(4)
    w.add_unk_token_id(0)
    w.add_add_bos_token(False)
    w.add_chat_template(CHATML)
    rng = np.random.default_rng(22)

    def t(name, *shape):
        w.add_tensor(name, (rng.standard_normal(shape) * 0.02).astype(np.float32))

    t("token_embd.weight", n_vocab, n_embd)
    w.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
    t("output.weight", n_vocab, n_embd)
    w.add_tensor("blk.0.attn_norm.weight", np.ones(n_embd, dtype=np.float32))
    w.add_tensor("blk.0.ffn_norm.weight", np.ones(n_embd, dtype=np.float32))
    for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
        t(f"blk.0.{name}.weight", n_embd, n_embd)
    t("blk.0.ffn_gate.weight", n_ff, n_embd)
    t("blk.0.ffn_up.weight", n_ff, n_embd)
    t("blk.0.ffn_down.weight", n_embd, n_ff)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return n_vocab


# --- 3. A proxy in front of the server that records every request. ---


class Recorder:
    def __init__(self, upstream):
        self.upstream = upstream
        self.requests = []
        self.lock = threading.Lock()

    def chats(self):
        with self.lock:
            return [r for r in self.requests if r["path"].endswith("/chat/completions")]

    def clear(self):
        with self.lock:
            self.requests.clear()


def start_proxy(rec):
    class Proxy(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def forward(self, method):
            n = int(self.headers.get("content-length", 0))
            body = self.rfile.read(n) if n else None
            entry = {"method": method, "path": self.path, "body": None, "reply": b""}
            if body:
                try:
                    entry["body"] = json.loads(body)
                except ValueError:
                    pass
            with rec.lock:
                rec.requests.append(entry)
            up = http.client.HTTPConnection("127.0.0.1", rec.upstream, timeout=300)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
            up.request(method, self.path, body=body, headers=headers)
            resp = up.getresponse()
            entry["status"] = resp.status
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(k, v)
            self.send_header("transfer-encoding", "chunked")
            self.send_header("connection", "close")
            self.end_headers()
            while True:
                data = resp.read1(65536)
                if not data:
                    break
                entry["reply"] += data
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.close_connection = True

        def do_GET(self):
            self.forward("GET")

        def do_POST(self):
            self.forward("POST")

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def wait_ready(port, proc, limit=120):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/health")
            if c.getresponse().status == 200:
                return True
        except OSError:
            pass
        time.sleep(0.3)
    return False


# --- 4. The cases. ---


def main():
    work = ARGS.work
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "project"))
    request = capture_request(work)
    corpus = json.dumps(request.get("tools", []), ensure_ascii=False) + "\n"
    corpus += "\n".join(
        m["content"] if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
        for m in request["messages"]
    )
    model = os.path.join(work, "tiny.gguf")
    n_vocab = make_gguf(model, corpus)

    port = free_port()
    log = open(os.path.join(work, "server.log"), "w")
    server = subprocess.Popen(
        [ARGS.server, "-m", model, "-c", str(N_CTX), "--host", "127.0.0.1", "--port", str(port),
         "-np", "1", "--jinja", "-t", "2", "--no-webui"],
        stdout=log, stderr=subprocess.STDOUT,
    )
    rows = []

    def case(name, expected, observed, ok):
        rows.append((name, expected, observed, "ok" if ok else "FAIL"))

    try:
        if not wait_ready(port, server):
            sys.exit(f"local-check: llama-server did not start; see {work}/server.log")
        rec = Recorder(port)
        proxy = start_proxy(rec)
        pport = proxy.server_address[1]

        p, secs = run_pi(["-p", "hello"], work, pport)
        chats = rec.chats()
        body = chats[0]["body"] if chats else {}
        case("pi -p hello (no key)", "exit 0, 1 request",
             f"exit {p.returncode}, {len(chats)} request(s), {secs:.1f}s",
             p.returncode == 0 and len(chats) == 1)
        m = re.findall(rb'"completion_tokens":\s*(\d+)', chats[0]["reply"]) if chats else []
        used = int(m[-1]) if m else None
        sent = body.get("max_tokens")
        case("maxTokens sent as max_tokens", "max_tokens 1024, reply <= it",
             f"max_tokens {sent}, max_completion_tokens {body.get('max_completion_tokens')}, reply {used} tokens",
             sent == 1024 and "max_completion_tokens" not in body and used is not None and used <= sent)
        pm = re.findall(rb'"prompt_tokens":\s*(\d+)', chats[0]["reply"]) if chats else []
        note = f" (prompt {int(pm[-1])} tokens, vocab {n_vocab})" if pm else ""

        # The same server in models.json with a small maxTokens: the reply stops at it.
        rec.clear()
        agent_dir = pi_env(work, pport)["PI_CODING_AGENT_DIR"]
        with open(os.path.join(agent_dir, "models.json"), "w") as f:
            json.dump({"providers": {"llama.cpp": {
                "baseUrl": f"http://127.0.0.1:{pport}/v1", "api": "openai-completions",
                "apiKey": "none", "compat": {"maxTokensField": "max_tokens"},
                "models": [{"id": "tiny", "contextWindow": N_CTX, "maxTokens": 8}]}}}, f)
        p, _ = run_pi(["--model", "llama.cpp/tiny", "-p", "hello"], work, pport)
        os.remove(os.path.join(agent_dir, "models.json"))
        chats = rec.chats()
        m = re.findall(rb'"completion_tokens":\s*(\d+)', chats[0]["reply"]) if chats else []
        used = int(m[-1]) if m else None
        sent = chats[0]["body"].get("max_tokens") if chats else None
        case("models.json maxTokens 8", "max_tokens 8, reply cut at 8",
             f"max_tokens {sent}, reply {used} tokens, exit {p.returncode}: {p.stderr.strip()[:60]}",
             sent == 8 and used is not None and used <= 8)

        rec.clear()
        p, _ = run_pi(["--mode", "rpc", "--no-session"], work, pport,
                      stdin='{"id":"s","type":"get_state"}\n')
        window = None
        for line in p.stdout.splitlines():
            try:
                v = json.loads(line)
            except ValueError:
                continue
            if v.get("id") == "s":
                window = ((v.get("data") or {}).get("model") or {}).get("contextWindow")
        case("get_state contextWindow", str(N_CTX), f"{window}{note}", window == N_CTX)

        rec.clear()
        p, _ = run_pi(["--list-models"], work, pport)
        listing = p.stdout + p.stderr
        row = next((l for l in listing.splitlines() if "tiny.gguf" in l), "")
        case("pi --list-models", "the local model, 4.1K", " ".join(row.split()) or listing.strip()[:80],
             "(local)" in row and "4.1K" in row)

        rec.clear()
        long_prompt = "please read this " + "word " * 6000
        p, secs = run_pi(["-p", long_prompt], work, pport)
        err = p.stderr.strip().splitlines()
        last = err[-1] if err else ""
        chats = rec.chats()
        case("too-long prompt", "fails at once, names 4096",
             f"exit {p.returncode}, {len(chats)} request(s), {secs:.1f}s: {last[:110]}",
             p.returncode != 0 and len(chats) == 1 and "4096" in p.stderr)

        p, _ = run_pi(["-p", "hello"], work, free_port())
        case("no key, no server", "names ports, how to add one",
             " ".join(p.stderr.split())[:110] + "…",
             p.returncode == 1 and "Tried" in p.stderr and "PI_LOCAL_SERVER_PORTS" in p.stderr
             and "models.json" in p.stderr)
        proxy.shutdown()
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()

    widths = [max(len(r[i]) for r in rows + [("case", "expected", "observed", "")]) for i in range(4)]
    fmt = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
    print(fmt(("case", "expected", "observed", "")))
    for r in rows:
        print(fmt(r))
    failed = sum(r[3] == "FAIL" for r in rows)
    print(f"{len(rows) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--pi", required=True)
    ap.add_argument("--server", required=True)
    ap.add_argument("--work", required=True)
    ARGS = ap.parse_args()
    main()
