"""The command line outside a conversation: help, version, model listing, export, argument
errors, configuration files (pi-mono args.test.ts, model-resolver.test.ts,
settings-manager tests, README)."""
import re

from harness import Case, Fixture

C = "cli."
OUT = ("exit", "stdout", "stderr", "requests", "sessions")


def help_surface(obs, sb):
    """--help is prose each side words itself: compare what it offers (flags, short forms,
    subcommands, environment variables), not its sentences."""
    for key in [k for k in obs if k.endswith("stdout")]:
        text = obs[key]
        if not isinstance(text, str):
            continue
        obs[key] = {
            "long flags": sorted(set(re.findall(r"(?m)^\s+(--[a-z][a-z0-9-]*)", text))),
            "short flags": sorted(set(re.findall(r"(?m)^\s+--[a-z0-9-]+(?: <[^>]+>)?, (-[a-z]+)", text))),
            "environment": sorted(set(re.findall(r"(?m)^\s+([A-Z][A-Z0-9_]{2,})\s", text))),
            "subcommands": sorted(set(re.findall(r"(?m)^\s+pi ([a-z]+) ", text))),
        }
    return obs


def html_surface(obs, sb):
    """An HTML export is a page each side renders itself: compare which files were written and
    which of the session's message texts each contains."""
    import json
    import os
    texts = []
    for d, _, files in os.walk(sb.root):
        for f in files:
            if f.endswith(".jsonl"):
                with open(os.path.join(d, f), encoding="utf-8", errors="replace") as fh:
                    for line in fh:
                        try:
                            e = json.loads(line)
                        except ValueError:
                            continue
                        m = e.get("message") or {}
                        for part in m.get("content") if isinstance(m.get("content"), list) else []:
                            if isinstance(part, dict) and part.get("type") == "text" and 3 < len(part.get("text", "")) < 200:
                                texts.append(part["text"])
    texts = sorted(set(texts))[:40]
    out = {}
    for d, _, files in os.walk(sb.root):
        for f in files:
            if f.endswith(".html"):
                with open(os.path.join(d, f), encoding="utf-8", errors="replace") as fh:
                    html = fh.read()
                rel = os.path.relpath(os.path.join(d, f), sb.root)
                embedded = re.search(r'id="session-data"[^>]*>([A-Za-z0-9+/=\s]+)<', html)
                searchable = html
                if embedded:
                    import base64
                    try:
                        searchable += base64.b64decode(embedded.group(1)).decode("utf-8", "replace")
                    except ValueError:
                        pass
                out[rel] = {"embedded session-data (base64)": bool(embedded),
                            "message texts found": sum(1 for t in texts if t in searchable or json.dumps(t)[1:-1] in searchable),
                            "of": len(texts)}
    obs["html"] = dict(sorted(out.items()))
    return obs


def settings_after(obs, sb):
    return obs


SMALL_SESSION = (
    '{"type":"session","version":3,"id":"11111111-2222-4333-8444-555555555555","timestamp":"2025-01-01T00:00:00.000Z","cwd":"{cwd}"}\n'
    '{"type":"message","id":"a0000001","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"question for export"}],"timestamp":1735689601000}}\n'
    '{"type":"message","id":"a0000002","parentId":"a0000001","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"answer for export"}],"api":"openai-completions","provider":"mock","model":"mock-model","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1735689602000}}\n'
)


def _cwd_to_sandbox(data, sb):
    return data.replace(b'"cwd":"/Users/badlogic/workspaces/pi-mono"', ('"cwd":"%s"' % sb.cwd).encode())


CASES = [
    Case(C + "version", argv=["--version"], model=None, compare=OUT, follows="1.x"),
    Case(C + "version-short", argv=["-v"], model=None, compare=OUT, follows="1.x"),
    Case(C + "version-wins", argv=["--version", "--help", "some message"], model=None, compare=OUT, follows="1.x"),
    Case(C + "help", argv=["--help"], model=None, compare=("exit", "stdout"), post=help_surface, follows="1.x"),
    Case(C + "help-short", argv=["-h"], model=None, compare=("exit", "stdout"), post=help_surface, follows="1.x"),
    Case(C + "list-models", argv=["--list-models"], model=None, compare=OUT, follows="1.x"),
    Case(C + "list-models-search", argv=["--list-models", "two"], model=None, compare=OUT, follows="1.x"),
    Case(C + "list-models-no-match", argv=["--list-models", "zzzz"], model=None, compare=OUT, follows="1.x"),
    Case(C + "list-models-none", argv=["--list-models"], model=None, models=False, compare=OUT),
    Case(C + "unknown-flag-ignored", argv=["--unknown-flag", "-p", "message"], turns=["ok"], compare=OUT),
    Case(C + "mode-invalid", argv=["--mode", "bogus", "hi"], turns=["ok"], compare=OUT, follows="1.x",
         note="1.x rejects an unknown --mode value (exit 1); 0.73.1 ran in the default mode"),
    Case(C + "mode-text-explicit", argv=["--mode", "text", "-p", "hi"], turns=["text mode"], compare=OUT),
    Case(C + "flag-missing-value", argv=["-p", "hi", "--model"], model=None, turns=["ok"], compare=OUT),
    Case(C + "offline-flag", argv=["--offline", "-p", "hi"], turns=["ok"], compare=OUT),
    Case(C + "verbose-flag", argv=["--verbose", "-p", "hi"], turns=["ok"], compare=OUT),
    Case(C + "models-scope", argv=["--models", "mock-two,mock-model", "-p", "hi"], model=None, turns=["ok"], compare=OUT),
    Case(C + "models-glob", argv=["--models", "mock/*", "-p", "hi"], model=None, turns=["ok"], compare=OUT),
    Case(C + "piped-stdin-without-p", argv=[], stdin="hello from a pipe\n", turns=["piped reply"], compare=OUT),
    Case(C + "missing-extension", follows="1.x", argv=["-e", "./missing-ext.ts", "-p", "hi"], turns=["ok"], compare=OUT,
         note="issue 19: a missing -e extension is fatal in pi (1.x adds a `pi -ne` hint)"),
    Case(C + "list-packages-empty", argv=["list"], model=None, compare=OUT),
    Case(C + "export-html", argv=["--export", "{root}/s.jsonl", "{root}/out.html"], model=None,
         files={"root/s.jsonl": SMALL_SESSION}, compare=("exit", "stdout", "stderr", "html"), post=html_surface,
         follows="1.x", note="1.x: `Exported to:` goes to stdout"),
    Case(C + "export-html-default-name", argv=["--export", "{cwd}/s.jsonl"], model=None,
         files={"cwd/s.jsonl": SMALL_SESSION}, compare=("exit", "stdout", "stderr", "html"), post=html_surface,
         follows="1.x", note="1.x: `Exported to:` goes to stdout"),
    Case(C + "export-missing-file", argv=["--export", "{root}/nope.jsonl"], model=None, compare=OUT),
    Case(C + "export-large-session", argv=["--export", "{root}/large.jsonl", "{root}/large.html"], model=None,
         files={"root/large.jsonl": Fixture("large-session.jsonl.gz")}, compare=("exit", "stdout", "stderr", "html"),
         post=html_surface, follows="1.x", note="1.x: `Exported to:` goes to stdout"),
    Case(C + "settings-invalid-json", argv=["-p", "hi"], turns=["ok"], files={"agent/settings.json": "{ not json"},
         compare=OUT + ("agentfiles",)),
    Case(C + "models-json-invalid", argv=["-p", "hi"], model=None, turns=["ok"], models=False,
         files={"agent/models.json": "{ broken"}, compare=OUT),
    Case(C + "models-json-unknown-api", follows="1.x", note="1.x accepts an api it does not know in models.json", argv=["-p", "hi"], model="weird/w1", turns=["ok"],
         models={"providers": {"weird": {"baseUrl": "http://127.0.0.1:{port}/v1", "api": "no-such-api", "apiKey": "k",
                                         "models": [{"id": "w1"}]}}}, compare=OUT),
    Case(C + "models-json-minimal-model", argv=["-p", "hi"], model="mini/m1", turns=["ok"],
         models={"providers": {"mini": {"baseUrl": "http://127.0.0.1:{port}/v1", "api": "openai-completions",
                                        "apiKey": "k", "models": [{"id": "m1"}]}}}, compare=OUT),
    Case(C + "models-json-headers-and-compat", argv=["-p", "hi"], model="hdr/h1", turns=["ok"],
         models={"providers": {"hdr": {"baseUrl": "http://127.0.0.1:{port}/v1", "api": "openai-completions",
                                       "apiKey": "k", "headers": {"X-Custom": "yes"},
                                       "compat": {"supportsDeveloperRole": False, "maxTokensField": "max_tokens"},
                                       "models": [{"id": "h1", "reasoning": True}]}}}, compare=OUT),
    Case(C + "models-json-api-key-env", argv=["-p", "hi"], model="envkey/e1", turns=["ok"], env={"MY_MOCK_KEY": "from-env"},
         models={"providers": {"envkey": {"baseUrl": "http://127.0.0.1:{port}/v1", "api": "openai-completions",
                                          "apiKey": "MY_MOCK_KEY", "models": [{"id": "e1"}]}}},
         compare=OUT + ("headers",)),
    Case(C + "auth-json-key", follows="1.x", note="1.x no longer requires apiKey for custom models (auth.json or env may hold it)", argv=["-p", "hi"], model="authp/a1", turns=["ok"],
         files={"agent/auth.json": {"authp": {"type": "api_key", "key": "from-auth-json"}}},
         models={"providers": {"authp": {"baseUrl": "http://127.0.0.1:{port}/v1", "api": "openai-completions",
                                         "models": [{"id": "a1"}]}}}, compare=OUT + ("headers",)),
    Case(C + "settings-preserved", argv=["--thinking", "high", "-p", "hi"], turns=["ok"],
         files={"agent/settings.json": {"someFutureKey": {"nested": [1, 2]}, "theme": "dark"}},
         compare=OUT + ("agentfiles",)),
    Case(C + "project-settings-untrusted", argv=["-p", "hi"], turns=["ok"],
         files={"cwd/.pi/settings.json": {"defaultThinkingLevel": "high"}}, compare=OUT,
         follows="1.x", note="1.x: .pi/settings.json is read only when the folder is trusted"),
    Case(C + "session-dir-env", argv=["-p", "hi"], turns=["ok"], env={"PI_CODING_AGENT_SESSION_DIR": "{root}/env-sessions"},
         compare=OUT + ("rootfiles",)),
    Case(C + "resume-in-print", argv=["-r", "-p", "hi"], turns=["ok"], compare=OUT),
    Case(C + "session-and-no-session", argv=["--no-session", "--session", "{root}/x.jsonl", "-p", "hi"], turns=["ok"],
         compare=OUT + ("rootfiles",)),
]
