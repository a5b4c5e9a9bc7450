//! The reliability suite: malformed inputs of every kind a user writes or a provider sends,
//! each expected to end with the documented exit code and a message naming the file and the
//! field or line, and never with a panic.

use wiremock::ResponseTemplate;

use crate::support::{FakeProvider, output, scratch_suite, toolgate};

/// A scenario that loads and passes with the reference agent.
const GOOD: &str = r#"{"id": "T1-100", "tier": 1, "type": "single_call", "prompt": "Find Ada.",
  "seed_state": "fixtures/crm_baseline.json",
  "expected_calls": [{"tool": "crm_search_contacts", "args_match": {"query": "Ada"}}],
  "max_calls": 2, "fault_injection": null, "final_state_assertions": ["contacts.count == baseline"]}"#;

/// One malformed input: the file written into a scratch suite (path relative to the suite
/// root), the arguments run from that root, the exit code and a fragment of the output.
struct Case {
    name: &'static str,
    file: &'static str,
    contents: Vec<u8>,
    args: &'static [&'static str],
    code: i32,
    fragment: String,
}

fn case(
    name: &'static str,
    file: &'static str,
    contents: impl Into<Vec<u8>>,
    args: &'static [&'static str],
    code: i32,
    fragment: &str,
) -> Case {
    Case {
        name,
        file,
        contents: contents.into(),
        args,
        code,
        fragment: fragment.to_owned(),
    }
}

const VALIDATE: &[&str] = &["validate", "--root", "."];
const GATE: &[&str] = &["gate", "--root", ".", "--out", "out"];
const REPLAY: &[&str] = &[
    "gate",
    "--root",
    ".",
    "--out",
    "out",
    "--agent",
    "replay",
    "--recordings",
    "rec.jsonl",
];
const LINT_CONFIG: &[&str] = &["lint", "--config", "servers.json"];
const LINT_TOOLS: &[&str] = &["lint", "--tools-json", "tools.json"];

/// `GOOD` with one piece of text replaced (which must be there).
fn good_with(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "`{from}` is not in the good scenario");
    GOOD.replace(from, to)
}

/// A YAML scenario whose anchors would expand to 9^5 * 10 strings if a loader expanded them
/// before checking types.
const YAML_ALIAS_BOMB: &str = "id: T1-101\ntier: 1\ntype: single_call\nprompt: &a x\n\
seed_state: fixtures/crm_baseline.json\nexpected_calls: []\nmax_calls: 1\nreference_answer: hi\n\
final_answer:\n  contains_text: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n\
forbidden_calls: [{tool: [&c [*b,*b,*b,*b,*b,*b,*b,*b,*b], &d [*c,*c,*c,*c,*c,*c,*c,*c,*c], \
&e [*d,*d,*d,*d,*d,*d,*d,*d,*d], &f [*e,*e,*e,*e,*e,*e,*e,*e,*e], \
[*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]]}]\n";

fn scenario_cases() -> Vec<Case> {
    const S: &str = "scenarios/good.json";
    let f = "`./scenarios/good.json`: ";
    let deep = format!("{{\"id\": {}{}}}", "[".repeat(5000), "]".repeat(5000));
    vec![
        case(
            "empty scenario file",
            S,
            "",
            VALIDATE,
            2,
            &format!("{f}EOF while parsing a value at line 1 column 0"),
        ),
        case(
            "truncated scenario",
            S,
            "{",
            VALIDATE,
            2,
            &format!("{f}?: EOF while parsing an object at line 1 column 1"),
        ),
        case(
            "scenario is an array",
            S,
            "[]",
            VALIDATE,
            2,
            &format!("{f}invalid length 0"),
        ),
        case(
            "scenario is not UTF-8",
            S,
            b"\xff\xfe{}".to_vec(),
            VALIDATE,
            2,
            "failed to read scenario `./scenarios/good.json`: not UTF-8 text (invalid byte at offset 0)",
        ),
        case(
            "unknown field",
            S,
            good_with("\"max_calls\"", "\"max_call\""),
            VALIDATE,
            2,
            &format!("{f}max_call: unknown field `max_call`"),
        ),
        case(
            "misspelled tool",
            S,
            good_with("\"crm_search_contacts\"", "\"crm_search_contact\""),
            VALIDATE,
            2,
            &format!(
                "{f}expected_calls[0].tool (line 3): unknown tool `crm_search_contact` (did you mean `crm_search_contacts`?)"
            ),
        ),
        case(
            "broken JSONPath",
            S,
            good_with(
                "\"args_match\": {\"query\": \"Ada\"}",
                "\"args_from_prior\": {\"query\": \"$.calls[0\"}",
            ),
            VALIDATE,
            2,
            &format!(
                "{f}expected_calls[0].args_from_prior.query (line 3): invalid JSONPath `$.calls[0`"
            ),
        ),
        case(
            "broken assertion",
            S,
            good_with("contacts.count == baseline", "contacts.count =="),
            VALIDATE,
            2,
            &format!(
                "{f}final_state_assertions[0] (line 4): failed to parse assertion `contacts.count ==`"
            ),
        ),
        case(
            "assertion on an unknown collection",
            S,
            good_with("contacts.count", "planets.count"),
            VALIDATE,
            2,
            &format!("{f}final_state_assertions[0] (line 4): unknown name `planets`"),
        ),
        case(
            "missing fixture",
            S,
            good_with("crm_baseline.json", "nope.json"),
            VALIDATE,
            2,
            &format!("{f}seed_state (line 2): failed to read fixture"),
        ),
        case(
            "fixture that is not JSON",
            S,
            good_with("fixtures/crm_baseline.json", "/etc/passwd"),
            VALIDATE,
            2,
            &format!("{f}seed_state (line 2): fixture `/etc/passwd` is not valid JSON"),
        ),
        case(
            "duplicate scenario id",
            "scenarios/good2.json",
            GOOD,
            VALIDATE,
            2,
            "`./scenarios/good2.json`: id: `T1-100` is already used by `./scenarios/good.json`",
        ),
        case(
            "tier beyond every integer",
            S,
            good_with("\"tier\": 1", "\"tier\": 99999999999999999999"),
            VALIDATE,
            2,
            &format!("{f}tier: must be 1..=5, got 100000000000000000000"),
        ),
        case(
            "tier out of range",
            S,
            good_with("\"tier\": 1", "\"tier\": 6"),
            VALIDATE,
            2,
            &format!("{f}tier: must be 1..=5, got 6"),
        ),
        case(
            "duplicate key",
            S,
            good_with("\"tier\": 1", "\"tier\": 1, \"tier\": 2"),
            VALIDATE,
            2,
            &format!("{f}duplicate field `tier` at line 1"),
        ),
        case(
            "negative call budget",
            S,
            good_with("\"max_calls\": 2", "\"max_calls\": -1"),
            VALIDATE,
            2,
            &format!("{f}max_calls: must be 0 or more, got -1"),
        ),
        case(
            "call budget below the expected calls",
            S,
            good_with("\"max_calls\": 2", "\"max_calls\": 0"),
            VALIDATE,
            2,
            &format!("{f}max_calls: 0 is fewer than the 1 expected calls, so no run could pass"),
        ),
        case(
            "unknown scenario type",
            S,
            good_with("\"single_call\"", "\"single\""),
            VALIDATE,
            2,
            &format!("{f}type: unknown variant `single`"),
        ),
        case(
            "overlong id",
            S,
            good_with("\"T1-100\"", &format!("\"{}\"", "A".repeat(129))),
            VALIDATE,
            2,
            &format!("{f}id: is 129 characters long; at most 128 are allowed"),
        ),
        case(
            "id with a space",
            S,
            good_with("\"T1-100\"", "\"T1 100\""),
            VALIDATE,
            2,
            &format!(
                "{f}id: ' ' is not allowed in an id: use ASCII letters, digits, `-`, `_` and `.`"
            ),
        ),
        case(
            "empty prompt",
            S,
            good_with("\"Find Ada.\"", "\"\""),
            VALIDATE,
            2,
            &format!("{f}prompt: must not be empty"),
        ),
        case(
            "fault on call zero",
            S,
            good_with(
                "\"fault_injection\": null",
                r#""fault_injection": [{"tool": "crm_search_contacts", "on_call": 0, "times": 1, "error": "server_error"}]"#,
            ),
            VALIDATE,
            2,
            &format!("{f}fault_injection[0].on_call: must be 1 or more, got 0"),
        ),
        case(
            "fault on an unknown tool",
            S,
            good_with(
                "\"fault_injection\": null",
                r#""fault_injection": [{"tool": "nope", "on_call": 1, "times": 1, "error": "server_error"}]"#,
            ),
            VALIDATE,
            2,
            &format!("{f}fault_injection[0].tool (line 4): unknown tool `nope`"),
        ),
        case(
            "unknown fault kind",
            S,
            good_with(
                "\"fault_injection\": null",
                r#""fault_injection": [{"tool": "crm_search_contacts", "on_call": 1, "times": 1, "error": "boom"}]"#,
            ),
            VALIDATE,
            2,
            &format!("{f}fault_injection[0].error: unknown variant `boom`"),
        ),
        case(
            "nesting 5,000 deep",
            S,
            deep,
            VALIDATE,
            2,
            &format!("{f}id: invalid type: sequence, expected a string"),
        ),
        case(
            "YAML flow sequence left open",
            "scenarios/b.yaml",
            "id: [",
            VALIDATE,
            2,
            "`./scenarios/b.yaml`: error: line 1 column 5: expected string scalar",
        ),
        case(
            "YAML with missing fields",
            "scenarios/b.yaml",
            "id: T1-100\n",
            VALIDATE,
            2,
            "`./scenarios/b.yaml`: error: line 1 column 1: missing field `tier`",
        ),
        case(
            "YAML with a wrong type",
            "scenarios/b.yaml",
            "id: T1-200\ntier: one\ntype: single_call\n",
            VALIDATE,
            2,
            "`./scenarios/b.yaml`: error: line 2 column 1: invalid type: string \"one\", expected a whole number",
        ),
        case(
            "YAML alias bomb",
            "scenarios/b.yaml",
            YAML_ALIAS_BOMB,
            VALIDATE,
            2,
            "`./scenarios/b.yaml`: error: line 11 column 26: expected string scalar",
        ),
        case(
            "YAML nesting 5,000 deep",
            "scenarios/b.yaml",
            format!("id: {}{}", "[".repeat(5000), "]".repeat(5000)),
            VALIDATE,
            2,
            "`./scenarios/b.yaml`: error: line 1 column 5",
        ),
    ]
}

fn fixture_and_smoke_cases() -> Vec<Case> {
    const X: &str = "fixtures/crm_baseline.json";
    let x = "`./scenarios/good.json`: seed_state (line 2): fixture `./fixtures/crm_baseline.json`";
    vec![
        case(
            "truncated fixture",
            X,
            "{",
            VALIDATE,
            2,
            &format!("{x} is not valid JSON: EOF while parsing an object at line 1 column 1"),
        ),
        case(
            "fixture collection is not an array",
            X,
            r#"{"contacts": 3}"#,
            VALIDATE,
            2,
            &format!("{x}: `contacts` must be an array of objects"),
        ),
        case(
            "fixture is an array",
            X,
            "[]",
            VALIDATE,
            2,
            &format!("{x} must be a JSON object of collections"),
        ),
        case(
            "smoke set names a tier that does not exist",
            "smoke-set.yaml",
            "tiers: [9]",
            VALIDATE,
            2,
            "`./smoke-set.yaml`: tiers: 9 is not a tier (1..=5)",
        ),
        case(
            "smoke set with a misspelled key",
            "smoke-set.yaml",
            "tier: [1]",
            VALIDATE,
            2,
            "`./smoke-set.yaml`: error: line 1 column 1: unknown field `tier`",
        ),
        case(
            "smoke set names an unknown scenario",
            "smoke-set.yaml",
            "scenarios: [T9-999]",
            VALIDATE,
            2,
            "`./smoke-set.yaml`: scenarios[0]: no scenario has id `T9-999`",
        ),
        case(
            "empty smoke set",
            "smoke-set.yaml",
            "",
            VALIDATE,
            2,
            "`./smoke-set.yaml`: selects no scenarios (give `tiers` or `scenarios`)",
        ),
        case(
            "smoke set that is not a mapping",
            "smoke-set.yaml",
            ": :",
            VALIDATE,
            2,
            "`./smoke-set.yaml`: error: line 1 column 1",
        ),
    ]
}

fn config_cases() -> Vec<Case> {
    const C: &str = "toolgate.yaml";
    let c = "`./toolgate.yaml`: ";
    vec![
        // Read whole, these ran out of memory (`/dev/zero`) or hung (a FIFO).
        case(
            "servers from a device",
            C,
            "servers: {from: /dev/zero}",
            VALIDATE,
            2,
            "failed to read MCP config `/dev/zero`: it is not a regular file",
        ),
        case(
            "mock tools from a device",
            "mocks.yaml",
            "schema_version: 1\ntools_from: /dev/zero\n",
            &["mock", "serve", "mocks.yaml"],
            2,
            "failed to read tools file `/dev/zero`: it is not a regular file",
        ),
        case(
            "unknown agent",
            C,
            "agent: gpt",
            GATE,
            2,
            &format!("{c}error: line 1 column 8: unknown variant `gpt`"),
        ),
        case(
            "misspelled config key",
            C,
            "modle: x",
            GATE,
            2,
            &format!("{c}error: line 1 column 1: unknown field `modle`"),
        ),
        case(
            "config that is a sequence",
            C,
            "[1, 2]",
            GATE,
            2,
            &format!("{c}error: line 1 column 1: expected mapping start"),
        ),
        case(
            "negative turn limit",
            C,
            "max_turns: -3",
            GATE,
            2,
            &format!("{c}error: line 1 column 12: invalid u32"),
        ),
        case(
            "zero turn limit",
            C,
            "max_turns: 0",
            GATE,
            2,
            &format!("{c}max_turns: must be at least 1"),
        ),
        case(
            "zero repeats",
            C,
            "repeat: 0",
            GATE,
            2,
            &format!("{c}repeat: must be at least 1"),
        ),
        case(
            "zero concurrency",
            C,
            "concurrency: 0",
            GATE,
            2,
            &format!("{c}concurrency: must be at least 1"),
        ),
        case(
            "zero attempts",
            C,
            "max_attempts: 0",
            GATE,
            2,
            &format!("{c}max_attempts: must be at least 1"),
        ),
        case(
            "timeout that is not a duration",
            C,
            "timeout: soon",
            GATE,
            2,
            &format!("{c}timeout: `soon` is not a duration"),
        ),
        case(
            "zero run timeout",
            C,
            "timeout: 0s",
            GATE,
            2,
            &format!("{c}timeout: must be longer than 0s"),
        ),
        case(
            "zero request timeout",
            C,
            "request_timeout: 0s",
            GATE,
            2,
            &format!("{c}request_timeout: must be longer than 0s"),
        ),
        case(
            "tolerance above 100",
            C,
            "tolerance: 101",
            GATE,
            2,
            &format!("{c}tolerance: 101 is not a number of points in 0..=100"),
        ),
        case(
            "negative tolerance",
            C,
            "tolerance: -1",
            GATE,
            2,
            &format!("{c}tolerance: -1 is not a number of points in 0..=100"),
        ),
        case(
            "pass-rate floor above 100",
            C,
            "min_pass_rate: 100.5",
            GATE,
            2,
            &format!("{c}min_pass_rate: 100.5 is not a percentage in 0..=100"),
        ),
        case(
            "two system prompts",
            C,
            "system_prompt: a\nsystem_prompt_file: p.txt",
            GATE,
            2,
            &format!("{c}system_prompt: give `system_prompt` or `system_prompt_file`, not both"),
        ),
        case(
            "missing system prompt file",
            C,
            "system_prompt_file: nope.txt",
            GATE,
            2,
            "failed to read system prompt `./nope.txt`",
        ),
    ]
}

fn results_cases() -> Vec<Case> {
    const B: &str = "baseline.json";
    let b = "`./baseline.json`: ";
    let real = std::fs::read_to_string(crate::support::repo().join("baseline.json"))
        .expect("the repo's baseline");
    vec![
        case(
            "empty baseline",
            B,
            "",
            GATE,
            2,
            "`./baseline.json` is not JSON: EOF while parsing a value at line 1 column 0",
        ),
        case(
            "baseline that is null",
            B,
            "null",
            GATE,
            2,
            &format!("{b}.: invalid type: null"),
        ),
        case(
            "baseline from the future",
            B,
            r#"{"schema_version": 99}"#,
            GATE,
            2,
            &format!("{b}schema_version: 99 is not supported (this toolgate reads 1 to 2)"),
        ),
        case(
            "baseline version that is a string",
            B,
            r#"{"schema_version": "two"}"#,
            GATE,
            2,
            &format!("{b}schema_version: invalid type: string \"two\", expected u32"),
        ),
        case(
            "baseline cut off mid-write",
            B,
            real[..300].to_owned(),
            GATE,
            2,
            "`./baseline.json` is not JSON: EOF while parsing a string at line 12 column 52",
        ),
        case(
            "baseline with a wrong type",
            B,
            r#"{"schema_version": 1, "agent": 3}"#,
            GATE,
            2,
            &format!("{b}agent: invalid type: integer `3`"),
        ),
        case(
            "recordings that are not JSON",
            "rec.jsonl",
            "not json",
            REPLAY,
            2,
            "`rec.jsonl` line 1: expected ident",
        ),
        case(
            "recording with a wrong type",
            "rec.jsonl",
            r#"{"scenario": 3}"#,
            REPLAY,
            2,
            "`rec.jsonl` line 1: invalid type: integer `3`, expected a string",
        ),
        case(
            "lock file cut off",
            "lock.json",
            "{",
            &["drift", "--tools-json", "tools.json", "--lock", "lock.json"],
            2,
            "failed to parse lock file `lock.json` at `?`: EOF while parsing an object",
        ),
        case(
            "lock file without tools",
            "lock.json",
            r#"{"schema_version": 1}"#,
            &["drift", "--tools-json", "tools.json", "--lock", "lock.json"],
            2,
            "failed to parse lock file `lock.json` at `.`: missing field `tools`",
        ),
    ]
}

fn catalog_cases() -> Vec<Case> {
    const M: &str = "servers.json";
    const T: &str = "tools.json";
    let m = "`servers.json`: ";
    vec![
        case(
            "empty mcpServers file",
            M,
            "",
            LINT_CONFIG,
            2,
            &format!("{m}EOF while parsing a value at line 1 column 0"),
        ),
        case(
            "mcpServers file without servers",
            M,
            "{}",
            LINT_CONFIG,
            2,
            &format!("{m}missing field `mcpServers`"),
        ),
        case(
            "mcpServers that is a list",
            M,
            r#"{"mcpServers": []}"#,
            LINT_CONFIG,
            2,
            &format!("{m}mcpServers: invalid type: sequence, expected a map"),
        ),
        // A broken entry is a finding for that server alone (the others are still linted).
        case(
            "server command that is a number",
            M,
            r#"{"mcpServers": {"a": {"command": 5}}}"#,
            LINT_CONFIG,
            1,
            &format!("{m}mcpServers.a.command: invalid type: integer `5`, expected a string"),
        ),
        case(
            "server with neither command nor url",
            M,
            r#"{"mcpServers": {"a": {}}}"#,
            LINT_CONFIG,
            1,
            &format!("{m}mcpServers.a: needs `command` (a stdio server) or `url`"),
        ),
        case(
            "server whose command does not exist",
            M,
            r#"{"mcpServers": {"a": {"command": "/nonexistent/bin"}}}"#,
            LINT_CONFIG,
            1,
            "server `a` (`/nonexistent/bin`): failed to start MCP server `/nonexistent/bin`",
        ),
        case(
            "empty tools file",
            T,
            "",
            LINT_TOOLS,
            2,
            "failed to parse tools file `tools.json`: EOF while parsing a value at line 1 column 0",
        ),
        case(
            "tools that is a number",
            T,
            r#"{"tools": 5}"#,
            LINT_TOOLS,
            2,
            "failed to read tools file `tools.json`: `tools` is not an array",
        ),
        case(
            "server tools that are a string",
            T,
            r#"{"servers": {"x": {"tools": "no"}}}"#,
            LINT_TOOLS,
            2,
            "failed to read tools file `tools.json`: `servers.x.tools` is not an array",
        ),
        case(
            "tools file without tools",
            T,
            r#"{"foo": 1}"#,
            LINT_TOOLS,
            2,
            "failed to read tools file `tools.json`: no `tools` array",
        ),
        case(
            "tool without a name",
            T,
            r#"{"tools": [{}]}"#,
            LINT_TOOLS,
            1,
            "the tool has no `name`",
        ),
        case(
            "input schema that is a number",
            T,
            r#"{"result": {"tools": [{"name": "a", "inputSchema": 7}]}}"#,
            LINT_TOOLS,
            1,
            "the input schema is a number, not a schema object",
        ),
    ]
}

/// Runs every case in its own scratch suite; returns a description of each mismatch.
fn run_cases(cases: &[Case]) -> Vec<String> {
    let mut failures = Vec::new();
    for case in cases {
        let suite = scratch_suite(&[("good.json", GOOD)]);
        let root = suite.path();
        std::fs::write(
            root.join("tools.json"),
            r#"[{"name": "a", "inputSchema": {"type": "object"}}]"#,
        )
        .expect("write tools");
        let path = root.join(case.file);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&path, &case.contents).expect("write case file");
        let mut command = toolgate();
        command.current_dir(root).args(case.args);
        let (code, stdout, stderr) = output(command);
        let all = format!("{stdout}{stderr}");
        if code != case.code || !all.contains(&case.fragment) || all.contains("panicked") {
            failures.push(format!(
                "{}: exit {code} (want {}), want `{}` in:\n{all}",
                case.name, case.code, case.fragment
            ));
        }
    }
    failures
}

#[test]
fn every_malformed_input_gives_the_documented_exit_code_and_names_file_and_field() {
    let cases: Vec<Case> = [
        scenario_cases(),
        fixture_and_smoke_cases(),
        config_cases(),
        results_cases(),
        catalog_cases(),
    ]
    .into_iter()
    .flatten()
    .collect();
    assert!(cases.len() >= 70, "{} cases", cases.len());
    let failures = run_cases(&cases);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Runs the one-scenario suite with the `openai` agent against a provider that answers every
/// request with `reply`; returns (exit code, stdout, stderr).
async fn gate_against(reply: ResponseTemplate) -> (i32, String, String) {
    let provider = FakeProvider::start(Vec::new(), Some(reply)).await;
    let suite = scratch_suite(&[("good.json", GOOD)]);
    let mut command = toolgate();
    command
        .current_dir(suite.path())
        .args(GATE)
        .args(["--agent", "openai", "--model", "fake-model"])
        .env("OPENAI_BASE_URL", provider.base_url())
        .env("OPENAI_API_KEY", "sk-test");
    tokio::task::spawn_blocking(move || output(command))
        .await
        .expect("join")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_provider_responses_become_errored_runs_with_the_reason() {
    let json = |body: &str| {
        ResponseTemplate::new(200)
            .insert_header("content-type", "application/json")
            .set_body_string(body.to_owned())
    };
    let cases = [
        (
            "body that is not JSON",
            json("<html>oops</html>"),
            3,
            "ERRORED T1-100",
        ),
        (
            "body that is an array",
            json("[]"),
            3,
            "expected a JSON object, got an array",
        ),
        (
            "body without choices",
            json("{}"),
            3,
            "response has no `choices`",
        ),
        (
            "provider error in a 200",
            json(r#"{"error": {"message": "quota exceeded"}}"#),
            3,
            "response has no `choices`; provider error: quota exceeded",
        ),
        (
            "message that is a number",
            json(r#"{"choices": [{"message": 5}]}"#),
            3,
            "`choices[0].message` is missing or not an object",
        ),
        (
            "empty choices",
            json(r#"{"choices": []}"#),
            3,
            "response has no `choices`",
        ),
        (
            "tool call whose arguments are not JSON",
            json(
                r#"{"choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "crm_search_contacts", "arguments": "{oops"}}]}}]}"#,
            ),
            0,
            "first divergence: call 1 `crm_search_contacts`: arguments are not valid JSON (\"{oops\")",
        ),
        (
            "tool call to a tool that does not exist",
            json(
                r#"{"choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "no_such_tool", "arguments": "{}"}}]}}]}"#,
            ),
            0,
            "first divergence: call 1: expected `crm_search_contacts`, got `no_such_tool`",
        ),
        (
            "tool call without a function",
            json(
                r#"{"choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
                "tool_calls": [{"id": "c1", "type": "function"}]}}]}"#,
            ),
            0,
            "first divergence: call 1: expected `crm_search_contacts`, got ``",
        ),
    ];
    let mut failures = Vec::new();
    for (name, reply, want, fragment) in cases {
        let (code, stdout, stderr) = gate_against(reply).await;
        let all = format!("{stdout}{stderr}");
        if code != want || !all.contains(fragment) || all.contains("panicked") {
            failures.push(format!(
                "{name}: exit {code} (want {want}), want `{fragment}` in:\n{all}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

const AGENT_KEY: &str = "sk-canary-agent-5f0c1e2d3b4a";
const JUDGE_KEY: &str = "sk-canary-judge-9a8b7c6d5e4f";

/// Every file under `dir`, recursively, as (path, lossy text).
fn files_under(dir: &std::path::Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else {
            let bytes = std::fs::read(&path).expect("read file");
            found.push((
                path.display().to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            ));
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn canary_api_keys_never_reach_results_trace_cache_or_output() {
    // The first scenario passes and goes to the judge; the second meets a provider that echoes
    // the key in its error, as OpenAI's 401 does. The judge's endpoint echoes its key too.
    let echo = |key: &str| {
        ResponseTemplate::new(401).set_body_string(format!(
            "{{\"error\": {{\"message\": \"Incorrect API key provided: {key}\"}}}}"
        ))
    };
    let agent = FakeProvider::start(
        vec![
            ResponseTemplate::new(200).set_body_json(crate::support::tool_calls(&[(
                "c1",
                "crm_search_contacts",
                r#"{"query": "Ada"}"#,
            )])),
            ResponseTemplate::new(200).set_body_json(crate::support::answer("Ada Lovelace, CTO.")),
        ],
        Some(echo(AGENT_KEY)),
    )
    .await;
    let judge = FakeProvider::start(Vec::new(), Some(echo(JUDGE_KEY))).await;
    let second = good_with("T1-100", "T1-101");
    let suite = scratch_suite(&[("good.json", GOOD), ("second.json", &second)]);
    let mut command = toolgate();
    command
        .current_dir(suite.path())
        .args(GATE)
        .args([
            "--agent",
            "openai",
            "--model",
            "fake-model",
            "--concurrency",
            "1",
        ])
        .args([
            "--judge-model",
            "judge-1",
            "--judge-base-url",
            &judge.base_url(),
        ])
        .args(["--judge-cache", "cache"])
        .env("OPENAI_BASE_URL", agent.base_url())
        .env("OPENAI_API_KEY", AGENT_KEY)
        .env("TOOLGATE_JUDGE_API_KEY", JUDGE_KEY);
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || output(command))
        .await
        .expect("join");
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("provider returned HTTP 401: Incorrect API key provided: [redacted]"),
        "{stdout}"
    );
    let mut written = files_under(suite.path());
    assert!(
        written
            .iter()
            .any(|(path, _)| path.ends_with("out/results.json")),
        "{written:?}"
    );
    assert!(
        written
            .iter()
            .any(|(path, _)| path.ends_with("out/trace.jsonl")),
        "{written:?}"
    );
    let results = std::fs::read_to_string(suite.path().join("out/results.json")).expect("results");
    assert!(
        results.contains("Incorrect API key provided: [redacted]"),
        "{results}"
    );
    written.push(("stdout".into(), stdout));
    written.push(("stderr".into(), stderr));
    for (name, text) in &written {
        for key in [AGENT_KEY, JUDGE_KEY] {
            assert!(!text.contains(key), "`{key}` leaked into {name}:\n{text}");
        }
    }
    assert!(!judge.requests().is_empty(), "the judge was asked");
    assert!(
        judge
            .requests()
            .iter()
            .all(|body| !body.to_string().contains(AGENT_KEY)),
        "the agent's key never goes to the judge"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_midway_leaves_the_previous_results_and_trace_intact() {
    use std::os::unix::process::ExitStatusExt as _;

    let suite = scratch_suite(&[("good.json", GOOD)]);
    let root = suite.path().to_path_buf();
    let mut first = toolgate();
    first.current_dir(&root).args(GATE);
    let (code, stdout, stderr) = output(first);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let results_before = std::fs::read(root.join("out/results.json")).expect("results");
    let trace_before = std::fs::read(root.join("out/trace.jsonl")).expect("trace");

    // A provider that takes a minute to answer: the second run is killed while it waits.
    let hanging = FakeProvider::start(
        Vec::new(),
        Some(
            ResponseTemplate::new(200)
                .set_body_json(crate::support::answer("late"))
                .set_delay(std::time::Duration::from_secs(60)),
        ),
    )
    .await;
    let mut second = toolgate();
    second
        .current_dir(&root)
        .args(GATE)
        .args(["--agent", "openai", "--model", "fake-model"])
        .env("OPENAI_BASE_URL", hanging.base_url())
        .env("OPENAI_API_KEY", "sk-test")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = second.spawn().expect("toolgate starts");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while hanging.requests().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "no request reached the provider"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    child.kill().expect("SIGKILL");
    let status = child.wait().expect("wait");
    assert_eq!(status.signal(), Some(9));

    assert_eq!(
        std::fs::read(root.join("out/results.json")).expect("results"),
        results_before
    );
    assert_eq!(
        std::fs::read(root.join("out/trace.jsonl")).expect("trace"),
        trace_before
    );
    let report = toolgate::results::RunReport::load(&root.join("out/results.json"))
        .expect("the previous results still load");
    assert_eq!(report.scenarios.len(), 1);
    assert_eq!(report.scenarios[0].id, "T1-100");
    // And they still serve as a baseline.
    let mut third = toolgate();
    third.current_dir(&root).args([
        "gate",
        "--root",
        ".",
        "--baseline",
        "out/results.json",
        "--out",
        "out2",
    ]);
    let (code, stdout, stderr) = output(third);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("\nverdict: PASS\n"), "{stdout}");
}

#[test]
fn runs_killed_at_any_moment_never_leave_a_half_written_results_file() {
    let suite = scratch_suite(&[("good.json", GOOD)]);
    let root = suite.path();
    let mut first = toolgate();
    first.current_dir(root).args(GATE);
    assert_eq!(output(first).0, 0);
    // Kill runs at spread-out moments, some of them while the files are being written.
    for delay_ms in (0..30).map(|i| i * 7) {
        let mut run = toolgate();
        run.current_dir(root)
            .args(GATE)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let mut child = run.spawn().expect("toolgate starts");
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        child.wait().expect("wait");
        let report = toolgate::results::RunReport::load(&root.join("out/results.json"))
            .unwrap_or_else(|error| panic!("killed after {delay_ms} ms: {error:#}"));
        assert_eq!(report.scenarios.len(), 1);
        let trace = std::fs::read_to_string(root.join("out/trace.jsonl")).expect("trace");
        assert!(trace.ends_with('\n'), "killed after {delay_ms} ms: {trace}");
        for line in trace.lines() {
            serde_json::from_str::<serde_json::Value>(line).expect("whole JSON lines");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_model_output_is_escaped_and_cut_in_the_terminal_report() {
    let scenario = good_with(
        "\"final_state_assertions\"",
        "\"final_answer\": {\"contains_text\": [\"Ada\"]}, \"reference_answer\": \"Ada\", \"final_state_assertions\"",
    );
    let forged_tool = "crm\u{1b}[31m_x\nverdict: PASS\u{202e}";
    let chunk = "<script>alert(1)</script> @everyone | --- | \u{1b}[2J\r\u{0}";
    let huge_answer = chunk.repeat((1 << 20) / chunk.len());
    let provider = FakeProvider::start(
        vec![
            ResponseTemplate::new(200).set_body_json(crate::support::tool_calls(&[(
                "c1",
                forged_tool,
                "{}",
            )])),
            ResponseTemplate::new(200).set_body_json(crate::support::answer(&huge_answer)),
        ],
        None,
    )
    .await;
    let suite = scratch_suite(&[("good.json", &scenario)]);
    let mut command = toolgate();
    command
        .current_dir(suite.path())
        .args(GATE)
        .args(["--agent", "openai", "--model", "fake-model"])
        .env("OPENAI_BASE_URL", provider.base_url())
        .env("OPENAI_API_KEY", "sk-test");
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || output(command))
        .await
        .expect("join");
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.len() < 20_000, "{} bytes of report", stdout.len());
    for c in ['\u{1b}', '\r', '\0', '\u{202e}'] {
        assert!(!stdout.contains(c), "{c:?} reached the terminal:\n{stdout}");
    }
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("verdict:")).count(),
        1,
        "{stdout}"
    );
    assert!(
        stdout.contains("got `crm\\u{1b}[31m_x\\u{a}verdict: PASS\\u{202e}`"),
        "{stdout}"
    );
    let report = toolgate::results::RunReport::load(&suite.path().join("out/results.json"))
        .expect("results load");
    assert_eq!(report.scenarios[0].id, "T1-100");
}

/// A provider that plays a good run of the test scenario for any number of concurrent runs:
/// a search for Ada first, then an answer once a tool result is in the conversation.
struct GoodRun;

impl wiremock::Respond for GoodRun {
    fn respond(&self, request: &wiremock::Request) -> ResponseTemplate {
        let body: serde_json::Value =
            serde_json::from_slice(&request.body).unwrap_or(serde_json::Value::Null);
        let has_result = body["messages"]
            .as_array()
            .is_some_and(|messages| messages.iter().any(|m| m["role"] == "tool"));
        ResponseTemplate::new(200).set_body_json(if has_result {
            crate::support::answer("Ada Lovelace, CTO at Analytical Engines.")
        } else {
            crate::support::tool_calls(&[("c1", "crm_search_contacts", r#"{"query": "Ada"}"#)])
        })
    }
}

/// Runs 4 scenarios `repeat` times each at `concurrency` against a provider that plays good
/// runs, checks that every (scenario, repetition) is in the results and the trace exactly
/// once, and returns the wall time and toolgate's peak resident memory in KiB (from
/// `/usr/bin/time`, when the machine has it).
async fn load(repeat: u32, concurrency: u16) -> (std::time::Duration, Option<u64>) {
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(GoodRun)
        .mount(&server)
        .await;
    let scenarios: Vec<(String, String)> = (0..4)
        .map(|i| {
            let id = format!("T1-10{i}");
            (format!("{id}.json"), good_with("T1-100", &id))
        })
        .collect();
    let borrowed: Vec<(&str, &str)> = scenarios
        .iter()
        .map(|(name, text)| (name.as_str(), text.as_str()))
        .collect();
    let suite = scratch_suite(&borrowed);
    let timer = std::path::Path::new("/usr/bin/time");
    let mut command = if timer.exists() {
        let mut command = std::process::Command::new(timer);
        command
            .args(["-f", "peak_rss_kib=%M"])
            .arg(env!("CARGO_BIN_EXE_toolgate"));
        command
    } else {
        toolgate()
    };
    command
        .current_dir(suite.path())
        .args(GATE)
        .args(["--agent", "openai", "--model", "fake-model"])
        .args(["--repeat", &repeat.to_string()])
        .args(["--concurrency", &concurrency.to_string()])
        .env("OPENAI_BASE_URL", format!("{}/v1", server.uri()))
        .env("OPENAI_API_KEY", "sk-test");
    let started = std::time::Instant::now();
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || output(command))
        .await
        .expect("join");
    let took = started.elapsed();
    assert_eq!(code, 0, "{stdout}{stderr}");
    let report = toolgate::results::RunReport::load(&suite.path().join("out/results.json"))
        .expect("results load");
    let runs = 4 * repeat as usize;
    assert_eq!(report.scenarios.len(), runs);
    let trace = std::fs::read_to_string(suite.path().join("out/trace.jsonl")).expect("trace");
    let lines: Vec<serde_json::Value> = trace
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON line"))
        .collect();
    for i in 0..4 {
        let id = format!("T1-10{i}");
        let mut repeats: Vec<u32> = report
            .scenarios
            .iter()
            .filter(|r| r.id == id)
            .map(|r| r.repeat)
            .collect();
        repeats.sort_unstable();
        assert_eq!(repeats, (0..repeat).collect::<Vec<u32>>(), "{id}");
        let mut called: Vec<u64> = lines
            .iter()
            .filter(|line| line["scenario"] == id.as_str() && line["tool"].is_string())
            .filter_map(|line| line["repeat"].as_u64())
            .collect();
        called.sort_unstable();
        assert_eq!(called, (0..u64::from(repeat)).collect::<Vec<u64>>(), "{id}");
    }
    assert!(
        report
            .scenarios
            .iter()
            .all(|r| r.outcome == toolgate::score::Outcome::Pass),
        "every run passes"
    );
    let peak = stderr
        .lines()
        .find_map(|line| line.strip_prefix("peak_rss_kib=")?.trim().parse().ok());
    (took, peak)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(
    clippy::print_stdout,
    reason = "the load figures are the test's report"
)]
async fn a_hundred_repetitions_at_high_concurrency_lose_no_result() {
    let (took, peak) = load(25, 64).await;
    println!("100 runs at concurrency 64: {took:?}, peak RSS {peak:?} KiB");
    if let Some(peak) = peak {
        assert!(peak < 512 * 1024, "peak {peak} KiB");
    }
}

/// The full load run (`bash bench/load.sh`): about 45 s in a debug build on a busy 2-core
/// machine, too long for every `cargo test`. `TOOLGATE_LOAD_CONCURRENCY` sets the concurrency
/// (default 256).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "load test, run by bench/load.sh"]
#[expect(
    clippy::print_stdout,
    reason = "the load figures are the test's report"
)]
async fn a_thousand_repetitions_at_high_concurrency_lose_no_result() {
    let concurrency: u16 = std::env::var("TOOLGATE_LOAD_CONCURRENCY")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(256);
    let (took, peak) = load(250, concurrency).await;
    println!("1000 runs at concurrency {concurrency}: {took:?}, peak RSS {peak:?} KiB");
    if let Some(peak) = peak {
        assert!(peak < 512 * 1024, "peak {peak} KiB");
    }
}

const SWEEP_CANARY: &str = "tok-sweep-canary-5551212";

/// Runs `command` with the sweep canary in its environment and `stdin` written to it.
fn with_canary(mut command: std::process::Command, stdin: &str) -> (i32, String, String) {
    use std::io::Write as _;
    command
        .env("SWEEP_SERVICE_TOKEN", SWEEP_CANARY)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().expect("starts");
    let mut input = child.stdin.take().expect("piped");
    input.write_all(stdin.as_bytes()).expect("writes");
    drop(input);
    let output = child.wait_with_output().expect("ends");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A secret of toolgate's environment (`*_TOKEN`) that an agent puts into a tool call and its
/// answer, and a client into its calls, reaches no artifact of `gate` (results, trace,
/// report, spans), `score`, `mock serve --trace` or `proxy --trace --record`, nor any output.
#[test]
fn a_secret_of_the_environment_reaches_no_artifact_of_any_command() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    let examples = crate::support::repo().join("examples");
    let script = "import os; from scripted_agent import McpClient; \
        c = McpClient(os.environ['TOOLGATE_MCP_URL']); c.initialize(); \
        c.call('crm_search_contacts', {'query': os.environ['SWEEP_SERVICE_TOKEN']}); \
        print('Searched for ' + os.environ['SWEEP_SERVICE_TOKEN'])";
    let mut outputs = Vec::new();

    let mut gate = toolgate();
    gate.current_dir(crate::support::repo())
        .args([
            "gate",
            "--agent",
            "command",
            "--only",
            "T1-001",
            "--command",
        ])
        .arg(format!(
            "cd '{}' && python3 -c \"{script}\"",
            examples.display()
        ))
        .arg("--out")
        .arg(root.join("gate"))
        .arg("--otel")
        .arg(root.join("gate/spans.jsonl"));
    let (code, stdout, stderr) = with_canary(gate, "");
    // The agent fails T1-001; one run is too few for the gate to block on it.
    assert!(code == 0 || code == 1, "{stdout}{stderr}");
    assert!(stdout.contains("FAILED T1-001"), "{stdout}");
    outputs.push(("gate", stdout, stderr));
    let trace = std::fs::read_to_string(root.join("gate/trace.jsonl")).expect("a trace");
    assert!(trace.contains("[redacted]"), "{trace}");

    let mut score = toolgate();
    score
        .args(["score", "--format", "toolgate", "--traces"])
        .arg(root.join("gate/trace.jsonl"))
        .arg("--out")
        .arg(root.join("score"));
    let (code, stdout, stderr) = with_canary(score, "");
    assert_eq!(code, 0, "{stdout}{stderr}");
    outputs.push(("score", stdout, stderr));

    let session = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"create_ticket","arguments":{{"customer_email":"a@b.example","subject":"{SWEEP_CANARY}"}}}}}}"#
        ),
    ]
    .map(|line| line + "\n")
    .concat();
    let mut mock = toolgate();
    mock.args(["mock", "serve"])
        .arg(examples.join("support-desk/mocks.yaml"))
        .arg("--trace")
        .arg(root.join("mock-trace.jsonl"));
    let (code, stdout, stderr) = with_canary(mock, &session);
    assert_eq!(code, 0, "{stdout}{stderr}");
    outputs.push(("mock serve", String::new(), stderr));
    let served = std::fs::read_to_string(root.join("mock-trace.jsonl")).expect("a trace");
    assert!(served.contains("[redacted]"), "{served}");
    // The session's trace is a `trace.jsonl` that `score` reads (it could not before).
    let mut score_served = toolgate();
    score_served
        .args(["score", "--traces"])
        .arg(root.join("mock-trace.jsonl"))
        .arg("--out")
        .arg(root.join("score-served"));
    let (code, stdout, stderr) = with_canary(score_served, "");
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.starts_with("1 trajectory, 1 tool call;"), "{stdout}");
    outputs.push(("score of mock serve", stdout, stderr));

    let echo_session = session.replace("create_ticket", "echo");
    let mut proxy = toolgate();
    proxy
        .args(["proxy", "--name", "echo", "--trace"])
        .arg(root.join("proxy-trace.jsonl"))
        .arg("--record")
        .arg(root.join("cassettes"))
        .args(["--", "python3"])
        .arg(crate::support::repo().join("tests/peers/broken_server.py"))
        .arg("echo");
    let (code, stdout, stderr) = with_canary(proxy, &echo_session);
    assert_eq!(code, 0, "{stdout}{stderr}");
    outputs.push(("proxy", String::new(), stderr));
    let proxied = std::fs::read_to_string(root.join("proxy-trace.jsonl")).expect("a trace");
    assert!(proxied.contains("[redacted]"), "{proxied}");

    let mut leaks: Vec<String> = files_under(root)
        .into_iter()
        .filter(|(_, text)| text.contains(SWEEP_CANARY))
        .map(|(path, _)| path)
        .collect();
    for (command, stdout, stderr) in outputs {
        if stdout.contains(SWEEP_CANARY) || stderr.contains(SWEEP_CANARY) {
            leaks.push(format!("{command} output"));
        }
    }
    assert_eq!(leaks, Vec::<String>::new());
}
