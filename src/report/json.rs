//! The results JSON and the verdict JSON.

use crate::gate::Verdict;
use crate::results::RunReport;

/// The results file: pretty JSON with a trailing newline.
pub(crate) fn render_results(report: &RunReport) -> String {
    crate::json::pretty(report)
}

/// `verdict.json`: the verdict as pretty JSON with a trailing newline, with the run's
/// `run_id` (see [`crate::results::RunMeta::run_id`]) when it has one.
pub(crate) fn render_verdict(verdict: &Verdict, run_id: Option<&str>) -> String {
    let mut value = serde_json::to_value(verdict).unwrap_or_default();
    if let (Some(id), Some(object)) = (run_id, value.as_object_mut()) {
        object.insert("run_id".to_owned(), serde_json::Value::from(id));
    }
    crate::json::pretty(&value)
}

#[cfg(test)]
mod tests {
    //! The results JSON: confused pairs point at the look-alike lint and read back unchanged.

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
