//! The tool-backend seam: what answers `tools/list` and `tools/call` for one scenario run.
//!
//! The [`Harness`](super::Harness) wraps any backend with the same interception (trace,
//! argument checks, fault injection), so a backend only runs tools. Today's backend is the
//! built-in enterprise [`World`]; the user's own MCP servers, declarative mocks and recorded
//! cassettes plug in here too.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value};

use super::ToolSet;
use crate::scenario::Scenario;
use crate::world::World;

/// How a backend answered one `tools/call`.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolAnswer {
    /// The tool ran; the structured result (any JSON value).
    Success(Value),
    /// The tool ran; its result is plain text that is not JSON (a server's text content),
    /// served to the agent as text and traced as a JSON string.
    Text(String),
    /// A tool-level failure (an MCP result with `isError: true`); the text the agent sees.
    ToolError(String),
    /// A JSON-RPC error instead of a result (a server fault, an unknown tool upstream).
    ProtocolError(String),
    /// A declarative mock has no rule for these arguments: the agent sees a tool error with
    /// this text, and the call is recorded as unmatched (a failing check, never a pass).
    Unmatched(String),
    /// A replayed cassette holds no answer for this call: the agent sees a tool error with
    /// this text (starting `not_recorded:`), and the call is recorded as `not_recorded` (a
    /// failing check, as for an unmatched mock call; the run is not errored).
    NotRecorded(String),
}

/// The tools of one scenario run and their behaviour.
///
/// A backend is made fresh for each run (state never leaks between runs or repetitions) and
/// sees calls one at a time, in arrival order: the harness serialises them, so `&mut self`
/// needs no locking. Arguments reaching [`Backend::call`] are already valid against the
/// tool's input schema and name a tool in [`Backend::tools`].
pub trait Backend: Send {
    /// The catalog this backend serves (definitions in catalog order, with validators).
    fn tools(&self) -> &Arc<ToolSet>;

    /// Runs one `tools/call`.
    fn call<'a>(
        &'a mut self,
        tool: &'a str,
        arguments: &'a Map<String, Value>,
    ) -> BoxFuture<'a, ToolAnswer>;

    /// The backend's whole state after the run, as `final_state_assertions` read it; `None`
    /// when toolgate cannot see the state (a real server: probe it with tool calls instead).
    fn state(&self) -> Option<Value>;

    /// Why the backend broke during the run (a server that died), with what it last said;
    /// the run is then `errored`, never scored. `None` while it works (the default).
    fn failure(&self) -> Option<String> {
        None
    }

    /// Why the backend's answers to the final-state probes after the run say nothing about
    /// what the agent did: a replay whose calls differ from the recording (naming the first
    /// difference). Asked after those probes; `None` when they are evidence (the default).
    fn probes_not_evidence(&self) -> Option<String> {
        None
    }

    /// The run's seed paths (`{seed_dir}`, `{seed}`) when the backend has them (the user's
    /// servers, a replay of their cassettes); `None` (the default) otherwise. The runner fills
    /// the scenario's placeholders with them and writes the run's records with `{seed_dir}`.
    fn paths(&self) -> Option<crate::suite::RunPaths> {
        None
    }

    /// Ends the run: stops whatever the backend started (server processes). Called once,
    /// after the final-state probes; the default does nothing.
    fn close(&mut self) -> BoxFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }
}

/// Makes the fresh backend of each scenario run, and names the catalog they all serve.
pub trait BackendFactory: Send + Sync {
    /// The catalog every backend of the suite serves.
    fn tools(&self) -> &Arc<ToolSet>;

    /// A fresh backend for run `repeat` (0-based) of `scenario`, seeded with its start state.
    /// `Err` says why no backend could be made (a server that did not start); the run is
    /// then `errored`, never a model failure.
    fn start<'a>(
        &'a self,
        scenario: &'a Scenario,
        repeat: u32,
    ) -> BoxFuture<'a, Result<Box<dyn Backend>, String>>;
}

/// The built-in world for every run, seeded with each scenario's `seed_state`.
pub struct WorldBackends {
    tools: Arc<ToolSet>,
}

impl WorldBackends {
    /// Worlds serving `tools` (the built-in catalog's tool set).
    pub fn new(tools: Arc<ToolSet>) -> WorldBackends {
        WorldBackends { tools }
    }
}

impl BackendFactory for WorldBackends {
    fn tools(&self) -> &Arc<ToolSet> {
        &self.tools
    }

    fn start<'a>(
        &'a self,
        scenario: &'a Scenario,
        _repeat: u32,
    ) -> BoxFuture<'a, Result<Box<dyn Backend>, String>> {
        let backend = WorldBackend::new(Arc::clone(&self.tools), &scenario.seeded);
        Box::pin(std::future::ready(
            Ok(Box::new(backend) as Box<dyn Backend>),
        ))
    }
}

/// The built-in enterprise world as a backend: seeded mock state, changed only by calls.
pub struct WorldBackend {
    tools: Arc<ToolSet>,
    world: World,
}

impl WorldBackend {
    /// A world seeded with `seeded` (a fixture as [`crate::scenario::load_fixture`] returns it),
    /// serving `tools`.
    pub fn new(tools: Arc<ToolSet>, seeded: &Value) -> WorldBackend {
        WorldBackend {
            tools,
            world: World::new(seeded),
        }
    }
}

impl Backend for WorldBackend {
    fn tools(&self) -> &Arc<ToolSet> {
        &self.tools
    }

    fn call<'a>(
        &'a mut self,
        tool: &'a str,
        arguments: &'a Map<String, Value>,
    ) -> BoxFuture<'a, ToolAnswer> {
        let answer = match self.world.call(tool, arguments) {
            Ok(value) => ToolAnswer::Success(value),
            Err(message) => ToolAnswer::ToolError(message),
        };
        Box::pin(std::future::ready(answer))
    }

    fn state(&self) -> Option<Value> {
        Some(self.world.snapshot())
    }
}
