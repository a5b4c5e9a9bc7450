//! The user endpoint: where a `command` agent's own MCP client shows an elicitation to its
//! user, who in a toolgate run is the scenario's scripted user. The program finds it in
//! `TOOLGATE_USER_URL`.
//!
//! Protocol: `POST` the elicitation's params as the client received them (at least
//! `{"message": TEXT}`, usually with `"requestedSchema"` and `"mode": "form"`) as JSON; the
//! answer is the user's, `{"action": "accept" | "decline" | "cancel", "content": {...}}`
//! (`content` only with `accept`), which a faithful client returns to the server unchanged.
//! A body that is not such an object gets `400` with `{"error": TEXT}`. Every answer given
//! here is remembered for the harness ([`Elicitations::ask_user`]).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context as _;
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, Limited};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::Elicitations;

/// The largest request body read, in bytes (1 MiB): an elicitation is a message and a form.
const MAX_BODY_BYTES: usize = 1024 * 1024;

/// The path the endpoint answers on.
const PATH: &str = "/elicitation";

/// The user endpoint of one run on `127.0.0.1`, serving until dropped.
pub struct UserEndpoint {
    url: String,
    accept: JoinHandle<()>,
}

impl UserEndpoint {
    /// The endpoint, `http://127.0.0.1:PORT/elicitation`.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for UserEndpoint {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// Serves the user of `elicitations` on a free loopback port (needs a Tokio runtime).
///
/// Errors when no loopback port can be bound.
pub async fn serve_user(elicitations: Arc<Elicitations>) -> anyhow::Result<UserEndpoint> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .context("failed to bind a loopback port for the user endpoint")?;
    let bound: SocketAddr = listener
        .local_addr()
        .context("failed to read the user endpoint's loopback address")?;
    let accept = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            };
            let elicitations = Arc::clone(&elicitations);
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request| {
                    let elicitations = Arc::clone(&elicitations);
                    async move { Ok::<_, Infallible>(answer(request, &elicitations).await) }
                });
                // A broken connection only loses its own request.
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(UserEndpoint {
        url: format!("http://{bound}{PATH}"),
        accept,
    })
}

/// The response to one request: the user's answer, or why there is none.
async fn answer(
    request: Request<hyper::body::Incoming>,
    elicitations: &Elicitations,
) -> Response<Full<Bytes>> {
    if request.uri().path() != PATH {
        return respond(
            StatusCode::NOT_FOUND,
            &json!({"error": format!("the user endpoint answers on `{PATH}`")}),
        );
    }
    if request.method() != Method::POST {
        return respond(
            StatusCode::METHOD_NOT_ALLOWED,
            &json!({"error": "POST the elicitation's params as JSON"}),
        );
    }
    let body = match Limited::new(request.into_body(), MAX_BODY_BYTES)
        .collect()
        .await
    {
        Ok(collected) => collected.to_bytes(),
        Err(error) => {
            return respond(
                StatusCode::BAD_REQUEST,
                &json!({"error": format!("failed to read the request body: {error}")}),
            );
        }
    };
    let params: Value = match serde_json::from_slice(&body) {
        Ok(params) => params,
        Err(error) => {
            return respond(
                StatusCode::BAD_REQUEST,
                &json!({"error": format!("the body is not JSON: {error}")}),
            );
        }
    };
    let Some(message) = params.get("message").and_then(Value::as_str) else {
        return respond(
            StatusCode::BAD_REQUEST,
            &json!({"error": "the body must be the elicitation's params: an object with a \
                              string `message`"}),
        );
    };
    let schema = params
        .get("requestedSchema")
        .cloned()
        .unwrap_or(Value::Null);
    let reply = elicitations.ask_user(message, &schema).await;
    respond(
        StatusCode::OK,
        &serde_json::to_value(reply).expect("a reply serializes: plain data"),
    )
}

fn respond(status: StatusCode, body: &Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("a response from a status, a fixed header and a body is valid")
}

#[cfg(test)]
mod tests {
    //! The user endpoint answers a relayed request as the user and remembers it; anything
    //! else gets a status and a reason.

    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;
    use crate::harness::ScriptedUser;
    use crate::scenario::{Elicitation, ElicitationAction, ElicitationReply};

    /// Sends one HTTP/1.1 request to `url`'s host and path; returns the status line and body.
    async fn send(url: &str, method: &str, path: &str, body: &str) -> (String, String) {
        let address = url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .expect("a host");
        let mut stream = tokio::net::TcpStream::connect(address)
            .await
            .expect("the endpoint listens");
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        stream
            .write_all(request.as_bytes())
            .await
            .expect("the request is sent");
        let mut response = String::new();
        stream
            .read_to_string(&mut response)
            .await
            .expect("the response is read");
        let status = response.lines().next().unwrap_or_default().to_owned();
        let body = response
            .split_once("\r\n\r\n")
            .map(|(_, body)| body.to_owned())
            .unwrap_or_default();
        (status, body)
    }

    #[tokio::test]
    async fn answers_a_relayed_request_as_the_user_and_refuses_anything_else() {
        let reply = ElicitationReply {
            action: ElicitationAction::Accept,
            content: Some(json!({"reason": "duplicate"})),
        };
        let asked = vec![Elicitation {
            tool: "crm_delete_contact".into(),
            message: "Delete Ada?".into(),
            schema: json!({"type": "object", "properties": {"reason": {"type": "string"}}}),
            reply: reply.clone(),
        }];
        let user = Arc::new(Elicitations::new(
            asked.clone(),
            Arc::new(ScriptedUser::new(asked)),
        ));
        let endpoint = serve_user(Arc::clone(&user))
            .await
            .expect("a loopback port");
        assert!(endpoint.url().starts_with("http://127.0.0.1:"));
        assert!(endpoint.url().ends_with("/elicitation"));
        let params = r#"{"mode": "form", "message": "Delete Ada?", "requestedSchema": {}}"#;
        let (status, body) = send(endpoint.url(), "POST", PATH, params).await;
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert_eq!(
            serde_json::from_str::<Value>(&body).expect("JSON"),
            json!({"action": "accept", "content": {"reason": "duplicate"}})
        );
        assert_eq!(user.take_seen(), Some(reply));
        let (status, body) = send(endpoint.url(), "POST", PATH, r#"{"msg": 1}"#).await;
        assert_eq!(status, "HTTP/1.1 400 Bad Request");
        assert_eq!(
            body,
            r#"{"error":"the body must be the elicitation's params: an object with a string `message`"}"#
        );
        let (status, _) = send(endpoint.url(), "GET", PATH, "").await;
        assert_eq!(status, "HTTP/1.1 405 Method Not Allowed");
        let (status, _) = send(endpoint.url(), "POST", "/mcp", params).await;
        assert_eq!(status, "HTTP/1.1 404 Not Found");
        assert_eq!(
            user.take_seen(),
            None,
            "only the one good request was answered"
        );
    }
}
