//! Trajectory-match throughput: recorded trajectories matched against their references in the
//! four modes (strict, unordered, superset, subset) with exact arguments, parsing excluded.
//!
//! `cargo bench --bench trajectory_match -- [--repeat N] [--once] [--cases PATH]
//! [--verdicts PATH]` reads the cases bench/trajectories.py writes (default
//! target/bench/trajectories.jsonl), parses them, then times each mode `N` times (default 5)
//! over every case and keeps the median. A second timing per mode starts from the
//! tool calls' argument strings, as agentevals' evaluator does: parsing them and building the
//! expected calls and the trace are inside the timed loop. `--once` times one pass of the
//! first kind only (the whole-process run). Prints one line per mode:
//! `mode per_second seconds cpu_per_second cpu_seconds strings_per_second strings_cpu_per_second`
//! (CPU time from `CLOCK_THREAD_CPUTIME_ID`; the strings figures are `-` with `--once`), and writes
//! the verdicts as JSON, `{"strict": [true, ...], ...}` in case order (default
//! target/bench/toolgate_verdicts.json).
#![expect(clippy::print_stdout, reason = "a bench reports its figures on stdout")]

// The allocator the `toolgate` binary uses (src/main.rs), so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::PathBuf;
use std::time::Instant;

use serde_json::{Map, Value};
use toolgate::scenario::ExpectedCall;
use toolgate::score::reference_match::{MatchMode, exact_call, matches_reference, recorded_call};
use toolgate::trace::CallRecord;

/// One tool call as the messages carry it: the tool's name and the argument string.
struct RawCall {
    name: String,
    arguments: String,
}

/// The tool calls of OpenAI-style `messages`, in order: every assistant message's
/// `tool_calls`, each `function.name` and `function.arguments`.
fn raw_calls(messages: &Value) -> Vec<RawCall> {
    let messages = messages.as_array().expect("messages are an array");
    messages
        .iter()
        .filter_map(|message| message.get("tool_calls").and_then(Value::as_array))
        .flatten()
        .map(|call| RawCall {
            name: call["function"]["name"]
                .as_str()
                .expect("function.name is a string")
                .to_string(),
            arguments: call["function"]["arguments"]
                .as_str()
                .expect("function.arguments is a string")
                .to_string(),
        })
        .collect()
}

fn expected_calls(calls: &[RawCall]) -> Vec<ExpectedCall> {
    calls
        .iter()
        .map(|call| {
            let arguments: Map<String, Value> =
                serde_json::from_str(&call.arguments).expect("reference arguments are an object");
            exact_call(&call.name, arguments)
        })
        .collect()
}

fn trace(calls: &[RawCall]) -> Vec<CallRecord> {
    calls
        .iter()
        .enumerate()
        .map(|(index, call)| {
            let arguments = serde_json::from_str(&call.arguments).expect("arguments are JSON");
            recorded_call(index, &call.name, arguments)
        })
        .collect()
}

/// Nanoseconds this thread has run on a CPU (`CLOCK_THREAD_CPUTIME_ID`, exact, where
/// /proc/self/schedstat moves only at scheduler ticks); 0 where the clock is missing.
fn cpu_ns() -> u64 {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID).map_or(0, |time| {
        u64::try_from(time.tv_sec()).unwrap_or(0) * 1_000_000_000
            + u64::try_from(time.tv_nsec()).unwrap_or(0)
    })
}

/// Runs `pass` `repeat` times; the median wall and CPU seconds, and the last pass's verdicts.
fn timed(repeat: usize, mut pass: impl FnMut() -> Vec<bool>) -> (f64, f64, Vec<bool>) {
    let mut wall = Vec::new();
    let mut cpu = Vec::new();
    let mut verdicts = Vec::new();
    for _ in 0..repeat {
        let (started, started_cpu) = (Instant::now(), cpu_ns());
        verdicts = std::hint::black_box(pass());
        wall.push(started.elapsed().as_secs_f64());
        cpu.push((cpu_ns() - started_cpu) as f64 / 1e9);
    }
    let median = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    (median(wall), median(cpu), verdicts)
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut cases_path = root.join("target/bench/trajectories.jsonl");
    let mut verdicts_path = root.join("target/bench/toolgate_verdicts.json");
    let mut repeat = 5usize;
    let mut once = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--repeat" => {
                repeat = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--repeat N")
            }
            "--once" => once = true,
            "--cases" => cases_path = args.next().expect("--cases PATH").into(),
            "--verdicts" => verdicts_path = args.next().expect("--verdicts PATH").into(),
            _ => {} // `cargo bench` passes `--bench`
        }
    }
    if once {
        repeat = 1;
    }

    let text = std::fs::read_to_string(&cases_path)
        .unwrap_or_else(|error| panic!("failed to read `{}`: {error}", cases_path.display()));
    let raw: Vec<(Vec<RawCall>, Vec<RawCall>)> = text
        .lines()
        .map(|line| {
            let case: Value = serde_json::from_str(line).expect("a case is JSON");
            (raw_calls(&case["reference"]), raw_calls(&case["output"]))
        })
        .collect();
    let parsed: Vec<(Vec<ExpectedCall>, Vec<CallRecord>)> = raw
        .iter()
        .map(|(reference, output)| (expected_calls(reference), trace(output)))
        .collect();
    let count = parsed.len() as f64;

    let mut all = Map::new();
    for mode in MatchMode::ALL {
        let (wall, cpu, verdicts) = timed(repeat, || {
            parsed
                .iter()
                .map(|(expected, trace)| matches_reference(mode, expected, trace))
                .collect()
        });
        let strings = if once {
            "- -".to_string()
        } else {
            let (wall, cpu, from_strings) = timed(repeat, || {
                raw.iter()
                    .map(|(reference, output)| {
                        matches_reference(mode, &expected_calls(reference), &trace(output))
                    })
                    .collect()
            });
            assert_eq!(
                from_strings, verdicts,
                "both timings give the same verdicts"
            );
            format!("{:.0} {:.0}", count / wall, count / cpu)
        };
        println!(
            "{} {:.0} {wall:.6} {:.0} {cpu:.6} {strings}",
            mode.as_str(),
            count / wall,
            count / cpu
        );
        all.insert(mode.as_str().to_string(), Value::from(verdicts));
    }
    std::fs::write(&verdicts_path, Value::Object(all).to_string())
        .unwrap_or_else(|error| panic!("failed to write `{}`: {error}", verdicts_path.display()));
}
