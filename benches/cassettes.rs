//! Cassettes and the proxy: how fast a replayed call answers, and what `toolgate proxy` adds
//! to a real server's round trip.
//!
//! `cargo bench --bench cassettes -- [CALLS]` (default 2,000). Replay: a cassette of 200
//! distinct recorded calls (memory-server-shaped answers), each call answered through the
//! harness (schema check, fault lookup, trace) and through the in-process MCP pipe. Proxy: the
//! official memory server (npm, installed by `tests/peers/install.sh`) called with `read_graph`
//! by an rmcp client, straight, through `toolgate proxy` and through a byte relay (this bench
//! binary re-run with `--relay`: the floor of any proxy in a process of its own), side by side
//! in alternating batches of 100, so all see the same machine load.
#![expect(clippy::print_stdout, reason = "a bench reports its figures on stdout")]

// The allocator the `toolgate` binary uses (src/main.rs), so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use toolgate::harness::Harness;
use toolgate::harness::cassette::{ReplayBackends, Scrubber};
use toolgate::harness::client::McpClient;

const RECORDED: usize = 200;

fn percentile(samples: &mut [Duration], q: f64) -> Duration {
    samples.sort_unstable();
    let index = ((samples.len() as f64 - 1.0) * q).round() as usize;
    samples[index]
}

fn args(value: Value) -> Map<String, Value> {
    value.as_object().cloned().expect("an object")
}

/// A cassette of `RECORDED` distinct `open_nodes` calls, written under `dir`.
fn cassette(dir: &Path) {
    let tool = json!({"name": "open_nodes", "inputSchema": {"type": "object",
        "properties": {"names": {"type": "array", "items": {"type": "string"}}}, "required": ["names"]}});
    let header = json!({"cassette_version": 1, "scenario": "B-001", "repeat": 0, "toolgate": "bench",
        "servers": [{"name": "memory", "tools_sha256": "bench", "tools": [tool]}]});
    let mut text = header.to_string();
    for i in 0..RECORDED {
        let answer = json!({"result": {"entities": [{"name": format!("person {i}"), "entityType": "person",
            "observations": ["one", "two", "three"]}], "relations": []}});
        let line = json!({"seq": i + 1, "server": "memory", "tool": "open_nodes",
            "arguments": {"names": [format!("person {i}")]}, "answer": answer, "latency_us": 900});
        text.push('\n');
        text.push_str(&line.to_string());
    }
    std::fs::write(dir.join("B-001.r0.jsonl"), text).expect("writes the cassette");
}

fn replay_bench(calls: usize, runtime: &tokio::runtime::Runtime) -> (Vec<Duration>, Vec<Duration>) {
    let dir = tempfile::tempdir().expect("a temp dir");
    cassette(dir.path());
    let backends = ReplayBackends::load(
        dir.path(),
        Scrubber::default(),
        Default::default(),
        Default::default(),
    )
    .expect("loads");
    let mut direct = Vec::with_capacity(calls);
    let mut piped = Vec::with_capacity(calls);
    runtime.block_on(async {
        // A fresh run every RECORDED calls: each recorded answer is served once per run.
        for batch in 0..calls.div_ceil(RECORDED) {
            let backend = backends.replay("B-001", 0).expect("recorded");
            let harness = Arc::new(Harness::new(Box::new(backend), Vec::new()));
            for i in 0..RECORDED.min(calls - batch * RECORDED) {
                let started = Instant::now();
                harness
                    .call(
                        "open_nodes",
                        args(json!({"names": [format!("person {i}")]})),
                    )
                    .await;
                direct.push(started.elapsed());
            }
            let backend = backends.replay("B-001", 0).expect("recorded");
            let harness = Arc::new(Harness::new(Box::new(backend), Vec::new()));
            let client = McpClient::connect_in_process(harness)
                .await
                .expect("connects");
            for i in 0..RECORDED.min(calls - batch * RECORDED) {
                let started = Instant::now();
                client
                    .call_tool(
                        "open_nodes",
                        args(json!({"names": [format!("person {i}")]})),
                        Duration::from_secs(5),
                    )
                    .await
                    .expect("a result");
                piped.push(started.elapsed());
            }
            let _ = client.close().await;
        }
    });
    (direct, piped)
}

async fn round_trips(client: &McpClient, n: usize, into: &mut Vec<Duration>) {
    for _ in 0..n {
        let started = Instant::now();
        client
            .call_tool("read_graph", Map::new(), Duration::from_secs(10))
            .await
            .expect("a result");
        into.push(started.elapsed());
    }
}

fn proxy_bench(calls: usize, runtime: &tokio::runtime::Runtime) -> Option<Paths> {
    let server = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/peers/node/node_modules/@modelcontextprotocol/server-memory/dist/index.js");
    if !server.exists() {
        println!(
            "proxy: skipped, run `bash tests/peers/install.sh` first (needs the memory server)"
        );
        return None;
    }
    let dir = tempfile::tempdir().expect("a temp dir");
    let env_arg = |name: &str| format!("MEMORY_FILE_PATH={}", dir.path().join(name).display());
    let server = server.display().to_string();
    let direct_args = vec![env_arg("direct.jsonl"), "node".into(), server.clone()];
    let proxy_args = vec![
        "proxy".into(),
        "--name".into(),
        "memory".into(),
        "--".into(),
        "env".into(),
        env_arg("proxied.jsonl"),
        "node".into(),
        server,
    ];
    let faults = dir.path().join("no-faults.yaml");
    std::fs::write(&faults, "fault_injection: []\n").expect("writes the faults file");
    let mut harness_args = proxy_args.clone();
    harness_args.splice(3..3, ["--faults".to_owned(), faults.display().to_string()]);
    if let Some(file) = harness_args
        .iter_mut()
        .find(|a| a.ends_with("proxied.jsonl"))
    {
        *file = env_arg("harnessed.jsonl");
    }
    let mut relay_args = vec![
        "--relay".to_owned(),
        "env".to_owned(),
        env_arg("relayed.jsonl"),
    ];
    relay_args.extend(direct_args[1..].iter().cloned());
    let relay_program = std::env::current_exe().expect("the bench's own path");
    let relay_program = relay_program.to_str().expect("a UTF-8 path");
    let mut paths = Paths::default();
    runtime.block_on(async {
        let straight = McpClient::connect_command("env", &direct_args)
            .await
            .expect("the memory server starts");
        let through = McpClient::connect_command(env!("CARGO_BIN_EXE_toolgate"), &proxy_args)
            .await
            .expect("the proxy starts");
        let relay = McpClient::connect_command(relay_program, &relay_args)
            .await
            .expect("the relay starts");
        let harnessed = McpClient::connect_command(env!("CARGO_BIN_EXE_toolgate"), &harness_args)
            .await
            .expect("the proxy with faults starts");
        for client in [&straight, &through, &relay, &harnessed] {
            round_trips(client, 50, &mut Vec::new()).await;
        }
        for _ in 0..calls.div_ceil(100) {
            round_trips(&straight, 100, &mut paths.direct).await;
            round_trips(&through, 100, &mut paths.proxied).await;
            round_trips(&relay, 100, &mut paths.relayed).await;
            round_trips(&harnessed, 100, &mut paths.harnessed).await;
        }
        for client in [straight, through, relay, harnessed] {
            let _ = client.close().await;
        }
    });
    Some(paths)
}

/// Round trips per path: straight to the server, through `toolgate proxy`, and through a
/// byte relay (the floor of any proxy in its own process).
#[derive(Default)]
struct Paths {
    direct: Vec<Duration>,
    proxied: Vec<Duration>,
    relayed: Vec<Duration>,
    /// Through `toolgate proxy --faults` (an empty faults file): every call through the
    /// harness, as with fault injection or `--record`.
    harnessed: Vec<Duration>,
}

/// `--relay COMMAND...`: this bench binary as the plainest possible proxy, copying bytes
/// between its stdio and a child's with one blocking thread per direction, parsing nothing.
fn relay(command: &[String]) {
    use std::io::{Read as _, Write as _};
    let mut child = std::process::Command::new(&command[0])
        .args(&command[1..])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the relayed server starts");
    let mut to_child = child.stdin.take().expect("piped");
    let mut from_child = child.stdout.take().expect("piped");
    let back = std::thread::spawn(move || {
        let mut buffer = [0u8; 65_536];
        let mut out = std::io::stdout().lock();
        while let Ok(n @ 1..) = from_child.read(&mut buffer) {
            if out
                .write_all(&buffer[..n])
                .and_then(|()| out.flush())
                .is_err()
            {
                break;
            }
        }
    });
    let mut buffer = [0u8; 65_536];
    let mut input = std::io::stdin().lock();
    while let Ok(n @ 1..) = input.read(&mut buffer) {
        if to_child
            .write_all(&buffer[..n])
            .and_then(|()| to_child.flush())
            .is_err()
        {
            break;
        }
    }
    drop(to_child);
    let _ = back.join();
    let _ = child.kill();
    let _ = child.wait();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--relay") {
        relay(&args[2..]);
        return;
    }
    let calls: usize = std::env::args()
        .skip(1)
        .find_map(|arg| arg.parse().ok())
        .unwrap_or(2_000);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let (mut direct, mut piped) = replay_bench(calls, &runtime);
    println!("replayed calls: {calls} per path");
    println!(
        "  harness + replay (open_nodes):        p50 {:.1} us, p99 {:.1} us",
        us(percentile(&mut direct, 0.5)),
        us(percentile(&mut direct, 0.99))
    );
    println!(
        "  in-process MCP pipe + replay:         p50 {:.1} us, p99 {:.1} us",
        us(percentile(&mut piped, 0.5)),
        us(percentile(&mut piped, 0.99))
    );
    if let Some(mut paths) = proxy_bench(calls, &runtime) {
        let d50 = percentile(&mut paths.direct, 0.5);
        let p50 = percentile(&mut paths.proxied, 0.5);
        let r50 = percentile(&mut paths.relayed, 0.5);
        let h50 = percentile(&mut paths.harnessed, 0.5);
        println!("memory server read_graph: {calls} round trips per path");
        for (name, p50, samples) in [
            ("direct        ", d50, &mut paths.direct),
            ("toolgate proxy", p50, &mut paths.proxied),
            ("byte relay    ", r50, &mut paths.relayed),
            ("proxy --faults", h50, &mut paths.harnessed),
        ] {
            println!(
                "  {name}: p50 {:.1} us, p99 {:.1} us",
                us(p50),
                us(percentile(samples, 0.99))
            );
        }
        println!(
            "  proxy / direct (p50): {:.2}x; byte relay / direct: {:.2}x; proxy / byte relay: {:.2}x",
            p50.as_secs_f64() / d50.as_secs_f64(),
            r50.as_secs_f64() / d50.as_secs_f64(),
            p50.as_secs_f64() / r50.as_secs_f64()
        );
        println!(
            "  proxy --faults / direct (p50): {:.2}x",
            h50.as_secs_f64() / d50.as_secs_f64()
        );
    }
}
