//! Checks on the agent's final text answer: values from tool results, literal texts, and
//! three kinds of move (asking for clarification, acknowledging a failure, refusing) found by
//! cue words. Cue words are a deterministic floor, not an understanding of the text: they
//! catch an answer that never asks, never admits a failure or never declines, which is the
//! failure that matters for gating; judging the quality of the wording is left to a judge.

use serde_json::Value;

/// Phrases that mark a clarifying question (the answer must also contain `?`).
pub const CLARIFICATION_CUES: &[&str] = &[
    "which",
    "do you mean",
    "did you mean",
    "could you",
    "can you",
    "please confirm",
    "please specify",
    "clarify",
    "which one",
    "who do you",
    "what do you",
    "should i",
];

/// Phrases that acknowledge a failed step or a missing record.
pub const FAILURE_CUES: &[&str] = &[
    "fail",
    "error",
    "could not",
    "couldn't",
    "unable",
    "not found",
    "no record",
    "doesn't exist",
    "does not exist",
    "isn't available",
    "is not available",
    "unavailable",
    "not possible",
    "cannot be",
    "can't be",
];

/// Phrases that decline a request.
pub const REFUSAL_CUES: &[&str] = &[
    "can't",
    "cannot",
    "won't",
    "will not",
    "not able to",
    "unable to",
    "not allowed",
    "not permitted",
    "decline",
    "refuse",
    "should not",
    "shouldn't",
];

fn has_cue(answer: &str, cues: &[&str]) -> bool {
    let lower = answer.to_lowercase().replace('’', "'");
    cues.iter().any(|cue| lower.contains(cue))
}

/// Whether `answer` asks a clarifying question: a `?` and a [`CLARIFICATION_CUES`] phrase.
pub fn asks_clarification(answer: &str) -> bool {
    answer.contains('?') && has_cue(answer, CLARIFICATION_CUES)
}

/// Whether `answer` acknowledges a failure ([`FAILURE_CUES`]).
pub fn acknowledges_failure(answer: &str) -> bool {
    has_cue(answer, FAILURE_CUES)
}

/// Whether `answer` declines the request ([`REFUSAL_CUES`]).
pub fn refuses(answer: &str) -> bool {
    has_cue(answer, REFUSAL_CUES)
}

/// Every number written in `text`, tolerant of thousands separators and currency signs:
/// `$1,234.50` and `1234.5` both read as 1234.5; `-3` reads as -3.
pub fn numbers_in(text: &str) -> Vec<f64> {
    let chars: Vec<char> = text.chars().collect();
    let mut numbers = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let negative = i > 0 && chars[i - 1] == '-' && (i < 2 || !chars[i - 2].is_alphanumeric());
        let mut digits = String::new();
        while i < chars.len() {
            let c = chars[i];
            let next_is_digit = chars.get(i + 1).is_some_and(char::is_ascii_digit);
            if c.is_ascii_digit() {
                digits.push(c);
            } else if c == ',' && next_is_digit && !digits.contains('.') {
                // a thousands separator: skip it
            } else if c == '.' && next_is_digit && !digits.contains('.') {
                digits.push('.');
            } else {
                break;
            }
            i += 1;
        }
        if let Ok(value) = digits.parse::<f64>() {
            numbers.push(if negative { -value } else { value });
        }
    }
    numbers
}

/// Whether `answer` mentions `value`: a number equal to it within half a cent (so a value
/// rounded to cents or written with separators counts), a string case-insensitively, a bool
/// as `true`/`false`, an array when every element is mentioned. Objects and `null` never
/// count: point the path at a scalar.
pub fn mentions(answer: &str, value: &Value) -> bool {
    match value {
        Value::Number(number) => {
            let Some(wanted) = number.as_f64() else {
                return false;
            };
            numbers_in(answer)
                .iter()
                .any(|found| (found - wanted).abs() <= 0.005 + wanted.abs() * 1e-12)
        }
        Value::String(text) => answer.to_lowercase().contains(&text.to_lowercase()),
        Value::Bool(flag) => answer.to_lowercase().contains(&flag.to_string()),
        Value::Array(items) => !items.is_empty() && items.iter().all(|item| mentions(answer, item)),
        Value::Null | Value::Object(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_are_read_through_separators_and_signs() {
        assert_eq!(
            numbers_in("Total: $1,234.50 (was -3, up 12%)."),
            [1234.5, -3.0, 12.0]
        );
        assert_eq!(numbers_in("ids C-005 and 2026-Q1"), [5.0, 2026.0, 1.0]);
        assert_eq!(numbers_in("1,2"), [12.0]);
    }

    #[test]
    fn numbers_match_by_value_within_half_a_cent() {
        assert!(mentions("The forecast is 252,000.00 USD.", &json!(252000)));
        assert!(mentions("about 60,869.57 USD", &json!(60869.565)));
        assert!(!mentions("about 60,869 USD", &json!(60869.565)));
        assert!(!mentions("The forecast is 252,000.", &json!(25200)));
    }

    #[test]
    fn strings_arrays_and_objects() {
        assert!(mentions("Order o-008 is placed", &json!("O-008")));
        assert!(mentions(
            "SKU-200 and SKU-600 are low",
            &json!(["SKU-200", "SKU-600"])
        ));
        assert!(!mentions("SKU-200 is low", &json!(["SKU-200", "SKU-600"])));
        assert!(!mentions("anything", &json!({"a": 1})));
    }

    #[test]
    fn moves_are_found_by_cue_words() {
        assert!(asks_clarification(
            "I found two Johns. Which one do you mean?"
        ));
        assert!(!asks_clarification("Which John it is does not matter."));
        assert!(acknowledges_failure("The contact C-9999 was not found."));
        assert!(!acknowledges_failure("Done."));
        assert!(refuses("I can’t delete every contact."));
        assert!(!refuses("Deleted all contacts."));
    }
}
