//! Tool definitions: the built-in catalog the harness serves.
//!
//! Tools are data, not code: one file of standard MCP tool JSON per category (`crm.json`,
//! `erp.json`, `communication.json`, `data.json`, `admin.json`, `utility.json`), served as
//! written; the world module gives them behaviour. A tool's category is its name prefix.

pub mod drift;
pub mod listing;
pub mod lock;

use std::sync::OnceLock;

use serde::Serialize;
use serde_json::Value;

/// The business area a tool belongs to, taken from its name prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// `crm_*`: contacts, activities, deals, forecasting.
    Crm,
    /// `erp_*`: sales orders, inventory, purchase orders, invoicing.
    Erp,
    /// `comm_*`: email, calendar, team messages, notifications.
    Communication,
    /// `data_*`: read-only SQL, aggregates, reports, exports, transformation.
    Data,
    /// `admin_*`: system users, roles, configuration, audit log.
    Admin,
    /// `util_*`: arithmetic, statistics, dates, currency and format conversion, validation.
    Utility,
}

impl Category {
    /// Every category, in catalog order.
    pub const ALL: [Category; 6] = [
        Category::Crm,
        Category::Erp,
        Category::Communication,
        Category::Data,
        Category::Admin,
        Category::Utility,
    ];

    /// The tool-name prefix, including the underscore (`crm_`).
    pub fn prefix(self) -> &'static str {
        match self {
            Category::Crm => "crm_",
            Category::Erp => "erp_",
            Category::Communication => "comm_",
            Category::Data => "data_",
            Category::Admin => "admin_",
            Category::Utility => "util_",
        }
    }

    /// The name used in files and reports (`communication`).
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Crm => "crm",
            Category::Erp => "erp",
            Category::Communication => "communication",
            Category::Data => "data",
            Category::Admin => "admin",
            Category::Utility => "utility",
        }
    }

    /// The category whose prefix `tool` starts with.
    pub fn of_tool(tool: &str) -> Option<Category> {
        Category::ALL
            .into_iter()
            .find(|category| tool.starts_with(category.prefix()))
    }

    fn definitions_json(self) -> &'static str {
        match self {
            Category::Crm => include_str!("crm.json"),
            Category::Erp => include_str!("erp.json"),
            Category::Communication => include_str!("communication.json"),
            Category::Data => include_str!("data.json"),
            Category::Admin => include_str!("admin.json"),
            Category::Utility => include_str!("utility.json"),
        }
    }
}

/// Deliberately overlapping tools, in pairs: real integrations overlap, and telling these
/// apart is part of what the benchmark measures. The mutation check also uses them as the
/// "wrong but plausible" tool for a call.
pub const LOOK_ALIKES: &[(&str, &str)] = &[
    ("crm_search_contacts", "admin_search_users"),
    ("comm_send_email", "comm_send_notification"),
    ("comm_send_notification", "comm_send_message"),
    ("comm_send_message", "comm_send_email"),
    ("data_generate_report", "data_export"),
    ("crm_get_pipeline", "crm_forecast"),
    ("data_aggregate", "util_statistics"),
    ("data_query_sql", "data_aggregate"),
    ("util_current_time", "util_date_calc"),
    ("erp_create_order", "erp_create_purchase_order"),
    ("erp_search_orders", "erp_get_order"),
    ("crm_get_contact", "crm_search_contacts"),
    ("crm_update_contact", "crm_create_contact"),
    ("crm_delete_contact", "admin_deactivate_user"),
    ("erp_cancel_order", "erp_create_invoice"),
    ("comm_list_events", "comm_create_event"),
    ("admin_get_config", "admin_update_config"),
    ("admin_get_audit_log", "data_query_sql"),
    ("util_calculate", "util_statistics"),
    ("util_convert_format", "data_transform"),
    ("data_schedule_report", "data_generate_report"),
    ("data_delete_scheduled_report", "crm_delete_contact"),
];

/// One tool: its category or server, and its MCP definition.
#[derive(Debug, Clone)]
pub struct ToolDef {
    /// Unique name within the catalog (built-in tools: `[a-z0-9_]`, at most 64 characters).
    pub name: String,
    /// Its business area; `None` for a tool of the user's own servers.
    pub category: Option<Category>,
    /// The `servers:` name of the server that lists it; `None` for a built-in tool.
    pub server: Option<String>,
    /// The MCP tool object (`name`, `title`, `description`, `inputSchema`, `annotations`).
    pub definition: Value,
}

impl ToolDef {
    /// A tool of the user's server `server`, from its MCP definition (`name` must be a string;
    /// a missing name becomes `""`).
    pub fn from_server(server: &str, definition: Value) -> ToolDef {
        ToolDef {
            name: definition["name"].as_str().unwrap_or_default().to_string(),
            category: None,
            server: Some(server.to_string()),
            definition,
        }
    }

    /// A tool of the user's own catalog that no server lists (a declarative mock), from its
    /// MCP definition (`name` must be a string; a missing name becomes `""`).
    pub fn from_definition(definition: Value) -> ToolDef {
        ToolDef {
            name: definition["name"].as_str().unwrap_or_default().to_string(),
            category: None,
            server: None,
            definition,
        }
    }

    /// The name metrics group the tool under: its category (`crm`), else its server's name, else
    /// `mock` (a declarative mock's tool).
    pub fn group(&self) -> &str {
        match (&self.category, &self.server) {
            (Some(category), _) => category.as_str(),
            (None, Some(server)) => server,
            (None, None) => "mock",
        }
    }

    /// The tool's JSON Schema for arguments.
    pub fn input_schema(&self) -> &Value {
        &self.definition["inputSchema"]
    }

    /// Whether the tool says it only reads (`annotations.readOnlyHint: true`); MCP's default,
    /// for a tool that says nothing, is `false`.
    pub fn is_read_only(&self) -> bool {
        self.definition["annotations"]["readOnlyHint"] == Value::Bool(true)
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
            let mut tools = Vec::new();
            for category in Category::ALL {
                let definitions: Vec<Value> = serde_json::from_str(category.definitions_json())
                    .expect("catalog files are valid JSON, checked by the catalog tests");
                tools.extend(definitions.into_iter().map(|definition| ToolDef {
                    name: definition["name"].as_str().unwrap_or_default().to_string(),
                    category: Some(category),
                    server: None,
                    definition,
                }));
            }
            Catalog::from_tools(tools)
        })
    }

    /// A catalog of `tools`, kept in the order given (names are expected to be unique: the
    /// first of two equal names wins in [`Catalog::tool`]).
    pub fn from_tools(tools: Vec<ToolDef>) -> Catalog {
        let definitions = tools.iter().map(|tool| tool.definition.clone()).collect();
        Catalog { tools, definitions }
    }

    /// Whether this is a catalog of the user's own servers (some tool has a server), whose
    /// state toolgate cannot see: scenarios then need no `seed_state`.
    pub fn is_servers(&self) -> bool {
        self.tools.iter().any(|tool| tool.server.is_some())
    }

    /// Whether this is a declarative mock catalog (tools with neither a category nor a
    /// server), whose tables start from the catalog's own rows: scenarios then need no
    /// `seed_state`.
    pub fn is_mocks(&self) -> bool {
        !self.tools.is_empty()
            && self
                .tools
                .iter()
                .all(|tool| tool.category.is_none() && tool.server.is_none())
    }

    /// All tools in catalog order.
    pub fn tools(&self) -> &[ToolDef] {
        &self.tools
    }

    /// All MCP definitions in catalog order.
    pub fn definitions(&self) -> &[Value] {
        &self.definitions
    }

    /// The names of the read-only tools ([`ToolDef::is_read_only`]).
    pub fn read_only_names(&self) -> std::collections::BTreeSet<String> {
        self.tools
            .iter()
            .filter(|tool| tool.is_read_only())
            .map(|tool| tool.name.clone())
            .collect()
    }

    /// The tool named `name`.
    pub fn tool(&self, name: &str) -> Option<&ToolDef> {
        self.tools.iter().find(|tool| tool.name == name)
    }

    /// The tool most easily confused with `name`: its declared look-alike in [`LOOK_ALIKES`]
    /// (either side of a pair), else the nearest other name by edit distance.
    pub fn look_alike(&self, name: &str) -> Option<&ToolDef> {
        let declared = LOOK_ALIKES.iter().find_map(|(a, b)| {
            if *a == name {
                Some(*b)
            } else if *b == name {
                Some(*a)
            } else {
                None
            }
        });
        if let Some(other) = declared.and_then(|other| self.tool(other)) {
            return Some(other);
        }
        self.tools
            .iter()
            .filter(|tool| tool.name != name)
            .min_by_key(|tool| edit_distance(name, &tool.name))
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
    //! The built-in catalog: 43 valid tools in six categories, near-name hints, real look-alikes.

    use super::*;

    #[test]
    fn builtin_catalog_has_43_tools_in_six_categories_with_valid_schemas() {
        let catalog = Catalog::builtin();
        assert_eq!(catalog.tools().len(), 43);
        let count = |category| {
            catalog
                .tools()
                .iter()
                .filter(|tool| tool.category == Some(category))
                .count()
        };
        let counts: Vec<usize> = Category::ALL.into_iter().map(count).collect();
        assert_eq!(counts, [8, 7, 6, 8, 7, 7]);
        let mut names: Vec<&str> = catalog.tools().iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 43, "tool names are unique");
        for tool in catalog.tools() {
            assert_eq!(
                Category::of_tool(&tool.name),
                tool.category,
                "{}",
                tool.name
            );
            let annotations = &tool.definition["annotations"];
            for hint in ["readOnlyHint", "destructiveHint", "idempotentHint"] {
                assert!(annotations[hint].is_boolean(), "{} lacks {hint}", tool.name);
            }
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

    #[test]
    fn every_look_alike_names_a_catalog_tool() {
        let catalog = Catalog::builtin();
        for (a, b) in LOOK_ALIKES {
            assert!(catalog.tool(a).is_some(), "{a}");
            assert!(catalog.tool(b).is_some(), "{b}");
        }
        let alike = |name| catalog.look_alike(name).map(|tool| tool.name.as_str());
        assert_eq!(alike("crm_search_contacts"), Some("admin_search_users"));
        assert_eq!(alike("admin_search_users"), Some("crm_search_contacts"));
        assert!(alike("erp_check_inventory").is_some());
    }
}
