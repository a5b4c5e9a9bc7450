//! `report.html` in a real browser: headless Chromium (Debian's `chromium`) driven by Playwright
//! for Python, both installed by tests/peers/install.sh (target/peers/venv-browser). The report
//! comes from real `gate` runs of the replay agent against a baseline; tests/peers/browser_check.py
//! opens it from disk, clicks and types as a reader would, and prints what the page showed and
//! did (console, dialogs, requests); the assertions are here.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::support::{output, peer_missing, repo, toolgate};

/// The browser environment's Python, or `None` (after saying why) when Chromium or Playwright is
/// not installed and this is not CI. Under CI (`CI` set) a missing browser fails the test:
/// .ci/run installs it.
fn browser_python() -> Option<PathBuf> {
    let python = repo().join("target/peers/venv-browser/bin/python");
    let missing = if !Path::new("/usr/bin/chromium").is_file() {
        "Chromium is not installed at /usr/bin/chromium"
    } else if !Command::new(&python)
        .args(["-c", "import playwright.sync_api"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
    {
        "Playwright is not installed in target/peers/venv-browser"
    } else {
        return Some(python);
    };
    peer_missing(
        missing,
        "`bash tests/peers/install.sh` installs it, as root, in under a minute",
    );
    None
}

fn json_file(path: &Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).expect("JSON")
}

/// Runs `toolgate` with `args` from the repository root; panics with its output unless it
/// exits with `expected`.
fn toolgate_ok(args: &[&str], expected: i32) {
    let mut command = toolgate();
    command.current_dir(repo()).args(args);
    let (code, stdout, stderr) = output(command);
    assert_eq!(code, expected, "toolgate {args:?}:\n{stdout}{stderr}");
}

/// The baseline every test here gates against: the reference agent over every scenario, its
/// results.json with the trace.jsonl beside it (which the side-by-side view reads), made once
/// per test process.
fn base_run() -> &'static Path {
    static BASE: OnceLock<PathBuf> = OnceLock::new();
    BASE.get_or_init(|| {
        let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report_browser-base");
        toolgate_ok(
            &[
                "gate",
                "--all",
                "--collect-only",
                "--out",
                &base.display().to_string(),
            ],
            0,
        );
        base
    })
}

/// The baseline's trajectories replayed with `edit` applied to each trace line, gated against
/// the baseline with `args` into `dir/head`, which is returned.
fn gate_edited_replay(
    dir: &Path,
    edit: impl Fn(&mut Value),
    args: &[&str],
    expected: i32,
) -> PathBuf {
    let base = base_run();
    let head = dir.join("head");
    let mut recordings = String::new();
    for line in std::fs::read_to_string(base.join("trace.jsonl"))
        .expect("the baseline's trace")
        .lines()
    {
        let mut line: Value = serde_json::from_str(line).expect("a trace line is JSON");
        edit(&mut line);
        recordings.push_str(&line.to_string());
        recordings.push('\n');
    }
    let recordings_path = dir.join("recordings.jsonl");
    std::fs::write(&recordings_path, recordings).expect("writes the recordings");
    let mut all = vec![
        "gate".to_owned(),
        "--agent".to_owned(),
        "replay".to_owned(),
        "--recordings".to_owned(),
        recordings_path.display().to_string(),
        "--all".to_owned(),
        "--baseline".to_owned(),
        base.join("results.json").display().to_string(),
        "--out".to_owned(),
        head.display().to_string(),
    ];
    all.extend(args.iter().map(|arg| (*arg).to_owned()));
    toolgate_ok(
        &all.iter().map(String::as_str).collect::<Vec<_>>(),
        expected,
    );
    head
}

/// browser_check.py on `report` with `args`: the facts it printed.
fn browser_check(python: &Path, report: &Path, args: &[&str]) -> Value {
    assert!(report.is_file(), "gate wrote no {}", report.display());
    let output = Command::new(python)
        .arg(repo().join("tests/peers/browser_check.py"))
        .arg(report)
        .args(args)
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "browser_check.py failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("browser_check.py prints JSON")
}

/// What the page did on its own: nothing. No console error or warning, no uncaught error, no
/// dialog, no request beyond the file itself.
fn assert_quiet(facts: &Value) {
    assert_eq!(facts["console"], json!([]), "console");
    assert_eq!(facts["page_errors"], json!([]), "page errors");
    assert_eq!(facts["dialogs"], json!([]), "dialogs");
    assert_eq!(facts["requests"], json!([]), "requests");
    let csp = facts["csp"]
        .as_str()
        .expect("a Content-Security-Policy meta tag");
    assert!(csp.contains("default-src 'none'"), "{csp}");
    // Nothing from a host and nothing inline beyond what the page hashes.
    for directive in csp.split(';') {
        for source in directive.split_whitespace().skip(1) {
            assert!(
                source == "'none'" || source.starts_with("'sha256-") || source == "data:",
                "`{source}` in the Content-Security-Policy `{csp}`"
            );
        }
    }
}

/// The scenario ids the facts list under `key` (`visible`, `hidden`).
fn ids(facts: &Value, key: &str) -> Vec<String> {
    facts[key]
        .as_array()
        .unwrap_or_else(|| panic!("no `{key}` in {facts}"))
        .iter()
        .map(|id| id.as_str().expect("an id").to_owned())
        .collect()
}

/// T2-003's two `crm_log_activity` calls (the second and third) name the wrong contact: the
/// run fails where the baseline passed, and its trajectory first differs at the second call.
fn wrong_contact_in_t2_003(line: &mut Value) {
    if line["scenario"] == "T2-003" && matches!(line["index"].as_u64(), Some(1 | 2)) {
        line["arguments"]["contact_id"] = json!("C-006");
    }
}

#[test]
fn a_regression_reads_in_the_browser_as_the_gate_decided_it() {
    let Some(python) = browser_python() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    // One failure in 78 stays inside the tolerance band; a 99% floor makes it a fail.
    let head = gate_edited_replay(
        dir.path(),
        wrong_contact_in_t2_003,
        &["--min-pass-rate", "99"],
        1,
    );
    let verdict = json_file(&head.join("verdict.json"));
    assert_eq!(verdict["decision"], "fail");
    let results = json_file(&head.join("results.json"));
    let mut failing: Vec<String> = results["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .filter(|s| s["outcome"] == "fail")
        .map(|s| s["id"].as_str().expect("an id").to_owned())
        .collect();
    failing.dedup();
    assert_eq!(failing, ["T2-003"]);

    let facts = browser_check(
        &python,
        &head.join("report.html"),
        &[
            "--change",
            "T2-003",
            "--filter",
            "filter-outcome=fail",
            "--filter",
            "filter-tier=5",
            "--search",
            "T3-01",
            "--filter",
            "filter-tool=crm_log_activity",
            "--filter",
            "filter-check=final_state",
            "--hash",
            "s-T2-011",
            "--hash",
            "s-T2-003~0",
        ],
    );
    assert_quiet(&facts);

    assert_eq!(facts["verdict"]["decision"], verdict["decision"]);
    let shown = facts["verdict"]["text"]
        .as_str()
        .expect("the verdict's text");
    assert!(shown.to_lowercase().contains("fail"), "{shown}");

    assert_eq!(
        facts["changes"],
        json!([{"change": "regressed", "scenario": "T2-003"}])
    );
    let change = &facts["change"];
    assert_eq!(change["visible_before_click"], false, "{change}");
    assert_eq!(change["open"], true, "{change}");
    assert_eq!(change["side_by_side_visible"], true, "{change}");
    for side in ["base", "head"] {
        let column = &change[side];
        assert_eq!(column["calls"], 3, "{side}: {change}");
        assert_eq!(column["calls_visible"], 3, "{side}: {change}");
        assert_eq!(column["first_diff"], json!([1]), "{side}: {change}");
    }
    assert_eq!(change["first_diff_count"], 2, "{change}");
    // Side by side: the differing pair on one line, base on the left.
    let (base_box, head_box) = (
        &change["base"]["first_diff_box"],
        &change["head"]["first_diff_box"],
    );
    let base_right =
        base_box["left"].as_f64().expect("left") + base_box["width"].as_f64().expect("width");
    assert!(
        base_right <= head_box["left"].as_f64().expect("left"),
        "{change}"
    );
    assert_eq!(base_box["top"], head_box["top"], "{change}");

    let scenarios = facts["scenarios"].as_array().expect("scenarios");
    assert_eq!(scenarios.len(), 90);
    assert_eq!(facts["shown_count"], "90");
    let t2_003 = scenarios
        .iter()
        .find(|s| s["scenario"] == "T2-003")
        .expect("T2-003 is listed");
    assert_eq!(t2_003["id"], "s-T2-003");
    assert_eq!(t2_003["outcome"], "fail");
    assert_eq!(t2_003["tier"], "2");
    assert_eq!(t2_003["type"], "error_recovery");
    assert_eq!(t2_003["runs"], json!(["s-T2-003~0"]));
    assert!(scenarios.iter().all(|s| s["open"] == false));

    let by_outcome = &facts["filters"][0];
    assert_eq!(ids(by_outcome, "visible"), failing);
    assert_eq!(by_outcome["shown_count"], "1");
    assert_eq!(ids(by_outcome, "hidden").len(), 89);
    let tier_5: Vec<String> = scenarios
        .iter()
        .filter(|s| s["tier"] == "5")
        .map(|s| s["scenario"].as_str().expect("an id").to_owned())
        .collect();
    assert_eq!(tier_5.len(), 15);
    let by_tier = &facts["filters"][1];
    assert_eq!(ids(by_tier, "visible"), tier_5);
    assert_eq!(by_tier["shown_count"], "15");

    let search = &facts["search"];
    assert_eq!(
        ids(search, "visible"),
        ["T3-010", "T3-011", "T3-012", "T3-013", "T3-014", "T3-015"],
        "{search}"
    );
    assert_eq!(search["shown_count"], "6");

    let by_tool = &facts["filters"][2];
    let mut calling: Vec<String> = std::fs::read_to_string(head.join("trace.jsonl"))
        .expect("the run's trace")
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a trace line is JSON"))
        .filter(|line| line["tool"] == "crm_log_activity")
        .map(|line| line["scenario"].as_str().expect("an id").to_owned())
        .collect();
    calling.dedup();
    assert!(calling.len() > 1, "{calling:?}");
    assert_eq!(ids(by_tool, "visible"), calling);
    assert_eq!(by_tool["shown_count"], calling.len().to_string());
    // T2-003's one failing check is its final state.
    let by_check = &facts["filters"][3];
    assert_eq!(ids(by_check, "visible"), ["T2-003"]);
    assert_eq!(by_check["shown_count"], "1");

    let [scenario, run] = facts["hash"].as_array().expect("anchors").as_slice() else {
        panic!("two anchors: {}", facts["hash"]);
    };
    assert_eq!(scenario["open"], json!(["T2-011"]), "{scenario}");
    assert_eq!(scenario["target"], "details", "{scenario}");
    assert_eq!(scenario["in_view"], true, "{scenario}");
    assert_eq!(run["open"], json!(["T2-003"]), "{run}");
    assert_eq!(run["target"], "div", "{run}");
    assert_eq!(run["in_view"], true, "{run}");
}

/// Markup and script in every form a tool result or an answer could smuggle into the page,
/// with bidirectional controls that could reorder what a reader sees.
const HOSTILE: &str = "<script>alert(1)</script><img src=x onerror=alert(2)>\
<svg onload=alert(3)></svg>\"'><iframe src=javascript:alert(4)></iframe>\
</pre></details></section><script>alert(5)</script><a href=\"javascript:alert(6)\">x</a>\
\u{202E}gnp.exe\u{202C} \u{2066}isolate\u{2069} \u{200F}rtl";

/// Hostile text where the trajectories carry it: the message T1-005 sends (its result echoes
/// it), the contact T2-007 creates, a call of T1-001 to a tool with a hostile name (an
/// unknown-tool error that names it), and answers, one of them over 1 MB.
fn hostile(line: &mut Value) {
    match (line["scenario"].as_str(), line["tool"].as_str()) {
        (Some("T1-005"), Some("comm_send_message")) => line["arguments"]["text"] = json!(HOSTILE),
        (Some("T2-007"), Some("crm_create_contact")) => line["arguments"]["name"] = json!(HOSTILE),
        (Some("T1-001"), Some(_)) => line["tool"] = json!(HOSTILE),
        (Some("T1-002"), None) => {
            line["final_answer"] = json!(format!("{}{HOSTILE}", "a long answer ".repeat(80_000)));
        }
        (Some(_), None) => line["final_answer"] = json!(HOSTILE),
        _ => {}
    }
}

#[test]
fn hostile_results_and_answers_run_no_script_and_fetch_nothing_in_the_browser() {
    let Some(python) = browser_python() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let head = gate_edited_replay(dir.path(), hostile, &[], 1);
    let report = head.join("report.html");
    let facts = browser_check(
        &python,
        &report,
        &[
            "--change",
            "T1-005",
            "--find",
            "<script>alert(1)</script>",
            "--find",
            "onerror=alert(2)",
            "--find",
            "a long answer ",
            "--find",
            "\u{202E}",
            "--find",
            "\u{2066}",
        ],
    );
    assert_quiet(&facts);
    assert_eq!(facts["event_attributes"], json!([]));
    assert_eq!(facts["injected"], json!([]));
    // Shown as text, not dropped.
    for needle in ["<script>alert(1)</script>", "onerror=alert(2)"] {
        let found = facts["found"][needle].as_u64().expect("a count");
        assert!(found >= 1, "`{needle}` is not shown as text: {found}");
    }
    // Bidirectional overrides and isolates never reach the page raw (Trojan Source,
    // CVE-2021-42574): they could reorder what a reviewer reads.
    assert_eq!(facts["found"]["\u{202E}"], 0);
    assert_eq!(facts["found"]["\u{2066}"], 0);
    // The 1 MB answer is shown, cut (docs/gate.md: each text to a few kilobytes).
    let long = facts["found"]["a long answer "].as_u64().expect("a count");
    assert!(
        (1..1_000).contains(&long),
        "{long} pieces of the 1 MB answer"
    );
    assert_eq!(facts["change"]["open"], true, "{}", facts["change"]);
    assert_eq!(
        facts["change"]["side_by_side_visible"], true,
        "{}",
        facts["change"]
    );
}
