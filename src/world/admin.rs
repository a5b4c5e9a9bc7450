//! Behaviour of the `admin_*` tools: system users, roles, configuration, audit log. Every
//! change is also written to the `audit_log` collection.

use serde_json::{Map, Value, json};

use super::{FROZEN_NOW, World, contains_ci, dates, flag, integer, text};

pub(super) fn call(
    world: &mut World,
    tool: &str,
    args: &Map<String, Value>,
) -> Result<Value, String> {
    match tool {
        "admin_search_users" => Ok(search_users(world, args)),
        "admin_create_user" => create_user(world, args),
        "admin_deactivate_user" => deactivate_user(world, args),
        "admin_assign_role" => assign_role(world, args),
        "admin_get_config" => get_config(world, args),
        "admin_update_config" => update_config(world, args),
        "admin_get_audit_log" => audit_log(world, args),
        _ => Err(format!("tool `{tool}` has no behaviour in this world")),
    }
}

fn user_not_found(id: &str) -> String {
    format!("user `{id}` not found; use admin_search_users to find the right id")
}

fn search_users(world: &World, args: &Map<String, Value>) -> Value {
    let query = text(args, "query").unwrap_or_default();
    let include_deactivated = flag(args, "include_deactivated", false);
    let users: Vec<Value> = world
        .collection("users")
        .iter()
        .filter(|u| {
            ["name", "email", "department"]
                .iter()
                .any(|f| contains_ci(&u[*f], query))
        })
        .filter(|u| text(args, "role").is_none_or(|r| u["role"] == r))
        .filter(|u| include_deactivated || u["status"] == "active")
        .cloned()
        .collect();
    json!({"users": users, "total": users.len()})
}

fn active_admins(world: &World) -> usize {
    world
        .collection("users")
        .iter()
        .filter(|u| u["role"] == "admin" && u["status"] == "active")
        .count()
}

fn create_user(world: &mut World, args: &Map<String, Value>) -> Result<Value, String> {
    let email = text(args, "email").unwrap_or_default();
    if let Some(existing) = world.collection("users").iter().find(|u| {
        u["email"]
            .as_str()
            .is_some_and(|e| e.eq_ignore_ascii_case(email))
    }) {
        return Err(format!(
            "email `{email}` is already used by `{}` ({})",
            existing["id"].as_str().unwrap_or_default(),
            existing["name"].as_str().unwrap_or_default()
        ));
    }
    let user = json!({
        "id": world.next_id("users", "U-"),
        "name": args.get("name").cloned().unwrap_or(Value::Null),
        "email": email,
        "role": text(args, "role").unwrap_or("viewer"),
        "department": args.get("department").cloned().unwrap_or(Value::Null),
        "status": "active",
        "created_at": FROZEN_NOW,
    });
    world.collection_mut("users").push(user.clone());
    let id = user["id"].as_str().unwrap_or_default().to_string();
    world.audit(
        "user_created",
        &id,
        format!("role {}", user["role"].as_str().unwrap_or_default()),
    );
    Ok(user)
}

fn deactivate_user(world: &mut World, args: &Map<String, Value>) -> Result<Value, String> {
    let id = text(args, "user_id").unwrap_or_default().to_string();
    let user = world
        .find("users", &id)
        .cloned()
        .ok_or_else(|| user_not_found(&id))?;
    if user["status"] != "active" {
        return Ok(json!({"user_id": id, "status": user["status"]}));
    }
    if user["role"] == "admin" && active_admins(world) <= 1 {
        return Err(format!(
            "`{id}` is the last active admin and cannot be deactivated; make another user admin first"
        ));
    }
    if let Some(user) = world.find_mut("users", &id) {
        user["status"] = "deactivated".into();
        user["deactivated_at"] = FROZEN_NOW.into();
    }
    let reason = text(args, "reason").unwrap_or_default().to_string();
    world.audit("user_deactivated", &id, reason);
    Ok(json!({"user_id": id, "status": "deactivated", "sessions_ended": true}))
}

fn assign_role(world: &mut World, args: &Map<String, Value>) -> Result<Value, String> {
    let id = text(args, "user_id").unwrap_or_default().to_string();
    let role = text(args, "role").unwrap_or_default().to_string();
    let user = world
        .find("users", &id)
        .cloned()
        .ok_or_else(|| user_not_found(&id))?;
    if user["status"] != "active" {
        return Err(format!(
            "user `{id}` is deactivated; reactivate the account before changing its role"
        ));
    }
    if role == "admin" && text(args, "justification").is_none_or(|j| j.trim().is_empty()) {
        return Err("granting `admin` needs a `justification`".into());
    }
    let old = user["role"].as_str().unwrap_or_default().to_string();
    if old == "admin" && role != "admin" && active_admins(world) <= 1 {
        return Err(format!(
            "`{id}` is the last active admin; make another user admin first"
        ));
    }
    if let Some(user) = world.find_mut("users", &id) {
        user["role"] = json!(role);
    }
    world.audit("role_changed", &id, format!("{old} -> {role}"));
    let permissions = world
        .find("roles", &role)
        .map(|r| r["permissions"].clone())
        .unwrap_or(Value::Null);
    Ok(json!({"user_id": id, "old_role": old, "role": role, "permissions": permissions}))
}

fn unknown_setting(world: &World, key: &str) -> String {
    let keys: Vec<&str> = world
        .collection("config")
        .iter()
        .filter_map(|c| c["id"].as_str())
        .collect();
    format!("unknown setting `{key}`; settings: {}", keys.join(", "))
}

fn get_config(world: &World, args: &Map<String, Value>) -> Result<Value, String> {
    let keys: Option<Vec<&str>> = args
        .get("keys")
        .and_then(Value::as_array)
        .map(|keys| keys.iter().filter_map(Value::as_str).collect());
    let mut settings = Vec::new();
    match keys {
        None => settings.extend(world.collection("config").iter().cloned()),
        Some(keys) => {
            for key in keys {
                settings.push(
                    world
                        .find("config", key)
                        .cloned()
                        .ok_or_else(|| unknown_setting(world, key))?,
                );
            }
        }
    }
    Ok(json!({"settings": settings}))
}

/// Checks `value` against a setting's type and range.
fn check_setting(setting: &Value, value: &Value) -> Result<(), String> {
    let key = setting["id"].as_str().unwrap_or_default();
    match setting["type"].as_str().unwrap_or_default() {
        "integer" => {
            let n = value
                .as_f64()
                .filter(|n| n.fract() == 0.0)
                .ok_or_else(|| format!("`{key}` takes a whole number, got {value}"))?;
            let (min, max) = (
                setting["min"].as_f64().unwrap_or(f64::MIN),
                setting["max"].as_f64().unwrap_or(f64::MAX),
            );
            if n < min || n > max {
                return Err(format!("`{key}` must be between {min} and {max}, got {n}"));
            }
        }
        "boolean" if !value.is_boolean() => {
            return Err(format!("`{key}` takes true or false, got {value}"));
        }
        "string" => {
            let allowed = setting["allowed"].as_array().cloned().unwrap_or_default();
            if !allowed.is_empty() && !allowed.contains(value) {
                return Err(format!(
                    "`{key}` must be one of {}, got {value}",
                    Value::Array(allowed)
                ));
            }
        }
        _ => {}
    }
    Ok(())
}

fn update_config(world: &mut World, args: &Map<String, Value>) -> Result<Value, String> {
    let key = text(args, "key").unwrap_or_default().to_string();
    let value = args.get("value").cloned().unwrap_or(Value::Null);
    let setting = world
        .find("config", &key)
        .cloned()
        .ok_or_else(|| unknown_setting(world, &key))?;
    check_setting(&setting, &value)?;
    let value = match value.as_f64() {
        Some(n) if setting["type"] == "integer" => json!(n as i64),
        _ => value,
    };
    if let Some(setting) = world.find_mut("config", &key) {
        setting["value"] = value.clone();
    }
    world.audit(
        "config_changed",
        &key,
        format!("{} -> {value}", setting["value"]),
    );
    Ok(json!({"key": key, "old_value": setting["value"], "new_value": value}))
}

fn audit_log(world: &World, args: &Map<String, Value>) -> Result<Value, String> {
    let since = match text(args, "since") {
        Some(date) => {
            Some(dates::parse_date(date).ok_or_else(|| format!("`{date}` is not a date"))?)
        }
        None => None,
    };
    let mut events: Vec<&Value> = world
        .collection("audit_log")
        .iter()
        .filter(|e| text(args, "actor_id").is_none_or(|a| e["actor_id"] == a))
        .filter(|e| text(args, "action").is_none_or(|a| e["action"] == a))
        .filter(|e| since.is_none_or(|since| dates::is_on_or_after(&e["at"], since)))
        .collect();
    events.sort_by(|a, b| b["at"].as_str().cmp(&a["at"].as_str()));
    let total = events.len();
    let limit = integer(args, "limit").unwrap_or(20).max(1) as usize;
    let events: Vec<Value> = events.into_iter().take(limit).cloned().collect();
    Ok(json!({"events": events, "total": total}))
}

#[cfg(test)]
mod tests {
    //! The admin tools: the last admin is kept, changes are audited, config and grants checked.

    use super::*;

    fn world() -> World {
        let fixture = include_str!("../../fixtures/enterprise.json");
        World::new(&serde_json::from_str(fixture).expect("fixture is JSON"))
    }

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().cloned().expect("object")
    }

    #[test]
    fn user_search_finds_employees_not_customers() {
        let mut world = world();
        let found = call(
            &mut world,
            "admin_search_users",
            &args(json!({"query": "john"})),
        )
        .expect("search");
        let ids: Vec<&str> = found["users"]
            .as_array()
            .expect("array")
            .iter()
            .filter_map(|u| u["id"].as_str())
            .collect();
        assert_eq!(ids, ["U-006", "U-007"]);
    }

    #[test]
    fn the_last_admin_cannot_be_deactivated_or_demoted() {
        let mut world = world();
        let error = call(
            &mut world,
            "admin_deactivate_user",
            &args(json!({"user_id": "U-001", "reason": "test"})),
        )
        .expect_err("last admin");
        assert_eq!(
            error,
            "`U-001` is the last active admin and cannot be deactivated; make another user admin first"
        );
        let error = call(
            &mut world,
            "admin_assign_role",
            &args(json!({"user_id": "U-001", "role": "viewer"})),
        )
        .expect_err("last admin");
        assert_eq!(
            error,
            "`U-001` is the last active admin; make another user admin first"
        );
    }

    #[test]
    fn deactivation_is_real_and_audited() {
        let mut world = world();
        call(
            &mut world,
            "admin_deactivate_user",
            &args(json!({"user_id": "U-008", "reason": "left the company"})),
        )
        .expect("deactivate");
        assert_eq!(
            world.find("users", "U-008").expect("user")["status"],
            "deactivated"
        );
        let entry = world
            .collection("audit_log")
            .last()
            .expect("audited")
            .clone();
        assert_eq!(entry["id"], "L-007");
        assert_eq!(entry["action"], "user_deactivated");
        assert_eq!(entry["target"], "U-008");
    }

    #[test]
    fn config_values_are_checked_against_their_range() {
        let mut world = world();
        let error = call(
            &mut world,
            "admin_update_config",
            &args(json!({"key": "session_timeout_minutes", "value": 600})),
        )
        .expect_err("range");
        assert_eq!(
            error,
            "`session_timeout_minutes` must be between 5 and 480, got 600"
        );
        let changed = call(
            &mut world,
            "admin_update_config",
            &args(json!({"key": "session_timeout_minutes", "value": 45})),
        )
        .expect("ok");
        assert_eq!(
            changed,
            json!({"key": "session_timeout_minutes", "old_value": 30, "new_value": 45})
        );
        let error = call(
            &mut world,
            "admin_get_config",
            &args(json!({"keys": ["timeout"]})),
        )
        .expect_err("unknown");
        assert!(
            error.starts_with("unknown setting `timeout`; settings: session_timeout_minutes, "),
            "{error}"
        );
    }

    #[test]
    fn granting_admin_needs_a_justification() {
        let mut world = world();
        let error = call(
            &mut world,
            "admin_assign_role",
            &args(json!({"user_id": "U-003", "role": "admin"})),
        )
        .expect_err("no reason");
        assert_eq!(error, "granting `admin` needs a `justification`");
        let changed = call(
            &mut world,
            "admin_assign_role",
            &args(json!({"user_id": "U-003", "role": "manager"})),
        )
        .expect("ok");
        assert_eq!(changed["old_role"], "sales");
        assert_eq!(
            changed["permissions"],
            json!(["read", "write_crm", "write_comm", "write_erp", "approve"])
        );
    }
}
