//! Captures from text results, end to end on a real text-answering MCP server
//! (`mcp-server-sqlite`, which prints rows as Python reprs such as `[{'name': 'customers'}]`):
//! a table name captured from `list_tables` feeds `describe_table`, the reference answer is
//! templated from the reference run, a made-up name fails `args_from_prior`, and a declared
//! identifier argument whose value the run never saw is flagged as invented.

use crate::own_servers::{results, run, suite};
use crate::support::repo;

/// A table name no prompt mentions: the agent can only learn it from `list_tables`.
const TABLE: &str = "customers_x7";

/// The scenario: list the tables, describe the one listed (captured with a regex), and
/// answer with its name (captured again) and a column (captured with CEL).
const LISTED_THEN_DESCRIBED: &str = r#"id: S-010
tier: 2
type: multi_step
prompt: Which columns does the table in the shop database have?
seed_path: shop.db
identifiers: ["describe_table.table_name"]
expected_calls:
  - tool: list_tables
  - tool: describe_table
    args_from_prior:
      table_name: {from: "$.calls[0].result", regex: "'name': '(?P<value>\\w+)'"}
max_calls: 2
final_answer:
  contains_results:
    - {from: "$.calls[0].result", regex: "'name': '(\\w+)'"}
    - {from: "$.calls[1].result", cel: "value.split(\"'name': '\")[2].split(\"'\")[0]"}
reference_answer: "The table {{ $.calls[0].result | /'name': '(\\w+)'/ }} has the columns id and name."
TRAJECTORIES:
  - name: describes a table it made up
    WHY
    calls:
      - {tool: list_tables, arguments: {}}
      - {tool: describe_table, arguments: {table_name: customers}}
    answer: The table customers_x7 has the columns id and name.
"#;

/// The scenario as a file, with its written trajectory as a counterexample or an alternative.
fn listed_then_described(counterexample: bool) -> String {
    let (section, why) = if counterexample {
        (
            "counterexamples",
            "why: the table name is not the one list_tables returned",
        )
    } else {
        ("alternatives", "")
    };
    LISTED_THEN_DESCRIBED
        .replace("TRAJECTORIES", section)
        .replace("    WHY\n", &format!("    {why}\n"))
        .replace("    \n", "")
}

/// A suite on the SQLite server seeded with one table, [`TABLE`], holding `scenarios`.
fn sqlite_suite(scenarios: &[(&str, &str)]) -> tempfile::TempDir {
    crate::own_servers::install_peers();
    let config = format!(
        "servers:\n  shop:\n    command: '{}'\n    args: [--db-path, '{{seed}}']\n    exclude: [append_insight]\n",
        repo()
            .join("target/peers/venv-sqlite/bin/mcp-server-sqlite")
            .display()
    );
    let root = suite(&config, scenarios, &[]);
    let db = root.path().join("shop.db");
    let status = std::process::Command::new("python3")
        .args([
            "-c",
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('create table ' + sys.argv[2] + ' (id integer primary key, name text)'); c.execute(\"insert into \" + sys.argv[2] + \" (name) values ('Ann')\"); c.commit()",
            &db.display().to_string(),
            TABLE,
        ])
        .status()
        .expect("python3 runs");
    assert!(status.success(), "seeding the database failed");
    root
}

#[test]
fn a_name_captured_from_a_text_result_feeds_the_next_call_and_verify_passes() {
    let root = sqlite_suite(&[("s.yaml", &listed_then_described(true))]);
    let (code, stdout, stderr) = run(&[
        "verify",
        "--root",
        &root.path().display().to_string(),
        "--mutants",
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.starts_with("1 of 1 scenarios pass with the reference agent\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "written trajectories: 0 alternatives, 0 rejected; 1 counterexamples, 0 accepted\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("killed 7/7 mutants (100.0%, goal 95%)\n"),
        "{stdout}"
    );
}

#[test]
fn a_made_up_table_name_fails_args_from_prior_naming_the_capture() {
    let root = sqlite_suite(&[("s.yaml", &listed_then_described(false))]);
    let (code, stdout, stderr) = run(&[
        "verify",
        "--root",
        &root.path().display().to_string(),
        "--verbose",
    ]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains(&format!(
            "      expected_calls[1]: `table_name` is \"customers\", but `$.calls[0].result | /'name': '(?P<value>\\w+)'/` is \"{TABLE}\": not taken from the earlier result\n"
        )),
        "{stdout}"
    );
}

#[test]
fn the_reference_answer_is_filled_from_the_reference_run_and_the_identifier_is_checked() {
    let invented = "id: S-011\ntier: 1\ntype: single_call\nprompt: Which columns does the customer table have?\nseed_path: shop.db\nidentifiers: [\"describe_*.table_name\"]\nexpected_calls:\n  - tool: describe_table\n    reference_args: {table_name: customers_x7}\nmax_calls: 1\n";
    let root = sqlite_suite(&[
        ("s.yaml", &listed_then_described(true)),
        ("t.yaml", invented),
    ]);
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
    let listed = runs.iter().find(|r| r["id"] == "S-010").expect("S-010 ran");
    assert_eq!(
        listed["final_answer"],
        format!("The table {TABLE} has the columns id and name.")
    );
    assert_eq!(
        listed["metrics"]["provenance"],
        serde_json::json!([]),
        "a name inside the earlier text result was seen"
    );
    let guessed = runs.iter().find(|r| r["id"] == "S-011").expect("S-011 ran");
    assert_eq!(
        guessed["metrics"]["provenance"],
        serde_json::json!([{"call": 0, "tool": "describe_table", "pointer": "/table_name", "value": TABLE, "kind": "invented"}])
    );
}

#[test]
fn a_bad_capture_is_a_load_error_naming_file_field_and_line() {
    let broken = listed_then_described(true).replace("(?P<value>\\\\w+)'", "(?P<value>\\\\w+'");
    let root = sqlite_suite(&[("s.yaml", &broken)]);
    let (code, stdout, stderr) = run(&["validate", "--root", &root.path().display().to_string()]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("s.yaml`: expected_calls[1].args_from_prior.table_name (line 11): invalid regex `'name': '(?P<value>\\w+'`:"),
        "{stderr}"
    );
}
