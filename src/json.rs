//! JSON value helpers shared by every layer: partial matching (objects by key, numbers by
//! value), type names and renderings for messages, and pretty files.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// How a number argument is read against its schema's type; set by `scoring.numbers` in
/// `toolgate.yaml` and recorded in the results.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum NumberMode {
    /// JSON Schema semantics: `"type": "integer"` accepts any whole number, `3.0` included,
    /// and numbers compare by value (`1 == 1.0`).
    #[default]
    JsonSchema,
    /// BFCL-compatible strict int/float (Berkeley Function Calling Leaderboard, `ast_checker`):
    /// an `integer` parameter must be written as an integer literal, so `3.0` is a type error.
    /// A `number` parameter still accepts `3`.
    Bfcl,
}

impl NumberMode {
    /// The name in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            NumberMode::JsonSchema => "json_schema",
            NumberMode::Bfcl => "bfcl",
        }
    }
}

/// What an argument that is JSON text inside a string (`"{\"a\": 1}"` where the schema wants
/// an object or array) counts as; set by `scoring.double_encoded` in `toolgate.yaml` and
/// recorded in the results.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum DoubleEncoded {
    /// A string is not an object: the schema refuses the call (a type error).
    #[default]
    Strict,
    /// Decoded once, only where the schema wants an object or array and the string parses to
    /// one; the call carries a `double_encoded` note.
    Lenient,
}

impl DoubleEncoded {
    /// The name in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            DoubleEncoded::Strict => "strict",
            DoubleEncoded::Lenient => "lenient",
        }
    }
}

/// Whether `actual` satisfies `expected` under partial matching: objects need every expected
/// key (extra keys are ignored, recursively), arrays need the same length and element-wise
/// matches, numbers compare by value (`1 == 1.0`), everything else by equality.
///
/// `Err` names the first difference as "`/path`: expected X, got Y" (a JSON Pointer below
/// `at`).
pub(crate) fn match_value(expected: &Value, actual: &Value, at: &str) -> Result<(), String> {
    match (expected, actual) {
        (Value::Number(e), Value::Number(a)) => {
            if numbers_equal(e, a) {
                Ok(())
            } else {
                Err(mismatch(expected, actual, at))
            }
        }
        (Value::Object(e), Value::Object(a)) => {
            for (key, expected_value) in e {
                let path = format!("{at}/{}", escape_pointer(key));
                match a.get(key) {
                    Some(actual_value) => match_value(expected_value, actual_value, &path)?,
                    None => {
                        return Err(format!(
                            "`{path}`: missing, expected {}",
                            short(expected_value)
                        ));
                    }
                }
            }
            Ok(())
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                return Err(format!(
                    "`{}`: expected {} items, got {}",
                    display_path(at),
                    e.len(),
                    a.len()
                ));
            }
            for (index, (x, y)) in e.iter().zip(a).enumerate() {
                match_value(x, y, &format!("{at}/{index}"))?;
            }
            Ok(())
        }
        _ if expected == actual => Ok(()),
        _ => Err(mismatch(expected, actual, at)),
    }
}

/// Whether `actual` equals `expected` exactly: as [`match_value`], and no object in `actual`
/// has a key that the same object in `expected` lacks, at any depth (numbers still compare
/// by value). `Err` names the first difference, or the first unexpected key as
/// "`/path`: not expected (value)".
pub(crate) fn equal_value(expected: &Value, actual: &Value, at: &str) -> Result<(), String> {
    if equals_exactly(expected, actual) {
        return Ok(());
    }
    match_value(expected, actual, at)?;
    match extra_key(expected, actual) {
        None => Ok(()),
        Some((pointer, value)) => Err(format!("`{at}{pointer}`: not expected ({})", short(value))),
    }
}

/// Whether [`equal_value`] holds, decided without building a message: the same keys in every
/// object (in any order), arrays item by item, numbers by value, everything else by equality.
pub(crate) fn equals_exactly(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Number(e), Value::Number(a)) => numbers_equal(e, a),
        (Value::Object(e), Value::Object(a)) => maps_equal_exactly(e, a),
        (Value::Array(e), Value::Array(a)) => {
            e.len() == a.len() && e.iter().zip(a).all(|(x, y)| equals_exactly(x, y))
        }
        _ => expected == actual,
    }
}

/// [`equals_exactly`] for two objects: the same keys, in any order, with equal values.
pub(crate) fn maps_equal_exactly(
    expected: &Map<String, Value>,
    actual: &Map<String, Value>,
) -> bool {
    // Keys are unique, so the same count and every expected key present with an equal value
    // leaves no extra key in `actual`.
    expected.len() == actual.len()
        && expected.iter().all(|(key, value)| {
            actual
                .get(key)
                .is_some_and(|got| equals_exactly(value, got))
        })
}

/// Numbers by value, as [`match_value`] compares them: as integers when both are, else as
/// floats (`5` equals `5.0`).
fn numbers_equal(e: &serde_json::Number, a: &serde_json::Number) -> bool {
    match (e.as_i64(), a.as_i64(), e.as_u64(), a.as_u64()) {
        (Some(x), Some(y), _, _) => x == y,
        (_, _, Some(x), Some(y)) => x == y,
        _ => e.as_f64() == a.as_f64(),
    }
}

/// The first key of an object in `actual` that `expected` lacks, as a JSON Pointer relative
/// to both, with its value. Builds the pointer only when there is one.
fn extra_key<'a>(expected: &Value, actual: &'a Value) -> Option<(String, &'a Value)> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => a.iter().find_map(|(key, value)| {
            let step = || format!("/{}", escape_pointer(key));
            match e.get(key) {
                None => Some((step(), value)),
                Some(inner) => extra_key(inner, value)
                    .map(|(pointer, found)| (format!("{}{pointer}", step()), found)),
            }
        }),
        (Value::Array(e), Value::Array(a)) => {
            e.iter().zip(a).enumerate().find_map(|(index, (x, y))| {
                extra_key(x, y).map(|(pointer, found)| (format!("/{index}{pointer}"), found))
            })
        }
        _ => None,
    }
}

fn mismatch(expected: &Value, actual: &Value, at: &str) -> String {
    format!(
        "`{}`: expected {}, got {}",
        display_path(at),
        short(expected),
        short(actual)
    )
}

fn display_path(at: &str) -> &str {
    if at.is_empty() { "/" } else { at }
}

/// JSON Pointer escaping (RFC 6901).
fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// A value as compact JSON, cut to 80 characters for messages.
pub(crate) fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 80 {
        let cut: String = text.chars().take(77).collect();
        format!("{cut}...")
    } else {
        text
    }
}

/// `value` as an integer when it is one by value, as JSON Schema's `"type": "integer"` reads
/// it: `3` and `3.0` are both 3; `3.5`, strings and other types are `None`, and so is a whole
/// number outside `i64`. The one place every built-in tool reads an integer argument.
pub(crate) fn as_integer(value: &Value) -> Option<i64> {
    let Value::Number(number) = value else {
        return None;
    };
    if let Some(n) = number.as_i64() {
        return Some(n);
    }
    let float = number.as_f64()?;
    // 2^63 is exactly representable; every whole float in [-2^63, 2^63) fits in an i64.
    let in_range = (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&float);
    (float.fract() == 0.0 && in_range).then_some(float as i64)
}

/// Canonical JSON text of a value, for comparing values by meaning rather than by spelling:
/// object keys sorted at every level (so key order does not matter) and numbers by value
/// (`1`, `1.0` and `1e0` are all written `1`; other numbers as serde_json writes an `f64`).
/// Arrays keep their order. Two values are equal by `match_value`-style semantics with no
/// extra keys exactly when their canonical texts are equal.
/// `value` in decimal with at least `digits` decimals, and more (up to 9) until the number shown
/// compares with `threshold` (`>=`) as `value` does: a similarity of 0.499 under a threshold of
/// 0.5 reads `0.499`, never `0.50`, and 0.5551 above 0.555 reads `0.56`.
pub(crate) fn decimal_against(value: f64, threshold: f64, digits: usize) -> String {
    let holds = value >= threshold;
    for digits in digits..=9 {
        let shown = format!("{value:.digits$}");
        if shown
            .parse::<f64>()
            .is_ok_and(|number| (number >= threshold) == holds)
        {
            return shown;
        }
    }
    value.to_string()
}

pub fn canonical(value: &Value) -> String {
    serde_json::to_string(&Canonical(value)).expect("a JSON value always serializes")
}

/// A value serialized as [`canonical`] writes it: one pass into one buffer, no copies.
struct Canonical<'a>(&'a Value);

impl Serialize for Canonical<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap as _, SerializeSeq as _};
        match self.0 {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort_unstable();
                let mut out = serializer.serialize_map(Some(keys.len()))?;
                for key in keys {
                    out.serialize_entry(key, &Canonical(&map[key]))?;
                }
                out.end()
            }
            Value::Array(items) => {
                let mut out = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    out.serialize_element(&Canonical(item))?;
                }
                out.end()
            }
            Value::Number(number) => match (number.as_u64(), as_integer(self.0)) {
                (Some(n), _) => serializer.serialize_u64(n),
                (None, Some(n)) => serializer.serialize_i64(n),
                (None, None) => match number.as_f64() {
                    Some(float) => serializer.serialize_f64(float),
                    None => number.serialize(serializer),
                },
            },
            other => other.serialize(serializer),
        }
    }
}

/// Whether two values are the same by meaning: [`canonical`] texts equal (numbers by value,
/// objects regardless of key order, arrays in order).
pub(crate) fn same_value(a: &Value, b: &Value) -> bool {
    canonical(a) == canonical(b)
}

/// The text of a chat message's `content`: a string, or the `text` parts of an array joined
/// together without a separator; `None` for any other value or an array without text parts.
pub(crate) fn message_text(content: &Value) -> Option<String> {
    match content {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then(|| texts.concat())
        }
        _ => None,
    }
}

/// The JSON type of `value` with its article, for messages: "null", "a boolean", "a number",
/// "a string", "an array" or "an object".
pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `value` as pretty JSON (two-space indent, keys in their order) with a trailing newline, as
/// toolgate writes its files. For plain data types, which always serialize.
pub(crate) fn pretty(value: &impl Serialize) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("plain data always serializes");
    text.push('\n');
    text
}

/// Escapes one JSON Pointer reference token (RFC 6901: `~` as `~0`, `/` as `~1`).
pub(crate) fn pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    //! JSON matching: numbers by value, objects partially, arrays element-wise, strings exactly.

    use super::*;
    use serde_json::json;

    /// Issue #35: a value just under a threshold never reads as the threshold, and one just
    /// over it never reads as under.
    #[test]
    fn decimals_shown_compare_with_the_threshold_as_the_value_does() {
        assert_eq!(decimal_against(0.499, 0.5, 2), "0.499");
        assert_eq!(decimal_against(0.4996, 0.5, 3), "0.4996");
        assert_eq!(decimal_against(0.5, 0.5, 2), "0.50");
        assert_eq!(decimal_against(0.5551, 0.555, 2), "0.56");
        assert_eq!(decimal_against(0.5549, 0.555, 2), "0.55");
        assert_eq!(decimal_against(0.75, 0.5, 2), "0.75");
    }

    #[test]
    fn numbers_compare_by_value() {
        assert_eq!(match_value(&json!(5000), &json!(5000.0), ""), Ok(()));
        assert_eq!(
            match_value(&json!(1), &json!(1.5), "/n"),
            Err("`/n`: expected 1, got 1.5".into())
        );
    }

    #[test]
    fn objects_match_partially_and_recursively() {
        let expected = json!({"address": {"city": "Berlin"}});
        let actual = json!({"address": {"city": "Berlin", "country": "DE"}, "name": "Jo"});
        assert_eq!(match_value(&expected, &actual, ""), Ok(()));
        let actual = json!({"address": {"country": "DE"}});
        assert_eq!(
            match_value(&expected, &actual, ""),
            Err("`/address/city`: missing, expected \"Berlin\"".into())
        );
    }

    #[test]
    fn arrays_match_element_wise_with_equal_length() {
        assert_eq!(match_value(&json!([1, 2]), &json!([1.0, 2]), ""), Ok(()));
        assert_eq!(
            match_value(&json!([1, 2]), &json!([1]), "/ids"),
            Err("`/ids`: expected 2 items, got 1".into())
        );
    }

    #[test]
    fn equal_values_have_no_extra_key_at_any_depth() {
        let expected = json!({"address": {"city": "Berlin"}, "lines": [{"sku": "A"}]});
        assert_eq!(
            equal_value(
                &expected,
                &json!({"address": {"city": "Berlin"}, "lines": [{"sku": "A"}]}),
                ""
            ),
            Ok(())
        );
        assert_eq!(
            equal_value(&json!({"n": 5}), &json!({"n": 5.0}), ""),
            Ok(())
        );
        assert_eq!(
            equal_value(
                &expected,
                &json!({"address": {"city": "Berlin", "country": "DE"}, "lines": [{"sku": "A"}]}),
                "/a"
            ),
            Err("`/a/address/country`: not expected (\"DE\")".into())
        );
        assert_eq!(
            equal_value(
                &expected,
                &json!({"address": {"city": "Berlin"}, "lines": [{"sku": "A", "qty": 2}]}),
                ""
            ),
            Err("`/lines/0/qty`: not expected (2)".into())
        );
        assert_eq!(
            equal_value(&json!({"flag": true}), &json!({"flag": 1}), ""),
            Err("`/flag`: expected true, got 1".into())
        );
    }

    #[test]
    fn exact_equality_without_a_message_agrees_with_equal_value() {
        let values = [
            json!(null),
            json!(true),
            json!(1),
            json!(5),
            json!(5.0),
            json!(-5),
            json!(5.5),
            json!(u64::MAX),
            json!("5"),
            json!([]),
            json!([1, 2]),
            json!([2, 1]),
            json!([1.0, 2]),
            json!({}),
            json!({"a": 1}),
            json!({"a": 1.0}),
            json!({"a": 1, "b": 2}),
            json!({"b": 2, "a": 1}),
            json!({"a": {"c": [1, {"d": true}]}}),
            json!({"a": {"c": [1, {"d": true, "e": null}]}}),
            json!({"a": {"c": [1, {"d": 1}]}}),
        ];
        let mut equal_pairs = 0;
        for expected in &values {
            for actual in &values {
                let slow = equal_value(expected, actual, "").is_ok();
                assert_eq!(
                    equals_exactly(expected, actual),
                    slow,
                    "{expected} vs {actual}"
                );
                equal_pairs += usize::from(slow);
            }
        }
        // Each value equals itself; 5 ~ 5.0, [1, 2] ~ [1.0, 2], {"a": 1} ~ {"a": 1.0} and the
        // two orders of {"a": 1, "b": 2} each in both directions.
        assert_eq!(equal_pairs, values.len() + 8);
    }

    #[test]
    fn strings_are_exact() {
        assert_eq!(
            match_value(&json!("08:00 AM"), &json!("8:00 AM"), "/time"),
            Err("`/time`: expected \"08:00 AM\", got \"8:00 AM\"".into())
        );
    }

    #[test]
    fn integer_valued_floats_read_as_integers() {
        assert_eq!(as_integer(&json!(3)), Some(3));
        assert_eq!(as_integer(&json!(3.0)), Some(3));
        assert_eq!(as_integer(&json!(-2.0)), Some(-2));
        assert_eq!(as_integer(&json!(3.5)), None);
        assert_eq!(as_integer(&json!("3")), None);
        assert_eq!(as_integer(&json!(1e300)), None);
    }

    #[test]
    fn canonical_json_sorts_keys_and_writes_numbers_by_value() {
        assert_eq!(
            canonical(&json!({"b": 1, "a": {"d": 2.0, "c": [3, 1.5]}})),
            r#"{"a":{"c":[3,1.5],"d":2},"b":1}"#
        );
        assert!(same_value(
            &json!({"limit": 1, "q": "x"}),
            &json!({"q": "x", "limit": 1.0})
        ));
        assert!(!same_value(&json!([1, 2]), &json!([2, 1])));
        assert!(!same_value(&json!({"n": 1}), &json!({"n": "1"})));
    }
}
