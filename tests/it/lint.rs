//! `toolgate lint`, `snapshot` and `drift` end to end, against saved catalogs (the field cases)
//! and against the reference MCP servers from npm (`server-everything`, `server-memory`),
//! which no one here wrote.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Once;
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt as _;
use serde_json::{Value, json};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The entry script of a reference server, installing the peers first when they are missing
/// (so a plain `cargo test` works on a fresh machine). Fails, never skips, when it cannot.
fn peer(package: &str) -> PathBuf {
    static INSTALL: Once = Once::new();
    let script = root()
        .join("target/peers/node/node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js");
    INSTALL.call_once(|| {
        let status = crate::support::peer_installer()
            .status()
            .expect("bash runs tests/peers/install.sh");
        assert!(status.success(), "tests/peers/install.sh failed: {status}");
    });
    assert!(
        script.exists(),
        "`{}` is missing after install.sh",
        script.display()
    );
    script
}

fn toolgate() -> Command {
    Command::cargo_bin("toolgate").expect("the toolgate binary is built")
}

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(command: &mut Command) -> Outcome {
    let output = command.output().expect("toolgate runs");
    Outcome {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn json_of(outcome: &Outcome) -> Value {
    serde_json::from_str(&outcome.stdout)
        .unwrap_or_else(|error| panic!("stdout is not JSON ({error}): {}", outcome.stdout))
}

fn write(dir: &Path, name: &str, value: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(value).expect("encodes"))
        .expect("writes the fixture");
    path
}

/// `(check, severity, tool, profile)` of each finding in a JSON report.
fn findings(report: &Value) -> Vec<(String, String, String, String)> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            let text = |key: &str| f[key].as_str().unwrap_or("").to_owned();
            (
                text("check"),
                text("severity"),
                text("tool"),
                text("profile"),
            )
        })
        .collect()
}

fn has(
    found: &[(String, String, String, String)],
    check: &str,
    severity: &str,
    tool: &str,
    profile: &str,
) -> bool {
    found
        .iter()
        .any(|(c, s, t, p)| c == check && s == severity && t == tool && p == profile)
}

#[test]
fn lints_the_builtin_catalog_without_errors() {
    let outcome = run(toolgate().args(["lint", "--format", "json"]));
    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    let report = json_of(&outcome);
    assert_eq!(report["schema_version"], 1);
    assert_eq!(report["servers"], json!(["toolgate"]));
    assert!(
        report["tokens"]["total"]
            .as_u64()
            .is_some_and(|total| total > 0)
    );
}

/// B25 through the CLI: a two-server saved catalog, profile-aware findings, exit by severity.
#[test]
fn lints_names_across_servers_and_exits_by_severity_b25() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let schema = json!({"type": "object", "properties": {}});
    let path = write(
        dir.path(),
        "servers.json",
        &json!({"servers": {
            "srvA": {"tools": [
                {"name": "admin.tools.list", "inputSchema": schema},
                {"name": "Dockerfile problems scanner", "inputSchema": schema},
                {"name": "query_items_from_the_inventory_service_with_full_pagination_and_filters_v2", "inputSchema": schema},
                {"name": "execute_sql", "inputSchema": {"type": "object",
                    "properties": {"user name": {"type": "string"}, "@type": {"type": "string"}}}}]},
            "srvB": {"tools": [{"name": "execute_sql", "inputSchema": schema}]}}}),
    );
    let path = path.to_str().expect("UTF-8 path");
    let outcome = run(toolgate().args(["lint", "--format", "json", "--tools-json", path]));
    assert_eq!(
        outcome.code, 1,
        "errors fail by default: {}",
        outcome.stderr
    );
    let found = findings(&json_of(&outcome));
    assert!(has(
        &found,
        "invalid_tool_name",
        "error",
        "admin.tools.list",
        "openai"
    ));
    assert!(has(
        &found,
        "invalid_tool_name",
        "error",
        "admin.tools.list",
        "anthropic"
    ));
    assert!(!has(
        &found,
        "invalid_tool_name",
        "warning",
        "admin.tools.list",
        "mcp"
    ));
    assert!(has(
        &found,
        "invalid_tool_name",
        "warning",
        "Dockerfile problems scanner",
        "mcp"
    ));
    let long = "query_items_from_the_inventory_service_with_full_pagination_and_filters_v2";
    assert!(has(&found, "tool_name_too_long", "warning", long, "mcp"));
    assert!(has(&found, "tool_name_too_long", "error", long, "openai"));
    assert!(!has(
        &found,
        "tool_name_too_long",
        "error",
        long,
        "anthropic"
    ));
    assert!(has(
        &found,
        "invalid_property_key",
        "error",
        "execute_sql",
        "anthropic"
    ));
    assert!(has(
        &found,
        "duplicate_tool_name",
        "error",
        "execute_sql",
        ""
    ));

    let mcp_only = run(toolgate().args([
        "lint",
        "--profile",
        "mcp",
        "--fail-on",
        "warning",
        "--tools-json",
        path,
    ]));
    assert_eq!(mcp_only.code, 1);
    let never = run(toolgate().args(["lint", "--fail-on", "never", "--tools-json", path]));
    assert_eq!(never.code, 0);
    assert!(
        never.stdout.contains("5 tools from 2 servers:"),
        "{}",
        never.stdout
    );
}

/// B26 and B27 through the CLI, as SARIF: every field-case tool yields its finding id.
#[test]
fn writes_sarif_for_the_schema_field_cases_b26_b27() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = write(
        dir.path(),
        "tools.json",
        &json!({"tools": [
            {"name": "bulk_update", "inputSchema": {"type": "object",
                "properties": {"ids": {"type": "array"}, "opts": {"type": "object"}, "type": "object"},
                "required": ["ids", "model"]}},
            {"name": "test_err", "inputSchema": {}},
            {"name": "sub", "inputSchema": {"type": "object", "properties": {}}, "outputSchema": {"type": "integer"}},
            {"name": "legacy_tool", "description": "old server", "schema": {}}]}),
    );
    let sarif_path = dir.path().join("lint.sarif");
    let outcome = run(toolgate().args([
        "lint",
        "--format",
        "sarif",
        "--tools-json",
        path.to_str().expect("UTF-8 path"),
        "--output",
        sarif_path.to_str().expect("UTF-8 path"),
    ]));
    assert_eq!(outcome.code, 1, "{}", outcome.stderr);
    assert_eq!(outcome.stdout, "");
    let sarif: Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif_path).expect("written"))
            .expect("SARIF is JSON");
    assert_eq!(sarif["version"], "2.1.0");
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    let rule_at = |rule: &str, location: &str| {
        results.iter().any(|r| {
            r["ruleId"] == rule
                && r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == location
        })
    };
    assert!(rule_at(
        "array_missing_items",
        "tools.json/bulk_update#/inputSchema/properties/ids"
    ));
    assert!(rule_at(
        "object_missing_properties",
        "tools.json/bulk_update#/inputSchema/properties/opts"
    ));
    assert!(rule_at(
        "property_not_a_schema",
        "tools.json/bulk_update#/inputSchema/properties/type"
    ));
    assert!(rule_at(
        "required_not_in_properties",
        "tools.json/bulk_update#/inputSchema/required/1"
    ));
    assert!(rule_at(
        "input_schema_root_not_object",
        "tools.json/test_err#/inputSchema"
    ));
    assert!(rule_at(
        "output_schema_root_not_object",
        "tools.json/sub#/outputSchema"
    ));
    assert!(rule_at("missing_input_schema", "tools.json/legacy_tool#"));
}

#[test]
fn names_the_file_when_the_input_is_missing_or_broken() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let missing = dir.path().join("missing.json");
    let outcome = run(toolgate().args(["lint", "--tools-json", missing.to_str().expect("UTF-8")]));
    assert_eq!(outcome.code, 2);
    assert_eq!(
        outcome.stderr,
        format!(
            "error: failed to read tools file `{}`: No such file or directory (os error 2)\n",
            missing.display()
        )
    );
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\"tools\": [\n  {\"name\": \"a\",}\n]}").expect("writes");
    let outcome = run(toolgate().args(["lint", "--tools-json", broken.to_str().expect("UTF-8")]));
    assert_eq!(outcome.code, 2);
    assert_eq!(
        outcome.stderr,
        format!(
            "error: failed to parse tools file `{}`: at `tools[0]`: trailing comma at line 2 column 16\n",
            broken.display()
        )
    );
}

#[test]
fn lints_the_reference_servers_over_stdio() {
    let everything = peer("server-everything");
    let outcome = run(toolgate()
        .args(["lint", "--format", "json", "--", "node"])
        .arg(&everything));
    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    let report = json_of(&outcome);
    assert_eq!(report["tool_count"], 13);
    let per_tool = report["tokens"]["per_tool"].as_array().expect("per tool");
    assert_eq!(per_tool.len(), 13);
    assert!(per_tool.iter().any(|tool| tool["tool"] == "echo"));

    let memory = peer("server-memory");
    let outcome = run(toolgate()
        .args(["lint", "--format", "json", "--", "node"])
        .arg(&memory));
    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    let report = json_of(&outcome);
    assert_eq!(report["tool_count"], 9);
    let found = findings(&report);
    assert!(
        has(&found, "look_alike_tools", "warning", "delete_entities", ""),
        "{found:?}"
    );
    // Issue #35: the `server` field lands in committed reports: no absolute path in it. Under
    // the working directory the path is relative to it; elsewhere, only the file name.
    let servers = |report: &Value| -> Vec<String> {
        let mut names: Vec<String> = report["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter_map(|finding| finding["server"].as_str().map(str::to_owned))
            .collect();
        names.dedup();
        names
    };
    assert_eq!(
        servers(&report),
        ["node target/peers/node/node_modules/@modelcontextprotocol/server-memory/dist/index.js"]
    );
    let elsewhere = tempfile::tempdir().expect("a temporary folder");
    let outcome = run(toolgate()
        .current_dir(elsewhere.path())
        .args(["lint", "--format", "sarif", "--", "node"])
        .arg(&memory));
    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    assert!(
        outcome.stdout.contains("node index.js")
            && !outcome.stdout.contains(&root().display().to_string()),
        "{}",
        outcome.stdout
    );
}

/// An `mcpServers` config naming both reference servers and one that cannot start: the two
/// are linted, the third is an error finding. Servers keep the file's order, as a suite's
/// `servers: {from: ...}` does.
#[test]
fn lints_every_server_of_an_mcp_servers_config() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let config = write(
        dir.path(),
        "mcp.json",
        &json!({"mcpServers": {
            "everything": {"command": "node", "args": [peer("server-everything")]},
            "memory": {"command": "node", "args": [peer("server-memory")], "env": {"MEMORY_FILE_PATH": dir.path().join("memory.jsonl")}},
            "broken": {"command": dir.path().join("no-such-server")}
        }}),
    );
    let config = config.to_str().expect("UTF-8 path");
    let outcome = run(toolgate().args(["lint", "--format", "json", "--config", config]));
    assert_eq!(outcome.code, 1, "{}", outcome.stderr);
    let report = json_of(&outcome);
    assert_eq!(report["servers"], json!(["everything", "memory", "broken"]));
    assert_eq!(report["tool_count"], 22);
    let unreachable: Vec<&Value> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["check"] == "server_unreachable")
        .collect();
    assert_eq!(unreachable.len(), 1);
    assert_eq!(unreachable[0]["server"], "broken");

    let only = run(toolgate().args([
        "lint", "--format", "json", "--config", config, "--server", "memory",
    ]));
    assert_eq!(only.code, 0, "{}", only.stderr);
    assert_eq!(json_of(&only)["tool_count"], 9);
}

/// A child process killed when the test ends, pass or fail.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn lints_a_streamable_http_server() {
    let script = peer("server-everything");
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let _server = Server(
        Command::new("node")
            .arg(&script)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("node starts"),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "the HTTP server did not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let url = format!("http://127.0.0.1:{port}/mcp");
    let outcome = run(toolgate().args(["lint", "--format", "json", "--url", &url]));
    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    let report = json_of(&outcome);
    assert_eq!(report["servers"], json!([url]));
    assert_eq!(report["tool_count"], 13);
}

/// Snapshot a real server, edit the lock as if the server had changed, and classify the drift.
#[test]
fn classifies_drift_against_a_snapshot_and_exits_by_class() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let memory = peer("server-memory");
    let lock = dir.path().join("toolgate.lock.json");
    let lock_arg = lock.to_str().expect("UTF-8 path");
    let env = ("MEMORY_FILE_PATH", dir.path().join("memory.jsonl"));
    let snapshot = run(toolgate()
        .env(env.0, &env.1)
        .args(["snapshot", "--lock", lock_arg, "--", "node"])
        .arg(&memory));
    assert_eq!(snapshot.code, 0, "{}", snapshot.stderr);
    assert_eq!(
        snapshot.stdout,
        format!("locked 9 tools from 1 server in `{lock_arg}`\n")
    );

    let drift = |lock_arg: &str| {
        run(toolgate()
            .env(env.0, &env.1)
            .args(["drift", "--lock", lock_arg, "--", "node"])
            .arg(&memory))
    };
    let unchanged = drift(lock_arg);
    assert_eq!(
        (unchanged.code, unchanged.stdout.as_str()),
        (0, "no drift\n"),
        "{}",
        unchanged.stderr
    );

    // The lock says `read_graph` had a different description: the live one "changed" it.
    let mut locked: Value = serde_json::from_str(&std::fs::read_to_string(&lock).expect("reads"))
        .expect("the lock is JSON");
    let tools = locked["tools"].as_array_mut().expect("tools");
    let read_graph = tools
        .iter_mut()
        .find(|t| t["name"] == "read_graph")
        .expect("read_graph");
    read_graph["definition"]["description"] = json!("An older description.");
    std::fs::write(&lock, locked.to_string()).expect("writes");
    let described = drift(lock_arg);
    assert_eq!(described.code, 4, "{}", described.stderr);
    assert!(
        described
            .stdout
            .contains("0 breaking, 0 non-breaking, 1 description changes")
    );

    // A tool the live server no longer has: breaking.
    locked["tools"].as_array_mut().expect("tools").push(json!({
        "server": "x", "name": "forget_everything",
        "definition": {"name": "forget_everything", "inputSchema": {"type": "object"}}
    }));
    std::fs::write(&lock, locked.to_string()).expect("writes");
    let broken = drift(lock_arg);
    assert_eq!(broken.code, 1, "{}", broken.stderr);
    assert!(broken.stdout.contains("| breaking "), "{}", broken.stdout);
    assert!(broken.stdout.contains("tool removed"));
}

/// The built-in catalog against a lock in which one tool's description was different: drift
/// names the scenarios of the suite that use that tool, so they can be re-run.
#[test]
fn drift_names_the_scenarios_that_use_a_changed_tool() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let lock = dir.path().join("toolgate.lock.json");
    let lock_arg = lock.to_str().expect("UTF-8 path");
    let snapshot = run(toolgate().args(["snapshot", "--lock", lock_arg]));
    assert_eq!(snapshot.code, 0, "{}", snapshot.stderr);
    let mut locked: Value = serde_json::from_str(&std::fs::read_to_string(&lock).expect("reads"))
        .expect("the lock is JSON");
    let tools = locked["tools"].as_array_mut().expect("tools");
    let forecast = tools
        .iter_mut()
        .find(|t| t["name"] == "crm_forecast")
        .expect("crm_forecast");
    forecast["definition"]["description"] = json!("An older description.");
    std::fs::write(&lock, locked.to_string()).expect("writes");
    let root = root();
    let drift = run(toolgate()
        .args(["drift", "--lock", lock_arg, "--scenarios"])
        .arg(&root));
    assert_eq!(drift.code, 4, "{}", drift.stderr);
    let named: Vec<&str> = drift
        .stdout
        .lines()
        .filter(|line| line.starts_with("scenarios using"))
        .collect();
    assert_eq!(
        named,
        ["scenarios using `crm_forecast` (re-run them): T1-002, T3-001, T3-008, T4-016"]
    );
    let json = run(toolgate()
        .args([
            "drift",
            "--format",
            "json",
            "--lock",
            lock_arg,
            "--scenarios",
        ])
        .arg(&root));
    let report: Value = serde_json::from_str(&json.stdout).expect("the report is JSON");
    assert_eq!(
        report["scenarios"],
        json!({"crm_forecast": ["T1-002", "T3-001", "T3-008", "T4-016"]})
    );
}

/// A judge reply scoring every component 4 except those in `low` (component, score, reason).
fn scores_reply(low: &[(&str, u8, &str)]) -> wiremock::ResponseTemplate {
    let mut scores = serde_json::Map::new();
    for component in [
        "purpose",
        "usage_guidance",
        "limitations",
        "parameters",
        "completeness",
        "examples",
    ] {
        scores.insert(component.into(), json!({"score": 4, "reason": "fine"}));
    }
    for (component, score, reason) in low {
        scores.insert(
            (*component).into(),
            json!({"score": score, "reason": reason}),
        );
    }
    let content = json!({"scores": scores}).to_string();
    wiremock::ResponseTemplate::new(200).set_body_json(crate::support::answer(&content))
}

const JUDGED_TOOLS: &str = r#"{"tools": [
  {"name": "get_weather", "description": "Returns the current weather for a city, in degrees Celsius, from the national service. Use it for today's conditions; forecasts need another tool. Fails when the city is unknown.",
   "inputSchema": {"type": "object", "properties": {"city": {"type": "string", "description": "The city name, e.g. Paris"}}, "required": ["city"]}},
  {"name": "do_it", "description": "Does it.",
   "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}}]}"#;

/// `toolgate lint --format FORMAT` on [`JUDGED_TOOLS`] with the judge at `base_url` (or none).
async fn lint_judged(dir: &Path, format: &str, base_url: Option<String>) -> Outcome {
    let path = dir.join("tools.json");
    std::fs::write(&path, JUDGED_TOOLS).expect("writes the fixture");
    let mut command = toolgate();
    command
        .args(["lint", "--format", format, "--tools-json"])
        .arg(&path)
        .arg("--judge-cache")
        .arg(dir.join("cache"))
        .env_remove("TOOLGATE_JUDGE_MODEL")
        .env_remove("TOOLGATE_JUDGE_PROVIDER")
        .env_remove("TOOLGATE_JUDGE_API_KEY")
        .env_remove("OPENAI_API_KEY");
    if let Some(base_url) = base_url {
        command.args(["--judge-model", "judge-1", "--judge-base-url", &base_url]);
    }
    tokio::task::spawn_blocking(move || run(&mut command))
        .await
        .expect("join")
}

/// `(check, tool, pointer, hint, source)` of the judge's findings.
fn judge_findings(report: &Value) -> Vec<(String, String, String, String, String)> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["source"] == "judge")
        .map(|f| {
            let text = |key: &str| f[key].as_str().unwrap_or("").to_owned();
            (
                text("check"),
                text("tool"),
                text("pointer"),
                text("hint"),
                text("severity"),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_description_judge_turns_low_scores_into_warnings_and_is_cached() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let judge = crate::support::FakeProvider::start(
        vec![
            scores_reply(&[]),
            scores_reply(&[
                ("purpose", 1, "it does not say what it does"),
                ("parameters", 2, "`x` is unexplained"),
                ("examples", 3, "one example would help"),
            ]),
        ],
        None,
    )
    .await;
    let plain = json_of(&lint_judged(dir.path(), "json", None).await);
    let outcome = lint_judged(dir.path(), "json", Some(judge.base_url())).await;
    let report = json_of(&outcome);
    let row = |check: &str, hint: &str| {
        (
            check.to_owned(),
            "do_it".to_owned(),
            "/description".to_owned(),
            hint.to_owned(),
            "warning".to_owned(),
        )
    };
    assert_eq!(
        judge_findings(&report),
        vec![
            row(
                "judge_unclear_purpose",
                "the judge says: it does not say what it does"
            ),
            row(
                "judge_opaque_parameters",
                "the judge says: `x` is unexplained"
            ),
        ]
    );
    let message = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["check"] == "judge_unclear_purpose")
        .map(|f| f["message"].clone());
    assert_eq!(
        message,
        Some(json!("the description judge scored `purpose` 1 of 5"))
    );
    // Every deterministic finding is still there.
    let deterministic: Vec<&Value> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f.get("source").is_none())
        .collect();
    assert_eq!(
        deterministic,
        plain["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .collect::<Vec<_>>()
    );
    let requests = judge.requests();
    assert_eq!(requests.len(), 2, "one request per tool");
    assert_eq!(requests[0]["model"], "judge-1");
    let user = requests[1]["messages"][1]["content"]
        .as_str()
        .expect("user");
    assert!(user.contains("\"description\": \"Does it.\""), "{user}");

    // The same tools again: answered from the cache, in SARIF tagged as the judge's.
    let sarif = json_of(&lint_judged(dir.path(), "sarif", Some(judge.base_url())).await);
    assert_eq!(judge.requests().len(), 2, "answered from the cache");
    let tagged: Vec<(&str, &Value)> = sarif["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|r| r["properties"]["tags"] == json!(["judge"]))
        .map(|r| (r["ruleId"].as_str().expect("rule"), &r["level"]))
        .collect();
    assert_eq!(
        tagged,
        vec![
            ("judge_unclear_purpose", &json!("warning")),
            ("judge_opaque_parameters", &json!("warning")),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_description_judge_outage_is_a_warning_and_hides_no_finding() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let judge = crate::support::FakeProvider::start(
        vec![],
        Some(wiremock::ResponseTemplate::new(500).set_body_string("judge down")),
    )
    .await;
    let plain = lint_judged(dir.path(), "table", None).await;
    let judged = lint_judged(dir.path(), "table", Some(judge.base_url())).await;
    assert_eq!(judged.code, plain.code, "{}", judged.stderr);
    let warnings = "warning: the description judge could not score `get_weather`: provider returned HTTP 500: judge down\n\
                    warning: the description judge could not score `do_it`: provider returned HTTP 500: judge down\n";
    assert!(judged.stderr.contains(warnings), "{}", judged.stderr);
    assert_eq!(judged.stdout, plain.stdout);
    let report = json_of(&lint_judged(dir.path(), "json", Some(judge.base_url())).await);
    assert_eq!(
        report["judge_warnings"].as_array().map(Vec::len),
        Some(2),
        "{report}"
    );
}
