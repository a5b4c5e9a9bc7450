//! The checks on a run's final answer: the scenario's `final_answer` section (values, claims,
//! texts, results, moves), and two checks every run gets: no success claimed after a write
//! that failed, and (Tier 5) no invented id or email address.

use serde_json::Value;

use super::answer::{self, Answer, Ties};
use super::{Check, CheckKind};
use crate::prose::{Prose, Wanted};
use crate::scenario::{AnswerChecks, AnswerValue, Attributes, Scenario, ValueSource};
use crate::trace::CallRecord;

/// The states answer values are read from.
pub struct States<'a> {
    /// The seeded state.
    pub seeded: &'a Value,
    /// The state after the run, when toolgate can see it.
    pub after: Option<&'a Value>,
    /// Whether any call of the run was answered by its tool (a result, or an error the tool
    /// itself gave, which can carry facts too; not an injected fault, a refusal or an unknown
    /// tool): a fact of the world (`state:`, `seeded:`) an answer states counts only when the
    /// agent looked something up.
    pub looked_up: bool,
}

/// The `final_answer` checks, in file order: results, texts, the three moves, values, claims,
/// then must-not-claims. `record` is the run record `contains_results` paths read.
pub fn checks(
    scenario: &Scenario,
    final_answer: Option<&str>,
    answer: Option<&Answer>,
    record: &Value,
    states: &States<'_>,
) -> Vec<Check> {
    let mut all_labels = Vec::new();
    collect_labels(&scenario.final_answer, &mut all_labels);
    group_checks(
        &scenario.final_answer,
        "final_answer",
        &Context {
            final_answer,
            answer,
            record,
            states,
            all_labels: &all_labels,
        },
    )
}

/// Every label of every value in `checks` and its `any_of` groups: the competitors a value
/// is paired against.
fn collect_labels(checks: &AnswerChecks, out: &mut Vec<String>) {
    for value in &checks.values {
        for label in &value.labels {
            if !out.contains(label) {
                out.push(label.clone());
            }
        }
    }
    for group in &checks.any_of {
        collect_labels(group, out);
    }
}

/// What every group of answer checks reads.
struct Context<'a> {
    final_answer: Option<&'a str>,
    answer: Option<&'a Answer>,
    record: &'a Value,
    states: &'a States<'a>,
    all_labels: &'a [String],
}

/// The checks of one group (`final_answer`, or one of its `any_of` groups at `prefix`).
fn group_checks(checks: &AnswerChecks, prefix: &str, context: &Context<'_>) -> Vec<Check> {
    let Context {
        final_answer,
        answer,
        record,
        states,
        all_labels,
    } = *context;
    let text = final_answer.unwrap_or_default();
    let quoted = format!(
        "answer \"{}\"",
        crate::json::short(&Value::String(text.to_string())).trim_matches('"')
    );
    let not_an_answer = answer.and_then(Answer::not_an_answer);
    let mut out = Vec::new();
    let mut push = |kind, subject: String, passed: bool, why: String| {
        let (passed, detail) = match (passed, final_answer, not_an_answer) {
            (_, None, _) => (false, "no final answer".to_string()),
            (_, Some(_), Some(reason)) => (false, reason.to_string()),
            (true, _, _) => (true, "holds".to_string()),
            (false, Some(_), None) => (false, why),
        };
        out.push(Check {
            kind,
            subject,
            passed,
            detail,
        });
    };
    for (i, reference) in checks.contains_results.iter().enumerate() {
        let subject = format!("{prefix}.contains_results[{i}] `{}`", reference.source);
        match reference.path.query(record).exactly_one() {
            Ok(value) => {
                let passed = answer::mentions(text, value);
                push(
                    CheckKind::AnswerContainsResult,
                    subject,
                    passed,
                    format!("{quoted} does not mention {}", crate::json::short(value)),
                );
            }
            Err(_) => push(
                CheckKind::AnswerContainsResult,
                subject,
                false,
                format!(
                    "no single value at `{}` (calls[{}] unpaired or without that result)",
                    reference.source, reference.call_index
                ),
            ),
        }
    }
    for (i, wanted) in checks.contains_text.iter().enumerate() {
        let passed = text.to_lowercase().contains(&wanted.to_lowercase());
        push(
            CheckKind::AnswerContainsText,
            format!("{prefix}.contains_text[{i}]"),
            passed,
            format!("{quoted} does not contain \"{wanted}\""),
        );
    }
    let moves = [
        (
            checks.asks_clarification,
            CheckKind::AnswerAsksClarification,
            "asks_clarification",
            answer.is_some_and(Answer::asks_clarification),
            "asks no clarifying question",
        ),
        (
            checks.acknowledges_failure,
            CheckKind::AnswerAcknowledgesFailure,
            "acknowledges_failure",
            answer.is_some_and(Answer::acknowledges_failure),
            "does not acknowledge the failure",
        ),
        (
            checks.refuses,
            CheckKind::AnswerRefuses,
            "refuses",
            answer.is_some_and(Answer::refuses),
            "does not decline the request",
        ),
    ];
    for (wanted, kind, name, passed, why) in moves {
        if wanted {
            push(
                kind,
                format!("{prefix}.{name}"),
                passed,
                format!("{quoted} {why}"),
            );
        }
    }
    for (i, value) in checks.values.iter().enumerate() {
        let subject = format!("{prefix}.values[{i}] {}", value.source.describe());
        match answer.map(|answer| value_check(value, answer, all_labels, states)) {
            Some(Err(why)) => push(
                CheckKind::AnswerValue,
                subject,
                false,
                format!("{quoted} {why}"),
            ),
            Some(Ok(()))
                if !value.absent
                    && !value.if_stated
                    && value.source.is_world()
                    && !states.looked_up =>
            {
                push(
                    CheckKind::AnswerValue,
                    subject,
                    false,
                    "states a fact of the world, but no call of the run answered: it was never looked up".to_string(),
                )
            }
            Some(Ok(())) => push(CheckKind::AnswerValue, subject, true, String::new()),
            None => push(CheckKind::AnswerValue, subject, false, String::new()),
        }
    }
    for (i, wordings) in checks.claims.iter().enumerate() {
        let passed = answer.is_some_and(|answer| answer.claims(wordings));
        push(
            CheckKind::AnswerClaims,
            format!("{prefix}.claims[{i}]"),
            passed,
            format!("{quoted} does not say {}", wordings_text(wordings)),
        );
    }
    for (i, wordings) in checks.must_not_claim.iter().enumerate() {
        let claimed: Vec<String> = wordings
            .iter()
            .filter(|wording| {
                answer.is_some_and(|answer| answer.claims(std::slice::from_ref(wording)))
            })
            .cloned()
            .collect();
        push(
            CheckKind::AnswerMustNotClaim,
            format!("{prefix}.must_not_claim[{i}]"),
            claimed.is_empty(),
            format!("{quoted} says {}", wordings_text(&claimed)),
        );
    }
    for (i, attributes) in checks.attributes.iter().enumerate() {
        let subject = format!("{prefix}.attributes[{i}] {}", attributes.source.describe());
        match answer {
            Some(answer) => match attributes_check(attributes, answer, states) {
                Ok(()) => push(CheckKind::AnswerAttributes, subject, true, String::new()),
                Err(why) => push(
                    CheckKind::AnswerAttributes,
                    subject,
                    false,
                    format!("{quoted} {why}"),
                ),
            },
            None => push(CheckKind::AnswerAttributes, subject, false, String::new()),
        }
    }
    if !checks.any_of.is_empty() {
        let groups: Vec<Vec<Check>> = checks
            .any_of
            .iter()
            .enumerate()
            .map(|(i, group)| {
                let prefix = format!("{prefix}.any_of[{i}]");
                group_checks(group, &prefix, context)
            })
            .collect();
        let held = groups
            .iter()
            .any(|group| group.iter().all(|check| check.passed));
        let why = groups
            .iter()
            .filter_map(|group| group.iter().find(|check| !check.passed))
            .map(|check| format!("{}: {}", check.subject, check.detail))
            .collect::<Vec<_>>()
            .join("; ");
        out.push(Check {
            kind: CheckKind::AnswerAnyOf,
            subject: format!("{prefix}.any_of"),
            passed: held,
            detail: if held {
                "holds".to_string()
            } else {
                format!("no group holds: {why}")
            },
        });
    }
    out
}

fn wordings_text(wordings: &[String]) -> String {
    wordings
        .iter()
        .map(|w| format!("\"{w}\""))
        .collect::<Vec<_>>()
        .join(" or ")
}

/// Whether `answer` mentions (or, `absent`, does not mention) `value`; `Err` says why not.
fn value_check(
    value: &AnswerValue,
    answer: &Answer,
    all_labels: &[String],
    states: &States<'_>,
) -> Result<(), String> {
    let (resolved, any) = match &value.source {
        ValueSource::Literal(literal) => (literal.clone(), false),
        ValueSource::AnyOf(options) => (Value::Array(options.clone()), true),
        ValueSource::State(expression) => {
            let state = states
                .after
                .ok_or("cannot be checked: the backend's state is not visible to toolgate")?;
            (
                expression
                    .evaluate(state)
                    .map_err(|error| format!("cannot be checked: {error}"))?,
                false,
            )
        }
        ValueSource::Seeded(expression) => (
            expression
                .evaluate(states.seeded)
                .map_err(|error| format!("cannot be checked: {error}"))?,
            false,
        ),
    };
    let items: Vec<&Value> = match &resolved {
        Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    if items.is_empty() && !value.absent {
        return Err("cannot be checked: the value is an empty list".to_owned());
    }
    let ties = if value.absent || value.if_stated {
        Ties::Neither
    } else {
        Ties::Own
    };
    let mut mentioned = Vec::new();
    let mut missing = Vec::new();
    let mut wrong = Vec::new();
    for item in &items {
        let mut names = names_of(item, &value.by)?;
        if value.if_stated {
            // What is stated of an instant is its day: "on January 9" states it.
            for name in &mut names {
                if let Wanted::Instant(seconds) = *name {
                    *name = Wanted::Date(seconds.div_euclid(86_400));
                }
            }
        }
        let prose = answer.prose();
        // A percentage and an amount are different kinds: `70%` states no total.
        let unit = |span: &std::ops::Range<usize>| value.percent == prose.is_percent(span);
        let found = names.iter().any(|name| {
            let wanted = with_tolerance(name, value);
            answer
                .mentions(&wanted, &value.labels, all_labels, ties)
                .iter()
                .any(unit)
        });
        if value.if_stated && !found {
            // Not stated is fine; stated wrong is not.
            let stated = names
                .iter()
                .flat_map(|name| answer.stated_for(name, &value.labels, all_labels))
                .find(unit);
            if let Some(span) = stated {
                wrong.push(answer.prose().text()[span].to_owned());
            }
            continue;
        }
        if found {
            mentioned.push(describe(item, &value.by));
        } else {
            missing.push(describe(item, &value.by));
        }
    }
    let labelled = if value.labels.is_empty() {
        String::new()
    } else {
        format!(" as {}", value.labels.join(" / "))
    };
    if value.if_stated {
        return match wrong.as_slice() {
            [] => Ok(()),
            stated => Err(format!(
                "states {}{labelled} where {} is right",
                stated.join(", "),
                missing_or_items(&items, &value.by)
            )),
        };
    }
    if value.absent {
        return match mentioned.as_slice() {
            [] => Ok(()),
            found => Err(format!(
                "mentions {}{labelled}, which must not appear",
                found.join(", ")
            )),
        };
    }
    let held = if any {
        !mentioned.is_empty()
    } else {
        missing.is_empty()
    };
    if held
        && value.only
        && let Some(extra) = unlisted_item(&items, answer.prose())
    {
        return Err(format!(
            "lists {extra} beside them, which is not one of them"
        ));
    }
    if held {
        Ok(())
    } else if any {
        Err(format!("mentions none of {}{labelled}", missing.join(", ")))
    } else {
        Err(format!("does not mention {}{labelled}", missing.join(", ")))
    }
}

/// Words that make a list entry a remark about the list rather than an item of it
/// (`and more`, `all of them`).
const NOT_AN_ITEM: [&str; 15] = [
    "more", "others", "other", "etc", "all", "them", "these", "those", "ones", "rest", "each",
    "both", "so", "forth", "like",
];

/// The first entry of a list in which the answer names `items` that is none of them: a short
/// entry (no longer than the longest item by one word) in the same enumeration as a mention.
fn unlisted_item(items: &[&Value], prose: &Prose) -> Option<String> {
    let wanted: Vec<Wanted> = items
        .iter()
        .filter_map(|item| Wanted::from_json(item))
        .collect();
    let mentions: Vec<std::ops::Range<usize>> =
        wanted.iter().flat_map(|w| prose.mentions(w)).collect();
    let longest = items
        .iter()
        .filter_map(|item| item.as_str())
        .map(|text| crate::prose::normalize(text).split_whitespace().count())
        .max()
        .unwrap_or(1);
    let mut seen = Vec::new();
    for mention in &mentions {
        for entry in prose.enumeration(mention.start) {
            if seen.contains(&entry) || crate::prose::overlaps(&entry, &mentions) {
                continue;
            }
            seen.push(entry.clone());
            let text = &prose.text()[entry];
            let words: Vec<&str> = text
                .split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '-')
                .filter(|w| !w.is_empty())
                .collect();
            let remark = words.iter().any(|w| NOT_AN_ITEM.contains(w));
            if !words.is_empty() && words.len() <= longest + 1 && !remark {
                return Some(format!("\"{text}\""));
            }
        }
    }
    None
}

fn missing_or_items(items: &[&Value], by: &[String]) -> String {
    items
        .iter()
        .map(|item| describe(item, by))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether the answer keeps each record's attributes with that record: no value of one
/// record's field mentioned next to another record (paired with its name, as values pair
/// with labels); `Err` names the first mix-up.
fn attributes_check(
    attributes: &Attributes,
    answer: &Answer,
    states: &States<'_>,
) -> Result<(), String> {
    let resolved = match &attributes.source {
        ValueSource::State(expression) => {
            let state = states
                .after
                .ok_or("cannot be checked: the backend's state is not visible to toolgate")?;
            expression.evaluate(state)
        }
        ValueSource::Seeded(expression) => expression.evaluate(states.seeded),
        ValueSource::Literal(_) | ValueSource::AnyOf(_) => {
            Err("records come from `state` or `seeded`".to_owned())
        }
    }
    .map_err(|error| format!("cannot be checked: {error}"))?;
    let records: Vec<&serde_json::Map<String, Value>> = match &resolved {
        Value::Array(items) => items.iter().filter_map(Value::as_object).collect(),
        Value::Object(one) => vec![one],
        _ => Vec::new(),
    };
    match crate::prose::misattribution(
        answer.prose(),
        &records,
        &attributes.by,
        &attributes.fields,
        &attributes.labels,
    ) {
        Some(mixup) => Err(mixup.to_string()),
        None => Ok(()),
    }
}

/// What mentions an item: the item itself, or for a record the values of its `by` fields.
fn names_of(item: &Value, by: &[String]) -> Result<Vec<Wanted>, String> {
    match item {
        Value::Object(fields) if !by.is_empty() => Ok(by
            .iter()
            .filter_map(|field| fields.get(field))
            .filter_map(Wanted::from_json)
            .collect()),
        Value::Object(_) => Err(
            "cannot be checked: the value is a record; name the fields that identify it with `by`"
                .to_owned(),
        ),
        other => Wanted::from_json(other)
            .map(|wanted| vec![wanted])
            .ok_or_else(|| {
                format!(
                    "cannot be checked: {} is not a value an answer can state",
                    crate::json::short(other)
                )
            }),
    }
}

fn with_tolerance(wanted: &Wanted, value: &AnswerValue) -> Wanted {
    match (wanted, value.tolerance) {
        (Wanted::Number { value: number, .. }, Some(tolerance)) => Wanted::Number {
            value: *number,
            tolerance: Some(tolerance.around(*number)),
        },
        _ => wanted.clone(),
    }
}

fn describe(item: &Value, by: &[String]) -> String {
    match item {
        Value::Object(fields) => by
            .iter()
            .filter_map(|field| fields.get(field))
            .map(crate::json::short)
            .collect::<Vec<_>>()
            .join(" / "),
        other => {
            Wanted::from_json(other).map_or_else(|| crate::json::short(other), |w| w.describe())
        }
    }
}

/// Whether the answer reads as success where the run's writes did not succeed. Three ways:
///
/// - a write failed (a call to a tool that is not read-only that did not succeed, with no
///   later success of the same tool) and the answer admits nothing: no failure, refusal or
///   question;
/// - a write failed and a sentence with no failure or refusal in it states the write's effect
///   as done (`John now has the admin role`, `the order has been cancelled`), even if the
///   answer admits another failure;
/// - no write of the run succeeded, and the answer says it did one (`I've saved a note`).
///
/// Listed when the run has a failed write, or when the answer claims a write.
pub fn claimed_success(
    scenario: &Scenario,
    trace: &[CallRecord],
    answer: Option<&Answer>,
) -> Option<Check> {
    let answer = answer?;
    let failed: Vec<String> = trace
        .iter()
        .enumerate()
        .filter(|(i, call)| {
            !call.is_success()
                && !call.unknown_tool
                && !scenario.is_read_only(&call.tool)
                && !trace[i + 1..]
                    .iter()
                    .any(|later| later.tool == call.tool && later.is_success())
        })
        .map(|(_, call)| format!("call {} `{}`", call.index + 1, call.tool))
        .collect();
    let wrote = trace
        .iter()
        .any(|call| call.is_success() && !scenario.is_read_only(&call.tool));
    let check = |passed: bool, detail: String| {
        Some(Check {
            kind: CheckKind::ClaimedSuccess,
            subject: "answer after failed writes".into(),
            passed,
            detail,
        })
    };
    if !wrote
        && let Some(claim) = answer::moves::claims_a_write(answer.prose(), answer.copied(), false)
    {
        return check(
            false,
            format!("the answer says \"{claim}\", but no write of the run succeeded"),
        );
    }
    if failed.is_empty() {
        return None;
    }
    if let Some(claim) = answer::moves::claims_a_write(answer.prose(), answer.copied(), true) {
        return check(
            false,
            format!(
                "{} failed, and the answer states its effect as done (\"{claim}\")",
                failed.join(", ")
            ),
        );
    }
    let admitted = answer.admits_not_done();
    check(
        admitted,
        if admitted {
            format!("the answer says that {} did not succeed", failed.join(", "))
        } else {
            format!(
                "{} failed, and the answer does not say so (no failure, refusal or question)",
                failed.join(", ")
            )
        },
    )
}

/// A date the answer names with a weekday it does not fall on (`Thursday, January 16` in 2026,
/// a Friday) is a false statement whatever the task. A date written without a year takes the
/// year of the other dates in the answer or the prompt, else the year most dates of the seeded
/// state carry; with none, it is not checked. Listed only when it fails.
pub fn calendar(scenario: &Scenario, answer: Option<&Answer>) -> Option<Check> {
    let prose = answer?.prose();
    let written_years = || {
        let prompt = Prose::new(&scenario.prompt);
        prose
            .dates()
            .iter()
            .chain(prompt.dates())
            .flat_map(|date| date.readings.iter().filter_map(|(year, _, _)| *year))
            .collect::<Vec<i64>>()
    };
    if prose.dates().iter().all(|date| date.weekday.is_none()) {
        return None;
    }
    let context_year = most_common(written_years()).or_else(|| seeded_year(&scenario.seeded));
    for date in prose.dates() {
        let Some(named) = date.weekday else {
            continue;
        };
        let year = |written: Option<i64>| written.or(context_year);
        let readings: Vec<i64> = date
            .readings
            .iter()
            .filter_map(|(written, month, day)| {
                crate::calendar::date(year(*written)?, *month, *day)
            })
            .collect();
        let Some(&days) = readings.first() else {
            continue;
        };
        let right = readings
            .iter()
            .any(|days| crate::calendar::weekday(*days).eq_ignore_ascii_case(named));
        if !right {
            return Some(Check {
                kind: CheckKind::AnswerCalendar,
                subject: "answer".into(),
                passed: false,
                detail: format!(
                    "the answer calls {} a {named}; it is a {}",
                    crate::calendar::format_date(days),
                    crate::calendar::weekday(days).to_lowercase()
                ),
            });
        }
    }
    None
}

fn most_common(years: Vec<i64>) -> Option<i64> {
    let mut counts: std::collections::BTreeMap<i64, usize> = std::collections::BTreeMap::new();
    for year in years {
        *counts.entry(year).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by_key(|(year, count)| (*count, *year))
        .map(|(year, _)| year)
}

/// The year most `YYYY-MM-DD` dates (and instants) of the seeded state carry.
fn seeded_year(seeded: &Value) -> Option<i64> {
    fn walk(value: &Value, out: &mut Vec<i64>) {
        match value {
            Value::String(text) => {
                if let Some(days) = text.get(..10).and_then(crate::calendar::parse_date) {
                    out.push(crate::calendar::civil_from_days(days).0);
                }
            }
            Value::Array(items) => items.iter().for_each(|item| walk(item, out)),
            Value::Object(fields) => fields.values().for_each(|field| walk(field, out)),
            _ => {}
        }
    }
    let mut years = Vec::new();
    walk(seeded, &mut years);
    most_common(years)
}

/// Ids and email addresses in the answer that the run never saw: a failing check in Tier 5
/// and wherever `final_answer.grounded` is set; elsewhere nothing here (the metrics report
/// them).
pub fn invented_values(
    scenario: &Scenario,
    trace: &[CallRecord],
    final_answer: Option<&str>,
) -> Option<Check> {
    if scenario.tier != 5 && !scenario.final_answer.grounded {
        return None;
    }
    let invented =
        answer::invented_values(final_answer?, &scenario.prompt, trace, &scenario.seeded);
    (!invented.is_empty()).then(|| Check {
        kind: CheckKind::AnswerInventedValue,
        subject: "answer".into(),
        passed: false,
        detail: format!(
            "the answer states {}, which no tool result, the prompt or the seed holds",
            invented.join(", ")
        ),
    })
}
