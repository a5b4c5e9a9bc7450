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
    pub tier: WholeNumber,
    #[serde(rename = "type")]
    pub kind: ScenarioKind,
    pub prompt: String,
    /// Required for the built-in world; absent for a suite of the user's own servers.
    #[serde(default)]
    pub seed_state: Option<String>,
    /// A file or directory copied fresh for every run of the user's own servers.
    #[serde(default)]
    pub seed_path: Option<String>,
    #[serde(default)]
    pub block_forbidden: bool,
    #[serde(default)]
    pub final_state_probes: Vec<ProbeFile>,
    pub expected_calls: Vec<ExpectedCallFile>,
    #[serde(default)]
    pub ordering: Ordering,
    #[serde(default)]
    pub max_calls: Option<WholeNumber>,
    #[serde(default)]
    pub max_per_tool: std::collections::BTreeMap<String, WholeNumber>,
    #[serde(default)]
    pub max_failures: Option<WholeNumber>,
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

/// One entry of `final_state_probes`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeFile {
    pub tool: String,
    #[serde(default)]
    pub arguments: Map<String, Value>,
    pub assertions: Vec<String>,
}

/// One entry of `forbidden_calls`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForbiddenCallFile {
    pub tool: String,
    #[serde(default, deserialize_with = "unique_keys")]
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
    #[serde(default, deserialize_with = "unique_keys")]
    pub args_match: Map<String, Value>,
    #[serde(default)]
    pub args_forbid: Vec<String>,
    #[serde(default, deserialize_with = "unique_keys")]
    pub args_from_prior: Map<String, Value>,
    #[serde(default, deserialize_with = "unique_keys")]
    pub args_accept: Map<String, Value>,
    #[serde(default)]
    pub args_optional: Vec<String>,
    #[serde(default)]
    pub args_compare: std::collections::BTreeMap<String, Comparator>,
    #[serde(default, deserialize_with = "unique_keys")]
    pub reference_args: Map<String, Value>,
}

/// One entry of `fault_injection`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultFile {
    pub tool: String,
    #[serde(default = "one")]
    pub on_call: WholeNumber,
    #[serde(default = "one")]
    pub times: WholeNumber,
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
