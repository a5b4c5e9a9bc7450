//! Lint benchmark: the built-in catalog and a generated 1,000-tool catalog.
//! Targets: 10 ms and 100 ms per lint. Run with `cargo bench --bench lint`; see docs/lint.md.
#![expect(clippy::print_stdout, reason = "a bench reports its figures on stdout")]

// The allocator the `toolgate` binary uses (src/main.rs), so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolgate::catalog::Catalog;
use toolgate::lint::{self, LintOptions, LoadedCatalog};

/// A deterministic catalog of `count` tools with realistic names, descriptions and schemas.
fn generated(count: usize) -> LoadedCatalog {
    const NOUNS: [&str; 10] = [
        "order",
        "invoice",
        "customer",
        "ticket",
        "project",
        "repository",
        "message",
        "calendar",
        "document",
        "payment",
    ];
    const VERBS: [&str; 10] = [
        "get",
        "list",
        "create",
        "update",
        "delete",
        "search",
        "archive",
        "export",
        "assign",
        "summarize",
    ];
    let tools: Vec<Value> = (0..count)
        .map(|n| {
            let (verb, noun) = (VERBS[n % 10], NOUNS[(n / 10) % 10]);
            json!({
                "name": format!("{verb}_{noun}_{n}"),
                "description": format!(
                    "{verb} a {noun} in workspace {n}. Use this when the user asks about a {noun}; \
                     returns at most 50 results and an error if the {noun} does not exist."
                ),
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "description": format!("The {noun} id, e.g. `{noun}_42`.")},
                        "limit": {"type": "integer", "description": "Most results to return.", "minimum": 1},
                        "status": {"type": "string", "enum": ["open", "closed"], "description": "Filter by status."},
                        "tags": {"type": "array", "items": {"type": "string"}, "description": "Tags to match."}
                    },
                    "required": ["id"]
                }
            })
        })
        .collect();
    LoadedCatalog::from_tools("generated", tools)
}

/// Median wall time of `runs` lints of `catalog`.
fn median(catalog: &LoadedCatalog, runs: usize) -> Duration {
    let options = LintOptions::default();
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            black_box(lint::lint(black_box(catalog), &options));
            start.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let builtin = LoadedCatalog::from_tools("toolgate", Catalog::builtin().definitions().to_vec());
    let start = Instant::now();
    black_box(lint::tokens::count_text("warm up the o200k vocabulary"));
    println!(
        "o200k vocabulary load (once per process): {:?}",
        start.elapsed()
    );
    for (name, catalog, runs, target_ms) in [
        ("built-in catalog", &builtin, 50, 10),
        ("generated 1,000-tool catalog", &generated(1_000), 11, 100),
    ] {
        let time = median(catalog, runs);
        let tools: Vec<lint::ToolRef<'_>> = catalog
            .tools
            .iter()
            .map(|tool| lint::ToolRef {
                server: &tool.server,
                name: tool.definition["name"].as_str().unwrap_or(""),
                definition: &tool.definition,
            })
            .collect();
        let start = Instant::now();
        black_box(lint::tokens::count(&tools));
        let tokens = start.elapsed();
        let start = Instant::now();
        let pairs = black_box(lint::similarity::look_alikes(&tools, 0.5)).len();
        let similarity = start.elapsed();
        println!("  of which: token count {tokens:?}, similarity {similarity:?} ({pairs} pairs)");
        println!(
            "lint {name} ({} tools): median {:.2} ms over {runs} runs (target {target_ms} ms)",
            catalog.tools.len(),
            time.as_secs_f64() * 1e3
        );
    }
}
