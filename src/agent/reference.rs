//! The reference agent: plays a scenario's known-good solution through MCP.
//!
//! For each expected call, in order, it sends `reference_args` overlaid with `args_match`, and
//! fills `args_from_prior` from the actual results of its earlier calls. A call that fails is
//! retried once for every fault the scenario injects into that tool, so scenarios with injected
//! faults show recovery, and a genuine error (an unknown id) is not retried. Its final answer
//! is the scenario's `reference_answer` when it has one. It waits for each result before the
//! next call, so each call is its own turn in the trace. In a conversation (`user_turns`) it
//! makes each call after the user message its `user_turn` names, and before each message
//! says that turn's `reference_reply`. A scenario with a `simulated_user` it plays as a single
//! request: it knows the solution, so it never asks the user anything.

use serde_json::{Map, Value};

use super::{AgentOutcome, ToolExecutor};
use crate::scenario::Scenario;
use crate::trace::{CallOutcome, CallRecord};

/// Plays `scenario`'s solution through `tools`.
pub async fn run<E: ToolExecutor>(scenario: &Scenario, tools: &E) -> AgentOutcome {
    let mut played: Vec<CallRecord> = Vec::new();
    let mut assigned: Vec<Option<usize>> = Vec::new();
    let mut failed = Vec::new();
    let mut conversation = Conversation::default();
    for expected in &scenario.expected_calls {
        if !conversation
            .reach(expected.user_turn, scenario, tools, false)
            .await
        {
            break;
        }
        let record = crate::trace::run_record(&assigned, &played);
        // The first tool of a list; checks on arguments it lacks are for the other tools.
        let mut arguments = expected.reference_args.clone();
        for (name, value) in &expected.args_match {
            if expected.applies(&expected.tool, name) {
                merge(&mut arguments, name, value);
            }
        }
        for prior in &expected.args_from_prior {
            if !expected.applies(&expected.tool, &prior.argument) {
                continue;
            }
            if let Ok(value) = prior.path.query(&record).exactly_one() {
                arguments.insert(prior.argument.clone(), value.clone());
            }
        }
        let injected: u32 = scenario
            .faults
            .iter()
            .filter(|fault| fault.tool == expected.tool)
            .map(|fault| fault.times)
            .sum();
        let mut slot = None;
        for _ in 0..=injected {
            let turn = u32::try_from(played.len() + 1).unwrap_or(u32::MAX);
            tools.begin_turn(turn);
            let observation = tools.call(&expected.tool, arguments.clone()).await;
            let result = serde_json::from_str::<Value>(&observation.content).ok();
            played.push(CallRecord {
                index: played.len(),
                tool: expected.tool.clone(),
                arguments: Value::Object(arguments.clone()),
                outcome: if observation.is_error {
                    CallOutcome::ToolError
                } else {
                    CallOutcome::Success
                },
                result: if observation.is_error { None } else { result },
                error: observation.is_error.then_some(observation.content),
                fault: None,
                invalid: None,
                duration_us: 0,
                turn,
                refused: false,
                unknown_tool: false,
                checked: false,
                violations: Vec::new(),
                notes: Vec::new(),
                output_violations: Vec::new(),
                unmatched: false,
                not_recorded: false,
                elicitation: None,
            });
            slot = Some(played.len() - 1);
            if !observation.is_error {
                break;
            }
        }
        if played.last().is_some_and(|call| !call.is_success()) {
            failed.push(expected.tool.clone());
        }
        assigned.push(slot);
    }
    let messages = u32::try_from(scenario.user_turns.len() + 1).unwrap_or(u32::MAX);
    conversation.reach(messages, scenario, tools, true).await;
    let final_answer = if let Some(reply) = conversation.last_reply {
        reply
    } else if let Some(answer) = &scenario.reference_answer {
        answer.clone()
    } else if scenario.expected_calls.is_empty() {
        "I can't do that: the request is out of scope or too risky to carry out.".to_string()
    } else if failed.is_empty() {
        "Done.".to_string()
    } else {
        format!("Some steps failed: {}.", failed.join(", "))
    };
    AgentOutcome {
        final_answer: Some(final_answer),
        turns: 1,
        ..AgentOutcome::default()
    }
}

/// Where the reference agent is in a scripted conversation.
#[derive(Default)]
struct Conversation {
    /// The user messages answered before the current one (0: the prompt is current).
    answered: u32,
    /// The reply that ended the conversation early, if one did.
    last_reply: Option<String>,
}

impl Conversation {
    /// Replies until the user's message `message` (1-based: 1 is the prompt) is the current
    /// one; false when the conversation ended first. After the last expected call (`last`),
    /// a `when: asked` message without a `reference_reply` is not asked for: the reference
    /// answers with `reference_answer` instead.
    async fn reach<E: ToolExecutor>(
        &mut self,
        message: u32,
        scenario: &Scenario,
        tools: &E,
        last: bool,
    ) -> bool {
        while self.last_reply.is_none() && self.answered + 1 < message {
            let turn = scenario.user_turns.get(self.answered as usize);
            let written = turn.and_then(|turn| turn.reference_reply.clone());
            if last
                && written.is_none()
                && turn.is_some_and(|turn| turn.when == crate::scenario::file::SendWhen::Asked)
            {
                return false;
            }
            let reply = written
                .unwrap_or_else(|| "Before I go on: how would you like me to proceed?".to_owned());
            if tools.next_user_message(Some(&reply)).await.is_some() {
                self.answered += 1;
            } else {
                self.last_reply = Some(reply);
            }
        }
        self.last_reply.is_none()
    }
}

/// Overlays `value` at `name`, merging nested objects so a partial `args_match` object keeps
/// the reference's other fields.
fn merge(into: &mut Map<String, Value>, name: &str, value: &Value) {
    match (into.get_mut(name), value) {
        (Some(Value::Object(existing)), Value::Object(overlay)) => {
            for (key, inner) in overlay {
                merge(existing, key, inner);
            }
        }
        // Arrays of the same length merge element by element, as `args_match` matches them:
        // `[{name}]` over `[{observations}]` sends `[{name, observations}]`.
        (Some(Value::Array(existing)), Value::Array(overlay))
            if existing.len() == overlay.len() =>
        {
            for (element, inner) in existing.iter_mut().zip(overlay) {
                match (element, inner) {
                    (Value::Object(element), Value::Object(inner)) => {
                        for (key, value) in inner {
                            merge(element, key, value);
                        }
                    }
                    (element, inner) => *element = inner.clone(),
                }
            }
        }
        _ => {
            into.insert(name.to_string(), value.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    //! The reference agent: `args_match` overlays `reference_args` element by element.

    use serde_json::json;

    use super::*;

    #[test]
    fn args_match_merges_into_reference_args_element_by_element() {
        let mut arguments = json!({"entities": [{"observations": ["o"]}], "keep": 1})
            .as_object()
            .cloned()
            .expect("an object");
        merge(
            &mut arguments,
            "entities",
            &json!([{"name": "Ada", "entityType": "person"}]),
        );
        assert_eq!(
            Value::Object(arguments.clone()),
            json!({"entities": [{"observations": ["o"], "name": "Ada", "entityType": "person"}], "keep": 1})
        );
        merge(&mut arguments, "entities", &json!([1, 2]));
        assert_eq!(
            arguments["entities"],
            json!([1, 2]),
            "other lengths replace"
        );
    }
}
