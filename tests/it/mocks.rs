//! Declarative mocks end to end: the support-desk example suite gated on the reference agent
//! and the mutation check, rule semantics through the real harness, load errors, `toolgate
//! mock serve` over stdio and HTTP, `toolgate init`, and the published JSON Schema.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use toolgate::agent::Agent;
use toolgate::harness::client::McpClient;
use toolgate::harness::{BackendFactory, Harness, ToolAnswer};
use toolgate::mock::{self, MockBackend, MockBackends};
use toolgate::runner::{self, RunOptions};
use toolgate::scenario::{self, ScenarioKind};
use toolgate::score::{self, CheckKind, Outcome, ScoringOptions};
use toolgate::verify;

use crate::support::{output, repo, toolgate};

fn desk() -> PathBuf {
    repo().join("examples/support-desk")
}

fn args(value: Value) -> Map<String, Value> {
    value.as_object().cloned().expect("an object")
}

/// Writes `text` as `mocks.yaml` (with `tools.json` holding `tools`) in a temp dir.
fn catalog_in(dir: &Path, text: &str) -> PathBuf {
    let tools = json!({"tools": [
        {"name": "get_ticket", "description": "Get a ticket.", "inputSchema": {"type": "object",
            "properties": {"id": {"type": "string"}}, "required": ["id"]}},
        {"name": "create_ticket", "description": "Create a ticket.", "inputSchema": {"type": "object",
            "properties": {"subject": {"type": "string"}}, "required": ["subject"]}},
        {"name": "close_ticket", "description": "Close a ticket.", "inputSchema": {"type": "object",
            "properties": {"id": {"type": "string"}}, "required": ["id"]}},
        {"name": "ping", "description": "Ping.", "inputSchema": {"type": "object"}}
    ]});
    std::fs::write(dir.join("tools.json"), tools.to_string()).expect("write tools");
    let path = dir.join("mocks.yaml");
    std::fs::write(&path, text).expect("write catalog");
    path
}

const RULES: &str = r#"
schema_version: 1
tools_from: tools.json
tables:
  tickets: {key: id, id_prefix: "T-", rows: [{id: T-1, subject: first, status: open}]}
rules:
  get_ticket:
    - select: {table: tickets, where: {id: "{{args.id}}"}}
      if_found: true
      return: {ticket: "{{row}}", call: "{{call}}", seq: "{{seq}}"}
    - match: {id: {$regex: "^boom"}}
      rpc_error: "upstream exploded on {{args.id}}"
    - match: {id: {$regex: "^T-"}}
      error: "ticket {{args.id}} not found"
  create_ticket:
    - insert: {table: tickets, row: {subject: "{{args.subject}}", status: open}}
      return: {id: "{{row.id}}", open: "{{state.tickets}}"}
  close_ticket:
    - update: {table: tickets, where: {id: "{{args.id}}"}, set: {status: closed}}
      if_found: true
      return: {closed: "{{count}}"}
  ping:
    - sequence:
        - error: warming up
        - return: {pong: 1}
        - return: {pong: 2}
"#;

#[tokio::test]
async fn rules_answer_in_order_and_change_the_tables() {
    let dir = tempfile::tempdir().expect("temp dir");
    let catalog = Arc::new(mock::load(&catalog_in(dir.path(), RULES)).expect("a valid catalog"));
    let backend = MockBackend::new(Arc::clone(&catalog), &json!({})).expect("seeds");
    let harness = Harness::new(Box::new(backend), Vec::new());

    let found = harness.call("get_ticket", args(json!({"id": "T-1"}))).await;
    assert_eq!(
        found,
        ToolAnswer::Success(
            json!({"ticket": {"id": "T-1", "subject": "first", "status": "open"},
                                   "call": 1, "seq": 1})
        )
    );
    let created = harness
        .call("create_ticket", args(json!({"subject": "second"})))
        .await;
    assert_eq!(
        created,
        ToolAnswer::Success(json!({"id": "T-2", "open": [
            {"id": "T-1", "subject": "first", "status": "open"},
            {"subject": "second", "status": "open", "id": "T-2"}]}))
    );
    assert_eq!(
        harness
            .call("close_ticket", args(json!({"id": "T-2"})))
            .await,
        ToolAnswer::Success(json!({"closed": 1}))
    );
    assert_eq!(
        harness.call("get_ticket", args(json!({"id": "T-9"}))).await,
        ToolAnswer::ToolError("ticket T-9 not found".into())
    );
    assert_eq!(
        harness
            .call("get_ticket", args(json!({"id": "boom-1"})))
            .await,
        ToolAnswer::ProtocolError("upstream exploded on boom-1".into())
    );
    let pings: Vec<ToolAnswer> =
        futures::future::join_all((0..4).map(|_| harness.call("ping", Map::new()))).await;
    assert_eq!(
        pings,
        vec![
            ToolAnswer::ToolError("warming up".into()),
            ToolAnswer::Success(json!({"pong": 1})),
            ToolAnswer::Success(json!({"pong": 2})),
            ToolAnswer::Success(json!({"pong": 2})),
        ]
    );
    assert_eq!(
        harness.state().await,
        Some(json!({"tickets": [
            {"id": "T-1", "subject": "first", "status": "open"},
            {"subject": "second", "status": "closed", "id": "T-2"}]}))
    );
    // Arguments the schema rejects never reach the rules.
    assert_eq!(
        harness.call("get_ticket", args(json!({"id": 7}))).await,
        ToolAnswer::ToolError(
            r#"invalid arguments for `get_ticket`: `/id`: 7 is not of type "string""#.into()
        )
    );
}

#[tokio::test]
async fn an_unmatched_call_is_a_tool_error_and_a_failing_check() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = catalog_in(dir.path(), RULES);
    let catalog = Arc::new(mock::load(&path).expect("a valid catalog"));
    let backend = MockBackend::new(Arc::clone(&catalog), &json!({})).expect("seeds");
    let harness = Harness::new(Box::new(backend), Vec::new());
    let answer = harness.call("get_ticket", args(json!({"id": "X-1"}))).await;
    assert_eq!(
        answer,
        ToolAnswer::Unmatched(format!(
            r#"no mock rule of `get_ticket` matches the arguments {{"id":"X-1"}} (mock catalog `{}`): add a rule for this call or fix the call"#,
            path.display()
        ))
    );
    let trace = harness.trace();
    assert!(trace[0].unmatched);
    assert_eq!(trace[0].outcome, toolgate::trace::CallOutcome::ToolError);

    // The call was the expected one, yet the run fails: the suite never said what it returns.
    std::fs::create_dir_all(dir.path().join("scenarios")).expect("mkdir");
    std::fs::write(dir.path().join("seed.json"), "{}").expect("write seed");
    let text = "id: U-1\ntier: 1\ntype: single_call\nprompt: Get X-1.\nseed_state: seed.json\n\
                expected_calls:\n  - tool: get_ticket\n    args_match: {id: X-1}\n";
    let loaded = scenario::load::parse(
        text,
        &dir.path().join("scenarios/U-1.yaml"),
        dir.path(),
        &catalog.catalog(),
    )
    .expect("the scenario loads");
    let scored = score::score(
        &loaded,
        &trace,
        &json!({}),
        Some(&json!({})),
        None,
        ScoringOptions::default(),
    );
    assert_eq!(scored.outcome, Outcome::Fail);
    let failed: Vec<(CheckKind, &str)> = scored
        .failures()
        .map(|check| (check.kind, check.detail.as_str()))
        .collect();
    assert_eq!(
        failed,
        vec![(
            CheckKind::UnmatchedCall,
            "call 1 `get_ticket` matched no mock rule"
        )]
    );
}

#[test]
fn a_bad_catalog_names_the_file_the_field_and_the_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let text = "schema_version: 1\ntools_from: tools.json\ntables:\n  tickets: {}\nrules:\n  get_tiket:\n    - return: {}\n  get_ticket:\n    - match: {id: {$regex: \"(\"}}\n      return: {}\n  create_ticket:\n    - insert: {table: tikets, row: {a: 1}}\n      return: {}\n  close_ticket:\n    - return: \"{{arg.id}}\"\n  ping:\n    - return: {}\n      error: both\n";
    let path = catalog_in(dir.path(), text);
    let error = format!(
        "{:#}",
        mock::load(&path).expect_err("the catalog is invalid")
    );
    let shown = path.display();
    let lines: Vec<&str> = error.lines().collect();
    assert_eq!(lines[0], "invalid mock catalog:");
    assert_eq!(
        lines[1],
        format!(
            "`{shown}`: rules.close_ticket[0].return (line 14): `{{{{arg.id}}}}`: unknown root `arg` (expected one of args, row, rows, count, state, call, seq)"
        )
    );
    assert_eq!(
        lines[2],
        format!(
            "`{shown}`: rules.create_ticket[0].insert.table (line 11): unknown table `tikets` (declared in `tables`: tickets)"
        )
    );
    assert_eq!(
        lines[4],
        format!(
            "`{shown}`: rules.get_tiket (line 6): unknown tool `get_tiket` (did you mean `get_ticket`?)"
        )
    );
    assert_eq!(
        lines[3],
        format!(
            "`{shown}`: rules.get_ticket[0].match.id (line 8): invalid regex `(`: unclosed group"
        )
    );
    assert!(
        error.contains(&format!("`{shown}`: rules.ping[0] (line 16): needs exactly one of `return`, `error`, `rpc_error` (or a `sequence` of them)")),
        "{error}"
    );

    let misspelled = catalog_in(
        dir.path(),
        "schema_version: 1\ntools_from: tools.json\nrules:\n  ping:\n    - retrun: {}\n",
    );
    let error = format!("{:#}", mock::load(&misspelled).expect_err("unknown field"));
    assert!(
        error.starts_with(&format!("`{}`: ", misspelled.display()))
            && error.contains("retrun")
            && error.contains("line 5"),
        "{error}"
    );
}

#[tokio::test]
async fn the_support_desk_suite_passes_the_reference_agent_and_kills_its_mutants() {
    let catalog = Arc::new(mock::load(&desk().join("mocks.yaml")).expect("the catalog loads"));
    let tools = catalog.catalog();
    let suite = scenario::load_dir(&desk().join("scenarios"), &desk(), &tools).expect("loads");
    assert!(suite.len() >= 15, "{} scenarios", suite.len());
    let mut kinds: Vec<ScenarioKind> = suite.iter().map(|s| s.kind).collect();
    kinds.sort();
    kinds.dedup();
    assert_eq!(kinds.len(), 4, "all four scenario types");
    let mut tiers: Vec<u8> = suite.iter().map(|s| s.tier).collect();
    tiers.sort_unstable();
    tiers.dedup();
    assert_eq!(tiers, [1, 2, 3]);

    let backends = MockBackends::new(Arc::clone(&catalog));
    assert_eq!(backends.tools().definitions().len(), 9);
    let plan = runner::RunPlan::new(&suite, Agent::Reference, backends, RunOptions::default());
    let runs = runner::run_suite(&plan, std::future::pending(), &|_| {})
        .await
        .runs;
    let failing: Vec<String> = suite
        .iter()
        .zip(&runs)
        .filter(|(_, run)| run.outcome != Outcome::Pass)
        .map(|(s, run)| format!("{}: {:?} {:?}", s.id, run.error, run.score))
        .collect();
    assert_eq!(failing, Vec::<String>::new());
    // The state the assertions read is the mock tables after the run.
    let escalation = suite
        .iter()
        .position(|s| s.id == "SD3-001")
        .expect("SD3-001 exists");
    let checks = &runs[escalation].score.as_ref().expect("scored").checks;
    assert!(
        checks
            .iter()
            .filter(|c| c.kind == CheckKind::FinalState)
            .all(|c| c.passed)
    );
    assert_eq!(
        checks
            .iter()
            .filter(|c| c.kind == CheckKind::FinalState)
            .count(),
        5
    );

    let report = verify::analyse_suite_in_process(&suite, &runs, plan.backends.as_ref(), &tools)
        .expect("mocks start");
    assert!(report.total() >= 90, "{} mutants", report.total());
    assert!(
        report.kill_rate() >= verify::REQUIRED_KILL_RATE,
        "{}",
        verify::render::render_mutants(&report, true)
    );
    assert!(report.holds());
}

#[test]
fn verify_and_validate_run_the_example_from_its_toolgate_yaml() {
    let mut command = toolgate();
    command.args(["verify", "--mutants", "--root"]).arg(desk());
    let (code, stdout, stderr) = output(command);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.starts_with("17 of 17 scenarios pass with the reference agent\n"),
        "{stdout}"
    );
    assert!(stdout.contains("(100.0%, goal 95%)"), "{stdout}");

    let mut command = toolgate();
    command.args(["validate", "--root"]).arg(desk());
    let (code, stdout, _) = output(command);
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        format!(
            "17 scenarios valid; the smoke set selects 11 (mock catalog `{}`)\n",
            desk().join("mocks.yaml").display()
        )
    );
}

#[tokio::test]
async fn mock_serve_answers_over_stdio_with_the_seeded_tables() {
    let program = env!("CARGO_BIN_EXE_toolgate");
    let client = McpClient::connect_command(
        program,
        &[
            "mock".into(),
            "serve".into(),
            desk().join("mocks.yaml").display().to_string(),
            "--seed".into(),
            desk().join("fixtures/desk.json").display().to_string(),
        ],
    )
    .await
    .expect("the mock server starts");
    let tools = client.list_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 9);
    assert_eq!(tools[0]["name"], "search_tickets");
    let reply = client
        .call_tool(
            "get_ticket",
            args(json!({"ticket_id": "TK-1002"})),
            Duration::from_secs(10),
        )
        .await
        .expect("a result");
    assert!(!reply.is_error);
    assert_eq!(
        reply.structured.expect("structured")["ticket"]["status"],
        "pending"
    );
    let missing = client
        .call_tool(
            "get_ticket",
            args(json!({"ticket_id": "TK-9"})),
            Duration::from_secs(10),
        )
        .await
        .expect("a result");
    assert!(missing.is_error);
    assert_eq!(missing.text, "ticket `TK-9` not found");
    client.close().await.expect("closes");
}

#[tokio::test]
async fn mock_serve_answers_over_streamable_http() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["mock", "serve", "--listen", "127.0.0.1:0"])
        .arg(desk().join("mocks.yaml"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("starts");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("piped"))
        .read_line(&mut line)
        .expect("prints the URL");
    let url = line.trim().rsplit(' ').next().expect("a URL").to_owned();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{line}"
    );
    let client = McpClient::connect_http(&url).await.expect("connects");
    let reply = client
        .call_tool(
            "create_ticket",
            args(json!({"customer_email": "a@b.example", "subject": "Help me"})),
            Duration::from_secs(10),
        )
        .await
        .expect("a result");
    assert_eq!(
        reply.structured,
        Some(json!({"ticket_id": "TK-2001", "status": "open"}))
    );
    let _ = client.close().await;
    child.kill().expect("stops");
    let _ = child.wait();
}

#[test]
fn init_writes_a_suite_whose_drafts_load_pass_and_are_listed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("suite");
    let mut command = toolgate();
    command
        .args(["init", "--tools-json"])
        .arg(desk().join("tools.json"))
        .arg("--dir")
        .arg(&root);
    let (code, stdout, stderr) = output(command);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.ends_with(&format!(
            "27 draft scenarios for 9 tools; edit them, drop `draft: true`, then run `toolgate verify --root {root} --mutants`\n\
             drafts run and count like finished scenarios; `toolgate gate --root {root}` runs the smoke set (smoke-set.yaml: tier 1), `--all` every scenario\n",
            root = root.display()
        )),
        "{stdout}"
    );
    for file in [
        "toolgate.yaml",
        "tools.json",
        "mocks.yaml",
        "fixtures/seed.json",
        "smoke-set.yaml",
        ".github/workflows/toolgate.yml",
        "scenarios/get_ticket-happy.yaml",
        "scenarios/get_ticket-edge.yaml",
        "scenarios/get_ticket-error.yaml",
    ] {
        assert!(root.join(file).is_file(), "{file}");
    }
    // Verified by the reference agent (every draft), a run of the smoke set (its 18 tier-1
    // drafts) is the first baseline, so `gate` compares like with like.
    let baseline = root.join("baseline.json");
    assert!(
        stdout.contains(&format!(
            "wrote {} (the reference agent passed every scenario)\n",
            baseline.display()
        )),
        "{stdout}"
    );
    let report = toolgate::results::RunReport::load(&baseline).expect("a results file");
    assert_eq!(report.scenarios.len(), 18);
    assert_eq!(report.summary.overall.passed, 18);
    let mut gate = toolgate();
    gate.args(["gate", "--root"])
        .arg(&root)
        .arg("--out")
        .arg(dir.path().join("out"));
    let (code, stdout, stderr) = output(gate);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(!stdout.contains("no baseline"), "{stdout}");
    assert!(stdout.contains("(18/18) vs baseline 100.0%"), "{stdout}");
    assert!(
        stdout.contains("| calls per run 1.00 (+0.00) |"),
        "the same scenarios on both sides: {stdout}"
    );
    // Every value a draft sends is in its prompt: no draft reads as inventing an id.
    assert!(stdout.contains("| invented ids 0 |"), "{stdout}");
    let workflow =
        std::fs::read_to_string(root.join(".github/workflows/toolgate.yml")).expect("reads");
    // The same action reference and pinned checkout as the README and docs/ci.md.
    assert!(
        workflow.contains("        uses: OWNER/toolgate@v0.1.0\n"),
        "{workflow}"
    );
    assert!(
        workflow.contains(
            "      - uses: actions/checkout@fbc6f3992d24b796d5a048ff273f7fcc4a7b6c09 # v5.1.0\n"
        ),
        "{workflow}"
    );

    let mut command = toolgate();
    command.args(["verify", "--mutants", "--root"]).arg(&root);
    let (code, stdout, stderr) = output(command);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.starts_with(
            "27 of 27 scenarios pass with the reference agent\n\
             27 of 27 scenarios are drafts still to finish (`draft: true`): add_comment-edge, add_comment-error, add_comment-happy, assign_ticket-edge, "
        ),
        "{stdout}"
    );

    let mut again = toolgate();
    again
        .args(["init", "--tools-json"])
        .arg(desk().join("tools.json"))
        .arg("--dir")
        .arg(&root);
    let (code, _, stderr) = output(again);
    assert_eq!(code, 2);
    assert_eq!(
        stderr.trim_end(),
        format!(
            "error: `{}` already exists; pass --force to overwrite the skeleton's files",
            root.join("toolgate.yaml").display()
        )
    );
}

/// The built-in catalog has an email `pattern` and an object with `minProperties`; a lock of
/// it must still give drafts the reference agent passes, and so a first baseline.
#[test]
fn init_from_a_lock_of_the_builtin_catalog_writes_drafts_that_all_pass() {
    let dir = tempfile::tempdir().expect("temp dir");
    let lock = dir.path().join("lock.json");
    let mut snapshot = toolgate();
    snapshot.args(["snapshot", "--lock"]).arg(&lock);
    let (code, stdout, stderr) = output(snapshot);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let root = dir.path().join("suite");
    let mut command = toolgate();
    command
        .args(["init", "--from-lock"])
        .arg(&lock)
        .arg("--dir")
        .arg(&root);
    let (code, stdout, stderr) = output(command);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains(&format!(
            "wrote {} (the reference agent passed every scenario)\n",
            root.join("baseline.json").display()
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("129 draft scenarios for 43 tools;"),
        "{stdout}"
    );
    let happy = std::fs::read_to_string(root.join("scenarios/admin_create_user-happy.yaml"))
        .expect("reads");
    assert!(
        happy.contains("\"email\":\"user@toolgate.example\""),
        "{happy}"
    );
    // A large suite's drafts are counted, not all named, on one line.
    let mut validate = toolgate();
    validate.args(["validate", "--root"]).arg(&root);
    let (code, stdout, stderr) = output(validate);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let line = stdout
        .lines()
        .find(|line| line.starts_with("129 drafts still to finish (`draft: true`): "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.ends_with(", ... and 119 more"), "{line}");
    assert_eq!(line.matches(", ").count(), 10, "{line}");

    // An expected id edited without its prompt still passes with the reference agent, which
    // plays the scenario's own calls; verify says that an agent could only guess it.
    let path = root.join("scenarios/crm_get_contact-happy.yaml");
    let text = std::fs::read_to_string(&path).expect("reads");
    // The check and the written trajectory both change; the prompt does not.
    let edited = text.replace(
        "{\"contact_id\":\"example-contact_id\"}",
        "{\"contact_id\":\"wrong-id\"}",
    );
    assert_ne!(edited, text);
    std::fs::write(&path, edited).expect("writes");
    let mut verify = toolgate();
    verify.args(["verify", "--root"]).arg(&root);
    let (code, stdout, stderr) = output(verify);
    assert_eq!(code, 0, "a warning, not a failure: {stdout}{stderr}");
    assert!(
        stdout.starts_with(
            "129 of 129 scenarios pass with the reference agent\n\
             129 of 129 scenarios are drafts"
        ),
        "{stdout}"
    );
    // A warning goes to stderr, so stdout stays the report.
    assert_eq!(
        stderr,
        "warning: 1 id value the reference agent sends appears in neither the prompt nor an earlier tool result, so an agent could only guess it (put each in the prompt, or take it from a result with args_from_prior):\n  \
         crm_get_contact-happy: call 1 `crm_get_contact` sends `wrong-id` as `/contact_id`\n"
    );
}

#[test]
fn the_published_schema_accepts_the_example_and_rejects_a_broken_rule() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("schemas/mock-catalog.schema.json")).expect("reads"),
    )
    .expect("JSON");
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let example: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(desk().join("mocks.yaml")).expect("reads"))
            .expect("YAML");
    let errors: Vec<String> = validator
        .iter_errors(&example)
        .map(|e| e.to_string())
        .collect();
    assert_eq!(errors, Vec::<String>::new());
    let broken = json!({"schema_version": 1, "rules": {"t": [{"return": 1, "error": "x"}]}});
    assert!(!validator.is_valid(&broken));
    let misspelled = json!({"schema_version": 1, "rules": {"t": [{"retrun": 1}]}});
    assert!(!validator.is_valid(&misspelled));
}

#[test]
fn init_imports_the_tools_of_a_live_server() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("live");
    let server = format!(
        "{} mock serve {}",
        env!("CARGO_BIN_EXE_toolgate"),
        desk().join("mocks.yaml").display()
    );
    let mut command = toolgate();
    command
        .args(["init", "--from", &server, "--dir"])
        .arg(&root);
    let (code, stdout, stderr) = output(command);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let imported: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("tools.json")).expect("reads"))
            .expect("JSON");
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(desk().join("tools.json")).expect("reads"))
            .expect("JSON");
    let names = |value: &Value| -> Vec<String> {
        value["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|tool| tool["name"].as_str().expect("a name").to_owned())
            .collect()
    };
    assert_eq!(names(&imported), names(&expected));
    assert_eq!(
        imported["tools"][1]["inputSchema"],
        expected["tools"][1]["inputSchema"]
    );

    let mut command = toolgate();
    command.args(["validate", "--root"]).arg(&root);
    let (code, stdout, _) = output(command);
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.starts_with("27 scenarios valid; the smoke set selects 18"),
        "{stdout}"
    );
    assert!(stdout.contains("27 drafts still to finish"), "{stdout}");
}

#[test]
fn gate_runs_on_the_mocks_and_pins_the_catalog_like_a_fixture() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut command = toolgate();
    command
        .args(["gate", "--only", "SD2-002", "--root"])
        .arg(desk())
        .arg("--out")
        .arg(dir.path());
    let (code, stdout, stderr) = output(command);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let results: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("results.json")).expect("reads"),
    )
    .expect("JSON");
    let catalog = std::fs::read(desk().join("mocks.yaml")).expect("reads");
    assert_eq!(
        results["pins"]["fixtures"]["mocks:mocks.yaml"],
        toolgate::fs::sha256_hex(&catalog)
    );
    let trace = std::fs::read_to_string(dir.path().join("trace.jsonl")).expect("reads");
    let first: Value = serde_json::from_str(trace.lines().next().expect("a line")).expect("JSON");
    assert_eq!(first["tool"], "create_ticket");
    assert_eq!(
        first["result"],
        json!({"ticket_id": "TK-2001", "status": "open"})
    );
}

#[test]
fn tools_come_from_a_snapshot_lock_and_inline_definitions_replace_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let lock = json!({"schema_version": 1, "tools": [
        {"server": "desk", "name": "get_ticket", "definition": {"name": "get_ticket",
            "description": "Locked.", "inputSchema": {"type": "object"}}},
        {"server": "desk", "name": "ping", "definition": {"name": "ping",
            "description": "Ping.", "inputSchema": {"type": "object"}}}]});
    std::fs::write(dir.path().join("tools.lock.json"), lock.to_string()).expect("writes");
    let path = dir.path().join("mocks.json");
    std::fs::write(
        &path,
        json!({"schema_version": 1, "tools_from": "tools.lock.json",
               "tools": [{"name": "ping", "description": "Inline.", "inputSchema": {"type": "object"}}],
               "rules": {"ping": [{"return": {"pong": true}}]}})
        .to_string(),
    )
    .expect("writes");
    let catalog = mock::load(&path).expect("loads");
    let described: Vec<(&str, &str)> = catalog
        .tools
        .definitions()
        .iter()
        .map(|d| {
            (
                d["name"].as_str().expect("name"),
                d["description"].as_str().expect("description"),
            )
        })
        .collect();
    assert_eq!(described, [("get_ticket", "Locked."), ("ping", "Inline.")]);

    std::fs::write(&path, r#"{"schema_version": 1, "tools_from": "tools.lock.json", "rules": {"ping": [{"retrun": 1}]}}"#)
        .expect("writes");
    let error = format!("{:#}", mock::load(&path).expect_err("unknown field"));
    assert!(
        error.starts_with(&format!(
            "`{}`: rules.ping[0].retrun: unknown field `retrun`",
            path.display()
        )),
        "{error}"
    );
}

#[tokio::test]
async fn a_seed_state_with_an_undeclared_table_errors_the_run_naming_it() {
    let catalog = Arc::new(mock::load(&desk().join("mocks.yaml")).expect("loads"));
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join("scenarios")).expect("mkdir");
    std::fs::write(dir.path().join("seed.json"), r#"{"tikets": []}"#).expect("writes");
    let text = "id: X-1\ntier: 1\ntype: single_call\nprompt: List open tickets.\nseed_state: seed.json\n\
                expected_calls:\n  - tool: search_tickets\n    args_match: {status: open}\n";
    let loaded = scenario::load::parse(
        text,
        &dir.path().join("scenarios/X-1.yaml"),
        dir.path(),
        &catalog.catalog(),
    )
    .expect("loads");
    let backends = MockBackends::new(Arc::clone(&catalog));
    let error = backends
        .start(&loaded, 0)
        .await
        .err()
        .expect("the seed is refused");
    assert_eq!(
        error,
        format!(
            "failed to seed the mocks of `{}` from `seed.json`: the seed state has table `tikets`, which the mock catalog does not declare (declared: agents, comments, customers, replies, tickets)",
            desk().join("mocks.yaml").display()
        )
    );
}

/// The `scoring:` modes of toolgate.yaml reach a mock suite's argument checks as they reach
/// the built-in world's: `limit: 3.0` is an integer under JSON Schema, not under `bfcl`.
#[test]
fn scoring_modes_apply_to_a_mock_suites_arguments() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    let files = [
        (
            "tools.json",
            r#"{"tools": [{"name": "list_items", "description": "List up to `limit` items.",
                "inputSchema": {"type": "object", "properties": {"limit": {"type": "integer"}},
                                "required": ["limit"]}}]}"#,
        ),
        (
            "mocks.yaml",
            "schema_version: 1\ntools_from: tools.json\ntables:\n  items: {key: id, id_prefix: \"I-\"}\nrules:\n  list_items:\n    - return: {count: 0}\n",
        ),
        ("fixtures/seed.json", r#"{"items": []}"#),
        (
            "scenarios/M1-001.yaml",
            "id: M1-001\ntier: 1\ntype: single_call\nprompt: List three items.\nseed_state: fixtures/seed.json\nexpected_calls:\n  - tool: list_items\n    args_match: {limit: 3}\nmax_calls: 2\n",
        ),
        ("smoke-set.yaml", "tiers: [1]\n"),
        (
            "trace.jsonl",
            "{\"scenario\": \"M1-001\", \"tool\": \"list_items\", \"arguments\": {\"limit\": 3.0}}\n{\"scenario\": \"M1-001\", \"final_answer\": \"None.\"}\n",
        ),
    ];
    for (name, text) in files {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    let outcome = |config: &str| {
        std::fs::write(root.join("toolgate.yaml"), config).expect("write");
        let mut gate = toolgate();
        gate.args([
            "gate",
            "--agent",
            "replay",
            "--collect-only",
            "--recordings",
        ])
        .arg(root.join("trace.jsonl"))
        .arg("--root")
        .arg(root)
        .arg("--out")
        .arg(root.join("out"));
        let (code, stdout, stderr) = output(gate);
        assert_eq!(code, 0, "{stdout}{stderr}");
        let report =
            toolgate::results::RunReport::load(&root.join("out/results.json")).expect("results");
        let result = &report.scenarios[0];
        let schema = result
            .checks
            .iter()
            .find(|c| c.kind == toolgate::score::CheckKind::ArgsSchema)
            .map(|c| c.passed);
        (result.outcome, schema)
    };
    let mocks = "mocks:\n  catalog: mocks.yaml\n";
    assert_eq!(outcome(mocks), (toolgate::score::Outcome::Pass, Some(true)));
    assert_eq!(
        outcome(&format!("{mocks}scoring:\n  numbers: bfcl\n")),
        (toolgate::score::Outcome::Fail, Some(false))
    );
}

/// A confused pair on a mock catalog is pointed at the look-alike lint of the tools the run was
/// served, never at the built-in catalog (where every mock tool would read as invented).
#[test]
fn confused_tools_are_compared_in_the_served_catalog() {
    let dir = tempfile::tempdir().expect("temp dir");
    let agent = dir.path().join("agent.py");
    std::fs::write(
        &agent,
        "import os, sys\nfrom scripted_agent import McpClient\n\
         sys.stdin.read()\n\
         client = McpClient(os.environ['TOOLGATE_MCP_URL'])\nclient.initialize()\n\
         client.call('send_reply', {'ticket_id': 'TK-1003', 'body': 'Waiting on the logs.'})\n\
         print('Noted.')\n",
    )
    .expect("write the agent");
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut command = toolgate();
    command
        .args([
            "gate",
            "--only",
            "SD1-005",
            "--agent",
            "command",
            "--command",
        ])
        .arg(format!(
            "PYTHONPATH='{}' python3 '{}'",
            examples.display(),
            agent.display()
        ))
        .arg("--root")
        .arg(desk())
        .arg("--out")
        .arg(dir.path().join("out"));
    let (code, stdout, stderr) = output(command);
    // Without a baseline only Tier 5 blocks: the run fails, the gate does not.
    assert_eq!(code, 0, "{stdout}{stderr}");
    let results: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/results.json")).expect("reads"),
    )
    .expect("JSON");
    let pair = &results["confused_pairs"][0];
    assert_eq!(
        (&pair["expected"], &pair["called"], &pair["count"]),
        (&json!("add_comment"), &json!("send_reply"), &json!(1)),
        "{results:#}"
    );
    assert_eq!(results["summary"]["overall"]["failed"], 1);
    assert_eq!(pair["lint"]["status"], "flagged", "{pair}");
    assert_eq!(pair["lint"]["tool"], "add_comment", "{pair}");
    let similarity = pair["lint"]["similarity"].as_f64().expect("a similarity");
    assert!(similarity > 0.5 && similarity < 1.0, "{pair}");
    assert!(
        stdout.contains("add_comment -> send_reply (1): lint `look_alike_tools` on `add_comment`"),
        "{stdout}"
    );
}
