#!/usr/bin/env python3
"""Minimal MCP stdio client for the round-trip benchmark: it writes one JSON-RPC line and reads
one answer line, so its own cost stays small next to the server's. Prints p50/p95/p99 in
microseconds of `tools/call` round trips.

usage: rtt.py CALLS TOOL ARGS_JSON -- SERVER COMMAND...   (TOOL "-" : the server echoes lines)
"""
import io
import json
import subprocess
import sys
import time

calls, tool, args = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
command = sys.argv[sys.argv.index("--") + 1:]
server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, bufsize=0)
# Buffered, so an answer line costs one read, not one read per byte: the client's cost must
# not grow with the length of a server's answer.
out = io.BufferedReader(server.stdout, 1 << 16)


def request(message):
    server.stdin.write((json.dumps(message) + "\n").encode())  # one write per request
    while True:
        line = out.readline()
        if not line:
            sys.exit("server closed stdout")
        answer = json.loads(line)
        if answer.get("id") == message.get("id"):
            return answer


if tool != "-":
    request({"jsonrpc": "2.0", "id": 0, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "rtt", "version": "1"}}})
    server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
samples = []
for i in range(1, calls + 1):
    message = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
               "params": {"name": tool, "arguments": args}}
    started = time.perf_counter_ns()
    answer = request(message)  # skips notifications the server sends in between
    samples.append((time.perf_counter_ns() - started) / 1000)
    if i == 1 and tool != "-" and ("error" in answer or answer["result"].get("isError")):
        sys.exit(f"tools/call failed: {answer}")
server.stdin.close()
server.wait()
samples = samples[calls // 10:]  # the first tenth warms up
samples.sort()
pick = lambda q: samples[min(len(samples) - 1, int(q * len(samples)))]
print(f"{pick(0.50):.0f} {pick(0.95):.0f} {pick(0.99):.0f}")
