#!/usr/bin/env bash
# Installs the third-party MCP peers the tests drive, into target/peers (idempotent):
# - the official MCP Python SDK (PyPI `mcp`) in a virtual environment.
# Prints nothing on success when everything is already there.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
peers="$root/target/peers"
mkdir -p "$peers"

if [ ! -x "$peers/venv/bin/python" ] || ! "$peers/venv/bin/python" -c "import mcp" 2>/dev/null; then
  python3 -m venv "$peers/venv"
  "$peers/venv/bin/pip" install --quiet --disable-pip-version-check "mcp>=2,<3"
fi
