//! Deterministic scoring of one run: did the trajectory and the final state satisfy the
//! scenario? Pure functions from (scenario, trace, states) to a [`RunScore`].

pub mod answer;
pub mod budget;
pub mod compare;
pub mod matching;
pub mod metrics;
pub mod probes;
pub mod production;
pub mod reference_match;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::scenario::{Ordering, Scenario};
use crate::trace::CallRecord;

/// The verdict on one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Every deterministic check holds.
    Pass,
    /// Every deterministic check holds, but the judge flagged the final answer (right
    /// actions, faulty narration). Counts as a pass for the gate; reported apart.
    Degraded,
    /// At least one deterministic check fails.
    Fail,
    /// The run could not be judged (provider outage, crash, timeout): never a pass and never
    /// a model failure.
    Errored,
}

impl Outcome {
    /// Whether every deterministic check held (pass or degraded).
    pub fn is_pass(self) -> bool {
        matches!(self, Outcome::Pass | Outcome::Degraded)
    }
}

/// What a check looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// An expected call was made with the right tool.
    ToolSelection,
    /// The paired call's arguments are valid against the tool's input schema.
    ArgsSchema,
    /// `args_match` holds.
    ArgsMatch,
    /// `args_forbid` holds.
    ArgsForbid,
    /// `args_from_prior` holds.
    ArgsFromPrior,
    /// Strict ordering holds.
    Ordering,
    /// The run stayed within `max_calls`.
    MaxCalls,
    /// The run stayed within one tool's `max_per_tool` budget.
    MaxPerTool,
    /// The run stayed within `max_failures`.
    MaxFailures,
    /// Every call names a tool the server offers (present only when one does not: an invented
    /// tool name, BFCL's hallucinated function).
    UnknownTool,
    /// Every call to a declarative mock matched one of its rules (present only when one did
    /// not: the suite never said what the tool does for those arguments).
    UnmatchedCall,
    /// A final-state assertion holds.
    FinalState,
    /// No call in the trajectory matches a `forbidden_calls` entry.
    ForbiddenCall,
    /// The final answer contains a value from a tool result (`final_answer.contains_results`).
    AnswerContainsResult,
    /// The final answer contains a literal text (`final_answer.contains_text`).
    AnswerContainsText,
    /// The final answer asks a clarifying question.
    AnswerAsksClarification,
    /// The final answer acknowledges a failure.
    AnswerAcknowledgesFailure,
    /// The final answer declines the request.
    AnswerRefuses,
}

/// One deterministic check with its reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Check {
    /// What it looks at.
    pub kind: CheckKind,
    /// Where in the scenario it comes from, e.g. `expected_calls[1]`.
    pub subject: String,
    /// Whether it holds.
    pub passed: bool,
    /// Why, in one line.
    pub detail: String,
}

/// The scored run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunScore {
    /// Pass when every check holds.
    pub outcome: Outcome,
    /// Every check, in scenario order.
    pub checks: Vec<Check>,
    /// For each expected call, the index of the actual call paired with it.
    pub pairing: Vec<Option<usize>>,
}

impl RunScore {
    /// The failing checks.
    pub fn failures(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|check| !check.passed)
    }

    /// Adds `checks` (e.g. [`probes::probe_checks`]); a failing one turns a pass into a fail.
    pub fn add_checks(&mut self, checks: Vec<Check>) {
        if checks.iter().any(|check| !check.passed) {
            self.outcome = Outcome::Fail;
        }
        self.checks.extend(checks);
    }
}

/// What a missing argument whose expected value equals the schema's `default` counts as
/// (field case B02, BFCL's possible-answer rule vs a default-aware rule).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    clap::ValueEnum,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum OmittedDefaults {
    /// Missing: the expected value must be sent (BFCL-compatible).
    #[default]
    Strict,
    /// Held: leaving out an argument is the same as sending its schema default.
    Schema,
}

/// Scoring rules that apply to a whole run; recorded in the results.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct ScoringOptions {
    /// See [`OmittedDefaults`].
    pub omitted_defaults: OmittedDefaults,
    /// How number arguments are read (the harness applies it when a call arrives).
    #[serde(default)]
    pub numbers: crate::json::NumberMode,
    /// What double-encoded object or array arguments count as (applied by the harness).
    #[serde(default)]
    pub double_encoded: crate::json::DoubleEncoded,
    /// What counts as a loop.
    #[serde(default)]
    pub loops: LoopMode,
}

impl ScoringOptions {
    /// Each rule and its mode, as reports list them: omitted defaults, numbers, double-encoded
    /// arguments, loops.
    pub fn modes(&self) -> [(&'static str, &'static str); 4] {
        [
            (
                "omitted defaults",
                match self.omitted_defaults {
                    OmittedDefaults::Strict => "strict",
                    OmittedDefaults::Schema => "schema",
                },
            ),
            ("numbers", self.numbers.as_str()),
            ("double-encoded arguments", self.double_encoded.as_str()),
            ("loops", self.loops.as_str()),
        ]
    }
}

/// What counts as a loop (`scoring.loops` in `toolgate.yaml`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum LoopMode {
    /// The same tool with the same arguments (by value, keys in any order) more than once.
    #[default]
    ArgsOnly,
    /// As `args_only`, and the repeats also got the same result (or error): polling a job
    /// whose status changes between calls is not a loop.
    ResultAware,
}

impl LoopMode {
    /// The name in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            LoopMode::ArgsOnly => "args_only",
            LoopMode::ResultAware => "result_aware",
        }
    }
}

/// Scores one run of `scenario`: the `trace` of calls (with the harness's schema findings),
/// the `seeded` state, the backend's state after the run (`None` when the backend's state
/// cannot be seen: final-state assertions then fail), the agent's final answer (`None` when it
/// gave none) and the run-wide `options`.
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
    let mut checks = Vec::new();
    let made: Vec<&str> = trace.iter().map(|call| call.tool.as_str()).collect();
    let made = if made.is_empty() {
        "none".to_string()
    } else {
        made.join(", ")
    };

    for (i, expected) in scenario.expected_calls.iter().enumerate() {
        let subject = format!("expected_calls[{i}]");
        let Some(j) = pairing.assigned[i] else {
            checks.push(Check {
                kind: CheckKind::ToolSelection,
                subject,
                passed: false,
                detail: format!("no usable call to `{}` (calls made: {made})", expected.tool),
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
            crate::trace::run_record(&pairing.assigned[..i], trace)
        };
        let pair = matching::check_pair(expected, call, &record, options);
        if !call.unknown_tool && call.invalid.is_none() {
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
                !expected.args_match.is_empty() || !expected.args_accept.is_empty(),
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
        ];
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

    if strict && scenario.expected_calls.len() > 1 {
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

    let states = final_state
        .filter(|_| !scenario.final_state_assertions.is_empty())
        .map(|state| crate::scenario::assertion::States::new(seeded, state));
    for (i, assertion) in scenario.final_state_assertions.iter().enumerate() {
        let evaluated = match &states {
            Some(states) => assertion.evaluate_in(states),
            None => Err("the backend's state is not visible to toolgate".to_owned()),
        };
        let (passed, detail) = match evaluated {
            Ok(evaluation) => (evaluation.passed, evaluation.detail),
            Err(error) => (false, format!("could not evaluate: {error}")),
        };
        checks.push(Check {
            kind: CheckKind::FinalState,
            subject: format!("final_state_assertions[{i}] `{}`", assertion.source()),
            passed,
            detail,
        });
    }

    let unknown: Vec<String> = trace
        .iter()
        .filter(|call| call.unknown_tool)
        .map(|call| format!("call {} `{}`", call.index + 1, call.tool))
        .collect();
    if !unknown.is_empty() {
        checks.push(Check {
            kind: CheckKind::UnknownTool,
            subject: "tools".into(),
            passed: false,
            detail: format!("{} not offered by the server", unknown.join(", ")),
        });
    }

    let unmatched: Vec<String> = trace
        .iter()
        .filter(|call| call.unmatched)
        .map(|call| format!("call {} `{}`", call.index + 1, call.tool))
        .collect();
    if !unmatched.is_empty() {
        checks.push(Check {
            kind: CheckKind::UnmatchedCall,
            subject: "mocks".into(),
            passed: false,
            detail: format!("{} matched no mock rule", unmatched.join(", ")),
        });
    }

    checks.extend(forbidden_checks(scenario, trace));
    let record = if scenario.final_answer.contains_results.is_empty() {
        Value::Null
    } else {
        crate::trace::run_record(&pairing.assigned, trace)
    };
    checks.extend(answer_checks(scenario, final_answer, &record));

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

/// One check per `forbidden_calls` entry: the calls that match it, if any.
fn forbidden_checks(scenario: &Scenario, trace: &[CallRecord]) -> Vec<Check> {
    scenario
        .forbidden_calls
        .iter()
        .enumerate()
        .map(|(i, forbidden)| {
            let hits: Vec<String> = trace
                .iter()
                .filter(|call| call.tool == forbidden.tool)
                .filter(|call| {
                    forbidden.args_match.iter().all(|(name, wanted)| {
                        call.arguments.get(name).is_some_and(|actual| {
                            crate::json::match_value(wanted, actual, "").is_ok()
                        })
                    })
                })
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

/// The `final_answer` checks, in file order: results, texts, then the three moves.
fn answer_checks(scenario: &Scenario, final_answer: Option<&str>, record: &Value) -> Vec<Check> {
    let checks = &scenario.final_answer;
    let text = final_answer.unwrap_or_default();
    let quoted = format!(
        "answer \"{}\"",
        crate::json::short(&Value::String(text.to_string())).trim_matches('"')
    );
    let mut out = Vec::new();
    let mut push = |kind, subject: String, passed: bool, why: String| {
        let detail = match (passed, final_answer) {
            (true, _) => "holds".to_string(),
            (false, None) => "no final answer".to_string(),
            (false, Some(_)) => why,
        };
        out.push(Check {
            kind,
            subject,
            passed,
            detail,
        });
    };
    for (i, reference) in checks.contains_results.iter().enumerate() {
        let subject = format!("final_answer.contains_results[{i}] `{}`", reference.source);
        match reference.path.query(record).exactly_one() {
            Ok(value) => {
                let passed = answer::mentions(text, value);
                push(
                    CheckKind::AnswerContainsResult,
                    subject,
                    passed,
                    format!("{quoted} does not mention {}", crate::json::short(value)),
                );
            }
            Err(_) => push(
                CheckKind::AnswerContainsResult,
                subject,
                false,
                format!(
                    "no single value at `{}` (calls[{}] unpaired or without that result)",
                    reference.source, reference.call_index
                ),
            ),
        }
    }
    for (i, wanted) in checks.contains_text.iter().enumerate() {
        let passed = text.to_lowercase().contains(&wanted.to_lowercase());
        push(
            CheckKind::AnswerContainsText,
            format!("final_answer.contains_text[{i}]"),
            passed,
            format!("{quoted} does not contain \"{wanted}\""),
        );
    }
    let moves = [
        (
            checks.asks_clarification,
            CheckKind::AnswerAsksClarification,
            "asks_clarification",
            answer::asks_clarification(text),
            "asks no clarifying question",
        ),
        (
            checks.acknowledges_failure,
            CheckKind::AnswerAcknowledgesFailure,
            "acknowledges_failure",
            answer::acknowledges_failure(text),
            "does not acknowledge the failure",
        ),
        (
            checks.refuses,
            CheckKind::AnswerRefuses,
            "refuses",
            answer::refuses(text),
            "does not decline the request",
        ),
    ];
    for (wanted, kind, name, passed, why) in moves {
        if wanted {
            push(
                kind,
                format!("final_answer.{name}"),
                passed,
                format!("{quoted} {why}"),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod answer_tests;
