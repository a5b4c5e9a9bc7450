//! Prompted tool calling: the tools go into the system prompt as text and the calls are read
//! back from the model's reply, for servers whose chat format turns native function calls into
//! text or drops them (llama-cpp-python's `chatml-function-calling` with small models).
//!
//! The format is the Hermes one that Qwen, Hermes and Llama models are trained on, and that
//! Ollama and vLLM's `hermes` parser read: the tools as JSON lines inside `<tools></tools>`, each
//! call as `{"name": ..., "arguments": {...}}` inside `<tool_call></tool_call>`, and each result
//! sent back in a user turn inside `<tool_response></tool_response>`. Small models often skip
//! the tags, so a fenced JSON block or a reply that is nothing but JSON naming a tool counts too.
//! Pure functions, no I/O; they never panic, whatever the model writes.

use serde_json::{Map, Value, json};

use crate::agent::InvalidCallKind;
use crate::agent::call::{CallArguments, CallNote, ParsedCall};

const CALL_OPEN: &str = "<tool_call>";
const CALL_CLOSE: &str = "</tool_call>";

/// The system prompt of a prompted run: the user's own system prompt (if any), then the tools
/// (MCP definitions: `name`, `description`, `inputSchema`) as one OpenAI-style JSON object per
/// line inside `<tools></tools>`, then how to write a call.
pub fn system_prompt(tools: &[Value], own: Option<&str>) -> String {
    let mut prompt = String::new();
    if let Some(own) = own.filter(|own| !own.trim().is_empty()) {
        prompt.push_str(own.trim_end());
        prompt.push_str("\n\n");
    }
    prompt.push_str(
        "# Tools\n\nYou can call functions to carry out the user's request. \
         Their signatures are inside <tools></tools>:\n<tools>\n",
    );
    for tool in tools {
        prompt.push_str(&super::openai_tool(tool).to_string());
        prompt.push('\n');
    }
    prompt.push_str(
        "</tools>\n\nTo call a function, write a JSON object with its name and arguments \
         inside <tool_call></tool_call> tags, one block per call:\n<tool_call>\n\
         {\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>\n\
         Each result comes back inside <tool_response></tool_response>. When you need no more \
         calls, answer the user in plain text.",
    );
    prompt
}

/// The user turn that carries the results of one reply's calls back to the model, in call order.
pub fn tool_responses(contents: &[String]) -> Value {
    let text = contents
        .iter()
        .map(|content| format!("<tool_response>\n{content}\n</tool_response>"))
        .collect::<Vec<_>>()
        .join("\n");
    json!({"role": "user", "content": text})
}

/// What a prompted reply holds.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptedReply {
    /// The calls, in the order written; empty for a plain answer.
    pub calls: Vec<ParsedCall>,
    /// The reply's text outside its calls, trimmed; `None` when nothing is left.
    pub text: Option<String>,
}

/// Reads the calls of a prompted `reply`. `cut_off` says generation stopped at the output limit,
/// which makes an unclosed last `<tool_call>` `truncated` rather than unparseable.
///
/// In order of preference: `<tool_call>` blocks (a JSON object, an array of them, or several
/// in a row inside each; a block without its closing tag runs to the end of the reply); else
/// fenced code blocks whose JSON is call objects (a `name` string with `arguments` or
/// `parameters`); else a reply that is nothing but such JSON, several objects in a row
/// included. A tagged block whose JSON cannot be read, and untagged text that is a broken call
/// object (cut off, say), is an invalid call (its name, when one can be seen, is kept);
/// untagged JSON that is not a call object is left as text.
pub fn parse_reply(reply: &str, cut_off: bool) -> PromptedReply {
    if reply.contains(CALL_OPEN) {
        return tagged(reply, cut_off);
    }
    let (calls, text) = fenced(reply);
    if !calls.is_empty() {
        return PromptedReply {
            calls,
            text: non_empty(&text),
        };
    }
    match call_objects(reply.trim(), cut_off) {
        Some(calls) => PromptedReply { calls, text: None },
        None => PromptedReply {
            calls: Vec::new(),
            text: non_empty(reply),
        },
    }
}

/// Whether a final answer is a tool call written as text: llama-cpp-python's
/// `functions.NAME:` (its function-calling chat format generating the call as a message), a
/// `<tool_call>` block, or call JSON (fenced or the whole answer). A serving problem, not the
/// model's choice, when a native run ends on one.
pub fn looks_like_a_call(answer: &str) -> bool {
    let answer = answer.trim();
    let functions_prefix = answer.strip_prefix("functions.").is_some_and(|rest| {
        let name_end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
            .unwrap_or(rest.len());
        name_end > 0 && (rest[name_end..].starts_with(':') || name_end == rest.len())
    });
    functions_prefix || !parse_reply(answer, false).calls.is_empty()
}

/// The `<tool_call>` blocks of `reply`, and the text around them.
fn tagged(reply: &str, cut_off: bool) -> PromptedReply {
    let mut calls = Vec::new();
    let mut text = String::new();
    let mut rest = reply;
    while let Some(start) = rest.find(CALL_OPEN) {
        text.push_str(&rest[..start]);
        let after = &rest[start + CALL_OPEN.len()..];
        let (body, closed, next) = match after.find(CALL_CLOSE) {
            Some(end) => (&after[..end], true, &after[end + CALL_CLOSE.len()..]),
            None => (after, false, ""),
        };
        let body = strip_fence(body.trim());
        match json_values(body) {
            (values, _) if values.is_empty() => {
                calls.push(unreadable(body, !closed && cut_off, !closed));
            }
            (values, _) => calls.extend(values.iter().flat_map(|value| calls_of(value, true))),
        }
        rest = next;
    }
    text.push_str(rest);
    PromptedReply {
        calls,
        text: non_empty(&text),
    }
}

/// The JSON values at the start of `body`, one after another, separated by white space or
/// commas (`{..}\n{..}` or `{..}, {..}` in one block), and the text after the last one read
/// (trimmed; empty when all of it was read). No values when not even the first one can be read.
fn json_values(body: &str) -> (Vec<Value>, &str) {
    let mut values = Vec::new();
    let mut rest = body;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == ',');
        if rest.is_empty() {
            break;
        }
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value)) => {
                values.push(value);
                rest = &rest[stream.byte_offset()..];
            }
            _ => break,
        }
    }
    (values, rest.trim())
}

/// Whether text that is not (or not only) valid JSON is a call object all the same: it opens
/// an object, names a `"name"` and has `"arguments"` or `"parameters"` (a call cut off, or
/// with a stray quote), so it is read as an invalid call rather than as an answer.
fn broken_call_json(text: &str) -> bool {
    text.starts_with('{')
        && visible_name(text).is_some()
        && (text.contains("\"arguments\"") || text.contains("\"parameters\""))
}

/// The calls in the fenced code blocks of `reply` (a block whose JSON is not a call object
/// stays text), and the text without those blocks.
fn fenced(reply: &str) -> (Vec<ParsedCall>, String) {
    let mut calls = Vec::new();
    let mut text = String::new();
    let mut rest = reply;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let Some(end) = after.find("```") else {
            break;
        };
        let block = &after[..end];
        // The info string (`json`, `tool_call`, ...) runs to the end of the first line.
        let body = block.split_once('\n').map_or(block, |(_, body)| body);
        match call_objects(body.trim(), false) {
            Some(found) => {
                text.push_str(&rest[..start]);
                calls.extend(found);
            }
            None => text.push_str(&rest[..start + 3 + end + 3]),
        }
        rest = &after[end + 3..];
    }
    text.push_str(rest);
    (calls, text)
}

/// `text` as calls when it is call JSON: call objects (a `name` string with `arguments` or
/// `parameters`) or non-empty arrays of them, one after another (`{..}, {..}` without the
/// brackets too). What follows them that is a broken call object ([`broken_call_json`]; cut at
/// the output limit when `cut_off`) is one more, invalid call; text that starts as a broken call
/// object is one invalid call. `None` for anything else (a record in an answer stays text).
fn call_objects(text: &str, cut_off: bool) -> Option<Vec<ParsedCall>> {
    if !(text.starts_with('{') || text.starts_with('[')) {
        return None;
    }
    let (values, rest) = json_values(text);
    if values.is_empty() {
        return broken_call_json(text).then(|| vec![unreadable(text, cut_off, true)]);
    }
    let is_call = |value: &Value| {
        value.get("name").is_some_and(Value::is_string)
            && (value.get("arguments").is_some() || value.get("parameters").is_some())
    };
    let all_calls = values.iter().all(|value| match value {
        Value::Array(items) => !items.is_empty() && items.iter().all(is_call),
        object => is_call(object),
    });
    if !all_calls {
        return None;
    }
    let mut calls: Vec<ParsedCall> = values
        .iter()
        .flat_map(|value| calls_of(value, false))
        .collect();
    if broken_call_json(rest) {
        calls.push(unreadable(rest, cut_off, true));
    }
    Some(calls)
}

/// The calls of one parsed JSON value: an object is one call, an array one call per item.
fn calls_of(value: &Value, tagged: bool) -> Vec<ParsedCall> {
    match value {
        Value::Array(items) if tagged && items.is_empty() => vec![missing_function(value)],
        Value::Array(items) => items.iter().map(call_of).collect(),
        other => vec![call_of(other)],
    }
}

/// One call object: `name`, and `arguments` (or `parameters`) as an object or as JSON text of
/// one; absent arguments are `{}` (noted).
fn call_of(value: &Value) -> ParsedCall {
    let Some(name) = value.get("name").and_then(Value::as_str) else {
        return missing_function(value);
    };
    let mut notes = Vec::new();
    let arguments = match value.get("arguments").or_else(|| value.get("parameters")) {
        None | Some(Value::Null) => {
            notes.push(CallNote::MissingArguments);
            CallArguments::Valid(Map::new())
        }
        Some(Value::Object(arguments)) => CallArguments::Valid(arguments.clone()),
        Some(Value::String(raw)) => match serde_json::from_str::<Value>(raw) {
            Ok(Value::Object(arguments)) => CallArguments::Valid(arguments),
            Ok(_) => CallArguments::Invalid {
                kind: InvalidCallKind::ArgumentsNotObject,
                raw: raw.clone(),
            },
            Err(_) if raw.trim().is_empty() => {
                notes.push(CallNote::EmptyArgumentsString);
                CallArguments::Valid(Map::new())
            }
            Err(_) => CallArguments::Invalid {
                kind: InvalidCallKind::UnparseableArguments,
                raw: raw.clone(),
            },
        },
        Some(other) => CallArguments::Invalid {
            kind: InvalidCallKind::ArgumentsNotObject,
            raw: other.to_string(),
        },
    };
    ParsedCall {
        id: None,
        name: name.to_owned(),
        arguments,
        notes,
    }
}

/// A call block without a usable `name`.
fn missing_function(value: &Value) -> ParsedCall {
    ParsedCall {
        id: None,
        name: String::new(),
        arguments: CallArguments::Invalid {
            kind: InvalidCallKind::MissingFunction,
            raw: value.to_string(),
        },
        notes: Vec::new(),
    }
}

/// A `<tool_call>` block whose JSON cannot be read: `truncated` when generation stopped inside
/// it, otherwise unparseable (possibly truncated when it was never closed). The name is kept when
/// the text shows one (`"name": "..."`).
fn unreadable(body: &str, truncated: bool, unclosed: bool) -> ParsedCall {
    let kind = if truncated {
        InvalidCallKind::Truncated
    } else {
        InvalidCallKind::UnparseableArguments
    };
    let notes = if unclosed && !truncated {
        vec![CallNote::PossiblyTruncated]
    } else {
        Vec::new()
    };
    ParsedCall {
        id: None,
        name: visible_name(body).unwrap_or_default(),
        arguments: CallArguments::Invalid {
            kind,
            raw: body.to_owned(),
        },
        notes,
    }
}

/// The string after the first `"name"` key of unparseable JSON text, if it has one.
fn visible_name(body: &str) -> Option<String> {
    let after = &body[body.find("\"name\"")? + "\"name\"".len()..];
    let after = after.trim_start().strip_prefix(':')?.trim_start();
    let after = after.strip_prefix('"')?;
    let name = &after[..after.find('"')?];
    (!name.is_empty()).then(|| name.to_owned())
}

/// `body` without a surrounding code fence (```` ```json ... ``` ````), if it has one.
fn strip_fence(body: &str) -> &str {
    let Some(inner) = body.strip_prefix("```") else {
        return body;
    };
    let inner = inner.split_once('\n').map_or("", |(_, rest)| rest);
    inner.trim_end().strip_suffix("```").unwrap_or(inner).trim()
}

fn non_empty(text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

#[cfg(test)]
mod tests {
    //! Prompted tool calling: calls in tags, fences or bare JSON are read; tools go in the prompt.

    use super::*;

    fn valid(name: &str, arguments: Value) -> ParsedCall {
        ParsedCall {
            id: None,
            name: name.to_owned(),
            arguments: CallArguments::Valid(arguments.as_object().cloned().expect("an object")),
            notes: Vec::new(),
        }
    }

    #[test]
    fn tagged_calls_are_read_in_order_with_the_text_around_them() {
        let reply = "Let me look.\n<tool_call>\n{\"name\": \"crm_get_contact\", \"arguments\": {\"contact_id\": \"C-001\"}}\n</tool_call>\n<tool_call>{\"name\": \"erp_get_order\", \"arguments\": {\"order_id\": \"O-1\"}}</tool_call>";
        let parsed = parse_reply(reply, false);
        assert_eq!(
            parsed.calls,
            vec![
                valid("crm_get_contact", json!({"contact_id": "C-001"})),
                valid("erp_get_order", json!({"order_id": "O-1"})),
            ]
        );
        assert_eq!(parsed.text.as_deref(), Some("Let me look."));
    }

    #[test]
    fn a_list_of_calls_inside_one_tag_is_each_call() {
        // SmolLM2's own format: a JSON array inside the tags.
        let reply = "<tool_call>[{\"name\": \"a\", \"arguments\": {\"x\": 1}}, {\"name\": \"b\", \"arguments\": {}}]</tool_call>";
        let parsed = parse_reply(reply, false);
        assert_eq!(
            parsed.calls,
            vec![valid("a", json!({"x": 1})), valid("b", json!({}))]
        );
        assert_eq!(parsed.text, None);
    }

    #[test]
    fn fenced_or_bare_call_json_counts_and_other_json_stays_an_answer() {
        let fenced = "I will call it:\n```json\n{\"name\": \"crm_get_contact\", \"arguments\": {\"contact_id\": \"C-001\"}}\n```";
        let parsed = parse_reply(fenced, false);
        assert_eq!(
            parsed.calls,
            vec![valid("crm_get_contact", json!({"contact_id": "C-001"}))]
        );
        assert_eq!(parsed.text.as_deref(), Some("I will call it:"));

        let bare = " {\"name\": \"erp_get_order\", \"parameters\": {\"order_id\": \"O-7\"}} ";
        assert_eq!(
            parse_reply(bare, false).calls,
            vec![valid("erp_get_order", json!({"order_id": "O-7"}))]
        );

        // A record in the answer is not a call: no `arguments`.
        for answer in [
            "{\"name\": \"Ana Lopez\", \"email\": \"ana@acme.com\"}",
            "Her email is ana@acme.com.\n```json\n{\"name\": \"Ana\"}\n```",
        ] {
            let parsed = parse_reply(answer, false);
            assert_eq!(parsed.calls, vec![], "{answer}");
            assert_eq!(parsed.text.as_deref(), Some(answer.trim()), "{answer}");
        }
    }

    #[test]
    fn bare_calls_without_brackets_and_a_cut_off_call_are_all_read() {
        // Qwen2.5-Coder-0.5B on the smoke set: two call objects, the second cut at the limit.
        let reply = "{\"name\": \"data_list_tables\", \"arguments\": {}}, {\"name\": \"data_query_sql\", \"arguments\": {\"query\": \"SELECT id";
        let parsed = parse_reply(reply, true);
        assert_eq!(parsed.calls.len(), 2, "{parsed:?}");
        assert_eq!(parsed.calls[0], valid("data_list_tables", json!({})));
        assert_eq!(parsed.calls[1].name, "data_query_sql");
        assert!(matches!(
            parsed.calls[1].arguments,
            CallArguments::Invalid {
                kind: InvalidCallKind::Truncated,
                ..
            }
        ));

        // A single call object cut off (an invented tool): an invalid call, not an answer.
        let cut = parse_reply(
            "{\"name\": \"export_overdue_invoices\", \"arguments\": {\"to\": \"ada@analytical.example\"}, \"tool_response\": \"Exported",
            true,
        );
        assert_eq!(cut.calls.len(), 1);
        assert_eq!(cut.calls[0].name, "export_overdue_invoices");
        assert_eq!(cut.text, None);

        // Broken JSON that is not a call shape stays the answer.
        let record = parse_reply("{\"name\": \"Ana\", \"email\": \"ana@", true);
        assert_eq!(record.calls, vec![]);
    }

    #[test]
    fn arguments_as_json_text_or_absent_are_read_and_noted() {
        let parsed = parse_reply(
            "<tool_call>{\"name\": \"a\", \"arguments\": \"{\\\"x\\\": 2}\"}</tool_call><tool_call>{\"name\": \"b\"}</tool_call>",
            false,
        );
        assert_eq!(parsed.calls[0], valid("a", json!({"x": 2})));
        assert_eq!(parsed.calls[1].arguments, CallArguments::Valid(Map::new()));
        assert_eq!(parsed.calls[1].notes, vec![CallNote::MissingArguments]);
    }

    #[test]
    fn an_unreadable_block_is_an_invalid_call_that_keeps_its_name() {
        let parsed = parse_reply(
            "<tool_call>{\"name\": \"crm_get_contact\", \"arguments\": {\"contact_id\": C-001}}</tool_call>",
            false,
        );
        assert_eq!(parsed.calls.len(), 1);
        assert_eq!(parsed.calls[0].name, "crm_get_contact");
        assert!(matches!(
            parsed.calls[0].arguments,
            CallArguments::Invalid {
                kind: InvalidCallKind::UnparseableArguments,
                ..
            }
        ));

        // Cut at the output limit inside the block: truncated.
        let cut = parse_reply("<tool_call>{\"name\": \"a\", \"arguments\": {\"x\": ", true);
        assert!(matches!(
            cut.calls[0].arguments,
            CallArguments::Invalid {
                kind: InvalidCallKind::Truncated,
                ..
            }
        ));
        // Unclosed without the limit: unparseable, possibly truncated.
        let unclosed = parse_reply(
            "<tool_call>{\"name\": \"a\", \"arguments\": {\"x\": ",
            false,
        );
        assert_eq!(unclosed.calls[0].notes, vec![CallNote::PossiblyTruncated]);

        // Two objects in one block, the second no call (SmolLM2-135M): both are read.
        let two = parse_reply(
            "Sure:\n<tool_call>\n{\"name\": \"a\", \"arguments\": {\n \"type\": \"x\"\n}}, {\"id\": 2345}\n</tool_call>",
            false,
        );
        assert_eq!(two.calls[0], valid("a", json!({"type": "x"})));
        assert_eq!(two.calls[1].name, "");
        assert_eq!(two.text.as_deref(), Some("Sure:"));

        // A block with no name at all.
        let nameless = parse_reply("<tool_call>{\"arguments\": {}}</tool_call>", false);
        assert_eq!(nameless.calls[0].name, "");
        assert!(matches!(
            nameless.calls[0].arguments,
            CallArguments::Invalid {
                kind: InvalidCallKind::MissingFunction,
                ..
            }
        ));
    }

    #[test]
    fn an_answer_that_is_a_call_written_as_text_is_told_apart() {
        for call in [
            "functions.crm_get_contact:",
            "functions.crm_get_contact: {\"contact_id\": \"C-001\"}",
            "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>",
            "{\"name\": \"crm_get_contact\", \"arguments\": {\"contact_id\": \"C-001\"}}",
            "```json\n{\"name\": \"a\", \"parameters\": {}}\n```",
        ] {
            assert!(looks_like_a_call(call), "{call}");
        }
        for answer in [
            "Ana's email is ana@acme.com.",
            "functions.are useful: they do things",
            "The functions.py file: done",
            "{\"name\": \"Ana\"}",
            "",
        ] {
            assert!(!looks_like_a_call(answer), "{answer}");
        }
    }

    #[test]
    fn a_plain_answer_has_no_calls() {
        let parsed = parse_reply("Ana's email is ana@acme.com.", false);
        assert_eq!(parsed.calls, vec![]);
        assert_eq!(parsed.text.as_deref(), Some("Ana's email is ana@acme.com."));
        assert_eq!(parse_reply("  ", false).text, None);
    }

    #[test]
    fn the_system_prompt_lists_every_tool_after_the_users_own_prompt() {
        let tools = vec![
            json!({"name": "a", "description": "Does a.", "inputSchema": {"type": "object"}}),
            json!({"name": "b"}),
        ];
        let prompt = system_prompt(&tools, Some("Be brief."));
        assert!(prompt.starts_with("Be brief.\n\n# Tools\n"), "{prompt}");
        let listed: Vec<Value> = prompt
            .split("<tools>\n")
            .nth(1)
            .and_then(|rest| rest.split("</tools>").next())
            .expect("a tools block")
            .lines()
            .map(|line| serde_json::from_str(line).expect("one JSON object per line"))
            .collect();
        assert_eq!(
            listed,
            vec![
                json!({"type": "function", "function": {"name": "a", "description": "Does a.", "parameters": {"type": "object"}}}),
                json!({"type": "function", "function": {"name": "b", "parameters": {"type": "object", "properties": {}}}}),
            ]
        );
        assert!(prompt.contains("<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>"));
        assert!(!system_prompt(&tools, None).starts_with('\n'));
    }

    #[test]
    fn results_go_back_in_one_user_turn_of_tool_responses() {
        assert_eq!(
            tool_responses(&["{\"id\":1}".to_owned(), "Error: no".to_owned()]),
            json!({"role": "user", "content": "<tool_response>\n{\"id\":1}\n</tool_response>\n<tool_response>\nError: no\n</tool_response>"})
        );
    }
}
