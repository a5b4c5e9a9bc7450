#!/usr/bin/env python3
"""The floor of the round-trip benchmark: echoes every line back over the same pipes."""
import sys

for line in sys.stdin.buffer:
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
