//! Runs every check over a loaded catalog and collects the report.

use super::checks::CheckId;
use serde_json::Value;

use super::{
    Finding, LintOptions, LintReport, LoadedCatalog, Severity, ToolRef, descriptions, names,
    schema, similarity, tokens,
};

/// Lints `catalog`: loading findings first, then per-tool checks (names, schema, descriptions),
/// then catalog-wide checks (duplicates, tool counts, look-alikes, context cost).
///
/// Findings are ordered by severity, errors first; within a severity they keep catalog order
/// and, within a tool, check order. Pure and deterministic.
pub fn lint(catalog: &LoadedCatalog, options: &LintOptions) -> LintReport {
    let names = tool_names(catalog);
    let tools = tool_refs(catalog, &names);

    let mut findings = catalog.findings.clone();
    for tool in &tools {
        if !tool.definition.is_object() {
            findings.push(Finding::tool(
                CheckId::ToolNotAnObject,
                Severity::Error,
                tool,
                "",
                format!("the tool entry is not an object: {}", tool.definition),
                "list each tool as an object with `name`, `description` and `inputSchema`",
            ));
            continue;
        }
        names::check_tool(tool, &options.profiles, &mut findings);
        schema::check_tool(tool, &options.profiles, &mut findings);
        descriptions::check_tool(tool, &mut findings);
    }
    names::check_catalog(&tools, &options.profiles, &mut findings);
    similarity::check_catalog(&tools, options.similarity_threshold, &mut findings);
    let tokens = tokens::count(&tools);
    tokens::check(&tools, &tokens, options, &mut findings);
    findings.sort_by_key(|finding| std::cmp::Reverse(finding.severity));

    LintReport {
        schema_version: LintReport::SCHEMA_VERSION,
        servers: catalog.servers.clone(),
        tool_count: tools.len(),
        findings,
        tokens,
        judge_warnings: Vec::new(),
        origin: catalog.origin.clone(),
    }
}

/// Each tool's `name`, or `<tool N>` (1-based) when it has none; in catalog order.
pub fn tool_names(catalog: &LoadedCatalog) -> Vec<String> {
    catalog
        .tools
        .iter()
        .enumerate()
        .map(
            |(index, tool)| match tool.definition.get("name").and_then(Value::as_str) {
                Some(name) if !name.is_empty() => name.to_owned(),
                _ => format!("<tool {}>", index + 1),
            },
        )
        .collect()
}

/// The tools of `catalog` as the checks see them; `names` from [`tool_names`].
pub fn tool_refs<'a>(catalog: &'a LoadedCatalog, names: &'a [String]) -> Vec<ToolRef<'a>> {
    catalog
        .tools
        .iter()
        .zip(names)
        .map(|(tool, name)| ToolRef {
            server: &tool.server,
            name,
            definition: &tool.definition,
        })
        .collect()
}

/// Adds the description judge's findings and warnings to `report`, keeping every finding it
/// already has and the order by severity (judge findings after the others of their severity).
pub fn add_judged(report: &mut LintReport, verdicts: super::judge::DescriptionVerdicts) {
    report.findings.extend(verdicts.findings);
    report
        .findings
        .sort_by_key(|finding| std::cmp::Reverse(finding.severity));
    report.judge_warnings.extend(verdicts.warnings);
}

#[cfg(test)]
mod tests {
    //! The lint run: a broken tool does not stop the others, and the built-in catalog lints clean.

    use serde_json::json;

    use super::*;

    #[test]
    fn lints_every_tool_even_after_a_broken_one() {
        let catalog = LoadedCatalog::from_tools(
            "s",
            vec![
                json!("not a tool"),
                json!({"name": "b", "inputSchema": {"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}}}),
                json!({"name": "c", "inputSchema": {"type": "object", "properties": {"y": {"$ref": "#/$defs/gone"}}}}),
            ],
        );
        let report = lint(&catalog, &LintOptions::default());
        let errors: Vec<(&str, Option<&str>)> = report
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| (f.check.as_str(), f.tool.as_deref()))
            .collect();
        assert_eq!(
            errors,
            [
                ("tool_not_an_object", Some("<tool 1>")),
                ("unresolved_ref", Some("b")),
                ("unresolved_ref", Some("c")),
            ]
        );
        assert_eq!(report.tool_count, 3);
        assert_eq!(report.worst(), Some(Severity::Error));
    }

    #[test]
    fn the_builtin_catalog_has_no_errors_or_warnings() {
        let catalog = LoadedCatalog::from_tools(
            "toolgate",
            crate::catalog::Catalog::builtin().definitions().to_vec(),
        );
        let report = lint(&catalog, &LintOptions::default());
        let serious: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.severity > Severity::Info)
            .map(|f| format!("{} {:?} {}", f.check.as_str(), f.tool, f.message))
            .collect();
        assert_eq!(serious, Vec::<String>::new());
        assert!(report.tokens.total > 0);
    }
}
