//! Patterns: what a rule's `match` and a table filter's `where` compare values with.
//!
//! The semantics are those of a scenario's `args_match` (`crate::json::match_value`):
//! objects match by the keys given (extra keys are ignored, recursively), arrays item by
//! item with the same length, numbers by value, everything else by equality. One addition:
//! an object that is exactly `{"$regex": "..."}` matches a string the regular expression
//! finds a match in (the `regex` crate's syntax; anchor it with `^...$` for a whole match).
//! Values in a filter may be templates (`{{args.id}}`), rendered for each call.

use regex::Regex;
use serde_json::Value;

use super::template::{Context, Template};

/// The key that makes an object a regular expression.
pub const REGEX_KEY: &str = "$regex";

/// A parsed pattern.
#[derive(Debug, Clone)]
pub enum Pattern {
    /// A string the expression must find a match in.
    Regex(Regex),
    /// Every key must be present and match.
    Object(Vec<(String, Pattern)>),
    /// Same length, item by item.
    Array(Vec<Pattern>),
    /// A (possibly templated) value compared with `match_value`.
    Value(Template),
}

impl Pattern {
    /// Parses `value`; `has_rows` as for [`Template::parse`]. Errors name the problem.
    pub fn parse(value: &Value, has_rows: bool) -> Result<Pattern, String> {
        match value {
            Value::Object(object) if object.len() == 1 && object.contains_key(REGEX_KEY) => {
                let Some(source) = object[REGEX_KEY].as_str() else {
                    return Err(format!("`{REGEX_KEY}` must be a string"));
                };
                Regex::new(source).map(Pattern::Regex).map_err(|error| {
                    // The syntax error's last line says what is wrong; the lines above repeat
                    // the expression with a caret.
                    let text = error.to_string();
                    let reason = text.rsplit("error: ").next().unwrap_or(&text).trim();
                    format!("invalid regex `{source}`: {reason}")
                })
            }
            Value::Object(object) => object
                .iter()
                .map(|(key, value)| {
                    Pattern::parse(value, has_rows)
                        .map(|pattern| (key.clone(), pattern))
                        .map_err(|error| format!("{key}: {error}"))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Pattern::Object),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(index, item)| {
                    Pattern::parse(item, has_rows).map_err(|error| format!("{index}: {error}"))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Pattern::Array),
            other => Template::parse(other, has_rows).map(Pattern::Value),
        }
    }

    /// Whether `actual` matches, with templates rendered in `context`.
    pub fn matches(&self, actual: &Value, context: &Context<'_>) -> bool {
        match (self, actual) {
            (Pattern::Regex(regex), Value::String(text)) => regex.is_match(text),
            (Pattern::Regex(_), _) => false,
            (Pattern::Object(fields), Value::Object(object)) => {
                fields.iter().all(|(key, pattern)| {
                    object
                        .get(key)
                        .is_some_and(|value| pattern.matches(value, context))
                })
            }
            (Pattern::Object(_), _) => false,
            (Pattern::Array(items), Value::Array(values)) => {
                items.len() == values.len()
                    && items
                        .iter()
                        .zip(values)
                        .all(|(pattern, value)| pattern.matches(value, context))
            }
            (Pattern::Array(_), _) => false,
            (Pattern::Value(Template::Literal(expected)), _) => {
                crate::json::match_value(expected, actual, "").is_ok()
            }
            (Pattern::Value(template), _) => {
                crate::json::match_value(&template.render(context), actual, "").is_ok()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! Patterns match as `args_match` does, strings by regex, and a bad regex names its field.

    use serde_json::{Map, json};

    use super::*;

    fn matches(pattern: Value, actual: Value) -> bool {
        let args: Map<String, Value> = json!({"id": "T-2"}).as_object().cloned().expect("object");
        let state = || Value::Null;
        let context = Context {
            args: &args,
            rows: &[],
            state: &state,
            call: 1,
            seq: 1,
        };
        Pattern::parse(&pattern, false)
            .expect("a valid pattern")
            .matches(&actual, &context)
    }

    #[test]
    fn matches_partially_like_args_match_and_strings_by_regex() {
        assert!(matches(json!({"a": 1}), json!({"a": 1.0, "b": 2})));
        assert!(!matches(json!({"a": 1}), json!({"b": 1})));
        assert!(matches(
            json!({"q": {"$regex": "^acme"}}),
            json!({"q": "acme corp"})
        ));
        assert!(!matches(
            json!({"q": {"$regex": "^acme"}}),
            json!({"q": "the acme"})
        ));
        assert!(!matches(json!({"q": {"$regex": "1"}}), json!({"q": 1})));
        assert!(matches(
            json!([1, {"x": "y"}]),
            json!([1, {"x": "y", "z": 0}])
        ));
        assert!(!matches(json!([1]), json!([1, 2])));
        assert!(matches(json!({"id": "{{args.id}}"}), json!({"id": "T-2"})));
        assert!(!matches(json!({"id": "{{args.id}}"}), json!({"id": "T-3"})));
    }

    #[test]
    fn a_bad_regex_names_the_field() {
        let error = Pattern::parse(&json!({"q": {"$regex": "("}}), false).expect_err("bad");
        assert_eq!(error, "q: invalid regex `(`: unclosed group");
    }
}
