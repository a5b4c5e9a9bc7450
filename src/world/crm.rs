//! Behaviour of the `crm_*` tools: contacts, activities, deals.

use serde_json::{Map, Value, json};

use super::{FROZEN_NOW, World, contains_ci, integer, text};

pub(super) fn call(
    world: &mut World,
    tool: &str,
    args: &Map<String, Value>,
) -> Result<Value, String> {
    match tool {
        "crm_search_contacts" => Ok(search_contacts(world, args)),
        "crm_get_contact" => get_contact(world, args),
        "crm_create_contact" => Ok(create_contact(world, args)),
        "crm_update_contact" => update_contact(world, args),
        "crm_delete_contact" => delete_contact(world, args),
        "crm_log_activity" => log_activity(world, args),
        "crm_get_pipeline" => Ok(pipeline(world, args)),
        "crm_forecast" => forecast(world, args),
        _ => Err(format!("tool `{tool}` has no behaviour in this world")),
    }
}

fn not_found(id: &str) -> String {
    format!("contact `{id}` not found; use crm_search_contacts to find the right id")
}

fn search_contacts(world: &World, args: &Map<String, Value>) -> Value {
    let query = text(args, "query").unwrap_or_default();
    let company = text(args, "company");
    let limit = integer(args, "limit").unwrap_or(10).max(0) as usize;
    let matches: Vec<&Value> = world
        .collection("contacts")
        .iter()
        .filter(|c| {
            ["name", "email", "company"]
                .iter()
                .any(|field| contains_ci(&c[*field], query))
        })
        .filter(|c| {
            company.is_none_or(|wanted| {
                c["company"]
                    .as_str()
                    .is_some_and(|have| have.eq_ignore_ascii_case(wanted))
            })
        })
        .collect();
    let total = matches.len();
    let contacts: Vec<Value> = matches.into_iter().take(limit).cloned().collect();
    json!({"contacts": contacts, "total": total})
}

fn get_contact(world: &World, args: &Map<String, Value>) -> Result<Value, String> {
    let id = text(args, "contact_id").unwrap_or_default();
    let mut contact = world
        .find("contacts", id)
        .cloned()
        .ok_or_else(|| not_found(id))?;
    if args
        .get("include_activities")
        .and_then(Value::as_bool)
        .unwrap_or(true)
    {
        let activities: Vec<Value> = world
            .collection("activities")
            .iter()
            .filter(|a| a["contact_id"] == id)
            .rev()
            .take(5)
            .cloned()
            .collect();
        contact["recent_activities"] = Value::Array(activities);
    }
    Ok(contact)
}

fn create_contact(world: &mut World, args: &Map<String, Value>) -> Value {
    let mut contact = Map::new();
    contact.insert("id".into(), world.next_id("contacts", "C-").into());
    for field in ["name", "company", "email", "phone", "title", "address"] {
        if let Some(value) = args.get(field) {
            contact.insert(field.into(), value.clone());
        }
    }
    contact.insert("created_at".into(), FROZEN_NOW.into());
    let contact = Value::Object(contact);
    world.collection_mut("contacts").push(contact.clone());
    contact
}

fn update_contact(world: &mut World, args: &Map<String, Value>) -> Result<Value, String> {
    let id = text(args, "contact_id").unwrap_or_default();
    let changes = args
        .get("changes")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let contact = world
        .find_mut("contacts", id)
        .ok_or_else(|| not_found(id))?;
    for (field, value) in changes {
        contact[field.as_str()] = value;
    }
    contact["updated_at"] = FROZEN_NOW.into();
    Ok(contact.clone())
}

fn delete_contact(world: &mut World, args: &Map<String, Value>) -> Result<Value, String> {
    let id = text(args, "contact_id").unwrap_or_default().to_string();
    let contacts = world.collection_mut("contacts");
    let before = contacts.len();
    contacts.retain(|c| c["id"] != id.as_str());
    if contacts.len() == before {
        return Err(not_found(&id));
    }
    let activities = world.collection_mut("activities");
    let before = activities.len();
    activities.retain(|a| a["contact_id"] != id.as_str());
    Ok(json!({"deleted": id, "activities_deleted": before - activities.len()}))
}

fn log_activity(world: &mut World, args: &Map<String, Value>) -> Result<Value, String> {
    let contact_id = text(args, "contact_id").unwrap_or_default();
    if world.find("contacts", contact_id).is_none() {
        return Err(not_found(contact_id));
    }
    let mut activity = Map::new();
    activity.insert("id".into(), world.next_id("activities", "A-").into());
    for field in ["contact_id", "type", "subject", "notes", "duration_minutes"] {
        if let Some(value) = args.get(field) {
            activity.insert(field.into(), value.clone());
        }
    }
    let occurred_at = args
        .get("occurred_at")
        .cloned()
        .unwrap_or_else(|| FROZEN_NOW.into());
    activity.insert("occurred_at".into(), occurred_at);
    let activity = Value::Object(activity);
    world.collection_mut("activities").push(activity.clone());
    Ok(activity)
}

fn pipeline(world: &World, args: &Map<String, Value>) -> Value {
    let stage = text(args, "stage");
    let owner = text(args, "owner");
    let company = text(args, "company");
    let min_amount = args
        .get("min_amount")
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    let deals: Vec<Value> = world
        .collection("deals")
        .iter()
        .filter(|d| stage.is_none_or(|s| d["stage"] == s))
        .filter(|d| owner.is_none_or(|o| contains_ci(&d["owner"], o)))
        .filter(|d| company.is_none_or(|c| contains_ci(&d["company"], c)))
        .filter(|d| d["amount"].as_f64().unwrap_or(0.0) >= min_amount)
        .cloned()
        .collect();
    let mut totals = Map::new();
    for deal in &deals {
        let stage = deal["stage"].as_str().unwrap_or("unknown").to_string();
        let amount = deal["amount"].as_f64().unwrap_or(0.0);
        let total = totals.entry(stage).or_insert(json!(0.0));
        *total = json!(total.as_f64().unwrap_or(0.0) + amount);
    }
    json!({"deals": deals, "count": deals.len(), "totals_by_stage": totals})
}

fn forecast(world: &World, args: &Map<String, Value>) -> Result<Value, String> {
    let quarter = text(args, "quarter").unwrap_or_default();
    let (year, q) = quarter
        .split_once("-Q")
        .and_then(|(y, q)| Some((y.parse::<u32>().ok()?, q.parse::<u32>().ok()?)))
        .ok_or_else(|| format!("quarter `{quarter}` is not of the form YYYY-Qn"))?;
    let months = (3 * (q - 1) + 1)..=(3 * q);
    let owner = text(args, "owner");
    let include_closed = args
        .get("include_closed")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let mut closed_won = 0.0;
    let mut weighted = 0.0;
    let mut counted = 0;
    for deal in world.collection("deals") {
        let in_quarter = deal["close_date"].as_str().is_some_and(|date| {
            let mut parts = date.split('-');
            let y = parts.next().and_then(|y| y.parse::<u32>().ok());
            let m = parts.next().and_then(|m| m.parse::<u32>().ok());
            y == Some(year) && m.is_some_and(|m| months.contains(&m))
        });
        if !in_quarter || !owner.is_none_or(|o| contains_ci(&deal["owner"], o)) {
            continue;
        }
        let amount = deal["amount"].as_f64().unwrap_or(0.0);
        match deal["stage"].as_str() {
            Some("closed_won") if include_closed => closed_won += amount,
            Some("closed_won" | "closed_lost") => continue,
            _ => weighted += amount * deal["probability"].as_f64().unwrap_or(0.0),
        }
        counted += 1;
    }
    Ok(json!({
        "quarter": quarter,
        "closed_won": closed_won,
        "weighted_pipeline": weighted,
        "forecast": closed_won + weighted,
        "deals_counted": counted,
    }))
}

#[cfg(test)]
mod tests {
    //! The crm tools: new ids link activities, deletes cascade, forecasts weight open deals.

    use super::*;

    fn world() -> World {
        World::new(&json!({
            "contacts": [
                {"id": "C-001", "name": "Ada Lovelace", "company": "Acme", "email": "ada@acme.example"},
                {"id": "C-002", "name": "John Smith", "company": "Globex"}
            ],
            "activities": [{"id": "A-001", "contact_id": "C-001", "type": "call"}],
            "deals": [
                {"id": "D-001", "company": "Acme", "amount": 1000.0, "stage": "closed_won", "probability": 1.0, "close_date": "2026-02-01", "owner": "Mia"},
                {"id": "D-002", "company": "Globex", "amount": 2000.0, "stage": "proposal", "probability": 0.5, "close_date": "2026-03-31", "owner": "Mia"},
                {"id": "D-003", "company": "Acme", "amount": 9000.0, "stage": "proposal", "probability": 0.5, "close_date": "2026-04-01", "owner": "Raj"}
            ]
        }))
    }

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().cloned().expect("object")
    }

    #[test]
    fn create_then_log_activity_uses_the_new_id() {
        let mut world = world();
        let contact = call(
            &mut world,
            "crm_create_contact",
            &args(json!({"name": "Jo", "company": "Acme"})),
        )
        .expect("create");
        assert_eq!(contact["id"], "C-003");
        let activity = call(
            &mut world,
            "crm_log_activity",
            &args(json!({"contact_id": "C-003", "type": "call"})),
        )
        .expect("log");
        assert_eq!(
            activity,
            json!({"id": "A-002", "contact_id": "C-003", "type": "call", "occurred_at": FROZEN_NOW})
        );
    }

    #[test]
    fn unknown_contact_is_a_tool_error_naming_the_id() {
        let mut world = world();
        let error = call(
            &mut world,
            "crm_get_contact",
            &args(json!({"contact_id": "C-999"})),
        )
        .expect_err("unknown");
        assert_eq!(
            error,
            "contact `C-999` not found; use crm_search_contacts to find the right id"
        );
    }

    #[test]
    fn delete_removes_the_contact_and_its_activities() {
        let mut world = world();
        let result = call(
            &mut world,
            "crm_delete_contact",
            &args(json!({"contact_id": "C-001", "confirm": true})),
        )
        .expect("delete");
        assert_eq!(result, json!({"deleted": "C-001", "activities_deleted": 1}));
        assert_eq!(world.collection("contacts").len(), 1);
        assert!(world.collection("activities").is_empty());
    }

    #[test]
    fn forecast_weights_open_deals_in_the_quarter() {
        let mut world = world();
        let result = call(
            &mut world,
            "crm_forecast",
            &args(json!({"quarter": "2026-Q1"})),
        )
        .expect("forecast");
        assert_eq!(result["closed_won"], 1000.0);
        assert_eq!(result["weighted_pipeline"], 1000.0);
        assert_eq!(result["forecast"], 2000.0);
        assert_eq!(result["deals_counted"], 2);
    }

    #[test]
    fn search_matches_name_email_and_company_case_insensitively() {
        let mut world = world();
        let result = call(
            &mut world,
            "crm_search_contacts",
            &args(json!({"query": "acme"})),
        )
        .expect("search");
        assert_eq!(result["total"], 1);
        assert_eq!(result["contacts"][0]["id"], "C-001");
        let result = call(
            &mut world,
            "crm_search_contacts",
            &args(json!({"query": "john"})),
        )
        .expect("search");
        assert_eq!(result["contacts"][0]["id"], "C-002");
    }
}
