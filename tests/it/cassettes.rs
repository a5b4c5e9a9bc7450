//! Cassettes and the proxy against the official MCP memory server (npm) and the official MCP
//! Python SDK client (PyPI): record a suite, replay it without the server, fail loudly on a
//! call the cassette lacks, verify cassettes against the live server, turn them into mocks,
//! and put `toolgate proxy` between a third-party client and server.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::own_servers::{memory_config, node_server, results, run, suite};
use crate::peers::peer_python;
use crate::support::repo;

/// The example suite's scenarios and seeds in a fresh root whose `toolgate.yaml` is `config`.
fn example_suite(config: &str) -> tempfile::TempDir {
    let example = repo().join("examples/own-servers");
    let mut files: Vec<(String, String)> = Vec::new();
    for folder in ["scenarios", "seeds"] {
        for entry in std::fs::read_dir(example.join(folder)).expect("the example is there") {
            let path = entry.expect("an entry").path();
            let name = format!(
                "{folder}/{}",
                path.file_name().expect("a name").to_string_lossy()
            );
            files.push((name, std::fs::read_to_string(&path).expect("reads")));
        }
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(name, text)| (name.as_str(), text.as_str()))
        .collect();
    suite(config, &[], &files)
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("the cassette is there")
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is JSON"))
        .collect()
}

fn gate(root: &Path, extra: &[&str]) -> (i32, String, Value) {
    gate_with(root, extra, &[])
}

/// As [`gate`], with `env` (name, value) set for the process.
fn gate_with(root: &Path, extra: &[&str], env: &[(&str, &str)]) -> (i32, String, Value) {
    let out = root.join("out");
    let mut args = vec![
        "gate",
        "--root",
        root.to_str().expect("utf-8"),
        "--out",
        out.to_str().expect("utf-8"),
    ];
    if !extra.contains(&"--only") {
        args.push("--all");
    }
    args.extend_from_slice(extra);
    let mut command = crate::support::toolgate();
    command.args(&args).envs(env.iter().copied());
    let (code, stdout, stderr) = crate::support::output(command);
    (code, format!("{stdout}{stderr}"), results(&out))
}

/// What the MCP Python SDK client saw making `calls` (tool, JSON arguments) through
/// `toolgate proxy PROXY_ARGS -- env MEMORY_FILE_PATH=GRAPH node server-memory`.
fn through_proxy(calls: &[(&str, &str)], proxy_args: &[&std::ffi::OsStr], graph: &Path) -> Value {
    let memory = node_server("server-memory");
    let mut command = Command::new(peer_python());
    command.arg(repo().join("tests/peers/py_client.py"));
    for (tool, arguments) in calls {
        command.args(["--call", tool, arguments]);
    }
    let output = command
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_toolgate"))
        .arg("proxy")
        .args(proxy_args)
        // The SDK starts servers with a minimal environment, so the variable goes in the command.
        .args(["--", "env"])
        .arg(format!("MEMORY_FILE_PATH={}", graph.display()))
        .arg("node")
        .arg(&memory)
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "python client failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the client prints JSON")
}

const CREATE_ADA: (&str, &str) = (
    "create_entities",
    r#"{"entities": [{"name": "Ada", "entityType": "person", "observations": ["math"]}]}"#,
);

#[test]
fn a_recorded_suite_replays_without_its_server_to_the_same_results() {
    let dir = example_suite(&memory_config());
    let root = dir.path();
    let cassettes = root.join("cassettes");
    let (code, output, live) = gate(root, &["--record", cassettes.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{output}");
    assert_eq!(live["summary"]["overall"]["passed"], 14, "{output}");

    let mut names: Vec<String> = std::fs::read_dir(&cassettes)
        .expect("the cassettes were written")
        .map(|entry| {
            entry
                .expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    assert_eq!(names.len(), 14);
    assert_eq!(names[0], "OS-001.r0.jsonl");
    let cassette = lines(&cassettes.join("OS-002.r0.jsonl"));
    let header = &cassette[0];
    assert_eq!(header["cassette_version"], 1);
    assert_eq!(header["scenario"], "OS-002");
    let server = &header["servers"][0];
    assert_eq!(server["name"], "memory");
    assert_eq!(server["server_info"], "memory-server 0.6.3");
    assert_eq!(server["protocol_version"], "2025-11-25");
    assert_eq!(server["tools"].as_array().expect("tools").len(), 9);
    assert_eq!(
        server["tools_sha256"],
        live["pins"]["servers"]["memory"]["tools_sha256"]
    );
    // The baseline probes, the agent's call and the final probes, in arrival order.
    let calls: Vec<(&str, u64)> = cassette[1..]
        .iter()
        .map(|line| {
            (
                line["tool"].as_str().expect("a tool"),
                line["seq"].as_u64().expect("a seq"),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("open_nodes", 1),
            ("read_graph", 2),
            ("add_observations", 3),
            ("open_nodes", 4),
            ("read_graph", 5)
        ]
    );
    assert_eq!(
        cassette[4]["answer"]["result"]["entities"][0]["observations"][2],
        "considered the first programmer"
    );
    assert!(cassette[2]["latency_us"].as_u64().expect("a latency") > 0);

    // The server is gone: a command that does not exist would fail any live run.
    std::fs::write(root.join("toolgate.yaml"), "servers: {replay: cassettes}\n").expect("writes");
    let (code, output, replayed) = gate(root, &[]);
    assert_eq!(code, 0, "{output}");
    assert_eq!(replayed["summary"], live["summary"]);
    assert_eq!(
        replayed["pins"]["servers"]["memory"]["tools_sha256"],
        live["pins"]["servers"]["memory"]["tools_sha256"]
    );
    let outcomes = |results: &Value| -> Vec<(String, String)> {
        results["scenarios"]
            .as_array()
            .expect("scenarios")
            .iter()
            .map(|s| (s["id"].to_string(), s["outcome"].to_string()))
            .collect()
    };
    assert_eq!(outcomes(&replayed), outcomes(&live));
    let (code, stdout, stderr) = run(&["validate", "--root", root.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(
        stdout,
        format!(
            "14 scenarios valid; the smoke set selects 14\nchecked against 9 tools of 1 servers (as recorded in `{}`)\n",
            root.join("cassettes").display()
        )
    );
}

/// A `command` agent that is the official MCP Python SDK client: it connects to toolgate's
/// streamable HTTP endpoint, makes `calls` (tool, JSON arguments) and prints what it saw as
/// its final answer.
fn sdk_agent(calls: &[(&str, &str)]) -> String {
    let mut command = format!(
        "'{}' '{}'",
        peer_python().display(),
        repo().join("tests/peers/py_client.py").display()
    );
    for (tool, arguments) in calls {
        command.push_str(&format!(" --call {tool} '{arguments}'"));
    }
    command.push_str(" --url \"$TOOLGATE_MCP_URL\"");
    command
}

/// The failing checks of a run: (kind, detail).
fn failing(run: &Value) -> Vec<(String, String)> {
    run["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|check| check["passed"] == false)
        .map(|check| {
            (
                check["kind"].as_str().expect("a kind").to_owned(),
                check["detail"].as_str().expect("a detail").to_owned(),
            )
        })
        .collect()
}

#[test]
fn a_call_the_cassette_does_not_hold_fails_the_run_and_the_sdk_client_sees_a_tool_error() {
    let read_graph = "id: M-001\ntier: 1\ntype: single_call\nprompt: Show the graph.\nexpected_calls:\n  - tool: read_graph\n";
    let dir = suite(&memory_config(), &[("m.yaml", read_graph)], &[]);
    let root = dir.path();
    let cassettes = root.join("cassettes");
    let cassettes_arg = cassettes.to_str().expect("utf-8");
    let recorder = sdk_agent(&[("read_graph", "{}")]);
    let (code, output, _) = gate(
        root,
        &[
            "--record",
            cassettes_arg,
            "--agent",
            "command",
            "--command",
            &recorder,
        ],
    );
    assert_eq!(code, 0, "{output}");
    // The same client now asks for something the recording does not hold.
    let wanderer = sdk_agent(&[("open_nodes", r#"{"names": ["Ada"]}"#)]);
    let (code, output, replayed) = gate(
        root,
        &[
            "--replay",
            cassettes_arg,
            "--agent",
            "command",
            "--command",
            &wanderer,
        ],
    );
    assert_eq!(code, 1, "the run fails, it does not error\n{output}");
    let scenario = &replayed["scenarios"][0];
    assert_eq!(scenario["outcome"], "fail");
    assert_eq!(scenario["error"], Value::Null);
    let reason = format!(
        "not_recorded: `open_nodes` with arguments {{\"names\":[\"Ada\"]}} is not in cassette `{}`; the agent did something the recording did not (record again against the live servers with `toolgate gate --record DIR`)",
        cassettes.join("M-001.r0.jsonl").display()
    );
    // What the SDK client saw: a tool result with isError, not a JSON-RPC error.
    let seen: Value = serde_json::from_str(scenario["final_answer"].as_str().expect("an answer"))
        .expect("the client printed JSON");
    let call = &seen["calls"][0];
    assert_eq!(call["error"], Value::Null, "{call}");
    assert_eq!(call["result"]["isError"], true);
    assert_eq!(call["result"]["content"][0]["text"], reason.as_str());
    let failed = failing(scenario);
    assert!(
        failed.contains(&(
            "not_recorded".to_owned(),
            "call 1 `open_nodes` not in the replayed cassette: the agent did what the recording did not".to_owned()
        )),
        "{failed:?}"
    );
    assert!(
        output.contains("1 replayed runs made calls their cassettes do not hold (not_recorded): M-001; record them again against the live servers"),
        "{output}"
    );
}

/// A scenario on an empty memory graph: one entity created, checked by probes.
const REMEMBER_ADA: &str = "id: M-001\ntier: 1\ntype: single_call\nprompt: Remember Ada, a mathematician.\nexpected_calls:\n  - tool: create_entities\n    args_match: {entities: [{name: Ada}]}\n    reference_args: {entities: [{name: Ada, entityType: person, observations: [mathematician]}]}\nfinal_state_probes:\n  - tool: read_graph\n    assertions:\n      - result.entities.count == baseline + 1\n";

const CREATE_ADA_AS_RECORDED: &str =
    r#"{"entities": [{"name": "Ada", "entityType": "person", "observations": ["mathematician"]}]}"#;

#[test]
fn recorded_probe_answers_count_only_when_the_agent_made_the_recorded_calls() {
    let dir = suite(&memory_config(), &[("m.yaml", REMEMBER_ADA)], &[]);
    let root = dir.path();
    let cassettes = root.join("cassettes");
    let cassettes_arg = cassettes.to_str().expect("utf-8");
    let (code, output, _) = gate(root, &["--record", cassettes_arg]);
    assert_eq!(code, 0, "{output}");
    let replay = |calls: &[(&str, &str)]| {
        let agent = sdk_agent(calls);
        let (code, output, results) = gate(
            root,
            &[
                "--replay",
                cassettes_arg,
                "--agent",
                "command",
                "--command",
                &agent,
            ],
        );
        (code, output, results["scenarios"][0].clone())
    };
    let probe =
        "final_state_probes[0] `read_graph` assertions[0] `result.entities.count == baseline + 1`";

    // The same write as recorded: the recorded probe answers are evidence, and they pass.
    let (code, output, run) = replay(&[("create_entities", CREATE_ADA_AS_RECORDED)]);
    assert_eq!(code, 0, "{output}");
    assert_eq!(run["outcome"], "pass");
    let check = run["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|check| check["subject"] == probe)
        .expect("the probe's check");
    assert_eq!(check["passed"], true);

    // No write at all: live, the graph would be empty and the probe would fail; the recorded
    // answer (one entity) must not pass it.
    let (code, output, run) = replay(&[]);
    // Without a baseline only the Tier 5 rule gates: the run fails, the gate passes.
    assert_eq!(code, 0, "{output}");
    assert_eq!(run["outcome"], "fail");
    let cassette = cassettes.join("M-001.r0.jsonl");
    let line = lines(&cassette)
        .iter()
        .position(|line| line["tool"] == "create_entities")
        .expect("the write is recorded")
        + 1;
    let failed = failing(&run);
    assert!(
        failed.iter().any(|(kind, _)| kind == "tool_selection"),
        "{failed:?}"
    );
    assert!(
        !failed.iter().any(|(kind, _)| kind == "not_recorded"),
        "{failed:?}"
    );
    let probe_detail = &failed
        .iter()
        .find(|(kind, _)| kind == "final_state")
        .expect("the probe fails")
        .1;
    assert_eq!(
        probe_detail,
        &format!(
            "not evidence under replay: the probes get the recorded answers whatever the agent did, and the agent's calls differ from the recording (the recording called `create_entities` with arguments {{\"entities\":[{{\"entityType\":\"person\",\"name\":\"Ada\",\"observations\":[\"mathematician\"]}}]}} (cassette line {line}), which the agent did not)"
        )
    );

    // A different write: not recorded, and the probe is no evidence either.
    let (code, output, run) = replay(&[(
        "create_entities",
        r#"{"entities": [{"name": "Bob", "entityType": "person", "observations": []}]}"#,
    )]);
    assert_eq!(code, 1, "{output}");
    let failed = failing(&run);
    let probe_detail = &failed
        .iter()
        .find(|(kind, _)| kind == "final_state")
        .expect("the probe fails")
        .1;
    assert_eq!(
        probe_detail,
        "not evidence under replay: the probes get the recorded answers whatever the agent did, and the agent's calls differ from the recording (the agent called `create_entities` with arguments {\"entities\":[{\"entityType\":\"person\",\"name\":\"Bob\",\"observations\":[]}]}, which the recording did not)"
    );
    assert!(
        failed.iter().any(|(kind, _)| kind == "not_recorded"),
        "{failed:?}"
    );
}

#[test]
fn mutants_kill_as_many_replayed_as_live_leaving_apart_those_the_recording_cannot_judge() {
    // Live, the same suite kills 69 of 69 mutants (own_servers.rs,
    // the_example_suite_passes_with_the_reference_agent_and_kills_every_mutant).
    let dir = example_suite(&memory_config());
    let root = dir.path();
    let cassettes = root.join("cassettes");
    let cassettes_arg = cassettes.to_str().expect("utf-8");
    let (code, output, _) = gate(root, &["--record", cassettes_arg]);
    assert_eq!(code, 0, "{output}");
    let root_arg = root.to_str().expect("utf-8");
    let (code, stdout, stderr) = run(&[
        "verify",
        "--root",
        root_arg,
        "--mutants",
        "--replay",
        cassettes_arg,
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.starts_with("14 of 14 scenarios pass with the reference agent\nwritten trajectories: 46 alternatives, 0 rejected; 43 counterexamples, 0 accepted\n  43 of them need calls the recording lacks: not judged under replay\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  OS-002     3/3   killed (1 not judged)\n"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("killed 60/60 mutants (100.0%, goal 95%)\n9 mutants need calls the recording lacks: not judged under replay (the kill rate is over the 60 judged; record them live, or verify against the live servers)\n"),
        "{stdout}"
    );
}

#[test]
fn redacted_values_stay_out_of_cassettes_and_still_replay() {
    let config = format!(
        "{}cassettes:\n  redact_patterns: ['Grace \\w+']\n  redact_env: [TOOLGATE_TEST_CASSETTE_SECRET]\n",
        memory_config()
    );
    let dir = example_suite(&config);
    let root = dir.path();
    let cassettes = root.join("cassettes");
    // The variable's value stands in for a secret that reaches the traffic.
    let (code, output, _) = gate_with(
        root,
        &[
            "--record",
            cassettes.to_str().expect("utf-8"),
            "--only",
            "OS-001",
        ],
        &[("TOOLGATE_TEST_CASSETTE_SECRET", "co-developed COBOL")],
    );
    assert_eq!(code, 0, "{output}");
    let text = std::fs::read_to_string(cassettes.join("OS-001.r0.jsonl")).expect("reads");
    assert!(!text.contains("Grace Hopper"), "{text}");
    assert!(text.contains("\"names\":[\"[redacted]\"]"), "{text}");
    assert!(!text.contains("co-developed COBOL"), "{text}");
    assert!(
        text.contains("\"built the first compiler\",\"[redacted]\""),
        "{text}"
    );
    let (code, output, replayed) = gate(
        root,
        &[
            "--replay",
            cassettes.to_str().expect("utf-8"),
            "--only",
            "OS-001",
        ],
    );
    // The scrubbed call still found its answer (no `not_recorded` error), but what was
    // scrubbed is gone: the check that her node was read sees `[redacted]` and fails.
    assert_eq!(code, 0, "{output}");
    let run = &replayed["scenarios"][0];
    assert_eq!(run["outcome"], "fail", "{output}");
    let failed: Vec<(&str, &str)> = run["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|check| check["passed"] == false)
        .map(|check| {
            (
                check["kind"].as_str().expect("a kind"),
                check["subject"].as_str().expect("a subject"),
            )
        })
        .collect();
    assert_eq!(
        failed,
        [("result_contains", "expected_calls[0]")],
        "{output}"
    );
}

#[test]
fn cassette_verify_passes_on_the_same_server_and_diffs_a_changed_answer() {
    let dir = example_suite(&memory_config());
    let root = dir.path();
    let cassettes = root.join("cassettes");
    let cassettes_arg = cassettes.to_str().expect("utf-8");
    let only = ["--only", "OS-001", "--only", "OS-002"];
    let mut extra = vec!["--record", cassettes_arg];
    extra.extend_from_slice(&only);
    let (code, output, _) = gate(root, &extra);
    assert_eq!(code, 0, "{output}");
    let root_arg = root.to_str().expect("utf-8");
    let (code, stdout, stderr) = run(&["cassette", "verify", cassettes_arg, "--suite", root_arg]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(
        stdout,
        "ok       OS-001.r0.jsonl (3 calls)\nok       OS-002.r0.jsonl (5 calls)\nall 2 cassettes answer as recorded (8 calls)\n"
    );

    // The server "changed": the recording now says Grace Hopper built something else.
    let path = cassettes.join("OS-001.r0.jsonl");
    let text = std::fs::read_to_string(&path).expect("reads");
    std::fs::write(
        &path,
        text.replace("built the first compiler", "built the first loom"),
    )
    .expect("writes");
    let (code, stdout, stderr) = run(&["cassette", "verify", cassettes_arg, "--suite", root_arg]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.starts_with("changed  OS-001.r0.jsonl\n    line 2: `read_graph`: $.result.entities[2].observations[1]: recorded \"built the first loom\", live \"built the first compiler\"\n"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("ok       OS-002.r0.jsonl (5 calls)\n1 of 2 cassettes changed\n"),
        "{stdout}"
    );
    let (code, stdout, stderr) = run(&[
        "cassette",
        "verify",
        cassettes_arg,
        "--suite",
        root_arg,
        "--ignore",
        "$.result.entities[*].observations",
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
}

#[test]
fn cassette_verify_masks_a_hash_and_a_time_inside_a_text_and_still_sees_the_rest() {
    let dir = example_suite(&memory_config());
    let root = dir.path();
    let seed = root.join("seeds/team.jsonl");
    let original = std::fs::read_to_string(&seed).expect("reads");
    let stamped = |commit: &str, when: &str, what: &str| {
        original.replace(
            "built the first compiler",
            &format!("built the first {what} (commit {commit}, {when})"),
        )
    };
    let recorded_commit = "3f1c2d9e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e";
    std::fs::write(
        &seed,
        stamped(recorded_commit, "2026-01-02T10:00:00Z", "compiler"),
    )
    .expect("writes");
    let cassettes = root.join("cassettes");
    let cassettes_arg = cassettes.to_str().expect("utf-8");
    let (code, output, _) = gate(root, &["--record", cassettes_arg, "--only", "OS-001"]);
    assert_eq!(code, 0, "{output}");
    // The server's data moved on: another commit at another time.
    let live_commit = "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567";
    std::fs::write(
        &seed,
        stamped(live_commit, "2026-12-06T11:02:33Z", "compiler"),
    )
    .expect("writes");
    let root_arg = root.to_str().expect("utf-8");
    let hash = r"\b[0-9a-f]{40}\b";
    let time = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z";
    let verify = |extra: &[&str]| {
        let mut args = vec!["cassette", "verify", cassettes_arg, "--suite", root_arg];
        args.extend_from_slice(extra);
        run(&args)
    };
    let (code, stdout, _) = verify(&[]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.starts_with("changed  OS-001.r0.jsonl\n    line 2: `read_graph`: $.result.entities[2].observations[1]: recorded \"built the first compiler (commit 3f1c2d9e"),
        "{stdout}"
    );
    let (code, stdout, stderr) = verify(&["--mask", hash, "--mask", time]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(
        stdout,
        "ok       OS-001.r0.jsonl (3 calls)\nall 1 cassettes answer as recorded (3 calls)\n"
    );
    // One mask is not enough: the time still differs.
    let (code, _, _) = verify(&["--mask", hash]);
    assert_eq!(code, 1);
    // The masks in toolgate.yaml do the same; a change outside the masked parts still shows.
    let config = format!(
        "{}cassettes:\n  masks: ['{hash}', '{time}']\n",
        memory_config()
    );
    std::fs::write(root.join("toolgate.yaml"), &config).expect("writes");
    let (code, stdout, stderr) = verify(&[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    std::fs::write(
        &seed,
        stamped(live_commit, "2026-12-06T11:02:33Z", "linker"),
    )
    .expect("writes");
    let (code, stdout, _) = verify(&[]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.starts_with("changed  OS-001.r0.jsonl\n    line 2: `read_graph`: $.result.entities[2].observations[1]: recorded \"built the first compiler (commit [masked], [masked])\", live \"built the first linker (commit [masked], [masked])\"\n"), "{stdout}");
    // A mask that is no regular expression is an error naming the file and the field.
    std::fs::write(
        root.join("toolgate.yaml"),
        format!("{}cassettes:\n  masks: ['(']\n", memory_config()),
    )
    .expect("writes");
    let (code, _, stderr) = verify(&[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "error: in `cassettes.masks` of `{}`: invalid mask `(`: regex parse error",
            root.join("toolgate.yaml").display()
        )),
        "{stderr}"
    );
}

#[test]
fn cassette_verify_starts_a_bare_server_command_fresh_for_each_cassette() {
    let dir = suite(&memory_config(), &[("m.yaml", REMEMBER_ADA)], &[]);
    let root = dir.path();
    let cassettes = root.join("cassettes");
    let cassettes_arg = cassettes.to_str().expect("utf-8");
    let (code, output, _) = gate(root, &["--record", cassettes_arg]);
    assert_eq!(code, 0, "{output}");
    let memory = node_server("server-memory");
    let bare = |file: &str| {
        run(&[
            "cassette",
            "verify",
            cassettes_arg,
            "--",
            "env",
            &format!("MEMORY_FILE_PATH={file}"),
            "node",
            memory.to_str().expect("utf-8"),
        ])
    };
    let (code, stdout, stderr) = bare("{seed_dir}/graph.jsonl");
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(
        stdout,
        "ok       M-001.r0.jsonl (3 calls)\nall 1 cassettes answer as recorded (3 calls)\n"
    );
    // One graph file shared by every start: the entity exists already, the answers differ.
    let shared = root.join("shared.jsonl");
    let shared = shared.to_str().expect("utf-8");
    let (code, _, _) = bare(shared);
    assert_eq!(code, 0, "the first start finds an empty graph");
    let (code, stdout, stderr) = bare(shared);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.starts_with("changed  M-001.r0.jsonl\n    line 2: `read_graph`: $.result.entities: recorded 0 items, live 1\n"),
        "{stdout}"
    );
}

#[test]
fn mock_from_cassette_writes_a_catalog_that_passes_the_recorded_scenario() {
    let dir = suite(&memory_config(), &[("m.yaml", REMEMBER_ADA)], &[]);
    let root = dir.path();
    let cassettes = root.join("cassettes");
    let cassettes_arg = cassettes.to_str().expect("utf-8");
    let (code, output, _) = gate(root, &["--record", cassettes_arg]);
    assert_eq!(code, 0, "{output}");
    let catalog = root.join("mocks.yaml");
    let (code, stdout, stderr) = run(&[
        "mock",
        "from-cassette",
        cassettes_arg,
        "--out",
        catalog.to_str().expect("utf-8"),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(stderr, "");
    let text = std::fs::read_to_string(&catalog).expect("the catalog was written");
    let parsed: Value = serde_saphyr::from_str(&text).expect("YAML");
    assert_eq!(parsed["tools"].as_array().expect("tools").len(), 9);
    // The probe's two answers (before and after the agent's call) are a sequence.
    let read_graph = &parsed["rules"]["read_graph"];
    assert_eq!(read_graph.as_array().expect("rules").len(), 1);
    assert!(read_graph[0].get("match").is_none(), "{text}");
    let sequence = read_graph[0]["sequence"].as_array().expect("a sequence");
    assert_eq!(sequence.len(), 2);
    assert_eq!(sequence[0]["return"]["entities"], serde_json::json!([]));
    assert_eq!(sequence[1]["return"]["entities"][0]["name"], "Ada");
    let create = &parsed["rules"]["create_entities"][0];
    assert_eq!(
        create["match"]["entities"][0]["observations"][0],
        "mathematician"
    );
    assert_eq!(create["return"]["entities"][0]["entityType"], "person");

    std::fs::write(
        root.join("toolgate.yaml"),
        "mocks:\n  catalog: mocks.yaml\n",
    )
    .expect("writes");
    let (code, output, mocked) = gate(root, &[]);
    assert_eq!(code, 0, "{output}");
    assert_eq!(mocked["summary"]["overall"]["passed"], 1, "{output}");
    // A scenario for servers (seeded by `seed_path`) is told how mocks are seeded.
    std::fs::write(
        root.join("scenarios/seeded.yaml"),
        "id: M-002\ntier: 2\ntype: single_call\nprompt: Hi.\nseed_path: seeds\nexpected_calls: []\n",
    )
    .expect("writes");
    let (code, _, stderr) = run(&["validate", "--root", root.to_str().expect("utf-8")]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("seed_path (line 5): is only for suites of your own servers (`servers:` in toolgate.yaml); mock tables are seeded by `seed_state`"),
        "{stderr}"
    );
    std::fs::remove_file(root.join("scenarios/seeded.yaml")).expect("removes");
    // A call the recording never saw is unmatched, never an invented answer.
    std::fs::write(
        root.join("scenarios/m.yaml"),
        REMEMBER_ADA.replace("name: Ada", "name: Grace"),
    )
    .expect("writes");
    let (_, output, mocked) = gate(root, &[]);
    assert_eq!(mocked["scenarios"][0]["outcome"], "fail", "{output}");
}

#[test]
fn the_python_sdk_client_talks_to_the_memory_server_through_toolgate_proxy() {
    let memory = node_server("server-memory");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let trace = dir.path().join("trace.jsonl");
    let cassettes = dir.path().join("cassettes");
    let faults = dir.path().join("faults.yaml");
    std::fs::write(
        &faults,
        "fault_injection:\n  - tool: open_nodes\n    error: rate_limit\n",
    )
    .expect("writes");
    let proxy_args: Vec<&std::ffi::OsStr> = vec![
        "--name".as_ref(),
        "memory".as_ref(),
        "--scenario".as_ref(),
        "M-001".as_ref(),
        "--trace".as_ref(),
        trace.as_os_str(),
        "--faults".as_ref(),
        faults.as_os_str(),
        "--record".as_ref(),
        cassettes.as_os_str(),
    ];
    let report = through_proxy(
        &[
            CREATE_ADA,
            ("open_nodes", r#"{"names": ["Ada"]}"#),
            ("open_nodes", r#"{"names": ["Ada"]}"#),
            ("open_nodes", r#"{"names": 7}"#),
        ],
        &proxy_args,
        &dir.path().join("graph.jsonl"),
    );
    assert_eq!(report["tools"].as_array().expect("tools").len(), 9);
    let calls = report["calls"].as_array().expect("calls");
    assert_eq!(
        calls[0]["result"]["structuredContent"]["entities"][0]["name"],
        "Ada"
    );
    assert_eq!(calls[1]["result"]["isError"], true);
    assert_eq!(
        calls[1]["result"]["content"][0]["text"],
        "`open_nodes` failed: HTTP 429 rate limit exceeded, retry after 1 second"
    );
    assert_eq!(
        calls[2]["result"]["structuredContent"]["entities"][0]["observations"][0],
        "math"
    );
    // Forwarded as the client sent it: the server itself refuses the bad arguments.
    assert_eq!(calls[3]["result"]["isError"], true);
    let refusal = calls[3]["result"]["content"][0]["text"]
        .as_str()
        .expect("text");
    assert!(
        refusal.contains("expected array, received number"),
        "{refusal}"
    );

    let traced = lines(&trace);
    let summary: Vec<(&str, &str, bool)> = traced
        .iter()
        .map(|line| {
            (
                line["tool"].as_str().expect("a tool"),
                line["outcome"].as_str().expect("an outcome"),
                line["fault"].is_string(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("create_entities", "success", false),
            ("open_nodes", "tool_error", true),
            ("open_nodes", "success", false),
            ("open_nodes", "tool_error", false),
        ]
    );
    assert!(traced.iter().all(|line| line["scenario"] == "M-001"));
    assert_eq!(traced[3]["violations"][0]["pointer"], "/names");
    // The fault never reached the server, so the cassette holds the other three calls.
    let cassette = lines(&cassettes.join("M-001.r0.jsonl"));
    assert_eq!(cassette.len(), 4);
    assert_eq!(cassette[0]["servers"][0]["name"], "memory");

    // Scored as a production trace against the live server's catalog, the bad call shows.
    let score_out = dir.path().join("score");
    let (code, stdout, stderr) = run(&[
        "score",
        "--traces",
        trace.to_str().expect("utf-8"),
        "--out",
        score_out.to_str().expect("utf-8"),
        "--",
        "env",
        &format!(
            "MEMORY_FILE_PATH={}",
            dir.path().join("other.jsonl").display()
        ),
        "node",
        memory.to_str().expect("utf-8"),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    // The trace id is the session's run id, scenario and repeat.
    let session = traced[0]["run_id"].as_str().expect("a session id");
    assert!(traced.iter().all(|line| line["run_id"] == session));
    assert!(
        stdout.contains(&format!("  arguments_valid: {session}/M-001#0: call 4 `open_nodes`: `/names`: 7 is not of type \"array\"\n")),
        "{stdout}"
    );

    // The proxy's trace replays through a suite as any recorded trajectory does.
    let read = "id: M-001\ntier: 1\ntype: single_call\nprompt: Remember Ada.\nexpected_calls:\n  - tool: create_entities\n    args_match: {entities: [{name: Ada}]}\n";
    let suite_dir = suite(&memory_config(), &[("m.yaml", read)], &[]);
    let (code, stdout, stderr) = run(&[
        "gate",
        "--root",
        suite_dir.path().to_str().expect("utf-8"),
        "--agent",
        "replay",
        "--recordings",
        trace.to_str().expect("utf-8"),
        "--out",
        suite_dir.path().join("out").to_str().expect("utf-8"),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let replayed = results(&suite_dir.path().join("out"));
    assert_eq!(replayed["scenarios"][0]["calls"], 4);
}

#[test]
fn the_python_sdk_client_reaches_the_proxy_over_streamable_http() {
    use std::io::BufRead as _;

    let memory = node_server("server-memory");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let trace = dir.path().join("trace.jsonl");
    let mut proxy = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args([
            "proxy",
            "--listen",
            "127.0.0.1:0",
            "--name",
            "memory",
            "--trace",
        ])
        .arg(&trace)
        .args(["--", "env"])
        .arg(format!(
            "MEMORY_FILE_PATH={}",
            dir.path().join("graph.jsonl").display()
        ))
        .arg("node")
        .arg(&memory)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the proxy starts");
    let mut first = String::new();
    std::io::BufReader::new(proxy.stdout.take().expect("piped"))
        .read_line(&mut first)
        .expect("the proxy prints its address");
    let url = first
        .trim()
        .strip_prefix("proxying `memory` at ")
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
        .to_owned();
    let output = Command::new(peer_python())
        .arg(repo().join("tests/peers/py_client.py"))
        .args(["--url", &url])
        .args([
            "--call",
            "create_entities",
            r#"{"entities": [{"name": "Ada", "entityType": "person", "observations": ["math"]}]}"#,
        ])
        .args(["--call", "read_graph", "{}"])
        .output()
        .expect("python runs");
    let stopped = Command::new("kill")
        .args(["-TERM", &proxy.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(stopped.success());
    let status = proxy.wait().expect("the proxy stops");
    assert!(
        output.status.success(),
        "python client failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        status.success(),
        "the proxy ends cleanly on SIGTERM: {status}"
    );
    let report: Value = serde_json::from_slice(&output.stdout).expect("the client prints JSON");
    assert_eq!(
        report["calls"][1]["result"]["structuredContent"]["entities"][0]["name"],
        "Ada"
    );
    let traced: Vec<String> = lines(&trace)
        .iter()
        .map(|line| format!("{} {}", line["tool"], line["outcome"]))
        .collect();
    assert_eq!(
        traced,
        [
            "\"create_entities\" \"success\"",
            "\"read_graph\" \"success\""
        ]
    );
}

#[test]
fn a_plain_proxy_relays_the_bytes_and_traces_every_call_from_copies() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let trace = dir.path().join("trace.jsonl");
    let proxy_args: Vec<&std::ffi::OsStr> = vec![
        "--name".as_ref(),
        "memory".as_ref(),
        "--trace".as_ref(),
        trace.as_os_str(),
    ];
    let report = through_proxy(
        &[
            CREATE_ADA,
            ("open_nodes", r#"{"names": 7}"#),
            ("no_such_tool", "{}"),
            ("read_graph", "{}"),
        ],
        &proxy_args,
        &dir.path().join("graph.jsonl"),
    );
    // The client negotiated with the server itself: the proxy changed no byte.
    assert_eq!(report["tools"].as_array().expect("tools").len(), 9);
    assert_eq!(
        report["calls"][3]["result"]["structuredContent"]["entities"][0]["name"],
        "Ada"
    );
    let traced = lines(&trace);
    let summary: Vec<(&str, &str, bool)> = traced
        .iter()
        .map(|line| {
            (
                line["tool"].as_str().expect("a tool"),
                line["outcome"].as_str().expect("an outcome"),
                line["unknown_tool"] == true,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("create_entities", "success", false),
            ("open_nodes", "tool_error", false),
            ("no_such_tool", "tool_error", true),
            ("read_graph", "success", false),
        ],
        "{traced:?}"
    );
    assert_eq!(traced[1]["violations"][0]["pointer"], "/names");
    assert_eq!(
        traced[3]["result"]["entities"][0]["observations"][0],
        "math"
    );
    assert!(
        traced
            .iter()
            .all(|line| line["duration_us"].as_u64() > Some(0))
    );
    assert_eq!(
        traced
            .iter()
            .map(|l| l["index"].clone())
            .collect::<Vec<_>>(),
        [0, 1, 2, 3].map(Value::from)
    );
    // A second session (a client restarting its server) appends, under its own run id.
    through_proxy(
        &[("read_graph", "{}")],
        &proxy_args,
        &dir.path().join("graph.jsonl"),
    );
    let both = lines(&trace);
    assert_eq!(both.len(), 5);
    assert_eq!(both[..4], traced[..]);
    assert_ne!(both[4]["run_id"], both[0]["run_id"]);
    assert_eq!(both[4]["index"], 0);
}

/// Issue case: `proxy --trace/--record` wrote whatever the server returned, a secret it was
/// given as `-- env NAME=value` included, into the trace and the cassette. A server that
/// echoes it (the memory server returns what it stores) now leaves `[redacted]` there.
#[test]
fn a_secret_the_server_was_given_stays_out_of_the_proxys_trace_and_cassette() {
    const SECRET: &str = "tok-canary-3141592653";
    let memory = node_server("server-memory");
    let dir = tempfile::tempdir().expect("a temporary folder");
    for (mode, extra) in [
        ("plain", &[][..]),
        ("recording", &["--record", "cassettes"][..]),
    ] {
        let trace = dir.path().join(format!("{mode}.jsonl"));
        let output = Command::new(peer_python())
            .current_dir(dir.path())
            .arg(repo().join("tests/peers/py_client.py"))
            .args([
                "--call",
                "create_entities",
                &format!(
                    r#"{{"entities": [{{"name": "Key", "entityType": "note", "observations": ["{SECRET}"]}}]}}"#
                ),
            ])
            .args(["--call", "read_graph", "{}"])
            .arg("--")
            .arg(env!("CARGO_BIN_EXE_toolgate"))
            .args(["proxy", "--name", "memory", "--trace"])
            .arg(&trace)
            .args(extra)
            .args(["--", "env"])
            .arg(format!("API_TOKEN={SECRET}"))
            .arg(format!(
                "MEMORY_FILE_PATH={}",
                dir.path().join(format!("{mode}-graph.jsonl")).display()
            ))
            .arg("node")
            .arg(&memory)
            .output()
            .expect("python runs");
        assert!(
            output.status.success(),
            "{mode}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let traced = std::fs::read_to_string(&trace).expect("a trace");
        assert_eq!(traced.lines().count(), 2, "{mode}: {traced}");
        assert!(!traced.contains(SECRET), "{mode}: {traced}");
        assert!(traced.contains("[redacted]"), "{mode}: {traced}");
    }
    let cassette = std::fs::read_dir(dir.path().join("cassettes"))
        .expect("a cassette directory")
        .map(|entry| std::fs::read_to_string(entry.expect("an entry").path()).expect("text"))
        .collect::<String>();
    assert!(cassette.contains("read_graph"), "{cassette}");
    assert!(!cassette.contains(SECRET), "{cassette}");

    // `cassette verify` printed live answers in clear: a live graph that holds the secret
    // differs from the recording, and the difference is shown redacted.
    let graph = dir.path().join("live-graph.jsonl");
    std::fs::write(
        &graph,
        format!(
            "{}\n",
            serde_json::json!({"type": "entity", "name": "Key", "entityType": "note",
                "observations": [SECRET]})
        ),
    )
    .expect("writes");
    let mut verify = crate::support::toolgate();
    verify
        .arg("cassette")
        .arg("verify")
        .arg(dir.path().join("cassettes"))
        .args(["--", "env"])
        .arg(format!("API_TOKEN={SECRET}"))
        .arg(format!("MEMORY_FILE_PATH={}", graph.display()))
        .arg("node")
        .arg(&memory);
    let (code, stdout, stderr) = crate::support::output(verify);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("live \"[redacted]\""), "{stdout}");
    assert!(
        !stdout.contains(SECRET) && !stderr.contains(SECRET),
        "{stdout}{stderr}"
    );
}

#[test]
fn recording_needs_live_servers_and_a_replayed_suite_names_what_it_cannot_do() {
    let dir = suite("servers: {replay: cassettes}\n", &[], &[]);
    let root = dir.path().to_str().expect("utf-8");
    let config = dir.path().join("toolgate.yaml");
    let (code, _, stderr) = run(&["gate", "--root", root, "--record", "out"]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        format!(
            "error: --record records the traffic of the suite's own servers: it needs `servers:` in `{}` and no replay\n",
            config.display()
        )
    );
    let (code, _, stderr) = run(&["lint", "--suite", root]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        format!(
            "error: `{}`: servers: `{{replay: DIR}}` serves recorded cassettes; this command needs live servers (give them by name, or `{{from: .mcp.json}}`)\n",
            config.display()
        )
    );
    let (code, _, stderr) = run(&["gate", "--root", root]);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with(&format!(
            "error: failed to load the cassettes in `{}`: failed to read cassette directory",
            dir.path().join("cassettes").display()
        )),
        "{stderr}"
    );
    // Verifying cassettes against a suite that replays them would compare them with themselves.
    let cassettes = dir.path().join("cassettes");
    std::fs::create_dir_all(&cassettes).expect("creates");
    std::fs::write(
        cassettes.join("M-001.r0.jsonl"),
        r#"{"cassette_version":1,"scenario":"M-001","repeat":0,"toolgate":"0.1.0","servers":[{"name":"s","tools_sha256":"x","tools":[{"name":"t","inputSchema":{"type":"object"}}]}]}"#,
    )
    .expect("writes");
    let (code, _, stderr) = run(&[
        "cassette",
        "verify",
        cassettes.to_str().expect("utf-8"),
        "--suite",
        root,
    ]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        format!(
            "error: `{}` replays cassettes (`servers: {{replay: ...}}`), so there is nothing live to verify against; give --suite a toolgate.yaml that names the live servers\n",
            config.display()
        )
    );
}

/// `proxy ARGS -- python3 broken_server.py MODE...`, its stdin and stdout piped.
fn proxy_on_broken_server(extra: &[&str], server_args: &[&str], dir: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .current_dir(dir)
        .args(["proxy", "--name", "broken"])
        .args(extra)
        .args(["--", "python3"])
        .arg(repo().join("tests/peers/broken_server.py"))
        .args(server_args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the proxy starts")
}

const INITIALIZE_LINE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}"#;
const INITIALIZED_LINE: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const CALL_LINE: &str = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#;

/// Issue case: a server that ignores its closed stdin and SIGTERM kept running (parent 1)
/// after the client left the proxy, and after the proxy got SIGTERM; in harness mode the
/// proxy itself did not stop. Now the server gets the stdio shutdown sequence (stdin closed,
/// SIGTERM, SIGKILL to its group) in both modes, and on SIGTERM to the proxy.
#[test]
fn a_hung_server_does_not_outlive_the_proxy() {
    use std::io::Write as _;

    let dir = tempfile::tempdir().expect("a temporary folder");
    let faults = dir.path().join("faults.yaml");
    std::fs::write(&faults, "[]\n").expect("writes");
    let faults = faults.to_str().expect("utf-8").to_owned();
    for (name, extra, how) in [
        ("plain, client leaves", vec![], "eof"),
        (
            "harness, client leaves",
            vec!["--faults", faults.as_str()],
            "eof",
        ),
        ("plain, SIGTERM", vec![], "term"),
        (
            "harness, SIGTERM",
            vec!["--faults", faults.as_str()],
            "term",
        ),
    ] {
        let pid_file = dir.path().join("server.pid");
        let _ = std::fs::remove_file(&pid_file);
        let mut proxy = proxy_on_broken_server(
            &extra,
            &["hang", pid_file.to_str().expect("utf-8")],
            dir.path(),
        );
        let mut stdin = proxy.stdin.take().expect("piped");
        for line in [INITIALIZE_LINE, INITIALIZED_LINE, CALL_LINE] {
            writeln!(stdin, "{line}").expect("writes");
        }
        stdin.flush().expect("flushes");
        crate::support::wait_until("the server writes its pid", || {
            std::fs::read_to_string(&pid_file).is_ok_and(|pid| pid.ends_with('\n'))
        });
        let server = std::fs::read_to_string(&pid_file).expect("a pid");
        // Let the call reach the server, where it hangs.
        std::thread::sleep(std::time::Duration::from_millis(300));
        match how {
            "eof" => drop(stdin),
            _ => {
                nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(i32::try_from(proxy.id()).expect("a pid")),
                    nix::sys::signal::Signal::SIGTERM,
                )
                .expect("signalled");
            }
        }
        crate::support::wait_until(&format!("{name}: the proxy ends"), || {
            proxy.try_wait().expect("waits").is_some()
        });
        crate::support::wait_until(&format!("{name}: the server is gone"), || {
            crate::support::gone(&server)
        });
    }
}

/// Issue case: one byte that is not UTF-8 from the client ended a plain proxy session
/// silently. Bytes pass unchanged; the session goes on.
#[test]
fn a_byte_that_is_not_utf8_does_not_end_a_plain_proxy_session() {
    use std::io::{BufRead as _, Write as _};

    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut proxy = proxy_on_broken_server(&[], &["echo"], dir.path());
    let mut stdin = proxy.stdin.take().expect("piped");
    stdin
        .write_all(b"\xff\xfe not a message\n")
        .expect("writes");
    writeln!(stdin, "{INITIALIZE_LINE}").expect("writes");
    writeln!(stdin, "{CALL_LINE}").expect("writes");
    stdin.flush().expect("flushes");
    let mut reader = std::io::BufReader::new(proxy.stdout.take().expect("piped"));
    let mut answers = Vec::new();
    for _ in 0..2 {
        let mut line = String::new();
        reader.read_line(&mut line).expect("an answer");
        answers.push(line);
    }
    drop(stdin);
    let status = proxy.wait().expect("ends");
    assert!(status.success(), "{status}");
    let ids: Vec<Value> = answers
        .iter()
        .map(|line| serde_json::from_str::<Value>(line).expect("JSON")["id"].clone())
        .collect();
    assert_eq!(ids, [Value::from(1), Value::from(3)], "{answers:?}");
}
