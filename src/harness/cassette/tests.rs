//! Cassettes: answers replay in order; misses and mismatched cassettes fail; secrets are scrubbed.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::*;
use crate::harness::Backend as _;
use crate::json::{DoubleEncoded, NumberMode};
use crate::redact::Redactor;

const TOOLS: &str = r#"[{"name":"get","inputSchema":{"type":"object","properties":{"id":{"type":"number"},"q":{"type":"string"}}}}]"#;

fn header(scenario: &str, tools: &str) -> String {
    let tools: Value = serde_json::from_str(tools).expect("JSON");
    let entry = ServerEntry::new(
        "api",
        Some("api 1.0".into()),
        None,
        tools.as_array().expect("an array").clone(),
    );
    let header = Header {
        cassette_version: CASSETTE_VERSION,
        scenario: scenario.into(),
        repeat: 0,
        toolgate: "0.1.0".into(),
        servers: vec![entry],
    };
    serde_json::to_string(&header).expect("JSON")
}

fn interaction(seq: u64, arguments: Value, answer: Value) -> String {
    json!({"seq": seq, "server": "api", "tool": "get", "arguments": arguments, "answer": answer, "latency_us": 10})
        .to_string()
}

fn args(value: Value) -> Map<String, Value> {
    value.as_object().expect("an object").clone()
}

fn replays(dir: &Path) -> ReplayBackends {
    ReplayBackends::load(
        dir,
        Scrubber::default(),
        NumberMode::default(),
        DoubleEncoded::default(),
    )
    .expect("loads")
}

#[test]
fn identical_calls_get_the_recorded_answers_in_order_then_fail_as_not_recorded() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let text = [
        header("S-1", TOOLS),
        interaction(1, json!({"id": 1, "q": "a"}), json!({"result": {"n": 1}})),
        interaction(2, json!({"id": 1, "q": "a"}), json!({"tool_error": "busy"})),
        interaction(3, json!({"id": 2}), json!({"text": "plain"})),
    ]
    .join("\n");
    std::fs::write(dir.path().join("S-1.r0.jsonl"), text).expect("writes");
    let backends = replays(dir.path());
    let mut run = backends.replay("S-1", 0).expect("recorded");
    // Key order and 1 vs 1.0 do not matter.
    assert_eq!(
        run.answer("get", &args(json!({"q": "a", "id": 1.0}))),
        Ok(ToolAnswer::Success(json!({"n": 1})))
    );
    assert_eq!(
        run.answer("get", &args(json!({"id": 1, "q": "a"}))),
        Ok(ToolAnswer::ToolError("busy".into()))
    );
    assert_eq!(
        run.answer("get", &args(json!({"id": 2}))),
        Ok(ToolAnswer::Text("plain".into()))
    );
    let path = dir.path().join("S-1.r0.jsonl");
    assert_eq!(
        run.answer("get", &args(json!({"id": 1, "q": "a"}))),
        Err(format!(
            "not_recorded: `get` with arguments {{\"id\":1,\"q\":\"a\"}} (its 3rd such call; the cassette holds 2) is not in cassette `{}`; the agent did something the recording did not (record again against the live servers with `toolgate gate --record DIR`)",
            path.display()
        ))
    );
    assert_eq!(
        backends.replay("S-1", 1).err(),
        Some(format!(
            "not_recorded: no cassette `{}` for run 1 of scenario `S-1`; record it with `toolgate gate --record {}`",
            dir.path().join("S-1.r1.jsonl").display(),
            dir.path().display()
        ))
    );
}

#[test]
fn a_miss_answers_a_tool_error_without_breaking_the_backend_and_voids_the_probes() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let text = [
        header("S-1", TOOLS),
        interaction(1, json!({"id": 1}), json!({"result": {"n": 1}})),
    ]
    .join("\n");
    std::fs::write(dir.path().join("S-1.r0.jsonl"), text).expect("writes");
    let backends = replays(dir.path());
    let mut run = backends.replay("S-1", 0).expect("recorded");
    let answer = futures::executor::block_on(run.call("get", &args(json!({"id": 3}))));
    assert!(
        matches!(&answer, ToolAnswer::NotRecorded(m) if m.starts_with("not_recorded: `get` with arguments {\"id\":3} is not in cassette")),
        "{answer:?}"
    );
    assert_eq!(run.failure(), None);
    // The recorded call still answers after the miss.
    let answer = futures::executor::block_on(run.call("get", &args(json!({"id": 1}))));
    assert_eq!(answer, ToolAnswer::Success(json!({"n": 1})));
    assert_eq!(
        run.probes_not_evidence(),
        Some(
            "the probes get the recorded answers whatever the agent did, and the agent's calls differ from the recording (the agent called `get` with arguments {\"id\":3}, which the recording did not)"
                .to_owned()
        )
    );
}

/// `get` writes (no `readOnlyHint`), `list` only reads.
const READ_AND_WRITE: &str = r#"[{"name":"get","inputSchema":{"type":"object"}},{"name":"list","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]"#;

#[test]
fn probes_are_evidence_only_when_every_recorded_write_was_made_again() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let list = json!({"seq": 1, "server": "api", "tool": "list", "arguments": {}, "answer": {"result": []}, "latency_us": 10}).to_string();
    let text = [
        header("S-1", READ_AND_WRITE),
        list,
        interaction(2, json!({"id": 1}), json!({"result": {"n": 1}})),
        interaction(3, json!({"id": 1}), json!({"result": {"n": 2}})),
    ]
    .join("\n");
    std::fs::write(dir.path().join("S-1.r0.jsonl"), text).expect("writes");
    let backends = replays(dir.path());
    let mut run = backends.replay("S-1", 0).expect("recorded");
    let write = args(json!({"id": 1}));
    futures::executor::block_on(run.call("get", &write));
    assert_eq!(
        run.difference(),
        Some("the recording called `get` with arguments {\"id\":1} (cassette line 4), which the agent did not".to_owned())
    );
    futures::executor::block_on(run.call("get", &write));
    // The read the agent left out is no difference: it changed nothing.
    assert_eq!(run.difference(), None);
    assert_eq!(run.probes_not_evidence(), None);
}

#[test]
fn cassettes_of_different_catalogs_cannot_replay_together() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    std::fs::write(dir.path().join("A.r0.jsonl"), header("A", TOOLS)).expect("writes");
    let other = TOOLS.replace("\"q\"", "\"query\"");
    std::fs::write(dir.path().join("B.r0.jsonl"), header("B", &other)).expect("writes");
    let error = ReplayBackends::load(
        dir.path(),
        Scrubber::default(),
        NumberMode::default(),
        DoubleEncoded::default(),
    )
    .err()
    .expect("refused")
    .to_string();
    assert_eq!(
        error,
        format!(
            "cassettes `{}` and `{}` were recorded against different catalogs (the tools of server `api`); record the directory again",
            dir.path().join("A.r0.jsonl").display(),
            dir.path().join("B.r0.jsonl").display()
        )
    );
}

#[test]
fn bad_cassette_lines_are_errors_naming_the_file_line_and_field() {
    let path = Path::new("c/S.r0.jsonl");
    let parse = |text: &str| {
        Cassette::parse(text, path)
            .expect_err("refused")
            .to_string()
    };
    let chain = |text: &str| format!("{:#}", Cassette::parse(text, path).expect_err("refused"));
    assert_eq!(
        parse(""),
        "`c/S.r0.jsonl`: an empty cassette (no header line)"
    );
    let head = header("S", TOOLS);
    assert_eq!(
        chain(&format!(
            "{head}\n{}",
            interaction(1, json!({}), json!({"reslt": 1}))
        )),
        "`c/S.r0.jsonl` line 2: answer: unknown variant `reslt`, expected one of `result`, `text`, `tool_error`, `protocol_error` at line 1 column 69"
    );
    let wrong_tool = interaction(1, json!({}), json!({"result": 1})).replace("\"get\"", "\"put\"");
    assert_eq!(
        parse(&format!("{head}\n\n{wrong_tool}")),
        "`c/S.r0.jsonl` line 3: server `api` lists no tool `put`"
    );
    let newer = head.replace("\"cassette_version\":1", "\"cassette_version\":9");
    assert_eq!(
        parse(&newer),
        "`c/S.r0.jsonl` line 1: `cassette_version` 9 is newer than this toolgate reads (1)"
    );
    // Issue case: a 200 MB answer was replayed (1 GB of memory) though live it is dropped.
    let huge = interaction(
        1,
        json!({}),
        json!({"result": "x".repeat(17 * 1024 * 1024)}),
    );
    assert_eq!(
        parse(&format!("{head}\n{huge}")),
        "`c/S.r0.jsonl` line 2: an interaction of 17 MiB; a live server's answer is at most 16 MiB"
    );
    // Issue case: version 0 was accepted.
    let zero = head.replace("\"cassette_version\":1", "\"cassette_version\":0");
    assert_eq!(
        parse(&zero),
        "`c/S.r0.jsonl` line 1: `cassette_version` 0 is no version toolgate writes (the first is 1)"
    );
}

/// Issue case: a cassette file whose header names another run was reported as "no
/// cassette", though the file is there.
#[test]
fn a_cassette_whose_header_names_another_run_is_named_not_missed() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    std::fs::write(dir.path().join("S-2.r0.jsonl"), header("S-1", TOOLS)).expect("writes");
    let backends = replays(dir.path());
    assert_eq!(
        backends.replay("S-2", 0).err(),
        Some(format!(
            "not_recorded: `{}` records run 0 of scenario `S-1` (its header says so), not run 0 of `S-2`; record it again with `toolgate gate --record {}`",
            dir.path().join("S-2.r0.jsonl").display(),
            dir.path().display()
        ))
    );
}

#[test]
fn the_scrubber_removes_secrets_and_patterns_from_strings_at_any_depth() {
    let scrubber = Scrubber::new(
        Redactor::new(["sk-live-12345678"]),
        &[r"\b\d{3}-\d{2}-\d{4}\b".to_owned()],
    )
    .expect("compiles");
    assert_eq!(
        scrubber.value(&json!({"key": "Bearer sk-live-12345678", "people": [{"ssn": "123-45-6789", "age": 40}]})),
        json!({"key": "Bearer [redacted]", "people": [{"ssn": "[redacted]", "age": 40}]})
    );
    // In place: keys stay, and so does every string with nothing to remove.
    let mut value = json!({"sk-live-12345678": ["https://u:p4ssw0rd-long@host/x", "plain", 1, null],
        "nested": {"text": "id 123-45-6789, key sk-live-12345678"}});
    scrubber.scrub(&mut value);
    assert_eq!(
        value,
        json!({"sk-live-12345678": ["https://[redacted]@host/x", "plain", 1, null],
            "nested": {"text": "id [redacted], key [redacted]"}})
    );
    assert_eq!(
        format!(
            "{:#}",
            Scrubber::new(Redactor::default(), &["(".to_owned()]).expect_err("refused")
        )
        .lines()
        .next(),
        Some("invalid redact pattern `(`: regex parse error:")
    );
}
