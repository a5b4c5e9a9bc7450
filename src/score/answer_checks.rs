//! The checks on a run's final answer: the scenario's `final_answer` section (values, claims,
//! texts, results, moves), and two checks every run gets: no success claimed after a write
//! that failed, and (Tier 5) no invented id or email address.

use serde_json::Value;

use super::answer::{self, Answer, Ties};
use super::{Check, CheckKind};
use crate::prose::{Prose, Wanted};
use crate::scenario::capture::as_number;
use crate::scenario::{AnswerChecks, AnswerValue, Attributes, Scenario, Unread, ValueSource};
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
    checks_at(
        &scenario.final_answer,
        "final_answer",
        final_answer,
        answer,
        record,
        states,
    )
}

/// `checks` (a `final_answer` section, or a conversation turn's `reply`) on the text `final_answer`
/// read as `answer`; each check's subject starts with `at`.
pub fn checks_at(
    checks: &AnswerChecks,
    at: &str,
    final_answer: Option<&str>,
    answer: Option<&Answer>,
    record: &Value,
    states: &States<'_>,
) -> Vec<Check> {
    let mut all_labels = Vec::new();
    collect_labels(checks, &mut all_labels);
    group_checks(
        checks,
        at,
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
    let mut group = Group::new(prefix, context);
    group.results(checks);
    group.texts(checks);
    group.moves(checks);
    group.values(checks);
    group.claims(checks);
    group.attributes(checks);
    let mut out = group.out;
    if !checks.any_of.is_empty() {
        out.push(any_of_check(checks, prefix, context));
    }
    out
}

/// The checks of one group as they are collected, in file order. Each method adds the checks
/// of one kind; [`Group::push`] decides them all alike when there is no usable answer.
struct Group<'a> {
    prefix: &'a str,
    context: &'a Context<'a>,
    /// The final answer's text, empty without one.
    text: &'a str,
    /// `answer "..."`, shortened: how details quote the answer.
    quoted: String,
    /// Why the final answer is not an answer (a refusal of the format, say), if it is not.
    not_an_answer: Option<&'static str>,
    out: Vec<Check>,
}

impl<'a> Group<'a> {
    /// An empty group at `prefix`.
    fn new(prefix: &'a str, context: &'a Context<'a>) -> Self {
        let text = context.final_answer.unwrap_or_default();
        let quoted = format!(
            "answer \"{}\"",
            crate::json::short(&Value::String(text.to_string())).trim_matches('"')
        );
        Group {
            prefix,
            context,
            text,
            quoted,
            not_an_answer: context.answer.and_then(Answer::not_an_answer),
            out: Vec::new(),
        }
    }

    /// Adds one check; without a final answer, or with one that is not an answer, it fails
    /// saying so instead of `why`.
    fn push(&mut self, kind: CheckKind, subject: String, passed: bool, why: String) {
        let (passed, detail) = match (passed, self.context.final_answer, self.not_an_answer) {
            (_, None, _) => (false, "no final answer".to_string()),
            (_, Some(_), Some(reason)) => (false, reason.to_string()),
            (true, _, _) => (true, "holds".to_string()),
            (false, Some(_), None) => (false, why),
        };
        self.out.push(Check {
            kind,
            subject,
            passed,
            detail,
        });
    }

    /// `contains_results`: the answer mentions the value each path finds in the run record.
    fn results(&mut self, checks: &AnswerChecks) {
        let prefix = self.prefix;
        for (i, reference) in checks.contains_results.iter().enumerate() {
            let subject = format!("{prefix}.contains_results[{i}] `{}`", reference.source);
            match reference.read(self.context.record) {
                Ok(value) => {
                    // A number-looking capture counts when the answer states the number.
                    let passed = answer::mentions(self.text, &value)
                        || reference.capture.is_some()
                            && as_number(&value)
                                .is_some_and(|number| answer::mentions(self.text, &number));
                    let why = format!(
                        "{} does not mention {}",
                        self.quoted,
                        crate::json::short(&value)
                    );
                    self.push(CheckKind::AnswerContainsResult, subject, passed, why);
                }
                Err(Unread::NoValue) => self.push(
                    CheckKind::AnswerContainsResult,
                    subject,
                    false,
                    format!(
                        "no single value at `{}` (calls[{}] unpaired or without that result)",
                        reference.source, reference.call_index
                    ),
                ),
                Err(Unread::NotCaptured(why)) => self.push(
                    CheckKind::AnswerContainsResult,
                    subject,
                    false,
                    format!("nothing captured: {why}"),
                ),
            }
        }
    }

    /// `contains_text`: the answer contains each text, ignoring case.
    fn texts(&mut self, checks: &AnswerChecks) {
        for (i, wanted) in checks.contains_text.iter().enumerate() {
            let passed = self.text.to_lowercase().contains(&wanted.to_lowercase());
            let why = format!("{} does not contain \"{wanted}\"", self.quoted);
            self.push(
                CheckKind::AnswerContainsText,
                format!("{}.contains_text[{i}]", self.prefix),
                passed,
                why,
            );
        }
    }

    /// The three moves asked for: `asks_clarification`, `acknowledges_failure`, `refuses`.
    fn moves(&mut self, checks: &AnswerChecks) {
        let answer = self.context.answer;
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
                let why = format!("{} {why}", self.quoted);
                self.push(kind, format!("{}.{name}", self.prefix), passed, why);
            }
        }
    }

    /// `values`: each value is stated (or, `absent`, not stated); a fact of the world counts
    /// only when the run looked something up.
    fn values(&mut self, checks: &AnswerChecks) {
        let Context {
            answer,
            states,
            all_labels,
            ..
        } = *self.context;
        for (i, value) in checks.values.iter().enumerate() {
            let subject = format!("{}.values[{i}] {}", self.prefix, value.source.describe());
            match answer.map(|answer| value_check(value, answer, all_labels, states)) {
                Some(Err(why)) => {
                    let why = format!("{} {why}", self.quoted);
                    self.push(CheckKind::AnswerValue, subject, false, why);
                }
                Some(Ok(()))
                    if !value.absent
                        && !value.if_stated
                        && value.source.is_world()
                        && !states.looked_up =>
                {
                    self.push(
                        CheckKind::AnswerValue,
                        subject,
                        false,
                        "states a fact of the world, but no call of the run answered: it was never looked up".to_string(),
                    )
                }
                Some(Ok(())) => self.push(CheckKind::AnswerValue, subject, true, String::new()),
                None => self.push(CheckKind::AnswerValue, subject, false, String::new()),
            }
        }
    }

    /// `claims` (the answer says one of each list's wordings), then `must_not_claim` (it says
    /// none of them).
    fn claims(&mut self, checks: &AnswerChecks) {
        let answer = self.context.answer;
        for (i, wordings) in checks.claims.iter().enumerate() {
            let passed = answer.is_some_and(|answer| answer.claims(wordings));
            let why = format!("{} does not say {}", self.quoted, wordings_text(wordings));
            self.push(
                CheckKind::AnswerClaims,
                format!("{}.claims[{i}]", self.prefix),
                passed,
                why,
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
            let why = format!("{} says {}", self.quoted, wordings_text(&claimed));
            self.push(
                CheckKind::AnswerMustNotClaim,
                format!("{}.must_not_claim[{i}]", self.prefix),
                claimed.is_empty(),
                why,
            );
        }
    }

    /// `attributes`: the answer keeps each record's attributes with that record.
    fn attributes(&mut self, checks: &AnswerChecks) {
        for (i, attributes) in checks.attributes.iter().enumerate() {
            let subject = format!(
                "{}.attributes[{i}] {}",
                self.prefix,
                attributes.source.describe()
            );
            match self.context.answer {
                Some(answer) => match attributes_check(attributes, answer, self.context.states) {
                    Ok(()) => {
                        self.push(CheckKind::AnswerAttributes, subject, true, String::new());
                    }
                    Err(why) => {
                        let why = format!("{} {why}", self.quoted);
                        self.push(CheckKind::AnswerAttributes, subject, false, why);
                    }
                },
                None => self.push(CheckKind::AnswerAttributes, subject, false, String::new()),
            }
        }
    }
}

/// The `any_of` check of a group that has `any_of` groups: it holds when every check of one
/// of them holds; otherwise it names the first failed check of each.
fn any_of_check(checks: &AnswerChecks, prefix: &str, context: &Context<'_>) -> Check {
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
    Check {
        kind: CheckKind::AnswerAnyOf,
        subject: format!("{prefix}.any_of"),
        passed: held,
        detail: if held {
            "holds".to_string()
        } else {
            format!("no group holds: {why}")
        },
    }
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
    let (resolved, any) = resolve(&value.source, states)?;
    let items: Vec<&Value> = match &resolved {
        Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    if items.is_empty() && !value.absent {
        return Err("cannot be checked: the value is an empty list".to_owned());
    }
    let sightings = Sightings::find(value, &items, answer, all_labels)?;
    let labelled = if value.labels.is_empty() {
        String::new()
    } else {
        format!(" as {}", value.labels.join(" / "))
    };
    if value.if_stated {
        return match sightings.wrong.as_slice() {
            [] => Ok(()),
            stated => Err(format!(
                "states {}{labelled} where {} is right",
                stated.join(", "),
                missing_or_items(&items, &value.by)
            )),
        };
    }
    if value.absent {
        return match sightings.mentioned.as_slice() {
            [] => Ok(()),
            found => Err(format!(
                "mentions {}{labelled}, which must not appear",
                found.join(", ")
            )),
        };
    }
    let Sightings {
        mentioned, missing, ..
    } = sightings;
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

/// The value an answer value names, and whether any one of its items is enough (`any_of`);
/// `Err` when the state it reads cannot be seen or evaluated.
fn resolve(source: &ValueSource, states: &States<'_>) -> Result<(Value, bool), String> {
    Ok(match source {
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
    })
}

/// Where the items of an answer value were seen in the answer, each described as the check
/// names it.
struct Sightings {
    /// Items the answer mentions.
    mentioned: Vec<String>,
    /// Items it does not mention (`if_stated`: not stated, which is fine).
    missing: Vec<String>,
    /// `if_stated`: what the answer states in an item's place instead, as written.
    wrong: Vec<String>,
}

impl Sightings {
    /// Looks for each of `items` in `answer`; `Err` when an item is nothing an answer can
    /// state.
    fn find(
        value: &AnswerValue,
        items: &[&Value],
        answer: &Answer,
        all_labels: &[String],
    ) -> Result<Sightings, String> {
        let ties = if value.absent || value.if_stated {
            Ties::Neither
        } else {
            Ties::Own
        };
        let mut sightings = Sightings {
            mentioned: Vec::new(),
            missing: Vec::new(),
            wrong: Vec::new(),
        };
        for item in items {
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
                    sightings.wrong.push(answer.prose().text()[span].to_owned());
                }
                continue;
            }
            if found {
                sightings.mentioned.push(describe(item, &value.by));
            } else {
                sightings.missing.push(describe(item, &value.by));
            }
        }
        Ok(sightings)
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
