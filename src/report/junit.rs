//! JUnit XML (via quick-junit) for CI systems that read test reports: GitLab, Jenkins,
//! Buildkite. One test suite per tier, one test case per scenario; a failed scenario is a
//! `<failure>` with its first failing check as the message, an errored one an `<error>`, an
//! inconclusive one (the user simulator made a mistake) `<skipped>` with the mistake. A
//! Tier 5 failure under an active quarantine is still a failure here: the quarantine changes
//! the gate, not the facts. Each case names its scenario file (`file`, relative to the
//! working directory as in annotations); with `--repeat`, each repetition is its own case,
//! named `ID (run K)`, and carries a `report` property: where that run is in the HTML
//! report (see [`crate::report::location`]).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use crate::gate::Verdict;
use crate::results::{RunReport, ScenarioResult};
use crate::score::Outcome;

/// Renders the run as JUnit XML; the verdict is a property of the report. `root` is the suite
/// root the scenario paths in the pins are relative to; `report_url` is where `report.html` is
/// published, if it is.
pub(crate) fn render(
    report: &RunReport,
    verdict: &Verdict,
    root: &Path,
    report_url: Option<&str>,
) -> String {
    let mut junit = Report::new("toolgate");
    let mut tiers: BTreeMap<u8, Vec<&ScenarioResult>> = BTreeMap::new();
    for result in &report.scenarios {
        tiers.entry(result.tier).or_default().push(result);
    }
    let mut total = Duration::ZERO;
    for (tier, results) in tiers {
        let mut suite = TestSuite::new(format!("tier {tier}"));
        suite.add_property(("verdict", verdict.decision.as_str()));
        if let Some(id) = report.run.as_ref().and_then(|run| run.run_id.as_deref()) {
            suite.add_property(("run_id", id));
        }
        let mut time = Duration::ZERO;
        let repeated = |id: &str| report.scenarios.iter().filter(|r| r.id == id).count() > 1;
        for result in results {
            let mut case = case(result);
            case.add_property((
                "report",
                super::location(report_url, &result.id, Some(result.repeat)).as_str(),
            ));
            if repeated(&result.id) {
                // One test case per repetition, each with its own name.
                case.name = format!("{} (run {})", result.id, result.repeat + 1).into();
            }
            let file = report
                .pins
                .as_ref()
                .and_then(|pins| pins.scenarios.get(&result.id));
            if let Some(pinned) = file {
                case.extra.insert(
                    "file".into(),
                    super::github::repository_path(root, &pinned.path).into(),
                );
            }
            time += Duration::from_millis(result.duration_ms);
            suite.add_test_case(case);
        }
        suite.set_time(time);
        total += time;
        junit.add_test_suite(suite);
    }
    junit.set_time(total);
    junit
        .to_string()
        .expect("JUnit serialization writes to memory and cannot fail")
}

fn case(result: &ScenarioResult) -> TestCase {
    let status = match result.outcome {
        Outcome::Pass | Outcome::Degraded => TestCaseStatus::success(),
        Outcome::Fail => {
            let failing: Vec<String> = result
                .checks
                .iter()
                .filter(|c| !c.passed)
                .map(|c| format!("{}: {}", c.subject, c.detail))
                .collect();
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status
                .set_message(failing.first().cloned().unwrap_or_else(|| "failed".into()))
                .set_type("check")
                .set_description(failing.join("\n"));
            status
        }
        Outcome::Errored => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
            status
                .set_message(result.error.clone().unwrap_or_else(|| "errored".into()))
                .set_type("errored");
            status
        }
        // Neither a pass nor a failure of the agent: skipped, with the simulator's mistake.
        Outcome::Inconclusive => {
            let mut status = TestCaseStatus::skipped();
            status.set_message(
                result
                    .error
                    .clone()
                    .unwrap_or_else(|| "inconclusive".into()),
            );
            status.set_type("inconclusive");
            status
        }
    };
    let mut case = TestCase::new(result.id.clone(), status);
    case.set_classname(format!(
        "toolgate.tier{}.{}",
        result.tier,
        result.kind.as_str()
    ))
    .set_time(Duration::from_millis(result.duration_ms));
    case
}

#[cfg(test)]
mod tests {
    //! JUnit: a suite per tier, a case per repetition, a failure with its first failing check.

    use super::*;
    use crate::report::sample;

    #[test]
    fn junit_has_a_suite_per_tier_and_failures_with_their_first_check() {
        insta::assert_snapshot!(render(
            &sample::current(),
            &sample::verdict(),
            Path::new("evals"),
            None
        ));
    }

    #[test]
    fn each_repetition_is_its_own_case_with_its_own_name() {
        let mut report = sample::current();
        let mut again = report.scenarios[0].clone();
        again.repeat = 1;
        report.scenarios.insert(1, again);
        let xml = render(
            &report,
            &sample::verdict(),
            Path::new("."),
            Some("https://r.example/report.html"),
        );
        let id = &report.scenarios[0].id;
        assert!(xml.contains(&format!("name=\"{id} (run 1)\"")), "{xml}");
        assert!(xml.contains(&format!("name=\"{id} (run 2)\"")), "{xml}");
        assert!(
            xml.contains(&format!(
                "<property name=\"report\" value=\"https://r.example/report.html#s-{id}~1\"/>"
            )),
            "{xml}"
        );
        let other = &report.scenarios[2].id;
        assert!(xml.contains(&format!("name=\"{other}\"")), "{xml}");
    }
}
