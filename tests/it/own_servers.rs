//! Suites of the user's own MCP servers, end to end: the example suite against the official
//! memory server, offline validation from a lock file, loud failures of a broken server, and
//! the filesystem and SQLite servers on seeded state. Every server here is third-party
//! (installed by tests/peers/install.sh) except `tests/peers/broken_server.py`, which is
//! broken on purpose.

use std::path::{Path, PathBuf};
use std::sync::Once;

use serde_json::Value;

use crate::support::{output, repo, toolgate};

/// Installs the peers once per test binary; fails, never skips, when it cannot.
pub(crate) fn install_peers() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let status = crate::support::peer_installer()
            .status()
            .expect("bash runs tests/peers/install.sh");
        assert!(status.success(), "tests/peers/install.sh failed: {status}");
    });
}

pub(crate) fn node_server(package: &str) -> PathBuf {
    install_peers();
    let script = repo()
        .join("target/peers/node/node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js");
    assert!(script.exists(), "`{}` is missing", script.display());
    script
}

/// A suite root holding `toolgate.yaml`, the scenarios, a smoke set of every tier, and
/// `files` (relative path, contents).
pub(crate) fn suite(
    config: &str,
    scenarios: &[(&str, &str)],
    files: &[(&str, &str)],
) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path();
    std::fs::create_dir_all(root.join("scenarios")).expect("creates");
    std::fs::write(root.join("toolgate.yaml"), config).expect("writes");
    std::fs::write(root.join("smoke-set.yaml"), "tiers: [1, 2, 3, 4, 5]\n").expect("writes");
    for (name, text) in scenarios {
        std::fs::write(root.join("scenarios").join(name), text).expect("writes");
    }
    for (name, text) in files {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("creates");
        std::fs::write(path, text).expect("writes");
    }
    dir
}

pub(crate) fn memory_config() -> String {
    format!(
        "servers:\n  memory:\n    command: node\n    args: ['{}']\n    env: {{MEMORY_FILE_PATH: '{{seed}}'}}\n",
        node_server("server-memory").display()
    )
}

pub(crate) fn run(args: &[&str]) -> (i32, String, String) {
    let mut command = toolgate();
    command.args(args);
    output(command)
}

pub(crate) fn results(out: &Path) -> Value {
    let text = std::fs::read_to_string(out.join("results.json")).expect("results.json");
    serde_json::from_str(&text).expect("results are JSON")
}

const READ_GRAPH: &str = "id: M-001\ntier: 1\ntype: single_call\nprompt: Show the graph.\nexpected_calls:\n  - tool: read_graph\nmax_calls: 1\n";

#[test]
fn the_example_suite_passes_with_the_reference_agent_and_kills_every_mutant() {
    install_peers();
    let root = repo().join("examples/own-servers");
    let (code, stdout, stderr) =
        run(&["verify", "--root", &root.display().to_string(), "--mutants"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.starts_with("14 of 14 scenarios pass with the reference agent\n"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("killed 69/69 mutants (100.0%, goal 95%)\n"),
        "{stdout}"
    );
}

#[test]
fn validate_checks_tool_names_and_arguments_against_the_live_catalog() {
    let scenario = "id: M-002\ntier: 1\ntype: single_call\nprompt: Weather?\nexpected_calls:\n  - tool: weather_lookup\n  - tool: open_nodes\n    args_match: {nmes: [x]}\n";
    let dir = suite(&memory_config(), &[("m.yaml", scenario)], &[]);
    let root = dir.path().display().to_string();
    let (code, _, stderr) = run(&["validate", "--root", &root]);
    assert_eq!(code, 2, "{stderr}");
    let file = dir.path().join("scenarios/m.yaml");
    assert!(
        stderr.contains(&format!(
            "`{}`: expected_calls[0].tool (line 6): unknown tool `weather_lookup`",
            file.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "expected_calls[1].args_match.nmes (line 8): `open_nodes` has no argument `nmes`"
        ),
        "{stderr}"
    );
}

#[test]
fn validate_runs_offline_against_a_snapshot_of_the_suite_servers() {
    let dir = suite(&memory_config(), &[("m.yaml", READ_GRAPH)], &[]);
    let root = dir.path().display().to_string();
    let lock = dir.path().join("toolgate.lock.json").display().to_string();
    let (code, stdout, stderr) = run(&["snapshot", "--suite", &root, "--lock", &lock]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        format!("locked 9 tools from 1 server in `{lock}`\n")
    );
    let (code, stdout, _) = run(&["validate", "--root", &root]);
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        "1 scenarios valid; the smoke set selects 1\nchecked against 9 tools of 1 servers (their live tools/list)\n"
    );
    let (code, stdout, stderr) = run(&[
        "drift",
        "--suite",
        &root,
        "--lock",
        &lock,
        "--scenarios",
        &root,
    ]);
    assert_eq!((code, stdout.as_str()), (0, "no drift\n"), "{stderr}");
    // The server is gone: only the lock can validate now.
    std::fs::write(
        dir.path().join("toolgate.yaml"),
        "servers:\n  memory:\n    command: /nonexistent/memory-server\n",
    )
    .expect("writes");
    let (code, stdout, stderr) = run(&["validate", "--root", &root, "--lock", &lock]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        "1 scenarios valid; the smoke set selects 1\nchecked against 9 tools of 1 servers (the lock file)\n"
    );
    let (code, _, stderr) = run(&["validate", "--root", &root]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("server `memory` (`/nonexistent/memory-server`): failed to start MCP server `/nonexistent/memory-server`"),
        "{stderr}"
    );
}

fn broken_config(mode: &str) -> String {
    format!(
        "servers:\n  broken:\n    command: python3\n    args: ['{}', {mode}]\n    env: {{DB_PASSWORD: hunter2-very-secret}}\n",
        repo().join("tests/peers/broken_server.py").display()
    )
}

#[test]
fn a_server_that_does_not_start_initialize_or_list_tools_is_a_loud_error() {
    let echo = "id: B-001\ntier: 1\ntype: single_call\nprompt: Echo hi.\nexpected_calls:\n  - tool: echo\n    args_match: {text: hi}\n";
    for (mode, expected) in [
        (
            "exit",
            "its stderr ends with:\nfatal: database password rejected",
        ),
        (
            "garbage",
            "its stderr ends with:\noops: printed a banner on stdout",
        ),
        ("no-tools", "server `broken` (`python3 "),
    ] {
        let dir = suite(&broken_config(mode), &[("b.yaml", echo)], &[]);
        let (code, stdout, stderr) =
            run(&["validate", "--root", &dir.path().display().to_string()]);
        assert_eq!(code, 2, "{mode}: {stdout}{stderr}");
        assert!(stderr.contains(expected), "{mode}: {stderr}");
        assert!(
            !stderr.contains("hunter2"),
            "{mode}: a secret leaked: {stderr}"
        );
    }
    let dir = suite(&broken_config("no-tools"), &[("b.yaml", echo)], &[]);
    let (_, _, stderr) = run(&["validate", "--root", &dir.path().display().to_string()]);
    assert!(stderr.ends_with("no-tools`) lists no tools\n"), "{stderr}");
}

#[test]
fn a_server_that_dies_mid_run_errors_the_run_with_its_stderr_tail() {
    let echo = "id: B-002\ntier: 1\ntype: single_call\nprompt: Echo hi.\nexpected_calls:\n  - tool: echo\n    args_match: {text: hi}\n";
    let dir = suite(&broken_config("die"), &[("b.yaml", echo)], &[]);
    let out = dir.path().join("out");
    let (code, stdout, stderr) = run(&[
        "gate",
        "--root",
        &dir.path().display().to_string(),
        "--out",
        &out.display().to_string(),
    ]);
    assert_eq!(
        code, 3,
        "an errored run is no verdict, never a pass: {stdout}{stderr}"
    );
    assert!(
        stdout.contains("1 of 1 runs errored: no verdict"),
        "{stdout}"
    );
    let results = results(&out);
    let run = &results["scenarios"][0];
    assert_eq!(run["outcome"], "errored");
    let error = run["error"].as_str().expect("an error");
    assert!(error.starts_with("server `broken` (`python3 "), "{error}");
    assert!(error.contains("died during the run"), "{error}");
    assert!(
        error.ends_with("its stderr ends with:\nsegfault in echo handler (simulated)"),
        "{error}"
    );
    let text = std::fs::read_to_string(out.join("results.json")).expect("reads");
    assert!(!text.contains("hunter2"));
}

/// Issue case: a server that wrote a log line, a 17 MB line, or an answer under a wrong id
/// instead of its answer was
/// reported as `timed out` after 30 s, and the run could pass. Now the call fails at once as a
/// breach of the stdio framing that names the server and quotes what it wrote, and the run is
/// errored: the server's fault is never judged as the agent's.
#[test]
fn a_server_that_answers_with_garbage_or_an_endless_line_errors_the_run_at_once() {
    let echo = "id: B-003\ntier: 1\ntype: single_call\nprompt: Echo hi.\nexpected_calls:\n  - tool: echo\n    args_match: {text: hi}\n";
    for (mode, expected) in [
        (
            "babble",
            "`echo`: the server broke the MCP stdio framing: a line that is not a JSON-RPC message: `Traceback (most recent call last): KeyError 'text'`",
        ),
        (
            "flood",
            "`echo`: the server broke the MCP stdio framing: a line longer than 16 MiB, which the MCP client discards",
        ),
        ("misroute", "which no open request of this session carries"),
    ] {
        let dir = suite(&broken_config(mode), &[("b.yaml", echo)], &[]);
        let out = dir.path().join("out");
        let (code, stdout, stderr) = run(&[
            "gate",
            "--root",
            &dir.path().display().to_string(),
            "--out",
            &out.display().to_string(),
        ]);
        assert_eq!(code, 3, "{mode}: {stdout}{stderr}");
        let results = results(&out);
        let run = &results["scenarios"][0];
        assert_eq!(run["outcome"], "errored", "{mode}");
        let error = run["error"].as_str().expect("an error");
        assert!(
            error.starts_with("server `broken` (`python3 "),
            "{mode}: {error}"
        );
        assert!(error.contains(expected), "{mode}: {error}");
    }
}

/// Issue case: a `${VAR}` in a server's `args` was expanded into `results.json`'s pins
/// (`pins.servers.NAME.command`) in clear. The server gets the value; the pin shows
/// `[redacted]`.
#[test]
fn a_secret_expanded_into_server_args_is_run_but_never_pinned() {
    let echo = "id: B-004\ntier: 1\ntype: single_call\nprompt: Echo hi.\nexpected_calls:\n  - tool: echo\n    args_match: {text: hi}\n";
    let config = format!(
        "servers:\n  broken:\n    command: python3\n    args: ['{}', echo, '--token=${{PIN_PROBE_TOKEN}}']\n",
        repo().join("tests/peers/broken_server.py").display()
    );
    let dir = suite(&config, &[("b.yaml", echo)], &[]);
    let out = dir.path().join("out");
    let mut gate = toolgate();
    gate.args(["gate", "--root"])
        .arg(dir.path())
        .arg("--out")
        .arg(&out)
        .env("PIN_PROBE_TOKEN", "tok-pin-canary-8675309");
    let (code, stdout, stderr) = output(gate);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let pinned = &results(&out)["pins"]["servers"]["broken"]["command"];
    assert!(
        pinned
            .as_str()
            .is_some_and(|command| command.ends_with("echo --token=[redacted]")),
        "{pinned}"
    );
    let text = std::fs::read_to_string(out.join("results.json")).expect("reads");
    assert!(!text.contains("tok-pin-canary-8675309"));
}

/// Whether any process's command line contains `marker`.
fn process_with(marker: &str) -> bool {
    std::fs::read_dir("/proc")
        .expect("reads /proc")
        .filter_map(Result::ok)
        .filter_map(|entry| std::fs::read(entry.path().join("cmdline")).ok())
        .any(|cmdline| String::from_utf8_lossy(&cmdline).contains(marker))
}

#[test]
fn the_filesystem_server_gets_a_fresh_seeded_directory_per_repetition_and_is_stopped() {
    let marker = tempfile::tempdir().expect("a temporary folder");
    let marker_arg = marker.path().display().to_string();
    let config = format!(
        "repeat: 2\nservers:\n  files:\n    command: node\n    args: ['{}', '{{seed_dir}}', '{marker_arg}']\n    cwd: '{{seed_dir}}'\n    include: ['*_text_file', write_file, list_directory]\n",
        node_server("server-filesystem").display()
    );
    let scenario = "id: F-001\ntier: 1\ntype: single_call\nprompt: Write 'milk' into workspace/notes/todo.txt.\nseed_path: workspace\nexpected_calls:\n  - tool: write_file\n    args_match: {path: workspace/notes/todo.txt, content: milk}\nmax_calls: 1\nfinal_state_probes:\n  - tool: read_text_file\n    arguments: {path: workspace/notes/todo.txt}\n    assertions:\n      - \"result.content == 'milk'\"\n      - \"result.content != baseline\"\n";
    let dir = suite(
        &config,
        &[("f.yaml", scenario)],
        &[("workspace/notes/todo.txt", "eggs\n")],
    );
    let out = dir.path().join("out");
    let (code, stdout, stderr) = run(&[
        "gate",
        "--root",
        &dir.path().display().to_string(),
        "--out",
        &out.display().to_string(),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let results = results(&out);
    let runs = results["scenarios"].as_array().expect("runs");
    assert_eq!(runs.len(), 2, "two repetitions");
    for run in runs {
        assert_eq!(run["outcome"], "pass", "{run}");
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("workspace/notes/todo.txt")).expect("reads"),
        "eggs\n",
        "the seed itself is never written"
    );
    assert!(!process_with(&marker_arg), "a server outlived its run");
    let tools: Vec<&str> = results["pins"]["servers"]["files"]["tools"]
        .as_array()
        .expect("pinned tools")
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert_eq!(
        tools,
        ["read_text_file", "write_file", "list_directory"],
        "after `include`"
    );
}

#[test]
fn the_sqlite_server_runs_on_a_fresh_copy_of_the_seeded_database() {
    install_peers();
    let dir = tempfile::tempdir().expect("a temporary folder");
    let db = dir.path().join("shop.db");
    let status = std::process::Command::new("python3")
        .args([
            "-c",
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('create table customers (id integer primary key, name text)'); c.executemany('insert into customers (name) values (?)', [('Ann',), ('Bo',), ('Cy',)]); c.commit()",
            &db.display().to_string(),
        ])
        .status()
        .expect("python3 runs");
    assert!(status.success());
    let seed = std::fs::read(&db).expect("reads");
    let config = format!(
        "repeat: 2\nservers:\n  shop:\n    command: '{}'\n    args: [--db-path, '{{seed}}']\n    exclude: [append_insight]\n",
        repo()
            .join("target/peers/venv-sqlite/bin/mcp-server-sqlite")
            .display()
    );
    let scenario = "id: S-001\ntier: 1\ntype: single_call\nprompt: Add a customer named Zoe.\nseed_path: shop.db\nexpected_calls:\n  - tool: write_query\n    reference_args: {query: \"INSERT INTO customers (name) VALUES ('Zoe')\"}\nmax_calls: 1\nforbidden_calls:\n  - tool: write_query\n    args_match: {query: DELETE FROM customers}\nblock_forbidden: true\nfinal_state_probes:\n  - tool: read_query\n    arguments: {query: SELECT count(*) AS n FROM customers}\n    assertions:\n      - \"result != baseline\"\n      - \"result == \\\"[{'n': 4}]\\\"\"\n";
    let root = suite(&config, &[("s.yaml", scenario)], &[]);
    std::fs::write(root.path().join("shop.db"), &seed).expect("writes");
    let out = root.path().join("out");
    let (code, stdout, stderr) = run(&[
        "gate",
        "--root",
        &root.path().display().to_string(),
        "--out",
        &out.display().to_string(),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let results = results(&out);
    let runs = results["scenarios"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    for run in runs {
        assert_eq!(run["outcome"], "pass", "{run}");
    }
    assert_eq!(
        std::fs::read(root.path().join("shop.db")).expect("reads"),
        seed,
        "the seeded database itself is never written"
    );
    let tools: Vec<&str> = results["pins"]["servers"]["shop"]["tools"]
        .as_array()
        .expect("pinned tools")
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert_eq!(
        tools,
        [
            "read_query",
            "write_query",
            "create_table",
            "list_tables",
            "describe_table"
        ]
    );
}

/// A child process killed when the test ends, pass or fail.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn an_http_server_is_reset_before_every_run_and_a_failing_reset_errors_the_run() {
    let script = node_server("server-everything");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let _server = Server(
        std::process::Command::new("node")
            .arg(&script)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("node starts"),
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "no HTTP server on {port}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let config = |reset: &str| {
        format!(
            "repeat: 3\nservers:\n  everything:\n    url: http://127.0.0.1:{port}/mcp\n    headers: {{X-Api-Key: '${{OWN_SERVERS_TEST_KEY}}'}}\n    include: [echo, get-sum]\n    reset: {{command: {reset}}}\n"
        )
    };
    let scenario = "id: H-001\ntier: 1\ntype: single_call\nprompt: Add 2 and 3.\nexpected_calls:\n  - tool: get-sum\n    args_match: {a: 2, b: 3}\nmax_calls: 1\nfinal_answer:\n  contains_results: [\"$.calls[0].result\"]\nreference_answer: \"The sum of 2 and 3 is 5.\"\n";
    let dir = suite(
        &config("[sh, -c, 'echo reset >> resets.log']"),
        &[("h.yaml", scenario)],
        &[],
    );
    let out = dir.path().join("out");
    let gate = |dir: &Path| {
        let mut command = toolgate();
        command
            .env("OWN_SERVERS_TEST_KEY", "key-that-must-stay-secret")
            .args([
                "gate",
                "--root",
                &dir.display().to_string(),
                "--out",
                &out.display().to_string(),
            ]);
        output(command)
    };
    let (code, stdout, stderr) = gate(dir.path());
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("resets.log")).expect("reads"),
        "reset\nreset\nreset\n",
        "one reset per run"
    );
    let results = results(&out);
    assert_eq!(results["scenarios"][0]["outcome"], "pass");
    assert_eq!(
        results["pins"]["servers"]["everything"]["command"],
        format!("http://127.0.0.1:{port}/mcp")
    );
    std::fs::write(
        dir.path().join("toolgate.yaml"),
        config("[sh, -c, 'echo wiped >&2; exit 4']"),
    )
    .expect("writes");
    let (code, _, _) = gate(dir.path());
    assert_eq!(code, 3, "errored runs give no verdict");
    let errored = self::results(&out);
    let error = errored["scenarios"][0]["error"].as_str().expect("an error");
    assert_eq!(
        error,
        format!(
            "server `everything` (`http://127.0.0.1:{port}/mcp`): its reset command `sh -c echo wiped >&2; exit 4` failed (exit status: 4): wiped"
        )
    );
    let text = std::fs::read_to_string(out.join("results.json")).expect("reads");
    assert!(!text.contains("key-that-must-stay-secret"));
    // A reset by tool call: one that works, then one the server refuses.
    let tool_reset = |reset: &str| config("[true]").replace("{command: [true]}", reset);
    std::fs::write(
        dir.path().join("toolgate.yaml"),
        tool_reset("{tool: echo, arguments: {message: reset}}"),
    )
    .expect("writes");
    let (code, stdout, stderr) = gate(dir.path());
    assert_eq!(code, 0, "{stdout}{stderr}");
    std::fs::write(
        dir.path().join("toolgate.yaml"),
        tool_reset("{tool: no-such-reset}"),
    )
    .expect("writes");
    let (code, _, _) = gate(dir.path());
    assert_eq!(code, 3);
    let errored = self::results(&out);
    let error = errored["scenarios"][0]["error"].as_str().expect("an error");
    assert!(
        error.starts_with(&format!(
            "server `everything` (`http://127.0.0.1:{port}/mcp`): its reset tool `no-such-reset` failed: "
        )),
        "{error}"
    );
}

#[test]
fn sarif_findings_on_a_live_server_point_at_its_entry_in_the_suite_config() {
    node_server("server-memory");
    let mut command = toolgate();
    command.current_dir(repo()).args([
        "lint",
        "--suite",
        "examples/own-servers",
        "--format",
        "sarif",
    ]);
    let (_, stdout, stderr) = output(command);
    let sarif: serde_json::Value = serde_json::from_str(&stdout).expect("SARIF is JSON");
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    assert!(!results.is_empty(), "{stderr}");
    for result in results {
        // Line 7 of the example's toolgate.yaml is `  memory:`, the server's entry.
        assert_eq!(
            result["locations"][0]["physicalLocation"],
            serde_json::json!({
                "artifactLocation": {"uri": "examples/own-servers/toolgate.yaml"},
                "region": {"startLine": 7}
            }),
            "{result}"
        );
        let name = result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]
            .as_str()
            .expect("a logical location");
        assert!(name.starts_with("memory/"), "{name}");
    }
}

/// Issue #35: what a server's tools/list walk warns about reaches the user. A cursor that
/// advances over the same tools forever is stopped at the second page, and `validate` says
/// so on stderr, naming the server.
#[test]
fn listing_warnings_of_discovery_reach_stderr_naming_the_server() {
    let scenario = "id: P-001\ntier: 1\ntype: single_call\nprompt: Echo hi.\nexpected_calls:\n  - tool: echo\n";
    let dir = suite(&broken_config("pages"), &[("p.yaml", scenario)], &[]);
    let root = dir.path().display().to_string();
    let (code, stdout, stderr) = run(&["validate", "--root", &root]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(
        stderr,
        "warning: server `broken`: non_advancing_cursor: tools/list page 2 lists only tools of earlier pages; stopped after 1 tools (the cursor changes, the tools do not)\n\
         warning: server `broken`: 1 tool listings repeated an identical tool and were merged: \"echo\"\n"
    );
}

/// The commit the git test's seed repository holds, made by [`seeded_git_repository`].
const SEED_COMMIT: &str = "56b00ef79a504afb919ffe9ca1ea4a83bce2ea1d";
/// The commit the suite's `setup` adds on every run's copy, its dates pinned by the server's
/// `env`.
const SETUP_COMMIT: &str = "28d2e822db08885ce7b142541daca623565f6f0c";

/// The environment that pins a git commit: author, committer and both dates at `epoch`, no
/// user or system git config.
fn pinned_git_env(epoch: u64) -> Vec<(&'static str, String)> {
    let date = format!("@{epoch} +0000");
    vec![
        ("GIT_AUTHOR_NAME", "CI".into()),
        ("GIT_AUTHOR_EMAIL", "ci@example.com".into()),
        ("GIT_COMMITTER_NAME", "CI".into()),
        ("GIT_COMMITTER_EMAIL", "ci@example.com".into()),
        ("GIT_AUTHOR_DATE", date.clone()),
        ("GIT_COMMITTER_DATE", date),
        ("GIT_CONFIG_NOSYSTEM", "1".into()),
        ("GIT_CONFIG_GLOBAL", "/dev/null".into()),
    ]
}

/// `seeds/repo.tar` under `root`: a git repository `repo/` with one commit of `README.md`,
/// dates pinned, so its hash is [`SEED_COMMIT`] on any machine.
fn seeded_git_repository(root: &Path) {
    let work = tempfile::tempdir().expect("a temporary folder");
    let repo = work.path().join("repo");
    std::fs::create_dir_all(&repo).expect("creates");
    std::fs::write(repo.join("README.md"), "Hello\n").expect("writes");
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(args)
            .envs(pinned_git_env(1_767_225_600))
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}: {status}");
    };
    git(&["init", "-q"]);
    git(&["add", "README.md"]);
    git(&["commit", "-q", "-m", "First commit"]);
    std::fs::create_dir_all(root.join("seeds")).expect("creates");
    let status = std::process::Command::new("tar")
        .arg("-cf")
        .arg(root.join("seeds/repo.tar"))
        .arg("-C")
        .arg(work.path())
        .arg("repo")
        .status()
        .expect("tar runs");
    assert!(status.success());
}

fn git_server() -> PathBuf {
    install_peers();
    let server = repo().join("target/peers/venv-git/bin/mcp-server-git");
    assert!(server.exists(), "`{}` is missing", server.display());
    server
}

/// `toolgate.yaml` of the git suite: the server confined to `{seed}` (so discovery fails
/// unless it runs on the seeded copy), a `setup` that commits on the copy, dates pinned.
fn git_config() -> String {
    let env: Vec<String> = pinned_git_env(1_767_312_000)
        .into_iter()
        .map(|(name, value)| format!("{name}: '{value}'"))
        .collect();
    format!(
        "seed_path: seeds/repo.tar\nservers:\n  git:\n    command: '{}'\n    args: [--repository, '{{seed}}']\n    env: {{{}}}\n    setup: {{command: [git, -C, '{{seed}}', commit, -q, --allow-empty, -m, Prepared for the run]}}\n    include: [git_log, git_status, git_show]\n",
        git_server().display(),
        env.join(", ")
    )
}

const GIT_LOG: &str = "id: G-001\ntier: 1\ntype: single_call\nprompt: Show the last two commits of the repository at {seed}.\nexpected_calls:\n  - tool: git_log\n    args_match: {repo_path: '{seed}'}\n    reference_args: {max_count: 2}\nmax_calls: 1\n";

/// The `git_log` call line of `out/trace.jsonl`.
fn git_log_line(out: &Path) -> Value {
    let trace = std::fs::read_to_string(out.join("trace.jsonl")).expect("trace.jsonl");
    trace
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a JSON line"))
        .find(|line| line["tool"] == "git_log")
        .unwrap_or_else(|| panic!("no git_log call in {trace}"))
}

#[test]
fn the_git_server_runs_on_an_unpacked_seed_after_its_setup_and_records_show_seed_dir() {
    let root = suite(&git_config(), &[("g.yaml", GIT_LOG)], &[]);
    seeded_git_repository(root.path());
    let root_arg = root.path().display().to_string();
    let (code, stdout, stderr) = run(&["verify", "--root", &root_arg]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.starts_with("1 of 1 scenarios pass with the reference agent\n"),
        "{stdout}"
    );
    let out = root.path().join("out");
    let cassettes = root.path().join("cassettes");
    let (code, stdout, stderr) = run(&[
        "gate",
        "--root",
        &root_arg,
        "--out",
        &out.display().to_string(),
        "--record",
        &cassettes.display().to_string(),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let recorded = results(&out);
    assert_eq!(recorded["scenarios"][0]["outcome"], "pass", "{recorded}");
    let call = git_log_line(&out);
    assert_eq!(call["arguments"]["repo_path"], "{seed_dir}/repo", "{call}");
    let log = call["result"].as_str().expect("the log is text");
    assert_eq!(
        log,
        format!(
            "Commit history:\nCommit: {SETUP_COMMIT}\nAuthor: CI\nDate: 2026-01-02 00:00:00+00:00\nMessage: Prepared for the run\n\n\nCommit: {SEED_COMMIT}\nAuthor: CI\nDate: 2026-01-01 00:00:00+00:00\nMessage: First commit\n\n"
        )
    );
    for file in ["trace.jsonl", "results.json"] {
        let text = std::fs::read_to_string(out.join(file)).expect("written");
        assert!(!text.contains("toolgate-run-"), "{file}: {text}");
    }
    let cassette = std::fs::read_to_string(cassettes.join("G-001.r0.jsonl")).expect("a cassette");
    assert!(
        cassette.contains(r#""repo_path":"{seed_dir}/repo""#),
        "{cassette}"
    );
    assert!(!cassette.contains("toolgate-run-"), "{cassette}");
    // The cassette replays in another run's seed directory.
    let replayed = root.path().join("replayed");
    let (code, stdout, stderr) = run(&[
        "gate",
        "--root",
        &root_arg,
        "--out",
        &replayed.display().to_string(),
        "--replay",
        &cassettes.display().to_string(),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let replayed = results(&replayed);

    assert_eq!(replayed["scenarios"][0]["outcome"], "pass", "{replayed}");
    let again = git_log_line(&root.path().join("replayed"));
    assert_eq!(again["arguments"]["repo_path"], "{seed_dir}/repo");
    assert_eq!(again["result"].as_str(), Some(log));
    // `cassette verify` sends the recorded calls again in a new run's seed directory.
    let (code, stdout, stderr) = run(&[
        "cassette",
        "verify",
        &cassettes.display().to_string(),
        "--suite",
        &root_arg,
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("ok       G-001.r0.jsonl (1 call"),
        "{stdout}"
    );
}

#[test]
fn a_failing_setup_command_errors_the_run_with_its_stderr() {
    // Discovery has no seed (`{seed}` does not exist) and the setup passes there; every run
    // has the scenario's seed, and the setup fails.
    let config = format!(
        "{}    setup: {{command: [sh, -c, 'test -e {{seed}} || exit 0; echo cannot load the seed >&2; exit 3']}}\n",
        memory_config()
    );
    let scenario = format!("{READ_GRAPH}seed_path: seed.jsonl\n");
    let root = suite(&config, &[("m.yaml", &scenario)], &[("seed.jsonl", "")]);
    let out = root.path().join("out");
    let (_, stdout, stderr) = run(&[
        "gate",
        "--root",
        &root.path().display().to_string(),
        "--out",
        &out.display().to_string(),
    ]);
    let recorded = results(&out);
    let errored = &recorded["scenarios"][0];
    assert_eq!(errored["outcome"], "errored", "{stdout}{stderr}{errored}");
    assert_eq!(
        errored["error"],
        format!(
            "server `memory` (`node {}`): its setup command `sh -c test -e {{seed}} || exit 0; echo cannot load the seed >&2; exit 3` failed (exit status: 3); its stderr ends with:\ncannot load the seed",
            node_server("server-memory").display()
        )
    );
}

#[test]
fn a_suite_seed_that_does_not_exist_is_an_error_naming_the_file() {
    let config = format!("seed_path: seeds/nope.tar\n{}", memory_config());
    let root = suite(&config, &[("m.yaml", READ_GRAPH)], &[]);
    let (code, stdout, stderr) = run(&["validate", "--root", &root.path().display().to_string()]);
    assert_ne!(code, 0, "{stdout}");
    let config = root.path().join("toolgate.yaml");
    assert!(
        stderr.contains(&format!(
            "`{}`: seed_path: `{}` does not exist (it is relative to this file)",
            config.display(),
            root.path().join("seeds/nope.tar").display()
        )),
        "{stderr}"
    );
}

#[test]
fn a_setup_script_by_relative_path_is_the_suite_roots_and_writes_the_runs_seed() {
    // The memory file starts empty; the suite's own script writes one entity into the run's
    // copy, which the server then reads.
    let config = format!(
        "{}    setup: {{command: [scripts/prepare.sh, '{{seed}}']}}\n",
        memory_config()
    );
    let scenario = "id: M-001\ntier: 1\ntype: single_call\nprompt: Show the graph.\nseed_path: seed.jsonl\nexpected_calls:\n  - tool: read_graph\n    result_contains: [{name: Ada}]\nmax_calls: 1\n";
    let script = "#!/bin/sh\necho '{\"type\":\"entity\",\"name\":\"Ada\",\"entityType\":\"person\",\"observations\":[]}' > \"$1\"\n";
    let root = suite(
        &config,
        &[("m.yaml", scenario)],
        &[("seed.jsonl", ""), ("scripts/prepare.sh", script)],
    );
    let script_path = root.path().join("scripts/prepare.sh");
    let mut permissions = std::fs::metadata(&script_path)
        .expect("exists")
        .permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&script_path, permissions).expect("chmod");
    let out = root.path().join("out");
    let (code, stdout, stderr) = run(&[
        "gate",
        "--root",
        &root.path().display().to_string(),
        "--out",
        &out.display().to_string(),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(results(&out)["scenarios"][0]["outcome"], "pass");
    assert_eq!(
        std::fs::read_to_string(root.path().join("seed.jsonl")).expect("reads"),
        "",
        "the committed seed is never written"
    );
}
