//! The interceptor: wraps the [`Backend`] of one run. It counts calls per tool, injects the
//! scenario's faults, checks arguments against the input schema, hands the call to the backend
//! and records every call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use serde_json::{Map, Value};

use super::elicit::{self, Asker, Elicitations, OwnPlay};
use super::{Backend, ToolAnswer, ToolSet};
use crate::scenario::{Elicitation, Fault, FaultKind, ForbiddenCall};
use crate::trace::{CallNote, CallOutcome, CallRecord, ElicitationRecord, InvalidCallKind};

/// The harness of one run: a backend, the faults to inject and the trace so far.
///
/// Calls are serialised by a fair lock around the backend, so its state changes in arrival
/// order and ids are deterministic for a sequential agent.
pub struct Harness {
    tools: Arc<ToolSet>,
    faults: Vec<Fault>,
    /// Forbidden calls refused before they reach the backend (`block_forbidden`).
    blocked: Vec<ForbiddenCall>,
    backend: tokio::sync::Mutex<Box<dyn Backend>>,
    state: Mutex<RunState>,
    /// When the harness was made (the run's tools became available).
    created: (Instant, std::time::SystemTime),
    /// Called with every call as it is recorded ([`Harness::streaming`]).
    observer: Option<Observer>,
    /// Hand calls the input schema rejects to the backend anyway (a proxy stays transparent).
    forward_invalid: bool,
    /// Keep the calls in memory ([`Harness::trace`]); a long-lived server that streams them
    /// to its observer does not.
    retain: bool,
    /// What tools ask the user before they run (`elicitations`), and the user who answers.
    elicitations: Option<Arc<Elicitations>>,
}

/// What [`Harness::streaming`] calls with each recorded call.
pub type Observer = Box<dyn Fn(&CallRecord) + Send + Sync>;

struct RunState {
    /// The calls recorded, kept unless the harness only streams them.
    trace: Vec<CallRecord>,
    /// How many calls were recorded (kept or not): the next call's index.
    recorded: usize,
    /// The turn of the last call recorded.
    last_turn: Option<u32>,
    /// When each call of `trace` arrived, in microseconds since the harness was made.
    arrivals_us: Vec<u64>,
    calls_per_tool: HashMap<String, u32>,
    /// The model turn the agent said it is in; `None` until it says so.
    turn: Option<u32>,
    /// Parser notes for the next call recorded, taken by it.
    pending_notes: Vec<CallNote>,
}

impl RunState {
    /// The turn of the next call: the agent's current turn, or one past the last call's turn
    /// for an agent that never names its turns (each call its own turn).
    fn next_turn(&self) -> u32 {
        self.turn
            .unwrap_or_else(|| self.last_turn.map_or(1, |turn| turn + 1))
    }
}

impl Harness {
    /// A harness over `backend` that injects `faults`.
    pub fn new(backend: Box<dyn Backend>, faults: Vec<Fault>) -> Harness {
        Harness {
            tools: Arc::clone(backend.tools()),
            faults,
            blocked: Vec::new(),
            backend: tokio::sync::Mutex::new(backend),
            state: Mutex::new(RunState {
                trace: Vec::new(),
                recorded: 0,
                last_turn: None,
                arrivals_us: Vec::new(),
                calls_per_tool: HashMap::new(),
                turn: None,
                pending_notes: Vec::new(),
            }),
            created: (Instant::now(), std::time::SystemTime::now()),
            observer: None,
            forward_invalid: false,
            retain: true,
            elicitations: None,
        }
    }

    /// Makes calls of the tools in `elicitations` ask the user before they run: through the
    /// calling MCP client, only for a call that would reach the backend (not blocked, not
    /// hit by a fault, valid arguments). An accepted request lets the call run; a declined or
    /// cancelled one, or a client that cannot ask, answers it with a tool error instead, and
    /// the backend is not called. Every request is recorded on its call
    /// ([`CallRecord::elicitation`]).
    pub fn eliciting(mut self, elicitations: Arc<Elicitations>) -> Harness {
        self.elicitations = Some(elicitations);
        self
    }

    /// The run's elicitations, when its tools ask the user anything.
    pub fn elicitations(&self) -> Option<&Arc<Elicitations>> {
        self.elicitations.as_ref()
    }

    /// Shows every call to `observer` as it is recorded and keeps none in memory: for a
    /// long-lived server or proxy, whose memory must not grow with its calls.
    /// [`Harness::trace`] and [`Harness::arrivals_us`] are then empty.
    pub fn streaming(mut self, observer: Observer) -> Harness {
        self.observer = Some(observer);
        self.retain = false;
        self
    }

    /// When the harness was made, as wall-clock time: what [`Harness::arrivals_us`] counts
    /// from.
    pub fn created_at(&self) -> std::time::SystemTime {
        self.created.1
    }

    /// When each call of [`Harness::trace`] arrived (for a refused or invalid call: when it
    /// was recorded), in microseconds since [`Harness::created_at`]; one per call, in order.
    pub fn arrivals_us(&self) -> Vec<u64> {
        self.lock().arrivals_us.clone()
    }

    /// Hands calls whose arguments the input schema rejects to the backend instead of refusing
    /// them; their violations are still recorded. For a proxy, whose server must see what
    /// the client sent.
    pub fn forwarding_invalid(mut self) -> Harness {
        self.forward_invalid = true;
        self
    }

    /// Appends `record` (a call that arrived at `arrived`) to the trace and shows it to the
    /// observer; a streaming harness only shows it.
    fn push(&self, state: &mut RunState, record: CallRecord, arrived: Instant) {
        if let Some(observer) = &self.observer {
            observer(&record);
        }
        state.recorded += 1;
        state.last_turn = Some(record.turn);
        if !self.retain {
            return;
        }
        let since = arrived.saturating_duration_since(self.created.0);
        state
            .arrivals_us
            .push(u64::try_from(since.as_micros()).unwrap_or(u64::MAX));
        state.trace.push(record);
    }

    /// Refuses calls matching `forbidden` (the scenario's `forbidden_calls`, under
    /// `block_forbidden: true`) before any fault or the backend: the agent gets a tool error,
    /// and the trace records the call as refused.
    pub fn blocking(mut self, forbidden: Vec<ForbiddenCall>) -> Harness {
        self.blocked = forbidden;
        self
    }

    /// The message a blocked forbidden call answers with.
    pub fn blocked_message(tool: &str) -> String {
        format!(
            "`{tool}` refused: this call is forbidden in this scenario and was blocked by toolgate"
        )
    }

    fn is_blocked(&self, tool: &str, arguments: &Map<String, Value>) -> bool {
        let arguments = Value::Object(arguments.clone());
        self.blocked
            .iter()
            .any(|forbidden| forbidden.matches(tool, &arguments))
    }

    /// Calls `tool` on the backend for toolgate itself (a final-state probe): arguments are
    /// checked against the input schema, no fault is injected and nothing is traced.
    /// `Err` is the tool error or protocol error text.
    pub async fn probe(&self, tool: &str, arguments: Map<String, Value>) -> Result<Value, String> {
        let mut backend = self.backend.lock().await;
        match self.tools.check(tool, &arguments) {
            None => return Err(format!("unknown tool `{tool}`")),
            Some(check) => {
                if let Some(refusal) = check.refusal {
                    return Err(refusal);
                }
            }
        }
        match backend.call(tool, &arguments).await {
            ToolAnswer::Success(value) => Ok(value),
            ToolAnswer::Text(text) => Ok(Value::String(text)),
            ToolAnswer::ToolError(message)
            | ToolAnswer::ProtocolError(message)
            | ToolAnswer::Unmatched(message)
            | ToolAnswer::NotRecorded(message) => Err(message),
        }
    }

    /// Why the backend broke during the run (see [`Backend::failure`]).
    pub async fn failure(&self) -> Option<String> {
        self.backend.lock().await.failure()
    }

    /// Why the backend's answers to the final-state probes say nothing about the agent's
    /// work (see [`Backend::probes_not_evidence`]).
    pub async fn probes_not_evidence(&self) -> Option<String> {
        self.backend.lock().await.probes_not_evidence()
    }

    /// Stops what the backend started (see [`Backend::close`]).
    pub async fn close(&self) {
        self.backend.lock().await.close().await;
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

    /// Keeps what the agent's parser noticed about the call it sends next; the next call
    /// recorded (executed, refused or invalid) carries these notes.
    pub fn note_next_call(&self, notes: &[CallNote]) {
        self.lock().pending_notes = notes.to_vec();
    }

    /// Records a call the agent emitted that could not be sent (unusable arguments).
    pub fn record_invalid(&self, tool: &str, raw_arguments: &str, kind: InvalidCallKind) {
        self.record_refused(
            tool,
            Value::String(raw_arguments.to_string()),
            CallOutcome::InvalidCall,
            kind.as_str().to_owned(),
            Some(kind),
        );
    }

    /// Records a call that got a protocol-level failure instead of a tool result: refused by
    /// the server (an unknown tool) or lost in transport.
    pub fn record_protocol_error(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        message: String,
    ) {
        self.record_refused(
            tool,
            Value::Object(arguments),
            CallOutcome::ProtocolError,
            message,
            None,
        );
    }

    /// Records a call that never reached the backend, with its `outcome` and `error`.
    fn record_refused(
        &self,
        tool: &str,
        arguments: Value,
        outcome: CallOutcome,
        error: String,
        invalid: Option<InvalidCallKind>,
    ) {
        let mut state = self.lock();
        let index = state.recorded;
        let turn = state.next_turn();
        let notes = std::mem::take(&mut state.pending_notes);
        self.push(
            &mut state,
            CallRecord {
                index,
                tool: tool.to_string(),
                arguments,
                outcome,
                result: None,
                error: Some(error),
                fault: None,
                invalid,
                duration_us: 0,
                turn,
                refused: true,
                unknown_tool: !self.tools.offers(tool),
                checked: true,
                violations: Vec::new(),
                notes,
                output_violations: Vec::new(),
                unmatched: false,
                not_recorded: false,
                elicitation: None,
            },
            Instant::now(),
        );
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
    /// A tool that asks the user ([`Harness::eliciting`]) asks as a faithful client would:
    /// the run's user answers. (Calls from an MCP client are asked through that client.)
    pub async fn call(&self, tool: &str, arguments: Map<String, Value>) -> ToolAnswer {
        let own = OwnPlay(self.elicitations.as_deref());
        self.call_asking(tool, arguments, &own).await
    }

    /// [`Harness::call`], asking the user through `asker` (the calling client) first when
    /// the tool has an elicitation and the call would reach the backend.
    pub(crate) async fn call_asking(
        &self,
        tool: &str,
        mut arguments: Map<String, Value>,
        asker: &dyn Asker,
    ) -> ToolAnswer {
        let mut backend = self.backend.lock().await;
        let decoded = self.tools.decode_double_encoded(tool, &mut arguments);
        let started = Instant::now();
        let nth = {
            let mut state = self.lock();
            let count = state.calls_per_tool.entry(tool.to_string()).or_insert(0);
            *count += 1;
            *count
        };
        let gate = self.gate(tool, &arguments, nth);
        let refused = gate.blocked || (gate.fault.is_none() && gate.refusal.is_some());
        let mut elicitation = None;
        let answer = match gate.early_answer(tool) {
            Some(answer) => answer,
            None => {
                let refusal = match self.elicitation_for(tool) {
                    Some((index, asked)) => {
                        let (record, refusal) = self.elicit(tool, index, asked, asker).await;
                        elicitation = Some(record);
                        refusal
                    }
                    None => None,
                };
                match refusal {
                    Some(message) => ToolAnswer::ToolError(message),
                    None => backend.call(tool, &arguments).await,
                }
            }
        };
        let duration_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        let (outcome, result, error) = match &answer {
            ToolAnswer::Success(value) => (CallOutcome::Success, Some(value.clone()), None),
            ToolAnswer::Text(text) => (
                CallOutcome::Success,
                Some(Value::String(text.clone())),
                None,
            ),
            ToolAnswer::ToolError(message) => (CallOutcome::ToolError, None, Some(message.clone())),
            ToolAnswer::ProtocolError(message) => {
                (CallOutcome::ProtocolError, None, Some(message.clone()))
            }
            ToolAnswer::Unmatched(message) | ToolAnswer::NotRecorded(message) => {
                (CallOutcome::ToolError, None, Some(message.clone()))
            }
        };
        let output_violations = match &answer {
            ToolAnswer::Success(value) => self.tools.check_output(tool, value),
            _ => Vec::new(),
        };
        let mut state = self.lock();
        let index = state.recorded;
        let turn = state.next_turn();
        let mut notes = std::mem::take(&mut state.pending_notes);
        if decoded {
            notes.push(CallNote::DoubleEncoded);
        }
        let check = gate.check;
        notes.extend(check.iter().flat_map(|check| check.notes.iter().copied()));
        self.push(
            &mut state,
            CallRecord {
                index,
                tool: tool.to_string(),
                arguments: Value::Object(arguments),
                outcome,
                result,
                error,
                fault: gate.fault,
                invalid: None,
                duration_us,
                turn,
                refused,
                unknown_tool: check.is_none(),
                checked: true,
                violations: check.map(|check| check.violations).unwrap_or_default(),
                notes,
                output_violations,
                unmatched: matches!(answer, ToolAnswer::Unmatched(_)),
                not_recorded: matches!(answer, ToolAnswer::NotRecorded(_)),
                elicitation,
            },
            started,
        );
        answer
    }

    /// What stands between the `nth` call (1-based, per tool) of `tool` and the backend: a
    /// block, a due fault, a schema refusal.
    fn gate(&self, tool: &str, arguments: &Map<String, Value>, nth: u32) -> Gate {
        let fault = self
            .faults
            .iter()
            .find(|fault| fault.hits(tool, nth))
            .map(|fault| fault.error);
        let check = self.tools.check(tool, arguments);
        let blocked = self.is_blocked(tool, arguments);
        let refusal = check
            .as_ref()
            .and_then(|check| check.refusal.clone())
            .filter(|_| !self.forward_invalid);
        Gate {
            fault: fault.filter(|_| !blocked),
            check,
            blocked,
            refusal,
        }
    }

    /// The elicitation of `tool`, if the run has one.
    fn elicitation_for(&self, tool: &str) -> Option<(usize, &Elicitation)> {
        self.elicitations.as_ref()?.for_tool(tool)
    }

    /// The elicitation the next call of `tool` with `arguments` would make, with its index in
    /// the scenario's list: it has one and would reach the backend. Nothing is counted or
    /// recorded (a `2026-07-28` client is asked before the call that runs, in a round of its
    /// own).
    pub(crate) fn elicitation_due(
        &self,
        tool: &str,
        arguments: &Map<String, Value>,
    ) -> Option<(usize, &Elicitation)> {
        let due = self.elicitation_for(tool)?;
        let mut arguments = arguments.clone();
        self.tools.decode_double_encoded(tool, &mut arguments);
        let nth = {
            let state = self.lock();
            state.calls_per_tool.get(tool).copied().unwrap_or(0) + 1
        };
        self.gate(tool, &arguments, nth)
            .early_answer(tool)
            .is_none()
            .then_some(due)
    }

    /// Asks `asked` (entry `index` of the run's elicitations) through `asker`: the record of
    /// it, and the tool error that answers the call instead of the backend, unless the user
    /// accepted.
    async fn elicit(
        &self,
        tool: &str,
        index: usize,
        asked: &Elicitation,
        asker: &dyn Asker,
    ) -> (ElicitationRecord, Option<String>) {
        let answer = asker.ask(asked).await;
        let user = self
            .elicitations
            .as_ref()
            .and_then(|elicitations| elicitations.take_seen());
        let refusal = elicit::refusal(tool, &answer);
        let (answer, error) = match answer {
            Ok(answer) => (Some(answer), None),
            Err(error) => (None, Some(error)),
        };
        let record = ElicitationRecord {
            index,
            message: asked.message.clone(),
            answer,
            error,
            user,
        };
        (record, refusal)
    }
}

/// What stands between one call and the backend (see [`Harness::gate`]).
struct Gate {
    fault: Option<FaultKind>,
    check: Option<super::SchemaCheck>,
    blocked: bool,
    refusal: Option<String>,
}

impl Gate {
    /// The answer a call to `tool` gets without reaching the backend, if any: a block, then a
    /// fault, then a schema refusal.
    fn early_answer(&self, tool: &str) -> Option<ToolAnswer> {
        if self.blocked {
            return Some(ToolAnswer::ToolError(Harness::blocked_message(tool)));
        }
        if let Some(kind) = self.fault {
            return Some(ToolAnswer::ToolError(kind.message(tool)));
        }
        self.refusal.clone().map(ToolAnswer::ToolError)
    }
}

#[cfg(test)]
mod tests {
    //! The interceptor: faults and blocks answer before the backend; calls are traced, probes not.

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

    /// In lenient mode a double-encoded object reaches the backend decoded and the
    /// trace says so; parser notes announced by the agent ride on the next call only.
    #[tokio::test]
    async fn double_encoded_arguments_and_parser_notes_reach_the_trace() {
        let tools = ToolSet::from_definitions(vec![json!({"name": "update", "inputSchema": {
            "type": "object", "properties": {"changes": {"type": "object"}}}})])
        .expect("valid schema")
        .with_modes(
            crate::json::NumberMode::JsonSchema,
            crate::json::DoubleEncoded::Lenient,
        );
        let backend = Counting {
            tools: Arc::new(tools),
            reached: Arc::new(AtomicUsize::new(0)),
        };
        let harness = Harness::new(Box::new(backend), Vec::new());
        harness.note_next_call(&[CallNote::DuplicateId]);
        let answer = harness
            .call("update", args(json!({"changes": "{\"title\": \"x\"}"})))
            .await;
        assert_eq!(
            answer,
            ToolAnswer::Success(json!({"changes": {"title": "x"}}))
        );
        harness.call("update", args(json!({"changes": {}}))).await;
        let trace = harness.trace();
        assert_eq!(
            trace[0].notes,
            vec![CallNote::DuplicateId, CallNote::DoubleEncoded]
        );
        assert_eq!(trace[0].arguments, json!({"changes": {"title": "x"}}));
        assert_eq!(trace[1].notes, vec![]);
    }

    /// A successful result is checked against the tool's `outputSchema` as the
    /// `structuredContent` the server sends, one violation per path; errors are not checked.
    #[tokio::test]
    async fn results_that_break_the_output_schema_are_recorded_per_path() {
        let tools = ToolSet::from_definitions(vec![
            json!({"name": "echo", "inputSchema": {"type": "object"},
                   "outputSchema": {"type": "object",
                       "properties": {"n": {"type": "integer"}, "s": {"type": "string"}}}}),
            json!({"name": "upstream", "inputSchema": {"type": "object"},
                   "outputSchema": {"type": "object", "required": ["ok"]}}),
        ])
        .expect("valid schemas");
        let backend = Counting {
            tools: Arc::new(tools),
            reached: Arc::new(AtomicUsize::new(0)),
        };
        let harness = Harness::new(Box::new(backend), Vec::new());
        harness
            .call("echo", args(json!({"n": "one", "s": 2})))
            .await;
        harness
            .call("echo", args(json!({"n": 1.0, "s": "x"})))
            .await;
        harness.call("upstream", args(json!({}))).await;
        let trace = harness.trace();
        let mut pointers: Vec<&str> = trace[0]
            .output_violations
            .iter()
            .map(|v| v.pointer.as_str())
            .collect();
        pointers.sort_unstable();
        assert_eq!(pointers, ["/n", "/s"]);
        assert_eq!(trace[1].output_violations, vec![]);
        assert_eq!(trace[2].outcome, CallOutcome::ProtocolError);
        assert_eq!(trace[2].output_violations, vec![]);
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
    async fn a_blocked_forbidden_call_never_reaches_the_backend_but_is_recorded() {
        let (harness, reached) = harness(vec![Fault {
            tool: "echo".into(),
            on_call: 1,
            times: 1,
            error: FaultKind::ServerError,
        }]);
        let harness = harness.blocking(vec![ForbiddenCall {
            tool: "echo".into(),
            args_match: args(json!({"n": 7})),
            args_contains: Map::new(),
            args_regex: Vec::new(),
        }]);
        let answer = harness.call("echo", args(json!({"n": 7}))).await;
        assert_eq!(
            answer,
            ToolAnswer::ToolError(
                "`echo` refused: this call is forbidden in this scenario and was blocked by toolgate"
                    .into()
            )
        );
        let allowed = harness.call("echo", args(json!({"n": 1}))).await;
        assert_eq!(
            allowed,
            ToolAnswer::Success(json!({"n": 1})),
            "the blocked call was call 1 of `echo`, so the fault window has passed"
        );
        assert_eq!(reached.load(Ordering::SeqCst), 1);
        let trace = harness.trace();
        assert!(trace[0].refused);
        assert_eq!(trace[0].fault, None);
        assert_eq!(trace[0].arguments, json!({"n": 7}));
        assert!(!trace[1].refused);
    }

    #[tokio::test]
    async fn a_probe_reaches_the_backend_without_a_fault_or_a_trace_entry() {
        let (harness, reached) = harness(vec![Fault {
            tool: "echo".into(),
            on_call: 1,
            times: 1,
            error: FaultKind::Timeout,
        }]);
        assert_eq!(
            harness.probe("echo", args(json!({"n": 2}))).await,
            Ok(json!({"n": 2}))
        );
        assert_eq!(
            harness.probe("nope", Map::new()).await,
            Err("unknown tool `nope`".into())
        );
        assert_eq!(reached.load(Ordering::SeqCst), 1);
        assert!(harness.trace().is_empty());
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

    #[tokio::test]
    async fn a_streaming_harness_shows_every_call_and_keeps_none() {
        let seen: Arc<Mutex<Vec<(usize, u32, String)>>> = Arc::default();
        let log = Arc::clone(&seen);
        let (harness, reached) = harness(Vec::new());
        let harness = harness.streaming(Box::new(move |call| {
            log.lock()
                .expect("the log")
                .push((call.index, call.turn, call.tool.clone()));
        }));
        harness.call("echo", args(json!({"n": 1}))).await;
        harness.call("echo", args(json!({"n": "x"}))).await;
        harness.record_invalid("echo", "{", InvalidCallKind::UnparseableArguments);
        harness.call("upstream", Map::new()).await;
        assert_eq!(
            *seen.lock().expect("the log"),
            [
                (0, 1, "echo".to_owned()),
                (1, 2, "echo".to_owned()),
                (2, 3, "echo".to_owned()),
                (3, 4, "upstream".to_owned())
            ]
        );
        assert_eq!(harness.trace(), Vec::new());
        assert_eq!(harness.arrivals_us(), Vec::<u64>::new());
        assert_eq!(
            reached.load(Ordering::SeqCst),
            2,
            "the invalid `n` was refused"
        );
    }

    /// `toolgate verify` plays written trajectories without an MCP client: the tool asks the
    /// run's user directly, as a faithful client would, and only a call that would run asks.
    #[tokio::test]
    async fn a_call_without_a_client_asks_the_runs_user_and_a_refused_one_asks_nothing() {
        use crate::harness::{Elicitations, ScriptedUser};
        use crate::scenario::{ElicitationAction, ElicitationReply};
        let asked = vec![Elicitation {
            tool: "echo".into(),
            message: "Echo 1?".into(),
            schema: json!({"type": "object", "properties": {}}),
            reply: ElicitationReply {
                action: ElicitationAction::Decline,
                content: None,
            },
        }];
        let user = Arc::new(Elicitations::new(
            asked.clone(),
            Arc::new(ScriptedUser::new(asked)),
        ));
        let (harness, reached) = harness(vec![Fault {
            tool: "echo".into(),
            on_call: 2,
            times: 1,
            error: FaultKind::Timeout,
        }]);
        let harness = harness.eliciting(user);
        let declined = harness.call("echo", args(json!({"n": 1}))).await;
        assert_eq!(
            declined,
            ToolAnswer::ToolError(
                "`echo` was not run: the user declined the request for input".into()
            )
        );
        harness.call("echo", args(json!({"n": 1}))).await;
        harness.call("echo", args(json!({"n": "x"}))).await;
        assert_eq!(reached.load(Ordering::SeqCst), 0);
        let trace = harness.trace();
        let decline = Some(ElicitationReply {
            action: ElicitationAction::Decline,
            content: None,
        });
        assert_eq!(
            trace[0].elicitation,
            Some(ElicitationRecord {
                index: 0,
                message: "Echo 1?".into(),
                answer: decline.clone(),
                error: None,
                user: decline,
            })
        );
        assert_eq!(trace[0].outcome, CallOutcome::ToolError);
        assert!(
            !trace[0].refused,
            "the tool answered; the harness refused nothing"
        );
        assert_eq!(trace[1].fault, Some(FaultKind::Timeout));
        assert_eq!(trace[1].elicitation, None, "a faulted call asks nothing");
        assert!(trace[2].refused);
        assert_eq!(trace[2].elicitation, None, "a refused call asks nothing");
    }
}
