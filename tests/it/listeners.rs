//! The HTTP listeners of `mock serve --listen` and `proxy --listen`: loopback unless allowed
//! otherwise, `Host` and `Origin` checked, idle connections closed, and connections capped.

use std::io::BufRead as _;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use toolgate::harness::Harness;
use toolgate::harness::http::{self, Listen, LoopbackServer};
use toolgate::mock::{self, MockBackend};

use crate::support::{output, repo, toolgate};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}"#;

async fn desk_server(address: &str, listen: &Listen) -> anyhow::Result<LoopbackServer> {
    let catalog = mock::load(&repo().join("examples/support-desk/mocks.yaml")).expect("loads");
    let backend = MockBackend::new(Arc::new(catalog), &serde_json::json!({})).expect("seeds");
    let harness = Arc::new(Harness::new(Box::new(backend), Vec::new()));
    http::serve_at(harness, address, listen).await
}

/// `host:port` of a server URL `http://host:port/mcp`.
fn authority(url: &str) -> &str {
    url.trim_start_matches("http://").trim_end_matches("/mcp")
}

/// Sends an MCP `initialize` POST with these extra header lines; the status code.
async fn initialize(authority: &str, headers: &str) -> u16 {
    let mut stream = TcpStream::connect(authority).await.expect("connects");
    let request = format!(
        "POST /mcp HTTP/1.1\r\n{headers}Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n{INITIALIZE}",
        INITIALIZE.len()
    );
    stream.write_all(request.as_bytes()).await.expect("writes");
    let mut reply = String::new();
    stream.read_to_string(&mut reply).await.expect("reads");
    reply
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP reply: {reply:?}"))
}

#[tokio::test]
async fn a_foreign_origin_or_host_is_refused_and_a_loopback_one_served() {
    let server = desk_server("127.0.0.1:0", &Listen::default())
        .await
        .expect("serves");
    let at = authority(server.url());
    assert!(!server.remote());
    assert_eq!(initialize(at, &format!("Host: {at}\r\n")).await, 200);
    assert_eq!(
        initialize(
            at,
            &format!("Host: {at}\r\nOrigin: http://localhost:3000\r\n")
        )
        .await,
        200
    );
    assert_eq!(
        initialize(
            at,
            &format!("Host: {at}\r\nOrigin: https://evil.example\r\n")
        )
        .await,
        403
    );
    assert_eq!(
        initialize(at, "Host: evil.example\r\n").await,
        403,
        "a DNS-rebound name"
    );
}

#[tokio::test]
async fn a_non_loopback_address_needs_allow_remote_and_then_accepts_its_own_host() {
    let refused = desk_server("0.0.0.0:0", &Listen::default()).await;
    let message = format!("{:#}", refused.err().expect("refused"));
    assert!(
        message.contains("`0.0.0.0:0` is not a loopback address")
            && message.contains("--allow-remote"),
        "{message}"
    );
    let allowed = Listen {
        allow_remote: true,
        ..Listen::default()
    };
    let server = desk_server("0.0.0.0:0", &allowed).await.expect("serves");
    assert!(server.remote());
    let at = authority(server.url());
    assert!(at.starts_with("0.0.0.0:"), "{at}");
    let port = at.rsplit(':').next().expect("a port");
    // The printed URL works as it is, and so does the address a neighbour would use.
    assert_eq!(initialize(at, &format!("Host: {at}\r\n")).await, 200);
    assert_eq!(
        initialize(&format!("127.0.0.1:{port}"), "Host: 192.0.2.7\r\n").await,
        200
    );
}

#[tokio::test]
async fn idle_connections_are_closed_and_do_not_starve_new_requests() {
    let listen = Listen {
        max_connections: 2,
        header_read_timeout: Duration::from_millis(300),
        ..Listen::default()
    };
    let server = desk_server("127.0.0.1:0", &listen).await.expect("serves");
    let at = authority(server.url()).to_owned();
    // Two connections that never send a request take every slot.
    let mut idle = Vec::new();
    for _ in 0..2 {
        idle.push(TcpStream::connect(&at).await.expect("connects"));
    }
    // A real request is still answered: the idle ones are closed after the header timeout.
    let answered = tokio::time::timeout(
        Duration::from_secs(20),
        initialize(&at, &format!("Host: {at}\r\n")),
    )
    .await
    .expect("answered once the idle connections are closed");
    assert_eq!(answered, 200);
    for mut stream in idle {
        let mut byte = [0u8; 1];
        let read = tokio::time::timeout(Duration::from_secs(20), stream.read(&mut byte))
            .await
            .expect("closed by the server");
        assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    }
}

#[test]
fn mock_serve_and_proxy_refuse_a_remote_address_without_the_flag_and_warn_with_it() {
    let catalog = repo().join("examples/support-desk/mocks.yaml");
    let mut refused = toolgate();
    refused
        .args(["mock", "serve", "--listen", "0.0.0.0:0"])
        .arg(&catalog);
    let (code, _, stderr) = output(refused);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--allow-remote"), "{stderr}");

    let mut proxy = toolgate();
    proxy.args(["proxy", "--name", "x", "--listen", "[::]:0", "--", "true"]);
    let (code, _, stderr) = output(proxy);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("`[::]:0` is not a loopback address"),
        "{stderr}"
    );

    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["mock", "serve", "--allow-remote", "--listen", "0.0.0.0:0"])
        .arg(&catalog)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starts");
    let mut warning = String::new();
    std::io::BufReader::new(child.stderr.take().expect("piped"))
        .read_line(&mut warning)
        .expect("warns");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("piped"))
        .read_line(&mut line)
        .expect("prints the URL");
    child.kill().expect("stops");
    let _ = child.wait();
    assert!(line.contains("at http://0.0.0.0:"), "{line}");
    assert!(
        warning.starts_with("warning: http://0.0.0.0:")
            && warning.contains("reachable from other hosts"),
        "{warning}"
    );
}
