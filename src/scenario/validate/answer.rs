//! Validating the checks on the final answer: result paths, texts, values with their sources,
//! labels and tolerances, and claims.

use serde_json::Value;

use super::super::assertion::Expression;
use super::super::file::{AnswerChecksFile, AnswerValueFile, AttributesFile};
use super::super::{AnswerChecks, AnswerValue, Attributes, Tolerance, ValueSource};
use super::Problems;
use super::sources::parse_source;

/// What answer values may read: the state's top-level names, or `None` when toolgate cannot
/// see the state (the user's own servers).
pub(super) struct StateNames<'a>(pub(super) Option<&'a [String]>);

pub(super) fn validate_answer(
    at: &str,
    checks: AnswerChecksFile,
    expected_calls: usize,
    state: &StateNames<'_>,
    problems: &mut Problems<'_>,
) -> AnswerChecks {
    let mut contains_results = Vec::new();
    for (index, source) in checks.contains_results.iter().enumerate() {
        let at = format!("{at}.contains_results[{index}]");
        // Any expected call may feed the answer, so the order check of parse_source is off.
        match parse_source(source, usize::MAX) {
            Ok(reference) if reference.call_index < expected_calls => {
                contains_results.push(reference);
            }
            Ok(reference) => problems.add(
                &at,
                Some(reference.source.split(" | ").next().unwrap_or_default()),
                format_args!(
                    "`{}` reads calls[{}], but the scenario has {expected_calls} expected calls",
                    reference.source, reference.call_index
                ),
            ),
            Err((message, needle)) => problems.add(&at, needle.as_deref(), message),
        }
    }
    for (index, text) in checks.contains_text.iter().enumerate() {
        if text.trim().is_empty() {
            problems.add(
                &format!("{at}.contains_text[{index}]"),
                None,
                "must not be empty",
            );
        }
    }
    let values = checks
        .values
        .into_iter()
        .enumerate()
        .filter_map(|(index, value)| validate_value(at, index, value, state, problems))
        .collect();
    let mut phrases = |section: &str, lists: Vec<super::super::file::OneOrMany>| {
        lists
            .into_iter()
            .enumerate()
            .map(|(index, list)| {
                if list.0.iter().any(|phrase| phrase.trim().is_empty()) {
                    problems.add(
                        &format!("{at}.{section}[{index}]"),
                        None,
                        "must not be empty",
                    );
                }
                list.0
            })
            .collect::<Vec<_>>()
    };
    let claims = phrases("claims", checks.claims);
    let must_not_claim = phrases("must_not_claim", checks.must_not_claim);
    let any_of = checks
        .any_of
        .into_iter()
        .map(|group| {
            let group = validate_answer(at, group, expected_calls, state, problems);
            if group.is_empty() {
                problems.add(
                    &format!("{at}.any_of"),
                    None,
                    "a group must hold at least one check",
                );
            }
            group
        })
        .collect();
    let attributes = checks
        .attributes
        .into_iter()
        .enumerate()
        .filter_map(|(index, attributes)| {
            validate_attributes(at, index, attributes, state, problems)
        })
        .collect();
    AnswerChecks {
        any_of,
        grounded: checks.grounded,
        attributes,
        contains_results,
        contains_text: checks.contains_text,
        asks_clarification: checks.asks_clarification,
        acknowledges_failure: checks.acknowledges_failure,
        refuses: checks.refuses,
        values,
        claims,
        must_not_claim,
    }
}

fn validate_value(
    at: &str,
    index: usize,
    value: AnswerValueFile,
    state: &StateNames<'_>,
    problems: &mut Problems<'_>,
) -> Option<AnswerValue> {
    let field = format!("{at}.values[{index}]");
    let given = [
        value.value.is_some(),
        value.any_of.is_some(),
        value.state.is_some(),
        value.seeded.is_some(),
    ];
    if given.iter().filter(|given| **given).count() != 1 {
        problems.add(
            &field,
            None,
            "needs exactly one of `value`, `any_of`, `state` and `seeded`",
        );
        return None;
    }
    let expression = |source: &str, key: &str, problems: &mut Problems<'_>| {
        let Some(roots) = state.0 else {
            problems.add(
                &format!("{field}.{key}"),
                Some(source),
                "reads the state, which toolgate cannot see in your own servers; use `value`",
            );
            return None;
        };
        match Expression::parse(source, roots) {
            Ok(expression) => Some(expression),
            Err(error) => {
                problems.add(&format!("{field}.{key}"), Some(source), error);
                None
            }
        }
    };
    let source = if let Some(literal) = value.value {
        if literal.is_null() || literal.as_array().is_some_and(Vec::is_empty) {
            problems.add(&format!("{field}.value"), None, "must not be null or empty");
        }
        ValueSource::Literal(literal)
    } else if let Some(options) = value.any_of {
        if options.is_empty() {
            problems.add(&format!("{field}.any_of"), None, "must not be empty");
        }
        ValueSource::AnyOf(options)
    } else if let Some(source) = &value.state {
        ValueSource::State(expression(source, "state", problems)?)
    } else {
        let source = value.seeded.as_deref().unwrap_or_default();
        ValueSource::Seeded(expression(source, "seeded", problems)?)
    };
    let tolerance =
        value
            .tolerance
            .as_ref()
            .and_then(|tolerance| match parse_tolerance(tolerance) {
                Ok(tolerance) => Some(tolerance),
                Err(message) => {
                    problems.add(&format!("{field}.tolerance"), None, message);
                    None
                }
            });
    let labels = value.label.map(|labels| labels.0).unwrap_or_default();
    if labels.iter().any(|label| label.trim().is_empty()) {
        problems.add(&format!("{field}.label"), None, "must not be empty");
    }
    if value.if_stated && labels.is_empty() {
        problems.add(
            &format!("{field}.if_stated"),
            None,
            "needs a `label`: a value may go unstated only where it is known what would state it",
        );
    }
    if value.if_stated && value.absent {
        problems.add(
            &format!("{field}.if_stated"),
            None,
            "cannot go with `absent`",
        );
    }
    if value.only && (value.absent || value.if_stated) {
        problems.add(
            &format!("{field}.only"),
            None,
            "cannot go with `absent` or `if_stated`: it closes a list the answer states",
        );
    }
    Some(AnswerValue {
        source,
        labels,
        tolerance,
        by: value.by,
        absent: value.absent,
        if_stated: value.if_stated,
        percent: value.percent,
        only: value.only,
    })
}

fn validate_attributes(
    at: &str,
    index: usize,
    attributes: AttributesFile,
    state: &StateNames<'_>,
    problems: &mut Problems<'_>,
) -> Option<Attributes> {
    let field = format!("{at}.attributes[{index}]");
    if attributes.by.is_empty() {
        problems.add(&format!("{field}.by"), None, "must name at least one field");
    }
    if attributes.fields.is_empty() && attributes.labels.is_empty() {
        problems.add(
            &format!("{field}.fields"),
            None,
            "must name at least one field (or give `labels`)",
        );
    }
    let (key, source) = match (&attributes.state, &attributes.seeded) {
        (Some(source), None) => ("state", source),
        (None, Some(source)) => ("seeded", source),
        _ => {
            problems.add(&field, None, "needs exactly one of `state` and `seeded`");
            return None;
        }
    };
    let Some(roots) = state.0 else {
        problems.add(
            &format!("{field}.{key}"),
            Some(source),
            "reads the state, which toolgate cannot see in your own servers",
        );
        return None;
    };
    let expression = match Expression::parse(source, roots) {
        Ok(expression) => expression,
        Err(error) => {
            problems.add(&format!("{field}.{key}"), Some(source), error);
            return None;
        }
    };
    Some(Attributes {
        source: if key == "state" {
            ValueSource::State(expression)
        } else {
            ValueSource::Seeded(expression)
        },
        by: attributes.by,
        fields: attributes.fields,
        labels: attributes
            .labels
            .into_iter()
            .map(|(field, words)| (field, words.0))
            .collect(),
    })
}

/// A tolerance: a number of 0 or more (absolute), or `"N%"` (relative).
fn parse_tolerance(value: &Value) -> Result<Tolerance, String> {
    let invalid =
        || format!("must be a number of 0 or more, or a percentage such as \"1%\", got {value}");
    match value {
        Value::Number(number) => number
            .as_f64()
            .filter(|n| *n >= 0.0)
            .map(Tolerance::Absolute)
            .ok_or_else(invalid),
        Value::String(text) => text
            .trim()
            .strip_suffix('%')
            .and_then(|n| n.trim().parse::<f64>().ok())
            .filter(|n| *n >= 0.0 && n.is_finite())
            .map(|n| Tolerance::Relative(n / 100.0))
            .ok_or_else(invalid),
        _ => Err(invalid()),
    }
}

#[cfg(test)]
mod tests {
    //! Tolerances: an absolute number of 0 or more, or a percentage; anything else is refused.

    use super::*;
    use serde_json::json;

    #[test]
    fn tolerances_are_absolute_numbers_or_percentages() {
        assert_eq!(parse_tolerance(&json!(500)), Ok(Tolerance::Absolute(500.0)));
        assert_eq!(parse_tolerance(&json!("1%")), Ok(Tolerance::Relative(0.01)));
        assert_eq!(
            parse_tolerance(&json!("-1%")),
            Err(
                "must be a number of 0 or more, or a percentage such as \"1%\", got \"-1%\""
                    .to_owned()
            )
        );
        assert!(parse_tolerance(&json!(true)).is_err());
    }
}
