#!/bin/sh
# Installs, once, the third-party MCP servers the integration tests run for real:
#   - @modelcontextprotocol/server-filesystem (npm), also primed in an npx cache so that
#     `npx -y @modelcontextprotocol/server-filesystem` works offline in the tests;
#   - the official Python `mcp` package (PyPI), for a Streamable HTTP server.
# Everything goes under $PI_TEST_DEPS (default: target/test-deps). A stamp per pinned version
# makes later runs free. Needs node/npm and python3 (with venv); registry access only the
# first time. The tests fail (they do not skip) when these are missing.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${PI_TEST_DEPS:-$root/target/test-deps}
fs_version=2026.8.31
mcp_py_version=2.3.0
mkdir -p "$dir"

if [ ! -f "$dir/.fs-$fs_version" ]; then
    echo "test-deps: installing @modelcontextprotocol/server-filesystem@$fs_version into $dir/npm" >&2
    rm -rf "$dir/npm" "$dir/npx-cache"
    npm install --prefix "$dir/npm" --no-audit --no-fund --loglevel=error \
        "@modelcontextprotocol/server-filesystem@$fs_version"
    # npx keeps what it runs in its cache; run it once (stdin closed, so it exits at once).
    npm_config_cache="$dir/npx-cache" npm_config_update_notifier=false \
        npx -y "@modelcontextprotocol/server-filesystem@$fs_version" "$dir" </dev/null >/dev/null 2>&1
    touch "$dir/.fs-$fs_version"
fi

if [ ! -f "$dir/.mcp-py-$mcp_py_version" ]; then
    echo "test-deps: installing the Python mcp package $mcp_py_version into $dir/venv" >&2
    rm -rf "$dir/venv"
    python3 -m venv "$dir/venv"
    "$dir/venv/bin/pip" install --quiet --disable-pip-version-check "mcp==$mcp_py_version"
    touch "$dir/.mcp-py-$mcp_py_version"
fi
