//! The MCP server: serves a run's [`Harness`] (its catalog and intercepted backend) over stdio
//! or an in-process pipe.
//!
//! rmcp owns the protocol (handshake, version negotiation, JSON-RPC framing); this file only maps
//! `tools/list` and `tools/call` onto the harness. Both protocol generations are served: the
//! `initialize` handshake (up to `2025-11-25`) and the handshake-free `2026-07-28`. rmcp adds
//! `resultType: "complete"` for `2026-07-28` peers and strips it for older ones, as long as results
//! are built with its constructors (never deserialized from JSON), which is what this file does.
//!
//! A tool that asks the user (the run's `elicitations`) asks the calling client: with
//! `elicitation/create` on the connection for `2025-11-25` clients, and for `2026-07-28` clients
//! (which take no server requests) with an `input_required` result whose retry carries the
//! answer (SEP-2322). A client that declares no elicitation capability is not asked.

use std::sync::Arc;

use anyhow::Context as _;
use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt as _,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ClientResult, ContentBlock,
        ElicitRequest, ElicitRequestParams, Implementation, InputRequest, InputRequiredResult,
        ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
        ServerRequest, Tool,
    },
    service::{Peer, RequestContext},
};
use serde_json::Value;
use tokio::{io::DuplexStream, task::JoinHandle};

use super::elicit::{Asker, Elicitations};
use super::{Harness, ToolAnswer, line_transport::LineTransport};
use crate::scenario::{Elicitation, ElicitationReply};

/// The key of toolgate's one input request in a `2026-07-28` `input_required` result, and of
/// the client's answer in the retry's `inputResponses`.
const INPUT_KEY: &str = "elicitation";

/// Why a client that declares no elicitation capability was not asked.
const UNABLE: &str =
    "the client cannot ask the user: it does not declare the elicitation capability";

/// Bytes buffered in each direction of the in-process pipe before a writer waits for the reader.
const IN_PROCESS_BUFFER_BYTES: usize = 64 * 1024;

/// An MCP server (rmcp [`ServerHandler`]) exposing the tools of a [`Harness`].
///
/// Requests are handled concurrently by rmcp, one task each. A `tools/call` goes straight to
/// [`Harness::call`] on that task, whose fair lock queues calls in the order rmcp runs them.
pub struct McpServer {
    harness: Arc<Harness>,
    /// The backend's catalog, parsed once per tool set, in catalog order.
    tools: Arc<[Tool]>,
}

impl McpServer {
    /// Parses the harness's tool definitions into MCP tools.
    ///
    /// Errors when a definition is not a valid MCP tool object, lacks a `name`, or repeats the
    /// name of an earlier tool.
    pub fn new(harness: Arc<Harness>) -> anyhow::Result<Self> {
        let tools = harness.tools().mcp_tools()?;
        Ok(Self { harness, tools })
    }

    /// The tool named `name`, if the catalog has one.
    fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|tool| tool.name == name)
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("toolgate", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // One page holds the whole catalog, so no cursor is ever handed out.
        if let Some(cursor) = request.and_then(|params| params.cursor) {
            return Err(ErrorData::invalid_params(
                format!("unknown cursor `{cursor}`"),
                None,
            ));
        }
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tool(name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        if self.tool(&request.name).is_none() {
            let message = format!("unknown tool `{}`", request.name);
            self.harness
                .record_protocol_error(&request.name, arguments, message.clone());
            return Err(ErrorData::invalid_params(message, None));
        }
        let answered = request
            .input_responses
            .and_then(|mut responses| responses.remove(INPUT_KEY));
        let asker = ClientAsker::new(&context, self.harness.elicitations(), answered);
        if let ClientAsker::Later(elicitations) = &asker
            && let Some((index, asked)) = self.harness.elicitation_due(&request.name, &arguments)
        {
            // A `2026-07-28` client is asked in a round of its own (SEP-2322): the call runs
            // when it comes back with the answer.
            let params =
                request_params(asked).map_err(|error| ErrorData::internal_error(error, None))?;
            elicitations.open();
            let requests = [(
                INPUT_KEY.to_owned(),
                InputRequest::Elicitation(ElicitRequest::new(params)),
            )];
            let state = format!("elicitations[{index}]");
            return Ok(
                InputRequiredResult::new(Some(requests.into_iter().collect()), Some(state)).into(),
            );
        }
        let result = match self
            .harness
            .call_asking(&request.name, arguments, &asker)
            .await
        {
            ToolAnswer::Success(value) => CallToolResult::structured(structured_content(value)),
            ToolAnswer::Text(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            ToolAnswer::ToolError(message)
            | ToolAnswer::Unmatched(message)
            | ToolAnswer::NotRecorded(message) => {
                CallToolResult::error(vec![ContentBlock::text(message)])
            }
            ToolAnswer::ProtocolError(message) => {
                return Err(ErrorData::internal_error(message, None));
            }
        };
        Ok(result.into())
    }
}

/// How a call's connection reaches its client for an elicitation.
enum ClientAsker {
    /// A client of the `initialize` generation (up to `2025-11-25`) that declares the
    /// capability: `elicitation/create` is sent on its connection, and the user's answers are
    /// remembered from then on.
    Request(Peer<RoleServer>, Arc<Elicitations>),
    /// A `2026-07-28` client that declares the capability, before it has answered: it is
    /// asked with an `input_required` result ([`McpServer::call_tool`]).
    Later(Arc<Elicitations>),
    /// A `2026-07-28` client retrying with its answer in `inputResponses`.
    Answered(Value),
    /// A client that declares no (form) elicitation capability, or a run that asks nothing.
    Unable,
}

impl ClientAsker {
    fn new(
        context: &RequestContext<RoleServer>,
        elicitations: Option<&Arc<Elicitations>>,
        answered: Option<Value>,
    ) -> ClientAsker {
        let Some(elicitations) = elicitations else {
            return ClientAsker::Unable;
        };
        if let Some(answer) = answered {
            return ClientAsker::Answered(answer);
        }
        let capable = context
            .client_capabilities()
            .and_then(|capabilities| capabilities.elicitation)
            .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none());
        let modern = context
            .protocol_version()
            .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
        match (capable, modern) {
            (false, _) => ClientAsker::Unable,
            (true, true) => ClientAsker::Later(Arc::clone(elicitations)),
            (true, false) => ClientAsker::Request(context.peer.clone(), Arc::clone(elicitations)),
        }
    }
}

impl Asker for ClientAsker {
    fn ask<'a>(
        &'a self,
        asked: &'a Elicitation,
    ) -> futures::future::BoxFuture<'a, Result<ElicitationReply, String>> {
        Box::pin(async move {
            match self {
                ClientAsker::Request(peer, elicitations) => {
                    let params = request_params(asked)?;
                    elicitations.open();
                    let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
                    match peer.send_request(request).await {
                        Ok(ClientResult::ElicitResult(result)) => {
                            reply(serde_json::to_value(result))
                        }
                        Ok(_) => Err(
                            "the client answered the elicitation with another kind of result"
                                .to_owned(),
                        ),
                        Err(error) => Err(format!("the elicitation request failed: {error}")),
                    }
                }
                ClientAsker::Answered(answer) => reply(Ok(answer.clone())),
                // Only reached if the call's elicitation stopped being due between the
                // rounds; the client is asked in the next call.
                ClientAsker::Later(_) => {
                    Err("the client did not answer the elicitation".to_owned())
                }
                ClientAsker::Unable => Err(UNABLE.to_owned()),
            }
        })
    }
}

/// The `elicitation/create` params of `asked` (form mode).
fn request_params(asked: &Elicitation) -> Result<ElicitRequestParams, String> {
    serde_json::from_value(serde_json::json!({
        "mode": "form",
        "message": asked.message,
        "requestedSchema": asked.schema,
    }))
    .map_err(|error| format!("toolgate could not build the elicitation request: {error}"))
}

/// The client's answer (an `ElicitResult` as JSON) as toolgate records it.
fn reply(result: serde_json::Result<Value>) -> Result<ElicitationReply, String> {
    result
        .and_then(serde_json::from_value)
        .map_err(|error| format!("the client's answer is not an elicitation result: {error}"))
}

/// The `structuredContent` for a backend result: the value itself when it is a JSON object,
/// otherwise `{"result": value}` (MCP before `2026-07-28` requires an object there).
pub(super) fn structured_content(value: serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(_) => value,
        other => serde_json::json!({ "result": other }),
    }
}

/// Serves `harness` over stdin/stdout until the client closes stdin.
///
/// Writes nothing to stdout but protocol messages. Errors when the catalog is invalid, when the
/// client disconnects before the handshake, or when the serving task fails.
pub async fn serve_stdio(harness: Arc<Harness>) -> anyhow::Result<()> {
    let server = McpServer::new(harness)?;
    let running = match stdio_pipes() {
        Some((stdin, stdout)) => server.serve(LineTransport::new(stdin, stdout)).await,
        None => {
            let transport = LineTransport::new(tokio::io::stdin(), tokio::io::stdout());
            server.serve(transport).await
        }
    }
    .context("failed to start the MCP server on stdio")?;
    running
        .waiting()
        .await
        .context("the MCP server on stdio failed")?;
    Ok(())
}

/// Stdin and stdout as non-blocking pipes polled by the runtime's reactor, when both are pipes
/// (as an MCP client starts a server); `None` for a terminal or a file.
///
/// Tokio's own stdin and stdout hand every read and write to a blocking thread, which costs
/// two thread wake-ups per message; a client waiting on each answer sees that as latency.
fn stdio_pipes() -> Option<(
    tokio::net::unix::pipe::Receiver,
    tokio::net::unix::pipe::Sender,
)> {
    use std::os::fd::AsFd as _;
    use std::os::unix::fs::FileTypeExt as _;
    let pipe = |fd: std::os::fd::BorrowedFd<'_>| {
        let file = std::fs::File::from(fd.try_clone_to_owned().ok()?);
        let is_fifo = file.metadata().ok()?.file_type().is_fifo();
        is_fifo.then_some(file)
    };
    // Both are checked before either is switched to non-blocking mode, which the fallback's
    // blocking reads and writes could not use.
    let stdin = pipe(std::io::stdin().as_fd())?;
    let stdout = pipe(std::io::stdout().as_fd())?;
    let receiver = tokio::net::unix::pipe::Receiver::from_file(stdin).ok()?;
    let sender = tokio::net::unix::pipe::Sender::from_file(stdout).ok()?;
    Some((receiver, sender))
}

/// Serves `harness` on one end of an in-process byte pipe and returns the other end.
///
/// The server runs on a spawned task (so this needs a Tokio runtime) until the returned stream is
/// dropped or closed; the task's result says whether it ended cleanly. The catalog is parsed
/// before anything is spawned, so an invalid catalog is an immediate error.
pub fn serve_in_process(
    harness: Arc<Harness>,
) -> anyhow::Result<(DuplexStream, JoinHandle<anyhow::Result<()>>)> {
    let server = McpServer::new(harness)?;
    let (client_end, server_end) = tokio::io::duplex(IN_PROCESS_BUFFER_BYTES);
    let task = tokio::spawn(async move {
        let (read, write) = tokio::io::split(server_end);
        let running = server
            .serve(LineTransport::new(read, write))
            .await
            .context("failed to start the in-process MCP server")?;
        running
            .waiting()
            .await
            .context("the in-process MCP server failed")?;
        Ok(())
    });
    Ok((client_end, task))
}

#[cfg(test)]
mod tests {
    //! The MCP server: bad tool definitions are refused; result type follows the client version.

    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

    use super::*;
    use crate::harness::{Backend, ToolSet};
    use crate::scenario::ElicitationAction;
    use crate::trace::ElicitationRecord;

    struct Fixture {
        tools: Arc<ToolSet>,
    }

    impl Backend for Fixture {
        fn tools(&self) -> &Arc<ToolSet> {
            &self.tools
        }

        fn call<'a>(
            &'a mut self,
            tool: &'a str,
            arguments: &'a serde_json::Map<String, Value>,
        ) -> futures::future::BoxFuture<'a, ToolAnswer> {
            let answer = match tool {
                "count" => ToolAnswer::Success(json!(arguments.len())),
                _ => ToolAnswer::Success(Value::Object(arguments.clone())),
            };
            Box::pin(std::future::ready(answer))
        }

        fn state(&self) -> Option<Value> {
            None
        }
    }

    fn backend(definitions: Vec<Value>) -> Arc<Harness> {
        let tools = Arc::new(ToolSet::from_definitions(definitions).expect("valid schemas"));
        Arc::new(Harness::new(Box::new(Fixture { tools }), Vec::new()))
    }

    fn echo_and_count() -> Arc<Harness> {
        let schema = json!({"type": "object"});
        backend(vec![
            json!({"name": "echo", "description": "Echo.", "inputSchema": schema}),
            json!({"name": "count", "description": "Count.", "inputSchema": schema}),
        ])
    }

    #[test]
    fn rejects_a_definition_that_is_not_a_tool() {
        let broken = backend(vec![
            json!({"name": "search", "description": 5, "inputSchema": {"type": "object"}}),
        ]);
        let error = McpServer::new(broken)
            .err()
            .expect("the definition is invalid");
        assert_eq!(
            error.to_string(),
            "invalid definition of tool `search`: invalid type: integer `5`, expected a string"
        );
    }

    #[test]
    fn rejects_a_definition_without_a_name() {
        let nameless = ToolSet::from_definitions(vec![json!({"inputSchema": {"type": "object"}})]);
        let error = nameless.expect_err("the definition is invalid");
        assert_eq!(error.to_string(), "tool definition #1 has no string `name`");
    }

    #[test]
    fn rejects_a_tool_defined_twice() {
        let schema = json!({"type": "object"});
        let twice = backend(vec![
            json!({"name": "a", "inputSchema": schema}),
            json!({"name": "a", "inputSchema": schema}),
        ]);
        let error = McpServer::new(twice).err().expect("the catalog is invalid");
        assert_eq!(error.to_string(), "tool `a` is defined twice");
    }

    #[test]
    fn wraps_a_non_object_result() {
        assert_eq!(structured_content(json!([1, 2])), json!({"result": [1, 2]}));
        assert_eq!(structured_content(json!({"a": 1})), json!({"a": 1}));
    }

    /// Sends raw JSON-RPC lines to an in-process server and reads one line back per request.
    struct Wire {
        reader: BufReader<tokio::io::ReadHalf<DuplexStream>>,
        writer: tokio::io::WriteHalf<DuplexStream>,
    }

    impl Wire {
        fn start(harness: Arc<Harness>) -> Self {
            let (stream, _task) = serve_in_process(harness).expect("the catalog is valid");
            let (reader, writer) = tokio::io::split(stream);
            Self {
                reader: BufReader::new(reader),
                writer,
            }
        }

        async fn send(&mut self, message: Value) {
            let mut line = message.to_string();
            line.push('\n');
            self.writer
                .write_all(line.as_bytes())
                .await
                .expect("the pipe is open");
        }

        async fn request(&mut self, message: Value) -> Value {
            self.send(message).await;
            let mut line = String::new();
            self.reader
                .read_line(&mut line)
                .await
                .expect("the pipe is open");
            serde_json::from_str(&line).expect("the server writes JSON lines")
        }
    }

    #[tokio::test]
    async fn omits_result_type_for_a_2025_11_25_client() {
        let mut wire = Wire::start(echo_and_count());
        let init = wire
            .request(
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"}}}),
            )
            .await;
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
        assert_eq!(init["result"]["serverInfo"]["name"], "toolgate");
        assert!(init["result"]["capabilities"]["tools"].is_object());
        wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        let reply = wire
            .request(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "count", "arguments": {"a": 1}}}))
            .await;
        assert_eq!(
            reply["result"],
            json!({"content": [{"type": "text", "text": "{\"result\":1}"}],
                   "structuredContent": {"result": 1}, "isError": false})
        );
    }

    #[tokio::test]
    async fn sends_result_type_to_a_2026_07_28_client() {
        let mut wire = Wire::start(echo_and_count());
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}});
        let list = wire
            .request(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                "params": {"_meta": meta}}))
            .await;
        assert_eq!(list["result"]["resultType"], "complete");
        assert_eq!(list["result"]["tools"][0]["name"], "echo");
        let reply = wire
            .request(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"_meta": meta, "name": "echo", "arguments": {"b": true}}}))
            .await;
        assert_eq!(
            reply["result"],
            json!({"resultType": "complete",
                   "content": [{"type": "text", "text": "{\"b\":true}"}],
                   "structuredContent": {"b": true}, "isError": false})
        );
    }

    /// A harness whose `echo` asks the user "Echo it?" (one boolean field); the scripted
    /// user answers `action`.
    fn eliciting(action: ElicitationAction) -> (Arc<Harness>, Arc<Elicitations>) {
        let asked = vec![Elicitation {
            tool: "echo".into(),
            message: "Echo it?".into(),
            schema: json!({"type": "object", "properties": {"loud": {"type": "boolean"}}}),
            reply: ElicitationReply {
                action,
                content: (action == ElicitationAction::Accept).then(|| json!({"loud": true})),
            },
        }];
        let user = Arc::new(Elicitations::new(
            asked.clone(),
            Arc::new(crate::harness::ScriptedUser::new(asked)),
        ));
        let tools = Arc::new(
            ToolSet::from_definitions(vec![
                json!({"name": "echo", "inputSchema": {"type": "object"}}),
            ])
            .expect("valid schemas"),
        );
        let harness =
            Harness::new(Box::new(Fixture { tools }), Vec::new()).eliciting(Arc::clone(&user));
        (Arc::new(harness), user)
    }

    fn accepted(content: Value) -> Option<ElicitationReply> {
        Some(ElicitationReply {
            action: ElicitationAction::Accept,
            content: Some(content),
        })
    }

    async fn initialize(wire: &mut Wire, capabilities: Value) {
        wire.request(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": {"name": "raw", "version": "0"}}}),
        )
        .await;
        wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }

    #[tokio::test]
    async fn asks_a_2025_11_25_client_mid_call_and_runs_the_tool_once_the_user_accepts() {
        let (harness, user) = eliciting(ElicitationAction::Accept);
        let mut wire = Wire::start(Arc::clone(&harness));
        initialize(&mut wire, json!({"elicitation": {"form": {}}})).await;
        let asked = wire
            .request(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"b": 1}}}))
            .await;
        assert_eq!(asked["method"], "elicitation/create");
        assert_eq!(
            asked["params"],
            json!({"_meta": {"progressToken": 0}, "mode": "form", "message": "Echo it?",
                "requestedSchema": {"type": "object", "properties": {"loud": {"type": "boolean"}}}})
        );
        // A faithful client shows the request to its user and returns the answer.
        let schema = asked["params"]["requestedSchema"].clone();
        let answer = user.ask_user("Echo it?", &schema).await;
        let reply = wire
            .request(json!({"jsonrpc": "2.0", "id": asked["id"], "result": answer}))
            .await;
        assert_eq!(reply["id"], 2);
        assert_eq!(reply["result"]["structuredContent"], json!({"b": 1}));
        let call = &harness.trace()[0];
        assert_eq!(
            call.elicitation,
            Some(ElicitationRecord {
                index: 0,
                message: "Echo it?".into(),
                answer: accepted(json!({"loud": true})),
                error: None,
                user: accepted(json!({"loud": true})),
            })
        );
    }

    #[tokio::test]
    async fn asks_a_2026_07_28_client_in_a_round_of_its_own_and_runs_on_its_answer() {
        let (harness, _user) = eliciting(ElicitationAction::Decline);
        let mut wire = Wire::start(Arc::clone(&harness));
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}});
        let first = wire
            .request(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"_meta": meta, "name": "echo", "arguments": {"b": 1}}}))
            .await;
        assert_eq!(first["result"]["resultType"], "input_required");
        assert_eq!(first["result"]["requestState"], "elicitations[0]");
        let request = &first["result"]["inputRequests"]["elicitation"];
        assert_eq!(request["method"], "elicitation/create");
        assert_eq!(request["params"]["message"], "Echo it?");
        assert_eq!(harness.trace(), vec![], "the round that asks runs nothing");
        // This client accepts on its own: the user, who would have declined, never saw it.
        let second = wire
            .request(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"_meta": meta, "name": "echo", "arguments": {"b": 1},
                    "inputResponses": {"elicitation": {"action": "accept", "content": {}}},
                    "requestState": "elicitations[0]"}}))
            .await;
        assert_eq!(second["result"]["structuredContent"], json!({"b": 1}));
        let trace = harness.trace();
        assert_eq!(trace.len(), 1);
        let record = trace[0].elicitation.as_ref().expect("an elicitation");
        assert_eq!(record.answer, accepted(json!({})));
        assert_eq!(record.user, None);
        assert!(!record.is_faithful());
    }

    #[tokio::test]
    async fn a_client_without_the_capability_gets_a_tool_error_and_the_tool_does_not_run() {
        let (harness, _user) = eliciting(ElicitationAction::Accept);
        let mut wire = Wire::start(Arc::clone(&harness));
        initialize(&mut wire, json!({})).await;
        let reply = wire
            .request(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"b": 1}}}))
            .await;
        let message = "`echo` was not run: it needs the user's input, but the client cannot \
                       ask the user: it does not declare the elicitation capability";
        assert_eq!(
            reply["result"],
            json!({"content": [{"type": "text", "text": message}], "isError": true})
        );
        let call = &harness.trace()[0];
        assert_eq!(call.error.as_deref(), Some(message));
        assert_eq!(
            call.elicitation
                .as_ref()
                .and_then(|asked| asked.error.as_deref()),
            Some("the client cannot ask the user: it does not declare the elicitation capability")
        );
    }

    /// Every key the scenario format allows in a form survives into the request (rmcp reads
    /// the form into its typed schema, which drops what it does not know).
    #[test]
    fn every_form_a_scenario_may_write_becomes_the_requested_schema() {
        let schema = json!({"type": "object", "title": "T", "description": "D", "properties": {
            "a": {"type": "string", "title": "A", "description": "a", "minLength": 1,
                  "maxLength": 9, "format": "email", "default": "x@y.z"},
            "b": {"type": "string", "enum": ["x", "y"], "default": "x"},
            "c": {"type": "string", "enum": ["x", "y"], "enumNames": ["X", "Y"]},
            "d": {"type": "string", "oneOf": [{"const": "x", "title": "X"}]},
            "e": {"type": "number", "minimum": 0.5, "maximum": 9.5, "default": 1.5},
            "f": {"type": "integer", "minimum": 0, "maximum": 9, "default": 3},
            "g": {"type": "boolean", "default": true, "title": "G"}},
            "required": ["a"]});
        let asked = Elicitation {
            tool: "echo".into(),
            message: "Fill it in.".into(),
            schema: schema.clone(),
            reply: ElicitationReply {
                action: ElicitationAction::Cancel,
                content: None,
            },
        };
        let params = request_params(&asked).expect("a valid form");
        let sent = serde_json::to_value(params).expect("params serialize");
        assert_eq!(sent["requestedSchema"], schema);
    }
}
