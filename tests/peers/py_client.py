"""Drive an MCP server over stdio with the official Python SDK and print what it saw as JSON.

Usage: py_client.py [--mode auto|legacy] [--call NAME JSON_ARGS]... -- COMMAND [ARG...]
       py_client.py [--mode auto|legacy] [--call NAME JSON_ARGS]... --url URL

Lists the tools, then makes each --call in order. Prints one JSON object: the negotiated
protocol version, the tools (as sent, camelCase) and, per call, either the result or the
JSON-RPC error. --mode auto (the SDK's default) negotiates 2026-07-28 with server/discover and
falls back to the initialize handshake; legacy forces initialize. --url connects to a streamable
HTTP server instead of starting one.
"""

import argparse
import asyncio
import json
import sys

from mcp import Client, MCPError, StdioServerParameters


async def run(mode, calls, command, url):
    server = url if url else StdioServerParameters(command=command[0], args=command[1:])
    async with Client(server, mode=mode, read_timeout_seconds=10) as client:
        tools = await client.list_tools()
        report = {
            "protocolVersion": client.protocol_version,
            "tools": [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools.tools],
            "calls": [],
        }
        for name, arguments in calls:
            entry = {"tool": name, "arguments": arguments}
            try:
                result = await client.call_tool(name, arguments)
                entry["result"] = result.model_dump(by_alias=True, exclude_none=True, mode="json")
            except MCPError as error:
                entry["error"] = {"code": error.code, "message": error.message}
            report["calls"].append(entry)
        return report


def main():
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="auto", choices=["auto", "legacy"])
    parser.add_argument("--call", nargs=2, action="append", default=[], metavar=("NAME", "JSON_ARGS"))
    parser.add_argument("--url")
    options = parser.parse_args(argv[:split])
    command = argv[split + 1 :]
    if not command and not options.url:
        sys.exit("usage: py_client.py [--mode auto|legacy] [--call NAME JSON_ARGS]... (-- COMMAND [ARG...] | --url URL)")
    calls = [(name, json.loads(arguments)) for name, arguments in options.call]
    report = asyncio.run(run(options.mode, calls, command, options.url))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
