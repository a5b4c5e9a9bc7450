//! Reading one Anthropic Messages response: the assistant's text, its client tool calls (valid
//! or invalid), the server tool calls the provider ran itself, and the usage. Also joins a
//! streamed response (server-sent events) back into the same shape. Pure functions over
//! `serde_json::Value`, no I/O; they never panic, whatever the provider sends.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::agent::call::{CallArguments, CallNote, ParsedCall};
use crate::agent::{InvalidCallKind, Usage};
use crate::provider::ProviderError;

/// One assistant turn read from a Messages response.
#[derive(Debug, Clone)]
pub struct AnthropicTurn {
    /// The `text` blocks joined, in order; `None` when there is none. Thinking is not text.
    pub text: Option<String>,
    /// Client `tool_use` calls wherever they sit in `content`, in order (field case B16).
    pub calls: Vec<ParsedCall>,
    /// `server_tool_use` calls the provider ran itself (web search, code execution): reported
    /// apart and never executed or scored as client calls (field case B16).
    pub server_calls: Vec<ServerToolCall>,
    /// `stop_reason` as sent (`end_turn`, `tool_use`, `max_tokens`, `stop_sequence`, ...).
    pub stop_reason: Option<String>,
    /// Token usage of this turn; `None` when the provider sent no `usage`.
    pub usage: Option<Usage>,
    /// The `content` to send back as the assistant message: every block as received, except
    /// that an invalid call's `input` is replaced by `{}` so the conversation stays valid.
    pub assistant_content: Vec<Value>,
}

/// A tool call the provider ran on its side (`server_tool_use`).
#[derive(Debug, Clone, PartialEq)]
pub struct ServerToolCall {
    /// The block id (`srvtoolu_...`).
    pub id: String,
    /// The server tool name, e.g. `web_search`.
    pub name: String,
    /// The input as sent.
    pub input: Value,
}

/// A content block with, for a streamed `tool_use`, the `partial_json` pieces joined.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// The block as received (for a streamed block: the `content_block_start` block with the
    /// text, thinking and signature deltas applied).
    pub value: Value,
    /// The joined `input_json_delta` pieces of a streamed `tool_use`; `None` when no delta
    /// came (the block's own `input` then stands).
    pub joined_input: Option<String>,
}

/// Reads a (non-streamed) Messages response body.
///
/// Errors (`ProviderError::BadResponse`) when the body is not an object with a `content` array,
/// naming the provider's `error.message` if it sent one.
pub fn parse_message(body: &Value) -> Result<AnthropicTurn, ProviderError> {
    let Some(body) = body.as_object() else {
        return Err(ProviderError::BadResponse(
            "expected a JSON object".to_owned(),
        ));
    };
    let Some(Value::Array(content)) = body.get("content") else {
        let provider = body
            .get("error")
            .and_then(|error| error.get("message"))
            .and_then(Value::as_str);
        return Err(ProviderError::BadResponse(match provider {
            Some(message) => format!("response has no `content`; provider error: {message}"),
            None => "response has no `content` array".to_owned(),
        }));
    };
    let blocks = content
        .iter()
        .map(|value| Block {
            value: value.clone(),
            joined_input: None,
        })
        .collect();
    let stop_reason = body.get("stop_reason").and_then(Value::as_str);
    Ok(read_blocks(
        blocks,
        stop_reason,
        body.get("usage").and_then(parse_usage),
    ))
}

/// A streamed response joined back together: its blocks by `index`, the stop reason and usage.
#[derive(Debug, Clone, PartialEq)]
pub struct JoinedStream {
    /// Content blocks in `index` order.
    pub blocks: Vec<Block>,
    /// From `message_delta.delta.stop_reason`.
    pub stop_reason: Option<String>,
    /// `message_start.message.usage` with `message_delta.usage` laid over it.
    pub usage: Option<Usage>,
}

/// Joins the events of a streamed response (each SSE `data` payload, in order) (field case B15).
///
/// Blocks are keyed by `index`, so interleaved blocks never mix. A `content_block_start` on an
/// index that already holds a block starts a new block there (placed right after the earlier
/// one, which keeps what it had): two `tool_use` blocks sharing an index are two calls, never
/// one dropped. Deltas go to the latest block started on their index. A `tool_use` block's arguments
/// are its `input_json_delta` pieces joined; empty pieces are no-ops; with no delta the start
/// event's `input` stands. Text, thinking and signature deltas are applied to their blocks.
/// Events of unknown types (`ping`, future ones) are skipped. Errors on an `error` event.
pub fn join_stream(events: &[Value]) -> Result<JoinedStream, ProviderError> {
    // Every block started, in start order, with its index; `open` maps an index to its latest.
    let mut started: Vec<(u64, Block)> = Vec::new();
    let mut open: BTreeMap<u64, usize> = BTreeMap::new();
    let mut stop_reason = None;
    let mut usage: Option<Usage> = None;
    for event in events {
        let index = event.get("index").and_then(Value::as_u64);
        match event.get("type").and_then(Value::as_str) {
            Some("message_start") => {
                usage = event
                    .get("message")
                    .and_then(|message| message.get("usage"))
                    .and_then(parse_usage);
            }
            Some("content_block_start") => {
                if let (Some(index), Some(block)) = (index, event.get("content_block")) {
                    open.insert(index, started.len());
                    started.push((
                        index,
                        Block {
                            value: block.clone(),
                            joined_input: None,
                        },
                    ));
                }
            }
            Some("content_block_delta") => {
                let (Some(block), Some(delta)) = (
                    index
                        .and_then(|index| open.get(&index))
                        .and_then(|&position| started.get_mut(position))
                        .map(|(_, block)| block),
                    event.get("delta"),
                ) else {
                    continue;
                };
                apply_delta(block, delta);
            }
            Some("message_delta") => {
                if let Some(reason) = event
                    .get("delta")
                    .and_then(|delta| delta.get("stop_reason"))
                    .and_then(Value::as_str)
                {
                    stop_reason = Some(reason.to_owned());
                }
                if let Some(more) = event.get("usage").and_then(Value::as_object) {
                    let usage = usage.get_or_insert_with(Usage::default);
                    if let Some(tokens) = more.get("input_tokens").and_then(Value::as_u64) {
                        usage.prompt_tokens = tokens;
                    }
                    if let Some(tokens) = more.get("output_tokens").and_then(Value::as_u64) {
                        usage.completion_tokens = tokens;
                    }
                }
            }
            Some("error") => {
                let message = event
                    .get("error")
                    .and_then(|error| error.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("no message");
                return Err(ProviderError::BadResponse(format!(
                    "stream error event: {message}"
                )));
            }
            _ => {}
        }
    }
    // A stable sort: blocks that shared an index stay in the order they were started.
    started.sort_by_key(|(index, _)| *index);
    Ok(JoinedStream {
        blocks: started.into_iter().map(|(_, block)| block).collect(),
        stop_reason,
        usage,
    })
}

fn apply_delta(block: &mut Block, delta: &Value) {
    let piece = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or("");
    let append = |value: &mut Value, key: &str, text: &str| {
        if let Some(object) = value.as_object_mut() {
            let joined = format!(
                "{}{text}",
                object.get(key).and_then(Value::as_str).unwrap_or("")
            );
            object.insert(key.to_owned(), Value::from(joined));
        }
    };
    match delta.get("type").and_then(Value::as_str) {
        Some("input_json_delta") => {
            let partial = piece("partial_json");
            if !partial.is_empty() {
                block
                    .joined_input
                    .get_or_insert_with(String::new)
                    .push_str(partial);
            }
        }
        Some("text_delta") => append(&mut block.value, "text", piece("text")),
        Some("thinking_delta") => append(&mut block.value, "thinking", piece("thinking")),
        Some("signature_delta") => {
            if let Some(object) = block.value.as_object_mut() {
                object.insert("signature".to_owned(), Value::from(piece("signature")));
            }
        }
        _ => {}
    }
}

/// Reads a joined stream as one turn, exactly as [`parse_message`] reads a whole response.
pub fn parse_stream(joined: JoinedStream) -> AnthropicTurn {
    read_blocks(joined.blocks, joined.stop_reason.as_deref(), joined.usage)
}

/// The turn from its content blocks.
///
/// With `stop_reason: max_tokens`, a `tool_use` that is the last block was being written when
/// generation stopped: it is `truncated` and never executed, unless streamed arguments parse
/// as a complete object (field case B14).
fn read_blocks(
    blocks: Vec<Block>,
    stop_reason: Option<&str>,
    usage: Option<Usage>,
) -> AnthropicTurn {
    let cut_off = stop_reason == Some("max_tokens");
    let last = blocks.len().saturating_sub(1);
    let mut texts = Vec::new();
    let mut calls = Vec::new();
    let mut server_calls = Vec::new();
    let mut assistant_content = Vec::new();
    let mut seen_ids = std::collections::HashSet::new();
    for (position, block) in blocks.into_iter().enumerate() {
        let kind = block
            .value
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("");
        match kind {
            "text" => {
                if let Some(text) = block.value.get("text").and_then(Value::as_str) {
                    texts.push(text.to_owned());
                }
                assistant_content.push(block.value);
            }
            "tool_use" => {
                let mut call = read_tool_use(&block, cut_off && position == last);
                if let Some(id) = &call.id
                    && !seen_ids.insert(id.clone())
                {
                    call.notes.push(CallNote::DuplicateId);
                }
                let mut sent = block.value.clone();
                if let Some(object) = sent.as_object_mut() {
                    let input = match &call.arguments {
                        CallArguments::Valid(arguments) => Value::Object(arguments.clone()),
                        CallArguments::Invalid { .. } => json!({}),
                    };
                    object.insert("input".to_owned(), input);
                }
                assistant_content.push(sent);
                calls.push(call);
            }
            "server_tool_use" => {
                server_calls.push(ServerToolCall {
                    id: string_field(&block.value, "id"),
                    name: string_field(&block.value, "name"),
                    input: block.value.get("input").cloned().unwrap_or(Value::Null),
                });
                assistant_content.push(block.value);
            }
            // Thinking, redacted thinking, server tool results and blocks of future types are
            // sent back as received and otherwise ignored.
            _ if block.value.is_object() => assistant_content.push(block.value),
            _ => {}
        }
    }
    AnthropicTurn {
        text: (!texts.is_empty()).then(|| texts.concat()),
        calls,
        server_calls,
        stop_reason: stop_reason.map(str::to_owned),
        usage,
        assistant_content,
    }
}

fn string_field(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

/// Reads one `tool_use` block; `cut_off` says generation stopped inside it.
fn read_tool_use(block: &Block, cut_off: bool) -> ParsedCall {
    let id = block
        .value
        .get("id")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let name = string_field(&block.value, "name");
    let invalid = |kind, raw: String| CallArguments::Invalid { kind, raw };
    let (arguments, notes) = match (&block.joined_input, block.value.get("input")) {
        (Some(text), _) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(object)) => (CallArguments::Valid(object), Vec::new()),
            Ok(_) => (
                invalid(InvalidCallKind::ArgumentsNotObject, text.clone()),
                Vec::new(),
            ),
            Err(_) if cut_off => (
                invalid(InvalidCallKind::Truncated, text.clone()),
                Vec::new(),
            ),
            Err(error) if error.is_eof() => (
                invalid(InvalidCallKind::UnparseableArguments, text.clone()),
                vec![CallNote::PossiblyTruncated],
            ),
            Err(_) => (
                invalid(InvalidCallKind::UnparseableArguments, text.clone()),
                Vec::new(),
            ),
        },
        // A whole (non-streamed) block cut off by the token limit: its `input` is whatever the
        // provider salvaged, often `{}`; never run it as if complete.
        (None, input) if cut_off => (
            invalid(
                InvalidCallKind::Truncated,
                input.map(Value::to_string).unwrap_or_default(),
            ),
            Vec::new(),
        ),
        (None, Some(Value::Object(object))) => (CallArguments::Valid(object.clone()), Vec::new()),
        (None, None) => (
            CallArguments::Valid(Map::new()),
            vec![CallNote::MissingArguments],
        ),
        (None, Some(other)) => (
            invalid(InvalidCallKind::ArgumentsNotObject, other.to_string()),
            Vec::new(),
        ),
    };
    let arguments = if name.is_empty() {
        invalid(
            InvalidCallKind::MissingFunction,
            match arguments {
                CallArguments::Valid(object) => Value::Object(object).to_string(),
                CallArguments::Invalid { raw, .. } => raw,
            },
        )
    } else {
        arguments
    };
    ParsedCall {
        id,
        name,
        arguments,
        notes,
    }
}

/// Reads `usage` (`input_tokens`, `output_tokens`); a missing count is 0.
fn parse_usage(usage: &Value) -> Option<Usage> {
    let usage = usage.as_object()?;
    let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
    Some(Usage {
        prompt_tokens: count("input_tokens"),
        completion_tokens: count("output_tokens"),
        ..Usage::default()
    })
}

#[cfg(test)]
mod tests {
    //! Anthropic responses: calls whole or streamed, truncation marked, odd blocks never panic.

    use super::*;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            other => panic!("test fixture is not an object: {other}"),
        }
    }

    fn valid(name: &str, id: &str, input: Value) -> ParsedCall {
        ParsedCall {
            id: Some(id.to_owned()),
            name: name.to_owned(),
            arguments: CallArguments::Valid(object(input)),
            notes: vec![],
        }
    }

    #[test]
    fn b16_tool_use_after_thinking_and_text_with_server_tools_kept_apart() {
        let body = json!({"stop_reason": "tool_use",
           "content": [
             {"type": "thinking", "thinking": "plan...", "signature": "sig"},
             {"type": "text", "text": "Let me check."},
             {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}},
             {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
             {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
             {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {}}]});

        let turn = parse_message(&body).expect("valid response");

        assert_eq!(
            turn.calls,
            vec![
                valid("get_weather", "toolu_1", json!({"city": "Paris"})),
                valid("get_time", "toolu_2", json!({})),
            ]
        );
        assert_eq!(
            turn.server_calls,
            vec![ServerToolCall {
                id: "srvtoolu_1".to_owned(),
                name: "web_search".to_owned(),
                input: json!({"query": "x"}),
            }]
        );
        assert_eq!(turn.text.as_deref(), Some("Let me check."));
        assert_eq!(turn.stop_reason.as_deref(), Some("tool_use"));
        // Every block goes back to the provider, the thinking block with its signature.
        assert_eq!(
            turn.assistant_content,
            body["content"].as_array().cloned().unwrap_or_default()
        );
    }

    #[test]
    fn b15_streamed_tool_use_arguments_come_from_the_joined_deltas() {
        let events = json!([
          {"type": "content_block_start", "index": 1,
           "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}},
          {"type": "content_block_delta", "index": 1,
           "delta": {"type": "input_json_delta", "partial_json": "{\"location\":"}},
          {"type": "content_block_delta", "index": 1,
           "delta": {"type": "input_json_delta", "partial_json": ""}},
          {"type": "content_block_delta", "index": 1,
           "delta": {"type": "input_json_delta", "partial_json": " \"Paris\", \"unit\": \"c\"}"}},
          {"type": "content_block_stop", "index": 1},
          {"type": "content_block_start", "index": 2,
           "content_block": {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {}}},
          {"type": "content_block_stop", "index": 2}]);
        let events = events.as_array().cloned().unwrap_or_default();

        let turn = parse_stream(join_stream(&events).expect("no error event"));

        assert_eq!(
            turn.calls,
            vec![
                valid(
                    "get_weather",
                    "toolu_1",
                    json!({"location": "Paris", "unit": "c"})
                ),
                valid("get_time", "toolu_2", json!({})),
            ]
        );
    }

    /// A second `tool_use` started on an occupied index is a second call, not a
    /// replacement of the first.
    #[test]
    fn tool_use_blocks_sharing_an_index_are_both_kept() {
        let events: Vec<Value> = serde_json::from_value(json!([
          {"type": "content_block_start", "index": 0,
           "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}},
          {"type": "content_block_delta", "index": 0,
           "delta": {"type": "input_json_delta", "partial_json": "{\"city\": \"Paris\"}"}},
          {"type": "content_block_stop", "index": 0},
          {"type": "content_block_start", "index": 0,
           "content_block": {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {}}},
          {"type": "content_block_delta", "index": 0,
           "delta": {"type": "input_json_delta", "partial_json": "{\"tz\": \"UTC\"}"}},
          {"type": "content_block_stop", "index": 0},
          {"type": "message_delta", "delta": {"stop_reason": "tool_use"}}]))
        .expect("events");
        let turn = parse_stream(join_stream(&events).expect("joins"));
        assert_eq!(
            turn.calls,
            vec![
                valid("get_weather", "toolu_1", json!({"city": "Paris"})),
                valid("get_time", "toolu_2", json!({"tz": "UTC"})),
            ]
        );
    }

    #[test]
    fn interleaved_streamed_blocks_do_not_mix() {
        let events = json!([
          {"type": "message_start", "message": {"usage": {"input_tokens": 12, "output_tokens": 1}}},
          {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
          {"type": "content_block_start", "index": 1,
           "content_block": {"type": "tool_use", "id": "a", "name": "f", "input": {}}},
          {"type": "content_block_delta", "index": 1,
           "delta": {"type": "input_json_delta", "partial_json": "{\"x\""}},
          {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hel"}},
          {"type": "ping"},
          {"type": "content_block_delta", "index": 1,
           "delta": {"type": "input_json_delta", "partial_json": ": 1}"}},
          {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "lo"}},
          {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}}]);
        let events = events.as_array().cloned().unwrap_or_default();

        let turn = parse_stream(join_stream(&events).expect("no error event"));

        assert_eq!(turn.text.as_deref(), Some("Hello"));
        assert_eq!(turn.calls, vec![valid("f", "a", json!({"x": 1}))]);
        assert_eq!(turn.stop_reason.as_deref(), Some("tool_use"));
        let usage = turn.usage.expect("usage");
        assert_eq!((usage.prompt_tokens, usage.completion_tokens), (12, 30));
    }

    #[test]
    fn b14_streamed_call_cut_off_by_max_tokens_is_truncated_not_empty() {
        let events = json!([
          {"type": "content_block_start", "index": 0,
           "content_block": {"type": "tool_use", "id": "toolu_1", "name": "write_file", "input": {}}},
          {"type": "content_block_delta", "index": 0,
           "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \"notes/x.txt\", \"con"}},
          {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}}]);
        let events = events.as_array().cloned().unwrap_or_default();

        let turn = parse_stream(join_stream(&events).expect("no error event"));

        assert_eq!(
            turn.calls[0].arguments,
            CallArguments::Invalid {
                kind: InvalidCallKind::Truncated,
                raw: "{\"path\": \"notes/x.txt\", \"con".to_owned(),
            }
        );
        // The call goes back to the provider with `{}` so the tool_result can answer it.
        assert_eq!(turn.assistant_content[0]["input"], json!({}));
    }

    #[test]
    fn b14_whole_response_cut_off_marks_the_last_tool_use_truncated() {
        let body = json!({"stop_reason": "max_tokens",
           "content": [
             {"type": "tool_use", "id": "toolu_0", "name": "read_file", "input": {"path": "a"}},
             {"type": "tool_use", "id": "toolu_1", "name": "write_file", "input": {}}]});

        let turn = parse_message(&body).expect("valid response");

        assert_eq!(
            turn.calls[0],
            valid("read_file", "toolu_0", json!({"path": "a"}))
        );
        assert_eq!(
            turn.calls[1].arguments,
            CallArguments::Invalid {
                kind: InvalidCallKind::Truncated,
                raw: "{}".to_owned(),
            }
        );
    }

    #[test]
    fn streamed_unparseable_arguments_without_the_limit_are_possibly_truncated() {
        let events = json!([
          {"type": "content_block_start", "index": 0,
           "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}}},
          {"type": "content_block_delta", "index": 0,
           "delta": {"type": "input_json_delta", "partial_json": "{\"a\": "}},
          {"type": "message_delta", "delta": {"stop_reason": "tool_use"}}]);
        let events = events.as_array().cloned().unwrap_or_default();

        let turn = parse_stream(join_stream(&events).expect("no error event"));

        assert_eq!(
            turn.calls[0].arguments,
            CallArguments::Invalid {
                kind: InvalidCallKind::UnparseableArguments,
                raw: "{\"a\": ".to_owned(),
            }
        );
        assert_eq!(turn.calls[0].notes, vec![CallNote::PossiblyTruncated]);
    }

    #[test]
    fn input_that_is_not_an_object_is_arguments_not_object() {
        let body = json!({"stop_reason": "tool_use",
           "content": [{"type": "tool_use", "id": "t", "name": "f", "input": "Paris"}]});
        let turn = parse_message(&body).expect("valid response");
        assert_eq!(
            turn.calls[0].arguments,
            CallArguments::Invalid {
                kind: InvalidCallKind::ArgumentsNotObject,
                raw: "\"Paris\"".to_owned(),
            }
        );
    }

    #[test]
    fn stream_error_event_is_a_bad_response() {
        let events = vec![json!({"type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"}})];
        let error = join_stream(&events).expect_err("error event");
        assert_eq!(
            error.to_string(),
            "provider response is not valid: stream error event: Overloaded"
        );
    }

    #[test]
    fn bodies_without_content_are_bad_responses() {
        let cases = [
            (
                json!([]),
                "provider response is not valid: expected a JSON object",
            ),
            (
                json!({"type": "error", "error": {"type": "invalid_request_error", "message": "bad model"}}),
                "provider response is not valid: response has no `content`; provider error: bad model",
            ),
            (
                json!({"content": "hi"}),
                "provider response is not valid: response has no `content` array",
            ),
        ];
        for (body, expected) in cases {
            let error = parse_message(&body).expect_err("must fail");
            assert_eq!(error.to_string(), expected);
        }
    }

    #[test]
    fn odd_blocks_never_panic() {
        let body = json!({"content": [null, 1, "x", {}, {"type": "tool_use"},
                                      {"type": "tool_use", "name": 3, "input": [1]},
                                      {"type": "text", "text": 5}],
                          "stop_reason": 7, "usage": "lots"});
        let turn = parse_message(&body).expect("content present");
        assert_eq!(turn.calls.len(), 2);
        for call in turn.calls {
            assert!(
                matches!(call.arguments, CallArguments::Invalid { .. }),
                "{call:?}"
            );
        }
    }
}
