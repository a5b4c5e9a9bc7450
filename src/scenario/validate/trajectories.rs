//! Validating the trajectories a scenario carries (`alternatives`, `counterexamples`).

use super::super::file::TrajectoryFile;
use super::super::{PlannedCall, Trajectory};
use super::Problems;

/// Checks one list: names present and unique across both lists (`seen`), a reason on every
/// counterexample, turns of 1 or more, and an answer or a crash, never both.
pub(super) fn validate_trajectories(
    section: &str,
    trajectories: Vec<TrajectoryFile>,
    seen: &mut Vec<String>,
    problems: &mut Problems<'_>,
) -> Vec<Trajectory> {
    let mut valid = Vec::new();
    for (index, trajectory) in trajectories.into_iter().enumerate() {
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
        let mut calls = Vec::new();
        for (i, call) in trajectory.calls.into_iter().enumerate() {
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
            calls.push(PlannedCall {
                tool: call.tool,
                arguments: call.arguments,
                turn,
            });
        }
        valid.push(Trajectory {
            name,
            why: trajectory.why,
            calls,
            answer: trajectory.answer,
            crash: trajectory.crash,
        });
    }
    valid
}
