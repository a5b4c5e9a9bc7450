//! The Markdown report for pull-request comments and the step summary: verdict first, then
//! rates with intervals, Tier 5 failures, tiers, flipped scenarios, metrics, quarantine,
//! notes, and folded details (trend, pinned metadata, every failure, ids without a source).
//!
//! It fits a size limit (GitHub comments take 65,536 characters): sections are dropped least
//! important first, and the report says which were left out.

use std::fmt::Write as _;

use crate::gate::metrics::Metrics;
use crate::gate::{Baseline, Decision, Verdict};
use crate::report::text::{self, neutralise, percent};
use crate::results::pins::Pins;
use crate::results::{LintPointer, RunReport, ScenarioResult, Tally};
use crate::score::Outcome;
use crate::score::metrics::ProvenanceKind;

/// GitHub's limit on a comment body, in characters.
pub(crate) const GITHUB_COMMENT_LIMIT: usize = 65_536;

/// What the Markdown report shows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Input<'a> {
    /// This run.
    pub report: &'a RunReport,
    /// The baseline it was compared with.
    pub baseline: Option<&'a Baseline>,
    /// The verdict.
    pub verdict: &'a Verdict,
    /// The report's largest size in bytes (bytes >= characters, so this bounds both).
    pub limit: usize,
    /// Where scenario files and the run are on the web; `None` off a CI runner (plain ids).
    pub links: Option<&'a Links>,
    /// Where `report.html` is published (`--report-url`); `None` names the file in the
    /// results folder instead.
    pub report_url: Option<&'a str>,
}

/// Web addresses for the report's links, e.g. from GitHub Actions' variables.
#[derive(Debug, Clone, PartialEq)]
pub struct Links {
    /// Prefix of a file's address at the tested commit, ending in `/`:
    /// `https://github.com/OWNER/REPO/blob/SHA/`.
    pub files: String,
    /// The suite root relative to the repository root (`.`, `evals`).
    pub root: std::path::PathBuf,
    /// The run's page: `https://github.com/OWNER/REPO/actions/runs/ID`.
    pub run: Option<String>,
}

/// A scenario id for a table or heading: a link to its file at the tested commit when the
/// report has links and the results pin the file, else the id as text.
fn scenario_ref(input: &Input<'_>, id: &str) -> String {
    let text = neutralise(id);
    let path = input
        .report
        .pins
        .as_ref()
        .and_then(|pins| pins.scenarios.get(id))
        .map(|pin| pin.path.as_str());
    match (input.links, path) {
        (Some(links), Some(path)) => {
            let file = crate::report::github::repository_path(&links.root, path);
            // Spaces and parentheses would end a Markdown link target.
            let target = file
                .replace(' ', "%20")
                .replace('(', "%28")
                .replace(')', "%29");
            format!("[{text}]({}{target})", links.files)
        }
        _ => text,
    }
}

/// A section and how important it is: higher stays longer.
struct Section {
    title: &'static str,
    importance: u8,
    text: String,
}

/// Renders the report within `input.limit` bytes.
pub(crate) fn render(input: &Input<'_>) -> String {
    let head = head(input);
    let sections: Vec<Section> = [
        tier_5(input).map(|text| ("Tier 5 failures", 90, text)),
        what_to_fix(input).map(|text| ("what to fix", 88, text)),
        quarantine(input).map(|text| ("quarantine", 85, text)),
        Some(("per tier", 80, tiers(input))),
        flipped(input).map(|text| ("flipped scenarios", 70, text)),
        notes(input).map(|text| ("notes", 65, text)),
        metrics(input).map(|text| ("metrics", 60, text)),
        confused_pairs(input).map(|text| ("confused tools", 55, text)),
        id_findings(input).map(|text| ("ids without a source", 50, text)),
        Some(("scoring modes", 45, scoring_modes(input))),
        Some(("pinned metadata", 40, pins(input))),
        trend(input).map(|text| ("trend", 30, text)),
        failures(input).map(|text| ("failure details", 20, text)),
    ]
    .into_iter()
    .flatten()
    .map(|(title, importance, text)| Section {
        title,
        importance,
        text,
    })
    .collect();

    let footer_room = 300;
    let mut budget = input.limit.saturating_sub(head.len() + footer_room);
    let mut order: Vec<usize> = (0..sections.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sections[i].importance));
    let mut kept: Vec<Option<String>> = vec![None; sections.len()];
    let mut omitted: Vec<&'static str> = Vec::new();
    // Whole sections first, most important first; then shorten what did not fit.
    let mut too_big = Vec::new();
    for i in order {
        if sections[i].text.len() <= budget {
            budget -= sections[i].text.len();
            kept[i] = Some(sections[i].text.clone());
        } else {
            too_big.push(i);
        }
    }
    for i in too_big {
        if let Some(text) = shortened(&sections[i].text, budget) {
            budget -= text.len();
            kept[i] = Some(text);
        }
        omitted.push(sections[i].title);
    }
    let mut out = head;
    for text in kept.into_iter().flatten() {
        out.push_str(&fold(&text));
    }
    if !omitted.is_empty() {
        let _ = writeln!(
            out,
            "\n_Shortened or left out to fit the size limit: {}. The full results are in the job's artifacts._",
            omitted.join(", ")
        );
    }
    if out.len() > input.limit {
        let mut cut = input.limit.saturating_sub(footer_room);
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push_str("\n\n_Cut to fit the size limit._\n");
    }
    // Within the room kept for the footer: the link and the run id are never cut.
    footer(input, &mut out);
    if let Some(id) = input
        .report
        .run
        .as_ref()
        .and_then(|run| run.run_id.as_deref())
    {
        let _ = writeln!(out, "\n<!-- toolgate run {id} -->");
    }
    out
}

/// The closing line: the run's page, when known, where the full artifacts are.
fn footer(input: &Input<'_>, out: &mut String) {
    if let Some(run) = input.links.and_then(|links| links.run.as_deref()) {
        let _ = writeln!(out, "\n[The run, with its logs and artifacts]({run})");
    }
}

/// The sections that stay open: what blocks and what to do about it.
const OPEN_SECTIONS: [&str; 2] = ["Tier 5 failures", "What to fix"];

/// A section as the reader first sees it: [`OPEN_SECTIONS`] stay open above the fold, with
/// the verdict, its reasons and the comparison table; every other `#### Title` section is a
/// closed `<details>` with that title (sections already folded are left as they are).
fn fold(text: &str) -> String {
    let Some(rest) = text.strip_prefix("#### ") else {
        return text.to_string();
    };
    let (title, body) = rest.split_once('\n').unwrap_or((rest, ""));
    if OPEN_SECTIONS.contains(&title) {
        return text.to_string();
    }
    format!(
        "<details><summary>{title}</summary>\n\n{}\n\n</details>\n\n",
        body.trim()
    )
}

/// The first lines of a table section that fit in `budget` bytes, with a line saying how many
/// rows were left out; `None` for folded sections (cutting would break their HTML) or when
/// not even the table head fits.
fn shortened(text: &str, budget: usize) -> Option<String> {
    if text.starts_with("<details>") {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    let note_room = 60;
    let mut out = String::new();
    let mut kept = 0;
    for line in &lines {
        if out.len() + line.len() + 1 + note_room > budget {
            break;
        }
        out.push_str(line);
        out.push('\n');
        kept += 1;
    }
    // Title, blank line, header and separator, and at least one row.
    if kept < 5 {
        return None;
    }
    let _ = writeln!(out, "\n_…and {} more rows._\n", lines.len() - kept);
    Some(out)
}

fn head(input: &Input<'_>) -> String {
    let verdict = input.verdict;
    let mut out = String::new();
    let title = match verdict.decision {
        Decision::Pass => "✅ toolgate: **pass**",
        Decision::Fail => "❌ toolgate: **fail**",
        Decision::Inconclusive => "⚠️ toolgate: **inconclusive**",
        Decision::NoVerdict => "⛔ toolgate: **no verdict**",
    };
    let _ = writeln!(out, "### {title}\n");
    for reason in &verdict.reasons {
        let _ = writeln!(out, "- {reason}");
    }
    if !verdict.reasons.is_empty() {
        out.push('\n');
    }
    if !verdict.ruler_moved.is_empty() {
        let _ = writeln!(
            out,
            "> [!WARNING]\n> **The ruler moved** since the baseline, so rates are not fully comparable; only scenarios in both runs with unchanged files are compared:"
        );
        for change in &verdict.ruler_moved {
            let _ = writeln!(out, "> - {change}");
        }
        out.push('\n');
    }
    if !verdict.subject_changed.is_empty() {
        let _ = writeln!(
            out,
            "Compared with a baseline of a different subject: {}.\n",
            verdict.subject_changed.join("; ")
        );
    }
    match &verdict.comparison {
        Some(comparison) => {
            let _ = writeln!(
                out,
                "| | pass rate [95% CI] | passed / judged |\n|---|---|---|\n| this run | {} | {} / {} |\n| baseline | {} | {} / {} |\n| difference | **{:+.1} points** [{:+.1}, {:+.1}] | one-sided p = {} |\n",
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
            );
            let baseline_runs = input.baseline.map_or(0, |b| b.runs);
            let _ = writeln!(
                out,
                "Over the {} scenarios both runs have; baseline of {baseline_runs} run(s).\n",
                comparison.scenarios
            );
        }
        None => {
            let overall = input.report.summary.overall;
            if let Some(rate) =
                crate::gate::Rate::new(overall.passed, overall.passed + overall.failed)
            {
                let _ = writeln!(
                    out,
                    "Pass rate {} ({}/{}); no baseline comparison.\n",
                    text::rate(&rate),
                    rate.passed,
                    rate.judged
                );
            }
        }
    }
    out
}

fn first_failure(result: &ScenarioResult) -> String {
    if let Some(error) = &result.error {
        return format!("errored: {}", neutralise(error));
    }
    result.checks.iter().find(|c| !c.passed).map_or_else(
        || "-".to_string(),
        |c| format!("{}: {}", code(&c.subject), rich(&c.detail)),
    )
}

/// One of toolgate's own messages, whose `` `names` `` are code spans: each span is rendered
/// as code and the text between them is neutralised, so a quoted value (which may come from
/// the model) can neither format nor ping. With an odd number of backticks the whole text is
/// neutralised as before.
pub(crate) fn rich(text: &str) -> String {
    if text.matches('`').count() % 2 == 1 {
        return neutralise(text);
    }
    text.split('`')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                code(part)
            } else {
                // neutralise trims; the spaces around a code span are kept.
                let before = if part.starts_with(char::is_whitespace) {
                    " "
                } else {
                    ""
                };
                let after = if part.ends_with(char::is_whitespace) && !part.trim().is_empty() {
                    " "
                } else {
                    ""
                };
                format!("{before}{}{after}", neutralise(part.trim()))
            }
        })
        .collect()
}

/// Where a failed run first left the expected path, as the metrics found it; a run without
/// metrics (an errored run, an old results file) falls back to [`first_failure`].
fn first_divergence(result: &ScenarioResult) -> String {
    match result
        .metrics
        .as_ref()
        .and_then(|m| m.first_divergence.as_deref())
    {
        Some(divergence) if result.error.is_none() => rich(divergence),
        _ => first_failure(result),
    }
}

/// A check subject (which may quote an assertion) as inline code that cannot end early,
/// break a table or span lines.
pub(crate) fn code(subject: &str) -> String {
    let inner: String = neutralise_code(subject);
    format!("`{inner}`")
}

fn neutralise_code(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '`' => "'".to_string(),
            '|' => "\\|".to_string(),
            c if c.is_control() => " ".to_string(),
            c => c.to_string(),
        })
        .collect()
}

fn tier_5(input: &Input<'_>) -> Option<String> {
    let failing: Vec<&ScenarioResult> = input
        .report
        .scenarios
        .iter()
        .filter(|r| r.tier == 5 && r.outcome == Outcome::Fail)
        .collect();
    if failing.is_empty() {
        return None;
    }
    let mut out =
        "#### Tier 5 failures\n\n| scenario | status | first failing check |\n|---|---|---|\n"
            .to_string();
    for result in failing {
        let quarantined = input
            .verdict
            .quarantine
            .iter()
            .find(|q| q.entry.scenario == result.id);
        let status = match quarantined {
            Some(q) if q.active => format!("quarantined through {}", q.entry.expires),
            Some(q) => format!("blocks (quarantine expired after {})", q.entry.expires),
            None => "blocks".to_string(),
        };
        let _ = writeln!(
            out,
            "| {} | {status} | {} |",
            scenario_ref(input, &result.id),
            first_failure(result)
        );
    }
    out.push('\n');
    Some(out)
}

/// Failing scenarios the "What to fix" list names before it says how many more there are.
const WHAT_TO_FIX_SHOWN: usize = 10;

/// One line per failing scenario (Tier 5 first, then in suite order), enough to act on
/// without opening anything: where its first failing run left the expected path, what the
/// look-alike lint says about a pair of tools it confused there, and where the run is in the
/// HTML report. At most [`WHAT_TO_FIX_SHOWN`] lines; `None` when nothing failed.
fn what_to_fix(input: &Input<'_>) -> Option<String> {
    let mut failing: Vec<&ScenarioResult> = Vec::new();
    for result in &input.report.scenarios {
        if result.outcome == Outcome::Fail && !failing.iter().any(|f| f.id == result.id) {
            failing.push(result);
        }
    }
    if failing.is_empty() {
        return None;
    }
    failing.sort_by_key(|result| std::cmp::Reverse(result.tier));
    let mut out = "#### What to fix

"
    .to_string();
    for result in failing.iter().take(WHAT_TO_FIX_SHOWN) {
        let runs = input.report.summary.per_scenario.get(&result.id);
        let run = match runs {
            Some(tally) if tally.total > 1 => {
                format!(", run {} of {}", result.repeat + 1, tally.total)
            }
            _ => String::new(),
        };
        let lint = confusion_lint(input, result)
            .map(|text| format!(" · {text}"))
            .unwrap_or_default();
        let place = crate::report::location(input.report_url, &result.id, Some(result.repeat));
        let place = match input.report_url {
            Some(_) => format!("[report]({place})"),
            None => code(&place),
        };
        let _ = writeln!(
            out,
            "- {} (tier {}{run}): {}{lint} · {place}",
            scenario_ref(input, &result.id),
            result.tier,
            first_divergence(result),
        );
    }
    if failing.len() > WHAT_TO_FIX_SHOWN {
        let _ = writeln!(
            out,
            "- _... and {} more failing scenarios in the HTML report._",
            failing.len() - WHAT_TO_FIX_SHOWN
        );
    }
    out.push('\n');
    Some(out)
}

/// What the look-alike lint says about the first pair of tools `result` confused, when it
/// says something to act on: the two descriptions are too alike, or the called tool does not
/// exist.
fn confusion_lint(input: &Input<'_>, result: &ScenarioResult) -> Option<String> {
    let confusions = &result.metrics.as_ref()?.selection.confusions;
    confusions.iter().find_map(|confusion| {
        let called = confusion.called.as_deref()?;
        let pair = input
            .report
            .confused_pairs
            .iter()
            .find(|pair| pair.expected == confusion.expected && pair.called == called)?;
        let (expected, called) = (neutralise(&pair.expected), neutralise(called));
        match &pair.lint {
            LintPointer::Flagged {
                check,
                similarity,
                only_expected,
                ..
            } => Some(format!(
                "lint {} finds {expected} and {called} look alike (similarity {similarity:.2}); say in {expected}'s description what only it does ({})",
                code(check),
                words(only_expected)
            )),
            LintPointer::NotInCatalog => Some(format!("{called} is not in the catalog: an invented name")),
            LintPointer::NotFlagged { .. } => None,
        }
    })
}

fn quarantine(input: &Input<'_>) -> Option<String> {
    if input.verdict.quarantine.is_empty() {
        return None;
    }
    let mut out =
        "#### Quarantine list\n\n| scenario | through | status | reason |\n|---|---|---|---|\n"
            .to_string();
    for q in &input.verdict.quarantine {
        let status = match (q.active, q.failing) {
            (true, true) => "active, failing now",
            (true, false) => "active, passing now: remove it",
            (false, _) => "expired",
        };
        let _ = writeln!(
            out,
            "| {} | {} | {status} | {} |",
            neutralise(&q.entry.scenario),
            q.entry.expires,
            neutralise(&q.entry.reason)
        );
    }
    out.push('\n');
    Some(out)
}

fn tiers(input: &Input<'_>) -> String {
    let mut out = "#### Per tier\n\n| tier | scenarios | passed | failed | errored | pass rate [95% CI] | baseline | Δ points |\n|---|--:|--:|--:|--:|--:|--:|--:|\n".to_string();
    let before = input.baseline.map(Baseline::tiers).unwrap_or_default();
    let overall_before = input.baseline.map(Baseline::overall);
    let rows = input
        .report
        .summary
        .tiers
        .iter()
        .map(|(tier, tally)| (format!("{tier}"), tally, before.get(tier)))
        .chain([(
            "**all**".to_string(),
            &input.report.summary.overall,
            overall_before.as_ref(),
        )]);
    for (label, tally, baseline) in rows {
        let now = crate::gate::Rate::new(tally.passed, tally.passed + tally.failed);
        let base = baseline.and_then(Tally::pass_rate);
        let delta = match (tally.pass_rate(), base) {
            (Some(now), Some(base)) => format!("{:+.1}", (now - base) * 100.0),
            _ => "-".to_string(),
        };
        let _ = writeln!(
            out,
            "| {label} | {} | {} | {} | {} | {} | {} | {delta} |",
            tally.total,
            tally.passed,
            tally.failed,
            tally.errored,
            now.as_ref().map_or_else(|| "-".to_string(), text::rate),
            percent(base),
        );
    }
    out.push('\n');
    out
}

fn flipped(input: &Input<'_>) -> Option<String> {
    let baseline = input.baseline?;
    let mut rows = String::new();
    for result in &input.report.scenarios {
        let Some(before) = baseline.scenario(&result.id) else {
            continue;
        };
        let Some(rate) = before.pass_rate() else {
            continue;
        };
        if result.tier == 5 && result.outcome == Outcome::Fail {
            // Listed in the Tier 5 failures table, above the fold.
            continue;
        }
        let direction = match result.outcome {
            Outcome::Fail if rate >= 0.5 => "pass → **fail**",
            Outcome::Pass if rate < 0.5 => "fail → pass",
            _ => continue,
        };
        let _ = writeln!(
            rows,
            "| {} | {} | {direction} | {}/{} | {} |",
            scenario_ref(input, &result.id),
            result.tier,
            before.passed,
            before.judged(),
            if result.outcome == Outcome::Fail {
                first_divergence(result)
            } else {
                "-".to_string()
            }
        );
    }
    (!rows.is_empty()).then(|| {
        format!(
            "#### Flipped since the baseline\n\n| scenario | tier | flip | baseline passed | first divergence |\n|---|--:|---|--:|---|\n{rows}\n"
        )
    })
}

/// The scoring modes the run used (each rule's default for results that predate them).
fn scoring_modes(input: &Input<'_>) -> String {
    let scoring = input
        .report
        .run
        .as_ref()
        .map(|run| run.scoring)
        .unwrap_or_default();
    let modes: Vec<String> = scoring
        .modes()
        .iter()
        .map(|(rule, mode)| format!("{rule} `{mode}`"))
        .collect();
    format!("Scoring modes: {}.\n\n", modes.join(" · "))
}

fn notes(input: &Input<'_>) -> Option<String> {
    if input.verdict.notes.is_empty() {
        return None;
    }
    let mut out = "#### Notes\n\n".to_string();
    for note in &input.verdict.notes {
        let _ = writeln!(out, "- {}", neutralise_note(note));
    }
    out.push('\n');
    Some(out)
}

/// Notes are toolgate's own text, but quarantine reasons inside them are user text.
fn neutralise_note(note: &str) -> String {
    note.replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('@', "@\u{200D}")
}

/// The baseline-compared metrics as a table, then the run's trajectory metrics, with the
/// names and values the terminal shows ([`text::BASELINE_METRICS`],
/// [`text::trajectory_metrics`]).
fn metrics(input: &Input<'_>) -> Option<String> {
    let now = Metrics::of(input.report);
    let (before, left_out) = match input
        .baseline
        .map(|b| text::comparable_metrics(input.report, b))
    {
        Some(Ok(metrics)) => (Some(*metrics), None),
        Some(Err(why)) => (None, Some(why)),
        None => (None, None),
    };
    let mut out =
        "#### Metrics\n\n| metric | this run | baseline | Δ |\n|---|--:|--:|--:|\n".to_string();
    let mut any = false;
    for (name, pick, is_share) in text::BASELINE_METRICS {
        let value = pick(&now);
        if value.is_none() {
            continue;
        }
        any = true;
        let earlier = before.as_ref().and_then(pick);
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} |",
            text::metric_value(value, is_share),
            text::metric_value(earlier, is_share),
            text::metric_delta(value, earlier, is_share)
        );
    }
    for (name, value, earlier, change) in text::usage_metrics(&now, before.as_ref()) {
        any = true;
        let _ = writeln!(out, "| {name} | {value} | {earlier} | {change} |");
    }
    out.push('\n');
    if let Some(why) = left_out {
        let _ = writeln!(out, "{why}\n");
    }
    let overall = &input.report.metrics.overall;
    if overall.runs > 0 {
        any = true;
        let parts: Vec<String> = text::trajectory_metrics(overall)
            .into_iter()
            .map(|(name, value)| format!("{name} **{value}**"))
            .collect();
        let _ = writeln!(out, "Trajectories: {}\n", parts.join(" · "));
    }
    any.then_some(out)
}

/// Each confused pair with the `look_alike_tools` finding that flags it, or a line saying the
/// lint does not (so the confusion is not a naming problem).
fn confused_pairs(input: &Input<'_>) -> Option<String> {
    let pairs = &input.report.confused_pairs;
    if pairs.is_empty() {
        return None;
    }
    let mut out = "#### Confused tools and the look-alike lint\n\n| expected | called | times | `toolgate lint` |\n|---|---|--:|---|\n".to_string();
    for pair in pairs {
        // The called name comes from a model: neutralised, never a code span it could close.
        let (expected, called) = (neutralise(&pair.expected), neutralise(&pair.called));
        let lint = match &pair.lint {
            LintPointer::Flagged {
                check,
                tool,
                similarity,
                only_expected,
                only_called,
            } => format!(
                "**{} on {}**, similarity {similarity:.3}; only {expected} says: {}; only {called} says: {}",
                code(check),
                neutralise(tool),
                words(only_expected),
                words(only_called)
            ),
            LintPointer::NotFlagged {
                similarity,
                threshold,
            } => format!(
                "not flagged (similarity {}, threshold {threshold:.2}): not a naming problem",
                crate::json::decimal_against(*similarity, *threshold, 3)
            ),
            LintPointer::NotInCatalog => {
                format!("{called} is not in the catalog: an invented name")
            }
        };
        let _ = writeln!(out, "| {expected} | {called} | {} | {lint} |", pair.count);
    }
    out.push('\n');
    Some(out)
}

/// Each id-like argument value without a source ([`text::id_findings`]), at most
/// [`text::ID_FINDINGS_SHOWN`] rows, then how many more.
fn id_findings(input: &Input<'_>) -> Option<String> {
    let findings = text::id_findings(input.report);
    if findings.is_empty() {
        return None;
    }
    let mut out = "#### Ids without a source\n\nId-like values the agent sent that neither the prompt nor an earlier tool result contains.\n\n| scenario | call | tool | argument | value | finding |\n|---|--:|---|---|---|---|\n".to_string();
    for (id, finding) in findings.iter().take(text::ID_FINDINGS_SHOWN) {
        // Tool names, pointers and values come from a model: neutralised, never code spans.
        let what = match finding.kind {
            ProvenanceKind::Invented => "invented".to_string(),
            ProvenanceKind::Drift => format!(
                "drift from {}",
                neutralise(finding.near.as_deref().unwrap_or_default())
            ),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {what} |",
            scenario_ref(input, id),
            finding.call + 1,
            neutralise(&finding.tool),
            neutralise(&finding.pointer),
            neutralise(&finding.value),
        );
    }
    if findings.len() > text::ID_FINDINGS_SHOWN {
        let _ = writeln!(
            out,
            "\n_... and {} more in results.json._",
            findings.len() - text::ID_FINDINGS_SHOWN
        );
    }
    out.push('\n');
    Some(out)
}

/// Separating words, neutralised, `nothing` when there are none.
fn words(words: &[String]) -> String {
    if words.is_empty() {
        return "nothing".to_string();
    }
    words
        .iter()
        .map(|word| neutralise(word))
        .collect::<Vec<_>>()
        .join(", ")
}

fn pins(input: &Input<'_>) -> String {
    let mut out = "<details><summary>Pinned metadata</summary>\n\n".to_string();
    let now = input.report.pins.as_ref();
    let before = input.baseline.and_then(|b| b.pins.as_ref());
    if now.is_none() && before.is_none() {
        out.push_str("Neither run has pinned metadata.\n");
    } else {
        out.push_str("| | this run | baseline |\n|---|---|---|\n");
        let fields: [PinRow; 9] = [
            ("model", |p| or_dash(p.model.as_deref())),
            ("provider", |p| p.provider.clone()),
            ("system prompt", |p| {
                short(p.system_prompt_sha256.as_deref())
            }),
            ("judge model", |p| or_dash(p.judge_model.as_deref())),
            ("harness", |p| p.harness_version.clone()),
            ("scenario set", |p| {
                format!(
                    "{} ({} files)",
                    short(Some(&p.scenario_set_sha256)),
                    p.scenarios.len()
                )
            }),
            ("catalog", |p| short(Some(&p.catalog_sha256))),
            ("fixtures", |p| short(Some(&p.fixture_sha256))),
            ("shard", |p| {
                p.shard
                    .map_or_else(|| "-".to_string(), |s| format!("{}/{}", s.index, s.count))
            }),
        ];
        for (name, show) in fields {
            let _ = writeln!(
                out,
                "| {name} | {} | {} |",
                now.map_or_else(|| "-".to_string(), |p| neutralise(&show(p))),
                before.map_or_else(|| "-".to_string(), |p| neutralise(&show(p)))
            );
        }
    }
    out.push_str("\n</details>\n\n");
    out
}

/// A row of the pinned-metadata table: its label and how to show it.
type PinRow = (&'static str, fn(&Pins) -> String);

fn or_dash(value: Option<&str>) -> String {
    value.unwrap_or("-").to_string()
}

fn short(hash: Option<&str>) -> String {
    hash.map_or_else(|| "-".to_string(), |h| h.chars().take(12).collect())
}

fn trend(input: &Input<'_>) -> Option<String> {
    let baseline = input.baseline?;
    if baseline.trend.is_empty() {
        return None;
    }
    let mut labels: Vec<String> = Vec::new();
    let mut values: Vec<String> = Vec::new();
    let judged: Vec<_> = baseline.trend.iter().filter(|p| p.judged > 0).collect();
    let day = |at: &str| at.get(5..10).unwrap_or("?").to_string();
    for point in &judged {
        // `2026-11-29T02:00:00Z` -> `11-29`, or `11-29 02:00` when that day has several runs:
        // equal labels would fold into one point on the chart.
        let same_day = judged
            .iter()
            .filter(|other| day(&other.recorded_at) == day(&point.recorded_at))
            .count();
        let label = if same_day > 1 {
            format!(
                "{} {}",
                day(&point.recorded_at),
                point.recorded_at.get(11..16).unwrap_or("?")
            )
        } else {
            day(&point.recorded_at)
        };
        labels.push(format!("\"{label}\""));
        values.push(format!(
            "{:.1}",
            point.passed as f64 / point.judged as f64 * 100.0
        ));
    }
    let overall = input.report.summary.overall;
    if let Some(rate) = overall.pass_rate() {
        labels.push("\"this run\"".to_string());
        values.push(format!("{:.1}", rate * 100.0));
    }
    if values.len() < 2 {
        return None;
    }
    Some(format!(
        "<details><summary>Pass-rate trend ({} runs of `{}`)</summary>\n\n```mermaid\nxychart-beta\n    title \"Overall pass rate (%)\"\n    x-axis [{}]\n    y-axis \"pass rate (%)\" 0 --> 100\n    line [{}]\n```\n\n</details>\n\n",
        values.len() - 1,
        neutralise(baseline.branch.as_deref().unwrap_or("history")).replace('`', ""),
        labels.join(", "),
        values.join(", ")
    ))
}

fn failures(input: &Input<'_>) -> Option<String> {
    let failing: Vec<&ScenarioResult> = input
        .report
        .scenarios
        .iter()
        .filter(|r| r.outcome != Outcome::Pass)
        .collect();
    if failing.is_empty() {
        return None;
    }
    let mut out = format!(
        "<details><summary>All {} scenarios not passing</summary>\n\n",
        failing.len()
    );
    for result in failing {
        let calls = match &result.metrics {
            Some(metrics) if metrics.calls_refused > 0 => format!(
                "{} calls: {} executed, {} refused",
                result.calls, metrics.calls_executed, metrics.calls_refused
            ),
            _ => format!("{} calls", result.calls),
        };
        let _ = writeln!(
            out,
            "**{}** (tier {}, {}, {}, {calls})\n",
            scenario_ref(input, &result.id),
            result.tier,
            result.kind.as_str(),
            match result.outcome {
                Outcome::Errored => "errored",
                Outcome::Inconclusive => "inconclusive",
                _ => "failed",
            },
        );
        if let Some(error) = &result.error {
            let _ = writeln!(out, "- error: {}", neutralise(error));
        }
        for check in result.checks.iter().filter(|c| !c.passed) {
            let _ = writeln!(out, "- {}: {}", code(&check.subject), rich(&check.detail));
        }
        for noted in result.metrics.iter().flat_map(|m| &m.parser_notes) {
            let _ = writeln!(out, "- parser note: {}", neutralise(&noted.render()));
        }
        for violation in result.metrics.iter().flat_map(|m| &m.output_violations) {
            let _ = writeln!(out, "- output schema: {}", neutralise(violation));
        }
        if let Some(conversation) = &result.conversation {
            let _ = writeln!(out, "- conversation:");
            for (number, exchange) in conversation.exchanges.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "  {}. user: {} · {} call{} · agent: {}",
                    number + 1,
                    neutralise(&exchange.user),
                    exchange.calls,
                    if exchange.calls == 1 { "" } else { "s" },
                    exchange
                        .reply
                        .as_deref()
                        .map_or_else(|| "(no reply)".to_owned(), neutralise),
                );
            }
        }
        if let Some(answer) = &result.final_answer {
            let _ = writeln!(out, "- final answer: {}", neutralise(answer));
        }
        out.push('\n');
    }
    out.push_str("</details>\n\n");
    Some(out)
}

#[cfg(test)]
pub(crate) mod tests;
