//! The results JSON and the trace as JSON Lines.

use crate::results::RunReport;
use crate::runner::ScenarioRun;
use crate::scenario::Scenario;
use crate::trace::TraceLine;

/// The results file: pretty JSON with a trailing newline.
pub fn render_results(report: &RunReport) -> String {
    crate::json::pretty(report)
}

/// The trace: one [`TraceLine`] per tool call, then one final-answer line when the agent gave
/// one; runs in suite order and calls in arrival order. `toolgate gate --agent replay` reads
/// it back.
pub fn render_trace(scenarios: &[Scenario], runs: &[ScenarioRun]) -> String {
    let mut text = String::new();
    for run in runs {
        let Some(scenario) = scenarios.get(run.index) else {
            continue;
        };
        for call in &run.trace {
            text.push_str(&TraceLine::call(&scenario.id, run.repeat, call).render());
            text.push('\n');
        }
        if let Some(answer) = run.agent.as_ref().and_then(|a| a.final_answer.as_ref()) {
            text.push_str(&TraceLine::answer(&scenario.id, run.repeat, answer).render());
            text.push('\n');
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sample;

    #[test]
    fn results_json_points_confused_pairs_at_the_look_alike_lint() {
        let text = render_results(&sample::current());
        let value: serde_json::Value = serde_json::from_str(&text).expect("the results are JSON");
        insta::assert_json_snapshot!(value["confused_pairs"]);
        let read = RunReport::parse(&text, std::path::Path::new("results.json"))
            .expect("the results read back");
        assert_eq!(read.confused_pairs, sample::confused_pairs());
    }
}
