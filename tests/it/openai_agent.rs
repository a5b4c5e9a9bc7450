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

async fn run_t2_007(
    script: Vec<ResponseTemplate>,
) -> (toolgate::runner::ScenarioRun, FakeProvider) {
    let provider = FakeProvider::start(script, None).await;
    let scenario = load_file(
        &repo().join("scenarios/tier2/T2-007.json"),
        &repo(),
        Catalog::builtin(),
    )
    .expect("T2-007 loads");
    let mut config = OpenAiConfig::from_env("fake-model");
    config.base_url = provider.base_url();
    config.api_key = Some("sk-test".into());
    config.max_turns = 6;
    let agent = Agent::OpenAi(Box::new(OpenAiAgent::new(config).expect("config")));
    let backends = WorldBackends::new(ToolSet::builtin());
    let run = run_one(0, 0, &scenario, &agent, &backends, &RunOptions::default()).await;
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
