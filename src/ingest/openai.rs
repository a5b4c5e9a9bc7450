//! OpenAI-style chat conversations: assistant `tool_calls`, paired with `tool` messages by
//! `tool_call_id`.

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::{Present, Trajectory, arguments, call, result_value, string_field};
use crate::trace::CallOutcome;

/// One conversation line: `{"id"?, "messages": [...]}` or a bare array of messages.
pub(super) fn conversation(value: &Value, line: usize) -> Result<Trajectory> {
    let (id, messages) = match value {
        Value::Array(messages) => (None, messages),
        Value::Object(_) => {
            let messages = value
                .get("messages")
                .and_then(Value::as_array)
                .context("`messages` is missing or not an array")?;
            (string_field(value, "id")?, messages)
        }
        _ => bail!("a conversation is an object with `messages` or an array of messages"),
    };
    let mut trajectory = Trajectory::empty(
        id.map_or_else(|| format!("line {line}"), str::to_string),
        Present {
            results: true,
            outcomes: false,
            durations: false,
        },
    );
    let mut ids: Vec<Option<String>> = Vec::new();
    let mut prompt = String::new();
    for (position, message) in messages.iter().enumerate() {
        let role = string_field(message, "role")
            .with_context(|| format!("in `messages[{position}]`"))?
            .with_context(|| format!("`messages[{position}].role` is missing"))?;
        let content = message.get("content").and_then(crate::json::message_text);
        match role {
            "system" | "developer" | "user" => {
                if let Some(text) = content {
                    if !prompt.is_empty() {
                        prompt.push('\n');
                    }
                    prompt.push_str(&text);
                }
            }
            "assistant" => {
                let tool_calls = message.get("tool_calls").and_then(Value::as_array);
                match tool_calls {
                    Some(tool_calls) if !tool_calls.is_empty() => {
                        let turn = 1 + trajectory.calls.last().map_or(0, |last| last.turn);
                        for (entry, tool_call) in tool_calls.iter().enumerate() {
                            let at = || format!("`messages[{position}].tool_calls[{entry}]`");
                            let function = tool_call
                                .get("function")
                                .with_context(|| format!("{} has no `function`", at()))?;
                            let name = string_field(function, "name")
                                .with_context(at)?
                                .with_context(|| format!("{} has no `function.name`", at()))?;
                            let (args, invalid) = arguments(function.get("arguments"));
                            let mut record = call(
                                trajectory.calls.len(),
                                name,
                                args,
                                CallOutcome::Success,
                                None,
                                None,
                            );
                            record.turn = turn;
                            if invalid.is_some() {
                                record.invalid = invalid;
                                record.outcome = CallOutcome::InvalidCall;
                            }
                            ids.push(string_field(tool_call, "id")?.map(str::to_string));
                            trajectory.calls.push(record);
                        }
                    }
                    _ => {
                        if let Some(text) = content {
                            trajectory.final_answer = Some(text);
                        }
                    }
                }
            }
            "tool" => {
                let call_id = string_field(message, "tool_call_id")
                    .with_context(|| format!("in `messages[{position}]`"))?;
                let text = content.unwrap_or_default();
                // Pair by id; without one, with the first call still lacking a result.
                let slot = trajectory.calls.iter().enumerate().position(|(i, c)| {
                    c.result.is_none()
                        && c.error.is_none()
                        && match call_id {
                            Some(call_id) => ids[i].as_deref() == Some(call_id),
                            None => true,
                        }
                });
                let Some(slot) = slot else {
                    bail!(
                        "`messages[{position}]` answers tool call `{}`, which no earlier assistant message made",
                        call_id.unwrap_or("(no id)")
                    );
                };
                trajectory.calls[slot].result = Some(result_value(&text));
            }
            _ => {}
        }
    }
    trajectory.has.results = trajectory
        .calls
        .iter()
        .all(|c| c.result.is_some() || c.outcome == CallOutcome::InvalidCall);
    if !prompt.is_empty() {
        trajectory.prompt = Some(prompt);
    }
    Ok(trajectory)
}
