#!/usr/bin/env bash
# Per-call overhead of toolgate in front of a user's own stdio MCP server, side by side with a
# client talking to the same server directly: the same minimal client (bench/rtt.py) sends
# CALLS `tools/call`s of `open_nodes` to the official memory server, seeded with the example
# suite's graph, once directly and once through `toolgate serve --suite examples/own-servers
# --scenario OS-001` (trace, schema check, fault lookup, a second JSON-RPC hop to the server).
# Prints p50/p95/p99 in microseconds per round and the median p50 ratio (target: at most 1.2).
# Usage: [ROUNDS=5] bash bench/own_servers.sh [CALLS] [TOOLGATE_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
calls="${1:-2000}"
bin="${2:-target/release/toolgate}"
bash tests/peers/install.sh >/dev/null
memory=target/peers/node/node_modules/@modelcontextprotocol/server-memory/dist/index.js
seed_dir="$(mktemp -d)"
trap 'rm -rf "$seed_dir"' EXIT
cp examples/own-servers/seeds/team.jsonl "$seed_dir/team.jsonl"
args='{"names": ["Grace Hopper"]}'

# Rounds alternate direct and through-toolgate runs, so a change in the machine's load falls on
# both paths; the headline is the median of the rounds' p50 ratios.
rounds="${ROUNDS:-5}"
rows=""
ratios=()
for round in $(seq 1 "$rounds"); do
  read -r d50 d95 d99 < <(MEMORY_FILE_PATH="$seed_dir/team.jsonl" \
    python3 bench/rtt.py "$calls" open_nodes "$args" -- node "$memory")
  cp examples/own-servers/seeds/team.jsonl "$seed_dir/team.jsonl"
  read -r t50 t95 t99 < <(python3 bench/rtt.py "$calls" open_nodes "$args" -- \
    "$bin" serve --suite examples/own-servers --scenario OS-001)
  ratio="$(python3 -c "print(f'{$t50 / $d50:.2f}')")"
  ratios+=("$ratio")
  rows+="| $round | $d50 | $d95 | $d99 | $t50 | $t95 | $t99 | $ratio |"$'\n'
done
median="$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}')"
cat <<TABLE
| round | direct p50 (us) | p95 | p99 | through toolgate p50 (us) | p95 | p99 | p50 ratio |
|---|---|---|---|---|---|---|---|
${rows%$'\n'}

p50 ratio through toolgate / direct, median of $rounds rounds: **$median** (target: at most 1.2; $calls calls per path and round, the first tenth as warm-up; load $(cut -d' ' -f1-3 /proc/loadavg))
TABLE
