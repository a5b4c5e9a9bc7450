//! `toolgate verify` output as text.

use std::fmt::Write as _;

use super::{MutationReport, REQUIRED_KILL_RATE, TrajectoryReport};

/// Per scenario: mutants killed of derived, then the survivors (all of them with `verbose`,
/// else only for scenarios that kill none); then the overall kill rate against the goal.
pub fn render_mutants(report: &MutationReport, verbose: bool) -> String {
    let mut out = String::from("mutation check (broken trajectories the checks must fail):\n");
    // The id column is as wide as the longest id (at least 8), so the counts line up.
    let width = report
        .scenarios
        .iter()
        .map(|s| s.id.chars().count())
        .max()
        .unwrap_or(0)
        .max(8);
    for scenario in &report.scenarios {
        let killed = scenario.killed();
        let total = scenario.mutants.len();
        let mark = if killed == 0 {
            "  <- kills nothing"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  {:<width$} {killed:>3}/{total:<3} killed{mark}",
            scenario.id
        );
        if verbose || killed == 0 {
            for survivor in scenario.survivors() {
                let _ = writeln!(out, "           survived: {}", survivor.description);
            }
        }
    }
    let (draft_killed, draft_total) = report.drafts();
    if report.total() > 0 || draft_total == 0 {
        let _ = writeln!(
            out,
            "killed {}/{} mutants ({:.1}%, goal {:.0}%)",
            report.killed(),
            report.total(),
            report.kill_rate() * 100.0,
            REQUIRED_KILL_RATE * 100.0
        );
    } else {
        let _ = writeln!(
            out,
            "no finished scenario has mutants: the kill rate measures nothing yet"
        );
    }
    if draft_total > 0 {
        let _ = writeln!(
            out,
            "{draft_killed} of {draft_total} killed on draft scenarios: drafts are not evidence"
        );
    }
    let toothless = report.toothless();
    if !toothless.is_empty() {
        let _ = writeln!(
            out,
            "scenarios whose checks cannot fail: {}",
            toothless.join(", ")
        );
    }
    out
}

/// The written trajectories: a summary line (with `per_tier`, a table per tier), then each
/// trajectory judged wrongly with the checks that decided it (all of them with `verbose`,
/// else the first). Nothing when the suite has no trajectories.
pub fn render_trajectories(report: &TrajectoryReport, per_tier: bool, verbose: bool) -> String {
    let mut out = String::new();
    for finding in &report.findings {
        let _ = writeln!(out, "catalog finding: {finding}");
    }
    if report.results.is_empty() {
        return out;
    }
    let total = report.total();
    let _ = writeln!(
        out,
        "written trajectories: {} alternatives, {} rejected; {} counterexamples, {} accepted",
        total.alternatives, total.valid_rejected, total.counterexamples, total.invalid_accepted
    );
    if per_tier {
        let _ = writeln!(
            out,
            "  tier  alternatives  valid rejected  counterexamples  invalid accepted"
        );
        for (tier, counts) in report.per_tier() {
            let _ = writeln!(
                out,
                "  {tier:>4}  {:>12}  {:>14}  {:>15}  {:>16}",
                counts.alternatives,
                counts.valid_rejected,
                counts.counterexamples,
                counts.invalid_accepted
            );
        }
    }
    for result in report.wrong() {
        let what = if result.alternative {
            "alternative rejected"
        } else {
            "counterexample accepted"
        };
        let _ = writeln!(
            out,
            "  {} {what}: {} ({})",
            result.scenario,
            result.name,
            result.outcome.as_str()
        );
        let shown = if verbose { result.failed.len() } else { 1 };
        for check in result.failed.iter().take(shown) {
            let _ = writeln!(out, "      {}: {}", check.subject, check.detail);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    //! Verify output: a toothless scenario lists its survivors, and counts align under long ids.

    use super::*;
    use crate::score::CheckKind;
    use crate::verify::{MutantKind, MutantResult, ScenarioMutants};

    fn result(killed: bool) -> MutantResult {
        MutantResult {
            kind: MutantKind::DropCall,
            description: "call 1 `crm_forecast` dropped".into(),
            killed,
            killed_by: if killed {
                vec![CheckKind::ToolSelection]
            } else {
                vec![]
            },
        }
    }

    #[test]
    fn survivors_of_a_toothless_scenario_are_listed() {
        let report = MutationReport {
            scenarios: vec![
                ScenarioMutants {
                    id: "T1-001".into(),
                    draft: false,
                    mutants: vec![result(true), result(true)],
                },
                ScenarioMutants {
                    id: "T1-002".into(),
                    draft: false,
                    mutants: vec![result(false)],
                },
            ],
        };
        assert_eq!(
            render_mutants(&report, false),
            "mutation check (broken trajectories the checks must fail):\n  \
             T1-001     2/2   killed\n  \
             T1-002     0/1   killed  <- kills nothing\n           \
             survived: call 1 `crm_forecast` dropped\n\
             killed 2/3 mutants (66.7%, goal 95%)\n\
             scenarios whose checks cannot fail: T1-002\n"
        );
        assert!(!report.holds());
        insta::assert_snapshot!(render_mutants(&report, true));
    }

    #[test]
    fn counts_line_up_under_ids_longer_than_eight_characters() {
        let report = MutationReport {
            scenarios: ["util_date_calc-edge", "admin_assign_role-edge"]
                .into_iter()
                .map(|id| ScenarioMutants {
                    id: id.into(),
                    draft: false,
                    mutants: vec![result(true)],
                })
                .collect(),
        };
        assert_eq!(
            render_mutants(&report, false),
            "mutation check (broken trajectories the checks must fail):\n  \
             util_date_calc-edge      1/1   killed\n  \
             admin_assign_role-edge   1/1   killed\n\
             killed 2/2 mutants (100.0%, goal 95%)\n"
        );
    }

    /// Issue #35: kills on drafts are not quality; they are counted apart from the headline.
    #[test]
    fn kills_on_drafts_are_counted_apart_from_the_headline_rate() {
        let scenario = |id: &str, draft: bool, killed: &[bool]| ScenarioMutants {
            id: id.into(),
            draft,
            mutants: killed.iter().map(|&k| result(k)).collect(),
        };
        let mixed = MutationReport {
            scenarios: vec![
                scenario("done-1", false, &[true, false]),
                scenario("draft-1", true, &[true, true, true]),
            ],
        };
        assert_eq!((mixed.killed(), mixed.total()), (1, 2));
        assert_eq!(mixed.drafts(), (3, 3));
        assert!(render_mutants(&mixed, false).ends_with(
            "killed 1/2 mutants (50.0%, goal 95%)\n\
             3 of 3 killed on draft scenarios: drafts are not evidence\n"
        ));
        let drafts_only = MutationReport {
            scenarios: vec![scenario("draft-1", true, &[true, false])],
        };
        assert!(render_mutants(&drafts_only, false).ends_with(
            "no finished scenario has mutants: the kill rate measures nothing yet\n\
             1 of 2 killed on draft scenarios: drafts are not evidence\n"
        ));
    }
}
