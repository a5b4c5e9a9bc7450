//! Behaviour of the `erp_*` tools: sales orders, inventory, purchase orders, invoices.
//!
//! Stock is `on_hand` minus `reserved`: a new order reserves its units, a cancellation
//! releases them, a purchase order changes nothing until its goods arrive.

use serde_json::{Map, Value, json};

use super::{FROZEN_NOW, World, contains_ci, dates, integer, round2, text, whole};

pub(super) fn call(
    world: &mut World,
    tool: &str,
    args: &Map<String, Value>,
) -> Result<Value, String> {
    match tool {
        "erp_search_orders" => search_orders(world, args),
        "erp_get_order" => get_order(world, args),
        "erp_create_order" => create_order(world, args),
        "erp_cancel_order" => cancel_order(world, args),
        "erp_check_inventory" => check_inventory(world, args),
        "erp_create_purchase_order" => create_purchase_order(world, args),
        "erp_create_invoice" => create_invoice(world, args),
        _ => Err(format!("tool `{tool}` has no behaviour in this world")),
    }
}

fn order_not_found(id: &str) -> String {
    format!("order `{id}` not found; use erp_search_orders to find the right id")
}

fn unknown_sku(sku: &str) -> String {
    format!("unknown SKU `{sku}`; use erp_check_inventory to list the products")
}

fn available(product: &Value) -> i64 {
    whole(&product["on_hand"], 0) - whole(&product["reserved"], 0)
}

fn search_orders(world: &World, args: &Map<String, Value>) -> Result<Value, String> {
    let since = match text(args, "created_after") {
        Some(date) => {
            Some(dates::parse_date(date).ok_or_else(|| format!("`{date}` is not a date"))?)
        }
        None => None,
    };
    let mut orders: Vec<&Value> = world
        .collection("orders")
        .iter()
        .filter(|o| text(args, "company").is_none_or(|c| contains_ci(&o["company"], c)))
        .filter(|o| text(args, "contact_id").is_none_or(|c| o["contact_id"] == c))
        .filter(|o| text(args, "status").is_none_or(|s| o["status"] == s))
        .filter(|o| since.is_none_or(|since| dates::is_on_or_after(&o["created_at"], since)))
        .collect();
    orders.sort_by(|a, b| b["created_at"].as_str().cmp(&a["created_at"].as_str()));
    let total = orders.len();
    let limit = integer(args, "limit").unwrap_or(20).max(1) as usize;
    let summaries: Vec<Value> = orders
        .into_iter()
        .take(limit)
        .map(|o| {
            json!({
                "id": o["id"], "company": o["company"], "contact_id": o["contact_id"],
                "status": o["status"], "total": o["total"], "currency": o["currency"],
                "created_at": o["created_at"],
            })
        })
        .collect();
    Ok(json!({"orders": summaries, "total": total}))
}

fn get_order(world: &World, args: &Map<String, Value>) -> Result<Value, String> {
    let id = text(args, "order_id").unwrap_or_default();
    let mut order = world
        .find("orders", id)
        .cloned()
        .ok_or_else(|| order_not_found(id))?;
    let invoice = world
        .collection("invoices")
        .iter()
        .find(|invoice| invoice["order_id"] == id)
        .map(|invoice| json!({"id": invoice["id"], "status": invoice["status"], "amount": invoice["amount"]}));
    order["invoice"] = invoice.unwrap_or(Value::Null);
    Ok(order)
}

fn create_order(world: &mut World, args: &Map<String, Value>) -> Result<Value, String> {
    let contact_id = text(args, "contact_id").unwrap_or_default();
    let contact = world.find("contacts", contact_id).cloned().ok_or_else(|| {
        format!("contact `{contact_id}` not found; use crm_search_contacts to find the right id")
    })?;
    let requested = args
        .get("lines")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut lines = Vec::new();
    let mut wanted: Vec<(String, i64)> = Vec::new();
    for line in &requested {
        let sku = line["sku"].as_str().unwrap_or_default();
        let quantity = whole(&line["quantity"], 0);
        let product = world
            .find("inventory", sku)
            .ok_or_else(|| unknown_sku(sku))?;
        let already: i64 = wanted
            .iter()
            .filter(|(s, _)| s == sku)
            .map(|(_, q)| q)
            .sum();
        let free = available(product);
        if already + quantity > free {
            return Err(format!(
                "only {free} units of `{sku}` ({}) are available but {} were ordered; order fewer, \
                 or restock with erp_create_purchase_order",
                product["name"].as_str().unwrap_or(sku),
                already + quantity
            ));
        }
        wanted.push((sku.to_string(), quantity));
        lines.push(json!({"sku": sku, "quantity": quantity, "unit_price": product["unit_price"]}));
    }
    for (sku, quantity) in &wanted {
        if let Some(product) = world.find_mut("inventory", sku) {
            product["reserved"] = json!(whole(&product["reserved"], 0) + quantity);
        }
    }
    let total: f64 = lines
        .iter()
        .map(|l| l["quantity"].as_f64().unwrap_or(0.0) * l["unit_price"].as_f64().unwrap_or(0.0))
        .sum();
    let mut order = json!({
        "id": world.next_id("orders", "O-"),
        "contact_id": contact_id,
        "company": contact["company"],
        "status": "pending",
        "lines": lines,
        "total": round2(total),
        "currency": "USD",
        "created_at": FROZEN_NOW,
        "ship_to": args.get("ship_to").cloned().unwrap_or_else(|| contact["address"].clone()),
    });
    if let Some(notes) = args.get("notes") {
        order["notes"] = notes.clone();
    }
    world.collection_mut("orders").push(order.clone());
    Ok(order)
}

fn cancel_order(world: &mut World, args: &Map<String, Value>) -> Result<Value, String> {
    let id = text(args, "order_id").unwrap_or_default().to_string();
    let order = world
        .find("orders", &id)
        .cloned()
        .ok_or_else(|| order_not_found(&id))?;
    let status = order["status"].as_str().unwrap_or_default();
    match status {
        "shipped" | "delivered" => {
            return Err(format!(
                "order `{id}` is {status} and can no longer be cancelled; a return must be arranged instead"
            ));
        }
        "cancelled" => return Ok(json!({"order_id": id, "status": "cancelled", "released": []})),
        _ => {}
    }
    let lines = order["lines"].as_array().cloned().unwrap_or_default();
    for line in &lines {
        let sku = line["sku"].as_str().unwrap_or_default();
        if let Some(product) = world.find_mut("inventory", sku) {
            let reserved = whole(&product["reserved"], 0);
            product["reserved"] = json!((reserved - whole(&line["quantity"], 0)).max(0));
        }
    }
    if let Some(order) = world.find_mut("orders", &id) {
        order["status"] = "cancelled".into();
        order["cancel_reason"] = args.get("reason").cloned().unwrap_or(Value::Null);
    }
    let released: Vec<Value> = lines
        .iter()
        .map(|l| json!({"sku": l["sku"], "quantity": l["quantity"]}))
        .collect();
    Ok(json!({"order_id": id, "status": "cancelled", "released": released}))
}

fn check_inventory(world: &World, args: &Map<String, Value>) -> Result<Value, String> {
    let skus: Option<Vec<&str>> = args
        .get("skus")
        .and_then(Value::as_array)
        .map(|skus| skus.iter().filter_map(Value::as_str).collect());
    if let Some(skus) = &skus
        && let Some(unknown) = skus
            .iter()
            .find(|sku| world.find("inventory", sku).is_none())
    {
        return Err(unknown_sku(unknown));
    }
    let low_only = super::flag(args, "below_reorder_point", false);
    let products: Vec<Value> = world
        .collection("inventory")
        .iter()
        .filter(|p| {
            skus.as_ref()
                .is_none_or(|skus| skus.iter().any(|s| p["id"] == *s))
        })
        .filter(|p| text(args, "warehouse").is_none_or(|w| p["warehouse"] == w))
        .filter(|p| !low_only || available(p) <= whole(&p["reorder_point"], 0))
        .map(|p| {
            let mut product = p.clone();
            product["available"] = json!(available(p));
            product
        })
        .collect();
    Ok(json!({"products": products, "count": products.len()}))
}

fn create_purchase_order(world: &mut World, args: &Map<String, Value>) -> Result<Value, String> {
    let supplier_id = text(args, "supplier_id").unwrap_or_default();
    let supplier = world.find("suppliers", supplier_id).cloned().ok_or_else(|| {
        format!("supplier `{supplier_id}` not found; the supplier_id of each product is in erp_check_inventory")
    })?;
    if let Some(date) = text(args, "expected_date") {
        let days = dates::parse_date(date).ok_or_else(|| format!("`{date}` is not a date"))?;
        if days <= dates::today() {
            return Err(format!(
                "expected_date `{date}` must be after today ({})",
                &FROZEN_NOW[..10]
            ));
        }
    }
    let supplied: Vec<&str> = supplier["skus"]
        .as_array()
        .map(|s| s.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut lines = Vec::new();
    let mut total = 0.0;
    for line in args
        .get("lines")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let sku = line["sku"].as_str().unwrap_or_default();
        if !supplied.contains(&sku) {
            return Err(format!(
                "supplier `{supplier_id}` does not supply `{sku}`; it supplies {}",
                supplied.join(", ")
            ));
        }
        let product = world
            .find("inventory", sku)
            .ok_or_else(|| unknown_sku(sku))?;
        let unit_cost = line["unit_cost"]
            .as_f64()
            .or(product["unit_cost"].as_f64())
            .unwrap_or(0.0);
        let quantity = whole(&line["quantity"], 0);
        total += unit_cost * quantity as f64;
        lines.push(json!({"sku": sku, "quantity": quantity, "unit_cost": unit_cost}));
    }
    let order = json!({
        "id": world.next_id("purchase_orders", "PO-"),
        "supplier_id": supplier_id,
        "lines": lines,
        "total": round2(total),
        "status": "ordered",
        "expected_date": args.get("expected_date").cloned().unwrap_or(Value::Null),
        "created_at": FROZEN_NOW,
    });
    world.collection_mut("purchase_orders").push(order.clone());
    Ok(order)
}

fn create_invoice(world: &mut World, args: &Map<String, Value>) -> Result<Value, String> {
    let order_id = text(args, "order_id").unwrap_or_default();
    let order = world
        .find("orders", order_id)
        .cloned()
        .ok_or_else(|| order_not_found(order_id))?;
    if order["status"] == "cancelled" {
        return Err(format!(
            "order `{order_id}` is cancelled and cannot be invoiced"
        ));
    }
    if let Some(existing) = world
        .collection("invoices")
        .iter()
        .find(|i| i["order_id"] == order_id)
    {
        return Err(format!(
            "order `{order_id}` is already invoiced as `{}`",
            existing["id"].as_str().unwrap_or_default()
        ));
    }
    let due_in_days = integer(args, "due_in_days").unwrap_or(30);
    let invoice = json!({
        "id": world.next_id("invoices", "INV-"),
        "order_id": order_id,
        "company": order["company"],
        "amount": order["total"].as_f64().unwrap_or(0.0),
        "currency": order["currency"],
        "status": "open",
        "issued_at": &FROZEN_NOW[..10],
        "due_date": dates::format_date(dates::today() + due_in_days),
        "po_reference": args.get("po_reference").cloned().unwrap_or(Value::Null),
    });
    world.collection_mut("invoices").push(invoice.clone());
    Ok(invoice)
}

#[cfg(test)]
mod tests {
    //! The erp tools: orders reserve stock and cancels release it; shipped orders stay shipped.

    use super::*;

    fn world() -> World {
        let fixture = include_str!("../../fixtures/enterprise.json");
        World::new(&serde_json::from_str(fixture).expect("fixture is JSON"))
    }

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().cloned().expect("object")
    }

    #[test]
    fn an_order_reserves_stock_and_a_cancellation_releases_it() {
        let mut world = world();
        let order = call(
            &mut world,
            "erp_create_order",
            &args(json!({
                "contact_id": "C-005", "lines": [{"sku": "SKU-500", "quantity": 10}]
            })),
        )
        .expect("in stock");
        assert_eq!(order["id"], "O-008");
        assert_eq!(order["company"], "Acme");
        assert_eq!(order["total"], 1290.0);
        assert_eq!(
            world.find("inventory", "SKU-500").expect("sku")["reserved"],
            15
        );
        let cancelled = call(
            &mut world,
            "erp_cancel_order",
            &args(json!({"order_id": "O-008", "reason": "duplicate"})),
        )
        .expect("cancel");
        assert_eq!(
            cancelled["released"],
            json!([{"sku": "SKU-500", "quantity": 10}])
        );
        assert_eq!(
            world.find("inventory", "SKU-500").expect("sku")["reserved"],
            5
        );
        assert_eq!(
            world.find("orders", "O-008").expect("order")["status"],
            "cancelled"
        );
    }

    #[test]
    fn ordering_more_than_is_available_is_an_error_that_reserves_nothing() {
        let mut world = world();
        let error = call(
            &mut world,
            "erp_create_order",
            &args(json!({
                "contact_id": "C-006", "lines": [{"sku": "SKU-200", "quantity": 7}]
            })),
        )
        .expect_err("6 available");
        assert_eq!(
            error,
            "only 6 units of `SKU-200` (Gateway hub) are available but 7 were ordered; order fewer, or restock with erp_create_purchase_order"
        );
        assert_eq!(
            world.find("inventory", "SKU-200").expect("sku")["reserved"],
            2
        );
        assert_eq!(world.collection("orders").len(), 7);
    }

    #[test]
    fn shipped_orders_cannot_be_cancelled() {
        let mut world = world();
        let error = call(
            &mut world,
            "erp_cancel_order",
            &args(json!({"order_id": "O-004", "reason": "other"})),
        )
        .expect_err("shipped");
        assert_eq!(
            error,
            "order `O-004` is shipped and can no longer be cancelled; a return must be arranged instead"
        );
    }

    #[test]
    fn low_stock_filter_compares_available_units_with_the_reorder_point() {
        let mut world = world();
        let low = call(
            &mut world,
            "erp_check_inventory",
            &args(json!({"below_reorder_point": true})),
        )
        .expect("list");
        let ids: Vec<&str> = low["products"]
            .as_array()
            .expect("array")
            .iter()
            .filter_map(|p| p["id"].as_str())
            .collect();
        assert_eq!(ids, ["SKU-200", "SKU-400", "SKU-600"]);
    }

    #[test]
    fn invoices_are_due_after_the_payment_term_and_issued_once() {
        let mut world = world();
        let invoice = call(
            &mut world,
            "erp_create_invoice",
            &args(json!({"order_id": "O-002", "due_in_days": 14})),
        )
        .expect("invoice");
        assert_eq!(invoice["id"], "INV-004");
        assert_eq!(invoice["amount"], 798.0);
        assert_eq!(invoice["due_date"], "2026-01-29");
        let again = call(
            &mut world,
            "erp_create_invoice",
            &args(json!({"order_id": "O-002"})),
        )
        .expect_err("twice");
        assert_eq!(again, "order `O-002` is already invoiced as `INV-004`");
    }

    #[test]
    fn purchase_orders_only_take_the_suppliers_skus() {
        let mut world = world();
        let error = call(
            &mut world,
            "erp_create_purchase_order",
            &args(json!({
                "supplier_id": "S-001", "lines": [{"sku": "SKU-200", "quantity": 5}]
            })),
        )
        .expect_err("wrong supplier");
        assert_eq!(
            error,
            "supplier `S-001` does not supply `SKU-200`; it supplies SKU-100, SKU-300"
        );
        let po = call(
            &mut world,
            "erp_create_purchase_order",
            &args(json!({
                "supplier_id": "S-002", "lines": [{"sku": "SKU-200", "quantity": 5}]
            })),
        )
        .expect("ok");
        assert_eq!(po["id"], "PO-002");
        assert_eq!(po["total"], 900.0);
    }
}
