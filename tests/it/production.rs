//! `toolgate score` on production traces written by real libraries: OTLP JSON from the
//! OpenTelemetry Python SDK and its OTLP encoder, OpenAI message logs from the official
//! `openai` Python client against a fake provider on loopback, and toolgate's own traces.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use std::time::Duration;

use wiremock::{MockServer, ResponseTemplate};

use crate::own_servers::run;
use crate::support::{FakeProvider, answer, repo, tool_calls};

/// The Python of the traces environment (openai, OpenTelemetry), installed when missing.
fn traces_python() -> PathBuf {
    crate::peers::venv_python("venv-traces", "import openai, opentelemetry.sdk")
}

fn score(traces: &Path, format: &str, out: &Path, extra: &[&str]) -> (String, Value, Vec<Value>) {
    let mut args = vec![
        "score",
        "--traces",
        traces.to_str().expect("utf-8"),
        "--format",
        format,
        "--out",
        out.to_str().expect("utf-8"),
    ];
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let summary = serde_json::from_str(
        &std::fs::read_to_string(out.join("summary.json")).expect("summary.json"),
    )
    .expect("JSON");
    let scores = std::fs::read_to_string(out.join("scores.jsonl"))
        .expect("scores.jsonl")
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON"))
        .collect();
    (stdout, summary, scores)
}

/// `(check, verdict)` of one scored trajectory.
fn verdicts(score: &Value) -> Vec<(String, String)> {
    score["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| (c["kind"].to_string(), c["verdict"].to_string()))
        .collect()
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(k, v)| (format!("\"{k}\""), format!("\"{v}\"")))
        .collect()
}

#[test]
fn otlp_traces_from_the_opentelemetry_sdk_score_invented_ids_and_false_success() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let traces = dir.path().join("otel.jsonl");
    let status = Command::new(traces_python())
        .arg(repo().join("tests/peers/otel_traces.py"))
        .arg(&traces)
        .status()
        .expect("python runs");
    assert!(status.success());
    let catalog = dir.path().join("tools.json");
    std::fs::write(
        &catalog,
        r#"{"tools": [
            {"name": "search_contacts", "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}},
            {"name": "get_contact", "inputSchema": {"type": "object", "properties": {"contact_id": {"type": "string"}}, "required": ["contact_id"]}}
        ]}"#,
    )
    .expect("writes");
    let out = dir.path().join("out");
    let (stdout, summary, scores) = score(
        &traces,
        "otel",
        &out,
        &[
            "--catalog",
            catalog.to_str().expect("utf-8"),
            "--trace-url",
            "https://jaeger.example/trace/{trace_id}",
        ],
    );
    assert!(
        stdout.starts_with("2 trajectories, 3 tool calls; 1 with a failed check;"),
        "{stdout}"
    );
    assert!(
        stdout.contains("no_loops is judged on arguments alone: the same call repeated counts whatever it returned"),
        "{stdout}"
    );
    assert_eq!(scores.len(), 2);
    assert_eq!(scores[0]["calls"], 2);
    assert_eq!(scores[0]["tool_time_us"], 80_000, "two 40 ms tool spans");
    assert_eq!(
        verdicts(&scores[0]),
        pairs(&[
            ("known_tools", "pass"),
            ("arguments_valid", "pass"),
            ("no_loops", "pass"),
            ("no_invented_ids", "pass"),
            ("no_false_success", "pass"),
            ("no_retry_storm", "pass"),
        ])
    );
    assert_eq!(
        verdicts(&scores[1]),
        pairs(&[
            ("known_tools", "pass"),
            ("arguments_valid", "pass"),
            ("no_loops", "pass"),
            ("no_invented_ids", "fail"),
            ("no_false_success", "fail"),
            ("no_retry_storm", "pass"),
        ])
    );
    let trace_id = scores[1]["trace_id"].as_str().expect("a trace id");
    assert_eq!(trace_id.len(), 32, "an OTLP trace id in hex: {trace_id}");
    assert_eq!(
        scores[1]["checks"][3]["detail"],
        "call 1 `get_contact`: `/contact_id` = `C-999` appears in no earlier result or the prompt"
    );
    assert_eq!(summary["checks"]["no_false_success"]["failed"], 1);
    let report = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(
        report.contains(&format!(
            "- [`{trace_id}`](https://jaeger.example/trace/{trace_id}): call 1 `get_contact` failed and nothing recovered it, yet the final answer does not say so"
        )),
        "{report}"
    );
    let page = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(
        page.contains(&format!(
            "<li><a href=\"https://jaeger.example/trace/{trace_id}\" rel=\"noreferrer\"><code>{trace_id}</code></a>: call 1 `get_contact` failed and nothing recovered it, yet the final answer does not say so</li>"
        )),
        "{page}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_message_logs_from_the_openai_client_leave_unknowable_checks_inconclusive() {
    let reply = |body: Value| ResponseTemplate::new(200).set_body_json(body);
    let weather = || tool_calls(&[("call_1", "get_weather", r#"{"city": "Paris"}"#)]);
    let provider = FakeProvider::start(
        vec![
            reply(weather()),
            reply(answer("It is sunny in Paris.")),
            reply(weather()),
            reply(answer("It is sunny in Paris.")),
        ],
        None,
    )
    .await;
    let dir = tempfile::tempdir().expect("a temporary folder");
    let traces = dir.path().join("openai.jsonl");
    let python = traces_python();
    let script = repo().join("tests/peers/openai_log.py");
    let base_url = provider.base_url();
    let traces_arg = traces.clone();
    let status = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .arg(script)
            .arg(base_url)
            .arg(traces_arg)
            .status()
            .expect("python runs")
    })
    .await
    .expect("joins");
    assert!(status.success());
    assert_eq!(provider.requests().len(), 4);
    let out = dir.path().join("out");
    let traces_path = traces.clone();
    let (_, summary, scores) =
        tokio::task::spawn_blocking(move || score(&traces_path, "openai", &out, &[]))
            .await
            .expect("joins");
    assert_eq!(
        scores
            .iter()
            .map(|s| s["trace_id"].clone())
            .collect::<Vec<_>>(),
        [Value::from("conv-1"), Value::from("conv-2")]
    );
    // A chat log says neither whether a tool failed nor how long it took: those checks are
    // inconclusive, never passed; without a catalog, so are the catalog checks.
    assert_eq!(
        verdicts(&scores[1]),
        pairs(&[
            ("known_tools", "inconclusive"),
            ("arguments_valid", "inconclusive"),
            ("no_loops", "pass"),
            ("no_invented_ids", "pass"),
            ("no_false_success", "inconclusive"),
            ("no_retry_storm", "inconclusive"),
        ])
    );
    assert_eq!(summary["checks"]["no_false_success"]["inconclusive"], 2);
    assert_eq!(summary["calls"], 2);
    assert!(summary.get("tool_time_us").is_none(), "{summary}");
}

#[test]
fn a_toolgate_trace_keeps_the_catalog_checks_recorded_for_its_calls_when_no_catalog_is_given() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let traces = dir.path().join("trace.jsonl");
    let lines = [
        // Checked when the call arrived (the harness, or the proxy after the whole listing).
        serde_json::json!({"scenario": "S-1", "tool": "crm_search_contacts",
            "arguments": {"limit": "ten"}, "outcome": "tool_error", "refused": true,
            "error": "invalid arguments", "checked": true,
            "violations": [{"class": "type_error", "pointer": "/limit",
                            "message": "\"ten\" is not of type \"integer\""}]}),
        serde_json::json!({"scenario": "S-2", "tool": "crm_find_everything",
            "arguments": {}, "outcome": "protocol_error", "error": "unknown tool",
            "unknown_tool": true, "checked": true}),
        serde_json::json!({"scenario": "S-3", "tool": "crm_search_contacts",
            "arguments": {"limit": 5}, "outcome": "success", "result": {"contacts": []},
            "checked": true}),
        // The proxy before it had the server's tools/list: an outcome, but never checked.
        serde_json::json!({"scenario": "S-4", "tool": "crm_find_everything",
            "arguments": {}, "outcome": "success", "result": {}}),
        // One of two calls unchecked: the trajectory's catalog checks cannot decide.
        serde_json::json!({"scenario": "S-5", "tool": "crm_search_contacts",
            "arguments": {"limit": 5}, "outcome": "success", "result": {}, "checked": true}),
        serde_json::json!({"scenario": "S-5", "tool": "crm_find_everything",
            "arguments": {}, "outcome": "success", "result": {}}),
        // Written by hand.
        serde_json::json!({"scenario": "S-6", "tool": "crm_find_everything", "arguments": {}}),
    ];
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(&traces, text).expect("writes");
    let (_, summary, scores) = score(&traces, "toolgate", &dir.path().join("out"), &[]);
    let check = |index: usize, kind: &str| -> (String, String) {
        let check = scores[index]["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .find(|c| c["kind"] == kind)
            .unwrap_or_else(|| panic!("{kind} in {}", scores[index]));
        (
            check["verdict"].as_str().expect("verdict").to_owned(),
            check["detail"].as_str().unwrap_or("").to_owned(),
        )
    };
    assert_eq!(
        check(0, "arguments_valid"),
        (
            "fail".to_owned(),
            "call 1 `crm_search_contacts`: `/limit`: \"ten\" is not of type \"integer\"".to_owned()
        )
    );
    assert_eq!(check(0, "known_tools").0, "pass");
    assert_eq!(
        check(1, "known_tools"),
        (
            "fail".to_owned(),
            "call 1 `crm_find_everything`: not in the catalog".to_owned()
        )
    );
    assert_eq!(check(2, "known_tools").0, "pass");
    assert_eq!(check(2, "arguments_valid").0, "pass");
    for unchecked in [3, 4, 5] {
        assert_eq!(
            check(unchecked, "known_tools").0,
            "inconclusive",
            "{unchecked}"
        );
        assert_eq!(
            check(unchecked, "arguments_valid").0,
            "inconclusive",
            "{unchecked}"
        );
    }
    assert_eq!(summary["checks"]["known_tools"]["failed"], 1);
    assert_eq!(summary["checks"]["known_tools"]["inconclusive"], 3);
    assert_eq!(summary["checks"]["arguments_valid"]["failed"], 1);
    assert_eq!(summary["checks"]["arguments_valid"]["inconclusive"], 3);
}

/// Issue case: two proxy sessions appending to one trace file; session `a` repeats one call
/// three times between `b`'s lines. Scored session by session, the loop is found.
#[test]
fn a_loop_in_one_of_two_interleaved_proxy_sessions_is_found() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let traces = dir.path().join("trace.jsonl");
    let call = |run: &str, query: &str| {
        serde_json::json!({"run_id": run, "scenario": "memory", "tool": "search_nodes",
            "arguments": {"query": query}, "outcome": "success", "result": {"nodes": []}})
    };
    let lines = [
        call("a", "Ada"),
        call("b", "Bob"),
        call("a", "Ada"),
        call("b", "Cy"),
        call("a", "Ada"),
    ];
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(&traces, text).expect("writes");
    let (_, summary, scores) = score(&traces, "toolgate", &dir.path().join("out"), &[]);
    let loops: Vec<(String, String)> = scores
        .iter()
        .map(|score| {
            let check = score["checks"]
                .as_array()
                .expect("checks")
                .iter()
                .find(|c| c["kind"] == "no_loops")
                .expect("no_loops");
            (
                score["trace_id"].as_str().expect("id").to_owned(),
                check["verdict"].as_str().expect("verdict").to_owned(),
            )
        })
        .collect();
    assert_eq!(
        loops,
        [
            ("b/memory#0".to_owned(), "pass".to_owned()),
            ("a/memory#0".to_owned(), "fail".to_owned())
        ]
    );
    assert_eq!(summary["trajectories"], 2);
}

/// `score` over a large file said nothing until it was done. On a terminal (here a
/// pseudo-terminal from util-linux `script`) it now shows how much of the file is read; in a
/// pipe or a CI log it prints nothing extra.
#[test]
fn score_shows_its_progress_on_a_terminal_and_nothing_in_a_pipe() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let traces = dir.path().join("trace.jsonl");
    let line = serde_json::json!({"run_id": "r", "scenario": "s", "tool": "t",
        "arguments": {"q": "x".repeat(200)}, "outcome": "success", "result": {}});
    let text: String = (0..2000).map(|_| format!("{line}\n")).collect();
    std::fs::write(&traces, text).expect("writes");
    let command = format!(
        "'{}' score --format toolgate --traces '{}' --out '{}'",
        env!("CARGO_BIN_EXE_toolgate"),
        traces.display(),
        dir.path().join("tty").display()
    );
    let on_terminal = std::process::Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .output()
        .expect("util-linux `script` runs");
    assert!(on_terminal.status.success(), "{on_terminal:?}");
    let shown = String::from_utf8_lossy(&on_terminal.stdout);
    assert!(shown.contains(" KiB read "), "{shown}");
    let (code, stdout, stderr) = run(&[
        "score",
        "--format",
        "toolgate",
        "--traces",
        traces.to_str().expect("utf-8"),
        "--out",
        dir.path().join("pipe").to_str().expect("utf-8"),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(stderr, "");
    assert!(!stdout.contains(" read "), "{stdout}");
}

#[test]
fn a_sample_is_reproducible_from_its_seed_and_a_bad_line_names_the_file_and_line() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let traces = dir.path().join("trace.jsonl");
    let mut text = String::new();
    for i in 0..50 {
        text.push_str(&format!(
            "{{\"scenario\": \"S-{i:02}\", \"tool\": \"get\", \"arguments\": {{\"id\": \"{i}\"}}}}\n"
        ));
    }
    std::fs::write(&traces, &text).expect("writes");
    let ids = |seed: &str| -> Vec<Value> {
        let out = dir.path().join(format!("out-{seed}"));
        let (_, _, scores) = score(
            &traces,
            "toolgate",
            &out,
            &["--sample", "5", "--seed", seed],
        );
        scores.iter().map(|s| s["trace_id"].clone()).collect()
    };
    let first = ids("7");
    assert_eq!(first.len(), 5);
    assert_eq!(first, ids("7"));
    assert_ne!(first, ids("8"));
    std::fs::write(&traces, format!("{text}{{not json\n")).expect("writes");
    let (code, _, stderr) = run(&[
        "score",
        "--traces",
        traces.to_str().expect("utf-8"),
        "--out",
        dir.path().join("bad").to_str().expect("utf-8"),
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains(&format!(
            "failed to parse `{}` line 51 as JSON",
            traces.display()
        )),
        "{stderr}"
    );
}

/// Every span of an OTLP JSON file written by `gate --otel`.
fn spans(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("the spans were written");
    assert_eq!(text.lines().count(), 1, "one export request");
    let request: Value = serde_json::from_str(&text).expect("OTLP JSON");
    request["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array()
        .expect("spans")
        .clone()
}

fn attribute<'a>(span: &'a Value, key: &str) -> Option<&'a Value> {
    span["attributes"]
        .as_array()?
        .iter()
        .find(|a| a["key"] == key)
        .map(|a| &a["value"])
}

#[test]
fn gate_runs_exported_as_genai_spans_score_again_as_production_traces() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let otel = dir.path().join("spans.jsonl");
    let out = dir.path().join("out");
    let (code, stdout, stderr) = run(&[
        "gate",
        "--otel",
        otel.to_str().expect("utf-8"),
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let spans = spans(&otel);
    let roots: Vec<&Value> = spans
        .iter()
        .filter(|s| {
            attribute(s, "gen_ai.operation.name")
                == Some(&serde_json::json!({"stringValue": "invoke_agent"}))
        })
        .collect();
    assert_eq!(roots.len(), 41, "one trace per smoke run");
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).expect("results"))
            .expect("JSON");
    let calls: u64 = results["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .map(|s| s["calls"].as_u64().expect("calls"))
        .sum();
    let tools: Vec<&Value> = spans
        .iter()
        .filter(|s| {
            s["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("execute_tool "))
        })
        .collect();
    assert_eq!(tools.len() as u64, calls);
    for tool in &tools {
        let root = roots
            .iter()
            .find(|r| r["traceId"] == tool["traceId"])
            .expect("every tool span has its run's root");
        assert_eq!(tool["parentSpanId"], root["spanId"]);
        assert_eq!(
            attribute(tool, "mcp.method.name"),
            Some(&serde_json::json!({"stringValue": "tools/call"}))
        );
    }
    // A fault injected by a scenario shows as an error span with the fault's name.
    let faulted = tools
        .iter()
        .find(|s| attribute(s, "toolgate.fault_injected").is_some())
        .expect("the smoke set injects faults");
    assert_eq!(faulted["status"]["code"], 2);
    assert!(attribute(faulted, "error.type").is_some());

    // The same file, read back as production traces, with the built-in catalog.
    let lock = dir.path().join("builtin.lock.json");
    let (code, _, stderr) = run(&["snapshot", "--lock", lock.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{stderr}");
    let runs_with_calls = results["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .filter(|s| s["calls"].as_u64() > Some(0))
        .count() as u64;
    let (_, summary, _) = score(
        &otel,
        "otel",
        &dir.path().join("score"),
        &["--catalog", lock.to_str().expect("utf-8")],
    );
    assert_eq!(summary["trajectories"], runs_with_calls);
    assert_eq!(summary["calls"], calls);
    assert_eq!(summary["checks"]["known_tools"]["failed"], 0);
    assert_eq!(summary["checks"]["known_tools"]["inconclusive"], 0);
    // The smoke set retries through injected faults: a retry after a failure is no loop.
    assert_eq!(summary["checks"]["no_loops"]["failed"], 0);

    // The gate's own trace.jsonl needs no catalog: the harness checked every call it served.
    let (_, summary, _) = score(
        &out.join("trace.jsonl"),
        "toolgate",
        &dir.path().join("score-trace"),
        &[],
    );
    let without_calls = summary["trajectories"].as_u64().expect("a count") - runs_with_calls;
    for kind in ["known_tools", "arguments_valid"] {
        let counts = &summary["checks"][kind];
        assert_eq!(counts["passed"], runs_with_calls, "{kind}: {counts}");
        assert_eq!(counts["failed"], 0, "{kind}: {counts}");
        // A run without a call has nothing to check against the catalog.
        assert_eq!(counts["inconclusive"], without_calls, "{kind}: {counts}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn gate_sends_its_spans_to_an_otlp_collector_with_the_configured_headers() {
    use wiremock::matchers::{header, method, path};
    use wiremock::{Mock, MockServer};

    let collector = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/traces"))
        .and(header("authorization", "Basic dG9vbGdhdGU6c2VjcmV0"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({})))
        .expect(1)
        .mount(&collector)
        .await;
    let dir = tempfile::tempdir().expect("a temporary folder");
    let out = dir.path().join("out");
    let endpoint = collector.uri();
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || {
        let mut command = crate::support::toolgate();
        command
            .args(["gate", "--only", "T1-001", "--out"])
            .arg(&out)
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
            .env(
                "OTEL_EXPORTER_OTLP_HEADERS",
                "Authorization=Basic%20dG9vbGdhdGU6c2VjcmV0",
            );
        crate::support::output(command)
    })
    .await
    .expect("joins");
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains(&format!(
            "spans: sent 1 runs to {}/v1/traces\n",
            collector.uri()
        )),
        "{stdout}"
    );
    let requests = collector.received_requests().await.expect("recorded");
    let body: Value = serde_json::from_slice(&requests[0].body).expect("OTLP JSON");
    let names: Vec<&str> = body["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array()
        .expect("spans")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(names[0], "invoke_agent reference");
    assert!(!stdout.contains("dG9vbGdhdGU6c2VjcmV0") && !stderr.contains("dG9vbGdhdGU6c2VjcmV0"));
}

/// Runs `gate --only T1-001` exporting spans to `collector` with these extra variables.
async fn gate_exporting_to(collector: &MockServer, env: &[(&str, &str)]) -> (i32, String, String) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let out = dir.path().join("out");
    let endpoint = collector.uri();
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    tokio::task::spawn_blocking(move || {
        let mut command = crate::support::toolgate();
        command
            .args(["gate", "--only", "T1-001", "--out"])
            .arg(&out)
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
            .envs(env);
        crate::support::output(command)
    })
    .await
    .expect("joins")
}

/// Issue case: a collector that echoes the request's headers in its error; the warning hid
/// only the longest header value, and printed a shorter one and a `*_TOKEN` variable of the
/// environment in clear.
#[tokio::test(flavor = "multi_thread")]
async fn an_otlp_error_echoing_headers_and_environment_tokens_shows_none_of_them() {
    use wiremock::Mock;
    use wiremock::matchers::method;

    let collector = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_string(
            "bad request; you sent authorization=Basic aGVhZGVyLWxvbmctc2VjcmV0LTAx, \
             x-api-key=short-key-77, and we saw env-token-3141592",
        ))
        .mount(&collector)
        .await;
    let (code, stdout, stderr) = gate_exporting_to(
        &collector,
        &[
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "Authorization=Basic%20aGVhZGVyLWxvbmctc2VjcmV0LTAx,x-api-key=short-key-77",
            ),
            ("MY_COLLECTOR_TOKEN", "env-token-3141592"),
        ],
    )
    .await;
    assert_eq!(code, 0, "a failed export is no verdict: {stdout}{stderr}");
    // A warning goes to stderr; stdout holds the report alone.
    assert!(!stdout.contains("warning"), "{stdout}");
    let warning = stderr
        .lines()
        .find(|line| line.starts_with("warning: failed to send spans"))
        .unwrap_or_else(|| panic!("{stderr}"));
    for secret in [
        "aGVhZGVyLWxvbmctc2VjcmV0LTAx",
        "short-key-77",
        "env-token-3141592",
    ] {
        assert!(
            !stdout.contains(secret) && !stderr.contains(secret),
            "{secret}: {warning}"
        );
    }
    assert_eq!(warning.matches("[redacted]").count(), 3, "{warning}");
}

/// Issue case: a collector that never answers cost 92 s (3 attempts of 30 s) while the
/// warning spoke of 30 s. The limit is now for the whole export, retries included, from
/// `OTEL_EXPORTER_OTLP_TIMEOUT` (milliseconds, as the SDKs read it), and the warning says so.
#[tokio::test(flavor = "multi_thread")]
async fn a_hung_collector_gets_one_time_limit_for_the_whole_export() {
    use wiremock::Mock;
    use wiremock::matchers::method;

    let collector = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(30)))
        .mount(&collector)
        .await;
    let (code, stdout, stderr) =
        gate_exporting_to(&collector, &[("OTEL_EXPORTER_OTLP_TIMEOUT", "400")]).await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.contains("did not accept the spans within 0.4 s, retries included"),
        "{stderr}"
    );
}
