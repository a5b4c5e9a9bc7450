//! Replay: serving a suite's recorded answers without its servers.
//!
//! A call is matched on its tool and its canonical arguments ([`crate::json::canonical`]: key
//! order and `1` vs `1.0` do not matter), after the same scrubbing the recording applied. The
//! n-th identical call gets the n-th recorded answer. Anything else is never guessed: the
//! agent gets a tool error starting `not_recorded:` (as for a mock's unmatched call) and the
//! call is traced as `not_recorded`, which fails the run. A run without a cassette is
//! `errored` (nothing was recorded).
//!
//! The recorded answers of the final-state probes after the run are evidence only when the
//! agent did what the recording did: every call it made was in the cassette, and every
//! recorded call of a tool that is not read-only (`readOnlyHint`) was made again (the same
//! writes). Otherwise [`Backend::probes_not_evidence`] names the first difference.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Result, bail};
use futures::future::BoxFuture;
use serde_json::{Map, Value};

use super::{Cassette, RecordedAnswer, Scrubber, ServerEntry, file_name, load_dir};
use crate::harness::servers::DiscoveredServer;
use crate::harness::{Backend, BackendFactory, Discovery, ToolAnswer, ToolSet};
use crate::json::{DoubleEncoded, NumberMode};
use crate::scenario::Scenario;
use crate::suite::RunPaths;

/// The most characters of a call's arguments quoted in a `not_recorded` reason.
const ARGUMENTS_SHOWN_CHARS: usize = 300;

/// The recorded runs of a cassette directory, one fresh replay per run.
pub struct ReplayBackends {
    dir: PathBuf,
    tools: Arc<ToolSet>,
    discovery: Discovery,
    runs: HashMap<(String, u32), Arc<Cassette>>,
    scrubber: Arc<Scrubber>,
    /// The tools that say they only read (`readOnlyHint: true`).
    read_only: Arc<BTreeSet<String>>,
}

impl ReplayBackends {
    /// Reads every cassette in `dir`; incoming arguments are scrubbed by `scrubber` (the
    /// recording's) before matching, and checked in the scoring modes `numbers` and
    /// `double_encoded`.
    ///
    /// Errors: a bad cassette or directory (see [`load_dir`]), two cassettes of one run, or
    /// cassettes that disagree on the servers or their tools (recorded against different
    /// catalogs), naming both files.
    pub fn load(
        dir: &Path,
        scrubber: Scrubber,
        numbers: NumberMode,
        double_encoded: DoubleEncoded,
    ) -> Result<ReplayBackends> {
        let cassettes = load_dir(dir)?;
        let first = &cassettes[0];
        for cassette in &cassettes[1..] {
            if let Some(difference) =
                catalog_difference(&first.header.servers, &cassette.header.servers)
            {
                bail!(
                    "cassettes `{}` and `{}` were recorded against different catalogs ({difference}); record the directory again",
                    first.path.display(),
                    cassette.path.display()
                );
            }
        }
        let discovery = Discovery {
            servers: first
                .header
                .servers
                .iter()
                .map(|server| DiscoveredServer {
                    name: server.name.clone(),
                    label: format!("replay {}", dir.display()),
                    version: server.server_info.clone(),
                    protocol_version: server.protocol_version.clone(),
                    tools: server.tools.clone(),
                    warnings: Vec::new(),
                })
                .collect(),
        };
        let catalog = discovery.catalog()?;
        let read_only = Arc::new(catalog.read_only_names());
        let tools = ToolSet::from_definitions(catalog.definitions().to_vec())?
            .with_modes(numbers, double_encoded);
        let mut runs: HashMap<(String, u32), Arc<Cassette>> = HashMap::new();
        for cassette in cassettes {
            let key = (cassette.header.scenario.clone(), cassette.header.repeat);
            if let Some(other) = runs.get(&key) {
                bail!(
                    "cassettes `{}` and `{}` both record run {} of scenario `{}`",
                    other.path.display(),
                    cassette.path.display(),
                    key.1,
                    key.0
                );
            }
            runs.insert(key, Arc::new(cassette));
        }
        Ok(ReplayBackends {
            dir: dir.to_path_buf(),
            tools: Arc::new(tools),
            discovery,
            runs,
            scrubber: Arc::new(scrubber),
            read_only,
        })
    }

    /// The servers and tools the cassettes were recorded with.
    pub fn discovery(&self) -> &Discovery {
        &self.discovery
    }

    /// A replay of run `repeat` of scenario `id`. `Err` is the `not_recorded:` reason when no
    /// cassette holds it.
    pub fn replay(&self, id: &str, repeat: u32) -> Result<ReplayBackend, String> {
        let Some(cassette) = self.runs.get(&(id.to_owned(), repeat)) else {
            let expected = self.dir.join(file_name(id, repeat));
            if let Some(other) = self.runs.values().find(|c| c.path == expected) {
                return Err(format!(
                    "not_recorded: `{}` records run {} of scenario `{}` (its header says so), not run {repeat} of `{id}`; record it again with `toolgate gate --record {}`",
                    expected.display(),
                    other.header.repeat,
                    other.header.scenario,
                    self.dir.display()
                ));
            }
            return Err(format!(
                "not_recorded: no cassette `{}` for run {repeat} of scenario `{id}`; record it with `toolgate gate --record {}`",
                self.dir.join(file_name(id, repeat)).display(),
                self.dir.display()
            ));
        };
        let mut answers: HashMap<String, VecDeque<RecordedAnswer>> = HashMap::new();
        for (_, interaction) in &cassette.interactions {
            answers
                .entry(call_key(&interaction.tool, &interaction.arguments))
                .or_default()
                .push_back(interaction.answer.clone());
        }
        Ok(ReplayBackend {
            tools: Arc::clone(&self.tools),
            path: cassette.path.clone(),
            answers,
            served: HashMap::new(),
            scrubber: Arc::clone(&self.scrubber),
            cassette: Arc::clone(cassette),
            read_only: Arc::clone(&self.read_only),
            first_miss: None,
            seed: None,
        })
    }
}

/// How two cassettes' servers differ, if they do.
fn catalog_difference(a: &[ServerEntry], b: &[ServerEntry]) -> Option<String> {
    let names = |servers: &[ServerEntry]| {
        servers
            .iter()
            .map(|server| server.name.clone())
            .collect::<Vec<_>>()
    };
    if names(a) != names(b) {
        return Some(format!(
            "servers {} vs {}",
            names(a).join(", "),
            names(b).join(", ")
        ));
    }
    a.iter()
        .zip(b)
        .find(|(x, y)| x.tools_sha256 != y.tools_sha256)
        .map(|(x, _)| format!("the tools of server `{}`", x.name))
}

/// The matching key of a call: its tool and canonical arguments.
fn call_key(tool: &str, arguments: &Map<String, Value>) -> String {
    format!(
        "{tool}\u{0}{}",
        crate::json::canonical(&Value::Object(arguments.clone()))
    )
}

impl BackendFactory for ReplayBackends {
    fn tools(&self) -> &Arc<ToolSet> {
        &self.tools
    }

    fn start<'a>(
        &'a self,
        scenario: &'a Scenario,
        repeat: u32,
    ) -> BoxFuture<'a, Result<Box<dyn Backend>, String>> {
        let backend = self
            .replay(&scenario.id, repeat)
            .and_then(|backend| backend.seeded(scenario.seed_path.as_deref()))
            .map(|backend| Box::new(backend) as Box<dyn Backend>);
        Box::pin(std::future::ready(backend))
    }
}

/// One run replayed from its cassette.
pub struct ReplayBackend {
    tools: Arc<ToolSet>,
    path: PathBuf,
    /// Call key -> the answers not yet served, in recorded order.
    answers: HashMap<String, VecDeque<RecordedAnswer>>,
    /// Call key -> how many were served.
    served: HashMap<String, usize>,
    scrubber: Arc<Scrubber>,
    cassette: Arc<Cassette>,
    read_only: Arc<BTreeSet<String>>,
    /// The first call the cassette did not hold, in words.
    first_miss: Option<String>,
    /// The run's own (empty) seed directory and its paths, once [`ReplayBackend::seeded`].
    seed: Option<(tempfile::TempDir, RunPaths)>,
}

impl ReplayBackend {
    /// This replay with a fresh, empty seed directory of its own, `{seed}` named after
    /// `seed`: a recorded `{seed_dir}` is matched against and filled with it.
    /// `Err` when the directory cannot be made.
    pub fn seeded(mut self, seed: Option<&Path>) -> Result<ReplayBackend, String> {
        let dir = tempfile::Builder::new()
            .prefix("toolgate-run-")
            .tempdir()
            .map_err(|error| format!("failed to create the run's seed directory: {error}"))?;
        let paths = RunPaths::for_seed(dir.path(), seed);
        self.seed = Some((dir, paths));
        Ok(self)
    }

    /// The recorded answer to `tool` with `arguments`, or the `not_recorded:` reason.
    pub fn answer(
        &mut self,
        tool: &str,
        arguments: &Map<String, Value>,
    ) -> Result<ToolAnswer, String> {
        let seed_dir = self
            .seed
            .as_ref()
            .map(|(_, p)| p.seed_dir.to_string_lossy().into_owned());
        let seed_dir = seed_dir.unwrap_or_default();
        let recorded = super::seed_dir::arguments_as_recorded(arguments, &seed_dir);
        let key = call_key(tool, &self.scrubber.map(&recorded));
        let served = self.served.entry(key.clone()).or_default();
        *served += 1;
        match self.answers.get_mut(&key).and_then(VecDeque::pop_front) {
            Some(answer) => Ok(super::seed_dir::answer_for_run(answer, &seed_dir).to_answer()),
            None => {
                let arguments = crate::json::canonical(&Value::Object(arguments.clone()));
                let which = match *served {
                    1 => String::new(),
                    n => format!(
                        " (its {} such call; the cassette holds {})",
                        ordinal(n),
                        n - 1
                    ),
                };
                let call = format!(
                    "`{tool}` with arguments {}{which}",
                    crate::redact::cut(&self.scrubber.text(&arguments), ARGUMENTS_SHOWN_CHARS)
                );
                let reason = format!(
                    "not_recorded: {call} is not in cassette `{}`; the agent did something the recording did not (record again against the live servers with `toolgate gate --record DIR`)",
                    self.path.display()
                );
                self.first_miss.get_or_insert_with(|| {
                    format!("the agent called {call}, which the recording did not")
                });
                Err(reason)
            }
        }
    }
}

impl ReplayBackend {
    /// The first difference between the calls so far and the recording: the first call the
    /// cassette did not hold, else the first recorded call of a tool that is not read-only
    /// that was not made again (in recorded order). `None` when there is none.
    pub fn difference(&self) -> Option<String> {
        if let Some(miss) = &self.first_miss {
            return Some(miss.clone());
        }
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (line, interaction) in &self.cassette.interactions {
            let key = call_key(&interaction.tool, &interaction.arguments);
            let nth = seen.entry(key.clone()).or_default();
            *nth += 1;
            let played = self.served.get(&key).copied().unwrap_or(0);
            if *nth > played && !self.read_only.contains(&interaction.tool) {
                let arguments =
                    crate::json::canonical(&Value::Object(interaction.arguments.clone()));
                return Some(format!(
                    "the recording called `{}` with arguments {} (cassette line {line}), which the agent did not",
                    interaction.tool,
                    crate::redact::cut(&arguments, ARGUMENTS_SHOWN_CHARS)
                ));
            }
        }
        None
    }
}

/// `2nd`, `3rd`, `11th`, ...
fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

impl Backend for ReplayBackend {
    fn tools(&self) -> &Arc<ToolSet> {
        &self.tools
    }

    fn call<'a>(
        &'a mut self,
        tool: &'a str,
        arguments: &'a Map<String, Value>,
    ) -> BoxFuture<'a, ToolAnswer> {
        let answer = self
            .answer(tool, arguments)
            .unwrap_or_else(ToolAnswer::NotRecorded);
        Box::pin(std::future::ready(answer))
    }

    fn state(&self) -> Option<Value> {
        None
    }

    fn probes_not_evidence(&self) -> Option<String> {
        self.difference().map(|difference| {
            format!(
                "the probes get the recorded answers whatever the agent did, and the agent's calls differ from the recording ({difference})"
            )
        })
    }

    fn paths(&self) -> Option<RunPaths> {
        self.seed.as_ref().map(|(_, paths)| paths.clone())
    }
}
