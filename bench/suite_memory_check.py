"""Checks that a results.json holds TOTAL runs, none errored (bench/suite_memory.sh).

Usage: python3 bench/suite_memory_check.py RESULTS TOTAL
"""
import json
import sys

overall = json.load(open(sys.argv[1]))["summary"]["overall"]
if overall["total"] != int(sys.argv[2]) or overall["errored"] != 0:
    sys.exit(f"{sys.argv[1]}: expected {sys.argv[2]} runs, none errored; got {overall}")
