//! A tap on the bytes a server sends, keeping tools/list results exactly as they were written.
//!
//! rmcp decodes every answer into its typed model before the client sees it. For tools/list that
//! loses two things a catalog linter needs: `"nextCursor": null` reads the same as an absent
//! cursor (field case B18 wants a warning for it), and tool fields rmcp does not model (such as
//! `execution`) are dropped. The tap sits below rmcp, on the stdio read half
//! ([`TapReader`]) and on streamable HTTP answers ([`TappedHttp`]), and keeps the raw `result`
//! of each answer that carries a `tools` array, by JSON-RPC id, until the client takes it.

use std::{
    collections::HashMap,
    io,
    pin::Pin,
    sync::{Arc, Mutex},
    task::{Context, Poll},
};

use futures::StreamExt as _;
use reqwest::header::{self, HeaderName, HeaderValue};
use rmcp::{
    model::{ClientJsonRpcMessage, ClientRequest, RequestId, ServerJsonRpcMessage},
    transport::streamable_http_client::{
        SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
        StreamableHttpResponseLimits,
    },
};
use serde_json::Value;
use sse_stream::{Sse, SseStream};
use tokio::io::{AsyncRead, ReadBuf};

/// How many raw results the tap holds before it drops new ones: enough for any number of
/// sequential tools/list walks, small enough that answers nobody takes cannot pile up.
const MAX_HELD: usize = 64;

/// The longest line [`TapReader`] assembles (bytes): rmcp's own limit, past which it discards
/// the line anyway. A longer line passes through to rmcp untouched but is not inspected.
const MAX_LINE: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// Raw tools/list results seen on the wire, keyed by JSON-RPC id, and the last breach of the
/// stdio framing the server committed. Cheap to clone (shared).
#[derive(Debug, Clone, Default)]
pub(super) struct ListingTap {
    held: Arc<Mutex<HashMap<String, Value>>>,
    breach: Arc<(Mutex<Option<String>>, tokio::sync::Notify)>,
    /// The ids of the requests written to the server and not answered yet (JSON text), when
    /// the writing side is tapped too ([`TapWriter`]).
    open: Arc<Mutex<Option<std::collections::HashSet<String>>>>,
}

/// The routing fields of a JSON-RPC message, the rest skipped unparsed.
#[derive(serde::Deserialize)]
struct Head {
    id: Option<Value>,
    method: Option<serde::de::IgnoredAny>,
    result: Option<serde::de::IgnoredAny>,
    error: Option<serde::de::IgnoredAny>,
}

/// How much of an offending line a breach quotes, in characters.
const QUOTED_CHARS: usize = 120;

impl ListingTap {
    /// Records that the server wrote something no MCP stdio server may write on stdout (a
    /// line that is not a JSON-RPC message, a line over rmcp's limit), and wakes the calls
    /// waiting in [`ListingTap::breached`].
    fn breach(&self, what: String) {
        let (last, notify) = &*self.breach;
        *last.lock().expect("no code panics while holding the lock") = Some(what);
        notify.notify_waiters();
    }

    /// Notes a line the client wrote: a request's id is open until its answer comes.
    fn sent(&self, line: &[u8]) {
        let Ok(head) = serde_json::from_slice::<Head>(line) else {
            return;
        };
        if let (Some(id), Some(_)) = (head.id, head.method) {
            self.open
                .lock()
                .expect("no code panics while holding the lock")
                .get_or_insert_with(Default::default)
                .insert(id.to_string());
        }
    }

    /// Checks a line the server wrote: an answer must carry the id of an open request.
    fn received(&self, line: &[u8]) {
        if memchr::memmem::find(line, b"\"id\"").is_none() {
            return;
        }
        let Ok(head) = serde_json::from_slice::<Head>(line) else {
            return;
        };
        let (Some(id), None) = (head.id, head.method) else {
            return;
        };
        if head.result.is_none() && head.error.is_none() {
            return;
        }
        let unknown = {
            let mut open = self
                .open
                .lock()
                .expect("no code panics while holding the lock");
            // Without a tapped writer the open ids are unknown: nothing to check.
            open.as_mut()
                .is_some_and(|open| !open.remove(&id.to_string()))
        };
        // `null` answers a request the server could not read; that is rmcp's to report.
        if unknown && !id.is_null() {
            self.breach(format!(
                "an answer to id {id}, which no open request of this session carries"
            ));
        }
    }

    /// Resolves with the next breach recorded once the future is first polled (see
    /// [`ListingTap::breach`]); poll it alongside the request it guards, as `call_tool` does.
    pub(super) fn breached(&self) -> impl std::future::Future<Output = String> + use<> {
        let breach = Arc::clone(&self.breach);
        async move {
            let notified = breach.1.notified();
            tokio::pin!(notified);
            // Registered before the first wait: a breach from here on wakes it.
            notified.as_mut().enable();
            notified.await;
            breach
                .0
                .lock()
                .expect("no code panics while holding the lock")
                .clone()
                .unwrap_or_default()
        }
    }

    /// Looks at one JSON-RPC message as sent; keeps its `result` when it holds a `tools` array.
    /// Anything else, including text that is not JSON, is ignored (rmcp reports it).
    pub(super) fn observe(&self, message: &[u8]) {
        if memchr::memmem::find(message, b"\"tools\"").is_none() {
            return;
        }
        let Ok(Value::Object(mut message)) = serde_json::from_slice::<Value>(message) else {
            return;
        };
        let (Some(id), Some(result)) = (message.remove("id"), message.remove("result")) else {
            return;
        };
        if !matches!(result.get("tools"), Some(Value::Array(_))) {
            return;
        }
        let mut held = self
            .held
            .lock()
            .expect("no code panics while holding the lock");
        if held.len() < MAX_HELD {
            held.insert(id.to_string(), result);
        }
    }

    /// The raw result of the answer to request `id`, if the tap saw one.
    pub(super) fn take(&self, id: &RequestId) -> Option<Value> {
        let key = serde_json::to_value(id).ok()?.to_string();
        self.held
            .lock()
            .expect("no code panics while holding the lock")
            .remove(&key)
    }
}

/// An [`AsyncRead`] that passes every byte through unchanged and shows each complete
/// newline-delimited line (a stdio JSON-RPC message) to a [`ListingTap`].
pub(super) struct TapReader<R> {
    inner: R,
    tap: ListingTap,
    line: Vec<u8>,
    /// The current line outgrew [`MAX_LINE`]: skip to its end.
    skipping: bool,
}

impl<R> TapReader<R> {
    pub(super) fn new(inner: R, tap: ListingTap) -> Self {
        Self {
            inner,
            tap,
            line: Vec::new(),
            skipping: false,
        }
    }

    fn scan(&mut self, mut bytes: &[u8]) {
        while let Some(end) = memchr::memchr(b'\n', bytes) {
            if !self.skipping {
                self.line.extend_from_slice(&bytes[..end]);
                self.tap.observe(&self.line);
                self.tap.received(&self.line);
                if !framed(&self.line) {
                    let text = String::from_utf8_lossy(&self.line);
                    let quoted = crate::redact::cut(text.trim(), QUOTED_CHARS);
                    self.tap
                        .breach(format!("a line that is not a JSON-RPC message: `{quoted}`"));
                }
            }
            self.line.clear();
            self.skipping = false;
            bytes = &bytes[end + 1..];
        }
        if self.skipping {
            return;
        }
        if self.line.len() + bytes.len() > MAX_LINE {
            self.line = Vec::new();
            self.skipping = true;
            self.tap.breach(format!(
                "a line longer than {} MiB, which the MCP client discards",
                MAX_LINE / (1024 * 1024)
            ));
        } else {
            self.line.extend_from_slice(bytes);
        }
    }
}

/// An [`AsyncWrite`] that passes every byte through unchanged and shows each complete line
/// the client writes to a [`ListingTap`], so that answers can be matched to requests.
pub(super) struct TapWriter<W> {
    inner: W,
    tap: ListingTap,
    line: Vec<u8>,
}

impl<W> TapWriter<W> {
    pub(super) fn new(inner: W, tap: ListingTap) -> Self {
        Self {
            inner,
            tap,
            line: Vec::new(),
        }
    }
}

impl<W: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for TapWriter<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        // Ids are noted before the bytes leave: a quick server's answer may otherwise be read
        // before its request is known. Noting one twice (a partial write) changes nothing.
        let mut start = 0;
        while let Some(end) = memchr::memchr(b'\n', &buf[start..]) {
            let line = &buf[start..start + end];
            if start == 0 && !this.line.is_empty() {
                let mut whole = this.line.clone();
                whole.extend_from_slice(line);
                this.tap.sent(&whole);
            } else {
                this.tap.sent(line);
            }
            start += end + 1;
        }
        let poll = Pin::new(&mut this.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(written)) = &poll {
            let written = &buf[..*written];
            match memchr::memrchr(b'\n', written) {
                Some(end) => {
                    this.line.clear();
                    this.line.extend_from_slice(&written[end + 1..]);
                }
                None if this.line.len() + written.len() <= MAX_LINE => {
                    this.line.extend_from_slice(written);
                }
                None => {}
            }
        }
        poll
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// Whether `line` can be a newline-delimited JSON-RPC message: blank, or a JSON object (its
/// first and last non-blank bytes are braces; the JSON itself is rmcp's to parse).
fn framed(line: &[u8]) -> bool {
    let trimmed = line.trim_ascii();
    trimmed.is_empty() || (trimmed.starts_with(b"{") && trimmed.ends_with(b"}"))
}

impl<R: AsyncRead + Unpin> AsyncRead for TapReader<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let poll = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &poll {
            let fresh = &buf.filled()[before..];
            this.scan(fresh);
        }
        poll
    }
}

/// rmcp's reqwest client with a [`ListingTap`] on tools/list answers.
///
/// A tools/list POST is sent here rather than by rmcp so its body can be read raw, whether the
/// server answers with JSON or with an SSE stream; every other message goes through rmcp's
/// client unchanged.
#[derive(Clone)]
pub(super) struct TappedHttp {
    pub http: reqwest::Client,
    pub tap: ListingTap,
}

type PostResult = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>;

/// Whether `message` is a tools/list request (typed, or sent as a custom request).
fn is_tools_list(message: &ClientJsonRpcMessage) -> bool {
    let ClientJsonRpcMessage::Request(request) = message else {
        return false;
    };
    match &request.request {
        ClientRequest::ListToolsRequest(_) => true,
        ClientRequest::CustomRequest(custom) => custom.method == "tools/list",
        _ => false,
    }
}

impl TappedHttp {
    /// POSTs one tools/list request the way rmcp would (same headers, session and auth) and
    /// reads the answer through the tap.
    async fn post_tools_list(
        &self,
        uri: &str,
        message: &ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> PostResult {
        let mut request = self
            .http
            .post(uri)
            .header(header::ACCEPT, "text/event-stream, application/json")
            .headers(custom_headers.into_iter().collect());
        if let Some(token) = auth_token {
            request = request.bearer_auth(token);
        }
        if let Some(session_id) = session_id {
            request = request.header("Mcp-Session-Id", session_id.as_ref());
        }
        let response = request
            .json(message)
            .send()
            .await
            .map_err(StreamableHttpError::Client)?;
        let status = response.status();
        if !status.is_success() {
            return Err(StreamableHttpError::UnexpectedServerResponse(
                format!("tools/list answered with HTTP {status}").into(),
            ));
        }
        let session = response
            .headers()
            .get("Mcp-Session-Id")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase();
        if content_type.starts_with("text/event-stream") {
            let tap = self.tap.clone();
            let events = SseStream::from_bytes_stream(response.bytes_stream()).map(move |event| {
                if let Ok(Sse {
                    data: Some(data), ..
                }) = &event
                {
                    tap.observe(data.as_bytes());
                }
                event
            });
            return Ok(StreamableHttpPostResponse::Sse(events.boxed(), session));
        }
        if !content_type.starts_with("application/json") {
            return Err(StreamableHttpError::UnexpectedContentType(Some(
                content_type,
            )));
        }
        let body = response
            .bytes()
            .await
            .map_err(StreamableHttpError::Client)?;
        if body.len() > limits.max_json_response_size {
            return Err(StreamableHttpError::ResponseBodyTooLarge {
                max_size: limits.max_json_response_size,
            });
        }
        self.tap.observe(&body);
        let answer: ServerJsonRpcMessage = serde_json::from_slice(&body)?;
        Ok(StreamableHttpPostResponse::Json(answer, session))
    }
}

/// rmcp calls `post_message_with_response_limits` and `get_stream_with_max_sse_event_size`;
/// the two required methods delegate to them, the trait's defaults cover the rest.
impl StreamableHttpClient for TappedHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> PostResult {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_token,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> PostResult {
        if is_tools_list(&message) {
            return self
                .post_tools_list(
                    &uri,
                    &message,
                    session_id,
                    auth_token,
                    custom_headers,
                    limits,
                )
                .await;
        }
        self.http
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_token,
                custom_headers,
                limits,
            )
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<reqwest::Error>> {
        self.http
            .delete_session(uri, session_id, auth_token, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<
        futures::stream::BoxStream<'static, Result<Sse, SseError>>,
        StreamableHttpError<reqwest::Error>,
    > {
        self.http
            .get_stream(uri, session_id, last_event_id, auth_token, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<
        futures::stream::BoxStream<'static, Result<Sse, SseError>>,
        StreamableHttpError<reqwest::Error>,
    > {
        self.http
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_token,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}

#[cfg(test)]
mod tests {
    //! The wire tap: tools/list results kept as written over HTTP, SSE and stdio, and bounded.

    use serde_json::json;
    use wiremock::{Mock, MockServer, ResponseTemplate, matchers::method};

    use super::super::client::McpClient;
    use super::*;

    /// One tool with a field rmcp does not model, on a page whose cursor is `null` (B18).
    fn page() -> Value {
        json!({
            "tools": [{
                "name": "t001",
                "inputSchema": {"type": "object"},
                "execution": {"taskSupport": "optional"}
            }],
            "nextCursor": null
        })
    }

    fn initialize_result() -> Value {
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "1.0.0"}
        })
    }

    const NULL_CURSOR_WARNING: &str = "tools/list page 1 has `\"nextCursor\": null`; treated as the last page (leave the field out instead)";

    /// A streamable HTTP server that answers in JSON, or in SSE when `sse`.
    async fn http_server(sse: bool) -> MockServer {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(move |request: &wiremock::Request| {
                let message: Value =
                    serde_json::from_slice(&request.body).expect("the client sends JSON");
                let Some(id) = message.get("id") else {
                    return ResponseTemplate::new(202);
                };
                let result = match message["method"].as_str() {
                    Some("initialize") => initialize_result(),
                    _ => page(),
                };
                let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
                let (body, mime) = if sse {
                    (
                        format!("event: message\ndata: {answer}\n\n"),
                        "text/event-stream",
                    )
                } else {
                    (answer.to_string(), "application/json")
                };
                ResponseTemplate::new(200)
                    .insert_header("Mcp-Session-Id", "session-1")
                    .set_body_raw(body, mime)
            })
            .mount(&server)
            .await;
        Mock::given(method("GET"))
            .respond_with(ResponseTemplate::new(405))
            .mount(&server)
            .await;
        Mock::given(method("DELETE"))
            .respond_with(ResponseTemplate::new(200))
            .mount(&server)
            .await;
        server
    }

    /// B18 over streamable HTTP: a `null` cursor warns and the `execution` field survives,
    /// whether the server answers with JSON or with an SSE stream.
    #[tokio::test]
    async fn reads_tools_list_raw_over_http_in_json_and_sse() {
        for sse in [false, true] {
            let server = http_server(sse).await;
            let client = McpClient::connect_http(&format!("{}/mcp", server.uri()))
                .await
                .expect("the fake server accepts the handshake");
            let listing = client.list_tool_pages().await.expect("tools/list succeeds");
            assert_eq!(
                listing.tools,
                page()["tools"].as_array().cloned().unwrap_or_default()
            );
            assert_eq!(listing.warnings, [NULL_CURSOR_WARNING], "sse: {sse}");
            client.close().await.expect("closes");
        }
    }

    /// B18 over stdio: a child server (a shell script) whose page rmcp can type still shows its
    /// `null` cursor and its `execution` field.
    #[tokio::test]
    async fn reads_tools_list_raw_from_a_child_server() {
        let reply = |result: Value| {
            format!(
                "printf '%s\\n' '{}'",
                json!({"jsonrpc": "2.0", "id": "ID", "result": result})
                    .to_string()
                    .replace("\"ID\"", "'\"$id\"'")
            )
        };
        let script = format!(
            "read -r line; id=$(printf '%s' \"$line\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/'); {}\n\
             read -r line\n\
             read -r line; id=$(printf '%s' \"$line\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/'); {}\n\
             cat > /dev/null\n",
            reply(initialize_result()),
            reply(page()),
        );
        let client = McpClient::connect_command("sh", &["-c".to_owned(), script])
            .await
            .expect("the script accepts the handshake");
        let listing = client.list_tool_pages().await.expect("tools/list succeeds");
        assert_eq!(
            listing.tools,
            page()["tools"].as_array().cloned().unwrap_or_default()
        );
        assert_eq!(listing.warnings, [NULL_CURSOR_WARNING]);
        client
            .close()
            .await
            .expect("the child exits when its stdin closes");
    }

    fn tapped(chunks: &[&[u8]]) -> ListingTap {
        let tap = ListingTap::default();
        let mut reader = TapReader::new(tokio::io::empty(), tap.clone());
        for chunk in chunks {
            reader.scan(chunk);
        }
        tap
    }

    #[test]
    fn keeps_a_tools_result_split_across_reads_by_its_id() {
        let tap = tapped(&[
            br#"{"jsonrpc":"2.0","id":7,"result":{"tools":[],"next"#,
            b"Cursor\":null}}\n{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{\"tools\":[1]}}\n",
        ]);
        assert_eq!(
            tap.take(&RequestId::Number(7)),
            Some(serde_json::json!({"tools": [], "nextCursor": null}))
        );
        assert_eq!(tap.take(&RequestId::Number(7)), None);
        assert_eq!(
            tap.take(&RequestId::String("a".into())),
            Some(serde_json::json!({"tools": [1]}))
        );
    }

    #[test]
    fn ignores_answers_without_a_tools_array_and_lines_that_are_not_json() {
        let tap = tapped(&[
            b"{\"id\":1,\"result\":{\"content\":[],\"text\":\"\\\"tools\\\"\"}}\n",
            b"{\"id\":2,\"result\":{\"tools\":\"none\"}}\n",
            b"\"tools\" but not JSON\n",
            b"{\"id\":3,\"error\":{\"code\":1,\"message\":\"\\\"tools\\\"\"}}\n",
        ]);
        for id in 1..=3 {
            assert_eq!(tap.take(&RequestId::Number(id)), None);
        }
    }

    #[test]
    fn holds_at_most_max_held_results() {
        let tap = ListingTap::default();
        for id in 0..MAX_HELD + 5 {
            tap.observe(format!("{{\"id\":{id},\"result\":{{\"tools\":[]}}}}").as_bytes());
        }
        assert!(tap.take(&RequestId::Number(MAX_HELD as i64 - 1)).is_some());
        assert_eq!(tap.take(&RequestId::Number(MAX_HELD as i64)), None);
    }
}
