//! Production traces: import + score throughput of `toolgate score`, in trajectories per
//! second, for each input format's shape.
//!
//! `cargo bench --bench production -- [TRAJECTORIES]` (default 100,000). Generates
//! trajectories of 4 tool calls each in memory (OpenAI message logs and toolgate traces),
//! then streams them through the importer, annotates each call against a 2-tool catalog
//! (JSON Schema validation), runs every production check and serialises each score line, as
//! the command does (the file writes left out).
#![expect(clippy::print_stdout, reason = "a bench reports its figures on stdout")]

// The allocator the `toolgate` binary uses (src/main.rs), so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::fmt::Write as _;
use std::io::Cursor;
use std::time::Instant;

use serde_json::json;
use toolgate::harness::ToolSet;
use toolgate::ingest::{Format, Trajectories};
use toolgate::score::production::{TraceSummary, TraceView, score_trace};

fn openai_log(n: usize) -> String {
    let mut text = String::new();
    for i in 0..n {
        let call = |id: &str, name: &str, args: &str| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}});
        let messages = json!([
            {"role": "user", "content": format!("Find contact {i} and log a call.")},
            {"role": "assistant", "tool_calls": [call("a", "search", &format!("{{\"query\": \"c{i}\"}}"))]},
            {"role": "tool", "tool_call_id": "a", "content": format!("{{\"contacts\": [{{\"id\": \"C-{i}\"}}]}}")},
            {"role": "assistant", "tool_calls": [call("b", "get", &format!("{{\"contact_id\": \"C-{i}\"}}"))]},
            {"role": "tool", "tool_call_id": "b", "content": "{\"name\": \"Ada\"}"},
            {"role": "assistant", "tool_calls": [call("c", "get", "{\"contact_id\": \"C-404\"}"), call("d", "search", "{\"query\": 5}")]},
            {"role": "tool", "tool_call_id": "c", "content": "not found"},
            {"role": "tool", "tool_call_id": "d", "content": "{\"contacts\": []}"},
            {"role": "assistant", "content": "Done."}
        ]);
        let _ = writeln!(
            text,
            "{}",
            json!({"id": format!("conv-{i}"), "messages": messages})
        );
    }
    text
}

fn toolgate_trace(n: usize) -> String {
    let mut text = String::new();
    for i in 0..n {
        for (tool, args) in [
            ("search", json!({"query": format!("c{i}")})),
            ("get", json!({"contact_id": format!("C-{i}")})),
            ("get", json!({"contact_id": "C-404"})),
            ("search", json!({"query": 5})),
        ] {
            let line = json!({"scenario": format!("S-{i}"), "tool": tool, "arguments": args,
                "outcome": "success", "result": {"ok": true}, "duration_us": 120});
            let _ = writeln!(text, "{line}");
        }
        let _ = writeln!(
            text,
            "{}",
            json!({"scenario": format!("S-{i}"), "final_answer": "Done."})
        );
    }
    text
}

fn run(name: &str, text: &str, format: Format, tools: &ToolSet) {
    let started = Instant::now();
    let mut summary = TraceSummary::default();
    let mut bytes = 0usize;
    for trajectory in Trajectories::new(Cursor::new(text.as_bytes()), name, format) {
        let mut trajectory = trajectory.expect("imports");
        for call in &mut trajectory.calls {
            tools.annotate(call);
        }
        let score = score_trace(&TraceView {
            trace_id: &trajectory.trace_id,
            prompt: trajectory.prompt.as_deref(),
            calls: &trajectory.calls,
            final_answer: trajectory.final_answer.as_deref(),
            has_results: trajectory.has.results,
            has_outcomes: trajectory.has.outcomes,
            has_durations: trajectory.has.durations,
            has_catalog: true,
        });
        bytes += serde_json::to_string(&score).expect("JSON").len();
        summary.add(&score);
    }
    summary.finish();
    let elapsed = started.elapsed().as_secs_f64();
    assert!(bytes > 0);
    println!(
        "{name}: {} trajectories ({} calls, {:.1} MB) in {:.2} s: {:.0} trajectories/s",
        summary.trajectories,
        summary.calls,
        text.len() as f64 / 1e6,
        elapsed,
        summary.trajectories as f64 / elapsed
    );
}

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|arg| arg.parse().ok())
        .unwrap_or(100_000);
    let tools = ToolSet::from_definitions(vec![
        json!({"name": "search", "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}),
        json!({"name": "get", "inputSchema": {"type": "object", "properties": {"contact_id": {"type": "string"}}, "required": ["contact_id"]}}),
    ])
    .expect("a valid catalog");
    run("openai", &openai_log(n), Format::Openai, &tools);
    run("toolgate", &toolgate_trace(n), Format::Toolgate, &tools);
}
