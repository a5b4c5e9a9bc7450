//! `toolgate init --servers` against real third-party servers: the official memory server
//! (its read-only tools accept the schema's values) and the git server (it rejects them).
//! The written suite loads, its happy drafts pass `verify` with `succeeds` checks, a rejected
//! draft is never marked happy and fails with the server's error, and `gate` warns that the
//! suite is all drafts.

use std::path::Path;

use crate::own_servers::node_server;
use crate::support::{output, repo, toolgate};

/// Runs toolgate in `cwd` with `env`: (exit code, stdout, stderr).
fn run_in(cwd: &Path, env: &[(&str, &Path)], args: &[&str]) -> (i32, String, String) {
    let mut command = toolgate();
    command.current_dir(cwd).args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    output(command)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

#[test]
fn init_servers_drafts_happy_paths_only_for_calls_the_memory_server_accepted() {
    let script = node_server("server-memory").display().to_string();
    let dir = tempfile::tempdir().expect("a temporary folder");
    let memory = dir.path().join("memory.jsonl");
    let env = [("MEMORY_FILE_PATH", memory.as_path())];
    let from = format!("node {script}");
    let (code, stdout, stderr) = run_in(
        dir.path(),
        &env,
        &["init", "--servers", "--from", &from, "--dir", "suite"],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("9 draft scenarios for server `memory-server`: 3 happy (the server accepted the probe call), 0 rejected (fill in values it accepts), 6 untried (may write: never called while drafting)\n"),
        "{stdout}"
    );
    // No write tool was called while drafting: the memory file holds no entity.
    assert_eq!(std::fs::read_to_string(&memory).unwrap_or_default(), "");
    let suite = dir.path().join("suite");
    let config = read(&suite.join("toolgate.yaml"));
    assert!(
        config.contains(&format!(
            "servers:\n  \"memory-server\":\n    command: \"node\"\n    args: [\"{script}\"]\n    # where `toolgate init` was run, relative to this suite root\n    cwd: \"..\"\n"
        )),
        "{config}"
    );
    let happy = read(&suite.join("scenarios/search_nodes-happy.yaml"));
    assert!(
        happy.contains("draft: true\n")
            && happy.contains(
                "  - tool: \"search_nodes\"\n    args_match: {\"query\":\"example-query\"}\n    succeeds: true\n"
            ),
        "{happy}"
    );
    let untried = read(&suite.join("scenarios/create_entities-untried.yaml"));
    assert!(
        untried.contains("so it was NOT tried while drafting"),
        "{untried}"
    );

    let root = suite.display().to_string();
    let (code, stdout, stderr) = run_in(
        dir.path(),
        &env,
        &["verify", "--root", &root, "--mutants", "--verbose"],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.starts_with(
            "9 of 9 scenarios pass with the reference agent\n9 of 9 scenarios are drafts"
        ),
        "{stdout}"
    );
    // Every draft has `succeeds`, so each also gets a failed-call mutant (35 mutants without
    // them), and none survives; kills on drafts are counted apart from the headline rate.
    assert!(!stdout.contains("survived"), "{stdout}");
    assert!(
        stdout.ends_with(
            "no finished scenario has mutants: the kill rate measures nothing yet\n44 of 44 killed on draft scenarios: drafts are not evidence\n"
        ),
        "{stdout}"
    );

    let out = dir.path().join("out");
    let (_, stdout, stderr) = run_in(
        dir.path(),
        &env,
        &[
            "gate",
            "--root",
            &root,
            "--agent",
            "reference",
            "--repeat",
            "1",
            "--out",
            &out.display().to_string(),
        ],
    );
    assert!(
        stderr.contains("warning: 3 of 3 scenarios to gate are drafts still to finish (`draft: true`): open_nodes-happy, read_graph-happy, search_nodes-happy\nwarning: every scenario of the suite is a draft: the verdict says the drafts ran, not that the tools were judged\n"),
        "{stdout}{stderr}"
    );
    let results: serde_json::Value =
        serde_json::from_str(&read(&out.join("results.json"))).expect("results are JSON");
    let succeeds: Vec<bool> = results["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .flat_map(|run| run["checks"].as_array().into_iter().flatten())
        .filter(|check| check["kind"] == "call_succeeds")
        .map(|check| check["passed"] == true)
        .collect();
    assert_eq!(succeeds, [true, true, true], "{results}");
}

#[test]
fn init_servers_writes_a_rejected_draft_with_the_git_servers_error() {
    node_server("server-memory");
    let server = repo().join("target/peers/venv-git/bin/mcp-server-git");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let from = server.display().to_string();
    let (code, stdout, stderr) = run_in(
        dir.path(),
        &[],
        &["init", "--servers", "--from", &from, "--dir", "suite"],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains(": 0 happy (the server accepted the probe call), 7 rejected (fill in values it accepts), 5 untried"),
        "{stdout}"
    );
    let scenarios = dir.path().join("suite/scenarios");
    assert!(!scenarios.join("git_status-happy.yaml").exists());
    let rejected = read(&scenarios.join("git_status-rejected.yaml"));
    let missing = std::fs::canonicalize(dir.path())
        .expect("exists")
        .join("example-repo_path");
    let error = format!(
        "#   Error executing tool git_status: {}\n",
        missing.display()
    );
    assert!(
        rejected.contains("The server REJECTED the values below") && rejected.contains(&error),
        "{rejected}"
    );
    assert!(rejected.contains("tier: 2\n") && rejected.contains("succeeds: true\n"));
}

/// A server started by a relative path works from the written suite: the path is written from
/// the suite root, where toolgate resolves a relative command whatever `cwd` says.
#[test]
fn init_servers_writes_a_relative_server_path_that_the_suite_can_start() {
    let script = node_server("server-memory").display().to_string();
    let dir = tempfile::tempdir().expect("a temporary folder");
    let memory = dir.path().join("memory.jsonl");
    let env = [("MEMORY_FILE_PATH", memory.as_path())];
    let launcher = dir.path().join("bin/memory.sh");
    std::fs::create_dir_all(dir.path().join("bin")).expect("bin");
    std::fs::write(&launcher, format!("#!/bin/sh\nexec node '{script}'\n")).expect("write");
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&launcher)
        .status()
        .expect("chmod");
    let (code, stdout, stderr) = run_in(
        dir.path(),
        &env,
        &[
            "init",
            "--servers",
            "--from",
            "bin/memory.sh",
            "--dir",
            "suite",
        ],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let config = read(&dir.path().join("suite/toolgate.yaml"));
    assert!(
        config.contains("    command: \"../bin/memory.sh\"\n"),
        "{config}"
    );
    let (code, stdout, stderr) = run_in(dir.path(), &env, &["validate", "--root", "suite"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
}
