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

/// The errors of `instance` against the published schema `name`, one line each.
pub(crate) fn schema_errors(name: &str, instance: &Value) -> Vec<String> {
    let schema = printed(name);
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    validator
        .iter_errors(instance)
        .map(|error| format!("{}: {error}", error.instance_path()))
        .collect()
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

#[test]
fn every_shipped_scenario_config_and_catalog_validates() {
    let mut scenarios = Vec::new();
    files(&repo().join("scenarios"), &mut scenarios);
    for example in ["examples/own-servers", "examples/support-desk"] {
        files(&repo().join(example).join("scenarios"), &mut scenarios);
    }
    assert!(scenarios.len() >= 78 + 14 + 17, "{}", scenarios.len());
    for path in &scenarios {
        let errors = schema_errors("scenario", &yaml_or_json(path));
        assert_eq!(errors, Vec::<String>::new(), "{}", path.display());
    }
    for example in ["examples/own-servers", "examples/support-desk"] {
        let path = repo().join(example).join("toolgate.yaml");
        let errors = schema_errors("config", &yaml_or_json(&path));
        assert_eq!(errors, Vec::<String>::new(), "{}", path.display());
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

#[test]
fn the_schemas_refuse_what_the_parser_refuses() {
    let scenario = json!({
        "id": "T1-x", "tier": 1, "type": "single_call", "prompt": "p",
        "expected_calls": [{"tool": "t", "args_macth": {}}]
    });
    assert_eq!(
        schema_errors("scenario", &scenario),
        ["/expected_calls/0: Additional properties are not allowed ('args_macth' was unexpected)"]
    );
    let wrong_type = json!({
        "id": "T1-x", "tier": 1, "type": "single", "prompt": "p", "expected_calls": []
    });
    assert_eq!(schema_errors("scenario", &wrong_type).len(), 1);
    let config = json!({"agent": "gpt", "servers": {"db": {"command": "x", "argz": []}}});
    assert_eq!(
        schema_errors("config", &config).len(),
        2,
        "{:?}",
        schema_errors("config", &config)
    );
    assert_eq!(
        schema_errors("config", &json!({"servers": {"from": ".mcp.json"}})),
        Vec::<String>::new()
    );
    let two_replies = json!({"schema_version": 1, "rules": {"t": [{"return": 1, "error": "x"}]}});
    assert_eq!(schema_errors("mock-catalog", &two_replies).len(), 1);
    let two_effects = json!({"schema_version": 1, "rules": {"t": [{
        "return": 1,
        "insert": {"table": "a", "row": {}},
        "delete": {"table": "a", "where": {}}
    }]}});
    assert_eq!(schema_errors("mock-catalog", &two_effects).len(), 1);
    let misspelled = json!({"schema_version": 1, "rules": {"t": [{"retrun": 1}]}});
    assert!(!schema_errors("mock-catalog", &misspelled).is_empty());
    assert!(!schema_errors("mock-catalog", &json!({"schema_version": 2})).is_empty());
}
