//! The scenario file exactly as written (JSON or YAML). Unknown fields are errors: a
//! misspelled check must fail the load, never pass silently.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{Comparator, FailureCounting, FaultKind, Ordering, ScenarioKind};

/// One scenario file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub id: String,
    pub tier: i64,
    #[serde(rename = "type")]
    pub kind: ScenarioKind,
    pub prompt: String,
    pub seed_state: String,
    pub expected_calls: Vec<ExpectedCallFile>,
    #[serde(default)]
    pub ordering: Ordering,
    #[serde(default)]
    pub max_calls: Option<i64>,
    #[serde(default)]
    pub max_per_tool: std::collections::BTreeMap<String, i64>,
    #[serde(default)]
    pub max_failures: Option<i64>,
    #[serde(default)]
    pub failure_counting: Option<FailureCounting>,
    #[serde(default)]
    pub fault_injection: Option<Vec<FaultFile>>,
    #[serde(default)]
    pub final_state_assertions: Vec<String>,
    #[serde(default)]
    pub forbidden_calls: Vec<ForbiddenCallFile>,
    #[serde(default)]
    pub final_answer: Option<AnswerChecksFile>,
    #[serde(default)]
    pub reference_answer: Option<String>,
    #[serde(default)]
    pub judge_rubric: Option<String>,
    #[serde(default)]
    pub draft: bool,
}

/// One entry of `forbidden_calls`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForbiddenCallFile {
    pub tool: String,
    #[serde(default)]
    pub args_match: Map<String, Value>,
}

/// The `final_answer` section.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerChecksFile {
    #[serde(default)]
    pub contains_results: Vec<String>,
    #[serde(default)]
    pub contains_text: Vec<String>,
    #[serde(default)]
    pub asks_clarification: bool,
    #[serde(default)]
    pub acknowledges_failure: bool,
    #[serde(default)]
    pub refuses: bool,
}

/// One entry of `expected_calls`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedCallFile {
    pub tool: String,
    #[serde(default)]
    pub args_match: Map<String, Value>,
    #[serde(default)]
    pub args_forbid: Vec<String>,
    #[serde(default)]
    pub args_from_prior: Map<String, Value>,
    #[serde(default)]
    pub args_accept: Map<String, Value>,
    #[serde(default)]
    pub args_optional: Vec<String>,
    #[serde(default)]
    pub args_compare: std::collections::BTreeMap<String, Comparator>,
    #[serde(default)]
    pub reference_args: Map<String, Value>,
}

/// One entry of `fault_injection`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultFile {
    pub tool: String,
    #[serde(default = "one")]
    pub on_call: i64,
    #[serde(default = "one")]
    pub times: i64,
    pub error: FaultKind,
}

fn one() -> i64 {
    1
}
