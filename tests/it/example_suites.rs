//! The example suites on third-party stateful servers that answer in text: `examples/duckdb`
//! (`mcp-server-duckdb` on a database loaded from a .sql seed) and `examples/git`
//! (`mcp-server-git` on a repository built with pinned dates). Each is verified live against
//! its real server (installed by tests/peers/install.sh): every scenario passes with the
//! reference agent, every alternative passes, every counterexample fails and every mutant is
//! killed. Replaying the committed cassettes gives the same verdicts and the same kill rate,
//! and the gate runs hermetically from them, with no server at all.

use crate::support::{output, peer_missing, repo, toolgate};

/// One example suite and what its live verification must print.
struct Example {
    /// The suite root, relative to the repository.
    root: &'static str,
    /// The server program the suite starts, relative to the repository.
    server: &'static str,
    /// The first two lines of `verify --mutants`: the reference runs and the written
    /// trajectories.
    verified: &'static str,
    /// The last line of `verify --mutants` against the live server.
    killed: &'static str,
}

const DUCKDB: Example = Example {
    root: "examples/duckdb",
    server: "target/peers/venv-duckdb/bin/mcp-server-duckdb",
    verified: "8 of 8 scenarios pass with the reference agent\nwritten trajectories: 18 alternatives, 0 rejected; 26 counterexamples, 0 accepted\n",
    killed: "killed 35/35 mutants (100.0%, goal 95%)\n",
};

const GIT: Example = Example {
    root: "examples/git",
    server: "target/peers/venv-git/bin/mcp-server-git",
    verified: "8 of 8 scenarios pass with the reference agent\nwritten trajectories: 17 alternatives, 0 rejected; 24 counterexamples, 0 accepted\n",
    killed: "killed 45/45 mutants (100.0%, goal 95%)\n",
};

/// Whether the suite's server (and, for git, the `git` program) is installed; when not, the
/// test is skipped outside CI and fails under CI.
fn installed(example: &Example) -> bool {
    let git = std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    let missing = if !repo().join(example.server).exists() {
        format!("`{}` is not installed", example.server)
    } else if example.root.ends_with("git") && !git {
        "the `git` program is not installed".to_string()
    } else {
        return true;
    };
    peer_missing(
        &missing,
        "install it with `bash tests/peers/install.sh`, about a minute",
    );
    false
}

/// `toolgate ARGS` run in the repository root: exit code, stdout, stderr.
fn run(args: &[&str]) -> (i32, String, String) {
    let mut command = toolgate();
    command.current_dir(repo()).args(args);
    output(command)
}

/// The kill rate of a `verify --mutants` report, as printed (`"100.0%"`).
fn kill_rate(stdout: &str) -> &str {
    stdout
        .lines()
        .find_map(|line| line.strip_prefix("killed "))
        .and_then(|line| {
            line.split_once('(')?
                .1
                .split_once(',')
                .map(|(rate, _)| rate)
        })
        .unwrap_or_else(|| panic!("no kill rate in:\n{stdout}"))
}

/// The per-scenario lines of the reference runs: the first line, and every `FAILED` line.
fn reference_verdicts(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .take(1)
        .chain(stdout.lines().filter(|line| line.starts_with("  FAILED ")))
        .collect()
}

fn verifies_live_and_replayed_alike(example: &Example) {
    if !installed(example) {
        return;
    }
    let (code, live, stderr) = run(&["verify", "--root", example.root, "--mutants"]);
    assert_eq!(code, 0, "{live}{stderr}");
    assert!(live.starts_with(example.verified), "{live}");
    assert!(live.ends_with(example.killed), "{live}");

    let cassettes = format!("{}/cassettes", example.root);
    let (code, replayed, stderr) = run(&[
        "verify",
        "--root",
        example.root,
        "--mutants",
        "--replay",
        &cassettes,
    ]);
    assert_eq!(
        reference_verdicts(&replayed),
        reference_verdicts(&live),
        "{replayed}{stderr}"
    );
    for wrong in ["alternative rejected", "counterexample accepted"] {
        assert!(!replayed.contains(wrong), "{replayed}");
    }
    assert_eq!(kill_rate(&replayed), kill_rate(&live), "{replayed}");
    assert_eq!(code, 0, "{replayed}{stderr}");
}

#[test]
fn the_duckdb_example_verifies_live_and_from_its_cassettes_with_the_same_verdicts() {
    verifies_live_and_replayed_alike(&DUCKDB);
}

#[test]
fn the_git_example_verifies_live_and_from_its_cassettes_with_the_same_verdicts() {
    verifies_live_and_replayed_alike(&GIT);
}

/// No server is started: the gate CI runs on the examples needs nothing but the cassettes.
#[test]
fn both_examples_gate_hermetically_from_their_cassettes() {
    for example in [DUCKDB, GIT] {
        let out = tempfile::tempdir().expect("a temporary folder");
        let cassettes = format!("{}/cassettes", example.root);
        let (code, stdout, stderr) = run(&[
            "gate",
            "--root",
            example.root,
            "--all",
            "--replay",
            &cassettes,
            "--out",
            &out.path().display().to_string(),
        ]);
        assert_eq!(code, 0, "{}: {stdout}{stderr}", example.root);
        assert!(
            stdout.starts_with(&format!(
                "replayed: the servers' answers came from the cassettes in {cassettes}\n"
            )),
            "{stdout}"
        );
        assert!(
            stdout.contains("| all    |         8 |      8 |      0 |       0 |    100.0% |"),
            "{}: {stdout}",
            example.root
        );
    }
}
