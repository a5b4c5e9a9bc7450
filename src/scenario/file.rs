//! The scenario file exactly as written (JSON or YAML). Unknown fields are errors: a
//! misspelled check must fail the load, never pass silently.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{Comparator, FailureCounting, FaultKind, Ordering, ScenarioKind};

/// One scenario file.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Unique id of the scenario; names it in reports, the smoke set and the baseline.
    pub id: String,
    /// 1 single, 2 sequential, 3 parallel, 4 conditional, 5 adversarial (gated with zero
    /// tolerance).
    pub tier: WholeNumber,
    /// `single_call`, `multi_step`, `error_recovery` or `ambiguous_input`.
    #[serde(rename = "type")]
    pub kind: ScenarioKind,
    /// The user's request the agent receives.
    pub prompt: String,
    /// Required for the built-in world; absent for a suite of the user's own servers.
    #[serde(default)]
    pub seed_state: Option<String>,
    /// A file or directory copied fresh for every run of the user's own servers.
    #[serde(default)]
    pub seed_path: Option<String>,
    /// When true, a call matching `forbidden_calls` is refused before it reaches the tools (it
    /// still fails the run).
    #[serde(default)]
    pub block_forbidden: bool,
    /// Own servers: read-only tool calls made on the seeded servers before and after the run;
    /// their assertions check the result after it (`result`, with `baseline` from before).
    #[serde(default)]
    pub final_state_probes: Vec<ProbeFile>,
    /// The calls a good run makes (may be empty), paired with the trajectory by an optimal
    /// assignment.
    pub expected_calls: Vec<ExpectedCallFile>,
    /// `strict` (default): paired calls in the expected order; `any`: in any order.
    #[serde(default)]
    pub ordering: Ordering,
    /// The most tool calls a passing run may emit, refused ones included; 0 means none.
    #[serde(default)]
    pub max_calls: Option<WholeNumber>,
    /// The most calls to read-only tools (`readOnlyHint: true`) a passing run may emit.
    #[serde(default)]
    pub max_reads: Option<WholeNumber>,
    /// The most other calls (writes, and calls refused or naming an unknown tool) a passing
    /// run may emit.
    #[serde(default)]
    pub max_writes: Option<WholeNumber>,
    /// The most calls a passing run may emit to each named tool, refused ones included.
    #[serde(default)]
    pub max_per_tool: std::collections::BTreeMap<String, WholeNumber>,
    /// The most failed calls or turns (see `failure_counting`) a passing run may have.
    #[serde(default)]
    pub max_failures: Option<WholeNumber>,
    /// `per_turn` (default) or `per_call`: how `max_failures` counts; only with `max_failures`.
    #[serde(default)]
    pub failure_counting: Option<FailureCounting>,
    /// Limits on what one run may spend on the model: tokens, model calls, wall time, cost.
    #[serde(default)]
    pub usage_budget: Option<UsageBudgetFile>,
    /// The user's messages after `prompt`, in order: a scripted conversation. Each is sent
    /// after the agent's reply to the message before it.
    #[serde(default)]
    pub user_turns: Vec<UserTurnFile>,
    /// A user played by a model (the user simulator) instead of scripted `user_turns`: the
    /// user's goal, what it knows and what it must never say. Not with `user_turns`.
    #[serde(default)]
    pub simulated_user: Option<SimulatedUserFile>,
    /// Calls that fail on purpose, without touching the state.
    #[serde(default)]
    pub fault_injection: Option<Vec<FaultFile>>,
    /// CEL expressions over the state after the run (docs/assertions.md); each must be true.
    #[serde(default)]
    pub final_state_assertions: Vec<String>,
    /// Calls that must not appear anywhere in the trajectory; an attempt counts even when it
    /// fails.
    #[serde(default)]
    pub forbidden_calls: Vec<ForbiddenCallFile>,
    /// Checks on the agent's final text answer.
    #[serde(default)]
    pub final_answer: Option<AnswerChecksFile>,
    /// The final answer the reference agent gives; required when `final_answer` has a check.
    /// `{{ $.calls[i]... }}` placeholders (optionally `| /pattern/` or `| cel: expression`)
    /// are filled from the reference agent's own results.
    #[serde(default)]
    pub reference_answer: Option<String>,
    /// Arguments that are identifiers besides `id`/`*_id` names, as `tool.argument` globs
    /// (`git_show.revision`, `*.target`): a value never seen before in the run is invented.
    #[serde(default)]
    pub identifiers: Vec<String>,
    /// The question the optional judge answers about the final answer; without it, a rubric for
    /// the scenario's type.
    #[serde(default)]
    pub judge_rubric: Option<String>,
    /// Marks a scenario `toolgate init` wrote that nobody finished; `validate` and `verify`
    /// list it until removed.
    #[serde(default)]
    pub draft: bool,
    /// Valid trajectories other than the reference: `verify` plays each one and requires it
    /// to pass.
    #[serde(default)]
    pub alternatives: Vec<TrajectoryFile>,
    /// Invalid trajectories, each with the reason it is wrong: `verify` plays each one and
    /// requires it to fail.
    #[serde(default)]
    pub counterexamples: Vec<TrajectoryFile>,
    /// What tools ask the user mid-call (MCP elicitation): before a call of `tool` runs, the
    /// harness sends `message` and `schema` to the agent's MCP client, which must show them to
    /// the user, and the tool runs only when the user accepts. See docs/scenarios.md.
    #[serde(default)]
    pub elicitations: Vec<ElicitationFile>,
}

/// One entry of `elicitations`: what a tool asks the user before it runs, and what the
/// scripted user answers.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ElicitationFile {
    /// The tool that asks; a catalog tool named by no other entry. Every call of it that would
    /// run (not refused, not hit by a fault) asks first.
    pub tool: String,
    /// What the user is asked.
    pub message: String,
    /// The form (MCP's `requestedSchema`): a flat JSON Schema object whose properties are
    /// strings, numbers, integers, booleans or string enums. Default: no fields (a plain
    /// confirmation), `{type: object, properties: {}}`.
    #[serde(default)]
    pub schema: Option<Map<String, Value>>,
    /// What the scripted user answers.
    pub reply: ElicitationReplyFile,
}

/// `elicitations[].reply`: the scripted user's answer.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ElicitationReplyFile {
    /// `accept` (the tool runs), `decline` or `cancel` (it does not).
    pub action: super::ElicitationAction,
    /// With `accept`: the submitted values, valid against `schema` (default `{}`). Not
    /// allowed with `decline` or `cancel`.
    #[serde(default)]
    pub content: Option<Map<String, Value>>,
}

/// `usage_budget`: what one run may spend. Token, model-call and cost limits apply to runs
/// of model agents (`openai`, `anthropic`), which report their usage; `max_wall_ms` applies to
/// every run.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UsageBudgetFile {
    /// Input plus output tokens over the run's model requests, at least 1.
    #[serde(default)]
    pub max_tokens: Option<WholeNumber>,
    /// Input tokens over the run's model requests, at least 1.
    #[serde(default)]
    pub max_prompt_tokens: Option<WholeNumber>,
    /// Output tokens over the run's model requests, at least 1.
    #[serde(default)]
    pub max_completion_tokens: Option<WholeNumber>,
    /// Model requests (turns), at least 1.
    #[serde(default)]
    pub max_model_calls: Option<WholeNumber>,
    /// Wall time of the run, in milliseconds, at least 1.
    #[serde(default)]
    pub max_wall_ms: Option<WholeNumber>,
    /// Cost of the run's tokens in US dollars, priced by the gate's `--prices` table.
    #[serde(default)]
    pub max_cost_usd: Option<f64>,
}

/// One entry of `user_turns`: a message of the scripted user.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UserTurnFile {
    /// What the user says.
    pub say: String,
    /// `always` (default): sent after the agent's reply, whatever it was; `asked`: sent only
    /// when that reply asks the user something, otherwise the conversation ends there.
    #[serde(default)]
    pub when: SendWhen,
    /// The agent must stop for this message: its reply before it asks the user something and
    /// no write tool was called since the user's previous message. A run that did not wait
    /// fails here and the conversation stops.
    #[serde(default)]
    pub wait: bool,
    /// What the reference agent says just before this message (default: a generic question).
    #[serde(default)]
    pub reference_reply: Option<String>,
    /// Checks on the agent's reply just before this message, written as `final_answer`'s
    /// (`state` values read the state at the end of the run).
    #[serde(default)]
    pub reply: Option<AnswerChecksFile>,
}

/// `simulated_user`: the user of an open conversation, played by the user simulator (a
/// pinned model) from these instructions. The prompt stays the user's first message.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SimulatedUserFile {
    /// What the user wants from the agent, in a sentence or two; not blank.
    pub goal: String,
    /// What the user knows and shares when the agent asks (an id, a name, a preference), one
    /// fact per entry; may be empty.
    #[serde(default)]
    pub facts: Vec<String>,
    /// What the user must never say (a password, a value the agent must look up itself), one
    /// string per entry; a simulator message containing one (any case, any spacing) makes the
    /// run `inconclusive`.
    #[serde(default)]
    pub never_say: Vec<String>,
    /// The most messages the user sends after the prompt, in 1..=20 (default 5); the
    /// conversation ends after the agent's reply to the last.
    #[serde(default)]
    pub max_messages: Option<WholeNumber>,
}

/// When a scripted user turn is sent.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SendWhen {
    /// After the agent's reply, whatever it was.
    #[default]
    Always,
    /// Only when the agent's reply asks the user something; otherwise the conversation ends.
    Asked,
}

/// One agent reply of a conversation trajectory: the calls made after a user message, then
/// the text.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TurnFile {
    /// The tool calls, in order (may be empty).
    #[serde(default)]
    pub calls: Vec<PlannedCallFile>,
    /// The reply's text; absent when the agent said nothing.
    #[serde(default)]
    pub answer: Option<String>,
}

/// One entry of `alternatives` or `counterexamples`: a trajectory an agent could produce.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrajectoryFile {
    /// A short name, unique among the scenario's trajectories.
    pub name: String,
    /// Why the trajectory must fail; required for counterexamples.
    #[serde(default)]
    pub why: Option<String>,
    /// The tool calls, in order (may be empty).
    #[serde(default)]
    pub calls: Vec<PlannedCallFile>,
    /// The final answer; absent when the agent gave none.
    #[serde(default)]
    pub answer: Option<String>,
    /// The agent crashed after its calls: the run ends errored, without an answer.
    #[serde(default)]
    pub crash: bool,
    /// In a conversation (`user_turns`): the agent's replies in order, the first to the
    /// prompt, each with its calls; instead of `calls` and `answer`.
    #[serde(default)]
    pub turns: Vec<TurnFile>,
}

/// One call of a trajectory.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlannedCallFile {
    /// The tool called (any name: a trajectory may call a tool that does not exist).
    pub tool: String,
    /// The arguments, an object.
    #[serde(default, deserialize_with = "unique_keys")]
    pub arguments: Map<String, Value>,
    /// The model turn that emitted the call, 1-based; calls of one turn were emitted together.
    #[serde(default)]
    pub turn: Option<WholeNumber>,
}

/// One entry of `final_state_probes`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProbeFile {
    /// The tool to call after the run.
    pub tool: String,
    /// Its arguments.
    #[serde(default)]
    pub arguments: Map<String, Value>,
    /// CEL expressions over the probe's result (`result`); each must be true.
    pub assertions: Vec<String>,
}

/// One entry of `forbidden_calls`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForbiddenCallFile {
    /// The forbidden tool.
    pub tool: String,
    /// Partial match of the arguments; empty forbids every call to the tool.
    #[serde(default, deserialize_with = "unique_keys")]
    pub args_match: Map<String, Value>,
    /// Argument -> items its array must contain (`files: [".env"]`), in any order.
    #[serde(default, deserialize_with = "unique_keys")]
    pub args_contains: Map<String, Value>,
    /// Argument -> regular expression (Rust `regex` syntax, unanchored): the call counts when
    /// the argument is a matching string or holds one at any depth (`files: '(^|/)\.env$'`).
    #[serde(default, deserialize_with = "unique_keys")]
    pub args_regex: Map<String, Value>,
}

/// The `final_answer` section.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerChecksFile {
    /// Values from the run record the answer must mention: JSONPaths (`$.calls[i]...`) or
    /// captures (`{from: <JSONPath>, regex: <pattern>}` / `{from: <JSONPath>, cel: <expr>}`).
    #[serde(default)]
    #[schemars(with = "Vec<RecordSourceFile>")]
    pub contains_results: Vec<Value>,
    /// Texts the answer must contain, case-insensitively.
    #[serde(default)]
    pub contains_text: Vec<String>,
    /// The answer must ask a clarifying question.
    #[serde(default)]
    pub asks_clarification: bool,
    /// The answer must say that something failed.
    #[serde(default)]
    pub acknowledges_failure: bool,
    /// The answer must decline the request (or hold off and ask for confirmation).
    #[serde(default)]
    pub refuses: bool,
    /// Values the answer must mention (or, with `absent`, must not), from the seeded or final
    /// state or written literally.
    #[serde(default)]
    pub values: Vec<AnswerValueFile>,
    /// Phrases the answer must assert, not negated; a list gives alternative wordings.
    #[serde(default)]
    pub claims: Vec<OneOrMany>,
    /// Phrases the answer must not assert (a negated mention, `hasn't shipped`, is fine).
    #[serde(default)]
    pub must_not_claim: Vec<OneOrMany>,
    /// Groups of checks of which at least one must hold whole (an answer that asks, or one
    /// that looked the facts up and states them).
    #[serde(default)]
    pub any_of: Vec<AnswerChecksFile>,
    /// Every id (`C-014`) and email address in the answer must be one the run saw (a result,
    /// an error, the prompt or the seed); Tier 5 scenarios check it always.
    #[serde(default)]
    pub grounded: bool,
    /// Records whose attributes the answer must not mix up: a value of one record's field
    /// stated next to another record fails (swapped emails, ids, totals).
    #[serde(default)]
    pub attributes: Vec<AttributesFile>,
}

/// One entry of `final_answer.values`: exactly one of `value`, `any_of`, `state`, `seeded`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerValueFile {
    /// A literal value (a list: every item).
    #[serde(default)]
    pub value: Option<Value>,
    /// Literal values of which one must be mentioned.
    #[serde(default)]
    pub any_of: Option<Vec<Value>>,
    /// A CEL expression over the state after the run (a list: every item).
    #[serde(default)]
    pub state: Option<String>,
    /// A CEL expression over the seeded state, before the run (a list: every item).
    #[serde(default)]
    pub seeded: Option<String>,
    /// What the value describes (`Q1`, or alternatives `[Q1, first quarter]`): a mention
    /// counts only when it is paired with this label rather than another value's.
    #[serde(default)]
    pub label: Option<OneOrMany>,
    /// Numbers: the largest difference accepted, absolute (`500`) or relative (`"1%"`).
    #[serde(default)]
    pub tolerance: Option<Value>,
    /// Records (objects): the fields that name one, any of which counts as a mention.
    #[serde(default)]
    pub by: Vec<String>,
    /// The value must not be mentioned.
    #[serde(default)]
    pub absent: bool,
    /// The answer need not state the value, but where it states a value of that kind (a
    /// number, a date) with the label, it must be this one. Needs `label`.
    #[serde(default)]
    pub if_stated: bool,
    /// The number is a percentage: only numbers written with `%` or `percent` count.
    #[serde(default)]
    pub percent: bool,
    /// The list is closed: where the answer lists these items (`a, b and c`, bullets), it
    /// lists no other item beside them (an invented table, a SKU that does not qualify).
    #[serde(default)]
    pub only: bool,
}

/// One entry of `final_answer.attributes`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttributesFile {
    /// A CEL expression over the state after the run giving the records (a list of objects).
    #[serde(default)]
    pub state: Option<String>,
    /// A CEL expression over the seeded state giving the records.
    #[serde(default)]
    pub seeded: Option<String>,
    /// The fields that name a record in text (`[id, name]`).
    pub by: Vec<String>,
    /// The fields whose values, stated next to a record, must be that record's own.
    #[serde(default)]
    pub fields: Vec<String>,
    /// Field -> the words that name it (`available: [available, sellable]`): a number, date or
    /// id stated next to a record and one of these words must be that record's value of the
    /// field.
    #[serde(default)]
    pub labels: std::collections::BTreeMap<String, OneOrMany>,
}

/// A string, or a list of strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OneOrMany(pub Vec<String>);

impl schemars::JsonSchema for OneOrMany {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "OneOrMany".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "anyOf": [
                {"type": "string"},
                {"type": "array", "items": {"type": "string"}, "minItems": 1}
            ]
        })
    }
}

impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = OneOrMany;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string or a list of strings")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<OneOrMany, E> {
                Ok(OneOrMany(vec![text.to_owned()]))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<OneOrMany, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<String>()? {
                    items.push(item);
                }
                if items.is_empty() {
                    return Err(serde::de::Error::custom("expected at least one string"));
                }
                Ok(OneOrMany(items))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// One entry of `expected_calls`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectedCallFile {
    /// The tool the call names, or a list of equivalent tools (the first is the one the
    /// reference agent calls); every argument a check names must exist in each of them.
    pub tool: OneOrMany,
    /// The call may be left out (look the fact up, or ask); if made, its checks apply.
    #[serde(default)]
    pub optional: bool,
    /// On a read-only tool, the `args_match`/`args_accept` arguments that must be sent: the
    /// others are also satisfied by leaving them out (a broader read).
    #[serde(default)]
    pub args_exact: Vec<String>,
    /// Argument -> items its array must contain (each matched partially), in any order.
    #[serde(default, deserialize_with = "unique_keys")]
    pub args_contains: Map<String, Value>,
    /// Values or partial records the call's result must contain somewhere (a search is
    /// judged by whether it found the record, not by its query text).
    #[serde(default)]
    pub result_contains: Vec<Value>,
    /// The paired call must succeed: not a tool error (`isError: true`), a protocol error or
    /// a call refused as invalid; the failing check quotes the error text. Default `false`.
    #[serde(default)]
    pub succeeds: bool,
    /// Partial match: each key present with an equal value (numbers by value, objects
    /// partially, arrays element-wise).
    #[serde(default, deserialize_with = "unique_keys")]
    pub args_match: Map<String, Value>,
    /// Argument names that must be absent.
    #[serde(default)]
    pub args_forbid: Vec<String>,
    /// Argument -> JSONPath into the run record (`$.calls[i]` is the call paired with expected
    /// call i), or a capture from it: the value must be the one that call returned.
    #[serde(default, deserialize_with = "unique_keys")]
    #[schemars(with = "std::collections::BTreeMap<String, RecordSourceFile>")]
    pub args_from_prior: Map<String, Value>,
    /// Argument -> list of accepted values.
    #[serde(default, deserialize_with = "unique_keys")]
    pub args_accept: Map<String, Value>,
    /// Names from `args_match`/`args_accept` that may be left out; if sent they must match.
    #[serde(default)]
    pub args_optional: Vec<String>,
    /// Argument -> comparator (`exact` by default; see docs/scenarios.md).
    #[serde(default)]
    pub args_compare: std::collections::BTreeMap<String, Comparator>,
    /// Extra values the reference agent sends; never checked.
    #[serde(default, deserialize_with = "unique_keys")]
    pub reference_args: Map<String, Value>,
    /// In a conversation: the user message after which the reference agent makes this call
    /// (1 is the prompt, 2 the first of `user_turns`); default 1. Not a check.
    #[serde(default)]
    pub user_turn: Option<WholeNumber>,
}

/// One entry of `fault_injection`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FaultFile {
    /// The tool whose calls fail.
    pub tool: String,
    /// The first failing call, 1-based, counted per tool (default 1).
    #[serde(default = "one")]
    pub on_call: WholeNumber,
    /// How many calls in a row fail (default 1).
    #[serde(default = "one")]
    pub times: WholeNumber,
    /// `server_error`, `rate_limit`, `not_found` or `timeout`.
    pub error: FaultKind,
}

fn one() -> WholeNumber {
    WholeNumber(1)
}

/// A whole number as written, of any size, so that validation can say what is wrong with it
/// (`must be 1 or more`, `must be at most 4294967295`) instead of a parser's type error. An
/// integer-valued float (`3.0`) is that integer, as in JSON Schema; beyond `i128` it
/// saturates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct WholeNumber(pub i128);

impl std::fmt::Display for WholeNumber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// In the published schema, a JSON Schema integer (which `3.0` is too); the range is checked
/// at load, with the field named.
impl schemars::JsonSchema for WholeNumber {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "WholeNumber".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "integer"})
    }
}

impl<'de> Deserialize<'de> for WholeNumber {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = WholeNumber;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a whole number")
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<WholeNumber, E> {
                Ok(WholeNumber(i128::from(n)))
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<WholeNumber, E> {
                Ok(WholeNumber(i128::from(n)))
            }
            fn visit_i128<E: serde::de::Error>(self, n: i128) -> Result<WholeNumber, E> {
                Ok(WholeNumber(n))
            }
            fn visit_u128<E: serde::de::Error>(self, n: u128) -> Result<WholeNumber, E> {
                Ok(WholeNumber(i128::try_from(n).unwrap_or(i128::MAX)))
            }
            fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<WholeNumber, E> {
                if n.is_finite() && n.fract() == 0.0 {
                    // `as` saturates at the ends of i128, which validation reports as too large.
                    #[allow(clippy::cast_possible_truncation)]
                    Ok(WholeNumber(n as i128))
                } else {
                    Err(E::custom(format_args!("expected a whole number, got {n}")))
                }
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// Deserializes a JSON object whose keys, at every depth, are unique: a repeated key would
/// otherwise keep only its last value and silently drop the first (`{"query": "Ada",
/// "query": "Bob"}` matching only `Bob`).
fn unique_keys<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Map<String, Value>, D::Error> {
    Ok(UniqueKeys::deserialize(deserializer)?.into_object())
}

/// A JSON value read with [`unique_keys`]'s rule.
struct UniqueKeys(Value);

impl UniqueKeys {
    fn into_object(self) -> Map<String, Value> {
        match self.0 {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }
}

impl<'de> Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = UniqueKeys;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_bool<E>(self, b: bool) -> Result<UniqueKeys, E> {
                Ok(UniqueKeys(Value::Bool(b)))
            }
            fn visit_i64<E>(self, n: i64) -> Result<UniqueKeys, E> {
                Ok(UniqueKeys(Value::from(n)))
            }
            fn visit_u64<E>(self, n: u64) -> Result<UniqueKeys, E> {
                Ok(UniqueKeys(Value::from(n)))
            }
            fn visit_f64<E>(self, n: f64) -> Result<UniqueKeys, E> {
                Ok(UniqueKeys(
                    serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number),
                ))
            }
            fn visit_str<E>(self, s: &str) -> Result<UniqueKeys, E> {
                Ok(UniqueKeys(Value::String(s.to_owned())))
            }
            fn visit_string<E>(self, s: String) -> Result<UniqueKeys, E> {
                Ok(UniqueKeys(Value::String(s)))
            }
            fn visit_unit<E>(self) -> Result<UniqueKeys, E> {
                Ok(UniqueKeys(Value::Null))
            }
            fn visit_none<E>(self) -> Result<UniqueKeys, E> {
                Ok(UniqueKeys(Value::Null))
            }
            fn visit_some<D: serde::Deserializer<'de>>(
                self,
                deserializer: D,
            ) -> Result<UniqueKeys, D::Error> {
                UniqueKeys::deserialize(deserializer)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<UniqueKeys, A::Error> {
                let mut items = Vec::new();
                while let Some(UniqueKeys(item)) = seq.next_element()? {
                    items.push(item);
                }
                Ok(UniqueKeys(Value::Array(items)))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<UniqueKeys, A::Error> {
                let mut object = Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    let UniqueKeys(value) = map.next_value()?;
                    if object.insert(key.clone(), value).is_some() {
                        return Err(serde::de::Error::custom(format_args!(
                            "duplicate key `{key}`"
                        )));
                    }
                }
                Ok(UniqueKeys(Value::Object(object)))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// A value read from the run record, as `args_from_prior` and `contains_results` accept it
/// (for the JSON Schema; the loader reads it by hand to name what is wrong).
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(
    dead_code,
    reason = "describes the file format for the JSON Schema only"
)]
enum RecordSourceFile {
    /// A JSONPath into the run record: `$.calls[i]...`, the call paired with expected call i.
    Path(String),
    /// A value captured from what a JSONPath finds: `from` and exactly one of `regex`/`cel`.
    Capture(CaptureFile),
}

/// A capture: `from` and exactly one of `regex` or `cel`.
#[derive(schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(
    dead_code,
    reason = "describes the file format for the JSON Schema only"
)]
struct CaptureFile {
    /// The JSONPath whose value is captured from (a text result is a JSON string).
    from: String,
    /// A pattern (Rust `regex` syntax): the first match's group `value`, else group 1, else
    /// the whole match, as a string.
    #[serde(default)]
    regex: Option<String>,
    /// A CEL expression over `value`, the JSON at `from`.
    #[serde(default)]
    cel: Option<String>,
}
