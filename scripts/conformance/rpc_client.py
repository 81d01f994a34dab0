"""Run a case's RpcClient steps through rpc_client_driver.mjs with the side's own RpcClient.

RpcClient always starts `node <cliPath> --mode rpc ...`. A `node` shim placed first on the
child's PATH starts the side under test instead: the TypeScript pi's cli.js with its Node, or
our binary (the shim drops the cliPath argument and execs `pi` so signals reach it directly).
"""
import json
import os
import stat
import subprocess

import harness

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, "rpc_client_driver.mjs")


def _shim(sb, side):
    d = os.path.join(sb.root, "shim")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "node")
    if side.cli_js:
        body = 'exec "%s" "$@"\n' % side.node
    else:
        body = 'shift\nexec "%s" "$@"\n' % side.cmd[0]
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return d


def run(side, sb, case, port):
    shim = _shim(sb, side)
    env = harness.side_env(side, sb, case.env)
    env["PATH"] = shim + os.pathsep + env["PATH"]
    spec = case.client
    provider, model = None, None
    if case.model:
        provider, model = case.model.split("/", 1)
    doc = {
        "rpcClient": side.rpc_client,
        "cliPath": side.cli_js or "pi",
        "cwd": sb.cwd,
        "env": env,
        "provider": provider,
        "model": model,
        "args": [sb.expand(a, port) for a in spec.get("args", [])],
        "steps": json.loads(sb.expand(json.dumps(spec["steps"]), port)),
    }
    spec_path = os.path.join(sb.root, "client-spec.json")
    with open(spec_path, "w") as f:
        json.dump(doc, f)
    try:
        p = subprocess.run([side.node, DRIVER, spec_path], cwd=sb.cwd, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=case.timeout + 30)
    except subprocess.TimeoutExpired:
        return {"<driver>": "timeout"}, ""
    try:
        out = json.loads(p.stdout.decode("utf-8", "replace"))
    except ValueError:
        return {"<driver failed>": p.stdout.decode("utf-8", "replace")[-2000:] + p.stderr.decode("utf-8", "replace")[-2000:]}, ""
    return {"steps": out["steps"], "events": out["events"]}, out.get("stderr", "")
