//! Name checks: tool names and property keys against each provider profile's charset and
//! length, duplicate tool names across servers, and more tools than a provider accepts.
//!
//! Limits (field case B25): MCP SEP-986 says names SHOULD be 1-64 characters of
//! `[A-Za-z0-9_.-/]`; OpenAI requires `^[a-zA-Z0-9_-]{1,64}$` and at most 128 tools per
//! request; Anthropic requires `^[a-zA-Z0-9_-]{1,128}$` for tool names and
//! `^[a-zA-Z0-9_.-]{1,64}$` for property keys.

use super::checks::CheckId;
use std::collections::BTreeMap;

use serde_json::Value;

use super::{Finding, FindingSource, Profile, Severity, ToolRef};
use crate::json::pointer_token;

/// One profile's rule for a kind of name.
struct NameRule {
    profile: Profile,
    max_chars: usize,
    allowed: fn(char) -> bool,
    charset: &'static str,
    /// Breaking a SHOULD (MCP) is a warning; a provider's hard limit is an error.
    severity: Severity,
}

fn mcp_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')
}

fn provider_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-')
}

fn anthropic_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// The tool-name rule of `profile` (OpenAI strict mode shares OpenAI's).
fn tool_name_rule(profile: Profile) -> NameRule {
    match profile {
        Profile::Mcp => NameRule {
            profile,
            max_chars: 64,
            allowed: mcp_char,
            charset: "[A-Za-z0-9_.-/]",
            severity: Severity::Warning,
        },
        Profile::Openai | Profile::OpenaiStrict => NameRule {
            profile: Profile::Openai,
            max_chars: 64,
            allowed: provider_char,
            charset: "[a-zA-Z0-9_-]",
            severity: Severity::Error,
        },
        Profile::Anthropic => NameRule {
            profile,
            max_chars: 128,
            allowed: provider_char,
            charset: "[a-zA-Z0-9_-]",
            severity: Severity::Error,
        },
        Profile::Gemini => NameRule {
            profile,
            max_chars: 64,
            allowed: gemini_char,
            charset: "[a-zA-Z0-9_.:-]",
            severity: Severity::Error,
        },
    }
}

fn gemini_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')
}

/// The most tools one request may carry under `profile`, where the provider documents one.
fn tool_limit(profile: Profile) -> Option<usize> {
    match profile {
        Profile::Openai | Profile::OpenaiStrict => Some(128),
        Profile::Mcp | Profile::Anthropic | Profile::Gemini => None,
    }
}

/// The profiles with distinct name rules: `openai-strict` collapses into `openai`.
fn distinct(profiles: &[Profile]) -> Vec<Profile> {
    let mut distinct: Vec<Profile> = profiles
        .iter()
        .map(|profile| match profile {
            Profile::OpenaiStrict => Profile::Openai,
            other => *other,
        })
        .collect();
    distinct.sort();
    distinct.dedup();
    distinct
}

/// Checks one tool's name and property keys under every profile.
pub fn check_tool(tool: &ToolRef<'_>, profiles: &[Profile], out: &mut Vec<Finding>) {
    let profiles = distinct(profiles);
    match tool.definition.get("name").and_then(Value::as_str) {
        None | Some("") => {
            out.push(Finding::tool(
                CheckId::MissingToolName,
                Severity::Error,
                tool,
                "/name",
                "the tool has no `name`",
                "give every tool a unique name such as `search_orders`",
            ));
            return;
        }
        Some(name) => {
            for profile in &profiles {
                check_name(tool, name, &tool_name_rule(*profile), out);
            }
        }
    }
    if profiles.contains(&Profile::Anthropic)
        && let Some(schema) = tool.definition.get("inputSchema")
    {
        check_property_keys(tool, schema, "/inputSchema", 0, out);
    }
}

fn check_name(tool: &ToolRef<'_>, name: &str, rule: &NameRule, out: &mut Vec<Finding>) {
    let profile = rule.profile.as_str();
    let mut bad: Vec<char> = name.chars().filter(|c| !(rule.allowed)(*c)).collect();
    bad.sort_unstable();
    bad.dedup();
    if !bad.is_empty() {
        let unique: Vec<String> = bad.iter().map(|c| format!("`{c}`")).collect();
        out.push(
            Finding::tool(
                CheckId::InvalidToolName,
                rule.severity,
                tool,
                "/name",
                format!(
                    "tool name `{name}` has {} outside {} ({profile})",
                    unique.join(", "),
                    rule.charset
                ),
                format!(
                    "rename it, e.g. `{}`",
                    suggest(name, rule.allowed, rule.max_chars)
                ),
            )
            .with_profile(rule.profile),
        );
    }
    let chars = name.chars().count();
    if chars > rule.max_chars {
        out.push(
            Finding::tool(
                CheckId::ToolNameTooLong,
                rule.severity,
                tool,
                "/name",
                format!(
                    "tool name `{name}` has {chars} characters, more than {} ({profile})",
                    rule.max_chars
                ),
                format!("shorten it to at most {} characters", rule.max_chars),
            )
            .with_profile(rule.profile),
        );
    }
}

/// A name that passes `allowed` and `max_chars`: other characters become `_`.
fn suggest(name: &str, allowed: fn(char) -> bool, max_chars: usize) -> String {
    name.chars()
        .map(|c| if allowed(c) { c } else { '_' })
        .take(max_chars)
        .collect()
}

/// Anthropic's property-key rule, on every `properties` map of the input schema.
fn check_property_keys(
    tool: &ToolRef<'_>,
    schema: &Value,
    pointer: &str,
    depth: usize,
    out: &mut Vec<Finding>,
) {
    const MAX_DEPTH: usize = 32;
    let Some(object) = schema.as_object() else {
        return;
    };
    if depth > MAX_DEPTH {
        return;
    }
    if let Some(properties) = object.get("properties").and_then(Value::as_object) {
        for (key, property) in properties {
            let at = format!("{pointer}/properties/{}", pointer_token(key));
            let valid =
                !key.is_empty() && key.chars().count() <= 64 && key.chars().all(anthropic_key_char);
            if !valid {
                out.push(
                    Finding::tool(
                        CheckId::InvalidPropertyKey,
                        Severity::Error,
                        tool,
                        at.clone(),
                        format!("property key `{key}` does not match ^[a-zA-Z0-9_.-]{{1,64}}$ (anthropic)"),
                        format!("rename it, e.g. `{}`", suggest(key, anthropic_key_char, 64)),
                    )
                    .with_profile(Profile::Anthropic),
                );
            }
            check_property_keys(tool, property, &at, depth + 1, out);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = object.get(key) {
            check_property_keys(tool, child, &format!("{pointer}/{key}"), depth + 1, out);
        }
    }
}

/// Checks the catalog as a whole: duplicate names (within or across servers) and tool counts.
pub fn check_catalog(tools: &[ToolRef<'_>], profiles: &[Profile], out: &mut Vec<Finding>) {
    let mut servers_by_name: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    // Each definition's canonical text, computed once: it tells repeated listings apart below.
    let canonical: Vec<String> = tools
        .iter()
        .map(|tool| crate::json::canonical(tool.definition))
        .collect();
    // The same definition seen twice from one server (a page listed twice) is one tool.
    let mut seen: std::collections::HashSet<(&str, &str)> = std::collections::HashSet::new();
    for (tool, text) in tools.iter().zip(&canonical) {
        if tool
            .definition
            .get("name")
            .and_then(Value::as_str)
            .is_some()
            && seen.insert((tool.server, text.as_str()))
        {
            servers_by_name
                .entry(tool.name)
                .or_default()
                .push(tool.server);
        }
    }
    for (name, listings) in servers_by_name {
        if listings.len() < 2 {
            continue;
        }
        // Each server once: a server that lists a name twice is not "listed by `a` and `a`".
        let mut servers: Vec<&str> = Vec::new();
        for server in &listings {
            if !servers.contains(server) {
                servers.push(server);
            }
        }
        let message = match servers.as_slice() {
            [only] => format!(
                "tool name `{name}` is listed {} times by `{only}`",
                listings.len()
            ),
            _ => {
                let listed: Vec<String> =
                    servers.iter().map(|server| format!("`{server}`")).collect();
                format!("tool name `{name}` is listed by {}", listed.join(" and "))
            }
        };
        out.push(Finding {
            check: CheckId::DuplicateToolName,
            severity: Severity::Error,
            server: None,
            tool: Some(name.to_owned()),
            pointer: "/name".to_owned(),
            profile: None,
            source: FindingSource::Heuristic,
            message,
            hint: if servers.len() > 1 {
                format!(
                    "namespace the tools by server, e.g. `{}__{name}`, or drop one",
                    servers[0]
                )
            } else {
                "give each tool its own name, or drop one".to_owned()
            },
        });
    }
    // Tools the provider would be sent: each (server, definition) once.
    let count = tools
        .iter()
        .zip(&canonical)
        .map(|(tool, text)| (tool.server, text.as_str()))
        .collect::<std::collections::HashSet<_>>()
        .len();
    for profile in distinct(profiles) {
        let Some(limit) = tool_limit(profile) else {
            continue;
        };
        if count > limit {
            out.push(
                Finding::catalog(
                    CheckId::TooManyTools,
                    Severity::Error,
                    None,
                    format!(
                        "the catalog has {} tools; {} accepts at most {limit} per request",
                        count,
                        profile.as_str()
                    ),
                    "split the servers across agents or expose fewer tools",
                )
                .with_profile(profile),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    //! Name checks: provider name rules, suggested names, refused keys, duplicates, tool caps.

    use serde_json::json;

    use super::*;

    const ALL: [Profile; 3] = [Profile::Mcp, Profile::Openai, Profile::Anthropic];

    /// `(check, severity, profile)` of each finding for a tool named `name`.
    fn name_findings(name: &str) -> Vec<(&'static str, Severity, Option<Profile>)> {
        let definition = json!({ "name": name });
        let tool = ToolRef {
            server: "srvA",
            name,
            definition: &definition,
        };
        let mut out = Vec::new();
        check_tool(&tool, &ALL, &mut out);
        out.iter()
            .map(|f| (f.check.as_str(), f.severity, f.profile))
            .collect()
    }

    /// B25: each name gets the severity the case names under each profile.
    #[test]
    fn applies_each_providers_name_rule_b25() {
        use Profile::*;
        assert_eq!(
            name_findings("admin.tools.list"),
            [
                ("invalid_tool_name", Severity::Error, Some(Openai)),
                ("invalid_tool_name", Severity::Error, Some(Anthropic)),
            ]
        );
        assert_eq!(
            name_findings("Dockerfile problems scanner"),
            [
                ("invalid_tool_name", Severity::Warning, Some(Mcp)),
                ("invalid_tool_name", Severity::Error, Some(Openai)),
                ("invalid_tool_name", Severity::Error, Some(Anthropic)),
            ]
        );
        let long = "query_items_from_the_inventory_service_with_full_pagination_and_filters_v2";
        assert_eq!(long.len(), 74);
        assert_eq!(
            name_findings(long),
            [
                ("tool_name_too_long", Severity::Warning, Some(Mcp)),
                ("tool_name_too_long", Severity::Error, Some(Openai)),
            ]
        );
        assert_eq!(name_findings("execute_sql"), []);
    }

    #[test]
    fn suggests_a_valid_name() {
        let definition = json!({"name": "Dockerfile problems scanner"});
        let tool = ToolRef {
            server: "s",
            name: "Dockerfile problems scanner",
            definition: &definition,
        };
        let mut out = Vec::new();
        check_tool(&tool, &[Profile::Openai], &mut out);
        assert_eq!(
            out[0].message,
            "tool name `Dockerfile problems scanner` has ` ` outside [a-zA-Z0-9_-] (openai)"
        );
        assert_eq!(out[0].hint, "rename it, e.g. `Dockerfile_problems_scanner`");
    }

    /// B25: property keys `user name` and `@type` break Anthropic's key rule.
    #[test]
    fn rejects_property_keys_anthropic_refuses_b25() {
        let definition = json!({"name": "execute_sql",
            "inputSchema": {"type": "object",
              "properties": {"user name": {"type": "string"}, "@type": {"type": "string"}}}});
        let tool = ToolRef {
            server: "srvA",
            name: "execute_sql",
            definition: &definition,
        };
        let mut out = Vec::new();
        check_tool(&tool, &ALL, &mut out);
        let found: Vec<_> = out
            .iter()
            .map(|f| (f.check.as_str(), f.severity, f.pointer.as_str(), f.profile))
            .collect();
        assert_eq!(
            found,
            [
                (
                    "invalid_property_key",
                    Severity::Error,
                    "/inputSchema/properties/user name",
                    Some(Profile::Anthropic)
                ),
                (
                    "invalid_property_key",
                    Severity::Error,
                    "/inputSchema/properties/@type",
                    Some(Profile::Anthropic)
                ),
            ]
        );
    }

    /// B25: the same name on two servers is one error naming both, with a namespacing hint;
    /// 174 tools are too many for OpenAI.
    #[test]
    fn reports_duplicates_across_servers_and_too_many_tools_b25() {
        let sql = json!({"name": "execute_sql"});
        let tools = [
            ToolRef {
                server: "srvA",
                name: "execute_sql",
                definition: &sql,
            },
            ToolRef {
                server: "srvB",
                name: "execute_sql",
                definition: &sql,
            },
        ];
        let mut out = Vec::new();
        check_catalog(&tools, &ALL, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(
            (out[0].check.as_str(), out[0].severity),
            ("duplicate_tool_name", Severity::Error)
        );
        assert_eq!(
            out[0].message,
            "tool name `execute_sql` is listed by `srvA` and `srvB`"
        );
        assert_eq!(
            out[0].hint,
            "namespace the tools by server, e.g. `srvA__execute_sql`, or drop one"
        );

        // One server listing a name twice is not "listed by `srvA` and `srvA`".
        let other = json!({"name": "execute_sql", "description": "v2"});
        let tools = [
            ToolRef {
                server: "srvA",
                name: "execute_sql",
                definition: &sql,
            },
            ToolRef {
                server: "srvA",
                name: "execute_sql",
                definition: &other,
            },
        ];
        let mut out = Vec::new();
        check_catalog(&tools, &ALL, &mut out);
        assert_eq!(
            out.iter().map(|f| f.message.as_str()).collect::<Vec<_>>(),
            ["tool name `execute_sql` is listed 2 times by `srvA`"]
        );
        assert_eq!(out[0].hint, "give each tool its own name, or drop one");
        // The same definition twice from one server is one tool, not a duplicate.
        let tools = [
            ToolRef {
                server: "srvA",
                name: "execute_sql",
                definition: &sql,
            },
            ToolRef {
                server: "srvA",
                name: "execute_sql",
                definition: &sql,
            },
        ];
        let mut out = Vec::new();
        check_catalog(&tools, &ALL, &mut out);
        assert_eq!(out, vec![]);

        let definitions: Vec<Value> = (0..174).map(|n| json!({"name": format!("t{n}")})).collect();
        let names: Vec<String> = (0..174).map(|n| format!("t{n}")).collect();
        let tools: Vec<ToolRef<'_>> = definitions
            .iter()
            .zip(&names)
            .map(|(definition, name)| ToolRef {
                server: "agg",
                name,
                definition,
            })
            .collect();
        let mut out = Vec::new();
        check_catalog(&tools, &ALL, &mut out);
        let found: Vec<_> = out
            .iter()
            .map(|f| (f.check.as_str(), f.severity, f.profile))
            .collect();
        assert_eq!(
            found,
            [("too_many_tools", Severity::Error, Some(Profile::Openai))]
        );
        assert_eq!(
            out[0].message,
            "the catalog has 174 tools; openai accepts at most 128 per request"
        );
    }
}
