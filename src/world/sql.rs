//! A small read-only SQL subset over the mock state, for `data_query_sql`.
//!
//! ```text
//! query   := SELECT items FROM table [WHERE cond] [ORDER BY key {, key}] [LIMIT n] [;]
//! items   := * | item {, item}         item := (column | AGG(* | column)) [AS alias]
//! cond    := conj {OR conj}            conj := atom {AND atom}
//! atom    := NOT atom | ( cond ) | column op literal | column [NOT] LIKE 'pat'
//!          | column IS [NOT] NULL | column IN (literal {, literal})
//! ```
//! Tables are the state's collections; columns are record fields (`ship_to.city` reads a
//! nested field). Aggregates (COUNT, SUM, AVG, MIN, MAX) cannot be mixed with plain columns.
//! Anything else, above all a write, is an error whose message says what is supported.

use std::cmp::Ordering;

use serde_json::{Map, Value, json};

/// Why a query was rejected, in words an agent can act on.
pub(super) type SqlError = String;

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Number(f64),
    Text(String),
    Symbol(&'static str),
}

fn tokenize(query: &str) -> Result<Vec<Token>, SqlError> {
    let chars: Vec<char> = query.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || matches!(chars[i], '_' | '.'))
            {
                i += 1;
            }
            tokens.push(Token::Word(chars[start..i].iter().collect()));
        } else if c.is_ascii_digit()
            || (c == '-' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            let start = i;
            i += 1;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            let number = text
                .parse()
                .map_err(|_| format!("`{text}` is not a number"))?;
            tokens.push(Token::Number(number));
        } else if c == '\'' {
            let mut text = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => {
                        return Err(
                            "unterminated string literal (strings use single quotes)".into()
                        );
                    }
                    Some('\'') if chars.get(i + 1) == Some(&'\'') => {
                        text.push('\'');
                        i += 2;
                    }
                    Some('\'') => {
                        i += 1;
                        break;
                    }
                    Some(other) => {
                        text.push(*other);
                        i += 1;
                    }
                }
            }
            tokens.push(Token::Text(text));
        } else {
            let two: String = chars[i..chars.len().min(i + 2)].iter().collect();
            let symbol = ["<=", ">=", "!=", "<>"]
                .into_iter()
                .find(|s| *s == two)
                .or_else(|| {
                    ["=", "<", ">", ",", "(", ")", "*", ";"]
                        .into_iter()
                        .find(|s| s.starts_with(c))
                })
                .ok_or_else(|| format!("unexpected character `{c}`"))?;
            i += symbol.len();
            tokens.push(Token::Symbol(if symbol == "<>" { "!=" } else { symbol }));
        }
    }
    Ok(tokens)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Aggregate {
    Count,
    Sum,
    Avg,
    Min,
    Max,
}

#[derive(Debug, Clone)]
struct Item {
    aggregate: Option<Aggregate>,
    /// `None` for `*`.
    column: Option<String>,
    label: String,
}

#[derive(Debug, Clone)]
enum Cond {
    Or(Box<Cond>, Box<Cond>),
    And(Box<Cond>, Box<Cond>),
    Not(Box<Cond>),
    Compare(String, &'static str, Value),
    Like(String, String),
    IsNull(String),
    In(String, Vec<Value>),
}

#[derive(Debug, Clone)]
struct Query {
    items: Vec<Item>,
    table: String,
    filter: Option<Cond>,
    order: Vec<(String, bool)>,
    limit: Option<usize>,
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn is_keyword(&self, keyword: &str) -> bool {
        matches!(self.peek(), Some(Token::Word(w)) if w.eq_ignore_ascii_case(keyword))
    }

    fn eat_keyword(&mut self, keyword: &str) -> bool {
        let found = self.is_keyword(keyword);
        self.at += usize::from(found);
        found
    }

    fn expect_keyword(&mut self, keyword: &str) -> Result<(), SqlError> {
        if self.eat_keyword(keyword) {
            Ok(())
        } else {
            Err(format!("expected {keyword} {}", self.position()))
        }
    }

    fn eat_symbol(&mut self, symbol: &str) -> bool {
        let found = matches!(self.peek(), Some(Token::Symbol(s)) if *s == symbol);
        self.at += usize::from(found);
        found
    }

    fn position(&self) -> String {
        match self.peek() {
            None => "at the end of the query".into(),
            Some(Token::Word(w)) => format!("at `{w}`"),
            Some(Token::Number(n)) => format!("at `{n}`"),
            Some(Token::Text(t)) => format!("at '{t}'"),
            Some(Token::Symbol(s)) => format!("at `{s}`"),
        }
    }

    fn identifier(&mut self) -> Result<String, SqlError> {
        match self.peek() {
            Some(Token::Word(w)) if !is_reserved(w) => {
                let word = w.clone();
                self.at += 1;
                Ok(word)
            }
            _ => Err(format!(
                "expected a column or table name {}",
                self.position()
            )),
        }
    }

    fn literal(&mut self) -> Result<Value, SqlError> {
        let value = match self.peek() {
            Some(Token::Number(n)) => json!(n),
            Some(Token::Text(t)) => json!(t),
            Some(Token::Word(w)) if w.eq_ignore_ascii_case("true") => json!(true),
            Some(Token::Word(w)) if w.eq_ignore_ascii_case("false") => json!(false),
            Some(Token::Word(w)) if w.eq_ignore_ascii_case("null") => Value::Null,
            _ => return Err(format!("expected a literal value {}", self.position())),
        };
        self.at += 1;
        Ok(value)
    }

    fn item(&mut self) -> Result<Item, SqlError> {
        let aggregate = match self.peek() {
            Some(Token::Word(w)) if self.tokens.get(self.at + 1) == Some(&Token::Symbol("(")) => {
                Some(match w.to_ascii_lowercase().as_str() {
                    "count" => Aggregate::Count,
                    "sum" => Aggregate::Sum,
                    "avg" => Aggregate::Avg,
                    "min" => Aggregate::Min,
                    "max" => Aggregate::Max,
                    other => {
                        return Err(format!(
                            "function `{other}` is not supported (COUNT, SUM, AVG, MIN, MAX are)"
                        ));
                    }
                })
            }
            _ => None,
        };
        let (column, label) = match aggregate {
            Some(aggregate) => {
                self.at += 2;
                let column = if self.eat_symbol("*") {
                    None
                } else {
                    Some(self.identifier()?)
                };
                if column.is_none() && aggregate != Aggregate::Count {
                    return Err("only COUNT accepts `*`".into());
                }
                if !self.eat_symbol(")") {
                    return Err(format!("expected `)` {}", self.position()));
                }
                let name = format!("{aggregate:?}").to_ascii_lowercase();
                let label = format!("{name}({})", column.as_deref().unwrap_or("*"));
                (column, label)
            }
            None => {
                let column = self.identifier()?;
                (Some(column.clone()), column)
            }
        };
        let label = if self.eat_keyword("as") {
            self.identifier()?
        } else {
            label
        };
        Ok(Item {
            aggregate,
            column,
            label,
        })
    }

    fn condition(&mut self) -> Result<Cond, SqlError> {
        let mut left = self.conjunction()?;
        while self.eat_keyword("or") {
            left = Cond::Or(Box::new(left), Box::new(self.conjunction()?));
        }
        Ok(left)
    }

    fn conjunction(&mut self) -> Result<Cond, SqlError> {
        let mut left = self.atom()?;
        while self.eat_keyword("and") {
            left = Cond::And(Box::new(left), Box::new(self.atom()?));
        }
        Ok(left)
    }

    fn atom(&mut self) -> Result<Cond, SqlError> {
        if self.eat_keyword("not") {
            return Ok(Cond::Not(Box::new(self.atom()?)));
        }
        if self.eat_symbol("(") {
            let inner = self.condition()?;
            if !self.eat_symbol(")") {
                return Err(format!("expected `)` {}", self.position()));
            }
            return Ok(inner);
        }
        let column = self.identifier()?;
        if self.eat_keyword("is") {
            let negated = self.eat_keyword("not");
            self.expect_keyword("null")?;
            let test = Cond::IsNull(column);
            return Ok(if negated {
                Cond::Not(Box::new(test))
            } else {
                test
            });
        }
        let negated = self.eat_keyword("not");
        let test = if self.eat_keyword("like") {
            match self.literal()? {
                Value::String(pattern) => Cond::Like(column, pattern),
                _ => return Err("LIKE needs a quoted pattern such as '%acme%'".into()),
            }
        } else if self.eat_keyword("in") {
            if !self.eat_symbol("(") {
                return Err(format!("expected `(` after IN {}", self.position()));
            }
            let mut values = vec![self.literal()?];
            while self.eat_symbol(",") {
                values.push(self.literal()?);
            }
            if !self.eat_symbol(")") {
                return Err(format!("expected `)` {}", self.position()));
            }
            Cond::In(column, values)
        } else if negated {
            return Err(format!("expected LIKE or IN after NOT {}", self.position()));
        } else {
            let op = match self.peek() {
                Some(Token::Symbol(op @ ("=" | "!=" | "<" | "<=" | ">" | ">="))) => *op,
                _ => {
                    return Err(format!(
                        "expected a comparison (=, !=, <, <=, >, >=, LIKE, IN, IS NULL) {}",
                        self.position()
                    ));
                }
            };
            self.at += 1;
            Cond::Compare(column, op, self.literal()?)
        };
        Ok(if negated {
            Cond::Not(Box::new(test))
        } else {
            test
        })
    }

    fn query(&mut self) -> Result<Query, SqlError> {
        match self.peek() {
            Some(Token::Word(w)) if w.eq_ignore_ascii_case("select") => self.at += 1,
            Some(Token::Word(w)) => {
                return Err(format!(
                    "only read-only SELECT statements are supported; `{}` is not allowed",
                    w.to_ascii_uppercase()
                ));
            }
            _ => return Err("the query must start with SELECT".into()),
        }
        let items = if self.eat_symbol("*") {
            Vec::new()
        } else {
            let mut items = vec![self.item()?];
            while self.eat_symbol(",") {
                items.push(self.item()?);
            }
            items
        };
        self.expect_keyword("from")?;
        let table = self.identifier()?;
        if self.is_keyword("join") || self.eat_symbol(",") {
            return Err("joins are not supported; query one table at a time".into());
        }
        let filter = if self.eat_keyword("where") {
            Some(self.condition()?)
        } else {
            None
        };
        if self.is_keyword("group") {
            return Err("GROUP BY is not supported; use data_aggregate with group_by".into());
        }
        let mut order = Vec::new();
        if self.eat_keyword("order") {
            self.expect_keyword("by")?;
            loop {
                let column = self.identifier()?;
                let descending = self.eat_keyword("desc");
                if !descending {
                    self.eat_keyword("asc");
                }
                order.push((column, descending));
                if !self.eat_symbol(",") {
                    break;
                }
            }
        }
        let limit = if self.eat_keyword("limit") {
            match self.literal()? {
                Value::Number(n) => n
                    .as_f64()
                    .filter(|n| *n >= 0.0 && n.fract() == 0.0)
                    .map(|n| n as usize),
                _ => None,
            }
            .map(Some)
            .ok_or("LIMIT needs a whole number")?
        } else {
            None
        };
        self.eat_symbol(";");
        if self.peek().is_some() {
            return Err(format!(
                "unexpected text {} (one SELECT statement only)",
                self.position()
            ));
        }
        Ok(Query {
            items,
            table,
            filter,
            order,
            limit,
        })
    }
}

fn is_reserved(word: &str) -> bool {
    [
        "select", "from", "where", "and", "or", "not", "order", "by", "limit", "like", "in", "is",
        "null", "as", "asc", "desc", "group", "join",
    ]
    .iter()
    .any(|r| r.eq_ignore_ascii_case(word))
}

/// A record's field, following dots into nested objects; `Null` when absent.
fn field<'a>(record: &'a Value, column: &str) -> &'a Value {
    column
        .split('.')
        .fold(record, |value, key| value.get(key).unwrap_or(&Value::Null))
}

fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64()?.partial_cmp(&y.as_f64()?),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

fn like(text: &str, pattern: &str) -> bool {
    fn matches(text: &[char], pattern: &[char]) -> bool {
        match pattern.split_first() {
            None => text.is_empty(),
            Some(('%', rest)) => (0..=text.len()).any(|skip| matches(&text[skip..], rest)),
            Some((p, rest)) => text
                .split_first()
                .is_some_and(|(t, tail)| (*p == '_' || t == p) && matches(tail, rest)),
        }
    }
    let text: Vec<char> = text.to_lowercase().chars().collect();
    let pattern: Vec<char> = pattern.to_lowercase().chars().collect();
    matches(&text, &pattern)
}

impl Cond {
    fn holds(&self, record: &Value) -> bool {
        match self {
            Cond::Or(a, b) => a.holds(record) || b.holds(record),
            Cond::And(a, b) => a.holds(record) && b.holds(record),
            Cond::Not(inner) => !inner.holds(record),
            Cond::IsNull(column) => field(record, column).is_null(),
            Cond::Like(column, pattern) => field(record, column)
                .as_str()
                .is_some_and(|t| like(t, pattern)),
            Cond::In(column, values) => values
                .iter()
                .any(|v| compare(field(record, column), v) == Some(Ordering::Equal)),
            Cond::Compare(column, op, literal) => {
                let order = compare(field(record, column), literal);
                match *op {
                    "=" => order == Some(Ordering::Equal),
                    "!=" => order.is_some_and(|o| o != Ordering::Equal),
                    "<" => order == Some(Ordering::Less),
                    "<=" => matches!(order, Some(Ordering::Less | Ordering::Equal)),
                    ">" => order == Some(Ordering::Greater),
                    _ => matches!(order, Some(Ordering::Greater | Ordering::Equal)),
                }
            }
        }
    }

    fn columns<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Cond::Or(a, b) | Cond::And(a, b) => {
                a.columns(out);
                b.columns(out);
            }
            Cond::Not(inner) => inner.columns(out),
            Cond::IsNull(c) | Cond::Like(c, _) | Cond::In(c, _) | Cond::Compare(c, _, _) => {
                out.push(c)
            }
        }
    }
}

/// The column names of a table: the union of its records' top-level keys, in first-seen
/// order.
pub(super) fn columns(records: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for key in records
        .iter()
        .filter_map(Value::as_object)
        .flat_map(Map::keys)
    {
        if !names.contains(key) {
            names.push(key.clone());
        }
    }
    names
}

fn aggregate(kind: Aggregate, column: Option<&str>, rows: &[&Value]) -> Value {
    let values: Vec<&Value> = match column {
        None => return json!(rows.len()),
        Some(column) => rows
            .iter()
            .map(|r| field(r, column))
            .filter(|v| !v.is_null())
            .collect(),
    };
    let numbers: Vec<f64> = values.iter().filter_map(|v| v.as_f64()).collect();
    match kind {
        Aggregate::Count => json!(values.len()),
        Aggregate::Sum => json!(numbers.iter().sum::<f64>()),
        Aggregate::Avg if numbers.is_empty() => Value::Null,
        Aggregate::Avg => json!(numbers.iter().sum::<f64>() / numbers.len() as f64),
        Aggregate::Min | Aggregate::Max => {
            let pick = values.into_iter().reduce(|a, b| {
                let order = compare(b, a).unwrap_or(Ordering::Equal);
                let better = if kind == Aggregate::Min {
                    order == Ordering::Less
                } else {
                    order == Ordering::Greater
                };
                if better { b } else { a }
            });
            pick.cloned().unwrap_or(Value::Null)
        }
    }
}

/// Runs `query` over `state` (an object of collections) and returns
/// `{"columns": [...], "rows": [{...}], "row_count": n, "truncated": bool}`, at most
/// `max_rows` rows.
///
/// Errors: anything outside the subset, an unknown table (listing the tables) or an unknown
/// column (listing the table's columns).
pub(super) fn run(
    state: &Map<String, Value>,
    query: &str,
    max_rows: usize,
) -> Result<Value, SqlError> {
    let tokens = tokenize(query)?;
    let query = Parser { tokens, at: 0 }.query()?;
    let Some(records) = state.get(&query.table).and_then(Value::as_array) else {
        let tables: Vec<&str> = state.keys().map(String::as_str).collect();
        return Err(format!(
            "unknown table `{}`; tables: {}",
            query.table,
            tables.join(", ")
        ));
    };
    let known = columns(records);
    let mut used: Vec<&str> = query
        .items
        .iter()
        .filter_map(|item| item.column.as_deref())
        .collect();
    used.extend(query.order.iter().map(|(column, _)| column.as_str()));
    if let Some(filter) = &query.filter {
        filter.columns(&mut used);
    }
    if let Some(unknown) = used
        .iter()
        .find(|c| !known.iter().any(|k| k == c.split('.').next().unwrap_or(c)))
    {
        return Err(format!(
            "unknown column `{unknown}` in `{}`; columns: {}",
            query.table,
            known.join(", ")
        ));
    }
    let aggregates = query
        .items
        .iter()
        .filter(|item| item.aggregate.is_some())
        .count();
    if aggregates > 0 && aggregates < query.items.len() {
        return Err("aggregates cannot be mixed with plain columns (there is no GROUP BY)".into());
    }
    let mut rows: Vec<&Value> = records
        .iter()
        .filter(|r| query.filter.as_ref().is_none_or(|f| f.holds(r)))
        .collect();
    if aggregates > 0 {
        let mut row = Map::new();
        for item in &query.items {
            let kind = item.aggregate.expect("every item is an aggregate here");
            row.insert(
                item.label.clone(),
                aggregate(kind, item.column.as_deref(), &rows),
            );
        }
        let labels: Vec<&String> = query.items.iter().map(|item| &item.label).collect();
        return Ok(json!({"columns": labels, "rows": [row], "row_count": 1, "truncated": false}));
    }
    rows.sort_by(|a, b| {
        query
            .order
            .iter()
            .fold(Ordering::Equal, |acc, (column, descending)| {
                acc.then_with(|| {
                    let order =
                        compare(field(a, column), field(b, column)).unwrap_or(Ordering::Equal);
                    if *descending { order.reverse() } else { order }
                })
            })
    });
    let limit = query.limit.unwrap_or(usize::MAX).min(max_rows);
    let matched = rows.len().min(query.limit.unwrap_or(usize::MAX));
    let labels: Vec<String> = if query.items.is_empty() {
        known.clone()
    } else {
        query.items.iter().map(|item| item.label.clone()).collect()
    };
    let selected: Vec<Value> = rows
        .into_iter()
        .take(limit)
        .map(|record| {
            let mut row = Map::new();
            if query.items.is_empty() {
                for column in &known {
                    row.insert(column.clone(), field(record, column).clone());
                }
            } else {
                for item in &query.items {
                    let column = item.column.as_deref().unwrap_or_default();
                    row.insert(item.label.clone(), field(record, column).clone());
                }
            }
            Value::Object(row)
        })
        .collect();
    Ok(json!({
        "columns": labels,
        "row_count": selected.len(),
        "truncated": matched > selected.len(),
        "rows": selected,
    }))
}

#[cfg(test)]
mod tests {
    //! The SQL subset: filters, order, limits and aggregates; writes and unknown names get help.

    use super::*;

    fn state() -> Map<String, Value> {
        json!({
            "orders": [
                {"id": "O-001", "company": "Acme", "status": "pending", "total": 490.0, "ship_to": {"country": "ES"}},
                {"id": "O-002", "company": "Globex", "status": "shipped", "total": 1200.5, "ship_to": {"country": "US"}},
                {"id": "O-003", "company": "Acme Labs", "status": "pending", "total": 80.0}
            ]
        })
        .as_object()
        .cloned()
        .expect("object")
    }

    #[test]
    fn select_filters_orders_and_limits() {
        let result = run(
            &state(),
            "select id, total from orders where status = 'pending' and company like 'acme%' order by total desc limit 1",
            100,
        )
        .expect("valid");
        assert_eq!(result["rows"], json!([{"id": "O-001", "total": 490.0}]));
        assert_eq!(result["truncated"], false);
        let cut = run(&state(), "SELECT id FROM orders", 2).expect("valid");
        assert_eq!(
            (cut["row_count"].clone(), cut["truncated"].clone()),
            (json!(2), json!(true))
        );
    }

    #[test]
    fn aggregates_and_nested_columns_work() {
        let result = run(
            &state(),
            "SELECT COUNT(*), SUM(total) AS revenue FROM orders WHERE ship_to.country IS NOT NULL",
            100,
        )
        .expect("valid");
        assert_eq!(result["rows"], json!([{"count(*)": 2, "revenue": 1690.5}]));
        let result = run(
            &state(),
            "SELECT id FROM orders WHERE status IN ('shipped') OR total < 100",
            100,
        )
        .expect("valid");
        assert_eq!(result["rows"], json!([{"id": "O-002"}, {"id": "O-003"}]));
    }

    #[test]
    fn writes_and_unknown_names_are_rejected_with_guidance() {
        assert_eq!(
            run(&state(), "DELETE FROM orders", 100),
            Err("only read-only SELECT statements are supported; `DELETE` is not allowed".into())
        );
        assert_eq!(
            run(&state(), "SELECT * FROM invoices", 100),
            Err("unknown table `invoices`; tables: orders".into())
        );
        assert_eq!(
            run(&state(), "SELECT amount FROM orders", 100),
            Err(
                "unknown column `amount` in `orders`; columns: id, company, status, total, ship_to"
                    .into()
            )
        );
        assert_eq!(
            run(&state(), "SELECT id FROM orders; DROP TABLE orders", 100),
            Err("unexpected text at `DROP` (one SELECT statement only)".into())
        );
    }
}
