//! OTLP JSON: `execute_tool` spans and MCP `tools/call` client spans, grouped by trace id.
//!
//! Attributes read (GenAI semantic conventions): `gen_ai.tool.name`, `gen_ai.tool.call.id`,
//! `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`, `mcp.method.name`, `error.type`;
//! a span status code 2 (`ERROR`) marks the call failed. The prompt is the first user text of
//! the earliest span's `gen_ai.input.messages`, the final answer the assistant text of the
//! latest span's `gen_ai.output.messages` (both JSON, `[{"role", "parts": [{"type": "text",
//! "content"}]}]`), when the spans record messages.

use std::collections::{HashMap, HashSet};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::{Present, Trajectory, arguments, call, result_value};
use crate::trace::CallOutcome;

/// One span that is a tool call, before grouping.
struct ToolSpan {
    trace_id: String,
    start: u64,
    call_id: Option<String>,
    tool: String,
    arguments: Option<Value>,
    result: Option<String>,
    error: Option<String>,
    duration_us: u64,
}

/// The trajectories of one `ExportTraceServiceRequest`, one per trace id, in order of first
/// appearance; calls ordered by start time.
pub(super) fn export_request(value: &Value) -> Result<Vec<Trajectory>> {
    let resource_spans = value
        .get("resourceSpans")
        .and_then(Value::as_array)
        .context("`resourceSpans` is missing or not an array")?;
    let mut spans = Vec::new();
    let mut messages = Vec::new();
    for (r, resource) in resource_spans.iter().enumerate() {
        let scopes = resource.get("scopeSpans").and_then(Value::as_array);
        for (s, scope) in scopes.into_iter().flatten().enumerate() {
            let list = scope.get("spans").and_then(Value::as_array);
            for (i, span) in list.into_iter().flatten().enumerate() {
                let at = || format!("`resourceSpans[{r}].scopeSpans[{s}].spans[{i}]`");
                if let Some(tool) = tool_span(span).with_context(at)? {
                    spans.push(tool);
                } else if let Some(found) = message_span(span) {
                    messages.push(found);
                }
            }
        }
    }
    // Grouped by trace id in one pass each (a line may hold hundreds of thousands of traces).
    let mut order: Vec<&str> = Vec::new();
    let mut groups: HashMap<&str, Vec<&ToolSpan>> = HashMap::new();
    for span in &spans {
        groups
            .entry(span.trace_id.as_str())
            .or_insert_with(|| {
                order.push(span.trace_id.as_str());
                Vec::new()
            })
            .push(span);
    }
    let mut by_trace: HashMap<&str, Vec<&MessageSpan>> = HashMap::new();
    for message in &messages {
        by_trace
            .entry(message.trace_id.as_str())
            .or_default()
            .push(message);
    }
    let mut trajectories = Vec::with_capacity(order.len());
    for trace_id in order {
        let mut group = groups.remove(trace_id).unwrap_or_default();
        group.sort_by_key(|span| span.start);
        // An execute_tool span and the MCP client span under it describe one call.
        let mut seen_ids: HashSet<&str> = HashSet::new();
        group.retain(|span| match &span.call_id {
            Some(id) => seen_ids.insert(id.as_str()),
            None => true,
        });
        let mut trajectory = Trajectory::empty(trace_id.to_owned(), Present::ALL);
        let mut mine = by_trace.remove(trace_id).unwrap_or_default();
        mine.sort_by_key(|m| (m.start, m.end));
        trajectory.prompt = mine.iter().find_map(|m| m.prompt.clone());
        trajectory.final_answer = mine
            .iter()
            .filter(|m| m.answer.is_some())
            .max_by_key(|m| m.end)
            .and_then(|m| m.answer.clone());
        for span in group {
            let (args, invalid) = arguments(span.arguments.as_ref());
            let outcome = if invalid.is_some() {
                CallOutcome::InvalidCall
            } else if span.error.is_some() {
                CallOutcome::ToolError
            } else {
                CallOutcome::Success
            };
            let mut record = call(
                trajectory.calls.len(),
                &span.tool,
                args,
                outcome,
                span.result.as_deref().map(result_value),
                span.error.clone(),
            );
            record.invalid = invalid;
            record.duration_us = span.duration_us;
            trajectory.has.results &= span.result.is_some() || span.error.is_some();
            trajectory.calls.push(record);
        }
        trajectories.push(trajectory);
    }
    Ok(trajectories)
}

/// A span that records the conversation (`gen_ai.input.messages`, `gen_ai.output.messages`).
struct MessageSpan {
    trace_id: String,
    start: u64,
    end: u64,
    /// The first user text of its input messages.
    prompt: Option<String>,
    /// The assistant text of its output messages.
    answer: Option<String>,
}

/// The messages a span records, if it records any (spans that do not are ignored).
fn message_span(span: &Value) -> Option<MessageSpan> {
    let attributes = span.get("attributes").and_then(Value::as_array)?;
    let messages = |key: &str| -> Option<Value> {
        let value = attributes
            .iter()
            .find(|a| a.get("key").and_then(Value::as_str) == Some(key))
            .and_then(|a| a.get("value"))
            .and_then(any_value)?;
        match value {
            Value::String(text) => serde_json::from_str(&text).ok(),
            other => Some(other),
        }
    };
    let text_of = |messages: &Value, role: &str| -> Option<String> {
        let texts: Vec<&str> = messages
            .as_array()?
            .iter()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some(role))
            .flat_map(|m| {
                m.get("parts")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
            })
            .filter(|part| part.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|part| part.get("content").and_then(Value::as_str))
            .collect();
        (!texts.is_empty()).then(|| texts.join("\n"))
    };
    let prompt = messages("gen_ai.input.messages").and_then(|m| text_of(&m, "user"));
    let answer = messages("gen_ai.output.messages").and_then(|m| text_of(&m, "assistant"));
    if prompt.is_none() && answer.is_none() {
        return None;
    }
    let nanos = |key: &str| match span.get(key) {
        Some(Value::String(text)) => text.parse().ok(),
        Some(Value::Number(n)) => n.as_u64(),
        _ => None,
    };
    Some(MessageSpan {
        trace_id: span.get("traceId")?.as_str()?.to_string(),
        start: nanos("startTimeUnixNano").unwrap_or(0),
        end: nanos("endTimeUnixNano").unwrap_or(0),
        prompt,
        answer,
    })
}

fn tool_span(span: &Value) -> Result<Option<ToolSpan>> {
    let attributes = span.get("attributes").and_then(Value::as_array);
    let attribute = |key: &str| -> Option<Value> {
        attributes?
            .iter()
            .find(|a| a.get("key").and_then(Value::as_str) == Some(key))
            .and_then(|a| a.get("value"))
            .and_then(any_value)
    };
    let text = |key: &str| attribute(key).and_then(|v| v.as_str().map(str::to_string));
    let operation = text("gen_ai.operation.name");
    let method = text("mcp.method.name");
    let is_tool =
        operation.as_deref() == Some("execute_tool") || method.as_deref() == Some("tools/call");
    if !is_tool {
        return Ok(None);
    }
    let Some(tool) = text("gen_ai.tool.name") else {
        bail!("a tool-call span without `gen_ai.tool.name`");
    };
    let trace_id = span
        .get("traceId")
        .and_then(Value::as_str)
        .context("the span has no `traceId`")?
        .to_string();
    let nanos = |key: &str| -> Result<u64> {
        match span.get(key) {
            Some(Value::String(text)) => text
                .parse()
                .with_context(|| format!("`{key}` `{text}` is not a count of nanoseconds")),
            Some(Value::Number(n)) => n.as_u64().with_context(|| format!("`{key}` is negative")),
            _ => bail!("the span has no `{key}`"),
        }
    };
    let start = nanos("startTimeUnixNano")?;
    let end = nanos("endTimeUnixNano")?;
    let status_error = span
        .get("status")
        .and_then(|s| s.get("code"))
        .is_some_and(|code| code == 2 || code == "STATUS_CODE_ERROR");
    let error = if status_error || attribute("error.type").is_some() {
        Some(
            span.get("status")
                .and_then(|s| s.get("message"))
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty())
                .map(str::to_string)
                .or_else(|| text("error.type"))
                .unwrap_or_else(|| "error".to_string()),
        )
    } else {
        None
    };
    Ok(Some(ToolSpan {
        trace_id,
        start,
        call_id: text("gen_ai.tool.call.id"),
        tool,
        arguments: attribute("gen_ai.tool.call.arguments"),
        result: attribute("gen_ai.tool.call.result").map(|v| match v {
            Value::String(text) => text,
            other => other.to_string(),
        }),
        error,
        duration_us: end.saturating_sub(start) / 1_000,
    }))
}

/// An OTLP JSON `AnyValue` as plain JSON.
fn any_value(value: &Value) -> Option<Value> {
    if let Some(text) = value.get("stringValue") {
        return Some(text.clone());
    }
    if let Some(flag) = value.get("boolValue") {
        return Some(flag.clone());
    }
    if let Some(int) = value.get("intValue") {
        return match int {
            Value::String(text) => text.parse::<i64>().ok().map(Value::from),
            other => Some(other.clone()),
        };
    }
    if let Some(double) = value.get("doubleValue") {
        return Some(double.clone());
    }
    if let Some(array) = value.get("arrayValue") {
        let values = array.get("values").and_then(Value::as_array)?;
        return Some(Value::Array(values.iter().filter_map(any_value).collect()));
    }
    None
}
