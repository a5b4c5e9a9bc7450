#!/usr/bin/env python3
"""Scores the recorded trajectories with agentevals' trajectory match, in its four modes.

Reads target/bench/trajectories.jsonl (bench/trajectories.py) and parses every line first;
then, for each mode (strict, unordered, superset, subset), times only the evaluator calls
`create_trajectory_match_evaluator(trajectory_match_mode=mode)(outputs=..., reference_outputs=...)`
with the default tool-args match mode (`exact`), repeated `--repeat` times. Those calls include
what agentevals does on each call besides matching: converting the messages with
langchain-core and the LangSmith `@traceable` wrapper (tracing off). A second timing calls the
mode's own scorer (`agentevals.trajectory.<mode>._scorer`, the matching alone) on messages
converted beforehand; it still `json.loads` every argument string, and strict's scorer converts
the messages again. Both must give the same verdicts.

Prints one line per mode: `mode per_second seconds cpu_per_second cpu_seconds
scorer_per_second scorer_cpu_per_second` (medians; wall clock, then the process's CPU time,
which other load on the machine disturbs less), and writes the evaluator's verdicts as JSON,
{"mode": [true, false, ...]} in case order. `--once` makes one pass of the evaluator per mode
and skips the scorer timing (`-` in its columns): the whole-process run. Run it in the venv that
has agentevals installed.
Usage: python bench/agentevals_match.py [--repeat 3] [--once] [--cases PATH] [--verdicts PATH]
"""

import argparse
import json
import os
import statistics
import sys
import time

from agentevals.trajectory import strict, subset, superset, unordered
from agentevals.trajectory.match import create_trajectory_match_evaluator
from agentevals.trajectory.utils import _normalize_to_openai_messages_list

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = ["strict", "unordered", "superset", "subset"]
SCORERS = {
    "strict": strict._scorer,
    "unordered": unordered._scorer,
    "superset": superset._scorer,
    "subset": subset._scorer,
}


def timed(repeat, one_pass):
    """Median wall and CPU seconds of `repeat` calls of `one_pass`, and its last result."""
    wall, cpu = [], []
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        result = one_pass()
        wall.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    return statistics.median(wall), statistics.median(cpu), result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--once", action="store_true")
    parser.add_argument("--cases", default=os.path.join(ROOT, "target", "bench", "trajectories.jsonl"))
    parser.add_argument(
        "--verdicts", default=os.path.join(ROOT, "target", "bench", "agentevals_verdicts.json")
    )
    args = parser.parse_args()
    with open(args.cases, encoding="utf-8") as handle:
        cases = [json.loads(line) for line in handle]
    pairs = [(case["output"], case["reference"]) for case in cases]
    if args.once:
        args.repeat = 1
    normalized = [
        (_normalize_to_openai_messages_list(o), _normalize_to_openai_messages_list(r))
        for o, r in ([] if args.once else pairs)
    ]
    verdicts = {}
    for mode in MODES:
        evaluator = create_trajectory_match_evaluator(
            trajectory_match_mode=mode, tool_args_match_mode="exact"
        )
        wall, cpu, scores = timed(
            args.repeat,
            lambda: [evaluator(outputs=o, reference_outputs=r)["score"] for o, r in pairs],
        )
        verdicts[mode] = [bool(score) for score in scores]
        n = len(pairs)
        core = "- -"
        if not args.once:
            scorer = SCORERS[mode]
            core_wall, core_cpu, core_scores = timed(
                args.repeat,
                lambda: [
                    scorer(outputs=o, reference_outputs=r, tool_args_match_mode="exact")
                    for o, r in normalized
                ],
            )
            assert verdicts[mode] == [bool(score) for score in core_scores], mode
            core = f"{n / core_wall:.0f} {n / core_cpu:.0f}"
        print(f"{mode} {n / wall:.0f} {wall:.4f} {n / cpu:.0f} {cpu:.4f} {core}", flush=True)
    with open(args.verdicts, "w", encoding="utf-8") as handle:
        json.dump(verdicts, handle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
