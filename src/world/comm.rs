//! Behaviour of the `comm_*` tools: email, team channels, notifications, calendar.

use serde_json::{Map, Value, json};

use super::{FROZEN_NOW, World, contains_ci, dates, flag, integer, text};

/// The address mail from the assistant is sent from.
const SENDER: &str = "assistant@toolgate.example";

pub(super) fn call(
    world: &mut World,
    tool: &str,
    args: &Map<String, Value>,
) -> Result<Value, String> {
    match tool {
        "comm_send_email" => send_email(world, args),
        "comm_search_emails" => search_emails(world, args),
        "comm_send_message" => send_message(world, args),
        "comm_send_notification" => send_notification(world, args),
        "comm_list_events" => list_events(world, args),
        "comm_create_event" => create_event(world, args),
        _ => Err(format!("tool `{tool}` has no behaviour in this world")),
    }
}

fn strings(args: &Map<String, Value>, name: &str) -> Vec<String> {
    args.get(name)
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn send_email(world: &mut World, args: &Map<String, Value>) -> Result<Value, String> {
    for attachment in strings(args, "attachments") {
        let collection = match attachment.split('-').next() {
            Some("X") => "exports",
            Some("INV") => "invoices",
            _ => "reports",
        };
        if world.find(collection, &attachment).is_none() {
            return Err(format!(
                "attachment `{attachment}` not found; create it first (data_export, erp_create_invoice or data_generate_report)"
            ));
        }
    }
    let email = json!({
        "id": world.next_id("emails", "E-"),
        "direction": "outbound",
        "from": SENDER,
        "to": args.get("to").cloned().unwrap_or_else(|| json!([])),
        "cc": args.get("cc").cloned().unwrap_or_else(|| json!([])),
        "subject": args.get("subject").cloned().unwrap_or(Value::Null),
        "body": args.get("body").cloned().unwrap_or(Value::Null),
        "attachments": args.get("attachments").cloned().unwrap_or_else(|| json!([])),
        "sent_at": FROZEN_NOW,
    });
    world.collection_mut("emails").push(email.clone());
    Ok(json!({"id": email["id"], "status": "sent", "to": email["to"], "subject": email["subject"]}))
}

fn search_emails(world: &World, args: &Map<String, Value>) -> Result<Value, String> {
    let since = match text(args, "since") {
        Some(date) => {
            Some(dates::parse_date(date).ok_or_else(|| format!("`{date}` is not a date"))?)
        }
        None => None,
    };
    let mut emails: Vec<&Value> = world
        .collection("emails")
        .iter()
        .filter(|e| {
            text(args, "query")
                .is_none_or(|q| contains_ci(&e["subject"], q) || contains_ci(&e["body"], q))
        })
        .filter(|e| text(args, "from").is_none_or(|f| contains_ci(&e["from"], f)))
        .filter(|e| since.is_none_or(|since| dates::is_on_or_after(&e["sent_at"], since)))
        .collect();
    emails.sort_by(|a, b| b["sent_at"].as_str().cmp(&a["sent_at"].as_str()));
    let total = emails.len();
    let limit = integer(args, "limit").unwrap_or(10).max(1) as usize;
    let emails: Vec<Value> = emails.into_iter().take(limit).cloned().collect();
    Ok(json!({"emails": emails, "total": total}))
}

/// The active user `id`, or an error an agent can act on.
fn active_user<'a>(world: &'a World, id: &str) -> Result<&'a Value, String> {
    let user = world.find("users", id).ok_or_else(|| {
        format!("user `{id}` not found; use admin_search_users to find the right id")
    })?;
    if user["status"] != "active" {
        return Err(format!(
            "user `{id}` ({}) is deactivated and cannot be notified or mentioned",
            user["name"].as_str().unwrap_or(id)
        ));
    }
    Ok(user)
}

fn send_message(world: &mut World, args: &Map<String, Value>) -> Result<Value, String> {
    let mentions = strings(args, "mention_user_ids");
    for id in &mentions {
        active_user(world, id)?;
    }
    let message = json!({
        "id": world.next_id("messages", "M-"),
        "channel": args.get("channel").cloned().unwrap_or(Value::Null),
        "author_id": "assistant",
        "text": args.get("text").cloned().unwrap_or(Value::Null),
        "mention_user_ids": mentions,
        "sent_at": FROZEN_NOW,
    });
    world.collection_mut("messages").push(message.clone());
    Ok(message)
}

fn send_notification(world: &mut World, args: &Map<String, Value>) -> Result<Value, String> {
    let user_id = text(args, "user_id").unwrap_or_default();
    active_user(world, user_id)?;
    let notification = json!({
        "id": world.next_id("notifications", "N-"),
        "user_id": user_id,
        "title": args.get("title").cloned().unwrap_or(Value::Null),
        "body": args.get("body").cloned().unwrap_or(Value::Null),
        "priority": text(args, "priority").unwrap_or("normal"),
        "created_at": FROZEN_NOW,
    });
    world
        .collection_mut("notifications")
        .push(notification.clone());
    Ok(notification)
}

fn date_arg(args: &Map<String, Value>, name: &str) -> Result<i64, String> {
    let value = text(args, name).unwrap_or_default();
    dates::parse_date(value).ok_or_else(|| format!("`{name}` `{value}` is not a date (YYYY-MM-DD)"))
}

fn attends(event: &Value, address: &str) -> bool {
    event["attendees"].as_array().is_some_and(|a| {
        a.iter()
            .any(|x| x.as_str().is_some_and(|x| x.eq_ignore_ascii_case(address)))
    })
}

fn list_events(world: &World, args: &Map<String, Value>) -> Result<Value, String> {
    let (from, to) = (date_arg(args, "from_date")?, date_arg(args, "to_date")?);
    if to < from || to - from > 31 {
        return Err("`to_date` must be on or after `from_date` and at most 31 days later".into());
    }
    let events: Vec<Value> = world
        .collection("calendar_events")
        .iter()
        .filter(|e| {
            let day = e["start"]
                .as_str()
                .and_then(|s| s.get(..10))
                .and_then(dates::parse_date);
            day.is_some_and(|day| (from..=to).contains(&day))
        })
        .filter(|e| text(args, "attendee").is_none_or(|a| attends(e, a)))
        .cloned()
        .collect();
    Ok(json!({"events": events, "count": events.len()}))
}

fn create_event(world: &mut World, args: &Map<String, Value>) -> Result<Value, String> {
    let start_text = text(args, "start").unwrap_or_default();
    let start = dates::parse_timestamp(start_text)
        .ok_or_else(|| format!("`start` `{start_text}` is not an RFC 3339 time"))?;
    let minutes = integer(args, "duration_minutes").unwrap_or(30);
    let end = start + minutes * 60;
    let attendees = strings(args, "attendees");
    if !flag(args, "allow_conflicts", false) {
        for event in world.collection("calendar_events") {
            let Some(other_start) = event["start"].as_str().and_then(dates::parse_timestamp) else {
                continue;
            };
            let other_end = other_start + super::whole(&event["duration_minutes"], 30) * 60;
            let busy = attendees.iter().find(|a| attends(event, a));
            if let Some(busy) = busy
                && start < other_end
                && other_start < end
            {
                return Err(format!(
                    "`{busy}` is busy: conflicts with `{}` \"{}\" at {}; pick another time or set allow_conflicts",
                    event["id"].as_str().unwrap_or_default(),
                    event["title"].as_str().unwrap_or_default(),
                    event["start"].as_str().unwrap_or_default()
                ));
            }
        }
    }
    let event = json!({
        "id": world.next_id("calendar_events", "EV-"),
        "title": args.get("title").cloned().unwrap_or(Value::Null),
        "start": start_text,
        "duration_minutes": minutes,
        "attendees": attendees,
        "location": args.get("location").cloned().unwrap_or(Value::Null),
    });
    world.collection_mut("calendar_events").push(event.clone());
    Ok(event)
}

#[cfg(test)]
mod tests {
    //! The comm tools: clashing events and inactive users refused; sent mail and events found.

    use super::*;

    fn world() -> World {
        let fixture = include_str!("../../fixtures/enterprise.json");
        World::new(&serde_json::from_str(fixture).expect("fixture is JSON"))
    }

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().cloned().expect("object")
    }

    #[test]
    fn an_overlapping_event_is_refused_with_the_conflict_named() {
        let mut world = world();
        let error = call(&mut world, "comm_create_event", &args(json!({
            "title": "Sync", "start": "2026-01-16T09:30:00Z", "attendees": ["tom.becker@toolgate.example"]
        }))).expect_err("busy");
        assert_eq!(
            error,
            "`tom.becker@toolgate.example` is busy: conflicts with `EV-001` \"Pipeline review\" at 2026-01-16T09:00:00Z; pick another time or set allow_conflicts"
        );
        let event = call(&mut world, "comm_create_event", &args(json!({
            "title": "Sync", "start": "2026-01-16T10:00:00Z", "attendees": ["tom.becker@toolgate.example"]
        }))).expect("free right after");
        assert_eq!(event["id"], "EV-004");
    }

    #[test]
    fn deactivated_users_cannot_be_notified() {
        let mut world = world();
        let error = call(
            &mut world,
            "comm_send_notification",
            &args(json!({"user_id": "U-009", "title": "Hi"})),
        )
        .expect_err("deactivated");
        assert_eq!(
            error,
            "user `U-009` (Sam Ortiz) is deactivated and cannot be notified or mentioned"
        );
        let sent = call(
            &mut world,
            "comm_send_notification",
            &args(json!({"user_id": "U-005", "title": "Hi"})),
        )
        .expect("active");
        assert_eq!(sent["id"], "N-002");
        assert_eq!(sent["priority"], "normal");
    }

    #[test]
    fn sent_email_is_found_by_a_later_search() {
        let mut world = world();
        call(&mut world, "comm_send_email", &args(json!({
            "to": ["aiko@hoshi.example"], "subject": "Your quote", "body": "20 sensor kits: 980 USD"
        }))).expect("sent");
        let found = call(
            &mut world,
            "comm_search_emails",
            &args(json!({"query": "your quote"})),
        )
        .expect("search");
        assert_eq!(found["total"], 1);
        assert_eq!(found["emails"][0]["id"], "E-005");
        let error = call(
            &mut world,
            "comm_send_email",
            &args(json!({
                "to": ["a@b.example"], "subject": "s", "body": "b", "attachments": ["X-001"]
            })),
        )
        .expect_err("no export yet");
        assert!(error.starts_with("attachment `X-001` not found"), "{error}");
    }

    #[test]
    fn events_are_listed_by_date_range_and_attendee() {
        let mut world = world();
        let listed = call(&mut world, "comm_list_events", &args(json!({
            "from_date": "2026-01-19", "to_date": "2026-01-23", "attendee": "nina.ross@toolgate.example"
        }))).expect("list");
        assert_eq!(listed["count"], 1);
        assert_eq!(listed["events"][0]["id"], "EV-003");
    }
}
