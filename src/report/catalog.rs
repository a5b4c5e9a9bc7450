//! The tool catalog as text: a terminal table or JSON, for `toolgate tools`.

use comfy_table::{Table, presets};
use serde_json::{Value, json};

use crate::catalog::Catalog;

fn hint(tool: &Value, name: &str) -> bool {
    tool["annotations"][name].as_bool().unwrap_or(false)
}

/// One row per tool, in catalog order: name, category, title and the read-only, destructive
/// and idempotent hints (`yes` or `-`), then a count per category.
pub(crate) fn render_table(catalog: &Catalog) -> String {
    let mut table = Table::new();
    table.load_style(presets::ASCII_MARKDOWN);
    table.set_header([
        "tool",
        "category",
        "title",
        "read-only",
        "destructive",
        "idempotent",
    ]);
    let mark = |on: bool| if on { "yes" } else { "-" };
    for tool in catalog.tools() {
        let definition = &tool.definition;
        table.add_row([
            tool.name.as_str(),
            tool.group(),
            definition["title"].as_str().unwrap_or_default(),
            mark(hint(definition, "readOnlyHint")),
            mark(hint(definition, "destructiveHint")),
            mark(hint(definition, "idempotentHint")),
        ]);
    }
    format!("{table}\n{} tools\n", catalog.tools().len())
}

/// A JSON array, one object per tool in catalog order:
/// `{"name", "category", "title", "description", "annotations"}`.
pub(crate) fn render_json(catalog: &Catalog) -> String {
    let tools: Vec<Value> = catalog
        .tools()
        .iter()
        .map(|tool| {
            json!({
                "name": tool.name,
                "category": tool.group(),
                "title": tool.definition["title"],
                "description": tool.definition["description"],
                "annotations": tool.definition["annotations"],
            })
        })
        .collect();
    crate::json::pretty(&tools)
}

#[cfg(test)]
mod tests {
    //! `toolgate tools`: the table shows every tool with its hints, the JSON each one's category.

    use super::*;

    #[test]
    fn table_lists_every_tool_with_its_hints() {
        let text = render_table(Catalog::builtin());
        assert!(text.ends_with("\n43 tools\n"), "{text}");
        let delete = text
            .lines()
            .find(|line| line.contains("crm_delete_contact"))
            .expect("row");
        assert_eq!(
            delete.split('|').map(str::trim).collect::<Vec<_>>(),
            [
                "",
                "crm_delete_contact",
                "crm",
                "Delete a CRM contact",
                "-",
                "yes",
                "yes",
                ""
            ]
        );
    }

    #[test]
    fn table_snapshot() {
        insta::assert_snapshot!(render_table(Catalog::builtin()));
    }

    #[test]
    fn json_names_the_category_of_each_tool() {
        let parsed: Value = serde_json::from_str(&render_json(Catalog::builtin())).expect("JSON");
        let tools = parsed.as_array().expect("array");
        assert_eq!(tools.len(), 43);
        assert_eq!(tools[8]["name"], "erp_search_orders");
        assert_eq!(tools[8]["category"], "erp");
        assert_eq!(tools[8]["annotations"]["readOnlyHint"], true);
    }
}
