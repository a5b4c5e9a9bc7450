//! `toolgate mock from-cassette`: a mock catalog written from recorded cassettes, so that a
//! suite recorded once against real servers can go on as declarative mocks (and be edited).
//!
//! The catalog serves the recorded tool definitions inline. Each distinct call (tool and
//! canonical arguments) becomes one rule matching those arguments, answering what was
//! recorded: `return`, `error` or `rpc_error`, or a `sequence` when the same call got several
//! answers within a run. Rules with more argument keys come first, because `match` is partial
//! (extra keys are ignored): the most specific call wins. A call never recorded stays
//! unmatched (a failing check), never an invented answer. Mocks have no state here: a call
//! whose answers differ between runs keeps the first run's answers, with a note.

use std::collections::BTreeMap;

use anyhow::{Result, bail};
use serde_json::{Map, Value, json};

use crate::harness::cassette::{Cassette, RecordedAnswer};

/// The catalog text (YAML) for `cassettes`, and notes on what was left out or chosen.
///
/// Errors: no cassettes, or cassettes recorded against different tools.
pub fn from_cassettes(cassettes: &[Cassette]) -> Result<(String, Vec<String>)> {
    let Some(first) = cassettes.first() else {
        bail!("no cassettes to read");
    };
    let mut tools: Vec<Value> = Vec::new();
    for server in &first.header.servers {
        tools.extend(server.tools.iter().cloned());
    }
    check_same_tools(first, &cassettes[1..])?;
    let mut notes = Vec::new();
    // tool -> the distinct calls, each with the answers of the first run that made it
    let mut calls: BTreeMap<String, Vec<Call>> = BTreeMap::new();
    for cassette in cassettes {
        add_run(cassette, &mut calls, &mut notes);
    }
    let mut rules = Map::new();
    for (tool, mut known) in calls {
        known.sort_by_key(|call| {
            std::cmp::Reverse(leaf_count(&Value::Object(call.arguments.clone())))
        });
        let tool_rules: Vec<Value> = known.into_iter().map(rule).collect();
        rules.insert(tool, Value::Array(tool_rules));
    }
    let catalog = json!({
        "schema_version": 1,
        "tools": tools,
        "rules": rules,
    });
    let text = serde_saphyr::to_string(&catalog)
        .map_err(|error| anyhow::anyhow!("failed to write the catalog as YAML: {error}"))?;
    Ok((text, notes))
}

/// `Err` unless each of `others` was recorded against the same servers and tools as `first`.
fn check_same_tools(first: &Cassette, others: &[Cassette]) -> Result<()> {
    for cassette in others {
        let same = cassette.header.servers.len() == first.header.servers.len()
            && cassette
                .header
                .servers
                .iter()
                .zip(&first.header.servers)
                .all(|(a, b)| a.name == b.name && a.tools_sha256 == b.tools_sha256);
        if !same {
            bail!(
                "cassettes `{}` and `{}` were recorded against different tools",
                first.path.display(),
                cassette.path.display()
            );
        }
    }
    Ok(())
}

/// Adds the calls of one recorded run to `calls`: a new call keeps this run's answers, a known
/// one keeps its first run's (noted when they differ). Interactions holding `{{` are left out,
/// with a note.
fn add_run(cassette: &Cassette, calls: &mut BTreeMap<String, Vec<Call>>, notes: &mut Vec<String>) {
    let mut this_run: BTreeMap<(String, String), Vec<RecordedAnswer>> = BTreeMap::new();
    for (line, interaction) in &cassette.interactions {
        let where_ = format!("`{}` line {line}", cassette.path.display());
        let arguments = Value::Object(interaction.arguments.clone());
        if holds_template(&arguments) || holds_template(&interaction.answer.as_value()) {
            notes.push(format!(
                "left out {where_} (`{}`): it holds `{{{{`, which a mock catalog reads as a template",
                interaction.tool
            ));
            continue;
        }
        let key = crate::json::canonical(&arguments);
        this_run
            .entry((interaction.tool.clone(), key.clone()))
            .or_default()
            .push(interaction.answer.clone());
        let known = calls.entry(interaction.tool.clone()).or_default();
        if !known.iter().any(|call| call.key == key) {
            known.push(Call {
                key,
                arguments: interaction.arguments.clone(),
                answers: Vec::new(),
                from: cassette.path.display().to_string(),
            });
        }
    }
    for ((tool, key), answers) in this_run {
        let call = calls
            .get_mut(&tool)
            .and_then(|known| known.iter_mut().find(|call| call.key == key))
            .expect("every call of the run was registered above");
        if call.answers.is_empty() {
            call.answers = answers;
        } else if call.answers != answers {
            notes.push(format!(
                "`{tool}` with {key} answered differently in `{}` than in `{}`; the catalog keeps the answers of `{}` (mocks without tables cannot tell the runs apart)",
                cassette.path.display(),
                call.from,
                call.from
            ));
        }
    }
}

/// One distinct recorded call of a tool.
struct Call {
    key: String,
    arguments: Map<String, Value>,
    answers: Vec<RecordedAnswer>,
    /// The cassette whose answers the rule keeps.
    from: String,
}

/// The rule answering `call` as recorded.
fn rule(call: Call) -> Value {
    let mut rule = Map::new();
    if !call.arguments.is_empty() {
        rule.insert("match".into(), Value::Object(call.arguments));
    }
    let mut replies: Vec<Map<String, Value>> = call.answers.iter().map(reply).collect();
    if replies.len() == 1 || replies.iter().all(|r| r == &replies[0]) {
        rule.extend(replies.swap_remove(0));
    } else {
        rule.insert(
            "sequence".into(),
            Value::Array(replies.into_iter().map(Value::Object).collect()),
        );
    }
    Value::Object(rule)
}

fn reply(answer: &RecordedAnswer) -> Map<String, Value> {
    let (key, value) = match answer {
        RecordedAnswer::Result(value) => ("return", value.clone()),
        RecordedAnswer::Text(text) => ("return", Value::String(text.clone())),
        RecordedAnswer::ToolError(text) => ("error", Value::String(text.clone())),
        RecordedAnswer::ProtocolError(text) => ("rpc_error", Value::String(text.clone())),
    };
    Map::from_iter([(key.to_owned(), value)])
}

/// Whether any string in `value` holds `{{`.
fn holds_template(value: &Value) -> bool {
    match value {
        Value::String(text) => text.contains("{{"),
        Value::Array(items) => items.iter().any(holds_template),
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| k.contains("{{") || holds_template(v)),
        _ => false,
    }
}

/// How many scalar leaves `value` has: the specificity of a `match`.
fn leaf_count(value: &Value) -> usize {
    match value {
        Value::Array(items) => items.iter().map(leaf_count).sum(),
        Value::Object(map) => map.values().map(leaf_count).sum(),
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    //! Mocks from cassettes: specific rules first, repeats as sequences, the first run's answer.

    use std::path::Path;

    use super::*;

    fn cassette(name: &str, calls: &[(Value, Value)]) -> Cassette {
        let tools = r#"[{"name":"get","inputSchema":{"type":"object","properties":{"id":{"type":"string"},"v":{"type":"boolean"}}}}]"#;
        let header = json!({"cassette_version": 1, "scenario": name, "repeat": 0, "toolgate": "0.1.0",
            "servers": [{"name": "api", "tools_sha256": "x", "tools": serde_json::from_str::<Value>(tools).expect("JSON")}]});
        let mut text = header.to_string();
        for (seq, (arguments, answer)) in calls.iter().enumerate() {
            text.push('\n');
            text.push_str(&json!({"seq": seq + 1, "server": "api", "tool": "get", "arguments": arguments, "answer": answer, "latency_us": 1}).to_string());
        }
        Cassette::parse(&text, Path::new(&format!("{name}.r0.jsonl"))).expect("parses")
    }

    #[test]
    fn rules_put_the_most_specific_call_first_and_repeat_answers_as_a_sequence() {
        let runs = [cassette(
            "A",
            &[
                (json!({}), json!({"result": {"all": true}})),
                (json!({"id": "1"}), json!({"tool_error": "busy"})),
                (
                    json!({"id": "1", "v": true}),
                    json!({"protocol_error": "down"}),
                ),
                (json!({"id": "1"}), json!({"result": {"id": "1"}})),
            ],
        )];
        let (text, notes) = from_cassettes(&runs).expect("writes");
        assert_eq!(notes, Vec::<String>::new());
        let catalog: Value = serde_saphyr::from_str(&text).expect("YAML");
        assert_eq!(
            catalog["rules"]["get"],
            json!([
                {"match": {"id": "1", "v": true}, "rpc_error": "down"},
                {"match": {"id": "1"}, "sequence": [{"error": "busy"}, {"return": {"id": "1"}}]},
                {"return": {"all": true}},
            ])
        );
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("mocks.yaml");
        std::fs::write(&path, &text).expect("writes");
        let loaded = crate::mock::load(&path).expect("the written catalog loads");
        assert_eq!(loaded.rules["get"].len(), 3);
    }

    #[test]
    fn answers_that_differ_between_runs_keep_the_first_and_templates_are_left_out() {
        let runs = [
            cassette("A", &[(json!({"id": "1"}), json!({"result": 1}))]),
            cassette(
                "B",
                &[
                    (json!({"id": "1"}), json!({"result": 2})),
                    (json!({"id": "{{x}}"}), json!({"result": 3})),
                ],
            ),
        ];
        let (text, notes) = from_cassettes(&runs).expect("writes");
        assert_eq!(
            notes,
            [
                "left out `B.r0.jsonl` line 3 (`get`): it holds `{{`, which a mock catalog reads as a template",
                "`get` with {\"id\":\"1\"} answered differently in `B.r0.jsonl` than in `A.r0.jsonl`; the catalog keeps the answers of `A.r0.jsonl` (mocks without tables cannot tell the runs apart)",
            ]
        );
        let catalog: Value = serde_saphyr::from_str(&text).expect("YAML");
        assert_eq!(
            catalog["rules"]["get"],
            json!([{"match": {"id": "1"}, "return": 1}])
        );
    }
}
