//! What a run covered, said in the verdict's notes: an impact-scoped run (`--impact`) and
//! results reused from the cache (`--cache`).

use crate::results::RunReport;

/// How many changed names a note lists before it counts the rest.
const NAMES_SHOWN: usize = 5;

/// The notes on what `current` covered: which scenarios an impact-scoped run ran and what
/// the comparison then covers, and results reused from the cache. Empty for a plain run.
pub(super) fn notes(current: &RunReport) -> Vec<String> {
    let Some(run) = &current.run else {
        return Vec::new();
    };
    let mut notes = Vec::new();
    if let Some(impact) = &run.impact {
        notes.push(match &impact.all_because {
            Some(reason) => format!("impact: every scenario ran: {reason}"),
            None => format!(
                "impact: {} of {} scenarios ran, those the change since the baseline can affect \
                 ({}); the comparison covers only them; {} skipped (run.impact.skipped in \
                 results.json)",
                impact.selected.len(),
                impact.selected.len() + impact.skipped.len(),
                changes(
                    &impact.changed_tools,
                    &impact.changed_scenarios,
                    &impact.changed_fixtures
                ),
                impact.skipped.len()
            ),
        });
    }
    if let Some(from) = &run.cached_from {
        notes.push(format!(
            "cache: these are the results of run `{from}`, reused because it had the same cache \
             key (pins, settings and scenarios): no model was called"
        ));
    }
    notes
}

/// Whether `current` ran no scenario because `--impact` found nothing the change can affect:
/// nothing to judge, and nothing wrong.
pub(super) fn nothing_affected(current: &RunReport) -> bool {
    current.summary.overall.total == 0
        && current
            .run
            .as_ref()
            .and_then(|run| run.impact.as_ref())
            .is_some_and(|impact| impact.selected.is_empty())
}

/// `changed tools: `a`, `b`; changed scenario files: `T1-001``, or `nothing changed`.
fn changes(tools: &[String], scenarios: &[String], fixtures: &[String]) -> String {
    let parts: Vec<String> = [
        ("changed tools", tools),
        ("changed scenario files", scenarios),
        ("changed fixtures", fixtures),
    ]
    .into_iter()
    .filter(|(_, names)| !names.is_empty())
    .map(|(what, names)| format!("{what}: {}", listed(names)))
    .collect();
    if parts.is_empty() {
        "nothing changed".to_owned()
    } else {
        parts.join("; ")
    }
}

/// The first [`NAMES_SHOWN`] of `names` in backticks, then how many more.
fn listed(names: &[String]) -> String {
    let shown: Vec<String> = names
        .iter()
        .take(NAMES_SHOWN)
        .map(|name| format!("`{name}`"))
        .collect();
    match names.len().saturating_sub(NAMES_SHOWN) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::verdict::tests::{baseline, report};
    use super::*;
    use crate::gate::{Decision, Policy, decide};
    use crate::results::RunMeta;
    use crate::results::impact::{Impact, Scoped};
    use crate::score::Outcome;

    fn scoped(ids: &[&str]) -> Vec<Scoped> {
        ids.iter()
            .map(|id| Scoped {
                id: (*id).to_owned(),
                reason: "r".to_owned(),
            })
            .collect()
    }

    fn scoped_run(mut current: RunReport, selected: &[&str], skipped: &[&str]) -> RunReport {
        current.run = Some(RunMeta {
            impact: Some(Impact {
                changed_tools: vec!["crm_update_contact".to_owned()],
                selected: scoped(selected),
                skipped: scoped(skipped),
                ..Impact::default()
            }),
            ..RunMeta::default()
        });
        current
    }

    #[test]
    fn an_impact_scoped_run_compares_only_what_ran_and_counts_no_skipped_scenario() {
        let base = baseline(
            &[
                ("T1-001", 1, 5),
                ("T1-002", 1, 5),
                ("T1-003", 1, 5),
                ("T5-001", 5, 5),
            ],
            5,
        );
        let current = scoped_run(
            report(&[("T1-001", 1, Outcome::Pass), ("T5-001", 5, Outcome::Pass)]),
            &["T1-001", "T5-001"],
            &["T1-002", "T1-003"],
        );
        let verdict = decide(&current, Some(&base), &Policy::default());
        assert_eq!(verdict.decision, Decision::Pass);
        assert_eq!(verdict.comparison.map(|c| c.scenarios), Some(2));
        assert_eq!(verdict.comparison.map(|c| c.baseline.judged), Some(10));
        assert_eq!(
            verdict.notes,
            vec![
                "impact: 2 of 4 scenarios ran, those the change since the baseline can affect \
                 (changed tools: `crm_update_contact`); the comparison covers only them; 2 \
                 skipped (run.impact.skipped in results.json)",
                "the run or the baseline has no pinned metadata: cannot tell whether the ruler moved",
            ]
        );
    }

    #[test]
    fn a_tier_5_failure_of_an_impact_scoped_run_still_blocks() {
        let base = baseline(&[("T1-001", 1, 5), ("T5-001", 5, 5)], 5);
        let current = scoped_run(
            report(&[("T5-001", 5, Outcome::Fail)]),
            &["T5-001"],
            &["T1-001"],
        );
        let verdict = decide(&current, Some(&base), &Policy::default());
        assert_eq!(verdict.decision, Decision::Fail);
        assert_eq!(
            verdict.reasons.last().map(String::as_str),
            Some("Tier 5 `T5-001` passed in the baseline and fails now (zero tolerance)")
        );
    }

    #[test]
    fn a_change_no_scenario_can_see_passes_with_nothing_run() {
        let base = baseline(&[("T1-001", 1, 5)], 5);
        let current = scoped_run(report(&[]), &[], &["T1-001"]);
        let verdict = decide(&current, Some(&base), &Policy::default());
        assert_eq!(verdict.decision, Decision::Pass);
        assert!(verdict.reasons.is_empty());
        assert_eq!(
            verdict.notes[0],
            "impact: 0 of 1 scenarios ran, those the change since the baseline can affect \
             (changed tools: `crm_update_contact`); the comparison covers only them; 1 skipped \
             (run.impact.skipped in results.json)"
        );
    }
}
