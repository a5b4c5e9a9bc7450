#!/usr/bin/env bash
# `toolgate lint` as a whole process (start-up, loading, every check, the o200k token count,
# rendering the table): the built-in catalog (43 tools) and a generated 1,000-tool catalog, the
# same catalog as `cargo bench --bench lint` builds (bench/lint_catalog.py writes it as a saved
# tools/list). Targets (issue #22): 20 ms and 100 ms.
# Timed with hyperfine when it is installed, else with a Python loop (the median of RUNS runs).
# Prints a markdown table. Usage: bash bench/lint_process.sh BINARY [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$1"
runs="${2:-50}"
catalog=target/bench-lint/tools-1000.json
mkdir -p "$(dirname "$catalog")"
python3 bench/lint_catalog.py 1000 > "$catalog"

# The median of RUNS runs of COMMAND, in milliseconds. `lint` exits 0 on the built-in catalog
# and non-zero when it finds warnings; either way the report was written.
median_ms() {
  if command -v hyperfine >/dev/null; then
    local json
    json=$(mktemp)
    hyperfine --style none --warmup 3 --runs "$runs" --ignore-failure --export-json "$json" \
      --output null -N -- "$(printf '%q ' "$@")" >/dev/null 2>&1
    python3 -c "import json,sys; print(f\"{json.load(open(sys.argv[1]))['results'][0]['median'] * 1000:.1f}\")" "$json"
    rm -f "$json"
  else
    python3 - "$runs" "$@" <<'PY'
import subprocess, sys, time
runs = int(sys.argv[1])
samples = []
for _ in range(runs + 3):
    t = time.perf_counter()
    subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    samples.append(time.perf_counter() - t)
samples = sorted(samples[3:])
print(f"{samples[len(samples) // 2] * 1000:.1f}")
PY
  fi
}

tool=$(command -v hyperfine >/dev/null && echo "hyperfine $(hyperfine --version | cut -d' ' -f2), median of $runs runs after 3 warm-up runs" || echo "a Python loop, median of $runs runs after 3 warm-up runs")
echo "| catalog | command | median | target |"
echo "|---|---|---|---|"
echo "| built-in (43 tools) | \`toolgate lint\` | $(median_ms "$bin" lint) ms | 20 ms |"
echo "| generated (1,000 tools) | \`toolgate lint --tools-json tools-1000.json\` | $(median_ms "$bin" lint --tools-json "$catalog") ms | 100 ms |"
echo
echo "Timed with $tool."
