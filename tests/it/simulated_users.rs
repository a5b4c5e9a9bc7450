//! Simulated users end to end: the `openai` agent against one fake provider and the user
//! simulator against another hold an open conversation that passes; each simulator mistake,
//! injected through the fake simulator, makes the run `inconclusive` with its reason; a
//! conversation recorded once replays offline, with no model at all, to the same conversation,
//! verdict and results; and a scenario with a simulated user but no user model is errored.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use toolgate::agent::Agent;
use toolgate::agent::openai::{OpenAiAgent, OpenAiConfig};
use toolgate::agent::replay::Recordings;
use toolgate::agent::simulator::{Simulator, SimulatorConfig};
use toolgate::catalog::Catalog;
use toolgate::harness::{ToolSet, WorldBackends};
use toolgate::provider::{Api, Endpoint};
use toolgate::runner::{RunOptions, ScenarioRun, run_one};
use toolgate::scenario::{Scenario, load_file};
use toolgate::score::Outcome;
use toolgate::score::conversation::Ended;
use toolgate::score::simulator_mistakes::MistakeKind;
use wiremock::ResponseTemplate;

use crate::support::{FakeProvider, answer, arg, output, repo, tool_calls, toolgate};

/// Two Acme contacts: the note goes on the one the user names when asked; the user knows the
/// name, and the id is for the agent to look up.
const ACME_NOTE: &str = "id: SIM-001\ntier: 2\ntype: ambiguous_input\n\
prompt: Add a note to our Acme contact that the pilot starts in March.\n\
seed_state: fixtures/enterprise.json\n\
simulated_user:\n  goal: A note on Wei Chen at Acme saying that the pilot starts in March.\n  \
facts:\n    - The contact is Wei Chen, the buyer at Acme.\n  never_say:\n    - C-006\n  \
max_messages: 3\n\
expected_calls:\n  - tool: crm_log_activity\n    args_match: {contact_id: C-006, type: note}\n    \
reference_args: {subject: Pilot starts in March}\n";

/// What the agent asks after its search: the two names, no id.
const QUESTION: &str =
    "There are two Acme contacts, Maria Garcia and Wei Chen. Which one should get the note?";

/// The agent's last reply.
const DONE_REPLY: &str = "Done: the note about the March pilot is on Wei Chen.";

fn scenario() -> Scenario {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("SIM-001.yaml");
    std::fs::write(&path, ACME_NOTE).expect("write scenario");
    load_file(&path, &repo(), Catalog::builtin()).expect("the scenario loads")
}

fn reply(body: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(body)
}

/// The agent under test: searches, asks which contact, then (if the user answers) writes the
/// note and says so.
async fn agent_provider() -> FakeProvider {
    FakeProvider::start(
        vec![
            reply(tool_calls(&[(
                "c1",
                "crm_search_contacts",
                r#"{"query": "Acme"}"#,
            )])),
            reply(answer(QUESTION)),
            reply(tool_calls(&[(
                "c2",
                "crm_log_activity",
                r#"{"contact_id": "C-006", "type": "note", "subject": "Pilot starts in March"}"#,
            )])),
            reply(answer(DONE_REPLY)),
        ],
        None,
    )
    .await
}

/// The fake user simulator: says each of `said` in turn.
async fn simulator_provider(said: &[&str]) -> FakeProvider {
    FakeProvider::start(said.iter().map(|text| reply(answer(text))).collect(), None).await
}

fn openai(provider: &FakeProvider) -> Agent {
    let mut config = OpenAiConfig::from_env("agent-model");
    config.endpoint = Endpoint::new(Api::Openai, provider.base_url()).with_key("sk-agent");
    config.max_turns = 6;
    Agent::OpenAi(Box::new(OpenAiAgent::new(config).expect("config")))
}

fn simulator(provider: &FakeProvider, record: Option<&Path>) -> Arc<Simulator> {
    let config = SimulatorConfig::new(
        Endpoint::new(Api::Openai, provider.base_url()).with_key("sk-user"),
        "sim-model",
    );
    Arc::new(Simulator::new(config, record.map(Path::to_path_buf)).expect("simulator config"))
}

async fn run_with(
    agent: &Agent,
    scenario: &Scenario,
    simulator: Option<Arc<Simulator>>,
) -> ScenarioRun {
    let backends = WorldBackends::new(ToolSet::builtin());
    let options = RunOptions {
        user_simulator: simulator,
        ..RunOptions::default()
    };
    run_one(0, 0, scenario, agent, &backends, &options).await
}

/// (user message, calls, reply) of each exchange.
fn exchanges(run: &ScenarioRun) -> Vec<(String, usize, Option<String>)> {
    run.conversation
        .as_ref()
        .expect("a conversation record")
        .exchanges
        .iter()
        .map(|e| (e.user.clone(), e.calls, e.reply.clone()))
        .collect()
}

#[tokio::test]
async fn an_agent_that_asks_the_simulated_user_and_acts_on_the_answer_passes() {
    let scenario = scenario();
    let agent = agent_provider().await;
    let user = simulator_provider(&["Wei Chen, please.", "###DONE###"]).await;
    let run = run_with(&openai(&agent), &scenario, Some(simulator(&user, None))).await;
    assert_eq!(
        run.outcome,
        Outcome::Pass,
        "{:?} {:?}",
        run.error,
        run.score
    );
    assert_eq!(
        exchanges(&run),
        vec![
            (
                "Add a note to our Acme contact that the pilot starts in March.".to_owned(),
                1,
                Some(QUESTION.to_owned())
            ),
            (
                "Wei Chen, please.".to_owned(),
                1,
                Some(DONE_REPLY.to_owned())
            ),
        ]
    );
    assert_eq!(
        run.conversation.as_ref().map(|c| c.ended.clone()),
        Some(Ended::Finished)
    );
    // The agent got the simulator's message as the user's, after its question.
    let agent_requests = agent.requests();
    assert_eq!(agent_requests.len(), 4);
    let messages = agent_requests[2]["messages"].as_array().expect("messages");
    assert_eq!(
        messages.last().map(|m| m["content"].clone()),
        Some(json!("Wei Chen, please."))
    );
    // The simulator saw the conversation with the roles swapped, pinned sampling and its goal.
    let user_requests = user.requests();
    assert_eq!(user_requests.len(), 2);
    let first = &user_requests[0];
    assert_eq!(
        (
            first["model"].clone(),
            first["temperature"].clone(),
            first["seed"].clone(),
            first["max_tokens"].clone()
        ),
        (json!("sim-model"), json!(0.0), json!(0), json!(512))
    );
    let roles: Vec<(&str, &str)> = first["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .skip(1)
        .map(|m| {
            (
                m["role"].as_str().unwrap_or(""),
                m["content"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        roles,
        vec![
            (
                "assistant",
                "Add a note to our Acme contact that the pilot starts in March."
            ),
            ("user", QUESTION),
        ]
    );
    let system = first["messages"][0]["content"]
        .as_str()
        .expect("system prompt");
    assert!(
        system.contains(
            "Your goal: A note on Wei Chen at Acme saying that the pilot starts in March."
        ) && system.contains("- C-006"),
        "{system}"
    );
    assert_eq!(
        user_requests[1]["messages"].as_array().map(Vec::len),
        Some(5)
    );
}

/// Runs the scenario with a simulator whose first message is `said`, and returns the run.
async fn with_first_message(said: &str) -> ScenarioRun {
    let scenario = scenario();
    let agent = agent_provider().await;
    let user = simulator_provider(&[said, "###DONE###"]).await;
    let run = run_with(&openai(&agent), &scenario, Some(simulator(&user, None))).await;
    assert_eq!(
        agent.requests().len(),
        2,
        "the mistaken message never reached the agent"
    );
    assert_eq!(user.requests().len(), 1);
    run
}

/// The run is inconclusive with `kind` and the reason `detail`, and the message was not sent.
fn assert_inconclusive(run: &ScenarioRun, kind: MistakeKind, detail: &str) {
    assert_eq!(run.outcome, Outcome::Inconclusive, "{:?}", run.score);
    assert_eq!(
        run.error.as_deref(),
        Some(
            format!(
                "inconclusive: the user simulator made a mistake ({}: {detail})",
                kind.as_str()
            )
            .as_str()
        )
    );
    assert!(run.judge.is_none());
    let conversation = run.conversation.as_ref().expect("a conversation record");
    assert_eq!(conversation.exchanges.len(), 1);
    match &conversation.ended {
        Ended::SimulatorMistake { mistake, .. } => assert_eq!(*mistake, kind),
        other => panic!("not a mistake: {other:?}"),
    }
}

#[tokio::test]
async fn a_simulator_that_reveals_what_it_must_never_say_makes_the_run_inconclusive() {
    let run = with_first_message("It is Wei Chen, id c-006.").await;
    assert_inconclusive(
        &run,
        MistakeKind::Revealed,
        "it said `C-006`, which it must never say (`never_say`)",
    );
}

#[tokio::test]
async fn a_simulator_that_states_an_identifier_outside_its_facts_makes_the_run_inconclusive() {
    let run = with_first_message("Wei Chen. Put it under order ORD-7741 too.").await;
    assert_inconclusive(
        &run,
        MistakeKind::OutsideFacts,
        "it stated `ORD-7741`, which none of its goal, facts, the prompt and the agent's replies holds",
    );
}

#[tokio::test]
async fn a_simulator_that_ends_while_asked_makes_the_run_inconclusive() {
    let run = with_first_message("###DONE###").await;
    assert_inconclusive(
        &run,
        MistakeKind::EndedEarly,
        "it ended the conversation while the agent's last reply asked it something",
    );
    match &run.conversation.as_ref().expect("record").ended {
        Ended::SimulatorMistake { said, .. } => assert_eq!(*said, None),
        other => panic!("not a mistake: {other:?}"),
    }
}

#[tokio::test]
async fn a_simulator_that_answers_as_the_agent_makes_the_run_inconclusive() {
    let run = with_first_message("I have created the note on Wei Chen for you.").await;
    assert_inconclusive(
        &run,
        MistakeKind::AnsweredAsAgent,
        "it wrote \"i have created\", as the agent would",
    );
}

#[tokio::test]
async fn a_simulated_user_without_a_user_model_makes_the_run_errored() {
    let scenario = scenario();
    let agent = agent_provider().await;
    let run = run_with(&openai(&agent), &scenario, None).await;
    assert_eq!(run.outcome, Outcome::Errored);
    assert_eq!(
        run.error.as_deref(),
        Some(
            "scenario `SIM-001` has a simulated user (`simulated_user`), but no user simulator \
             is configured: pass `--user-model MODEL` (or `user_simulator.model` in \
             toolgate.yaml), or replay a recording with `--user-replay DIR`"
        )
    );
    assert_eq!(agent.requests().len(), 0, "the agent never played");
    // The reference agent knows the solution and asks nobody: it needs no user model.
    let reference = run_with(&Agent::Reference, &scenario, None).await;
    assert_eq!(reference.outcome, Outcome::Pass, "{:?}", reference.score);
    assert!(reference.conversation.is_none());
}

#[tokio::test]
async fn a_recorded_simulator_conversation_replays_offline_to_the_same_conversation() {
    let scenario = scenario();
    let dir = tempfile::tempdir().expect("temp dir");
    let agent = agent_provider().await;
    let user = simulator_provider(&["Wei Chen, please.", "###DONE###"]).await;
    let live = simulator(&user, Some(dir.path()));
    let run = run_with(&openai(&agent), &scenario, Some(live.clone())).await;
    assert_eq!(run.outcome, Outcome::Pass, "{:?}", run.error);
    let recording = std::fs::read_to_string(dir.path().join("users/SIM-001.r0.jsonl"))
        .expect("the simulator's messages were recorded");
    assert_eq!(recording.lines().count(), 3, "{recording}");
    assert!(
        recording.contains(r#""said":"Wei Chen, please.""#),
        "{recording}"
    );
    // Both providers go away: the replay has no model at all.
    drop((agent, user));

    let lines = toolgate::results::run_trace_lines(&scenario, &run);
    let text: String = lines
        .iter()
        .map(|line| serde_json::to_string(line).expect("serializes") + "\n")
        .collect();
    let recordings = Recordings::parse(&text, Path::new("trace.jsonl")).expect("readable");
    let offline = Arc::new(Simulator::replay(dir.path().to_path_buf()).expect("recordings"));
    assert_eq!(offline.pin(), live.pin());
    let replayed = run_with(
        &Agent::Replay(recordings.clone()),
        &scenario,
        Some(offline.clone()),
    )
    .await;
    assert_eq!(replayed.outcome, Outcome::Pass, "{:?}", replayed.error);
    assert_eq!(replayed.conversation, run.conversation);
    assert_eq!(
        replayed.score.map(|s| s.checks),
        run.score.map(|s| s.checks)
    );

    // A conversation the recording does not hold is never guessed: the run is errored.
    let other = text.replace(QUESTION, "Which Acme contact do you mean?");
    let diverged = Recordings::parse(&other, Path::new("trace.jsonl")).expect("readable");
    let missed = run_with(&Agent::Replay(diverged), &scenario, Some(offline)).await;
    assert_eq!(missed.outcome, Outcome::Errored);
    let error = missed.error.unwrap_or_default();
    assert!(
        error.starts_with("not_recorded: user simulator: message 2 after this conversation is not in `")
            && error.ends_with("SIM-001.r0.jsonl`; the agent said something the recording did not (record again with `toolgate gate --user-record DIR` and a user model)"),
        "{error}"
    );
}

/// The results of a `gate` run with what differs between any two runs taken out: the run id
/// and the timings (`duration_ms`, `call_latency_us`), wherever they are.
fn stable_results(out: &Path) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, inner) in map.iter_mut() {
                    if matches!(key.as_str(), "run_id" | "duration_ms" | "call_latency_us") {
                        *inner = Value::Null;
                    } else {
                        strip(inner);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let text = std::fs::read_to_string(out.join("results.json")).expect("results.json");
    let mut results: Value = serde_json::from_str(&text).expect("results are JSON");
    strip(&mut results);
    results
}

/// `toolgate gate --all` on the suite at `root` with the replay agent playing
/// `trajectory.jsonl`, its results in `root/out`, plus `extra`: (exit code, stdout, stderr).
async fn gate(root: &Path, out: &str, extra: &[&str]) -> (i32, String, String) {
    let mut command = toolgate();
    command
        .args(["gate", "--root", &root.display().to_string(), "--all"])
        .args([
            "--agent",
            "replay",
            "--recordings",
            &arg(root, "trajectory.jsonl"),
        ])
        .args([
            "--baseline",
            &arg(root, "none.json"),
            "--out",
            &arg(root, out),
        ])
        .args(extra)
        .env_remove("TOOLGATE_USER_MODEL")
        .env_remove("OPENAI_BASE_URL")
        .env("TOOLGATE_USER_API_KEY", "sk-user-canary");
    tokio::task::spawn_blocking(move || output(command))
        .await
        .expect("join")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gate_records_the_simulated_user_once_and_replays_it_offline_to_identical_results() {
    let suite = crate::support::scratch_suite(&[("SIM-001.yaml", ACME_NOTE)]);
    let root = suite.path();
    std::fs::copy(
        repo().join("fixtures/enterprise.json"),
        root.join("fixtures/enterprise.json"),
    )
    .expect("copy fixture");
    // The agent's side is a recorded trajectory (the replay agent), so only the simulator
    // needs a model, and the replay needs none.
    let trajectory = [
        json!({"scenario": "SIM-001", "tool": "crm_search_contacts", "arguments": {"query": "Acme"}}),
        json!({"scenario": "SIM-001", "reply": QUESTION, "user": "Wei Chen, please."}),
        json!({"scenario": "SIM-001", "tool": "crm_log_activity",
               "arguments": {"contact_id": "C-006", "type": "note", "subject": "Pilot starts in March"}}),
        json!({"scenario": "SIM-001", "final_answer": DONE_REPLY}),
    ];
    let text: String = trajectory
        .iter()
        .map(|line| line.to_string() + "\n")
        .collect();
    std::fs::write(root.join("trajectory.jsonl"), text).expect("write trajectory");
    let user = simulator_provider(&["Wei Chen, please.", "###DONE###"]).await;
    let users = arg(root, "cassettes");
    let base_url = user.base_url();
    let (code, stdout, stderr) = gate(
        root,
        "recorded",
        &[
            "--user-model",
            "sim-model",
            "--user-base-url",
            &base_url,
            "--user-record",
            &users,
        ],
    )
    .await;
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!("user simulator: recorded into {users}/users")),
        "{stdout}"
    );
    assert_eq!(user.requests().len(), 2);
    drop(user);

    // A simulator that answers as the agent spoils the run: inconclusive, shown as such, and
    // (as the only run) no verdict.
    let confused = simulator_provider(&["I have created the note on Wei Chen."]).await;
    let confused_url = confused.base_url();
    let (code, stdout, _) = gate(
        root,
        "confused",
        &[
            "--user-model",
            "sim-model",
            "--user-base-url",
            &confused_url,
        ],
    )
    .await;
    assert_eq!(code, 3, "{stdout}");
    assert!(
        stdout.contains(
            "1 of 1 runs errored, 1 of them inconclusive (the user simulator made a mistake): no \
             verdict"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("INCONCLUSIVE SIM-001"), "{stdout}");
    let confused_results = stable_results(&root.join("confused"));
    assert_eq!(
        confused_results["scenarios"][0]["outcome"],
        json!("inconclusive")
    );
    assert_eq!(
        confused_results["summary"]["overall"],
        json!({"total": 1, "passed": 0, "degraded": 0, "failed": 0, "errored": 1, "inconclusive": 1})
    );
    let junit = std::fs::read_to_string(root.join("confused/junit.xml")).expect("junit.xml");
    assert!(
        junit.contains(
            "<skipped message=\"inconclusive: the user simulator made a mistake (answered_as_agent: \
             it wrote &quot;i have created&quot;, as the agent would)\" type=\"inconclusive\"/>"
        ),
        "{junit}"
    );

    let (code, stdout, stderr) = gate(root, "replayed", &["--user-replay", &users]).await;
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!(
            "user simulator: replayed from the recordings in {users}/users"
        )),
        "{stdout}"
    );
    let recorded = stable_results(&root.join("recorded"));
    assert_eq!(recorded["scenarios"][0]["outcome"], json!("pass"));
    assert_eq!(
        recorded["run"]["user_simulator"]["model"],
        json!("sim-model")
    );
    assert_eq!(
        recorded["run"]["user_simulator"]["prompt_version"],
        json!(1)
    );
    assert!(!recorded.to_string().contains("sk-user-canary"));
    assert_eq!(recorded, stable_results(&root.join("replayed")));

    // Without a user model or a recording, the run is errored with the reason, never a pass.
    let (code, stdout, _) = gate(root, "unplayed", &[]).await;
    assert_eq!(code, 3, "most runs errored: no verdict\n{stdout}");
    let unplayed = stable_results(&root.join("unplayed"));
    assert_eq!(unplayed["scenarios"][0]["outcome"], json!("errored"));
    assert!(
        unplayed["scenarios"][0]["error"]
            .as_str()
            .is_some_and(|error| error.contains("no user simulator is configured")),
        "{unplayed}"
    );
}
