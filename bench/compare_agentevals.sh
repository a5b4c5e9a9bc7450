#!/usr/bin/env bash
# Trajectory matching side by side, written to docs/BENCHMARKS-scoring.md (bench/run.sh
# includes it in docs/BENCHMARKS.md):
# - 10,000 recorded trajectories (bench/trajectories.py, seeded) matched against their
#   references in four modes (strict, unordered, superset, subset) by toolgate
#   (benches/trajectory_match.rs) and by LangChain's agentevals (bench/agentevals_match.py,
#   in the venv target/bench-venv), parsing excluded; throughput per mode and ratios;
# - each side as a whole process, start to end;
# - the parity table: where the verdicts differ and why (bench/compare_agentevals.py).
# Usage: bash bench/compare_agentevals.sh
set -euo pipefail
cd "$(dirname "$0")/.."
agentevals_version=0.0.9
venv=target/bench-venv
out=target/bench
mkdir -p "$out"
load=$(cut -d' ' -f1-3 /proc/loadavg)

[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "agentevals==$agentevals_version"
# Tracing would send every evaluator call to LangSmith; the comparison is local.
export LANGSMITH_TRACING=false LANGCHAIN_TRACING_V2=false

python3 bench/trajectories.py --out "$out/trajectories.jsonl"
bin=$(cargo bench --locked --bench trajectory_match --no-run --message-format=json \
    | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "trajectory_match" and m.get("executable"):
        print(m["executable"])')

whole() { python3 bench/compare_agentevals.py whole "$@"; }
"$bin" --repeat 5 > "$out/toolgate_throughput.txt"
whole --stdout "$out/toolgate_once.txt" -- \
    "$bin" --once --verdicts "$out/toolgate_verdicts_once.json" > "$out/toolgate_whole.txt"
"$venv/bin/python" bench/agentevals_match.py --repeat 1 > "$out/agentevals_throughput.txt"
whole --stdout "$out/agentevals_once.txt" -- \
    "$venv/bin/python" bench/agentevals_match.py --once \
    --verdicts "$out/agentevals_verdicts_once.json" > "$out/agentevals_whole.txt"
for side in toolgate agentevals; do
    cmp -s "$out/${side}_verdicts.json" "$out/${side}_verdicts_once.json" \
        || { echo "error: $side gave other verdicts in its whole-process run" >&2; exit 1; }
done

python3 bench/compare_agentevals.py report --dir "$out" \
    --meta "date=$(date -u +%Y-%m-%d)" \
    --meta "cores=$(nproc)" \
    --meta "cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" \
    --meta "rustc=$(rustc --version)" \
    --meta "python=$("$venv/bin/python" --version)" \
    --meta "agentevals=$agentevals_version" \
    --meta "langchain_core=$("$venv/bin/python" -c 'import langchain_core; print(langchain_core.__version__)')" \
    --meta "load=$load" \
    > docs/BENCHMARKS-scoring.md
cat docs/BENCHMARKS-scoring.md
