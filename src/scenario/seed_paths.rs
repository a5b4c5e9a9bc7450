//! The per-run seed placeholders of a scenario of the user's own servers: `{seed_dir}` (the
//! run's fresh temporary directory) and `{seed}` (the run's copy of its seed), filled in for
//! each run, and the run's real seed directory written back as `{seed_dir}` in its records.

use serde_json::{Map, Value};

use super::Scenario;

/// The placeholder of the run's seed directory.
pub const SEED_DIR: &str = "{seed_dir}";
/// The placeholder of the run's copy of its seed.
pub const SEED: &str = "{seed}";

/// A run's seed paths as text: the values of `{seed_dir}` and `{seed}`.
#[derive(Debug, Clone, Copy)]
pub struct SeedPaths<'a> {
    /// The run's seed directory (absolute, no trailing `/`).
    pub seed_dir: &'a str,
    /// The run's copy of its seed (under `seed_dir`).
    pub seed: &'a str,
}

impl SeedPaths<'_> {
    /// `text` with every `{seed_dir}` and `{seed}` replaced by the run's paths.
    pub fn fill(&self, text: &str) -> String {
        if !text.contains('{') {
            return text.to_owned();
        }
        text.replace(SEED_DIR, self.seed_dir)
            .replace(SEED, self.seed)
    }

    /// Every string of `value` (not the keys) filled as [`SeedPaths::fill`], in place.
    pub fn fill_value(&self, value: &mut Value) {
        map_strings(value, &|text| self.fill(text));
    }

    fn fill_map(&self, map: &mut Map<String, Value>) {
        map.values_mut().for_each(|value| self.fill_value(value));
    }
}

/// `text` with every occurrence of the run's seed directory `seed_dir` written as
/// `{seed_dir}` (so `{seed}` reads `{seed_dir}/<name>`): what records keep, independent of
/// the machine. An empty `seed_dir` changes nothing.
pub fn placeholder(text: &str, seed_dir: &str) -> String {
    if seed_dir.is_empty() || !text.contains(seed_dir) {
        return text.to_owned();
    }
    text.replace(seed_dir, SEED_DIR)
}

/// Every string of `value` (not the keys) written as [`placeholder`], in place.
pub fn placeholder_value(value: &mut Value, seed_dir: &str) {
    if !seed_dir.is_empty() {
        map_strings(value, &|text| placeholder(text, seed_dir));
    }
}

/// Every string of `value` (not the keys) replaced by `change` of it, in place, at any depth.
pub fn map_strings(value: &mut Value, change: &dyn Fn(&str) -> String) {
    match value {
        Value::String(text) => *text = change(text),
        Value::Array(items) => items.iter_mut().for_each(|item| map_strings(item, change)),
        Value::Object(map) => map.values_mut().for_each(|item| map_strings(item, change)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

impl Scenario {
    /// This scenario for one run with `paths`: `{seed_dir}` and `{seed}` filled in its
    /// `prompt`, scripted `user_turns` texts, `final_state_probes` arguments, the string
    /// values of each expected call's `args_match`, `args_accept` and `reference_args`,
    /// `forbidden_calls` `args_match`, and `reference_answer`. Everything else is kept.
    pub fn for_run(&self, paths: SeedPaths<'_>) -> Scenario {
        let mut run = self.clone();
        run.prompt = paths.fill(&run.prompt);
        for turn in &mut run.user_turns {
            turn.say = paths.fill(&turn.say);
            if let Some(reply) = &mut turn.reference_reply {
                *reply = paths.fill(reply);
            }
        }
        for probe in &mut run.final_state_probes {
            paths.fill_map(&mut probe.arguments);
        }
        for call in &mut run.expected_calls {
            paths.fill_map(&mut call.args_match);
            paths.fill_map(&mut call.args_accept);
            paths.fill_map(&mut call.reference_args);
        }
        for forbidden in &mut run.forbidden_calls {
            paths.fill_map(&mut forbidden.args_match);
        }
        if let Some(answer) = &mut run.reference_answer {
            *answer = paths.fill(answer);
        }
        run
    }
}

#[cfg(test)]
mod tests {
    //! Filling the seed placeholders and writing a run's seed directory back as one.

    use serde_json::json;

    use super::*;

    const PATHS: SeedPaths<'static> = SeedPaths {
        seed_dir: "/tmp/toolgate-run-ab12",
        seed: "/tmp/toolgate-run-ab12/repo",
    };

    #[test]
    fn both_placeholders_are_filled_in_text_and_nested_values() {
        assert_eq!(
            PATHS.fill("git log in {seed}; scratch in {seed_dir}/out"),
            "git log in /tmp/toolgate-run-ab12/repo; scratch in /tmp/toolgate-run-ab12/out"
        );
        let mut value =
            json!({"repo_path": "{seed}", "more": [{"p": "{seed_dir}/x"}, 3], "{seed}": 1});
        PATHS.fill_value(&mut value);
        assert_eq!(
            value,
            json!({"repo_path": "/tmp/toolgate-run-ab12/repo", "more": [{"p": "/tmp/toolgate-run-ab12/x"}, 3], "{seed}": 1})
        );
    }

    #[test]
    fn a_runs_seed_directory_is_written_back_as_the_placeholder() {
        let mut value = json!({"repo_path": "/tmp/toolgate-run-ab12/repo", "out": ["Repository at /tmp/toolgate-run-ab12/repo is clean", "/tmp/other"]});
        placeholder_value(&mut value, PATHS.seed_dir);
        assert_eq!(
            value,
            json!({"repo_path": "{seed_dir}/repo", "out": ["Repository at {seed_dir}/repo is clean", "/tmp/other"]})
        );
        assert_eq!(placeholder("/tmp/x", ""), "/tmp/x");
    }

    #[test]
    fn a_scenario_for_a_run_has_its_placeholders_filled_and_nothing_else_changed() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("G-001.yaml");
        std::fs::write(&path, "id: G-001\ntier: 1\ntype: single_call\nprompt: Log {seed}.\nexpected_calls:\n  - tool: git_log\n    args_match: {repo_path: '{seed}'}\n    args_accept: {max_count: [1, '{seed_dir}']}\n    reference_args: {note: '{seed_dir}/x'}\nforbidden_calls:\n  - tool: git_log\n    args_match: {repo_path: '{seed_dir}'}\nfinal_state_probes:\n  - tool: git_log\n    arguments: {repo_path: '{seed}'}\n    assertions: [\"result == baseline\"]\nreference_answer: The log of {seed}.\n").expect("writes");
        let tool = crate::catalog::ToolDef::from_server(
            "git",
            json!({"name": "git_log", "inputSchema": {"type": "object", "properties": {
                "repo_path": {"type": "string"}, "max_count": {}, "note": {"type": "string"}}}}),
        );
        let catalog = crate::catalog::Catalog::from_tools(vec![tool]);
        let scenario = super::super::load_file(&path, dir.path(), &catalog).expect("loads");
        let run = scenario.for_run(PATHS);
        let seed = PATHS.seed;
        assert_eq!(run.prompt, format!("Log {seed}."));
        let call = &run.expected_calls[0];
        assert_eq!(call.args_match["repo_path"], json!(seed));
        assert_eq!(call.args_accept["max_count"], json!([1, PATHS.seed_dir]));
        assert_eq!(
            call.reference_args["note"],
            json!("/tmp/toolgate-run-ab12/x")
        );
        assert_eq!(
            run.forbidden_calls[0].args_match["repo_path"],
            json!(PATHS.seed_dir)
        );
        assert_eq!(
            run.final_state_probes[0].arguments["repo_path"],
            json!(seed)
        );
        assert_eq!(run.reference_answer, Some(format!("The log of {seed}.")));
        assert_eq!(
            scenario.prompt, "Log {seed}.",
            "the loaded scenario is kept"
        );
        assert_eq!(run.id, scenario.id);
    }
}
