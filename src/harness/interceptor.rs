//! The interceptor: the [`Backend`] of one run. It counts calls per tool, injects the
//! scenario's faults, validates arguments, runs the tool on the world and records every call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use serde_json::{Map, Value};

use super::{Backend, CallOutcome, CallRecord, InvalidCallKind, ToolSet};
use crate::scenario::Fault;
use crate::world::World;

/// The harness of one run: tools, faults, the world and the trace so far.
///
/// Calls are serialised by a lock, so the world changes in arrival order and ids are
/// deterministic for a sequential agent.
pub struct Harness {
    tools: Arc<ToolSet>,
    faults: Vec<Fault>,
    state: Mutex<RunState>,
}

struct RunState {
    world: World,
    trace: Vec<CallRecord>,
    calls_per_tool: HashMap<String, u32>,
    /// The model turn the agent said it is in; `None` until it says so.
    turn: Option<u32>,
}

impl RunState {
    /// The turn of the next call: the agent's current turn, or one past the last call's turn
    /// for an agent that never names its turns (each call its own turn).
    fn next_turn(&self) -> u32 {
        self.turn
            .unwrap_or_else(|| self.trace.last().map_or(1, |call| call.turn + 1))
    }
}

impl Harness {
    /// A harness over `world` that injects `faults`.
    pub fn new(tools: Arc<ToolSet>, world: World, faults: Vec<Fault>) -> Harness {
        Harness {
            tools,
            faults,
            state: Mutex::new(RunState {
                world,
                trace: Vec::new(),
                calls_per_tool: HashMap::new(),
                turn: None,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, RunState> {
        // A panic while holding the lock cannot leave the trace half-written in a way that
        // matters more than losing the run, so a poisoned lock is taken over.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Marks the start of model turn `turn` (1-based): every call recorded from now on belongs
    /// to it, until the next turn begins.
    pub fn begin_turn(&self, turn: u32) {
        self.lock().turn = Some(turn);
    }

    /// Records a call the agent emitted that could not be sent (unusable arguments).
    pub fn record_invalid(&self, tool: &str, raw_arguments: &str, kind: InvalidCallKind) {
        let mut state = self.lock();
        let index = state.trace.len();
        let turn = state.next_turn();
        state.trace.push(CallRecord {
            index,
            tool: tool.to_string(),
            arguments: Value::String(raw_arguments.to_string()),
            outcome: CallOutcome::InvalidCall,
            result: None,
            error: Some(format!("{kind:?}")),
            fault: None,
            invalid: Some(kind),
            duration_us: 0,
            turn,
            refused: true,
        });
    }

    /// Records a call that got a protocol-level failure instead of a tool result: refused by
    /// the server (an unknown tool) or lost in transport.
    pub fn record_protocol_error(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        message: String,
    ) {
        let mut state = self.lock();
        let index = state.trace.len();
        let turn = state.next_turn();
        state.trace.push(CallRecord {
            index,
            tool: tool.to_string(),
            arguments: Value::Object(arguments),
            outcome: CallOutcome::ProtocolError,
            result: None,
            error: Some(message),
            fault: None,
            invalid: None,
            duration_us: 0,
            turn,
            refused: true,
        });
    }

    /// The trace so far, in arrival order.
    pub fn trace(&self) -> Vec<CallRecord> {
        self.lock().trace.clone()
    }

    /// The world's current state.
    pub fn state(&self) -> Value {
        self.lock().world.snapshot()
    }
}

impl Backend for Harness {
    fn tool_definitions(&self) -> &[Value] {
        self.tools.definitions()
    }

    fn call(&self, tool: &str, arguments: Map<String, Value>) -> Result<Value, String> {
        let started = Instant::now();
        let mut state = self.lock();
        let nth = {
            let count = state.calls_per_tool.entry(tool.to_string()).or_insert(0);
            *count += 1;
            *count
        };
        let fault = self
            .faults
            .iter()
            .find(|fault| fault.hits(tool, nth))
            .map(|fault| fault.error);
        let mut refused = false;
        let outcome = match fault {
            Some(kind) => Err(kind.message(tool)),
            None => match self.tools.validate(tool, &arguments) {
                Ok(()) => state.world.call(tool, &arguments),
                Err(message) => {
                    refused = true;
                    Err(message)
                }
            },
        };
        let index = state.trace.len();
        let turn = state.next_turn();
        let duration_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        let (call_outcome, result, error) = match &outcome {
            Ok(value) => (CallOutcome::Success, Some(value.clone()), None),
            Err(message) => (CallOutcome::ToolError, None, Some(message.clone())),
        };
        state.trace.push(CallRecord {
            index,
            tool: tool.to_string(),
            arguments: Value::Object(arguments),
            outcome: call_outcome,
            result,
            error,
            fault,
            invalid: None,
            duration_us,
            turn,
            refused,
        });
        outcome
    }

    fn rejected(&self, tool: &str, arguments: Map<String, Value>, message: &str) {
        self.record_protocol_error(tool, arguments, message.to_string());
    }
}
