"""Writes a synthetic suite of COPIES x the shipped scenarios under OUT (scenarios/, fixtures/,
smoke-set.yaml): copy k of scenario T1-001 gets the id T1-001-k, everything else unchanged.

Usage: python3 bench/suite_scale.py COPIES OUT
"""
import json
import pathlib
import re
import shutil
import sys

copies, out = int(sys.argv[1]), pathlib.Path(sys.argv[2])
root = pathlib.Path(__file__).resolve().parent.parent
if out.exists():
    shutil.rmtree(out)
shutil.copytree(root / "fixtures", out / "fixtures")
(out / "smoke-set.yaml").write_text("tiers: [1]\n")
ID = re.compile(r"^(id:\s*)(\S+)\s*$", re.M)
for path in sorted((root / "scenarios").rglob("*")):
    if path.suffix not in (".json", ".yaml", ".yml"):
        continue
    text = path.read_text()
    target = out / path.relative_to(root).parent
    target.mkdir(parents=True, exist_ok=True)
    for k in range(copies):
        if path.suffix == ".json":
            doc = json.loads(text)
            doc["id"] = f"{doc['id']}-{k}"
            copy = json.dumps(doc, indent=2)
        else:
            copy, n = ID.subn(lambda m: f"{m.group(1)}{m.group(2)}-{k}", text, count=1)
            assert n == 1, path
        (target / f"{path.stem}-{k}{path.suffix}").write_text(copy)
