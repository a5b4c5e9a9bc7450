//! Reading one chat-completions response: the assistant's text, its tool calls (valid or
//! invalid) and the token usage. Pure functions over `serde_json::Value`, no I/O; they never
//! panic, whatever the provider sends.

use serde_json::{Map, Value};

use crate::agent::call::{CallArguments, CallNote, ParsedCall};
use crate::agent::{InvalidCallKind, Usage};
use crate::provider::ProviderError;

/// One assistant turn read from a chat-completions response body.
#[derive(Debug, Clone)]
pub struct ParsedTurn {
    /// The assistant's text; `None` when `content` is null or absent. Content given as an array
    /// of parts is joined from its `text` parts.
    pub content: Option<String>,
    /// The tool calls in the order the model emitted them, valid and invalid alike; empty when
    /// the model answered without calling a tool.
    pub calls: Vec<ParsedCall>,
    /// `choices[0].finish_reason` as sent (`stop`, `tool_calls`, `length`, ...).
    pub finish_reason: Option<String>,
    /// True when generation stopped at the output limit: `finish_reason: "length"`, or
    /// `completion_tokens` reached the request's limit.
    pub cut_off: bool,
    /// Token usage of this turn; `None` when the provider sent no `usage`.
    pub usage: Option<Usage>,
    /// The message to append to the conversation before the tool results: `role`, `content`
    /// and the `tool_calls` (or legacy `function_call`) as received, except that a `null`
    /// content is sent back as `""` (llama-cpp-python's server answers HTTP 500 to a `null`
    /// one; OpenAI, vLLM and Ollama accept both) and a lone call object as a one-call array.
    pub assistant_message: Value,
    /// True when the call came as a legacy `function_call` on the message; its result is then
    /// sent back as a `{"role": "function", "name": ..}` message.
    pub is_legacy_function_call: bool,
}

/// Reads a chat-completions response body.
///
/// `request_max_tokens` is the `max_tokens` the request asked for: when the reported
/// `completion_tokens` reach it, generation was cut off even if `finish_reason` says
/// `tool_calls` (field case B14), just as with `finish_reason: "length"`.
///
/// Only the first choice is read. Errors (`ProviderError::BadResponse`) when the body has no
/// `choices[0].message` object, naming the provider's `error.message` if it sent one.
pub fn parse_response(
    body: &Value,
    request_max_tokens: Option<u32>,
) -> Result<ParsedTurn, ProviderError> {
    let Some(body) = body.as_object() else {
        return Err(ProviderError::BadResponse(format!(
            "expected a JSON object, got {}",
            crate::json::json_type(body)
        )));
    };
    let choice = match body.get("choices") {
        Some(Value::Array(choices)) if !choices.is_empty() => &choices[0],
        _ => {
            return Err(ProviderError::BadResponse(match error_message(body) {
                Some(message) => format!("response has no `choices`; provider error: {message}"),
                None => "response has no `choices`".to_owned(),
            }));
        }
    };
    let Some(message) = choice.get("message").and_then(Value::as_object) else {
        return Err(ProviderError::BadResponse(
            "`choices[0].message` is missing or not an object".to_owned(),
        ));
    };

    let finish_reason = choice
        .get("finish_reason")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let usage = body.get("usage").and_then(parse_usage);
    let cut_off = finish_reason.as_deref() == Some("length")
        || matches!(
            (request_max_tokens, &usage),
            (Some(max), Some(usage)) if usage.completion_tokens >= u64::from(max)
        );

    let raw_content = message.get("content").cloned().unwrap_or(Value::Null);
    let content = crate::json::message_text(&raw_content);

    let mut assistant_message = Map::new();
    assistant_message.insert("role".to_owned(), Value::from("assistant"));
    let echoed_content = if raw_content.is_null() {
        Value::from("")
    } else {
        raw_content
    };
    assistant_message.insert("content".to_owned(), echoed_content);

    let mut is_legacy_function_call = false;
    let calls = match message.get("tool_calls") {
        Some(Value::Array(entries)) if !entries.is_empty() => {
            assistant_message.insert("tool_calls".to_owned(), Value::Array(entries.clone()));
            entries
                .iter()
                .map(|entry| parse_tool_call(entry, cut_off))
                .collect()
        }
        // A lone call object instead of an array (field case B13 a).
        Some(entry @ Value::Object(_)) => {
            assistant_message.insert("tool_calls".to_owned(), Value::Array(vec![entry.clone()]));
            vec![parse_tool_call(entry, cut_off)]
        }
        _ => match message.get("function_call") {
            Some(function @ Value::Object(_)) => {
                is_legacy_function_call = true;
                assistant_message.insert("function_call".to_owned(), function.clone());
                vec![parse_function(None, function, cut_off)]
            }
            _ => Vec::new(),
        },
    };
    let mut calls = mark_duplicate_ids(calls);
    // llama-cpp-python (0.3) sends a placeholder `function_call` with an empty name beside
    // every `tool_calls`: only a named one can disagree.
    let named = |function: &&Value| {
        function
            .get("name")
            .and_then(Value::as_str)
            .is_some_and(|name| !name.is_empty())
    };
    if !is_legacy_function_call
        && let Some(function) = message.get("function_call").filter(named)
        && let Some(first) = calls.first_mut()
        && !calls_agree(first, function)
    {
        first.notes.push(CallNote::FunctionCallDisagrees);
    }

    Ok(ParsedTurn {
        content,
        calls,
        finish_reason,
        cut_off,
        usage,
        assistant_message: Value::Object(assistant_message),
        is_legacy_function_call,
    })
}

/// Reads one entry of `message.tool_calls`.
///
/// `cut_off` says generation hit the output token limit; arguments that do not parse are then
/// `truncated` rather than `unparseable_arguments`. An entry with no usable `function` (absent,
/// null, not an object, or without a string `name`) is `missing_function`.
pub fn parse_tool_call(entry: &Value, cut_off: bool) -> ParsedCall {
    let id = entry.get("id").and_then(Value::as_str).map(str::to_owned);
    match entry.get("function") {
        Some(function @ Value::Object(_)) => parse_function(id, function, cut_off),
        _ => {
            // Another call type, e.g. `{"type": "custom", "custom": {"name", "input"}}`: keep
            // what can be kept for the report.
            let kind_name = entry.get("type").and_then(Value::as_str).unwrap_or("");
            let other = entry.get(kind_name).filter(|_| kind_name != "function");
            let name = other
                .and_then(|o| o.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let raw = match other.and_then(|o| o.get("input")) {
                Some(Value::String(text)) => text.clone(),
                Some(value) => value.to_string(),
                None => String::new(),
            };
            ParsedCall {
                id,
                name,
                arguments: CallArguments::Invalid {
                    kind: InvalidCallKind::MissingFunction,
                    raw,
                },
                notes: if other.is_some() {
                    vec![CallNote::UnsupportedCallType]
                } else {
                    Vec::new()
                },
            }
        }
    }
}

/// Reads a `{"name", "arguments"}` object: a tool call's `function` or a legacy `function_call`.
fn parse_function(id: Option<String>, function: &Value, cut_off: bool) -> ParsedCall {
    let Some(name) = function.get("name").and_then(Value::as_str) else {
        let raw = match function.get("arguments") {
            Some(Value::String(text)) => text.clone(),
            Some(value) => value.to_string(),
            None => String::new(),
        };
        return ParsedCall {
            id,
            name: String::new(),
            arguments: CallArguments::Invalid {
                kind: InvalidCallKind::MissingFunction,
                raw,
            },
            notes: Vec::new(),
        };
    };
    let (arguments, notes) = parse_arguments(function.get("arguments"), cut_off);
    ParsedCall {
        id,
        name: name.to_owned(),
        arguments,
        notes,
    }
}

/// Reads the `arguments` field of a function call (field cases B10, B11, B14).
fn parse_arguments(arguments: Option<&Value>, cut_off: bool) -> (CallArguments, Vec<CallNote>) {
    let text = match arguments {
        None => {
            return (
                CallArguments::Valid(Map::new()),
                vec![CallNote::MissingArguments],
            );
        }
        Some(Value::Object(object)) => {
            return (
                CallArguments::Valid(object.clone()),
                vec![CallNote::DecodedArgumentsObject],
            );
        }
        Some(Value::String(text)) => text,
        Some(other) => {
            return (
                CallArguments::Invalid {
                    kind: InvalidCallKind::ArgumentsNotObject,
                    raw: other.to_string(),
                },
                Vec::new(),
            );
        }
    };
    if text.trim().is_empty() {
        return (
            CallArguments::Valid(Map::new()),
            vec![CallNote::EmptyArgumentsString],
        );
    }
    let invalid = |kind| CallArguments::Invalid {
        kind,
        raw: text.clone(),
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => (CallArguments::Valid(object), Vec::new()),
        Ok(_) => (invalid(InvalidCallKind::ArgumentsNotObject), Vec::new()),
        Err(_) if cut_off => (invalid(InvalidCallKind::Truncated), Vec::new()),
        Err(error) if error.is_eof() => (
            invalid(InvalidCallKind::UnparseableArguments),
            vec![CallNote::PossiblyTruncated],
        ),
        Err(_) => (invalid(InvalidCallKind::UnparseableArguments), Vec::new()),
    }
}

/// Whether a legacy `function_call` sent beside `tool_calls` names the same call as the first
/// entry: the same name and, compared by value, the same arguments.
fn calls_agree(call: &ParsedCall, function: &Value) -> bool {
    let legacy = parse_function(None, function, false);
    let arguments = |call: &ParsedCall| match &call.arguments {
        CallArguments::Valid(arguments) => Some(Value::Object(arguments.clone())),
        CallArguments::Invalid { .. } => None,
    };
    legacy.name == call.name
        && match (arguments(&legacy), arguments(call)) {
            (Some(a), Some(b)) => crate::json::same_value(&a, &b),
            _ => false,
        }
}

/// Adds `DuplicateId` to every call whose id an earlier call of the turn already used.
fn mark_duplicate_ids(mut calls: Vec<ParsedCall>) -> Vec<ParsedCall> {
    let mut seen = std::collections::HashSet::new();
    for call in &mut calls {
        if let Some(id) = &call.id
            && !seen.insert(id.clone())
        {
            call.notes.push(CallNote::DuplicateId);
        }
    }
    calls
}

/// Reads `usage`; a missing or non-numeric count is 0.
fn parse_usage(usage: &Value) -> Option<Usage> {
    let usage = usage.as_object()?;
    let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
    Some(Usage {
        prompt_tokens: count("prompt_tokens"),
        completion_tokens: count("completion_tokens"),
        ..Usage::default()
    })
}

/// The provider's `error.message` (or a string `error`), if the body carries one.
fn error_message(body: &Map<String, Value>) -> Option<String> {
    match body.get("error")? {
        Value::String(message) => Some(message.clone()),
        error => error
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_owned),
    }
}

#[cfg(test)]
mod tests {
    //! Chat-completions parsing: each malformed tool call is a named invalid kind, never a panic.

    use serde_json::json;

    use super::*;

    fn response(message: Value, finish_reason: &str) -> Value {
        json!({
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        })
    }

    fn call_with_arguments(arguments: &str) -> ParsedCall {
        parse_tool_call(
            &json!({"id": "call_1", "type": "function",
                    "function": {"name": "get_weather", "arguments": arguments}}),
            false,
        )
    }

    fn invalid(kind: InvalidCallKind, raw: &str) -> CallArguments {
        CallArguments::Invalid {
            kind,
            raw: raw.to_owned(),
        }
    }

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            other => panic!("test fixture is not an object: {other}"),
        }
    }

    #[test]
    fn reads_a_clean_tool_call() {
        let call = call_with_arguments(r#"{"city": "Paris", "days": 3}"#);
        assert_eq!(
            call,
            ParsedCall {
                id: Some("call_1".to_owned()),
                name: "get_weather".to_owned(),
                arguments: CallArguments::Valid(object(json!({"city": "Paris", "days": 3}))),
                notes: vec![],
            }
        );
    }

    #[test]
    fn b10_empty_arguments_string_is_an_empty_object_with_a_note() {
        let body = response(
            json!({"role": "assistant", "content": null,
                   "tool_calls": [{"id": "call_1", "type": "function",
                                   "function": {"name": "get_ipinfo", "arguments": ""}},
                                  {"id": "call_2", "type": "function",
                                   "function": {"name": "lookup", "arguments": "  "}}]}),
            "tool_calls",
        );
        let turn = parse_response(&body, None).expect("valid response");
        assert_eq!(turn.calls.len(), 2);
        assert_eq!(turn.calls[0].name, "get_ipinfo");
        assert_eq!(turn.calls[0].arguments, CallArguments::Valid(Map::new()));
        assert_eq!(turn.calls[0].notes, vec![CallNote::EmptyArgumentsString]);
        // Whitespace only: `{}` too, left for the scorer to report `missing_required: ip`.
        assert_eq!(turn.calls[1].name, "lookup");
        assert_eq!(turn.calls[1].arguments, CallArguments::Valid(Map::new()));
        assert_eq!(turn.calls[1].notes, vec![CallNote::EmptyArgumentsString]);
    }

    #[test]
    fn b10_non_empty_malformed_arguments_stay_unparseable() {
        let call = call_with_arguments(r#"{"ip": "#);
        assert_eq!(
            call.arguments,
            invalid(InvalidCallKind::UnparseableArguments, r#"{"ip": "#)
        );
        assert_eq!(call.notes, vec![CallNote::PossiblyTruncated]);
    }

    #[test]
    fn b11_valid_json_that_is_not_an_object_is_arguments_not_object() {
        for raw in [r#""Beijing""#, r#"["Beijing"]"#, "123", "true", "null"] {
            let call = call_with_arguments(raw);
            assert_eq!(call.name, "get_weather", "name kept for {raw}");
            assert_eq!(
                call.arguments,
                invalid(InvalidCallKind::ArgumentsNotObject, raw),
                "arguments {raw}"
            );
        }
    }

    #[test]
    fn b13_tool_call_with_null_function_is_missing_function() {
        let body = response(
            json!({"role": "assistant", "content": null,
                   "tool_calls": [{"id": "c1", "type": "custom",
                                   "custom": {"name": "x", "input": "raw text"}},
                                  {"id": "c2", "type": "function", "function": null}]}),
            "tool_calls",
        );
        let turn = parse_response(&body, None).expect("valid response");
        assert_eq!(
            turn.calls,
            vec![
                ParsedCall {
                    id: Some("c1".to_owned()),
                    name: "x".to_owned(),
                    arguments: invalid(InvalidCallKind::MissingFunction, "raw text"),
                    notes: vec![CallNote::UnsupportedCallType],
                },
                ParsedCall {
                    id: Some("c2".to_owned()),
                    name: String::new(),
                    arguments: invalid(InvalidCallKind::MissingFunction, ""),
                    notes: vec![],
                },
            ]
        );
    }

    #[test]
    fn tool_call_without_function_field_is_missing_function() {
        let call = parse_tool_call(&json!({"id": "c3", "type": "function"}), false);
        assert_eq!(
            call.arguments,
            invalid(InvalidCallKind::MissingFunction, "")
        );
        let call = parse_tool_call(&json!({"id": "c4", "function": {"arguments": "{}"}}), false);
        assert_eq!(
            call.arguments,
            invalid(InvalidCallKind::MissingFunction, "{}")
        );
    }

    #[test]
    fn b14_openai_compat_arguments_cut_at_max_tokens_are_truncated() {
        let raw = r#"{"path": "notes/x.txt", "content": "Lorem ips"#;
        let body = json!({
            "choices": [{"index": 0, "finish_reason": "tool_calls",
                         "message": {"role": "assistant", "content": null,
                                     "tool_calls": [{"id": "call_1", "type": "function",
                                       "function": {"name": "write_file", "arguments": raw}}]}}],
            "usage": {"completion_tokens": 300}
        });
        let turn = parse_response(&body, Some(300)).expect("valid response");
        assert_eq!(turn.calls.len(), 1);
        assert_eq!(turn.calls[0].name, "write_file");
        assert_eq!(
            turn.calls[0].arguments,
            invalid(InvalidCallKind::Truncated, raw)
        );
    }

    #[test]
    fn b14_without_a_token_limit_signal_is_unparseable_possibly_truncated() {
        let raw = r#"{"path": "notes/x.txt", "content": "Lorem ips"#;
        let body = json!({
            "choices": [{"finish_reason": "tool_calls",
                         "message": {"role": "assistant",
                                     "tool_calls": [{"id": "call_1", "type": "function",
                                       "function": {"name": "write_file", "arguments": raw}}]}}],
            "usage": {"completion_tokens": 120}
        });
        let turn = parse_response(&body, Some(300)).expect("valid response");
        assert_eq!(
            turn.calls[0].arguments,
            invalid(InvalidCallKind::UnparseableArguments, raw)
        );
        assert_eq!(turn.calls[0].notes, vec![CallNote::PossiblyTruncated]);
    }

    #[test]
    fn finish_reason_length_makes_unparseable_arguments_truncated() {
        let body = response(
            json!({"role": "assistant", "content": null,
                   "tool_calls": [{"id": "call_1", "type": "function",
                                   "function": {"name": "write_file", "arguments": "{\"pa"}}]}),
            "length",
        );
        let turn = parse_response(&body, None).expect("valid response");
        assert_eq!(
            turn.calls[0].arguments,
            invalid(InvalidCallKind::Truncated, "{\"pa")
        );
    }

    #[test]
    fn complete_arguments_stay_valid_when_the_token_limit_is_hit() {
        let body = response(
            json!({"role": "assistant", "content": null,
                   "tool_calls": [{"id": "call_1", "type": "function",
                                   "function": {"name": "f", "arguments": "{\"a\": 1}"}}]}),
            "length",
        );
        let turn = parse_response(&body, None).expect("valid response");
        assert_eq!(
            turn.calls[0].arguments,
            CallArguments::Valid(object(json!({"a": 1})))
        );
    }

    #[test]
    fn arguments_given_as_an_object_are_accepted_with_a_note() {
        let call = parse_tool_call(
            &json!({"id": "call_1", "function": {"name": "f", "arguments": {"a": [1, 2]}}}),
            false,
        );
        assert_eq!(
            call.arguments,
            CallArguments::Valid(object(json!({"a": [1, 2]})))
        );
        assert_eq!(call.notes, vec![CallNote::DecodedArgumentsObject]);
    }

    #[test]
    fn arguments_given_as_a_json_null_are_arguments_not_object() {
        let call = parse_tool_call(
            &json!({"id": "call_1", "function": {"name": "f", "arguments": null}}),
            false,
        );
        assert_eq!(
            call.arguments,
            invalid(InvalidCallKind::ArgumentsNotObject, "null")
        );
    }

    #[test]
    fn absent_arguments_are_an_empty_object_with_a_note() {
        let call = parse_tool_call(&json!({"id": "call_1", "function": {"name": "f"}}), false);
        assert_eq!(call.arguments, CallArguments::Valid(Map::new()));
        assert_eq!(call.notes, vec![CallNote::MissingArguments]);
    }

    #[test]
    fn garbage_arguments_are_unparseable_without_a_truncation_note() {
        let call = call_with_arguments("city=Paris");
        assert_eq!(
            call.arguments,
            invalid(InvalidCallKind::UnparseableArguments, "city=Paris")
        );
        assert_eq!(call.notes, vec![]);
    }

    #[test]
    fn legacy_function_call_is_read_as_one_call() {
        let body = response(
            json!({"role": "assistant", "content": null,
                   "function_call": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}),
            "function_call",
        );
        let turn = parse_response(&body, None).expect("valid response");
        assert!(turn.is_legacy_function_call);
        assert_eq!(
            turn.calls,
            vec![ParsedCall {
                id: None,
                name: "get_weather".to_owned(),
                arguments: CallArguments::Valid(object(json!({"city": "Oslo"}))),
                notes: vec![],
            }]
        );
        assert_eq!(
            turn.assistant_message,
            json!({"role": "assistant", "content": "",
                   "function_call": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}})
        );
    }

    #[test]
    fn the_echoed_turn_has_a_string_content_and_an_array_of_calls() {
        let call = json!({"id": "c1", "type": "function",
                          "function": {"name": "a", "arguments": "{}"}});
        let body = response(
            json!({"role": "assistant", "content": null, "tool_calls": call}),
            "tool_calls",
        );
        let turn = parse_response(&body, None).expect("valid response");
        assert_eq!(turn.content, None);
        assert_eq!(
            turn.assistant_message,
            json!({"role": "assistant", "content": "", "tool_calls": [call]})
        );
    }

    #[test]
    fn duplicate_call_ids_are_kept_and_noted() {
        let body = response(
            json!({"role": "assistant", "content": null,
                   "tool_calls": [{"id": "same", "function": {"name": "a", "arguments": "{}"}},
                                  {"id": "same", "function": {"name": "b", "arguments": "{}"}}]}),
            "tool_calls",
        );
        let turn = parse_response(&body, None).expect("valid response");
        let names: Vec<&str> = turn.calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(turn.calls[0].notes, vec![]);
        assert_eq!(turn.calls[1].notes, vec![CallNote::DuplicateId]);
    }

    #[test]
    fn assistant_message_keeps_tool_calls_exactly_as_received() {
        let tool_calls = json!([{"id": "call_1", "type": "function", "extra": {"x": 1},
                                 "function": {"name": "f", "arguments": "{ \"a\" : 1 }"}}]);
        let body = response(
            json!({"role": "assistant", "content": "let me look", "refusal": null,
                   "tool_calls": tool_calls.clone()}),
            "tool_calls",
        );
        let turn = parse_response(&body, None).expect("valid response");
        assert_eq!(
            turn.assistant_message,
            json!({"role": "assistant", "content": "let me look", "tool_calls": tool_calls})
        );
        assert_eq!(turn.content.as_deref(), Some("let me look"));
    }

    #[test]
    fn final_answer_turn_has_text_usage_and_no_calls() {
        let body = response(
            json!({"role": "assistant", "content": "It is sunny.", "tool_calls": []}),
            "stop",
        );
        let turn = parse_response(&body, None).expect("valid response");
        assert_eq!(turn.content.as_deref(), Some("It is sunny."));
        assert!(turn.calls.is_empty());
        assert_eq!(turn.finish_reason.as_deref(), Some("stop"));
        let usage = turn.usage.expect("usage present");
        assert_eq!((usage.prompt_tokens, usage.completion_tokens), (10, 5));
    }

    #[test]
    fn content_parts_are_joined() {
        let body = response(
            json!({"role": "assistant",
                   "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
            "stop",
        );
        let turn = parse_response(&body, None).expect("valid response");
        assert_eq!(turn.content.as_deref(), Some("ab"));
    }

    #[test]
    fn lone_tool_call_object_is_read_as_one_call() {
        let body = response(
            json!({"role": "assistant",
                   "tool_calls": {"id": "call_1", "function": {"name": "f", "arguments": "{}"}}}),
            "tool_calls",
        );
        let turn = parse_response(&body, None).expect("valid response");
        assert_eq!(turn.calls.len(), 1);
        assert_eq!(turn.calls[0].arguments, CallArguments::Valid(Map::new()));
    }

    #[test]
    fn bodies_without_a_message_are_bad_responses() {
        let cases = [
            (
                json!([]),
                "provider response is not valid: expected a JSON object, got an array",
            ),
            (
                json!({}),
                "provider response is not valid: response has no `choices`",
            ),
            (
                json!({"choices": []}),
                "provider response is not valid: response has no `choices`",
            ),
            (
                json!({"error": {"message": "model `x` not found"}}),
                "provider response is not valid: response has no `choices`; provider error: model `x` not found",
            ),
            (
                json!({"choices": [{"message": "hi"}]}),
                "provider response is not valid: `choices[0].message` is missing or not an object",
            ),
        ];
        for (body, expected) in cases {
            let error = parse_response(&body, None).expect_err("must fail");
            assert_eq!(error.to_string(), expected);
        }
    }

    #[test]
    fn odd_shapes_never_panic() {
        let odd = [
            json!({"choices": [{"message": {"tool_calls": [null, 1, "x", [], {}]}}]}),
            json!({"choices": [{"message": {"tool_calls": [{"function": {"name": 5}}]}}]}),
            json!({"choices": [{"message": {"function_call": "f"}, "finish_reason": 3}]}),
            json!({"choices": [{"message": {}}], "usage": {"prompt_tokens": -1}}),
            json!({"choices": [{"message": {"tool_calls": [{"type": "custom", "custom": 1}]}}]}),
        ];
        for body in odd {
            let turn = parse_response(&body, Some(0)).expect("a message is present");
            for call in turn.calls {
                assert!(
                    matches!(call.arguments, CallArguments::Invalid { .. }),
                    "{call:?}"
                );
            }
        }
    }

    /// A legacy `function_call` beside `tool_calls` that names another call is
    /// noted on the call used; one that agrees (by value) is not.
    #[test]
    fn function_call_disagreeing_with_tool_calls_is_noted() {
        let body = |function_call: Value| {
            json!({"choices": [{"finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null,
                "tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "get_weather", "arguments": "{\"city\": \"NYC\", \"days\": 3}"}}],
                "function_call": function_call}}]})
        };
        let agrees =
            json!({"name": "get_weather", "arguments": "{\"days\": 3.0, \"city\": \"NYC\"}"});
        let turn = parse_response(&body(agrees), None).expect("parses");
        assert_eq!(turn.calls[0].notes, vec![]);
        let disagrees = json!({"name": "get_time", "arguments": "{}"});
        let turn = parse_response(&body(disagrees), None).expect("parses");
        assert_eq!(turn.calls[0].name, "get_weather");
        assert_eq!(turn.calls[0].notes, vec![CallNote::FunctionCallDisagrees]);
        assert!(!turn.is_legacy_function_call);
        // llama-cpp-python's placeholder beside its tool calls.
        let placeholder = json!({"name": "", "arguments": "{\"q\":\""});
        let turn = parse_response(&body(placeholder), None).expect("parses");
        assert_eq!(turn.calls[0].name, "get_weather");
        assert_eq!(turn.calls[0].notes, vec![]);
    }
}
