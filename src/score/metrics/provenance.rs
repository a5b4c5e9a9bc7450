//! Provenance of identifiers: an id-like argument value that appears neither in the prompt
//! nor in any earlier tool result of the run was invented; one that is a single edit (or one
//! day) away from a value the run saw is parameter drift.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::RunView;
use crate::scenario::identifiers::Identifiers;

/// Whether a finding is an invention or a near miss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProvenanceKind {
    /// Seen nowhere earlier in the run.
    Invented,
    /// One character (or one day) away from a value the run saw.
    Drift,
}

/// An id-like argument value without provenance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProvenanceFinding {
    /// Position of the call in the trace (0-based).
    pub call: usize,
    /// The tool called.
    pub tool: String,
    /// JSON Pointer of the argument.
    pub pointer: String,
    /// The value sent.
    pub value: String,
    /// Invented or drift.
    pub kind: ProvenanceKind,
    /// For drift, the value the run had seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub near: Option<String>,
}

/// An argument is id-like when its name is `id` or ends in `_id`/`Id`, or is a list of such
/// (`ids`, `*_ids`), and its value is a string.
fn is_id_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower == "id"
        || lower == "ids"
        || lower.ends_with("_id")
        || lower.ends_with("_ids")
        || name.ends_with("Id")
        || name.ends_with("Ids")
}

fn collect_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(text) => out.push(text.clone()),
        Value::Number(number) => out.push(number.to_string()),
        Value::Array(items) => items.iter().for_each(|item| collect_strings(item, out)),
        Value::Object(map) => map.values().for_each(|item| collect_strings(item, out)),
        _ => {}
    }
}

/// Id-like (pointer, value) pairs in a call's arguments, at any depth.
fn id_arguments(value: &Value, pointer: &str, in_id: bool, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                id_arguments(inner, &format!("{pointer}/{key}"), is_id_name(key), out);
            }
        }
        Value::Array(items) if in_id => {
            for (i, item) in items.iter().enumerate() {
                id_arguments(item, &format!("{pointer}/{i}"), true, out);
            }
        }
        Value::String(text) if in_id && !text.is_empty() => {
            out.push((pointer.to_string(), text.clone()))
        }
        _ => {}
    }
}

/// Whether `a` and `b` differ by exactly one character edit.
fn one_edit_apart(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a == b || a.len().abs_diff(b.len()) > 1 {
        return false;
    }
    let (short, long) = if a.len() <= b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    let prefix = short
        .iter()
        .zip(long.iter())
        .take_while(|(x, y)| x == y)
        .count();
    if short.len() == long.len() {
        short[prefix + 1..] == long[prefix + 1..]
    } else {
        short[prefix..] == long[prefix + 1..]
    }
}

/// Days since 0000-03-01 for a `YYYY-MM-DD` prefix, to tell dates one day apart.
fn day_number(text: &str) -> Option<i64> {
    let date = text.get(..10)?;
    let mut parts = date.split('-');
    let (y, m, d): (i64, i64, i64) = (
        parts.next()?.parse().ok()?,
        parts.next()?.parse().ok()?,
        parts.next()?.parse().ok()?,
    );
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let (y, m) = if m <= 2 { (y - 1, m + 12) } else { (y, m) };
    Some(365 * y + y / 4 - y / 100 + y / 400 + (153 * (m - 3) + 2) / 5 + d)
}

fn near_miss<'a>(value: &str, seen: &'a [String]) -> Option<&'a String> {
    seen.iter().find(|s| {
        one_edit_apart(value, s)
            || matches!((day_number(value), day_number(s)), (Some(a), Some(b)) if (a - b).abs() == 1 && value.len() == s.len())
    })
}

pub(super) fn find(view: &RunView<'_>) -> Vec<ProvenanceFinding> {
    find_with(
        &view.scenario.prompt,
        &view.scenario.identifiers,
        view.trace,
    )
}

/// The declared identifier arguments of a call (top level, a string or number, or a list of
/// them) that are not id-like by name, as (pointer, value) pairs.
fn declared_arguments(
    call: &crate::trace::CallRecord,
    identifiers: &Identifiers,
    out: &mut Vec<(String, String)>,
) {
    let Some(arguments) = call.arguments.as_object() else {
        return;
    };
    for (name, value) in arguments {
        if is_id_name(name) || !identifiers.declares(&call.tool, name) {
            continue;
        }
        let pointer = format!("/{name}");
        match value {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    if let Some(text) = scalar_text(item) {
                        out.push((format!("{pointer}/{i}"), text));
                    }
                }
            }
            other => out.extend(scalar_text(other).map(|text| (pointer, text))),
        }
    }
}

/// A non-empty string, or a number as written; `None` for anything else.
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) if !text.is_empty() => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// The id-like argument values of `trace` (calls in order) that appear neither in `prompt`
/// nor in an earlier call's result or error (a text result searched as text).
pub fn find_in(prompt: &str, trace: &[crate::trace::CallRecord]) -> Vec<ProvenanceFinding> {
    find_with(prompt, &Identifiers::default(), trace)
}

/// The id-like argument values of `trace` (calls in order), and those of the arguments
/// `identifiers` declares, that appear neither in `prompt` nor in an earlier call's result or
/// error. A result that is text (a JSON string: the tool answered without structured
/// content) is searched as text, so a value inside it counts as seen.
pub fn find_with(
    prompt: &str,
    identifiers: &Identifiers,
    trace: &[crate::trace::CallRecord],
) -> Vec<ProvenanceFinding> {
    let mut findings = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let mut texts: Vec<&str> = Vec::new();
    for call in trace {
        let mut ids = Vec::new();
        id_arguments(&call.arguments, "", false, &mut ids);
        declared_arguments(call, identifiers, &mut ids);
        for (pointer, value) in ids {
            let known = prompt.contains(&value)
                || seen.iter().any(|s| s == &value)
                || texts.iter().any(|text| text.contains(&value));
            if known {
                continue;
            }
            let near = near_miss(&value, &seen).cloned();
            findings.push(ProvenanceFinding {
                call: call.index,
                tool: call.tool.clone(),
                pointer,
                value,
                kind: if near.is_some() {
                    ProvenanceKind::Drift
                } else {
                    ProvenanceKind::Invented
                },
                near,
            });
        }
        if let Some(result) = &call.result {
            collect_strings(result, &mut seen);
            if let Value::String(text) = result {
                texts.push(text);
            }
        }
        if let Some(error) = &call.error {
            seen.push(error.clone());
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    //! Provenance: one edit or one day away is drift, and id-like argument names are recognised.

    use serde_json::json;

    use super::*;
    use crate::trace::CallRecord;

    #[test]
    fn one_edit_apart_detects_single_changes_only() {
        assert!(one_edit_apart("C-013", "C-014"));
        assert!(one_edit_apart("C-013", "C-0133"));
        assert!(!one_edit_apart("C-013", "C-013"));
        assert!(!one_edit_apart("C-013", "C-031"));
    }

    #[test]
    fn dates_one_day_apart_are_drift() {
        let seen = vec!["2026-02-28".to_string()];
        assert_eq!(near_miss("2026-03-01", &seen), Some(&seen[0]));
        assert_eq!(near_miss("2026-03-02", &seen), None);
    }

    #[test]
    fn id_names() {
        assert!(
            is_id_name("contact_id")
                && is_id_name("id")
                && is_id_name("userId")
                && is_id_name("order_ids")
        );
        assert!(!is_id_name("idle") && !is_id_name("paid"));
    }

    fn declared(patterns: &[&str]) -> Identifiers {
        let mut builder = globset::GlobSetBuilder::new();
        for pattern in patterns {
            builder.add(globset::Glob::new(pattern).expect("valid glob"));
        }
        Identifiers::new(builder.build().expect("builds"))
    }

    fn call(index: usize, tool: &str, arguments: Value, result: Option<Value>) -> CallRecord {
        let mut call = CallRecord::recorded(index, tool, arguments);
        call.result = result;
        call
    }

    #[test]
    fn a_declared_identifier_must_come_from_an_earlier_text_result_or_the_prompt() {
        let trace = [
            call(
                0,
                "git_log",
                json!({"max_count": 1}),
                Some(json!("Commit: 15a52f72\nAuthor: Ada")),
            ),
            call(1, "git_show", json!({"revision": "15a52f72"}), None),
            call(2, "git_show", json!({"revision": "9c0ffee1"}), None),
            call(3, "git_checkout", json!({"branch_name": "release"}), None),
            call(4, "git_log", json!({"max_count": 7}), None),
        ];
        let identifiers = declared(&["git_show.revision", "*.branch_name"]);
        let findings = find_with(
            "Show the last commit, then check out main.",
            &identifiers,
            &trace,
        );
        let flagged: Vec<(usize, &str, &str)> = findings
            .iter()
            .map(|f| (f.call, f.pointer.as_str(), f.value.as_str()))
            .collect();
        assert_eq!(
            flagged,
            [(2, "/revision", "9c0ffee1"), (3, "/branch_name", "release")]
        );
        assert_eq!(findings[0].kind, ProvenanceKind::Invented);
        assert!(
            find_with("", &Identifiers::default(), &trace).is_empty(),
            "undeclared arguments without id-like names are not checked"
        );
    }
}
