//! The action's installer (`.github/install-toolgate.sh`) against a fake GitHub on loopback:
//! which release a pinned SHA, a tag or a branch ref installs, the checksum kept in the
//! action's tree, and the errors a repository without releases or a tampered binary gives.

use std::path::{Path, PathBuf};

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::repo;

const SHA: &str = "0123456789abcdef0123456789abcdef01234567";
const TARGET: &str = "x86_64-unknown-linux-gnu";

/// A release archive holding a `toolgate` that prints `toolgate VERSION`, packed as .ci/package
/// packs the Linux ones (`tar cJf`), and its SHA-256 line.
fn release_asset(dir: &Path, version: &str) -> (Vec<u8>, String) {
    let staging = dir.join(format!("staging-{version}"));
    std::fs::create_dir_all(&staging).expect("mkdir");
    let binary = staging.join("toolgate");
    std::fs::write(&binary, format!("#!/bin/sh\necho toolgate {version}\n")).expect("write");
    let made = std::process::Command::new("chmod")
        .arg("+x")
        .arg(&binary)
        .status()
        .expect("chmod");
    assert!(made.success());
    let asset = format!("toolgate-{version}-{TARGET}.tar.xz");
    let archive = dir.join(&asset);
    let made = std::process::Command::new("tar")
        .arg("cJf")
        .arg(&archive)
        .arg("-C")
        .arg(&staging)
        .arg("toolgate")
        .status()
        .expect("tar");
    assert!(made.success());
    let bytes = std::fs::read(&archive).expect("read");
    let sum = toolgate::fs::sha256_hex(&bytes);
    (bytes, format!("{sum}  {asset}\n"))
}

/// The action checked out as a runner does (`_actions/acme/toolgate/REF`), with the
/// installer and, when given, a checksum file in its tree.
fn action_dir(root: &Path, reference: &str, kept: Option<(&str, &str)>) -> PathBuf {
    let action = root.join("_actions/acme/toolgate").join(reference);
    std::fs::create_dir_all(action.join(".github")).expect("mkdir");
    std::fs::copy(
        repo().join(".github/install-toolgate.sh"),
        action.join(".github/install-toolgate.sh"),
    )
    .expect("copy the installer");
    if let Some((name, line)) = kept {
        std::fs::create_dir_all(action.join("checksums")).expect("mkdir");
        std::fs::write(action.join("checksums").join(name), line).expect("write");
    }
    action
}

/// Runs the installer for `action` against `server`; returns (code, stdout + stderr, the
/// `GITHUB_PATH` file's text).
fn install(
    root: &Path,
    action: &Path,
    server: &MockServer,
    version: &str,
) -> (i32, String, String) {
    let workspace = root.join("workspace");
    std::fs::create_dir_all(&workspace).expect("mkdir");
    let github_path = root.join("github_path");
    std::fs::write(&github_path, "").expect("write");
    let output = std::process::Command::new("bash")
        .arg(action.join(".github/install-toolgate.sh"))
        .env("GITHUB_ACTION_PATH", action)
        .env("GITHUB_WORKSPACE", &workspace)
        .env("RUNNER_TEMP", root.join("runner-temp"))
        .env("RUNNER_OS", "Linux")
        .env("RUNNER_ARCH", "X64")
        .env("GITHUB_API_URL", format!("{}/api", server.uri()))
        .env("GITHUB_SERVER_URL", server.uri())
        .env("GITHUB_PATH", &github_path)
        .env("INSTALL", "auto")
        .env("VERSION", version)
        .env_remove("GITHUB_TOKEN")
        .output()
        .expect("bash runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (
        output.status.code().unwrap_or(-1),
        text,
        std::fs::read_to_string(&github_path).expect("read"),
    )
}

async fn serve_asset(server: &MockServer, version: &str, bytes: Vec<u8>) {
    Mock::given(method("GET"))
        .and(path(format!(
            "/acme/toolgate/releases/download/{version}/toolgate-{version}-{TARGET}.tar.xz"
        )))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(bytes))
        .mount(server)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sha_pinned_action_installs_the_release_tagged_at_that_commit_checked_by_its_tree() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = MockServer::start().await;
    let (bytes, line) = release_asset(dir.path(), "v0.3.0");
    serve_asset(&server, "v0.3.0", bytes).await;
    Mock::given(method("GET"))
        .and(path("/api/repos/acme/toolgate/tags"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([
            {"name": "v0.4.0", "commit": {"sha": "ffffffffffffffffffffffffffffffffffffffff", "url": "x"}},
            {"name": "v0.3.0", "commit": {"sha": SHA, "url": "x"}}
        ])))
        .mount(&server)
        .await;
    let asset = format!("toolgate-v0.3.0-{TARGET}.tar.xz.sha256");
    let action = action_dir(dir.path(), SHA, Some((&asset, &line)));
    let root = dir.path().to_path_buf();
    let (code, text, github_path) =
        tokio::task::spawn_blocking(move || install(&root, &action, &server, ""))
            .await
            .expect("join");
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("toolgate v0.3.0"), "{text}");
    assert!(
        !text.contains("::warning"),
        "the tree's checksum was used: {text}"
    );
    assert!(github_path.ends_with("toolgate-bin\n"), "{github_path}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_binary_that_does_not_match_the_trees_checksum_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = MockServer::start().await;
    let (bytes, _) = release_asset(dir.path(), "v0.3.0");
    serve_asset(&server, "v0.3.0", bytes).await;
    let asset = format!("toolgate-v0.3.0-{TARGET}.tar.xz");
    let wrong = format!("{}  {asset}\n", "0".repeat(64));
    let action = action_dir(
        dir.path(),
        "v0.3.0",
        Some((&format!("{asset}.sha256"), &wrong)),
    );
    let root = dir.path().to_path_buf();
    let (code, text, github_path) =
        tokio::task::spawn_blocking(move || install(&root, &action, &server, ""))
            .await
            .expect("join");
    assert_ne!(code, 0, "{text}");
    assert!(text.contains("FAILED"), "{text}");
    assert_eq!(github_path, "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_ref_takes_the_latest_release_and_no_release_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = MockServer::start().await;
    let (bytes, line) = release_asset(dir.path(), "v0.5.1");
    serve_asset(&server, "v0.5.1", bytes).await;
    Mock::given(method("GET"))
        .and(path(format!(
            "/acme/toolgate/releases/download/v0.5.1/toolgate-v0.5.1-{TARGET}.tar.xz.sha256"
        )))
        .respond_with(ResponseTemplate::new(200).set_body_string(line))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/repos/acme/toolgate/releases/latest"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"tag_name": "v0.5.1", "name": "v0.5.1"})),
        )
        .mount(&server)
        .await;
    let action = action_dir(dir.path(), "main", None);
    let root = dir.path().to_path_buf();
    let (code, text, _) = tokio::task::spawn_blocking(move || install(&root, &action, &server, ""))
        .await
        .expect("join");
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("toolgate v0.5.1"), "{text}");
    assert!(
        text.contains("::warning title=toolgate::no checksum for toolgate-v0.5.1"),
        "{text}"
    );

    // A repository with no release at all.
    let empty = MockServer::start().await;
    let action = action_dir(dir.path(), "main", None);
    let root = dir.path().to_path_buf();
    let (code, text, _) = tokio::task::spawn_blocking(move || install(&root, &action, &empty, ""))
        .await
        .expect("join");
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains(
            "::error title=toolgate::acme/toolgate has no release to install (ref 'main')"
        ),
        "{text}"
    );
    assert!(text.contains("`version` input"), "{text}");
}
