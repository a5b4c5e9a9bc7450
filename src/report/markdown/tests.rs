use super::*;
use crate::report::sample;

fn input<'a>(
    report: &'a RunReport,
    baseline: &'a Baseline,
    verdict: &'a Verdict,
    limit: usize,
) -> Input<'a> {
    Input {
        report,
        baseline: Some(baseline),
        verdict,
        limit,
    }
}

#[test]
fn report_shows_verdict_rates_tier_5_flips_metrics_pins_trend_and_details() {
    let (report, baseline, verdict) = (sample::current(), sample::baseline(), sample::verdict());
    insta::assert_snapshot!(render(&input(
        &report,
        &baseline,
        &verdict,
        GITHUB_COMMENT_LIMIT
    )));
}

#[test]
fn least_important_sections_are_cut_first_to_fit_the_limit() {
    let (report, baseline, verdict) = (sample::current(), sample::baseline(), sample::verdict());
    let full = render(&input(&report, &baseline, &verdict, GITHUB_COMMENT_LIMIT));
    let limit = full.len() - 100;
    let cut = render(&input(&report, &baseline, &verdict, limit));
    assert!(cut.len() <= limit, "{} > {limit}", cut.len());
    assert!(!cut.contains("scenarios not passing"));
    assert!(cut.contains("#### Tier 5 failures"));
    assert!(cut.contains(
        "_Shortened or left out to fit the size limit: failure details. The full results are in the job's artifacts._"
    ));
}

#[test]
fn a_huge_report_stays_under_the_github_comment_limit() {
    let (mut report, baseline, verdict) =
        (sample::current(), sample::baseline(), sample::verdict());
    let template = report.scenarios[1].clone();
    for i in 0..3000 {
        let mut result = template.clone();
        result.id = format!("T5-{i:04}");
        result.tier = 5;
        report.scenarios.push(result);
    }
    let text = render(&input(&report, &baseline, &verdict, GITHUB_COMMENT_LIMIT));
    assert!(text.len() <= GITHUB_COMMENT_LIMIT, "{}", text.len());
    assert!(text.starts_with("### ❌ toolgate: **fail**"));
    assert!(text.contains("| T5-0000 | blocks |"), "{text}");
    assert!(text.contains(" more rows._"));
    assert!(text.ends_with("_Shortened or left out to fit the size limit: Tier 5 failures, failure details. The full results are in the job's artifacts._\n"), "{}", &text[text.len() - 300..]);
}

#[test]
fn model_text_cannot_ping_or_inject_html() {
    let (report, baseline, verdict) = (sample::current(), sample::baseline(), sample::verdict());
    let text = render(&input(&report, &baseline, &verdict, GITHUB_COMMENT_LIMIT));
    assert!(!text.contains("@octocat") && !text.contains("@admin") && !text.contains("@team"));
    assert!(!text.contains("<script>") && !text.contains("<b>") && !text.contains("<issue>"));
}

/// Issue #18: the "first divergence" column shows where the run left the expected path (the
/// metrics' first divergence), not the first failing check in check order.
#[test]
fn flipped_runs_show_their_first_divergence_not_their_first_failing_check() {
    use crate::score::metrics::{Percentiles, RunMetrics, TrajectoryMatch};
    let (mut report, baseline, verdict) =
        (sample::current(), sample::baseline(), sample::verdict());
    let flipped = report
        .scenarios
        .iter_mut()
        .find(|r| r.id == "T2-007")
        .expect("the sample has T2-007");
    flipped.metrics = Some(RunMetrics {
        selection: Default::default(),
        arguments: Default::default(),
        trajectory: TrajectoryMatch::from_counts(1, 2, 2),
        chain_efficiency: Some(1.0),
        inefficient: false,
        loops: Vec::new(),
        provenance: Vec::new(),
        recovery: Vec::new(),
        first_divergence: Some(
            "call 2: expected `crm_log_activity`, got `comm_send_email`".into(),
        ),
        call_latency_us: Percentiles::default(),
        calls_executed: 2,
        calls_refused: 0,
    });
    let markdown = render(&input(&report, &baseline, &verdict, GITHUB_COMMENT_LIMIT));
    let row = markdown
        .lines()
        .find(|line| line.starts_with("| T2-007 | 2 | pass → **fail**"))
        .expect("T2-007 flipped");
    assert_eq!(
        row,
        "| T2-007 | 2 | pass → **fail** | 7/7 | call 2: expected \\`crm\\_log\\_activity\\`, got \\`comm\\_send\\_email\\` |"
    );
}
