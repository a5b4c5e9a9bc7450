//! The terminal summary: a per-tier table with baseline and delta, the metrics, confused tools,
//! ids without a source, the failures with their reasons, and the verdict.

use std::fmt::Write as _;

use comfy_table::{Cell, CellAlignment, Table, presets};

use crate::gate::{Baseline, Decision, Verdict};
use crate::report::sanitize::{MAX_TERMINAL_CHARS, terminal_line};
use crate::report::text::{self, percent};
use crate::results::{ConfusedPair, LintPointer, RunReport, ScenarioResult, Summary, Tally};
use crate::score::Outcome;
use crate::score::metrics::ProvenanceKind;

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

/// One line of trajectory metrics, one of the baseline-compared metrics, plus one line of
/// tool confusions when there are any; the names are those of report.md
/// ([`text::trajectory_metrics`], [`text::BASELINE_METRICS`]).
fn metrics_lines(report: &RunReport, baseline: Option<&Baseline>) -> String {
    let metrics = &report.metrics.overall;
    if metrics.runs == 0 {
        return String::new();
    }
    let parts: Vec<String> = text::trajectory_metrics(metrics)
        .into_iter()
        .map(|(name, value)| {
            if name == "recovery" {
                format!("{name}: {value}")
            } else {
                format!("{name} {value}")
            }
        })
        .collect();
    let now = crate::gate::metrics::Metrics::of(report);
    let (baseline, left_out) = match baseline.map(|b| text::comparable_metrics(report, b)) {
        Some(Ok(metrics)) => (Some(metrics), None),
        Some(Err(why)) => (None, Some(why)),
        None => (None, None),
    };
    let usage = text::usage_metrics(&now, baseline)
        .into_iter()
        .map(|(name, value, _, change)| match baseline {
            Some(_) => format!("{name} {value} ({change})"),
            None => format!("{name} {value}"),
        });
    let compared: Vec<String> = text::BASELINE_METRICS
        .iter()
        .map(|(name, pick, is_share)| {
            let value = text::metric_value(pick(&now), *is_share);
            match baseline {
                Some(baseline) => format!(
                    "{name} {value} ({})",
                    text::metric_delta(pick(&now), pick(baseline), *is_share)
                ),
                None => format!("{name} {value}"),
            }
        })
        .chain(usage)
        .collect();
    let mut text = format!(
        "metrics: {}\n{}: {}\n",
        parts.join(" | "),
        if baseline.is_some() {
            "vs baseline"
        } else {
            "checks"
        },
        compared.join(" | ")
    );
    if let Some(why) = left_out {
        text.push_str(&format!("{why}\n"));
    }
    let confused: Vec<String> = metrics
        .confusion
        .iter()
        .filter(|cell| cell.called.as_deref() != Some(cell.expected.as_str()))
        .map(|cell| {
            format!(
                "{} -> {} ({})",
                cell.expected,
                // A model chooses the called name: it may be any text.
                terminal_line(cell.called.as_deref().unwrap_or("nothing"), 80),
                cell.count
            )
        })
        .collect();
    if !confused.is_empty() {
        text.push_str(&format!("confused tools: {}\n", confused.join(", ")));
    }
    text
}

/// One line per confused pair: the `look_alike_tools` finding that flags it, with the
/// similarity and the words that would separate the two tools, or why the lint does not.
fn confused_pair_lines(pairs: &[ConfusedPair]) -> String {
    if pairs.is_empty() {
        return String::new();
    }
    // The called name comes from a model: it may be any text.
    let safe = |text: &str| terminal_line(text, 80).into_owned();
    let mut text = "confused tools and the look-alike lint:\n".to_string();
    for pair in pairs {
        let (expected, called) = (&pair.expected, safe(&pair.called));
        let _ = writeln!(
            text,
            "  {expected} -> {called} ({}): {}",
            pair.count,
            match &pair.lint {
                LintPointer::Flagged {
                    check,
                    tool,
                    similarity,
                    only_expected,
                    only_called,
                } => format!(
                    "lint `{check}` on `{tool}` (similarity {similarity:.3}); only `{expected}` says: {}; only `{called}` says: {}",
                    words(only_expected),
                    words(only_called)
                ),
                LintPointer::NotFlagged {
                    similarity,
                    threshold,
                } => format!(
                    "not flagged by the look-alike lint (similarity {}, threshold {threshold:.2}): not a naming problem",
                    crate::json::decimal_against(*similarity, *threshold, 3)
                ),
                LintPointer::NotInCatalog => {
                    format!("`{called}` is not in the catalog: an invented name, not a look-alike")
                }
            }
        );
    }
    text
}

/// One line per id-like argument value without a source ([`text::id_findings`]), at most
/// [`text::ID_FINDINGS_SHOWN`], then how many more.
fn id_finding_lines(report: &RunReport) -> String {
    let findings = text::id_findings(report);
    if findings.is_empty() {
        return String::new();
    }
    // The values come from a model: they may be any text.
    let safe = |text: &str| terminal_line(text, 80).into_owned();
    let mut out =
        "ids without a source (in neither the prompt nor an earlier tool result):\n".to_string();
    for (id, finding) in findings.iter().take(text::ID_FINDINGS_SHOWN) {
        let what = match finding.kind {
            ProvenanceKind::Invented => "invented".to_string(),
            ProvenanceKind::Drift => format!(
                "drift from \"{}\"",
                safe(finding.near.as_deref().unwrap_or_default())
            ),
        };
        let _ = writeln!(
            out,
            "  {id}: call {} `{}` {} = \"{}\" ({what})",
            finding.call + 1,
            safe(&finding.tool),
            safe(&finding.pointer),
            safe(&finding.value)
        );
    }
    if findings.len() > text::ID_FINDINGS_SHOWN {
        let _ = writeln!(
            out,
            "  ... and {} more in results.json",
            findings.len() - text::ID_FINDINGS_SHOWN
        );
    }
    out
}

/// Separating words as a list, `nothing` when there are none.
fn words(words: &[String]) -> String {
    if words.is_empty() {
        "nothing".to_string()
    } else {
        words.join(", ")
    }
}

/// Renders the summary for a terminal or a CI log (plain ASCII, no colour).
pub(crate) fn render(report: &RunReport, baseline: Option<&Baseline>, verdict: &Verdict) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", tier_table(report, baseline));
    if let Some(comparison) = &verdict.comparison {
        let _ = writeln!(out, "\n{}", text::comparison_line(comparison));
    }
    for change in &verdict.ruler_moved {
        let _ = writeln!(out, "ruler moved: {change}");
    }
    if !verdict.subject_changed.is_empty() {
        let _ = writeln!(
            out,
            "compared with a baseline of a different subject: {}",
            verdict.subject_changed.join("; ")
        );
    }
    let _ = write!(out, "{}", metrics_lines(report, baseline));
    let _ = write!(out, "{}", confused_pair_lines(&report.confused_pairs));
    let _ = write!(out, "{}", id_finding_lines(report));
    let scoring = report
        .run
        .as_ref()
        .map(|run| run.scoring)
        .unwrap_or_default();
    let modes: Vec<String> = scoring
        .modes()
        .iter()
        .map(|(rule, mode)| format!("{rule} {mode}"))
        .collect();
    let _ = writeln!(
        out,
        "scoring: {}; per-argument comparators as each scenario names them",
        modes.join("; ")
    );
    write_repeats(&report.summary, &mut out);
    write_not_passing(report, &mut out);
    write_passing_notes(report, &mut out);
    write_verdict(verdict, &mut out);
    out
}

/// The per-tier table: scenarios, passed, failed, errored, pass rate, and the baseline's pass
/// rate with the delta; one row per tier, then `all`.
fn tier_table(report: &RunReport, baseline: Option<&Baseline>) -> Table {
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
    let tiers = baseline.map(Baseline::tiers).unwrap_or_default();
    for (tier, tally) in &report.summary.tiers {
        row(&mut table, format!("tier {tier}"), tally, tiers.get(tier));
    }
    let overall = baseline.map(Baseline::overall);
    row(
        &mut table,
        "all".to_string(),
        &report.summary.overall,
        overall.as_ref(),
    );
    table
}

/// With repeated runs: pass@1 and pass^k, then each scenario that did not pass every run.
fn write_repeats(summary: &Summary, out: &mut String) {
    if summary.repeat <= 1 {
        return;
    }
    let full = summary
        .per_scenario
        .values()
        .filter(|tally| tally.total == summary.repeat as usize)
        .count();
    // An adaptive run settles scenarios with fewer runs: pass^k speaks of those with k.
    let over = if full < summary.per_scenario.len() {
        format!(" (over the {full} scenarios with {} runs)", summary.repeat)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "\n{} runs per scenario: pass@1 {}, pass^{} {}{over}",
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
        let inconclusive = if tally.inconclusive > 0 {
            format!(", {} of them inconclusive", tally.inconclusive)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "  {id}: {}/{} passed ({} errored{inconclusive})",
            tally.passed, tally.total, tally.errored
        );
    }
}

/// Each run that did not pass, under `not passing:`, with its reasons.
fn write_not_passing(report: &RunReport, out: &mut String) {
    let mut problems = report
        .scenarios
        .iter()
        .filter(|r| r.outcome != Outcome::Pass)
        .peekable();
    if problems.peek().is_some() {
        let _ = writeln!(out, "\nnot passing:");
    }
    for result in problems {
        write_not_passing_run(result, report.summary.repeat, out);
    }
}

/// One run that did not pass: its outcome and id, then its error, a call written as text,
/// the judge's flag, the first divergence, the failed checks (one the divergence already says
/// is left out), parser notes and output-schema violations.
fn write_not_passing_run(result: &ScenarioResult, repeat: u32, out: &mut String) {
    let label = match result.outcome {
        Outcome::Errored => "ERRORED",
        Outcome::Inconclusive => "INCONCLUSIVE",
        Outcome::Degraded => "DEGRADED",
        _ => "FAILED",
    };
    let _ = writeln!(
        out,
        "  {label} {}{} (tier {}, {})",
        result.id,
        if repeat > 1 {
            format!(" run {}", result.repeat + 1)
        } else {
            String::new()
        },
        result.tier,
        result.kind.as_str()
    );
    // Errors, judge reasons, divergences and check details quote what a provider or a
    // model wrote: shown escaped and cut, never obeyed by the terminal.
    let safe = |text: &str| terminal_line(text, MAX_TERMINAL_CHARS).into_owned();
    if let Some(error) = &result.error {
        let _ = writeln!(out, "    {}", safe(error));
    }
    if result.call_as_text {
        let _ = writeln!(
            out,
            "    note: the answer is a tool call written as text: the server's chat format \
             lost the call (a serving problem); try --tool-calling prompted"
        );
    }
    if let Some(judge) = result.judge.as_ref().filter(|judge| judge.flagged) {
        let _ = writeln!(
            out,
            "    judge ({}): {}",
            safe(&judge.model),
            safe(&judge.reason)
        );
    }
    let divergence = result
        .metrics
        .as_ref()
        .and_then(|m| m.first_divergence.as_ref());
    if let Some(divergence) = divergence {
        let _ = writeln!(out, "    first divergence: {}", safe(divergence));
    }
    for check in result.checks.iter().filter(|check| !check.passed) {
        let line = format!("{}: {}", check.subject, check.detail);
        // A divergence that is this very check (the run failing no call, or the call's
        // own check restated) is not said twice.
        let said = divergence.is_some_and(|divergence| {
            *divergence == line || divergence.ends_with(&format!(": {}", check.detail))
        });
        if said {
            continue;
        }
        let _ = writeln!(out, "    {}", safe(&line));
    }
    for noted in result.metrics.iter().flat_map(|m| &m.parser_notes) {
        let _ = writeln!(out, "    parser note: {}", safe(&noted.render()));
    }
    for violation in result.metrics.iter().flat_map(|m| &m.output_violations) {
        let _ = writeln!(out, "    output schema: {}", safe(violation));
    }
}

/// The verdict word, then its reasons and notes.
fn write_verdict(verdict: &Verdict, out: &mut String) {
    let word = match verdict.decision {
        Decision::Pass => "PASS",
        Decision::Fail => "FAIL",
        Decision::Inconclusive => "INCONCLUSIVE",
        Decision::NoVerdict => "NO VERDICT",
    };
    let _ = writeln!(out, "\nverdict: {word}");
    for reason in &verdict.reasons {
        let _ = writeln!(out, "  - {reason}");
    }
    for note in &verdict.notes {
        let _ = writeln!(out, "  note: {note}");
    }
}

/// Most lines of parser notes and output-schema violations shown for passing runs.
pub(crate) const PASSING_NOTES_SHOWN: usize = 20;

/// What passing runs still carry: parser notes (a repaired or ambiguous call) and results
/// that broke their tool's `outputSchema`. A passing verdict does not hide them.
fn write_passing_notes(report: &RunReport, out: &mut String) {
    let lines: Vec<String> = report
        .scenarios
        .iter()
        .filter(|result| result.outcome.is_pass())
        .flat_map(|result| {
            let metrics = result.metrics.iter();
            let notes = metrics
                .clone()
                .flat_map(|m| &m.parser_notes)
                .map(|noted| format!("parser note: {}", noted.render()));
            let schema = metrics
                .flat_map(|m| &m.output_violations)
                .map(|violation| format!("output schema: {violation}"));
            notes
                .chain(schema)
                .map(|line| format!("{}: {line}", result.id))
                .collect::<Vec<_>>()
        })
        .collect();
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nnoted in passing runs:");
    for line in lines.iter().take(PASSING_NOTES_SHOWN) {
        let _ = writeln!(out, "  {}", terminal_line(line, MAX_TERMINAL_CHARS));
    }
    if lines.len() > PASSING_NOTES_SHOWN {
        let _ = writeln!(
            out,
            "  ... and {} more in results.json",
            lines.len() - PASSING_NOTES_SHOWN
        );
    }
}

#[cfg(test)]
mod tests {
    //! The terminal summary: tiers, failures and verdict, each reason once, long lists capped.

    use super::*;
    use crate::gate::{Baseline, Policy, decide};
    use crate::results::ScenarioKind;
    use crate::results::{ScenarioResult, Summary};
    use crate::score::{Check, CheckKind};

    fn result(id: &str, tier: u8, outcome: Outcome, checks: Vec<Check>) -> ScenarioResult {
        ScenarioResult {
            state_diff: Vec::new(),
            lines: Default::default(),
            id: id.into(),
            tier,
            kind: ScenarioKind::MultiStep,
            outcome,
            error: (outcome == Outcome::Errored)
                .then(|| "provider returned HTTP 503: overloaded".into()),
            calls: 2,
            checks,
            final_answer: None,
            duration_ms: 12,
            metrics: None,
            repeat: 0,
            turns: None,
            hit_turn_limit: false,
            truncated: false,
            timed_out: false,
            call_as_text: false,
            usage: None,
            judge: None,
            category: None,
            judge_error: None,
            conversation: None,
        }
    }

    fn report(scenarios: Vec<ScenarioResult>) -> RunReport {
        RunReport {
            schema_version: 1,
            toolgate_version: "0.1.0".into(),
            agent: "openai".into(),
            model: Some("m".into()),
            run: None,
            pins: None,
            summary: Summary::of(&scenarios),
            scenarios,
            metrics: Default::default(),
            confused_pairs: Vec::new(),
        }
    }

    #[test]
    fn summary_shows_tiers_failures_and_verdict() {
        let failed = Check {
            kind: CheckKind::ArgsFromPrior,
            subject: "expected_calls[1]".into(),
            passed: false,
            detail: "`contact_id` is \"C-1\", but `$.calls[0].result.id` is \"C-013\": not taken from the earlier result".into(),
        };
        let baseline = report(vec![
            result("T1-001", 1, Outcome::Pass, vec![]),
            result("T2-007", 2, Outcome::Pass, vec![]),
            result("T2-008", 2, Outcome::Pass, vec![]),
            result("T5-001", 5, Outcome::Pass, vec![]),
        ]);
        let current = report(vec![
            result("T1-001", 1, Outcome::Pass, vec![]),
            result("T2-007", 2, Outcome::Fail, vec![failed]),
            result("T2-008", 2, Outcome::Errored, vec![]),
            result("T5-001", 5, Outcome::Pass, vec![]),
        ]);
        let baseline = Baseline::from_report(&baseline);
        let verdict = decide(&current, Some(&baseline), &Policy::default());
        insta::assert_snapshot!(render(&current, Some(&baseline), &verdict));
    }

    #[test]
    fn a_divergence_that_is_a_failing_check_is_said_once() {
        let check = Check {
            kind: CheckKind::AnswerContainsText,
            subject: "final_answer.contains_text[0]".into(),
            passed: false,
            detail: "`compiler` is not in the final answer".into(),
        };
        let mut failed = result("T1-002", 1, Outcome::Fail, vec![check]);
        failed.metrics = Some(crate::report::sample::run_metrics(Some(
            "final_answer.contains_text[0]: `compiler` is not in the final answer",
        )));
        let current = report(vec![failed]);
        let verdict = decide(&current, None, &Policy::default());
        let text = render(&current, None, &verdict);
        assert_eq!(
            text.matches("`compiler` is not in the final answer")
                .count(),
            1,
            "{text}"
        );
        assert!(text.contains("    first divergence: final_answer.contains_text[0]: `compiler` is not in the final answer\n"), "{text}");
    }

    #[test]
    fn a_failed_run_that_ended_on_a_call_written_as_text_says_so() {
        let mut failed = result("T1-001", 1, Outcome::Fail, vec![]);
        failed.call_as_text = true;
        let passed = result("T1-002", 1, Outcome::Pass, vec![]);
        let current = report(vec![failed, passed]);
        let verdict = decide(&current, None, &Policy::default());
        let text = render(&current, None, &verdict);
        assert!(
            text.contains(
                "  FAILED T1-001 (tier 1, multi_step)\n    note: the answer is a tool call written \
                 as text: the server's chat format lost the call (a serving problem); try \
                 --tool-calling prompted\n"
            ),
            "{text}"
        );
        // One run of two is no majority: the verdict does not blame the server.
        assert!(
            !text.contains("runs ended on a tool call written as text"),
            "{text}"
        );
    }

    #[test]
    fn a_run_of_part_of_the_baseline_shows_no_metric_deltas() {
        let mut passed = result("T1-001", 1, Outcome::Pass, vec![]);
        passed.metrics = Some(crate::report::sample::run_metrics(None));
        let mut other = result("T2-007", 2, Outcome::Pass, vec![]);
        other.metrics = passed.metrics.clone();
        let mut whole = report(vec![passed.clone(), other]);
        whole.metrics = crate::results::metrics_of(&whole.scenarios);
        let baseline = Baseline::from_report(&whole);
        let mut part = report(vec![passed]);
        part.metrics = crate::results::metrics_of(&part.scenarios);
        let text = metrics_lines(&part, Some(&baseline));
        assert!(!text.contains("vs baseline"), "{text}");
        assert!(
            text.contains(
                "metric deltas left out: this run covers 1 of the baseline's 2 scenarios, and a \
                 baseline keeps whole-suite means only\n"
            ),
            "{text}"
        );
        assert!(metrics_lines(&whole, Some(&baseline)).contains("vs baseline"));
    }

    #[test]
    fn confused_pairs_point_at_the_look_alike_lint() {
        let text = confused_pair_lines(&crate::report::sample::confused_pairs());
        insta::assert_snapshot!(text);
    }

    #[test]
    fn ids_without_a_source_are_listed_once_each_with_a_count_past_twenty() {
        let report = crate::report::sample::with_id_findings(1);
        assert_eq!(
            id_finding_lines(&report),
            "ids without a source (in neither the prompt nor an earlier tool result):\n  \
             T1-001: call 1 `crm_get_contact` /contact_id = \"C-9 | @admin <b>\" (invented)\n  \
             T1-001: call 2 `crm_get_contact` /contact_id = \"C-0014\" (drift from \"C-0013\")\n  \
             T3-001: call 1 `crm_get_contact` /contact_id = \"C-100\" (invented)\n"
        );
        let many = id_finding_lines(&crate::report::sample::with_id_findings(25));
        assert_eq!(many.lines().count(), 1 + 20 + 1, "{many}");
        assert!(
            many.ends_with("  ... and 7 more in results.json\n"),
            "{many}"
        );
        assert_eq!(id_finding_lines(&crate::report::sample::current()), "");
    }
}
