//! Tool definitions: the built-in catalog the harness serves.
//!
//! Tools are data (standard MCP tool JSON in `crm.json`), not code: the harness serves them
//! as written and the world module gives them behaviour.

use std::sync::OnceLock;

use serde::Serialize;
use serde_json::Value;

/// The business area a tool belongs to, taken from its name prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// `crm_*`: contacts, activities, deals.
    Crm,
}

impl Category {
    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Crm => "crm",
        }
    }
}

/// One tool: its category and its MCP definition.
#[derive(Debug, Clone)]
pub struct ToolDef {
    /// Unique name, `[a-z0-9_]`, at most 64 characters.
    pub name: String,
    /// Its business area.
    pub category: Category,
    /// The MCP tool object (`name`, `title`, `description`, `inputSchema`, `annotations`).
    pub definition: Value,
}

impl ToolDef {
    /// The tool's JSON Schema for arguments.
    pub fn input_schema(&self) -> &Value {
        &self.definition["inputSchema"]
    }

    /// Top-level argument names, in schema order.
    pub fn argument_names(&self) -> Vec<String> {
        self.input_schema()["properties"]
            .as_object()
            .map(|properties| properties.keys().cloned().collect())
            .unwrap_or_default()
    }
}

/// An ordered set of tools with unique names.
#[derive(Debug, Clone)]
pub struct Catalog {
    tools: Vec<ToolDef>,
    definitions: Vec<Value>,
}

impl Catalog {
    /// The built-in catalog (shared, parsed once).
    pub fn builtin() -> &'static Catalog {
        static CATALOG: OnceLock<Catalog> = OnceLock::new();
        CATALOG.get_or_init(|| {
            let definitions: Vec<Value> = serde_json::from_str(include_str!("crm.json"))
                .expect("crm.json is valid JSON, checked by the catalog tests");
            let tools = definitions
                .iter()
                .map(|definition| ToolDef {
                    name: definition["name"].as_str().unwrap_or_default().to_string(),
                    category: Category::Crm,
                    definition: definition.clone(),
                })
                .collect();
            Catalog { tools, definitions }
        })
    }

    /// All tools in catalog order.
    pub fn tools(&self) -> &[ToolDef] {
        &self.tools
    }

    /// All MCP definitions in catalog order.
    pub fn definitions(&self) -> &[Value] {
        &self.definitions
    }

    /// The tool named `name`.
    pub fn tool(&self, name: &str) -> Option<&ToolDef> {
        self.tools.iter().find(|tool| tool.name == name)
    }

    /// "unknown tool `x`", with the closest known name when one is close.
    pub fn unknown_tool_message(&self, name: &str) -> String {
        let closest = self
            .tools
            .iter()
            .map(|tool| (edit_distance(name, &tool.name), &tool.name))
            .min();
        match closest {
            Some((distance, known)) if distance <= 3 => {
                format!("unknown tool `{name}` (did you mean `{known}`?)")
            }
            _ => format!("unknown tool `{name}`"),
        }
    }
}

/// Levenshtein distance in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let current = row[j + 1];
            row[j + 1] = (previous + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(current + 1);
            previous = current;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_catalog_has_eight_crm_tools_with_valid_schemas() {
        let catalog = Catalog::builtin();
        assert_eq!(catalog.tools().len(), 8);
        for tool in catalog.tools() {
            assert!(tool.name.starts_with("crm_"), "{}", tool.name);
            assert!(
                jsonschema::draft202012::meta::is_valid(tool.input_schema()),
                "{} has an invalid input schema",
                tool.name
            );
            assert!(
                tool.definition["description"]
                    .as_str()
                    .is_some_and(|d| d.len() > 80)
            );
        }
    }

    #[test]
    fn unknown_tool_message_suggests_the_closest_name() {
        let catalog = Catalog::builtin();
        assert_eq!(
            catalog.unknown_tool_message("crm_log_activty"),
            "unknown tool `crm_log_activty` (did you mean `crm_log_activity`?)"
        );
        assert_eq!(
            catalog.unknown_tool_message("send_fax"),
            "unknown tool `send_fax`"
        );
    }
}
