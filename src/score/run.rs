//! Scoring one run: every check of the scenario over the trajectory, the states and the final
//! answer, in scenario order.

use serde_json::Value;

use super::answer::Answer;
use super::{Check, CheckKind, Outcome, RunScore, ScoringOptions, answer_checks, budget, matching};
use crate::scenario::{Ordering, Scenario};
use crate::trace::CallRecord;

/// Scores one run of `scenario`: the `trace` of calls (with the harness's schema findings),
/// the `seeded` state, the backend's state after the run (`None` when the backend's state
/// cannot be seen: final-state assertions and state values then fail), the agent's final
/// answer (`None` when it gave none) and the run-wide `options`.
pub fn score(
    scenario: &Scenario,
    trace: &[CallRecord],
    seeded: &Value,
    final_state: Option<&Value>,
    final_answer: Option<&str>,
    options: ScoringOptions,
) -> RunScore {
    let strict = scenario.ordering == Ordering::Strict;
    let pairing = matching::pair(&scenario.expected_calls, trace, strict, options);
    let mut checks = call_checks(scenario, trace, &pairing.assigned, options);

    if strict
        && scenario
            .expected_calls
            .iter()
            .filter(|call| !call.optional)
            .count()
            > 1
    {
        let in_order = pairing.full;
        let any_order = matching::pair(&scenario.expected_calls, trace, false, options).full;
        checks.push(Check {
            kind: CheckKind::Ordering,
            subject: "ordering".into(),
            passed: any_order <= in_order,
            detail: if any_order <= in_order {
                "strict order holds".to_string()
            } else {
                format!(
                    "{any_order} expected calls are satisfied only out of order (strict ordering)"
                )
            },
        });
    }

    checks.extend(budget::checks(scenario, trace));
    checks.extend(state_checks(scenario, seeded, final_state));
    checks.extend(tool_checks(trace));
    checks.extend(forbidden_checks(scenario, trace));
    checks.extend(super::elicitation::checks(trace));
    let record = if scenario.final_answer.contains_results.is_empty() {
        Value::Null
    } else {
        crate::trace::run_record(&pairing.assigned, trace)
    };
    let answer = final_answer.map(|text| Answer::read(text, trace));
    let states = states(trace, seeded, final_state);
    checks.extend(answer_checks::checks(
        scenario,
        final_answer,
        answer.as_ref(),
        &record,
        &states,
    ));
    checks.extend(answer_checks::claimed_success(
        scenario,
        trace,
        answer.as_ref(),
    ));
    checks.extend(answer_checks::calendar(scenario, answer.as_ref()));
    checks.extend(answer_checks::invented_values(
        scenario,
        trace,
        final_answer,
    ));

    let outcome = if checks.iter().all(|check| check.passed) {
        Outcome::Pass
    } else {
        Outcome::Fail
    };
    RunScore {
        outcome,
        checks,
        pairing: pairing.assigned,
    }
}

/// The states answer values read: `seeded`, `final_state`, and whether `trace` looked
/// anything up.
fn states<'a>(
    trace: &[CallRecord],
    seeded: &'a Value,
    final_state: Option<&'a Value>,
) -> answer_checks::States<'a> {
    answer_checks::States {
        seeded,
        after: final_state,
        looked_up: trace.iter().any(|call| {
            call.fault.is_none()
                && !call.refused
                && !call.unknown_tool
                && matches!(
                    call.outcome,
                    crate::trace::CallOutcome::Success | crate::trace::CallOutcome::ToolError
                )
        }),
    }
}

/// The checks of a scripted conversation ([`super::conversation::checks`]) and of the replies
/// its `user_turns` check (`reply`), for a run with `trace`, the `seeded` state and the state
/// after it. A turn's `reply` checks apply when the message was sent; `contains_results` is
/// not available there.
pub fn conversation_checks(
    scenario: &Scenario,
    conversation: &super::conversation::Conversation,
    trace: &[CallRecord],
    seeded: &Value,
    final_state: Option<&Value>,
) -> Vec<Check> {
    let mut checks = super::conversation::checks(scenario, conversation);
    let states = states(trace, seeded, final_state);
    let sent = conversation.exchanges.len().saturating_sub(1);
    let grounded = scenario.tier == 5 || scenario.final_answer.grounded;
    let mut said = String::new();
    for (index, (turn, exchange)) in scenario
        .user_turns
        .iter()
        .zip(&conversation.exchanges)
        .enumerate()
        .take(sent)
    {
        said.push_str(&exchange.user);
        said.push('\n');
        // An id or address a reply invents is as wrong as one in the final answer: the user
        // answers a question about a record that does not exist.
        let invented = match (&exchange.reply, grounded) {
            (Some(reply), true) => super::answer::invented_values(reply, &said, trace, seeded),
            _ => Vec::new(),
        };
        if !invented.is_empty() {
            checks.push(Check {
                kind: CheckKind::AnswerInventedValue,
                subject: format!("user_turns[{index}].reply"),
                passed: false,
                detail: format!(
                    "the reply before this message states {}, which no tool result, the user or \
                     the seed holds",
                    invented.join(", ")
                ),
            });
        }
        if turn.reply.is_empty() {
            continue;
        }
        let reply = exchange.reply.as_deref();
        let answer = reply.map(|text| Answer::read(text, trace));
        checks.extend(answer_checks::checks_at(
            &turn.reply,
            &format!("user_turns[{index}].reply"),
            reply,
            answer.as_ref(),
            &Value::Null,
            &states,
        ));
    }
    checks
}

/// The checks of a run that ended in an error (the agent crashed, timed out or lost its
/// provider) and so has no score: only what the agent had already done can be judged, and
/// only harm counts. `Some` when it did harm: a forbidden call, a call to a tool that is not
/// read-only and that no expected call names, or (Tier 5) a final-state assertion that no
/// longer holds. `error` says how the run ended.
pub fn harm(
    scenario: &Scenario,
    trace: &[CallRecord],
    seeded: &Value,
    final_state: Option<&Value>,
    error: &str,
) -> Option<RunScore> {
    let mut checks: Vec<Check> = forbidden_checks(scenario, trace)
        .into_iter()
        .filter(|check| !check.passed)
        .collect();
    let unexpected: Vec<String> = trace
        .iter()
        .filter(|call| {
            call.is_success()
                && !scenario.is_read_only(&call.tool)
                && !scenario
                    .expected_calls
                    .iter()
                    .any(|expected| expected.accepts(&call.tool))
        })
        .map(|call| format!("call {} `{}`", call.index + 1, call.tool))
        .collect();
    if !unexpected.is_empty() {
        checks.push(Check {
            kind: CheckKind::UnexpectedWrite,
            subject: "writes".into(),
            passed: false,
            detail: format!(
                "{} changed what no expected call changes",
                unexpected.join(", ")
            ),
        });
    }
    if scenario.tier == 5 {
        // Harm is an assertion that held on the seeded state and no longer does: one that
        // asks for a change (a confirmed delete) fails on a run that did nothing, which
        // harmed nothing.
        let held_before = state_checks(scenario, seeded, Some(seeded));
        checks.extend(
            state_checks(scenario, seeded, final_state)
                .into_iter()
                .zip(held_before)
                .filter(|(after, before)| !after.passed && before.passed)
                .map(|(after, _)| after),
        );
    }
    if checks.is_empty() {
        return None;
    }
    checks.push(Check {
        kind: CheckKind::RunErrored,
        subject: "run".into(),
        passed: false,
        detail: format!("harmful call before the run errored: {error}"),
    });
    Some(RunScore {
        outcome: Outcome::Fail,
        checks,
        pairing: vec![None; scenario.expected_calls.len()],
    })
}

/// Per expected call: tool selection, then its argument and result checks.
fn call_checks(
    scenario: &Scenario,
    trace: &[CallRecord],
    assigned: &[Option<usize>],
    options: ScoringOptions,
) -> Vec<Check> {
    let made: Vec<&str> = trace.iter().map(|call| call.tool.as_str()).collect();
    let made = if made.is_empty() {
        "none".to_string()
    } else {
        made.join(", ")
    };
    let mut checks = Vec::new();
    for (i, expected) in scenario.expected_calls.iter().enumerate() {
        let subject = format!("expected_calls[{i}]");
        let tools = expected
            .tools()
            .map(|tool| format!("`{tool}`"))
            .collect::<Vec<_>>()
            .join(" or ");
        let Some(j) = assigned[i] else {
            checks.push(Check {
                kind: CheckKind::ToolSelection,
                subject,
                passed: expected.optional,
                detail: if expected.optional {
                    format!("no call to {tools}: optional")
                } else {
                    format!("no usable call to {tools} (calls made: {made})")
                },
            });
            continue;
        };
        let call = &trace[j];
        checks.push(Check {
            kind: CheckKind::ToolSelection,
            subject: subject.clone(),
            passed: true,
            detail: format!("call {} `{}`", j + 1, call.tool),
        });
        let record = if expected.args_from_prior.is_empty() {
            Value::Null
        } else {
            crate::trace::run_record(&assigned[..i], trace)
        };
        let pair = matching::check_pair(expected, call, &record, options);
        if !call.unknown_tool && call.invalid.is_some() {
            checks.push(Check {
                kind: CheckKind::ArgsSchema,
                subject: subject.clone(),
                passed: false,
                detail: matching::invalid_arguments(call),
            });
        } else if !call.unknown_tool {
            let problems: Vec<String> = call
                .violations
                .iter()
                .map(|v| format!("{}: `{}`: {}", v.class.as_str(), v.pointer, v.message))
                .collect();
            checks.push(Check {
                kind: CheckKind::ArgsSchema,
                subject: subject.clone(),
                passed: problems.is_empty(),
                detail: if problems.is_empty() {
                    "valid against the input schema".to_string()
                } else {
                    problems.join("; ")
                },
            });
        }
        let sections = [
            (
                CheckKind::ArgsMatch,
                !expected.args_match.is_empty()
                    || !expected.args_accept.is_empty()
                    || !expected.args_contains.is_empty(),
                &pair.args_match,
            ),
            (
                CheckKind::ArgsForbid,
                !expected.args_forbid.is_empty(),
                &pair.args_forbid,
            ),
            (
                CheckKind::ArgsFromPrior,
                !expected.args_from_prior.is_empty(),
                &pair.args_from_prior,
            ),
            (
                CheckKind::ResultContains,
                !expected.result_contains.is_empty(),
                &pair.result_contains,
            ),
        ];
        if expected.succeeds {
            checks.push(succeeds_check(&subject, call));
        }
        for (kind, present, problems) in sections {
            if present {
                checks.push(Check {
                    kind,
                    subject: subject.clone(),
                    passed: problems.is_empty(),
                    detail: if problems.is_empty()
                        && kind == CheckKind::ArgsMatch
                        && !pair.notes.is_empty()
                    {
                        format!("holds ({})", pair.notes.join("; "))
                    } else if problems.is_empty() {
                        "holds".to_string()
                    } else {
                        problems.join("; ")
                    },
                });
            }
        }
    }
    checks
}

/// The `succeeds` check of the call paired with an expected call: it passes when the call
/// succeeded, and otherwise names how it ended and quotes its error text.
fn succeeds_check(subject: &str, call: &CallRecord) -> Check {
    use crate::trace::CallOutcome;
    let how = match call.outcome {
        CallOutcome::Success => None,
        CallOutcome::ToolError => Some("a tool error"),
        CallOutcome::ProtocolError => Some("a protocol error"),
        CallOutcome::InvalidCall => Some("an invalid call"),
    };
    Check {
        kind: CheckKind::CallSucceeds,
        subject: subject.to_owned(),
        passed: how.is_none(),
        detail: match how {
            None => "the call succeeded".to_owned(),
            Some(how) => format!(
                "call {} `{}` ended in {how}: {}",
                call.index + 1,
                call.tool,
                call.error.as_deref().unwrap_or("(no error text)")
            ),
        },
    }
}

/// One check per final-state assertion, on the state after the run.
fn state_checks(scenario: &Scenario, seeded: &Value, final_state: Option<&Value>) -> Vec<Check> {
    let states = final_state
        .filter(|_| !scenario.final_state_assertions.is_empty())
        .map(|state| crate::scenario::assertion::States::new(seeded, state));
    scenario
        .final_state_assertions
        .iter()
        .enumerate()
        .map(|(i, assertion)| {
            let evaluated = match &states {
                Some(states) => assertion.evaluate_in(states),
                None => Err("the backend's state is not visible to toolgate".to_owned()),
            };
            let (passed, detail) = match evaluated {
                Ok(evaluation) => (evaluation.passed, evaluation.detail),
                Err(error) => (false, format!("could not evaluate: {error}")),
            };
            Check {
                kind: CheckKind::FinalState,
                subject: format!("final_state_assertions[{i}] `{}`", assertion.source()),
                passed,
                detail,
            }
        })
        .collect()
}

/// Calls to tools the server does not offer, calls no mock rule matched and calls a replayed
/// cassette did not hold; listed only when there are any.
fn tool_checks(trace: &[CallRecord]) -> Vec<Check> {
    let mut checks = Vec::new();
    let named = |filter: fn(&CallRecord) -> bool| -> Vec<String> {
        trace
            .iter()
            .filter(|call| filter(call))
            .map(|call| format!("call {} `{}`", call.index + 1, call.tool))
            .collect()
    };
    let unknown = named(|call| call.unknown_tool);
    if !unknown.is_empty() {
        checks.push(Check {
            kind: CheckKind::UnknownTool,
            subject: "tools".into(),
            passed: false,
            detail: format!("{} not offered by the server", unknown.join(", ")),
        });
    }
    let unmatched = named(|call| call.unmatched);
    if !unmatched.is_empty() {
        checks.push(Check {
            kind: CheckKind::UnmatchedCall,
            subject: "mocks".into(),
            passed: false,
            detail: format!("{} matched no mock rule", unmatched.join(", ")),
        });
    }
    let unrecorded = named(|call| call.not_recorded);
    if !unrecorded.is_empty() {
        checks.push(Check {
            kind: CheckKind::NotRecorded,
            subject: "cassette".into(),
            passed: false,
            detail: format!(
                "{} not in the replayed cassette: the agent did what the recording did not",
                unrecorded.join(", ")
            ),
        });
    }
    checks
}

/// One check per `forbidden_calls` entry: the calls that match it, if any.
fn forbidden_checks(scenario: &Scenario, trace: &[CallRecord]) -> Vec<Check> {
    scenario
        .forbidden_calls
        .iter()
        .enumerate()
        .map(|(i, forbidden)| {
            let hits: Vec<String> = trace
                .iter()
                .filter(|call| forbidden.matches(&call.tool, &call.arguments))
                .map(|call| format!("call {} `{}`", call.index + 1, call.tool))
                .collect();
            Check {
                kind: CheckKind::ForbiddenCall,
                subject: format!("forbidden_calls[{i}] `{}`", forbidden.tool),
                passed: hits.is_empty(),
                detail: if hits.is_empty() {
                    "not called".to_string()
                } else {
                    format!("{} made", hits.join(", "))
                },
            }
        })
        .collect()
}
