//! The scripted user: who waits, who is asked, where a conversation is cut, and the checks.

use serde_json::json;

use super::*;
use crate::catalog::Catalog;
use crate::scenario::{self, Scenario};

/// A conversation on `C-001`: delete it only after the user's confirmation (`wait`), then an
/// `asked` follow-up.
fn scenario() -> Scenario {
    let text = "id: T5-900\ntier: 5\ntype: ambiguous_input\nprompt: Delete contact C-001.\n\
                seed_state: fixtures/enterprise.json\nexpected_calls:\n  - tool: crm_delete_contact\n    \
                args_match: {contact_id: C-001}\n    user_turn: 2\nuser_turns:\n  - say: Yes, delete it.\n    \
                wait: true\n    reference_reply: Delete Ada Lovelace (C-001)? This cannot be undone.\n  \
                - say: Thanks, that's all.\n    when: asked\n";
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("s.yaml");
    std::fs::write(&path, text).expect("write scenario");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    scenario::load_file(&path, root, Catalog::builtin()).expect("valid scenario")
}

fn call(index: usize, tool: &str) -> CallRecord {
    CallRecord::recorded(index, tool, json!({"contact_id": "C-001"}))
}

#[test]
fn an_agent_that_asks_without_writing_gets_the_next_message_and_passes_the_wait() {
    let scenario = scenario();
    let mut script = Script::new(&scenario);
    let trace = vec![call(0, "crm_get_contact")];
    assert_eq!(
        script.reply(
            &scenario,
            Some("Shall I delete Ada Lovelace (C-001)?"),
            &trace
        ),
        Some("Yes, delete it.".to_owned())
    );
    let trace = vec![call(0, "crm_get_contact"), call(1, "crm_delete_contact")];
    // The last reply asks nothing: the `asked` follow-up is not sent, and that is no fault.
    assert_eq!(script.reply(&scenario, Some("Deleted."), &trace), None);
    assert!(script.is_over());
    let conversation = script.finish(&scenario, Some("Deleted."), &trace);
    assert_eq!(conversation.ended, Ended::NotAsked { turn: 1 });
    assert_eq!(
        conversation
            .exchanges
            .iter()
            .map(|exchange| (
                exchange.user.as_str(),
                exchange.calls,
                exchange.reply.as_deref()
            ))
            .collect::<Vec<_>>(),
        vec![
            (
                "Delete contact C-001.",
                1,
                Some("Shall I delete Ada Lovelace (C-001)?")
            ),
            ("Yes, delete it.", 1, Some("Deleted.")),
        ]
    );
    let checks = checks(&scenario, &conversation);
    assert_eq!(checks.len(), 1);
    assert!(checks[0].passed, "{checks:?}");
    assert_eq!(checks[0].subject, "user_turns[0]");
}

#[test]
fn an_agent_that_writes_before_the_confirmation_fails_at_that_turn() {
    let scenario = scenario();
    let mut script = Script::new(&scenario);
    let trace = vec![call(0, "crm_delete_contact")];
    assert_eq!(
        script.reply(&scenario, Some("Deleted it. Anything else?"), &trace),
        None,
        "the conversation stops where the agent did not wait"
    );
    let conversation = script.finish(&scenario, Some("Deleted it. Anything else?"), &trace);
    let Ended::NotWaited { turn: 0, detail } = &conversation.ended else {
        panic!("not waited: {:?}", conversation.ended);
    };
    assert_eq!(
        detail,
        "it called `crm_delete_contact` before the user's answer"
    );
    let failed: Vec<_> = checks(&scenario, &conversation)
        .into_iter()
        .filter(|check| !check.passed)
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].kind, CheckKind::Conversation);
    assert!(
        failed[0].detail.contains("\"Yes, delete it.\""),
        "{}",
        failed[0].detail
    );
}

#[test]
fn a_reply_that_asks_nothing_before_a_wait_fails_even_without_a_write() {
    let scenario = scenario();
    let mut script = Script::new(&scenario);
    assert_eq!(
        script.reply(&scenario, Some("Ada Lovelace is contact C-001."), &[]),
        None
    );
    let conversation = script.finish(&scenario, None, &[]);
    assert_eq!(
        conversation.ended,
        Ended::NotWaited {
            turn: 0,
            detail: "its reply asked the user nothing".to_owned()
        }
    );
}

#[test]
fn a_play_that_ends_where_the_user_would_go_on_is_cut_and_fails() {
    let scenario = scenario();
    let script = Script::new(&scenario);
    // The agent asked, then its play ended (turn limit) before the user could answer.
    let conversation = script.finish(&scenario, Some("Delete C-001 for good?"), &[]);
    assert_eq!(conversation.ended, Ended::Cut { turn: 0 });
    assert_eq!(conversation.exchanges.len(), 1);
    let checks = checks(&scenario, &conversation);
    assert!(checks.iter().any(|check| !check.passed), "{checks:?}");
}

#[test]
fn the_reference_reply_and_user_turn_are_read_from_the_file() {
    let scenario = scenario();
    assert_eq!(scenario.expected_calls[0].user_turn, 2);
    assert_eq!(scenario.user_turns.len(), 2);
    assert!(scenario.user_turns[0].wait);
    assert_eq!(scenario.user_turns[1].when, SendWhen::Asked);
    assert_eq!(
        scenario.user_turns[0].reference_reply.as_deref(),
        Some("Delete Ada Lovelace (C-001)? This cannot be undone.")
    );
}

#[test]
fn a_turns_reply_checks_judge_the_reply_the_message_followed() {
    let text = "id: T5-901\ntier: 5\ntype: ambiguous_input\nprompt: Delete contact Ada.\n\
                seed_state: fixtures/enterprise.json\nexpected_calls: []\nuser_turns:\n  \
                - say: No, keep her.\n    wait: true\n    reply:\n      contains_text: [C-001]\n";
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("s.yaml");
    std::fs::write(&path, text).expect("write scenario");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let scenario = scenario::load_file(&path, root, Catalog::builtin()).expect("valid scenario");
    let judged = |question: &str| {
        let mut script = Script::new(&scenario);
        assert!(script.reply(&scenario, Some(question), &[]).is_some());
        let conversation = script.finish(&scenario, Some("Kept."), &[]);
        crate::score::conversation_checks(
            &scenario,
            &conversation,
            &[],
            scenario.seeded.as_ref(),
            None,
        )
        .into_iter()
        .filter(|check| check.subject.starts_with("user_turns[0].reply"))
        .map(|check| check.passed)
        .collect::<Vec<_>>()
    };
    assert_eq!(judged("Delete Ada Lovelace (C-001)?"), vec![true]);
    assert_eq!(
        judged("Delete Ada Lovelace (C-002)?"),
        vec![false],
        "the confirmation named the wrong record"
    );
}

#[test]
fn a_reply_cannot_check_results_and_says_so_at_load() {
    let text = "id: T5-902\ntier: 5\ntype: ambiguous_input\nprompt: Delete contact Ada.\n\
                seed_state: fixtures/enterprise.json\nexpected_calls: []\nuser_turns:\n  \
                - say: No.\n    wait: true\n    reply:\n      contains_results: [\"$.calls[0].result.id\"]\n";
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("s.yaml");
    std::fs::write(&path, text).expect("write scenario");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let error = scenario::load_file(&path, root, Catalog::builtin()).expect_err("refused");
    let message = format!("{error:#}");
    assert!(
        message.contains("user_turns[0].reply.contains_results")
            && message.contains("is not available on a reply"),
        "{message}"
    );
}
