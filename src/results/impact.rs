//! Impact-scoped runs (`gate --impact`): which scenarios a change since the baseline can
//! affect, decided before any run from the baseline's pins and this run's.
//!
//! A scenario runs when it is Tier 5 (never skipped: zero tolerance needs a fresh result),
//! when its file is new or changed, when a fixture it uses changed, when a changed tool (added,
//! or with another definition hash) is among the tools it offers ([`Scenario::offered_tools`]:
//! its named tools' groups and their look-alikes), or when it names a removed tool. Everything
//! runs when nothing can be told apart: no baseline pins, a changed subject (model, provider,
//! system prompt, tool calling) or way of measuring (tool offer, judge, harness), a baseline
//! without per-tool hashes whose catalog differs, or a changed fixture that no scenario names
//! (a mock catalog's rules).
//!
//! The selection is a heuristic about the model: with `--tool-offer all` every scenario's
//! model sees every tool, and a changed description elsewhere in the catalog can still move
//! an outcome. It assumes what `--tool-offer scenario` makes true, that a scenario is decided
//! among its own groups' tools and their look-alikes. See `docs/gate.md`.

#[cfg(test)]
use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::catalog::Catalog;
use crate::results::pins::{self, Pins};
use crate::scenario::Scenario;

/// What `--impact` decided, kept in `results.json` as `run.impact`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Impact {
    /// Tools added, removed, or whose definition hash differs since the baseline (a server's
    /// every tool when its command or version changed), sorted, each once.
    pub changed_tools: Vec<String>,
    /// Scenarios whose file is new or changed since the baseline, in suite order.
    pub changed_scenarios: Vec<String>,
    /// Fixtures that are new or changed since the baseline, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed_fixtures: Vec<String>,
    /// The scenarios that run, in suite order, each with why.
    pub selected: Vec<Scoped>,
    /// The scenarios left out, in suite order, each with why; they are neither compared nor
    /// counted anywhere.
    pub skipped: Vec<Scoped>,
    /// Why every scenario runs, when the change cannot be narrowed down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_because: Option<String>,
}

/// A scenario with the reason it was selected or skipped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scoped {
    /// Scenario id.
    pub id: String,
    /// Why, as a lowercase fragment (`offers changed tool `crm_update_contact``).
    pub reason: String,
}

impl Impact {
    /// Whether scenario `id` was selected.
    pub fn is_selected(&self, id: &str) -> bool {
        self.selected.iter().any(|scoped| scoped.id == id)
    }

    /// Whether scenario `id` was skipped.
    pub fn is_skipped(&self, id: &str) -> bool {
        self.skipped.iter().any(|scoped| scoped.id == id)
    }
}

/// Decides which of `scenarios` (loaded under `root` on `catalog`, in suite order) the change
/// from `baseline` to `current` can affect. `current` must be the pins of exactly these
/// scenarios on this catalog; `baseline` is `None` without a baseline or one without pins.
///
/// Every scenario ends in exactly one of `selected` and `skipped`, in suite order; every Tier 5
/// scenario is selected.
pub fn select(
    scenarios: &[Scenario],
    root: &Path,
    catalog: &Catalog,
    current: &Pins,
    baseline: Option<&Pins>,
) -> Impact {
    let Some(baseline) = baseline else {
        return everything(
            scenarios,
            "no baseline with pinned metadata to compare with".to_owned(),
        );
    };
    let mut impact = Impact {
        changed_tools: changed_tools(current, baseline).into_iter().collect(),
        changed_scenarios: scenarios
            .iter()
            .filter(|scenario| scenario_changed(current, baseline, &scenario.id))
            .map(|scenario| scenario.id.clone())
            .collect(),
        changed_fixtures: current
            .fixtures
            .iter()
            .filter(|(name, hash)| baseline.fixtures.get(*name) != Some(*hash))
            .map(|(name, _)| name.clone())
            .collect(),
        ..Impact::default()
    };
    if let Some(reason) = whole_suite_reason(scenarios, root, current, baseline, &impact) {
        return everything(scenarios, reason).with_changes(impact);
    }
    let changed_tools: BTreeSet<&str> = impact.changed_tools.iter().map(String::as_str).collect();
    for scenario in scenarios {
        let reasons = reasons_to_run(scenario, root, catalog, &changed_tools, &impact);
        if reasons.is_empty() {
            let offered = scenario.offered_tools(catalog).len();
            impact.skipped.push(Scoped {
                id: scenario.id.clone(),
                reason: format!(
                    "no changed tool among its {offered} offered tools; its file and fixtures are unchanged"
                ),
            });
        } else {
            impact.selected.push(Scoped {
                id: scenario.id.clone(),
                reason: reasons.join("; "),
            });
        }
    }
    impact
}

impl Impact {
    /// `self` with the changes found in `found` (for an impact that runs everything).
    fn with_changes(self, found: Impact) -> Impact {
        Impact {
            changed_tools: found.changed_tools,
            changed_scenarios: found.changed_scenarios,
            changed_fixtures: found.changed_fixtures,
            ..self
        }
    }
}

/// Every scenario selected, because of `reason`.
fn everything(scenarios: &[Scenario], reason: String) -> Impact {
    Impact {
        selected: scenarios
            .iter()
            .map(|scenario| Scoped {
                id: scenario.id.clone(),
                reason: "every scenario runs".to_owned(),
            })
            .collect(),
        all_because: Some(reason),
        ..Impact::default()
    }
}

/// Why the change cannot be narrowed down to scenarios, when it cannot.
fn whole_suite_reason(
    scenarios: &[Scenario],
    root: &Path,
    current: &Pins,
    baseline: &Pins,
    found: &Impact,
) -> Option<String> {
    let subject = current.subject_changes(baseline);
    if !subject.is_empty() {
        return Some(format!("the subject changed: {}", subject.join("; ")));
    }
    let method = current.method_changes(baseline);
    if !method.is_empty() {
        return Some(format!(
            "the way of measuring changed: {}",
            method.join("; ")
        ));
    }
    if baseline.tools.is_empty() && current.catalog_sha256 != baseline.catalog_sha256 {
        return Some(
            "the tool catalog changed and the baseline has no per-tool hashes to tell which tools"
                .to_owned(),
        );
    }
    let named: BTreeSet<String> = scenarios
        .iter()
        .flat_map(|scenario| pins::fixture_names(scenario, root))
        .collect();
    let suite_wide: Vec<String> = found
        .changed_fixtures
        .iter()
        .filter(|name| !named.contains(*name))
        .map(|name| format!("`{name}`"))
        .collect();
    (!suite_wide.is_empty()).then(|| {
        format!(
            "suite-wide fixtures changed (every scenario may use them): {}",
            suite_wide.join(", ")
        )
    })
}

/// Whether scenario `id`'s file is new or changed since `baseline`.
fn scenario_changed(current: &Pins, baseline: &Pins, id: &str) -> bool {
    match (current.scenarios.get(id), baseline.scenarios.get(id)) {
        (Some(now), Some(before)) => now.sha256 != before.sha256,
        _ => true,
    }
}

/// Tools added, removed or with another definition hash, and every tool of a server whose
/// command or version changed.
fn changed_tools(current: &Pins, baseline: &Pins) -> BTreeSet<String> {
    let mut changed = BTreeSet::new();
    // A baseline without per-tool hashes reaches here only with the same catalog hash.
    let names: BTreeSet<&String> = if baseline.tools.is_empty() {
        BTreeSet::new()
    } else {
        current.tools.keys().chain(baseline.tools.keys()).collect()
    };
    for name in names {
        if current.tools.get(name) != baseline.tools.get(name) {
            changed.insert(name.clone());
        }
    }
    for (server, pin) in &current.servers {
        let Some(before) = baseline.servers.get(server) else {
            continue;
        };
        if pin.command != before.command || pin.version != before.version {
            let listed = pin.tools.iter().chain(&before.tools);
            changed.extend(
                listed.filter_map(|definition| Some(definition["name"].as_str()?.to_owned())),
            );
        }
    }
    changed
}

/// Why `scenario` must run, one fragment each; empty when the change cannot affect it.
fn reasons_to_run(
    scenario: &Scenario,
    root: &Path,
    catalog: &Catalog,
    changed_tools: &BTreeSet<&str>,
    found: &Impact,
) -> Vec<String> {
    let mut reasons = Vec::new();
    if scenario.tier == 5 {
        reasons.push("Tier 5: never skipped".to_owned());
    }
    if found.changed_scenarios.contains(&scenario.id) {
        reasons.push("its file is new or changed".to_owned());
    }
    for fixture in pins::fixture_names(scenario, root) {
        if found.changed_fixtures.contains(&fixture) {
            reasons.push(format!("fixture `{fixture}` changed"));
        }
    }
    let offered: Vec<String> = scenario
        .offered_tools(catalog)
        .into_iter()
        .filter(|tool| changed_tools.contains(tool.as_str()))
        .collect();
    if !offered.is_empty() {
        reasons.push(format!("offers changed tools: {}", code_list(&offered)));
    }
    let removed: Vec<String> = scenario
        .named_tools()
        .into_iter()
        .filter(|tool| changed_tools.contains(tool) && catalog.tool(tool).is_none())
        .map(str::to_owned)
        .collect();
    if !removed.is_empty() {
        reasons.push(format!("names removed tools: {}", code_list(&removed)));
    }
    reasons
}

fn code_list(items: &[String]) -> String {
    items
        .iter()
        .map(|item| format!("`{item}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::pins::Subject;

    fn root() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR"))
    }

    /// The built-in suite and its pins, as a reference run pins them.
    fn suite() -> (Vec<Scenario>, Pins) {
        let scenarios =
            crate::scenario::load_dir(&root().join("scenarios"), root(), Catalog::builtin())
                .expect("the built-in suite loads");
        let subject = Subject {
            provider: "reference".into(),
            ..Subject::default()
        };
        let pins = Pins::compute(&subject, &scenarios, root(), Catalog::builtin())
            .expect("the built-in suite pins");
        (scenarios, pins)
    }

    fn ids(scoped: &[Scoped]) -> Vec<&str> {
        scoped.iter().map(|s| s.id.as_str()).collect()
    }

    fn tier_5(scenarios: &[Scenario]) -> Vec<&str> {
        scenarios
            .iter()
            .filter(|s| s.tier == 5)
            .map(|s| s.id.as_str())
            .collect()
    }

    #[test]
    fn unchanged_pins_select_only_tier_5() {
        let (scenarios, pins) = suite();
        let impact = select(&scenarios, root(), Catalog::builtin(), &pins, Some(&pins));
        assert_eq!(impact.all_because, None);
        assert_eq!(ids(&impact.selected), tier_5(&scenarios));
        assert!(
            impact
                .selected
                .iter()
                .all(|s| s.reason == "Tier 5: never skipped")
        );
        assert_eq!(
            impact.selected.len() + impact.skipped.len(),
            scenarios.len()
        );
        assert!(impact.changed_tools.is_empty() && impact.changed_scenarios.is_empty());
    }

    #[test]
    fn a_changed_tool_selects_exactly_the_scenarios_offering_it_and_every_tier_5() {
        let (scenarios, current) = suite();
        let mut baseline = current.clone();
        baseline
            .tools
            .insert("crm_update_contact".into(), "0".repeat(64));
        let impact = select(
            &scenarios,
            root(),
            Catalog::builtin(),
            &current,
            Some(&baseline),
        );
        assert_eq!(impact.changed_tools, vec!["crm_update_contact"]);
        let offering: Vec<&str> = scenarios
            .iter()
            .filter(|s| {
                s.tier == 5
                    || s.offered_tools(Catalog::builtin())
                        .contains(&"crm_update_contact".to_owned())
            })
            .map(|s| s.id.as_str())
            .collect();
        assert_eq!(ids(&impact.selected), offering);
        assert_eq!((impact.selected.len(), impact.skipped.len()), (40, 50));
        for id in tier_5(&scenarios) {
            assert!(impact.is_selected(id), "{id} is Tier 5");
        }
        let t1_001 = impact
            .selected
            .iter()
            .find(|s| s.id == "T1-001")
            .expect("T1-001 offers the CRM tools");
        assert_eq!(t1_001.reason, "offers changed tools: `crm_update_contact`");
        let skipped = impact
            .skipped
            .iter()
            .find(|s| s.id == "T1-004")
            .expect("T1-004 names no CRM tool");
        assert_eq!(
            skipped.reason,
            "no changed tool among its 15 offered tools; its file and fixtures are unchanged"
        );
    }

    #[test]
    fn a_changed_scenario_file_selects_it_and_tier_5() {
        let (scenarios, current) = suite();
        let mut baseline = current.clone();
        baseline.scenarios.get_mut("T2-003").expect("pinned").sha256 = "0".repeat(64);
        baseline.scenarios.remove("T3-001");
        let impact = select(
            &scenarios,
            root(),
            Catalog::builtin(),
            &current,
            Some(&baseline),
        );
        assert_eq!(impact.changed_scenarios, vec!["T2-003", "T3-001"]);
        let mut expected = vec!["T2-003", "T3-001"];
        expected.extend(tier_5(&scenarios));
        assert_eq!(ids(&impact.selected), expected);
        assert_eq!(impact.selected[0].reason, "its file is new or changed");
    }

    #[test]
    fn a_changed_fixture_selects_the_scenarios_seeded_from_it() {
        let (scenarios, current) = suite();
        let mut baseline = current.clone();
        let (name, _) = baseline
            .fixtures
            .iter()
            .next()
            .map(|(n, h)| (n.clone(), h.clone()))
            .expect("the suite has fixtures");
        baseline.fixtures.insert(name.clone(), "0".repeat(64));
        let impact = select(
            &scenarios,
            root(),
            Catalog::builtin(),
            &current,
            Some(&baseline),
        );
        assert_eq!(impact.changed_fixtures, vec![name.clone()]);
        let seeded: Vec<&str> = scenarios
            .iter()
            .filter(|s| s.tier == 5 || pins::fixture_names(s, root()).contains(&name))
            .map(|s| s.id.as_str())
            .collect();
        assert_eq!(ids(&impact.selected), seeded);
        assert!(impact.selected.len() > tier_5(&scenarios).len());
    }

    #[test]
    fn a_changed_subject_runs_everything_saying_why() {
        let (scenarios, current) = suite();
        let baseline = Pins {
            model: Some("m".into()),
            ..current.clone()
        };
        let impact = select(
            &scenarios,
            root(),
            Catalog::builtin(),
            &current,
            Some(&baseline),
        );
        assert_eq!(
            impact.all_because.as_deref(),
            Some("the subject changed: model `m` -> `none`")
        );
        assert_eq!(impact.selected.len(), scenarios.len());
        assert!(impact.skipped.is_empty());
        let judged = Pins {
            judge_model: Some("judge".into()),
            ..current.clone()
        };
        assert_eq!(
            select(
                &scenarios,
                root(),
                Catalog::builtin(),
                &current,
                Some(&judged)
            )
            .all_because,
            Some("the way of measuring changed: judge model `judge` -> `none`".to_owned())
        );
        let none = select(&scenarios, root(), Catalog::builtin(), &current, None);
        assert_eq!(
            none.all_because.as_deref(),
            Some("no baseline with pinned metadata to compare with")
        );
        assert_eq!(none.selected.len(), scenarios.len());
    }

    #[test]
    fn an_old_baseline_without_tool_hashes_runs_everything_only_when_the_catalog_changed() {
        let (scenarios, current) = suite();
        let old = Pins {
            tools: BTreeMap::new(),
            ..current.clone()
        };
        let same_catalog = select(&scenarios, root(), Catalog::builtin(), &current, Some(&old));
        assert_eq!(same_catalog.all_because, None);
        assert_eq!(ids(&same_catalog.selected), tier_5(&scenarios));
        let moved = Pins {
            catalog_sha256: "0".repeat(64),
            ..old
        };
        let impact = select(
            &scenarios,
            root(),
            Catalog::builtin(),
            &current,
            Some(&moved),
        );
        assert_eq!(
            impact.all_because.as_deref(),
            Some(
                "the tool catalog changed and the baseline has no per-tool hashes to tell which tools"
            )
        );
        assert_eq!(impact.selected.len(), scenarios.len());
    }

    #[test]
    fn a_removed_tool_selects_the_scenarios_that_name_it() {
        let (scenarios, baseline) = suite();
        let removed = "crm_update_contact";
        let catalog = Catalog::from_tools(
            Catalog::builtin()
                .tools()
                .iter()
                .filter(|tool| tool.name != removed)
                .cloned()
                .collect(),
        );
        let subject = Subject {
            provider: "reference".into(),
            ..Subject::default()
        };
        let current = Pins::compute(&subject, &scenarios, root(), &catalog).expect("pins");
        let impact = select(&scenarios, root(), &catalog, &current, Some(&baseline));
        assert_eq!(impact.changed_tools, vec![removed]);
        let naming: Vec<&str> = scenarios
            .iter()
            .filter(|s| s.tier == 5 || s.named_tools().contains(removed))
            .map(|s| s.id.as_str())
            .collect();
        assert_eq!(ids(&impact.selected), naming);
        let t2 = impact
            .selected
            .iter()
            .find(|s| s.reason == "names removed tools: `crm_update_contact`")
            .expect("a scenario names the removed tool");
        assert!(!t2.id.starts_with("T5"));
    }

    #[test]
    fn a_suite_wide_fixture_runs_everything() {
        let (scenarios, mut current) = suite();
        let baseline = current.clone();
        current
            .fixtures
            .insert("mocks:mocks.yaml".into(), "1".repeat(64));
        let impact = select(
            &scenarios,
            root(),
            Catalog::builtin(),
            &current,
            Some(&baseline),
        );
        assert_eq!(
            impact.all_because.as_deref(),
            Some("suite-wide fixtures changed (every scenario may use them): `mocks:mocks.yaml`")
        );
    }
}
