//! One tool call as the report shows it, in a run's timeline and in the side-by-side view.

use std::fmt::Write as _;

use serde::Serialize;

use super::escape::{push, push_capped};
use crate::trace::{CallOutcome, TraceLine};

/// The name serde gives `value` (a unit enum variant: `rate_limit`, `tool_selection`), or
/// `?` for anything else.
pub(super) fn serde_name(value: impl Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => "?".to_string(),
    }
}

/// The short word for how a call ended, which is also its CSS class.
fn outcome_word(outcome: Option<CallOutcome>) -> &'static str {
    match outcome {
        Some(CallOutcome::Success) | None => "ok",
        Some(CallOutcome::ToolError) => "tool-error",
        Some(CallOutcome::ProtocolError) => "protocol-error",
        Some(CallOutcome::InvalidCall) => "invalid",
    }
}

/// A JSON value as indented text.
fn json_text(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// Appends call `position` (0-based, in its run) of a trace as `<div class="call CLASSES">`:
/// a head line (number, turn, tool, outcome, time in the harness), what went wrong around it
/// (injected fault, invalid call, refusal, unknown tool, unmatched mock, parser notes, schema
/// violations), then its arguments and its result or error, each cut to `limit` bytes.
/// `classes` are added to the element's class list as they are (toolgate's own words).
pub(super) fn push_call(
    out: &mut String,
    line: &TraceLine,
    position: usize,
    classes: &str,
    limit: usize,
) {
    let word = outcome_word(line.outcome);
    let _ = write!(
        out,
        "<div class=\"call {word}{}{classes}\"><div class=\"call-head\"><span class=\"n\">#{}</span> ",
        if classes.is_empty() { "" } else { " " },
        line.index.unwrap_or(position) + 1
    );
    if let Some(turn) = line.turn {
        let _ = write!(out, "<span class=\"turn\">turn {turn}</span> ");
    }
    out.push_str("<code class=\"tool\">");
    push(out, line.tool.as_deref().unwrap_or("?"));
    let _ = write!(out, "</code> <span class=\"badge {word}\">{word}</span>");
    if let Some(us) = line.duration_us {
        let _ = write!(
            out,
            " <span class=\"time\">{:.1} ms</span>",
            us as f64 / 1000.0
        );
    }
    out.push_str("</div>");
    push_flags(out, line, limit);
    if let Some(arguments) = &line.arguments {
        out.push_str("<pre class=\"args\">");
        push_capped(out, &json_text(arguments), limit);
        out.push_str("</pre>");
    }
    if let Some(error) = &line.error {
        out.push_str("<pre class=\"error\">");
        push_capped(out, error, limit);
        out.push_str("</pre>");
    } else if let Some(result) = &line.result {
        out.push_str("<pre class=\"result\">");
        push_capped(out, &json_text(result), limit);
        out.push_str("</pre>");
    }
    out.push_str("</div>");
}

/// The notes about a call, one `<li>` each cut to `limit` bytes, in a `<ul class="flags">`;
/// nothing when none.
fn push_flags(out: &mut String, line: &TraceLine, limit: usize) {
    let mut flags: Vec<String> = Vec::new();
    if let Some(fault) = line.fault {
        flags.push(format!("injected fault: {}", serde_name(fault)));
    }
    if let Some(invalid) = line.invalid {
        flags.push(format!("invalid call: {}", invalid.as_str()));
    }
    if line.refused {
        flags.push("refused by the harness before it reached the tool".to_string());
    }
    if line.unknown_tool {
        flags.push("unknown tool: not in the served catalog".to_string());
    }
    if line.unmatched {
        flags.push("no mock rule matched these arguments".to_string());
    }
    if line.not_recorded {
        flags.push("not in the replayed cassette".to_string());
    }
    for note in &line.notes {
        flags.push(format!(
            "parser note: {} ({})",
            note.as_str(),
            note.meaning()
        ));
    }
    for violation in &line.violations {
        flags.push(format!(
            "argument {} at `{}`: {}",
            violation.class.as_str(),
            violation.pointer,
            violation.message
        ));
    }
    for violation in &line.output_violations {
        flags.push(format!(
            "output schema at `{}`: {}",
            violation.pointer, violation.message
        ));
    }
    if flags.is_empty() {
        return;
    }
    out.push_str("<ul class=\"flags\">");
    for flag in flags {
        out.push_str("<li>");
        push_capped(out, &flag, limit);
        out.push_str("</li>");
    }
    out.push_str("</ul>");
}
