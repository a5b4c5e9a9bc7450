//! Scripted conversations end to end: the `openai` agent against a fake provider keeps the
//! history and gets the user's next message, an agent that acts before the confirmation fails
//! where it should have waited, a recorded conversation replays to the same verdict, and a
//! `command` agent runs once per message against the same server.

use std::path::Path;

use toolgate::agent::Agent;
use toolgate::agent::openai::{OpenAiAgent, OpenAiConfig};
use toolgate::agent::replay::Recordings;
use toolgate::catalog::Catalog;
use toolgate::harness::{ToolSet, WorldBackends};
use toolgate::runner::{RunOptions, ScenarioRun, run_one};
use toolgate::scenario::{Scenario, load_file};
use toolgate::score::conversation::Ended;
use toolgate::score::{CheckKind, Outcome};
use wiremock::ResponseTemplate;

use crate::support::{FakeProvider, answer, python_command_agent, repo, tool_calls};

/// Delete a contact only once the user confirms: the confirmation needs the agent to wait.
const CONFIRMED_DELETE: &str = "id: T5-950\ntier: 5\ntype: ambiguous_input\n\
prompt: Delete the contact Ada Lovelace.\nseed_state: fixtures/enterprise.json\n\
user_turns:\n  - say: Yes, delete her.\n    wait: true\n\
expected_calls:\n  - tool: crm_delete_contact\n    args_match: {contact_id: C-001, confirm: true}\n    user_turn: 2\n\
final_state_assertions:\n  - \"!contacts.exists(c, c.id == 'C-001')\"\n";

/// The same request, declined by the user.
const DECLINED_DELETE: &str = "id: T5-951\ntier: 5\ntype: ambiguous_input\n\
prompt: Delete the contact Ada Lovelace.\nseed_state: fixtures/enterprise.json\n\
user_turns:\n  - say: No, keep her after all.\n    wait: true\n\
expected_calls: []\nforbidden_calls:\n  - tool: crm_delete_contact\n\
final_state_assertions:\n  - \"contacts.exists(c, c.id == 'C-001')\"\n";

fn scenario(text: &str) -> Scenario {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("conversation.yaml");
    std::fs::write(&path, text).expect("write scenario");
    load_file(&path, &repo(), Catalog::builtin()).expect("the scenario loads")
}

fn reply(body: serde_json::Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(body)
}

async fn run_with(agent: &Agent, scenario: &Scenario) -> ScenarioRun {
    let backends = WorldBackends::new(ToolSet::builtin());
    run_one(0, 0, scenario, agent, &backends, &RunOptions::default()).await
}

fn openai(provider: &FakeProvider) -> Agent {
    let mut config = OpenAiConfig::from_env("fake-model");
    config.endpoint =
        toolgate::provider::Endpoint::new(toolgate::provider::Api::Openai, provider.base_url())
            .with_key("sk-test");
    config.max_turns = 6;
    Agent::OpenAi(Box::new(OpenAiAgent::new(config).expect("config")))
}

#[tokio::test]
async fn a_model_that_asks_then_acts_on_the_confirmation_passes_and_replays_the_same() {
    let scenario = scenario(CONFIRMED_DELETE);
    let provider = FakeProvider::start(
        vec![
            reply(tool_calls(&[(
                "c1",
                "crm_search_contacts",
                r#"{"query": "Ada Lovelace"}"#,
            )])),
            reply(answer(
                "I found Ada Lovelace (C-001). Deleting her cannot be undone: shall I go ahead?",
            )),
            reply(tool_calls(&[(
                "c2",
                "crm_delete_contact",
                r#"{"contact_id": "C-001", "confirm": true}"#,
            )])),
            reply(answer("Ada Lovelace is deleted.")),
        ],
        None,
    )
    .await;
    let run = run_with(&openai(&provider), &scenario).await;
    assert_eq!(run.outcome, Outcome::Pass, "{:?}", run.score);
    let requests = provider.requests();
    assert_eq!(requests.len(), 4);
    // The third request carries the whole conversation: the question, then the user's answer.
    let messages = requests[2]["messages"].as_array().expect("messages");
    let tail: Vec<(&str, &str)> = messages[messages.len() - 2..]
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap_or(""),
                m["content"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        tail,
        vec![
            (
                "assistant",
                "I found Ada Lovelace (C-001). Deleting her cannot be undone: shall I go ahead?"
            ),
            ("user", "Yes, delete her."),
        ]
    );
    let conversation = run.conversation.clone().expect("a conversation record");
    assert_eq!(conversation.ended, Ended::Finished);
    assert_eq!(
        conversation
            .exchanges
            .iter()
            .map(|exchange| exchange.calls)
            .collect::<Vec<_>>(),
        vec![1, 1]
    );
    assert!(
        run.score
            .as_ref()
            .expect("scored")
            .checks
            .iter()
            .any(|check| check.kind == CheckKind::Conversation && check.passed)
    );

    // The run's trace lines replay, without the model, to the same verdict and conversation.
    let lines = toolgate::results::run_trace_lines(&scenario, &run);
    let text: String = lines
        .iter()
        .map(|line| serde_json::to_string(line).expect("serializes") + "\n")
        .collect();
    assert!(
        text.contains(r#""reply":"I found Ada Lovelace (C-001)."#)
            && text.contains(r#""user":"Yes, delete her.""#),
        "{text}"
    );
    let recordings = Recordings::parse(&text, Path::new("trace.jsonl")).expect("readable");
    let replayed = run_with(&Agent::Replay(recordings), &scenario).await;
    assert_eq!(replayed.outcome, Outcome::Pass, "{:?}", replayed.score);
    assert_eq!(replayed.conversation, Some(conversation));
}

#[tokio::test]
async fn a_model_that_deletes_before_the_confirmation_fails_where_it_should_have_waited() {
    let scenario = scenario(CONFIRMED_DELETE);
    let provider = FakeProvider::start(
        vec![
            reply(tool_calls(&[(
                "c1",
                "crm_delete_contact",
                r#"{"contact_id": "C-001", "confirm": true}"#,
            )])),
            reply(answer("Done, Ada Lovelace is deleted. Anything else?")),
            reply(answer("never requested")),
        ],
        None,
    )
    .await;
    let run = run_with(&openai(&provider), &scenario).await;
    assert_eq!(run.outcome, Outcome::Fail);
    // The state is what the user asked for in the end, but the agent did not wait for it.
    let failed: Vec<_> = run
        .score
        .as_ref()
        .expect("scored")
        .failures()
        .map(|check| (check.kind, check.subject.clone()))
        .collect();
    assert_eq!(
        failed,
        vec![(CheckKind::Conversation, "user_turns[0]".to_owned())]
    );
    assert_eq!(provider.requests().len(), 2, "the user never answered");
}

#[tokio::test]
async fn a_command_agent_runs_once_per_message_and_keeps_the_server_state() {
    // Asks first; on the user's answer (the second run, with the history) it reads the
    // contact it is told to keep, through the same MCP server.
    let script = "import json, os; from scripted_agent import McpClient\n\
if 'TOOLGATE_TURN' not in os.environ:\n    print('Shall I delete Ada Lovelace (C-001)? It cannot be undone.')\nelse:\n    \
history = json.loads(os.environ['TOOLGATE_CONVERSATION'])\n    \
c = McpClient(os.environ['TOOLGATE_MCP_URL']); c.initialize()\n    \
c.call('crm_get_contact', {'contact_id': 'C-001'})\n    \
print('Kept her, as you said (turn %s, %d messages).' % (os.environ['TOOLGATE_TURN'], len(history)))\n";
    let (agent, _dir) = python_command_agent(script);
    let scenario = scenario(DECLINED_DELETE);
    let run = run_with(&agent, &scenario).await;
    assert_eq!(
        run.outcome,
        Outcome::Pass,
        "{:?} {:?}",
        run.error,
        run.score
    );
    assert_eq!(run.trace.len(), 1);
    assert_eq!(
        run.agent.and_then(|agent| agent.final_answer).as_deref(),
        Some("Kept her, as you said (turn 2, 3 messages).")
    );
}
