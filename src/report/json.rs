//! The results JSON and the trace as JSON Lines.

use serde_json::json;

use crate::results::RunReport;
use crate::runner::ScenarioRun;
use crate::scenario::Scenario;

/// The results file: pretty JSON with a trailing newline.
pub fn render_results(report: &RunReport) -> String {
    let mut text = serde_json::to_string_pretty(report).expect("results serialize: plain data");
    text.push('\n');
    text
}

/// The trace: one JSON object per tool call, `{"scenario": id, ...call}`, scenarios in suite
/// order and calls in arrival order.
pub fn render_trace(scenarios: &[Scenario], runs: &[ScenarioRun]) -> String {
    let mut text = String::new();
    for (scenario, run) in scenarios.iter().zip(runs) {
        for call in &run.trace {
            let mut line = json!({ "scenario": scenario.id });
            if let (Some(line), Ok(serde_json::Value::Object(call))) =
                (line.as_object_mut(), serde_json::to_value(call))
            {
                line.extend(call);
            }
            text.push_str(&line.to_string());
            text.push('\n');
        }
    }
    text
}
