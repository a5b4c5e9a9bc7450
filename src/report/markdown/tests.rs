//! The Markdown report: every section, cut to GitHub's limit; model text cannot ping or inject.

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
        links: None,
        report_url: None,
    }
}

#[test]
fn with_links_scenario_ids_point_at_their_files_and_the_footer_at_the_run() {
    let (report, baseline, verdict) = (sample::current(), sample::baseline(), sample::verdict());
    let links = Links {
        files: "https://github.com/acme/agent/blob/0123abc/".to_string(),
        root: std::path::PathBuf::from("evals"),
        run: Some("https://github.com/acme/agent/actions/runs/42".to_string()),
    };
    let text = render(&Input {
        links: Some(&links),
        report_url: None,
        ..input(&report, &baseline, &verdict, GITHUB_COMMENT_LIMIT)
    });
    assert!(
        text.contains(
            "| [T5-001](https://github.com/acme/agent/blob/0123abc/evals/scenarios/tier5/T5-001.json) | blocks |"
        ),
        "{text}"
    );
    assert!(text.contains(
        "**[T2-007](https://github.com/acme/agent/blob/0123abc/evals/scenarios/tier2/T2-007.json)** (tier 2"
    ));
    // The link is the last line, but for the run id's comment when the run has one.
    let last = text
        .trim_end()
        .lines()
        .rfind(|line| !line.starts_with("<!-- toolgate run"))
        .expect("a last line");
    assert_eq!(
        last,
        "[The run, with its logs and artifacts](https://github.com/acme/agent/actions/runs/42)"
    );
    let plain = render(&input(&report, &baseline, &verdict, GITHUB_COMMENT_LIMIT));
    assert!(plain.contains("| T5-001 | blocks |"));
    assert!(!plain.contains("](https://"));
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

/// The "first divergence" column shows where the run left the expected path (the
/// metrics' first divergence), not the first failing check in check order.
#[test]
fn flipped_runs_show_their_first_divergence_not_their_first_failing_check() {
    let (mut report, baseline, verdict) =
        (sample::current(), sample::baseline(), sample::verdict());
    let flipped = report
        .scenarios
        .iter_mut()
        .find(|r| r.id == "T2-007")
        .expect("the sample has T2-007");
    flipped.metrics = Some(run_metrics(Some(
        "call 2: expected `crm_log_activity`, got `comm_send_email`",
    )));
    let markdown = render(&input(&report, &baseline, &verdict, GITHUB_COMMENT_LIMIT));
    let row = markdown
        .lines()
        .find(|line| line.starts_with("| T2-007 | 2 | pass → **fail**"))
        .expect("T2-007 flipped");
    assert_eq!(
        row,
        "| T2-007 | 2 | pass → **fail** | 7/7 | call 2: expected `crm_log_activity`, got `comm_send_email` |"
    );
}

/// Parser notes reach the report, in the details of a run that did not pass.
#[test]
fn parser_notes_are_listed_in_the_details() {
    use crate::score::metrics::NotedCall;
    use crate::trace::CallNote;
    let noted = NotedCall {
        call: 1,
        tool: "crm_log_activity".into(),
        notes: vec![CallNote::DuplicateId, CallNote::PossiblyTruncated],
    };
    assert_eq!(
        noted.render(),
        "call 2 `crm_log_activity`: duplicate_id (duplicate call id: result paired by order \
         (ambiguous)), possibly_truncated (unparseable (possibly truncated))"
    );
    let (mut report, baseline, verdict) =
        (sample::current(), sample::baseline(), sample::verdict());
    let failing = report
        .scenarios
        .iter_mut()
        .find(|r| r.id == "T5-001")
        .expect("the sample has T5-001");
    let mut metrics = run_metrics(None);
    metrics.parser_notes = vec![noted];
    failing.metrics = Some(metrics);
    let markdown = render(&input(&report, &baseline, &verdict, GITHUB_COMMENT_LIMIT));
    let line = markdown
        .lines()
        .find(|line| line.starts_with("- parser note:"))
        .expect("a parser note line");
    assert!(line.contains("duplicate\\_id"), "{line}");
    assert!(line.contains("call 2"), "{line}");
}

use crate::report::sample::run_metrics;

#[test]
fn runs_of_the_same_day_stay_apart_on_the_trend_chart() {
    let (report, mut baseline, verdict) =
        (sample::current(), sample::baseline(), sample::verdict());
    let mut second = baseline.trend[0].clone();
    second.recorded_at = baseline.trend[0].recorded_at.replace("02:00", "14:30");
    baseline.trend.insert(1, second);
    let text = render(&input(&report, &baseline, &verdict, GITHUB_COMMENT_LIMIT));
    let axis = text
        .lines()
        .find(|line| line.trim_start().starts_with("x-axis"))
        .expect("a chart");
    let first_day = &baseline.trend[0].recorded_at[5..10];
    assert!(
        axis.contains(&format!("\"{first_day} 02:00\", \"{first_day} 14:30\"")),
        "{axis}"
    );
    assert!(
        axis.contains("\"11-25\""),
        "other days keep their short label: {axis}"
    );
}

/// Ids without a source get their own section, from passing runs too, with the model's
/// values neutralised and each finding listed once.
#[test]
fn ids_without_a_source_are_listed_with_model_text_neutralised() {
    let (baseline, verdict) = (sample::baseline(), sample::verdict());
    let report = sample::with_id_findings(1);
    let markdown = render(&input(&report, &baseline, &verdict, GITHUB_COMMENT_LIMIT));
    let rows: Vec<&str> = markdown
        .lines()
        .skip_while(|line| !line.starts_with("<details><summary>Ids without a source"))
        .take_while(|line| *line != "</details>")
        .filter(|line| line.starts_with("| T"))
        .collect();
    assert_eq!(
        rows,
        [
            "| T1-001 | 1 | crm\\_get\\_contact | /contact\\_id | C-9 \\| @\u{200d}admin &lt;b&gt; | invented |",
            "| T1-001 | 2 | crm\\_get\\_contact | /contact\\_id | C-0014 | drift from C-0013 |",
            "| T3-001 | 1 | crm\\_get\\_contact | /contact\\_id | C-100 | invented |",
        ]
    );
    let plain = render(&input(
        &sample::current(),
        &baseline,
        &verdict,
        GITHUB_COMMENT_LIMIT,
    ));
    assert!(!plain.contains("Ids without a source"), "{plain}");
}

#[test]
fn what_to_fix_names_the_lint_finding_on_a_confused_pair_and_links_into_the_report() {
    let (mut report, baseline, verdict) =
        (sample::current(), sample::baseline(), sample::verdict());
    let confused = |expected: &str, called: &str| crate::score::metrics::Confusion {
        expected: expected.into(),
        called: Some(called.into()),
    };
    for result in &mut report.scenarios {
        let confusion = match result.id.as_str() {
            "T2-007" => confused("drop_record", "purge_record"),
            "T5-002" => confused("comm_send_email", "send_mail | <b>@admin</b>"),
            "T5-001" => confused("crm_search_contacts", "admin_search_users"),
            _ => continue,
        };
        let metrics = result
            .metrics
            .get_or_insert_with(|| sample::run_metrics(None));
        metrics.selection.confusions = vec![confusion];
    }
    let text = render(&Input {
        report_url: Some("https://reports.example/pr-7/report.html"),
        ..input(&report, &baseline, &verdict, GITHUB_COMMENT_LIMIT)
    });
    let section = text
        .split("#### What to fix\n\n")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .expect("a What to fix section, open");
    let lines: Vec<&str> = section.lines().collect();
    assert_eq!(lines.len(), 3, "{section}");
    assert!(lines[0].starts_with("- T5-001 (tier 5): "), "{section}");
    assert!(
        !lines[0].contains("lint"),
        "a pair the lint does not flag adds nothing: {section}"
    );
    assert!(
        lines[1].contains(" · send\\_mail \\| &lt;b&gt;@\u{200D}admin&lt;/b&gt; is not in the catalog: an invented name · "),
        "{section}"
    );
    assert!(
        lines[2].contains("· lint `look_alike_tools` finds drop\\_record and purge\\_record look alike (similarity 0.75); say in drop\\_record's description what only it does (drop) · [report](https://reports.example/pr-7/report.html#s-T2-007~0)"),
        "{section}"
    );
}
