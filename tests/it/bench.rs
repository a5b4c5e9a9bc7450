//! The benchmark content: catalog size and schemas, the scenario suite's shape, the smoke
//! set, and the suite verified by the reference agent and by mutation analysis.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use toolgate::agent::Agent;
use toolgate::catalog::{Catalog, Category};
use toolgate::harness::{ToolSet, WorldBackends};
use toolgate::runner::{self, RunOptions};
use toolgate::scenario::{self, Scenario, ScenarioKind, SmokeSet};
use toolgate::score::Outcome;
use toolgate::verify;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn suite() -> Vec<Scenario> {
    scenario::load_dir(&root().join("scenarios"), root(), Catalog::builtin()).expect("suite loads")
}

const KINDS: [ScenarioKind; 4] = [
    ScenarioKind::SingleCall,
    ScenarioKind::MultiStep,
    ScenarioKind::ErrorRecovery,
    ScenarioKind::AmbiguousInput,
];

#[test]
fn catalog_has_43_tools_whose_schemas_are_valid_draft_2020_12() {
    let catalog = Catalog::builtin();
    assert_eq!(catalog.tools().len(), 43);
    for tool in catalog.tools() {
        let schema = tool.input_schema();
        assert!(
            jsonschema::draft202012::meta::is_valid(schema),
            "`{}`: inputSchema is not a valid draft 2020-12 schema",
            tool.name
        );
        assert_eq!(schema["type"], "object", "`{}`", tool.name);
        assert!(
            jsonschema::draft202012::new(schema).is_ok(),
            "`{}`: inputSchema does not compile",
            tool.name
        );
    }
    let per_category: Vec<usize> = Category::ALL
        .iter()
        .map(|c| {
            catalog
                .tools()
                .iter()
                .filter(|t| t.category == Some(*c))
                .count()
        })
        .collect();
    assert_eq!(per_category, [8, 7, 6, 8, 7, 7]);
}

#[test]
fn suite_has_90_scenarios_in_the_tier_counts_and_every_tier_mixes_all_four_types() {
    let suite = suite();
    assert_eq!(suite.len(), 90);
    let counts: Vec<usize> = (1..=5)
        .map(|tier| suite.iter().filter(|s| s.tier == tier).count())
        .collect();
    assert_eq!(counts, [17, 21, 17, 20, 15]);
    for tier in 1..=5 {
        for kind in KINDS {
            assert!(
                suite.iter().any(|s| s.tier == tier && s.kind == kind),
                "tier {tier} has no {} scenario",
                kind.as_str()
            );
        }
    }
    for scenario in &suite {
        let file = scenario.path.file_stem().and_then(|s| s.to_str());
        assert_eq!(file, Some(scenario.id.as_str()), "file name matches the id");
        let folder = scenario
            .path
            .parent()
            .and_then(Path::file_name)
            .and_then(|s| s.to_str());
        assert_eq!(
            folder,
            Some(format!("tier{}", scenario.tier).as_str()),
            "{}",
            scenario.id
        );
        assert!(
            scenario.id.starts_with(&format!("T{}-", scenario.tier)),
            "{}",
            scenario.id
        );
        assert!(
            scenario.max_calls.is_some()
                || scenario.max_reads.is_some()
                || scenario.max_writes.is_some(),
            "{} has a call budget",
            scenario.id
        );
    }
}

#[test]
fn t2_007_keeps_its_published_definition() {
    let text = std::fs::read_to_string(root().join("scenarios/tier2/T2-007.json")).expect("read");
    let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(
        value["expected_calls"][1]["args_from_prior"]["contact_id"],
        "$.calls[0].result.id"
    );
    assert_eq!(value["seed_state"], "fixtures/crm_baseline.json");
    assert_eq!(value["max_writes"], 2);
    assert_eq!(value["max_reads"], 5);
}

#[test]
fn smoke_set_covers_tier_1_tier_5_every_category_and_every_type() {
    let suite = suite();
    let smoke = SmokeSet::load(&root().join("smoke-set.yaml"), &suite).expect("every id exists");
    let selected: Vec<&Scenario> = suite.iter().filter(|s| smoke.contains(s)).collect();
    for scenario in suite.iter().filter(|s| s.tier == 1 || s.tier == 5) {
        assert!(
            smoke.contains(scenario),
            "{} is not in the smoke set",
            scenario.id
        );
    }
    let extra = selected
        .iter()
        .filter(|s| s.tier != 1 && s.tier != 5)
        .count();
    assert!(
        (5..=25).contains(&extra),
        "{extra} scenarios from tiers 2-4"
    );
    let categories: BTreeSet<Category> = selected
        .iter()
        .flat_map(|s| s.expected_calls.iter().map(|c| c.tool.as_str()))
        .filter_map(Category::of_tool)
        .collect();
    assert_eq!(categories.len(), Category::ALL.len(), "{categories:?}");
    for kind in KINDS {
        assert!(
            selected.iter().any(|s| s.kind == kind && s.tier != 1),
            "{}",
            kind.as_str()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reference_agent_passes_every_scenario_and_the_checks_kill_broken_trajectories() {
    let suite = suite();
    let catalog = Catalog::builtin();
    let tools = ToolSet::builtin();
    let backends = WorldBackends::new(Arc::clone(&tools));
    let plan = runner::RunPlan::new(&suite, Agent::Reference, backends, RunOptions::default());
    let runs = runner::run_suite(&plan, std::future::pending(), &|_| {})
        .await
        .runs;
    let failing: Vec<&str> = suite
        .iter()
        .zip(&runs)
        .filter(|(_, run)| run.outcome != Outcome::Pass)
        .map(|(s, _)| s.id.as_str())
        .collect();
    assert!(
        failing.is_empty(),
        "failing with the reference agent: {failing:?}"
    );

    let report = verify::analyse_suite(&suite, &runs, &tools, catalog).expect("fixtures load");
    assert_eq!(report.scenarios.len(), 90);
    assert!(report.total() >= 90 * 3, "{} mutants", report.total());
    assert!(
        report.kill_rate() >= verify::REQUIRED_KILL_RATE,
        "{}",
        verify::render::render_mutants(&report, true)
    );
    assert_eq!(report.toothless(), Vec::<&str>::new());
    assert!(report.holds());
}

#[test]
fn tools_command_lists_the_catalog_as_json() {
    let output = assert_cmd::Command::cargo_bin("toolgate")
        .expect("binary")
        .args(["tools", "--format", "json"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(0));
    let tools: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(tools.as_array().map(Vec::len), Some(43));
    assert_eq!(tools[42]["name"], "util_validate");
    assert_eq!(tools[42]["category"], "utility");
}

#[test]
fn verify_command_exits_0_and_reports_the_kill_rate() {
    let output = assert_cmd::Command::cargo_bin("toolgate")
        .expect("binary")
        .args(["verify", "--mutants", "--root"])
        .arg(root())
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.starts_with("90 of 90 scenarios pass with the reference agent\n"),
        "{stdout}"
    );
    // Every written alternative passes and every counterexample fails, and none were dropped
    // to get there: at least three per scenario of each, on average.
    let written = stdout.lines().nth(1).expect("a second line");
    let counts: Vec<usize> = written
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    assert!(
        written.starts_with("written trajectories: ") && counts.len() == 4,
        "{written}"
    );
    assert!(counts[0] >= 3 * 78 && counts[2] >= 3 * 78, "{written}");
    assert_eq!((counts[1], counts[3]), (0, 0), "{written}");
    let summary = stdout.lines().find(|line| line.starts_with("killed "));
    assert!(
        summary.is_some_and(|line| line.ends_with("goal 95%)")),
        "{stdout}"
    );
}
