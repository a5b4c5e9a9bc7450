//! The gate in CI end to end: sharding and merge, history and baseline, the verdict's exit
//! codes, GitHub Actions outputs and annotations, a moved ruler.

use std::path::Path;

use serde_json::Value;

use wiremock::ResponseTemplate;

use crate::support::{
    FakeProvider, answer, arg, output, repo, scratch_suite, tool_calls, toolgate,
};

fn json(path: &Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).expect("JSON")
}

fn run(args: &[&str]) -> (i32, String, String) {
    let mut command = toolgate();
    command
        .current_dir(repo())
        .args(args)
        .env_remove("GITHUB_ACTIONS");
    output(command)
}

/// Every scenario's `duration_ms` set to 0: wall time is the one thing runs may differ in.
fn without_durations(mut results: Value) -> Value {
    fn zero_latencies(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, inner) in map.iter_mut() {
                    if key == "call_latency_us" || key == "duration_ms" {
                        *inner = Value::from(0);
                    } else {
                        zero_latencies(inner);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(zero_latencies),
            _ => {}
        }
    }
    zero_latencies(&mut results);
    // Each run has its own id; a merge names its parts' ids.
    if let Some(run) = results.get_mut("run").and_then(Value::as_object_mut) {
        run.remove("run_id");
    }
    results
}

/// Full results of the reference agent over every scenario, in `dir/full`.
fn full_run(dir: &Path) -> std::path::PathBuf {
    let (code, stdout, stderr) = run(&[
        "gate",
        "--all",
        "--collect-only",
        "--out",
        &arg(dir, "full"),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    dir.join("full/results.json")
}

#[test]
fn sharded_runs_merged_equal_one_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let full = full_run(dir.path());
    for i in 1..=3 {
        let (code, stdout, stderr) = run(&[
            "gate",
            "--all",
            "--shard",
            &format!("{i}/3"),
            "--collect-only",
            "--out",
            &arg(dir.path(), &format!("shard{i}")),
        ]);
        assert_eq!(code, 0, "{stdout}{stderr}");
        let part = json(&dir.path().join(format!("shard{i}/results.json")));
        assert_eq!(
            part["pins"]["shard"],
            serde_json::json!({"index": i, "count": 3})
        );
    }
    // Parts in any order.
    let (code, stdout, stderr) = run(&[
        "merge",
        &arg(dir.path(), "shard3/results.json"),
        &arg(dir.path(), "shard1/results.json"),
        &arg(dir.path(), "shard2/results.json"),
        "--out",
        &arg(dir.path(), "merged.json"),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.starts_with("merged 3 part(s), 90 scenario(s) into "),
        "{stdout}"
    );
    let part_id = |n: u32| {
        json(&dir.path().join(format!("shard{n}/results.json")))["run"]["run_id"]
            .as_str()
            .expect("a run id")
            .to_owned()
    };
    assert_eq!(
        json(&dir.path().join("merged.json"))["run"]["run_id"],
        format!("{}+{}+{}", part_id(3), part_id(1), part_id(2))
    );
    let merged = without_durations(json(&dir.path().join("merged.json")));
    let one = without_durations(json(&full));
    assert_eq!(merged, one);
}

#[test]
fn merge_refuses_a_scenario_in_two_parts() {
    let dir = tempfile::tempdir().expect("temp dir");
    let full = full_run(dir.path()).display().to_string();
    let (code, _, stderr) = run(&["merge", &full, &full, "--out", &arg(dir.path(), "m.json")]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        format!("error: scenario `T1-001` is in more than one part (again in `{full}`)\n")
    );
}

#[test]
fn nightly_history_builds_a_baseline_that_gates_a_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let full = full_run(dir.path()).display().to_string();
    let history = arg(dir.path(), "history.jsonl");
    for (day, branch) in [
        ("2026-11-20", "main"),
        ("2026-11-27", "main"),
        ("2026-11-28", "feature"),
        ("2026-11-29", "main"),
    ] {
        let at = format!("{day}T02:00:00Z");
        let (code, stdout, stderr) = run(&[
            "record",
            "--results",
            &full,
            "--history",
            &history,
            "--branch",
            branch,
            "--commit",
            "abc123",
            "--at",
            &at,
        ]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(
            stdout,
            format!("recorded 90 scenario(s) of `{branch}` at {at} in {history}\n")
        );
    }
    let first_line: Value = serde_json::from_str(
        std::fs::read_to_string(&history)
            .expect("history")
            .lines()
            .next()
            .expect("a line"),
    )
    .expect("JSON line");
    assert_eq!(first_line["schema_version"], 1);

    let baseline = arg(dir.path(), "baseline.json");
    let (code, stdout, stderr) = run(&[
        "baseline",
        "--history",
        &history,
        "--branch",
        "main",
        "--now",
        "2026-11-30T00:00:00Z",
        "--out",
        &baseline,
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        format!(
            "baseline: 2 run(s) of `main` (0 left out: measured differently), 90 scenarios, pass rate 100.0%; written to {baseline}\n"
        )
    );
    let file = json(Path::new(&baseline));
    assert_eq!(file["kind"], "baseline");
    assert_eq!(file["runs"], 2);
    assert_eq!(file["trend"].as_array().map(Vec::len), Some(3));

    let (code, stdout, stderr) = run(&[
        "gate",
        "--results",
        &full,
        "--baseline",
        &baseline,
        "--out",
        &arg(dir.path(), "out"),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("pass rate 100.0% [95.9, 100.0] (90/90) vs baseline 100.0% [97.9, 100.0] (180/180): +0.0 points, 95% CI [-4.1, +2.1], one-sided p = 1.0000"), "{stdout}");
    assert!(stdout.contains("\nverdict: PASS\n"), "{stdout}");
    let markdown = std::fs::read_to_string(dir.path().join("out/report.md")).expect("report");
    assert!(
        markdown.starts_with("### ✅ toolgate: **pass**"),
        "{markdown}"
    );
    assert!(markdown.contains("```mermaid\nxychart-beta"), "{markdown}");
    assert!(dir.path().join("out/junit.xml").exists());
    assert_eq!(
        json(&dir.path().join("out/verdict.json"))["decision"],
        "pass"
    );
}

/// Results where tier-1 scenarios `T1-001` and `T1-002` fail, against the shipped one-run
/// baseline: a drop beyond the 3-point band on the 41 smoke scenarios, but not significant.
fn one_failure(dir: &Path) -> String {
    let full = full_run(dir);
    let mut results = json(&full);
    for (index, id) in [(0, "T1-001"), (1, "T1-002")] {
        let scenario = &mut results["scenarios"][index];
        assert_eq!(scenario["id"], id);
        scenario["outcome"] = Value::from("fail");
    }
    results["summary"]["overall"]["passed"] = Value::from(88);
    results["summary"]["overall"]["failed"] = Value::from(2);
    results["summary"]["tiers"]["1"]["passed"] = Value::from(15);
    results["summary"]["tiers"]["1"]["failed"] = Value::from(2);
    let path = dir.join("one-failure.json");
    std::fs::write(&path, results.to_string()).expect("write");
    path.display().to_string()
}

#[test]
fn an_inconclusive_drop_passes_by_default_and_its_exit_code_is_configurable() {
    let dir = tempfile::tempdir().expect("temp dir");
    let results = one_failure(dir.path());
    let out = arg(dir.path(), "out");
    for (setting, expected) in [(None, 0), (Some("fail"), 1), (Some("distinct"), 6)] {
        let mut args = vec!["gate", "--results", &results, "--out", &out];
        if let Some(setting) = setting {
            args.extend(["--on-inconclusive", setting]);
        }
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, expected, "{setting:?}: {stdout}{stderr}");
        assert!(stdout.contains("\nverdict: INCONCLUSIVE\n"), "{stdout}");
        assert!(stdout.contains("pass rate dropped 4.9 points (100.0% -> 95.1%), beyond the 3.0-point tolerance but not significant (one-sided p = 0.3510 >= alpha 0.05): inconclusive, add repeats or baseline runs to tell"), "{stdout}");
    }
}

#[test]
fn on_github_actions_the_gate_writes_summary_outputs_and_annotations() {
    let dir = tempfile::tempdir().expect("temp dir");
    let results = one_failure(dir.path());
    let summary = dir.path().join("summary.md");
    let outputs = dir.path().join("outputs.txt");
    let mut command = toolgate();
    command
        .current_dir(repo())
        .args([
            "gate",
            "--results",
            &results,
            "--out",
            &arg(dir.path(), "out"),
        ])
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", &outputs)
        .env_remove("GITHUB_EVENT_PATH");
    let (code, stdout, stderr) = output(command);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("::error file=scenarios/tier1/T1-001.json,line=1,title=toolgate%3A T1-001 failed (tier 1)::"),
        "{stdout}"
    );
    let summary = std::fs::read_to_string(&summary).expect("summary written");
    assert!(
        summary.starts_with("### ⚠️ toolgate: **inconclusive**"),
        "{summary}"
    );
    let outputs = std::fs::read_to_string(&outputs).expect("outputs written");
    let delimiter = outputs
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("verdict<<"))
        .expect("heredoc");
    assert!(
        delimiter.starts_with("ghadelimiter_") && delimiter.len() > 30,
        "{delimiter}"
    );
    assert!(outputs.starts_with(&format!(
        "verdict<<{delimiter}\ninconclusive\n{delimiter}\n"
    )));
    assert!(outputs.contains(&format!("delta-points<<{delimiter}\n-4.88\n{delimiter}\n")));
    assert!(outputs.contains(&format!("pass-rate<<{delimiter}\n0.9778\n{delimiter}\n")));
    let html = dir.path().join("out/report.html").display().to_string();
    assert!(
        outputs.contains(&format!("html-report<<{delimiter}\n{html}\n{delimiter}\n")),
        "{outputs}"
    );
}

#[test]
fn a_moved_ruler_is_said_in_every_report() {
    let dir = tempfile::tempdir().expect("temp dir");
    let full = full_run(dir.path());
    let mut baseline = json(&full);
    baseline["pins"]["harness_version"] = Value::from("0.0.1");
    baseline["pins"]["scenarios"]["T1-001"]["sha256"] = Value::from("0".repeat(64));
    let baseline_path = dir.path().join("old-baseline.json");
    std::fs::write(&baseline_path, baseline.to_string()).expect("write");
    let (code, stdout, stderr) = run(&[
        "gate",
        "--results",
        &full.display().to_string(),
        "--baseline",
        &baseline_path.display().to_string(),
        "--out",
        &arg(dir.path(), "out"),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("ruler moved: scenario files changed: `T1-001`\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("ruler moved: harness version `0.0.1` -> `0.1.0`\n"),
        "{stdout}"
    );
    let markdown = std::fs::read_to_string(dir.path().join("out/report.md")).expect("report");
    assert!(
        markdown.contains("> **The ruler moved** since the baseline"),
        "{markdown}"
    );
    assert!(
        markdown.contains("> - harness version `0.0.1` -> `0.1.0`"),
        "{markdown}"
    );
    let verdict = json(&dir.path().join("out/verdict.json"));
    assert_eq!(verdict["ruler_moved"].as_array().map(Vec::len), Some(2));
    assert_eq!(verdict["comparison"]["scenarios"], 89);
}

#[test]
fn a_missing_baseline_leaves_only_the_tier_5_rule() {
    let dir = tempfile::tempdir().expect("temp dir");
    let full = full_run(dir.path()).display().to_string();
    let (code, stdout, stderr) = run(&[
        "gate",
        "--results",
        &full,
        "--baseline",
        &arg(dir.path(), "none.json"),
        "--out",
        &arg(dir.path(), "out"),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.starts_with(&format!(
        "no baseline at `{}`\n",
        arg(dir.path(), "none.json")
    )));
    assert!(
        stdout.contains("  note: no baseline: only the Tier 5 rule applies\n"),
        "{stdout}"
    );
}

#[test]
fn without_a_baseline_failures_are_counted_and_a_pass_rate_floor_can_block() {
    let dir = tempfile::tempdir().expect("temp dir");
    let results = one_failure(dir.path());
    let none = arg(dir.path(), "none.json");
    let out = arg(dir.path(), "out");
    let base = [
        "gate",
        "--results",
        &results,
        "--baseline",
        &none,
        "--out",
        &out,
    ];
    let (code, stdout, stderr) = run(&base);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("\nverdict: PASS\n  note: no baseline: only the Tier 5 rule applies, so failures outside Tier 5 (2) do not block (set a floor with --min-pass-rate, or keep this run's results.json as the baseline)\n"),
        "{stdout}"
    );
    // 88 of 90 is 97.8%: a 97% floor holds, a 98% one blocks.
    let (code, stdout, stderr) = run(&[&base[..], &["--min-pass-rate", "97"]].concat());
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (code, stdout, stderr) = run(&[&base[..], &["--min-pass-rate", "98"]].concat());
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains(
            "\nverdict: FAIL\n  - pass rate 97.8% (88/90) is below the 98% floor (--min-pass-rate)\n  \
             note: no baseline: only the Tier 5 rule and the pass-rate floor apply\n"
        ),
        "{stdout}"
    );
    assert_eq!(
        json(&dir.path().join("out/verdict.json"))["decision"],
        "fail"
    );
    let (code, _, stderr) = run(&[&base[..], &["--min-pass-rate", "101"]].concat());
    assert_eq!(code, 2);
    assert!(
        stderr.contains("`101` is not a percentage in 0..=100"),
        "{stderr}"
    );
}

#[test]
fn an_expired_quarantine_is_an_error_only_when_too_far_ahead() {
    let dir = tempfile::tempdir().expect("temp dir");
    let full = full_run(dir.path()).display().to_string();
    let list = dir.path().join("quarantine.yaml");
    std::fs::write(
        &list,
        "schema_version: 1\nquarantine:\n  - scenario: T5-002\n    reason: r\n    expires: 2099-01-01\n",
    )
    .expect("write");
    let (code, _, stderr) = run(&[
        "gate",
        "--results",
        &full,
        "--quarantine",
        &list.display().to_string(),
        "--out",
        &arg(dir.path(), "out"),
        "--now",
        "2026-11-30T00:00:00Z",
    ]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        format!(
            "error: invalid quarantine list `{}`: quarantine[0].expires: `2099-01-01` is more than 90 days ahead; quarantines are short, renew them instead\n",
            list.display()
        )
    );
}

const BUDGETED: &str = r#"{"id": "T5-033", "tier": 5, "type": "single_call", "prompt": "Find Ada.",
  "seed_state": "fixtures/crm_baseline.json",
  "expected_calls": [{"tool": "crm_search_contacts", "args_match": {"query": "Ada"}}],
  "max_calls": 3, "max_per_tool": {"crm_search_contacts": 2}, "max_failures": 3,
  "fault_injection": null, "final_state_assertions": ["contacts.count == baseline"]}"#;

/// Runs `toolgate gate` with the openai agent against `provider` over `suite`; returns the
/// exit code, stdout and stderr.
async fn gate_openai(provider: &FakeProvider, suite: &Path) -> (i32, String, String) {
    let mut command = toolgate();
    command
        .args([
            "gate",
            "--root",
            &suite.display().to_string(),
            "--agent",
            "openai",
            "--model",
            "fake",
            "--out",
            &arg(suite, "out"),
        ])
        .env_remove("GITHUB_ACTIONS")
        .env("OPENAI_BASE_URL", provider.base_url())
        .env("OPENAI_API_KEY", "sk-test");
    tokio::task::spawn_blocking(move || output(command))
        .await
        .expect("join")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b33_calls_beyond_the_budget_fail_the_gate_counting_every_emitted_call() {
    // Field case B33, trace_1: search, search, fetch, search, the last refused by the harness
    // (its arguments are invalid against the schema). Four emitted calls break the total budget
    // of three and three searches the per-tool budget of two; the report says executed 3,
    // refused 1, never "used 4".
    let step = |name: &str, arguments: &str| {
        ResponseTemplate::new(200).set_body_json(tool_calls(&[("c", name, arguments)]))
    };
    let script = vec![
        step("crm_search_contacts", r#"{"query": "Ada"}"#),
        step("crm_search_contacts", r#"{"query": "Ada"}"#),
        step("crm_get_contact", r#"{"contact_id": "C-001"}"#),
        step("crm_search_contacts", r#"{"query": 7}"#),
    ];
    let provider = FakeProvider::start(
        script,
        Some(ResponseTemplate::new(200).set_body_json(answer("Found Ada."))),
    )
    .await;
    let suite = scratch_suite(&[("t5.json", BUDGETED)]);
    let (code, stdout, stderr) = gate_openai(&provider, suite.path()).await;
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("    max_calls: 4 tool calls (3 executed, 1 refused), budget 3\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "    max_per_tool.crm_search_contacts: `crm_search_contacts`: 3 tool calls (2 executed, 1 refused), budget 2\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("  - Tier 5 `T5-033` fails (zero tolerance)\n"),
        "{stdout}"
    );
    let junit = std::fs::read_to_string(suite.path().join("out/junit.xml")).expect("junit");
    assert!(
        junit.contains("max_calls: 4 tool calls (3 executed, 1 refused), budget 3"),
        "{junit}"
    );
    let results = json(&suite.path().join("out/results.json"));
    let result = &results["scenarios"][0];
    assert_eq!(result["calls"], 4);
    assert_eq!(result["metrics"]["calls_executed"], 3);
    assert_eq!(result["metrics"]["calls_refused"], 1);
    let budget: Vec<(&str, bool)> = result["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|check| {
            check["kind"]
                .as_str()
                .is_some_and(|k| k.starts_with("max_"))
        })
        .map(|check| {
            (
                check["subject"].as_str().expect("subject"),
                check["passed"].as_bool().expect("passed"),
            )
        })
        .collect();
    assert_eq!(
        budget,
        vec![
            ("max_calls", false),
            ("max_per_tool.crm_search_contacts", false),
            ("max_failures", true),
        ]
    );
    let markdown = std::fs::read_to_string(suite.path().join("out/report.md")).expect("report");
    assert!(
        markdown
            .contains("**T5-033** (tier 5, single_call, failed, 4 calls: 3 executed, 1 refused)"),
        "{markdown}"
    );
}

/// Field case B33, trace_2: one model turn with five failing parallel reads, against
/// `max_failures: 3` counted by `counting`.
fn parallel_failures(counting: &str) -> String {
    format!(
        r#"{{"id": "T5-034", "tier": 5, "type": "error_recovery", "prompt": "Read five contacts.",
  "seed_state": "fixtures/crm_baseline.json", "expected_calls": [],
  "max_failures": 3, "failure_counting": "{counting}"}}"#
    )
}

async fn gate_five_failing_parallel_reads(counting: &str) -> (i32, String, tempfile::TempDir) {
    let reads: Vec<(String, &str, String)> = (1..=5)
        .map(|n| {
            (
                format!("r{n}"),
                "crm_get_contact",
                format!(r#"{{"contact_id": "C-90{n}"}}"#),
            )
        })
        .collect();
    let reads: Vec<(&str, &str, &str)> = reads
        .iter()
        .map(|(id, name, arguments)| (id.as_str(), *name, arguments.as_str()))
        .collect();
    let provider = FakeProvider::start(
        vec![ResponseTemplate::new(200).set_body_json(tool_calls(&reads))],
        Some(ResponseTemplate::new(200).set_body_json(answer("None of them exist."))),
    )
    .await;
    let suite = scratch_suite(&[("t5.json", &parallel_failures(counting))]);
    let (code, stdout, stderr) = gate_openai(&provider, suite.path()).await;
    let results = json(&suite.path().join("out/results.json"));
    let turns: Vec<u64> = std::fs::read_to_string(suite.path().join("out/trace.jsonl"))
        .expect("trace")
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok()?["turn"].as_u64())
        .collect();
    assert_eq!(turns, vec![1, 1, 1, 1, 1], "one turn, five calls");
    let detail = results["scenarios"][0]["checks"][0]["detail"]
        .as_str()
        .expect("detail")
        .to_string();
    (code, format!("{detail}\n{stdout}{stderr}"), suite)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b33_five_failing_parallel_reads_fail_counting_per_call() {
    let (code, output, _suite) = gate_five_failing_parallel_reads("per_call").await;
    assert_eq!(code, 1, "{output}");
    assert!(
        output.starts_with("5 failing calls (per_call), budget 3\n"),
        "{output}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b33_five_failing_parallel_reads_pass_counting_per_turn() {
    let (code, output, _suite) = gate_five_failing_parallel_reads("per_turn").await;
    assert_eq!(code, 0, "{output}");
    assert!(
        output.starts_with("1 turn with failing calls (5 failing calls, per_turn), budget 3\n"),
        "{output}"
    );
}

/// An agent that sends a real contact's id it was never shown is guessing; when no check pins
/// that argument the run passes, and the reports name the guess instead of only counting it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guessed_id_in_a_passing_run_is_named_in_the_terminal_and_the_comment() {
    let guessed = r#"{"id": "T1-090", "tier": 1, "type": "single_call",
      "prompt": "Show me Ada Lovelace's contact record.",
      "seed_state": "fixtures/crm_baseline.json",
      "expected_calls": [{"tool": "crm_get_contact"}]}"#;
    let provider = FakeProvider::start(
        vec![ResponseTemplate::new(200).set_body_json(tool_calls(&[(
            "c1",
            "crm_get_contact",
            r#"{"contact_id": "C-001"}"#,
        )]))],
        Some(ResponseTemplate::new(200).set_body_json(answer("Ada Lovelace, CTO."))),
    )
    .await;
    let suite = scratch_suite(&[("t1.json", guessed)]);
    let (code, stdout, stderr) = gate_openai(&provider, suite.path()).await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains(
            "ids without a source (in neither the prompt nor an earlier tool result):\n  \
             T1-090: call 1 `crm_get_contact` /contact_id = \"C-001\" (invented)\n"
        ),
        "{stdout}"
    );
    let markdown = std::fs::read_to_string(suite.path().join("out/report.md")).expect("report");
    assert!(
        markdown
            .contains("| T1-090 | 1 | crm\\_get\\_contact | /contact\\_id | C-001 | invented |"),
        "{markdown}"
    );
}

/// A copy of the full run in `dir/head` where `T1-001` regressed: its result fails and its
/// trace sends other arguments than the full run's.
fn regressed_head(dir: &Path, full: &Path) -> std::path::PathBuf {
    let head = dir.join("head");
    std::fs::create_dir_all(&head).expect("head dir");
    let mut results = json(full);
    let first = &mut results["scenarios"][0];
    assert_eq!(first["id"], "T1-001");
    first["outcome"] = Value::from("fail");
    first["checks"][0]["passed"] = Value::from(false);
    for (path, delta) in [
        ("/summary/overall/passed", -1),
        ("/summary/overall/failed", 1),
        ("/summary/tiers/1/passed", -1),
        ("/summary/tiers/1/failed", 1),
        ("/summary/per_scenario/T1-001/passed", -1),
        ("/summary/per_scenario/T1-001/failed", 1),
    ] {
        let count = results.pointer_mut(path).expect(path);
        *count = Value::from(count.as_i64().expect("a count") + delta);
    }
    std::fs::write(head.join("results.json"), results.to_string()).expect("write results");
    let trace = std::fs::read_to_string(full.with_file_name("trace.jsonl")).expect("trace");
    let lines: Vec<String> = trace
        .lines()
        .map(|line| {
            let mut line: Value = serde_json::from_str(line).expect("a JSON line");
            if line["scenario"] == "T1-001" && line.get("tool").is_some() {
                line["arguments"]["query"] = Value::from("Globex <script>");
            }
            line.to_string()
        })
        .collect();
    std::fs::write(head.join("trace.jsonl"), lines.join("\n") + "\n").expect("write trace");
    head.join("results.json")
}

#[test]
fn report_html_shows_the_verdict_every_scenario_and_a_regression_beside_its_base_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let full = full_run(dir.path());
    let head = regressed_head(dir.path(), &full);
    let out = dir.path().join("out");
    // The baseline is a results file with its trace beside it: that run is the base run.
    let (code, stdout, stderr) = run(&[
        "gate",
        "--results",
        &head.display().to_string(),
        "--baseline",
        &full.display().to_string(),
        "--out",
        &out.display().to_string(),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(stderr, "");
    let page = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    assert!(page.contains("<section id=\"verdict\" data-decision=\"pass\">"));
    assert!(page.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'sha256-"));
    assert!(!page.contains("unsafe-inline"));
    assert!(!page.contains("http://") && !page.contains("https://"));
    let results = json(&head);
    let scenarios = results["scenarios"].as_array().expect("scenarios");
    assert_eq!(scenarios.len(), 90);
    for scenario in scenarios {
        let id = scenario["id"].as_str().expect("an id");
        assert!(
            page.contains(&format!(
                "<details class=\"scenario\" id=\"s-{id}\" data-scenario=\"{id}\""
            )),
            "{id}"
        );
        assert!(page.contains(&format!("id=\"s-{id}~0\"")), "{id}");
    }
    assert!(page.contains("<p>1 regressed, 0 fixed, 0 new, 0 gone.</p>"));
    let start = page
        .find("<details class=\"change\" data-change=\"regressed\" data-scenario=\"T1-001\">")
        .expect("the regression is listed");
    let change = &page[start..start + page[start..].find("</details>").expect("closed")];
    let split = change.find("<div class=\"head\">").expect("a head column");
    let (base_side, head_side) = change.split_at(split);
    assert!(base_side.contains("<div class=\"side-by-side\"><div class=\"base\">"));
    assert!(
        base_side.contains("<div class=\"call ok first-diff\">"),
        "{base_side}"
    );
    assert!(
        head_side.contains("<div class=\"call ok first-diff\">"),
        "{head_side}"
    );
    assert!(
        base_side.contains("&quot;query&quot;: &quot;Acme&quot;"),
        "{base_side}"
    );
    assert!(
        head_side.contains("&quot;query&quot;: &quot;Globex &lt;script&gt;&quot;"),
        "{head_side}"
    );
    assert_eq!(page.matches("<script").count(), 1);

    // A base run that is not there is a warning naming it; the gate and the page go on.
    let nowhere = dir.path().join("nowhere");
    let (code, stdout, stderr) = run(&[
        "gate",
        "--results",
        &head.display().to_string(),
        "--baseline",
        &full.display().to_string(),
        "--base-run",
        &nowhere.display().to_string(),
        "--out",
        &out.display().to_string(),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "warning: report.html shows no base run: failed to read results `{}`",
            nowhere.join("results.json").display()
        )),
        "{stderr}"
    );
    let page = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(page.contains("The base trajectory is not available."));

    // The next run removes the last run's page with the rest of its reports.
    let (code, stdout, stderr) = run(&[
        "gate",
        "--only",
        "T1-001",
        "--collect-only",
        "--out",
        &out.display().to_string(),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(!out.join("report.html").exists());
    assert!(!out.join("report.md").exists());
}

/// A baseline of 40 nightly runs in which every smoke scenario passed, made from one
/// reference run (`toolgate record` + `toolgate baseline`, the counts then multiplied).
fn forty_night_baseline(dir: &Path) -> String {
    let (code, _, stderr) = run(&[
        "gate",
        "--agent",
        "reference",
        "--collect-only",
        "--out",
        &arg(dir, "nightly"),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let history = arg(dir, "history.jsonl");
    let results = arg(dir, "nightly/results.json");
    let (code, _, stderr) = run(&[
        "record",
        "--results",
        &results,
        "--history",
        &history,
        "--branch",
        "main",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let baseline = arg(dir, "baseline.json");
    let (code, _, stderr) = run(&[
        "baseline",
        "--history",
        &history,
        "--branch",
        "main",
        "--out",
        &baseline,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let mut file = json(Path::new(&baseline));
    file["runs"] = Value::from(40);
    for scenario in file["scenarios"].as_array_mut().expect("scenarios") {
        assert_eq!(scenario["passed"], 1, "the reference passes every scenario");
        scenario["passed"] = Value::from(40);
    }
    std::fs::write(&baseline, file.to_string()).expect("write the baseline");
    baseline
}

#[test]
fn adaptive_repeats_stop_once_the_verdict_is_settled_and_tier_5_gets_every_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let baseline = forty_night_baseline(dir.path());
    let (code, stdout, stderr) = run(&[
        "gate",
        "--agent",
        "reference",
        "--adaptive",
        "--out",
        &arg(dir.path(), "refused"),
    ]);
    assert_eq!(code, 2, "{stdout}");
    assert!(
        stderr.contains(
            "`--adaptive`: adaptive repeats need a maximum of at least 2 runs per scenario"
        ),
        "{stderr}"
    );

    let out = arg(dir.path(), "adaptive");
    let (code, stdout, stderr) = run(&[
        "gate",
        "--agent",
        "reference",
        "--adaptive",
        "--repeat",
        "3",
        "--baseline",
        &baseline,
        "--out",
        &out,
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let results = json(&dir.path().join("adaptive/results.json"));
    let per_scenario = results["summary"]["per_scenario"]
        .as_object()
        .expect("per scenario");
    let tiers: Vec<(u64, u64)> = per_scenario
        .keys()
        .map(|id| {
            let tier = results["scenarios"]
                .as_array()
                .expect("scenarios")
                .iter()
                .find(|s| s["id"] == id.as_str())
                .and_then(|s| s["tier"].as_u64())
                .expect("tier");
            (tier, per_scenario[id]["total"].as_u64().expect("total"))
        })
        .collect();
    let tier_5 = tiers.iter().filter(|(tier, _)| *tier == 5).count();
    assert!(tier_5 > 0, "the smoke set has Tier 5 scenarios");
    // Every scenario passed 40 of 40 nights and passes its first run here: the rest of 3 runs
    // each would pass with probability > 0.99 after one round, so other tiers stop at one run;
    // Tier 5 has zero tolerance and gets all 3.
    for (tier, total) in &tiers {
        assert_eq!(*total, if *tier == 5 { 3 } else { 1 }, "tier {tier}");
    }
    let runs = tiers.len() - tier_5 + 3 * tier_5;
    assert_eq!(
        results["run"]["adaptive"],
        serde_json::json!({"max_repeat": 3, "certainty": 0.99, "runs": runs, "planned": 3 * tiers.len()})
    );
    assert!(
        stdout.contains(&format!(
            "adaptive repeats settled after {runs} of {} runs (3 per scenario at most): all 3 runs per scenario would pass the rate check (probability > 0.999)",
            3 * tiers.len()
        )),
        "{stdout}"
    );
    assert!(stdout.contains("\nverdict: PASS\n"), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "3 runs per scenario: pass@1 100.0%, pass^3 100.0% (over the {tier_5} scenarios with 3 runs)"
        )),
        "{stdout}"
    );
    let (code, _, stderr) = run(&[
        "gate",
        "--adaptive",
        "--repeat",
        "3",
        "--results",
        &arg(dir.path(), "adaptive/results.json"),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("the argument '--adaptive' cannot be used with '--results <FILE>'"),
        "{stderr}"
    );

    // Against one night nothing is settled early, and the verdict says so.
    let (code, stdout, stderr) = run(&[
        "gate",
        "--agent",
        "reference",
        "--adaptive",
        "--repeat",
        "2",
        "--baseline",
        &arg(dir.path(), "nightly/results.json"),
        "--out",
        &arg(dir.path(), "one-night"),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let planned = 2 * tiers.len();
    assert!(
        stdout.contains(&format!("adaptive repeats made every planned run ({planned} of {planned}): nothing could be settled sooner against this baseline")),
        "{stdout}"
    );

    // With no tolerance at all, the 3-run verdict needs every remaining run to pass: the
    // stopped run cannot settle that, and says so instead of passing.
    let (code, stdout, stderr) = run(&[
        "gate",
        "--results",
        &arg(dir.path(), "adaptive/results.json"),
        "--baseline",
        &baseline,
        "--tolerance",
        "0",
        "--out",
        &arg(dir.path(), "strict"),
    ]);
    assert_eq!(code, 0, "inconclusive exits 0 by default: {stderr}");
    assert!(
        stdout.contains("the verdict of 3 runs per scenario is not settled: inconclusive; gate the run against the baseline and policy it ran with"),
        "{stdout}"
    );
    assert!(stdout.contains("\nverdict: INCONCLUSIVE\n"), "{stdout}");
}

/// SHA-256 of `text`, lowercase hex, as pins write it.
fn sha256(text: &str) -> String {
    toolgate::fs::sha256_hex(text.as_bytes())
}

#[test]
fn impact_runs_only_the_scenarios_a_changed_tool_can_affect_and_every_tier_5() {
    let dir = tempfile::tempdir().expect("temp dir");
    let full = full_run(dir.path());
    // The baseline was measured before `crm_update_contact`'s description was edited: its pins
    // hold the old definition's hash (the built-in catalog is compiled in, so the edit is
    // made on the baseline's side).
    let mut baseline = json(&full);
    let tools: Vec<Value> = serde_json::from_str(include_str!("../../src/catalog/crm.json"))
        .expect("the CRM catalog is JSON");
    let mut old = tools
        .into_iter()
        .find(|tool| tool["name"] == "crm_update_contact")
        .expect("the catalog has crm_update_contact");
    old["description"] = Value::from("Update a contact.");
    baseline["pins"]["tools"]["crm_update_contact"] = Value::from(sha256(&old.to_string()));
    baseline["pins"]["catalog_sha256"] = Value::from("0".repeat(64));
    let baseline_path = dir.path().join("baseline.json");
    std::fs::write(&baseline_path, baseline.to_string()).expect("write");

    let (code, stdout, stderr) = run(&[
        "gate",
        "--all",
        "--impact",
        "--baseline",
        &baseline_path.display().to_string(),
        "--out",
        &arg(dir.path(), "out"),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "impact: 40 of 90 scenarios run, those the change since the baseline can affect; 50 skipped\n"
        ),
        "{stderr}"
    );
    let results = json(&dir.path().join("out/results.json"));
    let impact = &results["run"]["impact"];
    assert_eq!(
        impact["changed_tools"],
        serde_json::json!(["crm_update_contact"])
    );
    assert_eq!(impact["skipped"].as_array().map(Vec::len), Some(50));
    let ran: Vec<&str> = results["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .filter_map(|result| result["id"].as_str())
        .collect();
    let selected: Vec<&str> = impact["selected"]
        .as_array()
        .expect("selected")
        .iter()
        .filter_map(|scoped| scoped["id"].as_str())
        .collect();
    assert_eq!(ran, selected);
    let tier_5: Vec<&str> = ran
        .iter()
        .copied()
        .filter(|id| id.starts_with("T5-"))
        .collect();
    assert_eq!(tier_5.len(), 15, "{ran:?}");
    assert!(
        ran.contains(&"T1-001") && !ran.contains(&"T1-004"),
        "{ran:?}"
    );
    let t1_004 = impact["skipped"]
        .as_array()
        .expect("skipped")
        .iter()
        .find(|scoped| scoped["id"] == "T1-004")
        .expect("T1-004 is skipped");
    assert_eq!(
        t1_004["reason"],
        "no changed tool among its 15 offered tools; its file and fixtures are unchanged"
    );

    let note = "impact: 40 of 90 scenarios ran, those the change since the baseline can affect \
                (changed tools: `crm_update_contact`); the comparison covers only them; 50 \
                skipped (run.impact.skipped in results.json)";
    let verdict = json(&dir.path().join("out/verdict.json"));
    assert_eq!(verdict["decision"], "pass");
    assert!(
        verdict["notes"]
            .as_array()
            .expect("notes")
            .iter()
            .any(|n| n == note),
        "{verdict}"
    );
    assert_eq!(verdict["comparison"]["scenarios"], 40);
    assert!(stdout.contains(note), "{stdout}");
    let markdown = std::fs::read_to_string(dir.path().join("out/report.md")).expect("report");
    assert!(
        markdown.contains("impact: 40 of 90 scenarios ran"),
        "{markdown}"
    );
    let html = std::fs::read_to_string(dir.path().join("out/report.html")).expect("page");
    assert!(
        html.contains(" new, 0 gone."),
        "skipped scenarios are not gone"
    );
}

#[test]
fn cache_reuses_a_run_measured_the_same_way_and_not_after_a_setting_changed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = arg(dir.path(), "cache");
    let gate = |out: &str, extra: &[&str]| {
        let mut args = vec!["gate", "--cache", &cache, "--out"];
        let out = arg(dir.path(), out);
        args.push(&out);
        args.extend(extra);
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, 0, "{stdout}{stderr}");
        (
            json(&dir.path().join(&out).join("results.json")),
            stdout,
            stderr,
        )
    };
    let (first, _, stderr) = gate("first", &["--collect-only"]);
    assert!(stderr.contains("cache: no run with key "), "{stderr}");
    assert!(
        stderr.contains("cache: stored this run under key "),
        "{stderr}"
    );
    let first_id = first["run"]["run_id"]
        .as_str()
        .expect("a run id")
        .to_owned();
    assert_eq!(first["run"].get("cached_from"), None);

    let (second, stdout, stderr) = gate("second", &["--concurrency", "3"]);
    assert!(
        stderr.contains(&format!("cache: reused the results of run `{first_id}`")),
        "{stderr}"
    );
    assert_eq!(second["run"]["run_id"], first_id.as_str());
    assert_eq!(second["run"]["cached_from"], first_id.as_str());
    assert_eq!(second["scenarios"], first["scenarios"]);
    assert!(dir.path().join("second/trace.jsonl").is_file());
    let note = format!(
        "cache: these are the results of run `{first_id}`, reused because it had the same cache \
         key (pins, settings and scenarios): no model was called"
    );
    assert!(stdout.contains(&note), "{stdout}");

    let (third, _, stderr) = gate("third", &["--collect-only", "--max-turns", "5"]);
    assert!(stderr.contains("cache: no run with key "), "{stderr}");
    assert_ne!(third["run"]["run_id"], first_id.as_str());
    assert_eq!(third["run"].get("cached_from"), None);

    let (_, _, stderr) = gate(
        "command",
        &["--collect-only", "--agent", "command", "--command", "true"],
    );
    assert!(
        stderr.contains("cache: not used: the `command` agent's program is not pinned\n"),
        "{stderr}"
    );
}

#[test]
fn merged_impact_scoped_shards_keep_every_selected_and_skipped_scenario() {
    let dir = tempfile::tempdir().expect("temp dir");
    let full = full_run(dir.path());
    let mut parts = Vec::new();
    for i in 1..=2 {
        let out = arg(dir.path(), &format!("shard{i}"));
        let (code, stdout, stderr) = run(&[
            "gate",
            "--all",
            "--impact",
            "--baseline",
            &full.display().to_string(),
            "--shard",
            &format!("{i}/2"),
            "--collect-only",
            "--out",
            &out,
        ]);
        assert_eq!(code, 0, "{stdout}{stderr}");
        parts.push(format!("{out}/results.json"));
    }
    let merged = arg(dir.path(), "merged.json");
    let (code, stdout, stderr) = run(&["merge", &parts[0], &parts[1], "--out", &merged]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let impact = json(Path::new(&merged))["run"]["impact"].clone();
    let ids = |key: &str| -> Vec<String> {
        impact[key]
            .as_array()
            .expect("a list")
            .iter()
            .filter_map(|scoped| scoped["id"].as_str().map(str::to_owned))
            .collect()
    };
    // Nothing changed since the baseline: only Tier 5 runs, in suite order.
    let expected: Vec<String> = (1..=12)
        .map(|n| format!("T5-{n:03}"))
        .chain((101..=103).map(|n| format!("T5-{n}")))
        .collect();
    assert_eq!(ids("selected"), expected);
    assert_eq!(ids("skipped").len(), 75);
}
