//! Validating the trajectories a scenario carries (`alternatives`, `counterexamples`) and its
//! conversation (`user_turns` or `simulated_user`).

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

/// A scenario's conversation and written trajectories, validated.
pub(super) struct Talk {
    pub(super) user_turns: Vec<super::super::UserTurn>,
    pub(super) simulated_user: Option<super::super::SimulatedUser>,
    pub(super) alternatives: Vec<Trajectory>,
    pub(super) counterexamples: Vec<Trajectory>,
}

/// Checks the conversation (`user_turns` or `simulated_user`, see
/// [`validate_user_turns`] and [`validate_simulated_user`]) and the written trajectories
/// (`alternatives`, `counterexamples`: one reply at most per user message of the scripted
/// conversation) against the `expected` calls.
pub(super) fn validate_conversation(
    (user_turns, simulated_user): (
        Vec<super::super::file::UserTurnFile>,
        Option<super::super::file::SimulatedUserFile>,
    ),
    (alternatives, counterexamples): (Vec<TrajectoryFile>, Vec<TrajectoryFile>),
    expected: &[super::super::ExpectedCall],
    state: &super::answer::StateNames<'_>,
    problems: &mut Problems<'_>,
) -> Talk {
    let messages = user_turns.len() + 1;
    let simulated_user = validate_simulated_user(simulated_user, messages > 1, problems);
    let user_turns = validate_user_turns(user_turns, expected, state, problems);
    let mut names = Vec::new();
    let alternatives = validate_trajectories(
        "alternatives",
        alternatives,
        (&mut names, messages),
        problems,
    );
    let counterexamples = validate_trajectories(
        "counterexamples",
        counterexamples,
        (&mut names, messages),
        problems,
    );
    Talk {
        user_turns,
        simulated_user,
        alternatives,
        counterexamples,
    }
}

/// Whether `checks` or one of its `any_of` groups lists `contains_results`.
fn uses_results(checks: &super::super::file::AnswerChecksFile) -> bool {
    !checks.contains_results.is_empty() || checks.any_of.iter().any(uses_results)
}

/// Checks `user_turns`: every message said (not blank), its `reply` checks (as
/// `final_answer`'s, with `state`, without `contains_results`), and every expected call's
/// `user_turn` naming one of the conversation's messages.
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
                    if uses_results(&checks) {
                        problems.add(
                            &format!("user_turns[{index}].reply.contains_results"),
                            None,
                            "is not available on a reply: a reply's checks cannot read the run \
                             record; state the value with `values` (`seeded` or `state`) instead",
                        );
                    }
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

/// Checks `simulated_user`: not with `user_turns` (`scripted` says whether there are any), a
/// goal that is not blank, no blank fact or `never_say` entry, no fact that holds a
/// `never_say` string (the user could not share it without revealing it), and
/// `max_messages` in 1..=[`MAX_SIMULATED_MESSAGES`]. `None` without one.
pub(super) fn validate_simulated_user(
    user: Option<super::super::file::SimulatedUserFile>,
    scripted: bool,
    problems: &mut Problems<'_>,
) -> Option<super::super::SimulatedUser> {
    use super::super::{DEFAULT_SIMULATED_MESSAGES, MAX_SIMULATED_MESSAGES};
    let user = user?;
    if scripted {
        problems.add(
            "simulated_user",
            None,
            "a conversation has a scripted user (`user_turns`) or a simulated one, not both",
        );
    }
    if user.goal.trim().is_empty() {
        problems.add("simulated_user.goal", None, "must not be empty");
    }
    for (list, entries) in [("facts", &user.facts), ("never_say", &user.never_say)] {
        for (index, entry) in entries.iter().enumerate() {
            if entry.trim().is_empty() {
                problems.add(
                    &format!("simulated_user.{list}[{index}]"),
                    None,
                    "must not be empty",
                );
            }
        }
    }
    for (index, fact) in user.facts.iter().enumerate() {
        let lower = fact.to_lowercase();
        if let Some(secret) = user
            .never_say
            .iter()
            .find(|secret| !secret.trim().is_empty() && lower.contains(&secret.to_lowercase()))
        {
            problems.add(
                &format!("simulated_user.facts[{index}]"),
                Some(fact),
                format_args!(
                    "holds `{secret}`, which the user must never say (`never_say`): the \
                     simulator could not share this fact"
                ),
            );
        }
    }
    let max_messages = match user.max_messages {
        None => DEFAULT_SIMULATED_MESSAGES,
        Some(count) => match u32::try_from(count.0) {
            Ok(count @ 1..=MAX_SIMULATED_MESSAGES) => count,
            _ => {
                problems.add(
                    "simulated_user.max_messages",
                    None,
                    format_args!("must be 1..={MAX_SIMULATED_MESSAGES}, got {count}"),
                );
                DEFAULT_SIMULATED_MESSAGES
            }
        },
    };
    Some(super::super::SimulatedUser {
        goal: user.goal,
        facts: user.facts,
        never_say: user.never_say,
        max_messages,
    })
}
