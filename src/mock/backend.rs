//! The mock catalog as a [`Backend`]: runs the first rule that applies to each call.

use std::collections::HashMap;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value};

use super::state::State;
use super::template::Context;
use super::{Effect, MockCatalog, Reply, Response, Rule};
use crate::harness::{Backend, BackendFactory, ToolAnswer, ToolSet};
use crate::scenario::Scenario;

/// Makes a fresh [`MockBackend`] for every scenario run and repetition, seeded with the
/// scenario's `seed_state`.
#[derive(Debug, Clone)]
pub struct MockBackends {
    catalog: Arc<MockCatalog>,
}

impl MockBackends {
    /// Backends answering from `catalog`.
    pub fn new(catalog: Arc<MockCatalog>) -> MockBackends {
        MockBackends { catalog }
    }
}

impl BackendFactory for MockBackends {
    fn tools(&self) -> &Arc<ToolSet> {
        &self.catalog.tools
    }

    fn start<'a>(
        &'a self,
        scenario: &'a Scenario,
        _repeat: u32,
    ) -> BoxFuture<'a, Result<Box<dyn Backend>, String>> {
        let started = MockBackend::new(Arc::clone(&self.catalog), &scenario.seeded)
            .map(|backend| Box::new(backend) as Box<dyn Backend>)
            .map_err(|error| {
                format!(
                    "failed to seed the mocks of `{}` from `{}`: {error}",
                    self.catalog.path.display(),
                    scenario.seed_state_name
                )
            });
        Box::pin(std::future::ready(started))
    }
}

/// One run's mocks: the catalog, the tables, and how often each tool and rule was used.
pub struct MockBackend {
    catalog: Arc<MockCatalog>,
    state: State,
    /// Calls per tool so far (for `{{call}}`).
    calls: HashMap<String, u32>,
    /// Times each (tool, rule index) applied so far (for `sequence`).
    fired: HashMap<(String, usize), usize>,
    /// Calls a rule answered so far (for `{{seq}}`).
    answered: u64,
}

impl MockBackend {
    /// A backend over `catalog` seeded with `seeded` (a fixture's object of collections).
    ///
    /// Errors: the fixture names a table the catalog does not declare.
    pub fn new(catalog: Arc<MockCatalog>, seeded: &Value) -> Result<MockBackend, String> {
        let state = State::seed(&catalog.tables, seeded)?;
        Ok(MockBackend {
            catalog,
            state,
            calls: HashMap::new(),
            fired: HashMap::new(),
            answered: 0,
        })
    }

    /// Answers one call (arguments already valid against the tool's schema).
    pub fn answer(&mut self, tool: &str, args: &Map<String, Value>) -> ToolAnswer {
        let call = {
            let count = self.calls.entry(tool.to_owned()).or_insert(0);
            *count += 1;
            *count
        };
        let catalog = Arc::clone(&self.catalog);
        let rules = catalog.rules.get(tool).map_or(&[][..], Vec::as_slice);
        for (index, rule) in rules.iter().enumerate() {
            if let Some(answer) = self.try_rule(tool, index, rule, args, call) {
                return answer;
            }
        }
        let shown = crate::json::short(&Value::Object(args.clone()));
        ToolAnswer::Unmatched(format!(
            "no mock rule of `{tool}` matches the arguments {shown} (mock catalog `{}`): add a rule for this call or fix the call",
            catalog.path.display()
        ))
    }

    /// Runs `rule` if it applies; `None` when it does not.
    fn try_rule(
        &mut self,
        tool: &str,
        index: usize,
        rule: &Rule,
        args: &Map<String, Value>,
        call: u32,
    ) -> Option<ToolAnswer> {
        let seq = self.answered + 1;
        let (selected, targets, set) = {
            let state = &self.state;
            let snapshot = || state.snapshot();
            let context = Context {
                args,
                rows: &[],
                state: &snapshot,
                call,
                seq,
            };
            let arguments_match = rule.matcher.iter().all(|(key, pattern)| {
                args.get(key)
                    .is_some_and(|value| pattern.matches(value, &context))
            });
            if !arguments_match {
                return None;
            }
            let selected = rule.select.as_ref().map(|select| {
                let mut positions = state.find(select.table, &select.filter, &context);
                if let Some(limit) = select.limit {
                    positions.truncate(limit);
                }
                state.rows(select.table, &positions)
            });
            let targets = match &rule.effect {
                Some(Effect::Update { table, filter, .. } | Effect::Delete { table, filter }) => {
                    Some(state.find(*table, filter, &context))
                }
                _ => None,
            };
            let found = match (&selected, &targets) {
                (Some(rows), _) => !rows.is_empty(),
                (None, Some(targets)) => !targets.is_empty(),
                (None, None) => true,
            };
            if rule.if_found.is_some_and(|wanted| wanted != found) {
                return None;
            }
            let selected = selected.unwrap_or_default();
            let set = match &rule.effect {
                Some(Effect::Update { set, .. }) => {
                    let context = Context {
                        rows: &selected,
                        ..context
                    };
                    Some(set.render(&context))
                }
                _ => None,
            };
            (selected, targets, set)
        };
        self.answered = seq;
        let fired = self.fired.entry((tool.to_owned(), index)).or_insert(0);
        let reply = match &rule.response {
            Response::Always(reply) => reply,
            Response::Sequence(replies) => &replies[(*fired).min(replies.len() - 1)],
        };
        *fired += 1;
        let rows = match (&rule.effect, reply) {
            (Some(effect), Reply::Return(_)) => {
                self.apply(effect, args, &selected, targets, set, call, seq)
            }
            _ => selected,
        };
        let state = &self.state;
        let snapshot = || state.snapshot();
        let context = Context {
            args,
            rows: &rows,
            state: &snapshot,
            call,
            seq,
        };
        Some(match reply {
            Reply::Return(template) => ToolAnswer::Success(template.render(&context)),
            Reply::Error(template) => ToolAnswer::ToolError(text(template.render(&context))),
            Reply::RpcError(template) => ToolAnswer::ProtocolError(text(template.render(&context))),
        })
    }

    /// Makes `effect`'s change; returns the rows it touched.
    #[expect(clippy::too_many_arguments, reason = "the pieces of one rule firing")]
    fn apply(
        &mut self,
        effect: &Effect,
        args: &Map<String, Value>,
        selected: &[Value],
        targets: Option<Vec<usize>>,
        set: Option<Value>,
        call: u32,
        seq: u64,
    ) -> Vec<Value> {
        let targets = targets.unwrap_or_default();
        match effect {
            Effect::Insert { table, row } => {
                let rendered = {
                    let state = &self.state;
                    let snapshot = || state.snapshot();
                    row.render(&Context {
                        args,
                        rows: selected,
                        state: &snapshot,
                        call,
                        seq,
                    })
                };
                vec![self.state.insert(*table, rendered)]
            }
            Effect::Update { table, .. } => {
                self.state
                    .update(*table, &targets, &set.unwrap_or(Value::Null))
            }
            Effect::Delete { table, .. } => self.state.delete(*table, &targets),
        }
    }

    /// The tables now.
    pub fn snapshot(&self) -> Value {
        self.state.snapshot()
    }
}

/// A rendered error message as text.
fn text(value: Value) -> String {
    match value {
        Value::String(text) => text,
        other => other.to_string(),
    }
}

impl Backend for MockBackend {
    fn tools(&self) -> &Arc<ToolSet> {
        &self.catalog.tools
    }

    fn call<'a>(
        &'a mut self,
        tool: &'a str,
        arguments: &'a Map<String, Value>,
    ) -> BoxFuture<'a, ToolAnswer> {
        Box::pin(std::future::ready(self.answer(tool, arguments)))
    }

    fn state(&self) -> Option<Value> {
        Some(self.state.snapshot())
    }
}
