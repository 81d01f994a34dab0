"""Run one conformance case on one side (a TypeScript pi or ours) and return what it observed.

A side runs in its own scratch root:  <root>/home (HOME), <root>/home/.pi/agent
(PI_CODING_AGENT_DIR, with a models.json pointing at a private mock server), <root>/work (cwd)
and <root>/tmp (TMPDIR). What the case compares is collected into an "observation": a flat dict
of JSON values (exit codes, stdout, request bodies, session files, RPC transcripts), normalised
by normalize.py so the two sides can be compared with ==.
"""
import gzip
import json
import os
import shutil
import subprocess
import time

from mock import Mock
import normalize

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
DEFAULT_COMPARE = ("exit", "stdout", "requests", "sessions")


class Fixture:
    """File content taken from scripts/conformance/fixtures/<name> (`.gz` is unpacked), or a
    whole fixture folder when <name> is one. `transform(bytes, sandbox) -> bytes` may adapt it
    (e.g. point a stored session cwd at the scratch cwd)."""

    def __init__(self, name, transform=None):
        self.name = name
        self.transform = transform

    @property
    def is_dir(self):
        return os.path.isdir(os.path.join(FIXTURES, self.name))

    def read(self, sb=None):
        path = os.path.join(FIXTURES, self.name)
        if path.endswith(".gz"):
            with gzip.open(path, "rb") as f:
                data = f.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
        return self.transform(data, sb) if self.transform else data


class Case:
    """One comparison. `id` is `area.name`; the area is the part before the first dot.

    runs      list of {"argv": [...], "stdin": str, "env": {...}} run one after the other in
              the same scratch root (or a single argv=/stdin=).
    rpc       a raw RPC script for `--mode rpc` (see rpc_raw.py), run after `runs`.
    client    steps for the TypeScript RpcClient driver (see rpc_client_driver.mjs).
    files     {"cwd/x.txt" | "agent/..." | "home/..." | "root/...": str | bytes | Fixture};
              "{slug}" in a path is the session folder name of the cwd.
    turns     the mock server's scripted replies (see mock.py).
    model     prepended as `--model <model>` to every argv unless None.
    compare   which observations count: exit, stdout, stderr, requests, sessions, files, rpc.
    no_node_for_ours  ours runs with every Node left off PATH (codemode needs none).
    follows   "1.x" when today's pi changed this behaviour on purpose: against 0.73.1 the
              case is then shown as "follows 1.x" and does not fail the run.
    """

    def __init__(self, id, argv=None, stdin="", runs=None, rpc=None, client=None, files=None,
                 turns=None, model="mock/mock-model", compare=DEFAULT_COMPARE, env=None,
                 models=None, settings=None, follows=None, timeout=60, stdout_json=None,
                 skip_refs=(), note="", post=None, needs_fd=False, no_node_for_ours=False):
        self.id = id
        self.area = id.split(".", 1)[0]
        if runs is None:
            runs = [{"argv": argv or [], "stdin": stdin}] if (argv is not None or rpc is None and client is None) else []
        self.runs = runs
        self.rpc = rpc
        self.client = client
        self.files = files or {}
        self.turns = turns or []
        self.model = model
        self.compare = tuple(compare)
        self.env = env or {}
        self.models = models
        self.settings = settings
        self.follows = follows
        self.timeout = timeout
        self.stdout_json = stdout_json
        self.skip_refs = skip_refs
        self.note = note
        self.needs_fd = needs_fd
        self.post = post  # optional fn(obs) -> obs, for case-specific extraction (never hides data)
        self.no_node_for_ours = no_node_for_ours  # ours runs with no `node` anywhere on PATH


class Side:
    """How to start one implementation, and which Node and RpcClient drive it over RPC."""

    def __init__(self, name, cmd, node, rpc_client, cli_js=None, path_prefix=(), pkg_dir=None, env=None):
        self.name = name
        self.cmd = cmd  # argv prefix that starts pi
        self.node = node  # Node that runs the RpcClient driver (and the TypeScript cli.js)
        self.rpc_client = rpc_client  # the reference's dist/modes/rpc/rpc-client.js
        self.cli_js = cli_js  # the TypeScript pi's cli.js; None for ours
        self.path_prefix = list(path_prefix)  # put first on PATH (the Node the TypeScript pi needs)
        self.pkg_dir = pkg_dir  # the TypeScript package folder (its paths are normalised)
        self.env = dict(env or {})  # extra environment shared by both sides of a reference


def default_models(port):
    base = "http://127.0.0.1:%d/v1" % port
    return {"providers": {
        "mock": {"baseUrl": base, "api": "openai-completions", "apiKey": "mock-key",
                 "models": [
                     {"id": "mock-model", "name": "Mock Model", "reasoning": True,
                      "contextWindow": 128000, "maxTokens": 16384},
                     {"id": "mock-two", "name": "Mock Two", "reasoning": False,
                      "contextWindow": 32000, "maxTokens": 4096},
                     {"id": "mock-vision", "name": "Mock Vision", "reasoning": False,
                      "input": ["text", "image"], "contextWindow": 64000, "maxTokens": 4096},
                     {"id": "mock-big", "name": "Mock Big", "reasoning": False,
                      "contextWindow": 1000000, "maxTokens": 16384},
                     {"id": "mock-small", "name": "Mock Small", "reasoning": False,
                      "contextWindow": 4000, "maxTokens": 1000}]},
        "anth": {"baseUrl": "http://127.0.0.1:%d" % port, "api": "anthropic-messages",
                 "apiKey": "mock-key",
                 "models": [{"id": "claude-mock", "name": "Claude Mock", "reasoning": True,
                             "contextWindow": 200000, "maxTokens": 8192}]}}}


def slug(path):
    p = path[1:] if path.startswith("/") else path
    return "--" + p.replace("/", "-").replace(":", "-") + "--"


class Sandbox:
    def __init__(self, root):
        self.root = root
        self.home = os.path.join(root, "home")
        self.agent = os.path.join(self.home, ".pi", "agent")
        self.cwd = os.path.join(root, "work")
        self.tmp = os.path.join(root, "tmp")
        for d in (self.agent, self.cwd, self.tmp):
            os.makedirs(d, exist_ok=True)

    def expand(self, s, port):
        if not isinstance(s, str):
            return s
        return (s.replace("{root}", self.root).replace("{home}", self.home)
                .replace("{agent}", self.agent).replace("{cwd}", self.cwd)
                .replace("{tmp}", self.tmp).replace("{slug}", slug(self.cwd))
                .replace("{port}", str(port)).replace("{fixtures}", FIXTURES))

    def path_of(self, rel, port):
        rel = self.expand(rel, port)
        head, _, rest = rel.partition("/")
        base = {"cwd": self.cwd, "agent": self.agent, "home": self.home, "root": self.root,
                "tmp": self.tmp}[head]
        return os.path.join(base, rest)

    def write(self, rel, content, port):
        path = self.path_of(rel, port)
        if isinstance(content, Fixture) and content.is_dir:
            shutil.copytree(os.path.join(FIXTURES, content.name), path, dirs_exist_ok=True)
            return
        if isinstance(content, Fixture):
            content = content.read(self)
        if callable(content):
            content = content(self)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if isinstance(content, (dict, list)):
            content = json.dumps(content, indent=2)
        if isinstance(content, str):
            content = self.expand(content, port).encode()
        with open(path, "wb") as f:
            f.write(content)


NODE_NAMES = ("node", "nodejs", "npm", "npx", "corepack", "bun", "deno")


def path_without_node(dirs, shim_root):
    """PATH entries with every Node left out: a folder holding `node` is replaced by a folder of
    links to everything else in it."""
    out = []
    for i, d in enumerate(dirs):
        if not any(os.path.exists(os.path.join(d, n)) for n in NODE_NAMES):
            out.append(d)
            continue
        shim = os.path.join(shim_root, "nonode%d" % i)
        if not os.path.isdir(shim):
            os.makedirs(shim)
            for name in os.listdir(d):
                if name not in NODE_NAMES:
                    os.symlink(os.path.join(d, name), os.path.join(shim, name))
        out.append(shim)
    return out


def side_env(side, sb, extra, no_node=False):
    dirs = side.path_prefix + os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)
    if no_node and side.cli_js is None:
        dirs = path_without_node([d for d in dirs if d], os.path.join(sb.root, "shim"))
    path = os.pathsep.join(dirs)
    env = {
        "PATH": path, "HOME": sb.home, "PI_CODING_AGENT_DIR": sb.agent, "PI_OFFLINE": "1",
        "PI_SKIP_VERSION_CHECK": "1", "TERM": "dumb", "TMPDIR": sb.tmp, "LANG": "C.UTF-8",
        "TZ": "UTC", "NO_COLOR": "1",
    }
    env.update(side.env)
    for k, v in extra.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = sb.expand(v, getattr(sb, "port", 0))
    return env


def read_tree(base, text_only=True):
    """{relative path: content} for every file under base (JSONL parsed line by line)."""
    out = {}
    if not os.path.isdir(base):
        return out
    for d, _, files in os.walk(base):
        for f in sorted(files):
            p = os.path.join(d, f)
            rel = os.path.relpath(p, base)
            try:
                with open(p, "rb") as fh:
                    data = fh.read()
            except OSError as e:
                out[rel] = "<unreadable: %s>" % e
                continue
            if f.endswith(".jsonl"):
                out[rel] = parse_jsonl(data)
            else:
                try:
                    out[rel] = data.decode("utf-8")
                except UnicodeDecodeError:
                    out[rel] = "<%d bytes binary>" % len(data)
    return dict(sorted(out.items()))


def parse_jsonl(data):
    lines = []
    for line in data.decode("utf-8", "replace").split("\n"):
        if not line.strip():
            continue
        try:
            lines.append(json.loads(line))
        except ValueError:
            lines.append({"<unparsed line>": line})
    return lines


def parse_stdout_json(text):
    out = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except ValueError:
            out.append({"<text>": line})
    return out


def run_side(case, side, root):
    """Run `case` with `side` inside a fresh scratch root; return the raw observation."""
    if os.path.exists(root):
        shutil.rmtree(root)
    sb = Sandbox(root)
    mock = Mock(case.turns).start()
    try:
        return _run_side(case, side, sb, mock)
    finally:
        mock.stop()


def _run_side(case, side, sb, mock):
    port = sb.port = mock.port
    models = case.models if case.models is not None else default_models(port)
    if models is not False:
        if callable(models):
            models = models(port)
        sb.write("agent/models.json", json.loads(sb.expand(json.dumps(models), port)), port)
    if case.settings is not None:
        sb.write("agent/settings.json", case.settings, port)
    for rel, content in case.files.items():
        sb.write(rel, content, port)

    obs = {}
    for i, run in enumerate(case.runs):
        argv = [sb.expand(a, port) for a in run.get("argv", [])]
        if case.model and run.get("model", True):
            argv = ["--model", case.model] + argv
        env = side_env(side, sb, {**case.env, **run.get("env", {})}, case.no_node_for_ours)
        stdin = sb.expand(run.get("stdin", ""), port)
        t0 = time.time()
        try:
            p = subprocess.run(side.cmd + argv, cwd=sb.path_of(run["cwd"], port) if run.get("cwd") else sb.cwd,
                               input=stdin.encode(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=env, timeout=run.get("timeout", case.timeout))
            code, out, err = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            code, out, err = "timeout", e.stdout or b"", e.stderr or b""
        prefix = "run%d." % i if len(case.runs) > 1 else ""
        obs[prefix + "exit"] = code
        text = out.decode("utf-8", "replace")
        if case.stdout_json or (case.stdout_json is None and "--mode" in argv and "json" in argv):
            obs[prefix + "stdout"] = parse_stdout_json(text)
        else:
            obs[prefix + "stdout"] = text
        obs[prefix + "stderr"] = err.decode("utf-8", "replace")
        obs[prefix + "seconds"] = round(time.time() - t0, 2)

    if case.rpc is not None:
        import rpc_raw
        env = side_env(side, sb, case.env, case.no_node_for_ours)
        argv = ["--mode", "rpc"] + (["--model", case.model] if case.model else [])
        argv += [sb.expand(a, port) for a in case.rpc.get("argv", [])]
        obs["rpc"], obs["stderr"], obs["exit"] = rpc_raw.run(side.cmd + argv, env, sb.cwd, case.rpc["script"],
                                                             lambda s: sb.expand(s, port), case.timeout)
    if case.client is not None:
        import rpc_client
        obs["rpc"], obs["stderr"] = rpc_client.run(side, sb, case, port)

    with mock.lock:
        obs["requests"] = [r["body"] for r in mock.requests]
        obs["headers"] = [r["headers"] for r in mock.requests]
    obs["sessions"] = read_tree(os.path.join(sb.agent, "sessions"))
    if "files" in case.compare:
        obs["files"] = read_tree(sb.cwd)
    if "rootfiles" in case.compare:
        obs["rootfiles"] = {k: v for k, v in read_tree(sb.root).items()
                            if not k.startswith(("home/", "work/", "tmp/", "shim/")) and k != "client-spec.json"}
    if "agentfiles" in case.compare:
        obs["agentfiles"] = {k: v for k, v in read_tree(sb.agent).items()
                             if not k.startswith("sessions/") and k != "models.json"}
    if case.post:
        obs = case.post(obs, sb)
    return obs, sb


def observe(case, side, root):
    """Run and normalise: returns (observation limited to case.compare, seconds)."""
    t0 = time.time()
    try:
        obs, sb = run_side(case, side, root)
    except Exception as e:  # a harness failure is a disagreement, shown as such
        import traceback
        return {"harness-error": traceback.format_exc()}, time.time() - t0
    norm = normalize.Normalizer([sb.root], side.pkg_dir, sb.port)
    out = {}
    for key, value in obs.items():
        base = key.split(".")[-1]
        if base == "seconds" or base not in case.compare:
            continue
        out[key] = norm.value(value, key)
    return out, time.time() - t0
