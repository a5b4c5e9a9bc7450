//! Behaviour of the `data_*` tools: read-only SQL and aggregates over the state, business
//! reports, exports, record transformation and report schedules.

use serde_json::{Map, Value, json};

use super::{FROZEN_NOW, World, dates, integer, round2, sql, text};

/// Tables whose rows only an administrator may export.
const RESTRICTED_EXPORTS: [&str; 2] = ["users", "audit_log"];

pub(super) fn call(
    world: &mut World,
    tool: &str,
    args: &Map<String, Value>,
) -> Result<Value, String> {
    match tool {
        "data_list_tables" => Ok(list_tables(world)),
        "data_query_sql" => {
            let max_rows = integer(args, "max_rows").unwrap_or(100).max(1) as usize;
            sql::run(
                &world.state,
                text(args, "query").unwrap_or_default(),
                max_rows,
            )
        }
        "data_aggregate" => aggregate(world, args),
        "data_generate_report" => generate_report(world, args),
        "data_export" => export(world, args),
        "data_transform" => transform(args),
        "data_schedule_report" => schedule_report(world, args),
        "data_delete_scheduled_report" => delete_schedule(world, args),
        _ => Err(format!("tool `{tool}` has no behaviour in this world")),
    }
}

fn list_tables(world: &World) -> Value {
    let tables: Vec<Value> = world
        .state
        .iter()
        .map(|(name, records)| {
            let records = records.as_array().map(Vec::as_slice).unwrap_or_default();
            json!({"name": name, "columns": sql::columns(records), "rows": records.len()})
        })
        .collect();
    json!({"tables": tables})
}

/// The records of `table` kept by the exact-match `where` filter.
fn filtered<'a>(
    world: &'a World,
    table: &str,
    args: &Map<String, Value>,
) -> Result<Vec<&'a Value>, String> {
    let Some(records) = world.state.get(table).and_then(Value::as_array) else {
        let tables: Vec<&str> = world.state.keys().map(String::as_str).collect();
        return Err(format!(
            "unknown table `{table}`; tables: {}",
            tables.join(", ")
        ));
    };
    let filter = args
        .get("where")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    check_columns(table, records, filter.keys().map(String::as_str))?;
    Ok(records
        .iter()
        .filter(|r| {
            filter
                .iter()
                .all(|(key, wanted)| crate::json::match_value(wanted, &r[key], "").is_ok())
        })
        .collect())
}

fn check_columns<'a>(
    table: &str,
    records: &[Value],
    wanted: impl IntoIterator<Item = &'a str>,
) -> Result<(), String> {
    let known = sql::columns(records);
    for column in wanted {
        if !known.iter().any(|k| k == column) {
            return Err(format!(
                "unknown column `{column}` in `{table}`; columns: {}",
                known.join(", ")
            ));
        }
    }
    Ok(())
}

fn aggregate(world: &World, args: &Map<String, Value>) -> Result<Value, String> {
    let table = text(args, "table").unwrap_or_default();
    let metric = text(args, "metric").unwrap_or("count");
    let rows = filtered(world, table, args)?;
    let field = text(args, "field");
    if metric != "count" && field.is_none() {
        return Err(format!(
            "metric `{metric}` needs `field`, the numeric column to aggregate"
        ));
    }
    let all = world.collection(table);
    check_columns(table, all, field.into_iter().chain(text(args, "group_by")))?;
    let compute = |rows: &[&Value]| -> Value {
        let numbers: Vec<f64> = rows
            .iter()
            .filter_map(|r| field.and_then(|f| r[f].as_f64()))
            .collect();
        match metric {
            "count" => json!(rows.len()),
            "sum" => json!(round2(numbers.iter().sum())),
            "avg" if numbers.is_empty() => Value::Null,
            "avg" => json!(round2(numbers.iter().sum::<f64>() / numbers.len() as f64)),
            "min" => numbers
                .iter()
                .copied()
                .reduce(f64::min)
                .map_or(Value::Null, |n| json!(n)),
            _ => numbers
                .iter()
                .copied()
                .reduce(f64::max)
                .map_or(Value::Null, |n| json!(n)),
        }
    };
    let Some(group_by) = text(args, "group_by") else {
        return Ok(
            json!({"table": table, "metric": metric, "field": field, "value": compute(&rows), "rows": rows.len()}),
        );
    };
    let mut keys: Vec<&Value> = Vec::new();
    for row in &rows {
        if !keys.contains(&&row[group_by]) {
            keys.push(&row[group_by]);
        }
    }
    let groups: Vec<Value> = keys
        .into_iter()
        .map(|key| {
            let members: Vec<&Value> = rows
                .iter()
                .copied()
                .filter(|r| &r[group_by] == key)
                .collect();
            json!({"key": key, "value": compute(&members), "rows": members.len()})
        })
        .collect();
    Ok(
        json!({"table": table, "metric": metric, "field": field, "group_by": group_by, "groups": groups}),
    )
}

fn sum(records: &[&Value], field: &str) -> f64 {
    round2(records.iter().filter_map(|r| r[field].as_f64()).sum())
}

fn report_summary(world: &World, report: &str, range: Option<(i64, i64)>) -> Value {
    let in_range = |value: &Value| range.is_none_or(|range| dates::is_within(value, range));
    match report {
        "pipeline_summary" | "revenue_by_owner" => {
            let deals: Vec<&Value> = world
                .collection("deals")
                .iter()
                .filter(|d| in_range(&d["close_date"]))
                .collect();
            let group = if report == "pipeline_summary" {
                "stage"
            } else {
                "owner"
            };
            let counted: Vec<&Value> = deals
                .iter()
                .copied()
                .filter(|d| report == "pipeline_summary" || d["stage"] == "closed_won")
                .collect();
            let mut breakdown = Map::new();
            for deal in &counted {
                let key = deal[group].as_str().unwrap_or("unknown").to_string();
                let entry = breakdown.entry(key).or_insert(json!(0.0));
                *entry = json!(round2(
                    entry.as_f64().unwrap_or(0.0) + deal["amount"].as_f64().unwrap_or(0.0)
                ));
            }
            let open: Vec<&Value> = deals
                .iter()
                .copied()
                .filter(|d| !d["stage"].as_str().unwrap_or("").starts_with("closed"))
                .collect();
            json!({
                "deals": counted.len(),
                "total_amount": sum(&counted, "amount"),
                "open_pipeline": sum(&open, "amount"),
                format!("by_{group}"): breakdown,
            })
        }
        "inventory_status" => {
            let products = world.collection("inventory");
            let low: Vec<&Value> = products
                .iter()
                .filter(|p| {
                    super::whole(&p["on_hand"], 0) - super::whole(&p["reserved"], 0)
                        <= super::whole(&p["reorder_point"], 0)
                })
                .map(|p| &p["id"])
                .collect();
            let value: f64 = products
                .iter()
                .map(|p| {
                    p["on_hand"].as_f64().unwrap_or(0.0) * p["unit_cost"].as_f64().unwrap_or(0.0)
                })
                .sum();
            json!({"products": products.len(), "below_reorder_point": low, "stock_value": round2(value)})
        }
        "open_invoices" => {
            let open: Vec<&Value> = world
                .collection("invoices")
                .iter()
                .filter(|i| i["status"] == "open" || i["status"] == "overdue")
                .collect();
            let overdue: Vec<&Value> = open
                .iter()
                .copied()
                .filter(|i| i["status"] == "overdue")
                .collect();
            json!({
                "open_invoices": open.len(),
                "outstanding": sum(&open, "amount"),
                "overdue_invoices": overdue.len(),
                "overdue_amount": sum(&overdue, "amount"),
                "invoice_ids": open.iter().map(|i| &i["id"]).collect::<Vec<_>>(),
            })
        }
        _ => {
            let orders: Vec<&Value> = world
                .collection("orders")
                .iter()
                .filter(|o| in_range(&o["created_at"]))
                .collect();
            let live: Vec<&Value> = orders
                .iter()
                .copied()
                .filter(|o| o["status"] != "cancelled")
                .collect();
            let mut by_status = Map::new();
            for order in &orders {
                let key = order["status"].as_str().unwrap_or("unknown").to_string();
                let entry = by_status.entry(key).or_insert(json!(0));
                *entry = json!(entry.as_u64().unwrap_or(0) + 1);
            }
            json!({"orders": orders.len(), "revenue": sum(&live, "total"), "by_status": by_status})
        }
    }
}

fn generate_report(world: &mut World, args: &Map<String, Value>) -> Result<Value, String> {
    let report = text(args, "report").unwrap_or("order_summary");
    let quarter = text(args, "quarter");
    let range = match quarter {
        Some(q) => Some(
            dates::quarter_range(q)
                .ok_or_else(|| format!("quarter `{q}` is not of the form YYYY-Qn"))?,
        ),
        None => None,
    };
    let summary = report_summary(world, report, range);
    let saved = json!({
        "id": world.next_id("reports", "R-"),
        "report": report,
        "quarter": quarter,
        "generated_at": FROZEN_NOW,
        "summary": summary,
    });
    world.collection_mut("reports").push(saved.clone());
    Ok(saved)
}

fn csv_cell(value: &Value) -> String {
    let text = match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

fn export(world: &mut World, args: &Map<String, Value>) -> Result<Value, String> {
    let table = text(args, "table").unwrap_or_default();
    if RESTRICTED_EXPORTS.contains(&table) {
        return Err(format!(
            "exports of `{table}` need an administrator and are refused; ask an admin to run it"
        ));
    }
    let rows: Vec<Value> = filtered(world, table, args)?.into_iter().cloned().collect();
    let all_columns = sql::columns(world.collection(table));
    let columns: Vec<String> = match args.get("columns").and_then(Value::as_array) {
        Some(wanted) => {
            let wanted: Vec<String> = wanted
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect();
            check_columns(
                table,
                world.collection(table),
                wanted.iter().map(String::as_str),
            )?;
            wanted
        }
        None => all_columns,
    };
    let format = text(args, "format").unwrap_or("csv");
    let content = if format == "json" {
        let records: Vec<Value> = rows
            .iter()
            .map(|r| {
                Value::Object(
                    columns
                        .iter()
                        .map(|c| (c.clone(), r[c.as_str()].clone()))
                        .collect(),
                )
            })
            .collect();
        Value::Array(records).to_string()
    } else {
        let mut lines = vec![columns.join(",")];
        lines.extend(rows.iter().map(|r| {
            columns
                .iter()
                .map(|c| csv_cell(&r[c.as_str()]))
                .collect::<Vec<_>>()
                .join(",")
        }));
        lines.join("\n")
    };
    let id = world.next_id("exports", "X-");
    let exported = json!({
        "id": id,
        "table": table,
        "format": format,
        "columns": columns,
        "rows": rows.len(),
        "file": format!("{}-{table}.{format}", id.to_lowercase()),
        "created_at": FROZEN_NOW,
    });
    world.collection_mut("exports").push(exported.clone());
    world.audit(
        "export_created",
        table,
        format!("{format}, {} rows", rows.len()),
    );
    let mut result = exported;
    result["content"] = json!(content);
    Ok(result)
}

fn transform(args: &Map<String, Value>) -> Result<Value, String> {
    let mut records: Vec<Value> = args
        .get("records")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let steps = args
        .get("steps")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (index, step) in steps.iter().enumerate() {
        let field = step["field"].as_str();
        let need_field = || {
            field.ok_or_else(|| {
                format!(
                    "steps[{index}]: `{}` needs `field`",
                    step["op"].as_str().unwrap_or("?")
                )
            })
        };
        match step["op"].as_str().unwrap_or_default() {
            "filter" => {
                let field = need_field()?;
                records.retain(|r| crate::json::match_value(&step["value"], &r[field], "").is_ok());
            }
            "sort" => {
                let field = need_field()?;
                records.sort_by(|a, b| {
                    let order = match (a[field].as_f64(), b[field].as_f64()) {
                        (Some(x), Some(y)) => x.total_cmp(&y),
                        _ => a[field].to_string().cmp(&b[field].to_string()),
                    };
                    if step["descending"].as_bool().unwrap_or(false) {
                        order.reverse()
                    } else {
                        order
                    }
                });
            }
            "select" => {
                let fields: Vec<&str> = step["fields"]
                    .as_array()
                    .ok_or_else(|| format!("steps[{index}]: `select` needs `fields`"))?
                    .iter()
                    .filter_map(Value::as_str)
                    .collect();
                for record in &mut records {
                    if let Some(object) = record.as_object_mut() {
                        object.retain(|key, _| fields.contains(&key.as_str()));
                    }
                }
            }
            _ => {
                let field = need_field()?;
                let to = step["to"]
                    .as_str()
                    .ok_or_else(|| format!("steps[{index}]: `rename` needs `to`"))?;
                for record in &mut records {
                    if let Some(object) = record.as_object_mut()
                        && let Some(value) = object.remove(field)
                    {
                        object.insert(to.to_string(), value);
                    }
                }
            }
        }
    }
    Ok(json!({"records": records, "count": records.len()}))
}

fn schedule_report(world: &mut World, args: &Map<String, Value>) -> Result<Value, String> {
    let start = match text(args, "start_date") {
        Some(date) => dates::parse_date(date).ok_or_else(|| format!("`{date}` is not a date"))?,
        None => dates::today() + 1,
    };
    if start < dates::today() {
        return Err(format!(
            "start_date `{}` is in the past; today is {}",
            dates::format_date(start),
            &FROZEN_NOW[..10]
        ));
    }
    let schedule = json!({
        "id": world.next_id("scheduled_reports", "SR-"),
        "report": args.get("report").cloned().unwrap_or(Value::Null),
        "frequency": args.get("frequency").cloned().unwrap_or(Value::Null),
        "recipients": args.get("recipients").cloned().unwrap_or_else(|| json!([])),
        "start_date": dates::format_date(start),
    });
    world
        .collection_mut("scheduled_reports")
        .push(schedule.clone());
    Ok(schedule)
}

fn delete_schedule(world: &mut World, args: &Map<String, Value>) -> Result<Value, String> {
    let id = text(args, "schedule_id").unwrap_or_default().to_string();
    let schedules = world.collection_mut("scheduled_reports");
    let before = schedules.len();
    schedules.retain(|s| s["id"] != id.as_str());
    if schedules.len() == before {
        return Err(format!(
            "schedule `{id}` not found; list schedules with data_query_sql on `scheduled_reports`"
        ));
    }
    Ok(json!({"deleted": id}))
}

#[cfg(test)]
mod tests {
    //! The data tools: SQL sees earlier writes, reports and exports saved, transforms in order.

    use super::*;

    fn world() -> World {
        let fixture = include_str!("../../fixtures/enterprise.json");
        World::new(&serde_json::from_str(fixture).expect("fixture is JSON"))
    }

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().cloned().expect("object")
    }

    #[test]
    fn sql_reads_see_earlier_writes() {
        let mut world = world();
        let query = args(json!({"query": "SELECT COUNT(*) FROM scheduled_reports"}));
        assert_eq!(
            call(&mut world, "data_query_sql", &query).expect("q")["rows"][0]["count(*)"],
            2
        );
        call(
            &mut world,
            "data_delete_scheduled_report",
            &args(json!({"schedule_id": "SR-002", "confirm": true})),
        )
        .expect("delete");
        assert_eq!(
            call(&mut world, "data_query_sql", &query).expect("q")["rows"][0]["count(*)"],
            1
        );
    }

    #[test]
    fn aggregate_groups_and_filters() {
        let mut world = world();
        let result = call(&mut world, "data_aggregate", &args(json!({
            "table": "deals", "metric": "sum", "field": "amount", "group_by": "owner", "where": {"currency": "USD"}
        }))).expect("aggregate");
        assert_eq!(
            result["groups"][0],
            json!({"key": "Nina Ross", "value": 370000.0, "rows": 2})
        );
        let error = call(
            &mut world,
            "data_aggregate",
            &args(json!({"table": "deals", "metric": "avg"})),
        )
        .expect_err("field");
        assert_eq!(
            error,
            "metric `avg` needs `field`, the numeric column to aggregate"
        );
    }

    #[test]
    fn reports_summarise_and_are_saved() {
        let mut world = world();
        let report = call(
            &mut world,
            "data_generate_report",
            &args(json!({"report": "open_invoices"})),
        )
        .expect("report");
        assert_eq!(report["id"], "R-001");
        assert_eq!(report["summary"]["outstanding"], 4495.0);
        assert_eq!(report["summary"]["overdue_invoices"], 1);
        let pipeline = call(
            &mut world,
            "data_generate_report",
            &args(json!({"report": "revenue_by_owner", "quarter": "2026-Q1"})),
        )
        .expect("report");
        assert_eq!(
            pipeline["summary"]["by_owner"],
            json!({"Omar Haddad": 75000.0})
        );
    }

    #[test]
    fn exports_write_a_file_record_and_refuse_user_data() {
        let mut world = world();
        let export = call(
            &mut world,
            "data_export",
            &args(json!({
                "table": "invoices", "columns": ["id", "amount"], "where": {"status": "overdue"}
            })),
        )
        .expect("export");
        assert_eq!(export["id"], "X-001");
        assert_eq!(export["content"], "id,amount\nINV-003,1798.0");
        assert_eq!(
            world.collection("audit_log").last().expect("audited")["action"],
            "export_created"
        );
        let error = call(&mut world, "data_export", &args(json!({"table": "users"})))
            .expect_err("restricted");
        assert_eq!(
            error,
            "exports of `users` need an administrator and are refused; ask an admin to run it"
        );
    }

    #[test]
    fn transform_applies_steps_in_order() {
        let mut world = world();
        let result = call(&mut world, "data_transform", &args(json!({
            "records": [{"n": "a", "v": 2}, {"n": "b", "v": 5}, {"n": "c", "v": 1}],
            "steps": [{"op": "sort", "field": "v", "descending": true}, {"op": "select", "fields": ["n"]}, {"op": "rename", "field": "n", "to": "name"}]
        }))).expect("transform");
        assert_eq!(
            result["records"],
            json!([{"name": "b"}, {"name": "a"}, {"name": "c"}])
        );
    }
}
