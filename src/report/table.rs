//! The terminal summary: a per-tier table with baseline and delta, the failures with their
//! reasons, and the verdict.

use std::fmt::Write as _;

use comfy_table::{Cell, CellAlignment, Table, presets};

use crate::gate::{Decision, Verdict};
use crate::results::{RunReport, Tally};
use crate::score::Outcome;

fn percent(rate: Option<f64>) -> String {
    rate.map_or_else(|| "-".to_string(), |rate| format!("{:.1}%", rate * 100.0))
}

fn delta(now: Option<f64>, before: Option<f64>) -> String {
    match (now, before) {
        (Some(now), Some(before)) => format!("{:+.1}", (now - before) * 100.0),
        _ => "-".to_string(),
    }
}

fn row(table: &mut Table, label: String, tally: &Tally, baseline: Option<&Tally>) {
    let before = baseline.and_then(Tally::pass_rate);
    let cells = [
        label,
        tally.total.to_string(),
        tally.passed.to_string(),
        tally.failed.to_string(),
        tally.errored.to_string(),
        percent(tally.pass_rate()),
        percent(before),
        delta(tally.pass_rate(), before),
    ];
    table.add_row(cells.into_iter().enumerate().map(|(i, text)| {
        let cell = Cell::new(text);
        if i == 0 {
            cell
        } else {
            cell.set_alignment(CellAlignment::Right)
        }
    }));
}

/// Renders the summary for a terminal or a CI log (plain ASCII, no colour).
pub fn render(report: &RunReport, baseline: Option<&RunReport>, verdict: &Verdict) -> String {
    let mut table = Table::new();
    table.load_style(presets::ASCII_MARKDOWN);
    table.set_header([
        "tier",
        "scenarios",
        "passed",
        "failed",
        "errored",
        "pass rate",
        "baseline",
        "delta (pts)",
    ]);
    for (tier, tally) in &report.summary.tiers {
        let before = baseline.and_then(|b| b.summary.tiers.get(tier));
        row(&mut table, format!("tier {tier}"), tally, before);
    }
    row(
        &mut table,
        "all".to_string(),
        &report.summary.overall,
        baseline.map(|b| &b.summary.overall),
    );

    let mut out = String::new();
    let _ = writeln!(out, "{table}");
    let summary = &report.summary;
    if summary.repeat > 1 {
        let _ = writeln!(
            out,
            "\n{} runs per scenario: pass@1 {}, pass^{} {}",
            summary.repeat,
            percent(summary.pass_at_1),
            summary.repeat,
            percent(summary.pass_hat_k)
        );
        for (id, tally) in summary
            .per_scenario
            .iter()
            .filter(|(_, t)| t.passed < t.total)
        {
            let _ = writeln!(
                out,
                "  {id}: {}/{} passed ({} errored)",
                tally.passed, tally.total, tally.errored
            );
        }
    }
    let mut problems = report
        .scenarios
        .iter()
        .filter(|r| r.outcome != Outcome::Pass)
        .peekable();
    if problems.peek().is_some() {
        let _ = writeln!(out, "\nnot passing:");
    }
    for result in problems {
        let label = match result.outcome {
            Outcome::Errored => "ERRORED",
            _ => "FAILED",
        };
        let _ = writeln!(
            out,
            "  {label} {}{} (tier {}, {})",
            result.id,
            if report.summary.repeat > 1 {
                format!(" run {}", result.repeat + 1)
            } else {
                String::new()
            },
            result.tier,
            result.kind.as_str()
        );
        if let Some(error) = &result.error {
            let _ = writeln!(out, "    {error}");
        }
        for check in result.checks.iter().filter(|check| !check.passed) {
            let _ = writeln!(out, "    {}: {}", check.subject, check.detail);
        }
    }
    let word = match verdict.decision {
        Decision::Pass => "PASS",
        Decision::Fail => "FAIL",
        Decision::NoVerdict => "NO VERDICT",
    };
    let _ = writeln!(out, "\nverdict: {word}");
    for reason in &verdict.reasons {
        let _ = writeln!(out, "  - {reason}");
    }
    for note in &verdict.notes {
        let _ = writeln!(out, "  note: {note}");
    }
    out
}
