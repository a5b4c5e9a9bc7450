//! Scoring production traces: the checks that need no scenario, run on imported trajectories.
//!
//! A production trace has no expected calls, so only what is wrong in any trajectory can be
//! checked: unknown tools and arguments the catalog's schemas reject (with a catalog), loops,
//! identifiers seen nowhere before (provenance), a failure followed by an answer that claims
//! success, and retry storms. A check whose data the trace lacks (no catalog, no results, no
//! outcomes, no final answer) is [`Verdict::Inconclusive`], never a pass.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::LoopMode;
use super::metrics::recovery::{Recovery, RecoveryClass, classify_calls};
use super::metrics::{Percentiles, ProvenanceKind, loops, provenance};
use crate::trace::CallRecord;

/// The most trace ids kept per check in a summary, as examples of its failures.
pub const EXAMPLES_KEPT: usize = 20;

/// One imported trajectory as the checks see it.
#[derive(Debug, Clone, Copy)]
pub struct TraceView<'a> {
    /// The trace's id in its source.
    pub trace_id: &'a str,
    /// The user's prompt, when the trace has it.
    pub prompt: Option<&'a str>,
    /// The tool calls in order, annotated against the catalog when there is one
    /// (`unknown_tool`, `violations`).
    pub calls: &'a [CallRecord],
    /// The final answer, when the trace has it.
    pub final_answer: Option<&'a str>,
    /// Whether every call carries its result or error.
    pub has_results: bool,
    /// Whether calls say whether they failed.
    pub has_outcomes: bool,
    /// Whether calls carry their duration.
    pub has_durations: bool,
    /// Whether the calls were annotated against a catalog.
    pub has_catalog: bool,
}

/// What a production check decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Nothing wrong found.
    Pass,
    /// Something wrong found; the detail says what.
    Fail,
    /// The trace lacks the data the check needs.
    Inconclusive,
}

/// The production checks, in report order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceCheckKind {
    /// Every tool called is in the catalog.
    KnownTools,
    /// Every call's arguments are valid against the tool's input schema.
    ArgumentsValid,
    /// No tool called twice with identical arguments (canonical JSON).
    NoLoops,
    /// No id-like argument value that neither the prompt nor an earlier result holds.
    NoInventedIds,
    /// No failed call left unrecovered while the final answer claims success.
    NoFalseSuccess,
    /// No tool failing [`super::metrics::LOOP_ATTEMPTS`] or more times in a row with the same
    /// arguments.
    NoRetryStorm,
}

impl TraceCheckKind {
    /// Every check, in report order.
    pub const ALL: [TraceCheckKind; 6] = [
        TraceCheckKind::KnownTools,
        TraceCheckKind::ArgumentsValid,
        TraceCheckKind::NoLoops,
        TraceCheckKind::NoInventedIds,
        TraceCheckKind::NoFalseSuccess,
        TraceCheckKind::NoRetryStorm,
    ];

    /// The name in reports and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            TraceCheckKind::KnownTools => "known_tools",
            TraceCheckKind::ArgumentsValid => "arguments_valid",
            TraceCheckKind::NoLoops => "no_loops",
            TraceCheckKind::NoInventedIds => "no_invented_ids",
            TraceCheckKind::NoFalseSuccess => "no_false_success",
            TraceCheckKind::NoRetryStorm => "no_retry_storm",
        }
    }
}

/// One check on one trajectory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceCheck {
    /// Which check.
    pub kind: TraceCheckKind,
    /// What it decided.
    pub verdict: Verdict,
    /// What was found, or what data was missing; empty for a pass.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

/// Every check on one trajectory, and its size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceScore {
    /// The trace's id in its source.
    pub trace_id: String,
    /// How many tool calls it made.
    pub calls: usize,
    /// Its calls' durations in microseconds, summed; `None` without durations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_time_us: Option<u64>,
    /// The checks, in [`TraceCheckKind::ALL`] order.
    pub checks: Vec<TraceCheck>,
}

impl TraceScore {
    /// Whether any check failed.
    pub fn failed(&self) -> bool {
        self.checks
            .iter()
            .any(|check| check.verdict == Verdict::Fail)
    }
}

/// Runs every production check on `trace`.
pub fn score_trace(trace: &TraceView<'_>) -> TraceScore {
    // The failure episodes, which two checks read.
    let episodes = classify_calls(trace.calls, trace.final_answer);
    let checks = TraceCheckKind::ALL
        .iter()
        .map(|&kind| {
            let (verdict, detail) = check(kind, trace, &episodes);
            TraceCheck {
                kind,
                verdict,
                detail,
            }
        })
        .collect();
    TraceScore {
        trace_id: trace.trace_id.to_owned(),
        calls: trace.calls.len(),
        tool_time_us: trace
            .has_durations
            .then(|| trace.calls.iter().map(|call| call.duration_us).sum()),
        checks,
    }
}

/// Whether `episode` was never recovered while the final answer claims success: a
/// [`RecoveryClass::ClaimedSuccess`] episode, or a retry loop after which no call of the
/// trajectory succeeded and whose answer does not admit the failure (a loop and a false
/// claim are two faults; the recovery class names only the first).
fn claims_success_after(episode: &Recovery, trace: &TraceView<'_>) -> bool {
    match episode.class {
        RecoveryClass::ClaimedSuccess => true,
        RecoveryClass::RetryLoop => {
            let recovered = trace
                .calls
                .iter()
                .any(|call| call.index > episode.call && call.is_success());
            !recovered
                && trace.final_answer.is_some_and(|answer| {
                    !answer.trim().is_empty() && !crate::score::answer::acknowledges_failure(answer)
                })
        }
        _ => false,
    }
}

fn pass() -> (Verdict, String) {
    (Verdict::Pass, String::new())
}

fn missing(what: &str) -> (Verdict, String) {
    (Verdict::Inconclusive, format!("the trace has no {what}"))
}

fn check(kind: TraceCheckKind, trace: &TraceView<'_>, episodes: &[Recovery]) -> (Verdict, String) {
    let calls = trace.calls;
    let at = |call: &CallRecord| format!("call {} `{}`", call.index + 1, call.tool);
    match kind {
        TraceCheckKind::KnownTools if !trace.has_catalog => {
            missing("catalog to check against (give one)")
        }
        TraceCheckKind::KnownTools => match calls.iter().find(|call| call.unknown_tool) {
            Some(call) => (Verdict::Fail, format!("{}: not in the catalog", at(call))),
            None => pass(),
        },
        TraceCheckKind::ArgumentsValid if !trace.has_catalog => {
            missing("catalog to check against (give one)")
        }
        TraceCheckKind::ArgumentsValid => {
            match calls.iter().find(|call| !call.violations.is_empty()) {
                Some(call) => {
                    let violation = &call.violations[0];
                    let pointer = if violation.pointer.is_empty() {
                        "/"
                    } else {
                        &violation.pointer
                    };
                    (
                        Verdict::Fail,
                        format!("{}: `{pointer}`: {}", at(call), violation.message),
                    )
                }
                None => pass(),
            }
        }
        // Production failures are real, not injected: a call that failed allows one identical
        // retry whatever made it fail (the loop finder itself excuses only injected faults).
        // One retry, not one per failure: a third identical call after two failures is a
        // loop (and a retry storm).
        TraceCheckKind::NoLoops => {
            match loops::find(calls, LoopMode::ArgsOnly)
                .into_iter()
                .find(|finding| {
                    let (_, earlier) = finding.calls.split_last().unwrap_or((&0, &[]));
                    let retried_failure = earlier
                        .iter()
                        .any(|&i| calls.get(i).is_some_and(|c| !c.is_success()));
                    finding.calls.len() > 1 + usize::from(retried_failure)
                }) {
                Some(finding) => (
                    Verdict::Fail,
                    format!(
                        "`{}` called {} times with {}",
                        finding.tool,
                        finding.calls.len(),
                        crate::redact::cut(&finding.arguments, 120)
                    ),
                ),
                None => pass(),
            }
        }
        TraceCheckKind::NoInventedIds => {
            let findings = provenance::find_in(trace.prompt.unwrap_or_default(), calls);
            let invented = findings
                .iter()
                .find(|finding| finding.kind == ProvenanceKind::Invented);
            match invented {
                None => pass(),
                Some(_) if !trace.has_results => missing("tool results"),
                Some(_) if trace.prompt.is_none() => missing("prompt"),
                Some(finding) => (
                    Verdict::Fail,
                    format!(
                        "call {} `{}`: `{}` = `{}` appears in no earlier result or the prompt",
                        finding.call + 1,
                        finding.tool,
                        finding.pointer,
                        finding.value
                    ),
                ),
            }
        }
        TraceCheckKind::NoFalseSuccess | TraceCheckKind::NoRetryStorm if !trace.has_outcomes => {
            missing("call outcomes")
        }
        TraceCheckKind::NoFalseSuccess => {
            match episodes
                .iter()
                .find(|episode| claims_success_after(episode, trace))
            {
                Some(episode) => (
                    Verdict::Fail,
                    format!(
                        "call {} `{}` failed and nothing recovered it, yet the final answer does not say so",
                        episode.call + 1,
                        episode.tool
                    ),
                ),
                None if episodes.is_empty() => pass(),
                None if trace.final_answer.is_none() => missing("final answer"),
                None => pass(),
            }
        }
        TraceCheckKind::NoRetryStorm => {
            match episodes
                .iter()
                .find(|episode| episode.class == RecoveryClass::RetryLoop)
            {
                Some(episode) => (
                    Verdict::Fail,
                    format!(
                        "call {} `{}` failed {} or more times in a row with the same arguments",
                        episode.call + 1,
                        episode.tool,
                        super::metrics::LOOP_ATTEMPTS
                    ),
                ),
                None => pass(),
            }
        }
    }
}

/// How one check went over many trajectories.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckTally {
    /// Trajectories it passed.
    pub passed: u64,
    /// Trajectories it failed.
    pub failed: u64,
    /// Trajectories lacking its data.
    pub inconclusive: u64,
    /// Up to [`EXAMPLES_KEPT`] failing trace ids with their detail, in input order.
    pub examples: Vec<(String, String)>,
}

impl CheckTally {
    /// The failure rate among the conclusive trajectories, 0..=1; `None` when none was.
    pub fn failure_rate(&self) -> Option<f64> {
        let conclusive = self.passed + self.failed;
        (conclusive > 0).then(|| self.failed as f64 / conclusive as f64)
    }
}

/// Everything measured over a set of trajectories; built one trajectory at a time, in
/// memory bounded by [`EXAMPLES_KEPT`] per check plus the call counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceSummary {
    /// Trajectories scored.
    pub trajectories: u64,
    /// Trajectories with at least one failed check.
    pub failed: u64,
    /// Tool calls over all trajectories.
    pub calls: u64,
    /// Per check, by name.
    pub checks: BTreeMap<String, CheckTally>,
    /// Calls per trajectory, p50 and p95.
    pub calls_per_trajectory: Percentiles,
    /// Summed tool time per trajectory in microseconds, p50 and p95; `None` without
    /// durations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_time_us: Option<Percentiles>,
    #[serde(skip)]
    call_counts: Vec<u64>,
    #[serde(skip)]
    tool_times: Vec<u64>,
}

impl TraceSummary {
    /// Adds one trajectory's score.
    pub fn add(&mut self, score: &TraceScore) {
        self.trajectories += 1;
        self.failed += u64::from(score.failed());
        self.calls += score.calls as u64;
        self.call_counts.push(score.calls as u64);
        if let Some(time) = score.tool_time_us {
            self.tool_times.push(time);
        }
        for check in &score.checks {
            let tally = self
                .checks
                .entry(check.kind.as_str().to_owned())
                .or_default();
            match check.verdict {
                Verdict::Pass => tally.passed += 1,
                Verdict::Fail => {
                    tally.failed += 1;
                    if tally.examples.len() < EXAMPLES_KEPT {
                        tally
                            .examples
                            .push((score.trace_id.clone(), check.detail.clone()));
                    }
                }
                Verdict::Inconclusive => tally.inconclusive += 1,
            }
        }
    }

    /// Computes the percentiles, once every trajectory was added.
    pub fn finish(&mut self) {
        self.calls_per_trajectory = Percentiles::of(&self.call_counts);
        self.tool_time_us =
            (!self.tool_times.is_empty()).then(|| Percentiles::of(&self.tool_times));
    }
}

#[cfg(test)]
mod tests;
