"""Writes real OTLP JSON traces of two agent runs, produced by the OpenTelemetry Python SDK.

Usage: otel_traces.py OUT_FILE

Emits spans with the SDK's TracerProvider (an in-memory span processor collects them as they end),
following the OpenTelemetry GenAI semantic conventions: a root `invoke_agent` span per run, child
`chat` spans and `execute_tool {name}` spans carrying gen_ai.tool.name, gen_ai.tool.call.id,
gen_ai.tool.call.arguments and gen_ai.tool.call.result (JSON strings).
- Trace 1: search_contacts {"query": "Ada"} -> {"contacts": [{"id": "C-001", ...}]}, then
  get_contact {"contact_id": "C-001"} -> the contact.
- Trace 2: get_contact {"contact_id": "C-999"} (an id no tool returned) -> an error: the tool span
  has status ERROR and error.type set; the final answer claims success anyway.
The first chat span of each run records the user prompt (`gen_ai.input.messages`) and the last
one the final answer (`gen_ai.output.messages`), as JSON strings.

The finished spans go through the SDK's OTLP encoder
(`opentelemetry.exporter.otlp.proto.common.trace_encoder.encode_spans`) into one
ExportTraceServiceRequest, written to OUT_FILE as ONE line of OTLP JSON, as OTLP JSON file
exporters write it. protobuf's JSON mapping renders bytes as base64, while OTLP JSON wants trace
and span ids as lowercase hex, so traceId/spanId/parentSpanId are rewritten to hex; enums are
integers, as OTLP JSON requires. Runs in target/peers/venv-traces (see install.sh).
"""

import base64
import json
import sys
import time

from google.protobuf.json_format import MessageToDict
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.trace import SpanKind, Status, StatusCode

MODEL = "gpt-4o-mini"
AGENT = "contacts-agent"
MS = 1_000_000  # nanoseconds


class Collect(SpanProcessor):
    """Keeps every finished span, in the order they end."""

    def __init__(self):
        self.spans = []

    def on_end(self, span):
        self.spans.append(span)


class Run:
    """One agent run: a root invoke_agent span and a clock that moves forward per step."""

    def __init__(self, tracer, conversation_id, start_ns):
        self.tracer = tracer
        self.conversation_id = conversation_id
        self.now = start_ns
        self.root = tracer.start_span(
            f"invoke_agent {AGENT}",
            kind=SpanKind.INTERNAL,
            start_time=self.tick(1),
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.provider.name": "openai",
                "gen_ai.agent.name": AGENT,
                "gen_ai.conversation.id": conversation_id,
                "gen_ai.request.model": MODEL,
            },
        )
        self.context = trace.set_span_in_context(self.root)

    def tick(self, ms):
        self.now += ms * MS
        return self.now

    def chat(self, finish_reason, input_tokens, output_tokens, prompt=None, answer=None):
        attributes = {}
        if prompt is not None:
            attributes["gen_ai.input.messages"] = json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": prompt}]}]
            )
        if answer is not None:
            attributes["gen_ai.output.messages"] = json.dumps(
                [
                    {
                        "role": "assistant",
                        "parts": [{"type": "text", "content": answer}],
                        "finish_reason": finish_reason,
                    }
                ]
            )
        span = self.tracer.start_span(
            f"chat {MODEL}",
            context=self.context,
            kind=SpanKind.CLIENT,
            start_time=self.tick(2),
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.conversation.id": self.conversation_id,
                "gen_ai.request.model": MODEL,
                "gen_ai.response.model": MODEL,
                "gen_ai.response.finish_reasons": [finish_reason],
                "gen_ai.usage.input_tokens": input_tokens,
                "gen_ai.usage.output_tokens": output_tokens,
                **attributes,
            },
        )
        span.end(end_time=self.tick(350))

    def tool(self, name, call_id, arguments, result, error_type=None):
        span = self.tracer.start_span(
            f"execute_tool {name}",
            context=self.context,
            kind=SpanKind.INTERNAL,
            start_time=self.tick(1),
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.type": "function",
                "gen_ai.tool.call.id": call_id,
                "gen_ai.tool.call.arguments": json.dumps(arguments),
                "gen_ai.tool.call.result": json.dumps(result),
            },
        )
        if error_type is not None:
            span.set_attribute("error.type", error_type)
            span.set_status(Status(StatusCode.ERROR, result.get("error", error_type)))
        span.end(end_time=self.tick(40))

    def end(self):
        self.root.end(end_time=self.tick(1))


def emit(tracer, start_ns):
    # Trace 1: search, then fetch the contact the search returned.
    run = Run(tracer, "conv-1", start_ns)
    run.chat("tool_calls", 120, 18, prompt="What is Ada's email address?")
    run.tool(
        "search_contacts",
        "call_search_1",
        {"query": "Ada"},
        {"contacts": [{"id": "C-001", "name": "Ada Lovelace"}]},
    )
    run.chat("tool_calls", 180, 20)
    run.tool(
        "get_contact",
        "call_get_1",
        {"contact_id": "C-001"},
        {"id": "C-001", "name": "Ada Lovelace", "email": "ada@example.com"},
    )
    run.chat("stop", 240, 30, answer="Ada Lovelace's email is ada@example.com.")
    run.end()

    # Trace 2: fetch a contact id nothing returned; the tool fails.
    run = Run(tracer, "conv-2", run.now + 1000 * MS)
    run.chat("tool_calls", 110, 19, prompt="Show me Grace Hopper's contact card.")
    run.tool(
        "get_contact",
        "call_get_2",
        {"contact_id": "C-999"},
        {"error": "contact C-999 not found"},
        error_type="ContactNotFound",
    )
    # The tool failed, yet the answer claims it worked: silent success fabrication.
    run.chat("stop", 170, 25, answer="Here is Grace Hopper's contact card: grace@example.com.")
    run.end()


HEX_ID_KEYS = ("traceId", "spanId", "parentSpanId")


def ids_to_hex(value):
    """Rewrites the base64 ids of protobuf's JSON mapping as the lowercase hex OTLP JSON wants."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in HEX_ID_KEYS and isinstance(item, str):
                value[key] = base64.b64decode(item).hex()
            else:
                ids_to_hex(item)
    elif isinstance(value, list):
        for item in value:
            ids_to_hex(item)
    return value


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: otel_traces.py OUT_FILE")
    collect = Collect()
    provider = TracerProvider(
        resource=Resource.create({"service.name": "toolgate-otel-peer"})
    )
    provider.add_span_processor(collect)
    tracer = provider.get_tracer("toolgate.peers.otel_traces", "0.1.0")
    emit(tracer, time.time_ns())
    provider.shutdown()

    request = encode_spans(collect.spans)
    document = ids_to_hex(MessageToDict(request, use_integers_for_enums=True))
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        out.write(json.dumps(document, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
