//! `<section id="changes">`: with a baseline, the scenarios that regressed, were fixed, are
//! new or are gone, each opening the base run and this run side by side, call by call.
//!
//! A scenario regressed when the baseline passed it in at least half of its judged runs and
//! this run passes it in fewer than half (with one repetition: it passed and now fails);
//! fixed is the reverse. Of each side, one run is shown: for a regression the first failing
//! run of this run and the first passing run of the base, for a fix the reverse, otherwise
//! the first run.

use std::fmt::Write as _;

use super::calls::push_call;
use super::escape::{self, push};
use super::runs::{self, FirstDiff, RunTrace, Traces};
use super::{BaseRun, Input};
use crate::gate::baseline::BaselineScenario;
use crate::results::{RunReport, ScenarioResult};

/// Most bytes of one text in the side-by-side columns.
const SIDE_BYTES: usize = 1024;

/// How a scenario changed since the baseline, in the order the section lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Change {
    /// Passed in the baseline, fails now.
    Regressed,
    /// Failed in the baseline, passes now.
    Fixed,
    /// Not in the baseline.
    New,
    /// In the baseline, not in this run.
    Gone,
}

impl Change {
    /// The `data-change` value and the word shown.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Change::Regressed => "regressed",
            Change::Fixed => "fixed",
            Change::New => "new",
            Change::Gone => "gone",
        }
    }
}

/// Every changed scenario id with its change: regressed, fixed, new (in suite order), then
/// gone (in the baseline's order). Empty without a baseline.
pub(super) fn changes<'a>(input: &Input<'a>) -> Vec<(Change, &'a str)> {
    let Some(baseline) = input.baseline else {
        return Vec::new();
    };
    let report = input.report;
    let mut found: Vec<(Change, &'a str)> = Vec::new();
    for (id, tally) in ids(report).filter_map(|id| Some((id, report.summary.per_scenario.get(id)?)))
    {
        let Some(before) = baseline.scenario(id) else {
            found.push((Change::New, id));
            continue;
        };
        let (Some(before), Some(now)) = (before.pass_rate(), tally.pass_rate()) else {
            continue;
        };
        if before >= 0.5 && now < 0.5 {
            found.push((Change::Regressed, id));
        } else if before < 0.5 && now >= 0.5 {
            found.push((Change::Fixed, id));
        }
    }
    // A scenario `--impact` skipped did not go anywhere: the change cannot affect it.
    let skipped = |id: &str| {
        report
            .run
            .as_ref()
            .and_then(|run| run.impact.as_ref())
            .is_some_and(|impact| impact.is_skipped(id))
    };
    for scenario in &baseline.scenarios {
        if report.scenario(&scenario.id).is_none() && !skipped(&scenario.id) {
            found.push((Change::Gone, scenario.id.as_str()));
        }
    }
    found.sort_by_key(|(change, _)| *change);
    found
}

/// The scenario ids of `report`, each once, in suite order.
pub(super) fn ids(report: &RunReport) -> impl Iterator<Item = &str> {
    report
        .scenarios
        .iter()
        .enumerate()
        .filter(|(i, result)| *i == 0 || report.scenarios[i - 1].id != result.id)
        .map(|(_, result)| result.id.as_str())
}

/// The run of `id` in `results` that shows `change` best (see the module docs).
fn pick<'a>(
    results: &'a [ScenarioResult],
    id: &str,
    wants_pass: Option<bool>,
) -> Option<&'a ScenarioResult> {
    let mut runs = results.iter().filter(|result| result.id == id);
    let first = runs.clone().next();
    match wants_pass {
        Some(pass) => runs
            .find(|result| result.outcome.is_pass() == pass)
            .or(first),
        None => first,
    }
}

/// Appends the section; nothing without a baseline.
pub(super) fn push_section(out: &mut String, input: &Input<'_>) {
    let Some(baseline) = input.baseline else {
        return;
    };
    let found = changes(input);
    out.push_str("<section id=\"changes\">\n<h2>Changes since the baseline</h2>\n");
    let count = |which: Change| found.iter().filter(|(change, _)| *change == which).count();
    let _ = writeln!(
        out,
        "<p>{} regressed, {} fixed, {} new, {} gone.{}</p>",
        count(Change::Regressed),
        count(Change::Fixed),
        count(Change::New),
        count(Change::Gone),
        if input.base.is_some() || found.is_empty() {
            ""
        } else {
            " The base run's trajectories are not available: each change shows the baseline's tally instead (see --base-run)."
        }
    );
    let head = Traces::of(
        input.trace,
        input
            .report
            .run
            .as_ref()
            .and_then(|run| run.run_id.as_deref()),
    );
    let base = input.base.map(|base| {
        (
            base,
            Traces::of(
                base.trace,
                base.report
                    .run
                    .as_ref()
                    .and_then(|run| run.run_id.as_deref()),
            ),
        )
    });
    for (change, id) in found {
        push_change(
            out,
            input,
            change,
            id,
            &head,
            base.as_ref(),
            baseline.scenario(id),
        );
    }
    out.push_str("</section>\n");
}

/// One changed scenario as a `<details class="change">`.
fn push_change(
    out: &mut String,
    input: &Input<'_>,
    change: Change,
    id: &str,
    head_traces: &Traces<'_>,
    base: Option<&(BaseRun<'_>, Traces<'_>)>,
    before: Option<&BaselineScenario>,
) {
    let wants_pass = match change {
        Change::Regressed => Some(false),
        Change::Fixed => Some(true),
        Change::New | Change::Gone => None,
    };
    let head = pick(&input.report.scenarios, id, wants_pass);
    let base_result =
        base.and_then(|(run, _)| pick(&run.report.scenarios, id, wants_pass.map(|pass| !pass)));
    let word = change.as_str();
    let _ = write!(
        out,
        "<details class=\"change\" data-change=\"{word}\" data-scenario=\"{}\"><summary><span class=\"badge {word}\">{word}</span> <code>{}</code>",
        escape::escape(id),
        escape::escape(id)
    );
    if let Some(before) = before {
        let _ = write!(
            out,
            " · baseline passed {}/{}",
            before.passed,
            before.judged()
        );
    }
    if let Some(tally) = input.report.summary.per_scenario.get(id) {
        let _ = write!(
            out,
            " · this run passed {}/{}",
            tally.passed,
            tally.passed + tally.failed
        );
    }
    if let Some(divergence) = head
        .and_then(|result| result.metrics.as_ref())
        .and_then(|metrics| metrics.first_divergence.as_deref())
    {
        out.push_str(" · first divergence: ");
        escape::push_rich(out, divergence, SIDE_BYTES);
    }
    out.push_str("</summary>\n<div class=\"side-by-side\">");
    let head_run = head.and_then(|result| head_traces.run(id, result.repeat));
    let base_run = match (base, base_result) {
        (Some((_, traces)), Some(result)) => Some(traces.run(id, result.repeat)),
        (Some(_), None) => Some(None),
        (None, _) => None,
    };
    let head_label = side_label(
        "this run",
        head,
        change == Change::Gone,
        input.trace.is_empty(),
    );
    match base_run {
        Some(base_run) => {
            let base_label = side_label("base", base_result, change == Change::New, false);
            push_sides(out, (&base_label, base_run), (&head_label, head_run));
        }
        None => push_tally_only(out, before, &head_label, head_run),
    }
    out.push_str("</div>\n");
    if change != Change::Gone {
        let _ = write!(
            out,
            "<p><a href=\"#{}\">Every run of this scenario</a></p>",
            crate::report::anchor(id, None)
        );
    }
    out.push_str("</details>\n");
}

/// The line above one side: which run it is and how it ended, or why it has no run.
fn side_label(side: &str, result: Option<&ScenarioResult>, absent: bool, no_trace: bool) -> String {
    match result {
        _ if absent => format!("{side}: the scenario is not in it"),
        Some(_) if no_trace => format!("{side}: its trace is not available"),
        Some(result) => format!(
            "{side}: repeat {}, {}",
            result.repeat,
            result.outcome.as_str()
        ),
        None => format!("{side}: no run of this scenario"),
    }
}

/// Both sides, aligned row by row, the first difference marked on both.
fn push_sides(
    out: &mut String,
    (base_label, base): (&str, Option<&RunTrace<'_>>),
    (head_label, head): (&str, Option<&RunTrace<'_>>),
) {
    let no_calls = Vec::new();
    let base_calls = base.map_or(&no_calls, |run| &run.calls);
    let head_calls = head.map_or(&no_calls, |run| &run.calls);
    let rows = runs::align(base_calls, head_calls);
    let (base_answer, head_answer) = (base.and_then(|r| r.answer), head.and_then(|r| r.answer));
    let first = runs::first_diff(&rows, base_answer, head_answer);
    let sides = [
        ("base", base_label, base_answer),
        ("head", head_label, head_answer),
    ];
    for (i, (class, label, answer)) in sides.into_iter().enumerate() {
        let _ = write!(out, "<div class=\"{class}\"><div class=\"side-head\">");
        push(out, label);
        out.push_str("</div>");
        let mut position = 0;
        for (row_index, row) in rows.iter().enumerate() {
            let marked = if first == FirstDiff::Row(row_index) {
                " first-diff"
            } else {
                ""
            };
            match if i == 0 { row.base } else { row.head } {
                Some(line) => {
                    push_call(out, line, position, marked.trim_start(), SIDE_BYTES);
                    position += 1;
                }
                None => {
                    let _ = write!(out, "<div class=\"call gap{marked}\">no call here</div>");
                }
            }
        }
        let marked = if first == FirstDiff::Answer {
            " first-diff"
        } else {
            ""
        };
        let _ = write!(out, "<div class=\"answer{marked}\">");
        match answer {
            Some(answer) => escape::push_capped(out, answer, SIDE_BYTES),
            None => out.push_str("<em>no final answer</em>"),
        }
        out.push_str("</div></div>");
    }
}

/// The base column as the baseline's tally (no base trajectory), beside this run's calls.
fn push_tally_only(
    out: &mut String,
    before: Option<&BaselineScenario>,
    head_label: &str,
    head: Option<&RunTrace<'_>>,
) {
    out.push_str("<div class=\"base\"><div class=\"side-head\">base</div><div class=\"note\">");
    match before {
        Some(before) => {
            let _ = write!(
                out,
                "The baseline passed it in {} of {} judged runs ({} errored). The base trajectory is not available.",
                before.passed,
                before.judged(),
                before.errored
            );
        }
        None => out.push_str("Not in the baseline."),
    }
    out.push_str("</div></div><div class=\"head\"><div class=\"side-head\">");
    push(out, head_label);
    out.push_str("</div>");
    if let Some(head) = head {
        for (position, line) in head.calls.iter().enumerate() {
            push_call(out, line, position, "", SIDE_BYTES);
        }
        out.push_str("<div class=\"answer\">");
        match head.answer {
            Some(answer) => escape::push_capped(out, answer, SIDE_BYTES),
            None => out.push_str("<em>no final answer</em>"),
        }
        out.push_str("</div>");
    }
    out.push_str("</div>");
}
