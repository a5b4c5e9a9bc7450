//! The lint report as a terminal table or as JSON, and the drift report as a table.

use std::fmt::Write as _;

use comfy_table::{Table, presets};

use super::{LintReport, Severity};
use crate::catalog::drift::DriftReport;

/// How many of the costliest tools the table lists.
const COSTLIEST_TOOLS: usize = 5;

/// Renders findings as a table (plain ASCII, no colour), then a summary.
pub fn render_table(report: &LintReport) -> String {
    let mut text = String::new();
    if !report.findings.is_empty() {
        let mut table = Table::new();
        table.load_style(presets::ASCII_MARKDOWN);
        table.set_header(["severity", "check", "tool", "where", "finding and fix"]);
        for finding in &report.findings {
            let tool = match (&finding.server, &finding.tool) {
                (_, Some(tool)) if report.servers.len() <= 1 => tool.clone(),
                (Some(server), Some(tool)) => format!("{server}/{tool}"),
                (None, Some(tool)) => tool.clone(),
                (Some(server), None) => server.clone(),
                (None, None) => "(catalog)".to_owned(),
            };
            let pointer = if finding.pointer.is_empty() {
                "-"
            } else {
                &finding.pointer
            };
            table.add_row([
                finding.severity.as_str(),
                finding.check.as_str(),
                &tool,
                pointer,
                &format!("{}\nfix: {}", finding.message, finding.hint),
            ]);
        }
        let _ = writeln!(text, "{table}");
    }
    let counted = |count: usize, one: &str| match count {
        1 => format!("1 {one}"),
        count => format!("{count} {one}s"),
    };
    let _ = writeln!(
        text,
        "{}: {}, {}, {}",
        [
            counted(report.tool_count, "tool"),
            format!("from {}", counted(report.servers.len(), "server")),
        ]
        .join(" "),
        counted(report.count(Severity::Error), "error"),
        counted(report.count(Severity::Warning), "warning"),
        counted(report.count(Severity::Info), "info"),
    );
    let mut costliest: Vec<_> = report.tokens.per_tool.iter().collect();
    costliest.sort_by(|a, b| b.tokens.cmp(&a.tokens).then(a.tool.cmp(&b.tool)));
    let costliest: Vec<String> = costliest
        .iter()
        .take(COSTLIEST_TOOLS)
        .map(|tool| format!("{} {}", tool.tool, tool.tokens))
        .collect();
    let _ = write!(
        text,
        "context cost: {} tokens ({})",
        report.tokens.total, report.tokens.encoding
    );
    if !costliest.is_empty() {
        let _ = write!(text, "; costliest: {}", costliest.join(", "));
    }
    text.push('\n');
    text
}

/// Renders the report as pretty JSON with a trailing newline.
pub fn render_json(report: &LintReport) -> String {
    crate::json::pretty(report)
}

/// Renders drift as a table of changes, then a one-line summary.
pub fn render_drift_table(report: &DriftReport) -> String {
    let mut text = String::new();
    if !report.changes.is_empty() {
        let mut table = Table::new();
        table.load_style(presets::ASCII_MARKDOWN);
        table.set_header(["class", "tool", "where", "change"]);
        for change in &report.changes {
            let pointer = if change.pointer.is_empty() {
                "-"
            } else {
                &change.pointer
            };
            table.add_row([
                change.class.as_str(),
                &format!("{}/{}", change.server, change.tool),
                pointer,
                &change.message,
            ]);
        }
        let _ = writeln!(text, "{table}");
    }
    for (tool, scenarios) in &report.scenarios {
        let _ = writeln!(
            text,
            "scenarios using `{tool}` (re-run them): {}",
            scenarios.join(", ")
        );
    }
    let _ = writeln!(text, "{}", report.summary());
    text
}

/// Renders drift as pretty JSON with a trailing newline.
pub fn render_drift_json(report: &DriftReport) -> String {
    crate::json::pretty(report)
}

#[cfg(test)]
mod tests {
    //! Snapshots of the lint report's table and JSON for a small catalog with known defects.

    use serde_json::json;

    use super::*;
    use crate::lint::{LintOptions, LoadedCatalog, lint};

    /// Two servers: one with a dotted name and an undescribed parameter, one with two
    /// look-alike tools.
    fn report() -> LintReport {
        let catalog = LoadedCatalog::from_servers(vec![
            (
                "crm".to_owned(),
                vec![json!({
                    "name": "admin.list",
                    "description": "List admins.",
                    "inputSchema": {"type": "object", "properties": {"limit": {"type": "integer"}}}
                })],
            ),
            (
                "files".to_owned(),
                vec![
                    json!({
                        "name": "delete_file",
                        "description": "Delete a file from the workspace by its path.",
                        "inputSchema": {"type": "object", "properties": {"path": {"type": "string", "description": "The file's path."}}, "required": ["path"]}
                    }),
                    json!({
                        "name": "remove_file",
                        "description": "Delete a file from the workspace by its path.",
                        "inputSchema": {"type": "object", "properties": {"path": {"type": "string", "description": "The file's path."}}, "required": ["path"]}
                    }),
                ],
            ),
        ]);
        lint(&catalog, &LintOptions::default())
    }

    #[test]
    fn the_table() {
        insta::assert_snapshot!(render_table(&report()));
    }

    /// Counts of one are singular: `1 tool from 1 server: 1 error, ...`.
    #[test]
    fn counts_of_one_are_singular() {
        let catalog = LoadedCatalog::from_tools(
            "crm",
            vec![json!({"name": "admin.list", "description": "List admins.",
                        "inputSchema": {"type": "object", "properties": {}}})],
        );
        let table = render_table(&lint(&catalog, &LintOptions::default()));
        assert!(
            table.contains("1 tool from 1 server: 2 errors, 1 warning, "),
            "{table}"
        );
    }

    #[test]
    fn the_json() {
        insta::assert_snapshot!(render_json(&report()));
    }
}
