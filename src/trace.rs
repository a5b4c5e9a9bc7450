//! The trace: what happened in a run, one [`CallRecord`] per tool call, in arrival order.
//!
//! The harness produces it (classifying each call's arguments against the served catalog once,
//! at call time); scoring, reports and the judge read it; `trace.jsonl` stores it as
//! [`TraceLine`]s, which the replay agent reads back.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::scenario::{ElicitationReply, FaultKind};

/// The `schema_version` of a `trace.jsonl` line. Lines without one (hand-written recordings)
/// are read as this version; a newer one is refused.
pub const TRACE_SCHEMA_VERSION: u32 = 1;

/// Why a tool call the model emitted could not be executed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InvalidCallKind {
    /// The arguments are valid JSON but not an object (a string, array, number, `null`).
    ArgumentsNotObject,
    /// The arguments text is not valid JSON.
    UnparseableArguments,
    /// The provider cut the call off at its output-token limit.
    Truncated,
    /// The tool-call entry has no function (name and arguments).
    MissingFunction,
}

/// Something noteworthy about how a tool call was parsed. None of these makes a call invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CallNote {
    /// `arguments` was an empty or whitespace-only string and was read as `{}` (field case B10).
    EmptyArgumentsString,
    /// `arguments` was absent and was read as `{}`.
    MissingArguments,
    /// `arguments` came as a JSON object instead of a JSON string (some OpenAI-compatible servers).
    DecodedArgumentsObject,
    /// The arguments do not parse and end early, but nothing says generation hit the token
    /// limit: "unparseable (possibly truncated)" (field case B14).
    PossiblyTruncated,
    /// A `tool_calls` entry of another type (e.g. `custom`, free-text input); not supported.
    UnsupportedCallType,
    /// The call id repeats an earlier call id of the same turn: the tool results are paired
    /// with the calls by order, which is ambiguous for the provider.
    DuplicateId,
    /// The message carried both `tool_calls` and a legacy `function_call` that names another
    /// call; `tool_calls` was used.
    FunctionCallDisagrees,
    /// An argument the schema wants as an object or array came as JSON text in a string and
    /// was decoded once (`scoring.double_encoded: lenient`).
    DoubleEncoded,
    /// The string `"null"` was sent for a nullable parameter: the model meant no value.
    NullString,
}

impl CallNote {
    /// The snake_case name, as in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            CallNote::EmptyArgumentsString => "empty_arguments_string",
            CallNote::MissingArguments => "missing_arguments",
            CallNote::DecodedArgumentsObject => "decoded_arguments_object",
            CallNote::PossiblyTruncated => "possibly_truncated",
            CallNote::UnsupportedCallType => "unsupported_call_type",
            CallNote::DuplicateId => "duplicate_id",
            CallNote::FunctionCallDisagrees => "function_call_disagrees",
            CallNote::DoubleEncoded => "double_encoded",
            CallNote::NullString => "null_string",
        }
    }

    /// What the note means for the report, in a few words.
    pub fn meaning(self) -> &'static str {
        match self {
            CallNote::EmptyArgumentsString => "empty arguments string read as {}",
            CallNote::MissingArguments => "absent arguments read as {}",
            CallNote::DecodedArgumentsObject => "arguments sent as an object, not a string",
            CallNote::PossiblyTruncated => "unparseable (possibly truncated)",
            CallNote::UnsupportedCallType => "unsupported tool-call type",
            CallNote::DuplicateId => "duplicate call id: result paired by order (ambiguous)",
            CallNote::FunctionCallDisagrees => "`function_call` disagrees with `tool_calls`",
            CallNote::DoubleEncoded => "an object or array sent as a JSON string, decoded once",
            CallNote::NullString => "the string \"null\" sent for a nullable parameter",
        }
    }
}

impl InvalidCallKind {
    /// The snake_case name, as in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            InvalidCallKind::ArgumentsNotObject => "arguments_not_object",
            InvalidCallKind::UnparseableArguments => "unparseable_arguments",
            InvalidCallKind::Truncated => "truncated",
            InvalidCallKind::MissingFunction => "missing_function",
        }
    }
}

/// How one tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallOutcome {
    /// The tool ran and returned a result.
    Success,
    /// The tool answered with `isError: true` (bad id, invalid arguments, injected fault).
    ToolError,
    /// The server answered with a JSON-RPC error (e.g. unknown tool).
    ProtocolError,
    /// The call never reached the server: its arguments were unusable.
    InvalidCall,
}

/// The class of an argument failure (BFCL's error types, plus the ways a call can be
/// unusable before any schema applies).
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
pub enum ArgumentErrorClass {
    /// The tool does not exist.
    UnknownTool,
    /// A required parameter is absent.
    MissingRequired,
    /// A parameter the schema does not define.
    UnexpectedParam,
    /// A value of the wrong JSON type.
    TypeError,
    /// A value outside the schema's `enum` or `const`.
    EnumError,
    /// A value that violates another schema rule (format, range, pattern) or differs from
    /// the value the scenario expects.
    ValueMismatch,
    /// The arguments were not a JSON object or did not parse.
    Malformed,
    /// The call was cut off by the output-token limit (field case B14).
    Truncated,
}

impl ArgumentErrorClass {
    /// The snake_case name, as in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            ArgumentErrorClass::UnknownTool => "unknown_tool",
            ArgumentErrorClass::MissingRequired => "missing_required",
            ArgumentErrorClass::UnexpectedParam => "unexpected_param",
            ArgumentErrorClass::TypeError => "type_error",
            ArgumentErrorClass::EnumError => "enum_error",
            ArgumentErrorClass::ValueMismatch => "value_mismatch",
            ArgumentErrorClass::Malformed => "malformed",
            ArgumentErrorClass::Truncated => "truncated",
        }
    }
}

/// One violation of a call's arguments against its tool's input schema (draft 2020-12),
/// classed after BFCL. Parameter names the schema does not define count even where the schema
/// allows additional properties.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// What kind of failure.
    pub class: ArgumentErrorClass,
    /// JSON Pointer into the arguments (`""` for the whole object).
    pub pointer: String,
    /// What is wrong, in one line.
    pub message: String,
}

/// One intercepted tool call, in arrival order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallRecord {
    /// 0-based position in the run's trajectory.
    pub index: usize,
    /// The tool name as the agent sent it.
    pub tool: String,
    /// The arguments: an object, or for an invalid call the raw text as a string.
    pub arguments: Value,
    /// How the call ended.
    pub outcome: CallOutcome,
    /// The structured result, for a success.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error text, for anything but a success.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The injected fault that produced the error, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault: Option<FaultKind>,
    /// For an invalid call, what was wrong with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invalid: Option<InvalidCallKind>,
    /// Time spent in the harness, in microseconds.
    pub duration_us: u64,
    /// The model turn (1-based) that emitted the call: calls emitted in one response share a
    /// turn. Agents without model turns (reference, command) give each call its own turn.
    pub turn: u32,
    /// Whether the harness refused the call before it reached the tool: unusable arguments
    /// ([`CallOutcome::InvalidCall`]), a protocol-level rejection such as an unknown tool
    /// ([`CallOutcome::ProtocolError`]), or arguments invalid against the input schema. An
    /// injected fault is not a refusal: the tool was reached and its upstream failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refused: bool,
    /// Whether the served catalog lacks the tool.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unknown_tool: bool,
    /// The arguments' violations of the tool's input schema, found by the harness when the
    /// call arrived; empty for valid arguments, an unknown tool or an invalid call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<Violation>,
    /// Whether `unknown_tool` and `violations` were decided against a catalog: always for a
    /// call the harness served; for the relay proxy only once the server's whole tools/list
    /// (every page) has been read and compiled; never for a recorded or imported call, whose
    /// two fields then say nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub checked: bool,
    /// What the agent's parser noticed about the call (repairs, a duplicate id, possible
    /// truncation), in the order noticed; empty for a clean call or an agent without a parser.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<CallNote>,
    /// Where the result's `structuredContent` breaks the tool's `outputSchema`, one entry per
    /// violating path; empty for a tool without one, a failed call or a conforming result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_violations: Vec<OutputViolation>,
    /// Whether a declarative mock had no rule for the call's arguments: the agent got a tool
    /// error naming the tool, and scoring fails the run (`unmatched_call`), since the suite
    /// never said what the tool does for such a call.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unmatched: bool,
    /// Whether a replayed cassette held no answer for the call: the agent got a tool error
    /// starting `not_recorded:`, and scoring fails the run (`not_recorded`), since nobody
    /// knows what the live server would have answered.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_recorded: bool,
    /// The user's input the tool asked for before it ran (the scenario's `elicitations`):
    /// what was asked, what the server got back and what the user answered. `None` for a call
    /// that asked nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationRecord>,
}

/// An elicitation one call made: the harness asked the user through the agent's MCP client
/// (`elicitation/create`) before running the tool.
///
/// The user *saw* it when the client showed it to toolgate's user (the in-process client
/// always does; a `command` agent's client does by relaying it to `TOOLGATE_USER_URL`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitationRecord {
    /// 0-based index into the scenario's `elicitations`.
    pub index: usize,
    /// What the user was asked.
    pub message: String,
    /// What the client returned to the server; `None` when it returned nothing usable (see
    /// `error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<ElicitationReply>,
    /// Why the server got no answer: the client does not declare the elicitation capability,
    /// or the request failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the user answered when the client showed the request (the last time, if it
    /// showed it more than once); `None` when the user never saw it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<ElicitationReply>,
}

impl ElicitationRecord {
    /// Whether the elicitation went as a faithful client makes it go: the user saw it and
    /// the server got the user's answer ([`ElicitationReply::agrees_with`]).
    pub fn is_faithful(&self) -> bool {
        match (&self.answer, &self.user) {
            (Some(answer), Some(user)) => answer.agrees_with(user),
            _ => false,
        }
    }
}

// Scripted conversations (`user_turns`): the record of one, kept beside the trace; the
// scripted user who writes it and its checks are `crate::score::conversation`.

/// One place where a tool result's `structuredContent` breaks the tool's `outputSchema`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputViolation {
    /// JSON Pointer into `structuredContent` (`""` for the whole value).
    pub pointer: String,
    /// What is wrong, in one line.
    pub message: String,
}

impl CallRecord {
    /// Call `index` of a trajectory: `tool` called with `arguments`, a success without a
    /// result, in turn `index + 1`, with nothing else known (a recorded or imported call).
    pub fn recorded(index: usize, tool: &str, arguments: Value) -> CallRecord {
        CallRecord {
            index,
            tool: tool.to_string(),
            arguments,
            outcome: CallOutcome::Success,
            result: None,
            error: None,
            fault: None,
            invalid: None,
            duration_us: 0,
            turn: u32::try_from(index + 1).unwrap_or(u32::MAX),
            refused: false,
            unknown_tool: false,
            violations: Vec::new(),
            checked: false,
            notes: Vec::new(),
            output_violations: Vec::new(),
            unmatched: false,
            not_recorded: false,
            elicitation: None,
        }
    }

    /// Whether the tool ran and succeeded.
    pub fn is_success(&self) -> bool {
        self.outcome == CallOutcome::Success
    }
}

/// The run's record that `args_from_prior` paths read: `{"calls": [...]}`, where `calls[i]`
/// is the actual call `assigned[i]` as `{"tool", "args", "result", "error"}`, or `null` where
/// `assigned[i]` is `None`. Indexes in `assigned` are positions in `trace`.
pub fn run_record(assigned: &[Option<usize>], trace: &[CallRecord]) -> Value {
    let calls: Vec<Value> = assigned
        .iter()
        .map(|slot| match slot {
            Some(index) => {
                let call = &trace[*index];
                json!({
                    "tool": call.tool,
                    "args": call.arguments,
                    "result": call.result,
                    "error": call.error,
                })
            }
            None => Value::Null,
        })
        .collect();
    json!({ "calls": calls })
}

/// One line of `trace.jsonl`: a tool call (`tool` set) or a final answer (`final_answer` set)
/// of one run of one scenario.
///
/// toolgate writes every field of the [`CallRecord`]; a hand-written recording needs only
/// `scenario`, `tool` and `arguments` (and may add `repeat`, `turn`, `invalid`). Unknown fields
/// are ignored so that traces stay readable across additions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceLine {
    /// [`TRACE_SCHEMA_VERSION`] when written by toolgate.
    #[serde(default = "current_version")]
    pub schema_version: u32,
    /// The run that wrote the line (as `results.json`'s `run.run_id`); absent in lines
    /// written before run ids existed, or by `serve`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The scenario id.
    pub scenario: String,
    /// The 0-based repetition.
    #[serde(default)]
    pub repeat: u32,
    /// The tool called.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The arguments (an object, or for an invalid call the raw text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// The model turn, 1-based.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
    /// Why the call was unusable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid: Option<InvalidCallKind>,
    /// The agent's final answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_answer: Option<String>,
    /// In a conversation: a user message after the prompt. The line stands between the calls
    /// before it and those after it; `reply` is the agent's reply it followed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// With `user`: the agent's reply before that message; absent when it said nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
    /// The rest of the call record, as toolgate writes it (absent in hand-written recordings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// See [`CallRecord::outcome`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<CallOutcome>,
    /// See [`CallRecord::result`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// See [`CallRecord::error`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// See [`CallRecord::fault`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<FaultKind>,
    /// See [`CallRecord::duration_us`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_us: Option<u64>,
    /// See [`CallRecord::refused`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refused: bool,
    /// See [`CallRecord::unknown_tool`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unknown_tool: bool,
    /// See [`CallRecord::violations`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<Violation>,
    /// See [`CallRecord::checked`]; absent (false) in hand-written recordings and in lines
    /// written before the field existed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub checked: bool,
    /// See [`CallRecord::notes`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<CallNote>,
    /// See [`CallRecord::output_violations`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_violations: Vec<OutputViolation>,
    /// See [`CallRecord::unmatched`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unmatched: bool,
    /// See [`CallRecord::not_recorded`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_recorded: bool,
    /// See [`CallRecord::elicitation`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationRecord>,
}

fn current_version() -> u32 {
    TRACE_SCHEMA_VERSION
}

impl TraceLine {
    /// The line for `call` of run `repeat` of `scenario`.
    pub fn call(scenario: &str, repeat: u32, call: &CallRecord) -> TraceLine {
        TraceLine {
            tool: Some(call.tool.clone()),
            arguments: Some(call.arguments.clone()),
            turn: Some(call.turn),
            invalid: call.invalid,
            index: Some(call.index),
            outcome: Some(call.outcome),
            result: call.result.clone(),
            error: call.error.clone(),
            fault: call.fault,
            duration_us: Some(call.duration_us),
            refused: call.refused,
            unknown_tool: call.unknown_tool,
            violations: call.violations.clone(),
            checked: call.checked,
            notes: call.notes.clone(),
            output_violations: call.output_violations.clone(),
            unmatched: call.unmatched,
            not_recorded: call.not_recorded,
            elicitation: call.elicitation.clone(),
            ..TraceLine::empty(scenario, repeat)
        }
    }

    /// The line for the final answer of run `repeat` of `scenario`.
    pub fn answer(scenario: &str, repeat: u32, answer: &str) -> TraceLine {
        TraceLine {
            final_answer: Some(answer.to_owned()),
            ..TraceLine::empty(scenario, repeat)
        }
    }

    /// The line of a conversation's turn in run `repeat` of `scenario`: the agent's `reply`,
    /// then the user's next message `user`.
    pub fn user_turn(scenario: &str, repeat: u32, reply: Option<&str>, user: &str) -> TraceLine {
        TraceLine {
            reply: reply.map(str::to_owned),
            user: Some(user.to_owned()),
            ..TraceLine::empty(scenario, repeat)
        }
    }

    fn empty(scenario: &str, repeat: u32) -> TraceLine {
        TraceLine {
            schema_version: TRACE_SCHEMA_VERSION,
            run_id: None,
            scenario: scenario.to_owned(),
            repeat,
            tool: None,
            arguments: None,
            turn: None,
            invalid: None,
            final_answer: None,
            user: None,
            reply: None,
            index: None,
            outcome: None,
            result: None,
            error: None,
            fault: None,
            duration_us: None,
            refused: false,
            unknown_tool: false,
            violations: Vec::new(),
            checked: false,
            notes: Vec::new(),
            output_violations: Vec::new(),
            unmatched: false,
            not_recorded: false,
            elicitation: None,
        }
    }

    /// The line as one line of JSON, without the newline.
    pub fn render(&self) -> String {
        serde_json::to_string(self).expect("trace lines serialize: plain data")
    }
}

#[cfg(test)]
mod tests {
    //! Trace lines: each call line reads back whole, and the run record shows the paired calls.

    use super::*;

    fn call() -> CallRecord {
        CallRecord {
            index: 0,
            tool: "crm_get_contact".into(),
            arguments: json!({"contact_id": "C-001"}),
            outcome: CallOutcome::ToolError,
            result: None,
            error: Some("`/contact_id`: bad".into()),
            fault: Some(FaultKind::RateLimit),
            invalid: None,
            duration_us: 12,
            turn: 2,
            refused: true,
            unknown_tool: false,
            violations: vec![Violation {
                class: ArgumentErrorClass::TypeError,
                pointer: "/contact_id".into(),
                message: "bad".into(),
            }],
            checked: true,
            notes: vec![CallNote::DuplicateId],
            output_violations: Vec::new(),
            unmatched: false,
            not_recorded: false,
            elicitation: None,
        }
    }

    #[test]
    fn a_call_line_carries_the_version_and_every_field_and_reads_back() {
        let line = TraceLine::call("T1-001", 1, &call());
        let text = line.render();
        assert_eq!(
            text,
            r#"{"schema_version":1,"scenario":"T1-001","repeat":1,"tool":"crm_get_contact","arguments":{"contact_id":"C-001"},"turn":2,"index":0,"outcome":"tool_error","error":"`/contact_id`: bad","fault":"rate_limit","duration_us":12,"refused":true,"violations":[{"class":"type_error","pointer":"/contact_id","message":"bad"}],"checked":true,"notes":["duplicate_id"]}"#
        );
        let read: TraceLine = serde_json::from_str(&text).expect("the line reads back");
        assert_eq!(read, line);
    }

    #[test]
    fn a_call_that_asked_the_user_keeps_the_elicitation_in_its_line() {
        use crate::scenario::ElicitationAction;
        let accept = ElicitationReply {
            action: ElicitationAction::Accept,
            content: Some(json!({"reason": "duplicate"})),
        };
        let mut asked =
            CallRecord::recorded(0, "crm_delete_contact", json!({"contact_id": "C-001"}));
        asked.elicitation = Some(ElicitationRecord {
            index: 0,
            message: "Delete?".into(),
            answer: Some(accept),
            error: None,
            user: None,
        });
        let line = TraceLine::call("T5-960", 0, &asked);
        let text = line.render();
        assert!(
            text.ends_with(
                r#""elicitation":{"index":0,"message":"Delete?","answer":{"action":"accept","content":{"reason":"duplicate"}}}}"#
            ),
            "{text}"
        );
        let read: TraceLine = serde_json::from_str(&text).expect("the line reads back");
        assert_eq!(read.elicitation, asked.elicitation);
    }

    #[test]
    fn a_hand_written_line_reads_as_the_current_version() {
        let read: TraceLine =
            serde_json::from_str(r#"{"scenario": "T1-001", "tool": "x", "arguments": {}}"#)
                .expect("a minimal line reads");
        assert_eq!(read.schema_version, TRACE_SCHEMA_VERSION);
        assert_eq!(read.repeat, 0);
        assert_eq!(read.tool.as_deref(), Some("x"));
    }

    #[test]
    fn invalid_call_kinds_are_named_in_snake_case_as_serde_names_them() {
        for kind in [
            InvalidCallKind::ArgumentsNotObject,
            InvalidCallKind::UnparseableArguments,
            InvalidCallKind::Truncated,
            InvalidCallKind::MissingFunction,
        ] {
            assert_eq!(
                serde_json::to_value(kind).expect("serializes"),
                json!(kind.as_str())
            );
        }
    }

    #[test]
    fn the_run_record_lists_paired_calls_and_null_for_unpaired_ones() {
        let record = run_record(&[None, Some(0)], &[call()]);
        assert_eq!(
            record,
            json!({"calls": [null, {"tool": "crm_get_contact", "args": {"contact_id": "C-001"},
                "result": null, "error": "`/contact_id`: bad"}]})
        );
    }
}
