#!/usr/bin/env bash
# Resident memory of long-lived servers: `toolgate serve` and `toolgate proxy` (in front of a
# `toolgate serve`), each driven over stdio with 100,000 tools/call requests, VmRSS printed at
# 1,000 / 10,000 / 100,000 calls, both with `--trace` streaming every call to a file.
# Usage: bash bench/serve_memory.sh [TOOLGATE_BINARY] (default: a fresh release build).
set -euo pipefail
cd "$(dirname "$0")/.."
binary="${1:-}"
if [ -z "$binary" ]; then
    cargo build --release --quiet
    binary=target/release/toolgate
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fixture=fixtures/crm_baseline.json
echo "serve:"
python3 bench/serve_memory.py 1000,10000,100000 -- \
    "$binary" serve --fixture "$fixture" --trace "$work/serve.jsonl"
echo "proxy (in front of serve):"
python3 bench/serve_memory.py 1000,10000,100000 -- \
    "$binary" proxy --name crm --trace "$work/proxy.jsonl" -- "$binary" serve --fixture "$fixture"
echo "trace lines written: $(wc -l < "$work/serve.jsonl") (serve), $(wc -l < "$work/proxy.jsonl") (proxy)"
