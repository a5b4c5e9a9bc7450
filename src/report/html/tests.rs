//! The HTML report: the structure browser tests rely on, the policy that keeps the page
//! offline, and hostile text that stays text.

use serde_json::json;

use super::page::{SCRIPT, STYLE, hash_source};
use super::*;
use crate::gate::Policy;
use crate::report::sample;
use crate::results::RunReport;
use crate::trace::{CallOutcome, CallRecord, TraceLine};

/// A call line of run 0 of `scenario`: call `index` to `tool` with `arguments`.
fn call(scenario: &str, index: usize, tool: &str, arguments: serde_json::Value) -> TraceLine {
    let mut record = CallRecord::recorded(index, tool, arguments);
    record.result = Some(json!({"ok": true}));
    TraceLine::call(scenario, 0, &record)
}

/// A trace for every sample scenario: one lookup, and for T2-007 a second call whose
/// arguments `wrong` changes.
fn trace(wrong: bool) -> Vec<TraceLine> {
    let mut lines = Vec::new();
    for id in ["T1-001", "T2-007", "T2-008", "T3-001", "T5-001", "T5-002"] {
        lines.push(call(id, 0, "crm_search_contacts", json!({"query": "Ada"})));
    }
    let contact = if wrong { "C-1" } else { "C-013" };
    lines.push(call(
        "T2-007",
        1,
        "crm_get_contact",
        json!({"contact_id": contact}),
    ));
    lines.push(TraceLine::answer("T2-007", 0, "Ada Lovelace"));
    lines
}

fn render_sample(base: Option<BaseRun<'_>>, head_trace: &[TraceLine]) -> String {
    let (report, baseline, verdict) = (sample::current(), sample::baseline(), sample::verdict());
    render(&Input {
        report: &report,
        verdict: &verdict,
        policy: &Policy::default(),
        baseline: Some(&baseline),
        trace: head_trace,
        base,
    })
}

/// The text of the first element starting with `start`, up to its closing `end`.
fn element<'a>(page: &'a str, start: &str, end: &str) -> &'a str {
    let from = page
        .find(start)
        .unwrap_or_else(|| panic!("no `{start}` in the page"));
    let to = page[from..].find(end).expect("the element closes") + from;
    &page[from..to]
}

#[test]
fn the_verdict_comes_first_with_its_decision_and_reasons() {
    let page = render_sample(None, &trace(true));
    let verdict = element(&page, "<section id=\"verdict\"", "</section>");
    assert!(
        verdict.starts_with("<section id=\"verdict\" data-decision=\"fail\">"),
        "{verdict}"
    );
    assert!(
        verdict.contains("<span class=\"decision fail\">fail</span>"),
        "{verdict}"
    );
    assert!(
        verdict.contains(
            "<li>Tier 5 <code>T5-001</code> passed in the baseline and fails now (zero tolerance)</li>"
        ),
        "{verdict}"
    );
    let order: Vec<usize> = [
        "id=\"verdict\"",
        "id=\"statistics\"",
        "id=\"trend\"",
        "id=\"changes\"",
        "id=\"scenarios\"",
    ]
    .iter()
    .map(|id| page.find(id).unwrap_or_else(|| panic!("{id}")))
    .collect();
    assert!(order.windows(2).all(|pair| pair[0] < pair[1]), "{order:?}");
}

#[test]
fn a_regression_opens_base_and_head_side_by_side_with_the_first_difference_on_both() {
    let base_report = RunReport {
        scenarios: sample::current()
            .scenarios
            .into_iter()
            .map(|mut result| {
                result.outcome = crate::score::Outcome::Pass;
                result
            })
            .collect(),
        ..sample::current()
    };
    let base_trace = trace(false);
    let page = render_sample(
        Some(BaseRun {
            report: &base_report,
            trace: &base_trace,
        }),
        &trace(true),
    );
    let change = element(
        &page,
        "<details class=\"change\" data-change=\"regressed\" data-scenario=\"T2-007\">",
        "</details>",
    );
    assert!(
        change.contains("<div class=\"side-by-side\"><div class=\"base\">"),
        "{change}"
    );
    assert!(change.contains("<div class=\"head\">"), "{change}");
    // The lookup matches; the second call's arguments differ, on both sides.
    assert_eq!(change.matches("first-diff").count(), 2, "{change}");
    let base_side = element(change, "<div class=\"base\">", "<div class=\"head\">");
    assert!(
        base_side.contains("<div class=\"call ok first-diff\">"),
        "{base_side}"
    );
    assert!(base_side.contains("C-013"), "{base_side}");
    assert_eq!(
        base_side.matches("<div class=\"call ").count(),
        2,
        "{base_side}"
    );
    assert!(!base_side.contains("first-diff\"><div class=\"call-head\"><span class=\"n\">#1"));
    // Fixed, and the other regressions are listed too.
    assert!(page.contains("data-change=\"fixed\" data-scenario=\"T3-001\""));
    assert!(page.contains("data-change=\"regressed\" data-scenario=\"T5-001\""));
    assert!(
        page.contains("<p>3 regressed, 1 fixed, 0 new, 0 gone.</p>"),
        "{page}"
    );
}

#[test]
fn without_the_base_run_a_change_shows_the_baseline_tally() {
    let page = render_sample(None, &trace(true));
    let change = element(
        &page,
        "data-change=\"regressed\" data-scenario=\"T2-007\"",
        "</details>",
    );
    assert!(change.contains("The baseline passed it in 7 of 7 judged runs (0 errored). The base trajectory is not available."), "{change}");
    assert!(!change.contains("first-diff"), "{change}");
}

#[test]
fn every_scenario_and_run_has_its_anchor_data_and_the_filters_exist() {
    let page = render_sample(None, &trace(true));
    for id in ["T1-001", "T2-007", "T2-008", "T3-001", "T5-001", "T5-002"] {
        assert!(
            page.contains(&format!("id=\"{}\"", crate::report::anchor(id, None))),
            "{id}"
        );
        assert!(
            page.contains(&format!("id=\"{}\"", crate::report::anchor(id, Some(0)))),
            "{id}"
        );
    }
    assert!(page.contains(
        "<details class=\"scenario\" id=\"s-T2-007\" data-scenario=\"T2-007\" data-tier=\"2\" data-type=\"multi_step\" data-outcome=\"fail\" data-tools=\"crm_get_contact crm_search_contacts\" data-checks=\"args_from_prior\">"
    ), "{page}");
    for id in [
        "filter-tier",
        "filter-type",
        "filter-outcome",
        "filter-tool",
        "filter-check",
    ] {
        assert!(
            page.contains(&format!(
                "<select id=\"{id}\"><option value=\"\">all</option>"
            )),
            "{id}"
        );
    }
    assert!(page.contains("<input id=\"search\" type=\"search\""));
    assert!(page.contains("<span id=\"shown-count\">6</span> of 6 shown"));
    assert!(page.contains("<option value=\"args_from_prior\">args_from_prior</option>"));
}

#[test]
fn the_page_loads_nothing_and_allows_only_its_own_style_and_script() {
    let page = render_sample(None, &trace(true));
    let policy = format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src {}; script-src {}; img-src data:; base-uri 'none'; form-action 'none'\">",
        hash_source(STYLE),
        hash_source(SCRIPT)
    );
    assert!(page.contains(&policy), "{page}");
    // The hashes are of the bytes the page embeds.
    assert!(page.contains(&format!("<style>{STYLE}</style>")));
    assert!(page.contains(&format!("<script>{SCRIPT}</script>")));
    assert!(!page.contains("unsafe-inline"));
    assert!(!page.contains("http://") && !page.contains("https://"));
    assert!(!page.contains(" src=") && !page.contains(" onclick="));
    assert_eq!(page.matches("<script").count(), 1);
    assert!(!STYLE.contains("</style") && !SCRIPT.contains("</script"));
    // A known vector: the hash of "" in CSP's form.
    assert_eq!(
        hash_source(""),
        "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"
    );
}

#[test]
fn hostile_text_stays_text_and_a_megabyte_stays_out() {
    let evil = "</details></div><script>alert(1)</script>\"'<img src=x onerror=alert(2)>\u{202e}\u{2066}\0\u{fffd}";
    let huge = "<script>".repeat(1024 * 1024 / 8);
    let mut report = sample::current();
    let first = &mut report.scenarios[0];
    first.id = format!("T1-{evil}");
    first.final_answer = Some(format!("{evil}{huge}"));
    first.error = Some(evil.to_string());
    first.checks[0].detail = format!("{evil}{huge}");
    first.checks[0].passed = false;
    let id = first.id.clone();
    let report = RunReport {
        summary: crate::results::Summary::of(&report.scenarios),
        ..report
    };
    let mut line = call(&id, 0, evil, json!({ evil: huge }));
    line.error = Some(huge.clone());
    line.result = Some(json!(huge));
    let trace = vec![line, TraceLine::answer(&id, 0, evil)];
    let (baseline, verdict) = (sample::baseline(), sample::verdict());
    let page = render(&Input {
        report: &report,
        verdict: &verdict,
        policy: &Policy::default(),
        baseline: Some(&baseline),
        trace: &trace,
        base: Some(BaseRun {
            report: &report,
            trace: &trace,
        }),
    });
    assert_eq!(
        page.matches("<script").count(),
        1,
        "only the page's own script"
    );
    assert!(!page.contains("<img"));
    assert!(!page.contains("alert(1)</script>"));
    assert!(!page.contains('\0') && !page.contains('\u{202e}') && !page.contains('\u{2066}'));
    assert_eq!(
        page.matches("<details").count(),
        page.matches("</details>").count()
    );
    assert!(page.contains("&lt;/details&gt;&lt;/div&gt;&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&lt;img src=x onerror=alert(2)&gt;\\u{202e}\\u{2066}\\u{0}\u{fffd}"));
    assert!(page.contains("more bytes</span>"));
    assert!(page.len() < 200 * 1024, "{} bytes", page.len());
    // The anchor of a hostile id is plain.
    assert!(page.contains(&format!("id=\"{}\"", crate::report::anchor(&id, None))));
}

#[test]
fn a_trace_of_another_run_is_left_out() {
    let mut report = sample::current();
    report.run = Some(crate::results::RunMeta {
        run_id: Some("this".into()),
        ..Default::default()
    });
    let mut stale = call("T1-001", 0, "stale_tool", json!({}));
    stale.run_id = Some("older".into());
    stale.outcome = Some(CallOutcome::Success);
    let (baseline, verdict) = (sample::baseline(), sample::verdict());
    let page = render(&Input {
        report: &report,
        verdict: &verdict,
        policy: &Policy::default(),
        baseline: Some(&baseline),
        trace: &[stale],
        base: None,
    });
    assert!(!page.contains("stale_tool"));
}
