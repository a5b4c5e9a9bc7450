//! The proxy's fast path: a stdio relay between an MCP client and a server that copies every
//! line on as soon as it arrives and reads copies of them off the critical path, so tracing
//! adds next to nothing to a call's round trip.
//!
//! One thread per direction copies newline-delimited JSON-RPC messages unchanged; a third
//! reads the copies: a `tools/list` answer becomes the catalog calls are checked against,
//! and each `tools/call` request paired with its answer (by JSON-RPC id) becomes a
//! [`CallRecord`] (outcome, result or error, schema violations, round-trip time), handed to
//! the observer in the order answers arrive. Used when nothing has to change on the way
//! (no fault injection, no cassette); otherwise the proxy runs through the
//! [`Harness`](crate::harness::Harness).
//!
//! The copies cross to the reader through a queue under a lock the relaying threads hold for
//! a push: a request's copy never wakes the reader (it matters only once its answer is
//! there), and the reader, once woken, lets copies gather for 10 ms before it reads them
//! again. A busy client's calls thus cost the reader one wake-up per interval rather than two
//! per call, each of which cost a relaying thread a system call and, on a loaded machine, a
//! wait for the lock of a channel the reader was parked on. Without an observer no copy is
//! taken.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, mpsc};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use serde_json::{Map, Value};

use nix::sys::signal::Signal;

use super::client::ToolReply;
use super::servers::answer;
use super::{Observer, ToolAnswer, ToolSet};
use crate::trace::{CallOutcome, CallRecord};

/// A line that passed through (its bytes as they were), and which way.
enum Seen {
    /// Client to server, at this instant.
    Request(Vec<u8>, Instant),
    /// Server to client, at this instant.
    Answer(Vec<u8>, Instant),
    /// The server closed its output: no answer will come.
    Closed,
}

/// How long the reader lets copies gather after it read a batch: a call's record reaches the
/// observer at most this long after its answer passed.
const READ_EVERY: Duration = Duration::from_millis(10);

/// The copies on their way from the relaying threads to the reader, in the order they passed.
#[derive(Default)]
struct Copies {
    queue: Mutex<Queue>,
    /// Signalled when an answer or the end is queued while the reader waits.
    answered: Condvar,
}

#[derive(Default)]
struct Queue {
    seen: Vec<Seen>,
    /// An answer or the end is queued: the reader has something to hand on.
    has_answer: bool,
    /// The reader sleeps on `answered`: a thread queueing an answer must wake it.
    reader_waits: bool,
}

impl Copies {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // A queue of copies is whole after any push, so a poisoned lock is taken over.
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `copy`; an answer or the end wakes a waiting reader, a request never does.
    fn push(&self, copy: Seen) {
        let mut queue = self.lock();
        let answers = !matches!(copy, Seen::Request(..));
        queue.seen.push(copy);
        if answers {
            queue.has_answer = true;
            if std::mem::take(&mut queue.reader_waits) {
                self.answered.notify_one();
            }
        }
    }

    /// Waits until an answer or the end is queued, then moves every queued copy to `batch`
    /// (empty), in the order they were queued.
    fn take(&self, batch: &mut Vec<Seen>) {
        let mut queue = self.lock();
        while !queue.has_answer {
            queue.reader_waits = true;
            queue = self
                .answered
                .wait(queue)
                .unwrap_or_else(PoisonError::into_inner);
        }
        queue.has_answer = false;
        queue.reader_waits = false;
        std::mem::swap(&mut queue.seen, batch);
    }
}

/// How long a server gets to close its output after the client left (its stdin closed), and
/// again after SIGTERM, before its process group is killed: the MCP stdio shutdown sequence.
const EXIT_GRACE: Duration = Duration::from_secs(3);

/// Relays stdin/stdout to a child started as `command` (in its own process group, killed when
/// the relay ends) until the server closes its output (it exits, or the client closed stdin
/// and it finished); `observer`, if any, gets each `tools/call` as a [`CallRecord`]. Without
/// one no copy is taken: the bytes only pass.
///
/// Bytes pass unchanged, valid UTF-8 or not. A server still running 3 s after the
/// client left gets SIGTERM, then after another grace SIGKILL, to its whole group; so does it
/// when toolgate gets Ctrl-C or SIGTERM.
///
/// Errors: the child cannot be started.
pub fn relay(mut command: Command, label: &str, observer: Option<Observer>) -> Result<()> {
    command.stdin(Stdio::piped()).stdout(Stdio::piped());
    crate::process::contain(&mut command);
    let mut child = command
        .spawn()
        .with_context(|| format!("failed to start MCP server `{label}`"))?;
    let pgid = i32::try_from(child.id()).ok();
    let mut to_child = child.stdin.take().expect("stdin is piped");
    let from_child = child.stdout.take().expect("stdout is piped");
    let copies = observer.as_ref().map(|_| Arc::new(Copies::default()));

    let requests = copies.clone();
    // Why the relay should end before the server closes its output: the client left (`true`),
    // or toolgate was told to stop (`false`).
    let (leave, left) = mpsc::channel::<bool>();
    let client_left = leave.clone();
    // Not joined: it may be blocked reading stdin when the server is gone.
    std::thread::spawn(move || {
        let mut input = std::io::stdin().lock();
        let mut line = Vec::new();
        while matches!(input.read_until(b'\n', &mut line), Ok(1..)) {
            // The copy goes first, so it is read before the server's answer to it.
            if let Some(requests) = &requests {
                requests.push(Seen::Request(line.clone(), Instant::now()));
            }
            if to_child
                .write_all(&line)
                .and_then(|()| to_child.flush())
                .is_err()
            {
                break;
            }
            line.clear();
        }
        // Dropping `to_child` closes the server's stdin: it should finish and close its output.
        drop(to_child);
        let _sent = client_left.send(true);
    });
    std::thread::spawn(move || {
        if let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            runtime.block_on(crate::process::stop_requested());
            let _sent = leave.send(false);
        }
    });
    let answers = copies.clone();
    let back = std::thread::spawn(move || {
        let mut reader = BufReader::new(from_child);
        let mut out = std::io::stdout().lock();
        let mut line = Vec::new();
        while matches!(reader.read_until(b'\n', &mut line), Ok(1..)) {
            if out.write_all(&line).and_then(|()| out.flush()).is_err() {
                break;
            }
            match &answers {
                Some(answers) => {
                    answers.push(Seen::Answer(std::mem::take(&mut line), Instant::now()))
                }
                None => line.clear(),
            }
        }
        if let Some(answers) = &answers {
            answers.push(Seen::Closed);
        }
    });
    let reader = copies
        .zip(observer)
        .map(|(copies, observer)| std::thread::spawn(move || read_copies(&copies, &observer)));
    wait_for_server(&back, &left, pgid);
    let _joined = back.join();
    if let Some(pgid) = pgid {
        super::client::kill_group(pgid);
    }
    let _reaped = child.wait();
    if let Some(reader) = reader {
        let _read = reader.join();
    }
    Ok(())
}

/// Waits until the server closes its output (`back` ends); or, once asked to leave (`left`:
/// the client left, or toolgate was told to stop), gives it the grace after its stdin closed
/// and again after SIGTERM to its group `pgid`, then SIGKILL.
fn wait_for_server(
    back: &std::thread::JoinHandle<()>,
    left: &mpsc::Receiver<bool>,
    pgid: Option<i32>,
) {
    while !back.is_finished() {
        let client_left = match left.recv_timeout(Duration::from_millis(50)) {
            Ok(client_left) => client_left,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            // No reason to leave can come any more: wait for the server.
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        let steps: &[Option<Signal>] = if client_left {
            &[None, Some(Signal::SIGTERM), Some(Signal::SIGKILL)]
        } else {
            &[Some(Signal::SIGTERM), Some(Signal::SIGKILL)]
        };
        for step in steps {
            if let (Some(signal), Some(pgid)) = (step, pgid) {
                // The group may be gone already; the join below settles it.
                let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), *signal);
            }
            let deadline = Instant::now() + EXIT_GRACE;
            while !back.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            if back.is_finished() {
                break;
            }
        }
        break;
    }
}

/// A `tools/call` waiting for its answer.
struct Pending {
    tool: String,
    arguments: Map<String, Value>,
    sent: Instant,
}

/// Reads the copies until the server closed its output, pairing requests with answers, in
/// batches [`READ_EVERY`] apart.
fn read_copies(copies: &Copies, observer: &Observer) {
    let mut calls = Calls::default();
    let mut batch = Vec::new();
    loop {
        copies.take(&mut batch);
        for copy in batch.drain(..) {
            if !calls.read(copy, observer) {
                return;
            }
        }
        std::thread::sleep(READ_EVERY);
    }
}

/// What the reader knows between copies: the catalog, and the requests awaiting answers.
#[derive(Default)]
struct Calls {
    tools: Option<ToolSet>,
    /// Whether `tools` holds every page of the last listing: a call checked against the first
    /// page alone could name a tool of a later page and read as unknown.
    complete: bool,
    /// Open tools/list requests: their id, and whether each asks for a first page (no cursor),
    /// whose answer starts the catalog afresh (a client may list again after a change).
    listing: Vec<(String, bool)>,
    pending: HashMap<String, Pending>,
    /// The next call's index.
    index: usize,
}

impl Calls {
    /// Reads one copy; a paired call goes to `observer`. `false` once the server closed.
    fn read(&mut self, copy: Seen, observer: &Observer) -> bool {
        let (line, at, request) = match copy {
            Seen::Closed => return false,
            Seen::Request(line, at) => (line, at, true),
            Seen::Answer(line, at) => (line, at, false),
        };
        // Bytes that are not UTF-8 are read as U+FFFD, as the client may have read them.
        let Ok(message) = serde_json::from_str::<Value>(&String::from_utf8_lossy(&line)) else {
            return true;
        };
        let Some(id) = message.get("id").map(Value::to_string) else {
            return true;
        };
        if request {
            self.request(id, &message, at);
        } else if let Some(call) = self.answer(&id, &message) {
            let catalog = self.tools.as_ref().filter(|_| self.complete);
            observer(&record(self.index, call, &message, at, catalog));
            self.index += 1;
        }
        true
    }

    /// Notes a `tools/list` or `tools/call` request with JSON-RPC id `id`, sent at `at`.
    fn request(&mut self, id: String, message: &Value, at: Instant) {
        match message["method"].as_str() {
            Some("tools/list") => {
                let first = message["params"].get("cursor").is_none_or(Value::is_null);
                self.listing.push((id, first));
            }
            Some("tools/call") => {
                let params = &message["params"];
                self.pending.insert(
                    id,
                    Pending {
                        tool: params["name"].as_str().unwrap_or_default().to_owned(),
                        arguments: params["arguments"].as_object().cloned().unwrap_or_default(),
                        sent: at,
                    },
                );
            }
            _ => {}
        }
    }

    /// Reads the answer with JSON-RPC id `id`: a listing updates the catalog; the answer to a
    /// call returns that call.
    fn answer(&mut self, id: &str, message: &Value) -> Option<Pending> {
        let Some(position) = self.listing.iter().position(|(known, _)| known == id) else {
            return self.pending.remove(id);
        };
        let (_, first) = self.listing.swap_remove(position);
        if let Some(listed) = message["result"]["tools"].as_array() {
            let mut definitions = match (&self.tools, first) {
                (Some(known), false) => known.definitions().to_vec(),
                _ => Vec::new(),
            };
            definitions.extend(listed.iter().cloned());
            // A listing whose schemas do not compile leaves calls unchecked, as without a
            // catalog (the lint reports such schemas).
            self.tools = ToolSet::from_definitions(definitions).ok();
            self.complete = message["result"]
                .get("nextCursor")
                .is_none_or(Value::is_null);
        }
        None
    }
}

/// The call record of `call`, answered by `message` at `at`.
fn record(
    index: usize,
    call: Pending,
    message: &Value,
    at: Instant,
    tools: Option<&ToolSet>,
) -> CallRecord {
    let mut record = CallRecord::recorded(index, &call.tool, Value::Object(call.arguments));
    record.duration_us =
        u64::try_from(at.saturating_duration_since(call.sent).as_micros()).unwrap_or(u64::MAX);
    let answer = match (message.get("result"), message.get("error")) {
        (Some(result), _) => answer(ToolReply {
            is_error: result["isError"].as_bool().unwrap_or(false),
            structured: result.get("structuredContent").cloned(),
            text: result["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|block| block["type"] == "text")
                .filter_map(|block| block["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        }),
        (None, Some(error)) => ToolAnswer::ProtocolError(format!(
            "JSON-RPC error {}: {}",
            error["code"],
            error["message"].as_str().unwrap_or_default()
        )),
        (None, None) => ToolAnswer::ProtocolError("an answer with neither result nor error".into()),
    };
    match answer {
        ToolAnswer::Success(value) => record.result = Some(value),
        ToolAnswer::Text(text) => record.result = Some(Value::String(text)),
        ToolAnswer::ToolError(text)
        | ToolAnswer::Unmatched(text)
        | ToolAnswer::NotRecorded(text) => {
            record.outcome = CallOutcome::ToolError;
            record.error = Some(text);
        }
        ToolAnswer::ProtocolError(text) => {
            record.outcome = CallOutcome::ProtocolError;
            record.error = Some(text);
        }
    }
    if let Some(tools) = tools {
        tools.annotate(&mut record);
        if let Some(result) = &record.result {
            record.output_violations = tools.check_output(&record.tool, result);
        }
    }
    record
}

#[cfg(test)]
mod tests {
    //! The proxy tap: calls pair with answers by id, checked against the latest whole listing;
    //! copies queued while the reader waits or sleeps all reach it.

    use serde_json::json;

    use super::*;

    fn copies(lines: &[(bool, Value)]) -> Vec<CallRecord> {
        let copies = Copies::default();
        for (request, message) in lines {
            let line = format!("{message}\n").into_bytes();
            let copy = if *request {
                Seen::Request(line, Instant::now())
            } else {
                Seen::Answer(line, Instant::now())
            };
            copies.push(copy);
        }
        copies.push(Seen::Closed);
        let records = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&records);
        read_copies(
            &copies,
            &(Box::new(move |call: &CallRecord| sink.lock().expect("sink").push(call.clone()))
                as Observer),
        );
        records.lock().expect("records").clone()
    }

    fn tools(names: &[&str]) -> Value {
        let tools: Vec<Value> = names
            .iter()
            .map(|name| json!({"name": name, "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}))
            .collect();
        json!({"tools": tools})
    }

    #[test]
    fn calls_pair_with_answers_by_id_and_are_checked_against_the_latest_listing() {
        let records = copies(&[
            (
                true,
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            ),
            (
                false,
                json!({"jsonrpc": "2.0", "id": 1, "result": tools(&["a"])}),
            ),
            // Listed again from the first page: the catalog starts afresh, no duplicate.
            (
                true,
                json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}),
            ),
            (
                false,
                json!({"jsonrpc": "2.0", "id": 2, "result": tools(&["a", "b"])}),
            ),
            (
                true,
                json!({"jsonrpc": "2.0", "id": "x", "method": "tools/call", "params": {"name": "b", "arguments": {"n": "one"}}}),
            ),
            (
                true,
                json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "zzz"}}),
            ),
            (
                true,
                json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}),
            ),
            (
                false,
                json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32602, "message": "unknown tool"}}),
            ),
            (
                false,
                json!({"jsonrpc": "2.0", "id": "x", "result": {"content": [{"type": "text", "text": "bad n"}], "isError": true}}),
            ),
            (
                true,
                json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "a", "arguments": {"n": 1}}}),
            ),
        ]);
        let summary: Vec<(usize, &str, CallOutcome, bool, usize)> = records
            .iter()
            .map(|r| {
                (
                    r.index,
                    r.tool.as_str(),
                    r.outcome,
                    r.unknown_tool,
                    r.violations.len(),
                )
            })
            .collect();
        // In the order answers came; the last call got none before the server closed.
        assert_eq!(
            summary,
            [
                (0, "zzz", CallOutcome::ProtocolError, true, 0),
                (1, "b", CallOutcome::ToolError, false, 1),
            ]
        );
        assert_eq!(
            records[0].error.as_deref(),
            Some("JSON-RPC error -32602: unknown tool")
        );
        assert_eq!(records[1].error.as_deref(), Some("bad n"));
        assert!(records.iter().all(|r| r.checked));
    }

    /// A call answered before any listing, or while only the first page of a paginated
    /// listing is known, is not checked: its `unknown_tool` and violations say nothing.
    #[test]
    fn calls_are_checked_only_against_a_whole_listing() {
        let call = |id: u32, name: &str| {
            [
                (
                    true,
                    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": {"n": "one"}}}),
                ),
                (
                    false,
                    json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}}),
                ),
            ]
        };
        let mut first_page = tools(&["a"]);
        first_page["nextCursor"] = json!("page-2");
        let mut lines = Vec::new();
        lines.extend(call(1, "b"));
        lines.push((
            true,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        ));
        lines.push((
            false,
            json!({"jsonrpc": "2.0", "id": 2, "result": first_page}),
        ));
        lines.extend(call(3, "b"));
        lines.push((
            true,
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"cursor": "page-2"}}),
        ));
        lines.push((
            false,
            json!({"jsonrpc": "2.0", "id": 4, "result": tools(&["b"])}),
        ));
        lines.extend(call(5, "b"));
        lines.extend(call(6, "c"));
        let records = copies(&lines);
        let summary: Vec<(&str, bool, bool, usize)> = records
            .iter()
            .map(|r| {
                (
                    r.tool.as_str(),
                    r.checked,
                    r.unknown_tool,
                    r.violations.len(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("b", false, false, 0),
                ("b", false, false, 0),
                ("b", true, false, 1),
                ("c", true, true, 0),
            ]
        );
    }

    /// Copies queued one by one while the reader waits for an answer or sleeps between
    /// batches reach the observer, every call once, in the order answers came.
    #[test]
    fn copies_queued_while_the_reader_waits_or_sleeps_all_reach_the_observer() {
        let copies = Arc::new(Copies::default());
        let tools = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&tools);
        let observer: Observer =
            Box::new(move |call: &CallRecord| sink.lock().expect("sink").push(call.tool.clone()));
        let queue = Arc::clone(&copies);
        let reader = std::thread::spawn(move || read_copies(&queue, &observer));
        for id in 0..6 {
            let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": format!("t{id}"), "arguments": {}}});
            copies.push(Seen::Request(call.to_string().into_bytes(), Instant::now()));
            // Some answers come while the reader sleeps after a batch, some while it waits.
            std::thread::sleep(READ_EVERY / 4 * id);
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}});
            copies.push(Seen::Answer(
                answer.to_string().into_bytes(),
                Instant::now(),
            ));
        }
        copies.push(Seen::Closed);
        reader
            .join()
            .expect("the reader ends once the server closed");
        assert_eq!(
            *tools.lock().expect("tools"),
            ["t0", "t1", "t2", "t3", "t4", "t5"]
        );
    }
}
