//! report.html: render time and size of the page for a full suite's shape.
//!
//! `cargo bench --bench html_report -- [ROUNDS]` (default 20). Builds in memory a run of 78
//! scenarios × 5 repeats with 4 tool calls per run (results of about 600 bytes), one
//! scenario in seven failing, a base run where every run passed, the baseline made of it and
//! the verdict; then renders the page ROUNDS times and prints the median and slowest render
//! and the page's size. A second case gives every call a 64 KiB result, to show the cut that
//! bounds the page.
#![expect(clippy::print_stdout, reason = "a bench reports its figures on stdout")]

// The allocator the `toolgate` binary uses (src/main.rs), so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::Instant;

use serde_json::{Value, json};
use toolgate::gate::{self, Baseline, Policy};
use toolgate::report::html::{self, BaseRun, Input};
use toolgate::results::{RunMeta, RunReport, ScenarioResult};
use toolgate::trace::{CallRecord, TraceLine};

const TIERS: [(u8, usize); 5] = [(1, 15), (2, 18), (3, 15), (4, 18), (5, 12)];
const REPEATS: u32 = 5;
const TOOLS: [&str; 4] = [
    "crm_search_contacts",
    "crm_get_contact",
    "crm_log_activity",
    "comm_send_email",
];

/// Every scenario id, in suite order, with its tier.
fn ids() -> Vec<(String, u8)> {
    TIERS
        .iter()
        .flat_map(|(tier, n)| (1..=*n).map(move |i| (format!("T{tier}-{i:03}"), *tier)))
        .collect()
}

/// A run: results and trace. `failing` makes one scenario in seven fail in its odd repeats,
/// with other arguments in its third call; `result_bytes` pads every call's result.
fn run(failing: bool, result_bytes: usize) -> (RunReport, Vec<TraceLine>) {
    let mut results = Vec::new();
    let mut trace = Vec::new();
    for (n, (id, tier)) in ids().into_iter().enumerate() {
        for repeat in 0..REPEATS {
            let fails = failing && n % 7 == 3 && repeat % 2 == 1;
            let check = |i: usize| {
                json!({"kind": "tool_selection", "subject": format!("expected_calls[{i}]"),
                       "passed": !(fails && i == 2),
                       "detail": if fails && i == 2 { "`contact_id` is \"C-9\", expected \"C-013\"" } else { "holds" }})
            };
            let result: Value = json!({
                "id": id, "tier": tier, "type": "multi_step", "repeat": repeat,
                "outcome": if fails { "fail" } else { "pass" },
                "calls": 4, "checks": (0..4).map(check).collect::<Vec<_>>(),
                "final_answer": "Logged the call with Maria Garcia (C-013) and emailed her the summary.",
                "duration_ms": 1200,
            });
            results.push(serde_json::from_value::<ScenarioResult>(result).expect("a result"));
            for (i, tool) in TOOLS.iter().enumerate() {
                let contact = if fails && i == 2 { "C-9" } else { "C-013" };
                let mut call = CallRecord::recorded(
                    i,
                    tool,
                    json!({"contact_id": contact, "note": "Quarterly review"}),
                );
                call.duration_us = 180;
                call.result = Some(json!({
                    "contact": {"id": "C-013", "name": "Maria Garcia", "company": "Acme",
                                "email": "maria.garcia@acme.example", "phone": "+34 91 555 0105",
                                "title": "Head of Operations", "created_at": "2025-06-18T16:45:00Z"},
                    "activities": [{"id": "A-1", "kind": "call", "at": "2026-11-20T10:00:00Z"},
                                   {"id": "A-2", "kind": "email", "at": "2026-11-22T09:30:00Z"}],
                    "padding": "x".repeat(result_bytes),
                }));
                trace.push(TraceLine::call(&id, repeat, &call));
            }
            trace.push(TraceLine::answer(
                &id,
                repeat,
                "Logged the call with Maria Garcia.",
            ));
        }
    }
    (RunReport::from_results(RunMeta::default(), results), trace)
}

fn measure(name: &str, rounds: usize, result_bytes: usize) {
    let (head, head_trace) = run(true, result_bytes);
    let (base, base_trace) = run(false, result_bytes);
    let baseline = Baseline::from_report(&base);
    let policy = Policy::default();
    let verdict = gate::decide(&head, Some(&baseline), &policy);
    let input = Input {
        report: &head,
        verdict: &verdict,
        policy: &policy,
        baseline: Some(&baseline),
        trace: &head_trace,
        base: Some(BaseRun {
            report: &base,
            trace: &base_trace,
        }),
    };
    let mut times = Vec::with_capacity(rounds);
    let mut size = 0;
    for _ in 0..rounds {
        let started = Instant::now();
        let page = html::render(&input);
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        size = page.len();
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{name}: {} runs, {} trace lines; render median {:.1} ms, slowest {:.1} ms; page {:.2} MB",
        head.scenarios.len(),
        head_trace.len(),
        times[times.len() / 2],
        times[times.len() - 1],
        size as f64 / 1e6
    );
}

fn main() {
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|arg| arg.parse().ok())
        .unwrap_or(20)
        .max(1);
    measure("78 scenarios x 5 repeats", rounds, 0);
    measure("same, every result 64 KiB", rounds, 64 * 1024);
}
