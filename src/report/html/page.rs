//! The document around the sections: head with the Content-Security-Policy, the inline style
//! and script, and the page's top: verdict, statistics and trend.

use std::fmt::Write as _;

use base64::Engine as _;
use sha2::Digest as _;

use super::Input;
use super::escape::{SHOWN_BYTES, escape, push, push_rich};
use crate::gate::{Decision, Rate};
use crate::report::text;
use crate::results::{LintPointer, Tally};

/// The inline style sheet, allowed by its hash.
pub(super) const STYLE: &str = include_str!("style.css");

/// The inline script (filters, search, opening the scenario a link points at), allowed by
/// its hash.
pub(super) const SCRIPT: &str = include_str!("app.js");

/// `'sha256-BASE64'`: a CSP hash source for exactly these bytes (CSP Level 3, "hash-source").
pub(super) fn hash_source(bytes: &str) -> String {
    let digest = sha2::Sha256::digest(bytes.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// The page's policy: nothing may load or run but the one style sheet and the one script,
/// named by their hashes; images only as `data:` URLs; no base URL, no form target.
pub(super) fn content_security_policy() -> String {
    format!(
        "default-src 'none'; style-src {}; script-src {}; img-src data:; base-uri 'none'; form-action 'none'",
        hash_source(STYLE),
        hash_source(SCRIPT)
    )
}

/// The `data-decision` value and the word shown for a decision.
pub(super) fn decision_words(decision: Decision) -> (&'static str, &'static str) {
    match decision {
        Decision::Pass => ("pass", "pass"),
        Decision::Fail => ("fail", "fail"),
        Decision::Inconclusive => ("inconclusive", "inconclusive"),
        Decision::NoVerdict => ("no-verdict", "no verdict"),
    }
}

/// The whole document.
pub(super) fn render(input: &Input<'_>) -> String {
    let (_, word) = decision_words(input.verdict.decision);
    let mut out = String::with_capacity(256 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n{}\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>toolgate: {word}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n",
        content_security_policy(),
        run_id_meta(input)
    );
    push_verdict(&mut out, input);
    push_statistics(&mut out, input);
    push_trend(&mut out, input);
    super::changes::push_section(&mut out, input);
    super::scenarios::push_section(&mut out, input);
    let _ = write!(
        out,
        "</main>\n<script>{SCRIPT}</script>\n</body>\n</html>\n"
    );
    out
}

/// `<meta name="toolgate-run-id" content="ID">` and a line break, so the page can be matched
/// with the other files of its output set; empty for a run without an id.
fn run_id_meta(input: &Input<'_>) -> String {
    input
        .report
        .run
        .as_ref()
        .and_then(|run| run.run_id.as_deref())
        .map_or_else(String::new, |id| {
            format!(
                "<meta name=\"toolgate-run-id\" content=\"{}\">\n",
                escape(id)
            )
        })
}

/// `<section id="verdict">`: the decision, its reasons, where the ruler or the subject moved,
/// the notes, and which run this is.
fn push_verdict(out: &mut String, input: &Input<'_>) {
    let verdict = input.verdict;
    let (attribute, word) = decision_words(verdict.decision);
    let _ = write!(
        out,
        "<section id=\"verdict\" data-decision=\"{attribute}\">\n<h1>toolgate: <span class=\"decision {attribute}\">{word}</span></h1>\n"
    );
    push_list(out, "reasons", &verdict.reasons);
    if !verdict.ruler_moved.is_empty() {
        out.push_str("<p class=\"warning\">The ruler moved since the baseline, so rates are not fully comparable; only scenarios in both runs with unchanged files are compared:</p>\n");
        push_list(out, "ruler", &verdict.ruler_moved);
    }
    if !verdict.subject_changed.is_empty() {
        out.push_str("<p>Compared with a baseline of a different subject:</p>\n");
        push_list(out, "subject", &verdict.subject_changed);
    }
    push_list(out, "notes", &verdict.notes);
    let report = input.report;
    out.push_str("<p class=\"meta\">agent <code>");
    push(out, &report.agent);
    out.push_str("</code>");
    if let Some(model) = &report.model {
        out.push_str(" · model <code>");
        push(out, model);
        out.push_str("</code>");
    }
    if let Some(id) = report.run.as_ref().and_then(|run| run.run_id.as_deref()) {
        out.push_str(" · run <code>");
        push(out, id);
        out.push_str("</code>");
    }
    let _ = write!(
        out,
        " · {} scenario runs, {} per scenario · toolgate {}</p>\n</section>\n",
        report.scenarios.len(),
        report.summary.repeat,
        escape(&report.toolgate_version)
    );
}

/// A `<ul class="CLASS">` of escaped lines; nothing when there are none.
fn push_list(out: &mut String, class: &str, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let _ = write!(out, "<ul class=\"{class}\">");
    for line in lines {
        out.push_str("<li>");
        push_rich(out, line, SHOWN_BYTES);
        out.push_str("</li>");
    }
    out.push_str("</ul>\n");
}

/// `<section id="statistics">`: the rate comparison (or this run's rate alone), the policy,
/// pass@1 and pass^k, the per-tier table, trajectory metrics and confused tools.
fn push_statistics(out: &mut String, input: &Input<'_>) {
    out.push_str("<section id=\"statistics\">\n<h2>Statistics</h2>\n");
    match &input.verdict.comparison {
        Some(comparison) => {
            let _ = write!(
                out,
                "<table class=\"rates\"><thead><tr><th></th><th>pass rate [95% CI]</th><th>passed / judged</th></tr></thead><tbody>\
                 <tr><th>this run</th><td>{}</td><td>{} / {}</td></tr>\
                 <tr><th>baseline</th><td>{}</td><td>{} / {}</td></tr>\
                 <tr><th>difference</th><td><strong>{:+.1} points</strong> [{:+.1}, {:+.1}]</td><td>one-sided p = {}</td></tr></tbody></table>\n\
                 <p>Over the {} scenarios both runs have; baseline of {} run(s).</p>\n",
                text::rate(&comparison.current),
                comparison.current.passed,
                comparison.current.judged,
                text::rate(&comparison.baseline),
                comparison.baseline.passed,
                comparison.baseline.judged,
                comparison.delta_points,
                comparison.delta_interval_points.low,
                comparison.delta_interval_points.high,
                crate::gate::p_text(comparison.p_value),
                comparison.scenarios,
                input.baseline.map_or(0, |b| b.runs),
            );
        }
        None => {
            let overall = input.report.summary.overall;
            match Rate::new(overall.passed, overall.passed + overall.failed) {
                Some(rate) => {
                    let _ = writeln!(
                        out,
                        "<p>Pass rate {} ({}/{}); no baseline comparison.</p>",
                        text::rate(&rate),
                        rate.passed,
                        rate.judged
                    );
                }
                None => out.push_str("<p>No run was judged; no pass rate.</p>\n"),
            }
        }
    }
    let summary = &input.report.summary;
    let _ = writeln!(
        out,
        "<p>Tolerance band {:.1} points, alpha {} · pass@1 {} · pass^{} {}{}</p>",
        input.policy.tolerance_points,
        input.policy.alpha,
        text::percent(summary.pass_at_1),
        summary.repeat,
        text::percent(summary.pass_hat_k),
        input
            .policy
            .min_pass_rate
            .map_or_else(String::new, |floor| format!(
                " · pass-rate floor {floor:.1}%"
            )),
    );
    push_tiers(out, input);
    let overall = &input.report.metrics.overall;
    if overall.runs > 0 {
        let parts: Vec<String> = text::trajectory_metrics(overall)
            .into_iter()
            .map(|(name, value)| format!("{name} <strong>{}</strong>", escape(&value)))
            .collect();
        let _ = writeln!(out, "<p>Trajectories: {}</p>", parts.join(" · "));
    }
    let now = crate::gate::metrics::Metrics::of(input.report);
    let before = input
        .baseline
        .and_then(|baseline| text::comparable_metrics(input.report, baseline).ok());
    let usage: Vec<String> = text::usage_metrics(&now, before)
        .into_iter()
        .map(|(name, value, earlier, change)| {
            let versus = if earlier == "-" {
                String::new()
            } else {
                format!(" (baseline {}, {})", escape(&earlier), escape(&change))
            };
            format!("{name} <strong>{}</strong>{versus}", escape(&value))
        })
        .collect();
    if !usage.is_empty() {
        let _ = writeln!(out, "<p>Usage: {}</p>", usage.join(" · "));
    }
    push_confused(out, input);
    out.push_str("</section>\n");
}

/// The per-tier table: counts, rate with interval, the baseline's rate and the difference.
fn push_tiers(out: &mut String, input: &Input<'_>) {
    out.push_str("<table class=\"tiers\"><thead><tr><th>tier</th><th>runs</th><th>passed</th><th>failed</th><th>errored</th><th>pass rate [95% CI]</th><th>baseline</th><th>Δ points</th></tr></thead><tbody>\n");
    let before = input
        .baseline
        .map(crate::gate::Baseline::tiers)
        .unwrap_or_default();
    let overall_before = input.baseline.map(crate::gate::Baseline::overall);
    let rows = input
        .report
        .summary
        .tiers
        .iter()
        .map(|(tier, tally)| (tier.to_string(), tally, before.get(tier)))
        .chain([(
            "all".to_string(),
            &input.report.summary.overall,
            overall_before.as_ref(),
        )]);
    for (label, tally, baseline) in rows {
        let now = Rate::new(tally.passed, tally.passed + tally.failed);
        let base = baseline.and_then(Tally::pass_rate);
        let delta = match (tally.pass_rate(), base) {
            (Some(now), Some(base)) => format!("{:+.1}", (now - base) * 100.0),
            _ => "-".to_string(),
        };
        let _ = writeln!(
            out,
            "<tr><th>{label}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{delta}</td></tr>",
            tally.total,
            tally.passed,
            tally.failed,
            tally.errored,
            now.as_ref().map_or_else(|| "-".to_string(), text::rate),
            text::percent(base),
        );
    }
    out.push_str("</tbody></table>\n");
}

/// The tools the agent confused, with what the look-alike lint says of each pair.
fn push_confused(out: &mut String, input: &Input<'_>) {
    let pairs = &input.report.confused_pairs;
    if pairs.is_empty() {
        return;
    }
    out.push_str("<h3>Confused tools</h3>\n<table class=\"confused\"><thead><tr><th>expected</th><th>called</th><th>times</th><th>toolgate lint</th></tr></thead><tbody>\n");
    for pair in pairs {
        let lint = match &pair.lint {
            LintPointer::Flagged {
                check, similarity, ..
            } => format!("flagged by {check}, similarity {similarity:.3}"),
            LintPointer::NotFlagged {
                similarity,
                threshold,
            } => format!(
                "not flagged (similarity {}, threshold {threshold:.2}): not a naming problem",
                crate::json::decimal_against(*similarity, *threshold, 3)
            ),
            LintPointer::NotInCatalog => "not in the catalog: an invented name".to_string(),
        };
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
            escape(&pair.expected),
            escape(&pair.called),
            pair.count,
            escape(&lint)
        );
    }
    out.push_str("</tbody></table>\n");
}

/// `<section id="trend">`: the baseline's pass-rate history and this run as an inline SVG
/// line (0..=100 %), with each point's date in its tooltip; nothing with fewer than two
/// points.
fn push_trend(out: &mut String, input: &Input<'_>) {
    let Some(baseline) = input.baseline else {
        return;
    };
    let mut points: Vec<(String, f64)> = baseline
        .trend
        .iter()
        .filter(|point| point.judged > 0)
        .map(|point| {
            (
                point.recorded_at.clone(),
                point.passed as f64 / point.judged as f64,
            )
        })
        .collect();
    if let Some(rate) = input.report.summary.overall.pass_rate() {
        points.push(("this run".to_string(), rate));
    }
    if points.len() < 2 {
        return;
    }
    let (width, height, pad) = (640.0, 160.0, 12.0);
    let step = (width - 2.0 * pad) / (points.len() - 1) as f64;
    let at = |i: usize, rate: f64| {
        (
            pad + step * i as f64,
            pad + (1.0 - rate) * (height - 2.0 * pad),
        )
    };
    let line: Vec<String> = points
        .iter()
        .enumerate()
        .map(|(i, (_, rate))| {
            let (x, y) = at(i, *rate);
            format!("{x:.1},{y:.1}")
        })
        .collect();
    let _ = write!(
        out,
        "<section id=\"trend\">\n<h2>Pass-rate trend</h2>\n<svg class=\"trend\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"overall pass rate over the last {} runs and this run\">\
         <line class=\"axis\" x1=\"{pad}\" y1=\"{pad}\" x2=\"{}\" y2=\"{pad}\"></line><line class=\"axis\" x1=\"{pad}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"></line>\
         <polyline points=\"{}\"></polyline>",
        points.len() - 1,
        width - pad,
        height - pad,
        width - pad,
        height - pad,
        line.join(" ")
    );
    for (i, (label, rate)) in points.iter().enumerate() {
        let (x, y) = at(i, *rate);
        let _ = write!(
            out,
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3\"><title>{}: {:.1}%</title></circle>",
            escape(label),
            rate * 100.0
        );
    }
    let _ = writeln!(
        out,
        "</svg>\n<p class=\"meta\">Top line 100%, bottom line 0%; branch <code>{}</code>.</p>\n</section>",
        escape(baseline.branch.as_deref().unwrap_or("history"))
    );
}
