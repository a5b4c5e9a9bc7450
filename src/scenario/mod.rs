//! Scenario files: the declarative description of one agent task and what a good run of it
//! looks like.
//!
//! Two layers, as everywhere user files are read: [`file`](mod@file) mirrors the JSON/YAML exactly
//! (serde, unknown fields rejected), and [`load`] turns it into the validated [`Scenario`] that
//! the rest of the crate uses without re-checking. See `docs/scenarios.md` for the format.

pub mod assertion;
pub mod capture;
mod elicitation;
pub mod file;
mod fixture;
pub mod identifiers;
pub mod load;
mod seed_paths;
pub mod smoke;
mod source;
mod validate;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use self::assertion::Assertion;
use crate::catalog::{self, Catalog};

pub use capture::{Capture, Placeholder, RecordSource, Unread};
pub use elicitation::{Elicitation, ElicitationAction, ElicitationReply};
pub use fixture::load_fixture;
pub use load::{load_dir, load_faults, load_file};
pub use seed_paths::{SEED, SEED_DIR, SeedPaths, map_strings, placeholder, placeholder_value};
pub use smoke::SmokeSet;
pub use source::SourceLines;

/// The complexity tier of a scenario, 1..=5 (single tool, sequential, parallel, conditional,
/// adversarial). Tier 5 is gated with zero tolerance.
pub type Tier = u8;

/// The kind of behaviour a scenario exercises; every tier mixes the four.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ScenarioKind {
    /// One correct tool with one correct set of arguments.
    SingleCall,
    /// The output of one call feeds the next.
    MultiStep,
    /// A fault is injected and the agent's recovery is checked.
    ErrorRecovery,
    /// The right move is a lookup or a clarifying question, not a guess.
    AmbiguousInput,
}

impl ScenarioKind {
    /// The name used in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            ScenarioKind::SingleCall => "single_call",
            ScenarioKind::MultiStep => "multi_step",
            ScenarioKind::ErrorRecovery => "error_recovery",
            ScenarioKind::AmbiguousInput => "ambiguous_input",
        }
    }
}

/// How the matched calls must be ordered.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Ordering {
    /// Matched calls appear in the expected relative order; unrelated extra calls are allowed
    /// within the call budget.
    #[default]
    Strict,
    /// Any order. Matching is an optimal assignment, so the verdict never depends on the
    /// order of either list.
    Any,
}

/// A scenario's `usage_budget`, validated: each limit `None` when the file sets none.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct UsageBudget {
    /// Input plus output tokens over the run's model requests.
    pub max_tokens: Option<u64>,
    /// Input tokens over the run's model requests.
    pub max_prompt_tokens: Option<u64>,
    /// Output tokens over the run's model requests.
    pub max_completion_tokens: Option<u64>,
    /// Model requests (turns), at least 1.
    pub max_model_calls: Option<u64>,
    /// Wall time of the run in milliseconds, at least 1.
    pub max_wall_ms: Option<u64>,
    /// Cost of the run's tokens in US dollars (finite, at least 0).
    pub max_cost_usd: Option<f64>,
}

impl UsageBudget {
    /// Whether any limit needs the model's reported usage (tokens, model calls, cost): all
    /// but `max_wall_ms`.
    pub fn limits_model_usage(&self) -> bool {
        self.max_tokens.is_some()
            || self.max_prompt_tokens.is_some()
            || self.max_completion_tokens.is_some()
            || self.max_model_calls.is_some()
            || self.max_cost_usd.is_some()
    }
}

/// How `max_failures` counts failing tool calls (field case B33).
///
/// A failing call is any call that did not succeed: a tool error (an injected fault
/// included), a protocol error, or a call the harness refused.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum FailureCounting {
    /// Every failing call counts once: five failing parallel reads are five failures.
    PerCall,
    /// A model turn with at least one failing call counts once: five failing parallel reads
    /// emitted in one response are one failure. The default, because the model made one
    /// decision in that turn; counting each call would spend a whole failure budget on one
    /// burst of parallel calls.
    #[default]
    PerTurn,
}

impl FailureCounting {
    /// The name used in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureCounting::PerCall => "per_call",
            FailureCounting::PerTurn => "per_turn",
        }
    }
}

/// The error a fault injection makes a tool call return.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// HTTP 500 from the upstream system.
    ServerError,
    /// HTTP 429 with a retry hint.
    RateLimit,
    /// HTTP 404: the record does not exist upstream.
    NotFound,
    /// The upstream system did not answer in time.
    Timeout,
}

impl FaultKind {
    /// The tool-error text the agent sees for this fault.
    pub fn message(self, tool: &str) -> String {
        match self {
            FaultKind::ServerError => {
                format!("`{tool}` failed: upstream returned HTTP 500 internal server error")
            }
            FaultKind::RateLimit => {
                format!("`{tool}` failed: HTTP 429 rate limit exceeded, retry after 1 second")
            }
            FaultKind::NotFound => format!("`{tool}` failed: HTTP 404 resource not found"),
            FaultKind::Timeout => {
                format!("`{tool}` failed: upstream did not answer within 30 seconds")
            }
        }
    }
}

/// One injected fault: calls `on_call..on_call + times` (1-based, counted per tool) of `tool`
/// fail with `error` instead of running. The mock state is not touched by a faulted call.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Fault {
    /// The tool whose calls fail.
    pub tool: String,
    /// The first failing call of that tool, 1-based.
    pub on_call: u32,
    /// How many consecutive calls of that tool fail, at least 1.
    pub times: u32,
    /// What the failing calls return.
    pub error: FaultKind,
}

impl Fault {
    /// Whether the `nth` call (1-based) of `tool` is hit by this fault.
    pub fn hits(&self, tool: &str, nth: u32) -> bool {
        self.tool == tool && nth >= self.on_call && nth < self.on_call.saturating_add(self.times)
    }
}

/// An argument that must equal a value found in the run's record.
#[derive(Debug, Clone)]
pub struct PriorRef {
    /// The argument name (top level of the call's arguments).
    pub argument: String,
    /// Where its value is read: a path such as `$.calls[0].result.id`, always into an earlier
    /// expected call, with an optional capture.
    pub from: RecordSource,
}

/// How an argument's value is compared with the expected one (`args_compare`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Comparator {
    /// Equal JSON values, numbers by value (the default).
    #[default]
    Exact,
    /// BFCL's string standardisation: lowercase, spaces and `, . / - _ * ^` removed. Lenient:
    /// `"-5"` equals `"5"`.
    Normalized,
    /// Both parse as the same time of day (`"8:00 AM"` equals `"08:00"`).
    TimeOfDay,
    /// Both parse as the same calendar date (`"20240102"` equals `"2024-01-02"`).
    Date,
    /// Arrays must list their items in the expected order (by default an array matches in
    /// any order, as a set of items).
    Ordered,
    /// The argument is an arithmetic expression (`"48000 * 0.15 + 2500"`) whose value equals
    /// the expected number.
    EvaluatesTo,
}

impl Comparator {
    /// The name used in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Comparator::Exact => "exact",
            Comparator::Normalized => "normalized",
            Comparator::TimeOfDay => "time_of_day",
            Comparator::Date => "date",
            Comparator::Ordered => "ordered",
            Comparator::EvaluatesTo => "evaluates_to",
        }
    }
}

/// One expected tool call.
#[derive(Debug, Clone)]
pub struct ExpectedCall {
    /// The tool that must be called (the one the reference agent calls); exists in the
    /// catalog.
    pub tool: String,
    /// Equivalent tools a call may name instead of `tool` (from a `tool:` list). Each
    /// argument the checks name exists in at least one of them, and applies to a call only
    /// when the tool it names has it (a get by id and an SQL read can stand for one step).
    pub also: Vec<String>,
    /// The argument names of every tool the call may name (`tool` and `also`), from the
    /// catalog; empty for a call built in code.
    pub tool_arguments: std::collections::BTreeMap<String, Vec<String>>,
    /// Whether a run may leave the call out (look up or ask); if made, its checks apply.
    pub optional: bool,
    /// Whether every tool the call may name is read-only (`readOnlyHint: true`): then an
    /// `args_match`/`args_accept` argument left out counts as a broader read, unless it is
    /// in `args_exact`.
    pub read_only: bool,
    /// Arguments that must be sent even on a read-only tool.
    pub args_exact: Vec<String>,
    /// Argument -> items (a JSON array) its array value must contain, in any order.
    pub args_contains: Map<String, Value>,
    /// Values or partial records the call's result must contain at some depth.
    pub result_contains: Vec<Value>,
    /// Whether the paired call must succeed (not a tool, protocol or invalid-call error).
    pub succeeds: bool,
    /// Partial match: every key given must be present with an equal value (numbers by value,
    /// nested objects partially, arrays element by element).
    pub args_match: Map<String, Value>,
    /// Argument names that must be absent.
    pub args_forbid: Vec<String>,
    /// Arguments that must equal values from earlier calls' results.
    pub args_from_prior: Vec<PriorRef>,
    /// Arguments that must equal one of several accepted values.
    pub args_accept: Map<String, Value>,
    /// Arguments of `args_match`/`args_accept` that may be left out (if sent, they must match).
    pub args_optional: Vec<String>,
    /// Comparators for arguments of `args_match`/`args_accept`; unlisted ones compare exactly.
    pub args_compare: std::collections::BTreeMap<String, Comparator>,
    /// The schema's `default` of each top-level argument that has one (from the catalog).
    pub schema_defaults: Map<String, Value>,
    /// Extra argument values the reference agent sends to make a valid call; never checked.
    pub reference_args: Map<String, Value>,
    /// Whether the call may carry no argument beyond those named above, and `args_match`
    /// values must equal the sent ones exactly (no extra key in a nested object either).
    /// Scenario files always match partially (`false`); reference trajectories set it
    /// ([`crate::score::reference_match::exact_call`]).
    pub closed: bool,
    /// In a conversation, the user message (1-based: 1 is the prompt) after which the
    /// reference agent makes this call; 1 otherwise. Not a check.
    pub user_turn: u32,
}

impl ExpectedCall {
    /// Whether a call to `tool` can stand for this expected call.
    pub fn accepts(&self, tool: &str) -> bool {
        self.tool == tool || self.also.iter().any(|other| other == tool)
    }

    /// The tools a call may name, `tool` first.
    pub fn tools(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.tool.as_str()).chain(self.also.iter().map(String::as_str))
    }

    /// Whether a check on argument `name` applies to a call to `tool`: always for a single
    /// tool; for a list, when `tool` has that argument.
    pub fn applies(&self, tool: &str, name: &str) -> bool {
        self.also.is_empty()
            || self
                .tool_arguments
                .get(tool)
                .is_none_or(|names| names.iter().any(|known| known == name))
    }

    /// An expected call of `tool` with no checks, as a starting point.
    pub fn of(tool: &str) -> ExpectedCall {
        ExpectedCall {
            tool: tool.to_owned(),
            also: Vec::new(),
            tool_arguments: std::collections::BTreeMap::new(),
            optional: false,
            read_only: false,
            args_exact: Vec::new(),
            args_contains: Map::new(),
            result_contains: Vec::new(),
            succeeds: false,
            args_match: Map::new(),
            args_forbid: Vec::new(),
            args_from_prior: Vec::new(),
            args_accept: Map::new(),
            args_optional: Vec::new(),
            args_compare: std::collections::BTreeMap::new(),
            schema_defaults: Map::new(),
            reference_args: Map::new(),
            closed: false,
            user_turn: 1,
        }
    }
}

/// A trajectory written into a scenario (`alternatives`, `counterexamples`): the calls an
/// agent makes and its final answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Trajectory {
    /// Unique among the scenario's trajectories.
    pub name: String,
    /// Why it must fail (every counterexample has one).
    pub why: Option<String>,
    /// The calls, in order.
    pub calls: Vec<PlannedCall>,
    /// The final answer; `None` when the agent gave none.
    pub answer: Option<String>,
    /// Whether the agent crashed after the calls (the run ends errored).
    pub crash: bool,
    /// In a conversation, the agent's replies before its last one (whose text is `answer`):
    /// each after the first `calls` calls, in order. Empty for a single request.
    pub replies: Vec<PlannedReply>,
}

/// A reply of a conversation trajectory that a user message follows.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedReply {
    /// How many of the trajectory's calls were made before it.
    pub after_calls: usize,
    /// Its text; `None` when the agent said nothing.
    pub text: Option<String>,
}

impl Trajectory {
    /// The agent's replies in order, each with the calls made before it (after the user
    /// message before it): one for a single request.
    pub fn exchanges(&self) -> Vec<(&[PlannedCall], Option<&str>)> {
        let mut exchanges = Vec::new();
        let mut start = 0;
        for reply in &self.replies {
            let end = reply.after_calls.clamp(start, self.calls.len());
            exchanges.push((&self.calls[start..end], reply.text.as_deref()));
            start = end;
        }
        exchanges.push((&self.calls[start..], self.answer.as_deref()));
        exchanges
    }
}

/// One message of a scenario's scripted user after the prompt (`user_turns`).
#[derive(Debug, Clone)]
pub struct UserTurn {
    /// What the user says; not blank.
    pub say: String,
    /// Whether it is sent whatever the agent replied, or only when the reply asks.
    pub when: file::SendWhen,
    /// Whether the agent must have stopped for it: its reply before asks, and no write tool
    /// was called since the user's previous message.
    pub wait: bool,
    /// What the reference agent says before it.
    pub reference_reply: Option<String>,
    /// Checks on the agent's reply before it; empty when the file has none.
    pub reply: AnswerChecks,
}

/// The user of an open conversation, played by the user simulator (`simulated_user`).
#[derive(Debug, Clone, PartialEq)]
pub struct SimulatedUser {
    /// What the user wants; not blank.
    pub goal: String,
    /// What the user knows and may share when asked, in file order; no entry is blank.
    pub facts: Vec<String>,
    /// What the user must never say, in file order; no entry is blank.
    pub never_say: Vec<String>,
    /// The most messages the user sends after the prompt, in 1..=[`MAX_SIMULATED_MESSAGES`]
    /// (default [`DEFAULT_SIMULATED_MESSAGES`]).
    pub max_messages: u32,
}

/// The default of `simulated_user.max_messages`.
pub const DEFAULT_SIMULATED_MESSAGES: u32 = 5;

/// The most `simulated_user.max_messages` may be: a longer open conversation costs more than
/// it tells.
pub const MAX_SIMULATED_MESSAGES: u32 = 20;

/// One call of a planned trajectory.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedCall {
    /// Tool name.
    pub tool: String,
    /// Arguments as sent.
    pub arguments: Map<String, Value>,
    /// The model turn that emitted it, 1-based; `None`: its own turn.
    pub turn: Option<u32>,
}

/// A validated scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Unique id across the suite, e.g. `T2-007`.
    pub id: String,
    /// 1..=5.
    pub tier: Tier,
    /// What the scenario exercises.
    pub kind: ScenarioKind,
    /// The user's request given to the agent.
    pub prompt: String,
    /// The file it was loaded from.
    pub path: PathBuf,
    /// The fixture file, resolved against the suite root; exists and is valid. `None` for a
    /// scenario of the user's own servers without `seed_state`.
    pub seed_state: Option<PathBuf>,
    /// The seed state as written in the file (for reports); `""` without one.
    pub seed_state_name: String,
    /// The fixture's state, read and checked once at load and shared by every run; `{}`
    /// without a fixture.
    pub seeded: std::sync::Arc<Value>,
    /// The user's servers' seed (`seed_path`): a file or directory resolved against the suite
    /// root, which exists. Every run gets a fresh copy in a new temporary directory, named to
    /// the servers by the `{seed_dir}` (the directory) and `{seed}` (the copy) templates.
    pub seed_path: Option<PathBuf>,
    /// The group of the first expected call's tool: its category (`crm`) for a built-in tool,
    /// its server's name for the user's own tools, `none` without expected calls.
    pub group: String,
    /// Whether calls matching `forbidden_calls` are refused by the harness before they reach
    /// the backend (still recorded, and still failing the run).
    pub block_forbidden: bool,
    /// Tool calls toolgate makes itself, on the freshly seeded backend before the agent runs
    /// (`baseline`) and again after it; in file order.
    pub final_state_probes: Vec<Probe>,
    /// Where the file's keys and expected calls are, for pointing at a check's subject.
    pub lines: SourceLines,
    /// The expected calls, in file order.
    pub expected_calls: Vec<ExpectedCall>,
    /// How matched calls must be ordered.
    pub ordering: Ordering,
    /// The most tool calls a passing run may emit; `None` means no budget. Every emitted call
    /// counts, refused ones included.
    pub max_calls: Option<u32>,
    /// The most calls to read-only tools a passing run may emit; `None` means no budget.
    pub max_reads: Option<u32>,
    /// The most other calls (to tools that are not read-only, refused calls and calls to
    /// unknown tools) a passing run may emit; `None` means no budget.
    pub max_writes: Option<u32>,
    /// The catalog's read-only tools (`readOnlyHint: true`), shared by the suite's scenarios.
    pub read_only: std::sync::Arc<std::collections::BTreeSet<String>>,
    /// The most calls a passing run may emit to each named tool (refused ones included); every
    /// key is a catalog tool. Empty means no per-tool budget.
    pub max_per_tool: std::collections::BTreeMap<String, u32>,
    /// The most failures a passing run may have, counted by `failure_counting`; `None` means
    /// no budget.
    pub max_failures: Option<u32>,
    /// How `max_failures` counts; [`FailureCounting::PerTurn`] unless the file says otherwise.
    pub failure_counting: FailureCounting,
    /// What one run may spend on the model (`usage_budget`); no limits when absent.
    pub usage_budget: UsageBudget,
    /// The scripted user's messages after `prompt`, in order; empty for a single request.
    pub user_turns: Vec<UserTurn>,
    /// The simulated user of an open conversation; `None` without one. Never together with
    /// `user_turns`.
    pub simulated_user: Option<SimulatedUser>,
    /// Faults the harness injects.
    pub faults: Vec<Fault>,
    /// Assertions over the mock state after the run.
    pub final_state_assertions: Vec<Assertion>,
    /// Calls that must not appear anywhere in the trajectory, whatever their outcome.
    pub forbidden_calls: Vec<ForbiddenCall>,
    /// Checks on the agent's final text answer; empty when the file has no `final_answer`.
    pub final_answer: AnswerChecks,
    /// The known-good final answer the reference agent gives; present whenever
    /// `final_answer` has a check. Never used to score another agent.
    pub reference_answer: Option<String>,
    /// The `{{ source }}` placeholders of `reference_answer`, in order: the reference agent
    /// fills each from its own results before it answers.
    pub reference_placeholders: Vec<capture::Placeholder>,
    /// Arguments declared identifiers besides the id-like names (`identifiers` in the file):
    /// their values must have been seen in the run before they are sent.
    pub identifiers: identifiers::Identifiers,
    /// The question the optional judge answers about this scenario's final answer; `None`
    /// uses the built-in rubric for the scenario's type.
    pub judge_rubric: Option<String>,
    /// Whether the file says `draft: true`: written by `toolgate init` and not yet edited.
    /// A draft loads and runs like any scenario; `validate` and `verify` list the drafts.
    pub draft: bool,
    /// Valid trajectories besides the reference; `verify` requires each to pass.
    pub alternatives: Vec<Trajectory>,
    /// Invalid trajectories; `verify` requires each to fail.
    pub counterexamples: Vec<Trajectory>,
    /// What tools ask the user mid-call, at most one entry per tool; empty when none asks.
    pub elicitations: Vec<Elicitation>,
}

impl ForbiddenCall {
    /// Whether a call to `tool` with `arguments` is this forbidden call: the tool, every
    /// `args_match` argument matching (`crate::values::matches`, partially) and every
    /// `args_contains` array holding its items.
    pub fn matches(&self, tool: &str, arguments: &Value) -> bool {
        self.tool == tool
            && self.args_match.iter().all(|(name, wanted)| {
                arguments
                    .get(name)
                    .is_some_and(|actual| crate::values::matches(wanted, actual, "", false).is_ok())
            })
            && self.args_contains.iter().all(|(name, items)| {
                arguments.get(name).is_some_and(|actual| {
                    let items = items.as_array().map_or(&[][..], Vec::as_slice);
                    crate::values::contains(items, actual, "").is_ok()
                })
            })
            && self.args_regex.iter().all(|(name, pattern)| {
                arguments
                    .get(name)
                    .is_some_and(|actual| any_string_matches(actual, pattern))
            })
    }
}

/// Whether `value` is a string matching `pattern`, or holds one at any depth.
fn any_string_matches(value: &Value, pattern: &regex::Regex) -> bool {
    match value {
        Value::String(text) => pattern.is_match(text),
        Value::Array(items) => items.iter().any(|item| any_string_matches(item, pattern)),
        Value::Object(fields) => fields
            .values()
            .any(|item| any_string_matches(item, pattern)),
        _ => false,
    }
}

impl Scenario {
    /// Whether `tool` is read-only in the catalog the scenario was loaded with.
    pub fn is_read_only(&self, tool: &str) -> bool {
        self.read_only.contains(tool)
    }

    /// The tools this scenario names: its expected calls' tools (every equivalent one), its
    /// forbidden calls', its per-tool budgets', its faults' and its elicitations' tools,
    /// sorted.
    pub fn named_tools(&self) -> std::collections::BTreeSet<&str> {
        let expected = self
            .expected_calls
            .iter()
            .flat_map(|call| std::iter::once(&call.tool).chain(&call.also));
        expected
            .chain(self.forbidden_calls.iter().map(|call| &call.tool))
            .chain(self.max_per_tool.keys())
            .chain(self.faults.iter().map(|fault| &fault.tool))
            .chain(self.elicitations.iter().map(|asked| &asked.tool))
            .map(String::as_str)
            .collect()
    }

    /// The tools a model is offered in this scenario under `--tool-offer scenario`: every
    /// catalog tool of the groups (categories, or servers for the user's own tools) of the
    /// tools the scenario names ([`Scenario::named_tools`]), and each named tool's look-alike
    /// ([`Catalog::look_alike`]), which is what tests the choice between them. A scenario that
    /// names no tool (an answer without calls) is offered the whole catalog. In catalog order.
    pub fn offered_tools(&self, catalog: &Catalog) -> Vec<String> {
        let named = self.named_tools();
        if named.is_empty() {
            return catalog
                .tools()
                .iter()
                .map(|tool| tool.name.clone())
                .collect();
        }
        let groups: std::collections::BTreeSet<&str> = named
            .iter()
            .filter_map(|name| catalog.tool(name))
            .map(catalog::ToolDef::group)
            .collect();
        let look_alikes: std::collections::BTreeSet<&str> = named
            .iter()
            .filter_map(|name| catalog.look_alike(name))
            .map(|tool| tool.name.as_str())
            .collect();
        catalog
            .tools()
            .iter()
            .filter(|tool| {
                groups.contains(tool.group())
                    || named.contains(tool.name.as_str())
                    || look_alikes.contains(tool.name.as_str())
            })
            .map(|tool| tool.name.clone())
            .collect()
    }
}

/// One of `final_state_probes`: a (read-only) tool call toolgate makes before and after the
/// run, with CEL assertions over its result. The assertions name `result` (the probe's result
/// after the run) and `baseline` (the left-hand side evaluated on the result before the run).
/// A result is the tool's `structuredContent`, else its text parsed as JSON, else the text as
/// a string.
#[derive(Debug, Clone)]
pub struct Probe {
    /// A catalog tool.
    pub tool: String,
    /// Its arguments, sent as written.
    pub arguments: Map<String, Value>,
    /// At least one assertion, each over `result`.
    pub assertions: Vec<Assertion>,
}

/// The name probe assertions give the probe's result.
pub const PROBE_RESULT: &str = "result";

/// A call the agent must not make: a call to `tool` whose arguments match `args_match`
/// (partially, as in expected calls; an empty `args_match` forbids every call to `tool`) and
/// whose array arguments contain the `args_contains` items, and in whose `args_regex` arguments
/// some string matches its pattern.
/// An attempt counts even when it fails: trying to delete is already the mistake.
#[derive(Debug, Clone)]
pub struct ForbiddenCall {
    /// The forbidden tool; exists in the catalog.
    pub tool: String,
    /// Partial match on the arguments; every key is an argument of `tool`.
    pub args_match: Map<String, Value>,
    /// Argument -> items (a JSON array) its array value must contain for the call to count.
    pub args_contains: Map<String, Value>,
    /// Argument -> pattern: the argument's value, when a string, or some string anywhere
    /// inside it (array items, object values, at any depth) must match for the call to count
    /// (`files: '(^|/)\.env$'` catches `["src/app.py", "config/.env"]`).
    pub args_regex: Vec<(String, regex::Regex)>,
}

/// A value the final answer must mention, read from the run record like `args_from_prior`
/// (from any of the scenario's expected calls).
pub type ResultRef = RecordSource;

/// Deterministic checks on the final answer (`final_answer` in the file). The cue-word
/// lists behind the three `bool` checks are in `score::answer`.
#[derive(Debug, Clone, Default)]
pub struct AnswerChecks {
    /// Values from tool results the answer must contain: numbers by value (1,234.5 matches
    /// 1234.50; rounding to cents is tolerated), strings case-insensitively, arrays element
    /// by element.
    pub contains_results: Vec<ResultRef>,
    /// Literal texts the answer must contain, case-insensitively.
    pub contains_text: Vec<String>,
    /// The answer must ask the user a clarifying question.
    pub asks_clarification: bool,
    /// The answer must say that something failed or was not found.
    pub acknowledges_failure: bool,
    /// The answer must decline the request, or hold off and ask for confirmation.
    pub refuses: bool,
    /// Values the answer must (or, `absent`, must not) mention.
    pub values: Vec<AnswerValue>,
    /// Claims the answer must make, not negated; each a list of alternative wordings.
    pub claims: Vec<Vec<String>>,
    /// Claims the answer must not make; each a list of wordings.
    pub must_not_claim: Vec<Vec<String>>,
    /// Groups of checks of which at least one must hold whole.
    pub any_of: Vec<AnswerChecks>,
    /// Whether every id and email address in the answer must be one the run saw.
    pub grounded: bool,
    /// Records whose attributes the answer must not attribute to one another.
    pub attributes: Vec<Attributes>,
}

/// One entry of `final_answer.attributes`: records, the fields that name them, and the
/// fields whose values must stay with their own record in the answer.
#[derive(Debug, Clone)]
pub struct Attributes {
    /// Where the records come from: a `State` or `Seeded` expression yielding objects.
    pub source: ValueSource,
    /// The fields that name a record (`id`, `name`); never empty.
    pub by: Vec<String>,
    /// The fields whose values must not be stated for another record.
    pub fields: Vec<String>,
    /// Field -> the words that name it: a value of the field's kind stated next to a record
    /// and one of these words must be the record's value of that field. `fields` and
    /// `labels` are not both empty.
    pub labels: std::collections::BTreeMap<String, Vec<String>>,
}

impl AnswerChecks {
    /// Whether any check is configured.
    pub fn is_empty(&self) -> bool {
        self.contains_results.is_empty()
            && self.contains_text.is_empty()
            && !self.asks_clarification
            && !self.acknowledges_failure
            && !self.refuses
            && self.values.is_empty()
            && self.claims.is_empty()
            && self.must_not_claim.is_empty()
            && self.any_of.is_empty()
            && !self.grounded
            && self.attributes.is_empty()
    }

    /// Whether the checks require the answer to say something: a bare "Done." fails them.
    /// Checks that only forbid (`must_not_claim`, `absent` or `if_stated` values, `grounded`,
    /// `attributes`) accept an answer that says nothing.
    pub fn demands_content(&self) -> bool {
        !self.contains_results.is_empty()
            || !self.contains_text.is_empty()
            || self.asks_clarification
            || self.acknowledges_failure
            || self.refuses
            || self
                .values
                .iter()
                .any(|value| !value.absent && !value.if_stated)
            || !self.claims.is_empty()
            || (!self.any_of.is_empty() && self.any_of.iter().all(AnswerChecks::demands_content))
    }
}

/// One entry of `final_answer.values`.
#[derive(Debug, Clone)]
pub struct AnswerValue {
    /// Where the value comes from.
    pub source: ValueSource,
    /// What the value describes, in alternative wordings; empty: no pairing required.
    pub labels: Vec<String>,
    /// For numbers, the largest difference accepted; `None`: the written precision decides.
    pub tolerance: Option<Tolerance>,
    /// For records: the fields that name one; a record is mentioned when one of them is.
    pub by: Vec<String>,
    /// Whether the value must *not* be mentioned.
    pub absent: bool,
    /// Whether the value may go unstated, provided a value of its kind stated with its label
    /// is this one.
    pub if_stated: bool,
    /// Whether the value is a percentage: only numbers written with `%` or `percent` count.
    pub percent: bool,
    /// Whether the list is closed: the answer's list of these items holds no other item.
    pub only: bool,
}

/// Where an answer value comes from.
#[derive(Debug, Clone)]
pub enum ValueSource {
    /// Written in the scenario (a list: every item).
    Literal(Value),
    /// Written in the scenario; any one of them.
    AnyOf(Vec<Value>),
    /// A CEL expression over the state after the run.
    State(assertion::Expression),
    /// A CEL expression over the seeded state.
    Seeded(assertion::Expression),
}

impl ValueSource {
    /// Whether the value is a fact of the world (`state`, `seeded`), which an agent can only
    /// know by looking it up, rather than one written in the scenario.
    pub fn is_world(&self) -> bool {
        matches!(self, ValueSource::State(_) | ValueSource::Seeded(_))
    }

    /// How the source reads in the scenario file, for check subjects: `state: <expr>`,
    /// `value: 186000`.
    pub fn describe(&self) -> String {
        match self {
            ValueSource::Literal(value) => format!("value {}", crate::json::short(value)),
            ValueSource::AnyOf(values) => format!(
                "any_of {}",
                crate::json::short(&Value::Array(values.clone()))
            ),
            ValueSource::State(expression) => format!("state `{}`", expression.source()),
            ValueSource::Seeded(expression) => format!("seeded `{}`", expression.source()),
        }
    }
}

/// A declared tolerance for numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tolerance {
    /// The largest absolute difference.
    Absolute(f64),
    /// The largest difference as a fraction of the value (`"1%"` is 0.01).
    Relative(f64),
}

impl Tolerance {
    /// The absolute difference accepted around `value`.
    pub fn around(self, value: f64) -> f64 {
        match self {
            Tolerance::Absolute(difference) => difference,
            Tolerance::Relative(fraction) => value.abs() * fraction,
        }
    }
}
