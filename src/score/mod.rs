//! Deterministic scoring of one run: did the trajectory and the final state satisfy the
//! scenario? Pure functions from (scenario, trace, states) to a [`RunScore`].

pub mod answer;
pub mod answer_checks;
pub mod budget;
pub mod compare;
pub mod conversation;
pub mod elicitation;
pub mod matching;
pub mod metrics;
pub mod probes;
pub mod production;
pub mod reference_match;
mod run;
pub mod simulated;
pub mod simulator_mistakes;
pub mod state_diff;
pub mod usage;

pub use run::{conversation_checks, harm, score};

use serde::{Deserialize, Serialize};

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
    /// The user simulator made a mistake (it revealed what it must never say, stated
    /// something outside its facts, ended early or answered as the agent): the run says
    /// nothing about the agent. Never a pass, never a model failure; counted with the errored
    /// runs wherever runs are tallied, and shown apart.
    Inconclusive,
}

impl Outcome {
    /// Whether every deterministic check held (pass or degraded).
    pub fn is_pass(self) -> bool {
        matches!(self, Outcome::Pass | Outcome::Degraded)
    }

    /// The name in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Degraded => "degraded",
            Outcome::Fail => "fail",
            Outcome::Errored => "errored",
            Outcome::Inconclusive => "inconclusive",
        }
    }

    /// Whether the run was left unjudged: errored or inconclusive (left out of pass rates).
    pub fn is_unjudged(self) -> bool {
        matches!(self, Outcome::Errored | Outcome::Inconclusive)
    }
}

/// What a check looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// An expected call was made with the right tool (or, optional, left out).
    ToolSelection,
    /// The paired call's arguments are valid against the tool's input schema.
    ArgsSchema,
    /// `args_match` holds.
    ArgsMatch,
    /// `args_forbid` holds.
    ArgsForbid,
    /// `args_from_prior` holds.
    ArgsFromPrior,
    /// The paired call's result contains what `result_contains` names.
    ResultContains,
    /// The paired call succeeded (`succeeds: true`): no tool, protocol or invalid-call error.
    CallSucceeds,
    /// Strict ordering holds.
    Ordering,
    /// The run stayed within `max_calls`.
    MaxCalls,
    /// The run stayed within `max_reads` (calls to read-only tools).
    MaxReads,
    /// The run stayed within `max_writes` (all other calls).
    MaxWrites,
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
    /// Every call of a replayed run was in its cassette (present only when one was not: the
    /// agent did what the recording did not, and nobody knows what the server would answer).
    NotRecorded,
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
    /// The final answer mentions (or, `absent`, does not mention) a value
    /// (`final_answer.values`).
    AnswerValue,
    /// The final answer makes a claim, not negated (`final_answer.claims`).
    AnswerClaims,
    /// The final answer does not make a claim (`final_answer.must_not_claim`).
    AnswerMustNotClaim,
    /// At least one group of `final_answer.any_of` holds whole.
    AnswerAnyOf,
    /// The final answer names no date with the wrong weekday (every run with an answer;
    /// listed only when it fails).
    AnswerCalendar,
    /// The final answer states no record's attribute next to another record
    /// (`final_answer.attributes`).
    AnswerAttributes,
    /// After a write that failed, the final answer admits it (every run with such a write).
    ClaimedSuccess,
    /// The final answer states no id or email address the run never saw (Tier 5).
    AnswerInventedValue,
    /// A write to a tool no expected call names, made before the run errored.
    UnexpectedWrite,
    /// The run errored after doing harm (listed with the harm it did).
    RunErrored,
    /// The model's last reply stopped at the output limit (`max_tokens`) with no tool call:
    /// its answer is cut off (present only when it did).
    Truncated,
    /// The run ran out of time while the model was generating (present only when it did).
    TimedOut,
    /// The run stayed within one limit of its scenario's `usage_budget` (tokens, model calls,
    /// wall time, cost).
    UsageBudget,
    /// In a scripted conversation: the agent stopped for a message that needed it (`wait`),
    /// or its play ended before the user's last message.
    Conversation,
    /// A tool asked the user for input (`elicitations`) and the agent's client showed the
    /// request to the user and returned the user's answer to the server, unchanged (one check
    /// per elicitation made).
    Elicitation,
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
    Strict,
    /// Held: leaving out an argument is the same as sending its schema default, as the tool
    /// itself reads it (the default: toolgate judges what a call does).
    #[default]
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

#[cfg(test)]
mod tests;

#[cfg(test)]
mod answer_tests;

#[cfg(test)]
mod outcome_tests;
