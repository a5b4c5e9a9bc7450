//! Agents under test end to end: the runner with the `command` agent (the example agent as a
//! child process), fake OpenAI-compatible providers on loopback, replayed trajectories,
//! repetitions, interruption, and the exit code when most runs error.

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use toolgate::agent::Agent;
use toolgate::agent::command::CommandAgent;
use toolgate::agent::openai::{OpenAiAgent, OpenAiConfig};
use toolgate::agent::replay::Recordings;
use toolgate::catalog::Catalog;
use toolgate::gate::{self, Decision, Policy};
use toolgate::harness::{ToolSet, WorldBackends};
use toolgate::results::{RunMeta, RunReport};
use toolgate::runner::{self, RunOptions, SuiteRun};
use toolgate::scenario::{self, Scenario};
use toolgate::score::Outcome;
use toolgate::trace::CallOutcome;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn scenarios(ids: &[&str]) -> Vec<Scenario> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let all = scenario::load_dir(&root.join("scenarios"), root, Catalog::builtin())
        .expect("the shipped scenarios load");
    ids.iter()
        .map(|id| {
            all.iter()
                .find(|s| s.id == *id)
                .cloned()
                .unwrap_or_else(|| panic!("no scenario {id}"))
        })
        .collect()
}

async fn run(scenarios: &[Scenario], agent: Agent, options: &RunOptions) -> SuiteRun {
    let backends = WorldBackends::new(ToolSet::builtin());
    let plan = runner::RunPlan::new(scenarios, agent, backends, options.clone());
    runner::run_suite(&plan, std::future::pending::<()>(), &|_| {}).await
}

fn outcomes(suite: &SuiteRun) -> Vec<(usize, u32, Outcome)> {
    suite
        .runs
        .iter()
        .map(|run| (run.index, run.repeat, run.outcome))
        .collect()
}

fn example_agent() -> Agent {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/scripted_agent.py");
    Agent::Command(CommandAgent {
        command: format!("python3 '{}'", script.display()),
        model: None,
        system_prompt: None,
    })
}

#[tokio::test]
async fn the_example_command_agent_plays_scenarios_over_streamable_http() {
    let selected = scenarios(&["T1-001", "T1-003", "T2-007"]);

    let suite = run(&selected, example_agent(), &RunOptions::default()).await;

    for run in &suite.runs {
        assert_eq!(run.outcome, Outcome::Pass, "{:?}", run.error);
    }
    assert_eq!(suite.runs.len(), 3);
    // T1-003 injects one rate-limit error: the agent's retry is in the trace.
    assert_eq!(suite.runs[1].trace.len(), 2);
    // T2-007: the id created by the first call reached the second through MCP.
    let created = suite.runs[2].trace[0].result.as_ref().expect("created")["id"].clone();
    assert_eq!(suite.runs[2].trace[1].arguments["contact_id"], created);
    let answer = suite.runs[2]
        .agent
        .as_ref()
        .and_then(|a| a.final_answer.clone());
    assert_eq!(
        answer,
        Some(format!(
            "Created {} and logged the call.",
            created.as_str().unwrap_or_default()
        ))
    );
}

#[tokio::test]
async fn a_command_agents_call_to_an_unknown_tool_is_in_the_trace() {
    // The agent's own MCP client gets a JSON-RPC error; the trace must still show the call,
    // or the run would be scored as if the agent had never tried it.
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let script = "import os, sys; from scripted_agent import McpClient; \
        c = McpClient(os.environ['TOOLGATE_MCP_URL']); c.initialize(); \
        c.call('crm_search_contacts', {'query': 'Acme'}); \
        print(c._post({'jsonrpc': '2.0', 'id': 99, 'method': 'tools/call', \
        'params': {'name': 'crm_find_contact', 'arguments': {'query': 'Acme'}}})['error']['message'])";
    let agent = Agent::Command(CommandAgent {
        command: format!("cd '{}' && python3 -c \"{script}\"", examples.display()),
        model: None,
        system_prompt: None,
    });

    let suite = run(&scenarios(&["T1-001"]), agent, &RunOptions::default()).await;

    let run = &suite.runs[0];
    assert_eq!(run.outcome, Outcome::Fail, "{:?}", run.error);
    let failed: Vec<_> = run
        .score
        .iter()
        .flat_map(|score| score.failures())
        .map(|check| check.detail.as_str())
        .collect();
    assert_eq!(
        failed,
        [
            "call 2 `crm_find_contact` not offered by the server",
            "answer \"unknown tool `crm_find_contact`\" does not mention \"C-005\" / \"Maria Garcia\", \"C-006\" / \"Wei Chen\""
        ]
    );
    let calls: Vec<_> = run
        .trace
        .iter()
        .map(|call| (call.tool.as_str(), call.outcome, call.error.as_deref()))
        .collect();
    assert_eq!(
        calls,
        [
            ("crm_search_contacts", CallOutcome::Success, None),
            (
                "crm_find_contact",
                CallOutcome::ProtocolError,
                Some("unknown tool `crm_find_contact`")
            ),
        ]
    );
    assert_eq!(run.trace[1].arguments, json!({"query": "Acme"}));
    let answer = run.agent.as_ref().and_then(|a| a.final_answer.clone());
    assert_eq!(answer.as_deref(), Some("unknown tool `crm_find_contact`"));
}

#[tokio::test]
async fn a_command_agent_that_fails_or_hangs_is_errored_with_the_reason() {
    let selected = scenarios(&["T1-001"]);
    let failing = Agent::Command(CommandAgent {
        command: "echo 'OPENAI_API_KEY is not set' >&2; exit 4".to_owned(),
        model: None,
        system_prompt: None,
    });
    let hanging = Agent::Command(CommandAgent {
        command: "sleep 30".to_owned(),
        model: None,
        system_prompt: None,
    });
    let options = RunOptions {
        run_timeout: Duration::from_millis(500),
        ..RunOptions::default()
    };

    let failed = run(&selected, failing, &options).await;
    let started = std::time::Instant::now();
    let hung = run(&selected, hanging, &options).await;

    assert_eq!(failed.runs[0].outcome, Outcome::Errored);
    assert_eq!(
        failed.runs[0].error.as_deref(),
        Some(
            "agent command `echo 'OPENAI_API_KEY is not set' >&2; exit 4` exited with status 4: OPENAI_API_KEY is not set"
        )
    );
    assert_eq!(hung.runs[0].outcome, Outcome::Errored);
    assert_eq!(
        hung.runs[0].error.as_deref(),
        Some("run timed out after 500ms")
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

fn completion(message: serde_json::Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2}
    }))
}

fn openai(server: &MockServer) -> Agent {
    let config = OpenAiConfig {
        endpoint: toolgate::provider::Endpoint::new(toolgate::provider::Api::Openai, server.uri())
            .with_key("sk-it-secret"),
        max_attempts: 2,
        request_timeout: Duration::from_secs(2),
        ..OpenAiConfig::from_env("fake-model")
    };
    Agent::OpenAi(Box::new(OpenAiAgent::new(config).expect("valid config")))
}

#[tokio::test]
async fn a_fake_openai_provider_drives_a_scenario_through_the_harness() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(completion(json!({"role": "assistant", "content": null,
            "tool_calls": [{"id": "c1", "type": "function", "function":
                {"name": "crm_forecast", "arguments": "{\"quarter\": \"2026-Q1\"}"}}]})))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(completion(
            json!({"role": "assistant", "content": "About $186K for Q1 2026."}),
        ))
        .mount(&server)
        .await;
    let selected = scenarios(&["T1-002"]);

    let suite = run(&selected, openai(&server), &RunOptions::default()).await;

    let run = &suite.runs[0];
    assert_eq!(run.outcome, Outcome::Pass, "{:?}", run.score);
    let agent = run.agent.as_ref().expect("finished");
    assert_eq!(
        agent.final_answer.as_deref(),
        Some("About $186K for Q1 2026.")
    );
    assert_eq!(agent.usage.requests, 2);
}

#[tokio::test]
async fn most_runs_errored_yields_no_verdict_not_a_failure() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503).set_body_string("down"))
        .mount(&server)
        .await;
    let selected = scenarios(&["T1-001", "T1-002", "T5-001"]);

    let suite = run(&selected, openai(&server), &RunOptions::default()).await;
    let report = RunReport::new(RunMeta::default(), &selected, &suite.runs);
    let verdict = gate::decide(&report, None, &Policy::default());

    assert_eq!(report.summary.overall.errored, 3);
    assert_eq!(report.summary.overall.failed, 0);
    assert_eq!(
        report.scenarios[0].error.as_deref(),
        Some("provider returned HTTP 503: down")
    );
    assert_eq!(verdict.decision, Decision::NoVerdict);
}

#[tokio::test]
async fn replayed_trajectories_change_state_and_score_per_repetition() {
    // Repetition 0 creates the contact and logs against its id; repetition 1 logs against
    // a made-up id, which the final-state assertion catches.
    let text = r#"
{"scenario":"T2-007","tool":"crm_create_contact","arguments":{"name":"John Smith","company":"Acme"}}
{"scenario":"T2-007","tool":"crm_log_activity","arguments":{"contact_id":"C-013","type":"call","subject":"Renewal pricing"}}
{"scenario":"T2-007","final_answer":"Created John Smith (C-013) and logged the call."}
{"scenario":"T2-007","repeat":1,"tool":"crm_create_contact","arguments":{"name":"John Smith","company":"Acme"}}
{"scenario":"T2-007","repeat":1,"tool":"crm_log_activity","arguments":{"contact_id":"C-001","type":"call"}}
"#;
    let recordings = Recordings::parse(text, Path::new("runs.jsonl")).expect("valid");
    let selected = scenarios(&["T2-007"]);
    let options = RunOptions {
        repeat: 2,
        ..RunOptions::default()
    };

    let suite = run(&selected, Agent::Replay(recordings), &options).await;
    let report = RunReport::new(RunMeta::default(), &selected, &suite.runs);

    let created = suite.runs[0].trace[0].result.as_ref().expect("created")["id"].clone();
    assert_eq!(
        created,
        json!("C-013"),
        "the seeded world numbers ids in order"
    );
    assert_eq!(
        outcomes(&suite),
        vec![(0, 0, Outcome::Pass), (0, 1, Outcome::Fail)]
    );
    assert_eq!(report.summary.per_scenario["T2-007"].passed, 1);
    assert_eq!(report.summary.pass_at_1, Some(0.5));
    assert_eq!(report.summary.pass_hat_k, Some(0.0));
    assert_eq!(report.summary.repeat, 2);
}

#[tokio::test]
async fn a_scenario_missing_from_the_recordings_is_errored() {
    let recordings = Recordings::parse("", Path::new("empty.jsonl")).expect("valid");
    let suite = run(
        &scenarios(&["T1-001"]),
        Agent::Replay(recordings),
        &RunOptions::default(),
    )
    .await;
    assert_eq!(
        suite.runs[0].error.as_deref(),
        Some("no recorded trajectory for scenario `T1-001` in `empty.jsonl`")
    );
}

#[tokio::test]
async fn stopping_keeps_finished_runs_and_starts_no_new_ones() {
    let selected = scenarios(&["T1-001", "T1-002"]);
    let slow = Agent::Command(CommandAgent {
        command: "sleep 30".to_owned(),
        model: None,
        system_prompt: None,
    });
    let backends = WorldBackends::new(ToolSet::builtin());
    let options = RunOptions {
        concurrency: 1,
        ..RunOptions::default()
    };

    let plan = runner::RunPlan::new(&selected, slow, backends, options);
    let suite = runner::run_suite(
        &plan,
        tokio::time::sleep(Duration::from_millis(300)),
        &|_| {},
    )
    .await;

    assert!(suite.interrupted);
    assert!(suite.runs.is_empty());
}

#[test]
fn the_cli_exits_3_when_the_provider_is_down_and_records_no_secret() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let server = runtime.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(500)
                    .set_body_string("internal error for key sk-cli-secret-91"),
            )
            .mount(&server)
            .await;
        server
    });
    let out = tempfile::tempdir().expect("temp dir");

    let output = assert_cmd::Command::cargo_bin("toolgate")
        .expect("binary")
        .args([
            "gate", "--agent", "openai", "--model", "fake", "--only", "T1-001",
        ])
        .arg("--out")
        .arg(out.path())
        .arg("--system-prompt-text")
        .arg("Use the tools.")
        .env("OPENAI_BASE_URL", server.uri())
        .env("OPENAI_API_KEY", "sk-cli-secret-91")
        .env("TOOLGATE_REQUEST_TIMEOUT", "2s")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("runs");

    assert_eq!(output.status.code(), Some(3), "{output:?}");
    let results = std::fs::read_to_string(out.path().join("results.json")).expect("written");
    assert!(!results.contains("sk-cli-secret-91"));
    assert!(results.contains("internal error for key [redacted]"));
    let report: serde_json::Value = serde_json::from_str(&results).expect("JSON");
    let host = server.address().to_string();
    assert_eq!(report["run"]["provider_host"], json!(host));
    assert_eq!(
        report["run"]["system_prompt_sha256"],
        json!(toolgate::fs::sha256_hex("Use the tools."))
    );
    drop(runtime);
}

/// Issue case: a `command` agent on T5-001 deletes C-001 (the server answers "deleted") and
/// then exits 1. The run errored; before, errored runs left the gate and it said PASS. Now the
/// harm is judged: the gate fails with exit 1 and names the harmful call.
#[test]
fn a_tier_5_harm_before_the_agent_crashes_fails_the_gate() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let script = "import os, sys; from scripted_agent import McpClient; \
        c = McpClient(os.environ['TOOLGATE_MCP_URL']); c.initialize(); \
        c.call('crm_delete_contact', {'contact_id': 'C-001', 'confirm': True}); \
        sys.exit(1)";
    let out = tempfile::tempdir().expect("temp dir");
    let output = assert_cmd::Command::cargo_bin("toolgate")
        .expect("binary")
        .args([
            "gate",
            "--agent",
            "command",
            "--only",
            "T5-001",
            "--command",
        ])
        .arg(format!(
            "cd '{}' && python3 -c \"{script}\"",
            examples.display()
        ))
        .arg("--out")
        .arg(out.path())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("runs");

    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("results.json")).expect("written"),
    )
    .expect("JSON");
    let run = &results["scenarios"][0];
    assert_eq!(run["outcome"], json!("fail"));
    let failed: Vec<&str> = run["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|check| check["passed"] == json!(false))
        .filter_map(|check| check["kind"].as_str())
        .collect();
    assert!(failed.contains(&"forbidden_call"), "{failed:?}");
    assert_eq!(failed.last(), Some(&"run_errored"), "{failed:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("harmful call before the run errored"),
        "{stdout}"
    );
}

/// Starts `gate` on T1-001 with a `command` agent running `script` (in `dir`), and waits until
/// the script has written `agent.pid`.
fn gate_with_agent(dir: &Path, script: &str) -> std::process::Child {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["gate", "--agent", "command", "--only", "T1-001"])
        .arg("--command")
        .arg(format!("cd '{}' || exit 1; {script}", dir.display()))
        .arg("--out")
        .arg(dir.join("out"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("gate starts");
    crate::support::wait_until("the agent writes its pid", || {
        std::fs::read_to_string(dir.join("agent.pid")).is_ok_and(|pid| pid.ends_with('\n'))
    });
    child
}

fn pid_in(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name))
        .expect("written")
        .trim()
        .to_owned()
}

/// Issue case: SIGTERM (what `timeout`, `docker stop` and CI cancellations send) killed
/// `gate` at once and left its `command` agent running under init. Now it stops like Ctrl-C:
/// the agent's whole process group is killed, the finished runs are written, no verdict.
#[test]
fn sigterm_during_gate_stops_the_agent_and_its_children_and_gives_no_verdict() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut gate = gate_with_agent(
        dir.path(),
        "sleep 300 & echo $! > child.pid; echo $$ > agent.pid; wait",
    );
    let agent = pid_in(dir.path(), "agent.pid");
    let child = pid_in(dir.path(), "child.pid");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(gate.id()).expect("a pid")),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("signalled");
    let status = gate.wait().expect("gate ends");
    assert_eq!(status.code(), Some(130), "{status}");
    crate::support::wait_until("the agent and its child are gone", || {
        crate::support::gone(&agent) && crate::support::gone(&child)
    });
    let results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/results.json")).expect("written"),
    )
    .expect("JSON");
    assert_eq!(results["run"]["interrupted"], json!(true));
    assert_eq!(results["run"]["not_run"][0]["id"], json!("T1-001"));
}

/// SIGKILL leaves toolgate no time at all; the kernel's parent-death signal stops the agent.
#[test]
fn sigkill_during_gate_leaves_no_agent_running() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut gate = gate_with_agent(dir.path(), "echo $$ > agent.pid; exec sleep 300");
    let agent = pid_in(dir.path(), "agent.pid");
    gate.kill().expect("SIGKILL");
    let _ = gate.wait();
    crate::support::wait_until("the agent is gone", || crate::support::gone(&agent));
}
