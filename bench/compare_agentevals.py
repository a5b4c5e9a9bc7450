#!/usr/bin/env python3
"""Helpers for bench/compare_agentevals.sh: timing a whole process, and the report.

    python3 bench/compare_agentevals.py whole --stdout FILE -- COMMAND...
        Runs COMMAND with its stdout to FILE and prints `wall_seconds cpu_seconds` (CPU: user
        + system time of the child).

    python3 bench/compare_agentevals.py report --dir target/bench [--meta KEY=VALUE ...]
        Reads the cases, both verdict files, both throughput outputs and both whole-process
        timings from --dir and prints the Markdown fragment: throughput per mode with ratios,
        the whole-process figures and the parity table, every disagreement classed and
        explained. A disagreement of a kind not explained below is listed as unexplained and
        the exit code is 1.
"""

import argparse
import collections
import json
import os
import resource
import subprocess
import sys
import time

MODES = ["strict", "unordered", "superset", "subset"]

# Why the two disagree, keyed by (mode or "*", variation, which side passes). Each entry was
# checked against agentevals 0.0.9's source (agentevals/trajectory/strict.py, utils.py).
EXPLAINED = {
    ("strict", "reordered:within_message", "agentevals"): (
        "agentevals' strict mode compares message by message and, inside one assistant "
        "message, pairs the tool calls in any order; toolgate's trajectory is the flat list "
        "of calls in recorded order, so two parallel calls swapped are out of order"
    ),
    ("strict", "regrouped:split", "toolgate"): (
        "the same calls in the same order, but one parallel message became two messages: "
        "agentevals' strict mode requires the same number of messages with the same roles and "
        "the same calls per message; toolgate compares only the sequence of calls"
    ),
    ("strict", "regrouped:merged", "toolgate"): (
        "the same calls in the same order, but two messages became one parallel message: "
        "agentevals' strict mode requires the same messages; toolgate compares only the "
        "sequence of calls"
    ),
    ("*", "changed_argument:bool_as_int", "agentevals"): (
        "a boolean argument sent as an integer (`true` -> `1`): agentevals compares the "
        "parsed arguments with Python's `==`, where `True == 1` and `False == 0`; toolgate "
        "compares JSON values, where a boolean is not a number (numbers still compare by "
        "value: `5` equals `5.0` in both)"
    ),
}


def whole(command, stdout):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with open(stdout, "w", encoding="utf-8") as handle:
        code = subprocess.call(command, stdout=handle)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"{wall:.3f} {cpu:.3f}")
    return code


def throughput(path):
    """{mode: [fields...]} from a throughput output: `mode per_second seconds ...`."""
    rows = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            fields = line.split()
            if fields and fields[0] in MODES:
                rows[fields[0]] = fields[1:]
    return rows


def read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def number(text):
    return f"{float(text):,.0f}"


def ratio(a, b):
    value = float(a) / float(b)
    return f"{value:,.0f}x" if value >= 10 else f"{value:.1f}x"


def report(directory, meta):
    cases = []
    with open(os.path.join(directory, "trajectories.jsonl"), encoding="utf-8") as handle:
        for line in handle:
            case = json.loads(line)
            cases.append(case["variation"])
    with open(os.path.join(directory, "toolgate_verdicts.json"), encoding="utf-8") as handle:
        ours = json.load(handle)
    with open(os.path.join(directory, "agentevals_verdicts.json"), encoding="utf-8") as handle:
        theirs = json.load(handle)
    tg = throughput(os.path.join(directory, "toolgate_throughput.txt"))
    ae = throughput(os.path.join(directory, "agentevals_throughput.txt"))
    tg_wall, tg_cpu = read(os.path.join(directory, "toolgate_whole.txt")).split()
    ae_wall, ae_cpu = read(os.path.join(directory, "agentevals_whole.txt")).split()
    count = len(cases)

    out = []
    emit = out.append
    emit("## Trajectory matching: toolgate vs agentevals")
    emit("")
    emit(
        f"Written by `bash bench/compare_agentevals.sh` on {meta['date']}: {meta['cores']} cores "
        f"({meta['cpu']}), {meta['rustc']}, {meta['python']}, agentevals {meta['agentevals']} "
        f"(langchain-core {meta['langchain_core']}, LangSmith tracing off). Load average at the "
        f"start: {meta['load']} (a shared machine: wall-clock figures move with its load, "
        "CPU-time figures, the process's own CPU time, much less)."
    )
    emit("")
    emit(
        f"{count:,} recorded trajectories from [bench/trajectories.py](../bench/trajectories.py) "
        "(seed 7): OpenAI-style messages, 3 to 6 tool calls on the built-in catalog's tools, some "
        "in parallel messages, some repeated; each output is its reference unchanged, reordered, "
        "with an extra call (new or a repeat), a missing call, a wrong tool, a changed argument "
        "(value changed, added, dropped, a nested key added, `5` as `5.0`, `true` as `1`) or "
        "regrouped into other messages. Both sides parse every case first and time only the "
        "matching, per mode, with exact argument comparison:"
    )
    emit("")
    emit(
        "- agentevals, *evaluator*: `create_trajectory_match_evaluator(trajectory_match_mode="
        "mode)` called on each case, as its documentation shows "
        "([bench/agentevals_match.py](../bench/agentevals_match.py)), one pass per mode. Each "
        "call converts both message lists with langchain-core (pydantic models) and goes through "
        "LangSmith's `@traceable` wrapper; a profile puts most of its time there, not in the "
        "matching."
    )
    emit(
        "- agentevals, *scorer only*: the mode's own `_scorer` function (the matching) on "
        "messages converted beforehand; it still `json.loads` each argument string, and strict's "
        "scorer converts the messages again. Same verdicts as the evaluator."
    )
    emit(
        "- toolgate: `score::reference_match::matches_reference` (exact reference calls: the "
        "same tool and equal arguments, an equivalence, so a first-fit pairing is a largest "
        "one; the budget of strict and unordered), on calls already parsed into expected "
        "calls and a trace ([benches/trajectory_match.rs](../benches/trajectory_match.rs)), "
        "median of 5 passes. *From strings* puts parsing every argument string (serde_json) "
        "and building both call lists inside the timed loop too."
    )
    emit("")
    like = {mode: float(tg[mode][5]) / float(ae[mode][5]) for mode in MODES}
    missed = [mode for mode in MODES if like[mode] < 50]
    parsing = {mode: 1 - float(tg[mode][5]) / float(tg[mode][2]) for mode in MODES}
    emit(
        "**Like for like** (both sides parse every argument string and match, nothing else: "
        "toolgate *from strings* vs agentevals' *scorer only*, CPU time): "
        + ", ".join(f"{mode} {like[mode]:,.1f}x" for mode in MODES)
        + ". Target: at least 50x in every mode; "
        + ("met." if not missed else f"not met in {', '.join(missed)}.")
        + " From strings, toolgate spends "
        + ", ".join(f"{parsing[mode]:.0%}" for mode in MODES)
        + " of its time (in the same order) parsing the argument strings and building the "
        "calls, the rest matching; agentevals' scorers in the other three modes cost far less "
        "than its strict one, so there parsing decides the ratio. The larger ratios below "
        "compare toolgate's "
        "matching alone with agentevals' whole evaluator."
    )
    emit("")
    emit("Trajectories per second (wall clock, or the process's CPU time where marked):")
    emit("")
    emit(
        "| mode | agentevals evaluator | evaluator, CPU | agentevals scorer only, CPU | "
        "toolgate | toolgate, CPU | toolgate from strings, CPU |"
    )
    emit("|---|---|---|---|---|---|---|")
    for mode in MODES:
        a, t = ae[mode], tg[mode]
        emit(
            f"| {mode} | {number(a[0])} | {number(a[2])} | {number(a[5])} | {number(t[0])} | "
            f"{number(t[2])} | {number(t[5])} |"
        )
    emit("")
    emit("toolgate / agentevals:")
    emit("")
    emit(
        "| mode | vs evaluator, wall | vs evaluator, CPU | from strings vs evaluator, CPU | "
        "vs scorer only, CPU | from strings vs scorer only, CPU |"
    )
    emit("|---|---|---|---|---|---|")
    for mode in MODES:
        a, t = ae[mode], tg[mode]
        emit(
            f"| {mode} | {ratio(t[0], a[0])} | {ratio(t[2], a[2])} | {ratio(t[5], a[2])} | "
            f"{ratio(t[2], a[5])} | {ratio(t[5], a[5])} |"
        )
    emit("")
    evaluations = count * len(MODES)
    emit(
        f"Whole process, start to end ({count:,} cases x 4 modes = {evaluations:,} verdicts: "
        "start-up, reading and parsing the JSONL, one pass per mode, writing the verdicts):"
    )
    emit("")
    emit("| | wall | CPU | verdicts per second (wall) |")
    emit("|---|---|---|---|")
    emit(
        f"| `python bench/agentevals_match.py --once` | {float(ae_wall):.2f} s | "
        f"{float(ae_cpu):.2f} s | {evaluations / float(ae_wall):,.0f} |"
    )
    emit(
        f"| `trajectory_match --once` (release bench binary) | {float(tg_wall):.2f} s | "
        f"{float(tg_cpu):.2f} s | {evaluations / float(tg_wall):,.0f} |"
    )
    emit("")
    emit(
        f"Whole process, toolgate / agentevals: {float(ae_wall) / float(tg_wall):,.0f}x (wall), "
        f"{float(ae_cpu) / float(tg_cpu):,.0f}x (CPU)."
    )
    emit("")

    emit("### Parity")
    emit("")
    emit(
        "The modes mean the same thing on both sides for the calls themselves: *unordered* is "
        "the same multiset of calls, *superset* every reference call made (as often as the "
        "reference makes it), *subset* every call made is a reference call (each serving one "
        "call). *strict* differs by design: agentevals compares messages (their number, roles "
        "and the calls of each message, in any order within a message), toolgate the flat "
        "sequence of calls. Neither side compares tool results or the final answer."
    )
    emit("")
    emit("| mode | cases | agree | disagree | toolgate passes, agentevals fails | agentevals passes, toolgate fails |")
    emit("|---|---|---|---|---|---|")
    kinds = collections.Counter()
    for mode in MODES:
        agree = sum(1 for a, b in zip(ours[mode], theirs[mode]) if a == b)
        only_ours = sum(1 for a, b in zip(ours[mode], theirs[mode]) if a and not b)
        only_theirs = sum(1 for a, b in zip(ours[mode], theirs[mode]) if b and not a)
        emit(f"| {mode} | {count:,} | {agree:,} | {count - agree:,} | {only_ours:,} | {only_theirs:,} |")
        for i, (a, b) in enumerate(zip(ours[mode], theirs[mode])):
            if a != b:
                kinds[(mode, cases[i], "toolgate" if a else "agentevals")] += 1
    emit("")
    unexplained = 0
    if kinds:
        emit("Every disagreement, by mode and variation:")
        emit("")
        emit("| mode | variation | cases | passes only on | why |")
        emit("|---|---|---|---|---|")
        for (mode, variation, side), n in sorted(kinds.items(), key=lambda kv: (MODES.index(kv[0][0]), kv[0][1])):
            why = EXPLAINED.get((mode, variation, side)) or EXPLAINED.get(("*", variation, side))
            if why is None:
                unexplained += n
                why = "**unexplained**"
            emit(f"| {mode} | `{variation}` | {n:,} | {side} | {why} |")
        emit("")
    emit("Agreement by variation (cases where all four modes agree / cases):")
    emit("")
    by_variation = collections.defaultdict(lambda: [0, 0])
    for i, variation in enumerate(cases):
        by_variation[variation][1] += 1
        if all(ours[m][i] == theirs[m][i] for m in MODES):
            by_variation[variation][0] += 1
    emit("| variation | all modes agree | cases |")
    emit("|---|---|---|")
    for variation, (agree, total) in sorted(by_variation.items()):
        emit(f"| `{variation}` | {agree:,} | {total:,} |")
    emit("")
    emit(
        "Reproduce: `bash bench/compare_agentevals.sh` (creates the venv `target/bench-venv` "
        f"with `pip install agentevals=={meta['agentevals']}`, generates the cases, builds and "
        "runs `cargo bench --bench trajectory_match`, runs agentevals, writes this file)."
    )
    print("\n".join(out))
    return 1 if unexplained else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("whole")
    w.add_argument("--stdout", required=True)
    w.add_argument("rest", nargs=argparse.REMAINDER)
    r = sub.add_parser("report")
    r.add_argument("--dir", required=True)
    r.add_argument("--meta", action="append", default=[])
    args = parser.parse_args()
    if args.command == "whole":
        command = args.rest[1:] if args.rest[:1] == ["--"] else args.rest
        return whole(command, args.stdout)
    meta = dict(item.split("=", 1) for item in args.meta)
    return report(args.dir, meta)


if __name__ == "__main__":
    sys.exit(main())
