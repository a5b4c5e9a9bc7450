#!/usr/bin/env bash
# Wall time and peak resident memory of `toolgate gate --all` with the reference agent on
# synthetic suites of 78 / 780 / 7,800 scenarios (1 / 10 / 100 copies of the shipped scenarios
# with new ids, bench/suite_scale.py), read from GNU time (%e, %M). Each size runs RUNS times
# (default 3); the medians are printed. Every run must finish all its scenarios, none errored.
# Usage: bash bench/suite_memory.sh [TOOLGATE_BINARY] [RUNS] (default: a fresh release build).
set -euo pipefail
cd "$(dirname "$0")/.."
binary="${1:-}"
runs="${2:-3}"
if [ -z "$binary" ]; then
    cargo build --release --locked --quiet
    binary=target/release/toolgate
fi
binary="$(realpath "$binary")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "| scenarios | wall time (s) | peak RSS (MB) |"
echo "|---|---|---|"
for copies in 1 10 100; do
    suite="$work/suite-$copies"
    python3 bench/suite_scale.py "$copies" "$suite"
    walls="" rss=""
    for _ in $(seq "$runs"); do
        # The gate's exit code says how the verdict went, not whether the run worked: the
        # results are checked below instead.
        /usr/bin/time -f '%e %M' -o "$work/time" \
            "$binary" gate --all --root "$suite" --out "$work/out" >/dev/null 2>&1 || true
        python3 bench/suite_memory_check.py "$work/out/results.json" "$((copies * 78))"
        read -r wall kb < "$work/time"
        walls="$walls $wall" rss="$rss $kb"
    done
    python3 -c '
import statistics, sys
n, walls, rss = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
print(f"| {int(n):,} | {statistics.median(map(float, walls)):.2f} | "
      f"{statistics.median(map(int, rss)) / 1024:.0f} |")
' "$((copies * 78))" "$walls" "$rss"
done
