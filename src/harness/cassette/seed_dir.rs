//! A run's seed directory in cassettes: recorded as the literal `{seed_dir}`, matched against
//! and filled with the replaying run's own seed directory, so a cassette recorded on one
//! machine replays on another.

use serde_json::{Map, Value};

use super::{Interaction, RecordedAnswer};
use crate::scenario::{SEED_DIR, map_strings, placeholder};

impl Interaction {
    /// This interaction with the run's seed directory `seed_dir` written as `{seed_dir}` in
    /// its arguments and answer; unchanged when `seed_dir` is empty.
    pub(super) fn with_seed_placeholder(mut self, seed_dir: &str) -> Interaction {
        if seed_dir.is_empty() {
            return self;
        }
        self.arguments = arguments_as_recorded(&self.arguments, seed_dir);
        self.answer = answer_as_recorded(self.answer, seed_dir);
        self
    }
}

/// `answer` with the run's `seed_dir` written as `{seed_dir}`, as a cassette stores it;
/// unchanged when `seed_dir` is empty.
pub(super) fn answer_as_recorded(answer: RecordedAnswer, seed_dir: &str) -> RecordedAnswer {
    if seed_dir.is_empty() {
        return answer;
    }
    map_answer(answer, &|text| placeholder(text, seed_dir))
}

/// Recorded `arguments` with `{seed_dir}` filled with the live run's `seed_dir`, to send them
/// again (`cassette verify`); unchanged when `seed_dir` is empty.
pub(super) fn arguments_for_run(
    arguments: &Map<String, Value>,
    seed_dir: &str,
) -> Map<String, Value> {
    if seed_dir.is_empty() {
        return arguments.clone();
    }
    map_arguments(arguments, &|text| text.replace(SEED_DIR, seed_dir))
}

/// A replayed call's `arguments` with the replaying run's `seed_dir` written as `{seed_dir}`,
/// as the recording wrote them; for matching.
pub(super) fn arguments_as_recorded(
    arguments: &Map<String, Value>,
    seed_dir: &str,
) -> Map<String, Value> {
    if seed_dir.is_empty() {
        return arguments.clone();
    }
    map_arguments(arguments, &|text| placeholder(text, seed_dir))
}

/// A recorded answer with `{seed_dir}` filled with the replaying run's `seed_dir`.
/// Unchanged when `seed_dir` is empty (a replay without a seed directory).
pub(super) fn answer_for_run(answer: RecordedAnswer, seed_dir: &str) -> RecordedAnswer {
    if seed_dir.is_empty() {
        return answer;
    }
    map_answer(answer, &|text| text.replace(SEED_DIR, seed_dir))
}

/// `arguments` with every string, at any depth, replaced by `change` of it.
fn map_arguments(
    arguments: &Map<String, Value>,
    change: &dyn Fn(&str) -> String,
) -> Map<String, Value> {
    let mut arguments = arguments.clone();
    arguments
        .values_mut()
        .for_each(|value| map_strings(value, change));
    arguments
}

/// `answer` with every string it holds replaced by `change` of it.
fn map_answer(answer: RecordedAnswer, change: &dyn Fn(&str) -> String) -> RecordedAnswer {
    match answer {
        RecordedAnswer::Result(mut value) => {
            map_strings(&mut value, change);
            RecordedAnswer::Result(value)
        }
        RecordedAnswer::Text(text) => RecordedAnswer::Text(change(&text)),
        RecordedAnswer::ToolError(text) => RecordedAnswer::ToolError(change(&text)),
        RecordedAnswer::ProtocolError(text) => RecordedAnswer::ProtocolError(change(&text)),
    }
}

#[cfg(test)]
mod tests {
    //! A cassette line keeps `{seed_dir}`; a replay matches and fills it with its own path.

    use serde_json::json;

    use super::*;

    #[test]
    fn a_recorded_seed_dir_round_trips_to_another_runs_directory() {
        let recorded = Interaction {
            seq: 1,
            server: "git".into(),
            tool: "git_status".into(),
            arguments: json!({"repo_path": "/tmp/run-a/repo"})
                .as_object()
                .cloned()
                .expect("an object"),
            answer: RecordedAnswer::Text("Repository status at /tmp/run-a/repo: clean".into()),
            latency_us: 5,
        }
        .with_seed_placeholder("/tmp/run-a");
        assert_eq!(recorded.arguments["repo_path"], json!("{seed_dir}/repo"));
        let replayed = arguments_as_recorded(
            json!({"repo_path": "/tmp/run-b/repo"})
                .as_object()
                .expect("an object"),
            "/tmp/run-b",
        );
        assert_eq!(replayed, recorded.arguments);
        assert_eq!(
            answer_for_run(recorded.answer, "/tmp/run-b"),
            RecordedAnswer::Text("Repository status at /tmp/run-b/repo: clean".into())
        );
    }
}
