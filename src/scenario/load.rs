//! Reading scenario files (YAML or JSON, one file or a folder) and faults files; the checks
//! against the catalog and the fixtures are in `validate`.
//!
//! Every problem is reported with the file, the field path and, where the text shows it, the
//! line; all problems of a suite are reported together so that one run shows them all.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

use super::file::{FaultFile, ScenarioFile};
use super::fixture::Fixtures;
use super::{Fault, Scenario};
use crate::catalog::Catalog;

use super::validate::{Problems, validate, validate_fault};

/// Loads every `*.json`, `*.yaml` and `*.yml` file under `dir` (recursively, in path order)
/// and validates it. Fixture paths resolve against `root`.
///
/// Errors: an unreadable directory, or any invalid file; the error lists every problem found
/// in every file, and duplicate ids across files.
pub fn load_dir(dir: &Path, root: &Path, catalog: &Catalog) -> Result<Vec<Scenario>> {
    let mut paths = Vec::new();
    collect_files(dir, &mut paths)
        .with_context(|| format!("failed to read scenario directory `{}`", dir.display()))?;
    paths.sort();
    if paths.is_empty() {
        bail!(
            "no scenario files (*.json, *.yaml, *.yml) in `{}`",
            dir.display()
        );
    }
    let mut scenarios = Vec::new();
    let mut problems = String::new();
    let mut fixtures = Fixtures::default();
    for path in &paths {
        match load_file_with(path, root, catalog, &mut fixtures) {
            Ok(scenario) => scenarios.push(scenario),
            Err(error) => {
                let _ = writeln!(problems, "{error:#}");
            }
        }
    }
    let mut seen: BTreeMap<&str, &Path> = BTreeMap::new();
    for scenario in &scenarios {
        if let Some(first) = seen.insert(&scenario.id, &scenario.path) {
            let _ = writeln!(
                problems,
                "`{}`: id: `{}` is already used by `{}`",
                scenario.path.display(),
                scenario.id,
                first.display()
            );
        }
    }
    if !problems.is_empty() {
        bail!("invalid scenarios:\n{}", problems.trim_end());
    }
    Ok(scenarios)
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_files(&path, out)?;
        } else if matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("json" | "yaml" | "yml")
        ) {
            out.push(path);
        }
    }
    Ok(())
}

/// Loads and validates one scenario file; fixture paths resolve against `root`.
///
/// Errors name the file, then the field path (`expected_calls[1].tool`), then the line where
/// the text shows it.
pub fn load_file(path: &Path, root: &Path, catalog: &Catalog) -> Result<Scenario> {
    load_file_with(path, root, catalog, &mut Fixtures::default())
}

/// [`load_file`], reading fixtures through `fixtures` (shared by the files of one suite).
fn load_file_with(
    path: &Path,
    root: &Path,
    catalog: &Catalog,
    fixtures: &mut Fixtures,
) -> Result<Scenario> {
    let text = crate::fs::read_text(path, "scenario", crate::defaults::MAX_SMALL_FILE_BYTES)?;
    parse_with(&text, path, root, catalog, fixtures)
}

/// Parses and validates scenario text as if read from `path`: its extension picks YAML
/// (`.yaml`, `.yml`) or JSON, and it names the file in errors. Errors as [`load_file`].
pub fn parse(text: &str, path: &Path, root: &Path, catalog: &Catalog) -> Result<Scenario> {
    parse_with(text, path, root, catalog, &mut Fixtures::default())
}

fn parse_with(
    text: &str,
    path: &Path,
    root: &Path,
    catalog: &Catalog,
    fixtures: &mut Fixtures,
) -> Result<Scenario> {
    let raw: ScenarioFile = parse_document(text, path)?;
    let mut problems = Problems {
        path,
        text,
        list: Vec::new(),
    };
    let scenario = validate(raw, path, root, catalog, fixtures, &mut problems);
    match scenario {
        Some(scenario) if problems.list.is_empty() => Ok(scenario),
        _ => bail!("{}", problems.list.join("\n")),
    }
}

/// Parses a YAML (`.yaml`, `.yml`) or else JSON document read from `path` into `T`. Errors
/// name the file, then for JSON the field path (`expected_calls[1].tool: ...`, with line and
/// column), for YAML the line and column with the offending line.
pub fn parse_document<T: serde::de::DeserializeOwned>(text: &str, path: &Path) -> Result<T> {
    let is_yaml = matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml")
    );
    if is_yaml {
        serde_saphyr::from_str(text)
            .map_err(|error| anyhow::anyhow!("`{}`: {error}", path.display()))
    } else {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
            let field = error.path().to_string();
            let inner = error.into_inner();
            if field == "." {
                anyhow::anyhow!("`{}`: {inner}", path.display())
            } else {
                anyhow::anyhow!("`{}`: {field}: {inner}", path.display())
            }
        })
    }
}

/// A faults file, as `toolgate proxy --faults` reads it: `fault_injection:` entries exactly
/// as in a scenario.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FaultsFile {
    fault_injection: Vec<FaultFile>,
}

/// Reads a faults file (YAML or JSON, `fault_injection: [...]`) whose tools are in `catalog`.
///
/// Errors name the file and the field (with line): unreadable, misspelled keys, an unknown
/// tool, an `on_call` or `times` below 1.
pub fn load_faults(path: &Path, catalog: &Catalog) -> Result<Vec<Fault>> {
    let text = crate::fs::read_text(path, "faults file", crate::defaults::MAX_SMALL_FILE_BYTES)?;
    let raw: FaultsFile = parse_document(&text, path)?;
    let mut problems = Problems {
        path,
        text: &text,
        list: Vec::new(),
    };
    let faults: Vec<Fault> = raw
        .fault_injection
        .into_iter()
        .enumerate()
        .filter_map(|(index, fault)| validate_fault(index, fault, catalog, &mut problems))
        .collect();
    if !problems.list.is_empty() {
        bail!("{}", problems.list.join("\n"));
    }
    Ok(faults)
}

#[cfg(test)]
mod tests {
    //! Loading scenarios: each mistake in a scenario file fails the load, naming the field.

    use serde_json::{Value, json};

    use super::*;
    use crate::scenario::{ElicitationAction, ElicitationReply};

    fn load_yaml(text: &str) -> Result<Scenario> {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("T9-001.yaml");
        std::fs::write(&path, text).expect("write");
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        load_file(&path, root, Catalog::builtin()).map_err(|error| {
            let message = error
                .to_string()
                .replace(&path.display().to_string(), "FILE");
            anyhow::anyhow!(message)
        })
    }

    /// A suite of thousands of copies of the shipped scenarios held a parsed copy of its
    /// fixture per scenario (1.15 GB at 7,800 scenarios); one suite shares one per file.
    #[test]
    fn scenarios_of_one_suite_share_each_fixture_and_a_broken_one_fails_each_naming_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let scenario = |id: &str, fixture: &str| {
            format!(
                "id: {id}\ntier: 1\ntype: single_call\nprompt: Hi.\nseed_state: {fixture}\nexpected_calls: []\n"
            )
        };
        for (id, fixture) in [
            ("T9-001", "fixtures/enterprise.json"),
            ("T9-002", "fixtures/enterprise.json"),
            ("T9-003", "fixtures/crm_baseline.json"),
        ] {
            std::fs::write(dir.path().join(format!("{id}.yaml")), scenario(id, fixture))
                .expect("write");
        }
        let loaded = load_dir(dir.path(), root, Catalog::builtin()).expect("valid suite");
        assert!(std::sync::Arc::ptr_eq(&loaded[0].seeded, &loaded[1].seeded));
        assert!(!std::sync::Arc::ptr_eq(
            &loaded[0].seeded,
            &loaded[2].seeded
        ));
        assert!(loaded[0].seeded.get("contacts").is_some());

        for id in ["T9-004", "T9-005"] {
            std::fs::write(
                dir.path().join(format!("{id}.yaml")),
                scenario(id, "Cargo.toml"),
            )
            .expect("write");
        }
        let error = load_dir(dir.path(), root, Catalog::builtin())
            .expect_err("Cargo.toml is no fixture")
            .to_string();
        assert_eq!(
            error.matches("fixture `").count(),
            2,
            "each scenario naming the broken fixture reports it: {error}"
        );
        assert!(error.contains("Cargo.toml` is not valid JSON"), "{error}");
    }

    /// Loads `text` against a catalog of one server `memory` with `search` and `read`.
    fn load_server_yaml(text: &str) -> Result<Scenario> {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("M-001.yaml");
        std::fs::write(&path, text).expect("write");
        std::fs::write(dir.path().join("seed.jsonl"), "").expect("write");
        let tool = |name: &str| {
            crate::catalog::ToolDef::from_server(
                "memory",
                serde_json::json!({"name": name, "inputSchema": {"type": "object",
                    "properties": {"query": {"type": "string"}}}}),
            )
        };
        let catalog = Catalog::from_tools(vec![tool("search"), tool("read")]);
        load_file(&path, dir.path(), &catalog).map_err(|error| {
            let message = error
                .to_string()
                .replace(&dir.path().display().to_string(), "DIR");
            anyhow::anyhow!(message)
        })
    }

    const SERVER_HEAD: &str = "id: M-001\ntier: 1\ntype: single_call\nprompt: Find Ada.\nexpected_calls:\n  - tool: search\n";

    #[test]
    fn a_server_scenario_has_a_seed_path_probes_and_its_server_as_group() {
        let text = format!(
            "{SERVER_HEAD}seed_path: seed.jsonl\nforbidden_calls: [{{tool: read}}]\nblock_forbidden: true\nfinal_state_probes:\n  - tool: read\n    arguments: {{query: Ada}}\n    assertions: [\"result.count == baseline\"]\n"
        );
        let scenario = load_server_yaml(&text).expect("valid");
        assert_eq!(scenario.group, "memory");
        assert!(scenario.block_forbidden);
        assert_eq!(scenario.seed_state, None);
        assert!(
            scenario
                .seed_path
                .is_some_and(|p| p.ends_with("seed.jsonl"))
        );
        assert_eq!(scenario.final_state_probes.len(), 1);
        assert_eq!(
            scenario.final_state_probes[0].assertions[0].source(),
            "result.count == baseline"
        );
    }

    #[test]
    fn server_scenario_mistakes_name_the_field() {
        let text = format!(
            "{SERVER_HEAD}seed_path: nope.jsonl\nseed_state: fixtures/enterprise.json\nfinal_state_assertions: [\"x == 1\"]\nblock_forbidden: true\nfinal_state_probes:\n  - tool: raed\n    assertions: []\n  - tool: read\n    arguments: {{q: 1}}\n    assertions: [\"state.count == 1\"]\n"
        );
        let error = load_server_yaml(&text).expect_err("invalid").to_string();
        let lines: Vec<&str> = error.lines().collect();
        assert_eq!(
            lines,
            [
                "`DIR/M-001.yaml`: seed_path (line 7): `DIR/nope.jsonl` does not exist (seed paths are relative to the suite root `DIR`)",
                "`DIR/M-001.yaml`: seed_state (line 8): seeds the built-in world, which a suite of your own servers does not use; seed the servers with `seed_path`",
                "`DIR/M-001.yaml`: final_state_assertions: read the built-in world's state, which toolgate cannot see in your own servers; use `final_state_probes`",
                "`DIR/M-001.yaml`: final_state_probes[0].tool (line 12): unknown tool `raed` (did you mean `read`?)",
                "`DIR/M-001.yaml`: final_state_probes[1].arguments.q (line 15): `read` has no argument `q`",
                "`DIR/M-001.yaml`: final_state_probes[1].assertions[0] (line 16): unknown name `state` in assertion `state.count == 1`; known names: `result`",
                "`DIR/M-001.yaml`: block_forbidden: has no effect without `forbidden_calls`",
            ]
        );
    }

    #[test]
    fn the_built_in_world_needs_a_seed_state_and_takes_no_seed_path() {
        let text = "id: T9-002\ntier: 1\ntype: single_call\nprompt: Hi.\nseed_path: fixtures\nexpected_calls: []\n";
        assert_eq!(
            load_yaml(text).expect_err("invalid").to_string(),
            "`FILE`: seed_state: is required (the built-in world's fixture)\n`FILE`: seed_path (line 5): is only for suites of your own servers (`servers:` in toolgate.yaml); the built-in world is seeded by `seed_state`"
        );
    }

    const HEAD: &str = "id: T9-001\ntier: 5\ntype: single_call\nprompt: Delete everything.\nseed_state: fixtures/enterprise.json\n";

    fn load_json(text: &str) -> Result<Scenario> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        parse(text, Path::new("FILE.json"), root, Catalog::builtin())
    }

    const JSON_HEAD: &str = r#"{"id": "T9-001", "tier": 5, "type": "single_call", "prompt": "Find Ada.",
        "seed_state": "fixtures/enterprise.json","#;

    #[test]
    fn a_key_repeated_at_any_depth_of_args_match_fails_the_load() {
        let nested = format!(
            r#"{JSON_HEAD} "expected_calls": [{{"tool": "crm_search_contacts",
            "args_match": {{"query": "Ada", "filters": {{"city": "Oslo", "city": "Rome"}}}}}}]}}"#
        );
        assert_eq!(
            load_json(&nested).expect_err("duplicate key").to_string(),
            "`FILE.json`: expected_calls[0].args_match.filters: duplicate key `city` at line 3 column 86"
        );
        let yaml = format!(
            "{HEAD}expected_calls:\n  - tool: crm_search_contacts\n    args_match:\n      query: Ada\n      query: Bob\n"
        );
        let message = load_yaml(&yaml).expect_err("duplicate key").to_string();
        assert!(message.contains("query"), "{message}");
        assert!(message.to_lowercase().contains("duplicate"), "{message}");
    }

    #[test]
    fn counts_beyond_u32_say_too_large_and_integer_valued_floats_are_counts() {
        let huge = format!(
            r#"{JSON_HEAD} "expected_calls": [], "max_calls": 99999999999999999999,
            "max_failures": 4294967296}}"#
        );
        assert_eq!(
            load_json(&huge).expect_err("too large").to_string(),
            "`FILE.json`: max_calls: must be at most 4294967295, got 100000000000000000000\n\
             `FILE.json`: max_failures: must be at most 4294967295, got 4294967296"
        );
        let negative = format!(r#"{JSON_HEAD} "expected_calls": [], "max_calls": -1}}"#);
        assert_eq!(
            load_json(&negative).expect_err("negative").to_string(),
            "`FILE.json`: max_calls: must be 0 or more, got -1"
        );
        let float = format!(r#"{JSON_HEAD} "expected_calls": [], "max_calls": 3.0}}"#);
        assert_eq!(load_json(&float).expect("3.0 is 3").max_calls, Some(3));
        let fraction = format!(r#"{JSON_HEAD} "expected_calls": [], "max_calls": 2.5}}"#);
        let message = load_json(&fraction).expect_err("2.5").to_string();
        assert!(
            message.contains("max_calls: expected a whole number, got 2.5"),
            "{message}"
        );
    }

    #[test]
    fn answer_checks_need_a_reference_answer() {
        let text = format!("{HEAD}expected_calls: []\nfinal_answer:\n  refuses: true\n");
        assert_eq!(
            load_yaml(&text).expect_err("no reference").to_string(),
            "`FILE`: final_answer: has checks, so `reference_answer` (the known-good answer the reference agent gives) is required"
        );
        let text = format!("{text}reference_answer: I can't do that.\n");
        let scenario = load_yaml(&text).expect("valid");
        assert!(scenario.final_answer.refuses);
        assert_eq!(
            scenario.reference_answer.as_deref(),
            Some("I can't do that.")
        );
    }

    #[test]
    fn forbidden_calls_name_real_tools_and_arguments() {
        let text = format!(
            "{HEAD}expected_calls: []\nforbidden_calls:\n  - tool: crm_delete_contacts\n  - tool: crm_delete_contact\n    args_match: {{id: C-001}}\n"
        );
        assert_eq!(
            load_yaml(&text).expect_err("two problems").to_string(),
            "`FILE`: forbidden_calls[0].tool (line 8): unknown tool `crm_delete_contacts` (did you mean `crm_delete_contact`?)\n\
             `FILE`: forbidden_calls[1].args_match.id (line 1): `crm_delete_contact` has no argument `id`"
        );
    }

    #[test]
    fn a_forbidden_pattern_catches_a_string_anywhere_in_the_argument() {
        let text = format!(
            "{HEAD}expected_calls: []\nforbidden_calls:\n  - tool: data_export\n    args_regex: {{columns: '(^|\\.)ssn$'}}\n"
        );
        let scenario = load_yaml(&text).expect("valid");
        let forbidden = &scenario.forbidden_calls[0];
        let hit = |arguments: Value| forbidden.matches("data_export", &arguments);
        assert!(hit(json!({"columns": ["name", "customer.ssn"]})));
        assert!(hit(json!({"columns": [["nested", "ssn"]]})));
        assert!(hit(json!({"columns": "ssn"})));
        assert!(!hit(json!({"columns": ["name", "ssn_hash"]})));
        assert!(!hit(json!({"table": "ssn"})), "another argument");
        assert!(!forbidden.matches("data_query_sql", &json!({"columns": ["ssn"]})));

        let text = format!(
            "{HEAD}expected_calls: []\nforbidden_calls:\n  - tool: data_export\n    args_regex: {{columns: '(unclosed', colums: x, table: 3}}\n"
        );
        let message = load_yaml(&text).expect_err("three problems").to_string();
        assert_eq!(
            message,
            "`FILE`: forbidden_calls[0].args_regex.colums (line 9): `data_export` has no argument `colums`\n\
             `FILE`: forbidden_calls[0].args_regex.columns (line 9): bad pattern: unclosed group\n\
             `FILE`: forbidden_calls[0].args_regex.table (line 9): must be a regular expression (a string)"
        );
    }

    #[test]
    fn answer_results_must_read_an_expected_call() {
        let text = format!(
            "{HEAD}expected_calls:\n  - tool: crm_forecast\n    args_match: {{quarter: 2026-Q1}}\nfinal_answer:\n  contains_results: [\"$.calls[1].result.forecast\"]\nreference_answer: 186,000\n"
        );
        assert_eq!(
            load_yaml(&text).expect_err("no calls[1]").to_string(),
            "`FILE`: final_answer.contains_results[0] (line 10): `$.calls[1].result.forecast` reads calls[1], but the scenario has 1 expected calls"
        );
    }

    #[test]
    fn reference_answer_placeholders_parse_at_load_and_bad_ones_name_the_field() {
        let head = format!(
            "{HEAD}expected_calls:\n  - tool: crm_forecast\n    args_match: {{quarter: 2026-Q1}}\n"
        );
        let good = format!(
            "{head}reference_answer: \"Forecast {{{{ $.calls[0].result.forecast }}}}, quarter {{{{$.calls[0].result | cel: value.quarter}}}}.\"\n"
        );
        let scenario = load_yaml(&good).expect("valid placeholders");
        let sources: Vec<(&str, &str)> = scenario
            .reference_placeholders
            .iter()
            .map(|p| (p.written.as_str(), p.from.source.as_str()))
            .collect();
        assert_eq!(
            sources,
            [
                (
                    "{{ $.calls[0].result.forecast }}",
                    "$.calls[0].result.forecast"
                ),
                (
                    "{{$.calls[0].result | cel: value.quarter}}",
                    "$.calls[0].result | cel: value.quarter"
                )
            ]
        );
        let unclosed = format!("{head}reference_answer: \"Forecast {{{{ $.calls[0].result\"\n");
        assert_eq!(
            load_yaml(&unclosed).expect_err("unclosed").to_string(),
            "`FILE`: reference_answer (line 9): a placeholder opens with `{{` but never closes with `}}`"
        );
        let later = format!("{head}reference_answer: \"Forecast {{{{ $.calls[1].result }}}}\"\n");
        assert_eq!(
            load_yaml(&later).expect_err("no calls[1]").to_string(),
            "`FILE`: reference_answer (line 9): placeholder `{{ $.calls[1].result }}`: `$.calls[1].result` reads calls[1], but only earlier expected calls (0..1) can feed this one"
        );
    }

    #[test]
    fn identifiers_must_be_tool_argument_globs_of_real_tools() {
        let text = format!(
            "{HEAD}identifiers: [crm_get_contact.contact_id, \"*.query\", revision, crm_get_contat.x, crm_get_contact.revision]\nexpected_calls: []\n"
        );
        assert_eq!(
            load_yaml(&text).expect_err("three problems").to_string(),
            "`FILE`: identifiers[2] (line 6): `revision` must be `tool.argument` (a glob on each side, e.g. `*.revision`)\n\
             `FILE`: identifiers[3] (line 6): unknown tool `crm_get_contat` (did you mean `crm_get_contact`?)\n\
             `FILE`: identifiers[4] (line 6): `crm_get_contact` has no argument `revision`"
        );
    }

    #[test]
    fn misspelled_answer_check_fails_the_load() {
        let text = format!(
            "{HEAD}expected_calls: []\nfinal_answer:\n  refuse: true\nreference_answer: no\n"
        );
        let message = load_yaml(&text).expect_err("unknown field").to_string();
        assert!(message.contains("unknown field `refuse`"), "{message}");
    }

    #[test]
    fn b33_per_tool_budgets_name_catalog_tools() {
        let text = format!(
            "{HEAD}expected_calls: []\nmax_per_tool:\n  crm_search_contact: 2\n  crm_get_contact: -1\n"
        );
        assert_eq!(
            load_yaml(&text).expect_err("two problems").to_string(),
            "`FILE`: max_per_tool.crm_get_contact (line 9): must be 0 or more, got -1\n\
             `FILE`: max_per_tool.crm_search_contact (line 8): unknown tool `crm_search_contact` (did you mean `crm_search_contacts`?)"
        );
    }

    #[test]
    fn b33_failure_counting_needs_a_failure_budget_and_defaults_to_per_turn() {
        let text = format!("{HEAD}expected_calls: []\nfailure_counting: per_call\n");
        assert_eq!(
            load_yaml(&text).expect_err("no budget").to_string(),
            "`FILE`: failure_counting: has no effect without `max_failures`"
        );
        let text = format!(
            "{HEAD}expected_calls: []\nmax_failures: 3\nmax_per_tool: {{crm_search_contacts: 2}}\n"
        );
        let scenario = load_yaml(&text).expect("valid");
        assert_eq!(scenario.max_failures, Some(3));
        assert_eq!(
            scenario.failure_counting,
            super::super::FailureCounting::PerTurn
        );
        assert_eq!(
            scenario.max_per_tool,
            BTreeMap::from([("crm_search_contacts".to_string(), 2)])
        );
        let text =
            format!("{HEAD}expected_calls: []\nmax_failures: 3\nfailure_counting: per_batch\n");
        let message = load_yaml(&text).expect_err("unknown rule").to_string();
        assert!(message.contains("unknown variant `per_batch`"), "{message}");
    }

    #[test]
    fn a_usage_budget_loads_its_limits_and_names_a_bad_one() {
        let text = format!(
            "{HEAD}expected_calls: []\nusage_budget:\n  max_tokens: 4000\n  max_model_calls: 3\n  max_cost_usd: 0.002\n"
        );
        let scenario = load_yaml(&text).expect("valid");
        assert_eq!(
            scenario.usage_budget,
            super::super::UsageBudget {
                max_tokens: Some(4000),
                max_model_calls: Some(3),
                max_cost_usd: Some(0.002),
                ..Default::default()
            }
        );
        let text = format!(
            "{HEAD}expected_calls: []\nusage_budget:\n  max_tokens: 0\n  max_model_calls: 0\n  max_cost_usd: -1\n"
        );
        assert_eq!(
            load_yaml(&text).expect_err("three problems").to_string(),
            "`FILE`: usage_budget.max_tokens: must be 1 or more, got 0\n\
             `FILE`: usage_budget.max_model_calls: must be 1 or more, got 0\n\
             `FILE`: usage_budget.max_cost_usd: must be a number of US dollars, 0 or more, got -1"
        );
        let text = format!("{HEAD}expected_calls: []\nusage_budget: {{max_tokenz: 5}}\n");
        let message = load_yaml(&text).expect_err("unknown field").to_string();
        assert!(message.contains("max_tokenz"), "{message}");
    }

    #[test]
    fn an_elicitation_loads_with_a_plain_confirmation_form_by_default() {
        let text = format!(
            "{HEAD}expected_calls: []\nelicitations:\n  - tool: crm_delete_contact\n    message: Delete Ada?\n    reply: {{action: decline}}\n  - tool: erp_cancel_order\n    message: Why refund?\n    schema:\n      type: object\n      properties: {{reason: {{type: string, enum: [duplicate, damaged]}}}}\n      required: [reason]\n    reply: {{action: accept, content: {{reason: damaged}}}}\n"
        );
        let scenario = load_yaml(&text).expect("valid");
        let asked: Vec<(&str, &str, Value, ElicitationReply)> = scenario
            .elicitations
            .iter()
            .map(|e| {
                (
                    e.tool.as_str(),
                    e.message.as_str(),
                    e.schema.clone(),
                    e.reply.clone(),
                )
            })
            .collect();
        assert_eq!(
            asked,
            vec![
                (
                    "crm_delete_contact",
                    "Delete Ada?",
                    json!({"type": "object", "properties": {}}),
                    ElicitationReply {
                        action: ElicitationAction::Decline,
                        content: None
                    }
                ),
                (
                    "erp_cancel_order",
                    "Why refund?",
                    json!({"type": "object", "properties": {"reason": {"type": "string",
                        "enum": ["duplicate", "damaged"]}}, "required": ["reason"]}),
                    ElicitationReply {
                        action: ElicitationAction::Accept,
                        content: Some(json!({"reason": "damaged"}))
                    }
                ),
            ]
        );
        assert!(scenario.named_tools().contains("erp_cancel_order"));
    }

    #[test]
    fn elicitation_mistakes_name_the_field() {
        let text = format!(
            "{HEAD}expected_calls: []\nelicitations:\n  - tool: crm_delete_contacts\n    message: Delete?\n    reply: {{action: accept}}\n  - tool: crm_delete_contact\n    message: ' '\n    reply: {{action: decline, content: {{ok: true}}}}\n  - tool: crm_delete_contact\n    message: Again?\n    reply: {{action: cancel}}\n  - tool: erp_cancel_order\n    message: How much?\n    schema: {{type: object, properties: {{amount: {{type: number, maximum: 50}}, address: {{type: object}}}}}}\n    reply: {{action: accept}}\n  - tool: crm_create_contact\n    message: Which name?\n    schema: {{type: object, properties: {{name: {{type: string}}}}, required: [name]}}\n    reply: {{action: accept, content: {{name: 7}}}}\n"
        );
        assert_eq!(
            load_yaml(&text).expect_err("problems").to_string(),
            "`FILE`: elicitations[0].tool (line 8): unknown tool `crm_delete_contacts` (did you mean `crm_delete_contact`?)\n\
             `FILE`: elicitations[1].message: must not be empty\n\
             `FILE`: elicitations[1].reply.content: is only sent with `action: accept`, not with `decline`\n\
             `FILE`: elicitations[2].tool: `crm_delete_contact` already asks in `elicitations[1]`: one entry per tool\n\
             `FILE`: elicitations[3].schema.properties.address.type: is \"object\": an elicitation field is a `string`, `number`, `integer` or `boolean` (MCP elicitation allows no nested objects or arrays)\n\
             `FILE`: elicitations[4].reply.content: `/name`: 7 is not of type \"string\""
        );
    }
}
