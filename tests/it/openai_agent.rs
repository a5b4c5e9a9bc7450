//! The `openai` agent driven by a fake provider on loopback through a multi-step scenario,
//! including a tool call with malformed arguments.

use serde_json::json;
use toolgate::agent::openai::{OpenAiAgent, OpenAiConfig};
use toolgate::agent::{Agent, InvalidCallKind};
use toolgate::catalog::Catalog;
use toolgate::harness::{ToolSet, WorldBackends};
use toolgate::runner::{RunOptions, run_one};
use toolgate::scenario::load_file;
use toolgate::score::{CheckKind, Outcome};
use toolgate::trace::{CallNote, CallOutcome};
use wiremock::ResponseTemplate;

use crate::support::{FakeProvider, answer, repo, tool_calls};

fn reply(body: serde_json::Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(body)
}

/// The `openai` agent on `provider`, six turns at most.
fn fake_agent(provider: &FakeProvider) -> Agent {
    let mut config = OpenAiConfig::from_env("fake-model");
    config.endpoint =
        toolgate::provider::Endpoint::new(toolgate::provider::Api::Openai, provider.base_url())
            .with_key("sk-test");
    config.max_turns = 6;
    Agent::OpenAi(Box::new(OpenAiAgent::new(config).expect("config")))
}

async fn run_t2_007(
    script: Vec<ResponseTemplate>,
) -> (toolgate::runner::ScenarioRun, FakeProvider) {
    run_t2_007_with(script, &RunOptions::default()).await
}

async fn run_t2_007_with(
    script: Vec<ResponseTemplate>,
    options: &RunOptions,
) -> (toolgate::runner::ScenarioRun, FakeProvider) {
    let provider = FakeProvider::start(script, None).await;
    let scenario = load_file(
        &repo().join("scenarios/tier2/T2-007.json"),
        &repo(),
        Catalog::builtin(),
    )
    .expect("T2-007 loads");
    let agent = fake_agent(&provider);
    let backends = WorldBackends::new(ToolSet::builtin());
    let run = run_one(0, 0, &scenario, &agent, &backends, options).await;
    (run, provider)
}

#[tokio::test]
async fn a_model_that_recovers_from_malformed_arguments_passes_t2_007() {
    let (run, provider) = run_t2_007(vec![
        reply(tool_calls(&[(
            "c1",
            "crm_create_contact",
            r#"{"name": "John Smith", "company": "Acme"}"#,
        )])),
        reply(tool_calls(&[(
            "c2",
            "crm_log_activity",
            r#"{"contact_id": "C-013", "type": "#,
        )])),
        reply(tool_calls(&[(
            "c3",
            "crm_log_activity",
            r#"{"contact_id": "C-013", "type": "call", "subject": "Renewal pricing"}"#,
        )])),
        reply(answer("Created John Smith (C-013) and logged the call.")),
    ])
    .await;
    assert_eq!(run.outcome, Outcome::Pass, "{:?}", run.score);
    let outcomes: Vec<CallOutcome> = run.trace.iter().map(|call| call.outcome).collect();
    assert_eq!(
        outcomes,
        vec![
            CallOutcome::Success,
            CallOutcome::InvalidCall,
            CallOutcome::Success
        ]
    );
    assert_eq!(
        run.trace[1].invalid,
        Some(InvalidCallKind::UnparseableArguments)
    );
    // The parser's note reaches the trace, and only the call it concerns.
    assert_eq!(run.trace[1].notes, vec![CallNote::PossiblyTruncated]);
    assert_eq!(run.trace[0].notes, vec![]);
    assert_eq!(run.trace[2].notes, vec![]);
    assert_eq!(
        run.trace[1].arguments,
        json!(r#"{"contact_id": "C-013", "type": "#)
    );
    assert_eq!(
        run.trace[0].result.as_ref().map(|r| r["id"].clone()),
        Some(json!("C-013"))
    );
    // Turn 2 carried the created contact back to the model as the tool result.
    let requests = provider.requests();
    assert_eq!(requests.len(), 4);
    let tool_message = &requests[1]["messages"]
        .as_array()
        .expect("messages")
        .last()
        .cloned()
        .expect("a message");
    assert_eq!(tool_message["role"], "tool");
    assert_eq!(tool_message["tool_call_id"], "c1");
    assert!(
        tool_message["content"]
            .as_str()
            .is_some_and(|c| c.contains("\"id\":\"C-013\"")),
        "{tool_message}"
    );
    assert_eq!(
        run.agent.and_then(|a| a.final_answer).as_deref(),
        Some("Created John Smith (C-013) and logged the call.")
    );
}

/// The two calls T2-007 needs, made right.
fn t2_007_calls() -> Vec<ResponseTemplate> {
    vec![
        reply(tool_calls(&[(
            "c1",
            "crm_create_contact",
            r#"{"name": "John Smith", "company": "Acme"}"#,
        )])),
        reply(tool_calls(&[(
            "c2",
            "crm_log_activity",
            r#"{"contact_id": "C-013", "type": "call", "subject": "Renewal pricing"}"#,
        )])),
    ]
}

#[tokio::test]
async fn a_reply_cut_at_the_default_output_limit_fails_the_run_as_truncated() {
    let mut script = t2_007_calls();
    // Every value the answer needs is there, but the reply stopped at the limit mid-sentence.
    script.push(reply(
        json!({"choices": [{"index": 0, "finish_reason": "length",
        "message": {"role": "assistant",
                    "content": "Created John Smith (C-013) and logged the call. Next I"}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 4096}}),
    ));
    let (run, provider) = run_t2_007(script).await;

    assert_eq!(run.outcome, Outcome::Fail, "{:?}", run.score);
    assert_eq!(run.error, None);
    let failures: Vec<CheckKind> = run
        .score
        .as_ref()
        .expect("scored")
        .failures()
        .map(|check| check.kind)
        .collect();
    assert_eq!(failures, vec![CheckKind::Truncated]);
    assert!(run.agent.as_ref().is_some_and(|agent| agent.truncated));
    // The limit is sent by default, as `max_tokens` to a server that is not OpenAI's own.
    for request in provider.requests() {
        assert_eq!(request["max_tokens"], 4096, "{request}");
        assert_eq!(request.get("max_completion_tokens"), None);
    }
}

#[tokio::test]
async fn a_model_still_generating_when_the_run_times_out_is_judged_on_its_calls() {
    let mut script = t2_007_calls();
    script.truncate(1);
    script.push(reply(answer("never read")).set_delay(std::time::Duration::from_secs(30)));
    let options = RunOptions {
        run_timeout: std::time::Duration::from_secs(2),
        ..RunOptions::default()
    };
    let (run, _provider) = run_t2_007_with(script, &options).await;

    assert_eq!(
        run.outcome,
        Outcome::Fail,
        "{:?} {:?}",
        run.error,
        run.score
    );
    assert_eq!(run.error, None);
    assert_eq!(run.trace.len(), 1);
    let agent = run.agent.as_ref().expect("an outcome");
    assert!(agent.timed_out);
    assert_eq!(agent.turns, 1);
    let score = run.score.as_ref().expect("scored");
    let timed_out: Vec<&str> = score
        .failures()
        .filter(|check| check.kind == CheckKind::TimedOut)
        .map(|check| check.detail.as_str())
        .collect();
    assert_eq!(
        timed_out,
        vec![
            "the run ran out of time (2s) while the model was generating; judged on the calls it made"
        ]
    );
    // The call it made is judged as any other: the activity was never logged.
    assert!(
        score
            .failures()
            .any(|check| check.kind == CheckKind::ToolSelection),
        "{score:?}"
    );
}

#[tokio::test]
async fn a_provider_that_never_answers_leaves_the_run_errored() {
    let script = vec![reply(answer("never read")).set_delay(std::time::Duration::from_secs(30))];
    let options = RunOptions {
        run_timeout: std::time::Duration::from_secs(1),
        ..RunOptions::default()
    };
    let (run, _provider) = run_t2_007_with(script, &options).await;

    assert_eq!(run.outcome, Outcome::Errored);
    assert_eq!(run.error.as_deref(), Some("run timed out after 1s"));
    assert!(run.score.is_none());
}

#[tokio::test]
async fn a_model_that_invents_the_contact_id_fails_args_from_prior() {
    let (run, _) = run_t2_007(vec![
        reply(tool_calls(&[(
            "c1",
            "crm_create_contact",
            r#"{"name": "John Smith", "company": "Acme"}"#,
        )])),
        reply(tool_calls(&[(
            "c2",
            "crm_log_activity",
            r#"{"contact_id": "C-001", "type": "call", "subject": "Renewal pricing"}"#,
        )])),
        reply(answer("Created John Smith (C-013) and logged the call.")),
    ])
    .await;
    assert_eq!(run.outcome, Outcome::Fail);
    let score = run.score.expect("scored");
    let failures: Vec<(CheckKind, &str)> = score
        .failures()
        .map(|c| (c.kind, c.detail.as_str()))
        .collect();
    assert_eq!(
        failures,
        vec![
            (
                CheckKind::ArgsFromPrior,
                "`contact_id` is \"C-001\", but `$.calls[0].result.id` is \"C-013\": not taken from the earlier result"
            ),
            (
                CheckKind::FinalState,
                "left `activities[-1].contact_id` = \"C-001\", right `contacts[-1].id` = \"C-013\""
            ),
        ]
    );
}

#[tokio::test]
async fn arguments_that_are_not_an_object_are_recorded_and_fail_the_checks() {
    let (run, _) = run_t2_007(vec![
        reply(tool_calls(&[(
            "c1",
            "crm_create_contact",
            r#""John Smith""#,
        )])),
        reply(answer("Done.")),
    ])
    .await;
    assert_eq!(run.outcome, Outcome::Fail);
    assert_eq!(run.trace.len(), 1);
    assert_eq!(
        run.trace[0].invalid,
        Some(InvalidCallKind::ArgumentsNotObject)
    );
    let score = run.score.expect("scored");
    let first = score.failures().next().expect("a failure");
    assert_eq!(
        (first.kind, first.detail.as_str()),
        (
            CheckKind::ArgsSchema,
            "arguments are not a JSON object (\"\\\"John Smith\\\"\")"
        )
    );
}

/// Two calls of one turn sharing an id are both executed, their results are paired
/// by order, and the second is marked `duplicate_id` in the trace.
#[tokio::test]
async fn duplicate_call_ids_reach_the_trace_as_a_note() {
    let (run, _) = run_t2_007(vec![
        reply(tool_calls(&[
            (
                "c1",
                "crm_create_contact",
                r#"{"name": "John Smith", "company": "Acme"}"#,
            ),
            (
                "c1",
                "crm_log_activity",
                r#"{"contact_id": "C-013", "type": "call", "subject": "Renewal pricing"}"#,
            ),
        ])),
        reply(answer("Created John Smith (C-013) and logged the call.")),
    ])
    .await;
    let notes: Vec<Vec<CallNote>> = run.trace.iter().map(|call| call.notes.clone()).collect();
    assert_eq!(notes, vec![vec![], vec![CallNote::DuplicateId]]);
    assert_eq!(run.trace[1].turn, run.trace[0].turn);
}

#[tokio::test]
async fn offering_each_scenario_its_own_tools_sends_the_model_only_those() {
    let scenario = load_file(
        &repo().join("scenarios/tier1/T1-001.json"),
        &repo(),
        Catalog::builtin(),
    )
    .expect("T1-001 loads");
    let offered = scenario.offered_tools(Catalog::builtin());
    // T1-001 names crm_search_contacts and data_query_sql: their categories whole, and the
    // declared look-alike of the search, admin_search_users; nothing of erp, comm or utility.
    let group = |prefix: &str| {
        Catalog::builtin()
            .tools()
            .iter()
            .filter(|tool| tool.name.starts_with(prefix))
            .count()
    };
    assert_eq!(
        offered.len(),
        group("crm_") + group("data_") + 1,
        "{offered:?}"
    );
    assert!(offered.iter().any(|tool| tool == "admin_search_users"));
    assert!(!offered.iter().any(|tool| tool.starts_with("erp_")));

    let provider =
        FakeProvider::start(vec![reply(answer("Maria Garcia and Wei Chen."))], None).await;
    let agent = fake_agent(&provider);
    let backends = WorldBackends::new(ToolSet::builtin());
    let options = RunOptions {
        offered: Some(std::sync::Arc::new(
            [(scenario.id.clone(), offered.clone())]
                .into_iter()
                .collect(),
        )),
        ..RunOptions::default()
    };
    run_one(0, 0, &scenario, &agent, &backends, &options).await;

    let requests = provider.requests();
    let sent: Vec<&str> = requests[0]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|tool| tool["function"]["name"].as_str())
        .collect();
    assert_eq!(sent, offered);
}
