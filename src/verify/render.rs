//! `toolgate verify` output as text.

use std::fmt::Write as _;

use super::{MutationReport, REQUIRED_KILL_RATE, TrajectoryReport};

/// Per scenario: mutants killed of those judged, then the survivors (all of them with
/// `verbose`, else only for scenarios that kill none) and, under replay, the mutants not
/// judged (with `verbose`); then the overall kill rate against the goal, and how many mutants
/// a replay could not judge.
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
    let toothless = report.toothless();
    for scenario in &report.scenarios {
        let killed = scenario.killed();
        let judged = scenario.judged();
        let lacking = scenario.mutants.len() - judged;
        let dull = toothless.contains(&scenario.id.as_str());
        let mark = if dull { "  <- kills nothing" } else { "" };
        let apart = match lacking {
            0 => String::new(),
            n => format!(" ({n} not judged)"),
        };
        let _ = writeln!(
            out,
            "  {:<width$} {killed:>3}/{judged:<3} killed{apart}{mark}",
            scenario.id
        );
        if verbose || dull {
            for survivor in scenario.survivors() {
                let _ = writeln!(out, "           survived: {}", survivor.description);
            }
        }
        if verbose {
            for mutant in scenario.not_judged() {
                let why = mutant.not_judged.as_deref().unwrap_or_default();
                let _ = writeln!(out, "           not judged: {}: {why}", mutant.description);
            }
        }
    }
    let (draft_killed, draft_total) = report.drafts();
    if report.total() > 0 || draft_total == 0 {
        let _ = writeln!(
            out,
            "killed {}/{} mutants ({:.1}%, goal {:.0}%)",
            report.killed(),
            report.judged(),
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
    let lacking = report.total() - report.judged();
    if lacking > 0 {
        let _ = writeln!(
            out,
            "{lacking} mutants need calls the recording lacks: not judged under replay (the kill rate is over the {} judged; record them live, or verify against the live servers)",
            report.judged()
        );
    }
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
    if total.not_judged > 0 {
        let _ = writeln!(
            out,
            "  {} of them need calls the recording lacks: not judged under replay",
            total.not_judged
        );
    }
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
            not_judged: None,
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

    #[test]
    fn mutants_a_replay_cannot_judge_are_left_out_of_the_kill_rate_and_counted_apart() {
        let lacking = MutantResult {
            description: "call 2 `add_observations`: `contents` changed".into(),
            not_judged: Some("not evidence under replay: the agent's calls differ".into()),
            ..result(false)
        };
        let report = MutationReport {
            scenarios: vec![
                ScenarioMutants {
                    id: "OS-001".into(),
                    draft: false,
                    mutants: vec![result(true), result(true), lacking.clone()],
                },
                ScenarioMutants {
                    id: "OS-002".into(),
                    draft: false,
                    mutants: vec![lacking],
                },
            ],
        };
        assert_eq!(report.total(), 4);
        assert_eq!(report.judged(), 2);
        assert_eq!(report.kill_rate(), 1.0);
        // A scenario whose every mutant is unjudged is not toothless: nothing says so.
        assert!(report.toothless().is_empty());
        assert!(report.holds());
        assert_eq!(
            render_mutants(&report, true),
            "mutation check (broken trajectories the checks must fail):\n  \
             OS-001     2/2   killed (1 not judged)\n           \
             not judged: call 2 `add_observations`: `contents` changed: not evidence under replay: the agent's calls differ\n  \
             OS-002     0/0   killed (1 not judged)\n           \
             not judged: call 2 `add_observations`: `contents` changed: not evidence under replay: the agent's calls differ\n\
             killed 2/2 mutants (100.0%, goal 95%)\n\
             2 mutants need calls the recording lacks: not judged under replay (the kill rate is over the 2 judged; record them live, or verify against the live servers)\n"
        );
    }
}
