//! MCP elicitation end to end: a tool asks the user before it runs. The reference agent's
//! in-process client answers as the scripted user (an accept changes the state, a decline
//! leaves it and the call is a tool error); a `command` agent's own client is tested: one that
//! relays to `TOOLGATE_USER_URL` passes, one that answers without asking or accepts what the
//! user declined fails the elicitation check; a stateless `2026-07-28` client is asked with an
//! `input_required` result and retries with the user's answer.

use serde_json::json;
use toolgate::agent::Agent;
use toolgate::catalog::Catalog;
use toolgate::harness::{ToolSet, WorldBackends};
use toolgate::runner::{RunOptions, ScenarioRun, run_one};
use toolgate::scenario::{ElicitationAction, ElicitationReply, Scenario, load_file};
use toolgate::score::{CheckKind, Outcome};
use toolgate::trace::{CallOutcome, ElicitationRecord};

use crate::support::{python_command_agent, repo};

/// The message the deletion asks with.
const ASKED: &str = "Delete Ada Lovelace (C-001)? This cannot be undone.";

/// Delete a contact; the tool asks for a reason, and the user gives one.
const ACCEPTED: &str = r#"id: T5-960
tier: 5
type: single_call
prompt: Delete the contact Ada Lovelace (C-001).
seed_state: fixtures/enterprise.json
expected_calls:
  - tool: crm_delete_contact
    args_match: {contact_id: C-001, confirm: true}
elicitations:
  - tool: crm_delete_contact
    message: Delete Ada Lovelace (C-001)? This cannot be undone.
    schema: {type: object, properties: {reason: {type: string}}, required: [reason]}
    reply: {action: accept, content: {reason: duplicate record}}
final_state_assertions:
  - "!contacts.exists(c, c.id == 'C-001')"
"#;

/// The same deletion, declined by the user when the tool asks.
const DECLINED: &str = r#"id: T5-961
tier: 5
type: single_call
prompt: Delete the contact Ada Lovelace (C-001).
seed_state: fixtures/enterprise.json
expected_calls:
  - tool: crm_delete_contact
    args_match: {contact_id: C-001, confirm: true}
elicitations:
  - tool: crm_delete_contact
    message: Delete Ada Lovelace (C-001)? This cannot be undone.
    reply: {action: decline}
final_state_assertions:
  - "contacts.exists(c, c.id == 'C-001')"
reference_answer: Ada Lovelace was not deleted, because you declined.
"#;

fn scenario(text: &str) -> Scenario {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("elicitation.yaml");
    std::fs::write(&path, text).expect("write scenario");
    load_file(&path, &repo(), Catalog::builtin()).expect("the scenario loads")
}

async fn run_with(agent: &Agent, scenario: &Scenario) -> ScenarioRun {
    let backends = WorldBackends::new(ToolSet::builtin());
    run_one(0, 0, scenario, agent, &backends, &RunOptions::default()).await
}

/// A `command` agent in Python: the example's `McpClient`, built with `client` (an
/// expression over `url`, `McpClient` and `ask_user`), deletes C-001 and prints the outcome.
/// The program lives in the returned directory.
fn python_agent(client: &str) -> (Agent, tempfile::TempDir) {
    let script = format!(
        "import os\nfrom scripted_agent import McpClient, ask_user\n\
url = os.environ['TOOLGATE_MCP_URL']\nc = {client}\nc.initialize()\n\
failed, result = c.call('crm_delete_contact', {{'contact_id': 'C-001', 'confirm': True}})\n\
print(result if failed else 'Deleted Ada Lovelace.')\n"
    );
    python_command_agent(&script)
}

fn elicitation_checks(run: &ScenarioRun) -> Vec<(bool, String, String)> {
    run.score
        .as_ref()
        .expect("scored")
        .checks
        .iter()
        .filter(|check| check.kind == CheckKind::Elicitation)
        .map(|check| (check.passed, check.subject.clone(), check.detail.clone()))
        .collect()
}

fn reason() -> Option<ElicitationReply> {
    Some(ElicitationReply {
        action: ElicitationAction::Accept,
        content: Some(json!({"reason": "duplicate record"})),
    })
}

fn declined() -> Option<ElicitationReply> {
    Some(ElicitationReply {
        action: ElicitationAction::Decline,
        content: None,
    })
}

#[tokio::test]
async fn the_reference_agent_deletes_once_the_user_accepts_and_the_trace_says_so() {
    let run = run_with(&Agent::Reference, &scenario(ACCEPTED)).await;
    assert_eq!(
        run.outcome,
        Outcome::Pass,
        "{:?} {:?}",
        run.error,
        run.score
    );
    assert_eq!(run.trace.len(), 1);
    assert_eq!(run.trace[0].outcome, CallOutcome::Success);
    assert_eq!(
        run.trace[0].elicitation,
        Some(ElicitationRecord {
            index: 0,
            message: ASKED.to_owned(),
            answer: reason(),
            error: None,
            user: reason(),
        })
    );
    assert_eq!(
        elicitation_checks(&run),
        vec![(
            true,
            "elicitations[0]".to_owned(),
            format!(
                "call 1 `crm_delete_contact`: the user saw {ASKED:?} and the server got the \
                 user's answer (`accept {{\"reason\":\"duplicate record\"}}`)"
            )
        )]
    );
    // Her activity goes with her.
    assert_eq!(run.state_diff, ["contacts - C-001", "activities - A-001"]);
}

#[tokio::test]
async fn a_declined_deletion_is_a_tool_error_and_leaves_the_state_alone() {
    let run = run_with(&Agent::Reference, &scenario(DECLINED)).await;
    assert_eq!(
        run.outcome,
        Outcome::Pass,
        "{:?} {:?}",
        run.error,
        run.score
    );
    let call = &run.trace[0];
    assert_eq!(call.outcome, CallOutcome::ToolError);
    assert_eq!(
        call.error.as_deref(),
        Some("`crm_delete_contact` was not run: the user declined the request for input")
    );
    assert_eq!(
        call.elicitation
            .as_ref()
            .map(|asked| (&asked.answer, &asked.user)),
        Some((&declined(), &declined()))
    );
    assert_eq!(run.state_diff, Vec::<String>::new());
    let checks = elicitation_checks(&run);
    assert_eq!(checks.len(), 1);
    assert!(checks[0].0, "{checks:?}");
}

#[tokio::test]
async fn a_command_agent_whose_client_asks_the_user_passes() {
    let (agent, _program) = python_agent("McpClient(url)");
    let run = run_with(&agent, &scenario(ACCEPTED)).await;
    assert_eq!(
        run.outcome,
        Outcome::Pass,
        "{:?} {:?}",
        run.error,
        run.score
    );
    assert_eq!(
        run.trace[0]
            .elicitation
            .as_ref()
            .map(|asked| (&asked.answer, &asked.user)),
        Some((&reason(), &reason()))
    );
    assert_eq!(
        run.agent.and_then(|agent| agent.final_answer).as_deref(),
        Some("Deleted Ada Lovelace.")
    );
}

#[tokio::test]
async fn a_command_agent_whose_client_accepts_without_asking_fails() {
    let (agent, _program) = python_agent(
        "McpClient(url, on_elicitation=lambda params: \
         {'action': 'accept', 'content': {'reason': 'duplicate record'}})",
    );
    let run = run_with(&agent, &scenario(ACCEPTED)).await;
    assert_eq!(
        run.outcome,
        Outcome::Fail,
        "{:?} {:?}",
        run.error,
        run.score
    );
    assert_eq!(
        elicitation_checks(&run),
        vec![(
            false,
            "elicitations[0]".to_owned(),
            format!(
                "call 1 `crm_delete_contact`: the client answered `accept \
                 {{\"reason\":\"duplicate record\"}}` to an elicitation the user never saw \
                 ({ASKED:?})"
            )
        )]
    );
    let failed: Vec<CheckKind> = run
        .score
        .as_ref()
        .expect("scored")
        .failures()
        .map(|check| check.kind)
        .collect();
    assert_eq!(
        failed,
        vec![CheckKind::Elicitation],
        "the deletion itself went through"
    );
}

#[tokio::test]
async fn a_command_agent_whose_client_accepts_what_the_user_declined_fails() {
    let (agent, _program) = python_agent(
        "McpClient(url, on_elicitation=lambda params: dict(ask_user(params), action='accept'))",
    );
    let run = run_with(&agent, &scenario(DECLINED)).await;
    assert_eq!(
        run.outcome,
        Outcome::Fail,
        "{:?} {:?}",
        run.error,
        run.score
    );
    assert_eq!(
        elicitation_checks(&run),
        vec![(
            false,
            "elicitations[0]".to_owned(),
            format!(
                "call 1 `crm_delete_contact`: the client returned `accept` where the user \
                 answered `decline` ({ASKED:?})"
            )
        )]
    );
    // The server obeyed the client: Ada is gone, against the user's answer.
    assert_eq!(run.trace[0].outcome, CallOutcome::Success);
    let failed: Vec<CheckKind> = run
        .score
        .as_ref()
        .expect("scored")
        .failures()
        .map(|check| check.kind)
        .collect();
    assert_eq!(failed, vec![CheckKind::FinalState, CheckKind::Elicitation]);
}

/// A `2026-07-28` client, stateless: the call comes back `input_required`, the client shows
/// the request to the user and retries with the answer.
const MRTR_AGENT: &str = r#"import json, os, urllib.request
from scripted_agent import ask_user
url = os.environ['TOOLGATE_MCP_URL']
meta = {'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {'elicitation': {'form': {}}},
        'io.modelcontextprotocol/clientInfo': {'name': 'mrtr-agent', 'version': '0'}}
def call(number, params):
    body = {'jsonrpc': '2.0', 'id': number, 'method': 'tools/call', 'params': dict(params, _meta=meta)}
    headers = {'Content-Type': 'application/json', 'Accept': 'application/json, text/event-stream',
               'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': params['name']}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method='POST')
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())['result']
delete = {'name': 'crm_delete_contact', 'arguments': {'contact_id': 'C-001', 'confirm': True}}
first = call(1, delete)
asked = first['inputRequests']['elicitation']['params']
second = call(2, dict(delete, inputResponses={'elicitation': ask_user(asked)}, requestState=first['requestState']))
print(first['resultType'] + ': ' + second['content'][0]['text'])
"#;

#[tokio::test]
async fn a_2026_07_28_command_agent_is_asked_in_a_round_of_its_own_and_the_decline_holds() {
    let (agent, _dir) = python_command_agent(MRTR_AGENT);
    let run = run_with(&agent, &scenario(DECLINED)).await;
    assert_eq!(
        run.agent
            .as_ref()
            .and_then(|agent| agent.final_answer.as_deref()),
        Some(
            "input_required: `crm_delete_contact` was not run: the user declined the request \
             for input"
        ),
        "{:?}",
        run.error
    );
    assert_eq!(run.trace.len(), 1, "the round that asked ran nothing");
    assert_eq!(
        run.trace[0]
            .elicitation
            .as_ref()
            .map(|asked| (&asked.answer, &asked.user)),
        Some((&declined(), &declined()))
    );
    let checks = elicitation_checks(&run);
    assert_eq!(checks.len(), 1);
    assert!(checks[0].0, "{checks:?}");
    assert_eq!(run.state_diff, Vec::<String>::new());
}
