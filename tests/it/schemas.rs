//! The published JSON Schemas (`schemas/`, `toolgate schema`): the files in the tree are what
//! the binary prints, and every file the repository ships validates against its schema.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::{output, repo, toolgate};

/// The schema `name` as `toolgate schema NAME` prints it.
fn printed(name: &str) -> Value {
    let mut command = toolgate();
    command.args(["schema", name]);
    let (code, stdout, stderr) = output(command);
    assert_eq!(code, 0, "{stderr}");
    serde_json::from_str(&stdout).expect("a schema is JSON")
}

/// A validator for the published schema `name`, built once per use site (each build runs
/// the binary).
fn validator(name: &str) -> jsonschema::Validator {
    jsonschema::validator_for(&printed(name)).expect("a valid schema")
}

/// The errors of `instance` against `validator`, one line each.
fn errors(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|error| format!("{}: {error}", error.instance_path()))
        .collect()
}

/// The errors of `instance` against the published schema `name`, one line each.
pub(crate) fn schema_errors(name: &str, instance: &Value) -> Vec<String> {
    errors(&validator(name), instance)
}

fn yaml_or_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("reads");
    serde_saphyr::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable directory") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            files(&path, out);
        } else if path
            .extension()
            .is_some_and(|ext| ext == "yaml" || ext == "yml" || ext == "json")
        {
            out.push(path);
        }
    }
}

#[test]
fn the_schemas_in_the_tree_are_the_ones_the_binary_prints() {
    let mut command = toolgate();
    command.arg("schema");
    let (code, listing, _) = output(command);
    assert_eq!(code, 0);
    let names: Vec<&str> = listing
        .lines()
        .map(|line| line.split_whitespace().next().expect("a name"))
        .collect();
    assert_eq!(
        names,
        ["scenario", "config", "mock-catalog", "results", "verdict"]
    );
    for name in names {
        let path = repo().join(format!("schemas/{name}.schema.json"));
        let kept: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("kept")).expect("JSON");
        assert!(
            kept == printed(name),
            "{} differs from `toolgate schema {name}`; regenerate with \
             `cargo run -- schema --write schemas`",
            path.display()
        );
    }
}

#[test]
fn an_unknown_schema_name_is_an_error_listing_the_names() {
    let mut command = toolgate();
    command.args(["schema", "scenarios"]);
    let (code, _, stderr) = output(command);
    assert_eq!(code, 2);
    assert_eq!(
        stderr.trim_end(),
        "error: no schema called `scenarios`; the schemas are scenario, config, mock-catalog, \
         results, verdict"
    );
}

/// The example suites the repository ships, each with `toolgate.yaml` and `scenarios/`.
const EXAMPLE_SUITES: [&str; 4] = [
    "examples/own-servers",
    "examples/support-desk",
    "examples/duckdb",
    "examples/git",
];

#[test]
fn every_shipped_scenario_config_and_catalog_validates() {
    let mut scenarios = Vec::new();
    files(&repo().join("scenarios"), &mut scenarios);
    for example in EXAMPLE_SUITES {
        files(&repo().join(example).join("scenarios"), &mut scenarios);
    }
    assert!(
        scenarios.len() >= 78 + 14 + 17 + 8 + 8,
        "{}",
        scenarios.len()
    );
    let scenario = validator("scenario");
    for path in &scenarios {
        let found = errors(&scenario, &yaml_or_json(path));
        assert_eq!(found, Vec::<String>::new(), "{}", path.display());
    }
    let config = validator("config");
    for example in EXAMPLE_SUITES {
        let path = repo().join(example).join("toolgate.yaml");
        let found = errors(&config, &yaml_or_json(&path));
        assert_eq!(found, Vec::<String>::new(), "{}", path.display());
    }
    let catalog = repo().join("examples/support-desk/mocks.yaml");
    assert_eq!(
        schema_errors("mock-catalog", &yaml_or_json(&catalog)),
        Vec::<String>::new()
    );
    let baseline: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("baseline.json")).expect("the shipped baseline"),
    )
    .expect("JSON");
    assert_eq!(schema_errors("results", &baseline), Vec::<String>::new());
}

/// Where each error of `instance` against `validator` is: its instance paths.
fn error_paths(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|error| error.instance_path().to_string())
        .collect()
}

#[test]
fn the_schemas_refuse_what_the_parser_refuses() {
    let scenario = validator("scenario");
    let misspelled = json!({
        "id": "T1-x", "tier": 1, "type": "single_call", "prompt": "p",
        "expected_calls": [{"tool": "t", "args_macth": {}}]
    });
    assert_eq!(
        errors(&scenario, &misspelled),
        ["/expected_calls/0: Additional properties are not allowed ('args_macth' was unexpected)"]
    );
    let wrong_type = json!({
        "id": "T1-x", "tier": 1, "type": "single", "prompt": "p", "expected_calls": []
    });
    assert_eq!(error_paths(&scenario, &wrong_type), ["/type"]);

    let config = validator("config");
    let bad = json!({"agent": "gpt", "servers": {"db": {"command": "x", "argz": []}}});
    assert_eq!(error_paths(&config, &bad), ["/agent", "/servers"]);
    let from = json!({"servers": {"from": ".mcp.json"}});
    assert_eq!(errors(&config, &from), Vec::<String>::new());

    let catalog = validator("mock-catalog");
    let two_replies = json!({"schema_version": 1, "rules": {"t": [{"return": 1, "error": "x"}]}});
    assert_eq!(error_paths(&catalog, &two_replies), ["/rules/t/0"]);
    let two_effects = json!({"schema_version": 1, "rules": {"t": [{
        "return": 1,
        "insert": {"table": "a", "row": {}},
        "delete": {"table": "a", "where": {}}
    }]}});
    assert_eq!(error_paths(&catalog, &two_effects), ["/rules/t/0"]);
    let misspelled_rule = json!({"schema_version": 1, "rules": {"t": [{"retrun": 1}]}});
    assert!(
        error_paths(&catalog, &misspelled_rule)
            .iter()
            .all(|path| path == "/rules/t/0")
    );
    assert!(!error_paths(&catalog, &misspelled_rule).is_empty());
    assert_eq!(
        error_paths(&catalog, &json!({"schema_version": 2})),
        ["/schema_version"]
    );
}
