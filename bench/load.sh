#!/usr/bin/env bash
# Load run: 4 scenarios x 250 repetitions (1,000 runs) against a fake provider on loopback,
# at concurrency 64 and 256; checks that no result is lost and prints the wall time and
# toolgate's peak resident memory (GNU time's %M). Debug build, as `cargo test` builds it.
set -euo pipefail
cd "$(dirname "$0")/.."
for concurrency in 64 256; do
    TOOLGATE_LOAD_CONCURRENCY=$concurrency cargo test --quiet --test it \
        a_thousand_repetitions -- --ignored --nocapture 2>&1 | grep 'runs at concurrency'
done
