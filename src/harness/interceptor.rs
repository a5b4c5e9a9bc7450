//! The interceptor: wraps the [`Backend`] of one run. It counts calls per tool, injects the
//! scenario's faults, checks arguments against the input schema, hands the call to the backend
//! and records every call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use serde_json::{Map, Value};

use super::{Backend, ToolAnswer, ToolSet};
use crate::scenario::Fault;
use crate::trace::{CallOutcome, CallRecord, InvalidCallKind};

/// The harness of one run: a backend, the faults to inject and the trace so far.
///
/// Calls are serialised by a fair lock around the backend, so its state changes in arrival
/// order and ids are deterministic for a sequential agent.
pub struct Harness {
    tools: Arc<ToolSet>,
    faults: Vec<Fault>,
    backend: tokio::sync::Mutex<Box<dyn Backend>>,
    state: Mutex<RunState>,
}

struct RunState {
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
    /// A harness over `backend` that injects `faults`.
    pub fn new(backend: Box<dyn Backend>, faults: Vec<Fault>) -> Harness {
        Harness {
            tools: Arc::clone(backend.tools()),
            faults,
            backend: tokio::sync::Mutex::new(backend),
            state: Mutex::new(RunState {
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
            error: Some(kind.as_str().to_owned()),
            fault: None,
            invalid: Some(kind),
            duration_us: 0,
            turn,
            refused: true,
            unknown_tool: !self.tools.offers(tool),
            violations: Vec::new(),
            unmatched: false,
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
            unknown_tool: !self.tools.offers(tool),
            violations: Vec::new(),
            unmatched: false,
        });
    }

    /// The trace so far, in arrival order.
    pub fn trace(&self) -> Vec<CallRecord> {
        self.lock().trace.clone()
    }

    /// The served catalog.
    pub fn tools(&self) -> &Arc<ToolSet> {
        &self.tools
    }

    /// The backend's state after the run (see [`Backend::state`]).
    pub async fn state(&self) -> Option<Value> {
        self.backend.lock().await.state()
    }

    /// Handles one `tools/call` for a tool in the catalog: injects a fault when one is due
    /// (the backend is not called), refuses arguments the input schema rejects, and otherwise
    /// hands the call to the backend. Every call is recorded, with its schema violations.
    pub async fn call(&self, tool: &str, arguments: Map<String, Value>) -> ToolAnswer {
        let mut backend = self.backend.lock().await;
        let started = Instant::now();
        let nth = {
            let mut state = self.lock();
            let count = state.calls_per_tool.entry(tool.to_string()).or_insert(0);
            *count += 1;
            *count
        };
        let fault = self
            .faults
            .iter()
            .find(|fault| fault.hits(tool, nth))
            .map(|fault| fault.error);
        let check = self.tools.check(tool, &arguments);
        let refusal = check.as_ref().and_then(|check| check.refusal.clone());
        let refused = fault.is_none() && refusal.is_some();
        let answer = match (fault, refusal) {
            (Some(kind), _) => ToolAnswer::ToolError(kind.message(tool)),
            (None, Some(message)) => ToolAnswer::ToolError(message),
            (None, None) => backend.call(tool, &arguments).await,
        };
        let duration_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        let (outcome, result, error) = match &answer {
            ToolAnswer::Success(value) => (CallOutcome::Success, Some(value.clone()), None),
            ToolAnswer::ToolError(message) => (CallOutcome::ToolError, None, Some(message.clone())),
            ToolAnswer::ProtocolError(message) => {
                (CallOutcome::ProtocolError, None, Some(message.clone()))
            }
            ToolAnswer::Unmatched(message) => (CallOutcome::ToolError, None, Some(message.clone())),
        };
        let mut state = self.lock();
        let index = state.trace.len();
        let turn = state.next_turn();
        state.trace.push(CallRecord {
            index,
            tool: tool.to_string(),
            arguments: Value::Object(arguments),
            outcome,
            result,
            error,
            fault,
            invalid: None,
            duration_us,
            turn,
            refused,
            unknown_tool: check.is_none(),
            violations: check.map(|check| check.violations).unwrap_or_default(),
            unmatched: matches!(answer, ToolAnswer::Unmatched(_)),
        });
        answer
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use futures::future::BoxFuture;
    use serde_json::json;

    use super::*;
    use crate::scenario::FaultKind;
    use crate::trace::{ArgumentErrorClass, Violation};

    /// A backend that counts the calls reaching it and answers `upstream` with a JSON-RPC
    /// error, anything else with its arguments.
    struct Counting {
        tools: Arc<ToolSet>,
        reached: Arc<AtomicUsize>,
    }

    impl Backend for Counting {
        fn tools(&self) -> &Arc<ToolSet> {
            &self.tools
        }

        fn call<'a>(
            &'a mut self,
            tool: &'a str,
            arguments: &'a Map<String, Value>,
        ) -> BoxFuture<'a, ToolAnswer> {
            self.reached.fetch_add(1, Ordering::SeqCst);
            let answer = match tool {
                "upstream" => ToolAnswer::ProtocolError("JSON-RPC error -32603: boom".into()),
                _ => ToolAnswer::Success(Value::Object(arguments.clone())),
            };
            Box::pin(std::future::ready(answer))
        }

        fn state(&self) -> Option<Value> {
            None
        }
    }

    fn harness(faults: Vec<Fault>) -> (Harness, Arc<AtomicUsize>) {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}},
            "required": ["n"]});
        let tools = ToolSet::from_definitions(vec![
            json!({"name": "echo", "inputSchema": schema}),
            json!({"name": "upstream", "inputSchema": {"type": "object"}}),
        ])
        .expect("valid schemas");
        let reached = Arc::new(AtomicUsize::new(0));
        let backend = Counting {
            tools: Arc::new(tools),
            reached: Arc::clone(&reached),
        };
        (Harness::new(Box::new(backend), faults), reached)
    }

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().cloned().expect("an object")
    }

    #[tokio::test]
    async fn an_injected_fault_answers_in_front_of_the_backend() {
        let fault = Fault {
            tool: "echo".into(),
            on_call: 1,
            times: 1,
            error: FaultKind::RateLimit,
        };
        let (harness, reached) = harness(vec![fault]);
        let first = harness.call("echo", args(json!({"n": 1}))).await;
        assert_eq!(
            first,
            ToolAnswer::ToolError(FaultKind::RateLimit.message("echo"))
        );
        assert_eq!(reached.load(Ordering::SeqCst), 0);
        let second = harness.call("echo", args(json!({"n": 1}))).await;
        assert_eq!(second, ToolAnswer::Success(json!({"n": 1})));
        assert_eq!(reached.load(Ordering::SeqCst), 1);
        let trace = harness.trace();
        assert_eq!(trace[0].fault, Some(FaultKind::RateLimit));
        assert!(!trace[0].refused);
        assert_eq!(trace[1].outcome, CallOutcome::Success);
    }

    #[tokio::test]
    async fn arguments_the_schema_rejects_are_refused_and_classified_once() {
        let (harness, reached) = harness(Vec::new());
        let answer = harness.call("echo", args(json!({"n": "one"}))).await;
        assert_eq!(
            answer,
            ToolAnswer::ToolError(
                r#"invalid arguments for `echo`: `/n`: "one" is not of type "integer""#.into()
            )
        );
        assert_eq!(reached.load(Ordering::SeqCst), 0);
        let call = &harness.trace()[0];
        assert!(call.refused);
        assert_eq!(
            call.violations,
            vec![Violation {
                class: ArgumentErrorClass::TypeError,
                pointer: "/n".into(),
                message: r#""one" is not of type "integer""#.into(),
            }]
        );
    }

    #[tokio::test]
    async fn a_backend_protocol_error_is_recorded_as_one() {
        let (harness, _) = harness(Vec::new());
        let answer = harness.call("upstream", Map::new()).await;
        assert_eq!(
            answer,
            ToolAnswer::ProtocolError("JSON-RPC error -32603: boom".into())
        );
        let call = &harness.trace()[0];
        assert_eq!(call.outcome, CallOutcome::ProtocolError);
        assert_eq!(call.error.as_deref(), Some("JSON-RPC error -32603: boom"));
        assert!(!call.refused);
    }

    #[test]
    fn an_invalid_call_is_named_in_snake_case_in_the_trace() {
        let (harness, _) = harness(Vec::new());
        harness.record_invalid("echo", "{\"n\":", InvalidCallKind::Truncated);
        harness.record_invalid("nope", "[]", InvalidCallKind::ArgumentsNotObject);
        let trace = harness.trace();
        assert_eq!(trace[0].error.as_deref(), Some("truncated"));
        assert!(!trace[0].unknown_tool);
        assert_eq!(trace[1].error.as_deref(), Some("arguments_not_object"));
        assert!(trace[1].unknown_tool);
    }
}
