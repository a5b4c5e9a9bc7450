//! Joining a streamed chat-completions response (`"stream": true`, each SSE `data` payload a
//! `chat.completion.chunk`) back into one response body, which [`super::parse_response`] then
//! reads exactly as a whole response. Pure functions, no I/O; they never panic.
//!
//! Tool calls arrive as `choices[0].delta.tool_calls[]` pieces keyed by `index`; the first
//! piece of a call carries its `id` and `function.name`, later pieces append to
//! `function.arguments`. Providers get this wrong in two ways the assembler handles:
//! - index collisions: some OpenAI-compatible servers send every call with `index: 0`; a piece
//!   with a new `id` on an occupied index starts a new call instead of overwriting the first;
//! - missing indexes: a piece without `index` continues the call with its `id`, or the latest
//!   call when it has no `id` either, and starts a new call when its `id` is new.

use serde_json::{Map, Value, json};

use crate::provider::ProviderError;

/// One tool call being assembled.
#[derive(Debug, Default)]
struct Assembling {
    /// The provider's `index`, when it sent one.
    index: Option<u64>,
    id: Option<String>,
    kind: Option<String>,
    name: String,
    arguments: String,
}

/// Joins the chunks of a streamed response (each SSE `data` payload, in order; the final
/// `[DONE]` already left out) into a chat-completions body: `choices[0].message` with the
/// joined `content` and `tool_calls`, the last `finish_reason` and the last `usage`.
///
/// Errors (`ProviderError::BadResponse`) on a chunk with an `error` object, or when no chunk
/// had `choices` (and none reported usage).
pub fn join_chunks(chunks: &[Value]) -> Result<Value, ProviderError> {
    let mut content: Option<String> = None;
    let mut calls: Vec<Assembling> = Vec::new();
    let mut finish_reason: Option<String> = None;
    let mut usage: Option<Value> = None;
    let mut saw_choices = false;
    for chunk in chunks {
        if let Some(error) = chunk.get("error") {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("no message");
            return Err(ProviderError::BadResponse(format!(
                "stream error chunk: {message}"
            )));
        }
        if let Some(found) = chunk.get("usage").filter(|u| u.is_object()) {
            usage = Some(found.clone());
        }
        let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|choices| choices.first())
        else {
            continue;
        };
        saw_choices = true;
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            finish_reason = Some(reason.to_owned());
        }
        let Some(delta) = choice.get("delta") else {
            continue;
        };
        if let Some(text) = delta.get("content").and_then(Value::as_str) {
            content.get_or_insert_with(String::new).push_str(text);
        }
        for piece in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            apply_piece(&mut calls, piece);
        }
    }
    if !saw_choices && usage.is_none() {
        return Err(ProviderError::BadResponse(
            "the stream has no chunk with `choices`".to_owned(),
        ));
    }
    let mut message = Map::new();
    message.insert("role".to_owned(), json!("assistant"));
    message.insert(
        "content".to_owned(),
        content.map_or(Value::Null, Value::from),
    );
    if !calls.is_empty() {
        let tool_calls: Vec<Value> = calls
            .into_iter()
            .map(|call| {
                let mut entry = Map::new();
                if let Some(id) = call.id {
                    entry.insert("id".to_owned(), Value::from(id));
                }
                entry.insert(
                    "type".to_owned(),
                    Value::from(call.kind.unwrap_or_else(|| "function".to_owned())),
                );
                entry.insert(
                    "function".to_owned(),
                    json!({"name": call.name, "arguments": call.arguments}),
                );
                Value::Object(entry)
            })
            .collect();
        message.insert("tool_calls".to_owned(), Value::Array(tool_calls));
    }
    let mut body = json!({"choices": [{
        "index": 0,
        "message": Value::Object(message),
        "finish_reason": finish_reason,
    }]});
    if let (Some(usage), Some(object)) = (usage, body.as_object_mut()) {
        object.insert("usage".to_owned(), usage);
    }
    Ok(body)
}

/// Adds one `delta.tool_calls[]` piece to the calls so far (see the module docs).
fn apply_piece(calls: &mut Vec<Assembling>, piece: &Value) {
    let index = piece.get("index").and_then(Value::as_u64);
    let id = piece
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty());
    let position = match (index, id) {
        // The latest call on this index, unless the piece names another call.
        (Some(index), id) => calls
            .iter()
            .rposition(|call| call.index == Some(index))
            .filter(|&at| id.is_none_or(|id| calls[at].id.as_deref().is_none_or(|own| own == id))),
        (None, Some(id)) => calls
            .iter()
            .rposition(|call| call.id.as_deref() == Some(id)),
        (None, None) => calls.len().checked_sub(1),
    };
    let at = match position {
        Some(at) => at,
        None => {
            calls.push(Assembling {
                index,
                ..Assembling::default()
            });
            calls.len() - 1
        }
    };
    let call = &mut calls[at];
    if let Some(id) = id {
        call.id = Some(id.to_owned());
    }
    if let Some(kind) = piece.get("type").and_then(Value::as_str) {
        call.kind = Some(kind.to_owned());
    }
    if let Some(function) = piece.get("function") {
        if let Some(name) = function.get("name").and_then(Value::as_str) {
            // Some servers repeat the name on every piece; others send it in parts.
            if !call.name.ends_with(name) || call.name.is_empty() {
                call.name.push_str(name);
            }
        }
        if let Some(arguments) = function.get("arguments").and_then(Value::as_str) {
            call.arguments.push_str(arguments);
        }
    }
}

#[cfg(test)]
mod tests {
    //! Streamed chunks join into one response by index or id; cut-off calls are truncated.

    use super::*;
    use crate::agent::call::{CallArguments, CallNote};
    use crate::agent::openai::parse_response;

    fn chunk(delta: Value, finish_reason: Value) -> Value {
        json!({"object": "chat.completion.chunk",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]})
    }

    fn calls(chunks: &[Value]) -> Vec<(Option<String>, String, Value)> {
        let body = join_chunks(chunks).expect("joins");
        let turn = parse_response(&body, None).expect("parses");
        turn.calls
            .into_iter()
            .map(|call| {
                let arguments = match call.arguments {
                    CallArguments::Valid(map) => Value::Object(map),
                    CallArguments::Invalid { raw, .. } => Value::String(raw),
                };
                (call.id, call.name, arguments)
            })
            .collect()
    }

    #[test]
    fn pieces_join_by_index_and_text_joins_in_order() {
        let chunks = [
            chunk(
                json!({"role": "assistant", "content": "Let me "}),
                Value::Null,
            ),
            chunk(json!({"content": "check."}), Value::Null),
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                    "function": {"name": "get_weather", "arguments": ""}}]}),
                Value::Null,
            ),
            chunk(
                json!({"tool_calls": [{"index": 1, "id": "call_2", "type": "function",
                    "function": {"name": "get_time", "arguments": "{}"}}]}),
                Value::Null,
            ),
            chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\":"}}]}),
                Value::Null,
            ),
            chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": " \"Paris\"}"}}]}),
                json!("tool_calls"),
            ),
            json!({"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 4}}),
        ];
        assert_eq!(
            calls(&chunks),
            vec![
                (
                    Some("call_1".into()),
                    "get_weather".into(),
                    json!({"city": "Paris"})
                ),
                (Some("call_2".into()), "get_time".into(), json!({})),
            ]
        );
        let body = join_chunks(&chunks).expect("joins");
        let turn = parse_response(&body, None).expect("parses");
        assert_eq!(turn.content.as_deref(), Some("Let me check."));
        assert_eq!(turn.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(turn.usage.map(|u| u.completion_tokens), Some(4));
    }

    /// A new id on an occupied index starts a new call; the first is kept whole.
    #[test]
    fn a_new_id_on_an_occupied_index_starts_a_new_call() {
        let chunks = [
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                    "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]}),
                Value::Null,
            ),
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_2", "type": "function",
                    "function": {"name": "get_time", "arguments": "{\"tz\":"}}]}),
                Value::Null,
            ),
            chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": " \"UTC\"}"}}]}),
                json!("tool_calls"),
            ),
        ];
        assert_eq!(
            calls(&chunks),
            vec![
                (
                    Some("call_1".into()),
                    "get_weather".into(),
                    json!({"city": "Paris"})
                ),
                (
                    Some("call_2".into()),
                    "get_time".into(),
                    json!({"tz": "UTC"})
                ),
            ]
        );
    }

    /// Pieces without an index continue the call with their id, or the latest
    /// call; a new id starts a call.
    #[test]
    fn pieces_without_an_index_follow_their_id_or_the_latest_call() {
        let chunks = [
            chunk(
                json!({"tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "get_weather", "arguments": "{\"city\""}}]}),
                Value::Null,
            ),
            chunk(
                json!({"tool_calls": [{"function": {"arguments": ": \"Paris\"}"}}]}),
                Value::Null,
            ),
            chunk(
                json!({"tool_calls": [{"id": "call_2", "type": "function",
                    "function": {"name": "get_time", "arguments": "{}"}}]}),
                json!("tool_calls"),
            ),
        ];
        assert_eq!(
            calls(&chunks),
            vec![
                (
                    Some("call_1".into()),
                    "get_weather".into(),
                    json!({"city": "Paris"})
                ),
                (Some("call_2".into()), "get_time".into(), json!({})),
            ]
        );
    }

    #[test]
    fn a_stream_cut_at_the_token_limit_gives_a_truncated_call() {
        let chunks = [chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                    "function": {"name": "write_file", "arguments": "{\"path\": \"/tm"}}]}),
            json!("length"),
        )];
        let body = join_chunks(&chunks).expect("joins");
        let turn = parse_response(&body, None).expect("parses");
        assert!(matches!(
            turn.calls[0].arguments,
            CallArguments::Invalid {
                kind: crate::agent::InvalidCallKind::Truncated,
                ..
            }
        ));
        assert_eq!(turn.calls[0].notes, Vec::<CallNote>::new());
    }

    #[test]
    fn error_chunks_and_empty_streams_are_bad_responses() {
        let error = join_chunks(&[json!({"error": {"message": "overloaded"}})])
            .expect_err("an error chunk");
        assert_eq!(
            error.to_string(),
            ProviderError::BadResponse("stream error chunk: overloaded".into()).to_string()
        );
        assert!(join_chunks(&[]).is_err());
        assert!(join_chunks(&[json!("odd"), json!({"choices": "x"})]).is_err());
    }
}
