#!/usr/bin/env python3
"""A tiny external agent for `toolgate gate --agent command`, using only the standard library.

It shows the plumbing, not intelligence: it speaks MCP over streamable HTTP (JSON-RPC in
POST requests) to the server toolgate starts, follows a scripted plan for a few built-in
scenarios, and prints its final answer on stdout.

    toolgate gate --agent command --command "python3 examples/scripted_agent.py"

toolgate provides:
    TOOLGATE_MCP_URL      the MCP endpoint, e.g. http://127.0.0.1:41234/mcp
    TOOLGATE_PROMPT       the user prompt (also on stdin)
    TOOLGATE_SCENARIO_ID  the scenario id (a real agent would not need it)
    TOOLGATE_USER_URL     where to show the user a tool's request for input (elicitation),
                          when the scenario's tools ask the user anything
A non-zero exit status makes the run `errored`; anything on stderr is kept in the reason.
"""

import json
import os
import sys
import urllib.request

PROTOCOL_VERSION = "2025-11-25"


def ask_user(params):
    """Shows a tool's request for input (elicitation) to the user and returns the answer,
    `{"action": "accept" | "decline" | "cancel", "content": {...}}`. The user here is
    toolgate's, at TOOLGATE_USER_URL; without one, nobody can answer and the request is
    declined."""
    url = os.environ.get("TOOLGATE_USER_URL")
    if not url:
        return {"action": "decline"}
    request = urllib.request.Request(
        url,
        data=json.dumps(params).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read().decode())


class McpClient:
    """Just enough of an MCP client: initialize, tools/list, tools/call, and answering a
    server's elicitation/create (by default by asking the user, see `ask_user`)."""

    def __init__(self, url, on_elicitation=ask_user):
        self.url = url
        self.next_id = 1
        self.session = None
        self.on_elicitation = on_elicitation

    def _headers(self):
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": PROTOCOL_VERSION,
        }
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        return headers

    def _post(self, message):
        request = urllib.request.Request(
            self.url, data=json.dumps(message).encode(), headers=self._headers(), method="POST"
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            self.session = response.headers.get("Mcp-Session-Id", self.session)
            if "text/event-stream" not in response.headers.get("Content-Type", ""):
                body = response.read().decode()
                return json.loads(body) if body.strip() else None
            # Read the stream as it comes: the server may ask something (a request with a
            # `method`) before it answers, and waits for the reply.
            for line in response:
                line = line.decode().strip()
                if not line.startswith("data:") or not line[5:].strip():
                    continue
                payload = json.loads(line[5:])
                if "method" in payload and "id" in payload:
                    self._answer(payload)
                elif "id" in payload and payload["id"] == message.get("id"):
                    return payload
            return None

    def _answer(self, request):
        """Replies to a request from the server, in a POST of its own."""
        if request["method"] == "elicitation/create":
            reply = {"jsonrpc": "2.0", "id": request["id"],
                     "result": self.on_elicitation(request.get("params", {}))}
        else:
            reply = {"jsonrpc": "2.0", "id": request["id"],
                     "error": {"code": -32601, "message": "method not found"}}
        self._post(reply)

    def request(self, method, params=None):
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        self.next_id += 1
        reply = self._post(message)
        if reply is None or "error" in reply:
            raise RuntimeError(f"{method} failed: {reply and reply['error']}")
        return reply["result"]

    def notify(self, method):
        self._post({"jsonrpc": "2.0", "method": method, "params": {}})

    def initialize(self):
        self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {"elicitation": {"form": {}}},
                "clientInfo": {"name": "scripted-agent", "version": "0.1.0"},
            },
        )
        self.notify("notifications/initialized")

    def call(self, name, arguments):
        """Returns (is_error, structured result or text)."""
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        if "structuredContent" in result:
            return result.get("isError", False), result["structuredContent"]
        text = "".join(part.get("text", "") for part in result.get("content", []))
        return result.get("isError", False), text


def call_with_retry(client, name, arguments, attempts=3):
    """Retries a failed call, as a careful agent would after a transient error."""
    for _ in range(attempts):
        is_error, result = client.call(name, arguments)
        if not is_error:
            return result
    raise RuntimeError(f"{name} kept failing: {result}")


def plan(client, scenario_id):
    """The scripted plan for a scenario; returns the final answer."""
    if scenario_id == "T1-001":
        found = client.call("crm_search_contacts", {"query": "Acme"})[1]
        return f"Found contacts at Acme: {json.dumps(found)}"
    if scenario_id == "T1-002":
        forecast = client.call("crm_forecast", {"quarter": "2026-Q1"})[1]
        return f"Forecast for 2026-Q1: {json.dumps(forecast)}"
    if scenario_id == "T1-003":
        deals = call_with_retry(client, "crm_get_pipeline", {"stage": "negotiation"})
        return f"Deals in negotiation: {json.dumps(deals)}"
    if scenario_id == "T2-007":
        contact = call_with_retry(
            client, "crm_create_contact", {"name": "John Smith", "company": "Acme"}
        )
        client.call(
            "crm_log_activity",
            {"contact_id": contact["id"], "type": "call", "subject": "Renewal pricing"},
        )
        return f"Created {contact['id']} and logged the call."
    return "I can't help with that."


def main():
    url = os.environ["TOOLGATE_MCP_URL"]
    scenario_id = os.environ.get("TOOLGATE_SCENARIO_ID", "")
    sys.stdin.read()  # the prompt; this scripted agent plans by scenario id instead
    client = McpClient(url)
    client.initialize()
    tools = client.request("tools/list")["tools"]
    if not tools:
        print("the server offers no tools", file=sys.stderr)
        return 1
    print(plan(client, scenario_id))
    return 0


if __name__ == "__main__":
    sys.exit(main())
