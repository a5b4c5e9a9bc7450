#!/usr/bin/env python3
"""A deliberately broken MCP stdio server for toolgate's failure tests (no SDK, plain JSON-RPC).

Usage: broken_server.py MODE
  exit      writes to stderr and exits before answering anything
  garbage   answers `initialize` with a line that is not JSON-RPC, then exits
  no-tools  initializes, then lists no tools
  die       initializes, lists one tool `echo`, and exits on the first tools/call
  hang PID  writes its pid to the file PID, initializes, lists `echo`, never answers a
            tools/call, ignores SIGTERM, and keeps running after its stdin closes
  echo      initializes, lists `echo`, and answers each call with the line it received
            (bytes that are not UTF-8 included, shown escaped)
  babble    initializes, lists `echo`, and answers a tools/call with a log line instead
  flood     initializes, lists `echo`, and answers a tools/call with a 17 MB line
  misroute  initializes, lists `echo`, and answers a tools/call under another id
  pages     initializes, and lists `echo` on every tools/list page with a new cursor each
            time (`p1`, `p2`, ...): a cursor that advances over the same tools forever
"""
import json
import os
import signal
import sys
import time

mode = sys.argv[1] if len(sys.argv) > 1 else "exit"
if mode == "exit":
    sys.stderr.write("fatal: database password rejected\n")
    sys.exit(3)

TOOL = {
    "name": "echo",
    "description": "Echoes its text back.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
}

def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()

if mode == "hang":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with open(sys.argv[2], "w") as pid_file:
        pid_file.write(f"{os.getpid()}\n")

for raw in sys.stdin.buffer:
    try:
        request = json.loads(raw)
    except ValueError:
        if mode == "echo":
            continue
        raise
    line = raw.decode("utf-8", "backslashreplace")
    method = request.get("method")
    if "id" not in request:
        continue
    if method == "initialize":
        if mode == "garbage":
            sys.stdout.write("hello, I am not an MCP server\n")
            sys.stdout.flush()
            sys.stderr.write("oops: printed a banner on stdout\n")
            sys.stderr.flush()
            sys.exit(1)
        send({"jsonrpc": "2.0", "id": request["id"], "result": {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "broken", "version": "0.0.1"},
        }})
    elif method == "tools/list":
        tools = [] if mode == "no-tools" else [TOOL]
        result = {"tools": tools}
        if mode == "pages":
            cursor = (request.get("params") or {}).get("cursor") or "p0"
            result["nextCursor"] = "p%d" % (int(cursor[1:]) + 1)
        send({"jsonrpc": "2.0", "id": request["id"], "result": result})
    elif method == "tools/call":
        if mode == "hang":
            continue
        if mode == "misroute":
            send({"jsonrpc": "2.0", "id": request["id"] + 1000, "result": {
                "content": [{"type": "text", "text": "hi"}]}})
            continue
        if mode == "babble":
            sys.stdout.write("Traceback (most recent call last): KeyError 'text'\n")
            sys.stdout.flush()
            continue
        if mode == "flood":
            sys.stdout.write('{"jsonrpc": "2.0", "id": %s, "result": {"content": [{"type": "text", "text": "%s"}]}}\n'
                             % (json.dumps(request["id"]), "x" * (17 * 1024 * 1024)))
            sys.stdout.flush()
            continue
        if mode == "echo":
            send({"jsonrpc": "2.0", "id": request["id"], "result": {
                "content": [{"type": "text", "text": line.strip()}]}})
            continue
        sys.stderr.write("segfault in echo handler (simulated)\n")
        sys.stderr.flush()
        sys.exit(1)
    else:
        send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no"}})

if mode == "hang":
    while True:
        time.sleep(60)
