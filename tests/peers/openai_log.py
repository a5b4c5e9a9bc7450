"""Writes a real OpenAI-style message log, produced by the official `openai` Python client.

Usage: openai_log.py BASE_URL OUT_FILE

Runs a tiny tool-calling agent loop with `OpenAI(base_url=BASE_URL, api_key="test-key")` against a
chat-completions server at BASE_URL (in the tests, a local fake that first asks for one
`get_weather` call and then answers in text). The tool runs locally as a stub. Two conversations:
- "conv-1": the tool succeeds;
- "conv-2": the tool returns the error text "error: city not found", and the model's final answer
  (whatever the server says) is kept as is, so a server that claims success makes a false claim.

OUT_FILE gets one JSON line per conversation, `{"id": ..., "messages": [...]}`: the system and user
messages sent, each assistant message exactly as the client returned it
(`message.model_dump(exclude_none=True)`), and a `tool` message with the matching `tool_call_id`
after every tool call. Runs in target/peers/venv-traces (see install.sh).
"""

import json
import sys

from openai import OpenAI

MODEL = "gpt-4o-mini"
MAX_TURNS = 8

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]

CONVERSATIONS = [
    # (id, user question, whether the tool fails)
    ("conv-1", "What is the weather in Paris?", False),
    ("conv-2", "What is the weather in Paris today?", True),
]


def get_weather(arguments, fail):
    """The local tool stub: a JSON result, or an error text when `fail`."""
    if fail:
        return "error: city not found"
    city = arguments.get("city", "")
    return json.dumps({"city": city, "forecast": "sunny", "temperature_c": 21})


def run_tool(name, raw_arguments, fail):
    try:
        arguments = json.loads(raw_arguments or "{}")
    except json.JSONDecodeError:
        return "error: arguments are not JSON"
    if name == "get_weather":
        return get_weather(arguments, fail)
    return f"error: unknown tool {name}"


def conversation(client, conv_id, question, fail):
    messages = [
        {"role": "system", "content": "You are a helpful assistant. Use the tools when needed."},
        {"role": "user", "content": question},
    ]
    for _ in range(MAX_TURNS):
        completion = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
        message = completion.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            break
        for call in message.tool_calls:
            result = run_tool(call.function.name, call.function.arguments, fail)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    else:
        raise SystemExit(f"{conv_id}: no final answer after {MAX_TURNS} turns")
    return {"id": conv_id, "messages": messages}


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: openai_log.py BASE_URL OUT_FILE")
    base_url, out_file = sys.argv[1], sys.argv[2]
    client = OpenAI(base_url=base_url, api_key="test-key", max_retries=0, timeout=30)
    with open(out_file, "w", encoding="utf-8") as out:
        for conv_id, question, fail in CONVERSATIONS:
            record = conversation(client, conv_id, question, fail)
            out.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
