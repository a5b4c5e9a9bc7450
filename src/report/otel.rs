//! The runs of a gate as OpenTelemetry traces: OTLP JSON (one `ExportTraceServiceRequest`),
//! with spans following the GenAI semantic conventions, so toolgate runs sit next to
//! production traces in Phoenix, Langfuse, Jaeger or any OTLP backend.
//!
//! Conventions: the GenAI and MCP conventions of `open-telemetry/semantic-conventions-genai`
//! v0.1.0 (Development status), on the upstream semantic conventions 1.41.0
//! ([`SCHEMA_URL`]). Per run one trace:
//! - `invoke_agent {agent}` (root): `gen_ai.operation.name`, `gen_ai.agent.name`,
//!   `gen_ai.request.model`, `gen_ai.provider.name`, `gen_ai.conversation.id`, token usage,
//!   the prompt and final answer as `gen_ai.input.messages` / `gen_ai.output.messages`, and
//!   `toolgate.*` (scenario, tier, repeat, outcome, run id); an errored run has status ERROR;
//! - `chat {model}` per model turn, for model agents: from the end of the previous turn's
//!   calls to the first call of this one (model time as the harness saw it);
//! - `execute_tool {tool}` per call (kind CLIENT, the MCP client span merged in, as the MCP
//!   conventions allow): `mcp.method.name` `tools/call`, `gen_ai.tool.name`,
//!   `gen_ai.tool.call.id`, arguments and result (opt-in content: toolgate records test
//!   traffic, already redacted), and on failure `error.type` (`tool_error`, the injected
//!   fault, `protocol_error`, `invalid_call`) with status ERROR and the error text.
//!
//! Ids are derived from the run id, scenario and repeat (SHA-256), so the same results give
//! the same file.

use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use crate::trace::{CallOutcome, CallRecord};

/// The semantic-conventions schema the spans follow.
pub(crate) const SCHEMA_URL: &str = "https://opentelemetry.io/schemas/1.41.0";

/// OTLP span kinds.
const KIND_INTERNAL: u8 = 1;
const KIND_CLIENT: u8 = 3;
/// OTLP status code ERROR.
const STATUS_ERROR: u8 = 2;

/// One scenario run, as the exporter needs it.
#[derive(Debug, Clone)]
pub(crate) struct RunSpans<'a> {
    /// The scenario id.
    pub scenario: &'a str,
    /// Its tier, 1..=5.
    pub tier: u8,
    /// The 0-based repetition.
    pub repeat: u32,
    /// The gate run's id, when it has one.
    pub run_id: Option<&'a str>,
    /// The agent kind (`reference`, `openai`, ...): `gen_ai.agent.name`.
    pub agent: &'a str,
    /// The model, for model agents.
    pub model: Option<&'a str>,
    /// `openai` or `anthropic`, for model agents.
    pub provider: Option<&'a str>,
    /// `pass`, `degraded`, `fail` or `errored`.
    pub outcome: &'a str,
    /// Why the run errored.
    pub error: Option<&'a str>,
    /// The scenario's prompt.
    pub prompt: &'a str,
    /// The agent's final answer.
    pub final_answer: Option<&'a str>,
    /// Input and output tokens, when the agent reported them.
    pub usage: Option<(u64, u64)>,
    /// Whether to emit `chat` spans (an agent with model turns).
    pub model_turns: bool,
    /// When the run started.
    pub started: SystemTime,
    /// How long it took.
    pub duration: Duration,
    /// The calls, in order.
    pub calls: &'a [CallRecord],
    /// When each call arrived (same length as `calls`; missing entries fall back to the run
    /// start).
    pub call_times: &'a [SystemTime],
}

fn nanos(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

fn id_hex(parts: &[&str], bytes: usize) -> String {
    crate::fs::sha256_hex(parts.join("\u{0}"))[..bytes * 2].to_owned()
}

fn string(key: &str, value: &str) -> Value {
    json!({"key": key, "value": {"stringValue": value}})
}

fn int(key: &str, value: u64) -> Value {
    json!({"key": key, "value": {"intValue": value.to_string()}})
}

fn messages(role: &str, text: &str) -> String {
    json!([{"role": role, "parts": [{"type": "text", "content": text}]}]).to_string()
}

struct Span {
    span_id: String,
    parent: Option<String>,
    name: String,
    kind: u8,
    start: u64,
    end: u64,
    attributes: Vec<Value>,
    error: Option<String>,
}

impl Span {
    fn render(self, trace_id: &str) -> Value {
        let mut span = json!({
            "traceId": trace_id,
            "spanId": self.span_id,
            "name": self.name,
            "kind": self.kind,
            "startTimeUnixNano": self.start.to_string(),
            "endTimeUnixNano": self.end.max(self.start).to_string(),
            "attributes": self.attributes,
            "status": {},
        });
        if let Some(parent) = self.parent {
            span["parentSpanId"] = Value::String(parent);
        }
        if let Some(message) = self.error {
            span["status"] = json!({"code": STATUS_ERROR, "message": message});
        }
        span
    }
}

/// What went wrong with a call, as `error.type`; `None` for a success.
fn error_type(call: &CallRecord) -> Option<String> {
    if let Some(fault) = call.fault {
        // The fault's name in files (`rate_limit`, `timeout`, ...).
        let name = serde_json::to_value(fault).expect("a fault kind is JSON");
        return Some(name.as_str().unwrap_or("fault").to_owned());
    }
    match call.outcome {
        CallOutcome::Success => None,
        CallOutcome::ToolError => Some("tool_error".to_owned()),
        CallOutcome::ProtocolError => Some("protocol_error".to_owned()),
        CallOutcome::InvalidCall => Some("invalid_call".to_owned()),
    }
}

/// The trace id of one run and its spans: the root, one per call, then (for model agents) one
/// per model turn.
fn run_spans(run: &RunSpans<'_>) -> (String, Vec<Span>) {
    let repeat = run.repeat.to_string();
    let run_id = run.run_id.unwrap_or("");
    let trace_id = id_hex(&[run_id, run.scenario, &repeat], 16);
    let start = nanos(run.started);
    let end = start + u64::try_from(run.duration.as_nanos()).unwrap_or(u64::MAX);
    let root_id = span_id(&trace_id, "invoke_agent", 0);
    let mut spans = vec![Span {
        span_id: root_id.clone(),
        parent: None,
        name: format!("invoke_agent {}", run.agent),
        kind: KIND_INTERNAL,
        start,
        end,
        attributes: root_attributes(run),
        error: run.error.map(str::to_owned),
    }];
    let times = CallTimes {
        calls: run.calls,
        arrivals: run.call_times,
        run_start: start,
    };
    for (index, call) in run.calls.iter().enumerate() {
        spans.push(tool_span(
            call,
            span_id(&trace_id, "execute_tool", index),
            &root_id,
            (times.start(index), times.end(index)),
        ));
    }
    if run.model_turns {
        let model = run.model.unwrap_or("model");
        for (index, (from, to)) in times.chat_bounds(end).into_iter().enumerate() {
            let mut attributes = vec![
                string("gen_ai.operation.name", "chat"),
                string("gen_ai.request.model", model),
            ];
            if let Some(provider) = run.provider {
                attributes.push(string("gen_ai.provider.name", provider));
            }
            spans.push(Span {
                span_id: span_id(&trace_id, "chat", index),
                parent: Some(root_id.clone()),
                name: format!("chat {model}"),
                kind: KIND_CLIENT,
                start: from,
                end: to,
                attributes,
                error: None,
            });
        }
    }
    (trace_id, spans)
}

/// The id of the `index`th span of kind `what` in trace `trace_id`.
fn span_id(trace_id: &str, what: &str, index: usize) -> String {
    id_hex(&[trace_id, what, &index.to_string()], 8)
}

/// The attributes of a run's root `invoke_agent` span.
fn root_attributes(run: &RunSpans<'_>) -> Vec<Value> {
    let mut attributes = vec![
        string("gen_ai.operation.name", "invoke_agent"),
        string("gen_ai.agent.name", run.agent),
        string(
            "gen_ai.conversation.id",
            &format!("{}#{}", run.scenario, run.repeat),
        ),
        string("gen_ai.input.messages", &messages("user", run.prompt)),
        string("toolgate.scenario.id", run.scenario),
        int("toolgate.scenario.tier", u64::from(run.tier)),
        int("toolgate.repeat", u64::from(run.repeat)),
        string("toolgate.outcome", run.outcome),
    ];
    if let Some(model) = run.model {
        attributes.push(string("gen_ai.request.model", model));
    }
    if let Some(provider) = run.provider {
        attributes.push(string("gen_ai.provider.name", provider));
    }
    if let Some(answer) = run.final_answer {
        attributes.push(string(
            "gen_ai.output.messages",
            &messages("assistant", answer),
        ));
    }
    if let Some((input, output)) = run.usage {
        attributes.push(int("gen_ai.usage.input_tokens", input));
        attributes.push(int("gen_ai.usage.output_tokens", output));
    }
    if let Some(id) = run.run_id {
        attributes.push(string("toolgate.run_id", id));
    }
    if run.error.is_some() {
        attributes.push(string("error.type", "toolgate_errored"));
    }
    attributes
}

/// The `execute_tool` span of one call, under the root span `root_id`, over `(start, end)`.
fn tool_span(call: &CallRecord, span_id: String, root_id: &str, (start, end): (u64, u64)) -> Span {
    let mut attributes = vec![
        string("gen_ai.operation.name", "execute_tool"),
        string("mcp.method.name", "tools/call"),
        string("gen_ai.tool.name", &call.tool),
        string("gen_ai.tool.call.id", &format!("call-{}", call.index + 1)),
        string("gen_ai.tool.call.arguments", &call.arguments.to_string()),
    ];
    if let Some(result) = &call.result {
        attributes.push(string("gen_ai.tool.call.result", &result.to_string()));
    }
    let failure = error_type(call);
    if let Some(kind) = &failure {
        attributes.push(string("error.type", kind));
    }
    if call.fault.is_some() {
        attributes.push(string("toolgate.fault_injected", "true"));
    }
    Span {
        span_id,
        parent: Some(root_id.to_owned()),
        name: format!("execute_tool {}", call.tool),
        kind: KIND_CLIENT,
        start,
        end,
        attributes,
        error: failure.map(|_| call.error.clone().unwrap_or_else(|| "error".to_owned())),
    }
}

/// When the calls of a run happened, in Unix nanoseconds.
struct CallTimes<'a> {
    calls: &'a [CallRecord],
    /// When each call arrived; a missing entry falls back to `run_start`.
    arrivals: &'a [SystemTime],
    run_start: u64,
}

impl CallTimes<'_> {
    /// When call `index` arrived.
    fn start(&self, index: usize) -> u64 {
        self.arrivals
            .get(index)
            .map_or(self.run_start, |t| nanos(*t))
    }

    /// When call `index` was answered: its arrival plus its duration.
    fn end(&self, index: usize) -> u64 {
        self.start(index) + self.calls[index].duration_us.saturating_mul(1_000)
    }

    /// The `(start, end)` of each model turn of a run ending at `run_end`: from the previous
    /// turn's last call to this turn's first call, then a last one from the last call to the
    /// end of the run.
    fn chat_bounds(&self, run_end: u64) -> Vec<(u64, u64)> {
        let mut turns: Vec<(u32, usize, usize)> = Vec::new();
        for (index, call) in self.calls.iter().enumerate() {
            match turns.last_mut() {
                Some((turn, _, last)) if *turn == call.turn => *last = index,
                _ => turns.push((call.turn, index, index)),
            }
        }
        let mut previous_end = self.run_start;
        let mut bounds: Vec<(u64, u64)> = Vec::new();
        for (_, first, last) in &turns {
            bounds.push((previous_end, self.start(*first)));
            previous_end = self.end(*last);
        }
        bounds.push((previous_end, run_end));
        bounds
    }
}

/// One OTLP JSON `ExportTraceServiceRequest` holding a trace per run, as one line of text
/// (what OTLP JSON file exporters write, and what `POST /v1/traces` takes).
pub(crate) fn export_request(runs: &[RunSpans<'_>]) -> String {
    let mut spans = Vec::new();
    for run in runs {
        let (trace_id, run_spans) = run_spans(run);
        spans.extend(run_spans.into_iter().map(|span| span.render(&trace_id)));
    }
    let request = json!({
        "resourceSpans": [{
            "resource": {"attributes": [
                string("service.name", "toolgate"),
                string("service.version", env!("CARGO_PKG_VERSION")),
            ]},
            "scopeSpans": [{
                "scope": {"name": "toolgate", "version": env!("CARGO_PKG_VERSION")},
                "schemaUrl": SCHEMA_URL,
                "spans": spans,
            }],
            "schemaUrl": SCHEMA_URL,
        }]
    });
    format!("{request}\n")
}

#[cfg(test)]
mod tests {
    //! The OTLP export: one run becomes a root span with chat turns and tool spans (GenAI).

    use super::*;

    fn call(index: usize, tool: &str, turn: u32, outcome: CallOutcome) -> CallRecord {
        let mut call = CallRecord::recorded(index, tool, json!({"id": "C-1"}));
        call.turn = turn;
        call.outcome = outcome;
        call.duration_us = 2_000;
        if outcome == CallOutcome::Success {
            call.result = Some(json!({"ok": true}));
        } else {
            call.error = Some("not found".into());
        }
        call
    }

    /// The whole export request of one run, pretty-printed: span ids are derived from the
    /// run, so the file is the same on every export of the same run.
    #[test]
    fn the_export_request_of_one_run() {
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let calls = [
            call(0, "search", 1, CallOutcome::Success),
            call(1, "get", 2, CallOutcome::ToolError),
        ];
        let times = [
            start + Duration::from_millis(10),
            start + Duration::from_millis(30),
        ];
        let run = RunSpans {
            scenario: "T1-001",
            tier: 1,
            repeat: 0,
            run_id: Some("r1"),
            agent: "openai",
            model: Some("gpt-x"),
            provider: Some("openai"),
            outcome: "fail",
            error: None,
            prompt: "Find C-1.",
            final_answer: Some("Done."),
            usage: Some((100, 20)),
            model_turns: true,
            started: start,
            duration: Duration::from_millis(50),
            calls: &calls,
            call_times: &times,
        };
        let request: Value = serde_json::from_str(&export_request(&[run])).expect("JSON");
        insta::assert_snapshot!(crate::json::pretty(&request));
    }

    #[test]
    fn a_run_becomes_a_root_chat_turns_and_tool_spans_with_genai_attributes() {
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let calls = [
            call(0, "search", 1, CallOutcome::Success),
            call(1, "get", 2, CallOutcome::ToolError),
        ];
        let times = [
            start + Duration::from_millis(10),
            start + Duration::from_millis(30),
        ];
        let run = RunSpans {
            scenario: "T1-001",
            tier: 1,
            repeat: 0,
            run_id: Some("r1"),
            agent: "openai",
            model: Some("gpt-x"),
            provider: Some("openai"),
            outcome: "fail",
            error: None,
            prompt: "Find C-1.",
            final_answer: Some("Done."),
            usage: Some((100, 20)),
            model_turns: true,
            started: start,
            duration: Duration::from_millis(50),
            calls: &calls,
            call_times: &times,
        };
        let text = export_request(std::slice::from_ref(&run));
        assert_eq!(
            text,
            export_request(&[run]),
            "the same run gives the same file"
        );
        let request: Value = serde_json::from_str(&text).expect("JSON");
        let spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
            .as_array()
            .expect("spans");
        let names: Vec<&str> = spans
            .iter()
            .map(|s| s["name"].as_str().expect("a name"))
            .collect();
        assert_eq!(
            names,
            [
                "invoke_agent openai",
                "execute_tool search",
                "execute_tool get",
                "chat gpt-x",
                "chat gpt-x",
                "chat gpt-x"
            ]
        );
        let root = &spans[0];
        assert_eq!(root["traceId"].as_str().expect("hex").len(), 32);
        assert!(root.get("parentSpanId").is_none());
        assert_eq!(root["startTimeUnixNano"], "1000000000000");
        assert_eq!(root["endTimeUnixNano"], "1000050000000");
        let failed = &spans[2];
        assert_eq!(failed["parentSpanId"], root["spanId"]);
        assert_eq!(failed["kind"], 3);
        assert_eq!(failed["status"], json!({"code": 2, "message": "not found"}));
        assert!(
            failed["attributes"]
                .as_array()
                .expect("attributes")
                .contains(&string("error.type", "tool_error"))
        );
        // Model time: run start to the first call, between the turns, last call to the end.
        let chat: Vec<(&str, &str)> = spans[3..]
            .iter()
            .map(|s| {
                (
                    s["startTimeUnixNano"].as_str().expect("a start"),
                    s["endTimeUnixNano"].as_str().expect("an end"),
                )
            })
            .collect();
        assert_eq!(
            chat,
            [
                ("1000000000000", "1000010000000"),
                ("1000012000000", "1000030000000"),
                ("1000032000000", "1000050000000"),
            ]
        );
    }
}
