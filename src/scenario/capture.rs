//! Captures: one value taken out of a value of the run record, most often a tool's text
//! result (`Commit: 15a52f7`, a printed table), with a regular expression or a CEL expression.
//!
//! A record source in a scenario file is a JSONPath string (`$.calls[0].result.id`) or an object
//! `{from: <JSONPath>, regex: <pattern>}` / `{from: <JSONPath>, cel: <expression>}`; in a
//! `reference_answer` placeholder it is written `{{ $.calls[0].result | /Commit: (\w+)/ }}` or
//! `{{ $.calls[0].result | cel: value.split("\n")[1] }}`. [`RecordSource`] is the parsed form,
//! shared by `args_from_prior`, `final_answer.contains_results` and those placeholders.

use regex::Regex;
use serde_json::{Value, json};
use serde_json_path::JsonPath;

use super::assertion::Expression;

/// The name a `cel` capture reads the value at `from` by.
pub const CAPTURE_VALUE: &str = "value";

/// How a value is taken out of the value found at a record source's path.
#[derive(Debug, Clone)]
pub enum Capture {
    /// The first match of a pattern (Rust `regex` syntax) in the value's text: the group named
    /// `value` if the pattern has one, else group 1, else the whole match. The capture is
    /// always a JSON string.
    Regex(Regex),
    /// A CEL expression over `value` (the JSON at the path), with the project's CEL additions
    /// and the strings extension (`split`, `substring`, `trim`, `indexOf`, ...).
    Cel(Expression),
}

impl Capture {
    /// Compiles a `regex` capture.
    ///
    /// # Errors
    ///
    /// A message quoting the pattern when it is not valid `regex` syntax.
    pub fn regex(pattern: &str) -> Result<Capture, String> {
        Regex::new(pattern)
            .map(Capture::Regex)
            .map_err(|error| format!("invalid regex `{pattern}`: {error}"))
    }

    /// Parses a `cel` capture, whose only name is `value`.
    ///
    /// # Errors
    ///
    /// The parser's message when the expression is not valid CEL, names anything but `value`
    /// (or a CEL type), or is too large.
    pub fn cel(source: &str) -> Result<Capture, String> {
        Expression::parse(source, &[CAPTURE_VALUE.to_string()])
            .map(Capture::Cel)
            .map_err(|error| error.to_string())
    }

    /// The captured value from `value` (the JSON at the path).
    ///
    /// A string is matched as it is; any other JSON value against its compact JSON text.
    ///
    /// # Errors
    ///
    /// Why nothing was captured, as a fragment that follows "but": `the pattern does not match
    /// the result`, or the CEL evaluation error.
    pub fn apply(&self, value: &Value) -> Result<Value, String> {
        match self {
            Capture::Regex(regex) => {
                let text = match value {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                let Some(captures) = regex.captures(&text) else {
                    return Err("the pattern does not match the result".to_string());
                };
                let named = regex.capture_names().any(|name| name == Some("value"));
                let (group, label) = if named {
                    (captures.name("value"), "group `value`")
                } else if regex.captures_len() > 1 {
                    (captures.get(1), "group 1")
                } else {
                    (captures.get(0), "the match")
                };
                group
                    .map(|found| Value::String(found.as_str().to_string()))
                    .ok_or_else(|| format!("{label} takes no part in the pattern's match"))
            }
            Capture::Cel(expression) => expression
                .evaluate(&json!({ CAPTURE_VALUE: value }))
                .map_err(|error| format!("the expression fails on the result: {error}")),
        }
    }

    /// The capture as written after `|` in a placeholder: `/pattern/` or `cel: expression`.
    pub fn describe(&self) -> String {
        match self {
            Capture::Regex(regex) => format!("/{}/", regex.as_str()),
            Capture::Cel(expression) => format!("cel: {}", expression.source()),
        }
    }
}

/// A value read from the run record: a JSONPath into it, and optionally a capture applied to
/// what the path finds.
#[derive(Debug, Clone)]
pub struct RecordSource {
    /// How it reads in messages: the path, then ` | /pattern/` or ` | cel: ...` with a capture.
    pub source: String,
    /// The parsed path (RFC 9535), always `$.calls[N]...`.
    pub path: JsonPath,
    /// The expected call it reads from: `N` in the path.
    pub call_index: usize,
    /// The capture applied to the value at the path, if any.
    pub capture: Option<Capture>,
}

/// Why a record source has no value in a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unread {
    /// The path finds no single value (the call is unpaired, or its result lacks the field).
    NoValue,
    /// The path finds a value but the capture takes nothing from it; the reason follows "but".
    NotCaptured(String),
}

impl RecordSource {
    /// The value in `record` (the run record, `{"calls": [...]}`).
    ///
    /// # Errors
    ///
    /// [`Unread`] when the path finds no single value or the capture takes nothing from it.
    pub fn read(&self, record: &Value) -> Result<Value, Unread> {
        let found = self
            .path
            .query(record)
            .exactly_one()
            .map_err(|_| Unread::NoValue)?;
        match &self.capture {
            None => Ok(found.clone()),
            Some(capture) => capture.apply(found).map_err(Unread::NotCaptured),
        }
    }
}

/// A `{{ source }}` in `reference_answer`, filled from the reference agent's own results.
#[derive(Debug, Clone)]
pub struct Placeholder {
    /// The placeholder as written, braces included: what the filled value replaces.
    pub written: String,
    /// The value it stands for.
    pub from: RecordSource,
}

/// A captured string that reads as a JSON number (`"12"`, `"-3.5"`), as that number: a
/// regex always captures text, and an argument or an answer may give the number. `None` for
/// anything else.
pub fn as_number(captured: &Value) -> Option<Value> {
    let text = captured.as_str()?.trim();
    serde_json::from_str::<serde_json::Number>(text)
        .ok()
        .map(Value::Number)
}

/// A value as text in an answer: a string as it is, anything else as compact JSON.
pub fn as_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    //! Captures: which group a pattern yields, how non-strings are matched, CEL over `value`.

    use super::*;

    fn regex(pattern: &str, value: Value) -> Result<Value, String> {
        Capture::regex(pattern)
            .expect("valid pattern")
            .apply(&value)
    }

    #[test]
    fn a_regex_yields_group_value_then_group_1_then_the_whole_match() {
        let text = json!("Commit: 15a52f72 on main");
        assert_eq!(
            regex(r"(\w+) on (?P<value>\w+)", text.clone()),
            Ok(json!("main"))
        );
        assert_eq!(regex(r"Commit: (\w+)", text.clone()), Ok(json!("15a52f72")));
        assert_eq!(regex(r"[0-9a-f]{8}", text), Ok(json!("15a52f72")));
    }

    #[test]
    fn a_number_looking_capture_stays_a_string_and_matches_the_number_by_value() {
        let captured = regex(r"'id': (\d+)", json!("[{'id': 12, 'name': 'x'}]"));
        assert_eq!(captured, Ok(json!("12")));
        let number = as_number(&captured.expect("captured")).expect("reads as a number");
        assert!(crate::values::matches(&number, &json!(12.0), "/id", false).is_ok());
        assert_eq!(as_number(&json!("12a")), None);
        assert_eq!(as_number(&json!(" -3.5 ")), Some(json!(-3.5)));
    }

    #[test]
    fn a_non_string_value_is_matched_against_its_compact_json() {
        assert_eq!(
            regex(r#""count":(\d+)"#, json!({"count": 7, "rows": []})),
            Ok(json!("7"))
        );
    }

    #[test]
    fn no_match_and_an_idle_group_say_why() {
        assert_eq!(
            regex(r"Commit: (\w+)", json!("nothing here")),
            Err("the pattern does not match the result".to_string())
        );
        assert_eq!(
            regex(r"a|(b)", json!("a")),
            Err("group 1 takes no part in the pattern's match".to_string())
        );
    }

    #[test]
    fn a_bad_pattern_is_an_error_quoting_it() {
        let error = Capture::regex("Commit: (").expect_err("unclosed group");
        assert!(error.starts_with("invalid regex `Commit: (`:"), "{error}");
    }

    #[test]
    fn cel_reads_value_with_string_functions() {
        let capture = Capture::cel(r#"value.split("\n")[1].trim()"#).expect("valid CEL");
        assert_eq!(
            capture.apply(&json!("header\n  second line \nthird")),
            Ok(json!("second line"))
        );
        let field = Capture::cel("value.rows[0].name").expect("valid CEL");
        assert_eq!(
            field.apply(&json!({"rows": [{"name": "Ada"}]})),
            Ok(json!("Ada"))
        );
        assert!(
            field
                .apply(&json!({"rows": []}))
                .expect_err("out of range")
                .starts_with("the expression fails on the result:")
        );
    }

    #[test]
    fn cel_names_other_than_value_fail_to_parse() {
        let error = Capture::cel("result.id").expect_err("unknown name");
        assert!(error.contains("unknown name `result`"), "{error}");
    }

    #[test]
    fn describe_reads_as_written_after_the_bar() {
        assert_eq!(
            Capture::regex(r"Commit: (\w+)").expect("valid").describe(),
            r"/Commit: (\w+)/"
        );
        assert_eq!(
            Capture::cel("value.size()").expect("valid").describe(),
            "cel: value.size()"
        );
    }
}
