//! OTLP JSON: `execute_tool` spans and MCP `tools/call` client spans, grouped by trace id.
//!
//! Attributes read (GenAI semantic conventions): `gen_ai.tool.name`, `gen_ai.tool.call.id`,
//! `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`, `mcp.method.name`, `error.type`;
//! a span status code 2 (`ERROR`) marks the call failed.

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
    for (r, resource) in resource_spans.iter().enumerate() {
        let scopes = resource.get("scopeSpans").and_then(Value::as_array);
        for (s, scope) in scopes.into_iter().flatten().enumerate() {
            let list = scope.get("spans").and_then(Value::as_array);
            for (i, span) in list.into_iter().flatten().enumerate() {
                let at = || format!("`resourceSpans[{r}].scopeSpans[{s}].spans[{i}]`");
                if let Some(tool) = tool_span(span).with_context(at)? {
                    spans.push(tool);
                }
            }
        }
    }
    let mut order: Vec<String> = Vec::new();
    for span in &spans {
        if !order.contains(&span.trace_id) {
            order.push(span.trace_id.clone());
        }
    }
    let mut trajectories = Vec::with_capacity(order.len());
    for trace_id in order {
        let mut group: Vec<&ToolSpan> = spans.iter().filter(|s| s.trace_id == trace_id).collect();
        group.sort_by_key(|span| span.start);
        // An execute_tool span and the MCP client span under it describe one call.
        let mut seen_ids: Vec<&str> = Vec::new();
        group.retain(|span| match &span.call_id {
            Some(id) if seen_ids.contains(&id.as_str()) => false,
            Some(id) => {
                seen_ids.push(id);
                true
            }
            None => true,
        });
        let mut trajectory = Trajectory::empty(trace_id, Present::ALL);
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
