//! The CLI end to end: exit codes 0, 1, 2 and 3 and the messages that go with them.

use wiremock::ResponseTemplate;

use crate::schemas::schema_errors;
use crate::support::{FakeProvider, answer, arg, output, repo, scratch_suite, toolgate};

#[test]
fn gate_on_the_built_in_defaults_passes_with_the_reference_agent() {
    let out = tempfile::tempdir().expect("temp dir");
    let mut command = toolgate();
    command
        .current_dir(repo())
        .args(["gate", "--out", &arg(out.path(), "out")]);
    let (code, stdout, stderr) = output(command);
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("| all    |        41 |     41 |      0 |       0 |    100.0% |   100.0% |        +0.0 |"), "{stdout}");
    assert!(stdout.contains("\nverdict: PASS\n"), "{stdout}");
    let results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("out/results.json")).expect("results written"),
    )
    .expect("results are JSON");
    assert_eq!(results["schema_version"], 2);
    assert_eq!(results["summary"]["overall"]["passed"], 41);
    assert_eq!(schema_errors("results", &results), Vec::<String>::new());
    // What a write changed in the world is kept with the run, and the HTML report shows it.
    let logged = results["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .find(|result| result["id"] == "T2-003")
        .expect("T2-003 in the smoke set");
    assert_eq!(
        logged["state_diff"],
        serde_json::json!([
            "activities + A-006 {\"id\":\"A-006\",\"contact_id\":\"C-005\",\"type\":\"meeting\",\"subject\":\"Onboarding kickoff\",\"occurred_at\":\"2026-01-15T10:00:00Z\"}"
        ])
    );
    let page = std::fs::read_to_string(out.path().join("out/report.html")).expect("report.html");
    assert!(
        page.contains("<li>activities + A-006 {&quot;id&quot;:&quot;A-006&quot;,&quot;contact_id&quot;:&quot;C-005&quot;"),
        "the state change in report.html"
    );
    let verdict: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("out/verdict.json")).expect("verdict written"),
    )
    .expect("the verdict is JSON");
    assert_eq!(verdict["decision"], "pass");
    assert_eq!(schema_errors("verdict", &verdict), Vec::<String>::new());
    // The terminal and report.md name and show the metrics alike.
    let report = std::fs::read_to_string(out.path().join("out/report.md")).expect("report");
    let line = stdout
        .lines()
        .find_map(|line| line.strip_prefix("metrics: "))
        .expect("a metrics line");
    let mut shown = 0;
    for part in line.split(" | ") {
        let (name, value) = match part.split_once(": ") {
            Some(pair) => pair,
            None => part.rsplit_once(' ').expect("name value"),
        };
        assert!(
            report.contains(&format!("{name} **{value}**")),
            "{part}\n{report}"
        );
        shown += 1;
    }
    assert_eq!(shown, 7, "{line}");
    let compared = stdout
        .lines()
        .find_map(|line| line.strip_prefix("vs baseline: "))
        .expect("a baseline metrics line");
    assert!(compared.starts_with("selection checks 100.0% (+0.0 pts) | argument checks 100.0% (+0.0 pts) | calls per run "), "{compared}");
    assert!(
        report.contains("| selection checks | 100.0% | 100.0% | +0.0 pts |"),
        "{report}"
    );
    let trace = std::fs::read_to_string(out.path().join("out/trace.jsonl")).expect("trace written");
    let first: serde_json::Value =
        serde_json::from_str(trace.lines().next().expect("a call")).expect("JSON line");
    assert_eq!(first["scenario"], "T1-001");
    assert_eq!(first["tool"], "crm_search_contacts");
}

/// `toolgate gate --agent openai` on the repo's suite against `provider`, with a canary key:
/// (exit code, stdout, stderr).
async fn gate_with_openai(provider: &FakeProvider) -> (i32, String, String) {
    let out = tempfile::tempdir().expect("temp dir");
    let mut command = toolgate();
    command
        .current_dir(repo())
        .args([
            "gate",
            "--agent",
            "openai",
            "--model",
            "fake-model",
            "--out",
        ])
        .arg(out.path().join("out"))
        .env("OPENAI_BASE_URL", provider.base_url())
        .env("OPENAI_API_KEY", "sk-canary-do-not-print");
    tokio::task::spawn_blocking(move || output(command))
        .await
        .expect("join")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gate_fails_with_exit_1_when_a_model_regresses_against_the_baseline() {
    let provider = FakeProvider::start(
        Vec::new(),
        Some(ResponseTemplate::new(200).set_body_json(answer("All done!"))),
    )
    .await;
    let (code, stdout, stderr) = gate_with_openai(&provider).await;
    assert_eq!(code, 1, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains(
            "pass rate dropped 100.0 points (100.0% -> 0.0%), beyond the 3.0-point tolerance"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("Tier 5 `T5-002` passed in the baseline and fails now (zero tolerance)"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "expected_calls[0]: no usable call to `crm_search_contacts` or `data_query_sql` (calls made: none)"
        ),
        "{stdout}"
    );
    assert!(!stdout.contains("sk-canary") && !stderr.contains("sk-canary"));
    let requests = provider.requests();
    assert!(requests.iter().all(|r| r["model"] == "fake-model"));
    assert_eq!(requests[0]["tools"].as_array().map(Vec::len), Some(43));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gate_gives_no_verdict_with_exit_3_when_the_provider_is_down() {
    let provider = FakeProvider::start(
        Vec::new(),
        Some(ResponseTemplate::new(401).set_body_string("bad key")),
    )
    .await;
    let (code, stdout, stderr) = gate_with_openai(&provider).await;
    assert_eq!(code, 3, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("verdict: NO VERDICT"), "{stdout}");
    assert!(
        stdout.contains("41 of 41 runs errored: no verdict"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "ERRORED T2-007 (tier 2, multi_step)\n    provider returned HTTP 401: bad key"
        ),
        "{stdout}"
    );
}

fn gate_in(root: &std::path::Path) -> (i32, String, String) {
    let mut command = toolgate();
    command.args([
        "gate",
        "--root",
        &root.display().to_string(),
        "--out",
        &arg(root, "out"),
    ]);
    output(command)
}

const GOOD: &str = r#"{"id": "T1-100", "tier": 1, "type": "single_call", "prompt": "Find Ada.",
  "seed_state": "fixtures/crm_baseline.json",
  "expected_calls": [{"tool": "crm_search_contacts", "args_match": {"query": "Ada"}}],
  "max_calls": 2, "fault_injection": null, "final_state_assertions": ["contacts.count == baseline"]}"#;

/// A missing baseline is a note by default (a first pull request has none) and an error with
/// `--require-baseline`, so a mistyped path cannot quietly switch off regression gating.
#[test]
fn a_missing_baseline_is_an_error_only_when_required() {
    let suite = scratch_suite(&[("good.json", GOOD)]);
    let gate = |required: bool| {
        let mut command = toolgate();
        command.args(["gate", "--all", "--root"]).arg(suite.path());
        command.args([
            "--out",
            &arg(suite.path(), "out"),
            "--baseline",
            "nothere.json",
        ]);
        if required {
            command.arg("--require-baseline");
        }
        output(command)
    };
    let (code, stdout, stderr) = gate(false);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("no baseline at `nothere.json`"), "{stdout}");
    let (code, stdout, stderr) = gate(true);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("no baseline at `nothere.json`, and --require-baseline asks for one"),
        "{stderr}"
    );
}

/// A mistyped collector endpoint is bad usage found before the run, not a warning after it.
#[test]
fn an_otel_endpoint_that_is_not_http_fails_with_exit_2_before_any_run() {
    let suite = scratch_suite(&[("good.json", GOOD)]);
    for (endpoint, reason) in [
        ("notaurl", "relative URL without a base"),
        (
            "ftp://collector.example/",
            "expected http or https, not `ftp`",
        ),
    ] {
        let mut command = toolgate();
        command.args(["gate", "--root"]).arg(suite.path());
        command.args([
            "--out",
            &arg(suite.path(), "out"),
            "--otel-endpoint",
            endpoint,
        ]);
        let (code, stdout, stderr) = output(command);
        assert_eq!(code, 2, "{stdout}{stderr}");
        assert!(
            stderr.contains(&format!(
                "--otel-endpoint: `{endpoint}` is not an OTLP/HTTP endpoint: {reason}"
            )),
            "{stderr}"
        );
        assert!(
            !suite.path().join("out/results.json").exists(),
            "nothing ran"
        );
    }
}

#[test]
fn unknown_field_fails_the_load_with_exit_2_naming_file_and_field() {
    let bad = GOOD.replace("\"max_calls\"", "\"max_call\"");
    let suite = scratch_suite(&[("bad.json", &bad)]);
    let (code, _, stderr) = gate_in(suite.path());
    assert_eq!(code, 2, "{stderr}");
    let file = suite.path().join("scenarios/bad.json");
    assert!(
        stderr.contains(&format!(
            "`{}`: max_call: unknown field `max_call`",
            file.display()
        )),
        "{stderr}"
    );
    assert!(stderr.contains("at line 4"), "{stderr}");
}

#[test]
fn an_assertion_too_deep_or_too_long_fails_the_load_with_exit_2_not_a_crash() {
    let deep = format!(
        "{}contacts.count{} == baseline",
        "(".repeat(60),
        ")".repeat(60)
    );
    let long = format!("{} == 1", vec!["1"; 5_000].join(" + "));
    let files: Vec<(String, String)> = [("deep", deep), ("long", long)]
        .into_iter()
        .enumerate()
        .map(|(i, (name, assertion))| {
            let scenario = GOOD
                .replace("T1-100", &format!("T1-10{i}"))
                .replace("contacts.count == baseline", &assertion);
            (format!("{name}.json"), scenario)
        })
        .collect();
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(name, text)| (name.as_str(), text.as_str()))
        .collect();
    let suite = scratch_suite(&files);
    let (code, _, stderr) = gate_in(suite.path());
    assert_eq!(code, 2, "{stderr}");
    for (name, reason) in [
        ("deep", "brackets nest 60 deep, at most 32"),
        ("long", "20002 characters, at most 4096"),
    ] {
        let file = suite.path().join(format!("scenarios/{name}.json"));
        let at = stderr
            .find(&format!("`{}`", file.display()))
            .unwrap_or_else(|| panic!("no problem reported for {name}: {stderr}"));
        let problem = &stderr[at..];
        assert!(problem.contains("final_state_assertions[0]"), "{problem}");
        assert!(problem.contains(reason), "{problem}");
    }
}

#[test]
fn devices_fifos_and_oversized_inputs_fail_with_exit_2_without_reading_them() {
    let fifo_seed = GOOD.replace("fixtures/crm_baseline.json", "fixtures/pipe");
    let suite = scratch_suite(&[("fifo.json", &fifo_seed)]);
    let pipe = suite.path().join("fixtures/pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&pipe)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    // Opening the FIFO would block forever: the load must refuse it first.
    let (code, _, stderr) = gate_in(suite.path());
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "failed to read fixture `{}`: it is not a regular file",
            pipe.display()
        )),
        "{stderr}"
    );

    let mut command = toolgate();
    command.env("TOOLGATE_CONFIG", "/dev/zero").args([
        "gate",
        "--root",
        &suite.path().display().to_string(),
        "--out",
        &arg(suite.path(), "out"),
    ]);
    let (code, _, stderr) = output(command);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("failed to read config `/dev/zero`: it is not a regular file"),
        "{stderr}"
    );

    let suite = scratch_suite(&[]);
    let huge = suite.path().join("scenarios/huge.json");
    let file = std::fs::File::create(&huge).expect("create");
    file.set_len(5 << 20).expect("a sparse 5 MiB file");
    let (code, _, stderr) = gate_in(suite.path());
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "failed to read scenario `{}`: larger than the 4 MiB limit for a scenario",
            huge.display()
        )),
        "{stderr}"
    );
}

#[test]
fn the_actions_args_input_is_split_with_shell_quoting() {
    let suite = scratch_suite(&[("good.json", GOOD)]);
    let mut command = toolgate();
    command
        .args(["gate", "--root", &suite.path().display().to_string()])
        .env("TOOLGATE_ACTION_ARGS", r#"--out "out dir" --only "T1 100""#);
    let (code, _, stderr) = output(command);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--only: no scenario has id `T1 100`"),
        "{stderr}"
    );

    let mut command = toolgate();
    command
        .args(["gate", "--root", &suite.path().display().to_string()])
        .env("TOOLGATE_ACTION_ARGS", r#"--only "T1-100"#);
    let (code, _, stderr) = output(command);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("missing closing quote"), "{stderr}");
}

#[test]
fn misspelled_tool_fails_with_field_line_and_suggestion() {
    let bad = GOOD.replace("\"crm_search_contacts\"", "\"crm_search_contact\"");
    let suite = scratch_suite(&[("bad.json", &bad)]);
    let (code, _, stderr) = gate_in(suite.path());
    assert_eq!(code, 2, "{stderr}");
    let file = suite.path().join("scenarios/bad.json");
    assert!(stderr.contains(&format!(
        "`{}`: expected_calls[0].tool (line 3): unknown tool `crm_search_contact` (did you mean `crm_search_contacts`?)",
        file.display()
    )), "{stderr}");
}

#[test]
fn every_problem_of_every_file_is_reported_together() {
    let bad_path = GOOD.replace("T1-100", "T1-101").replace(
        "\"args_match\": {\"query\": \"Ada\"}",
        "\"args_from_prior\": {\"query\": \"$.calls[0\"}",
    );
    let bad_assertion = GOOD
        .replace("T1-100", "T1-102")
        .replace("contacts.count == baseline", "contacts.count ==");
    let missing_fixture = GOOD
        .replace("T1-100", "T1-103")
        .replace("crm_baseline.json", "nope.json");
    let suite = scratch_suite(&[
        ("a.json", &bad_path),
        ("b.json", &bad_assertion),
        ("c.json", &missing_fixture),
    ]);
    let (code, _, stderr) = gate_in(suite.path());
    assert_eq!(code, 2, "{stderr}");
    let scenarios = suite.path().join("scenarios");
    assert!(
        stderr.contains(&format!(
            "`{}`: expected_calls[0].args_from_prior.query (line 3): invalid JSONPath `$.calls[0`",
            scenarios.join("a.json").display()
        )),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("`{}`: final_state_assertions[0] (line 4): failed to parse assertion `contacts.count ==`", scenarios.join("b.json").display())), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "`{}`: seed_state (line 2): failed to read fixture",
            scenarios.join("c.json").display()
        )),
        "{stderr}"
    );
}

#[test]
fn yaml_scenarios_report_line_and_column() {
    let suite = scratch_suite(&[("bad.yaml", "id: T1-200\ntier: one\ntype: single_call\n")]);
    let (code, _, stderr) = gate_in(suite.path());
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("bad.yaml"), "{stderr}");
    assert!(stderr.contains("line 2"), "{stderr}");
}

#[test]
fn usage_errors_exit_2() {
    let mut command = toolgate();
    command.args(["gate", "--tolerance", "lots"]);
    let (code, _, stderr) = output(command);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("`lots` is not a number of points in 0..=100"),
        "{stderr}"
    );
}

#[test]
fn an_unknown_judge_provider_is_a_usage_error_naming_the_known_ones() {
    let mut command = toolgate();
    command
        .args(["gate", "--judge-model", "j", "--judge-provider", "gemini"])
        .env_remove("TOOLGATE_JUDGE_PROVIDER");
    let (code, _, stderr) = output(command);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "invalid value 'gemini' for '--judge-provider <JUDGE_PROVIDER>'\n  [possible values: openai, anthropic]"
        ),
        "{stderr}"
    );
}

#[test]
fn a_corrupt_baseline_is_an_error_not_a_pass() {
    let suite = scratch_suite(&[("good.json", GOOD)]);
    std::fs::write(
        suite.path().join("baseline.json"),
        "{\"schema_version\": 1, \"agent\": 3}",
    )
    .expect("write");
    let (code, stdout, stderr) = gate_in(suite.path());
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("baseline.json`: toolgate_version: missing field `toolgate_version`")
            || stderr.contains("baseline.json`: agent: invalid type"),
        "{stderr}"
    );
}

/// The `run_id` each file of the output set in `out` carries, by file name.
fn run_ids(out: &std::path::Path) -> Vec<(&'static str, Option<String>)> {
    let read = |name: &str| std::fs::read_to_string(out.join(name)).ok();
    let json_id = |name: &str| {
        read(name).and_then(|text| {
            let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
            let id = value.get("run_id").or_else(|| value["run"].get("run_id"));
            id.and_then(|id| id.as_str()).map(str::to_owned)
        })
    };
    let after = |name: &str, marker: &str, end: char| {
        read(name).and_then(|text| {
            let start = text.find(marker)? + marker.len();
            Some(text[start..].split(end).next()?.to_owned())
        })
    };
    let trace_id = read("trace.jsonl").and_then(|text| {
        let ids: Vec<Option<String>> = text
            .lines()
            .map(|line| {
                let value: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
                value["run_id"].as_str().map(str::to_owned)
            })
            .collect();
        // Every line names the same run.
        assert!(ids.windows(2).all(|pair| pair[0] == pair[1]), "{ids:?}");
        ids.into_iter().next().flatten()
    });
    vec![
        ("trace.jsonl", trace_id),
        ("results.json", json_id("results.json")),
        ("verdict.json", json_id("verdict.json")),
        ("report.md", after("report.md", "<!-- toolgate run ", ' ')),
        (
            "report.html",
            after(
                "report.html",
                "<meta name=\"toolgate-run-id\" content=\"",
                '"',
            ),
        ),
        (
            "junit.xml",
            after("junit.xml", "name=\"run_id\" value=\"", '"'),
        ),
    ]
}

#[test]
fn a_bad_baseline_stops_the_gate_before_the_run_and_every_output_names_its_run() {
    let suite = scratch_suite(&[("good.json", GOOD)]);
    let out = suite.path().join("out");
    let (code, stdout, stderr) = gate_in(suite.path());
    assert_eq!(code, 0, "{stdout}{stderr}");
    let first = run_ids(&out);
    let id = first[1].1.clone().expect("results.json has a run id");
    assert!(id.contains('-') && id.len() >= 10, "{id}");
    for (name, found) in &first {
        assert_eq!(found.as_ref(), Some(&id), "{name} belongs to another run");
    }

    // A corrupt baseline: nothing runs and the last output set stays whole.
    std::fs::write(
        suite.path().join("baseline.json"),
        "{\"schema_version\": 1}",
    )
    .expect("write");
    let (code, stdout, stderr) = gate_in(suite.path());
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("baseline.json`"),
        "the error names the baseline: {stderr}"
    );
    // Nothing ran: every file of the output set is still the first run's.
    assert_eq!(run_ids(&out), first);

    // The next good run replaces every file of the set.
    std::fs::remove_file(suite.path().join("baseline.json")).expect("remove");
    std::thread::sleep(std::time::Duration::from_millis(5));
    let (code, stdout, stderr) = gate_in(suite.path());
    assert_eq!(code, 0, "{stdout}{stderr}");
    let second = run_ids(&out);
    let new_id = second[1].1.clone().expect("a run id");
    assert_ne!(new_id, id);
    for (name, found) in &second {
        assert_eq!(
            found.as_ref(),
            Some(&new_id),
            "{name} belongs to another run"
        );
    }
}

/// Sends one raw HTTP/1.1 request to `address` and returns the status line and the body.
fn http_get(address: &str, method: &str, path: &str, host: &str) -> (String, String) {
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(address).expect("view listens");
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .expect("loopback I/O");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("loopback I/O");
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    (
        head.lines().next().unwrap_or_default().to_owned(),
        body.to_owned(),
    )
}

#[test]
fn view_serves_the_report_on_loopback_only() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out");
    std::fs::create_dir(&out).expect("loopback I/O");
    std::fs::write(out.join("report.html"), "<!doctype html><p>run 7</p>").expect("loopback I/O");
    std::fs::write(out.join("results.json"), "{\"a\":1}").expect("loopback I/O");
    std::fs::write(dir.path().join("secret-beside.txt"), "no").expect("loopback I/O");
    let mut child = toolgate()
        .args(["view", &arg(dir.path(), "out"), "--port", "0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("toolgate view starts");
    let mut first_line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().expect("loopback I/O")),
        &mut first_line,
    )
    .expect("loopback I/O");
    let url = first_line
        .split_whitespace()
        .find(|word| word.starts_with("http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("no address in {first_line:?}"));
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/report.html");
    let served = [
        http_get(address, "GET", "/report.html", address),
        http_get(address, "GET", "/results.json", address),
        http_get(address, "GET", "/", address),
        http_get(address, "GET", "/../secret-beside.txt", address),
        http_get(address, "GET", "/report.html", "attacker.example:80"),
        http_get(address, "POST", "/report.html", address),
        http_get(address, "HEAD", "/report.html", address),
    ];
    child.kill().expect("loopback I/O");
    child.wait().expect("loopback I/O");
    let statuses: Vec<&str> = served.iter().map(|(status, _)| status.as_str()).collect();
    assert_eq!(
        statuses,
        [
            "HTTP/1.1 200 OK",
            "HTTP/1.1 200 OK",
            "HTTP/1.1 302 Found",
            "HTTP/1.1 404 Not Found",
            "HTTP/1.1 403 Forbidden",
            "HTTP/1.1 405 Method Not Allowed",
            "HTTP/1.1 200 OK",
        ]
    );
    assert_eq!(served[0].1, "<!doctype html><p>run 7</p>");
    assert_eq!(served[1].1, "{\"a\":1}");
    assert_eq!(served[6].1, "");
}

#[test]
fn view_of_a_folder_without_a_report_says_how_to_make_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut command = toolgate();
    command.args(["view", &arg(dir.path(), ".")]);
    let (code, _, stderr) = output(command);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("holds no report.html: `toolgate gate` writes one beside results.json"),
        "{stderr}"
    );
}

/// A scenario whose answer needs no tool call, with a usage budget the fake provider's
/// 15-token reply (10 in, 5 out) breaks on tokens and keeps on model calls and cost.
const BUDGETED: &str = r#"{"id": "T1-200", "tier": 1, "type": "single_call", "prompt": "Say hello.",
  "seed_state": "fixtures/crm_baseline.json", "expected_calls": [],
  "usage_budget": {"max_tokens": 14, "max_model_calls": 1, "max_cost_usd": 0.00002}}"#;

/// Usage budgets through the CLI: a scenario's token limit fails its run with the spend in
/// the check, the price table prices it, the gate's own limits block on the mean, the report
/// shows tokens and cost per run, and a cost limit without a price is refused before any run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_budgets_fail_runs_and_gates_and_need_a_price_for_costs() {
    let provider = FakeProvider::start(
        Vec::new(),
        Some(ResponseTemplate::new(200).set_body_json(answer("Hello!"))),
    )
    .await;
    let suite = scratch_suite(&[("budgeted.json", BUDGETED)]);
    let prices = suite.path().join("prices.yaml");
    std::fs::write(&prices, "fake-model: {prompt: 1.0, completion: 2.0}\n").expect("write");
    let gate = |extra: &[&str]| {
        let mut command = toolgate();
        command.args([
            "gate",
            "--all",
            "--agent",
            "openai",
            "--model",
            "fake-model",
        ]);
        command.arg("--root").arg(suite.path());
        command.args(["--out", &arg(suite.path(), "out")]);
        command.args(extra);
        command.env("OPENAI_BASE_URL", provider.base_url());
        command
    };
    let no_price = gate(&[]);
    let (code, _, stderr) = tokio::task::spawn_blocking(move || output(no_price))
        .await
        .expect("join");
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("scenario `T1-200` limits the cost of a run (usage_budget.max_cost_usd), which needs the model's price: pass `--prices FILE`"),
        "{stderr}"
    );
    assert!(provider.requests().is_empty(), "no run before the error");

    let priced = gate(&[
        "--prices",
        &prices.display().to_string(),
        "--max-tokens-per-run",
        "10",
    ]);
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || output(priced))
        .await
        .expect("join");
    assert_eq!(code, 1, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout
            .contains("15 tokens per run on average, over the limit of 10 (--max-tokens-per-run)"),
        "{stdout}"
    );
    assert!(stdout.contains("tokens per run 15"), "{stdout}");
    assert!(stdout.contains("cost per run $0.0000"), "{stdout}");
    let results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(suite.path().join("out/results.json")).expect("results"),
    )
    .expect("JSON");
    assert_eq!(
        results["run"]["price"],
        serde_json::json!({"prompt": 1.0, "completion": 2.0})
    );
    let checks: Vec<(String, bool, String)> = results["scenarios"][0]["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|check| check["kind"] == "usage_budget")
        .map(|check| {
            (
                check["subject"].as_str().unwrap_or_default().to_owned(),
                check["passed"].as_bool().unwrap_or_default(),
                check["detail"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        checks,
        [
            (
                "usage_budget.max_tokens".to_owned(),
                false,
                "15 tokens (10 in, 5 out) over 1 model call, budget 14".to_owned()
            ),
            (
                "usage_budget.max_model_calls".to_owned(),
                true,
                "1 model call, budget 1".to_owned()
            ),
            (
                "usage_budget.max_cost_usd".to_owned(),
                true,
                "$0.000020 for 10 input and 5 output tokens ($1/$2 per million), budget $0.00002"
                    .to_owned()
            ),
        ]
    );
    assert_eq!(results["scenarios"][0]["outcome"], "fail");

    // The reference agent reports no usage: the limits it cannot check are named, not passed
    // in silence, and a broken price table fails it too.
    let reference = |extra: &[&str]| {
        let mut command = toolgate();
        command.args(["gate", "--all", "--root"]).arg(suite.path());
        command.args(["--out", &arg(suite.path(), "out")]);
        command.args(extra);
        command
    };
    let (code, stdout, stderr) = output(reference(&[]));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("the token, model-call and cost limits of 1 scenario(s) were not checked: the `reference` agent reports no model usage (only `max_wall_ms` is): `T1-200`"),
        "{stdout}"
    );
    std::fs::write(&prices, "fake-model: {prompt: -1, completion: 2.0}\n").expect("write");
    let (code, _, stderr) = output(reference(&["--prices", &prices.display().to_string()]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("fake-model.prompt: -1 is not a price in US dollars per million tokens"),
        "{stderr}"
    );
}
