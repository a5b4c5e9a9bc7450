//! Pinned metadata of a run: what was measured (model, provider, system prompt) and with which
//! ruler (scenarios, catalog, fixtures, judge, harness). A baseline is only comparable with a
//! run measured by the same ruler; [`Pins::ruler_changes`] says where it moved.
//!
//! Hashes are SHA-256 of the file bytes, lowercase hex. Per-scenario and per-fixture hashes are
//! kept so that a smoke run can be checked against a full baseline on common ground.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize};

use crate::catalog::Catalog;
use crate::catalog::drift;
use crate::catalog::listing::SourcedTool;
use crate::catalog::lock::{Lock, LockedTool};
use crate::defaults::{MAX_DATA_FILE_BYTES, MAX_RUN_FILE_BYTES, MAX_SMALL_FILE_BYTES};
use crate::fs::{read_bytes, sha256_hex};
use crate::scenario::Scenario;

/// The harness version recorded in pins: the harness is built into toolgate.
pub const HARNESS_VERSION: &str = env!("CARGO_PKG_VERSION");

/// What a run measured and with which ruler.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Pins {
    /// The model under test, for model-backed agents.
    pub model: Option<String>,
    /// Who served the model: `reference`, or `openai-compatible <host>` (never a path, query
    /// or credentials).
    pub provider: String,
    /// SHA-256 of the system prompt text, when one was given.
    pub system_prompt_sha256: Option<String>,
    /// `prompted` when the model was offered the tools in its system prompt instead of by
    /// native function calling; absent for native calling (and agents without a model). Runs
    /// of the two modes are not one subject: a baseline window keeps to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calling: Option<String>,
    /// The judge model, when a judge scored the run.
    pub judge_model: Option<String>,
    /// The user simulator that played the scenarios' simulated users, in one line (model,
    /// base URL, prompt version and hash, sampling); absent when no scenario had one. A changed
    /// simulator moves the ruler as a changed judge does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_simulator: Option<String>,
    /// The harness (toolgate) version.
    pub harness_version: String,
    /// SHA-256 over the sorted `id sha256` lines of `scenarios`.
    pub scenario_set_sha256: String,
    /// SHA-256 of the tool catalog (its definitions as compact JSON, in catalog order).
    pub catalog_sha256: String,
    /// Per tool name: SHA-256 of its definition as compact JSON, so that a change can be
    /// traced to the tools it touched (`gate --impact`). Empty (and left out of the file) in
    /// files written before per-tool hashes existed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, String>,
    /// SHA-256 over the sorted `name sha256` lines of `fixtures`.
    pub fixture_sha256: String,
    /// Per scenario id: its file (relative to the suite root, `/`-separated) and hash.
    pub scenarios: BTreeMap<String, ScenarioPin>,
    /// Per fixture name (as scenarios write it): its hash.
    pub fixtures: BTreeMap<String, String>,
    /// The shard of the suite this run covered; `None` for a whole run (or a merge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// `scenario` when each scenario offered a model only its own groups' tools and their
    /// look-alikes (`--tool-offer scenario`); absent when every tool was offered. A smaller
    /// offer is an easier test: runs of the two are measured with different rulers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_offer: Option<String>,
    /// Per server of a suite of the user's own servers (`servers:` name): its command, version
    /// and listed tools. Empty (and left out of the file) for the built-in world.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub servers: BTreeMap<String, ServerPin>,
}

/// One of the user's servers as a run saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerPin {
    /// The program and arguments, or the URL (never `env` or header values).
    pub command: String,
    /// `serverInfo` `name version` from `initialize`, when the server sent one.
    pub version: Option<String>,
    /// SHA-256 of the tools the suite uses, as compact JSON in listing order.
    pub tools_sha256: String,
    /// Those tools as listed, so that a moved ruler can say how the catalog changed.
    pub tools: Vec<serde_json::Value>,
}

impl ServerPin {
    /// The pin of a server started as `command`, reporting `version`, listing `tools`.
    pub fn new(command: String, version: Option<String>, tools: &[serde_json::Value]) -> ServerPin {
        let json = serde_json::to_string(tools).expect("tool definitions are JSON");
        ServerPin {
            command,
            version,
            tools_sha256: sha256_hex(json.as_bytes()),
            tools: tools.to_vec(),
        }
    }
}

/// One scenario's file and hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScenarioPin {
    /// Path relative to the suite root, `/`-separated.
    pub path: String,
    /// SHA-256 of the file bytes.
    pub sha256: String,
}

/// Part `index` of `count` (1-based): scenario number `j` (0-based, suite order) belongs to
/// shard `j % count + 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Shard {
    /// 1..=count.
    pub index: u32,
    /// At least 1.
    pub count: u32,
}

impl Shard {
    /// Parses `i/n` with 1 <= i <= n.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let invalid = || format!("`{text}` is not a shard `i/n` with 1 <= i <= n");
        let (index, count) = text.split_once('/').ok_or_else(invalid)?;
        let index: u32 = index.trim().parse().map_err(|_| invalid())?;
        let count: u32 = count.trim().parse().map_err(|_| invalid())?;
        if index == 0 || count == 0 || index > count {
            return Err(invalid());
        }
        Ok(Shard { index, count })
    }

    /// Whether the scenario at `position` (0-based, suite order) is in this shard.
    pub fn contains(self, position: usize) -> bool {
        position % self.count as usize == (self.index - 1) as usize
    }
}

/// The measured side of a run, as the caller knows it.
#[derive(Debug, Clone, Default)]
pub struct Subject {
    /// The model under test.
    pub model: Option<String>,
    /// See [`Pins::provider`].
    pub provider: String,
    /// The system prompt text, when one was given.
    pub system_prompt: Option<String>,
    /// See [`Pins::tool_calling`].
    pub tool_calling: Option<String>,
    /// The judge model, when a judge runs.
    pub judge_model: Option<String>,
}

fn set_hash<'a>(entries: impl Iterator<Item = (&'a String, &'a String)>) -> String {
    let mut text = String::new();
    for (name, hash) in entries {
        let _ = writeln!(text, "{name} {hash}");
    }
    sha256_hex(text.as_bytes())
}

/// `path` relative to `root`, `/`-separated (the path itself when it is not under `root`).
fn relative_name(path: &Path, root: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    relative
        .components()
        .map(|part| part.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// SHA-256 of a file's bytes, or for a directory over the sorted `relative-path sha256` lines
/// of every file under it.
fn hash_tree(path: &Path) -> Result<String> {
    if !path.is_dir() {
        let bytes = read_bytes(path, "seed", MAX_RUN_FILE_BYTES)?;
        return Ok(sha256_hex(&bytes));
    }
    let mut files = BTreeMap::new();
    let mut pending = vec![path.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = std::fs::read_dir(&dir)
            .with_context(|| format!("failed to read seed directory `{}`", dir.display()))?;
        for entry in entries {
            let entry = entry
                .with_context(|| format!("failed to read seed directory `{}`", dir.display()))?;
            let child = entry.path();
            if child.is_dir() {
                pending.push(child);
            } else {
                let bytes = read_bytes(&child, "seed", MAX_RUN_FILE_BYTES)?;
                files.insert(relative_name(&child, path), sha256_hex(&bytes));
            }
        }
    }
    Ok(set_hash(files.iter()))
}

/// The names under which [`Pins::fixtures`] holds the fixtures `scenario` (loaded under
/// `root`) uses: its seed state and its seed directory, in that order; empty when it has none.
pub fn fixture_names(scenario: &Scenario, root: &Path) -> Vec<String> {
    let seed_state = scenario
        .seed_state
        .as_ref()
        .map(|_| scenario.seed_state_name.clone());
    let seed_path = scenario
        .seed_path
        .as_ref()
        .map(|path| relative_name(path, root));
    seed_state.into_iter().chain(seed_path).collect()
}

impl Pins {
    /// Pins a run of `scenarios` (loaded under `root`) against `catalog`.
    ///
    /// Errors: a scenario or fixture file that cannot be read.
    pub fn compute(
        subject: &Subject,
        scenarios: &[Scenario],
        root: &Path,
        catalog: &Catalog,
    ) -> Result<Pins> {
        let mut pinned = BTreeMap::new();
        let mut fixtures = BTreeMap::new();
        for scenario in scenarios {
            let bytes = read_bytes(&scenario.path, "scenario", MAX_SMALL_FILE_BYTES)?;
            let path = relative_name(&scenario.path, root);
            pinned.insert(
                scenario.id.clone(),
                ScenarioPin {
                    path,
                    sha256: sha256_hex(&bytes),
                },
            );
            if let Some(seed_state) = &scenario.seed_state
                && !fixtures.contains_key(&scenario.seed_state_name)
            {
                let bytes = read_bytes(seed_state, "fixture", MAX_DATA_FILE_BYTES)?;
                fixtures.insert(scenario.seed_state_name.clone(), sha256_hex(&bytes));
            }
            if let Some(seed_path) = &scenario.seed_path {
                let name = relative_name(seed_path, root);
                if let std::collections::btree_map::Entry::Vacant(entry) = fixtures.entry(name) {
                    entry.insert(hash_tree(seed_path)?);
                }
            }
        }
        let catalog_json =
            serde_json::to_string(catalog.definitions()).expect("tool definitions are JSON");
        let tools = catalog
            .tools()
            .iter()
            .map(|tool| {
                let json =
                    serde_json::to_string(&tool.definition).expect("tool definitions are JSON");
                (tool.name.clone(), sha256_hex(json.as_bytes()))
            })
            .collect();
        Ok(Pins {
            model: subject.model.clone(),
            provider: subject.provider.clone(),
            system_prompt_sha256: subject
                .system_prompt
                .as_ref()
                .map(|text| sha256_hex(text.as_bytes())),
            tool_calling: subject.tool_calling.clone(),
            judge_model: subject.judge_model.clone(),
            user_simulator: None,
            harness_version: HARNESS_VERSION.to_string(),
            scenario_set_sha256: set_hash(pinned.iter().map(|(id, pin)| (id, &pin.sha256))),
            catalog_sha256: sha256_hex(catalog_json.as_bytes()),
            tools,
            fixture_sha256: set_hash(fixtures.iter()),
            scenarios: pinned,
            fixtures,
            shard: None,
            tool_offer: None,
            servers: BTreeMap::new(),
        })
    }

    /// Recomputes the set hashes after `scenarios` or `fixtures` changed (e.g. a merge).
    pub fn rehash(&mut self) {
        self.scenario_set_sha256 =
            set_hash(self.scenarios.iter().map(|(id, pin)| (id, &pin.sha256)));
        self.fixture_sha256 = set_hash(self.fixtures.iter());
    }

    /// Where the ruler differs between this run and `baseline`, one line each, looking only at
    /// scenarios and fixtures both have: changed scenario files, fixtures, catalog, judge and
    /// harness. Empty when the ruler is the same.
    pub fn ruler_changes(&self, baseline: &Pins) -> Vec<String> {
        let mut changes = Vec::new();
        let changed: Vec<&str> = self
            .scenarios
            .iter()
            .filter(|(id, pin)| {
                baseline
                    .scenarios
                    .get(*id)
                    .is_some_and(|before| before.sha256 != pin.sha256)
            })
            .map(|(id, _)| id.as_str())
            .collect();
        if !changed.is_empty() {
            changes.push(format!("scenario files changed: {}", code_list(&changed)));
        }
        let fixtures: Vec<&str> = self
            .fixtures
            .iter()
            .filter(|(name, hash)| baseline.fixtures.get(*name).is_some_and(|b| b != *hash))
            .map(|(name, _)| name.as_str())
            .collect();
        if !fixtures.is_empty() {
            changes.push(format!("fixtures changed: {}", code_list(&fixtures)));
        }
        if self.catalog_sha256 != baseline.catalog_sha256 {
            changes.push("the tool catalog changed".to_string());
        }
        changes.extend(self.server_changes(baseline));
        changes.extend(self.method_changes(baseline));
        changes
    }

    /// Where the way of measuring differs from `baseline`, one line each: the tool offer, the
    /// judge model, the user simulator (when both runs had one: a run without simulated users
    /// used none) and the harness version. Each can move any scenario's outcome.
    pub fn method_changes(&self, baseline: &Pins) -> Vec<String> {
        let mut changes = Vec::new();
        if self.tool_offer != baseline.tool_offer {
            let offer = |offer: &Option<String>| offer.clone().unwrap_or_else(|| "all".to_owned());
            changes.push(format!(
                "tool offer `{}` -> `{}`",
                offer(&baseline.tool_offer),
                offer(&self.tool_offer)
            ));
        }
        if self.judge_model != baseline.judge_model {
            changes.push(format!(
                "judge model `{}` -> `{}`",
                or_none(&baseline.judge_model),
                or_none(&self.judge_model)
            ));
        }
        if let (Some(now), Some(before)) = (&self.user_simulator, &baseline.user_simulator)
            && now != before
        {
            changes.push(format!("user simulator `{before}` -> `{now}`"));
        }
        if self.harness_version != baseline.harness_version {
            changes.push(format!(
                "harness version `{}` -> `{}`",
                baseline.harness_version, self.harness_version
            ));
        }
        changes
    }

    /// How each server both runs used moved: its listed tools, with the drift classes of
    /// `toolgate drift` (breaking, non-breaking, description changes), and its version.
    fn server_changes(&self, baseline: &Pins) -> Vec<String> {
        let mut changes = Vec::new();
        for (name, pin) in &self.servers {
            let Some(before) = baseline.servers.get(name) else {
                continue;
            };
            if pin.tools_sha256 != before.tools_sha256 {
                let lock = Lock {
                    schema_version: Lock::SCHEMA_VERSION,
                    tools: before
                        .tools
                        .iter()
                        .filter_map(|definition| {
                            Some(LockedTool {
                                server: name.clone(),
                                name: definition["name"].as_str()?.to_string(),
                                definition: definition.clone(),
                            })
                        })
                        .collect(),
                };
                let live: Vec<SourcedTool> = pin
                    .tools
                    .iter()
                    .map(|definition| SourcedTool {
                        server: name.clone(),
                        definition: definition.clone(),
                    })
                    .collect();
                let report = drift::compare(&lock, std::slice::from_ref(name), &live);
                changes.push(format!(
                    "the tools of server `{name}` changed ({})",
                    report.summary()
                ));
            }
            if pin.version != before.version {
                changes.push(format!(
                    "server `{name}` version `{}` -> `{}`",
                    or_none(&before.version),
                    or_none(&pin.version)
                ));
            }
        }
        changes
    }

    /// Where the measured subject differs from `baseline` (model, provider, system prompt):
    /// expected when a pull request changes them, stated in reports.
    pub fn subject_changes(&self, baseline: &Pins) -> Vec<String> {
        let mut changes = Vec::new();
        if self.model != baseline.model {
            changes.push(format!(
                "model `{}` -> `{}`",
                or_none(&baseline.model),
                or_none(&self.model)
            ));
        }
        if self.provider != baseline.provider {
            changes.push(format!(
                "provider `{}` -> `{}`",
                baseline.provider, self.provider
            ));
        }
        if self.system_prompt_sha256 != baseline.system_prompt_sha256 {
            changes.push("the system prompt changed".to_string());
        }
        if self.tool_calling != baseline.tool_calling {
            let mode = |mode: &Option<String>| mode.clone().unwrap_or_else(|| "native".to_owned());
            changes.push(format!(
                "tool calling `{}` -> `{}`",
                mode(&baseline.tool_calling),
                mode(&self.tool_calling)
            ));
        }
        changes
    }
}

fn or_none(value: &Option<String>) -> &str {
    value.as_deref().unwrap_or("none")
}

fn code_list(items: &[&str]) -> String {
    items
        .iter()
        .map(|item| format!("`{item}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn pins() -> Pins {
        let mut pins = Pins {
            model: Some("m".into()),
            provider: "openai-compatible localhost:8080".into(),
            system_prompt_sha256: None,
            tool_calling: None,
            tool_offer: None,
            judge_model: None,
            user_simulator: None,
            harness_version: "0.1.0".into(),
            scenario_set_sha256: String::new(),
            catalog_sha256: "c".repeat(64),
            tools: BTreeMap::new(),
            fixture_sha256: String::new(),
            servers: BTreeMap::new(),
            scenarios: [
                ("T1-001", "scenarios/tier1/T1-001.json", "a"),
                ("T5-001", "scenarios/tier5/T5-001.json", "b"),
            ]
            .into_iter()
            .map(|(id, path, hash)| {
                (
                    id.to_string(),
                    ScenarioPin {
                        path: path.into(),
                        sha256: hash.repeat(64),
                    },
                )
            })
            .collect(),
            fixtures: [("fixtures/crm.json".to_string(), "f".repeat(64))].into(),
            shard: None,
        };
        pins.rehash();
        pins
    }

    #[test]
    fn same_pins_have_no_ruler_changes() {
        assert_eq!(pins().ruler_changes(&pins()), Vec::<String>::new());
    }

    #[test]
    fn a_changed_server_catalog_moves_the_ruler_with_its_drift_classes() {
        let tool = |name: &str, required: &[&str], description: &str| {
            serde_json::json!({"name": name, "description": description, "inputSchema": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
                "required": required,
            }})
        };
        let pin = |tools: Vec<serde_json::Value>, version: &str| {
            ServerPin::new("node server.js".into(), Some(version.into()), &tools)
        };
        let mut baseline = pins();
        baseline.servers.insert(
            "memory".into(),
            pin(vec![tool("search", &["query"], "Search.")], "memory 1.0"),
        );
        let mut current = pins();
        current.servers.insert(
            "memory".into(),
            pin(
                vec![
                    tool("search", &["query", "limit"], "Search nodes."),
                    tool("open", &[], "Open."),
                ],
                "memory 1.1",
            ),
        );
        assert_eq!(
            current.ruler_changes(&baseline),
            vec![
                "the tools of server `memory` changed (1 breaking, 1 non-breaking, 1 description changes)",
                "server `memory` version `memory 1.0` -> `memory 1.1`",
            ]
        );
        let same = baseline.clone();
        assert_eq!(baseline.ruler_changes(&same), Vec::<String>::new());
    }

    #[test]
    fn ruler_changes_name_changed_scenarios_catalog_judge_and_harness() {
        let baseline = pins();
        let mut current = pins();
        current.scenarios.get_mut("T5-001").expect("pinned").sha256 = "e".repeat(64);
        current.catalog_sha256 = "d".repeat(64);
        current.judge_model = Some("judge-2".into());
        current.harness_version = "0.2.0".into();
        assert_eq!(
            current.ruler_changes(&baseline),
            vec![
                "scenario files changed: `T5-001`",
                "the tool catalog changed",
                "judge model `none` -> `judge-2`",
                "harness version `0.1.0` -> `0.2.0`",
            ]
        );
    }

    #[test]
    fn a_changed_user_simulator_moves_the_ruler_only_when_both_runs_had_one() {
        let mut baseline = pins();
        let mut current = pins();
        current.user_simulator = Some("sim-2 at http://h/v1, prompt v1 (abc)".into());
        assert_eq!(current.ruler_changes(&baseline), Vec::<String>::new());
        baseline.user_simulator = Some("sim-1 at http://h/v1, prompt v1 (abc)".into());
        assert_eq!(
            current.ruler_changes(&baseline),
            vec![
                "user simulator `sim-1 at http://h/v1, prompt v1 (abc)` -> `sim-2 at \
                 http://h/v1, prompt v1 (abc)`"
            ]
        );
        current.user_simulator.clone_from(&baseline.user_simulator);
        assert_eq!(current.ruler_changes(&baseline), Vec::<String>::new());
    }

    #[test]
    fn scenarios_only_one_side_has_do_not_move_the_ruler() {
        let baseline = pins();
        let mut current = pins();
        current.scenarios.remove("T5-001");
        current.rehash();
        assert_ne!(current.scenario_set_sha256, baseline.scenario_set_sha256);
        assert_eq!(current.ruler_changes(&baseline), Vec::<String>::new());
    }

    #[test]
    fn subject_changes_name_the_model() {
        let mut current = pins();
        current.model = Some("m2".into());
        assert_eq!(current.subject_changes(&pins()), vec!["model `m` -> `m2`"]);
        let prompted = Pins {
            tool_calling: Some("prompted".to_owned()),
            ..pins()
        };
        assert_eq!(
            prompted.subject_changes(&pins()),
            vec!["tool calling `native` -> `prompted`"]
        );
        let smaller = Pins {
            tool_offer: Some("scenario".to_owned()),
            ..pins()
        };
        assert_eq!(
            smaller.ruler_changes(&pins()),
            vec!["tool offer `all` -> `scenario`"]
        );
        assert_eq!(smaller.subject_changes(&pins()), Vec::<String>::new());
    }

    #[test]
    fn shards_partition_the_suite() {
        let shards: Vec<Shard> = (1..=3)
            .map(|i| Shard::parse(&format!("{i}/3")).expect("valid"))
            .collect();
        for position in 0..10 {
            assert_eq!(shards.iter().filter(|s| s.contains(position)).count(), 1);
        }
        assert!(shards[0].contains(0) && shards[1].contains(1) && shards[0].contains(3));
        assert_eq!(
            Shard::parse("0/2"),
            Err("`0/2` is not a shard `i/n` with 1 <= i <= n".to_string())
        );
        assert!(Shard::parse("3/2").is_err() && Shard::parse("x").is_err());
    }
}
