#!/usr/bin/env bash
# `make local-check`: our pi against the real llama.cpp engine, as a user with only a local
# model would run it. Not part of `make test` (it builds llama.cpp once, which is slow).
#
# Everything it installs goes to $PI_LOCAL_CHECK_CACHE (default ~/.cache/pi-local-check), once:
#   * a Python venv with `gguf` and `numpy` (to make a tiny model on the spot) and `cmake`,
#     `ninja` (to build);
#   * llama.cpp's own server, `llama-server`, built from the llama.cpp sources that the
#     `llama-cpp-python` source package on PyPI vendors. Its Python server (`llama_cpp.server`)
#     does not say its context size anywhere, while llama.cpp's `/props` does — and
#     `llama-server` is what people run.
# Then scripts/local_check.py makes a GGUF with random weights, starts the server with
# n_ctx 4096 behind a counting proxy and runs the cases, printing a table.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${PI_LOCAL_CHECK_CACHE:-$HOME/.cache/pi-local-check}
mkdir -p "$cache"
cd "$cache"

if [ ! -x venv/bin/python ] || ! venv/bin/python -c 'import gguf, numpy' 2>/dev/null; then
    python3 -m venv venv
    venv/bin/pip install -q gguf numpy cmake ninja
fi

server=build/bin/llama-server
if [ ! -x "$server" ]; then
    if [ ! -d llama.cpp-src ]; then
        rm -rf sdist && mkdir sdist
        venv/bin/pip download -q --no-deps --no-binary :all: -d sdist llama-cpp-python
        tar -xzf sdist/llama_cpp_python-*.tar.gz -C sdist
        mv sdist/llama_cpp_python-*/vendor/llama.cpp llama.cpp-src
        rm -rf sdist
    fi
    echo "Building llama-server (once; this takes a while)…" >&2
    venv/bin/cmake -S llama.cpp-src -B build -G Ninja \
        -DCMAKE_MAKE_PROGRAM="$cache/venv/bin/ninja" -DCMAKE_BUILD_TYPE=Release \
        -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF -DGGML_OPENMP=OFF -DBUILD_SHARED_LIBS=OFF \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON \
        -DLLAMA_BUILD_SERVER=ON >build.log
    venv/bin/cmake --build build --target llama-server -j "$(nproc)" >>build.log
fi

pi=${PI_BIN:-$root/target/debug/pi}
if [ -z "${PI_BIN:-}" ]; then
    (cd "$root" && cargo build -q)
fi
exec venv/bin/python "$root/scripts/local_check.py" --pi "$pi" --server "$cache/$server" \
    --work "$cache/run"
