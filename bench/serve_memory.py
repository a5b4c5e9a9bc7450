"""Resident memory of a long-lived `toolgate serve` or `toolgate proxy`: drives it over stdio with
raw JSON-RPC (initialize, then tools/call one after another) and prints the server process's
VmRSS (from /proc) after each checkpoint of calls.

Usage: serve_memory.py CHECKPOINTS -- COMMAND [ARG...]   (CHECKPOINTS like 10000,100000)
"""

import json
import subprocess
import sys


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    argv = sys.argv[1:]
    split = argv.index("--")
    checkpoints = [int(n) for n in argv[0].split(",")]
    command = argv[split + 1 :]
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    out = server.stdout

    def send(message):
        server.stdin.write((json.dumps(message) + "\n").encode())

    def receive():
        line = out.readline()
        if not line:
            raise SystemExit("the server closed its stdout")
        return json.loads(line)

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "serve_memory", "version": "1"}}})
    receive()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    done = 0
    for checkpoint in checkpoints:
        while done < checkpoint:
            done += 1
            send({"jsonrpc": "2.0", "id": done, "method": "tools/call", "params": {
                "name": "util_calculate", "arguments": {"expression": f"{done} + 1"}}})
            reply = receive()
            if "result" not in reply:
                raise SystemExit(f"call {done} failed: {reply}")
        print(f"{done} calls: VmRSS {rss_kib(server.pid) / 1024:.1f} MiB", flush=True)
    server.stdin.close()
    server.wait()


if __name__ == "__main__":
    main()
