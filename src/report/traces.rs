//! `toolgate score` reports: the production checks over imported trajectories, as a terminal
//! table and as Markdown with links back to the traces.

use std::fmt::Write as _;

use comfy_table::{Cell, CellAlignment, Table, presets};

use crate::report::markdown::{code, rich};
use crate::report::sanitize::{MAX_TERMINAL_CHARS, terminal_line};
use crate::report::text::percent;
use crate::score::production::{TraceCheckKind, TraceSummary};

/// What the check means, for the reports.
pub(crate) fn meaning(kind: TraceCheckKind) -> &'static str {
    match kind {
        TraceCheckKind::KnownTools => "every tool is in the catalog",
        TraceCheckKind::ArgumentsValid => "arguments valid against the input schema",
        TraceCheckKind::NoLoops => "no identical call repeated",
        TraceCheckKind::NoInventedIds => "no id seen nowhere before",
        TraceCheckKind::NoFalseSuccess => "no success claimed after an unrecovered failure",
        TraceCheckKind::NoRetryStorm => "no call failing 3+ times in a row",
    }
}

/// Per check in [`TraceCheckKind::ALL`] order: name, passed, failed, inconclusive, failure
/// rate.
pub(crate) fn rows(summary: &TraceSummary) -> Vec<[String; 5]> {
    TraceCheckKind::ALL
        .iter()
        .map(|kind| {
            let tally = summary
                .checks
                .get(kind.as_str())
                .cloned()
                .unwrap_or_default();
            [
                kind.as_str().to_owned(),
                tally.passed.to_string(),
                tally.failed.to_string(),
                tally.inconclusive.to_string(),
                percent(tally.failure_rate()),
            ]
        })
        .collect()
}

/// The totals line: trajectories, calls, failed, calls and tool time per trajectory.
pub(crate) fn header(summary: &TraceSummary) -> String {
    let plural = |count: u64, one: &str, many: &str| {
        format!("{count} {}", if count == 1 { one } else { many })
    };
    let mut text = format!(
        "{}, {}; {} with a failed check",
        plural(summary.trajectories, "trajectory", "trajectories"),
        plural(summary.calls, "tool call", "tool calls"),
        summary.failed
    );
    let _ = write!(
        text,
        "; calls per trajectory p50 {} p95 {}",
        summary.calls_per_trajectory.p50, summary.calls_per_trajectory.p95
    );
    if let Some(time) = summary.tool_time_us {
        let _ = write!(
            text,
            "; tool time per trajectory p50 {:.1} ms p95 {:.1} ms",
            time.p50 as f64 / 1e3,
            time.p95 as f64 / 1e3
        );
    }
    text
}

/// The terminal report: a line of totals, a table of the checks (passed, failed,
/// inconclusive, failure rate among the conclusive), and the first failing trace per check.
pub(crate) fn text(summary: &TraceSummary) -> String {
    let mut table = Table::new();
    table.load_style(presets::ASCII_MARKDOWN);
    table.set_header(["check", "passed", "failed", "inconclusive", "failure rate"]);
    for row in rows(summary) {
        table.add_row(row.into_iter().enumerate().map(|(i, text)| {
            let cell = Cell::new(text);
            if i == 0 {
                cell
            } else {
                cell.set_alignment(CellAlignment::Right)
            }
        }));
    }
    let mut out = format!("{}\n{table}\n", header(summary));
    for kind in TraceCheckKind::ALL {
        if let Some((trace, detail)) = summary
            .checks
            .get(kind.as_str())
            .and_then(|tally| tally.examples.first())
        {
            let _ = writeln!(
                out,
                "  {}: {}: {}",
                kind.as_str(),
                terminal_line(trace, MAX_TERMINAL_CHARS),
                terminal_line(detail, MAX_TERMINAL_CHARS)
            );
        }
    }
    // Production traces often carry arguments without results, so `score` never groups
    // repeats by what they returned, whatever `scoring.loops` says for `gate`.
    out.push_str(
        "no_loops is judged on arguments alone: the same call repeated counts whatever it returned (one repeat of a failed call is allowed)\n",
    );
    out
}

/// `trace_url` with `{trace_id}` replaced by the id's URL-safe characters (`A-Z a-z 0-9 - _
/// . :`; others dropped).
pub(crate) fn trace_link(trace: &str, url: &str) -> String {
    let id: String = trace
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || "-_.:".contains(*c))
        .collect();
    url.replace("{trace_id}", &id)
}

/// A trace id as Markdown: a link when `trace_url` (with `{trace_id}`) is given.
fn trace_ref(trace: &str, trace_url: Option<&str>) -> String {
    let shown = code(trace);
    match trace_url {
        Some(url) => format!("[{shown}]({})", trace_link(trace, url)),
        None => shown,
    }
}

/// The Markdown report: totals, the checks table with what each means, and per check the
/// failing traces kept as examples (linked through `trace_url`).
pub(crate) fn markdown(summary: &TraceSummary, trace_url: Option<&str>) -> String {
    let mut out = format!("## Production traces\n\n{}.\n\n", header(summary));
    out.push_str("| check | what it holds | passed | failed | inconclusive | failure rate |\n");
    out.push_str("|---|---|---:|---:|---:|---:|\n");
    for (kind, row) in TraceCheckKind::ALL.iter().zip(rows(summary)) {
        let [name, passed, failed, inconclusive, rate] = row;
        let _ = writeln!(
            out,
            "| `{name}` | {} | {passed} | {failed} | {inconclusive} | {rate} |",
            meaning(*kind)
        );
    }
    out.push_str(
        "\nA check is inconclusive when the trace lacks its data (no catalog, results, outcomes or final answer); it never counts as passed.\n",
    );
    for kind in TraceCheckKind::ALL {
        let Some(tally) = summary.checks.get(kind.as_str()) else {
            continue;
        };
        if tally.examples.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n### `{}`: {} failed\n", kind.as_str(), tally.failed);
        for (trace, detail) in &tally.examples {
            let _ = writeln!(out, "- {}: {}", trace_ref(trace, trace_url), rich(detail));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    //! Snapshots of the production-traces reports, built from scored trajectories.

    use serde_json::json;

    use super::*;
    use crate::score::production::{TraceView, score_trace};
    use crate::trace::{CallOutcome, CallRecord};

    /// Two trajectories: a clean one, and one that repeats a failing call and then claims
    /// success.
    fn summary() -> TraceSummary {
        let mut clean = CallRecord::recorded(0, "search", json!({"query": "Ada"}));
        clean.result = Some(json!({"contacts": [{"id": "C-1"}]}));
        clean.duration_us = 1_500;
        let failing: Vec<CallRecord> = (0..3)
            .map(|index| {
                let mut call = CallRecord::recorded(index, "update", json!({"id": "C-1"}));
                call.outcome = CallOutcome::ToolError;
                call.error = Some("server error".to_owned());
                call.duration_us = 2_000;
                call
            })
            .collect();
        let mut summary = TraceSummary::default();
        for (id, calls, answer) in [
            ("trace-ok", std::slice::from_ref(&clean), "Ada is C-1."),
            (
                "trace-bad",
                failing.as_slice(),
                "Done, the contact is updated.",
            ),
        ] {
            summary.add(&score_trace(&TraceView {
                trace_id: id,
                prompt: Some("Update Ada."),
                calls,
                final_answer: Some(answer),
                has_results: true,
                has_outcomes: true,
                has_durations: true,
                has_catalog: false,
            }));
        }
        summary.finish();
        summary
    }

    #[test]
    fn the_terminal_report() {
        insta::assert_snapshot!(text(&summary()));
    }

    #[test]
    fn the_markdown_report_links_each_example_to_its_trace() {
        insta::assert_snapshot!(markdown(
            &summary(),
            Some("https://traces.example/{trace_id}")
        ));
    }
}
