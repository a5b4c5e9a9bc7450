//! Declarative mocks: how fast a mock call answers, and how fast a large catalog loads.
//!
//! `cargo bench --bench mocks -- [CALLS]` (default 5,000). Calls go to the support-desk
//! example (`get_ticket` with a `select`, `create_ticket` with an `insert`), once straight
//! through the harness (schema check, rules, trace) and once through the in-process MCP pipe
//! (an rmcp client and server over a byte pipe, as every run uses). The load figure is for a
//! generated catalog of 100 tools with 10 rules each (regexes, templates, selects, inserts).
#![expect(clippy::print_stdout, reason = "a bench reports its figures on stdout")]

// The allocator the `toolgate` binary uses (src/main.rs), so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use toolgate::harness::Harness;
use toolgate::harness::client::McpClient;
use toolgate::mock::{self, MockBackend};

fn percentile(samples: &mut [Duration], q: f64) -> Duration {
    samples.sort_unstable();
    let index = ((samples.len() as f64 - 1.0) * q).round() as usize;
    samples[index]
}

fn args(value: Value) -> Map<String, Value> {
    value.as_object().cloned().expect("an object")
}

/// A catalog of `tools` tools with `rules` rules each, written under `dir`.
fn big_catalog(dir: &Path, tools: usize, rules: usize) -> std::path::PathBuf {
    let mut text = String::from("schema_version: 1\ntools:\n");
    for t in 0..tools {
        let _ = writeln!(
            text,
            "  - name: tool_{t}\n    description: Tool number {t}.\n    inputSchema: {{type: object, properties: {{id: {{type: string}}, n: {{type: integer}}}}}}"
        );
    }
    text.push_str("tables:\n  rows: {key: id, id_prefix: \"R-\"}\nrules:\n");
    for t in 0..tools {
        let _ = writeln!(text, "  tool_{t}:");
        for r in 0..rules {
            let rule = match r % 4 {
                0 => format!(
                    "    - match: {{id: {{$regex: \"^R-{r}[0-9]*$\"}}}}\n      select: {{table: rows, where: {{id: \"{{{{args.id}}}}\"}}}}\n      return: {{rows: \"{{{{rows}}}}\", n: \"{{{{count}}}}\"}}"
                ),
                1 => format!(
                    "    - match: {{n: {r}}}\n      insert: {{table: rows, row: {{n: \"{{{{args.n}}}}\"}}}}\n      return: {{id: \"{{{{row.id}}}}\"}}"
                ),
                2 => format!(
                    "    - match: {{id: \"x-{r}\"}}\n      error: \"no {{{{args.id}}}} here (call {{{{call}}}})\""
                ),
                _ => format!(
                    "    - match: {{id: \"s-{r}\"}}\n      sequence: [{{error: busy}}, {{return: {{ok: true, seq: \"{{{{seq}}}}\"}}}}]"
                ),
            };
            text.push_str(&rule);
            text.push('\n');
        }
    }
    let path = dir.join("big.yaml");
    std::fs::write(&path, text).expect("writes the catalog");
    path
}

fn main() {
    let calls: usize = std::env::args()
        .skip(1)
        .find_map(|arg| arg.parse().ok())
        .unwrap_or(5_000);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/support-desk");
    let catalog = Arc::new(mock::load(&root.join("mocks.yaml")).expect("the example loads"));
    let seeded: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("fixtures/desk.json")).expect("reads the fixture"),
    )
    .expect("JSON");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");

    let backend = MockBackend::new(Arc::clone(&catalog), &seeded).expect("seeds");
    let harness = Arc::new(Harness::new(Box::new(backend), Vec::new()));
    let mut direct = Vec::with_capacity(calls);
    runtime.block_on(async {
        for i in 0..calls {
            let (tool, arguments) = if i % 2 == 0 {
                ("get_ticket", args(json!({"ticket_id": "TK-1002"})))
            } else {
                (
                    "create_ticket",
                    args(json!({"customer_email": "a@b.example", "subject": "Help me"})),
                )
            };
            let started = Instant::now();
            harness.call(tool, arguments).await;
            direct.push(started.elapsed());
        }
    });

    let backend = MockBackend::new(Arc::clone(&catalog), &seeded).expect("seeds");
    let harness = Arc::new(Harness::new(Box::new(backend), Vec::new()));
    let mut piped = Vec::with_capacity(calls);
    runtime.block_on(async {
        let client = McpClient::connect_in_process(harness)
            .await
            .expect("connects");
        for _ in 0..calls {
            let started = Instant::now();
            client
                .call_tool(
                    "get_ticket",
                    args(json!({"ticket_id": "TK-1002"})),
                    Duration::from_secs(5),
                )
                .await
                .expect("a result");
            piped.push(started.elapsed());
        }
        let _ = client.close().await;
    });

    let dir = tempfile::tempdir().expect("a temp dir");
    let path = big_catalog(dir.path(), 100, 10);
    let mut loads = Vec::new();
    for _ in 0..7 {
        let started = Instant::now();
        let big = mock::load(&path).expect("the generated catalog loads");
        loads.push(started.elapsed());
        let rules: usize = big.rules.values().map(Vec::len).sum();
        assert_eq!(rules, 1_000);
    }

    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!("mock calls: {calls} per path");
    println!(
        "  harness + rules (get_ticket/create_ticket): p50 {:.1} us, p99 {:.1} us",
        us(percentile(&mut direct, 0.5)),
        us(percentile(&mut direct, 0.99))
    );
    println!(
        "  in-process MCP pipe (get_ticket):          p50 {:.1} us, p99 {:.1} us",
        us(percentile(&mut piped, 0.5)),
        us(percentile(&mut piped, 0.99))
    );
    println!(
        "1,000-rule catalog load (100 tools): median {:.2} ms, max {:.2} ms",
        percentile(&mut loads, 0.5).as_secs_f64() * 1e3,
        loads.iter().max().expect("seven loads").as_secs_f64() * 1e3
    );
}
