#!/usr/bin/env python3
"""Writes the recorded trajectories that the trajectory-match comparison scores.

Each line of the output is one case: a reference trajectory and an output trajectory as
OpenAI-style chat messages (a user message, assistant messages whose `tool_calls` carry
`function.name` and `function.arguments` as a JSON string, one tool message per call, a final
assistant answer). The reference has 3 to 6 tool calls on tools of the built-in catalog
(src/catalog/*.json), with arguments drawn from each tool's input schema; some steps are
parallel (two calls in one assistant message) and some references call a tool twice. The
output is the reference with one variation:

- unchanged;
- reordered: two calls swapped (within a parallel message or across messages);
- extra_call: one more call, a new one or a repeat of an earlier call;
- missing_call: one call dropped;
- wrong_tool: one call made with another tool of the same category, same arguments;
- changed_argument: one argument value changed, added, dropped, a key added inside a nested
  object, an integer written as a float (`5` -> `5.0`) or a boolean written as an integer
  (`true` -> `1`);
- regrouped: the same calls in the same order, split into or merged from parallel messages.

Deterministic: the same seed and count give the same bytes.
Usage: python3 bench/trajectories.py [--count 10000] [--seed 7] [--out target/bench/trajectories.jsonl]
"""

import argparse
import copy
import glob
import json
import os
import random

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

VARIATIONS = [
    "unchanged",
    "reordered",
    "extra_call",
    "missing_call",
    "wrong_tool",
    "changed_argument",
    "regrouped",
]

WORDS = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Tyrell"]
NAMES = ["Ada Lovelace", "Grace Hopper", "Alan Turing", "Edsger Dijkstra", "Barbara Liskov"]


def load_catalog():
    tools = []
    for path in sorted(glob.glob(os.path.join(ROOT, "src", "catalog", "*.json"))):
        with open(path, encoding="utf-8") as handle:
            tools.extend(json.load(handle))
    return {tool["name"]: tool["inputSchema"] for tool in tools}


def category(name):
    return name.split("_", 1)[0]


def string_value(rng, name, schema):
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if name.endswith("_id") or name == "id":
        prefix = {"contact_id": "C", "order_id": "O", "user_id": "U", "supplier_id": "S"}
        return f"{prefix.get(name, 'X')}-{rng.randint(1, 999):03d}"
    if "date" in name or name in ("since", "start", "created_after", "occurred_at"):
        return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    if name in ("email", "from", "to"):
        return f"{rng.choice(NAMES).split()[0].lower()}@{rng.choice(WORDS).lower()}.com"
    if name in ("name", "attendee", "owner", "actor_id"):
        return rng.choice(NAMES)
    if name == "quarter":
        return f"2026-Q{rng.randint(1, 4)}"
    return f"{rng.choice(WORDS)} {rng.choice(['renewal', 'follow-up', 'audit', 'q3', 'invoice'])}"


def value_for(rng, name, schema):
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = rng.choice(kind)
    if kind == "string" or (kind is None and "enum" in schema):
        return string_value(rng, name, schema)
    if kind == "integer":
        low = schema.get("minimum", 1)
        high = schema.get("maximum", 100)
        return rng.randint(low, min(high, low + 99))
    if kind == "number":
        return rng.choice([rng.randint(100, 9000), round(rng.uniform(10, 9000), 2)])
    if kind == "boolean":
        return rng.choice([True, False])
    if kind == "array":
        items = schema.get("items", {})
        if items.get("type") == "object":
            return [
                {"sku": f"SKU-{rng.randint(1, 99):02d}", "quantity": rng.randint(1, 9)}
                for _ in range(rng.randint(1, 2))
            ]
        return [value_for(rng, name.rstrip("s"), items) for _ in range(rng.randint(1, 3))]
    if kind == "object":
        properties = schema.get("properties")
        if not properties:
            return {"status": rng.choice(["open", "won", "lost"])}
        keys = rng.sample(sorted(properties), rng.randint(1, len(properties)))
        return {key: value_for(rng, key, properties[key]) for key in sorted(keys)}
    return string_value(rng, name, {})


def arguments_for(rng, tool, schema):
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    optional = [name for name in properties if name not in required]
    chosen = list(required) + [name for name in optional if rng.random() < 0.35]
    return {name: value_for(rng, name, properties[name]) for name in chosen}


def reference_calls(rng, catalog, names):
    count = rng.randint(3, 6)
    calls = []
    for _ in range(count):
        if calls and rng.random() < 0.12:
            earlier = rng.choice(calls)
            # The same tool again: with the same arguments (a deliberate repeat) or new ones.
            if rng.random() < 0.5:
                calls.append(copy.deepcopy(earlier))
            else:
                tool = earlier["name"]
                calls.append({"name": tool, "arguments": arguments_for(rng, tool, catalog[tool])})
            continue
        tool = rng.choice(names)
        calls.append({"name": tool, "arguments": arguments_for(rng, tool, catalog[tool])})
    return calls


def group(rng, calls):
    """Splits calls into steps: mostly one call per assistant message, sometimes two."""
    groups, i = [], 0
    while i < len(calls):
        size = 2 if i + 1 < len(calls) and rng.random() < 0.3 else 1
        groups.append(calls[i : i + size])
        i += size
    return groups


def flat(groups):
    return [call for step in groups for call in step]


def change_argument(rng, catalog, call):
    """Changes one argument of `call` in place; returns what was changed."""
    arguments = call["arguments"]
    properties = catalog[call["name"]].get("properties", {})
    integers = [k for k, v in arguments.items() if type(v) is int]
    booleans = [k for k, v in arguments.items() if type(v) is bool]
    nested = [k for k, v in arguments.items() if isinstance(v, dict)]
    absent = [k for k in properties if k not in arguments]
    required = catalog[call["name"]].get("required", [])
    optional_present = [k for k in arguments if k not in required]
    kinds = ["value"]
    if integers:
        kinds.append("int_as_float")
    if booleans:
        kinds.append("bool_as_int")
    if nested:
        kinds.append("nested_key_added")
    if absent:
        kinds.append("argument_added")
    if optional_present:
        kinds.append("argument_dropped")
    kind = rng.choice(kinds)
    if kind == "int_as_float":
        key = rng.choice(integers)
        arguments[key] = float(arguments[key])
    elif kind == "bool_as_int":
        key = rng.choice(booleans)
        arguments[key] = int(arguments[key])
    elif kind == "nested_key_added":
        arguments[rng.choice(nested)]["note"] = "added"
    elif kind == "argument_added":
        key = rng.choice(absent)
        arguments[key] = value_for(rng, key, properties[key])
    elif kind == "argument_dropped":
        del arguments[rng.choice(optional_present)]
    elif not arguments:
        arguments["query"] = "unexpected"
    else:
        key = rng.choice(sorted(arguments))
        old = arguments[key]
        for _ in range(20):
            new = value_for(rng, key, properties.get(key, {"type": "string"}))
            if new != old or type(new) is not type(old):
                break
        if new == old and type(new) is type(old):
            new = f"{old}-changed"
        arguments[key] = new
    return kind


def vary(rng, catalog, names, groups):
    """The output trajectory's steps and the variation applied to the reference's steps."""
    groups = copy.deepcopy(groups)
    calls = flat(groups)
    variation = rng.choice(VARIATIONS)
    distinct = [
        (a, b) for a in range(len(calls)) for b in range(a + 1, len(calls)) if calls[a] != calls[b]
    ]
    if variation == "reordered" and not distinct:
        variation = "unchanged"
    detail = variation
    if variation == "reordered":
        a, b = rng.choice(distinct)
        positions = [(g, k) for g, step in enumerate(groups) for k in range(len(step))]
        (ga, ka), (gb, kb) = positions[a], positions[b]
        groups[ga][ka], groups[gb][kb] = groups[gb][kb], groups[ga][ka]
        detail = "reordered:within_message" if ga == gb else "reordered:across_messages"
    elif variation == "extra_call":
        if rng.random() < 0.4:
            extra = copy.deepcopy(rng.choice(calls))
            detail = "extra_call:repeat"
        else:
            tool = rng.choice(names)
            extra = {"name": tool, "arguments": arguments_for(rng, tool, catalog[tool])}
            detail = "extra_call:new"
        groups.insert(rng.randint(0, len(groups)), [extra])
    elif variation == "missing_call":
        g = rng.randrange(len(groups))
        del groups[g][rng.randrange(len(groups[g]))]
        groups = [step for step in groups if step]
    elif variation == "wrong_tool":
        g = rng.randrange(len(groups))
        call = rng.choice(groups[g])
        siblings = [n for n in names if category(n) == category(call["name"]) and n != call["name"]]
        call["name"] = rng.choice(siblings)
    elif variation == "changed_argument":
        g = rng.randrange(len(groups))
        detail = "changed_argument:" + change_argument(rng, catalog, rng.choice(groups[g]))
    elif variation == "regrouped":
        parallel = [g for g, step in enumerate(groups) if len(step) > 1]
        if parallel:
            g = rng.choice(parallel)
            groups[g : g + 1] = [[call] for call in groups[g]]
            detail = "regrouped:split"
        else:
            g = rng.randrange(len(groups) - 1)
            groups[g : g + 2] = [groups[g] + groups[g + 1]]
            detail = "regrouped:merged"
    return groups, detail


def messages(groups, case, side):
    out = [{"role": "user", "content": f"Case {case}: please take care of the request."}]
    for s, step in enumerate(groups):
        ids = [f"call_{side}_{s}_{k}" for k in range(len(step))]
        out.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": id_,
                        "type": "function",
                        "function": {
                            "name": call["name"],
                            "arguments": json.dumps(call["arguments"]),
                        },
                    }
                    for id_, call in zip(ids, step)
                ],
            }
        )
        for id_, call in zip(ids, step):
            result = {"ok": True, "tool": call["name"], "ref": f"{side}-{s}"}
            out.append({"role": "tool", "tool_call_id": id_, "content": json.dumps(result)})
    out.append({"role": "assistant", "content": "Done." if side == "ref" else "All done."})
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default=os.path.join(ROOT, "target", "bench", "trajectories.jsonl"))
    args = parser.parse_args()
    catalog = load_catalog()
    names = sorted(name for name, schema in catalog.items() if schema.get("properties"))
    rng = random.Random(args.seed)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        for case in range(args.count):
            reference = group(rng, reference_calls(rng, catalog, names))
            output, variation = vary(rng, catalog, names, reference)
            line = {
                "id": case,
                "variation": variation,
                "reference": messages(reference, case, "ref"),
                "output": messages(output, case, "out"),
            }
            handle.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
