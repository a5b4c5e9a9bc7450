//! Text pieces shared by the renderers: numbers with intervals, and neutralising model text
//! before it is quoted in Markdown.

use crate::gate::metrics::Metrics;
use crate::gate::{Comparison, Rate};
use crate::results::RunReport;
use crate::score::metrics::{MetricsSummary, ProvenanceFinding};

/// Reads one metric of [`Metrics`].
pub(crate) type MetricPick = fn(&Metrics) -> Option<f64>;

/// The metrics compared with the baseline ([`Metrics`]), by the one name every report uses:
/// (name, value, whether it is a share in 0.0..=1.0 shown in percent and points; else a mean
/// shown with two decimals).
pub(crate) const BASELINE_METRICS: [(&str, MetricPick, bool); 4] = [
    ("selection checks", |m| m.selection, true),
    ("argument checks", |m| m.arguments, true),
    ("calls per run", |m| m.calls_per_run, false),
    ("error-recovery pass rate", |m| m.degraded, true),
];

/// How a usage metric's value is written.
type Shown = fn(f64) -> String;

/// What the model runs spent, by name, as (name, value, `before`'s value or `-`, change),
/// only the
/// metrics this run has (none for agents without a model): tokens and model calls per run,
/// model time per run in seconds, cost per run in US dollars. The change is relative
/// (`+12.5%`), or `-` without a baseline value.
pub(crate) fn usage_metrics(
    now: &Metrics,
    before: Option<&Metrics>,
) -> Vec<(&'static str, String, String, String)> {
    let rows: [(&str, MetricPick, Shown); 4] = [
        (
            "tokens per run",
            |m| m.tokens_per_run,
            |v| format!("{v:.0}"),
        ),
        (
            "model calls per run",
            |m| m.model_calls_per_run,
            |v| format!("{v:.2}"),
        ),
        (
            "model time per run",
            |m| m.model_ms_per_run,
            |v| format!("{:.1} s", v / 1000.0),
        ),
        ("cost per run", |m| m.cost_per_run, |v| format!("${v:.4}")),
    ];
    rows.iter()
        .filter_map(|(name, pick, show)| {
            let value = pick(now)?;
            let earlier = before.and_then(pick);
            let change = match earlier {
                Some(earlier) if earlier > 0.0 => {
                    format!("{:+.1}%", (value / earlier - 1.0) * 100.0)
                }
                _ => "-".to_owned(),
            };
            let earlier = earlier.map_or_else(|| "-".to_owned(), show);
            Some((*name, show(value), earlier, change))
        })
        .collect()
}

/// A share in 0.0..=1.0 as `97.5%`; `-` when absent.
pub(crate) fn percent(share: Option<f64>) -> String {
    share.map_or_else(|| "-".to_string(), |share| format!("{:.1}%", share * 100.0))
}

/// `value` as [`BASELINE_METRICS`] shows it: `97.5%` for a share, `1.75` for a mean, `-`
/// when absent.
pub(crate) fn metric_value(value: Option<f64>, is_share: bool) -> String {
    match value {
        Some(v) if !is_share => format!("{v:.2}"),
        share => percent(share),
    }
}

/// The baseline's mean metrics when they can be compared with `report`'s: a baseline keeps
/// whole-suite means only, so a run that leaves out some of its scenarios (`--only`, a shard)
/// gets `Err` with the line that says why no delta is shown.
pub(crate) fn comparable_metrics<'a>(
    report: &RunReport,
    baseline: &'a crate::gate::Baseline,
) -> Result<&'a Metrics, String> {
    let covered = baseline
        .scenarios
        .iter()
        .filter(|scenario| report.scenario(&scenario.id).is_some())
        .count();
    if covered == baseline.scenarios.len() {
        Ok(&baseline.metrics)
    } else {
        Err(format!(
            "metric deltas left out: this run covers {covered} of the baseline's {} scenarios, \
             and a baseline keeps whole-suite means only",
            baseline.scenarios.len()
        ))
    }
}

/// `now - before` as [`BASELINE_METRICS`] shows it: `+2.5 pts` for a share, `-0.25` for a
/// mean, `-` when either is absent.
pub(crate) fn metric_delta(now: Option<f64>, before: Option<f64>, is_share: bool) -> String {
    match (now, before) {
        (Some(now), Some(before)) if is_share => format!("{:+.1} pts", (now - before) * 100.0),
        (Some(now), Some(before)) => format!("{:+.2}", now - before),
        _ => "-".to_string(),
    }
}

/// The trajectory metrics of a run ([`MetricsSummary`]), by the one name every report uses,
/// with their values as text: tool selection (correct expected calls / expected calls),
/// call accuracy (accurate calls / calls made), schema-valid, chain efficiency, runs with
/// loops, invented ids, and the recovery classes when any failure happened.
pub(crate) fn trajectory_metrics(metrics: &MetricsSummary) -> Vec<(&'static str, String)> {
    let mut parts = vec![
        (
            "tool selection",
            metric_value(metrics.selection_accuracy, true),
        ),
        ("call accuracy", metric_value(metrics.call_accuracy, true)),
        (
            "schema-valid",
            metric_value(metrics.schema_valid_rate, true),
        ),
        (
            "chain efficiency",
            metric_value(metrics.chain_efficiency, false),
        ),
        ("runs with loops", metrics.runs_with_loops.to_string()),
        ("invented ids", metrics.invented_ids.to_string()),
    ];
    if !metrics.recovery.is_empty() {
        let recovery: Vec<String> = metrics
            .recovery
            .iter()
            .map(|(class, count)| {
                let name = serde_json::to_value(class)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                format!("{name} {count}")
            })
            .collect();
        parts.push(("recovery", recovery.join(", ")));
    }
    parts
}

/// How many id findings a report lists before it says how many more there are.
pub(crate) const ID_FINDINGS_SHOWN: usize = 20;

/// Every id-like argument value that no run had a source for, as (scenario id, finding), in
/// suite order: invented values (seen in neither the prompt nor an earlier result) and drift
/// (one edit from a value the run saw), from passing runs as well as failing ones. A finding
/// repeated by several runs of one scenario (`--repeat`) is listed once.
pub(crate) fn id_findings(report: &RunReport) -> Vec<(&str, &ProvenanceFinding)> {
    let mut found: Vec<(&str, &ProvenanceFinding)> = Vec::new();
    for result in &report.scenarios {
        for finding in result.metrics.iter().flat_map(|m| &m.provenance) {
            // The runs of one scenario are adjacent, so its findings so far end the list.
            let repeated = found
                .iter()
                .rev()
                .take_while(|(id, _)| *id == result.id)
                .any(|(_, seen)| *seen == finding);
            if !repeated {
                found.push((result.id.as_str(), finding));
            }
        }
    }
    found
}

/// `93.3% [78.7, 98.2]`: a rate in percent with its 95% Wilson interval.
pub(crate) fn rate(rate: &Rate) -> String {
    format!(
        "{:.1}% [{:.1}, {:.1}]",
        rate.rate * 100.0,
        rate.interval.low * 100.0,
        rate.interval.high * 100.0
    )
}

/// One line comparing the rates: current and baseline with intervals, the difference with
/// its interval, and the one-sided p-value.
pub(crate) fn comparison_line(comparison: &Comparison) -> String {
    format!(
        "pass rate {} ({}/{}) vs baseline {} ({}/{}): {:+.1} points, 95% CI [{:+.1}, {:+.1}], one-sided p = {}",
        rate(&comparison.current),
        comparison.current.passed,
        comparison.current.judged,
        rate(&comparison.baseline),
        comparison.baseline.passed,
        comparison.baseline.judged,
        comparison.delta_points,
        comparison.delta_interval_points.low,
        comparison.delta_interval_points.high,
        crate::gate::p_text(comparison.p_value),
    )
}

/// The most characters of model text quoted in one place.
pub(crate) const QUOTE_LIMIT: usize = 300;

/// Model (or provider) text made safe to quote inline in Markdown, also inside a table cell:
/// - `@name` cannot ping (a zero-width joiner follows the `@`);
/// - no raw HTML (`<`, `>`, `&` become entities);
/// - no table breakers or layout (`|` is escaped, line breaks become spaces);
/// - Markdown punctuation is backslash-escaped, so no links, images, emphasis or code;
/// - at most [`QUOTE_LIMIT`] characters, with `…` when cut.
pub(crate) fn neutralise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut previous_space = false;
    for (count, c) in text.chars().enumerate() {
        if count == QUOTE_LIMIT {
            out.push('…');
            break;
        }
        if c.is_whitespace() || c.is_control() {
            if !previous_space {
                out.push(' ');
            }
            previous_space = true;
            continue;
        }
        previous_space = false;
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '@' => out.push_str("@\u{200D}"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '#' | '!' | '|' | '~' | '$' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    //! Quoting model text: mentions, HTML and table breakers are neutralised, and long text is cut.

    use super::*;

    #[test]
    fn mentions_html_and_table_breakers_are_neutralised() {
        assert_eq!(
            neutralise("cc @octocat <img src=x onerror=alert(1)> | a\nb ![x](http://t/p.png)"),
            "cc @\u{200D}octocat &lt;img src=x onerror=alert\\(1\\)&gt; \\| a b \\!\\[x\\]\\(http://t/p.png\\)"
        );
    }

    #[test]
    fn long_text_is_cut() {
        let quoted = neutralise(&"a".repeat(QUOTE_LIMIT + 5));
        assert_eq!(quoted.chars().count(), QUOTE_LIMIT + 1);
        assert!(quoted.ends_with('…'));
    }
}
