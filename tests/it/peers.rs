//! Third-party MCP clients against `toolgate serve`: the official MCP Python SDK (PyPI
//! `mcp`), installed by tests/peers/install.sh into target/peers.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::support::repo;

/// The peers' Python (the MCP SDK's environment), installing the peers first when they are
/// missing.
pub(crate) fn peer_python() -> PathBuf {
    venv_python("venv", "import mcp")
}

/// The Python of the peers' virtual environment `venv` (under target/peers), installing the
/// peers first when `check` (Python code) fails in it.
pub(crate) fn venv_python(venv: &str, check: &str) -> PathBuf {
    let python = repo().join("target/peers").join(venv).join("bin/python");
    let ready = Command::new(&python)
        .args(["-c", check])
        .status()
        .is_ok_and(|s| s.success());
    if !ready {
        let status = crate::support::peer_installer()
            .status()
            .expect("the peer installer runs");
        assert!(status.success(), "tests/peers/install.sh failed");
    }
    python
}

fn python_client(mode: &str) -> Value {
    let output = Command::new(peer_python())
        .arg(repo().join("tests/peers/py_client.py"))
        .args(["--mode", mode])
        .args(["--call", "crm_get_contact", r#"{"contact_id": "C-001"}"#])
        .args(["--call", "crm_get_contact", r#"{"contact_id": "C-999"}"#])
        .args([
            "--call",
            "crm_log_activity",
            r#"{"contact_id": "C-001", "type": "phone"}"#,
        ])
        .args(["--call", "crm_no_such_tool", "{}"])
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "--fixture"])
        .arg(repo().join("fixtures/crm_baseline.json"))
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "python client failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the client prints JSON")
}

fn check_session(report: &Value) {
    let names: Vec<&str> = report["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names.len(), 43);
    assert_eq!(
        names[..8],
        [
            "crm_search_contacts",
            "crm_get_contact",
            "crm_create_contact",
            "crm_update_contact",
            "crm_delete_contact",
            "crm_log_activity",
            "crm_get_pipeline",
            "crm_forecast"
        ]
    );
    let calls = report["calls"].as_array().expect("calls");
    assert_eq!(
        calls[0]["result"]["structuredContent"]["name"],
        "Ada Lovelace"
    );
    assert_eq!(calls[0]["result"]["isError"], false);
    assert_eq!(calls[1]["result"]["isError"], true);
    assert_eq!(
        calls[1]["result"]["content"][0]["text"],
        "contact `C-999` not found; use crm_search_contacts to find the right id"
    );
    assert_eq!(calls[2]["result"]["isError"], true);
    assert_eq!(
        calls[2]["result"]["content"][0]["text"],
        r#"invalid arguments for `crm_log_activity`: `/type`: "phone" is not one of ["call","email","meeting","note"]"#
    );
    assert_eq!(calls[3]["error"]["code"], -32602);
}

#[test]
fn python_sdk_lists_and_calls_tools_on_toolgate_serve_with_current_protocol() {
    let report = python_client("auto");
    assert_eq!(report["protocolVersion"], "2026-07-28");
    check_session(&report);
}

#[test]
fn python_sdk_lists_and_calls_tools_on_toolgate_serve_with_handshake_protocol() {
    let report = python_client("legacy");
    assert_eq!(report["protocolVersion"], "2025-11-25");
    check_session(&report);
}
