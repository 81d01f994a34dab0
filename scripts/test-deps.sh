#!/bin/sh
# Installs, once, the third-party MCP servers the integration tests run for real:
#   - @modelcontextprotocol/server-filesystem (npm), also primed in an npx cache so that
#     `npx -y @modelcontextprotocol/server-filesystem` works offline in the tests;
#   - the official Python `mcp` package (PyPI), for a Streamable HTTP server;
#   - the official ACP client SDKs, TypeScript (`@agentclientprotocol/sdk`, npm) and Python
#     (`agent-client-protocol`, PyPI), which the ACP tests drive `pi acp` with (issue 32).
# Everything goes under $PI_TEST_DEPS (default: target/test-deps). A stamp per pinned version
# makes later runs free. Needs node/npm and python3 (with venv); registry access only the
# first time. The tests fail (they do not skip) when these are missing.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${PI_TEST_DEPS:-$root/target/test-deps}
fs_version=2026.8.31
mcp_py_version=2.3.0
acp_ts_version=2.4.0
acp_py_version=0.12.1
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

if [ ! -f "$dir/.acp-ts-$acp_ts_version" ]; then
    echo "test-deps: installing @agentclientprotocol/sdk@$acp_ts_version into $dir/acp-npm" >&2
    rm -rf "$dir/acp-npm"
    npm install --prefix "$dir/acp-npm" --no-audit --no-fund --loglevel=error \
        "@agentclientprotocol/sdk@$acp_ts_version"
    touch "$dir/.acp-ts-$acp_ts_version"
fi

if [ ! -f "$dir/.acp-py-$acp_py_version" ]; then
    echo "test-deps: installing the Python agent-client-protocol package $acp_py_version into $dir/venv" >&2
    "$dir/venv/bin/python" -m pip install --quiet --disable-pip-version-check "agent-client-protocol==$acp_py_version"
    touch "$dir/.acp-py-$acp_py_version"
fi
