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

use super::{AgentError, AgentOutcome, ToolExecutor};
use crate::scenario::capture::as_text;
use crate::scenario::{Placeholder, Scenario, Unread};
use crate::trace::{CallOutcome, CallRecord};

/// Plays `scenario`'s solution through `tools`.
///
/// # Errors
///
/// [`AgentError::Config`] when a `reference_answer` placeholder has no value in the agent's
/// own results (the call it reads failed, or its capture takes nothing).
pub async fn run<E: ToolExecutor>(
    scenario: &Scenario,
    tools: &E,
) -> Result<AgentOutcome, AgentError> {
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
            if let Ok(value) = prior.from.read(&record) {
                arguments.insert(prior.argument.clone(), value);
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
            // As the trace records it: JSON when the text parses, else the text as a string.
            let result = serde_json::from_str::<Value>(&observation.content)
                .unwrap_or_else(|_| Value::String(observation.content.clone()));
            played.push(CallRecord {
                index: played.len(),
                tool: expected.tool.clone(),
                arguments: Value::Object(arguments.clone()),
                outcome: if observation.is_error {
                    CallOutcome::ToolError
                } else {
                    CallOutcome::Success
                },
                result: (!observation.is_error).then_some(result),
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
        let record = crate::trace::run_record(&assigned, &played);
        fill(answer, &scenario.reference_placeholders, &record)?
    } else if scenario.expected_calls.is_empty() {
        "I can't do that: the request is out of scope or too risky to carry out.".to_string()
    } else if failed.is_empty() {
        "Done.".to_string()
    } else {
        format!("Some steps failed: {}.", failed.join(", "))
    };
    Ok(AgentOutcome {
        final_answer: Some(final_answer),
        turns: 1,
        ..AgentOutcome::default()
    })
}

/// `answer` with each placeholder replaced by its value in `record` (a string as it is,
/// anything else as compact JSON).
fn fill(answer: &str, placeholders: &[Placeholder], record: &Value) -> Result<String, AgentError> {
    let mut filled = answer.to_string();
    for placeholder in placeholders {
        let value = placeholder.from.read(record).map_err(|unread| {
            let why = match unread {
                Unread::NoValue => format!(
                    "no single value there (calls[{}] failed or lacks that result)",
                    placeholder.from.call_index
                ),
                Unread::NotCaptured(why) => why,
            };
            AgentError::Config(format!(
                "reference_answer placeholder `{}` has no value: `{}` reads the reference agent's results, but {why}",
                placeholder.written, placeholder.from.source
            ))
        })?;
        filled = filled.replacen(&placeholder.written, &as_text(&value), 1);
    }
    Ok(filled)
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
    //! The reference agent: `args_match` overlays `reference_args` element by element, and
    //! `reference_answer` placeholders are filled from its own results or fail naming why.

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

    #[test]
    fn placeholders_are_filled_from_the_record_or_fail_naming_the_placeholder() {
        let source = |inline: &str| {
            let (path, capture) = inline.split_once(" | ").unwrap_or((inline, ""));
            crate::scenario::RecordSource {
                source: inline.to_string(),
                path: serde_json_path::JsonPath::parse(path).expect("valid path"),
                call_index: 0,
                capture: (!capture.is_empty()).then(|| {
                    crate::scenario::Capture::regex(capture.trim_matches('/')).expect("valid")
                }),
            }
        };
        let placeholders = [
            Placeholder {
                written: "{{ $.calls[0].result | /Commit: (\\w{7})/ }}".into(),
                from: source("$.calls[0].result | /Commit: (\\w{7})/"),
            },
            Placeholder {
                written: "{{ $.calls[0].args }}".into(),
                from: source("$.calls[0].args"),
            },
        ];
        let answer =
            "Head is {{ $.calls[0].result | /Commit: (\\w{7})/ }} ({{ $.calls[0].args }}).";
        let record =
            json!({"calls": [{"result": "Commit: 15a52f72e\nAuthor: Ada", "args": {"n": 1}}]});
        assert_eq!(
            fill(answer, &placeholders, &record).expect("filled"),
            "Head is 15a52f7 ({\"n\":1})."
        );
        let error = fill(
            answer,
            &placeholders,
            &json!({"calls": [{"result": "no commits"}]}),
        )
        .expect_err("no match");
        assert_eq!(
            error.to_string(),
            "reference_answer placeholder `{{ $.calls[0].result | /Commit: (\\w{7})/ }}` has no value: `$.calls[0].result | /Commit: (\\w{7})/` reads the reference agent's results, but the pattern does not match the result"
        );
    }
}
