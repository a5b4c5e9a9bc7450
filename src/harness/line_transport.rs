//! The server's newline-delimited JSON-RPC transport (stdio and the in-process pipe), with a
//! direct decoder for the message it receives most: `tools/call`.
//!
//! rmcp's own stream transport decodes every line through its general message model (untagged
//! enums and flattened fields, which serde buffers and retries variant by variant); profiled
//! under `toolgate serve`, that decoding was over a quarter of the CPU time of a call. A
//! `tools/call` whose params hold only `name` and `arguments` is decoded here straight into
//! rmcp's typed request (the same value rmcp's decoder would build). Every other line goes
//! through rmcp's own line codec, so its compatibility rules apply: non-MCP notifications are
//! skipped, and well-formed JSON that is not a JSON-RPC message is answered with an
//! `Invalid Request` error. Two answers are added (JSON-RPC 2.0 §5.1): a line that is not
//! JSON gets `Parse error` (-32700) when its `id` can still be read from the text, and is
//! logged to stderr otherwise; a `tools/call` whose `name` or `arguments` has the wrong type
//! gets `Invalid params` (-32602), not rmcp's `Method not found`.

use std::io::Write as _;
use std::{io, sync::Arc};

use bytes::{Buf as _, BytesMut};
use futures::StreamExt as _;
use rmcp::{
    RoleServer,
    model::{
        CallToolRequest, CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, ErrorData,
        JsonObject, JsonRpcRequest, JsonRpcVersion2_0, RequestId, ServerJsonRpcMessage,
    },
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::{
        Transport,
        async_rw::{JsonRpcMessageCodec, JsonRpcMessageCodecError},
    },
};
use serde::Deserialize;
use tokio::{
    io::{AsyncRead, AsyncWrite, AsyncWriteExt as _},
    sync::Mutex,
};
use tokio_util::codec::{Decoder, FramedRead};

/// The longest line read (bytes), rmcp's own limit; a longer line is skipped whole.
const MAX_LINE: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// A server transport over a byte reader (requests) and writer (answers), one JSON message per
/// line. Reads are cancel-safe: a line read partly when the caller stops waiting is kept.
pub(super) struct LineTransport<R, W> {
    read: FramedRead<R, IncomingCodec>,
    /// Shared because rmcp's `send` futures outlive the borrow of the transport.
    write: Arc<Mutex<Option<W>>>,
}

impl<R: AsyncRead, W> LineTransport<R, W> {
    pub(super) fn new(read: R, write: W) -> Self {
        Self {
            read: FramedRead::new(read, IncomingCodec::default()),
            write: Arc::new(Mutex::new(Some(write))),
        }
    }
}

/// Writes `message` and a newline to the shared writer, then flushes.
async fn write_line<W: AsyncWrite + Unpin>(
    write: &Mutex<Option<W>>,
    message: &ServerJsonRpcMessage,
) -> io::Result<()> {
    let mut line = serde_json::to_vec(message).map_err(io::Error::other)?;
    line.push(b'\n');
    let mut write = write.lock().await;
    let Some(write) = write.as_mut() else {
        return Err(io::Error::new(
            io::ErrorKind::NotConnected,
            "the transport is closed",
        ));
    };
    write.write_all(&line).await?;
    write.flush().await
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = Arc::clone(&self.write);
        async move { write_line(&write, &item).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.read.next().await? {
                Ok(Incoming::Message(message)) => return Some(message),
                Ok(Incoming::Invalid) => {
                    let error = ServerJsonRpcMessage::error(
                        ErrorData::invalid_request("Invalid request", None),
                        None,
                    );
                    write_line(&self.write, &error).await.ok()?;
                }
                Ok(Incoming::Answer(id, error)) => {
                    let error = ServerJsonRpcMessage::error(error, Some(id));
                    write_line(&self.write, &error).await.ok()?;
                }
                Ok(Incoming::Unreadable(reason)) => {
                    // stderr is a stdio server's log channel (MCP: stdio transport).
                    let _ = writeln!(
                        io::stderr().lock(),
                        "toolgate: skipped a line that is not JSON and has no id: {reason}"
                    );
                }
                Err(_) => return None,
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        drop(self.write.lock().await.take());
        Ok(())
    }
}

/// What one line held.
#[derive(Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "one short-lived value per line; boxing would add an allocation to every request"
)]
enum Incoming {
    Message(ClientJsonRpcMessage),
    /// Well-formed JSON that is not a JSON-RPC message: answered with `Invalid Request`.
    Invalid,
    /// A request answered with this error at once: a line that is not JSON but whose `id`
    /// could be read (`Parse error`), or a `tools/call` with ill-typed params (`Invalid
    /// params`).
    Answer(RequestId, ErrorData),
    /// A line that is not JSON and has no readable `id`: logged, not answered (there is no
    /// request to answer).
    Unreadable(String),
}

/// Splits lines (skipping empty, unparsable and oversized ones) and decodes each.
#[derive(Debug, Default)]
struct IncomingCodec {
    /// Bytes already searched for a newline.
    scanned: usize,
    /// Inside a line longer than [`MAX_LINE`]: drop bytes up to its newline.
    discarding: bool,
}

impl Decoder for IncomingCodec {
    type Item = Incoming;
    type Error = io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> io::Result<Option<Incoming>> {
        loop {
            let Some(newline) = memchr::memchr(b'\n', &buf[self.scanned..]) else {
                if self.discarding {
                    buf.clear();
                } else if buf.len() > MAX_LINE {
                    buf.clear();
                    self.discarding = true;
                }
                self.scanned = buf.len();
                return Ok(None);
            };
            let line = buf.split_to(self.scanned + newline + 1);
            self.scanned = 0;
            if std::mem::take(&mut self.discarding) {
                continue;
            }
            if let Some(incoming) = decode_line(line) {
                return Ok(Some(incoming));
            }
        }
    }
}

/// Decodes one line, newline included; `None` for a line to skip.
fn decode_line(mut line: BytesMut) -> Option<Incoming> {
    if line.starts_with(b"\xEF\xBB\xBF") {
        line.advance(3);
    }
    let text = line.strip_suffix(b"\n").unwrap_or(&line);
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    if text.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    if let Some(call) = decode_tools_call(text) {
        return Some(Incoming::Message(call));
    }
    let value = match serde_json::from_slice::<serde_json::Value>(text) {
        Ok(value) => value,
        Err(error) => {
            return Some(match recover_id(text) {
                Some(id) => Incoming::Answer(
                    id,
                    ErrorData::parse_error(format!("Parse error: {error}"), None),
                ),
                None => Incoming::Unreadable(error.to_string()),
            });
        }
    };
    if let Some(answer) = ill_typed_tools_call(&value) {
        return Some(answer);
    }
    match JsonRpcMessageCodec::<ClientJsonRpcMessage>::default().decode(&mut line) {
        Ok(Some(message)) => Some(Incoming::Message(message)),
        Ok(None) => None,
        Err(JsonRpcMessageCodecError::Serde(error))
            if matches!(
                error.classify(),
                serde_json::error::Category::Data | serde_json::error::Category::Io
            ) =>
        {
            Some(Incoming::Invalid)
        }
        Err(_) => None,
    }
}

/// `Invalid params` for a `tools/call` request whose `name` is not a string or whose
/// `arguments` is present but not an object (`"arguments": "{\"id\": 1}"`, a double-encoded
/// object); `None` for anything else.
fn ill_typed_tools_call(value: &serde_json::Value) -> Option<Incoming> {
    if value.get("method")?.as_str()? != "tools/call" {
        return None;
    }
    let id: RequestId = serde_json::from_value(value.get("id")?.clone()).ok()?;
    let params = value.get("params");
    let problem = match params.and_then(|params| params.get("name")) {
        None => Some("`params.name` is missing".to_owned()),
        Some(serde_json::Value::String(_)) => None,
        Some(other) => Some(format!(
            "`params.name` must be a string, got {}",
            kind(other)
        )),
    }
    .or_else(|| match params.and_then(|params| params.get("arguments")) {
        None | Some(serde_json::Value::Null | serde_json::Value::Object(_)) => None,
        Some(other) => Some(format!(
            "`params.arguments` must be an object, got {}",
            kind(other)
        )),
    })?;
    Some(Incoming::Answer(
        id,
        ErrorData::invalid_params(problem, None),
    ))
}

/// The JSON type of `value`, as a noun with its article (`a string`).
fn kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// The request id of a line that does not parse, when the text still shows one: the first
/// `"id"` key followed by `:` and an integer or a string without escapes.
fn recover_id(text: &[u8]) -> Option<RequestId> {
    let text = std::str::from_utf8(text).ok()?;
    let (_, after) = text.split_once("\"id\"")?;
    let value = after.trim_start().strip_prefix(':')?.trim_start();
    if let Some(rest) = value.strip_prefix('"') {
        let end = rest.find(['"', '\\'])?;
        return (rest.as_bytes()[end] == b'"').then(|| RequestId::String(rest[..end].into()));
    }
    let digits = value
        .char_indices()
        .take_while(|&(i, c)| c.is_ascii_digit() || (i == 0 && c == '-'))
        .count();
    value[..digits].parse().ok().map(RequestId::Number)
}

/// A `tools/call` request with nothing but `name` and `arguments` in its params.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolsCall<'a> {
    #[allow(dead_code, reason = "checked by its type: `\"2.0\"` only")]
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    #[serde(borrow)]
    method: std::borrow::Cow<'a, str>,
    params: ToolsCallParams,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolsCallParams {
    name: String,
    #[serde(default)]
    arguments: Option<JsonObject>,
}

/// The typed request rmcp's decoder would build for `text`, when it is a plain `tools/call`;
/// `None` for anything else (left to rmcp's decoder).
fn decode_tools_call(text: &[u8]) -> Option<ClientJsonRpcMessage> {
    let call: ToolsCall<'_> = serde_json::from_slice(text).ok()?;
    if call.method != "tools/call" {
        return None;
    }
    let mut params = CallToolRequestParams::new(call.params.name);
    if let Some(arguments) = call.params.arguments {
        params = params.with_arguments(arguments);
    }
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    Some(ClientJsonRpcMessage::Request(JsonRpcRequest::new(
        call.id, request,
    )))
}

#[cfg(test)]
mod tests {
    //! The line transport: tools/call decodes as rmcp does; bad or huge lines never stop it.

    use tokio::io::{AsyncBufReadExt as _, BufReader};

    use super::*;

    /// What rmcp's own decoder makes of `line`.
    fn rmcp_decodes(line: &str) -> Option<ClientJsonRpcMessage> {
        let mut bytes = BytesMut::from(format!("{line}\n").as_bytes());
        JsonRpcMessageCodec::<ClientJsonRpcMessage>::default()
            .decode(&mut bytes)
            .ok()
            .flatten()
    }

    #[test]
    fn decodes_a_plain_tools_call_exactly_as_rmcp_does() {
        for line in [
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"crm_get","arguments":{"id":"C-1","n":[1,2.5,null]}}}"#,
            r#"{"id":"req-\"9\"","params":{"name":"t\u00e9st"},"method":"tools\/call","jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"x","arguments":null}}"#,
        ] {
            let fast = decode_tools_call(line.as_bytes()).expect("a plain tools/call");
            let reference = rmcp_decodes(line).expect("rmcp decodes it");
            assert_eq!(format!("{fast:?}"), format!("{reference:?}"), "{line}");
            assert_eq!(
                serde_json::to_value(&fast).expect("encodes"),
                serde_json::to_value(&reference).expect("encodes")
            );
        }
    }

    #[test]
    fn leaves_every_other_shape_to_rmcp() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","task":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"},"extra":1}"#,
        ] {
            assert!(decode_tools_call(line.as_bytes()).is_none(), "{line}");
        }
    }

    fn decode_all(input: &[u8]) -> Vec<String> {
        let mut codec = IncomingCodec::default();
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        // One byte at a time: every line is split across reads.
        for byte in input {
            buf.extend_from_slice(&[*byte]);
            while let Some(incoming) = codec.decode(&mut buf).expect("never fails") {
                out.push(match incoming {
                    Incoming::Message(ClientJsonRpcMessage::Request(request)) => {
                        format!("request {}", request.id)
                    }
                    Incoming::Message(ClientJsonRpcMessage::Notification(_)) => {
                        "notification".to_owned()
                    }
                    Incoming::Message(other) => format!("other {other:?}"),
                    Incoming::Invalid => "invalid".to_owned(),
                    Incoming::Answer(id, error) => format!("answer {id} {}", error.code.0),
                    Incoming::Unreadable(_) => "unreadable".to_owned(),
                });
            }
        }
        out
    }

    #[test]
    fn splits_lines_skips_blank_ones_and_flags_unparsable_ones_and_non_messages() {
        let input = concat!(
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\"}}\r\n",
            "\n   \n",
            "not json at all\n",
            "{\"jsonrpc\":\"2.0\",\"method\":\"$/lsp/thing\"}\n",
            "{\"hello\":\"world\"}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n",
            "{\"jsonrpc\":\"2.0\",\"id\": 17,\"method\":\"tools/call\",\"params\":{\"name\":\n",
            "{\"id\":\"abc\", \"method\": tools/list}\n",
        );
        assert_eq!(
            decode_all(input.as_bytes()),
            [
                "request 1",
                "unreadable",
                "notification",
                "invalid",
                "request 2",
                "answer 17 -32700",
                "answer abc -32700"
            ]
        );
    }

    #[test]
    fn a_tools_call_with_ill_typed_params_is_invalid_params_not_method_not_found() {
        let input = concat!(
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"a\",\"arguments\":\"{\\\"id\\\":1}\"}}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":7}}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"arguments\":{}}}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"a\",\"arguments\":[1]}}\n",
        );
        assert_eq!(
            decode_all(input.as_bytes()),
            [
                "answer 3 -32602",
                "answer 4 -32602",
                "answer 5 -32602",
                "answer 6 -32602"
            ]
        );
        let Some(Incoming::Answer(_, error)) = decode_line(BytesMut::from(
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"a\",\"arguments\":\"x\"}}\n",
        )) else {
            panic!("an answer");
        };
        assert_eq!(
            error.message,
            "`params.arguments` must be an object, got a string"
        );
    }

    #[test]
    fn recovers_only_ids_the_text_shows_plainly() {
        assert_eq!(recover_id(br#"{"id": -4, "x"#), Some(RequestId::Number(-4)));
        assert_eq!(
            recover_id(br#"{"id":"a-1","#),
            Some(RequestId::String("a-1".into()))
        );
        assert_eq!(recover_id(br#"{"id":"a\"b","#), None);
        assert_eq!(recover_id(br#"{"id": tru"#), None);
        assert_eq!(recover_id(b"garbage"), None);
    }

    #[test]
    fn skips_an_oversized_line_whole_and_reads_the_next() {
        let mut input = vec![b'x'; MAX_LINE + 10];
        input.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\n");
        let mut codec = IncomingCodec::default();
        let mut buf = BytesMut::from(&input[..MAX_LINE + 5]);
        assert!(codec.decode(&mut buf).expect("never fails").is_none());
        assert!(codec.discarding);
        buf.extend_from_slice(&input[MAX_LINE + 5..]);
        let next = codec.decode(&mut buf).expect("never fails");
        assert!(
            matches!(next, Some(Incoming::Message(ClientJsonRpcMessage::Request(ref r))) if r.id == RequestId::Number(3)),
            "{next:?}"
        );
    }

    /// Well-formed JSON that is not a message gets an `Invalid Request` error, and the session
    /// goes on.
    #[tokio::test]
    async fn answers_invalid_json_rpc_and_keeps_reading() {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server);
        let mut transport = LineTransport::new(server_read, server_write);
        let (client_read, mut client_write) = tokio::io::split(client);
        client_write
            .write_all(b"{\"x\":1}\n{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}\n")
            .await
            .expect("in memory");
        let received = transport.receive().await.expect("the ping");
        assert!(
            matches!(received, ClientJsonRpcMessage::Request(ref r) if r.id == RequestId::Number(5))
        );
        let mut answers = BufReader::new(client_read).lines();
        let error: serde_json::Value = serde_json::from_str(
            &answers
                .next_line()
                .await
                .expect("in memory")
                .expect("an answer"),
        )
        .expect("JSON");
        assert_eq!(error["error"]["code"], -32600);
        assert_eq!(error["id"], serde_json::Value::Null);
    }
}
