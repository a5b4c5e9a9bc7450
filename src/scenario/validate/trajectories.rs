//! Validating the trajectories a scenario carries (`alternatives`, `counterexamples`).

use super::super::file::{PlannedCallFile, TrajectoryFile};
use super::super::{PlannedCall, PlannedReply, Trajectory};
use super::Problems;

/// Checks one list: names present and unique across both lists (`seen`), a reason on every
/// counterexample, turns of 1 or more, an answer or a crash, never both, and `turns` (at most
/// one reply per user message of the conversation's `messages`) instead of `calls`/`answer`.
pub(super) fn validate_trajectories(
    section: &str,
    trajectories: Vec<TrajectoryFile>,
    (seen, messages): (&mut Vec<String>, usize),
    problems: &mut Problems<'_>,
) -> Vec<Trajectory> {
    let mut valid = Vec::new();
    for (index, mut trajectory) in trajectories.into_iter().enumerate() {
        let field = format!("{section}[{index}]");
        let name = trajectory.name.trim().to_owned();
        if name.is_empty() {
            problems.add(&format!("{field}.name"), None, "must not be empty");
        } else if seen.contains(&name) {
            problems.add(
                &format!("{field}.name"),
                Some(&name),
                format_args!("`{name}` names another trajectory of this scenario too"),
            );
        }
        seen.push(name.clone());
        if section == "counterexamples"
            && trajectory
                .why
                .as_deref()
                .is_none_or(|why| why.trim().is_empty())
        {
            problems.add(
                &format!("{field}.why"),
                Some(&name),
                "is required: say why the trajectory must fail",
            );
        }
        if trajectory.crash && trajectory.answer.is_some() {
            problems.add(
                &format!("{field}.crash"),
                Some(&name),
                "a crashed agent gives no answer: drop `answer` or `crash`",
            );
        }
        let mut replies = Vec::new();
        if !trajectory.turns.is_empty() {
            if !trajectory.calls.is_empty() || trajectory.answer.is_some() {
                problems.add(
                    &format!("{field}.turns"),
                    Some(&name),
                    "replaces `calls` and `answer`: write each reply's calls and answer in it",
                );
            }
            if trajectory.turns.len() > messages {
                problems.add(
                    &format!("{field}.turns"),
                    Some(&name),
                    format_args!(
                        "has {} replies, but the user sends {messages} message(s) (the prompt and \
                         `user_turns`): one reply each at most",
                        trajectory.turns.len()
                    ),
                );
            }
            let mut turns = std::mem::take(&mut trajectory.turns).into_iter();
            let last = turns.next_back();
            for turn in turns {
                trajectory.calls.extend(turn.calls);
                replies.push(PlannedReply {
                    after_calls: trajectory.calls.len(),
                    text: turn.answer,
                });
            }
            if let Some(last) = last {
                trajectory.calls.extend(last.calls);
                trajectory.answer = last.answer;
            }
        }
        let calls = planned_calls(&field, trajectory.calls, problems);
        valid.push(Trajectory {
            name,
            why: trajectory.why,
            calls,
            answer: trajectory.answer,
            crash: trajectory.crash,
            replies,
        });
    }
    valid
}

/// The calls of one trajectory, their model turns checked (1 or more).
fn planned_calls(
    field: &str,
    calls: Vec<PlannedCallFile>,
    problems: &mut Problems<'_>,
) -> Vec<PlannedCall> {
    let mut planned = Vec::new();
    for (i, call) in calls.into_iter().enumerate() {
        let turn = match call.turn {
            None => None,
            Some(turn) => match u32::try_from(turn.0) {
                Ok(turn) if turn >= 1 => Some(turn),
                _ => {
                    problems.add(
                        &format!("{field}.calls[{i}].turn"),
                        None,
                        format_args!("must be 1 or more, got {turn}"),
                    );
                    None
                }
            },
        };
        planned.push(PlannedCall {
            tool: call.tool,
            arguments: call.arguments,
            turn,
        });
    }
    planned
}

/// Checks `user_turns`: every message said (not blank), its `reply` checks (as
/// `final_answer`'s, with `state`), and every expected call's `user_turn` naming one of the
/// conversation's messages.
pub(super) fn validate_user_turns(
    turns: Vec<super::super::file::UserTurnFile>,
    expected: &[super::super::ExpectedCall],
    state: &super::answer::StateNames<'_>,
    problems: &mut Problems<'_>,
) -> Vec<super::super::UserTurn> {
    let messages = turns.len() + 1;
    for (index, call) in expected.iter().enumerate() {
        if call.user_turn as usize > messages {
            problems.add(
                &format!("expected_calls[{index}].user_turn"),
                None,
                format_args!(
                    "is {}, but the user sends {messages} message(s) (the prompt and \
                     `user_turns`)",
                    call.user_turn
                ),
            );
        }
    }
    turns
        .into_iter()
        .enumerate()
        .map(|(index, turn)| {
            if turn.say.trim().is_empty() {
                problems.add(
                    &format!("user_turns[{index}].say"),
                    None,
                    "must not be empty",
                );
            }
            let reply = turn
                .reply
                .map(|checks| {
                    super::answer::validate_answer(
                        &format!("user_turns[{index}].reply"),
                        checks,
                        expected.len(),
                        state,
                        problems,
                    )
                })
                .unwrap_or_default();
            super::super::UserTurn {
                reply,
                say: turn.say,
                when: turn.when,
                wait: turn.wait,
                reference_reply: turn
                    .reference_reply
                    .filter(|reply| !reply.trim().is_empty()),
            }
        })
        .collect()
}
