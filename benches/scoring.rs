//! Scoring throughput: how many recorded trajectories per second the deterministic checks and
//! the trajectory metrics get through, parsing excluded.
//!
//! `cargo bench --bench scoring -- [N]` (default 10,000). Trajectories are built from the
//! reference solutions of real scenarios, 3 to 6 calls each, then varied: calls reordered,
//! an extra lookup, a call dropped, a look-alike tool instead, an argument changed.
#![expect(clippy::print_stdout, reason = "a bench reports its figures on stdout")]

// The allocator the `toolgate` binary uses (src/main.rs), so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::Path;
use std::time::Instant;

use serde_json::{Value, json};
use toolgate::catalog::Catalog;
use toolgate::harness::ToolSet;
use toolgate::scenario::{Scenario, load_dir};
use toolgate::score::metrics::{self, RunView};
use toolgate::score::{ScoringOptions, score};
use toolgate::trace::CallRecord;

/// A trajectory of the expected calls of `scenario`, with a variation chosen by `seed`.
fn trajectory(scenario: &Scenario, seed: usize) -> Vec<CallRecord> {
    let mut calls: Vec<CallRecord> = scenario
        .expected_calls
        .iter()
        .map(|expected| {
            let mut arguments = expected.reference_args.clone();
            for (name, value) in &expected.args_match {
                arguments.insert(name.clone(), value.clone());
            }
            for prior in &expected.args_from_prior {
                arguments.insert(prior.argument.clone(), json!("ID-001"));
            }
            (expected.tool.clone(), Value::Object(arguments))
        })
        .chain(std::iter::repeat_n(
            ("crm_search_contacts".to_string(), json!({"query": "Ada"})),
            3,
        ))
        .take(3 + seed % 4)
        .enumerate()
        .map(|(index, (tool, arguments))| CallRecord {
            result: Some(json!({"id": "ID-001", "total": 3})),
            duration_us: 100,
            ..CallRecord::recorded(index, &tool, arguments)
        })
        .collect();
    match seed % 5 {
        0 => calls.reverse(),
        1 => {
            calls.pop();
        }
        2 => calls[0].tool = "admin_search_users".to_string(),
        3 => calls[0].arguments = json!({"query": "someone else"}),
        _ => {}
    }
    for (index, call) in calls.iter_mut().enumerate() {
        call.index = index;
    }
    calls
}

fn main() {
    let count: usize = std::env::args()
        .skip(1)
        .find_map(|arg| arg.parse().ok())
        .unwrap_or(10_000);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let catalog = Catalog::builtin();
    let scenarios = load_dir(&root.join("scenarios"), root, catalog).expect("the suite loads");
    // The harness checks arguments against the schemas as each call arrives; the trajectories
    // carry those findings, as recorded ones do, so scoring reads them rather than redoing them.
    let tools = ToolSet::new(catalog).expect("the catalog compiles");
    let options = ScoringOptions::default();
    let state = json!({"contacts": [], "activities": [], "deals": []});
    let runs: Vec<(&Scenario, Vec<CallRecord>)> = (0..count)
        .map(|i| {
            let scenario = &scenarios[i % scenarios.len()];
            let mut trace = trajectory(scenario, i);
            for call in &mut trace {
                tools.annotate(call);
            }
            (scenario, trace)
        })
        .collect();

    let started = Instant::now();
    let mut passed = 0usize;
    for (scenario, trace) in &runs {
        let scored = score(
            scenario,
            trace,
            &state,
            Some(&state),
            Some("Done."),
            options,
        );
        let view = RunView {
            scenario,
            trace,
            pairing: &scored.pairing,
            final_answer: Some("Done."),
            options,
        };
        let measured = metrics::measure(&view, &scored.checks);
        passed += usize::from(scored.outcome.is_pass() && measured.selection.expected < usize::MAX);
    }
    let elapsed = started.elapsed();
    println!(
        "scored {count} trajectories ({passed} passing) in {:.3} s: {:.0} trajectories/s",
        elapsed.as_secs_f64(),
        count as f64 / elapsed.as_secs_f64()
    );
}
