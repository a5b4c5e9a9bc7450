//! The lint report as SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.
//!
//! A small typed model of the parts of the format toolgate fills in (OASIS SARIF 2.1.0,
//! sections 3.13 `run`, 3.19 `toolComponent`, 3.27 `result`, 3.28 `location`).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::{Finding, FindingSource, LintReport, Severity};

#[derive(Serialize)]
struct Log {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<Run>,
}

#[derive(Serialize)]
struct Run {
    tool: Tool,
    results: Vec<SarifResult>,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: &'static str,
    rules: Vec<Rule>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    id: &'static str,
    short_description: Text,
    default_configuration: Configuration,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult {
    rule_id: &'static str,
    rule_index: usize,
    level: &'static str,
    message: Text,
    locations: Vec<Location>,
    partial_fingerprints: BTreeMap<&'static str, String>,
    /// SARIF 2.1.0 section 3.8 property bag: `{"tags": ["judge"]}` on judge findings.
    #[serde(skip_serializing_if = "Option::is_none")]
    properties: Option<Properties>,
}

#[derive(Serialize)]
struct Properties {
    tags: Vec<&'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    #[serde(skip_serializing_if = "Option::is_none")]
    physical_location: Option<PhysicalLocation>,
    logical_locations: Vec<LogicalLocation>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    region: Region,
}

#[derive(Serialize)]
struct ArtifactLocation {
    uri: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LogicalLocation {
    name: String,
    fully_qualified_name: String,
    kind: &'static str,
}

/// SARIF's level for a severity.
fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// The 1-based line in `text` a finding points at: where its tool is defined (a saved
/// tools/list: the `"name"` line), else where its server's entry starts (an `mcpServers` file
/// or `toolgate.yaml`: the `"billing":` or `billing:` key line), else 1.
fn line_of(text: &str, finding: &Finding) -> usize {
    let tool_line = finding.tool.as_deref().and_then(|tool| {
        let quoted = format!("\"{tool}\"");
        text.lines()
            .position(|line| line.contains("\"name\"") && line.contains(&quoted))
    });
    let server_line = || {
        let server = finding.server.as_deref().filter(|s| !s.is_empty())?;
        let keys = [
            format!("\"{server}\":"),
            format!("\"{server}\" :"),
            format!("{server}:"),
            format!("'{server}':"),
        ];
        text.lines().position(|line| {
            let line = line.trim_start();
            keys.iter().any(|key| line.starts_with(key.as_str()))
        })
    };
    tool_line.or_else(server_line).map_or(1, |index| index + 1)
}

fn location(finding: &Finding, origin: Option<(&Path, &str)>) -> Location {
    let tool = finding.tool.clone().unwrap_or_default();
    let server = finding.server.clone().unwrap_or_default();
    Location {
        physical_location: origin.map(|(path, text)| PhysicalLocation {
            artifact_location: ArtifactLocation {
                uri: path.to_string_lossy().replace('\\', "/"),
            },
            region: Region {
                start_line: line_of(text, finding),
            },
        }),
        logical_locations: vec![LogicalLocation {
            name: if tool.is_empty() {
                server.clone()
            } else {
                tool.clone()
            },
            fully_qualified_name: format!("{server}/{tool}#{}", finding.pointer),
            kind: "function",
        }],
    }
}

/// Renders `report` as a SARIF 2.1.0 log (pretty JSON, trailing newline).
///
/// `origin` is the file the catalog came from and its text: results then point at the line of
/// the tool's `"name"`, else of its server's entry (live servers named in an `mcpServers`
/// file or `toolgate.yaml`), else line 1. Every result also carries a logical location
/// (`server/tool#pointer`); without `origin` it is the only one.
pub fn render(report: &LintReport, origin: Option<(&Path, &str)>) -> String {
    let mut rules: Vec<Rule> = Vec::new();
    let mut results = Vec::new();
    for finding in &report.findings {
        let rule_index = match rules
            .iter()
            .position(|rule| rule.id == finding.check.as_str())
        {
            Some(index) => index,
            None => {
                rules.push(Rule {
                    id: finding.check.as_str(),
                    short_description: Text {
                        text: finding.check.description().to_owned(),
                    },
                    default_configuration: Configuration {
                        level: level(finding.severity),
                    },
                });
                rules.len() - 1
            }
        };
        let fingerprint = format!(
            "{}/{}/{}#{}",
            finding.check,
            finding.server.as_deref().unwrap_or(""),
            finding.tool.as_deref().unwrap_or(""),
            finding.pointer
        );
        results.push(SarifResult {
            rule_id: finding.check.as_str(),
            rule_index,
            level: level(finding.severity),
            message: Text {
                text: format!("{} Fix: {}", finding.message, finding.hint),
            },
            locations: vec![location(finding, origin)],
            partial_fingerprints: BTreeMap::from([("toolgateFinding/v1", fingerprint)]),
            properties: (finding.source == FindingSource::Judge).then(|| Properties {
                tags: vec!["judge"],
            }),
        });
    }
    let log = Log {
        schema: "https://json.schemastore.org/sarif-2.1.0.json",
        version: "2.1.0",
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: "toolgate",
                    version: env!("CARGO_PKG_VERSION"),
                    rules,
                },
            },
            results,
        }],
    };
    crate::json::pretty(&log)
}

#[cfg(test)]
mod tests {
    //! SARIF: findings become results pointing at the tool's line, or at the server's config entry.

    use serde_json::{Value, json};

    use super::*;
    use crate::lint::{LintOptions, lint};

    #[test]
    fn live_server_findings_point_at_the_servers_entry_in_the_config() {
        let config = "agent: reference\nservers:\n  billing:\n    command: node\n  crm:\n    url: http://localhost:9/mcp\n";
        let tool =
            json!({"name": "admin.list", "inputSchema": {"type": "object", "properties": {}}});
        let catalog = crate::lint::LoadedCatalog::from_servers(vec![
            ("billing".to_owned(), Vec::new()),
            ("crm".to_owned(), vec![tool]),
        ]);
        let report = lint(&catalog, &LintOptions::default());
        let sarif: Value = serde_json::from_str(&render(
            &report,
            Some((Path::new("evals/toolgate.yaml"), config)),
        ))
        .expect("SARIF is JSON");
        let first = &sarif["runs"][0]["results"][0];
        assert_eq!(first["ruleId"], "invalid_tool_name");
        assert_eq!(
            first["locations"][0]["physicalLocation"],
            json!({"artifactLocation": {"uri": "evals/toolgate.yaml"}, "region": {"startLine": 5}})
        );
        assert_eq!(
            first["locations"][0]["logicalLocations"][0]["fullyQualifiedName"],
            "crm/admin.list#/name"
        );
        let mcp_json = "{\n  \"mcpServers\": {\n    \"crm\": {\"command\": \"x\"}\n  }\n}\n";
        let sarif: Value =
            serde_json::from_str(&render(&report, Some((Path::new(".mcp.json"), mcp_json))))
                .expect("SARIF is JSON");
        assert_eq!(
            sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"],
            json!({"startLine": 3})
        );
    }

    #[test]
    fn renders_findings_as_sarif_results_pointing_at_the_tools_line() {
        let text = "{\"tools\": [\n  {\"name\": \"ok\", \"inputSchema\": {\"type\": \"object\", \"properties\": {}}},\n  {\"name\": \"admin.list\", \"description\": \"List admins.\", \"inputSchema\": {\"type\": \"object\", \"properties\": {}}}\n]}\n";
        let value: Value = serde_json::from_str(text).expect("valid JSON");
        let catalog = crate::lint::sources::parse_saved("tools.json", value).expect("parses");
        let report = lint(&catalog, &LintOptions::default());
        let sarif: Value = serde_json::from_str(&render(
            &report,
            Some((Path::new("fixtures/tools.json"), text)),
        ))
        .expect("SARIF is JSON");
        assert_eq!(sarif["version"], "2.1.0");
        let results = sarif["runs"][0]["results"].as_array().expect("results");
        assert_eq!(results.len(), report.findings.len());
        let first = &results[0];
        assert_eq!(first["ruleId"], "invalid_tool_name");
        assert_eq!(first["level"], "error");
        assert_eq!(
            first["locations"][0]["physicalLocation"],
            json!({"artifactLocation": {"uri": "fixtures/tools.json"}, "region": {"startLine": 3}})
        );
        assert_eq!(
            first["locations"][0]["logicalLocations"][0]["fullyQualifiedName"],
            "tools.json/admin.list#/name"
        );
        let rules = sarif["runs"][0]["tool"]["driver"]["rules"]
            .as_array()
            .expect("rules");
        let index = first["ruleIndex"].as_u64().expect("an index") as usize;
        assert_eq!(rules[index]["id"], "invalid_tool_name");
        let levels: Vec<&str> = results.iter().filter_map(|r| r["level"].as_str()).collect();
        assert!(
            levels
                .iter()
                .all(|level| ["error", "warning", "note"].contains(level))
        );
    }
}
