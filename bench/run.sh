#!/usr/bin/env bash
# Side-by-side benchmarks, written to docs/BENCHMARKS.md:
# - MCP tools/call round trip over stdio: `toolgate serve` vs the reference server
#   `@modelcontextprotocol/server-everything` (its echo tool) vs a process that echoes lines
#   (the pipe floor), all driven by the same minimal client (bench/rtt.py);
# - `toolgate --version` cold start and the release binary's size;
# - trajectory matching vs LangChain's agentevals: throughput and verdict parity
#   (bench/compare_agentevals.sh, which writes docs/BENCHMARKS-scoring.md, included below).
# Installs the peers itself (tests/peers/install.sh). Usage: bash bench/run.sh [CALLS]
set -euo pipefail
cd "$(dirname "$0")/.."
calls="${1:-5000}"
bash tests/peers/install.sh
cargo build --release --locked --quiet
bash bench/compare_agentevals.sh > /dev/null
bin=target/release/toolgate
everything=target/peers/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js

rtt() { python3 bench/rtt.py "$calls" "$@"; }
read -r f50 f95 f99 < <(rtt - '{}' -- python3 bench/echo_floor.py)
read -r t50 t95 t99 < <(rtt util_calculate '{"expression": "1+1"}' -- "$bin" serve --fixture fixtures/crm_baseline.json)
read -r e50 e95 e99 < <(rtt echo '{"message": "hi"}' -- node "$everything" stdio)

# Cold start: the median of 50 runs of `toolgate --version`, in milliseconds.
start_ms=$(python3 - "$bin" <<'PY'
import subprocess, sys, time
runs = []
for _ in range(50):
    t = time.perf_counter(); subprocess.run([sys.argv[1], "--version"], stdout=subprocess.DEVNULL); runs.append(time.perf_counter() - t)
runs.sort(); print(f"{runs[len(runs) // 2] * 1000:.1f}")
PY
)
size_mb=$(python3 -c "import os,sys; print(f'{os.path.getsize(sys.argv[1]) / 1e6:.1f}')" "$bin")
ratio() { python3 -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]):.2f}')" "$1" "$2"; }

cat > docs/BENCHMARKS.md <<MD
# Benchmarks

Written by \`bash bench/run.sh\` on $(date -u +%Y-%m-%d): $(nproc) cores
($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(rustc --version),
node $(node --version), $(python3 --version). Load average at the start:
$(cut -d' ' -f1-3 /proc/loadavg).

## MCP round trip over stdio

$calls \`tools/call\` requests, one at a time, from the same minimal client
([bench/rtt.py](../bench/rtt.py): writes a JSON-RPC line, reads the answer line), the first
tenth left out as warm-up. Microseconds.

| server | tool | p50 | p95 | p99 | p50 vs floor |
|---|---|---|---|---|---|
| line echo (the pipe floor) | - | $f50 | $f95 | $f99 | 1.00 |
| \`toolgate serve\` (release) | \`util_calculate\` \`1+1\`, schema-validated, traced | $t50 | $t95 | $t99 | $(ratio "$t50" "$f50") |
| server-everything 2026.8.31 | \`echo\` | $e50 | $e95 | $e99 | $(ratio "$e50" "$f50") |

server-everything p50 / toolgate p50: $(ratio "$e50" "$t50").

## Start-up and size

| | value |
|---|---|
| \`toolgate --version\`, median of 50 cold runs | $start_ms ms |
| release binary (\`target/release/toolgate\`, stripped, LTO; dynamically linked to glibc) | $size_mb MB |

$(cat docs/BENCHMARKS-scoring.md)

## Elsewhere

- Smoke-run wall time against the critical-path limit: \`cargo bench --bench smoke_wall\`.
- Lint speed on a 1,000-tool catalog: \`cargo bench --bench lint\` (see [lint.md](lint.md)).
- Load (1,000 runs, peak memory) and fuzzing: [reliability.md](reliability.md).
MD
cat docs/BENCHMARKS.md
